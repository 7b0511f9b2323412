// The distributed sampler's packed messages (sample/row_wire.hpp), the bytes another rank sends:
// byte 0 picks the reader (ids, rows or draws), byte 1 the count the requester expects (rows of
// as many nodes, or as many requests), the rest is the message. Each reader either refuses it with
// InvalidArgument or returns values that pack again, no longer than the message (the packer's
// varints are minimal and its codings the cheaper), and unpack again to the same values.
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <span>
#include <vector>

#include "fuzz_common.hpp"
#include "graphtier/sample/row_wire.hpp"

using namespace graphtier::sample;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const int kind = data[0] % 3;
  const int64_t count = data[1];
  const std::span<const uint8_t> message(data + 2, size - 2);
  graphtier::fuzz::check_contract([&] {
    if (kind == 0) {
      const std::vector<int64_t> ids = unpack_ids(message);
      const std::vector<uint8_t> again = pack_ids(ids);
      graphtier::fuzz::require(again.size() <= message.size(), "packed ids grew");
      graphtier::fuzz::require(unpack_ids(again) == ids, "ids changed in a round trip");
    } else if (kind == 1) {
      std::vector<int64_t> nodes(static_cast<std::size_t>(count));
      std::iota(nodes.begin(), nodes.end(), 0);
      const NeighborRows rows = unpack_rows(message, nodes);
      graphtier::fuzz::require(rows.indptr.size() == nodes.size() + 1 && rows.first_edge.size() == nodes.size() &&
                                   rows.indptr.front() == 0 &&
                                   rows.indptr.back() == static_cast<int64_t>(rows.indices.size()),
                               "unpacked rows of the wrong shape");
      for (std::size_t k = 0; k < nodes.size(); ++k) {
        graphtier::fuzz::require(rows.indptr[k] <= rows.indptr[k + 1] && rows.first_edge[k] >= 0, "a bad row");
      }
      for (const int64_t id : rows.indices) graphtier::fuzz::require(id >= 0, "a negative neighbour id");
      const std::vector<uint8_t> again = pack_rows(rows);
      graphtier::fuzz::require(again.size() <= message.size(), "packed rows grew");
      const NeighborRows back = unpack_rows(again, nodes);
      graphtier::fuzz::require(back.indptr == rows.indptr && back.indices == rows.indices &&
                                   back.first_edge == rows.first_edge,
                               "rows changed in a round trip");
    } else {
      const RowDraws draws = unpack_draws(message, count);
      graphtier::fuzz::require(draws.counts.size() == static_cast<std::size_t>(count) &&
                                   draws.neighbors.size() == draws.edge_ids.size(),
                               "unpacked draws of the wrong shape");
      const std::vector<uint8_t> again = pack_draws(draws);
      graphtier::fuzz::require(again.size() <= message.size(), "packed draws grew");
      const RowDraws back = unpack_draws(again, count);
      graphtier::fuzz::require(back.counts == draws.counts && back.neighbors == draws.neighbors &&
                                   back.edge_ids == draws.edge_ids,
                               "draws changed in a round trip");
    }
  });
  return 0;
}
