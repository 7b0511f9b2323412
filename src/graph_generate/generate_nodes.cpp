// Labels and train/valid/test lists of a generated dataset, streamed in batches of nodes.
#include <algorithm>
#include <cmath>
#include <vector>

#include "generate_stages.hpp"

namespace graphtier::graph::detail::generate {

SplitCounts split_counts(const GenerateOptions& o) {
  const auto count = [&](double fraction) {
    return static_cast<int64_t>(std::llround(fraction * static_cast<double>(o.num_nodes)));
  };
  SplitCounts c;
  c.train = std::min(count(o.train_fraction), o.num_nodes);
  c.valid = std::min(count(o.valid_fraction), o.num_nodes - c.train);
  const int64_t rest = o.num_nodes - c.train - c.valid;
  c.test = o.test_fraction ? std::min(count(*o.test_fraction), rest) : rest;
  return c;
}

void write_node_arrays(DatasetWriter& writer, const LabelModel& labels, const NodePermutation& split_order,
                       const LabelledRange& range, const SplitCounts& counts, ThreadPool& pool) {
  OutputFile& labels_out = writer.open_array("labels");
  OutputFile* split_out[3] = {&writer.open_array("train"), &writer.open_array("valid"), &writer.open_array("test")};
  // Node v goes to the split its rank in a second seeded permutation falls in: exact counts, and
  // each list comes out ascending while nodes are visited in order.
  const int64_t split_end[3] = {counts.train, counts.train + counts.valid, counts.train + counts.valid + counts.test};

  constexpr int64_t kBatch = int64_t{1} << 20;
  const auto write_unlabelled = [&](int64_t count) {
    const std::vector<int32_t> none(static_cast<std::size_t>(std::min(count, kBatch)), -1);
    for (int64_t done = 0; done < count; done += kBatch) {
      labels_out.write_span(std::span<const int32_t>(none.data(), static_cast<std::size_t>(std::min(kBatch, count - done))));
    }
  };
  write_unlabelled(range.offset);
  const int64_t num_nodes = range.count;
  std::vector<int32_t> batch_labels;
  std::vector<int8_t> batch_split;
  std::vector<int64_t> ids[3];
  for (int64_t begin = 0; begin < num_nodes; begin += kBatch) {
    const int64_t end = std::min(num_nodes, begin + kBatch);
    batch_labels.resize(static_cast<std::size_t>(end - begin));
    batch_split.resize(static_cast<std::size_t>(end - begin));
    pool.parallel_for(begin, end, kBatch / 16, [&](int64_t lo, int64_t hi) {
      for (int64_t v = lo; v < hi; ++v) {
        batch_labels[v - begin] = labels.label(v);
        const int64_t rank = split_order.forward(v);
        int8_t split = -1;  // in no split (when the fractions add up to less than 1)
        for (int s = 2; s >= 0; --s) {
          if (rank < split_end[s]) split = static_cast<int8_t>(s);
        }
        batch_split[v - begin] = split;
      }
    });
    labels_out.write_span(std::span<const int32_t>(batch_labels));
    for (auto& list : ids) list.clear();
    for (int64_t v = begin; v < end; ++v) {
      if (batch_split[v - begin] >= 0) ids[batch_split[v - begin]].push_back(range.offset + v);
    }
    for (int s = 0; s < 3; ++s) split_out[s]->write_span(std::span<const int64_t>(ids[s]));
  }
  write_unlabelled(range.total - range.offset - range.count);
}

}  // namespace graphtier::graph::detail::generate
