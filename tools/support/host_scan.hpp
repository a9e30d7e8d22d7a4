// Host-side reference scans with std::inclusive_scan / std::exclusive_scan semantics through the operators
// of host_reference.hpp (exclusive scans start from the identity), and the float add check of
// vkprim/scan.hpp: |got_i - exact_i| <= float_add_depth(n) * eps * S_i, S_i = sum of |x_j| it covers.
// Shared by the tests, `vkprim verify` and `vkprim bench scan`.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "host_reference.hpp"
#include "vkprim/scan.hpp"

namespace vkprim::host {

template <class T>
void scan(Op op, ScanKind kind, const T* in, size_t n, T* out) {
  T acc = identity<T>(op);
  if (kind == ScanKind::inclusive) {
    // std::inclusive_scan: out[0] = in[0] exactly, then acc op in[i].
    for (size_t i = 0; i < n; ++i) out[i] = acc = i == 0 ? in[0] : apply(op, acc, in[i]);
  } else {
    for (size_t i = 0; i < n; ++i) {
      const T x = in[i];
      out[i] = acc;
      acc = apply(op, acc, x);
    }
  }
}

template <class T>
std::vector<T> scan(Op op, ScanKind kind, const std::vector<T>& in) {
  std::vector<T> out(in.size());
  scan(op, kind, in.data(), in.size(), out.data());
  return out;
}

// Compares a GPU scan with the reference: bit-exact except float add, which must lie within the
// documented bound of the exact (long double) prefix. Returns the index of the first mismatch (n if
// none) and describes it in `why`.
template <class T>
size_t first_scan_mismatch(Op op, ScanKind kind, const T* in, const T* got, size_t n, uint64_t float_add_depth,
                           std::string& why) {
  if constexpr (std::is_floating_point_v<T>) {
    if (op == Op::add) {
      const long double eps = std::numeric_limits<T>::epsilon() / 2;
      long double exact = 0, magnitude = 0;
      for (size_t i = 0; i < n; ++i) {
        if (kind == ScanKind::inclusive) {
          exact += static_cast<long double>(in[i]);
          magnitude += std::fabs(static_cast<long double>(in[i]));
        }
        const long double bound = static_cast<long double>(float_add_depth) * eps * magnitude;
        const long double error = std::fabs(static_cast<long double>(got[i]) - exact);
        if (!(error <= bound)) {
          why = "element " + std::to_string(i) + ": got " + std::to_string(double(got[i])) + ", exact " +
                std::to_string(double(exact)) + ", |error| " + std::to_string(double(error)) + " > bound " +
                std::to_string(double(bound)) + " (depth " + std::to_string(float_add_depth) + ")";
          return i;
        }
        if (kind == ScanKind::exclusive) {
          exact += static_cast<long double>(in[i]);
          magnitude += std::fabs(static_cast<long double>(in[i]));
        }
      }
      return n;
    }
  }
  std::vector<T> expected(n);
  scan(op, kind, in, n, expected.data());
  for (size_t i = 0; i < n; ++i) {
    if (!same_bits(got[i], expected[i])) {
      if constexpr (std::is_floating_point_v<T>) {
        why = "element " + std::to_string(i) + ": got " + std::to_string(double(got[i])) + ", expected " +
              std::to_string(double(expected[i]));
      } else {
        why = "element " + std::to_string(i) + ": got " + std::to_string(got[i]) + ", expected " +
              std::to_string(expected[i]);
      }
      return i;
    }
  }
  return n;
}

}  // namespace vkprim::host
