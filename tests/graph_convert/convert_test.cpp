// Converters (convert.hpp) through their public API: edge lists (plain and gzip), .npy arrays,
// OGB's raw layouts (CSV.gz and npz) and IGB's. Golden tests use tiny graphs whose CSC is worked
// out by hand; the randomized test checks a seeded edge list against a std::set reference; every
// reader is fed broken input and must name the file (and the line, for text) in its error.
#include <gtest/gtest.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <tuple>

#include "text_lines.hpp"
#include "graph_convert/convert_test_util.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/graph_convert/convert.hpp"

namespace graphtier::graph {
namespace {

namespace fs = std::filesystem;
using test::Csc;
using test::read_csc;
using test::to_vector;
using test::error_of;
using test::expect_mentions;
using test::write_file;
using test::write_gzip;
using test::write_npy_file;

/// Feature row v of `d` decoded as `T` values (dim of them).
template <typename T>
std::vector<T> feature_row(const Dataset& d, int64_t v) {
  const auto& layout = d.manifest().features;
  std::vector<T> row(static_cast<std::size_t>(layout.dim));
  std::memcpy(row.data(), d.feature_bytes().data() + v * layout.row_stride, row.size() * sizeof(T));
  return row;
}

/// The value of the non-negative 16-bit float pattern `b` with `man_bits` significand bits and
/// exponent `bias` (float16: 10 and 15, bfloat16: 7 and 127). The infinity pattern gives the next
/// power of two, which is where IEEE 754 rounding to nearest puts the overflow threshold.
double small_float_value(uint32_t b, int man_bits, int bias) {
  const uint32_t exp = b >> man_bits, man = b & ((1u << man_bits) - 1);
  if (exp == 0) return std::ldexp(static_cast<double>(man), 1 - bias - man_bits);
  return std::ldexp(static_cast<double>((1u << man_bits) + man), static_cast<int>(exp) - bias - man_bits);
}

/// The correctly rounded (to nearest, ties to even) 16-bit float of `x`: a reference that shares
/// no code with the converter. Finite patterns grow with their value, so a binary search finds the
/// two candidates.
uint16_t nearest_small_float(double x, int man_bits, int bias) {
  const uint32_t inf_bits = ((1u << (15 - man_bits)) - 1) << man_bits;
  const double a = std::fabs(x);
  uint32_t lo = 0, hi = inf_bits;  // the first pattern whose value is >= a lies in [lo, hi]
  while (lo < hi) {
    const uint32_t mid = (lo + hi) / 2;
    if (small_float_value(mid, man_bits, bias) >= a) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  uint32_t best = lo;
  if (lo > 0) {
    const double above = small_float_value(lo, man_bits, bias) - a;
    const double below = a - small_float_value(lo - 1, man_bits, bias);
    if (below < above || (below == above && ((lo - 1) & 1u) == 0)) best = lo - 1;
  }
  return static_cast<uint16_t>(best | (std::signbit(x) ? 0x8000u : 0u));
}

class ConvertTest : public ::testing::Test {
 protected:
  std::string path(const std::string& name) const { return tmp_ / name; }
  /// A fresh output directory name.
  std::string out() { return tmp_ / ("out" + std::to_string(outputs_++)); }

  test::TempDir tmp_;
  ThreadPool pool_{2};
  int outputs_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Edge lists

// 5 nodes, written with every separator and comment the syntax allows. Directed edges after
// cleaning: 0->1 (listed twice), 0->2, 1->2, 2->0, 3->2, 4->3, 3->4, and the self-loop 2->2.
constexpr const char* kGoldenEdges =
    "# a comment line\n"
    "% a Matrix Market style comment\n"
    "0 1\n"
    "0\t2\n"
    "  1   2  \n"
    "2,0\n"
    "3 ,2\r\n"
    "\n"
    "2 2\n"
    "0, 1\n"
    "4 , 3\n"
    "3\t4";  // last line without a newline

// In-neighbours (the CSC column of dst holds the srcs): 0 <- {2}, 1 <- {0}, 2 <- {0, 1, 3},
// 3 <- {4}, 4 <- {3}.
const Csc kGoldenDirected{{0, 1, 2, 5, 6, 7}, {2, 0, 0, 1, 3, 4, 3}};
// With the self-loop kept: 2 <- {0, 1, 2, 3}.
const Csc kGoldenSelfLoops{{0, 1, 2, 6, 7, 8}, {2, 0, 0, 1, 2, 3, 4, 3}};
// Symmetrized: the undirected pairs {0,1} {0,2} {1,2} {2,3} {3,4}.
const Csc kGoldenSymmetric{{0, 2, 4, 7, 9, 10}, {1, 2, 0, 2, 0, 1, 3, 2, 4, 3}};

TEST_F(ConvertTest, EdgeListMatchesHandComputedCsc) {
  write_file(path("edges.txt"), kGoldenEdges);
  const ConvertReport r = convert_edge_list({path("edges.txt")}, out(), {}, pool_);
  EXPECT_EQ(r.format, "edge list");
  EXPECT_EQ(r.num_nodes, 5);
  EXPECT_EQ(r.num_edges, 7);
  EXPECT_EQ(r.input_edges, 9);
  EXPECT_EQ(r.self_loops_removed, 1);
  EXPECT_EQ(r.duplicates_removed, 1);
  EXPECT_EQ(r.isolated_nodes, 0);
  EXPECT_EQ(r.max_in_degree, 3);
  const Dataset d = Dataset::open(r.dataset);
  EXPECT_EQ(read_csc(d), kGoldenDirected);
  EXPECT_EQ(d.manifest().indices_dtype, DType::kInt32);
  EXPECT_EQ(d.manifest().name, "out0");
  EXPECT_FALSE(d.has_features());
  EXPECT_FALSE(d.has_labels());
  EXPECT_NO_THROW(d.verify_checksums());
}

TEST_F(ConvertTest, EdgeListGzipGivesTheSameDataset) {
  write_file(path("edges.txt"), kGoldenEdges);
  write_gzip(path("edges.dat"), kGoldenEdges);  // told apart by magic bytes, not by name
  const ConvertReport plain = convert_edge_list({path("edges.txt")}, out(), {}, pool_);
  const ConvertReport gz = convert_edge_list({path("edges.dat")}, out(), {}, pool_);
  EXPECT_EQ(gz.format, "edge list (gzip)");
  EXPECT_EQ(gz.input_edges, plain.input_edges);
  const Dataset a = Dataset::open(plain.dataset), b = Dataset::open(gz.dataset);
  EXPECT_EQ(read_csc(b), kGoldenDirected);
  EXPECT_EQ(read_csc(a), read_csc(b));
}

TEST_F(ConvertTest, EdgeListSymmetrizeAndSelfLoops) {
  write_gzip(path("edges.gz"), kGoldenEdges);
  ConvertOptions sym;
  sym.symmetrize = true;
  const ConvertReport rs = convert_edge_list({path("edges.gz")}, out(), sym, pool_);
  EXPECT_EQ(read_csc(Dataset::open(rs.dataset)), kGoldenSymmetric);
  EXPECT_EQ(rs.num_edges, 10);
  // 8 non-loop input edges place 16 entries: 0->1 twice, and 0-2, 3-4 given in both directions.
  EXPECT_EQ(rs.duplicates_removed, 6);

  ConvertOptions loops;
  loops.keep_self_loops = true;
  const ConvertReport rl = convert_edge_list({path("edges.gz")}, out(), loops, pool_);
  EXPECT_EQ(read_csc(Dataset::open(rl.dataset)), kGoldenSelfLoops);
  EXPECT_EQ(rl.self_loops_removed, 0);

  // A self-loop is stored once even when symmetrized.
  ConvertOptions both = sym;
  both.keep_self_loops = true;
  const Csc expected{{0, 2, 4, 8, 10, 11}, {1, 2, 0, 2, 0, 1, 2, 3, 2, 4, 3}};
  EXPECT_EQ(read_csc(Dataset::open(convert_edge_list({path("edges.gz")}, out(), both, pool_).dataset)), expected);
}

TEST_F(ConvertTest, EdgeListNumNodesAddsIsolatedNodes) {
  write_file(path("edges.txt"), kGoldenEdges);
  ConvertOptions o;
  o.num_nodes = 8;
  const ConvertReport r = convert_edge_list({path("edges.txt")}, out(), o, pool_);
  EXPECT_EQ(r.num_nodes, 8);
  EXPECT_EQ(r.isolated_nodes, 3);
  Csc expected = kGoldenDirected;
  expected.indptr.insert(expected.indptr.end(), 3, 7);
  EXPECT_EQ(read_csc(Dataset::open(r.dataset)), expected);
}

TEST_F(ConvertTest, EdgeListExtraColumnsOnlyWhenAllowed) {
  write_file(path("weighted.txt"), "0 1 0.5\n1,2,7\n2 0\n");
  expect_mentions(error_of([&] { convert_edge_list({path("weighted.txt")}, out(), {}, pool_); }),
                  {path("weighted.txt") + ":1", "unexpected text after the two node ids", "--allow-extra-columns"});
  const ConvertReport r = convert_edge_list({path("weighted.txt"), /*allow_extra_columns=*/true}, out(), {}, pool_);
  EXPECT_EQ(read_csc(Dataset::open(r.dataset)), (Csc{{0, 1, 2, 3}, {2, 0, 1}}));
}

/// A seeded random edge list with duplicates, self-loops and every separator, against a
/// std::set of (dst, src) pairs. Large enough (~500 KB of text) that the parser splits it into parts that
/// the pool parses in parallel; also built in several passes under a memory budget.
TEST_F(ConvertTest, EdgeListRandomMatchesSetReference) {
  constexpr int64_t kNodes = 2000, kEdges = 50000;
  std::mt19937_64 rng(20240611);
  std::uniform_int_distribution<int64_t> node(0, kNodes - 1);
  std::ostringstream text;
  std::vector<std::pair<int64_t, int64_t>> edges;
  const char* seps[] = {" ", "\t", ",", " , ", "  "};
  for (int64_t i = 0; i < kEdges; ++i) {
    const int64_t s = node(rng);
    // Every tenth edge repeats an earlier one, every fiftieth is a self-loop.
    const int64_t d = i % 50 == 0 ? s : node(rng);
    if (i % 10 == 0 && !edges.empty()) {
      edges.push_back(edges[rng() % edges.size()]);
    } else {
      edges.emplace_back(s, d);
    }
    if (i % 1000 == 0) text << "# block " << i << "\n";
    text << edges.back().first << seps[rng() % 5] << edges.back().second << "\n";
  }
  write_gzip(path("random.gz"), text.str());

  for (const bool symmetrize : {false, true}) {
    for (const bool keep_loops : {false, true}) {
      std::set<std::pair<int64_t, int64_t>> ref;  // (dst, src): sorted as the CSC is
      int64_t loops = 0, max_id = 0;
      for (const auto& [s, d] : edges) {
        max_id = std::max({max_id, s, d});
        if (s == d) {
          ++loops;
          if (!keep_loops) continue;
        }
        ref.emplace(d, s);
        if (symmetrize) ref.emplace(s, d);
      }
      Csc expected;
      expected.indptr.assign(static_cast<std::size_t>(max_id + 2), 0);
      for (const auto& [d, s] : ref) {
        ++expected.indptr[static_cast<std::size_t>(d + 1)];
        expected.indices.push_back(s);
      }
      for (std::size_t v = 1; v < expected.indptr.size(); ++v) expected.indptr[v] += expected.indptr[v - 1];

      ConvertOptions o;
      o.symmetrize = symmetrize;
      o.keep_self_loops = keep_loops;
      ThreadPool pool(4);
      const ConvertReport r = convert_edge_list({path("random.gz")}, out(), o, pool);
      SCOPED_TRACE(testing::Message() << "symmetrize " << symmetrize << ", keep self-loops " << keep_loops);
      EXPECT_EQ(r.input_edges, kEdges);
      EXPECT_EQ(r.self_loops_removed, keep_loops ? 0 : loops);
      EXPECT_EQ(r.num_edges, static_cast<int64_t>(ref.size()));
      EXPECT_EQ(read_csc(Dataset::open(r.dataset)), expected);

      if (!symmetrize || !keep_loops) continue;
      // A budget for about a quarter of the entries: same CSC, several passes.
      o.memory_budget = (max_id + 1) * 8 + static_cast<int64_t>(ref.size());
      const ConvertReport budgeted = convert_edge_list({path("random.gz")}, out(), o, pool);
      EXPECT_GT(budgeted.topology_passes, 2);
      EXPECT_EQ(read_csc(Dataset::open(budgeted.dataset)), expected);
    }
  }
}

TEST_F(ConvertTest, EdgeListRejectsMalformedLineWithItsNumber) {
  write_file(path("bad.txt"), "# header\n0 1\n1 2\n2 x\n3 4\n");
  expect_mentions(error_of([&] { convert_edge_list({path("bad.txt")}, out(), {}, pool_); }),
                  {path("bad.txt") + ":4:", "expected two non-negative integer node ids", "'2 x'"});
  write_file(path("one.txt"), "0 1\n7\n");
  expect_mentions(error_of([&] { convert_edge_list({path("one.txt")}, out(), {}, pool_); }), {path("one.txt") + ":2:"});
  // The same in a gzip file: the line number counts decompressed lines.
  write_gzip(path("bad.gz"), "0 1\n1 2\n\n1;2\n");
  expect_mentions(error_of([&] { convert_edge_list({path("bad.gz")}, out(), {}, pool_); }),
                  {path("bad.gz") + ":4:", "'1;2'"});
  // Nothing half-written is left behind.
  EXPECT_FALSE(fs::exists(tmp_ / "out0"));
}

/// Input text quoted in a message has its non-printable bytes escaped: binary input must not send
/// control sequences to the terminal.
TEST_F(ConvertTest, MessagesEscapeBinaryBytesOfTheInput) {
  const auto expect_no_raw_bytes = [](const std::string& message) {
    for (const char c : message) {
      const auto b = static_cast<unsigned char>(c);
      EXPECT_TRUE(b >= 0x20 && b < 0x7f) << "raw byte 0x" << std::hex << int{b} << " in: " << message;
    }
  };
  write_file(path("binary.txt"), std::string("0 1\n1 \x1b[2J\x07\xff\x00 2\n", 16));
  std::string message = error_of([&] { convert_edge_list({path("binary.txt")}, out(), {}, pool_); });
  expect_mentions(message, {path("binary.txt") + ":2:", "'1 \\x1b[2J\\x07\\xff\\x00 2'"});
  expect_no_raw_bytes(message);

  // An .npy header with control bytes in it, quoted in the message.
  std::string npy = test::npy_bytes(NpyType::kInt64, {2, 1}, std::vector<int64_t>{0, 1});
  const std::size_t shape_at = npy.find("'shape'");
  ASSERT_NE(shape_at, std::string::npos);
  npy[shape_at + 1] = '\x1b';
  write_file(path("binary.npy"), npy);
  NpyInput in;
  in.edge_index = path("binary.npy");
  message = error_of([&] { convert_npy(in, out(), {}, pool_); });
  expect_mentions(message, {path("binary.npy"), "malformed .npy header", "\\x1bhape"});
  expect_no_raw_bytes(message);
}

TEST_F(ConvertTest, EdgeListRefusesALineLongerThanTheLimit) {
  using graph::detail::kMaxLineBytes;
  // Line 2 is "1 2" padded with blanks to exactly the limit: accepted.
  const auto padded = [](std::size_t bytes) { return "1 2" + std::string(bytes - 3, ' '); };
  write_file(path("at.txt"), "0 1\n" + padded(kMaxLineBytes) + "\n2 0\n");
  EXPECT_EQ(convert_edge_list({path("at.txt")}, out(), {}, pool_).input_edges, 3);
  write_file(path("over.txt"), "0 1\n" + padded(kMaxLineBytes + 1) + "\n2 0\n");
  expect_mentions(error_of([&] { convert_edge_list({path("over.txt")}, out(), {}, pool_); }),
                  {path("over.txt") + ":2:", "longer than 1048576 bytes"});
  // No newline at all (several blocks' worth): refused at line 3 before it is read whole, also
  // through gzip.
  const std::string endless = "0 1\n1 2\n" + std::string(std::size_t{40} << 20, '7');
  write_file(path("endless.txt"), endless);
  expect_mentions(error_of([&] { convert_edge_list({path("endless.txt")}, out(), {}, pool_); }),
                  {path("endless.txt") + ":3:", "longer than 1048576 bytes"});
  write_gzip(path("endless.gz"), endless);
  expect_mentions(error_of([&] { convert_edge_list({path("endless.gz")}, out(), {}, pool_); }),
                  {path("endless.gz") + ":3:", "longer than 1048576 bytes"});
}

TEST_F(ConvertTest, EdgeListRejectsNegativeAndOutOfRangeIds) {
  write_file(path("neg.txt"), "0 1\n-1 2\n");
  expect_mentions(error_of([&] { convert_edge_list({path("neg.txt")}, out(), {}, pool_); }),
                  {path("neg.txt") + ":2:", "non-negative", "'-1 2'"});
  write_file(path("big.txt"), "0 1\n1 2\n4 5\n");
  ConvertOptions o;
  o.num_nodes = 5;
  expect_mentions(error_of([&] { convert_edge_list({path("big.txt")}, out(), o, pool_); }),
                  {path("big.txt") + ":3:", "node id 5 is out of range [0, 5)"});
  write_file(path("huge.txt"), "0 99999999999999999999\n");
  expect_mentions(error_of([&] { convert_edge_list({path("huge.txt")}, out(), {}, pool_); }),
                  {path("huge.txt") + ":1:", "does not fit in 64 bits"});
}

// Node ids and counts that no machine can hold are refused before anything is allocated for them,
// naming where they came from, what they need and what there is.
TEST_F(ConvertTest, HugeNodeIdsAndCountsAreRefusedBeforeAllocating) {
  write_file(path("beyond.txt"), "0 1\n0 9000000000000000000\n");
  expect_mentions(error_of([&] { convert_edge_list({path("beyond.txt")}, out(), {}, pool_); }),
                  {path("beyond.txt") + ":2:",
                   "node id 9000000000000000000 is beyond the format's limit of 1152921504606846974 nodes"});
  write_file(path("vast.txt"), "0 1\n1000000000000000 0\n");
  expect_mentions(error_of([&] { convert_edge_list({path("vast.txt")}, out(), {}, pool_); }),
                  {path("vast.txt") + ":2:", "node id 1000000000000000: 1000000000000001 nodes need",
                   "in memory for the in-degree counters (8 B per node) but the machine has"});
  write_file(path("small.txt"), "0 1\n");
  ConvertOptions o;
  o.num_nodes = 1000000000000000;
  expect_mentions(error_of<InvalidArgument>([&] { convert_edge_list({path("small.txt")}, out(), o, pool_); }),
                  {"number of nodes (--num-nodes): 1000000000000000 nodes need", "but the machine has"});

  write_npy_file(path("vast.npy"), NpyType::kInt64, {2, 2}, std::vector<int64_t>{0, 1, 1, 1000000000000000});
  NpyInput in;
  in.edge_index = path("vast.npy");
  expect_mentions(error_of([&] { convert_npy(in, out(), {}, pool_); }),
                  {path("vast.npy"), "edge 1 (1 -> 1000000000000000): node id 1000000000000000: ", "nodes need"});
}

TEST_F(ConvertTest, EdgeListRejectsTruncatedAndCorruptGzip) {
  std::string text;
  for (int i = 0; i < 2000; ++i) text += std::to_string(i) + " " + std::to_string((i * 7) % 2000) + "\n";
  write_gzip(path("full.gz"), text);
  const std::string gz = test::read_file(path("full.gz"));
  // Cut in the middle of the deflate data, and cut inside the 8-byte trailer (CRC and length).
  for (const std::size_t keep : {gz.size() / 2, gz.size() - 3}) {
    write_file(path("cut.gz"), gz.substr(0, keep));
    expect_mentions(error_of([&] { convert_edge_list({path("cut.gz")}, out(), {}, pool_); }),
                    {path("cut.gz"), "truncated"});
  }
  std::string corrupt = gz;
  corrupt[corrupt.size() - 6] ^= 0x5a;  // the CRC-32 in the trailer
  write_file(path("crc.gz"), corrupt);
  expect_mentions(error_of([&] { convert_edge_list({path("crc.gz")}, out(), {}, pool_); }), {path("crc.gz"), "corrupt gzip"});
}

TEST_F(ConvertTest, EdgeListReportsMissingFileAndEmptyInput) {
  expect_mentions(error_of<IoError>([&] { convert_edge_list({path("missing.txt")}, out(), {}, pool_); }),
                  {path("missing.txt")});
  write_file(path("empty.txt"), "# only a comment\n");
  expect_mentions(error_of([&] { convert_edge_list({path("empty.txt")}, out(), {}, pool_); }),
                  {path("empty.txt"), "no edges"});
}

// ---------------------------------------------------------------------------------------------
// .npy arrays

// The golden graph's cleaned directed edges, without the self-loop and duplicate.
const std::vector<int64_t> kSrc{0, 0, 1, 2, 3, 4, 3};
const std::vector<int64_t> kDst{1, 2, 2, 0, 2, 3, 4};

std::vector<int64_t> rows_layout() {
  std::vector<int64_t> v = kSrc;
  v.insert(v.end(), kDst.begin(), kDst.end());
  return v;
}

template <typename T>
std::vector<T> pairs_layout() {
  std::vector<T> v;
  for (std::size_t i = 0; i < kSrc.size(); ++i) {
    v.push_back(static_cast<T>(kSrc[i]));
    v.push_back(static_cast<T>(kDst[i]));
  }
  return v;
}

/// An .npy file that declares Fortran order: the same bytes then hold the transposed layout.
std::string fortran_npy(NpyType type, std::vector<int64_t> shape, const std::vector<int64_t>& values) {
  std::string bytes = test::npy_bytes(type, std::move(shape), values);
  const std::size_t pos = bytes.find("'fortran_order': False");
  bytes.replace(pos, 22, "'fortran_order': True ");
  return bytes;
}

TEST_F(ConvertTest, NpyEdgeIndexLayoutsAgree) {
  const int64_t e = static_cast<int64_t>(kSrc.size());
  write_npy_file(path("rows.npy"), NpyType::kInt64, {2, e}, rows_layout());
  write_npy_file(path("pairs.npy"), NpyType::kInt32, {e, 2}, pairs_layout<int32_t>());
  write_npy_file(path("pairs_u16.npy"), NpyType::kUInt16, {e, 2}, pairs_layout<uint16_t>());
  // [2, E] in Fortran order lies in memory as (src, dst) pairs.
  write_file(path("fortran.npy"), fortran_npy(NpyType::kInt64, {2, e}, pairs_layout<int64_t>()));

  const std::pair<std::string, EdgeLayout> cases[] = {{"rows.npy", EdgeLayout::kAuto},
                                                      {"rows.npy", EdgeLayout::kRows},
                                                      {"pairs.npy", EdgeLayout::kAuto},
                                                      {"pairs.npy", EdgeLayout::kColumns},
                                                      {"pairs_u16.npy", EdgeLayout::kAuto},
                                                      {"fortran.npy", EdgeLayout::kAuto}};
  for (const auto& [file, layout] : cases) {
    SCOPED_TRACE(file);
    NpyInput in;
    in.edge_index = path(file);
    in.edge_layout = layout;
    const ConvertReport r = convert_npy(in, out(), {}, pool_);
    EXPECT_EQ(r.format, "npy");
    EXPECT_EQ(r.input_edges, e);
    EXPECT_EQ(read_csc(Dataset::open(r.dataset)), kGoldenDirected);
  }
}

TEST_F(ConvertTest, NpySquareEdgeIndexFollowsTheLayoutOption) {
  // [[0, 1], [2, 3]]: as [2, E] the edges 0->2, 1->3; as [E, 2] the edges 0->1, 2->3.
  write_npy_file(path("square.npy"), NpyType::kInt64, {2, 2}, std::vector<int64_t>{0, 1, 2, 3});
  NpyInput in;
  in.edge_index = path("square.npy");
  EXPECT_EQ(read_csc(Dataset::open(convert_npy(in, out(), {}, pool_).dataset)), (Csc{{0, 0, 0, 1, 2}, {0, 1}}));
  in.edge_layout = EdgeLayout::kColumns;
  EXPECT_EQ(read_csc(Dataset::open(convert_npy(in, out(), {}, pool_).dataset)), (Csc{{0, 0, 1, 1, 2}, {0, 2}}));
}

TEST_F(ConvertTest, NpyMasksAndIdListsGiveTheSameSplits) {
  write_npy_file(path("edges.npy"), NpyType::kInt64, {2, 7}, rows_layout());
  write_npy_file(path("train_ids.npy"), NpyType::kInt64, {2}, std::vector<int64_t>{3, 0});
  write_npy_file(path("valid_ids.npy"), NpyType::kInt32, {1, 1}, std::vector<int32_t>{1});
  write_npy_file(path("test_ids.npy"), NpyType::kUInt8, {2}, std::vector<uint8_t>{2, 4});
  write_npy_file(path("train_mask.npy"), NpyType::kBool, {5}, std::vector<uint8_t>{1, 0, 0, 1, 0});
  write_npy_file(path("valid_mask.npy"), NpyType::kBool, {5}, std::vector<uint8_t>{0, 1, 0, 0, 0});
  write_npy_file(path("test_mask.npy"), NpyType::kBool, {5}, std::vector<uint8_t>{0, 0, 1, 0, 1});

  NpyInput ids{path("edges.npy"), EdgeLayout::kAuto, "", "", path("train_ids.npy"), path("valid_ids.npy"),
               path("test_ids.npy")};
  NpyInput masks{path("edges.npy"), EdgeLayout::kAuto, "", "", path("train_mask.npy"), path("valid_mask.npy"),
                 path("test_mask.npy")};
  const Dataset a = Dataset::open(convert_npy(ids, out(), {}, pool_).dataset);
  const Dataset b = Dataset::open(convert_npy(masks, out(), {}, pool_).dataset);
  // Id lists keep their order; masks give ascending ids.
  EXPECT_EQ(to_vector(a.split(Split::kTrain)), (std::vector<int64_t>{3, 0}));
  EXPECT_EQ(to_vector(b.split(Split::kTrain)), (std::vector<int64_t>{0, 3}));
  for (const Split s : {Split::kValid, Split::kTest}) {
    EXPECT_EQ(to_vector(a.split(s)), to_vector(b.split(s)));
  }
  EXPECT_EQ(to_vector(b.split(Split::kTest)), (std::vector<int64_t>{2, 4}));
}

TEST_F(ConvertTest, NpyLabelsTreatNanAndMinusOneAsUnlabeled) {
  write_npy_file(path("edges.npy"), NpyType::kInt64, {2, 7}, rows_layout());
  const double nan = std::numeric_limits<double>::quiet_NaN();
  write_npy_file(path("labels.npy"), NpyType::kFloat64, {5, 1}, std::vector<double>{2, nan, 0, -1, 5});
  NpyInput in;
  in.edge_index = path("edges.npy");
  in.labels = path("labels.npy");
  const ConvertReport r = convert_npy(in, out(), {}, pool_);
  EXPECT_EQ(r.num_classes, 6);
  EXPECT_EQ(r.num_labeled, 3);
  EXPECT_EQ(to_vector(Dataset::open(r.dataset).labels()), (std::vector<int32_t>{2, -1, 0, -1, 5}));

  ConvertOptions o;
  o.num_classes = 4;
  expect_mentions(error_of([&] { convert_npy(in, out(), o, pool_); }), {path("labels.npy"), "label 5", "classes is 4"});
  write_npy_file(path("half.npy"), NpyType::kFloat32, {5}, std::vector<float>{0, 1, 2.5f, 0, 0});
  in.labels = path("half.npy");
  expect_mentions(error_of([&] { convert_npy(in, out(), {}, pool_); }), {path("half.npy"), "label of node 2 is 2.5"});
}

/// Float64 features to float32, float16 and bfloat16 must equal a correctly rounded conversion of
/// each value (what numpy's astype gives), including values that a detour through float32 would
/// round the wrong way.
TEST_F(ConvertTest, NpyFloat64FeaturesAreRoundedOnceToEachDtype) {
  const double tiny = std::ldexp(1.0, -40);
  const std::vector<double> values{
      0.0, -0.0, 1.0, -2.5, 0.1, 3.141592653589793, 1e-8, -1e-30, 65504.0, 65519.99, 65520.0, 1e6,
      1.0 + std::ldexp(1.0, -11) + tiny,     // float16: just above a half-way point
      -(1.0 + std::ldexp(1.0, -11) + tiny),  //
      1.0 + std::ldexp(1.0, -11),            // float16: exactly half-way, ties to even (1.0)
      1.0 + 3 * std::ldexp(1.0, -11),        // float16: half-way, ties up to even
      1.0 + std::ldexp(1.0, -8) + tiny,      // bfloat16: just above a half-way point
      256.0 + 1.0 + tiny,                    // bfloat16: just above a half-way point
      std::ldexp(1.0, -25) + std::ldexp(1.0, -60),  // float16: just above half the smallest subnormal
      std::ldexp(1.0, -25),                         // float16: exactly half of it, rounds to 0
  };
  const int64_t dim = 4, n = static_cast<int64_t>(values.size()) / dim;
  ASSERT_EQ(n * dim, static_cast<int64_t>(values.size()));
  std::vector<int64_t> edges{0, n - 1};  // [2, 1]: a single edge 0 -> n-1
  write_npy_file(path("edges.npy"), NpyType::kInt64, {2, 1}, edges);
  write_npy_file(path("feat.npy"), NpyType::kFloat64, {n, dim}, values);
  NpyInput in;
  in.edge_index = path("edges.npy");
  in.features = path("feat.npy");

  for (const DType dtype : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
    SCOPED_TRACE(dtype_name(dtype));
    ConvertOptions o;
    o.feature_dtype = dtype;
    const Dataset d = Dataset::open(convert_npy(in, out(), o, pool_).dataset);
    ASSERT_EQ(d.manifest().features.dim, dim);
    ASSERT_EQ(d.manifest().features.dtype, dtype);
    for (int64_t v = 0; v < n; ++v) {
      for (int64_t j = 0; j < dim; ++j) {
        const double x = values[static_cast<std::size_t>(v * dim + j)];
        SCOPED_TRACE(testing::Message() << "value " << x);
        if (dtype == DType::kFloat32) {
          const float got = feature_row<float>(d, v)[j];
          EXPECT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(static_cast<float>(x)));
        } else {
          const uint16_t got = feature_row<uint16_t>(d, v)[j];
          const uint16_t want = dtype == DType::kFloat16 ? nearest_small_float(x, 10, 15) : nearest_small_float(x, 7, 127);
          EXPECT_EQ(got, want) << std::hex << got << " vs " << want;
        }
      }
    }
  }
}

/// Seeded random half-way points of float16 and bfloat16 and their nearest doubles on either side:
/// every one is rounded as the reference rounds it.
TEST_F(ConvertTest, NpyFloat64FeaturesAtRandomHalfWayPoints) {
  std::mt19937_64 rng(11);
  std::vector<double> values;
  for (const auto& [man_bits, bias, max_finite] : {std::tuple{10, 15, 0x7BFFu}, std::tuple{7, 127, 0x7F7Fu}}) {
    for (int i = 0; i < 64; ++i) {
      const auto b = static_cast<uint32_t>(rng() % max_finite);
      const double mid = (small_float_value(b, man_bits, bias) + small_float_value(b + 1, man_bits, bias)) / 2;
      const double inf = std::numeric_limits<double>::infinity();
      for (const double x : {mid, std::nextafter(mid, inf), std::nextafter(mid, -inf)}) {
        values.push_back(x);
        values.push_back(-x);
      }
    }
  }
  const int64_t dim = 8, n = static_cast<int64_t>(values.size()) / dim;
  ASSERT_EQ(n * dim, static_cast<int64_t>(values.size()));
  write_npy_file(path("edges.npy"), NpyType::kInt64, {2, 1}, std::vector<int64_t>{0, n - 1});
  write_npy_file(path("feat.npy"), NpyType::kFloat64, {n, dim}, values);
  NpyInput in;
  in.edge_index = path("edges.npy");
  in.features = path("feat.npy");
  for (const auto& [dtype, man_bits, bias] : {std::tuple{DType::kFloat16, 10, 15}, std::tuple{DType::kBFloat16, 7, 127}}) {
    SCOPED_TRACE(dtype_name(dtype));
    ConvertOptions o;
    o.feature_dtype = dtype;
    const Dataset d = Dataset::open(convert_npy(in, out(), o, pool_).dataset);
    int64_t wrong = 0;
    for (int64_t v = 0; v < n; ++v) {
      const auto row = feature_row<uint16_t>(d, v);
      for (int64_t j = 0; j < dim; ++j) {
        const double x = values[static_cast<std::size_t>(v * dim + j)];
        const uint16_t want = nearest_small_float(x, man_bits, bias);
        if (row[static_cast<std::size_t>(j)] != want && ++wrong <= 5) {
          ADD_FAILURE() << std::hexfloat << x << " became " << std::hex << row[static_cast<std::size_t>(j)] << ", not " << want;
        }
      }
    }
    EXPECT_EQ(wrong, 0);
  }
}

TEST_F(ConvertTest, NpyFeaturesOfOtherTypesAndPaddedRows) {
  write_npy_file(path("edges.npy"), NpyType::kInt64, {2, 7}, rows_layout());
  std::vector<int16_t> values(5 * 3);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int16_t>(static_cast<int>(i) * 100 - 700);
  write_npy_file(path("feat.npy"), NpyType::kInt16, {5, 3}, values);
  NpyInput in;
  in.edge_index = path("edges.npy");
  in.features = path("feat.npy");
  ConvertOptions o;
  o.alignment = 512;
  o.chunk_bytes = 1;  // one row per chunk: exercises the read / encode / write overlap
  const ConvertReport r = convert_npy(in, out(), o, pool_);
  EXPECT_EQ(r.row_stride, 16);  // 12 bytes of float32 rounded up to a power of two dividing 512
  const Dataset d = Dataset::open(r.dataset);
  for (int64_t v = 0; v < 5; ++v) {
    for (int64_t j = 0; j < 3; ++j) EXPECT_EQ(feature_row<float>(d, v)[j], static_cast<float>(values[v * 3 + j]));
    const auto* pad = d.feature_bytes().data() + v * 16 + 12;
    EXPECT_EQ(std::count(pad, pad + 4, std::byte{0}), 4) << "padding of row " << v;
  }
}

/// The features or labels set the number of nodes, and an edge lies outside it: either file may
/// be the wrong one, so the message names both and both counts.
TEST_F(ConvertTest, NpyNodeCountFromFeaturesOrLabelsNamesBothFiles) {
  write_npy_file(path("edges.npy"), NpyType::kInt64, {2, 7}, rows_layout());
  write_npy_file(path("feat.npy"), NpyType::kFloat32, {4, 2}, std::vector<float>(8, 1.0f));
  write_npy_file(path("labels.npy"), NpyType::kInt64, {3}, std::vector<int64_t>(3, 0));
  NpyInput in;
  in.edge_index = path("edges.npy");
  in.features = path("feat.npy");
  expect_mentions(error_of([&] { convert_npy(in, out(), {}, pool_); }),
                  {path("edges.npy"), "node id 4 is out of range [0, 4)",
                   path("feat.npy") + " (rows) says 4 nodes, the edges need at least 5"});
  in.features.clear();
  in.labels = path("labels.npy");
  expect_mentions(error_of([&] { convert_npy(in, out(), {}, pool_); }),
                  {path("edges.npy"), path("labels.npy") + " (length) says 3 nodes, the edges need at least"});
  // A count given by the caller is not second-guessed.
  ConvertOptions o;
  o.num_nodes = 3;
  const std::string message = error_of([&] { convert_npy(in, out(), o, pool_); });
  expect_mentions(message, {path("edges.npy"), "is out of range [0, 3)"});
  EXPECT_EQ(message.find("says"), std::string::npos) << message;
  // The largest id there is: the count it needs is 2^63, past int64 (found by the igb fuzzer: a
  // signed overflow, printed as -2^63 in an unsanitised build).
  std::vector<int64_t> huge = rows_layout();
  huge[0] = std::numeric_limits<int64_t>::max();
  write_npy_file(path("edges.npy"), NpyType::kInt64, {2, 7}, huge);
  expect_mentions(error_of([&] { convert_npy(in, out(), {}, pool_); }),
                  {path("labels.npy") + " (length) says 3 nodes, the edges need at least 9223372036854775808"});
}

TEST_F(ConvertTest, NpyRejectsBrokenArraysNamingTheFile) {
  write_npy_file(path("edges.npy"), NpyType::kInt64, {2, 7}, rows_layout());
  const std::string good = test::npy_bytes(NpyType::kInt64, {2, 7}, rows_layout());
  NpyInput in;
  const auto convert_edges = [&](const std::string& file) {
    in.edge_index = path(file);
    return convert_npy(in, out(), {}, pool_);
  };

  write_file(path("truncated.npy"), good.substr(0, good.size() - 5));
  expect_mentions(error_of([&] { convert_edges("truncated.npy"); }), {path("truncated.npy"), "is truncated", "(2, 7)"});
  write_file(path("short_header.npy"), good.substr(0, 40));
  expect_mentions(error_of([&] { convert_edges("short_header.npy"); }), {path("short_header.npy")});
  write_file(path("not.npy"), "0 1\n1 2\n2 3\n");
  expect_mentions(error_of([&] { convert_edges("not.npy"); }), {path("not.npy"), "not an .npy file"});
  write_npy_file(path("three.npy"), NpyType::kInt64, {3, 3}, std::vector<int64_t>(9, 0));
  expect_mentions(error_of([&] { convert_edges("three.npy"); }), {path("three.npy"), "(3, 3)", "expected [2, E] or [E, 2]"});
  write_npy_file(path("flat.npy"), NpyType::kInt64, {4}, std::vector<int64_t>{0, 1, 1, 2});
  expect_mentions(error_of([&] { convert_edges("flat.npy"); }), {path("flat.npy"), "(4,)"});
  write_npy_file(path("float.npy"), NpyType::kFloat32, {2, 1}, std::vector<float>{0, 1});
  expect_mentions(error_of([&] { convert_edges("float.npy"); }), {path("float.npy"), "must be integers"});
  write_npy_file(path("neg.npy"), NpyType::kInt64, {2, 3}, std::vector<int64_t>{0, 1, -4, 1, 2, 0});
  expect_mentions(error_of([&] { convert_edges("neg.npy"); }), {path("neg.npy"), "edge 2 (-4 -> 0)", "negative"});
  in.edge_layout = EdgeLayout::kColumns;
  expect_mentions(error_of([&] { convert_edges("edges.npy"); }), {path("edges.npy"), "(2, 7)", "not [E, 2]"});
  in.edge_layout = EdgeLayout::kAuto;

  // Node counts implied by features and labels must agree with each other and with the ids.
  write_npy_file(path("feat.npy"), NpyType::kFloat32, {4, 2}, std::vector<float>(8, 1.0f));
  in.features = path("feat.npy");
  expect_mentions(error_of([&] { convert_edges("edges.npy"); }), {path("edges.npy"), "node id 4 is out of range [0, 4)"});
  write_npy_file(path("feat1d.npy"), NpyType::kFloat32, {5}, std::vector<float>(5, 1.0f));
  in.features = path("feat1d.npy");
  expect_mentions(error_of([&] { convert_edges("edges.npy"); }), {path("feat1d.npy"), "expected [num_nodes, dim]"});
  write_npy_file(path("feat.npy"), NpyType::kFloat32, {5, 2}, std::vector<float>(10, 1.0f));
  write_npy_file(path("labels6.npy"), NpyType::kInt64, {6}, std::vector<int64_t>(6, 0));
  in.features = path("feat.npy");
  in.labels = path("labels6.npy");
  expect_mentions(error_of<InvalidArgument>([&] { convert_edges("edges.npy"); }), {path("labels6.npy"), "implies 6"});
  in.labels.clear();

  // Splits: out of range, duplicated, a mask of the wrong length.
  write_npy_file(path("far.npy"), NpyType::kInt64, {2}, std::vector<int64_t>{1, 5});
  in.train = path("far.npy");
  expect_mentions(error_of([&] { convert_edges("edges.npy"); }), {path("far.npy"), "node id 5 at position 1 is out of range"});
  write_npy_file(path("twice.npy"), NpyType::kInt64, {3}, std::vector<int64_t>{1, 2, 1});
  in.train = path("twice.npy");
  expect_mentions(error_of([&] { convert_edges("edges.npy"); }), {path("twice.npy"), "appears twice"});
  write_npy_file(path("mask4.npy"), NpyType::kBool, {4}, std::vector<uint8_t>{1, 0, 0, 1});
  in.train = path("mask4.npy");
  expect_mentions(error_of([&] { convert_edges("edges.npy"); }), {path("mask4.npy"), "bool mask has 4 entries"});
  write_npy_file(path("train_f.npy"), NpyType::kFloat64, {1}, std::vector<double>{1.0});
  in.train = path("train_f.npy");
  expect_mentions(error_of([&] { convert_edges("edges.npy"); }), {path("train_f.npy"), "where integers are expected"});
}

// ---------------------------------------------------------------------------------------------
// OGB raw layouts

// 6 nodes, 8 directed edges as stored (one a self-loop): 0->1 1->2 2->0 3->4 4->5 5->3 0->3 2->2.
// In-neighbours: 0 <- {2}, 1 <- {0}, 2 <- {1}, 3 <- {0, 5}, 4 <- {3}, 5 <- {4}.
const Csc kOgbDirected{{0, 1, 2, 3, 5, 6, 7}, {2, 0, 1, 0, 5, 3, 4}};
const Csc kOgbSymmetric{{0, 3, 5, 7, 10, 12, 14}, {1, 2, 3, 0, 2, 0, 1, 0, 4, 5, 3, 5, 3, 4}};
const std::vector<int64_t> kOgbSrc{0, 1, 2, 3, 4, 5, 0, 2};
const std::vector<int64_t> kOgbDst{1, 2, 0, 4, 5, 3, 3, 2};
const std::vector<float> kOgbFeatures{0.5f, -1.25f, 3.0f,  1e-3f, -0.0f, 2.0f,   7.0f, 8.0f,  9.0f,
                                      -4.0f, 0.25f, 1e10f, 6.5f,  6.0f,  -6.0f, 0.0f, 1.0f, 0.125f};
const std::vector<int32_t> kOgbLabels{3, 0, 1, -1, 2, -1};

/// Writes split/<name>/{train,valid,test}.csv.gz of the tiny OGB dataset.
void write_ogb_split(const std::string& root, const std::string& name) {
  fs::create_directories(root + "/split/" + name);
  write_gzip(root + "/split/" + name + "/train.csv.gz", "0\n2\n1\n");
  write_gzip(root + "/split/" + name + "/valid.csv.gz", "4\n");
  write_gzip(root + "/split/" + name + "/test.csv.gz", "5\n3\n");
}

/// The tiny dataset as ogb's read_csv_graph_raw expects it: gzip CSV without headers.
void write_ogb_csv(const std::string& root) {
  fs::create_directories(root + "/raw");
  std::string edges;
  for (std::size_t i = 0; i < kOgbSrc.size(); ++i) edges += std::to_string(kOgbSrc[i]) + "," + std::to_string(kOgbDst[i]) + "\n";
  write_gzip(root + "/raw/edge.csv.gz", edges);
  // The same numbers as kOgbFeatures, spelled in the ways pandas writes and reads them.
  write_gzip(root + "/raw/node-feat.csv.gz",
             "0.5,-1.25,3\n0.001,-0.0,+2.0\n7,8.000,9e0\n-4,0.25,1e10\n6.5,6,-6\n0.0,1,1.25e-1\n");
  write_gzip(root + "/raw/node-label.csv.gz", "3\n0\n1\nnan\n2\n\n");
  write_gzip(root + "/raw/num-node-list.csv.gz", "6\n");
  write_gzip(root + "/raw/num-edge-list.csv.gz", "8\n");
  write_ogb_split(root, "time");
}

/// The same dataset as ogb's read_binary_graph_raw expects it: raw/data.npz and node-label.npz.
void write_ogb_npz(const std::string& root, bool deflate, bool zip64) {
  fs::create_directories(root + "/raw");
  std::vector<int64_t> edge_index = kOgbSrc;
  edge_index.insert(edge_index.end(), kOgbDst.begin(), kOgbDst.end());
  const auto e = static_cast<int64_t>(kOgbSrc.size());
  write_file(root + "/raw/data.npz",
             test::make_zip({{"edge_index.npy", test::npy_bytes(NpyType::kInt64, {2, e}, edge_index), deflate},
                             {"node_feat.npy", test::npy_bytes(NpyType::kFloat32, {6, 3}, kOgbFeatures), deflate},
                             {"num_nodes_list.npy", test::npy_bytes(NpyType::kInt64, {1}, std::vector<int64_t>{6}), deflate},
                             {"num_edges_list.npy", test::npy_bytes(NpyType::kInt64, {1}, std::vector<int64_t>{e}), deflate}},
                            zip64));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  write_file(root + "/raw/node-label.npz",
             test::make_zip({{"node_label.npy",
                              test::npy_bytes(NpyType::kFloat64, {6, 1}, std::vector<double>{3, 0, 1, nan, 2, nan}), deflate}},
                            zip64));
  write_ogb_split(root, "time");
}

OgbInput ogb_input(const std::string& root) {
  OgbInput in;
  in.root = root;
  return in;
}

void expect_tiny_ogb(const Dataset& d, const Csc& csc) {
  EXPECT_EQ(read_csc(d), csc);
  ASSERT_TRUE(d.has_features());
  EXPECT_EQ(d.manifest().features.dim, 3);
  std::vector<float> features;
  for (int64_t v = 0; v < 6; ++v) {
    const auto row = feature_row<float>(d, v);
    features.insert(features.end(), row.begin(), row.end());
  }
  ASSERT_EQ(features.size(), kOgbFeatures.size());
  EXPECT_EQ(std::memcmp(features.data(), kOgbFeatures.data(), features.size() * 4), 0) << "features differ";
  EXPECT_EQ(to_vector(d.labels()), kOgbLabels);
  EXPECT_EQ(d.manifest().num_classes, 4);
  EXPECT_EQ(to_vector(d.split(Split::kTrain)), (std::vector<int64_t>{0, 2, 1}));
  EXPECT_EQ(to_vector(d.split(Split::kValid)), (std::vector<int64_t>{4}));
  EXPECT_EQ(to_vector(d.split(Split::kTest)), (std::vector<int64_t>{5, 3}));
}

TEST_F(ConvertTest, OgbCsvKeepsEdgesDirectedAsStored) {
  write_ogb_csv(path("ogbn_tiny"));
  const ConvertReport r = convert_ogb(ogb_input(path("ogbn_tiny")), out(), {}, pool_);
  EXPECT_EQ(r.format, "ogb (csv)");
  EXPECT_EQ(r.input_edges, 8);
  EXPECT_EQ(r.self_loops_removed, 1);
  EXPECT_EQ(r.num_labeled, 4);
  EXPECT_EQ(r.num_train, 3);
  expect_tiny_ogb(Dataset::open(r.dataset), kOgbDirected);

  ConvertOptions o;
  o.symmetrize = true;
  expect_tiny_ogb(Dataset::open(convert_ogb({path("ogbn_tiny"), "time"}, out(), o, pool_).dataset), kOgbSymmetric);
}

TEST_F(ConvertTest, OgbNpzMatchesCsvByteForByte) {
  write_ogb_csv(path("csv"));
  const Dataset from_csv = Dataset::open(convert_ogb(ogb_input(path("csv")), out(), {}, pool_).dataset);
  struct Variant {
    const char* name;
    bool deflate, zip64;
  };
  for (const Variant& v : {Variant{"stored", false, false}, Variant{"deflated", true, false}, Variant{"zip64", true, true}}) {
    SCOPED_TRACE(v.name);
    write_ogb_npz(path(v.name), v.deflate, v.zip64);
    const ConvertReport r = convert_ogb(ogb_input(path(v.name)), out(), {}, pool_);
    EXPECT_EQ(r.format, "ogb (npz)");
    const Dataset d = Dataset::open(r.dataset);
    expect_tiny_ogb(d, kOgbDirected);
    for (const char* array : {"indptr", "indices", "features", "labels", "train", "valid", "test"}) {
      EXPECT_EQ(test::read_file(d.dir() + "/" + array + ".bin"), test::read_file(from_csv.dir() + "/" + array + ".bin"))
          << array;
    }
  }
  // data.npz wins over the CSV files when both exist, unless the format is forced.
  write_ogb_npz(path("csv"), false, false);
  EXPECT_EQ(convert_ogb(ogb_input(path("csv")), out(), {}, pool_).format, "ogb (npz)");
  EXPECT_EQ(convert_ogb({path("csv"), "", OgbFormat::kCsv}, out(), {}, pool_).format, "ogb (csv)");
}

TEST_F(ConvertTest, OgbRejectsInconsistentOrBrokenFiles) {
  const std::string root = path("ogb");
  write_ogb_csv(root);
  write_gzip(root + "/raw/num-edge-list.csv.gz", "9\n");
  expect_mentions(error_of([&] { convert_ogb(ogb_input(root), out(), {}, pool_); }),
                  {root + "/raw/edge.csv.gz", "has 8 edges, num-edge-list says 9"});
  write_gzip(root + "/raw/num-edge-list.csv.gz", "8\n");

  write_gzip(root + "/raw/edge.csv.gz", "0,1\n1,2\n2,6\n");
  expect_mentions(error_of([&] { convert_ogb(ogb_input(root), out(), {}, pool_); }),
                  {root + "/raw/edge.csv.gz:3:", "node id 6 is out of range [0, 6)"});
  write_ogb_csv(root);

  write_gzip(root + "/raw/node-feat.csv.gz", "1,2,3\n4,5,6\n7,8\n1,1,1\n1,1,1\n1,1,1\n");
  expect_mentions(error_of([&] { convert_ogb(ogb_input(root), out(), {}, pool_); }),
                  {root + "/raw/node-feat.csv.gz:3:", "has 2 fields, the first row has 3"});
  write_gzip(root + "/raw/node-feat.csv.gz", "1,2,3\n4,x,6\n");
  expect_mentions(error_of([&] { convert_ogb(ogb_input(root), out(), {}, pool_); }),
                  {root + "/raw/node-feat.csv.gz:2:", "field 2 is not a number"});
  write_gzip(root + "/raw/node-feat.csv.gz", "1,2,3\n4,5,6\n");
  expect_mentions(error_of([&] { convert_ogb(ogb_input(root), out(), {}, pool_); }),
                  {root + "/raw/node-feat.csv.gz", "has 2 feature rows, expected 6"});
  write_ogb_csv(root);

  write_gzip(root + "/raw/node-label.csv.gz", "3\n0\n1\n2.5\n2\n1\n");
  expect_mentions(error_of([&] { convert_ogb(ogb_input(root), out(), {}, pool_); }),
                  {root + "/raw/node-label.csv.gz:4:", "label 2.5 is not an integer class"});
  write_gzip(root + "/raw/node-label.csv.gz", "3\n0\n1\n");
  expect_mentions(error_of([&] { convert_ogb(ogb_input(root), out(), {}, pool_); }),
                  {root + "/raw/node-label.csv.gz", "has 3 labels, expected 6"});
  write_ogb_csv(root);

  write_gzip(root + "/split/time/valid.csv.gz", "4\n6\n");
  expect_mentions(error_of([&] { convert_ogb(ogb_input(root), out(), {}, pool_); }),
                  {root + "/split/time/valid.csv.gz", "node id 6 at position 1 is out of range [0, 6)"});
  write_ogb_csv(root);
  const std::string full = test::read_file(root + "/split/time/test.csv.gz");
  write_file(root + "/split/time/test.csv.gz", full.substr(0, full.size() - 4));
  expect_mentions(error_of([&] { convert_ogb(ogb_input(root), out(), {}, pool_); }), {root + "/split/time/test.csv.gz", "truncated"});
  write_ogb_csv(root);

  // Two split directories and none chosen.
  write_ogb_split(root, "random");
  expect_mentions(error_of<InvalidArgument>([&] { convert_ogb(ogb_input(root), out(), {}, pool_); }),
                  {root + "/split", "random, time", "--split"});
  EXPECT_NO_THROW(convert_ogb({root, "random"}, out(), {}, pool_));
}

// A num-node-list that claims more nodes than memory can count is refused naming it; a node-feat
// table larger than the free space of the output's file system fails before it is written.
TEST_F(ConvertTest, OgbRefusesHugeCountsAndFeaturesBeyondTheFreeSpace) {
  const std::string root = path("ogb");
  write_ogb_csv(root);
  write_gzip(root + "/raw/num-node-list.csv.gz", "1000000000000000\n");
  expect_mentions(error_of<InvalidArgument>([&] { convert_ogb(ogb_input(root), out(), {}, pool_); }),
                  {root + "/raw/num-node-list.csv.gz: 1000000000000000 nodes need", "but the machine has"});

  const int64_t nodes = 1000000;
  write_gzip(root + "/raw/num-node-list.csv.gz", std::to_string(nodes) + "\n");
  struct statvfs st {};
  ASSERT_EQ(::statvfs(tmp_.path().c_str(), &st), 0);
  const auto free_bytes = static_cast<double>(st.f_bavail) * static_cast<double>(st.f_frsize);
  const auto dim = static_cast<int64_t>(free_bytes / (4.0 * nodes)) + 1024;  // float32 rows, above the free space
  std::string row = "0";
  for (int64_t k = 1; k < dim; ++k) row += ",0";
  write_gzip(root + "/raw/node-feat.csv.gz", row + "\n");
  const std::string message = error_of<IoError>([&] { convert_ogb(ogb_input(root), out(), {}, pool_); });
  expect_mentions(message, {"the features need", "but the file system of", "free"});
}

TEST_F(ConvertTest, OgbRejectsCorruptNpz) {
  const std::string root = path("ogb");
  write_ogb_npz(root, /*deflate=*/true, /*zip64=*/false);
  const std::string npz = root + "/raw/data.npz";
  const std::string good = test::read_file(npz);

  write_file(npz, good.substr(0, good.size() - 30));  // the end of central directory record is cut
  expect_mentions(error_of([&] { convert_ogb(ogb_input(root), out(), {}, pool_); }), {npz, "not a zip archive"});
  write_file(npz, "PK\x03\x04 not really a zip archive at all, just some text");
  expect_mentions(error_of([&] { convert_ogb(ogb_input(root), out(), {}, pool_); }), {npz, "not a zip archive"});

  // A flipped byte inside the deflated edge_index member: corrupt deflate data or a CRC mismatch.
  std::string flipped = good;
  flipped[60] ^= 0x10;
  write_file(npz, flipped);
  expect_mentions(error_of([&] { convert_ogb(ogb_input(root), out(), {}, pool_); }), {npz + ":edge_index.npy"});

  // A member that is missing.
  const auto e = static_cast<int64_t>(kOgbSrc.size());
  std::vector<int64_t> edge_index = kOgbSrc;
  edge_index.insert(edge_index.end(), kOgbDst.begin(), kOgbDst.end());
  write_file(npz, test::make_zip({{"edge_index.npy", test::npy_bytes(NpyType::kInt64, {2, e}, edge_index)},
                                  {"num_nodes_list.npy", test::npy_bytes(NpyType::kInt64, {1}, std::vector<int64_t>{6})}}));
  expect_mentions(error_of([&] { convert_ogb(ogb_input(root), out(), {}, pool_); }), {npz, "no member 'num_edges_list.npy'"});

  // Out-of-range ids in edge_index.
  edge_index[3] = 6;
  write_file(npz, test::make_zip({{"edge_index.npy", test::npy_bytes(NpyType::kInt64, {2, e}, edge_index)},
                                  {"num_nodes_list.npy", test::npy_bytes(NpyType::kInt64, {1}, std::vector<int64_t>{6})},
                                  {"num_edges_list.npy", test::npy_bytes(NpyType::kInt64, {1}, std::vector<int64_t>{e})}}));
  expect_mentions(error_of([&] { convert_ogb(ogb_input(root), out(), {}, pool_); }),
                  {npz + ":edge_index.npy", "edge 3 (6 -> 4): node id 6 is out of range [0, 6)"});
}

/// np.savez stores its members: a flipped byte in an array's data still parses as a valid array, so
/// only the CRC-32 of the central directory tells (Python's zipfile says "Bad CRC-32").
TEST_F(ConvertTest, OgbNpzFlippedByteFailsItsCrc32) {
  const std::string root = path("ogb");
  write_ogb_npz(root, /*deflate=*/false, /*zip64=*/false);
  const std::string npz = root + "/raw/data.npz";
  const std::string good = test::read_file(npz);
  EXPECT_NO_THROW(convert_ogb(ogb_input(root), out(), {}, pool_));  // the untouched archive converts

  std::vector<int64_t> edge_index = kOgbSrc;
  edge_index.insert(edge_index.end(), kOgbDst.begin(), kOgbDst.end());
  const auto e = static_cast<int64_t>(kOgbSrc.size());
  const std::string member = test::npy_bytes(NpyType::kInt64, {2, e}, edge_index);
  const std::size_t member_at = good.find(member);
  ASSERT_NE(member_at, std::string::npos);
  const std::size_t data_at = member_at + member.size() - edge_index.size() * sizeof(int64_t);
  // Element 1 (a source) and element 2E-1 (the last destination): ids 1 -> 0 and 2 -> 3 stay in
  // range, so the edge silently changed before the check.
  for (const std::size_t element : {std::size_t{1}, edge_index.size() - 1}) {
    SCOPED_TRACE(element);
    std::string flipped = good;
    flipped[data_at + element * sizeof(int64_t)] ^= 0x01;
    write_file(npz, flipped);
    expect_mentions(error_of([&] { convert_ogb(ogb_input(root), out(), {}, pool_); }),
                    {npz + ":edge_index.npy", "Bad CRC-32"});
  }
  // The features (read by one stream from their start) and a one-element member.
  for (const char* name : {"node_feat.npy", "num_nodes_list.npy"}) {
    SCOPED_TRACE(name);
    const std::size_t name_at = good.find(name);  // the first local header's name
    ASSERT_NE(name_at, std::string::npos);
    std::string flipped = good;
    flipped[name_at + std::strlen(name) + 128 + 1] ^= 0x40;  // in the data, past the 128-byte .npy header
    write_file(npz, flipped);
    expect_mentions(error_of([&] { convert_ogb(ogb_input(root), out(), {}, pool_); }), {npz + ":" + name, "Bad CRC-32"});
  }
  write_file(npz, good);
  EXPECT_NO_THROW(convert_ogb(ogb_input(root), out(), {}, pool_));
}

/// ogbn-arxiv's real label file (169,343 lines) through the CSV reader, with a tiny synthetic
/// edge list in place of the missing edge.csv.gz; the time split is recomputed from node_year as
/// the dataset's README describes, and its sizes must be the official ones.
TEST_F(ConvertTest, OgbArxivRealLabels) {
  const std::string arxiv = test::datasets_dir() + "/ogbn_arxiv_partial/raw";
  ASSERT_TRUE(fs::exists(arxiv + "/node-label.csv.gz")) << arxiv << " is missing from the checkout";
  const std::string root = path("ogbn_arxiv");
  fs::create_directories(root + "/raw");
  for (const char* f : {"node-label.csv.gz", "num-node-list.csv.gz"}) fs::copy_file(arxiv + "/" + f, root + "/raw/" + f);
  write_gzip(root + "/raw/edge.csv.gz", "0,169342\n169342,1\n104447,13091\n");
  write_gzip(root + "/raw/num-edge-list.csv.gz", "3\n");

  // Naive reference: the gzip files decompressed and parsed line by line.
  const auto read_gz_ints = [](const std::string& file) {
    gzFile f = gzopen(file.c_str(), "rb");
    std::string text;
    char buf[1 << 16];
    for (int n; (n = gzread(f, buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
    gzclose(f);
    std::istringstream in(text);
    std::vector<int64_t> values;
    for (int64_t v; in >> v;) values.push_back(v);
    return values;
  };
  const std::vector<int64_t> years = read_gz_ints(arxiv + "/node_year.csv.gz");
  std::string train, valid, test_ids;
  for (std::size_t v = 0; v < years.size(); ++v) {
    (years[v] <= 2017 ? train : years[v] == 2018 ? valid : test_ids) += std::to_string(v) + "\n";
  }
  fs::create_directories(root + "/split/time");
  write_gzip(root + "/split/time/train.csv.gz", train);
  write_gzip(root + "/split/time/valid.csv.gz", valid);
  write_gzip(root + "/split/time/test.csv.gz", test_ids);

  const ConvertReport r = convert_ogb(ogb_input(root), out(), {}, pool_);
  EXPECT_EQ(r.num_nodes, 169343);
  EXPECT_EQ(r.num_edges, 3);
  EXPECT_EQ(r.num_classes, 40);
  EXPECT_EQ(r.num_labeled, 169343);
  EXPECT_EQ(r.num_train, 90941);
  EXPECT_EQ(r.num_valid, 29799);
  EXPECT_EQ(r.num_test, 48603);
  const Dataset d = Dataset::open(r.dataset);
  const std::vector<int64_t> labels = read_gz_ints(arxiv + "/node-label.csv.gz");
  ASSERT_EQ(labels.size(), 169343u);
  EXPECT_TRUE(std::equal(labels.begin(), labels.end(), d.labels().begin()));
  EXPECT_EQ(read_csc(d).indices, (std::vector<int64_t>{169342, 104447, 0}));
}

// ---------------------------------------------------------------------------------------------
// IGB

/// `<root>/<size>/processed/` with paper__cites__paper/edge_index.npy ([E, 2], the golden
/// graph's edges) and, if `npy_paper` is set, paper/node_feat.npy [5, 4] float32 and
/// paper/node_label_19.npy [5] float32.
std::string write_igb(const std::string& root, const std::string& size, bool npy_paper) {
  const std::string processed = root + "/" + size + "/processed";
  fs::create_directories(processed + "/paper__cites__paper");
  fs::create_directories(processed + "/paper");
  write_npy_file(processed + "/paper__cites__paper/edge_index.npy", NpyType::kInt64,
                 {static_cast<int64_t>(kSrc.size()), 2}, pairs_layout<int64_t>());
  if (npy_paper) {
    std::vector<float> feat(20);
    for (std::size_t i = 0; i < feat.size(); ++i) feat[i] = 0.5f * static_cast<float>(i) - 3.0f;
    write_npy_file(processed + "/paper/node_feat.npy", NpyType::kFloat32, {5, 4}, feat);
    write_npy_file(processed + "/paper/node_label_19.npy", NpyType::kFloat32, {5}, std::vector<float>{18, 0, 7, 7, 1});
  }
  return processed;
}

TEST_F(ConvertTest, IgbNpyLayout) {
  const std::string processed = write_igb(path("igb"), "experimental", true);
  IgbInput in;
  in.root = path("igb");
  in.size = "experimental";
  const ConvertReport r = convert_igb(in, out(), {}, pool_);
  EXPECT_EQ(r.format, "igb (npy)");
  EXPECT_EQ(r.num_nodes, 5);  // from the feature rows, not the size's paper count
  EXPECT_EQ(r.num_classes, 19);
  const Dataset d = Dataset::open(r.dataset);
  EXPECT_EQ(read_csc(d), kGoldenDirected);
  const std::string feat = test::read_file(processed + "/paper/node_feat.npy");
  const std::string stored(reinterpret_cast<const char*>(d.feature_bytes().data()), d.feature_bytes().size());
  EXPECT_EQ(stored, feat.substr(feat.size() - 80));  // the npy data, byte for byte
  EXPECT_EQ(to_vector(d.labels()), (std::vector<int32_t>{18, 0, 7, 7, 1}));
  // 60/20/20 of 5 labeled nodes with int() truncation: 3 train, 1 valid, 1 test.
  EXPECT_EQ(to_vector(d.split(Split::kTrain)), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(to_vector(d.split(Split::kValid)), (std::vector<int64_t>{3}));
  EXPECT_EQ(to_vector(d.split(Split::kTest)), (std::vector<int64_t>{4}));

  in.labeled_nodes = 4;
  in.train_fraction = 0.5;
  in.valid_fraction = 0.25;
  const Dataset p = Dataset::open(convert_igb(in, out(), {}, pool_).dataset);
  EXPECT_EQ(to_vector(p.labels()), (std::vector<int32_t>{18, 0, 7, 7, -1}));
  EXPECT_EQ(to_vector(p.split(Split::kTrain)), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(to_vector(p.split(Split::kValid)), (std::vector<int64_t>{2}));
  EXPECT_EQ(to_vector(p.split(Split::kTest)), (std::vector<int64_t>{3}));
}

// A label file that is a 0-d array (a scalar, found by the igb fuzzer) is refused naming the file
// and its shape, not an out-of-range error from its missing axis.
TEST_F(ConvertTest, IgbLabelsOfNoAxisAreRefusedNamingTheFile) {
  const std::string processed = write_igb(path("igb"), "experimental", true);
  write_npy_file(processed + "/paper/node_label_19.npy", NpyType::kFloat32, {}, std::vector<float>{3});
  IgbInput in;
  in.root = path("igb");
  in.size = "experimental";
  const std::string what = error_of([&] { convert_igb(in, out(), {}, pool_); });
  expect_mentions(what, {processed + "/paper/node_label_19.npy", "()", "no axis 0"});
}

/// large and full store features and labels as header-less float32 (np.memmap); large without
/// files of its own reads the first rows of full's.
TEST_F(ConvertTest, IgbRawFloat32Files) {
  write_igb(path("igb"), "large", false);
  const std::string full_paper = path("igb") + "/full/processed/paper";
  fs::create_directories(full_paper);
  std::vector<float> feat(7 * 3);  // full has 7 papers, large the first 5
  for (std::size_t i = 0; i < feat.size(); ++i) feat[i] = static_cast<float>(i) * 0.75f - 1.0f;
  const std::vector<float> labels{4, 3, 2, 1, 0, 9, 9};
  write_file(full_paper + "/node_feat.npy", std::string(reinterpret_cast<const char*>(feat.data()), feat.size() * 4));
  write_file(full_paper + "/node_label_19.npy", std::string(reinterpret_cast<const char*>(labels.data()), labels.size() * 4));

  IgbInput in;
  in.root = path("igb");
  in.size = "large";
  in.feature_dim = 3;
  ConvertOptions o;
  o.num_nodes = 5;  // large has 100M papers; a tiny stand-in
  const ConvertReport r = convert_igb(in, out(), o, pool_);
  EXPECT_EQ(r.format, "igb (raw features)");
  const Dataset d = Dataset::open(r.dataset);
  EXPECT_EQ(read_csc(d), kGoldenDirected);
  ASSERT_EQ(d.feature_bytes().size(), 5u * 3 * 4);
  EXPECT_EQ(std::memcmp(d.feature_bytes().data(), feat.data(), 5 * 3 * 4), 0);
  EXPECT_EQ(to_vector(d.labels()), (std::vector<int32_t>{4, 3, 2, 1, 0}));

  // A raw file of large's own, too short for the rows asked for.
  write_file(path("igb") + "/large/processed/paper/node_feat.npy", std::string(5 * 3 * 4 - 4, '\0'));
  expect_mentions(error_of([&] { convert_igb(in, out(), o, pool_); }),
                  {path("igb") + "/large/processed/paper/node_feat.npy", "(5, 3)", "need 60"});
}

TEST_F(ConvertTest, IgbRejectsBadInputs) {
  const std::string processed = write_igb(path("igb"), "small", true);
  IgbInput in;
  in.root = path("igb");
  in.size = "small";
  const std::string edges = processed + "/paper__cites__paper/edge_index.npy";
  write_npy_file(edges, NpyType::kInt64, {2, 2}, std::vector<int64_t>{0, 1, 5, 2});
  expect_mentions(error_of([&] { convert_igb(in, out(), {}, pool_); }), {edges, "edge 1 (5 -> 2): node id 5 is out of range [0, 5)"});
  write_npy_file(edges, NpyType::kInt64, {2, 3}, std::vector<int64_t>{0, 1, 2, 3, 4, 0});
  expect_mentions(error_of([&] { convert_igb(in, out(), {}, pool_); }), {edges, "(2, 3)", "not [E, 2]"});
  write_igb(path("igb"), "small", true);
  write_npy_file(processed + "/paper/node_label_19.npy", NpyType::kFloat32, {4}, std::vector<float>{1, 2, 3, 4});
  expect_mentions(error_of([&] { convert_igb(in, out(), {}, pool_); }),
                  {processed + "/paper/node_label_19.npy", "has 4 labels, expected 5"});
  const std::string label = test::npy_bytes(NpyType::kFloat32, {5}, std::vector<float>{1, 2, 3, 4, 5});
  write_file(processed + "/paper/node_label_19.npy", label.substr(0, label.size() - 2));
  expect_mentions(error_of([&] { convert_igb(in, out(), {}, pool_); }), {processed + "/paper/node_label_19.npy", "truncated"});
  in.size = "medium";
  expect_mentions(error_of<InvalidArgument>([&] { convert_igb(in, out(), {}, pool_); }), {path("igb") + "/medium/processed"});
}

TEST(ConvertArgs, ToOptionsParsesTheTextOptionsOnce) {
  ConvertArgs a;
  ConvertOptions o = to_options(a);  // the defaults: counts from the input, no memory limit
  EXPECT_FALSE(o.num_nodes.has_value());
  EXPECT_FALSE(o.num_classes.has_value());
  EXPECT_EQ(o.memory_budget, 0);
  EXPECT_EQ(o.feature_dtype, DType::kFloat32);
  a.overwrite = true;
  a.name = "g";
  a.dtype = "bfloat16";
  a.align = 512;
  a.symmetrize = true;
  a.keep_self_loops = true;
  a.num_nodes = "10K";
  a.num_classes = "7";
  a.memory_budget = "1MiB";
  o = to_options(a);
  EXPECT_TRUE(o.overwrite && o.symmetrize && o.keep_self_loops);
  EXPECT_EQ(o.name, "g");
  EXPECT_EQ(o.feature_dtype, DType::kBFloat16);
  EXPECT_EQ(o.alignment, 512);
  EXPECT_EQ(o.num_nodes, 10000);
  EXPECT_EQ(o.num_classes, 7);
  EXPECT_EQ(o.memory_budget, int64_t{1} << 20);
  for (const auto& bad : {std::pair<std::string, std::string>{"num_nodes", "ten"}, {"memory_budget", "-5"}, {"dtype", "int7"}}) {
    ConvertArgs b;
    if (bad.first == "num_nodes") b.num_nodes = bad.second;
    if (bad.first == "memory_budget") b.memory_budget = bad.second;
    if (bad.first == "dtype") b.dtype = bad.second;
    EXPECT_THROW(to_options(b), InvalidArgument) << bad.first << " = " << bad.second;
  }
}

}  // namespace
}  // namespace graphtier::graph
