// op_tests: every case of the op table on every selected backend and dtype.
//
//   op_tests [--backends=cpu,cuda] [--dtypes=f32,f16,bf16,i64,i32,bool] [Catch2 options]
//
// The same selections can come from INFER_OPS_BACKENDS and INFER_OPS_DTYPES (the command line
// wins). Each op is one Catch2 test case named "op <Name>", so `op_tests "op Conv"` runs one.
// Exit code 77 (ctest SKIP_RETURN_CODE) when no selected backend has a device.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "core/ops/op_schema.hpp"
#include <infer/backend.hpp>
#include "runner.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <set>

namespace {

constexpr int kSkipped = 77;

struct Selection {
    std::vector<infer::Device> devices;
    std::set<std::string> dtypes;  // empty: all
};
Selection selection;
ops::Summary summary;

std::set<std::string> split_list(const std::string& text) {
    std::set<std::string> items;
    size_t begin = 0;
    while (begin <= text.size()) {
        const size_t end = std::min(text.find(',', begin), text.size());
        if (end > begin) items.insert(text.substr(begin, end - begin));
        begin = end + 1;
    }
    return items;
}

// Takes --backends= and --dtypes= out of argv (Catch2 rejects options it does not know).
std::pair<std::string, std::string> take_options(int& argc, char** argv) {
    const char* env_backends = std::getenv("INFER_OPS_BACKENDS");
    const char* env_dtypes = std::getenv("INFER_OPS_DTYPES");
    std::string backends = env_backends ? env_backends : "", dtypes = env_dtypes ? env_dtypes : "";
    int kept = 1;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg.rfind("--backends=", 0) == 0) backends = arg.substr(11);
        else if (arg.rfind("--dtypes=", 0) == 0) dtypes = arg.substr(9);
        else argv[kept++] = argv[i];
    }
    argc = kept;
    return {backends, dtypes};
}

void run_op(const std::string& op) {
    for (const infer::Device& device : selection.devices)
        for (const ops::Case& c : ops::all_cases()) {
            if (c.op != op) continue;
            for (infer::DType dtype : c.dtypes) {
                if (!selection.dtypes.empty() && !selection.dtypes.count(std::string(infer::dtype_name(dtype)))) continue;
                const ops::Outcome outcome = ops::run_case(c, device, dtype);
                summary.record(device.type, dtype, c, outcome);
                if (outcome.kind == ops::Outcome::failed)
                    FAIL_CHECK(device.to_string() << " " << infer::dtype_name(dtype) << " " << op << " " << c.label << ": "
                                                  << outcome.detail);
                else
                    SUCCEED();
            }
        }
}

struct OpInvoker : Catch::ITestInvoker {
    explicit OpInvoker(std::string name) : op(std::move(name)) {}
    void invoke() const override { run_op(op); }
    std::string op;
};

}  // namespace

// Adding an op means adding its cases here too (DESIGN.md: op table, CPU kernel, op test).
TEST_CASE("every op in the op table has cases", "[ops]") {
    for (const auto& schema : infer::detail::all_ops()) {
        const bool covered = std::any_of(ops::all_cases().begin(), ops::all_cases().end(),
                                         [&](const ops::Case& c) { return c.op == schema.name; });
        INFO("op " << schema.name);
        CHECK(covered);
    }
}

int main(int argc, char** argv) {
    const auto [backends, dtypes] = take_options(argc, argv);
    const std::set<std::string> wanted = split_list(backends);
    selection.dtypes = split_list(dtypes);
    const auto registered = infer::registered_backends();
    for (const std::string& name : wanted)
        if (std::find(registered.begin(), registered.end(), name) == registered.end())
            std::cout << "op_tests: backend '" << name << "' is not built into infer; skipped\n";
    const auto available = infer::available_devices();
    for (const std::string& name : registered) {
        if (!wanted.empty() && !wanted.count(name)) continue;
        size_t found = 0;
        for (const infer::Device& d : available)
            if (d.type == name) {
                selection.devices.push_back(d);
                ++found;
            }
        if (found == 0) std::cout << "op_tests: backend '" << name << "' has no devices here; skipped\n";
    }
    if (selection.devices.empty()) {
        std::cout << "op_tests: SKIPPED: no selected backend has a device\n";
        return kSkipped;
    }

    // One Catch2 test case per op, in op-table order of first appearance among the cases.
    static std::deque<std::string> names;  // Catch keeps references to the names
    static std::vector<std::unique_ptr<Catch::AutoReg>> registrations;
    std::vector<std::string> ops_seen;
    for (const ops::Case& c : ops::all_cases())
        if (std::find(ops_seen.begin(), ops_seen.end(), c.op) == ops_seen.end()) ops_seen.push_back(c.op);
    for (const std::string& op : ops_seen) {
        names.push_back("op " + op);
        registrations.push_back(std::make_unique<Catch::AutoReg>(
            new OpInvoker(op), CATCH_INTERNAL_LINEINFO, Catch::StringRef(),
            Catch::NameAndTags{Catch::StringRef(names.back()), "[ops]"}));
    }

    const auto start = std::chrono::steady_clock::now();
    const int result = Catch::Session().run(argc, argv);
    summary.print(std::cout);
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    std::cout << "op_tests: " << took.count() << " s\n";
    return result;
}
