// Pre-sampling hotness: visit counts equal a sequential count over the same batches; shuffles
// are permutations that change with the epoch.
#include <gtest/gtest.h>

#include <algorithm>

#include "graphtier/core/error.hpp"
#include "graphtier/sample/presample.hpp"
#include "sample_test_util.hpp"

namespace graphtier::sample {
namespace {

TEST(Presample, CountsEqualASequentialCount) {
  const auto g = test::OwnedGraph::random(3000, 10, 21);
  const std::vector<int64_t> train = test::random_seeds(g.num_nodes(), 700, 4);
  PresampleOptions o;
  o.epochs = 3;
  o.batch_size = 128;
  o.sampler.fanouts = {5, 3};
  o.sampler.seed = 12;
  std::vector<double> want(static_cast<std::size_t>(g.num_nodes()), 0.0);
  const NeighborSampler sampler(g.sample_graph(), o.sampler);
  for (int e = 0; e < o.epochs; ++e) {
    const std::vector<int64_t> order = shuffled_ids(train, o.sampler.seed, e);
    for (int64_t b = 0; b * o.batch_size < static_cast<int64_t>(order.size()); ++b) {
      const auto begin = order.begin() + b * o.batch_size;
      const std::vector<int64_t> seeds(begin, std::min(begin + o.batch_size, order.end()));
      // Named: a range-for over .input_nodes() of the temporary would read the freed batch.
      const MiniBatch batch = sampler.sample(seeds, (static_cast<uint64_t>(e) << 32) | b);
      for (int64_t v : batch.input_nodes()) want[v] += 1;
    }
  }
  for (int threads : {1, 3}) {
    ThreadPool pool(threads);
    EXPECT_EQ(presample_hotness(g.sample_graph(), train, o, pool), want) << threads << " threads";
  }
  for (int64_t v : train) EXPECT_GE(want[v], 3.0);
}

TEST(Presample, ShuffleIsAPermutationPerEpoch) {
  std::vector<int64_t> ids(1000);
  for (int64_t i = 0; i < 1000; ++i) ids[i] = 3 * i;
  const auto a = shuffled_ids(ids, 1, 0), b = shuffled_ids(ids, 1, 1), c = shuffled_ids(ids, 2, 0);
  EXPECT_NE(a, ids);
  EXPECT_NE(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(a, shuffled_ids(ids, 1, 0));
  auto sorted = a;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, ids);
}

TEST(Presample, RejectsBadOptions) {
  const auto g = test::OwnedGraph::random(100, 4, 1);
  ThreadPool pool(1);
  PresampleOptions o;
  o.sampler.fanouts = {2};
  EXPECT_THROW(presample_hotness(g.sample_graph(), {}, o, pool), InvalidArgument);
  const std::vector<int64_t> train = {1, 2, 500};
  EXPECT_THROW(presample_hotness(g.sample_graph(), train, o, pool), OutOfRange);
  o.epochs = 0;
  EXPECT_THROW(presample_hotness(g.sample_graph(), std::vector<int64_t>{1}, o, pool), InvalidArgument);
}

}  // namespace
}  // namespace graphtier::sample
