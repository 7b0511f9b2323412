#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <limits>
#include <mutex>
#include <vector>

#include "cuda_check.cuh"
#include "current_device.cuh"
#include "cuda_stream.cuh"
#include "device_scratch.cuh"
#include "pinned_arena.cuh"
#include "graphtier/core/device_memory.hpp"
#include "graphtier/core/error.hpp"
#include "bulk_row_ops.hpp"
#include "bulk_compact.hpp"
#include "cuda/bulk_rows_cuda.cuh"
#include "cuda/bulk_sampler_cuda.hpp"

namespace graphtier::sample::cuda {
namespace {

std::atomic<uint64_t> g_synchronisations{0};

using ::graphtier::cuda::DeviceScratch;

/// Pinned host memory for one call's uploads and downloads: a bump arena. begin() waits for the
/// event recorded after the arena's last copy by whichever call used it before (already complete
/// when that call ended with its synchronisation, so free in steady state), then reuses the memory
/// from the start. Growing mid-call retires the old block until the next begin() instead of
/// freeing it under a copy in flight; cudaMallocHost runs only when a call needs more than ever
/// before.
class StagingArena {
 public:
  StagingArena() = default;
  ~StagingArena() {
    if (done_ != nullptr) {
      cudaEventSynchronize(done_);
      cudaEventDestroy(done_);
    }
  }
  StagingArena(const StagingArena&) = delete;
  StagingArena& operator=(const StagingArena&) = delete;

  void begin() {
    if (done_ == nullptr) GRAPHTIER_CUDA_CHECK(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming));
    GRAPHTIER_CUDA_CHECK(cudaEventSynchronize(done_));
    memory_.reset();
  }
  /// After the call's last copy on `stream`; false when the event could not be recorded (the
  /// arena must then never be reused: a copy may still read it).
  bool end(cudaStream_t stream) noexcept { return cudaEventRecord(done_, stream) == cudaSuccess; }

  void* take(std::size_t bytes) { return memory_.take(bytes); }

 private:
  ::graphtier::cuda::PinnedArena memory_;  // destroyed after the destructor's wait
  cudaEvent_t done_ = nullptr;
};

/// The arenas of one sampler: a call takes one for itself (a new one when every arena is in use
/// by an overlapping call) and gives it back at its end, so concurrent calls never share staging.
class StagingPool {
 public:
  std::unique_ptr<StagingArena> acquire() {
    const std::lock_guard lock(mutex_);
    if (free_.empty()) return std::make_unique<StagingArena>();
    std::unique_ptr<StagingArena> arena = std::move(free_.back());
    free_.pop_back();
    return arena;
  }
  void release(std::unique_ptr<StagingArena> arena) {
    const std::lock_guard lock(mutex_);
    free_.push_back(std::move(arena));
  }

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<StagingArena>> free_;
};

/// One call's arena, taken from the pool for the call's lifetime; its event is recorded on every
/// way out, after the call's last copy (an arena whose event cannot be recorded is leaked, never
/// reused under a copy in flight).
class ArenaLease {
 public:
  ArenaLease(StagingPool& pool, cudaStream_t stream) : pool_(pool), stream_(stream), arena_(pool.acquire()) {
    arena_->begin();
  }
  ~ArenaLease() {
    if (arena_->end(stream_)) {
      pool_.release(std::move(arena_));
    } else {
      static_cast<void>(arena_.release());
    }
  }
  ArenaLease(const ArenaLease&) = delete;
  ArenaLease& operator=(const ArenaLease&) = delete;
  StagingArena& get() const { return *arena_; }

 private:
  StagingPool& pool_;
  cudaStream_t stream_;
  std::unique_ptr<StagingArena> arena_;
};

/// `host` staged in the arena and copied to a new stream-ordered array, asynchronously (at least
/// one element, so the pointer is never null).
template <typename T, typename U = T>
DeviceScratch<T> upload(StagingArena& arena, const std::vector<U>& host, cudaStream_t stream) {
  DeviceScratch<T> d(host.size(), stream);
  if (!host.empty()) {
    T* staged = static_cast<T*>(arena.take(host.size() * sizeof(T)));
    std::copy(host.begin(), host.end(), staged);
    GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(d.get(), staged, host.size() * sizeof(T), cudaMemcpyHostToDevice, stream));
  }
  return d;
}

/// Queues a copy of device[0, n) into the arena; readable after the stream's next synchronisation.
template <typename T>
const T* queue_download(StagingArena& arena, const T* device, std::size_t n, cudaStream_t stream) {
  if (n == 0) return nullptr;
  T* staged = static_cast<T*>(arena.take(n * sizeof(T)));
  GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(staged, device, n * sizeof(T), cudaMemcpyDeviceToHost, stream));
  return staged;
}

/// A CSR matrix on the device (64-bit row pointers, 32-bit columns), in stream-ordered memory
/// (every array has at least one element).
struct DeviceCsr {
  int64_t rows = 0, nnz = 0;
  DeviceScratch<int64_t> rowptr;
  DeviceScratch<int32_t> colind;
  DeviceScratch<double> vals;
};

DeviceCsr upload_csr(StagingArena& arena, const CsrMatrix& m, int64_t num_cols, cudaStream_t stream) {
  GRAPHTIER_EXPECTS(num_cols <= std::numeric_limits<int32_t>::max(), Unsupported,
                    "CUDA bulk sampling keeps 32-bit column ids; the graph has ", num_cols, " nodes");
  DeviceCsr d;
  d.rows = m.rows();
  d.nnz = m.nnz();
  d.rowptr = upload<int64_t>(arena, m.rowptr, stream);
  d.colind = upload<int32_t>(arena, m.cols, stream);
  d.vals = upload<double>(arena, m.vals, stream);
  return d;
}

constexpr int kThreads = 128;
/// Threads of the block that draws one row: a warp for GraphSAGE's many short rows (a hub row is
/// still scanned 32 entries at a time), a wide block for LADIES' one row per batch.
constexpr int kSageRowBlock = 32;
constexpr int kLadiesRowBlock = 256;

int blocks_for(int64_t n) {
  return static_cast<int>(std::clamp<int64_t>((n + kThreads - 1) / kThreads, 1, int64_t{1} << 20));
}
/// One block per row, capped (the kernels loop over the rest).
int row_blocks(int64_t rows) { return static_cast<int>(std::clamp<int64_t>(rows, 1, int64_t{1} << 20)); }

#define GRAPHTIER_BULK_STRIDE(i, n)                                                          \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)

/// The fewest low bits that hold every value in [0, max_value].
int key_bits(int64_t max_value) {
  int bits = 1;
  while (bits < 63 && (int64_t{1} << bits) <= max_value) ++bits;
  return bits;
}

/// In place: offsets[0, n + 1) = the exclusive prefix sums of counts held in offsets[0, n), with
/// offsets[n] zeroed first.
void exclusive_offsets(int64_t* offsets, int64_t n, cudaStream_t stream) {
  GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(offsets + n, 0, sizeof(int64_t), stream));
  std::size_t temp_bytes = 0;
  GRAPHTIER_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, offsets, offsets, n + 1, stream));
  DeviceScratch<char> temp(temp_bytes, stream);
  GRAPHTIER_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.get(), temp_bytes, offsets, offsets, n + 1, stream));
}

/// For the stacked rows r < rows (node dst[r]): counts[r] = the entries row dst[r] of `rowptr`
/// emits under the budget (step 2's rules; budget -1: its degree) and, with `scratch`, the
/// doubles of scratch its draws need (twice the degree when it really draws).
__global__ void row_counts_kernel(const int64_t* dst, int64_t rows, const int64_t* rowptr, int64_t budget,
                                  bool replace, int64_t* counts, int64_t* scratch) {
  GRAPHTIER_BULK_STRIDE(r, rows) {
    const int64_t v = dst[r], n = rowptr[v + 1] - rowptr[v];
    counts[r] = bulk::sampled_count(n, budget, replace);
    if (scratch != nullptr) scratch[r] = bulk::row_draws(n, budget, replace) ? 2 * n : 0;
  }
}

/// Exclusive offsets of `rows` counts computed by row_counts_kernel (no wait).
DeviceScratch<int64_t> row_offsets(const int64_t* dst, int64_t rows, const int64_t* rowptr, int64_t budget,
                                   bool replace, int64_t* scratch, cudaStream_t stream) {
  DeviceScratch<int64_t> offsets(static_cast<std::size_t>(rows + 1), stream);
  row_counts_kernel<<<blocks_for(rows), kThreads, 0, stream>>>(dst, rows, rowptr, budget, replace, offsets.get(),
                                                               scratch);
  GRAPHTIER_CUDA_CHECK_LAUNCH("row_counts_kernel");
  exclusive_offsets(offsets.get(), rows, stream);
  if (scratch != nullptr) exclusive_offsets(scratch, rows, stream);
  return offsets;
}

/// GraphSAGE step 2 read straight from A's rows (P = Q * A is the stacked rows of A: no product),
/// one block per stacked row, then the picks' nodes and first CSC positions.
struct SageDrawArgs {
  const int64_t* dst;            // [rows]: also the draw keys
  const int64_t* batch_offsets;  // [k + 1]
  const uint64_t* layer_streams;  // [k]
  int64_t k, rows, fanout;
  bool replace;
  uint64_t seed;
  const int64_t* a_rowptr;
  const int32_t* a_cols;
  const double* a_vals;
  const int64_t* a_first;
  const int64_t* out_offsets;      // [rows + 1]
  const int64_t* scratch_offsets;  // [rows + 1] doubles: work, then prefix sums
  double* scratch;
  int64_t* picks;
  int64_t* nodes;
  int64_t* edge_ids;  // null when not wanted
};

__global__ void __launch_bounds__(kSageRowBlock) sage_rows_kernel(SageDrawArgs a) {
  __shared__ RowDrawShared<kSageRowBlock> shared;
  for (int64_t r = blockIdx.x; r < a.rows; r += gridDim.x) {
    const int64_t o = a.out_offsets[r], count = a.out_offsets[r + 1] - o;
    if (count == 0) continue;  // the same for the whole block
    const int64_t v = a.dst[r], begin = a.a_rowptr[v], n = a.a_rowptr[v + 1] - begin;
    const int64_t b = bulk::segment_of(a.batch_offsets, a.k, r);
    double* work = a.scratch + a.scratch_offsets[r];
    block_sample_row<kSageRowBlock>(a.a_vals + begin, n, a.fanout, a.replace, a.seed, a.layer_streams[b], v, work,
                                    work + n, a.picks + o, shared);
    for (int64_t i = threadIdx.x; i < count; i += kSageRowBlock) {
      const int64_t entry = begin + a.picks[o + i];
      a.nodes[o + i] = a.a_cols[entry];
      if (a.edge_ids != nullptr) a.edge_ids[o + i] = a.a_first[entry];
    }
    __syncthreads();
  }
}

/// LADIES step 1, gather: the squares' rows of every stacked dst row as keys (batch, column) and
/// values, row r's at [offsets[r], offsets[r + 1]), one thread per entry.
__global__ void gather_square_rows_kernel(const int64_t* dst, const int64_t* batch_offsets, int64_t k, int64_t rows,
                                          const int64_t* offsets, const int64_t* rowptr, const int32_t* cols,
                                          const double* vals, int node_bits, unsigned long long* keys,
                                          double* out_vals) {
  const int64_t total = offsets[rows];
  GRAPHTIER_BULK_STRIDE(e, total) {
    const int64_t r = bulk::segment_of(offsets, rows, e);
    const int64_t b = bulk::segment_of(batch_offsets, k, r);
    const int64_t i = rowptr[dst[r]] + (e - offsets[r]);
    keys[e] = bulk::sequence_key(b, cols[i], node_bits);
    out_vals[e] = vals[i];
  }
}

/// After the sort and the sum by key: P's columns, and p_offsets[b] = the first key of batch >= b
/// (b <= k), so that row b of P is [p_offsets[b], p_offsets[b + 1]).
__global__ void split_keys_kernel(const unsigned long long* keys, const int64_t* num_keys_at, int64_t k, int node_bits,
                                  int64_t* cols, int64_t* offsets) {
  const int64_t n = *num_keys_at;
  const unsigned long long mask = (1ULL << node_bits) - 1;
  GRAPHTIER_BULK_STRIDE(i, n > k ? n : k + 1) {
    if (i < n) cols[i] = static_cast<int64_t>(keys[i] & mask);
    if (i <= k) {
      const unsigned long long first = bulk::sequence_key(i, 0, node_bits);
      int64_t lo = 0, hi = n;
      while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (keys[mid] < first) lo = mid + 1; else hi = mid;
      }
      offsets[i] = lo;
    }
  }
}

/// counts[b] = what row b of P (offsets [k + 1]) emits under the layer size.
__global__ void ladies_draw_counts_kernel(const int64_t* p_offsets, int64_t k, int64_t layer_size, int64_t* counts) {
  GRAPHTIER_BULK_STRIDE(b, k) { counts[b] = bulk::sampled_count(p_offsets[b + 1] - p_offsets[b], layer_size, false); }
}

/// LADIES step 2, one block per batch row of P; writes the sampled nodes.
__global__ void __launch_bounds__(kLadiesRowBlock)
    ladies_rows_kernel(const int64_t* p_offsets, const int64_t* p_cols, const double* p_vals, int64_t k,
                       int64_t layer_size, uint64_t seed, const uint64_t* layer_streams, const int64_t* draw_offsets,
                       double* scratch, int64_t p_bound, int64_t* picks, int64_t* sampled) {
  __shared__ RowDrawShared<kLadiesRowBlock> shared;
  for (int64_t b = blockIdx.x; b < k; b += gridDim.x) {
    const int64_t o = draw_offsets[b], count = draw_offsets[b + 1] - o;
    if (count == 0) continue;
    const int64_t p0 = p_offsets[b], n = p_offsets[b + 1] - p0;
    block_sample_row<kLadiesRowBlock>(p_vals + p0, n, layer_size, false, seed, layer_streams[b], 0, scratch + p0,
                                      scratch + p_bound + p0, picks + o, shared);
    for (int64_t i = threadIdx.x; i < count; i += kLadiesRowBlock) sampled[o + i] = p_cols[p0 + picks[o + i]];
    __syncthreads();
  }
}

/// C_b's keys: (b << node_bits) | node for batch b's frontier rows, then its draws; unused draw
/// slots (past draw_offsets[k]) get (k << node_bits), after every batch.
__global__ void union_keys_kernel(const int64_t* dst, const int64_t* batch_offsets, int64_t rows, const int64_t* drawn,
                                  const int64_t* draw_offsets, int64_t draw_slots, int64_t k, int node_bits,
                                  unsigned long long* keys) {
  GRAPHTIER_BULK_STRIDE(i, rows + draw_slots) {
    if (i < rows) {
      keys[i] = bulk::sequence_key(bulk::segment_of(batch_offsets, k, i), dst[i], node_bits);
      continue;
    }
    const int64_t j = i - rows;
    keys[i] = j < draw_offsets[k] ? bulk::sequence_key(bulk::segment_of(draw_offsets, k, j), drawn[j], node_bits)
                                  : bulk::sequence_key(k, 0, node_bits);
  }
}

/// LADIES step 3 (R * (A + I) * C_b; `a` holds A + I for LADIES), one thread per entry of the
/// frontier rows (gathered positions [a_offsets[r], a_offsets[r + 1]) for row r). kFlag: marks the
/// entries whose column is in C_b; otherwise writes the marked ones at their rank (the exclusive
/// sum of the marks).
struct ExtractArgs {
  const int64_t* dst;
  const int64_t* batch_offsets;
  int64_t k, rows;
  const int64_t* a_offsets;  // [rows + 1]
  const int64_t* a_rowptr;
  const int32_t* a_cols;
  const double* a_vals;
  const int64_t* kept;          // C_b sorted, batch after batch
  const int64_t* kept_offsets;  // [k + 1]
  const int64_t* p_offsets;     // P: one row per batch
  const int64_t* p_cols;
  const double* p_vals;
  int64_t* ranks;               // [total + 1]: the marks, then their exclusive sum
  int64_t* nodes;
  double* terms;                // the entries' ladies_term, for the row sums
};

template <bool kFlag>
__global__ void ladies_extract_kernel(ExtractArgs a) {
  const int64_t total = a.a_offsets[a.rows];
  GRAPHTIER_BULK_STRIDE(e, total) {
    const int64_t r = bulk::segment_of(a.a_offsets, a.rows, e);
    const int64_t b = bulk::segment_of(a.batch_offsets, a.k, r);
    const int64_t i = a.a_rowptr[a.dst[r]] + (e - a.a_offsets[r]);
    const int64_t u = a.a_cols[i];
    if (kFlag) {
      const int64_t kept0 = a.kept_offsets[b];
      a.ranks[e] = bulk::find_sorted(a.kept + kept0, a.kept_offsets[b + 1] - kept0, u) >= 0 ? 1 : 0;
      continue;
    }
    const int64_t o = a.ranks[e];
    if (a.ranks[e + 1] == o) continue;  // not in C_b
    a.nodes[o] = u;
    const int64_t p0 = a.p_offsets[b];
    const double p = a.p_vals[p0 + bulk::find_sorted(a.p_cols + p0, a.p_offsets[b + 1] - p0, u)];
    a.terms[o] = bulk::ladies_term(a.a_vals[i], p);
  }
}

/// indptr[r] = the rank of row r's first gathered entry (r <= rows).
__global__ void ranked_indptr_kernel(const int64_t* a_offsets, const int64_t* ranks, int64_t rows, int64_t* indptr) {
  GRAPHTIER_BULK_STRIDE(r, rows + 1) { indptr[r] = ranks[a_offsets[r]]; }
}

/// Each row's sum of its kept terms in bulk::pairwise_sum's order, then the row's weights: one warp
/// per row. Lane t sums the aligned chunk [t * chunk, (t + 1) * chunk) of the row's terms (chunk =
/// the terms' count padded to a power of two, over 32, at least 1), a subtree of the tree; the
/// lanes' sums are then added in adjacent pairs (offsets 1, 2, 4, 8, 16 towards lane 0), the
/// tree's top levels.
__global__ void ladies_row_weights_kernel(const int64_t* indptr, const double* terms, int64_t rows, float* weights) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32);
  for (int64_t r = (blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x) / 32; r < rows; r += warps) {
    const int64_t o = indptr[r], count = indptr[r + 1] - o;
    if (count == 0) continue;  // the same for the whole warp
    int64_t padded = 1;
    while (padded < count) padded *= 2;
    const int64_t chunk = padded > 32 ? padded / 32 : 1;
    const int64_t begin = lane * chunk;
    const int64_t mine = begin < count ? (count - begin < chunk ? count - begin : chunk) : 0;
    double sum = bulk::pairwise_sum(terms + o + (mine > 0 ? begin : 0), mine);
    for (int offset = 1; offset < 32; offset *= 2) {
      const double right = __shfl_down_sync(0xffffffffU, sum, offset);
      if (lane % (2 * offset) == 0) sum = bulk::add_rn(sum, right);
    }
    sum = __shfl_sync(0xffffffffU, sum, 0);
    for (int64_t i = lane; i < count; i += 32) weights[o + i] = bulk::ladies_weight_of_term(terms[o + i], sum);
  }
}

struct AddDoubles {
  __device__ double operator()(double a, double b) const { return bulk::add_rn(a, b); }
};

/// One layer's draws for every stacked row, in device memory, before compaction (the arrays hold
/// `bound` entries, of which indptr[rows] are real).
struct LayerDraws {
  DeviceScratch<int64_t> dst;            // [rows] the stacked frontier
  DeviceScratch<int64_t> batch_offsets;  // [k + 1]
  DeviceScratch<int64_t> indptr;         // [rows + 1] into the stacked edges
  DeviceScratch<int64_t> nodes;          // [bound] global src ids
  DeviceScratch<int64_t> edge_ids;       // [bound] when asked for (GraphSAGE)
  DeviceScratch<float> weights;          // [bound] LADIES only
  int64_t bound = 0;
};

}  // namespace

struct BulkDevice::State {
  int device = 0;
  DeviceCsr a;                       // LADIES: A + I (BulkMatrices)
  DeviceScratch<int64_t> a_first;    // GraphSAGE only (LADIES blocks carry no edge ids)
  DeviceCsr squares;  // LADIES only
  // A's and the squares' row pointers on the host: the bounds of a layer's arrays.
  std::vector<int64_t> a_rowptr, squares_rowptr;
  mutable StagingPool staging;  // one arena per call in flight

  /// Steps 1 and 2 (and LADIES' extraction) of one layer, queued on `stream`; no wait of ours.
  LayerDraws draws(const bulk::StackedFrontier& frontier, const BulkSamplerOptions& options, int layer,
                   StagingArena& arena, cudaStream_t stream) const;
  LayerDraws graphsage_draws(const bulk::StackedFrontier& frontier, int64_t fanout, bool replace, uint64_t seed,
                             bool edge_ids, StagingArena& arena, cudaStream_t stream) const;
  LayerDraws ladies_draws(const bulk::StackedFrontier& frontier, int64_t layer_size, uint64_t seed,
                          StagingArena& arena, cudaStream_t stream) const;
};

BulkDevice::BulkDevice(const BulkMatrices& m, BulkAlgorithm algorithm, int device) : state_(std::make_unique<State>()) {
  state_->device = device;
  const ::graphtier::cuda::CurrentDevice on_device(device);
  // Checked against what is free before anything is uploaded: A (row pointers, int32 columns,
  // double values), its first positions, and for LADIES the squared matrix.
  const auto csr_bytes = [](const CsrMatrix& c) {
    return static_cast<int64_t>(c.rowptr.size() * sizeof(int64_t)) +
           c.nnz() * static_cast<int64_t>(sizeof(int32_t) + sizeof(double));
  };
  const bool ladies = algorithm == BulkAlgorithm::kLadies;
  require_device_memory(detail::concat("CudaBulkSampler (the adjacency matrix", ladies ? " and its LADIES square" : "",
                                       " of ", m.num_nodes, " nodes, ", m.a.nnz(), " entries)"),
                        csr_bytes(m.a) + static_cast<int64_t>(m.first_position.size() * sizeof(int64_t)) +
                            (ladies ? csr_bytes(m.ladies_squares) : 0),
                        device);
  // Once per sampler, on the legacy default stream (which every blocking stream waits for).
  const cudaStream_t stream = nullptr;
  {
    const ArenaLease lease(state_->staging, stream);
    StagingArena& arena = lease.get();
    state_->a = upload_csr(arena, m.a, m.num_nodes, stream);
    state_->a_first = upload<int64_t>(arena, m.first_position, stream);
    if (algorithm == BulkAlgorithm::kLadies) state_->squares = upload_csr(arena, m.ladies_squares, m.num_nodes, stream);
  }
  state_->a_rowptr = m.a.rowptr;
  if (algorithm == BulkAlgorithm::kLadies) state_->squares_rowptr = m.ladies_squares.rowptr;
  GRAPHTIER_CUDA_CHECK(cudaStreamSynchronize(stream));  // the matrices are in place before any stream uses them
}

BulkDevice::~BulkDevice() = default;

uint64_t bulk_synchronisations() noexcept { return g_synchronisations.load(); }

// Synchronisation budget (bulk_sampler_cuda.hpp): one per layer, the copy of the results (host
// form) or of the per-batch counts and the next frontier (device form). Nothing below waits.

LayerDraws BulkDevice::State::graphsage_draws(const bulk::StackedFrontier& frontier, int64_t fanout, bool replace,
                                              uint64_t seed, bool edge_ids, StagingArena& arena,
                                              cudaStream_t stream) const {
  const int64_t rows = frontier.rows();
  LayerDraws d;
  // The exact output size and the draws' scratch, from A's row pointers on the host.
  int64_t scratch_bound = 0;
  for (const int64_t v : frontier.nodes) {
    const int64_t n = a_rowptr[v + 1] - a_rowptr[v];
    d.bound += bulk::sampled_count(n, fanout, replace);
    if (bulk::row_draws(n, fanout, replace)) scratch_bound += 2 * n;
  }
  d.dst = upload<int64_t>(arena, frontier.nodes, stream);  // also the draw keys
  d.batch_offsets = upload<int64_t>(arena, frontier.offsets, stream);
  DeviceScratch<int64_t> scratch_offsets(static_cast<std::size_t>(rows + 1), stream);
  d.indptr = row_offsets(d.dst.get(), rows, a.rowptr.get(), fanout, replace, scratch_offsets.get(), stream);
  d.nodes = DeviceScratch<int64_t>(static_cast<std::size_t>(d.bound), stream);
  if (edge_ids) d.edge_ids = DeviceScratch<int64_t>(static_cast<std::size_t>(d.bound), stream);
  if (d.bound == 0) return d;  // every row emits nothing (the offsets are all zero)
  const DeviceScratch<uint64_t> streams = upload<uint64_t>(arena, frontier.layer_streams, stream);
  DeviceScratch<double> scratch(static_cast<std::size_t>(scratch_bound), stream);
  DeviceScratch<int64_t> picks(static_cast<std::size_t>(d.bound), stream);
  const SageDrawArgs args{d.dst.get(), d.batch_offsets.get(), streams.get(), frontier.num_batches(), rows, fanout,
                          replace, seed, a.rowptr.get(), a.colind.get(), a.vals.get(), a_first.get(), d.indptr.get(),
                          scratch_offsets.get(), scratch.get(), picks.get(), d.nodes.get(),
                          edge_ids ? d.edge_ids.get() : nullptr};
  sage_rows_kernel<<<row_blocks(rows), kSageRowBlock, 0, stream>>>(args);
  GRAPHTIER_CUDA_CHECK_LAUNCH("sage_rows_kernel");
  return d;
}

LayerDraws BulkDevice::State::ladies_draws(const bulk::StackedFrontier& frontier, int64_t layer_size, uint64_t seed,
                                           StagingArena& arena, cudaStream_t stream) const {
  const int64_t k = frontier.num_batches(), rows = frontier.rows();
  LayerDraws d;
  d.dst = upload<int64_t>(arena, frontier.nodes, stream);
  d.batch_offsets = upload<int64_t>(arena, frontier.offsets, stream);
  // Step 3's bound: the rows' degrees in A; step 1's: their entries in the squares (host copies).
  int64_t gathered = 0;
  for (const int64_t v : frontier.nodes) {
    d.bound += a_rowptr[v + 1] - a_rowptr[v];
    gathered += squares_rowptr[v + 1] - squares_rowptr[v];
  }
  d.nodes = DeviceScratch<int64_t>(static_cast<std::size_t>(d.bound), stream);
  d.weights = DeviceScratch<float>(static_cast<std::size_t>(d.bound), stream);
  if (d.bound == 0) {  // no row has an entry: no edges whatever is drawn
    d.indptr = DeviceScratch<int64_t>(static_cast<std::size_t>(rows + 1), stream);
    GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(d.indptr.get(), 0, static_cast<std::size_t>(rows + 1) * sizeof(int64_t), stream));
    return d;
  }
  const int node_bits = key_bits(a.rows);
  const int end_bit = node_bits + key_bits(k);
  GRAPHTIER_EXPECTS(end_bit <= 64, Unsupported, "CUDA bulk sampling: ", k, " batches of a ", a.rows,
                    "-node graph do not fit 64-bit (batch, node) keys; sample fewer batches at once");
  // Step 1 without a product: row b of P sums the squares' rows of S_b, so gather those rows as
  // (b, column) keys, sort them and add the values of equal keys (every sum is exact, bulk_sampler.hpp,
  // so the order of the additions does not matter).
  const DeviceScratch<int64_t> s_offsets = row_offsets(d.dst.get(), rows, squares.rowptr.get(), -1, false, nullptr, stream);
  DeviceScratch<unsigned long long> keys(static_cast<std::size_t>(gathered), stream), sorted_keys(static_cast<std::size_t>(gathered), stream);
  DeviceScratch<double> vals(static_cast<std::size_t>(gathered), stream), sorted_vals(static_cast<std::size_t>(gathered), stream);
  gather_square_rows_kernel<<<blocks_for(gathered), kThreads, 0, stream>>>(
      d.dst.get(), d.batch_offsets.get(), k, rows, s_offsets.get(), squares.rowptr.get(), squares.colind.get(),
      squares.vals.get(), node_bits, keys.get(), vals.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("gather_square_rows_kernel");
  {
    std::size_t temp_bytes = 0;
    GRAPHTIER_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, keys.get(), sorted_keys.get(), vals.get(),
                                                         sorted_vals.get(), gathered, 0, end_bit, stream));
    DeviceScratch<char> temp(temp_bytes, stream);
    GRAPHTIER_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.get(), temp_bytes, keys.get(), sorted_keys.get(),
                                                         vals.get(), sorted_vals.get(), gathered, 0, end_bit, stream));
  }
  DeviceScratch<int64_t> num_p(1, stream);
  DeviceScratch<double> p_vals(static_cast<std::size_t>(gathered), stream);
  {  // the unique keys go back into `keys`
    std::size_t temp_bytes = 0;
    GRAPHTIER_CUDA_CHECK(cub::DeviceReduce::ReduceByKey(nullptr, temp_bytes, sorted_keys.get(), keys.get(),
                                                        sorted_vals.get(), p_vals.get(), num_p.get(), AddDoubles{},
                                                        gathered, stream));
    DeviceScratch<char> temp(temp_bytes, stream);
    GRAPHTIER_CUDA_CHECK(cub::DeviceReduce::ReduceByKey(temp.get(), temp_bytes, sorted_keys.get(), keys.get(),
                                                        sorted_vals.get(), p_vals.get(), num_p.get(), AddDoubles{},
                                                        gathered, stream));
  }
  DeviceScratch<int64_t> p_cols(static_cast<std::size_t>(gathered), stream), p_offsets(static_cast<std::size_t>(k + 1), stream);
  split_keys_kernel<<<blocks_for(std::max(gathered, k + 1)), kThreads, 0, stream>>>(keys.get(), num_p.get(), k, node_bits,
                                                                                   p_cols.get(), p_offsets.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("split_keys_kernel");
  // Step 2: one block per batch row of P, offsets on the device, arrays sized by a bound.
  DeviceScratch<int64_t> draw_offsets(static_cast<std::size_t>(k + 1), stream);
  ladies_draw_counts_kernel<<<blocks_for(k), kThreads, 0, stream>>>(p_offsets.get(), k, layer_size, draw_offsets.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("ladies_draw_counts_kernel");
  exclusive_offsets(draw_offsets.get(), k, stream);
  const int64_t draw_bound = std::min(gathered, k * layer_size);
  const DeviceScratch<uint64_t> streams = upload<uint64_t>(arena, frontier.layer_streams, stream);
  DeviceScratch<int64_t> sampled(static_cast<std::size_t>(draw_bound), stream);
  if (draw_bound > 0) {
    DeviceScratch<double> scratch(static_cast<std::size_t>(2 * gathered), stream);
    DeviceScratch<int64_t> picks(static_cast<std::size_t>(draw_bound), stream);
    ladies_rows_kernel<<<row_blocks(k), kLadiesRowBlock, 0, stream>>>(
        p_offsets.get(), p_cols.get(), p_vals.get(), k, layer_size, seed, streams.get(), draw_offsets.get(),
        scratch.get(), gathered, picks.get(), sampled.get());
    GRAPHTIER_CUDA_CHECK_LAUNCH("ladies_rows_kernel");
  }
  // C_b on the device: batch b's frontier and draws as keys (b << node_bits) | node, sorted and made
  // unique, then cut by batch. The unused draw slots get batch k, after every batch.
  const int64_t slots = rows + draw_bound;
  DeviceScratch<unsigned long long> union_keys(static_cast<std::size_t>(slots), stream);
  DeviceScratch<unsigned long long> sorted_union(static_cast<std::size_t>(slots), stream);
  DeviceScratch<unsigned long long> unique_keys(static_cast<std::size_t>(slots), stream);
  DeviceScratch<int64_t> num_unique(1, stream);
  union_keys_kernel<<<blocks_for(slots), kThreads, 0, stream>>>(d.dst.get(), d.batch_offsets.get(), rows, sampled.get(),
                                                                draw_offsets.get(), draw_bound, k, node_bits,
                                                                union_keys.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("union_keys_kernel");
  {
    std::size_t temp_bytes = 0;
    GRAPHTIER_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, union_keys.get(), sorted_union.get(), slots,
                                                        0, end_bit, stream));
    DeviceScratch<char> temp(temp_bytes, stream);
    GRAPHTIER_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(temp.get(), temp_bytes, union_keys.get(), sorted_union.get(),
                                                        slots, 0, end_bit, stream));
  }
  {
    std::size_t temp_bytes = 0;
    GRAPHTIER_CUDA_CHECK(cub::DeviceSelect::Unique(nullptr, temp_bytes, sorted_union.get(), unique_keys.get(),
                                                   num_unique.get(), slots, stream));
    DeviceScratch<char> temp(temp_bytes, stream);
    GRAPHTIER_CUDA_CHECK(cub::DeviceSelect::Unique(temp.get(), temp_bytes, sorted_union.get(), unique_keys.get(),
                                                   num_unique.get(), slots, stream));
  }
  DeviceScratch<int64_t> kept(static_cast<std::size_t>(slots), stream);
  DeviceScratch<int64_t> kept_offsets(static_cast<std::size_t>(k + 1), stream);
  split_keys_kernel<<<blocks_for(std::max(slots, k + 1)), kThreads, 0, stream>>>(unique_keys.get(), num_unique.get(), k,
                                                                                node_bits, kept.get(), kept_offsets.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("split_keys_kernel");
  // Step 3, one thread per entry of the frontier's rows of A: mark, rank, write; then a warp per
  // row for its sum (in the host's tree order) and its weights.
  const DeviceScratch<int64_t> a_offsets = row_offsets(d.dst.get(), rows, a.rowptr.get(), -1, false, nullptr, stream);
  DeviceScratch<int64_t> ranks(static_cast<std::size_t>(d.bound + 1), stream);
  DeviceScratch<double> terms(static_cast<std::size_t>(d.bound), stream);
  ExtractArgs e{d.dst.get(), d.batch_offsets.get(), k, rows, a_offsets.get(), a.rowptr.get(), a.colind.get(),
                a.vals.get(), kept.get(), kept_offsets.get(), p_offsets.get(), p_cols.get(), p_vals.get(),
                ranks.get(), d.nodes.get(), terms.get()};
  ladies_extract_kernel<true><<<blocks_for(d.bound), kThreads, 0, stream>>>(e);
  GRAPHTIER_CUDA_CHECK_LAUNCH("ladies_extract_kernel<true>");
  exclusive_offsets(ranks.get(), d.bound, stream);
  ladies_extract_kernel<false><<<blocks_for(d.bound), kThreads, 0, stream>>>(e);
  GRAPHTIER_CUDA_CHECK_LAUNCH("ladies_extract_kernel<false>");
  d.indptr = DeviceScratch<int64_t>(static_cast<std::size_t>(rows + 1), stream);
  ranked_indptr_kernel<<<blocks_for(rows + 1), kThreads, 0, stream>>>(a_offsets.get(), ranks.get(), rows, d.indptr.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("ranked_indptr_kernel");
  // A warp per row: 4 rows per block of 128.
  ladies_row_weights_kernel<<<static_cast<int>(std::clamp<int64_t>((rows + 3) / 4, 1, int64_t{1} << 20)), kThreads, 0,
                              stream>>>(d.indptr.get(), terms.get(), rows, d.weights.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("ladies_row_weights_kernel");
  return d;
}

LayerDraws BulkDevice::State::draws(const bulk::StackedFrontier& frontier, const BulkSamplerOptions& options,
                                    int layer, StagingArena& arena, cudaStream_t stream) const {
  const int64_t f = options.fanouts[static_cast<std::size_t>(layer)];
  return options.algorithm == BulkAlgorithm::kLadies
             ? ladies_draws(frontier, f, options.seed, arena, stream)
             : graphsage_draws(frontier, f, options.replace, options.seed, options.edge_ids, arena, stream);
}

bulk::StackedDraws BulkDevice::host_layer(const bulk::StackedFrontier& frontier, const BulkSamplerOptions& options,
                                          int layer, CudaStream cuda_stream) const {
  const cudaStream_t stream = ::graphtier::cuda::native(cuda_stream);
  const ::graphtier::cuda::CurrentDevice on_device(state_->device);
  const int64_t rows = frontier.rows();
  bulk::StackedDraws d;
  d.indptr.assign(static_cast<std::size_t>(rows + 1), 0);
  if (rows == 0) return d;
  const ArenaLease lease(state_->staging, stream);
  StagingArena& arena = lease.get();
  const LayerDraws draws_d = state_->draws(frontier, options, layer, arena, stream);
  if (draws_d.bound == 0) return d;  // every row emits nothing
  const bool ladies = options.algorithm == BulkAlgorithm::kLadies;
  const auto bound = static_cast<std::size_t>(draws_d.bound);
  const int64_t* indptr = queue_download(arena, draws_d.indptr.get(), static_cast<std::size_t>(rows + 1), stream);
  const int64_t* staged_nodes = queue_download(arena, draws_d.nodes.get(), bound, stream);
  const int64_t* staged_ids = options.edge_ids ? queue_download(arena, draws_d.edge_ids.get(), bound, stream) : nullptr;
  const float* staged_weights = ladies ? queue_download(arena, draws_d.weights.get(), bound, stream) : nullptr;
  g_synchronisations.fetch_add(1);
  GRAPHTIER_CUDA_CHECK(cudaStreamSynchronize(stream));  // the layer's one synchronisation
  d.indptr.assign(indptr, indptr + rows + 1);
  const int64_t total = d.indptr[rows];
  d.nodes.assign(staged_nodes, staged_nodes + total);
  if (options.edge_ids) d.edge_ids.assign(staged_ids, staged_ids + total);
  if (ladies) d.weights.assign(staged_weights, staged_weights + total);
  return d;
}

namespace {

/// Keeps a scratch array alive in the storage of the DeviceMiniBatches that share it (freed in
/// order on its stream).
template <typename T>
std::shared_ptr<void> keep(DeviceScratch<T>&& array) {
  auto owner = std::make_shared<DeviceScratch<T>>(std::move(array));
  T* data = owner->get();
  return std::shared_ptr<void>(std::move(owner), data);
}

// The device compaction (bulk_compact.hpp), one thread per position or sorted entry.

__global__ void sequence_starts_kernel(const int64_t* offsets, const int64_t* indptr, int64_t k, int64_t* starts) {
  GRAPHTIER_BULK_STRIDE(b, k + 1) { starts[b] = bulk::sequence_start(offsets[b], indptr[offsets[b]]); }
}

__global__ void sequence_keys_kernel(int64_t n, const int64_t* starts, int64_t k, const int64_t* offsets,
                                     const int64_t* dst, const int64_t* indptr, const int64_t* nodes, int node_bits,
                                     unsigned long long* keys, int64_t* positions) {
  GRAPHTIER_BULK_STRIDE(p, n) {
    positions[p] = p;
    if (p >= starts[k]) {  // past the real sequence (the arrays hold the bound): after every batch
      keys[p] = bulk::sequence_key(k, 0, node_bits);
      continue;
    }
    const int64_t b = bulk::segment_of(starts, k, p);
    const int64_t q = p - starts[b], nd = offsets[b + 1] - offsets[b];
    const int64_t node = q < nd ? dst[offsets[b] + q] : nodes[indptr[offsets[b]] + (q - nd)];
    keys[p] = bulk::sequence_key(b, node, node_bits);
  }
}

__global__ void run_starts_kernel(const unsigned long long* sorted_keys, int64_t n, int64_t* flags) {
  GRAPHTIER_BULK_STRIDE(i, n) { flags[i] = bulk::starts_run(sorted_keys, i) ? 1 : 0; }
}

/// run_ids: the inclusive sum of run_starts_kernel's flags. Writes each run's first position and
/// marks (new_flags, zeroed before) the first positions of new nodes.
__global__ void run_firsts_kernel(const unsigned long long* sorted_keys, const int64_t* sorted_positions,
                                  const int64_t* run_ids, int64_t n, const int64_t* starts, int64_t k,
                                  const int64_t* offsets, int64_t* run_first, int64_t* new_flags) {
  GRAPHTIER_BULK_STRIDE(i, n) {
    if (!bulk::starts_run(sorted_keys, i)) continue;
    const int64_t p0 = sorted_positions[i];
    run_first[run_ids[i] - 1] = p0;
    if (p0 >= starts[k]) continue;
    const int64_t b = bulk::segment_of(starts, k, p0);
    if (bulk::is_new_node(p0 - starts[b], offsets[b + 1] - offsets[b])) new_flags[p0] = 1;
  }
}

/// After the exclusive sum of new_flags into ranks: every edge's local id, and every key's node at
/// its place in the batch's src nodes (src_nodes[starts[b] + local id]).
__global__ void compact_write_kernel(const unsigned long long* sorted_keys, const int64_t* sorted_positions,
                                     const int64_t* run_ids, const int64_t* run_first, const int64_t* ranks,
                                     int64_t n, const int64_t* starts, int64_t k, const int64_t* offsets,
                                     const int64_t* indptr, int node_bits, int64_t* local, int64_t* src_nodes) {
  GRAPHTIER_BULK_STRIDE(i, n) {
    const int64_t p = sorted_positions[i];
    if (p >= starts[k]) continue;
    const int64_t p0 = run_first[run_ids[i] - 1];
    const int64_t b = bulk::segment_of(starts, k, p);
    const int64_t s0 = starts[b], nd = offsets[b + 1] - offsets[b];
    const int64_t q = p - s0;
    const int64_t id = bulk::local_id(p0 - s0, nd, ranks[p0] - ranks[s0]);
    if (q >= nd) local[indptr[offsets[b]] + (q - nd)] = id;
    if (p == p0) {
      const unsigned long long mask = (1ULL << node_bits) - 1;
      src_nodes[s0 + id] = static_cast<int64_t>(sorted_keys[i] & mask);
    }
  }
}

/// counts[b] = batch b's src nodes: its dst nodes and its new ones.
__global__ void src_counts_kernel(const int64_t* starts, const int64_t* offsets, const int64_t* ranks, int64_t k,
                                  int64_t* counts) {
  GRAPHTIER_BULK_STRIDE(b, k) { counts[b] = offsets[b + 1] - offsets[b] + ranks[starts[b + 1]] - ranks[starts[b]]; }
}

/// Each batch's indptr rebased to start at 0: batch b's nd_b + 1 entries at rebased[offsets[b] + b].
__global__ void rebase_indptr_kernel(const int64_t* indptr, const int64_t* offsets, int64_t rows, int64_t k,
                                     int64_t* rebased) {
  GRAPHTIER_BULK_STRIDE(t, rows + k) {
    if (t < rows) {
      const int64_t b = bulk::segment_of(offsets, k, t);
      rebased[t + b] = indptr[t] - indptr[offsets[b]];
    } else {
      const int64_t b = t - rows;
      rebased[offsets[b + 1] + b] = indptr[offsets[b + 1]] - indptr[offsets[b]];
    }
  }
}

/// The last layer's src nodes of every batch into the sinks' page-locked memory (mapped).
__global__ void sink_src_nodes_kernel(const int64_t* src_nodes, int64_t n, const int64_t* starts, int64_t k,
                                      const int64_t* counts, int64_t* const* hosts) {
  GRAPHTIER_BULK_STRIDE(p, n) {
    if (p >= starts[k]) continue;
    const int64_t b = bulk::segment_of(starts, k, p);
    const int64_t q = p - starts[b];
    if (q < counts[b] && hosts[b] != nullptr) hosts[b][q] = src_nodes[p];
  }
}

/// One layer's stacked sequences compacted on the device (bulk_compact.hpp): what outlives the
/// layer's wait. The sequences are sized by the bound (n >= rows + edges); the sort's and the
/// scans' temporaries are freed in order on the stream when compact_layer returns.
struct CompactedLayer {
  int64_t n = 0;
  DeviceScratch<int64_t> starts;     // [k + 1] each batch's first position in the sequences
  DeviceScratch<int64_t> src_nodes;  // [n] each batch's src nodes, at its start
  DeviceScratch<int64_t> local;      // [bound] each edge's local src index
  DeviceScratch<int64_t> counts;     // [k] each batch's src node count
  DeviceScratch<int64_t> indptr;     // [rows + k] each batch's indptr, rebased to its first edge
};

CompactedLayer compact_layer(const LayerDraws& d, int64_t rows, int64_t k, int node_bits, int end_bit,
                             cudaStream_t stream) {
  CompactedLayer c;
  const int64_t n = rows + d.bound;
  c.n = n;
  c.starts = DeviceScratch<int64_t>(static_cast<std::size_t>(k + 1), stream);
  sequence_starts_kernel<<<blocks_for(k + 1), kThreads, 0, stream>>>(d.batch_offsets.get(), d.indptr.get(), k,
                                                                     c.starts.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("sequence_starts_kernel");
  DeviceScratch<unsigned long long> keys(static_cast<std::size_t>(n), stream), sorted_keys(static_cast<std::size_t>(n), stream);
  DeviceScratch<int64_t> positions(static_cast<std::size_t>(n), stream), sorted_positions(static_cast<std::size_t>(n), stream);
  sequence_keys_kernel<<<blocks_for(n), kThreads, 0, stream>>>(n, c.starts.get(), k, d.batch_offsets.get(), d.dst.get(),
                                                               d.indptr.get(), d.nodes.get(), node_bits, keys.get(),
                                                               positions.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("sequence_keys_kernel");
  {  // stable: a key's occurrences stay in position order, the first one leading
    std::size_t temp_bytes = 0;
    GRAPHTIER_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, keys.get(), sorted_keys.get(),
                                                         positions.get(), sorted_positions.get(), n, 0, end_bit,
                                                         stream));
    DeviceScratch<char> temp(temp_bytes, stream);
    GRAPHTIER_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.get(), temp_bytes, keys.get(), sorted_keys.get(),
                                                         positions.get(), sorted_positions.get(), n, 0, end_bit,
                                                         stream));
  }
  DeviceScratch<int64_t> run_ids(static_cast<std::size_t>(n), stream), run_first(static_cast<std::size_t>(n), stream);
  run_starts_kernel<<<blocks_for(n), kThreads, 0, stream>>>(sorted_keys.get(), n, run_ids.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("run_starts_kernel");
  {
    std::size_t temp_bytes = 0;
    GRAPHTIER_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, temp_bytes, run_ids.get(), run_ids.get(), n, stream));
    DeviceScratch<char> temp(temp_bytes, stream);
    GRAPHTIER_CUDA_CHECK(cub::DeviceScan::InclusiveSum(temp.get(), temp_bytes, run_ids.get(), run_ids.get(), n, stream));
  }
  DeviceScratch<int64_t> ranks(static_cast<std::size_t>(n + 1), stream);
  GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(ranks.get(), 0, static_cast<std::size_t>(n + 1) * sizeof(int64_t), stream));
  run_firsts_kernel<<<blocks_for(n), kThreads, 0, stream>>>(sorted_keys.get(), sorted_positions.get(), run_ids.get(),
                                                            n, c.starts.get(), k, d.batch_offsets.get(),
                                                            run_first.get(), ranks.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("run_firsts_kernel");
  {
    std::size_t temp_bytes = 0;
    GRAPHTIER_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, ranks.get(), ranks.get(), n + 1, stream));
    DeviceScratch<char> temp(temp_bytes, stream);
    GRAPHTIER_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.get(), temp_bytes, ranks.get(), ranks.get(), n + 1, stream));
  }
  c.src_nodes = DeviceScratch<int64_t>(static_cast<std::size_t>(n), stream);
  c.local = DeviceScratch<int64_t>(static_cast<std::size_t>(d.bound), stream);
  compact_write_kernel<<<blocks_for(n), kThreads, 0, stream>>>(sorted_keys.get(), sorted_positions.get(),
                                                               run_ids.get(), run_first.get(), ranks.get(), n,
                                                               c.starts.get(), k, d.batch_offsets.get(), d.indptr.get(),
                                                               node_bits, c.local.get(), c.src_nodes.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("compact_write_kernel");
  c.counts = DeviceScratch<int64_t>(static_cast<std::size_t>(k), stream);
  src_counts_kernel<<<blocks_for(k), kThreads, 0, stream>>>(c.starts.get(), d.batch_offsets.get(), ranks.get(), k,
                                                            c.counts.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("src_counts_kernel");
  c.indptr = DeviceScratch<int64_t>(static_cast<std::size_t>(rows + k), stream);
  rebase_indptr_kernel<<<blocks_for(rows + k), kThreads, 0, stream>>>(d.indptr.get(), d.batch_offsets.get(), rows, k,
                                                                      c.indptr.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("rebase_indptr_kernel");
  return c;
}

/// A layer whose every batch's frontier is empty: empty blocks with indptr {0}, no wait.
void append_empty_layer(std::vector<DeviceMiniBatch>& batches, bool last, const BulkInputNodesSink& input_nodes,
                        cudaStream_t stream) {
  const auto k = static_cast<int64_t>(batches.size());
  DeviceScratch<int64_t> zeros(static_cast<std::size_t>(k), stream);
  GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(zeros.get(), 0, static_cast<std::size_t>(k) * sizeof(int64_t), stream));
  const std::shared_ptr<void> kept = keep(std::move(zeros));
  for (int64_t b = 0; b < k; ++b) {
    DeviceBlock& block = batches[b].blocks.emplace_back();
    block.indptr = static_cast<const int64_t*>(kept.get()) + b;
    batches[b].storage.push_back(kept);
    if (last && input_nodes) input_nodes(b, 0);
  }
}

/// Queues the copy of the last layer's src nodes into the sinks' page-locked buffers (mapped),
/// completed by the layer's wait. Batch b's input nodes are at most its dst nodes plus every edge
/// of the layer, and distinct.
void sink_input_nodes(const CompactedLayer& c, const bulk::StackedFrontier& frontier, int64_t bound, int64_t num_nodes,
                      const BulkInputNodesSink& input_nodes, StagingArena& arena, cudaStream_t stream) {
  const int64_t k = frontier.num_batches();
  auto* hosts = static_cast<int64_t**>(arena.take(static_cast<std::size_t>(k) * sizeof(int64_t*)));
  for (int64_t b = 0; b < k; ++b) {
    const int64_t batch_bound = std::min(frontier.offsets[b + 1] - frontier.offsets[b] + bound, num_nodes);
    hosts[b] = nullptr;
    int64_t* host = input_nodes(b, batch_bound);
    if (batch_bound == 0 || host == nullptr) continue;
    void* mapped = nullptr;
    GRAPHTIER_CUDA_CHECK(cudaHostGetDevicePointer(&mapped, host, 0));
    hosts[b] = static_cast<int64_t*>(mapped);
  }
  DeviceScratch<int64_t*> d_hosts(static_cast<std::size_t>(k), stream);
  GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(d_hosts.get(), hosts, static_cast<std::size_t>(k) * sizeof(int64_t*),
                                       cudaMemcpyHostToDevice, stream));
  sink_src_nodes_kernel<<<blocks_for(c.n), kThreads, 0, stream>>>(c.src_nodes.get(), c.n, c.starts.get(), k,
                                                                  c.counts.get(), d_hosts.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("sink_src_nodes_kernel");
}

/// After the layer's wait: each batch's block views the layer's arrays (kept alive by every batch
/// that shares them), and but for the last layer its frontier becomes its src nodes.
void append_layer_blocks(std::vector<DeviceMiniBatch>& batches, std::vector<std::vector<int64_t>>& frontiers,
                         const bulk::StackedFrontier& frontier, CompactedLayer& c, LayerDraws& d,
                         const BulkSamplerOptions& options, const int64_t* staged_starts,
                         const int64_t* staged_counts, const int64_t* staged_src) {
  const std::shared_ptr<void> kept_src = keep(std::move(c.src_nodes)), kept_indptr = keep(std::move(c.indptr)),
                              kept_local = keep(std::move(c.local));
  const std::shared_ptr<void> kept_ids = options.edge_ids ? keep(std::move(d.edge_ids)) : nullptr;
  const bool ladies = options.algorithm == BulkAlgorithm::kLadies;
  const std::shared_ptr<void> kept_weights = ladies ? keep(std::move(d.weights)) : nullptr;
  for (std::size_t b = 0; b < batches.size(); ++b) {
    const int64_t r0 = frontier.offsets[b], r1 = frontier.offsets[b + 1];
    const int64_t s0 = staged_starts[b], e0 = s0 - r0, e1 = staged_starts[b + 1] - r1;
    DeviceMiniBatch& batch = batches[b];
    DeviceBlock& block = batch.blocks.emplace_back();
    block.num_dst = r1 - r0;
    block.num_src = staged_counts[b];
    block.num_edges = e1 - e0;
    block.src_nodes = static_cast<const int64_t*>(kept_src.get()) + s0;
    block.indptr = static_cast<const int64_t*>(kept_indptr.get()) + r0 + static_cast<int64_t>(b);
    block.indices = static_cast<const int64_t*>(kept_local.get()) + e0;
    if (kept_ids) block.edge_ids = static_cast<const int64_t*>(kept_ids.get()) + e0;
    if (kept_weights) block.weights = static_cast<const float*>(kept_weights.get()) + e0;
    for (const auto* kept : {&kept_src, &kept_indptr, &kept_local, &kept_ids, &kept_weights}) {
      if (*kept) batch.storage.push_back(*kept);
    }
    ++batch.host_syncs;
    if (staged_src != nullptr) frontiers[b].assign(staged_src + s0, staged_src + s0 + block.num_src);
  }
}

}  // namespace

std::vector<DeviceMiniBatch> BulkDevice::sample_device(std::span<const std::span<const int64_t>> batches_of_seeds,
                                                       std::span<const uint64_t> streams,
                                                       const BulkSamplerOptions& options, int64_t num_nodes,
                                                       CudaStream cuda_stream,
                                                       const BulkInputNodesSink& input_nodes) const {
  const cudaStream_t stream = ::graphtier::cuda::native(cuda_stream);
  const ::graphtier::cuda::CurrentDevice on_device(state_->device);
  const auto k = static_cast<int64_t>(batches_of_seeds.size());
  GRAPHTIER_EXPECTS(streams.size() == batches_of_seeds.size(), InvalidArgument, "bulk sampling of ", k,
                    " batches got ", streams.size(), " streams (one per batch)");
  std::vector<DeviceMiniBatch> batches(static_cast<std::size_t>(k));
  std::vector<std::vector<int64_t>> frontiers(static_cast<std::size_t>(k));  // host: the next Q's rows
  for (int64_t b = 0; b < k; ++b) {
    check_seeds(batches_of_seeds[b], num_nodes);
    batches[b].seeds.assign(batches_of_seeds[b].begin(), batches_of_seeds[b].end());
    batches[b].stream = cuda_stream;
    batches[b].device = state_->device;
    frontiers[b] = batches[b].seeds;
  }
  const auto layers = options.fanouts.size();
  const int node_bits = key_bits(state_->a.rows);
  const int end_bit = node_bits + key_bits(k);
  GRAPHTIER_EXPECTS(end_bit <= 64, Unsupported, "CUDA bulk sampling: ", k, " batches of a ", state_->a.rows,
                    "-node graph do not fit 64-bit compaction keys; sample fewer batches at once");
  std::vector<std::span<const int64_t>> dsts(static_cast<std::size_t>(k));
  for (std::size_t l = 0; l < layers; ++l) {
    const bool last = l + 1 == layers;
    for (int64_t b = 0; b < k; ++b) dsts[b] = frontiers[b];
    const bulk::StackedFrontier frontier = bulk::stack_frontier(dsts, streams, options, static_cast<int>(l));
    const int64_t rows = frontier.rows();
    if (rows == 0) {
      append_empty_layer(batches, last, input_nodes, stream);
      continue;
    }
    const ArenaLease lease(state_->staging, stream);  // this layer's own staging: calls may overlap
    StagingArena& arena = lease.get();
    LayerDraws d = state_->draws(frontier, options, static_cast<int>(l), arena, stream);
    CompactedLayer c = compact_layer(d, rows, k, node_bits, end_bit, stream);
    if (last && input_nodes) sink_input_nodes(c, frontier, d.bound, num_nodes, input_nodes, arena, stream);
    const int64_t* staged_starts = queue_download(arena, c.starts.get(), static_cast<std::size_t>(k + 1), stream);
    const int64_t* staged_counts = queue_download(arena, c.counts.get(), static_cast<std::size_t>(k), stream);
    // The next layer's Q is built on the host from the src nodes (the blocks' other arrays stay).
    const int64_t* staged_src =
        last ? nullptr : queue_download(arena, c.src_nodes.get(), static_cast<std::size_t>(c.n), stream);
    g_synchronisations.fetch_add(1);
    GRAPHTIER_CUDA_CHECK(cudaStreamSynchronize(stream));  // the layer's one synchronisation
    append_layer_blocks(batches, frontiers, frontier, c, d, options, staged_starts, staged_counts, staged_src);
  }
  return batches;
}

}  // namespace graphtier::sample::cuda
