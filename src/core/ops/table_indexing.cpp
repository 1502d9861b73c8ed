// The op table's indexing family: schemas and shape functions.
#include "core/ops/op_schema.hpp"
#include "core/ops/shape_functions.hpp"

namespace infer::detail {

std::vector<OpSchema> indexing_op_schemas() { return {}; }

}  // namespace infer::detail
