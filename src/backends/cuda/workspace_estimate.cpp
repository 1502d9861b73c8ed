#include "backends/cuda/workspace_estimate.hpp"

#include <algorithm>

namespace infer::cuda {

namespace {

int64_t product(const std::vector<int64_t>& dims, size_t from) {
    int64_t n = 1;
    for (size_t d = from; d < dims.size(); ++d) n *= dims[d];
    return n;
}

// Conv's im2col columns for one image: channels × window size × output positions.
size_t conv_columns(const NodeSignature& node) {
    if (node.input_shapes.size() < 2) return 0;
    const auto& x = node.input_shapes[0].dims();
    const auto& w = node.input_shapes[1].dims();
    if (x.size() < 3 || w.size() != x.size()) return 0;
    const size_t spatial = x.size() - 2;
    const Attributes& attrs = *node.attributes;
    const auto strides = attrs.get_ints("strides", std::vector<int64_t>(spatial, 1));
    const auto dilations = attrs.get_ints("dilations", std::vector<int64_t>(spatial, 1));
    const auto pads = attrs.get_ints("pads", std::vector<int64_t>(2 * spatial, 0));
    const std::string auto_pad = attrs.get_string("auto_pad", "NOTSET");
    bool pointwise = true;
    int64_t out_size = 1;
    for (size_t d = 0; d < spatial; ++d) {
        const int64_t in = x[d + 2], k = w[d + 2];
        const int64_t stride = d < strides.size() ? strides[d] : 1;
        const int64_t dilation = d < dilations.size() ? dilations[d] : 1;
        const int64_t pad = (d < pads.size() ? pads[d] : 0) + (d + spatial < pads.size() ? pads[d + spatial] : 0);
        int64_t out = 0;
        if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") out = (in + stride - 1) / std::max<int64_t>(stride, 1);
        else out = (in + pad - dilation * (k - 1) - 1) / std::max<int64_t>(stride, 1) + 1;
        out_size *= std::max<int64_t>(out, 0);
        pointwise = pointwise && k == 1 && stride == 1 && pad == 0 && auto_pad == "NOTSET";
    }
    if (pointwise) return 0;
    return static_cast<size_t>(x[1] * product(w, 2) * out_size) * dtype_size(node.input_dtypes[0]);
}

}  // namespace

size_t kernel_workspace_estimate(const NodeSignature& node) {
    if (node.op == "Conv") return conv_columns(node);
    if (node.op == "MatMul" || node.op == "MatMulInteger") {
        // Pointer arrays for batched products whose operands cannot be strided uniformly.
        int64_t batch = 1;
        for (const Shape& s : node.input_shapes)
            if (s.rank() > 2) batch = std::max(batch, product(s.dims(), 0) / (s.dims()[s.rank() - 1] * s.dims()[s.rank() - 2]));
        return static_cast<size_t>(3 * batch) * sizeof(void*);
    }
    if (node.op == "LayerNormalization" && !node.input_shapes.empty()) {
        // Scale and bias expanded to the normalized shape when they only broadcast to it.
        const auto& x = node.input_shapes[0].dims();
        int64_t axis = node.attributes->get_int("axis", -1);
        if (axis < 0) axis += static_cast<int64_t>(x.size());
        const int64_t cols = product(x, static_cast<size_t>(std::clamp<int64_t>(axis, 0, static_cast<int64_t>(x.size()))));
        return static_cast<size_t>(2 * cols) * dtype_size(node.input_dtypes[0]);
    }
    if (node.op == "BatchNormalization" && !node.input_shapes.empty() && node.input_shapes[0].rank() > 1)
        return static_cast<size_t>(2 * node.input_shapes[0].dims()[1]) * sizeof(float);
    return 0;
}

}  // namespace infer::cuda
