// MatMulInteger and QLinearMatMul over u8/i8 operands with MatMul's batch broadcasting: the
// operands, less their zero points, are widened to i32 and multiplied with i32 accumulation;
// QLinearMatMul then rescales by a_scale * b_scale / y_scale and requantizes.
#include "backends/cpu/kernels/kernel_util.hpp"
#include "backends/cpu/kernels/neural_kernels.hpp"
#include "backends/cpu/kernels/parallel.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace infer::cpu {

namespace {

// QLinear ops read their scales as f32.
void require_f32_scales(const KernelContext& ctx) {
    for (size_t i : {1, 4, 6})
        if (ctx.input(i).dtype() != DType::f32)
            unsupported(ctx, "scale of dtype " + std::string(dtype_name(ctx.input(i).dtype())));
}

// A tensor of u8 or i8 (or i32) values less a scalar zero point of the same dtype, as i32.
std::vector<int32_t> widen(const KernelContext& ctx, size_t input, size_t zero_input) {
    const Tensor& t = ctx.input(input);
    std::vector<int32_t> out(static_cast<size_t>(t.numel()));
    auto read = [&](const Tensor& v, int64_t i) -> int32_t {
        switch (v.dtype()) {
            case DType::u8: return v.data<uint8_t>()[i];
            case DType::i8: return v.data<int8_t>()[i];
            case DType::i32: return v.data<int32_t>()[i];
            default: unsupported(ctx, "operand dtype " + std::string(dtype_name(v.dtype())));
        }
    };
    int32_t zero = 0;
    if (ctx.has_input(zero_input)) {
        const Tensor& z = ctx.input(zero_input);
        if (z.dtype() != t.dtype()) invalid_argument(ctx, "zero point and operand differ in dtype");
        if (z.numel() != 1) unsupported(ctx, "per-row or per-column zero points");
        zero = read(z, 0);
    }
    for (int64_t i = 0; i < t.numel(); ++i) out[static_cast<size_t>(i)] = read(t, i) - zero;
    return out;
}

// Y[batch] = A[batch] x B[batch] in i32, batches broadcast as MatMul's.
void integer_matmul(const Shape& sa, const Shape& sb, const int32_t* a, const int32_t* b,
                    std::vector<int32_t>& y) {
    const bool a_vector = sa.rank() == 1, b_vector = sb.rank() == 1;
    const int64_t m = a_vector ? 1 : sa[sa.rank() - 2], k = sa[sa.rank() - 1];
    const int64_t n = b_vector ? 1 : sb[sb.rank() - 1];
    const size_t ra = a_vector ? 0 : sa.rank() - 2, rb = b_vector ? 0 : sb.rank() - 2;
    const size_t rank = std::max(ra, rb);
    std::vector<int64_t> batch(rank, 1);
    for (size_t i = 0; i < rank; ++i) {
        const int64_t da = i + ra >= rank ? sa[i + ra - rank] : 1, db = i + rb >= rank ? sb[i + rb - rank] : 1;
        batch[i] = std::max(da, db);
    }
    const int64_t batches = product(batch, 0, rank);
    y.assign(static_cast<size_t>(batches * m * n), 0);
    std::vector<int64_t> index(rank, 0);
    for (int64_t p = 0; p < batches; ++p) {
        int64_t oa = 0, ob = 0;  // batch offsets, in matrices
        for (size_t i = 0; i < rank; ++i) {
            if (i + ra >= rank) { const int64_t d = sa[i + ra - rank]; oa = oa * d + (d == 1 ? 0 : index[i]); }
            if (i + rb >= rank) { const int64_t d = sb[i + rb - rank]; ob = ob * d + (d == 1 ? 0 : index[i]); }
        }
        const int32_t* pa = a + oa * m * k;
        const int32_t* pb = b + ob * k * n;
        int32_t* py = y.data() + p * m * n;
        for (int64_t r = 0; r < m; ++r)
            for (int64_t j = 0; j < k; ++j) {
                const int32_t v = pa[r * k + j];
                for (int64_t c = 0; c < n; ++c) py[r * n + c] += v * pb[j * n + c];
            }
        for (size_t i = rank; i-- > 0;) {
            if (++index[i] < batch[i]) break;
            index[i] = 0;
        }
    }
}

void matmul_integer_kernel(KernelContext& ctx) {
    const std::vector<int32_t> a = widen(ctx, 0, 2), b = widen(ctx, 1, 3);
    std::vector<int32_t> y;
    integer_matmul(ctx.input(0).shape(), ctx.input(1).shape(), a.data(), b.data(), y);
    std::copy(y.begin(), y.end(), ctx.output(0).data<int32_t>());
}

template <class Q>
void requantize(const std::vector<int32_t>& acc, double multiplier, int32_t zero, Tensor& out) {
    Q* p = out.data<Q>();
    for (size_t i = 0; i < acc.size(); ++i)
        p[i] = static_cast<Q>(std::clamp(std::nearbyint(acc[i] * multiplier) + zero,
                                         double(std::numeric_limits<Q>::min()), double(std::numeric_limits<Q>::max())));
}

void qlinear_matmul_kernel(KernelContext& ctx) {
    require_f32_scales(ctx);
    const std::vector<int32_t> a = widen(ctx, 0, 2), b = widen(ctx, 3, 5);
    std::vector<int32_t> y;
    integer_matmul(ctx.input(0).shape(), ctx.input(3).shape(), a.data(), b.data(), y);
    const double multiplier = double(ctx.input(1).data<float>()[0]) * ctx.input(4).data<float>()[0] /
                              ctx.input(6).data<float>()[0];
    Tensor& out = ctx.output(0);
    const Tensor& zero = ctx.input(7);
    if (out.dtype() == DType::u8) requantize<uint8_t>(y, multiplier, zero.data<uint8_t>()[0], out);
    else if (out.dtype() == DType::i8) requantize<int8_t>(y, multiplier, zero.data<int8_t>()[0], out);
    else unsupported(ctx, "output dtype " + std::string(dtype_name(out.dtype())));
}

}  // namespace

void register_integer_matmul_kernels(KernelRegistry& r) {
    r.add("MatMulInteger", {DType::u8, DType::i8}, matmul_integer_kernel);
    r.add("QLinearMatMul", {DType::u8, DType::i8}, qlinear_matmul_kernel);
}

}  // namespace infer::cpu
