#pragma once
// The f16 range check of a plan's first run, on the device: the largest magnitude among a
// step's f16 outputs is reduced where they are and only its two bytes come back to the host
// (copying every output to the host took seconds at large batches).
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace infer::cuda {

// As Backend::largest_f16_magnitude: f16 bits with the sign cleared, after the work queued on
// `stream`; waits for the stream. `where` names the device for errors.
uint16_t largest_f16_magnitude(const void* data, size_t count, cudaStream_t stream, const std::string& where);

}  // namespace infer::cuda
