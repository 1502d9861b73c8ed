// kernel-bench: the CPU's product kernels alone, on BERT-sized shapes, each kernel this CPU runs
// (f32 products by a weight, beside OpenBLAS; bf16 products by a packed weight; u8 × s8
// products), with a null epilogue (the kernel's own speed) and, for bf16, with the usual writer (bias, bf16 narrowing, GELU): what the
// kernel choice in packed_float_gemm.hpp and int8_gemm.hpp rests on (docs/benchmarking.md).
//   build/bin/kernel-bench [THREADS ...]     (default: all cores, then one)
// Medians of 15 timed calls after 3 warm-up calls; the weights stay packed between calls, as in
// a session.
#include "backends/cpu/kernels/amx_gemm.hpp"
#include "backends/cpu/kernels/blas.hpp"
#include "backends/cpu/kernels/half_convert.hpp"
#include "backends/cpu/kernels/int8_gemm.hpp"
#include "backends/cpu/kernels/packed_float_gemm.hpp"
#include "backends/cpu/kernels/parallel.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

using namespace infer;
using namespace infer::cpu;

namespace {

void ignore_float_tile(void*, int64_t, int64_t, int64_t, int64_t, const float*, int64_t) {}
void ignore_int8_tile(void*, int64_t, int64_t, int64_t, int64_t, const int32_t*, int64_t) {}

template <class F>
double median_ms(F&& call) {
    for (int i = 0; i < 3; ++i) call();
    std::vector<double> times;
    for (int i = 0; i < 15; ++i) {
        const auto start = std::chrono::steady_clock::now();
        call();
        times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

void bf16_products(int64_t m, int64_t k, int64_t n, std::mt19937& rng) {
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<float> a_values(static_cast<size_t>(m * k)), b_values(static_cast<size_t>(k * n));
    for (float& v : a_values) v = uniform(rng);
    for (float& v : b_values) v = uniform(rng);
    std::vector<uint16_t> a(a_values.size()), b(b_values.size()), y(static_cast<size_t>(m * n));
    float_to_bfloat16(a_values.data(), a.data(), a.size());
    float_to_bfloat16(b_values.data(), b.data(), b.size());
    const std::vector<float> bias(static_cast<size_t>(n), 0.1f);
    const double gflop = 2.0 * static_cast<double>(m * n * k) / 1e9;
    for (FloatGemmKernel kernel : {FloatGemmKernel::amx_bf16, FloatGemmKernel::avx512_bf16}) {
        if (!float_gemm_kernel_supported(kernel)) continue;
        const PackedFloatLayout layout = packed_float_layout(kernel, k, n);
        const Tensor packed = pack_float_weight(layout, b.data(), n);
        const auto time = [&](FloatEpilogue epilogue, void* state) {
            return median_ms([&] { gemm_packed_float(layout, packed.raw_data(), a.data(), k, m, epilogue, state); });
        };
        TileWriter plain{y.data(), true, n, bias.data(), RowActivation::none};
        TileWriter gelu{y.data(), true, n, bias.data(), RowActivation::gelu};
        const double alone = time(&ignore_float_tile, nullptr);
        std::printf("  %-12s %5ld x %5ld x %5ld: %8.3f ms (%6.0f GFLOP/s); + bias, bf16 %8.3f; + GELU %8.3f\n",
                    std::string(float_gemm_kernel_name(kernel)).c_str(), long(m), long(k), long(n), alone, gflop / alone * 1e3,
                    time(&TileWriter::tile, &plain), time(&TileWriter::tile, &gelu));
    }
}

// f32 products on each kernel of our own this CPU has, the weight read in place (as avx512
// sessions run them) and packed in panels (as avx2 sessions do), beside OpenBLAS's sgemm cut
// over the same pool (the blas kernel).
void f32_products(int64_t m, int64_t k, int64_t n, std::mt19937& rng) {
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<float> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n)), y(static_cast<size_t>(m * n));
    for (float& v : a) v = uniform(rng);
    for (float& v : b) v = uniform(rng);
    const double gflop = 2.0 * static_cast<double>(m * n * k) / 1e9;
    const auto report = [&](const char* name, double ms) {
        std::printf("  f32 %-8s %5ld x %5ld x %5ld: %8.3f ms (%6.0f GFLOP/s)\n", name, long(m), long(k), long(n), ms,
                    gflop / ms * 1e3);
    };
    for (FloatGemmKernel kernel : {FloatGemmKernel::avx512, FloatGemmKernel::avx2}) {
        if (!float_gemm_kernel_supported(kernel)) continue;
        const PackedFloatLayout layout = packed_float_layout(kernel, k, n);
        report(std::string(float_gemm_kernel_name(kernel)).c_str(),
               median_ms([&] { gemm_packed_float(layout, b.data(), a.data(), k, m, &ignore_float_tile, nullptr); }));
        const PackedFloatLayout panels = packed_f32_layout(kernel, k, n);
        const Tensor packed = pack_f32_weight(panels, b.data(), n);
        report("packed", median_ms([&] { gemm_packed_float(panels, packed.raw_data(), a.data(), k, m, &ignore_float_tile, nullptr); }));
    }
    report("blas", median_ms([&] { sgemm(false, false, m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f, y.data(), n); }));
}

void int8_products(int64_t m, int64_t k, int64_t n, std::mt19937& rng) {
    std::vector<uint8_t> a(static_cast<size_t>(m * k));
    std::vector<int8_t> b(static_cast<size_t>(k * n));
    for (auto& v : a) v = static_cast<uint8_t>(rng());
    for (auto& v : b) v = static_cast<int8_t>(rng());
    const double gop = 2.0 * static_cast<double>(m * n * k) / 1e9;
    for (Int8Kernel kernel : {Int8Kernel::amx_int8, Int8Kernel::avx512_vnni, Int8Kernel::avx2}) {
        if (!int8_kernel_supported(kernel)) continue;
        const Int8WeightLayout layout = int8_weight_layout(kernel, k, n);
        const Tensor packed = pack_int8_weight(layout, b.data(), n);
        const int64_t stride = int8_row_stride(layout);
        std::vector<uint8_t> rows(static_cast<size_t>(m * stride));
        std::vector<int32_t> row_sums(static_cast<size_t>(m));
        pack_int8_rows(a.data(), m, k, stride, false, rows.data(), row_sums.data());
        const double alone =
            median_ms([&] { gemm_u8s8(layout, packed.data<uint8_t>(), rows.data(), m, &ignore_int8_tile, nullptr); });
        std::printf("  %-12s %5ld x %5ld x %5ld: %8.3f ms (%6.0f GOP/s)\n", std::string(int8_kernel_name(kernel)).c_str(),
                    long(m), long(k), long(n), alone, gop / alone * 1e3);
    }
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<int> thread_counts;
    for (int i = 1; i < argc; ++i) thread_counts.push_back(std::atoi(argv[i]));
    if (thread_counts.empty()) thread_counts = {static_cast<int>(std::thread::hardware_concurrency()), 1};
    // BERT-base's and MiniLM's products at batch 1 and 8 (sequence 128): FFN in and out, and a
    // projection.
    const std::vector<std::tuple<int64_t, int64_t, int64_t>> shapes{
        {128, 768, 3072},  {128, 3072, 768},  {128, 768, 768},   {1024, 768, 3072},
        {1024, 3072, 768}, {128, 384, 1536},  {128, 1536, 384},  {128, 384, 384},
        {1024, 384, 1536}, {1024, 1536, 384}, {1024, 384, 384}};
    std::mt19937 rng(1);
    for (int threads : thread_counts) {
        const auto pool = pool_with_threads(threads);
        const UsePool use(pool.get());
        std::printf("%d thread%s\n", threads, threads == 1 ? "" : "s");
        for (const auto& [m, k, n] : shapes) {
            f32_products(m, k, n, rng);
            bf16_products(m, k, n, rng);
            int8_products(m, k, n, rng);
        }
    }
}
