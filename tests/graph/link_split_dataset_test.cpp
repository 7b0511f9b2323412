// A link split in dataset format v1 (docs/format.md, Link splits): the "links" section and the
// link_<split>.bin arrays round trip, and a bad section or array is refused naming it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <vector>

#include "graphtier/core/error.hpp"
#include "graphtier/graph/dataset.hpp"
#include "test_util.hpp"

namespace graphtier::graph {
namespace {

using Json = nlohmann::ordered_json;

// 3 nodes, a triangle stored both ways minus {0, 2}: 0 <-> 1, 1 <-> 2; {0, 2} is the test edge.
void write_split(const std::string& dir) {
  DatasetWriter w(dir, false);
  const std::vector<int64_t> indptr{0, 1, 3, 4};
  const std::vector<int32_t> indices{1, 0, 2, 1};
  const std::vector<int64_t> train{0, 1, 1, 2}, valid{}, test{0, 2};
  w.write_array("indptr", std::span<const int64_t>(indptr));
  w.write_array("indices", std::span<const int32_t>(indices));
  w.write_array("link_train", std::span<const int64_t>(train));
  w.write_array("link_valid", std::span<const int64_t>(valid));
  w.write_array("link_test", std::span<const int64_t>(test));
  Manifest m;
  m.num_nodes = 3;
  m.num_edges = 4;
  LinkSplit links;
  links.seed = 18446744073709551615ull;  // every uint64 seed round-trips
  links.test = 0.34;
  links.num_train = 2;
  links.num_test = 1;
  m.links = links;
  w.commit(m);
}

void expect_rejected(const std::string& dir, const std::string& text) {
  try {
    Dataset::open(dir);
    ADD_FAILURE() << "accepted a dataset expected to fail with: " << text;
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

class LinkSplitDatasetTest : public ::testing::Test {
 protected:
  void SetUp() override { write_split(dir()); }
  std::string dir() const { return tmp_ / "ds"; }
  std::string manifest_path() const { return dir() + "/manifest.json"; }
  void edit_manifest(const std::function<void(Json&)>& edit) const {
    Json j = Json::parse(test::read_file(manifest_path()));
    edit(j);
    test::write_file(manifest_path(), j.dump(2));
  }
  test::TempDir tmp_;
};

TEST_F(LinkSplitDatasetTest, RoundTrips) {
  const Dataset d = Dataset::open(dir());
  ASSERT_TRUE(d.has_link_split());
  const LinkSplit& links = *d.manifest().links;
  EXPECT_EQ(links.seed, 18446744073709551615ull);
  EXPECT_DOUBLE_EQ(links.test, 0.34);
  EXPECT_EQ(links.count(Split::kTrain), 2);
  EXPECT_EQ(links.count(Split::kValid), 0);
  EXPECT_EQ(std::vector<int64_t>(d.link_edges(Split::kTest).begin(), d.link_edges(Split::kTest).end()),
            (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(d.link_edges(Split::kTrain).size(), 4u);
  EXPECT_TRUE(d.link_edges(Split::kValid).empty());
  EXPECT_NO_THROW(d.verify_checksums());
  EXPECT_EQ(LinkSplit::array(Split::kValid), "link_valid");
}

TEST_F(LinkSplitDatasetTest, ADatasetWithoutASplitWritesNoSection) {
  DatasetWriter w(tmp_ / "plain", false);
  const std::vector<int64_t> indptr{0, 0};
  w.write_array("indptr", std::span<const int64_t>(indptr));
  w.open_array("indices");
  Manifest m;
  m.num_nodes = 1;
  w.commit(m);
  EXPECT_EQ(test::read_file(tmp_ / "plain/manifest.json").find("links"), std::string::npos);
  const Dataset d = Dataset::open(tmp_ / "plain");
  EXPECT_FALSE(d.has_link_split());
  EXPECT_TRUE(d.link_edges(Split::kTrain).empty());
}

TEST_F(LinkSplitDatasetTest, RejectsABadSection) {
  const std::string good = test::read_file(manifest_path());
  struct Case {
    const char* pointer;
    Json value;
    const char* expected;
  };
  const Case cases[] = {
      {"/links/val", 1.0, "field links.val: expected a number in [0, 1), got number 1.0"},
      {"/links/test", "0.1", "field links.test: expected a number in [0, 1), got string \"0.1\""},
      {"/links/num_test", -1, "field links.num_test: expected a non-negative integer, got number -1"},
      {"/links/seed", -3, "field links.seed: expected a non-negative 64-bit integer, got number -3"},
      {"/links", Json::array(), "field links: expected an object, got an array"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.pointer);
    test::write_file(manifest_path(), good);
    edit_manifest([&](Json& j) { j[Json::json_pointer(c.pointer)] = c.value; });
    expect_rejected(dir(), c.expected);
  }
  test::write_file(manifest_path(), good);
  edit_manifest([](Json& j) { j["links"].erase("num_train"); });
  expect_rejected(dir(), "missing field 'links.num_train'");
}

TEST_F(LinkSplitDatasetTest, RejectsMissingOrBadArrays) {
  const std::string good = test::read_file(manifest_path());
  edit_manifest([](Json& j) { j["files"].erase("link_valid"); });
  expect_rejected(dir(), "a link split (links) needs a 'link_valid' array");

  test::write_file(manifest_path(), good);
  edit_manifest([](Json& j) { j["links"]["num_test"] = 2; });
  expect_rejected(dir(), "link_test.bin: size is 16 bytes, expected 32");

  test::write_file(manifest_path(), good);
  edit_manifest([](Json& j) { j.erase("links"); });
  expect_rejected(dir(), "unknown array 'link_t");  // seed edges without the section

  test::write_file(manifest_path(), good);
  {
    std::fstream f(dir() + "/link_test.bin", std::ios::in | std::ios::out | std::ios::binary);
    const int64_t bad = 3;
    f.seekp(8);
    f.write(reinterpret_cast<const char*>(&bad), sizeof bad);
  }
  expect_rejected(dir(), "link_test.bin: node id 3 at position 1 is out of range [0, 3)");
}

}  // namespace
}  // namespace graphtier::graph
