#pragma once
// infer logs through spdlog under the logger name "infer", quiet (warnings only) by default.
// Placement fallbacks are logged at info level.
namespace infer {

enum class LogLevel { trace, debug, info, warn, error, off };
void set_log_level(LogLevel level);
LogLevel log_level();

}  // namespace infer
