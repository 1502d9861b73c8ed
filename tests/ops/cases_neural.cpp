// Op test cases of the neural-network layers family.
#include "op_case.hpp"

namespace ops {

std::vector<Case> neural_cases() { return {}; }

}  // namespace ops
