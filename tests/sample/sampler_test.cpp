// The front door of sampling (sampler.hpp): the method table, make_sampler's choice of backend
// (each answer checked against the backend built by hand), the interface's bulk and device forms,
// and the specs it refuses. The GPU half runs where a GPU is visible and skips visibly elsewhere.
#include "graphtier/sample/sampler.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "graphtier/core/error.hpp"
#include "graphtier/core/memory.hpp"
#include "sample_test_util.hpp"

namespace graphtier::sample {
namespace {

SamplerSpec spec(SamplerKind kind, std::vector<int64_t> fanouts, bool bulk = false, bool replace = false) {
  SamplerSpec s;
  s.kind = kind;
  s.fanouts = std::move(fanouts);
  s.bulk = bulk;
  s.replace = replace;
  s.seed = 11;
  return s;
}

std::string message(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(Sampler, MethodTableParsesEveryNameAndRefusesOthers) {
  ASSERT_EQ(sampler_methods().size(), 3u);
  for (std::size_t i = 0; i < sampler_methods().size(); ++i) {
    const SamplerMethod& m = sampler_methods()[i];
    EXPECT_EQ(static_cast<std::size_t>(m.kind), i) << m.name;  // SamplerKind order
    EXPECT_EQ(&sampler_method(m.name), &m);
    EXPECT_EQ(&sampler_method(m.kind), &m);
  }
  EXPECT_EQ(sampler_method("neighbor").kind, SamplerKind::kNeighbor);
  EXPECT_EQ(sampler_method("ladies").kind, SamplerKind::kLadies);
  EXPECT_EQ(sampler_method("fastgcn").kind, SamplerKind::kFastGcn);
  EXPECT_TRUE(sampler_method("neighbor").replace && sampler_method("neighbor").bulk);
  EXPECT_FALSE(sampler_method("fastgcn").bulk || sampler_method("fastgcn").rows);
  EXPECT_THROW(sampler_method("Neighbor"), InvalidArgument);
  EXPECT_NE(message([] { sampler_method("sage"); }).find("unknown sampler 'sage' (expected neighbor, ladies or fastgcn)"),
            std::string::npos);
}

TEST(Sampler, ChoosesTheCpuBackendOfTheSpec) {
  const test::OwnedGraph g = test::OwnedGraph::random(3000, 6.0, 5);
  const std::vector<int64_t> seeds = test::random_seeds(g.num_nodes(), 200, 2);
  ThreadPool pool(2);
  struct Case {
    SamplerSpec spec;
    MiniBatch want;
  };
  const SamplerSpec sage = spec(SamplerKind::kNeighbor, {5, 3}, false, true);
  const SamplerSpec ladies = spec(SamplerKind::kLadies, {64, 32});
  const SamplerSpec fastgcn = spec(SamplerKind::kFastGcn, {64, 32});
  const SamplerSpec bulk_sage = spec(SamplerKind::kNeighbor, {5, 3}, true);
  const SamplerSpec bulk_ladies = spec(SamplerKind::kLadies, {64, 32}, true);
  const std::span<const int64_t> one[1] = {seeds};
  const Case cases[] = {
      {sage, NeighborSampler(g.sample_graph(), neighbor_options(sage)).sample(seeds, 4)},
      {ladies, LayerSampler(g.sample_graph(), layer_options(ladies)).sample(seeds, 4)},
      {fastgcn, LayerSampler(g.sample_graph(), layer_options(fastgcn)).sample(seeds, 4)},
      {bulk_sage, BulkSampler(g.sample_graph(), bulk_options(bulk_sage)).sample(one, 4).front()},
      {bulk_ladies, BulkSampler(g.sample_graph(), bulk_options(bulk_ladies)).sample(one, 4).front()},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(sampler_method(c.spec.kind).name) + (c.spec.bulk ? " bulk" : ""));
    const std::unique_ptr<Sampler> s = make_sampler(c.spec, g.sample_graph(), {.pool = &pool});
    EXPECT_EQ(s->device(), -1);
    EXPECT_EQ(s->bulk(), c.spec.bulk);
    EXPECT_EQ(s->device_bytes_bound(1024), 0);
    test::expect_same_minibatch(s->sample(seeds, 4), c.want);
    test::expect_same_minibatch(s->sample(seeds, 4, {}, &pool), c.want);  // the pool changes nothing
    EXPECT_THROW(s->sample_device(seeds, 4), Unsupported);
    EXPECT_THROW(s->sample_bulk_device(one, std::vector<uint64_t>{4}), Unsupported);
    // k at once: batch b from streams[b], whether one bulk call or a loop.
    const std::vector<int64_t> other = test::random_seeds(g.num_nodes(), 50, 9);
    const std::span<const int64_t> two[2] = {other, seeds};
    const std::vector<MiniBatch> both = s->sample_bulk(two, std::vector<uint64_t>{8, 4}, {}, &pool);
    ASSERT_EQ(both.size(), 2u);
    test::expect_same_minibatch(both[0], s->sample(other, 8));
    test::expect_same_minibatch(both[1], c.want);
    EXPECT_THROW(s->sample_bulk(two, std::vector<uint64_t>{8}), InvalidArgument);
  }
}

TEST(Sampler, RefusesWhatTheMethodCannotDo) {
  const test::OwnedGraph g = test::OwnedGraph::random(100, 3.0, 1);
  const auto refused = [&](const SamplerSpec& s, const SamplerResources& r = {}) {
    return message([&] { make_sampler(s, g.sample_graph(), r); });
  };
  EXPECT_NE(refused(spec(SamplerKind::kFastGcn, {4}, true)).find("bulk with fastgcn"), std::string::npos);
  EXPECT_NE(refused(spec(SamplerKind::kLadies, {4}, false, true)).find("replace applies to the neighbor sampler only"),
            std::string::npos);
  EXPECT_NE(refused(spec(SamplerKind::kLadies, {4}, true, true)).find("replace applies"), std::string::npos);
  EXPECT_NE(refused(spec(SamplerKind::kNeighbor, {})).find("at least one layer"), std::string::npos);
  EXPECT_NE(refused(spec(SamplerKind::kLadies, {-2})).find("layer_sizes[0]"), std::string::npos);
  SamplerSpec bad = spec(SamplerKind::kNeighbor, {2});
  bad.kind = static_cast<SamplerKind>(7);
  EXPECT_NE(refused(bad).find("unknown sampler kind 7"), std::string::npos);
  // A GPU sampler that reads a topology needs one, whether or not this build has CUDA.
  EXPECT_TRUE(uses_device_topology(spec(SamplerKind::kLadies, {4})));
  EXPECT_FALSE(uses_device_topology(spec(SamplerKind::kLadies, {4}, true)));
  EXPECT_NE(refused(spec(SamplerKind::kNeighbor, {2}), {.device = 0}).find("none was given"), std::string::npos);
  EXPECT_THROW(neighbor_options(spec(SamplerKind::kLadies, {2})), InvalidArgument);
  EXPECT_THROW(layer_options(spec(SamplerKind::kNeighbor, {2})), InvalidArgument);
}

TEST(Sampler, GpuBackendsMatchTheCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: make_sampler's GPU backends not checked";
  const test::OwnedGraph g = test::OwnedGraph::random(3000, 6.0, 6);
  const std::vector<int64_t> seeds = test::random_seeds(g.num_nodes(), 200, 3);
  const std::vector<int64_t> other = test::random_seeds(g.num_nodes(), 60, 4);
  const std::span<const int64_t> two[2] = {seeds, other};
  const std::vector<uint64_t> streams{5, 6};
  const DeviceTopology topology(g.sample_graph());
  for (const SamplerSpec& s : {spec(SamplerKind::kNeighbor, {5, 3}), spec(SamplerKind::kLadies, {64, 32}),
                               spec(SamplerKind::kFastGcn, {64, 32}), spec(SamplerKind::kNeighbor, {5, 3}, true),
                               spec(SamplerKind::kLadies, {64, 32}, true)}) {
    SCOPED_TRACE(std::string(sampler_method(s.kind).name) + (s.bulk ? " bulk" : ""));
    const std::unique_ptr<Sampler> cpu = make_sampler(s, g.sample_graph());
    const std::unique_ptr<Sampler> gpu = make_sampler(s, g.sample_graph(), {.device = 0, .topology = &topology});
    EXPECT_EQ(gpu->device(), 0);
    EXPECT_EQ(gpu->bulk(), s.bulk);
    test::expect_same_minibatch(gpu->sample(seeds, 5), cpu->sample(seeds, 5));
    test::expect_same_minibatch(gpu->sample_device(seeds, 5).to_host(), cpu->sample(seeds, 5));
    const std::vector<DeviceMiniBatch> device = gpu->sample_bulk_device(two, streams);
    const std::vector<MiniBatch> host = cpu->sample_bulk(two, streams);
    ASSERT_EQ(device.size(), 2u);
    for (std::size_t b = 0; b < 2; ++b) test::expect_same_minibatch(device[b].to_host(), host[b]);
  }
}

}  // namespace
}  // namespace graphtier::sample
