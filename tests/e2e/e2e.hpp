#pragma once
// Shared by the end-to-end tests: where the prepared models are, the device under test, and the
// small numerics (mean pooling, cosine) that turn an encoder's output into sentence embeddings.
#include <infer/infer.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace e2e {

// .cache/models (or $INFER_MODEL_CACHE), filled by scripts/models/prepare.sh.
const std::filesystem::path& model_cache();
// The random-weight architectures scripts/models/prepare.sh makes (distilbert-base-random,
// bert-base-random, gpt2-small-random, resnet50-random, vit-base-random, resnet18-random,
// mobilenet-v3-small-random, efficientnet-b0-random).
const std::vector<std::string>& architecture_models();
// The small random-weight Hugging Face checkpoints prepare.sh makes (bert-tiny-checkpoint,
// roberta-tiny-checkpoint, distilbert-tiny-checkpoint, gpt2-tiny-checkpoint, gpt2-tiny-generation;
// bert-base-checkpoint, distilbert-base-checkpoint, gpt2-small-checkpoint only when asked for).
const std::vector<std::string>& checkpoint_models();
// The generation tokenizers prepare.sh trains (gpt2-bpe-tokenizer, t5-unigram-tokenizer).
const std::vector<std::string>& generation_tokenizer_models();
// The device the model tests run on: cpu, or what --device named.
const infer::Device& device_under_test();

// Mean of last_hidden_state [n, length, dim] over positions where attention_mask [n, length]
// is 1, each row then scaled to unit length: sentence-transformers' mean pooling + Normalize.
std::vector<std::vector<float>> mean_pool_normalized(const infer::Tensor& hidden, const infer::Tensor& mask);
double cosine(const std::vector<float>& a, const std::vector<float>& b);

}  // namespace e2e
