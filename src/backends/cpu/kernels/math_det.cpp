// Det: the determinant of each square matrix in the last two axes, by LU decomposition with
// partial pivoting in double (exact for the small integer-valued matrices tests like, stable
// for the rest).
#include "backends/cpu/kernels/half_boundary.hpp"
#include "backends/cpu/kernels/kernel_util.hpp"
#include "backends/cpu/kernels/math_kernels.hpp"

#include <cmath>
#include <utility>
#include <vector>

namespace infer::cpu {

namespace {

double determinant(std::vector<double>& a, int64_t n) {
    double det = 1;
    for (int64_t col = 0; col < n; ++col) {
        int64_t pivot = col;
        for (int64_t r = col + 1; r < n; ++r)
            if (std::abs(a[r * n + col]) > std::abs(a[pivot * n + col])) pivot = r;
        if (a[pivot * n + col] == 0) return 0;
        if (pivot != col) {
            for (int64_t c = 0; c < n; ++c) std::swap(a[col * n + c], a[pivot * n + c]);
            det = -det;
        }
        det *= a[col * n + col];
        for (int64_t r = col + 1; r < n; ++r) {
            const double factor = a[r * n + col] / a[col * n + col];
            for (int64_t c = col; c < n; ++c) a[r * n + c] -= factor * a[col * n + c];
        }
    }
    return det;
}

template <class T>
void det_kernel(KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const int64_t n = x.shape()[x.shape().rank() - 1];
    const int64_t matrices = ctx.output(0).numel();
    const T* in = x.data<T>();
    T* out = ctx.output(0).data<T>();
    std::vector<double> a(static_cast<size_t>(n * n));
    for (int64_t m = 0; m < matrices; ++m) {
        for (int64_t i = 0; i < n * n; ++i) a[static_cast<size_t>(i)] = static_cast<double>(in[m * n * n + i]);
        out[m] = static_cast<T>(determinant(a, n));
    }
}

}  // namespace

void register_math_det_kernels(KernelRegistry& r) {
    add_floating(r, "Det", det_kernel<float>);
    r.add("Det", DType::f64, det_kernel<double>);
}

}  // namespace infer::cpu
