// The op test runner: inputs, session, comparison, tally.
#include "runner.hpp"

#include "precision.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <optional>
#include <ostream>
#include <random>
#include <sstream>

namespace ops {

namespace {
struct Drawn {
    infer::Tensor tensor;
    RefTensor value;  // what the graph sees, in double
};

template <class T>
infer::Tensor tensor_of(const std::vector<T>& values, DType type, const Shape& shape) {
    return infer::Tensor::from_host(values.data(), type, shape);
}

// A view of every other row of a buffer twice as tall whose other rows hold NaN: the session
// must read the view's elements and nothing else.
template <class T>
infer::Tensor strided_view(const std::vector<T>& values, DType type, const Shape& shape, T nan) {
    if (shape.rank() == 0 || shape[0] == 0) return tensor_of(values, type, shape);
    std::vector<int64_t> tall_dims = shape.dims();
    tall_dims[0] *= 2;
    const size_t row = values.size() / static_cast<size_t>(shape[0]);
    std::vector<T> tall(2 * values.size(), nan);
    for (size_t i = 0; i < values.size(); ++i) tall[(i / row) * 2 * row + i % row] = values[i];
    return tensor_of(tall, type, Shape(tall_dims)).slice(0, 0, tall_dims[0], 2);
}

// `strided`: float inputs come as strided views (see strided_view).
Drawn draw(const InputSpec& spec, DType case_type, std::mt19937_64& rng, bool strided) {
    const DType type = spec.dtype.value_or(case_type);
    const auto n = static_cast<size_t>(ref::numel(spec.shape));
    std::uniform_real_distribution<double> magnitude(0.1, 2.0);
    std::uniform_int_distribution<int64_t> integer(spec.lo, spec.hi);
    std::bernoulli_distribution coin(0.5);
    std::vector<double> values(n);
    for (double& v : values) {
        switch (spec.fill) {
            case Fill::signed_values: v = magnitude(rng) * spec.scale * (coin(rng) ? 1 : -1) + spec.offset; break;
            case Fill::positive: v = magnitude(rng) * spec.scale + spec.offset; break;
            case Fill::integers: v = static_cast<double>(integer(rng)); break;
            case Fill::boolean: v = coin(rng) ? 1 : 0; break;
        }
    }
    Drawn d{{}, {spec.shape, {}}};
    if (infer::is_floating(type)) {
        std::vector<float> f32;
        std::vector<double> f64;
        std::vector<uint16_t> bits;
        for (double v : values) {
            const double rounded = ref::round_to(type, static_cast<float>(v));
            d.value.data.push_back(rounded);
            f32.push_back(static_cast<float>(rounded));
            f64.push_back(rounded);
            bits.push_back(type == DType::f16 ? ref::half_bits(rounded) : ref::bfloat16_bits(rounded));
        }
        const uint16_t nan_bits = type == DType::f16 ? 0x7e00 : 0x7fc0;
        if (type == DType::f64)
            d.tensor = strided ? strided_view(f64, type, spec.shape, std::nan("")) : tensor_of(f64, type, spec.shape);
        else if (strided)
            d.tensor = type == DType::f32 ? strided_view(f32, type, spec.shape, std::nanf(""))
                                          : strided_view(bits, type, spec.shape, nan_bits);
        else
            d.tensor = type == DType::f32 ? tensor_of(f32, type, spec.shape) : tensor_of(bits, type, spec.shape);
        return d;
    }
    d.value.data = values;
    switch (type) {
        case DType::i64: d.tensor = tensor_of(std::vector<int64_t>(values.begin(), values.end()), type, spec.shape); break;
        case DType::i32: d.tensor = tensor_of(std::vector<int32_t>(values.begin(), values.end()), type, spec.shape); break;
        case DType::i8: d.tensor = tensor_of(std::vector<int8_t>(values.begin(), values.end()), type, spec.shape); break;
        case DType::i16: d.tensor = tensor_of(std::vector<int16_t>(values.begin(), values.end()), type, spec.shape); break;
        case DType::u16: d.tensor = tensor_of(std::vector<uint16_t>(values.begin(), values.end()), type, spec.shape); break;
        case DType::u32: d.tensor = tensor_of(std::vector<uint32_t>(values.begin(), values.end()), type, spec.shape); break;
        case DType::u64: d.tensor = tensor_of(std::vector<uint64_t>(values.begin(), values.end()), type, spec.shape); break;
        default: d.tensor = tensor_of(std::vector<uint8_t>(values.begin(), values.end()), type, spec.shape); break;
    }
    return d;
}

uint64_t seed_of(const Case& c, DType dtype, int run) {
    uint64_t h = 1469598103934665603ull;  // FNV-1a: stable across platforms, unlike std::hash
    for (char ch : c.op + "|" + c.label + "|" + std::string(infer::dtype_name(dtype)) + "|" + std::to_string(run))
        h = (h ^ static_cast<unsigned char>(ch)) * 1099511628211ull;
    return h;
}

struct Tolerance {
    double rtol, atol;
};

// Per output dtype. f32: 1e-5 relative as the design asks; accumulating ops get 1e-4 (see
// Case::accumulates). f16/bf16: inputs are already rounded, so this measures the kernel's own
// error: about one rounding of the output (2^-11, 2^-8) plus intermediate roundings.
Tolerance tolerance(DType type, bool accumulates) {
    switch (type) {
        case DType::f16: return accumulates ? Tolerance{1e-2, 1e-2} : Tolerance{1e-2, 1e-3};
        case DType::bf16: return accumulates ? Tolerance{2e-2, 2e-2} : Tolerance{2e-2, 2e-3};
        // Inputs are exact in double, so only the order of sums and libm differ.
        case DType::f64: return accumulates ? Tolerance{1e-10, 1e-10} : Tolerance{1e-12, 1e-13};
        default: return accumulates ? Tolerance{1e-4, 1e-4} : Tolerance{1e-5, 1e-6};
    }
}

// Empty when the output matches; else what went wrong, with the worst elements.
std::string compare(const infer::Tensor& got, DType type, const RefTensor& want, bool accumulates) {
    std::ostringstream why;
    if (got.dtype() != type)
        return "dtype " + std::string(infer::dtype_name(got.dtype())) + ", graph says " + std::string(infer::dtype_name(type));
    if (got.shape() != want.shape) return "shape " + got.shape().to_string() + ", expected " + want.shape.to_string();
    const infer::Tensor host = got.to(infer::Device::CPU).contiguous();
    std::vector<double> values;
    if (infer::is_floating(type)) {
        values = host.to_vector<double>();
    } else if (type == DType::boolean) {
        const bool* p = host.data<bool>();
        values.assign(p, p + host.numel());
    } else {
        for (int64_t v : host.to_vector<int64_t>()) values.push_back(static_cast<double>(v));
    }
    const Tolerance tol = infer::is_floating(type) ? tolerance(type, accumulates) : Tolerance{0, 0};
    size_t bad = 0;
    double worst = 0;
    for (size_t i = 0; i < values.size(); ++i) {
        const double err = std::fabs(values[i] - want.data[i]);
        const bool ok = std::isfinite(values[i]) && err <= tol.atol + tol.rtol * std::fabs(want.data[i]);
        if (ok) continue;
        if (bad++ < 3)
            why << " [" << i << "] got " << std::setprecision(9) << values[i] << " want " << want.data[i] << ";";
        if (std::isfinite(values[i])) worst = std::max(worst, err);
    }
    if (bad == 0) return "";
    std::ostringstream head;
    head << bad << "/" << values.size() << " elements off (rtol " << tol.rtol << ", atol " << tol.atol
         << ", max |err| " << worst << "):" << why.str();
    return head.str();
}
}  // namespace

namespace {
// Builds the case's graph, compiles a strict session and runs `runs`; empty when every output
// matches. `dynamic`: the first input is declared with a dynamic first dimension (a batch
// size), so shapes are inferred with unknowns at build time and planned when the batch arrives.
std::string run_graph(const Case& c, const infer::Device& device, DType dtype, bool dynamic,
                      const std::vector<int>& runs) {
    infer::GraphBuilder builder(c.op);
    std::vector<infer::Value> inputs;
    std::vector<RefTensor> weights(c.inputs.size());  // the values of weight inputs
    std::mt19937_64 weight_rng(seed_of(c, dtype, -1));
    for (size_t i = 0; i < c.inputs.size(); ++i) {
        const InputSpec& spec = c.inputs[i];
        if (spec.weight) {
            Drawn d = draw(spec, dtype, weight_rng, false);
            inputs.push_back(builder.constant(d.tensor, spec.name));
            weights[i] = std::move(d.value);
            continue;
        }
        Shape declared = spec.shape;
        if (dynamic && inputs.empty() && declared.rank() > 0) declared[0] = infer::kDynamic;
        inputs.push_back(builder.input(spec.name, spec.dtype.value_or(dtype), declared));
    }
    const std::vector<infer::Value> outputs = c.build(builder, inputs, dtype);
    for (size_t i = 0; i < outputs.size(); ++i) builder.output("y" + std::to_string(i), outputs[i]);
    const infer::Graph graph = builder.build();
    infer::SessionOptions options;
    options.device = device;
    options.strict = true;
    const infer::Session session(graph, options);
    for (int run : runs) {
        std::mt19937_64 rng(seed_of(c, dtype, run));
        infer::Batch batch;
        std::vector<RefTensor> values;
        for (size_t i = 0; i < c.inputs.size(); ++i) {
            const InputSpec& spec = c.inputs[i];
            if (spec.weight) {
                values.push_back(weights[i]);
                continue;
            }
            // Run 2 passes strided views: inputs need not be dense.
            Drawn d = draw(spec, dtype, rng, run == 1);
            batch.set(spec.name, d.tensor);
            values.push_back(std::move(d.value));
        }
        const std::vector<RefTensor> expected = c.reference(values, dtype);
        const infer::Batch result = session.run(batch);
        for (size_t i = 0; i < expected.size(); ++i) {
            const std::string name = "y" + std::to_string(i);
            const std::string why = compare(result[name], graph.outputs()[i].dtype, expected[i], c.accumulates);
            if (!why.empty()) return "run " + std::to_string(run + 1) + " output " + name + ": " + why;
        }
    }
    return "";
}
}  // namespace

Outcome run_case(const Case& c, const infer::Device& device, DType dtype) {
    const bool required = device.is_cpu() && dtype != DType::bf16 && dtype != DType::f64 && !c.cpu_optional;
    std::string stage = "static shapes";
    try {
        std::string why = run_graph(c, device, dtype, false, {0, 1});
        if (why.empty()) {
            stage = "dynamic first dimension";
            why = run_graph(c, device, dtype, true, {2});
        }
        if (!why.empty()) return {Outcome::failed, stage + ", " + why};
    } catch (const infer::Unsupported& e) {
        if (required) return {Outcome::failed, stage + ", unsupported on the CPU: " + e.what()};
        return {Outcome::unsupported, stage + ": " + e.what()};
    } catch (const std::exception& e) {
        return {Outcome::failed, stage + ", threw: " + e.what()};
    }
    return {Outcome::passed, ""};
}

void Summary::record(const std::string& backend, DType dtype, const Case& c, const Outcome& outcome) {
    const std::string column = backend + "/" + std::string(infer::dtype_name(dtype));
    if (std::find(columns_.begin(), columns_.end(), column) == columns_.end()) columns_.push_back(column);
    if (std::find(ops_.begin(), ops_.end(), c.op) == ops_.end()) ops_.push_back(c.op);
    Counts& n = counts_[{c.op, column}];
    switch (outcome.kind) {
        case Outcome::passed: ++n.passed; break;
        case Outcome::unsupported:
            if (n.unsupported++ == 0) n.first_unsupported = c.label + ": " + outcome.detail;
            break;
        case Outcome::failed:
            ++n.failed;
            failures_.push_back(column + " " + c.op + " " + c.label + ": " + outcome.detail);
            break;
    }
}

void Summary::print(std::ostream& out) const {
    if (columns_.empty()) return;  // no op case ran (a filtered run)
    out << "\nop test summary: passed/failed/unsupported per op and backend/dtype\n" << std::left << std::setw(20) << "op";
    for (const auto& col : columns_) out << std::setw(14) << col;
    out << "\n";
    std::map<std::string, Counts> totals;
    for (const auto& op : ops_) {
        out << std::setw(20) << op;
        for (const auto& col : columns_) {
            auto it = counts_.find({op, col});
            if (it == counts_.end()) {
                out << std::setw(14) << "-";
                continue;
            }
            const Counts& n = it->second;
            out << std::setw(14) << (std::to_string(n.passed) + "/" + std::to_string(n.failed) + "/" + std::to_string(n.unsupported));
            totals[col].passed += n.passed;
            totals[col].failed += n.failed;
            totals[col].unsupported += n.unsupported;
        }
        out << "\n";
    }
    out << std::setw(20) << "TOTAL";
    for (const auto& col : columns_) {
        const Counts& n = totals[col];
        out << std::setw(14) << (std::to_string(n.passed) + "/" + std::to_string(n.failed) + "/" + std::to_string(n.unsupported));
    }
    out << "\n";
    for (const auto& [key, n] : counts_)
        if (n.unsupported > 0)
            out << "unsupported: " << key.second << " " << key.first << " x" << n.unsupported << " (first: " << n.first_unsupported << ")\n";
    for (const auto& f : failures_) out << "FAILED: " << f << "\n";
}

}  // namespace ops
