#include "backends/cpu/kernels/strided_copy.hpp"

#include "backends/cpu/kernels/broadcast.hpp"
#include "backends/cpu/kernels/parallel.hpp"

#include <infer/error.hpp>

#include <algorithm>
#include <cstring>
#include <string>

namespace infer::cpu {

namespace {

template <class Word>
void copy_rows(char* dst, const char* src, const StridedRows<1>& rows) {
    const int64_t step = rows.inner_strides()[0];
    rows.parallel_pieces([&](int64_t out, const StridedRows<1>::Offsets& in, int64_t length) {
        Word* d = reinterpret_cast<Word*>(dst) + out;
        const Word* s = reinterpret_cast<const Word*>(src) + in[0];
        if (step == 1) {
            std::memcpy(d, s, static_cast<size_t>(length) * sizeof(Word));
        } else {
            for (int64_t i = 0; i < length; ++i) d[i] = s[i * step];
        }
    });
}

}  // namespace

void strided_copy(void* dst, const void* src, const std::vector<int64_t>& dims,
                  const std::vector<int64_t>& src_strides, size_t element_size) {
    const StridedRows<1> rows(dims, {src_strides});
    auto* d = static_cast<char*>(dst);
    const auto* s = static_cast<const char*>(src);
    switch (element_size) {
        case 1:
            copy_rows<uint8_t>(d, s, rows);
            break;
        case 2:
            copy_rows<uint16_t>(d, s, rows);
            break;
        case 4:
            copy_rows<uint32_t>(d, s, rows);
            break;
        case 8:
            copy_rows<uint64_t>(d, s, rows);
            break;
        default:
            throw Unsupported("strided copy of " + std::to_string(element_size) + "-byte elements");
    }
}

void broadcast_copy(void* dst, const Shape& out, const void* src, const Shape& in,
                    size_t element_size) {
    strided_copy(dst, src, out.dims(), broadcast_strides(in, out), element_size);
}

void parallel_copy(void* dst, const void* src, size_t bytes) {
    constexpr int64_t kBlock = 1 << 20;
    const int64_t blocks = static_cast<int64_t>((bytes + kBlock - 1) / kBlock);
    parallel_for(blocks, 1, [&](int64_t begin, int64_t end) {
        const size_t first = static_cast<size_t>(begin * kBlock);
        const size_t last = std::min(bytes, static_cast<size_t>(end * kBlock));
        std::memcpy(static_cast<char*>(dst) + first, static_cast<const char*>(src) + first,
                    last - first);
    });
}

}  // namespace infer::cpu
