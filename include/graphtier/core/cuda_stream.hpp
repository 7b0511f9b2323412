// The CUDA stream every GPU entry point takes, and a stream of the caller's own. Plain C++: no
// CUDA headers, so public headers can name a stream in a build without CUDA.
#pragma once

namespace graphtier {

/// A cudaStream_t, opaque. Does not own the stream. The default (nullptr) is the legacy default
/// stream, with its implicit synchronisation against every blocking stream of the device.
struct CudaStream {
  void* handle = nullptr;
};

/// A non-blocking stream of the caller's own on `device`: its work never waits for the legacy
/// default stream, where PyTorch computes unless told otherwise (the loader samples on one, so that
/// sampling overlaps training). Destroying it does not wait: work queued on it still completes.
/// Move-only; a moved-from OwnedCudaStream holds the default stream and owns nothing.
class OwnedCudaStream {
 public:
  /// Throws Unsupported in a build without CUDA or on a machine without a GPU.
  explicit OwnedCudaStream(int device = 0);
  ~OwnedCudaStream();
  OwnedCudaStream(OwnedCudaStream&& other) noexcept;
  OwnedCudaStream& operator=(OwnedCudaStream&& other) noexcept;
  OwnedCudaStream(const OwnedCudaStream&) = delete;
  OwnedCudaStream& operator=(const OwnedCudaStream&) = delete;

  CudaStream get() const noexcept { return stream_; }
  int device() const noexcept { return device_; }

 private:
  void release() noexcept;

  CudaStream stream_;
  int device_ = 0;
};

}  // namespace graphtier
