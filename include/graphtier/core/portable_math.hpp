// Floating point that gives the same bits on the host and the device: single IEEE-rounded adds,
// multiplies and divides (the device's _rn intrinsics, which nvcc never contracts into FMAs; plain
// operators on x86-64 hosts, which emit no FMA at -std=c++20 without -march), and a logarithm
// built from them alone, so that no result rests on glibc's log agreeing with CUDA's (they may
// differ by an ulp).
//
// Plain C++ under g++, host/device code under nvcc (like rng.hpp).
#pragma once

#include <cstdint>
#include <cstring>

#include "graphtier/core/rng.hpp"

namespace graphtier {

GRAPHTIER_HD double add_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

GRAPHTIER_HD double mul_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

GRAPHTIER_HD double div_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __ddiv_rn(a, b);
#else
  return a / b;
#endif
}

namespace detail {
GRAPHTIER_HD uint64_t double_bits(double x) {
#if defined(__CUDA_ARCH__)
  return static_cast<uint64_t>(__double_as_longlong(x));
#else
  uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
#endif
}

GRAPHTIER_HD double bits_double(uint64_t u) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(u));
#else
  double x;
  std::memcpy(&x, &u, sizeof x);
  return x;
#endif
}
}  // namespace detail

/// Natural logarithm of a positive normal double (fdlibm's e_log.c reduction and minimax
/// polynomial, error below 1 ulp), the same bits on the host and the device. Outside that domain
/// (zero, subnormals, negatives, inf, NaN) the result is unspecified: callers clamp first.
GRAPHTIER_HD double portable_log(double x) {
  constexpr double kLn2Hi = 6.93147180369123816490e-01;  // 0x3fe62e42fee00000
  constexpr double kLn2Lo = 1.90821492927058770002e-10;  // 0x3dea39ef35793c76
  constexpr double kLg1 = 6.666666666666735130e-01, kLg2 = 3.999999999940941908e-01,
                   kLg3 = 2.857142874366239149e-01, kLg4 = 2.222219843214978396e-01,
                   kLg5 = 1.818357216161805012e-01, kLg6 = 1.531383769920937332e-01,
                   kLg7 = 1.479819860511658591e-01;
  // x = 2^k * m with m in [sqrt(2)/2, sqrt(2)): f = m - 1 is small.
  const uint64_t bits = detail::double_bits(x);
  auto hx = static_cast<int32_t>(bits >> 32);
  const auto lx = static_cast<uint32_t>(bits);
  int32_t k = ((hx >> 20) & 0x7ff) - 1023;
  hx &= 0x000fffff;
  const int32_t i = (hx + 0x95f64) & 0x100000;  // m >= sqrt(2): halve it
  k += i >> 20;
  const double m = detail::bits_double((static_cast<uint64_t>(static_cast<uint32_t>(hx | (i ^ 0x3ff00000))) << 32) | lx);
  const double f = add_rn(m, -1.0);
  const double dk = static_cast<double>(k);
  // log(1 + f) = 2s + s * R(s^2), s = f / (2 + f), as fdlibm evaluates it.
  const double s = div_rn(f, add_rn(2.0, f));
  const double z = mul_rn(s, s);
  const double w = mul_rn(z, z);
  const double t1 = mul_rn(w, add_rn(kLg2, mul_rn(w, add_rn(kLg4, mul_rn(w, kLg6)))));
  const double t2 = mul_rn(z, add_rn(kLg1, mul_rn(w, add_rn(kLg3, mul_rn(w, add_rn(kLg5, mul_rn(w, kLg7)))))));
  const double r = add_rn(t2, t1);
  const int32_t far = (hx - 0x6147a) | (0x6b851 - hx);  // m beyond about 1.15 either way
  if (far > 0) {
    const double hfsq = mul_rn(mul_rn(0.5, f), f);
    return add_rn(mul_rn(dk, kLn2Hi),
                  -add_rn(add_rn(hfsq, -add_rn(mul_rn(s, add_rn(hfsq, r)), mul_rn(dk, kLn2Lo))), -f));
  }
  return add_rn(mul_rn(dk, kLn2Hi), -add_rn(add_rn(mul_rn(s, add_rn(f, -r)), -mul_rn(dk, kLn2Lo)), -f));
}

}  // namespace graphtier
