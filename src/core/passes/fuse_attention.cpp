// Scaled dot-product attention as PyTorch exports it, from the head split to the head merge:
//
//   q = Transpose(Reshape(Q, [B, S, H, D]), [0,2,1,3])         (also k and v; k may be
//   kᵀ = Transpose(Reshape(K, [B, S, H, D]), [0,2,3,1])         transposed in two steps)
//   p = Softmax(MatMul(q, kᵀ) · scale + bias)                    (scale: Mul or Div by a
//   Reshape(Transpose(MatMul(p, v), [0,2,1,3]), [B, S, H·D])     constant, on either side)
//
// becomes one Attention(Q, K, V, bias) node: the per-head products read the heads in place, no
// transposed copies, and the scores never leave the kernel's scratch. Every intermediate value
// must be read by the chain alone; Q, K, V and the bias (a padding mask, a causal mask made with
// Where, a relative position bias) may be read elsewhere. Casts of the probabilities to the type
// they have already are dropped with the chain.
#include "core/ops/op_schema.hpp"
#include "core/passes/pattern.hpp"
#include "core/passes/pipeline.hpp"

namespace infer::detail {

namespace {

struct AttentionOps {
    OpId softmax = op_id("Softmax"), add = op_id("Add"), mul = op_id("Mul"), div = op_id("Div");
    OpId matmul = op_id("MatMul"), transpose = op_id("Transpose"), reshape = op_id("Reshape");
    OpId cast = op_id("Cast"), shape = op_id("Shape"), gather = op_id("Gather");
};

using Perm = std::vector<int64_t>;

class AttentionMatcher {
public:
    AttentionMatcher(const Pattern& p, const AttentionOps& op) : p_(p), op_(op) {}

    struct Match {
        std::vector<int> nodes;
        std::vector<int> shape_readers;  // Shape nodes on the merged heads, to read Q instead
        int q = -1, k = -1, v = -1, output = -1;
        std::vector<int> biases;  // added to the scores, outermost first
        int64_t heads = 0;
        double scale = 1.0;
    };

    std::optional<Match> match(int softmax) {
        m_ = Match{};
        if (!p_.is(softmax, op_.softmax)) return std::nullopt;
        const int64_t axis = p_.node(softmax).attributes.get_int("axis", -1);
        if (axis != -1 && axis != 3) return std::nullopt;
        m_.nodes.push_back(softmax);
        if (!scores_with_bias(p_.node(softmax).inputs[0])) return std::nullopt;
        // p · v, then the head merge.
        const int probabilities = without_identity_casts(p_.node(softmax).outputs[0]);
        const int pv = p_.sole_reader(probabilities, op_.matmul);
        if (pv < 0 || p_.node(pv).inputs[0] != probabilities) return std::nullopt;
        m_.nodes.push_back(pv);
        int64_t value_depth = 0;
        m_.v = heads_of(p_.node(pv).inputs[1], {0, 2, 1, 3}, value_depth);
        if (m_.v < 0) return std::nullopt;
        const int merge = p_.sole_reader(p_.node(pv).outputs[0], op_.transpose);
        if (merge < 0 || p_.perm(merge) != Perm{0, 2, 1, 3}) return std::nullopt;
        const int flatten = merge_reshape(p_.node(merge).outputs[0]);
        if (flatten < 0) return std::nullopt;
        const auto merged = p_.shape_entries(p_.node(flatten).inputs[1]);
        // [B, S, H·Dv], or [B, S, -1] as recent transformers write it.
        if (!merged || merged->size() != 3 || !(*merged)[2] ||
            ((*merged)[2] != m_.heads * value_depth && (*merged)[2] != -1))
            return std::nullopt;
        m_.nodes.insert(m_.nodes.end(), {merge, flatten});
        m_.output = p_.node(flatten).outputs[0];
        return m_;
    }

private:
    // The Reshape merging the heads back. The merged value may also be read by Shape nodes
    // that take only its batch and sequence sizes (GPT-2's export computes the Reshape's target
    // from them): Q has the same two leading dimensions, so they can read Q instead.
    int merge_reshape(int merged) {
        if (!p_.read_by_nodes_only(merged)) return -1;
        int reshape = -1;
        std::vector<int> shapes;
        for (int reader : p_.readers(merged)) {
            if (p_.is(reader, op_.reshape) && p_.node(reader).inputs[0] == merged && reshape < 0) {
                reshape = reader;
            } else if (leading_dims_only(reader)) {
                shapes.push_back(reader);
            } else {
                return -1;
            }
        }
        if (reshape >= 0) m_.shape_readers = std::move(shapes);
        return reshape;
    }

    // A Shape node of the whole tensor whose every reader gathers dimension 0 or 1.
    bool leading_dims_only(int n) const {
        if (!p_.is(n, op_.shape) || p_.node(n).attributes.has("start") || p_.node(n).attributes.has("end"))
            return false;
        const int dims = p_.node(n).outputs[0];
        if (!p_.read_by_nodes_only(dims)) return false;
        for (int reader : p_.readers(dims)) {
            if (!p_.is(reader, op_.gather) || p_.node(reader).inputs[0] != dims ||
                p_.node(reader).attributes.get_int("axis", 0) != 0)
                return false;
            const auto index = p_.ints(p_.node(reader).inputs[1]);
            if (!index || index->size() != 1 || ((*index)[0] != 0 && (*index)[0] != 1)) return false;
        }
        return true;
    }

    // The Softmax's input: scores, or scores plus biases added one after another in either
    // operand order (T5 adds its relative position bias, then the padding mask).
    bool scores_with_bias(int value) {
        const int a = p_.sole_producer(value, op_.add);
        if (a < 0) return scaled_scores(value);
        for (int side : {0, 1}) {
            const Match before = m_;
            m_.nodes.push_back(a);
            m_.biases.push_back(p_.node(a).inputs[1 - side]);
            if (scores_with_bias(p_.node(a).inputs[side])) return true;
            m_ = before;
        }
        return false;
    }

    // `value` after Casts to the type it has already (ViT's export casts the probabilities
    // to f32 twice).
    int without_identity_casts(int value) {
        while (true) {
            const int cast = p_.sole_reader(value, op_.cast);
            if (cast < 0 || dtype_from_onnx(p_.node(cast).attributes.get_int("to", 0)) != p_.type(value).dtype)
                return value;
            m_.nodes.push_back(cast);
            value = p_.node(cast).outputs[0];
        }
    }

    // Scalar factors on `value` (Mul, or Div by a constant): folded into m_.scale.
    int unscaled(int value) {
        while (true) {
            if (const int mul = p_.sole_producer(value, op_.mul); mul >= 0) {
                const NodeIR& node = p_.node(mul);
                const int side = p_.scalar(node.inputs[1]) ? 1 : p_.scalar(node.inputs[0]) ? 0 : -1;
                if (side < 0) return value;
                m_.scale *= *p_.scalar(node.inputs[side]);
                m_.nodes.push_back(mul);
                value = node.inputs[1 - side];
            } else if (const int div = p_.sole_producer(value, op_.div); div >= 0 && p_.scalar(p_.node(div).inputs[1])) {
                m_.scale /= *p_.scalar(p_.node(div).inputs[1]);
                m_.nodes.push_back(div);
                value = p_.node(div).inputs[0];
            } else {
                return value;
            }
        }
    }

    // (q · kᵀ) · scale, the scale anywhere on the way (the exporter of SDPA scales q and k).
    bool scaled_scores(int value) {
        const int qk = p_.sole_producer(unscaled(value), op_.matmul);
        if (qk < 0) return false;
        m_.nodes.push_back(qk);
        int64_t depth = 0, key_depth = 0;
        m_.q = heads_of(unscaled(p_.node(qk).inputs[0]), {0, 2, 1, 3}, depth);
        if (m_.q < 0) return false;
        const int64_t heads = m_.heads;
        const int key = unscaled(p_.node(qk).inputs[1]);
        m_.k = heads_of(key, {0, 2, 3, 1}, key_depth);
        if (m_.k < 0) {
            // kᵀ as Transpose(k, [0,1,3,2]) of the head split.
            const int swap = p_.sole_producer(key, op_.transpose);
            if (swap < 0 || p_.perm(swap) != Perm{0, 1, 3, 2}) return false;
            m_.nodes.push_back(swap);
            m_.k = heads_of(p_.node(swap).inputs[0], {0, 2, 1, 3}, key_depth);
        }
        return m_.k >= 0 && m_.heads == heads && key_depth == depth;
    }

    // The [B, S, H·D] value whose head split `value` is: Transpose(Reshape(x, [B, S, H, D]),
    // perm). Records H (which every split must agree on) and gives D.
    int heads_of(int value, const Perm& perm, int64_t& depth) {
        const int transpose = p_.sole_producer(value, op_.transpose);
        if (transpose < 0 || p_.perm(transpose) != perm) return -1;
        // The head split's Reshape may be read elsewhere too (T5 transposes K a second time
        // to take its length): then it stays, and only the Transpose joins the chain.
        const int heads_value = p_.node(transpose).inputs[0];
        const int split = p_.producer(heads_value, op_.reshape);
        if (split < 0) return -1;
        const auto entries = p_.shape_entries(p_.node(split).inputs[1]);
        if (!entries || entries->size() != 4 || !(*entries)[3] || *(*entries)[3] <= 0) return -1;
        const int64_t head_depth = *(*entries)[3];
        const int x = p_.node(split).inputs[0];
        if (const auto r = p_.rank(x); r && *r != 3) return -1;
        const int64_t width = p_.last_dim(x).value_or(kDynamic);
        // H given, or -1 (view(B, S, -1, D), as recent transformers write it) from the width.
        int64_t heads = (*entries)[2].value_or(0);
        if (heads == -1 && width != kDynamic && width % head_depth == 0) heads = width / head_depth;
        if (heads <= 0 || (m_.heads != 0 && m_.heads != heads)) return -1;
        if (width != kDynamic && width != heads * head_depth) return -1;
        m_.heads = heads;
        depth = head_depth;
        m_.nodes.push_back(transpose);
        if (p_.read_once(heads_value)) m_.nodes.push_back(split);
        return x;
    }

    const Pattern& p_;
    const AttentionOps& op_;
    Match m_;
};

// One sweep; the number of attentions fused.
int fuse_once(Rewriter& rewriter) {
    const AttentionOps op;
    const Pattern p(rewriter);
    AttentionMatcher matcher(p, op);
    int fused = 0;
    for (size_t n = 0; n < p.graph().nodes.size(); ++n) {
        const auto m = matcher.match(static_cast<int>(n));
        // Q, K and V must be known to be 3-D: an earlier attention's fusion is what makes the
        // next layer's shapes known (its head merge hides the rank from shape inference).
        if (!m) continue;
        bool three_d = true;
        for (int x : {m->q, m->k, m->v}) three_d = three_d && p.rank(x) == size_t{3};
        if (!three_d) continue;
        std::vector<int> inputs{m->q, m->k, m->v};
        std::vector<NodeIR> replacements;
        const std::string name = p.node(m->nodes.back()).name;
        if (!m->biases.empty()) {
            // Several biases are summed first, outside the kernel: a [1, H, S, S] position bias
            // plus a [B, 1, 1, S] mask, computed once per layer as the unfused graph did.
            int bias = m->biases.back();
            for (size_t i = m->biases.size() - 1; i-- > 0;) {
                const int sum = rewriter.add_value(name + "/bias");
                replacements.push_back({"Add", rewriter.unique_name(name + "/add_bias"), {bias, m->biases[i]}, {sum}, {}});
                bias = sum;
            }
            inputs.push_back(bias);
        }
        Attributes attributes;
        attributes.set("num_heads", m->heads);
        attributes.set("scale", static_cast<float>(m->scale));
        replacements.push_back({"Attention", name, inputs, {m->output}, attributes});
        if (!rewriter.replace(m->nodes, std::move(replacements))) continue;
        for (int shape : m->shape_readers) rewriter.redirect(shape, 0, m->q);
        ++fused;
    }
    return fused;
}

}  // namespace

void fuse_attention(Rewriter& rewriter, const PassContext& context) {
    if (!context.target_runs("Attention")) return;
    while (fuse_once(rewriter) > 0) rewriter.commit();
}

}  // namespace infer::detail
