// Op test cases of the math family.
#include "op_case.hpp"

namespace ops {

std::vector<Case> math_cases() { return {}; }

}  // namespace ops
