#pragma once
// The library's spdlog logger ("infer"); quiet (warn) until the caller sets a level.
#include <spdlog/spdlog.h>

namespace infer::detail {

spdlog::logger& logger();

}  // namespace infer::detail
