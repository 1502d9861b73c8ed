#pragma once
// Where tensors live and ops run: a backend name and a device index ("cpu", "cuda:1", or the
// name of a backend a user registered). Parsing a name never checks that the backend exists;
// using the device does, and throws DeviceError with what is available.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace infer {

struct Device {
    std::string type = "cpu";
    int index = 0;

    Device() = default;
    Device(std::string_view type, int index = 0);

    static const Device CPU;
    static const Device CUDA;  // cuda:0

    // "cpu", "cuda", "cuda:1", "mybackend:0"; throws InvalidArgument for malformed names.
    static Device parse(std::string_view text);
    std::string to_string() const;  // "cpu" for cpu:0, else "type:index"
    bool is_cpu() const { return type == "cpu"; }
    friend bool operator==(const Device&, const Device&) = default;
};

inline const Device Device::CPU{"cpu", 0};
inline const Device Device::CUDA{"cuda", 0};

// What a backend reports about one of its devices.
struct DeviceProperties {
    std::string name;                 // "AMD EPYC 9654", "NVIDIA H200"
    uint64_t total_memory_bytes = 0;
    uint64_t free_memory_bytes = 0;
    std::string compute_capability;   // "9.0" on CUDA, empty elsewhere
    std::string driver;               // CUDA: "CUDA driver 13.0, runtime 13.0"; CPU: the BLAS and its kernels
    int cores = 0;                    // CPU cores or CUDA multiprocessors
    bool host_accessible = false;     // the CPU can read its buffers directly
};

// Devices usable right now: every index of every registered backend that reports devices.
std::vector<Device> available_devices();
// Throws DeviceError when the device's backend is unknown, not built, or has no such index.
DeviceProperties device_properties(const Device& device);

}  // namespace infer
