#include <cuda_runtime.h>
#include <cusparse.h>

#include <algorithm>
#include <atomic>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <cub/device/device_segmented_sort.cuh>
#include <limits>
#include <vector>

#include "cuda_check.cuh"
#include "cuda_stream.cuh"
#include "cusparse_check.cuh"
#include "device_scratch.cuh"
#include "pinned_arena.cuh"
#include "graphtier/core/error.hpp"
#include "bulk_row_ops.hpp"
#include "bulk_compact.hpp"
#include "cuda/bulk_sampler_cuda.hpp"

namespace graphtier::sample::cuda {
namespace {

std::atomic<uint64_t> g_synchronisations{0};

using ::graphtier::cuda::DeviceScratch;

/// Pinned host memory for one layer call's uploads and downloads: a bump arena. begin() waits for
/// the event the previous call recorded after its last copy (already complete when that call
/// ended with its synchronisation, so free in steady state), then reuses the memory from the
/// start. Growing mid-call retires the old block until the next begin() instead of freeing it under
/// a copy in flight; cudaMallocHost runs only when a call needs more than ever before.
class PinnedArena {
 public:
  PinnedArena() = default;
  ~PinnedArena() {
    if (done_ != nullptr) {
      cudaEventSynchronize(done_);
      cudaEventDestroy(done_);
    }
  }
  PinnedArena(const PinnedArena&) = delete;
  PinnedArena& operator=(const PinnedArena&) = delete;

  void begin() {
    if (done_ == nullptr) GRAPHTIER_CUDA_CHECK(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming));
    GRAPHTIER_CUDA_CHECK(cudaEventSynchronize(done_));
    memory_.reset();
  }
  /// After the call's last copy on `stream` (from a destructor: an error here shows at the next
  /// begin()'s wait).
  void end(cudaStream_t stream) noexcept { cudaEventRecord(done_, stream); }

  void* take(std::size_t bytes) { return memory_.take(bytes); }

 private:
  ::graphtier::cuda::PinnedArena memory_;  // destroyed after the destructor's wait
  cudaEvent_t done_ = nullptr;
};

/// Records the arena's event on every way out of a layer call.
struct ArenaCall {
  PinnedArena& arena;
  cudaStream_t stream;
  ArenaCall(PinnedArena& a, cudaStream_t s) : arena(a), stream(s) { arena.begin(); }
  ~ArenaCall() { arena.end(stream); }
  ArenaCall(const ArenaCall&) = delete;
  ArenaCall& operator=(const ArenaCall&) = delete;
};

/// `host` staged in the arena and copied to a new stream-ordered array, asynchronously (at least
/// one element, so the pointer is never null).
template <typename T, typename U = T>
DeviceScratch<T> upload(PinnedArena& arena, const std::vector<U>& host, cudaStream_t stream) {
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
const T* queue_download(PinnedArena& arena, const T* device, std::size_t n, cudaStream_t stream) {
  if (n == 0) return nullptr;
  T* staged = static_cast<T*>(arena.take(n * sizeof(T)));
  GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(staged, device, n * sizeof(T), cudaMemcpyDeviceToHost, stream));
  return staged;
}

/// CSR on the device in cuSPARSE's 32-bit index form, in stream-ordered memory (every array has
/// at least one element: an empty product never hands cuSPARSE a null pointer).
struct DeviceCsr {
  int64_t rows = 0, cols = 0, nnz = 0;
  DeviceScratch<int32_t> rowptr, colind;
  DeviceScratch<double> vals;
};

DeviceCsr upload_csr(PinnedArena& arena, const CsrMatrix& m, int64_t num_cols, cudaStream_t stream) {
  GRAPHTIER_EXPECTS(m.nnz() < std::numeric_limits<int32_t>::max() && num_cols < std::numeric_limits<int32_t>::max(),
                    Unsupported, "CUDA bulk sampling: cuSPARSE SpGEMM takes 32-bit indices; the matrix has ", m.nnz(),
                    " entries and ", num_cols, " columns");
  DeviceCsr d;
  d.rows = m.rows();
  d.cols = num_cols;
  d.nnz = m.nnz();
  d.rowptr = upload<int32_t>(arena, m.rowptr, stream);
  d.colind = upload<int32_t>(arena, m.cols, stream);
  d.vals = upload<double>(arena, m.vals, stream);
  return d;
}

constexpr int kThreads = 128;

int blocks_for(int64_t n) { return static_cast<int>((n + kThreads - 1) / kThreads); }

/// The fewest low bits that hold every value in [0, max_value].
int key_bits(int64_t max_value) {
  int bits = 1;
  while (bits < 63 && (int64_t{1} << bits) <= max_value) ++bits;
  return bits;
}

__device__ int64_t batch_of_row(const int64_t* offsets, int64_t k, int64_t r) {
  int64_t lo = 0, hi = k;  // the last b with offsets[b] <= r
  while (hi - lo > 1) {
    const int64_t mid = (lo + hi) / 2;
    if (offsets[mid] <= r) lo = mid; else hi = mid;
  }
  return lo;
}

/// Step 2 for stacked row r of P, then (GraphSAGE) the entry's node and first CSC position.
struct DrawArgs {
  const int32_t* p_rowptr;
  const int32_t* p_cols;
  const double* p_vals;
  double* work;
  double* prefix;
  const int64_t* out_offsets;  // [rows + 1]
  int64_t* picks;
  int64_t* nodes;
  const int64_t* keys;  // [rows] the draw key (node v for GraphSAGE, 0 for LADIES)
  const int64_t* batch_offsets;  // [k + 1] rows of each batch
  const uint64_t* layer_streams;  // [k]
  int64_t k;
  int64_t rows;
  int64_t budget;
  bool replace;
  uint64_t seed;
  // GraphSAGE edge ids (null when not wanted).
  const int32_t* a_rowptr;
  const int32_t* a_cols;
  const int64_t* a_first;
  int64_t* edge_ids;
};

__global__ void draw_rows_kernel(DrawArgs a) {
  const int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (r >= a.rows) return;
  const int64_t p0 = a.p_rowptr[r], n = a.p_rowptr[r + 1] - p0;
  const int64_t o = a.out_offsets[r], count = a.out_offsets[r + 1] - o;
  if (count == 0) return;
  const int64_t b = batch_of_row(a.batch_offsets, a.k, r);
  bulk::sample_row(a.p_vals + p0, n, a.budget, a.replace, a.seed, a.layer_streams[b], a.keys[r], a.work + p0,
                   a.prefix + p0, a.picks + o);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t u = a.p_cols[p0 + a.picks[o + i]];
    a.nodes[o + i] = u;
    if (a.edge_ids != nullptr) {
      const int64_t v = a.keys[r];
      const int64_t begin = a.a_rowptr[v];
      a.edge_ids[o + i] = a.a_first[begin + bulk::find_sorted(a.a_cols + begin, a.a_rowptr[v + 1] - begin, u)];
    }
  }
}

/// LADIES step 3 (R * A * C_b) for stacked dst row r: pass 1 counts, pass 2 writes.
struct ExtractArgs {
  const int64_t* dst_nodes;  // [rows]
  const int64_t* batch_offsets;
  int64_t k;
  int64_t rows;
  const int32_t* a_rowptr;
  const int32_t* a_cols;
  const double* a_vals;
  const int64_t* a_first;
  const int64_t* kept;          // C_b sorted, batch after batch
  const int64_t* kept_offsets;  // [k + 1]
  const int32_t* p_rowptr;      // P: one row per batch
  const int32_t* p_cols;
  const double* p_vals;
  int64_t* counts;              // pass 1 output [rows]
  const int64_t* out_offsets;   // pass 2 input [rows + 1]
  int64_t* nodes;
  int64_t* edge_ids;            // null when not wanted
  float* weights;
};

template <bool kWrite>
__global__ void ladies_extract_kernel(ExtractArgs a) {
  const int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (r >= a.rows) return;
  const int64_t b = batch_of_row(a.batch_offsets, a.k, r);
  const int64_t v = a.dst_nodes[r];
  const int64_t* kept = a.kept + a.kept_offsets[b];
  const int64_t num_kept = a.kept_offsets[b + 1] - a.kept_offsets[b];
  const int64_t p0 = a.p_rowptr[b], pn = a.p_rowptr[b + 1] - p0;
  int64_t count = 0;
  double sum = 0;
  // The same order of additions as bulk::ladies_row_sum on the host: ascending column.
  for (int64_t i = a.a_rowptr[v]; i < a.a_rowptr[v + 1]; ++i) {
    const int64_t u = a.a_cols[i];
    if (bulk::find_sorted(kept, num_kept, u) < 0) continue;
    ++count;
    if (kWrite) sum = bulk::add_rn(sum, bulk::div_rn(a.a_vals[i], a.p_vals[p0 + bulk::find_sorted(a.p_cols + p0, pn, u)]));
  }
  if (!kWrite) {
    a.counts[r] = count;
    return;
  }
  int64_t o = a.out_offsets[r];
  for (int64_t i = a.a_rowptr[v]; i < a.a_rowptr[v + 1]; ++i) {
    const int64_t u = a.a_cols[i];
    if (bulk::find_sorted(kept, num_kept, u) < 0) continue;
    a.nodes[o] = u;
    if (a.edge_ids != nullptr) a.edge_ids[o] = a.a_first[i];
    a.weights[o] = bulk::ladies_weight(a.a_vals[i], a.p_vals[p0 + bulk::find_sorted(a.p_cols + p0, pn, u)], sum);
    ++o;
  }
}

/// C_b's keys: (b << node_bits) | node for batch b's frontier rows, then its draws; unused draw
/// slots (past draw_offsets[k]) get (k << node_bits), after every batch.
__global__ void union_keys_kernel(const int64_t* dst, const int64_t* batch_offsets, int64_t rows, const int64_t* drawn,
                                  const int64_t* draw_offsets, int64_t draw_slots, int64_t k, int node_bits,
                                  unsigned long long* keys) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= rows + draw_slots) return;
  if (i < rows) {
    keys[i] = (static_cast<unsigned long long>(batch_of_row(batch_offsets, k, i)) << node_bits) |
              static_cast<unsigned long long>(dst[i]);
    return;
  }
  const int64_t j = i - rows;
  keys[i] = j < draw_offsets[k] ? (static_cast<unsigned long long>(batch_of_row(draw_offsets, k, j)) << node_bits) |
                                      static_cast<unsigned long long>(drawn[j])
                                : static_cast<unsigned long long>(k) << node_bits;
}

/// kept[i] = the node of unique key i; kept_offsets[b] = the first key of batch >= b (b <= k), so
/// that batch b's kept set is kept[kept_offsets[b], kept_offsets[b + 1]) and the padding (batch k)
/// falls outside every set.
__global__ void kept_sets_kernel(const unsigned long long* keys, const int64_t* num_keys_at, int64_t k, int node_bits,
                                 int64_t* kept, int64_t* kept_offsets) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  const int64_t n = *num_keys_at;
  const unsigned long long mask = (1ull << node_bits) - 1;
  if (i < n) kept[i] = static_cast<int64_t>(keys[i] & mask);
  if (i <= k) {
    const unsigned long long first = static_cast<unsigned long long>(i) << node_bits;
    int64_t lo = 0, hi = n;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (keys[mid] < first) lo = mid + 1; else hi = mid;
    }
    kept_offsets[i] = lo;
  }
}

/// counts[r] = the entries row r of P emits (step 2's rules), r < rows.
__global__ void sampled_counts_kernel(const int32_t* rowptr, int64_t rows, int64_t budget, bool replace,
                                      int64_t* counts) {
  const int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (r >= rows) return;
  counts[r] = bulk::sampled_count(rowptr[r + 1] - rowptr[r], budget, replace);
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

/// Device offsets[r] for the rows of P under a budget: counts, then the scan. No synchronisation.
DeviceScratch<int64_t> sampled_offsets(const DeviceCsr& p, int64_t budget, bool replace, cudaStream_t stream) {
  DeviceScratch<int64_t> offsets(static_cast<std::size_t>(p.rows + 1), stream);
  if (p.rows > 0) {
    sampled_counts_kernel<<<blocks_for(p.rows), kThreads, 0, stream>>>(p.rowptr.get(), p.rows, budget, replace,
                                                                        offsets.get());
    GRAPHTIER_CUDA_CHECK_LAUNCH("sampled_counts_kernel");
  }
  exclusive_offsets(offsets.get(), p.rows, stream);
  return offsets;
}

/// An upper bound of Σ_r sampled_count(nnz of row r, budget, replace) from P's size alone.
int64_t sampled_bound(const DeviceCsr& p, int64_t budget, bool replace) {
  if (budget < 0) return p.nnz;
  const int64_t per_row = p.rows * budget;
  return replace ? (p.nnz == 0 ? 0 : per_row) : std::min(p.nnz, per_row);
}

/// One layer's draws for every stacked row, in device memory, before compaction (the arrays hold
/// `bound` entries, of which indptr[rows] are real).
struct LayerDraws {
  DeviceScratch<int64_t> dst;            // [rows] the stacked frontier
  DeviceScratch<int64_t> batch_offsets;  // [k + 1]
  DeviceScratch<int64_t> indptr;         // [rows + 1] into the stacked edges
  DeviceScratch<int64_t> nodes;          // [bound] global src ids
  DeviceScratch<int64_t> edge_ids;       // [bound] when asked for
  DeviceScratch<float> weights;          // [bound] LADIES only
  int64_t bound = 0;
};

}  // namespace

struct BulkDevice::State {
  int device = 0;
  cusparseHandle_t handle = nullptr;
  DeviceCsr a;
  DeviceScratch<int64_t> a_first;
  DeviceCsr squares;  // LADIES only
  std::vector<int64_t> a_rowptr;  // A's row pointers on the host: the bound of a LADIES extraction
  mutable PinnedArena arena;      // staging of every upload and download (calls do not overlap)
  ~State() {
    if (handle != nullptr) cusparseDestroy(handle);
  }

  /// Steps 1 and 2 (and LADIES' extraction) of one layer, queued on `stream`; no wait of ours.
  /// The caller holds an ArenaCall.
  LayerDraws draws(const bulk::StackedFrontier& frontier, const BulkSamplerOptions& options, int layer,
                   cudaStream_t stream) const;
  LayerDraws graphsage_draws(const bulk::StackedFrontier& frontier, int64_t fanout, bool replace, uint64_t seed,
                             bool edge_ids, cudaStream_t stream) const;
  LayerDraws ladies_draws(const bulk::StackedFrontier& frontier, int64_t layer_size, uint64_t seed, bool edge_ids,
                          cudaStream_t stream) const;

  /// P = Q * m with rows sorted by column (cuSPARSE does not promise sorted output). Every
  /// temporary is stream-ordered; no synchronisation of ours (cuSPARSE's SpGEMM waits for the
  /// product's size inside cusparseSpGEMM_compute).
  DeviceCsr spgemm(const std::vector<int64_t>& q_rowptr, const std::vector<int64_t>& q_cols, const DeviceCsr& m,
                   cudaStream_t stream) const {
    DeviceCsr p;
    p.rows = static_cast<int64_t>(q_rowptr.size()) - 1;
    p.cols = m.cols;
    p.rowptr = DeviceScratch<int32_t>(static_cast<std::size_t>(p.rows + 1), stream);
    if (q_cols.empty() || m.nnz == 0) {
      GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(p.rowptr.get(), 0, static_cast<std::size_t>(p.rows + 1) * sizeof(int32_t), stream));
      p.colind = DeviceScratch<int32_t>(1, stream);
      p.vals = DeviceScratch<double>(1, stream);
      return p;
    }
    GRAPHTIER_EXPECTS(static_cast<int64_t>(q_cols.size()) < std::numeric_limits<int32_t>::max(), Unsupported,
                      "CUDA bulk sampling: ", q_cols.size(), " stacked frontier nodes need 64-bit indices; sample fewer batches at once");
    const DeviceScratch<int32_t> qr = upload<int32_t>(arena, q_rowptr, stream), qc = upload<int32_t>(arena, q_cols, stream);
    const DeviceScratch<double> qv = upload<double>(arena, std::vector<double>(q_cols.size(), 1.0), stream);
    GRAPHTIER_CUSPARSE_CHECK(cusparseSetStream(handle, stream));
    cusparseSpMatDescr_t mq = nullptr, mm = nullptr, mp = nullptr;
    cusparseSpGEMMDescr_t desc = nullptr;
    const auto release = [&] {
      if (mq != nullptr) cusparseDestroySpMat(mq);
      if (mm != nullptr) cusparseDestroySpMat(mm);
      if (mp != nullptr) cusparseDestroySpMat(mp);
      if (desc != nullptr) cusparseSpGEMM_destroyDescr(desc);
    };
    try {
      GRAPHTIER_CUSPARSE_CHECK(cusparseCreateCsr(&mq, p.rows, m.rows, static_cast<int64_t>(q_cols.size()), qr.get(), qc.get(), qv.get(),
                                    CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
      GRAPHTIER_CUSPARSE_CHECK(cusparseCreateCsr(&mm, m.rows, m.cols, m.nnz, m.rowptr.get(), m.colind.get(), m.vals.get(),
                                    CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
      GRAPHTIER_CUSPARSE_CHECK(cusparseCreateCsr(&mp, p.rows, m.cols, 0, p.rowptr.get(), nullptr, nullptr, CUSPARSE_INDEX_32I,
                                    CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
      GRAPHTIER_CUSPARSE_CHECK(cusparseSpGEMM_createDescr(&desc));
      const double alpha = 1.0, beta = 0.0;
      constexpr auto kOp = CUSPARSE_OPERATION_NON_TRANSPOSE;
      constexpr auto kAlg = CUSPARSE_SPGEMM_DEFAULT;
      std::size_t size1 = 0, size2 = 0;
      GRAPHTIER_CUSPARSE_CHECK(cusparseSpGEMM_workEstimation(handle, kOp, kOp, &alpha, mq, mm, &beta, mp, CUDA_R_64F, kAlg, desc, &size1, nullptr));
      DeviceScratch<char> buffer1(size1, stream);
      GRAPHTIER_CUSPARSE_CHECK(cusparseSpGEMM_workEstimation(handle, kOp, kOp, &alpha, mq, mm, &beta, mp, CUDA_R_64F, kAlg, desc, &size1,
                                                buffer1.get()));
      GRAPHTIER_CUSPARSE_CHECK(cusparseSpGEMM_compute(handle, kOp, kOp, &alpha, mq, mm, &beta, mp, CUDA_R_64F, kAlg, desc, &size2, nullptr));
      DeviceScratch<char> buffer2(size2, stream);
      GRAPHTIER_CUSPARSE_CHECK(cusparseSpGEMM_compute(handle, kOp, kOp, &alpha, mq, mm, &beta, mp, CUDA_R_64F, kAlg, desc, &size2,
                                         buffer2.get()));
      int64_t rows = 0, cols = 0, nnz = 0;
      GRAPHTIER_CUSPARSE_CHECK(cusparseSpMatGetSize(mp, &rows, &cols, &nnz));
      GRAPHTIER_EXPECTS(nnz < std::numeric_limits<int32_t>::max(), Unsupported, "CUDA bulk sampling: the product has ", nnz,
                        " entries, beyond 32-bit indices; sample fewer batches at once");
      p.nnz = nnz;
      // At least one element (DeviceScratch): an empty product (frontiers whose rows are all
      // empty) would hand null column and value pointers to cusparseCsrSetPointers and SpGEMM_copy.
      DeviceScratch<int32_t> cols_unsorted(static_cast<std::size_t>(nnz), stream);
      DeviceScratch<double> vals_unsorted(static_cast<std::size_t>(nnz), stream);
      GRAPHTIER_CUSPARSE_CHECK(cusparseCsrSetPointers(mp, p.rowptr.get(), cols_unsorted.get(), vals_unsorted.get()));
      GRAPHTIER_CUSPARSE_CHECK(cusparseSpGEMM_copy(handle, kOp, kOp, &alpha, mq, mm, &beta, mp, CUDA_R_64F, kAlg, desc));
      release();
      mq = mm = mp = nullptr;
      desc = nullptr;

      p.colind = DeviceScratch<int32_t>(static_cast<std::size_t>(nnz), stream);
      p.vals = DeviceScratch<double>(static_cast<std::size_t>(nnz), stream);
      if (nnz > 0) {
        std::size_t temp_bytes = 0;
        const auto nitems = static_cast<int>(nnz), nsegs = static_cast<int>(p.rows);
        GRAPHTIER_CUDA_CHECK(cub::DeviceSegmentedSort::SortPairs(nullptr, temp_bytes, cols_unsorted.get(), p.colind.get(),
                                                    vals_unsorted.get(), p.vals.get(), nitems, nsegs, p.rowptr.get(),
                                                    p.rowptr.get() + 1, stream));
        DeviceScratch<char> temp(temp_bytes, stream);
        GRAPHTIER_CUDA_CHECK(cub::DeviceSegmentedSort::SortPairs(temp.get(), temp_bytes, cols_unsorted.get(), p.colind.get(),
                                                    vals_unsorted.get(), p.vals.get(), nitems, nsegs, p.rowptr.get(),
                                                    p.rowptr.get() + 1, stream));
      }
      // The temporaries (Q, the SpGEMM buffers, the unsorted product) are freed in stream order,
      // after the work queued on `stream` that reads them: no wait here.
    } catch (...) {
      release();
      throw;
    }
    return p;
  }
};

BulkDevice::BulkDevice(const BulkMatrices& m, BulkAlgorithm algorithm, int device) : state_(std::make_unique<State>()) {
  state_->device = device;
  GRAPHTIER_CUDA_CHECK(cudaSetDevice(device));
  GRAPHTIER_CUSPARSE_CHECK(cusparseCreate(&state_->handle));
  // Once per sampler, on the legacy default stream (which every blocking stream waits for).
  const cudaStream_t stream = nullptr;
  PinnedArena& arena = state_->arena;
  {
    const ArenaCall call(arena, stream);
    state_->a = upload_csr(arena, m.a, m.num_nodes, stream);
    state_->a_first = upload<int64_t>(arena, m.first_position, stream);
    if (algorithm == BulkAlgorithm::kLadies) state_->squares = upload_csr(arena, m.ladies_squares, m.num_nodes, stream);
  }
  state_->a_rowptr = m.a.rowptr;
  GRAPHTIER_CUDA_CHECK(cudaStreamSynchronize(stream));  // the matrices are in place before any stream uses them
}

BulkDevice::~BulkDevice() = default;

uint64_t bulk_synchronisations() noexcept { return g_synchronisations.load(); }

// Synchronisation budget (bulk_sampler_cuda.hpp): one per layer, the copy of the results (host
// form) or of the per-batch counts and the next frontier (device form).

LayerDraws BulkDevice::State::graphsage_draws(const bulk::StackedFrontier& frontier, int64_t fanout,
                                                          bool replace, uint64_t seed, bool edge_ids,
                                                          cudaStream_t stream) const {
  const int64_t rows = frontier.rows();
  LayerDraws d;
  d.dst = upload<int64_t>(arena, frontier.nodes, stream);  // also the draw keys
  d.batch_offsets = upload<int64_t>(arena, frontier.offsets, stream);
  std::vector<int64_t> q_rowptr(static_cast<std::size_t>(rows + 1));
  for (int64_t r = 0; r <= rows; ++r) q_rowptr[r] = r;
  const DeviceCsr p = spgemm(q_rowptr, frontier.nodes, a, stream);
  // Output offsets on the device; the arrays are sized by a bound known on the host.
  d.indptr = sampled_offsets(p, fanout, replace, stream);
  d.bound = sampled_bound(p, fanout, replace);
  d.nodes = DeviceScratch<int64_t>(static_cast<std::size_t>(d.bound), stream);
  if (edge_ids) d.edge_ids = DeviceScratch<int64_t>(static_cast<std::size_t>(d.bound), stream);
  if (d.bound == 0) return d;  // every row emits nothing (the offsets are all zero)
  const DeviceScratch<uint64_t> streams = upload<uint64_t>(arena, frontier.layer_streams, stream);
  DeviceScratch<double> work(static_cast<std::size_t>(p.nnz), stream), prefix(static_cast<std::size_t>(p.nnz), stream);
  DeviceScratch<int64_t> picks(static_cast<std::size_t>(d.bound), stream);
  DrawArgs args{p.rowptr.get(), p.colind.get(), p.vals.get(), work.get(), prefix.get(), d.indptr.get(),
                picks.get(), d.nodes.get(), d.dst.get(), d.batch_offsets.get(), streams.get(), frontier.num_batches(),
                rows, fanout, replace, seed, a.rowptr.get(), a.colind.get(),
                a_first.get(), edge_ids ? d.edge_ids.get() : nullptr};
  draw_rows_kernel<<<blocks_for(rows), kThreads, 0, stream>>>(args);
  GRAPHTIER_CUDA_CHECK_LAUNCH("draw_rows_kernel");
  return d;
}

LayerDraws BulkDevice::State::ladies_draws(const bulk::StackedFrontier& frontier, int64_t layer_size,
                                                       uint64_t seed, bool edge_ids, cudaStream_t stream) const {
  const int64_t k = frontier.num_batches(), rows = frontier.rows();
  LayerDraws d;
  d.dst = upload<int64_t>(arena, frontier.nodes, stream);
  d.batch_offsets = upload<int64_t>(arena, frontier.offsets, stream);
  d.indptr = DeviceScratch<int64_t>(static_cast<std::size_t>(rows + 1), stream);
  // Step 3's bound: the rows' degrees in A (host copy). None: no row has an entry.
  for (const int64_t v : frontier.nodes) d.bound += a_rowptr[v + 1] - a_rowptr[v];
  d.nodes = DeviceScratch<int64_t>(static_cast<std::size_t>(d.bound), stream);
  if (edge_ids) d.edge_ids = DeviceScratch<int64_t>(static_cast<std::size_t>(d.bound), stream);
  d.weights = DeviceScratch<float>(static_cast<std::size_t>(d.bound), stream);
  if (d.bound == 0) {
    GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(d.indptr.get(), 0, static_cast<std::size_t>(rows + 1) * sizeof(int64_t), stream));
    return d;
  }
  // Step 1: one row per batch. cuSPARSE's CSR format wants ascending columns within a row, and
  // the frontier is in MiniBatch order: sort each batch's columns (all values are 1, and P is
  // exact whatever the order, so nothing else changes).
  std::vector<int64_t> q_cols = frontier.nodes;
  for (int64_t b = 0; b < k; ++b) {
    std::sort(q_cols.begin() + frontier.offsets[b], q_cols.begin() + frontier.offsets[b + 1]);
  }
  const DeviceCsr p = spgemm(frontier.offsets, q_cols, squares, stream);
  // Step 2: one thread per batch row, offsets on the device, arrays sized by a bound.
  const DeviceScratch<int64_t> draw_offsets = sampled_offsets(p, layer_size, false, stream);
  const int64_t draw_bound = sampled_bound(p, layer_size, false);
  const DeviceScratch<uint64_t> streams = upload<uint64_t>(arena, frontier.layer_streams, stream);
  DeviceScratch<int64_t> sampled(static_cast<std::size_t>(draw_bound), stream);
  if (draw_bound > 0) {
    std::vector<int64_t> row_batches(static_cast<std::size_t>(k + 1));
    for (int64_t b = 0; b <= k; ++b) row_batches[b] = b;  // P's rows are the batches themselves
    const DeviceScratch<int64_t> keys = upload<int64_t>(arena, std::vector<int64_t>(static_cast<std::size_t>(k), 0), stream);
    const DeviceScratch<int64_t> row_of_batch = upload<int64_t>(arena, row_batches, stream);
    DeviceScratch<double> work(static_cast<std::size_t>(p.nnz), stream), prefix(static_cast<std::size_t>(p.nnz), stream);
    DeviceScratch<int64_t> picks(static_cast<std::size_t>(draw_bound), stream);
    DrawArgs args{p.rowptr.get(), p.colind.get(), p.vals.get(), work.get(), prefix.get(), draw_offsets.get(),
                  picks.get(), sampled.get(), keys.get(), row_of_batch.get(), streams.get(), k, k, layer_size,
                  false, seed, nullptr, nullptr, nullptr, nullptr};
    draw_rows_kernel<<<blocks_for(k), kThreads, 0, stream>>>(args);
    GRAPHTIER_CUDA_CHECK_LAUNCH("draw_rows_kernel");
  }
  // C_b on the device: batch b's frontier and draws as keys (b << node_bits) | node, sorted and made
  // unique, then cut by batch. The unused draw slots get batch k, after every batch.
  const int node_bits = key_bits(a.rows);
  const int end_bit = node_bits + key_bits(k);
  GRAPHTIER_EXPECTS(end_bit <= 64, Unsupported, "CUDA bulk sampling: ", k, " batches of a ", a.rows,
                    "-node graph do not fit the 64-bit keys of the kept sets; sample fewer batches at once");
  const int64_t slots = rows + draw_bound;
  DeviceScratch<unsigned long long> union_keys(static_cast<std::size_t>(slots), stream);
  DeviceScratch<unsigned long long> sorted_keys(static_cast<std::size_t>(slots), stream);
  DeviceScratch<unsigned long long> unique_keys(static_cast<std::size_t>(slots), stream);
  DeviceScratch<int64_t> num_unique(1, stream);
  union_keys_kernel<<<blocks_for(slots), kThreads, 0, stream>>>(d.dst.get(), d.batch_offsets.get(), rows, sampled.get(),
                                                                draw_offsets.get(), draw_bound, k, node_bits,
                                                                union_keys.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("union_keys_kernel");
  {
    std::size_t temp_bytes = 0;
    GRAPHTIER_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, union_keys.get(), sorted_keys.get(), slots,
                                                        0, end_bit, stream));
    DeviceScratch<char> temp(temp_bytes, stream);
    GRAPHTIER_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(temp.get(), temp_bytes, union_keys.get(), sorted_keys.get(),
                                                        slots, 0, end_bit, stream));
  }
  {
    std::size_t temp_bytes = 0;
    GRAPHTIER_CUDA_CHECK(cub::DeviceSelect::Unique(nullptr, temp_bytes, sorted_keys.get(), unique_keys.get(),
                                                   num_unique.get(), slots, stream));
    DeviceScratch<char> temp(temp_bytes, stream);
    GRAPHTIER_CUDA_CHECK(cub::DeviceSelect::Unique(temp.get(), temp_bytes, sorted_keys.get(), unique_keys.get(),
                                                   num_unique.get(), slots, stream));
  }
  DeviceScratch<int64_t> kept_d(static_cast<std::size_t>(slots), stream);
  DeviceScratch<int64_t> kept_offsets_d(static_cast<std::size_t>(k + 1), stream);
  kept_sets_kernel<<<blocks_for(std::max(slots, k + 1)), kThreads, 0, stream>>>(unique_keys.get(), num_unique.get(), k,
                                                                               node_bits, kept_d.get(), kept_offsets_d.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("kept_sets_kernel");
  // Step 3: count, scan and write on the device.
  ExtractArgs e{d.dst.get(), d.batch_offsets.get(), k, rows, a.rowptr.get(), a.colind.get(),
                a.vals.get(), a_first.get(), kept_d.get(), kept_offsets_d.get(), p.rowptr.get(),
                p.colind.get(), p.vals.get(), d.indptr.get(), nullptr, nullptr, nullptr, nullptr};
  ladies_extract_kernel<false><<<blocks_for(rows), kThreads, 0, stream>>>(e);
  GRAPHTIER_CUDA_CHECK_LAUNCH("ladies_extract_kernel<false>");
  exclusive_offsets(d.indptr.get(), rows, stream);
  e.out_offsets = d.indptr.get();
  e.nodes = d.nodes.get();
  e.edge_ids = edge_ids ? d.edge_ids.get() : nullptr;
  e.weights = d.weights.get();
  ladies_extract_kernel<true><<<blocks_for(rows), kThreads, 0, stream>>>(e);
  GRAPHTIER_CUDA_CHECK_LAUNCH("ladies_extract_kernel<true>");
  return d;
}

LayerDraws BulkDevice::State::draws(const bulk::StackedFrontier& frontier, const BulkSamplerOptions& options,
                                         int layer, cudaStream_t stream) const {
  const int64_t f = options.fanouts[static_cast<std::size_t>(layer)];
  return options.algorithm == BulkAlgorithm::kLadies
             ? ladies_draws(frontier, f, options.seed, options.edge_ids, stream)
             : graphsage_draws(frontier, f, options.replace, options.seed, options.edge_ids, stream);
}

bulk::StackedDraws BulkDevice::host_layer(const bulk::StackedFrontier& frontier, const BulkSamplerOptions& options,
                                          int layer, CudaStream cuda_stream) const {
  const cudaStream_t stream = ::graphtier::cuda::native(cuda_stream);
  GRAPHTIER_CUDA_CHECK(cudaSetDevice(state_->device));
  const int64_t rows = frontier.rows();
  bulk::StackedDraws d;
  d.indptr.assign(static_cast<std::size_t>(rows + 1), 0);
  if (rows == 0) return d;
  PinnedArena& arena = state_->arena;
  const ArenaCall call(arena, stream);
  const LayerDraws draws_d = state_->draws(frontier, options, layer, stream);
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

#define GRAPHTIER_BULK_STRIDE(i, n)                                                          \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)

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
    const int64_t b = bulk::sequence_batch(starts, k, p);
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
    const int64_t b = bulk::sequence_batch(starts, k, p0);
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
    const int64_t b = bulk::sequence_batch(starts, k, p);
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
      const int64_t b = batch_of_row(offsets, k, t);
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
    const int64_t b = bulk::sequence_batch(starts, k, p);
    const int64_t q = p - starts[b];
    if (q < counts[b] && hosts[b] != nullptr) hosts[b][q] = src_nodes[p];
  }
}

}  // namespace

std::vector<DeviceMiniBatch> BulkDevice::sample_device(std::span<const std::span<const int64_t>> batches_of_seeds,
                                                       std::span<const uint64_t> streams,
                                                       const BulkSamplerOptions& options, int64_t num_nodes,
                                                       CudaStream cuda_stream,
                                                       const BulkInputNodesSink& input_nodes) const {
  const cudaStream_t stream = ::graphtier::cuda::native(cuda_stream);
  GRAPHTIER_CUDA_CHECK(cudaSetDevice(state_->device));
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
  PinnedArena& arena = state_->arena;
  for (std::size_t l = 0; l < layers; ++l) {
    const bool last = l + 1 == layers;
    for (int64_t b = 0; b < k; ++b) dsts[b] = frontiers[b];
    const bulk::StackedFrontier frontier = bulk::stack_frontier(dsts, streams, options, static_cast<int>(l));
    const int64_t rows = frontier.rows();
    if (rows == 0) {  // every batch's frontier is empty: empty blocks with indptr {0}, no wait
      DeviceScratch<int64_t> zeros(static_cast<std::size_t>(k), stream);
      GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(zeros.get(), 0, static_cast<std::size_t>(k) * sizeof(int64_t), stream));
      const std::shared_ptr<void> kept = keep(std::move(zeros));
      for (int64_t b = 0; b < k; ++b) {
        DeviceBlock& block = batches[b].blocks.emplace_back();
        block.indptr = static_cast<const int64_t*>(kept.get()) + b;
        batches[b].storage.push_back(kept);
        if (last && input_nodes) input_nodes(b, 0);
      }
      continue;
    }
    const ArenaCall call(arena, stream);
    LayerDraws d = state_->draws(frontier, options, static_cast<int>(l), stream);
    // The stacked sequences (bulk_compact.hpp), sized by the bound: n >= rows + edges.
    const int64_t n = rows + d.bound;
    DeviceScratch<int64_t> starts(static_cast<std::size_t>(k + 1), stream);
    sequence_starts_kernel<<<blocks_for(k + 1), kThreads, 0, stream>>>(d.batch_offsets.get(), d.indptr.get(), k,
                                                                       starts.get());
    GRAPHTIER_CUDA_CHECK_LAUNCH("sequence_starts_kernel");
    DeviceScratch<unsigned long long> keys(static_cast<std::size_t>(n), stream), sorted_keys(static_cast<std::size_t>(n), stream);
    DeviceScratch<int64_t> positions(static_cast<std::size_t>(n), stream), sorted_positions(static_cast<std::size_t>(n), stream);
    sequence_keys_kernel<<<blocks_for(n), kThreads, 0, stream>>>(n, starts.get(), k, d.batch_offsets.get(), d.dst.get(),
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
                                                              n, starts.get(), k, d.batch_offsets.get(),
                                                              run_first.get(), ranks.get());
    GRAPHTIER_CUDA_CHECK_LAUNCH("run_firsts_kernel");
    {
      std::size_t temp_bytes = 0;
      GRAPHTIER_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, ranks.get(), ranks.get(), n + 1, stream));
      DeviceScratch<char> temp(temp_bytes, stream);
      GRAPHTIER_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.get(), temp_bytes, ranks.get(), ranks.get(), n + 1, stream));
    }
    DeviceScratch<int64_t> src_nodes(static_cast<std::size_t>(n), stream), local(static_cast<std::size_t>(d.bound), stream);
    compact_write_kernel<<<blocks_for(n), kThreads, 0, stream>>>(sorted_keys.get(), sorted_positions.get(),
                                                                 run_ids.get(), run_first.get(), ranks.get(), n,
                                                                 starts.get(), k, d.batch_offsets.get(), d.indptr.get(),
                                                                 node_bits, local.get(), src_nodes.get());
    GRAPHTIER_CUDA_CHECK_LAUNCH("compact_write_kernel");
    DeviceScratch<int64_t> counts(static_cast<std::size_t>(k), stream);
    src_counts_kernel<<<blocks_for(k), kThreads, 0, stream>>>(starts.get(), d.batch_offsets.get(), ranks.get(), k,
                                                              counts.get());
    GRAPHTIER_CUDA_CHECK_LAUNCH("src_counts_kernel");
    DeviceScratch<int64_t> indptr(static_cast<std::size_t>(rows + k), stream);
    rebase_indptr_kernel<<<blocks_for(rows + k), kThreads, 0, stream>>>(d.indptr.get(), d.batch_offsets.get(), rows, k,
                                                                        indptr.get());
    GRAPHTIER_CUDA_CHECK_LAUNCH("rebase_indptr_kernel");
    if (last && input_nodes) {
      // Batch b's input nodes are at most its dst nodes plus every edge of the layer, and distinct.
      auto* hosts = static_cast<int64_t**>(arena.take(static_cast<std::size_t>(k) * sizeof(int64_t*)));
      for (int64_t b = 0; b < k; ++b) {
        const int64_t bound = std::min(frontier.offsets[b + 1] - frontier.offsets[b] + d.bound, num_nodes);
        hosts[b] = nullptr;
        int64_t* host = input_nodes(b, bound);
        if (bound == 0 || host == nullptr) continue;
        void* mapped = nullptr;
        GRAPHTIER_CUDA_CHECK(cudaHostGetDevicePointer(&mapped, host, 0));
        hosts[b] = static_cast<int64_t*>(mapped);
      }
      DeviceScratch<int64_t*> d_hosts(static_cast<std::size_t>(k), stream);
      GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(d_hosts.get(), hosts, static_cast<std::size_t>(k) * sizeof(int64_t*),
                                           cudaMemcpyHostToDevice, stream));
      sink_src_nodes_kernel<<<blocks_for(n), kThreads, 0, stream>>>(src_nodes.get(), n, starts.get(), k, counts.get(),
                                                                    d_hosts.get());
      GRAPHTIER_CUDA_CHECK_LAUNCH("sink_src_nodes_kernel");
    }
    const int64_t* staged_starts = queue_download(arena, starts.get(), static_cast<std::size_t>(k + 1), stream);
    const int64_t* staged_counts = queue_download(arena, counts.get(), static_cast<std::size_t>(k), stream);
    // The next layer's Q is built on the host from the src nodes (the blocks' other arrays stay).
    const int64_t* staged_src = last ? nullptr : queue_download(arena, src_nodes.get(), static_cast<std::size_t>(n), stream);
    g_synchronisations.fetch_add(1);
    GRAPHTIER_CUDA_CHECK(cudaStreamSynchronize(stream));  // the layer's one synchronisation
    const std::shared_ptr<void> kept_src = keep(std::move(src_nodes)), kept_indptr = keep(std::move(indptr)),
                                kept_local = keep(std::move(local));
    const std::shared_ptr<void> kept_ids = options.edge_ids ? keep(std::move(d.edge_ids)) : nullptr;
    const bool ladies = options.algorithm == BulkAlgorithm::kLadies;
    const std::shared_ptr<void> kept_weights = ladies ? keep(std::move(d.weights)) : nullptr;
    for (int64_t b = 0; b < k; ++b) {
      const int64_t r0 = frontier.offsets[b], r1 = frontier.offsets[b + 1];
      const int64_t s0 = staged_starts[b], e0 = s0 - r0, e1 = staged_starts[b + 1] - r1;
      DeviceMiniBatch& batch = batches[b];
      DeviceBlock& block = batch.blocks.emplace_back();
      block.num_dst = r1 - r0;
      block.num_src = staged_counts[b];
      block.num_edges = e1 - e0;
      block.src_nodes = static_cast<const int64_t*>(kept_src.get()) + s0;
      block.indptr = static_cast<const int64_t*>(kept_indptr.get()) + r0 + b;
      block.indices = static_cast<const int64_t*>(kept_local.get()) + e0;
      if (kept_ids) block.edge_ids = static_cast<const int64_t*>(kept_ids.get()) + e0;
      if (kept_weights) block.weights = static_cast<const float*>(kept_weights.get()) + e0;
      for (const auto* kept : {&kept_src, &kept_indptr, &kept_local, &kept_ids, &kept_weights}) {
        if (*kept) batch.storage.push_back(*kept);
      }
      ++batch.host_syncs;
      if (!last) frontiers[b].assign(staged_src + s0, staged_src + s0 + block.num_src);
    }
  }
  return batches;
}

}  // namespace graphtier::sample::cuda
