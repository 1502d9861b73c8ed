// Einsum, for any equation: every output element sums, over all values of the labels that
// are not in the output, the product of the operands' elements those labels select. A label's
// stride in an operand adds up over the axes it names, so a repeated label walks a diagonal,
// and a size-1 axis gets stride 0, so it broadcasts. Not a fast path for large contractions.
#include "backends/cpu/kernels/half_boundary.hpp"
#include "backends/cpu/kernels/kernel_util.hpp"
#include "backends/cpu/kernels/math_kernels.hpp"
#include "backends/cpu/kernels/parallel.hpp"
#include "core/ops/shapes_math.hpp"

#include <algorithm>
#include <type_traits>

namespace infer::cpu {

namespace {

// Strides, per operand, of a list of labels.
using LabelStrides = std::vector<std::vector<int64_t>>;

template <class T>
void einsum_kernel(KernelContext& ctx) {
    const size_t n = ctx.num_inputs();
    std::vector<Shape> shapes;
    std::vector<const T*> data;
    for (size_t k = 0; k < n; ++k) {
        require_same_dtype(ctx, 0, k);
        shapes.push_back(ctx.input(k).shape());
        data.push_back(ctx.input(k).data<T>());
    }
    const detail::EinsumPlan plan = detail::plan_einsum(ctx.attrs().get_string("equation"), shapes);
    const size_t label_count = plan.label_sizes.size();
    LabelStrides by_label(n, std::vector<int64_t>(label_count, 0));
    std::vector<bool> used(label_count, false);
    for (size_t k = 0; k < n; ++k) {
        int64_t stride = 1;
        for (size_t axis = shapes[k].rank(); axis-- > 0;) {
            const auto label = static_cast<size_t>(plan.operand_labels[k][axis]);
            if (shapes[k][axis] != 1) by_label[k][label] += stride;
            used[label] = true;
            stride *= shapes[k][axis];
        }
    }
    std::vector<int> summed;
    for (size_t label = 0; label < label_count; ++label)
        if (used[label] && std::count(plan.output_labels.begin(), plan.output_labels.end(),
                                      static_cast<int>(label)) == 0)
            summed.push_back(static_cast<int>(label));
    const auto pick = [&](const std::vector<int>& labels, std::vector<int64_t>& sizes,
                          LabelStrides& strides) {
        strides.assign(n, {});
        for (int label : labels) {
            sizes.push_back(plan.label_sizes[static_cast<size_t>(label)]);
            for (size_t k = 0; k < n; ++k) strides[k].push_back(by_label[k][static_cast<size_t>(label)]);
        }
    };
    std::vector<int64_t> out_sizes, sum_sizes;
    LabelStrides out_strides, sum_strides;
    pick(plan.output_labels, out_sizes, out_strides);
    pick(summed, sum_sizes, sum_strides);
    const int64_t terms = product(sum_sizes, 0, sum_sizes.size());

    using Acc = std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;
    T* y = ctx.output(0).data<T>();
    parallel_for(ctx.output(0).numel(), grain_for(terms * static_cast<int64_t>(n)),
                 [&](int64_t begin, int64_t end) {
        std::vector<int64_t> offsets(n), index(sum_sizes.size());
        for (int64_t o = begin; o < end; ++o) {
            std::fill(offsets.begin(), offsets.end(), 0);
            for (size_t p = out_sizes.size(), rest = static_cast<size_t>(o); p-- > 0;) {
                const auto i = static_cast<int64_t>(rest % static_cast<size_t>(out_sizes[p]));
                rest /= static_cast<size_t>(out_sizes[p]);
                for (size_t k = 0; k < n; ++k) offsets[k] += i * out_strides[k][p];
            }
            std::fill(index.begin(), index.end(), 0);
            Acc sum = 0;
            for (int64_t t = 0; t < terms; ++t) {
                Acc term = 1;
                for (size_t k = 0; k < n; ++k) term *= static_cast<Acc>(data[k][offsets[k]]);
                sum += term;
                for (size_t q = sum_sizes.size(); q-- > 0;) {
                    for (size_t k = 0; k < n; ++k) offsets[k] += sum_strides[k][q];
                    if (++index[q] < sum_sizes[q]) break;
                    for (size_t k = 0; k < n; ++k) offsets[k] -= sum_sizes[q] * sum_strides[k][q];
                    index[q] = 0;
                }
            }
            if constexpr (std::is_floating_point_v<T>)
                y[o] = static_cast<T>(sum);
            else
                y[o] = static_cast<T>(static_cast<int64_t>(sum));
        }
    });
}

}  // namespace

void register_math_einsum_kernels(KernelRegistry& r) {
    add_floating(r, "Einsum", einsum_kernel<float>);
    r.add("Einsum", DType::f64, einsum_kernel<double>);
    r.add("Einsum", DType::i32, einsum_kernel<int32_t>);
    r.add("Einsum", DType::i64, einsum_kernel<int64_t>);
}

}  // namespace infer::cpu
