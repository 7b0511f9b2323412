// Bulk matrix-based sampling (§4 of the matrix-based bulk sampling paper, docs/references.md):
// k minibatches sampled at once, each step a sparse matrix operation over the k batches' matrices
// stacked vertically.
//
// The graph as a matrix. A is N x N with A[v, u] = the number of edges u -> v (CSC: node v's
// in-neighbours are its row), so parallel edges merge into one entry; entries of a row are kept in
// ascending column order, and each entry remembers the first CSC position of its edges, which is
// the edge id a sampled entry reports. Weighted graphs are not supported (edge weights must be
// empty).
//
// One layer l, for batches b = 0 .. k-1 with frontiers S_b (the seeds at l = 0, then the src
// nodes of block l - 1), all drawn from ls_b = layer_stream(first_stream + b, l):
//   1. Probabilities by SpGEMM. Q stacks one selection matrix per batch; P = Q * M.
//      - GraphSAGE: Q has one row per (b, v in S_b) with a single 1 at column v, M = A, so row
//        (b, v) of P holds v's distinct in-neighbours weighted by edge multiplicity.
//      - LADIES: Q has one row per batch with a 1 at every v in S_b, M = the entrywise square of
//        the row-normalised (A + I): Ahat[v, u] = (A[v, u] + [u == v]) / (deg(v) + 1), deg = number
//        of in-edges. Row b of P holds p(u) proportional to sum_{v in S_b} Ahat[v, u]^2, Zou et
//        al.'s layer-dependent importance, over the aggregated neighbourhood of S_b (S_b included).
//      Every entry of M is a multiple of 2^-36 (LADIES squares are rounded to the nearest multiple,
//      at least one unit so no candidate is lost), so P, its row sums and prefix sums are exact in
//      double whatever order a backend adds in: this is what makes the GPU's sums (sorted gathers,
//      block-wide scans) and the CPU's agree to the bit. It bounds a LADIES frontier to 2^16 nodes per batch.
//   2. Inverse-transform sampling, row by row, of n = the row's budget entries (GraphSAGE: the
//      fanout; LADIES: the layer size):
//      - n == -1, or n >= the row's entry count without replacement: every entry.
//      - without replacement, in rounds r = 0, 1, ...: with `need` entries still missing and W the
//        row's weights with the already chosen entries zeroed, draw j = 0 .. need - 1 takes the
//        first entry whose inclusive prefix sum of W exceeds u * sum(W), u =
//        u64_to_unit_double(node_bits(seed, round_stream(ls_b, r), key, j)) (the last positive
//        entry if none); draws landing on an entry chosen earlier in the same round are dropped.
//        key = v for GraphSAGE, 0 for LADIES. Chosen entries are emitted in ascending column
//        order. Distinctness holds by construction (a chosen entry weighs zero afterwards), and
//        every round chooses at least one entry, so at most n rounds run.
//      - with replacement (GraphSAGE only): one round of n draws over the full row, emitted in
//        draw order (repeats allowed); nothing for an empty row.
//   3. Extraction and compaction, per batch, into the MiniBatch contract (dst nodes first, then
//      new nodes in order of first appearance):
//      - GraphSAGE: the sampled entries of row (b, v) are v's edges in block l.
//      - LADIES: with C_b = S_b plus the sampled nodes (the layer keeps the batch nodes), block l
//        holds every entry (A + I)[v, u] with v in S_b and u in C_b (R * (A + I) * C_b: the
//        matrix whose squares weighed the draw, so every dst row keeps its self-loop, as
//        LayerSampler's blocks do), in ascending u per v, weighted w(v, u) = ((A + I)[v, u] /
//        P[b, u]) normalised to sum 1 over the row (LADIES' 1/p correction of Ahat[v, u], whose
//        1 / (deg(v) + 1) cancels in the row normalisation; computed in double, the row's sum in
//        the fixed pairwise order of the samplers' pairwise_sum, stored as float). A stored
//        self-loop merges with the added one (weight 2 / P). Block::edge_ids stays empty whatever
//        BulkSamplerOptions::edge_ids says: the added self-loops are not edges of the graph
//        (LayerSampler's blocks carry none either).
// Sampled nodes are therefore distinct per row without replacement, and, unlike NeighborSampler,
// parallel edges count once (with their multiplicity as weight): a row keeps min(fanout, number
// of distinct in-neighbours) entries.
//
// Why LADIES needs the self-loop: a GCN layer over these blocks (graphtier.models.LayerGCN) has
// no separate root weight, so without it a node's own features reach the next layer only
// through sampled neighbours, and a dst node none of whose neighbours was drawn gets no message
// at all. On Cora (layer sizes [256, 256], batch 64, 5 seeds) the blocks without self-loops
// trained to 0.663 test accuracy against 0.774 for LayerSampler's, and train to 0.780 with them
// (docs/benchmarks.md, bulk sampling).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "graphtier/core/cuda_stream.hpp"
#include "graphtier/core/thread_pool.hpp"
#include "graphtier/sample/minibatch.hpp"
#include "graphtier/sample/neighbor_sampler.hpp"

namespace graphtier::sample {

enum class BulkAlgorithm : uint8_t { kGraphSage, kLadies };

struct BulkSamplerOptions {
  BulkAlgorithm algorithm = BulkAlgorithm::kGraphSage;
  /// GraphSAGE: per block (blocks[0] next to the seeds), -1 = all neighbours, 0 = none.
  /// LADIES: nodes sampled per layer (>= 0), blocks[0] first; the layer also keeps its dst nodes.
  std::vector<int64_t> fanouts;
  bool replace = false;   // GraphSAGE only; LADIES always draws without replacement
  /// GraphSAGE: fill Block::edge_ids (first CSC position of the sampled entry). LADIES never does
  /// (its blocks hold the self-loops of A + I, which are not edges; effective_bulk_options).
  bool edge_ids = true;
  uint64_t seed = 0;
};

/// 2^-36: the grid every probability of step 1 lies on.
inline constexpr double kBulkProbabilityUnit = 1.0 / 68719476736.0;
/// The largest LADIES frontier (dst nodes of one batch in one layer) for which sums stay exact.
inline constexpr int64_t kMaxLadiesFrontier = int64_t{1} << 16;

/// The stream of round r of inverse-transform sampling (round 0 is the layer stream itself).
uint64_t round_stream(uint64_t layer_stream, int64_t round);

/// Throws InvalidArgument for bad options or a graph the sampler cannot take (weights given,
/// 2^40 nodes or more).
void check_bulk_inputs(const SampleGraph& graph, const BulkSamplerOptions& options);
/// The options part of check_bulk_inputs.
void check_bulk_options(const BulkSamplerOptions& options);
/// The options the samplers run with (and options() returns): `options` with edge_ids off for
/// LADIES.
BulkSamplerOptions effective_bulk_options(BulkSamplerOptions options);

/// The matrices of step 1 built from the graph once (host memory, owned).
struct BulkMatrices;

/// CPU backend: own CSR SpGEMM (Gustavson, dense accumulator per part) and sampling, batches and
/// rows split over the pool. Thread-safe for concurrent sample() calls.
class BulkSampler {
 public:
  /// Builds A (LADIES: A + I and its squared normalised form) from `graph`: O(E log d) once;
  /// the pool, if any, is used for it. The graph's memory must outlive the sampler.
  BulkSampler(SampleGraph graph, BulkSamplerOptions options, ThreadPool* pool = nullptr);
  ~BulkSampler();
  BulkSampler(BulkSampler&&) noexcept;
  BulkSampler& operator=(BulkSampler&&) noexcept;

  /// Samples k = batches_of_seeds.size() minibatches; batch b draws from stream first_stream + b,
  /// so its result does not depend on k or on the other batches. Seeds are checked per batch as
  /// NeighborSampler checks them (OutOfRange, InvalidArgument for repeats).
  std::vector<MiniBatch> sample(std::span<const std::span<const int64_t>> batches_of_seeds, uint64_t first_stream,
                                ThreadPool* pool = nullptr) const;
  /// The same with one stream per batch: batch b draws from streams[b] (the batches need not be
  /// consecutive, e.g. every P-th batch of an epoch); InvalidArgument unless the sizes agree.
  std::vector<MiniBatch> sample(std::span<const std::span<const int64_t>> batches_of_seeds,
                                std::span<const uint64_t> streams, ThreadPool* pool = nullptr) const;

  const BulkSamplerOptions& options() const noexcept { return options_; }
  const BulkMatrices& matrices() const noexcept { return *matrices_; }

 private:
  SampleGraph graph_;
  BulkSamplerOptions options_;
  std::unique_ptr<BulkMatrices> matrices_;
};

/// CUDA backend: the same samples bit for bit. Step 1 needs no SpGEMM on the GPU: GraphSAGE's
/// rows of P are A's rows, read in place; LADIES' P row of a batch sums the squares' rows of its
/// frontier, gathered, sorted by (batch, column) and reduced by key. Step 2 draws each row with a
/// whole thread block (block-wide prefix sums: a hub row is not scanned by one thread), and the
/// LADIES extraction runs one thread per entry of the frontier's rows. Compaction into
/// MiniBatches runs on the host for sample() and on the GPU for sample_device(). The matrices are
/// copied to the GPU at construction (32-bit column ids: fewer than 2^31 nodes). Throws
/// Unsupported in a build without CUDA or with no visible GPU. Thread-safe: concurrent calls (on
/// any streams) each stage their copies in their own pinned arena from the sampler's pool.
/// Per layer, no synchronous allocation (every temporary is stream-ordered from the device's pool,
/// which keeps its memory), uploads and downloads go through pinned staging reused across calls,
/// and the host waits for the device exactly once per layer (the copy of its results).
class CudaBulkSampler {
 public:
  CudaBulkSampler(SampleGraph graph, BulkSamplerOptions options, int device = 0, ThreadPool* pool = nullptr);
  ~CudaBulkSampler();
  CudaBulkSampler(CudaBulkSampler&&) noexcept;
  CudaBulkSampler& operator=(CudaBulkSampler&&) noexcept;

  /// As BulkSampler::sample, on `cuda_stream` (default: the legacy default stream); the call
  /// returns when the results are on the host. `pool` serves the host-side compaction.
  std::vector<MiniBatch> sample(std::span<const std::span<const int64_t>> batches_of_seeds, uint64_t first_stream,
                                CudaStream cuda_stream = {}, ThreadPool* pool = nullptr) const;
  /// As BulkSampler::sample with one stream per batch.
  std::vector<MiniBatch> sample(std::span<const std::span<const int64_t>> batches_of_seeds,
                                std::span<const uint64_t> streams, CudaStream cuda_stream = {},
                                ThreadPool* pool = nullptr) const;

  /// The same samples left in device memory, one DeviceMiniBatch per batch (to_host() equals
  /// sample()'s batch). Compaction runs on the device too (dst nodes first, then new nodes by
  /// first appearance within each batch); the k batches share their layers' arrays (each batch's
  /// storage holds them all). The host waits once per layer, as sample() does, for each batch's
  /// counts and, but for the last layer, the src nodes the next
  /// layer's selection matrix is built from on the host; the blocks' other arrays never cross.
  /// DeviceMiniBatch::host_syncs counts the layer waits of the call (none when every batch is
  /// empty: its blocks are then zeroed in order on `cuda_stream`). With `input_nodes`, each
  /// batch's input node ids reach the host within the last layer's wait. Memory: each layer's
  /// arrays hold the host's bounds (frontier + sampled-edge bound), not the real sizes.
  std::vector<DeviceMiniBatch> sample_device(std::span<const std::span<const int64_t>> batches_of_seeds,
                                             uint64_t first_stream, CudaStream cuda_stream = {},
                                             const BulkInputNodesSink& input_nodes = {}) const;
  /// The same with one stream per batch.
  std::vector<DeviceMiniBatch> sample_device(std::span<const std::span<const int64_t>> batches_of_seeds,
                                             std::span<const uint64_t> streams, CudaStream cuda_stream = {},
                                             const BulkInputNodesSink& input_nodes = {}) const;

  const BulkSamplerOptions& options() const noexcept { return options_; }

 private:
  struct Impl;
  SampleGraph graph_;
  BulkSamplerOptions options_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace graphtier::sample
