// libFuzzer target: arbitrary bytes as an ONNX model. Loading (parse, import, validation) and
// planning (shape inference and constant folding for static inputs) must end in a model or an
// infer::Error, never a crash, hang or sanitizer report.
#include <infer/infer.hpp>

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        const infer::Graph graph = infer::Graph::load_from_bytes(data, size, "fuzz.onnx", "/nonexistent");
        infer::Session session(graph);  // plans now when every input shape is static
    } catch (const infer::Error&) {
    }
    return 0;
}
