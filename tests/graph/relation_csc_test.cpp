// graph::relation_csc (graphtier/graph/relation_csc.hpp): a typed graph's relations as CSCs in
// their types' own ids, on a tiny graph whose answer is known by hand, with either index width.
#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <vector>

#include "graphtier/core/error.hpp"
#include "graphtier/graph/relation_csc.hpp"

namespace graphtier::graph {
namespace {

// paper [0, 3), author [3, 5). Relations: 0 paper:cites:paper, 1 author:writes:paper,
// 2 paper:written_by:author. Edges (source -> column): cites 1->0 2->0 2->1; writes 3->0 4->0 4->2;
// written_by 0->3 0->4 2->4.
const std::vector<int64_t> kIndptr{0, 4, 5, 6, 7, 9};
const std::vector<int64_t> kIndices64{1, 2, 3, 4, 2, 4, 0, 0, 2};
const std::vector<int32_t> kIndices32{1, 2, 3, 4, 2, 4, 0, 0, 2};
const std::vector<uint8_t> kTypePerEdge{0, 0, 1, 1, 0, 1, 2, 2, 2};
const std::vector<int64_t> kTypeOffset{0, 3, 5};
const std::vector<RelationTypes> kRelations{{0, 0}, {1, 0}, {0, 1}};

HeteroView tiny_types() { return {kTypeOffset, kRelations, kTypePerEdge}; }

void expect_relation(const RelationCsc& got, const std::vector<int64_t>& indptr, const std::vector<int64_t>& indices,
                     const std::vector<int64_t>& edge_ids) {
  EXPECT_EQ(got.indptr, indptr);
  EXPECT_EQ(got.indices, indices);
  EXPECT_EQ(got.edge_ids, edge_ids);
}

TEST(RelationCsc, SplitsTheTinyGraphByRelationInTypeIds) {
  for (const CscView csc : {CscView{kIndptr, std::span<const int32_t>(kIndices32)},
                            CscView{kIndptr, std::span<const int64_t>(kIndices64)}}) {
    // cites: papers 0, 1, 2 hear from papers {1, 2}, {2}, {}.
    expect_relation(relation_csc(csc, tiny_types(), 0), {0, 2, 3, 3}, {1, 2, 2}, {0, 1, 4});
    // writes: authors 3, 4 are 0, 1 within their type.
    expect_relation(relation_csc(csc, tiny_types(), 1), {0, 2, 2, 3}, {0, 1, 1}, {2, 3, 5});
    // written_by: columns are the authors (2 of them).
    expect_relation(relation_csc(csc, tiny_types(), 2), {0, 1, 3}, {0, 0, 2}, {6, 7, 8});
  }
}

TEST(RelationCsc, RelationsPartitionTheEdges) {
  const CscView csc{kIndptr, std::span<const int64_t>(kIndices64)};
  std::vector<int> seen(kIndices64.size(), 0);
  for (int32_t r = 0; r < 3; ++r) {
    const RelationCsc rel = relation_csc(csc, tiny_types(), r);
    const int64_t src_begin = kTypeOffset[static_cast<std::size_t>(kRelations[static_cast<std::size_t>(r)].src_type)];
    for (std::size_t k = 0; k < rel.edge_ids.size(); ++k) {
      const auto p = static_cast<std::size_t>(rel.edge_ids[k]);
      ++seen[p];
      EXPECT_EQ(kTypePerEdge[p], r);
      EXPECT_EQ(rel.indices[k] + src_begin, kIndices64[p]);
    }
  }
  EXPECT_EQ(seen, std::vector<int>(kIndices64.size(), 1));
}

TEST(RelationCsc, UnknownRelationIsOutOfRange) {
  const CscView csc{kIndptr, std::span<const int64_t>(kIndices64)};
  EXPECT_THROW(relation_csc(csc, tiny_types(), 3), OutOfRange);
  EXPECT_THROW(relation_csc(csc, tiny_types(), -1), OutOfRange);
}

}  // namespace
}  // namespace graphtier::graph
