// The shared main of the cuda test programs: skip (exit 77) with a clear message when this
// build or this machine has no CUDA device, else run the Catch2 tests.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <infer/backend.hpp>

#include <algorithm>
#include <iostream>

int main(int argc, char** argv) {
    constexpr int kSkipped = 77;
    const auto backends = infer::registered_backends();
    if (std::find(backends.begin(), backends.end(), "cuda") == backends.end()) {
        std::cout << "infer was built without CUDA: skipping\n";
        return kSkipped;
    }
    const auto devices = infer::available_devices();
    if (std::none_of(devices.begin(), devices.end(),
                     [](const infer::Device& d) { return d.type == "cuda"; })) {
        std::cout << "no CUDA device present: skipping\n";
        return kSkipped;
    }
    return Catch::Session().run(argc, argv);
}
