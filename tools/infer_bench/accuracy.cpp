#include "accuracy.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace infer::bench {

Accuracy compare_outputs(const Batch& outputs, const Batch& reference) {
    Accuracy a;
    size_t rows_seen = 0, rows_agree = 0;
    for (const auto& [name, want_tensor] : reference) {
        if (want_tensor.dtype() != DType::f32 || !outputs.contains(name)) continue;
        const Tensor got_tensor = outputs.at(name).to(Device::CPU);
        if (got_tensor.dtype() != DType::f32 || got_tensor.shape() != want_tensor.shape() || want_tensor.numel() == 0) continue;
        const std::vector<float> got = got_tensor.to_vector<float>(), want = want_tensor.to(Device::CPU).to_vector<float>();
        double error = 0, scale = 0;
        for (size_t i = 0; i < want.size(); ++i) {
            error = std::max(error, std::fabs(double(got[i]) - want[i]));
            scale = std::max(scale, std::fabs(double(want[i])));
        }
        a.relative_error = std::max(a.relative_error, scale > 0 ? error / scale : error);
        const auto width = static_cast<size_t>(want_tensor.shape()[want_tensor.rank() - 1]);
        if (want_tensor.rank() == 0 || width < 2) continue;
        for (size_t row = 0; row < want.size() / width; ++row) {
            const float *g = &got[row * width], *w = &want[row * width];
            double dot = 0, gg = 0, ww = 0;
            for (size_t j = 0; j < width; ++j) dot += double(g[j]) * w[j], gg += double(g[j]) * g[j], ww += double(w[j]) * w[j];
            if (gg > 0 && ww > 0) a.least_cosine = std::min(a.least_cosine, dot / std::sqrt(gg * ww));
            ++rows_seen;
            rows_agree += std::max_element(g, g + width) - g == std::max_element(w, w + width) - w;
        }
    }
    if (rows_seen) a.argmax_agreement = double(rows_agree) / double(rows_seen);
    return a;
}

}  // namespace infer::bench
