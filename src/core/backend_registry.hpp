#pragma once
#include <infer/backend.hpp>

#include <memory>
#include <string>

namespace infer::detail {

// The backend registered under `name`, or nullptr; does not check device indices.
std::shared_ptr<Backend> backend_named(const std::string& name);

}  // namespace infer::detail
