// The op table's math family: schemas and shape functions.
#include "core/ops/op_schema.hpp"
#include "core/ops/shape_functions.hpp"

namespace infer::detail {

std::vector<OpSchema> math_op_schemas() { return {}; }

}  // namespace infer::detail
