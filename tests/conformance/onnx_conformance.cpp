// Runs every ONNX backend node test through infer-run on one device and compares the outputs
// with the expected ones (rtol 1e-3, atol 1e-5). Prints pass / fail / unsupported per op and in
// total. Exits 1 when a test named in the expected-pass file does not pass (a regression),
// 77 when the device is not present, else 0. --update rewrites the expected-pass file.
#include <infer/infer.hpp>
#include <infer/tensor_io.hpp>

#include <onnx/onnx_pb.h>

#include <sys/wait.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

namespace fs = std::filesystem;

namespace {

enum class Outcome { pass, fail, unsupported };

struct Result {
    Outcome outcome;
    std::string detail;
};

std::string shell_quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

// The op types a model uses, read straight from the protobuf (the model may not load in infer).
std::string ops_of(const fs::path& model) {
    onnx::ModelProto proto;
    std::ifstream in(model, std::ios::binary);
    if (!proto.ParseFromIstream(&in)) return "?";
    std::set<std::string> ops;
    for (const auto& node : proto.graph().node()) ops.insert(node.op_type());
    std::string joined;
    for (const auto& op : ops) joined += (joined.empty() ? "" : "+") + op;
    return joined;
}

std::string compare(const infer::Tensor& got, infer::Tensor expected) {
    // numpy has no bf16: the test data stores bf16 tensors as their u16 bit patterns.
    if (got.dtype() == infer::DType::bf16 && expected.dtype() == infer::DType::u16)
        expected = infer::Tensor(expected.buffer(), infer::DType::bf16, expected.shape(), expected.byte_offset());
    if (got.shape() != expected.shape())
        return "shape " + got.shape().to_string() + " expected " + expected.shape().to_string();
    if (got.dtype() != expected.dtype())
        return std::string("dtype ") + std::string(infer::dtype_name(got.dtype())) + " expected " +
               std::string(infer::dtype_name(expected.dtype()));
    const std::vector<double> a = got.to_vector<double>(), b = expected.to_vector<double>();
    const bool exact = !infer::is_floating(got.dtype());
    for (size_t i = 0; i < a.size(); ++i) {
        if (std::isnan(a[i]) && std::isnan(b[i])) continue;
        if (std::isinf(b[i]) && a[i] == b[i]) continue;
        // bf16 holds 8 significant bits: a result within one unit in the last place (2^-7
        // relative) is as right as bf16 can be. The f32 -> bf16 expectations of this test data
        // truncate, where ONNX specifies rounding to nearest even, one unit away at most.
        const double relative = got.dtype() == infer::DType::bf16 ? 0x1p-7 : 1e-3;
        const double tolerance = exact ? 0.0 : 1e-5 + relative * std::abs(b[i]);
        if (!(std::abs(a[i] - b[i]) <= tolerance))
            return "element " + std::to_string(i) + ": " + std::to_string(a[i]) + " expected " +
                   std::to_string(b[i]);
    }
    return "";
}

// An output file's contents as tensors: a TensorProto, or a SequenceProto's or OptionalProto's
// elements (the model's declared output type says which); `present` false for an empty optional.
std::vector<infer::Tensor> load_output(const fs::path& file, const onnx::TypeProto& type, bool& present) {
    present = true;
    if (type.has_optional_type()) {
        infer::OptionalContents contents = infer::load_optional_proto(file.string());
        present = contents.present;
        return contents.elements;
    }
    if (type.has_sequence_type()) return infer::load_sequence_proto(file.string());
    return {infer::load_tensor(file.string())};
}

// The difference between an output infer-run wrote and the expected one; empty when they agree.
std::string compare_output(const fs::path& got_file, const fs::path& expected_file, const onnx::TypeProto& type) {
    bool got_present = false, expected_present = false;
    const std::vector<infer::Tensor> got = load_output(got_file, type, got_present);
    const std::vector<infer::Tensor> expected = load_output(expected_file, type, expected_present);
    if (got_present != expected_present)
        return std::string("the optional ") + (got_present ? "holds a value" : "is empty") + ", expected otherwise";
    if (got.size() != expected.size())
        return std::to_string(got.size()) + " elements, expected " + std::to_string(expected.size());
    for (size_t e = 0; e < got.size(); ++e) {
        const std::string difference = compare(got[e], expected[e]);
        if (!difference.empty()) return (got.size() > 1 ? "element " + std::to_string(e) + ": " : "") + difference;
    }
    return "";
}

Result run_case(const fs::path& test, const std::string& infer_run, const std::string& device,
                const fs::path& work) {
    onnx::ModelProto model;
    {
        std::ifstream in(test / "model.onnx", std::ios::binary);
        if (!model.ParseFromIstream(&in)) return {Outcome::fail, "model.onnx does not parse"};
    }
    for (const auto& entry : fs::directory_iterator(test)) {
        if (!entry.is_directory() || entry.path().filename().string().rfind("test_data_set", 0) != 0)
            continue;
        const fs::path out = work / test.filename() / entry.path().filename();
        fs::remove_all(out);
        const std::string command = shell_quote(infer_run) + " " + shell_quote((test / "model.onnx").string()) +
                                    " --inputs " + shell_quote(entry.path().string()) + " --outputs " +
                                    shell_quote(out.string()) + " --device " + device + " 2>&1";
        std::string message;
        FILE* pipe = popen(command.c_str(), "r");
        if (!pipe) return {Outcome::fail, "cannot start infer-run"};
        std::array<char, 512> buffer{};
        while (fgets(buffer.data(), buffer.size(), pipe)) message += buffer.data();
        const int status = pclose(pipe);
        if (!message.empty() && message.back() == '\n') message.pop_back();
        if (WIFSIGNALED(status)) return {Outcome::fail, "CRASHED with signal " + std::to_string(WTERMSIG(status))};
        const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        if (code == 3) return {Outcome::unsupported, message};
        if (code != 0) return {Outcome::fail, message};
        for (int i = 0;; ++i) {
            const fs::path expected = entry.path() / ("output_" + std::to_string(i) + ".pb");
            if (!fs::exists(expected)) break;
            const fs::path got = out / ("output_" + std::to_string(i) + ".pb");
            if (!fs::exists(got)) return {Outcome::fail, "output " + std::to_string(i) + " missing"};
            if (i >= model.graph().output_size()) return {Outcome::fail, "more expected outputs than the model has"};
            const std::string difference = compare_output(got, expected, model.graph().output(i).type());
            if (!difference.empty())
                return {Outcome::fail, entry.path().filename().string() + " output " + std::to_string(i) +
                                           ": " + difference};
        }
    }
    return {Outcome::pass, ""};
}

// Tests whose data contradicts the operator's specification or their own model: counted as
// unsupported, with the reason, rather than passed or failed.
const std::string kLikeShape = "its model declares input 'like' as [3,4], its data gives a tensor of shape [1]";
const std::map<std::string, std::string> kContradictSpec{
    {"test_adam_multiple",
     "its expected outputs use epsilon 1e-2, but the node leaves epsilon at the specified default 1e-6"},
    {"test_castlike_BFLOAT16_to_FLOAT", kLikeShape},
    {"test_castlike_BFLOAT16_to_FLOAT_expanded", kLikeShape},
    {"test_castlike_FLOAT_to_BFLOAT16", kLikeShape},
    {"test_castlike_FLOAT_to_BFLOAT16_expanded", kLikeShape},
};

}  // namespace

int main(int argc, char** argv) {
    std::map<std::string, std::string> args;
    bool update = false, verbose = false;
    std::string only;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--update") update = true;
        else if (a == "--verbose") verbose = true;
        else if (i + 1 < argc) args[a] = argv[++i];
    }
    for (const char* required : {"--tests", "--infer-run", "--device", "--expected", "--work"})
        if (!args.count(required)) {
            std::cerr << "usage: onnx_conformance --tests DIR --infer-run PATH --device D --expected FILE "
                         "--work DIR [--filter SUBSTRING] [--update] [--verbose]\n";
            return 2;
        }
    const std::string device = args["--device"];
    const auto devices = infer::available_devices();
    if (std::find(devices.begin(), devices.end(), infer::Device::parse(device)) == devices.end()) {
        std::cout << "device " << device << " is not present on this machine: skipping the ONNX node tests\n";
        return 77;
    }
    std::set<std::string> expected;
    {
        std::ifstream in(args["--expected"]);
        for (std::string line; std::getline(in, line);)
            if (!line.empty() && line[0] != '#') expected.insert(line);
    }
    std::vector<fs::path> tests;
    for (const auto& entry : fs::directory_iterator(args["--tests"]))
        if (entry.is_directory() && (!args.count("--filter") ||
                                     entry.path().filename().string().find(args["--filter"]) != std::string::npos))
            tests.push_back(entry.path());
    std::sort(tests.begin(), tests.end());

    struct Counts { int pass = 0, fail = 0, unsupported = 0; };
    std::map<std::string, Counts> per_op;
    Counts total;
    std::vector<std::string> passed, regressions;
    for (const fs::path& test : tests) {
        const std::string name = test.filename().string();
        Result r{Outcome::fail, ""};
        try {
            if (auto faulty = kContradictSpec.find(name); faulty != kContradictSpec.end())
                r = {Outcome::unsupported, "test data contradicts the specification: " + faulty->second};
            else
                r = run_case(test, args["--infer-run"], device, args["--work"]);
        } catch (const infer::Unsupported& e) {  // e.g. expected outputs of a dtype infer lacks
            r = {Outcome::unsupported, e.what()};
        } catch (const std::exception& e) {
            r = {Outcome::fail, e.what()};
        }
        Counts& op = per_op[ops_of(test / "model.onnx")];
        switch (r.outcome) {
            case Outcome::pass: ++op.pass; ++total.pass; passed.push_back(name); break;
            case Outcome::fail: ++op.fail; ++total.fail; break;
            case Outcome::unsupported: ++op.unsupported; ++total.unsupported; break;
        }
        if (r.outcome != Outcome::pass && expected.count(name)) regressions.push_back(name + ": " + r.detail);
        if (verbose || r.outcome == Outcome::fail)
            std::cout << (r.outcome == Outcome::pass ? "PASS " : r.outcome == Outcome::fail ? "FAIL " : "UNSUPPORTED ")
                      << name << (r.detail.empty() ? "" : "  " + r.detail) << "\n";
    }
    std::cout << "\nper op (pass / fail / unsupported):\n";
    for (const auto& [op, c] : per_op)
        std::cout << "  " << op << ": " << c.pass << " / " << c.fail << " / " << c.unsupported << "\n";
    std::cout << "\nONNX node tests on " << device << ": " << total.pass << " passed, " << total.fail
              << " failed, " << total.unsupported << " unsupported, of " << tests.size() << "\n";
    if (update) {
        std::ofstream out(args["--expected"]);
        out << "# ONNX node tests that pass on this backend; regenerate with onnx_conformance --update\n";
        for (const auto& name : passed) out << name << "\n";
        std::cout << "wrote " << passed.size() << " names to " << args["--expected"] << "\n";
        return 0;
    }
    for (const auto& r : regressions) std::cout << "REGRESSION " << r << "\n";
    return regressions.empty() ? 0 : 1;
}
