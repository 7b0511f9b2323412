// The distributed sampler's packed replies (row_wire.hpp): golden messages written by hand,
// round trips of extracted rows and owner draws on a heavy-tailed graph and of extreme values,
// sizes against a naive count of the format's bytes, and refusal of every malformed message.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <random>

#include "graphtier/core/error.hpp"
#include "graphtier/sample/epoch.hpp"
#include "graphtier/sample/random.hpp"
#include "graphtier/sample/row_sampling.hpp"
#include "graphtier/sample/row_wire.hpp"
#include "sample_test_util.hpp"

namespace graphtier::sample {
namespace {

using Bytes = std::vector<uint8_t>;

void expect_same_rows(const NeighborRows& got, const NeighborRows& want) {
  EXPECT_EQ(got.nodes, want.nodes);
  EXPECT_EQ(got.indptr, want.indptr);
  EXPECT_EQ(got.indices, want.indices);
  EXPECT_EQ(got.first_edge, want.first_edge);
}

void expect_same_draws(const RowDraws& got, const RowDraws& want) {
  EXPECT_EQ(got.counts, want.counts);
  EXPECT_EQ(got.neighbors, want.neighbors);
  EXPECT_EQ(got.edge_ids, want.edge_ids);
}

// The format's sizes counted the slow way: LEB128 one 7-bit group at a time, zigzag by cases.
int64_t leb_bytes(uint64_t v) {
  int64_t n = 1;
  while (v >= 128) {
    v /= 128;
    ++n;
  }
  return n;
}

uint64_t zigzag_of(int64_t from, int64_t to) {
  const auto d = static_cast<int64_t>(static_cast<uint64_t>(to) - static_cast<uint64_t>(from));
  return d >= 0 ? 2 * static_cast<uint64_t>(d) : 2 * (~static_cast<uint64_t>(d)) + 1;
}

int64_t cheaper_ids(std::span<const int64_t> ids) {
  int64_t delta = 0, plain = 0, prev = 0;
  for (const int64_t id : ids) {
    delta += leb_bytes(zigzag_of(prev, id));
    plain += leb_bytes(static_cast<uint64_t>(id));
    prev = id;
  }
  return std::min(delta, plain);
}

int64_t naive_rows_bytes(const NeighborRows& rows) {
  int64_t bytes = leb_bytes(static_cast<uint64_t>(rows.indptr.back())), end = 0;
  for (std::size_t k = 0; k < rows.first_edge.size(); ++k) {
    const int64_t degree = rows.indptr[k + 1] - rows.indptr[k];
    bytes += leb_bytes(2 * static_cast<uint64_t>(degree)) + leb_bytes(zigzag_of(end, rows.first_edge[k]));
    bytes += cheaper_ids(std::span<const int64_t>(rows.indices).subspan(static_cast<std::size_t>(rows.indptr[k]),
                                                                        static_cast<std::size_t>(degree)));
    end = rows.first_edge[k] + degree;
  }
  return bytes;
}

TEST(RowWire, RowsPackAsWrittenByHand) {
  // 5 neighbour ids in all. Row 0: degree 2, first edge 5, ids 3 4 (deltas 3 +1 and plain ids both 2 bytes: deltas);
  // row 1: empty, starting where row 0 ends; row 2: ids 100 1 100 (deltas of 2 bytes each,
  // plain ids of 1: plain), first edge 2 past row 1's end.
  NeighborRows rows{{7, 8, 9}, {0, 2, 2, 5}, {3, 4, 100, 1, 100}, {5, 7, 9}};
  const Bytes want{0x05, 0x04, 0x0A, 0x06, 0x02, 0x00, 0x00, 0x07, 0x04, 0x64, 0x01, 0x64};
  EXPECT_EQ(pack_rows(rows), want);
  expect_same_rows(unpack_rows(want, rows.nodes), rows);
  // An id past one 7-bit group: 200 as a delta is zigzag 400 = 0x90 0x03.
  NeighborRows wide{{0}, {0, 1}, {200}, {0}};
  EXPECT_EQ(pack_rows(wide), (Bytes{0x01, 0x02, 0x00, 0x90, 0x03}));
  // No rows: their total alone.
  EXPECT_EQ(pack_rows(NeighborRows{{}, {0}, {}, {}}), Bytes{0x00});
  expect_same_rows(unpack_rows(Bytes{0x00}, {}), NeighborRows{{}, {0}, {}, {}});
}

TEST(RowWire, IdsPackAsWrittenByHand) {
  // Ascending ids: deltas 5 +1 +124 (1, 1 and 2 bytes) against plain 5 6 130 (1, 1 and 2): a tie
  // of 4 bytes, so deltas; 127 ids from 300: plain needs 2 bytes each, deltas 1 after the first.
  const std::vector<int64_t> ids{5, 6, 130};
  const Bytes want{0x06, 0x0A, 0x02, 0xF8, 0x01};
  EXPECT_EQ(pack_ids(ids), want);
  EXPECT_EQ(unpack_ids(want), ids);
  std::vector<int64_t> run(127);
  std::iota(run.begin(), run.end(), 300);
  const Bytes packed = pack_ids(run);
  EXPECT_EQ(packed.size(), 2u + 2u + 126u);  // head 254 in 2 bytes, zigzag 600 in 2, then +1s
  EXPECT_EQ(unpack_ids(packed), run);
  EXPECT_EQ(pack_ids({}), Bytes{0x00});
  EXPECT_TRUE(unpack_ids(Bytes{0x00}).empty());
}

TEST(RowWire, DrawsPackAsWrittenByHand) {
  // 3 picks in all. Request 0: picks 3 and 9 at edges 10 and 12; request 1: none; request 2: pick 7 at edge 4
  // (8 back from the message's previous edge id: zigzag 15).
  const RowDraws draws{{2, 0, 1}, {3, 9, 7}, {10, 12, 4}};
  const Bytes want{0x03, 0x04, 0x06, 0x0C, 0x14, 0x04, 0x00, 0x02, 0x0E, 0x0F};
  EXPECT_EQ(pack_draws(draws), want);
  expect_same_draws(unpack_draws(want, 3), draws);
}

TEST(RowWire, ExtractedRowsAndOwnerDrawsRoundTrip) {
  const test::OwnedGraph g = test::OwnedGraph::random(3000, 12.0, 21);
  std::vector<int64_t> nodes(static_cast<std::size_t>(g.num_nodes()));
  std::iota(nodes.begin(), nodes.end(), 0);
  std::mt19937_64 rng(4);
  std::shuffle(nodes.begin(), nodes.end(), rng);  // any order of rows
  nodes.resize(900);
  for (const int64_t offset : {int64_t{0}, int64_t{1} << 40}) {
    const NeighborRows rows = extract_rows(g.csc(), nodes, offset);
    const Bytes packed = pack_rows(rows);
    EXPECT_EQ(static_cast<int64_t>(packed.size()), naive_rows_bytes(rows));
    // 3000 nodes: an id in two bytes at most, a row's head and first edge in five (the rows are
    // shuffled, so first edges jump across the graph's 36 K edges), well under int64's eight each.
    EXPECT_LE(packed.size(), 2 * rows.indices.size() + 5 * rows.first_edge.size() + 6);
    expect_same_rows(unpack_rows(packed, nodes), rows);
    for (const bool replace : {false, true}) {
      const std::vector<int64_t> sizes{400, 0, 500};
      const std::vector<uint64_t> streams{layer_stream(minibatch_stream(1, 0), 0), layer_stream(1, 0),
                                          layer_stream(minibatch_stream(1, 2), 0)};
      for (const bool bulk : {false, true}) {
        const auto draw = bulk ? draw_bulk_rows : draw_rows;
        const RowDraws draws = draw(g.csc(), offset, nodes, sizes, streams, 10, replace, 5, nullptr);
        ASSERT_GT(draws.neighbors.size(), 1000u);
        expect_same_draws(unpack_draws(pack_draws(draws), static_cast<int64_t>(nodes.size())), draws);
      }
    }
  }
}

TEST(RowWire, ExtremeValuesRoundTrip) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  // Deltas of +-(2^63 - 1), a row ending at int64's top, a later row starting at 0.
  const NeighborRows rows{{1, 2, 3}, {0, 4, 4, 6}, {0, kMax, 0, kMax - 1}, {kMax - 4, 0, kMax}};
  NeighborRows fixed = rows;
  fixed.indices = {0, kMax, 0, kMax - 1, 5, kMax};
  expect_same_rows(unpack_rows(pack_rows(fixed), fixed.nodes), fixed);
  const RowDraws draws{{3, 1}, {kMax, 0, kMax}, {0, kMax, 1}};
  const RowDraws fixed_draws{{3, 1}, {kMax, 0, kMax, 2}, {0, kMax, 1, kMax}};
  expect_same_draws(unpack_draws(pack_draws(fixed_draws), 2), fixed_draws);
  EXPECT_THROW(pack_rows(rows), InvalidArgument);    // 4 indices where indptr says 6
  EXPECT_THROW(pack_draws(draws), InvalidArgument);  // 3 neighbours where the counts say 4
}

TEST(RowWire, MalformedMessagesAreRefused) {
  const NeighborRows rows{{7, 8, 9}, {0, 2, 2, 5}, {3, 4, 100, 1, 300}, {5, 7, 9}};
  const Bytes good = pack_rows(rows);
  const RowDraws draws{{2, 0, 1}, {3, 9, 700}, {10, 12, 4}};
  const Bytes good_draws = pack_draws(draws);
  const Bytes good_ids = pack_ids(std::vector<int64_t>{4, 900, 2});
  // Every proper prefix is cut short, and a byte more is left over.
  for (std::size_t n = 0; n < good.size(); ++n) {
    EXPECT_THROW(unpack_rows(std::span(good).first(n), rows.nodes), InvalidArgument) << n;
  }
  for (std::size_t n = 0; n < good_draws.size(); ++n) {
    EXPECT_THROW(unpack_draws(std::span(good_draws).first(n), 3), InvalidArgument) << n;
  }
  for (std::size_t n = 0; n < good_ids.size(); ++n) {
    EXPECT_THROW(unpack_ids(std::span(good_ids).first(n)), InvalidArgument) << n;
  }
  Bytes longer_ids = good_ids;
  longer_ids.push_back(0);
  EXPECT_THROW(unpack_ids(longer_ids), InvalidArgument);
  EXPECT_THROW(pack_ids(std::vector<int64_t>{3, -1}), InvalidArgument);
  Bytes longer = good;
  longer.push_back(0);
  EXPECT_THROW(unpack_rows(longer, rows.nodes), InvalidArgument);
  EXPECT_THROW(unpack_rows(good, std::vector<int64_t>{7, 8}), InvalidArgument);  // fewer rows asked: left over
  const std::vector<int64_t> one{0};
  // An eleventh byte, a tenth beyond bit 63, a value of 2^63 (plain coding), a delta below 0.
  EXPECT_THROW(unpack_rows(Bytes(11, 0x80), one), InvalidArgument);
  Bytes ten(9, 0xFF);
  ten.push_back(0x02);
  EXPECT_THROW(unpack_rows(ten, one), InvalidArgument);
  Bytes beyond{0x01, 0x03, 0x00};  // 1 id in all: degree 1, plain coding, first edge 0, then 2^63
  beyond.insert(beyond.end(), 9, 0x80);
  beyond.push_back(0x01);
  EXPECT_THROW(unpack_rows(beyond, one), InvalidArgument);
  EXPECT_THROW(unpack_rows(Bytes{0x01, 0x02, 0x00, 0x01}, one), InvalidArgument);  // neighbour 0 + (-1)
  EXPECT_THROW(unpack_rows(Bytes{0x00, 0x00, 0x01}, one), InvalidArgument);        // first edge 0 + (-1)
  // Totals and degrees that disagree: a row past the total, rows short of it.
  EXPECT_THROW(unpack_rows(Bytes{0x00, 0x02, 0x00, 0x05}, one), InvalidArgument);
  EXPECT_THROW(unpack_rows(Bytes{0x02, 0x02, 0x00, 0x05}, one), InvalidArgument);
  EXPECT_THROW(unpack_draws(Bytes{0x00, 0x02, 0x05, 0x01}, 1), InvalidArgument);
  EXPECT_THROW(unpack_draws(Bytes{0x02, 0x02, 0x05, 0x01, 0x00, 0x00}, 1), InvalidArgument);
  // A total or a degree larger than the bytes left, refused before anything is allocated for it.
  Bytes huge(9, 0xFF);
  huge.push_back(0x01);
  EXPECT_THROW(unpack_rows(huge, one), InvalidArgument);
  EXPECT_THROW(unpack_draws(huge, 1), InvalidArgument);
  Bytes huge_row{0x00};
  huge_row.insert(huge_row.end(), huge.begin(), huge.end());
  EXPECT_THROW(unpack_rows(huge_row, one), InvalidArgument);
  EXPECT_THROW(unpack_draws(Bytes{0x01, 0x02, 0x00}, 1), InvalidArgument);  // one pick needs two values
  EXPECT_THROW(unpack_draws({}, -1), InvalidArgument);
  // Packing refuses negative values and shapes that disagree.
  EXPECT_THROW(pack_rows(NeighborRows{{1}, {0, 1}, {-1}, {0}}), InvalidArgument);
  EXPECT_THROW(pack_rows(NeighborRows{{1}, {0, 1}, {1}, {-3}}), InvalidArgument);
  EXPECT_THROW(pack_rows(NeighborRows{{1, 2}, {0, 2, 1}, {1, 2}, {0, 0}}), InvalidArgument);
  EXPECT_THROW(pack_rows(NeighborRows{{1}, {0, 1}, {1}, {}}), InvalidArgument);
  EXPECT_THROW(pack_draws(RowDraws{{-1}, {}, {}}), InvalidArgument);
  EXPECT_THROW(pack_draws(RowDraws{{1}, {1}, {-2}}), InvalidArgument);
}

}  // namespace
}  // namespace graphtier::sample
