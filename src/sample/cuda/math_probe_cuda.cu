// A kernel over the host/device math the samplers' identity rests on (core/portable_math.hpp's
// log, random.hpp's Efraimidis-Spirakis key), for the GPU tests to compare with the host.
#include "cuda/cuda_util.cuh"
#include "current_device.cuh"
#include "cuda/neighbor_sampler_cuda.hpp"
#include "graphtier/core/portable_math.hpp"
#include "graphtier/sample/random.hpp"

namespace graphtier::sample::cuda {
namespace {

__global__ void log_and_keys_kernel(const double* x, int64_t nx, uint64_t seed, uint64_t layer_stream,
                                    const int64_t* edges, const float* w, int64_t nk, double* logs, double* keys) {
  GRAPHTIER_GRID_STRIDE(i, nx) { logs[i] = ::graphtier::portable_log(x[i]); }
  GRAPHTIER_GRID_STRIDE(k, nk) { keys[k] = ::graphtier::sample::es_key(seed, layer_stream, edges[k], w[k]); }
}

}  // namespace

void device_log_and_keys(std::span<const double> x, uint64_t seed, uint64_t layer_stream,
                         std::span<const int64_t> edges, std::span<const float> w, int device, std::vector<double>& logs,
                         std::vector<double>& keys) {
  const ::graphtier::cuda::CurrentDevice on_device(device);
  const auto nx = static_cast<int64_t>(x.size());
  const auto nk = static_cast<int64_t>(edges.size());
  cudaStream_t s = nullptr;
  DeviceScratch<double> dx(x.size(), s), dlogs(x.size(), s), dkeys(edges.size(), s);
  DeviceScratch<int64_t> dedges(edges.size(), s);
  DeviceScratch<float> dw(w.size(), s);
  GRAPHTIER_CUDA_CHECK(cudaMemcpy(dx.get(), x.data(), x.size_bytes(), cudaMemcpyHostToDevice));
  GRAPHTIER_CUDA_CHECK(cudaMemcpy(dedges.get(), edges.data(), edges.size_bytes(), cudaMemcpyHostToDevice));
  GRAPHTIER_CUDA_CHECK(cudaMemcpy(dw.get(), w.data(), w.size_bytes(), cudaMemcpyHostToDevice));
  log_and_keys_kernel<<<blocks_for(std::max(nx, nk)), kThreads, 0, s>>>(dx.get(), nx, seed, layer_stream, dedges.get(),
                                                                       dw.get(), nk, dlogs.get(), dkeys.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("log_and_keys_kernel");
  logs.resize(x.size());
  keys.resize(edges.size());
  GRAPHTIER_CUDA_CHECK(cudaMemcpy(logs.data(), dlogs.get(), logs.size() * sizeof(double), cudaMemcpyDeviceToHost));
  GRAPHTIER_CUDA_CHECK(cudaMemcpy(keys.data(), dkeys.get(), keys.size() * sizeof(double), cudaMemcpyDeviceToHost));
}

}  // namespace graphtier::sample::cuda
