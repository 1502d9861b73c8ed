// Op test cases of the indexing family.
#include "op_case.hpp"

namespace ops {

std::vector<Case> indexing_cases() { return {}; }

}  // namespace ops
