#include "request_error.hpp"

#include <exception>

namespace infer::serve {

ErrorStatus status_of_current_exception() {
    try {
        throw;
    } catch (const RequestError& e) {
        return {e.status(), e.what()};
    } catch (const Overloaded& e) {
        return {503, std::string("overloaded, retry later: ") + e.what()};
    } catch (const Cancelled& e) {
        return {504, std::string("not run before its timeout: ") + e.what()};
    } catch (const InvalidArgument& e) {
        return {400, e.what()};
    } catch (const std::exception& e) {
        return {500, e.what()};
    }
}

}  // namespace infer::serve
