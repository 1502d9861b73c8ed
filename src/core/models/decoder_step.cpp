// The parts every decoder step graph shares (decoder_builders.hpp): the key/value caches written
// in place, and the outputs after the language-model head.
#include "core/models/decoder_builders.hpp"

namespace infer::detail {

Value cached_step_values(GraphBuilder& b, DecoderStepGraph& step, Value update, const std::string& name, Value write_indices,
                         int64_t width) {
    const DType type = step.cache_type;
    const Value past = b.input("past_" + name, type, {kDynamic, kDynamic, width});
    const Value present = b.op1("TensorScatter", {past, type == DType::f32 ? update : b.cast(update, type), write_indices},
                                {{"axis", int64_t{1}}});
    b.output("present_" + name, present);
    step.caches.push_back(name);
    return type == DType::f32 ? present : b.cast(present, DType::f32);
}

void add_step_outputs(GraphBuilder& b, Value logits) {
    b.output("logits", logits);
    const Value bias = b.input("logit_bias", DType::f32, {kDynamic});
    b.output("next_token", b.op1("ArgMax", {b.add(logits, bias)}, {{"axis", int64_t{-1}}, {"keepdims", int64_t{0}}}));
}

}  // namespace infer::detail
