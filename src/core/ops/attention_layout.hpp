#pragma once
// Where an Attention node's Q, K and V live (table_fused.cpp): three tensors [B, S, H·D], or,
// with qkv_packed, one [B, S, 3·H·D] with the three side by side along its last axis. Every
// backend's kernels read the heads in place through these strides, so they read them one way.
#include <infer/attributes.hpp>
#include <infer/backend.hpp>
#include <infer/shape.hpp>

#include <cstdint>

namespace infer::detail {

struct AttentionLayout {
    bool packed = false;
    int64_t batch = 0, heads = 1, sq = 0, sk = 0, d = 0, dv = 0;
    int64_t q_row = 0, k_row = 0, v_row = 0;  // elements from one sequence position to the next
    int64_t k_offset = 0, v_offset = 0;       // where K and V start in input 0 when packed
};

// From the node's attributes and its Q, K and V shapes (K and V ignored when packed).
inline AttentionLayout attention_layout(const Attributes& attrs, const Shape& q, const Shape& k, const Shape& v) {
    AttentionLayout a;
    a.packed = attrs.get_int("qkv_packed", 0) == 1;
    a.heads = attrs.get_int("num_heads", 1);
    a.batch = q[0];
    a.sq = q[1];
    const int64_t eq = a.packed ? q[2] / 3 : q[2], ev = a.packed ? eq : v[2];
    a.sk = a.packed ? q[1] : k[1];
    a.d = eq / a.heads;
    a.dv = ev / a.heads;
    a.q_row = a.packed ? q[2] : eq;
    a.k_row = a.packed ? q[2] : eq;
    a.v_row = a.packed ? q[2] : ev;
    a.k_offset = a.packed ? eq : 0;
    a.v_offset = a.packed ? 2 * eq : 0;
    return a;
}

inline AttentionLayout attention_layout(const KernelContext& ctx) {
    const Shape& q = ctx.input(0).shape();
    return attention_layout(ctx.attrs(), q, ctx.has_input(1) ? ctx.input(1).shape() : q,
                            ctx.has_input(2) ? ctx.input(2).shape() : q);
}

}  // namespace infer::detail
