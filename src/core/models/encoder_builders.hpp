#pragma once
// The transformer architectures a Hugging Face folder may hold, one builder per file. Each
// declares the graph's inputs as PyTorch's export of the model names them (input_ids,
// attention_mask, token_type_ids where the model has token types) and returns the last hidden
// state (and a language model's logits).
#include "core/models/hf_checkpoint.hpp"

#include <infer/graph.hpp>

namespace infer::detail {

struct EncoderGraph {
    Value last_hidden_state;  // [batch, sequence, hidden]
    Value attention_mask;     // the graph input, for pooling
    Value logits;             // [batch, sequence, vocabulary] for language models; absent otherwise
};

// BERT and the models that share its layout: BertModel checkpoints (BERT, MiniLM), RoBERTa
// (positions counted from the padding index).
EncoderGraph build_bert(GraphBuilder& builder, HfCheckpoint& checkpoint);
// DistilBERT: BERT's layers without token types, other names.
EncoderGraph build_distilbert(GraphBuilder& builder, HfCheckpoint& checkpoint);
// GPT-2 (GPT2Model, GPT2LMHeadModel: then logits too): pre-norm decoder layers, causal attention,
// the whole sequence at once (no key/value cache).
EncoderGraph build_gpt2(GraphBuilder& builder, HfCheckpoint& checkpoint);

}  // namespace infer::detail
