// Dataset format v1: round trip, validation of corrupt files, atomic replacement.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <vector>

#include "graphtier/core/error.hpp"
#include "graphtier/graph/dataset.hpp"
#include "test_util.hpp"

namespace graphtier::graph {
namespace {

namespace fs = std::filesystem;

// 4 nodes; in-neighbours: 0 <- {1, 2}, 1 <- {0}, 2 <- {}, 3 <- {0, 1, 2}.
void write_tiny(const std::string& dir, bool overwrite = false) {
  DatasetWriter w(dir, overwrite);
  const std::vector<int64_t> indptr{0, 2, 3, 3, 6};
  const std::vector<int32_t> indices{1, 2, 0, 0, 1, 2};
  const std::vector<float> features{0, 1, 2, 3, 4, 5, 6, 7};  // dim 2
  const std::vector<int32_t> labels{0, 1, -1, 1};
  const std::vector<int64_t> train{0, 1}, valid{3}, test{2};
  const std::vector<int64_t> perm{3, 2, 1, 0};
  const std::vector<double> hotness{4, 3, 2, 1};
  w.write_array("indptr", std::span<const int64_t>(indptr));
  w.write_array("indices", std::span<const int32_t>(indices));
  w.write_array("features", std::span<const float>(features));
  w.write_array("labels", std::span<const int32_t>(labels));
  w.write_array("train", std::span<const int64_t>(train));
  w.write_array("valid", std::span<const int64_t>(valid));
  w.write_array("test", std::span<const int64_t>(test));
  w.write_array("permutation", std::span<const int64_t>(perm));
  w.write_array("hotness", std::span<const double>(hotness));
  Manifest m;
  m.num_nodes = 4;
  m.num_edges = 6;
  m.indices_dtype = DType::kInt32;
  m.features = FeatureLayout::make(2, DType::kFloat32, 0);
  m.num_classes = 2;
  m.hotness = "test";
  w.commit(m);
}

template <typename T>
void poke(const std::string& path, std::size_t index, T value) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(static_cast<std::streamoff>(index * sizeof(T)));
  f.write(reinterpret_cast<const char*>(&value), sizeof(T));
}

/// Expects Dataset::open(dir) to throw FormatError mentioning `file` and `problem`.
void expect_rejected(const std::string& dir, const std::string& file, const std::string& problem) {
  try {
    Dataset::open(dir);
    ADD_FAILURE() << "dataset with a bad " << file << " was accepted";
  } catch (const FormatError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(file), std::string::npos) << what;
    EXPECT_NE(what.find(problem), std::string::npos) << what;
  }
}

/// Writes one node whose only neighbour is out of range and expects commit() to reject it.
void expect_invalid_commit(DatasetWriter& w) {
  const std::vector<int64_t> indptr{0, 1};
  const std::vector<int32_t> indices{5};
  w.write_array("indptr", std::span<const int64_t>(indptr));
  w.write_array("indices", std::span<const int32_t>(indices));
  Manifest m;
  m.num_nodes = 1;
  m.num_edges = 1;
  EXPECT_THROW(w.commit(m), FormatError);
}

class DatasetTest : public ::testing::Test {
 protected:
  void SetUp() override { write_tiny(dir()); }
  std::string dir() const { return tmp_ / "ds"; }
  std::string file(const std::string& name) const { return dir() + "/" + name; }
  test::TempDir tmp_;
};

TEST_F(DatasetTest, RoundTripsEveryArray) {
  const auto d = Dataset::open(dir());
  EXPECT_EQ(d.num_nodes(), 4);
  EXPECT_EQ(d.num_edges(), 6);
  EXPECT_EQ(d.manifest().name, "ds");
  EXPECT_EQ(d.indptr()[4], 6);
  const auto indices = std::get<std::span<const int32_t>>(d.indices());
  EXPECT_EQ(indices[5], 2);
  EXPECT_EQ(d.in_degree(3), 3);
  ASSERT_EQ(d.feature_bytes().size(), 32u);
  EXPECT_EQ(reinterpret_cast<const float*>(d.feature_bytes().data())[7], 7.0f);
  EXPECT_EQ(d.labels()[2], -1);
  EXPECT_EQ(d.split(Split::kValid)[0], 3);
  EXPECT_EQ(d.permutation()[0], 3);
  EXPECT_EQ(d.hotness()[3], 1.0);
  EXPECT_NO_THROW(d.verify_checksums());
}

TEST_F(DatasetTest, RejectsATruncatedArray) {
  fs::resize_file(file("indices.bin"), 20);
  expect_rejected(dir(), "indices.bin", "truncated");
}

TEST_F(DatasetTest, RejectsNonMonotoneIndptr) {
  poke<int64_t>(file("indptr.bin"), 2, 1);
  expect_rejected(dir(), "indptr.bin", "not monotone");
}

TEST_F(DatasetTest, RejectsIndptrThatDoesNotEndAtNumEdges) {
  poke<int64_t>(file("indptr.bin"), 4, 5);
  expect_rejected(dir(), "indptr.bin", "expected num_edges");
}

TEST_F(DatasetTest, RejectsOutOfRangeNeighbour) {
  poke<int32_t>(file("indices.bin"), 4, 4);
  expect_rejected(dir(), "indices.bin", "out of range");
  poke<int32_t>(file("indices.bin"), 4, -1);
  expect_rejected(dir(), "indices.bin", "out of range");
}

TEST_F(DatasetTest, RejectsOutOfRangeLabelAndSplitIds) {
  poke<int32_t>(file("labels.bin"), 1, 2);
  expect_rejected(dir(), "labels.bin", "out of range");
  poke<int32_t>(file("labels.bin"), 1, 1);
  poke<int64_t>(file("train.bin"), 1, 99);
  expect_rejected(dir(), "train.bin", "out of range");
  poke<int64_t>(file("train.bin"), 1, 0);
  expect_rejected(dir(), "train.bin", "appears twice");
}

TEST_F(DatasetTest, RejectsAPermutationWithARepeat) {
  poke<int64_t>(file("permutation.bin"), 1, 3);
  expect_rejected(dir(), "permutation.bin", "appears twice");
}

TEST_F(DatasetTest, RejectsHotnessOutOfOrder) {
  poke<double>(file("hotness.bin"), 3, 10.0);
  expect_rejected(dir(), "hotness.bin", "not in hotness order");
}

TEST_F(DatasetTest, RejectsSizesThatDisagreeWithTheCounts) {
  std::string text = test::read_file(file("manifest.json"));
  text.replace(text.find("\"num_nodes\": 4"), 14, "\"num_nodes\": 5");
  test::write_file(file("manifest.json"), text);
  expect_rejected(dir(), "features.bin", "expected 40 for 5 nodes");
}

// A num_nodes beyond the format's limit is refused before anything is sized by it, even where the
// array sizes it implies wrap around 64 bits to match the files (2^61 nodes: an 8-byte indptr,
// which validation would otherwise read far past its end).
TEST_F(DatasetTest, RejectsANodeCountBeyondTheFormat) {
  using Json = nlohmann::ordered_json;
  Json j = Json::parse(test::read_file(file("manifest.json")));
  j["num_nodes"] = int64_t{1} << 61;
  j["num_edges"] = 0;
  j["indices_dtype"] = "int64";
  j["num_classes"] = 0;
  j["features"] = Json::object();
  j.erase("hotness");
  Json files = Json::object();
  for (const auto& [array, bytes] : {std::pair{"indptr", 8}, {"indices", 0}, {"train", 8}}) {
    files[array] = j["files"][array];
    files[array]["bytes"] = bytes;
    test::write_file(file(std::string(array) + ".bin"), std::string(static_cast<std::size_t>(bytes), '\0'));
  }
  j["files"] = files;
  test::write_file(file("manifest.json"), j.dump(2));
  expect_rejected(dir(), "manifest.json",
                  "num_nodes: 2305843009213693952 nodes exceed the format's limit of 1152921504606846974");
}

TEST_F(DatasetTest, RejectsABrokenManifest) {
  test::write_file(file("manifest.json"), "{\"format\": \"graphtier-dataset\", \"version\": 1");
  expect_rejected(dir(), "manifest.json", "not valid JSON");
  test::write_file(file("manifest.json"), "{\"format\": \"graphtier-dataset\", \"version\": 7}");
  expect_rejected(dir(), "manifest.json", "unsupported format version 7");
  test::write_file(file("manifest.json"), "[1, 2]");
  expect_rejected(dir(), "manifest.json", "not a graphtier dataset");
}

/// Each field of the manifest given a value of the wrong type is refused as "manifest.json: field
/// X: expected Y, got Z", never with the JSON library's own text.
TEST_F(DatasetTest, RejectsAManifestFieldOfTheWrongType) {
  using Json = nlohmann::ordered_json;
  const std::string good = test::read_file(file("manifest.json"));
  struct Case {
    const char* pointer;  // JSON pointer of the field
    Json value;
    const char* expected;  // "field X: expected Y, got Z"
  };
  const Case cases[] = {
      {"/version", "1", "field version: expected a 64-bit integer, got string \"1\""},
      {"/version", 1.5, "field version: expected a 64-bit integer, got number 1.5"},
      {"/name", 5, "field name: expected a string, got number 5"},
      {"/name", nullptr, "field name: expected a string, got null"},
      {"/num_nodes", nullptr, "field num_nodes: expected a 64-bit integer, got null"},
      {"/num_nodes", true, "field num_nodes: expected a 64-bit integer, got true"},
      {"/num_nodes", 18446744073709551615ull, "field num_nodes: expected a 64-bit integer, got number 18446744073709551615"},
      {"/num_edges", Json::array({6}), "field num_edges: expected a 64-bit integer, got an array"},
      {"/indices_dtype", 32, "field indices_dtype: expected a string, got number 32"},
      {"/features", Json::array(), "field features: expected an object, got an array"},
      {"/features", "none", "field features: expected an object, got string \"none\""},
      {"/features/dim", "2", "field features.dim: expected a 64-bit integer, got string \"2\""},
      {"/features/dtype", nullptr, "field features.dtype: expected a string, got null"},
      {"/features/alignment", Json::object(), "field features.alignment: expected a 64-bit integer, got an object"},
      {"/features/row_stride", 8.0, "field features.row_stride: expected a 64-bit integer, got number 8.0"},
      {"/num_classes", "2", "field num_classes: expected a 64-bit integer, got string \"2\""},
      {"/hotness", false, "field hotness: expected a string, got false"},
      {"/source", nullptr, "field source: expected a string, got null"},
      {"/files", Json::array(), "field files: expected an object, got an array"},
      {"/files/indptr", "indptr.bin", "field files.indptr: expected an object, got string \"indptr.bin\""},
      {"/files/indptr/path", 1, "field files.indptr.path: expected a string, got number 1"},
      {"/files/indptr/bytes", "40", "field files.indptr.bytes: expected a 64-bit integer, got string \"40\""},
      {"/files/indptr/bytes", -40, "field files.indptr.bytes: expected a non-negative integer, got number -40"},
      {"/files/indptr/xxh3", nullptr, "field files.indptr.xxh3: expected a string, got null"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.pointer);
    Json j = Json::parse(good);
    j[Json::json_pointer(c.pointer)] = c.value;
    test::write_file(file("manifest.json"), j.dump(2));
    expect_rejected(dir(), "manifest.json: " + std::string(c.expected), "");
  }
  // A string with binary bytes is quoted with them escaped.
  Json j = Json::parse(good);
  j["/files/indptr/path"_json_pointer] = std::string("a\x1b[2Jb/c");
  test::write_file(file("manifest.json"), j.dump(2));
  expect_rejected(dir(), "manifest.json", "invalid path 'a\\x1b[2Jb/c'");
}

TEST_F(DatasetTest, MissingManifestIsAnIoErrorNamingIt) {
  fs::remove(file("manifest.json"));
  try {
    Dataset::open(dir());
    FAIL() << "expected IoError";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("manifest.json"), std::string::npos);
  }
}

TEST_F(DatasetTest, VerifyFindsAFlippedByte) {
  poke<float>(file("features.bin"), 5, 42.0f);  // same size, still valid: only the checksum can tell
  const auto d = Dataset::open(dir());
  try {
    d.verify_checksums();
    FAIL() << "corruption not detected";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("features.bin: checksum mismatch"), std::string::npos) << e.what();
  }
}

TEST_F(DatasetTest, CliReportsCorruptionInOneLine) {
  poke<int32_t>(file("indices.bin"), 0, 77);
  const auto r = test::run_cli({"info", dir()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("indices.bin"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST_F(DatasetTest, WriterRefusesToClobberWithoutOverwrite) {
  EXPECT_THROW(DatasetWriter(dir(), false), InvalidArgument);
  test::write_file(tmp_ / "not-a-dataset", "precious");
  EXPECT_THROW(DatasetWriter(tmp_ / "not-a-dataset", true), InvalidArgument);
  EXPECT_EQ(test::read_file(tmp_ / "not-a-dataset"), "precious");
}

TEST_F(DatasetTest, OverwriteReplacesAtomicallyAndLeavesNoTemporaries) {
  write_tiny(dir(), /*overwrite=*/true);
  EXPECT_NO_THROW(Dataset::open(dir()).verify_checksums());
  for (const auto& entry : fs::directory_iterator(tmp_.path())) {
    EXPECT_EQ(entry.path().filename(), "ds") << "left behind: " << entry.path();
  }
}

TEST_F(DatasetTest, AbandonedWriterLeavesTheOldDatasetIntact) {
  {
    DatasetWriter w(dir(), true);
    w.open_array("indptr").write("garbage", 7);
    // Destroyed without commit, as when an exception unwinds a converter.
  }
  EXPECT_NO_THROW(Dataset::open(dir()).verify_checksums());
  EXPECT_EQ(std::distance(fs::directory_iterator(tmp_.path()), fs::directory_iterator{}), 1);
}

TEST_F(DatasetTest, InvalidContentsAreNeverPublished) {
  const std::string out = tmp_ / "bad";
  {
    DatasetWriter w(out, false);
    expect_invalid_commit(w);
  }
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(DatasetTest, AFailedCommitOverADatasetKeepsItAndLeavesNoTemporary) {
  const std::string before = test::read_file(file(kManifestName));
  {
    DatasetWriter w(dir(), /*overwrite=*/true);
    expect_invalid_commit(w);
    // The arrays were closed by the failed commit: the writer still removes its temporary.
  }
  EXPECT_EQ(test::read_file(file(kManifestName)), before);
  EXPECT_NO_THROW(Dataset::open(dir()).verify_checksums());
  EXPECT_EQ(std::distance(fs::directory_iterator(tmp_.path()), fs::directory_iterator{}), 1);
}

TEST_F(DatasetTest, ACommittedWriterRefusesMoreWork) {
  DatasetWriter w(tmp_ / "once", false);
  const std::vector<int64_t> indptr{0, 0};
  w.write_array("indptr", std::span<const int64_t>(indptr));
  w.write_array("indices", std::span<const int32_t>());
  Manifest m;
  m.num_nodes = 1;
  w.commit(m);
  EXPECT_THROW(w.commit(m), InvalidArgument);
  EXPECT_THROW(w.open_array("labels"), InvalidArgument);
  EXPECT_NO_THROW(Dataset::open(tmp_ / "once").verify_checksums());
}

TEST_F(DatasetTest, WriterNamesTheTargetItRefuses) {
  const auto refusal = [](const std::string& dir, bool overwrite) {
    try {
      DatasetWriter w(dir, overwrite);
    } catch (const InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(refusal(dir() + "/", false).find(dir() + " already exists (pass --overwrite"), std::string::npos);
  test::write_file(tmp_ / "not-a-dataset", "precious");
  EXPECT_NE(refusal(tmp_ / "not-a-dataset", true).find("has no manifest.json; refusing to replace it"),
            std::string::npos);
  EXPECT_NE(refusal(tmp_ / "missing/ds", false).find("parent directory " + tmp_ / "missing" + " does not exist"),
            std::string::npos);
  EXPECT_NE(refusal("", false).find("must not be empty"), std::string::npos);
}

TEST_F(DatasetTest, KilledWriterLeavesNoDatasetAndItsTemporaryIsCleanedUp) {
  const std::string out = tmp_ / "killed";
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    DatasetWriter w(out, false);
    std::vector<int64_t> big(1 << 20, 0);
    w.write_array("indptr", std::span<const int64_t>(big));
    ::kill(::getpid(), SIGKILL);  // as `kill -9` in the middle of a write
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_FALSE(fs::exists(out));
  bool temporary_left = false;
  for (const auto& entry : fs::directory_iterator(tmp_.path())) {
    temporary_left |= entry.path().filename().string().rfind(".killed.tmp-", 0) == 0;
  }
  EXPECT_TRUE(temporary_left);  // hidden, and not a dataset
  write_tiny(out);              // the next writer removes the dead one's temporary
  for (const auto& entry : fs::directory_iterator(tmp_.path())) {
    EXPECT_NE(entry.path().filename().string().rfind(".killed.tmp-", 0), 0u) << entry.path();
  }
}

TEST(FeatureLayout, AlignedRowsNeverStraddleABlock) {
  EXPECT_EQ(FeatureLayout::make(100, DType::kFloat32, 0).row_stride, 400);
  EXPECT_EQ(FeatureLayout::make(100, DType::kFloat32, 512).row_stride, 512);
  EXPECT_EQ(FeatureLayout::make(128, DType::kFloat32, 4096).row_stride, 512);
  EXPECT_EQ(FeatureLayout::make(150, DType::kFloat16, 4096).row_stride, 512);
  EXPECT_EQ(FeatureLayout::make(1100, DType::kFloat32, 4096).row_stride, 8192);
  EXPECT_EQ(FeatureLayout::make(129, DType::kFloat32, 512).row_stride, 1024);
  for (int64_t dim : {1, 3, 100, 128, 129, 1000, 1500}) {
    for (int64_t align : {512, 4096}) {
      const auto layout = FeatureLayout::make(dim, DType::kFloat32, align);
      for (int64_t row = 0; row < 64; ++row) {
        const int64_t begin = row * layout.row_stride, last = begin + layout.row_bytes() - 1;
        if (layout.row_bytes() <= align) ASSERT_EQ(begin / align, last / align) << dim << " " << align;
        else ASSERT_EQ(begin % align, 0) << dim << " " << align;
      }
    }
  }
  EXPECT_THROW(FeatureLayout::make(10, DType::kFloat32, 1000), InvalidArgument);
  EXPECT_THROW(FeatureLayout::make(10, DType::kInt64, 0), InvalidArgument);
}

/// A number beyond a double is the JSON library's out_of_range exception, not its parse_error: it
/// is still "not valid JSON", a FormatError naming the file.
TEST(Manifest, ANumberBeyondADoubleIsAFormatError) {
  try {
    Manifest::from_json(R"({"format": "graphtier-dataset", "num_nodes": 1E400})", "m.json");
    ADD_FAILURE() << "accepted";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("m.json: not valid JSON"), std::string::npos) << e.what();
  }
}

/// A manifest whose feature row or feature table does not fit in 64 bits is refused by name, not
/// computed with a signed overflow (row bytes) or a size that wraps to one the file might have.
TEST(Manifest, FeatureSizesBeyond64BitsAreAFormatError) {
  const auto manifest = [](int64_t num_nodes, int64_t dim, int64_t row_stride) {
    return nlohmann::json{{"format", "graphtier-dataset"}, {"version", 1}, {"num_nodes", num_nodes},
                          {"num_edges", 0}, {"indices_dtype", "int64"},
                          {"features", {{"dim", dim}, {"dtype", "float32"}, {"alignment", 0}, {"row_stride", row_stride}}},
                          {"files", nlohmann::json::object()}}
        .dump();
  };
  EXPECT_EQ(Manifest::from_json(manifest(10, 3, 12), "m.json").features.row_stride, 12);
  const auto expect_refused = [](const std::string& text, const std::string& words) {
    try {
      Manifest::from_json(text, "m.json");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const FormatError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  expect_refused(manifest(10, int64_t{1} << 62, 0), "feature dim 4611686018427387904 is too large");
  // 2^33 rows of 2^33 bytes: 2^66 bytes, which wraps to 0 in 64 bits.
  expect_refused(manifest(int64_t{1} << 33, int64_t{1} << 31, int64_t{1} << 33),
                 "8589934592 rows of 8589934592 bytes do not fit in 64 bits");
}

// The id maps of a prepared dataset. Prepared id v is original id perm[v]: perm = {2, 0, 3, 1} is not
// its own inverse, so a map applied the wrong way round fails the golden case.
std::string write_renumbered(const test::TempDir& tmp, const std::vector<int64_t>& perm) {
  const std::string dir = tmp / "renumbered";
  DatasetWriter w(dir, false);
  const auto n = static_cast<int64_t>(perm.size());
  std::vector<int64_t> indptr(perm.size() + 1);
  std::vector<int32_t> indices(perm.size());  // a cycle: v <- v + 1
  for (int64_t v = 0; v <= n; ++v) indptr[static_cast<std::size_t>(v)] = v;
  for (int64_t v = 0; v < n; ++v) indices[static_cast<std::size_t>(v)] = static_cast<int32_t>((v + 1) % n);
  w.write_array("indptr", std::span<const int64_t>(indptr));
  w.write_array("indices", std::span<const int32_t>(indices));
  w.write_array("permutation", std::span<const int64_t>(perm));
  Manifest m;
  m.num_nodes = n;
  m.num_edges = n;
  w.commit(m);
  return dir;
}

std::vector<int64_t> mapped(const Dataset& d, std::vector<int64_t> ids, bool to_original) {
  std::vector<int64_t> out(ids.size(), -7);
  if (to_original) {
    d.to_original(ids, out);
  } else {
    d.from_original(ids, out);
  }
  return out;
}

TEST(DatasetIdMaps, GoldenOnATinyPreparedGraph) {
  const test::TempDir tmp;
  const auto d = Dataset::open(write_renumbered(tmp, {2, 0, 3, 1}));
  ASSERT_TRUE(d.has_permutation());
  EXPECT_EQ(mapped(d, {0, 1, 2, 3}, true), (std::vector<int64_t>{2, 0, 3, 1}));
  EXPECT_EQ(mapped(d, {0, 1, 2, 3}, false), (std::vector<int64_t>{1, 3, 0, 2}));
  EXPECT_EQ(mapped(d, {3, 3, 0}, false), (std::vector<int64_t>{2, 2, 1}));  // repeats and any order
  EXPECT_EQ(mapped(d, {}, true), std::vector<int64_t>{});
}

TEST(DatasetIdMaps, AreInversesOfEachOtherInPlace) {
  const test::TempDir tmp;
  const int64_t n = 1000;
  std::vector<int64_t> perm(static_cast<std::size_t>(n));
  for (int64_t v = 0; v < n; ++v) perm[static_cast<std::size_t>(v)] = (v * 617 + 11) % n;  // 617 is prime to 1000
  const auto d = Dataset::open(write_renumbered(tmp, perm));
  std::vector<int64_t> ids(static_cast<std::size_t>(3 * n));
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int64_t>((i * 7919) % static_cast<std::size_t>(n));
  std::vector<int64_t> work = ids;
  d.to_original(work, work);  // `out` may be `ids`
  for (std::size_t i = 0; i < ids.size(); ++i) ASSERT_EQ(work[i], perm[static_cast<std::size_t>(ids[i])]) << i;
  d.from_original(work, work);
  EXPECT_EQ(work, ids);
  d.from_original(work, work);
  d.to_original(work, work);
  EXPECT_EQ(work, ids);
}

TEST(DatasetIdMaps, AreTheIdentityWithoutAPermutation) {
  const test::TempDir tmp;
  write_tiny(tmp / "plain");
  fs::remove(tmp / "plain/permutation.bin");
  auto manifest = nlohmann::json::parse(std::ifstream(tmp / "plain/manifest.json"));
  manifest["files"].erase("permutation");
  std::ofstream(tmp / "plain/manifest.json") << manifest.dump();
  const auto d = Dataset::open(tmp / "plain");
  ASSERT_FALSE(d.has_permutation());
  EXPECT_EQ(mapped(d, {3, 0, 2}, true), (std::vector<int64_t>{3, 0, 2}));
  EXPECT_EQ(mapped(d, {3, 0, 2}, false), (std::vector<int64_t>{3, 0, 2}));
  EXPECT_THROW(mapped(d, {4}, true), OutOfRange);  // the ids are still checked
}

TEST(DatasetIdMaps, RefuseAnIdOutOfRangeNamingItBeforeWriting) {
  const test::TempDir tmp;
  const auto d = Dataset::open(write_renumbered(tmp, {2, 0, 3, 1}));
  for (const bool to_original : {true, false}) {
    for (const int64_t bad : {int64_t{4}, int64_t{-1}, INT64_MAX}) {
      std::vector<int64_t> out(3, -7);
      const std::vector<int64_t> ids{0, bad, 1};
      try {
        if (to_original) {
          d.to_original(ids, out);
        } else {
          d.from_original(ids, out);
        }
        ADD_FAILURE() << "id " << bad << " was accepted";
      } catch (const OutOfRange& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find(detail::concat(to_original ? "prepared" : "original", " node id ", bad, " at position 1")),
                  std::string::npos) << what;
        EXPECT_NE(what.find("[0, 4)"), std::string::npos) << what;
      }
      EXPECT_EQ(out, std::vector<int64_t>(3, -7));  // nothing written
    }
  }
  std::vector<int64_t> small(1);
  EXPECT_THROW(d.to_original(std::vector<int64_t>{0, 1}, small), InvalidArgument);
}

TEST(DatasetIdMaps, OwnNumberingIsRequiredWhereTheDatasetWasRenumbered) {
  const test::TempDir tmp;
  const auto d = Dataset::open(write_renumbered(tmp, {2, 0, 3, 1}));
  std::vector<int64_t> ids{0, 3};
  try {
    d.to_own_numbering(ids, std::nullopt, "seeds");
    ADD_FAILURE() << "ids without a numbering were accepted on a renumbered dataset";
  } catch (const InvalidArgument& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("seeds: dataset ", 0), 0u) << what;
    EXPECT_NE(what.find("ids_numbering='original'"), std::string::npos) << what;
  }
  EXPECT_EQ(ids, (std::vector<int64_t>{0, 3}));  // nothing written
  d.to_own_numbering(ids, Numbering::kPrepared, "seeds");
  EXPECT_EQ(ids, (std::vector<int64_t>{0, 3}));
  d.to_own_numbering(ids, Numbering::kOriginal, "seeds");
  EXPECT_EQ(ids, (std::vector<int64_t>{1, 2}));  // from_original of {0, 3}
  std::vector<int64_t> bad{4};
  EXPECT_THROW(d.to_own_numbering(bad, Numbering::kOriginal, "seeds"), OutOfRange);

  write_tiny(tmp / "plain");  // never renumbered: one numbering, nothing to say
  fs::remove(tmp / "plain/permutation.bin");
  auto manifest = nlohmann::json::parse(std::ifstream(tmp / "plain/manifest.json"));
  manifest["files"].erase("permutation");
  std::ofstream(tmp / "plain/manifest.json") << manifest.dump();
  std::vector<int64_t> plain{3, 0};
  Dataset::open(tmp / "plain").to_own_numbering(plain, std::nullopt, "seeds");
  EXPECT_EQ(plain, (std::vector<int64_t>{3, 0}));
}

TEST(DatasetIdMaps, NumberingNamesRoundTrip) {
  for (const Numbering n : {Numbering::kPrepared, Numbering::kOriginal}) EXPECT_EQ(parse_numbering(numbering_name(n)), n);
  EXPECT_THROW(parse_numbering("renumbered"), InvalidArgument);
}

}  // namespace
}  // namespace graphtier::graph
