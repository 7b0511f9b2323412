// Fills an array with counter-based random bits on the device where the array lives; host and
// device results are bit-identical (the same Philox stream, see rng.hpp).
#pragma once

#include <cstdint>

#include "graphtier/core/tensor.hpp"

namespace graphtier {

/// out[i] = philox_u64(seed, stream, first_index + i) for a contiguous int64 view in host, pinned
/// or device memory. Throws InvalidArgument on another dtype or a strided view, Unsupported for
/// device memory in a CPU-only build.
void philox_fill(uint64_t seed, uint64_t stream, uint64_t first_index, const TensorView& out);

}  // namespace graphtier
