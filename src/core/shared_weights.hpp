#pragma once
// Forms of a model's constants that sessions derive the same way (a weight narrowed to f16, a
// weight uploaded to a GPU), shared by every session of the same graph while any of them holds
// the form. A second session of a model on the same device then converts and uploads nothing
// and takes no second copy of the weights in device memory. The registry holds only weak
// references: a form lives as long as some session uses it, so nothing here grows with the
// number of sessions made over time, only with the forms alive now.
#include <infer/tensor.hpp>

#include <functional>
#include <string>
#include <vector>

namespace infer::detail {

class SharedWeights {
public:
    // The form `form` (e.g. "f16", "cuda:0") of constant `source`, if a live session has it.
    static Tensor find(const Tensor& source, const std::string& form);
    // Registers `derived` as the form `form` of `source` (replacing a form no longer alive, or
    // one that another session registered meanwhile).
    static void add(const Tensor& source, const std::string& form, const Tensor& derived);
    // find(), else make() and add() (make runs outside the registry's lock; two sessions that
    // miss at once both make the form, and the later one is kept).
    static Tensor find_or_make(const Tensor& source, const std::string& form, const std::function<Tensor()>& make);
    // The same for a form made from several constants (Q, K and V weights side by side): found
    // only while every one of them is the same living constant.
    static Tensor find_or_make(const std::vector<Tensor>& sources, const std::string& form,
                               const std::function<Tensor()>& make);
    // Forms registered and still alive (for tests).
    static size_t live_forms();
};

}  // namespace infer::detail
