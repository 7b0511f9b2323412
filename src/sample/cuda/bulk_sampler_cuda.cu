#include <cuda_runtime.h>
#include <cusparse.h>

#include <algorithm>
#include <cub/device/device_segmented_sort.cuh>
#include <limits>
#include <vector>

#include "cuda_check.cuh"
#include "cuda_stream.cuh"
#include "cusparse_check.cuh"
#include "graphtier/core/error.hpp"
#include "bulk_row_ops.hpp"
#include "cuda/bulk_sampler_cuda.hpp"

namespace graphtier::sample::cuda {
namespace {

/// Owned device array; synchronous allocation keeps the per-layer lifetimes obvious.
template <typename T>
class DeviceArray {
 public:
  DeviceArray() = default;
  explicit DeviceArray(std::size_t n) : size_(n) {
    if (n > 0) GRAPHTIER_CUDA_CHECK(cudaMalloc(&data_, n * sizeof(T)));
  }
  ~DeviceArray() {
    if (data_ != nullptr) cudaFree(data_);
  }
  DeviceArray(DeviceArray&& o) noexcept : data_(o.data_), size_(o.size_) { o.data_ = nullptr; o.size_ = 0; }
  DeviceArray& operator=(DeviceArray&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    return *this;
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;

  T* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

template <typename T, typename U = T>
DeviceArray<T> upload(const std::vector<U>& host, cudaStream_t stream) {
  std::vector<T> converted(host.begin(), host.end());
  DeviceArray<T> d(converted.size());
  if (!converted.empty()) {
    GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(d.data(), converted.data(), converted.size() * sizeof(T), cudaMemcpyHostToDevice, stream));
    GRAPHTIER_CUDA_CHECK(cudaStreamSynchronize(stream));  // `converted` dies here
  }
  return d;
}

template <typename T>
std::vector<T> download(const T* device, std::size_t n, cudaStream_t stream) {
  std::vector<T> host(n);
  if (n > 0) {
    GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(host.data(), device, n * sizeof(T), cudaMemcpyDeviceToHost, stream));
    GRAPHTIER_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  return host;
}

/// CSR on the device in cuSPARSE's 32-bit index form.
struct DeviceCsr {
  int64_t rows = 0, cols = 0, nnz = 0;
  DeviceArray<int32_t> rowptr, colind;
  DeviceArray<double> vals;
};

DeviceCsr upload_csr(const CsrMatrix& m, int64_t num_cols, cudaStream_t stream) {
  GRAPHTIER_EXPECTS(m.nnz() < std::numeric_limits<int32_t>::max() && num_cols < std::numeric_limits<int32_t>::max(),
                    Unsupported, "CUDA bulk sampling: cuSPARSE SpGEMM takes 32-bit indices; the matrix has ", m.nnz(),
                    " entries and ", num_cols, " columns");
  DeviceCsr d;
  d.rows = m.rows();
  d.cols = num_cols;
  d.nnz = m.nnz();
  d.rowptr = upload<int32_t>(m.rowptr, stream);
  d.colind = upload<int32_t>(m.cols, stream);
  d.vals = upload<double>(m.vals, stream);
  return d;
}

constexpr int kThreads = 128;

int blocks_for(int64_t n) { return static_cast<int>((n + kThreads - 1) / kThreads); }

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

}  // namespace

struct BulkDevice::State {
  int device = 0;
  cusparseHandle_t handle = nullptr;
  DeviceCsr a;
  DeviceArray<int64_t> a_first;
  DeviceCsr squares;  // LADIES only
  ~State() {
    if (handle != nullptr) cusparseDestroy(handle);
  }

  /// P = Q * m with rows sorted by column (cuSPARSE does not promise sorted output).
  DeviceCsr spgemm(const std::vector<int64_t>& q_rowptr, const std::vector<int64_t>& q_cols, const DeviceCsr& m,
                   cudaStream_t stream) const {
    DeviceCsr p;
    p.rows = static_cast<int64_t>(q_rowptr.size()) - 1;
    p.cols = m.cols;
    p.rowptr = DeviceArray<int32_t>(static_cast<std::size_t>(p.rows + 1));
    if (q_cols.empty() || m.nnz == 0) {
      GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(p.rowptr.data(), 0, p.rowptr.size() * sizeof(int32_t), stream));
      GRAPHTIER_CUDA_CHECK(cudaStreamSynchronize(stream));
      return p;
    }
    GRAPHTIER_EXPECTS(static_cast<int64_t>(q_cols.size()) < std::numeric_limits<int32_t>::max(), Unsupported,
                      "CUDA bulk sampling: ", q_cols.size(), " stacked frontier nodes need 64-bit indices; sample fewer batches at once");
    const DeviceArray<int32_t> qr = upload<int32_t>(q_rowptr, stream), qc = upload<int32_t>(q_cols, stream);
    const DeviceArray<double> qv = upload<double>(std::vector<double>(q_cols.size(), 1.0), stream);
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
      GRAPHTIER_CUSPARSE_CHECK(cusparseCreateCsr(&mq, p.rows, m.rows, static_cast<int64_t>(q_cols.size()), qr.data(), qc.data(), qv.data(),
                                    CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
      GRAPHTIER_CUSPARSE_CHECK(cusparseCreateCsr(&mm, m.rows, m.cols, m.nnz, m.rowptr.data(), m.colind.data(), m.vals.data(),
                                    CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
      GRAPHTIER_CUSPARSE_CHECK(cusparseCreateCsr(&mp, p.rows, m.cols, 0, p.rowptr.data(), nullptr, nullptr, CUSPARSE_INDEX_32I,
                                    CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
      GRAPHTIER_CUSPARSE_CHECK(cusparseSpGEMM_createDescr(&desc));
      const double alpha = 1.0, beta = 0.0;
      constexpr auto kOp = CUSPARSE_OPERATION_NON_TRANSPOSE;
      constexpr auto kAlg = CUSPARSE_SPGEMM_DEFAULT;
      std::size_t size1 = 0, size2 = 0;
      GRAPHTIER_CUSPARSE_CHECK(cusparseSpGEMM_workEstimation(handle, kOp, kOp, &alpha, mq, mm, &beta, mp, CUDA_R_64F, kAlg, desc, &size1, nullptr));
      DeviceArray<char> buffer1(size1);
      GRAPHTIER_CUSPARSE_CHECK(cusparseSpGEMM_workEstimation(handle, kOp, kOp, &alpha, mq, mm, &beta, mp, CUDA_R_64F, kAlg, desc, &size1,
                                                buffer1.data()));
      GRAPHTIER_CUSPARSE_CHECK(cusparseSpGEMM_compute(handle, kOp, kOp, &alpha, mq, mm, &beta, mp, CUDA_R_64F, kAlg, desc, &size2, nullptr));
      DeviceArray<char> buffer2(size2);
      GRAPHTIER_CUSPARSE_CHECK(cusparseSpGEMM_compute(handle, kOp, kOp, &alpha, mq, mm, &beta, mp, CUDA_R_64F, kAlg, desc, &size2,
                                         buffer2.data()));
      int64_t rows = 0, cols = 0, nnz = 0;
      GRAPHTIER_CUSPARSE_CHECK(cusparseSpMatGetSize(mp, &rows, &cols, &nnz));
      GRAPHTIER_EXPECTS(nnz < std::numeric_limits<int32_t>::max(), Unsupported, "CUDA bulk sampling: the product has ", nnz,
                        " entries, beyond 32-bit indices; sample fewer batches at once");
      p.nnz = nnz;
      // At least one element: an empty product (frontiers whose rows are all empty) would hand
      // null column and value pointers to cusparseCsrSetPointers and SpGEMM_copy.
      DeviceArray<int32_t> cols_unsorted(static_cast<std::size_t>(std::max<int64_t>(nnz, 1)));
      DeviceArray<double> vals_unsorted(static_cast<std::size_t>(std::max<int64_t>(nnz, 1)));
      GRAPHTIER_CUSPARSE_CHECK(cusparseCsrSetPointers(mp, p.rowptr.data(), cols_unsorted.data(), vals_unsorted.data()));
      GRAPHTIER_CUSPARSE_CHECK(cusparseSpGEMM_copy(handle, kOp, kOp, &alpha, mq, mm, &beta, mp, CUDA_R_64F, kAlg, desc));
      release();
      mq = mm = mp = nullptr;
      desc = nullptr;

      p.colind = DeviceArray<int32_t>(static_cast<std::size_t>(nnz));
      p.vals = DeviceArray<double>(static_cast<std::size_t>(nnz));
      if (nnz > 0) {
        std::size_t temp_bytes = 0;
        const auto nitems = static_cast<int>(nnz), nsegs = static_cast<int>(p.rows);
        GRAPHTIER_CUDA_CHECK(cub::DeviceSegmentedSort::SortPairs(nullptr, temp_bytes, cols_unsorted.data(), p.colind.data(),
                                                    vals_unsorted.data(), p.vals.data(), nitems, nsegs, p.rowptr.data(),
                                                    p.rowptr.data() + 1, stream));
        DeviceArray<char> temp(temp_bytes);
        GRAPHTIER_CUDA_CHECK(cub::DeviceSegmentedSort::SortPairs(temp.data(), temp_bytes, cols_unsorted.data(), p.colind.data(),
                                                    vals_unsorted.data(), p.vals.data(), nitems, nsegs, p.rowptr.data(),
                                                    p.rowptr.data() + 1, stream));
        GRAPHTIER_CUDA_CHECK(cudaStreamSynchronize(stream));  // the temporaries die here
      } else {
        // An empty product still has SpGEMM_copy queued on `stream`, reading buffer2 and writing
        // p.rowptr: wait before buffer2 and the Q arrays are freed.
        GRAPHTIER_CUDA_CHECK(cudaStreamSynchronize(stream));
      }
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
  state_->a = upload_csr(m.a, m.num_nodes, nullptr);
  state_->a_first = upload<int64_t>(m.first_position, nullptr);
  if (algorithm == BulkAlgorithm::kLadies) state_->squares = upload_csr(m.ladies_squares, m.num_nodes, nullptr);
}

BulkDevice::~BulkDevice() = default;

bulk::StackedDraws BulkDevice::graphsage_layer(const bulk::StackedFrontier& frontier, int64_t fanout, bool replace,
                                               uint64_t seed, bool edge_ids, CudaStream cuda_stream) const {
  const cudaStream_t stream = ::graphtier::cuda::native(cuda_stream);
  GRAPHTIER_CUDA_CHECK(cudaSetDevice(state_->device));
  const int64_t rows = frontier.rows();
  bulk::StackedDraws d;
  d.indptr.assign(static_cast<std::size_t>(rows + 1), 0);
  if (rows == 0) return d;
  std::vector<int64_t> q_rowptr(static_cast<std::size_t>(rows + 1));
  for (int64_t r = 0; r <= rows; ++r) q_rowptr[r] = r;
  const DeviceCsr p = state_->spgemm(q_rowptr, frontier.nodes, state_->a, stream);
  const std::vector<int32_t> p_rowptr = download(p.rowptr.data(), p.rowptr.size(), stream);
  for (int64_t r = 0; r < rows; ++r) {
    d.indptr[r + 1] = d.indptr[r] + bulk::sampled_count(p_rowptr[r + 1] - p_rowptr[r], fanout, replace);
  }
  const int64_t total = d.indptr[rows];
  if (total == 0) return d;
  const DeviceArray<int64_t> out_offsets = upload<int64_t>(d.indptr, stream);
  const DeviceArray<int64_t> keys = upload<int64_t>(frontier.nodes, stream);
  const DeviceArray<int64_t> batch_offsets = upload<int64_t>(frontier.offsets, stream);
  const DeviceArray<uint64_t> streams = upload<uint64_t>(frontier.layer_streams, stream);
  DeviceArray<double> work(static_cast<std::size_t>(p.nnz)), prefix(static_cast<std::size_t>(p.nnz));
  DeviceArray<int64_t> picks(static_cast<std::size_t>(total)), nodes(static_cast<std::size_t>(total));
  DeviceArray<int64_t> ids(edge_ids ? static_cast<std::size_t>(total) : 0);
  DrawArgs args{p.rowptr.data(), p.colind.data(), p.vals.data(), work.data(), prefix.data(), out_offsets.data(),
                picks.data(), nodes.data(), keys.data(), batch_offsets.data(), streams.data(), frontier.num_batches(),
                rows, fanout, replace, seed, state_->a.rowptr.data(), state_->a.colind.data(),
                state_->a_first.data(), edge_ids ? ids.data() : nullptr};
  draw_rows_kernel<<<blocks_for(rows), kThreads, 0, stream>>>(args);
  GRAPHTIER_CUDA_CHECK_LAUNCH("draw_rows_kernel");
  d.nodes = download(nodes.data(), nodes.size(), stream);
  if (edge_ids) d.edge_ids = download(ids.data(), ids.size(), stream);
  return d;
}

bulk::StackedDraws BulkDevice::ladies_layer(const bulk::StackedFrontier& frontier, int64_t layer_size, uint64_t seed,
                                            bool edge_ids, CudaStream cuda_stream) const {
  const cudaStream_t stream = ::graphtier::cuda::native(cuda_stream);
  GRAPHTIER_CUDA_CHECK(cudaSetDevice(state_->device));
  const int64_t k = frontier.num_batches(), rows = frontier.rows();
  bulk::StackedDraws d;
  d.indptr.assign(static_cast<std::size_t>(rows + 1), 0);
  if (rows == 0) return d;
  // Step 1: one row per batch. cuSPARSE's CSR format wants ascending columns within a row, and
  // the frontier is in MiniBatch order: sort each batch's columns (all values are 1, and P is
  // exact whatever the order, so nothing else changes).
  std::vector<int64_t> q_cols = frontier.nodes;
  for (int64_t b = 0; b < k; ++b) {
    std::sort(q_cols.begin() + frontier.offsets[b], q_cols.begin() + frontier.offsets[b + 1]);
  }
  const DeviceCsr p = state_->spgemm(frontier.offsets, q_cols, state_->squares, stream);
  const std::vector<int32_t> p_rowptr = download(p.rowptr.data(), p.rowptr.size(), stream);
  std::vector<int64_t> draw_offsets(static_cast<std::size_t>(k + 1), 0);
  for (int64_t b = 0; b < k; ++b) {
    draw_offsets[b + 1] = draw_offsets[b] + bulk::sampled_count(p_rowptr[b + 1] - p_rowptr[b], layer_size, false);
  }
  // Step 2: one thread per batch row.
  const DeviceArray<int64_t> batch_offsets = upload<int64_t>(frontier.offsets, stream);
  const DeviceArray<uint64_t> streams = upload<uint64_t>(frontier.layer_streams, stream);
  std::vector<int64_t> sampled;
  if (draw_offsets[k] > 0) {
    std::vector<int64_t> row_batches(static_cast<std::size_t>(k + 1));
    for (int64_t b = 0; b <= k; ++b) row_batches[b] = b;  // P's rows are the batches themselves
    const DeviceArray<int64_t> out_offsets = upload<int64_t>(draw_offsets, stream);
    const DeviceArray<int64_t> keys = upload<int64_t>(std::vector<int64_t>(static_cast<std::size_t>(k), 0), stream);
    const DeviceArray<int64_t> row_of_batch = upload<int64_t>(row_batches, stream);
    DeviceArray<double> work(static_cast<std::size_t>(p.nnz)), prefix(static_cast<std::size_t>(p.nnz));
    DeviceArray<int64_t> picks(static_cast<std::size_t>(draw_offsets[k])), nodes(static_cast<std::size_t>(draw_offsets[k]));
    DrawArgs args{p.rowptr.data(), p.colind.data(), p.vals.data(), work.data(), prefix.data(), out_offsets.data(),
                  picks.data(), nodes.data(), keys.data(), row_of_batch.data(), streams.data(), k, k, layer_size,
                  false, seed, nullptr, nullptr, nullptr, nullptr};
    draw_rows_kernel<<<blocks_for(k), kThreads, 0, stream>>>(args);
    GRAPHTIER_CUDA_CHECK_LAUNCH("draw_rows_kernel");
    sampled = download(nodes.data(), nodes.size(), stream);
  }
  // C_b on the host: small (frontier plus layer size per batch).
  std::vector<int64_t> kept, kept_offsets = {0};
  for (int64_t b = 0; b < k; ++b) {
    std::vector<int64_t> c(frontier.nodes.begin() + frontier.offsets[b], frontier.nodes.begin() + frontier.offsets[b + 1]);
    c.insert(c.end(), sampled.begin() + draw_offsets[b], sampled.begin() + draw_offsets[b + 1]);
    std::sort(c.begin(), c.end());
    c.erase(std::unique(c.begin(), c.end()), c.end());
    kept.insert(kept.end(), c.begin(), c.end());
    kept_offsets.push_back(static_cast<int64_t>(kept.size()));
  }
  // Step 3: count, scan on the host, write.
  const DeviceArray<int64_t> dst = upload<int64_t>(frontier.nodes, stream);
  const DeviceArray<int64_t> kept_d = upload<int64_t>(kept, stream), kept_offsets_d = upload<int64_t>(kept_offsets, stream);
  DeviceArray<int64_t> counts(static_cast<std::size_t>(rows));
  ExtractArgs e{dst.data(), batch_offsets.data(), k, rows, state_->a.rowptr.data(), state_->a.colind.data(),
                state_->a.vals.data(), state_->a_first.data(), kept_d.data(), kept_offsets_d.data(), p.rowptr.data(),
                p.colind.data(), p.vals.data(), counts.data(), nullptr, nullptr, nullptr, nullptr};
  ladies_extract_kernel<false><<<blocks_for(rows), kThreads, 0, stream>>>(e);
  GRAPHTIER_CUDA_CHECK_LAUNCH("ladies_extract_kernel<false>");
  const std::vector<int64_t> row_counts = download(counts.data(), counts.size(), stream);
  for (int64_t r = 0; r < rows; ++r) d.indptr[r + 1] = d.indptr[r] + row_counts[r];
  const int64_t total = d.indptr[rows];
  if (total == 0) return d;
  const DeviceArray<int64_t> out_offsets = upload<int64_t>(d.indptr, stream);
  DeviceArray<int64_t> nodes(static_cast<std::size_t>(total)), ids(edge_ids ? static_cast<std::size_t>(total) : 0);
  DeviceArray<float> weights(static_cast<std::size_t>(total));
  e.out_offsets = out_offsets.data();
  e.nodes = nodes.data();
  e.edge_ids = edge_ids ? ids.data() : nullptr;
  e.weights = weights.data();
  ladies_extract_kernel<true><<<blocks_for(rows), kThreads, 0, stream>>>(e);
  GRAPHTIER_CUDA_CHECK_LAUNCH("ladies_extract_kernel<true>");
  d.nodes = download(nodes.data(), nodes.size(), stream);
  if (edge_ids) d.edge_ids = download(ids.data(), ids.size(), stream);
  d.weights = download(weights.data(), weights.size(), stream);
  return d;
}

}  // namespace graphtier::sample::cuda
