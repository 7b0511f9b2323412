// What IGB260M's homogeneous conversion and IGBH's typed one share: the checks of IgbInput, the
// paper labels and the dataloader's split (convert.hpp, IgbInput).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "graphtier/graph_convert/convert.hpp"

namespace graphtier::graph::detail {

/// Throws InvalidArgument for a bad size, class count, feature dimension or fractions, or a
/// missing `<root>/<size>/processed/`; returns that directory.
std::string igb_processed_dir(const IgbInput& input);

/// Papers [0, K) carry labels: input.labeled_nodes, else the dataloader's count for `full`, else
/// all `num_papers`. InvalidArgument if K > num_papers.
int64_t igb_labeled_papers(const IgbInput& input, int64_t num_papers);

/// The paper labels (node_label_19.npy or node_label_2K.npy, .npy or raw float32; `large` may
/// read `full`'s), -1 from `labeled` on; `path` gets the file read. Empty (with a warning) when
/// the file does not exist.
std::vector<int32_t> igb_paper_labels(const IgbInput& input, int64_t num_papers, int64_t labeled, std::string& path);

/// The dataloader's split: the first int(labeled * train_fraction) papers train, the next
/// int(labeled * valid_fraction) valid, the rest of [0, labeled) test; ids plus `offset`.
std::array<std::vector<int64_t>, 3> igb_split(const IgbInput& input, int64_t labeled, int64_t offset);

/// IGBH's typed processed layout (IgbInput::hetero): convert_igb dispatches here.
ConvertReport convert_igbh(const IgbInput& input, const std::string& out, const ConvertOptions& options,
                           ThreadPool& pool);

}  // namespace graphtier::graph::detail
