#include "core/backend_registry.hpp"

#include <infer/backend.hpp>
#include <infer/device.hpp>
#include <infer/error.hpp>

#include <cctype>
#include <charconv>

namespace infer {

Device::Device(std::string_view type_name, int device_index) : type(type_name), index(device_index) {
    if (type.empty()) throw InvalidArgument("device type is empty");
    for (char c : type)
        if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) ||
              c == '_'))
            throw InvalidArgument("device type '" + type +
                                  "' may only hold lower-case letters, digits and '_'");
    if (index < 0) throw InvalidArgument("device index " + std::to_string(index) + " is negative");
}

Device Device::parse(std::string_view text) {
    const size_t colon = text.find(':');
    if (colon == std::string_view::npos) return Device(text, 0);
    const std::string_view digits = text.substr(colon + 1);
    int index = -1;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
    if (digits.empty() || error != std::errc() || end != digits.data() + digits.size())
        throw InvalidArgument("device '" + std::string(text) + "': index is not a number");
    return Device(text.substr(0, colon), index);
}

std::string Device::to_string() const {
    if (type == "cpu" && index == 0) return "cpu";
    return type + ":" + std::to_string(index);
}

std::vector<Device> available_devices() {
    std::vector<Device> devices;
    for (const std::string& name : registered_backends()) {
        const auto backend = detail::backend_named(name);
        const int count = backend ? backend->device_count() : 0;
        for (int i = 0; i < count; ++i) devices.emplace_back(name, i);
    }
    return devices;
}

DeviceProperties device_properties(const Device& device) {
    return backend_for(device)->properties(device.index);
}

}  // namespace infer
