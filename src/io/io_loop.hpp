// The one I/O loop behind every engine call: keeps up to `depth` reads in flight on a device and
// deals with each completion's raw outcome (docs/architecture.md, Conventions 5).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "graphtier/io/io_stats.hpp"
#include "graphtier/io/read_device.hpp"
#include "graphtier/io/read_file.hpp"

namespace graphtier::io {

/// A read to perform: bytes [offset, offset + length) into dst, of which the first `needed` must
/// arrive (a block-aligned read may run past the end of the file; only the rows in it are needed).
struct LoopRead {
  const ReadFile* file = nullptr;
  uint64_t offset = 0;
  uint32_t length = 0;
  uint32_t needed = 0;
  std::byte* dst = nullptr;
};

/// Performs reads 0..count-1. start(i, slot) describes read i, whose buffer may depend on
/// `slot` in [0, depth): a slot is not reused until finish(i, slot) has returned, so staging
/// memory of depth slots suffices; neither may throw. Adds what it did to `stats`. Throws the
/// first error once every read in flight has completed (never leaving the device writing into a
/// caller's buffer).
void run_reads(ReadDevice& device, int depth, std::size_t count,
               const std::function<LoopRead(std::size_t index, int slot)>& start,
               const std::function<void(std::size_t index, int slot)>& finish, IoStats& stats);

}  // namespace graphtier::io
