#include "backends/cpu/kernels/half_convert.hpp"

#include "backends/cpu/kernels/parallel.hpp"

namespace infer::cpu {

namespace {

template <class Src, class Dst>
void convert_parallel(void (*convert)(const Src*, Dst*, size_t), const Src* src, Dst* dst,
                      size_t count) {
    parallel_for(static_cast<int64_t>(count), 65536, [&](int64_t begin, int64_t end) {
        convert(src + begin, dst + begin, static_cast<size_t>(end - begin));
    });
}

}  // namespace

void half_to_float(const uint16_t* src, float* dst, size_t count) {
    convert_parallel(half_to_float_serial, src, dst, count);
}
void float_to_half(const float* src, uint16_t* dst, size_t count) {
    convert_parallel(float_to_half_serial, src, dst, count);
}
void bfloat16_to_float(const uint16_t* src, float* dst, size_t count) {
    convert_parallel(bfloat16_to_float_serial, src, dst, count);
}
void float_to_bfloat16(const float* src, uint16_t* dst, size_t count) {
    convert_parallel(float_to_bfloat16_serial, src, dst, count);
}

}  // namespace infer::cpu
