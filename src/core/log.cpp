#include "core/log.hpp"

#include <infer/log.hpp>

#include <spdlog/sinks/stdout_color_sinks.h>

#include <cstdlib>
#include <string_view>

namespace infer {

namespace detail {
spdlog::logger& logger() {
    static std::shared_ptr<spdlog::logger> instance = [] {
        auto l = std::make_shared<spdlog::logger>(
            "infer", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
        // INFER_LOG_LEVEL (trace, debug, info, warn, error, off) sets the level before any code
        // runs, so that a tool or service can be made to say more without being rebuilt.
        const char* env = std::getenv("INFER_LOG_LEVEL");
        const spdlog::level::level_enum level = env ? spdlog::level::from_str(env) : spdlog::level::warn;
        l->set_level(env && level == spdlog::level::off && std::string_view(env) != "off" ? spdlog::level::warn : level);
        l->set_pattern("[infer %l] %v");
        return l;
    }();
    return *instance;
}
}  // namespace detail

void set_log_level(LogLevel level) {
    using spdlog::level::level_enum;
    static constexpr level_enum kLevels[] = {level_enum::trace, level_enum::debug, level_enum::info,
                                             level_enum::warn,  level_enum::err,   level_enum::off};
    detail::logger().set_level(kLevels[static_cast<int>(level)]);
}

LogLevel log_level() {
    switch (detail::logger().level()) {
        case spdlog::level::trace: return LogLevel::trace;
        case spdlog::level::debug: return LogLevel::debug;
        case spdlog::level::info: return LogLevel::info;
        case spdlog::level::warn: return LogLevel::warn;
        case spdlog::level::err:
        case spdlog::level::critical: return LogLevel::error;
        default: return LogLevel::off;
    }
}

}  // namespace infer
