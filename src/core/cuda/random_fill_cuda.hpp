#pragma once

#include <cstdint>

namespace graphtier::cuda {

/// Device backend of graphtier::philox_fill; synchronous on the default stream.
void philox_fill(uint64_t seed, uint64_t stream, uint64_t first_index, uint64_t* out, int64_t n, int device);

}  // namespace graphtier::cuda
