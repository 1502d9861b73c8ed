// Generator: the prompt loop around a decoder step graph (core/models/decoder_builders.hpp).
//
// A call allocates the key/value caches once, [rows, L, width] on the session's device with L
// the padded prompt plus the new tokens rounded up to 64 (so that calls of similar lengths share
// plans, and the attention's tiles are whole), zeroed so that empty slots hold no NaN the masked
// attention could multiply by zero. Every run binds each cache as both the step's past input and
// its present output: TensorScatter then writes the step's rows into it in place. The small
// inputs (ids, positions, mask, write index) go in from the host each step, and the chosen ids
// come back (the logits stay on the device unless the host needs them); the decode plan's
// addresses stay the same from step to step, so on CUDA it is captured once and replayed.
#include <infer/generate.hpp>

#include "core/generation/beam_search.hpp"
#include "core/generation/token_selection.hpp"
#include "core/models/decoder_builders.hpp"
#include "core/models/hf_checkpoint.hpp"

#include <infer/error.hpp>

#include <algorithm>
#include <chrono>
#include <limits>
#include <random>

namespace infer {

struct Generator::Impl {
    detail::DecoderStepGraph model;
    Session session;
    std::optional<Session> encoder;  // encoder-decoder models: run once per call
};

double GenerationStats::decode_tokens_per_s() const {
    return decode_ms > 0 ? static_cast<double>(steps * batch) * 1000.0 / decode_ms : 0.0;
}

namespace {

constexpr int64_t kCacheGranule = 64;

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point start) { return std::chrono::duration<double, std::milli>(Clock::now() - start).count(); }

DType cache_type_for(Precision precision) {
    switch (precision) {
        case Precision::f16: return DType::f16;
        case Precision::bf16: return DType::bf16;
        default: return DType::f32;
    }
}

Tensor i64_tensor(std::vector<int64_t> values, Shape shape) { return Tensor::from_vector(values, shape); }

// The caches of one call and the step runs over them.
class CachedDecoder {
public:
    CachedDecoder(const detail::DecoderStepGraph& model, const Session& session, size_t rows, int64_t capacity,
                  const std::vector<int64_t>& stops)
        : model_(model), session_(session), rows_(rows), capacity_(capacity), mask_(rows * static_cast<size_t>(capacity), 0) {
        const Device device = session.options().device;
        const Shape shape{static_cast<int64_t>(rows), capacity, model.width};
        Tensor zeros = Tensor::empty(model.cache_type, shape);
        std::fill_n(static_cast<char*>(zeros.raw_data()), zeros.nbytes(), 0);
        for (const std::string& name : model.caches) {
            Tensor cache = Tensor::empty(model.cache_type, shape, device);
            cache.copy_from(zeros);
            caches_.push_back(cache);
        }
        // The logits stay on the device, copied to the host only when the host chooses; the next
        // tokens the step chose on the device come back through pinned memory.
        const Shape logits_shape{static_cast<int64_t>(rows), model.vocabulary};
        logits_ = Tensor::empty(DType::f32, logits_shape, device);
        logits_on_host_ = device.is_cpu() ? logits_ : Tensor::empty_pinned(DType::f32, logits_shape, device);
        const Shape next_shape{static_cast<int64_t>(rows)};
        next_tokens_ = device.is_cpu() ? Tensor::empty(DType::i64, next_shape) : Tensor::empty_pinned(DType::i64, next_shape, device);
        // The two logit biases: nothing forbidden, and the stop tokens forbidden (before min_new_tokens).
        std::vector<float> bias(static_cast<size_t>(model.vocabulary), 0.0f);
        allowed_ = Tensor::from_vector(bias, Shape{model.vocabulary}).to(device);
        for (int64_t token : stops)
            if (token >= 0 && token < model.vocabulary) bias[static_cast<size_t>(token)] = -std::numeric_limits<float>::infinity();
        stops_forbidden_ = Tensor::from_vector(bias, Shape{model.vocabulary}).to(device);
    }

    size_t rows() const { return rows_; }
    int64_t capacity() const { return capacity_; }
    // Whether cache slot `slot` of `row` holds a real token (not padding, already written).
    void set_filled(size_t row, int64_t slot) { mask_[row * static_cast<size_t>(capacity_) + static_cast<size_t>(slot)] = 1; }
    // Inputs every step takes unchanged (an encoder's outputs and mask).
    void set_constant_input(const std::string& name, const Tensor& value) { constants_.set(name, value); }

    // Runs `tokens` [rows, T] at cache slots slot..slot+T-1 and positions `positions` [rows, T];
    // then next_tokens() holds each row's most likely token (a stop token only when
    // `stops_allowed`) and logits() each row's last-token logits. With `profile`, the step runs
    // profiled (Session::run's breakdown).
    void run(const std::vector<int64_t>& tokens, const std::vector<int64_t>& positions, int64_t slot, bool stops_allowed,
             RunProfile* profile = nullptr) {
        const auto rows = static_cast<int64_t>(rows_);
        const int64_t length = static_cast<int64_t>(tokens.size()) / rows;
        Batch inputs = constants_;
        inputs.set("input_ids", i64_tensor(tokens, {rows, length}));
        if (!model_.encoder_decoder) inputs.set("position_ids", i64_tensor(positions, {rows, length}));
        inputs.set("attention_mask", i64_tensor(mask_, {rows, capacity_}));
        inputs.set("write_indices", i64_tensor(std::vector<int64_t>(rows_, slot), {rows}));
        inputs.set("logit_bias", stops_allowed ? allowed_ : stops_forbidden_);
        Batch outputs{{"logits", logits_}, {"next_token", next_tokens_}};
        for (size_t i = 0; i < caches_.size(); ++i) {
            inputs.set("past_" + model_.caches[i], caches_[i]);
            outputs.set("present_" + model_.caches[i], caches_[i]);
        }
        if (profile) {
            session_.run(inputs, outputs, *profile);
        } else {
            session_.run(inputs, outputs);
        }
        logits_fetched_ = logits_on_host_.raw_data() == logits_.raw_data();
    }

    const int64_t* next_tokens() const { return next_tokens_.data<int64_t>(); }
    // The last step's logits on the host, [rows, vocabulary] (copied from the device on first use).
    float* logits() {
        if (!logits_fetched_) logits_on_host_.copy_from(logits_);
        logits_fetched_ = true;
        return logits_on_host_.data<float>();
    }

    // Row r of every cache (and of the mask) becomes what row sources[r] was: beam search
    // continuing some beams twice and dropping others.
    void reorder(const std::vector<size_t>& sources) {
        bool identity = true;
        for (size_t r = 0; r < sources.size(); ++r) identity = identity && sources[r] == r;
        if (identity) return;
        for (Tensor& cache : caches_) {
            const Tensor before = cache.clone();
            for (size_t r = 0; r < rows_; ++r)
                if (sources[r] != r) {
                    const auto to = static_cast<int64_t>(r), from = static_cast<int64_t>(sources[r]);
                    Tensor row = cache.slice(0, to, to + 1);
                    row.copy_from(before.slice(0, from, from + 1));
                }
        }
        const std::vector<int64_t> mask = mask_;
        const auto width = static_cast<size_t>(capacity_);
        for (size_t r = 0; r < rows_; ++r)
            std::copy_n(mask.begin() + static_cast<std::ptrdiff_t>(sources[r] * width), width,
                        mask_.begin() + static_cast<std::ptrdiff_t>(r * width));
    }

private:
    const detail::DecoderStepGraph& model_;
    const Session& session_;
    size_t rows_;
    int64_t capacity_;
    std::vector<int64_t> mask_;  // [rows, capacity]
    std::vector<Tensor> caches_;
    Tensor logits_, logits_on_host_, next_tokens_;
    bool logits_fetched_ = false;
    Tensor allowed_, stops_forbidden_;
    Batch constants_;
};

// Checks the prompts and the options against the model; throws InvalidArgument.
void check_request(const detail::DecoderStepGraph& model, const std::vector<std::vector<int64_t>>& prompts,
                   const GenerationOptions& options) {
    if (prompts.empty()) throw InvalidArgument("generate: no prompts");
    size_t longest = 0;
    for (size_t p = 0; p < prompts.size(); ++p) {
        if (prompts[p].empty()) throw InvalidArgument("generate: prompt " + std::to_string(p) + " is empty");
        for (int64_t token : prompts[p])
            if (token < 0 || token >= model.vocabulary)
                throw InvalidArgument("generate: prompt " + std::to_string(p) + " has token " + std::to_string(token) +
                                      ", outside the vocabulary of " + std::to_string(model.vocabulary));
        longest = std::max(longest, prompts[p].size());
    }
    if (options.max_new_tokens == 0) throw InvalidArgument("generate: max_new_tokens must be at least 1");
    if (options.num_beams == 0) throw InvalidArgument("generate: num_beams must be at least 1");
    if (options.num_beams > 1 && options.do_sample)
        throw InvalidArgument("generate: beam search with sampling is not supported; choose num_beams = 1 or do_sample = false");
    if (options.do_sample && !(options.temperature > 0.0f))
        throw InvalidArgument("generate: temperature must be positive when sampling");
    if (!(options.top_p > 0.0f && options.top_p <= 1.0f)) throw InvalidArgument("generate: top_p must be in (0, 1]");
    if (!(options.repetition_penalty > 0.0f)) throw InvalidArgument("generate: repetition_penalty must be positive");
    if (static_cast<int64_t>(longest + options.max_new_tokens) > model.max_positions)
        throw InvalidArgument("generate: the longest prompt (" + std::to_string(longest) + " tokens) plus max_new_tokens (" +
                              std::to_string(options.max_new_tokens) + ") exceeds the model's " +
                              std::to_string(model.max_positions) + " positions");
}

}  // namespace

Generator::Generator(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

Generator Generator::from_folder(const std::string& folder, SessionOptions options) {
    const DType cache_type = cache_type_for(options.precision);
    if (detail::HfCheckpoint(folder).model_type() == "t5") {
        detail::EncoderDecoderGraphs graphs = detail::build_t5_for_generation(folder, cache_type);
        Session decoder(*graphs.decoder.graph, options);
        return Generator(std::make_shared<const Impl>(Impl{std::move(graphs.decoder), std::move(decoder), Session(*graphs.encoder, options)}));
    }
    detail::DecoderStepGraph model = detail::build_gpt2_decoder_step(folder, cache_type);
    Session session(*model.graph, options);
    return Generator(std::make_shared<const Impl>(Impl{std::move(model), std::move(session), std::nullopt}));
}

int64_t Generator::vocabulary_size() const { return impl_->model.vocabulary; }
int64_t Generator::max_positions() const { return impl_->model.max_positions; }
std::optional<int64_t> Generator::end_of_text() const {
    return impl_->model.eos_token >= 0 ? std::optional<int64_t>(impl_->model.eos_token) : std::nullopt;
}
const Session& Generator::session() const { return impl_->session; }

Generation Generator::generate(const std::vector<std::vector<int64_t>>& prompts, const GenerationOptions& options,
                               const TokenCallback& on_token) const {
    const detail::DecoderStepGraph& model = impl_->model;
    check_request(model, prompts, options);
    std::vector<int64_t> stops = options.stop_tokens;
    if (stops.empty() && model.eos_token >= 0) stops.push_back(model.eos_token);
    const int64_t padding = model.pad_token >= 0 ? model.pad_token : std::max<int64_t>(model.eos_token, 0);

    size_t longest = 0;
    for (const auto& prompt : prompts) longest = std::max(longest, prompt.size());
    const auto prompt_length = static_cast<int64_t>(longest);
    const size_t beams = options.num_beams;
    const size_t rows = prompts.size() * beams;
    // Decoder-only: the left-padded prompts are the first step's tokens. Encoder-decoder: the
    // prompts go through the encoder once, and the decoder starts from its start token.
    const int64_t first_step = model.encoder_decoder ? 1 : prompt_length;
    const int64_t needed = first_step + static_cast<int64_t>(options.max_new_tokens);
    const int64_t capacity = std::min(model.max_positions, (needed + kCacheGranule - 1) / kCacheGranule * kCacheGranule);
    CachedDecoder decoder(model, impl_->session, rows, capacity, stops);
    const auto vocabulary = static_cast<size_t>(model.vocabulary);

    auto started = Clock::now();
    std::vector<int64_t> tokens, positions, next_position(rows, 0);
    std::vector<std::vector<int64_t>> seen(rows);  // for the repetition penalty: the rows' ids
    if (model.encoder_decoder) {
        // Right-padded for the encoder (its bias is relative, so the side does not matter).
        std::vector<int64_t> ids(rows * longest, padding), mask(rows * longest, 0);
        for (size_t row = 0; row < rows; ++row) {
            const auto& prompt = prompts[row / beams];
            std::copy(prompt.begin(), prompt.end(), ids.begin() + static_cast<std::ptrdiff_t>(row * longest));
            std::fill_n(mask.begin() + static_cast<std::ptrdiff_t>(row * longest), prompt.size(), 1);
        }
        const Shape shape{static_cast<int64_t>(rows), prompt_length};
        const Tensor encoder_mask = i64_tensor(mask, shape);
        const Batch encoded = impl_->encoder->run({{"input_ids", i64_tensor(ids, shape)}, {"attention_mask", encoder_mask}});
        for (const auto& [name, value] : encoded) decoder.set_constant_input(name, value);
        decoder.set_constant_input("encoder_attention_mask", encoder_mask);
        tokens.assign(rows, model.start_token);
        positions.assign(rows, 0);
        for (size_t row = 0; row < rows; ++row) {
            decoder.set_filled(row, 0);
            seen[row] = {model.start_token};
            next_position[row] = 1;
        }
    } else {
        // Left-padded, each prompt repeated once per beam; positions count real tokens only.
        tokens.assign(rows * longest, padding);
        positions.assign(rows * longest, 0);
        for (size_t row = 0; row < rows; ++row) {
            const auto& prompt = prompts[row / beams];
            const size_t offset = longest - prompt.size();
            for (size_t t = 0; t < prompt.size(); ++t) {
                tokens[row * longest + offset + t] = prompt[t];
                positions[row * longest + offset + t] = static_cast<int64_t>(t);
                decoder.set_filled(row, static_cast<int64_t>(offset + t));
            }
            next_position[row] = static_cast<int64_t>(prompt.size());
            seen[row] = {tokens.begin() + static_cast<std::ptrdiff_t>(row * longest),
                         tokens.begin() + static_cast<std::ptrdiff_t>((row + 1) * longest)};
        }
    }

    Generation result;
    result.tokens.resize(prompts.size());
    result.stats.batch = prompts.size();
    result.stats.prompt_tokens = longest;
    std::vector<bool> finished(rows, false);
    std::mt19937_64 random(options.seed);
    std::optional<detail::BeamSearch> beam_search;
    if (beams > 1) beam_search.emplace(prompts.size(), beams, vocabulary, options.max_new_tokens, options.length_penalty, stops);

    // The step profiled when asked: the second decode step (generated == 2), a steady one.
    const size_t profiled = std::min<size_t>(2, options.max_new_tokens - 1);
    int64_t slot = 0;
    for (size_t generated = 0; generated < options.max_new_tokens; ++generated) {
        RunProfile* profile = generated == profiled && generated > 0 ? options.step_profile : nullptr;
        decoder.run(tokens, positions, slot, generated >= options.min_new_tokens, profile);
        const auto choosing = Clock::now();
        slot += static_cast<int64_t>(tokens.size() / rows);
        std::vector<int64_t> chosen(rows, padding);
        bool more = true;
        if (beam_search) {
            float* logits = decoder.logits();
            for (size_t row = 0; row < rows; ++row) {
                float* row_logits = logits + row * vocabulary;
                detail::log_softmax(row_logits, vocabulary);
                detail::apply_repetition_penalty(row_logits, vocabulary, seen[row], options.repetition_penalty);
                if (generated < options.min_new_tokens) detail::forbid(row_logits, vocabulary, stops);
            }
            more = beam_search->step(logits);
            decoder.reorder(beam_search->sources());
            std::vector<std::vector<int64_t>> reordered(rows);
            for (size_t row = 0; row < rows; ++row) reordered[row] = seen[beam_search->sources()[row]];
            seen = std::move(reordered);
            chosen = beam_search->next_tokens();
        } else {
            more = false;
            // Plain greedy search takes the device's choice; a penalty or sampling needs the logits.
            const bool on_device = !options.do_sample && options.repetition_penalty == 1.0f;
            float* logits = on_device ? nullptr : decoder.logits();
            for (size_t row = 0; row < rows; ++row) {
                if (finished[row]) continue;  // a finished sequence gets padding, as in generate()
                if (on_device) {
                    chosen[row] = decoder.next_tokens()[row];
                } else {
                    float* row_logits = logits + row * vocabulary;
                    detail::apply_repetition_penalty(row_logits, vocabulary, seen[row], options.repetition_penalty);
                    if (generated < options.min_new_tokens) detail::forbid(row_logits, vocabulary, stops);
                    chosen[row] = options.do_sample ? detail::sample(row_logits, vocabulary, options, random)
                                                    : detail::most_likely(row_logits, vocabulary);
                }
                result.tokens[row].push_back(chosen[row]);
                if (on_token) on_token(row, chosen[row]);
                finished[row] = std::find(stops.begin(), stops.end(), chosen[row]) != stops.end();
                more = more || !finished[row];
            }
        }
        result.stats.choose_ms += ms_since(choosing);
        if (generated == 0) {
            result.stats.prefill_ms = ms_since(started);
            started = Clock::now();
        } else {
            ++result.stats.steps;
        }
        if (!more || generated + 1 == options.max_new_tokens) break;
        // The next step: each row's chosen token at the next slot.
        tokens = chosen;
        positions.assign(rows, 0);
        for (size_t row = 0; row < rows; ++row) {
            positions[row] = next_position[row]++;
            decoder.set_filled(row, slot);
            seen[row].push_back(chosen[row]);
        }
    }
    result.stats.decode_ms = result.stats.steps > 0 ? ms_since(started) : 0.0;
    if (beam_search) result.tokens = beam_search->best();
    return result;
}

}  // namespace infer
