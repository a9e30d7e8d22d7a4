// Host-side reference semantics of vkprim's types and operators, shared by the tests, `vkprim verify`
// and `vkprim bench` (which verify every GPU result against it).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <type_traits>
#include <vector>

#include "vkprim/types.hpp"

namespace vkprim::host {

// Calls f(T{}) with the C++ type of a DataType.
template <class F>
decltype(auto) with_type(DataType type, F&& f) {
  switch (type) {
    case DataType::u32: return f(uint32_t{});
    case DataType::i32: return f(int32_t{});
    case DataType::f32: return f(float{});
    case DataType::u64: return f(uint64_t{});
    case DataType::i64: return f(int64_t{});
    case DataType::f64: return f(double{});
    case DataType::u8: return f(uint8_t{});
    case DataType::u16: return f(uint16_t{});
  }
  return f(uint32_t{});
}

template <class T>
T identity(Op op) {
  switch (op) {
    case Op::add: case Op::bit_or: case Op::bit_xor: return T(0);
    case Op::min: return std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
    case Op::max: return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
    case Op::bit_and:
      if constexpr (std::is_integral_v<T>) return T(~std::make_unsigned_t<T>(0));
      else return T(0);
  }
  return T(0);
}

// Integer add wraps modulo 2^bits (computed unsigned, so signed overflow is defined here too).
template <class T>
T apply(Op op, T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    switch (op) {
      case Op::add: return T(U(a) + U(b));
      case Op::min: return std::min(a, b);
      case Op::max: return std::max(a, b);
      case Op::bit_and: return T(a & b);
      case Op::bit_or: return T(a | b);
      case Op::bit_xor: return T(a ^ b);
    }
  } else {
    switch (op) {
      case Op::add: return a + b;
      case Op::min: return std::min(a, b);
      case Op::max: return std::max(a, b);
      default: break;
    }
  }
  return a;
}

template <class T>
T reduce(Op op, const T* data, size_t n) {
  T acc = identity<T>(op);
  for (size_t i = 0; i < n; ++i) acc = apply(op, acc, data[i]);
  return acc;
}

// The same reduction through std::reduce with the operator chosen outside the loop, so the compiler
// can vectorize it: the CPU row of `vkprim bench` (integer add through the unsigned type: it wraps).
template <class T>
T std_reduce(Op op, const T* data, size_t n) {
  const T init = identity<T>(op);
  auto run = [&](auto f) { return std::reduce(data, data + n, init, f); };
  switch (op) {
    case Op::add:
      if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;
        return T(std::reduce(reinterpret_cast<const U*>(data), reinterpret_cast<const U*>(data) + n, U(0)));
      } else {
        return run([](T a, T b) { return a + b; });
      }
    case Op::min: return run([](T a, T b) { return std::min(a, b); });
    case Op::max: return run([](T a, T b) { return std::max(a, b); });
    default: return reduce(op, data, n);
  }
}

// Float add is checked against a long-double sum with the documented bound
// (L + ceil(log2 n)) * eps * sum|x|, L = the longest run one GPU thread sums in order.
template <class T>
struct FloatSum {
  long double exact = 0, magnitude = 0;
};
template <class T>
FloatSum<T> exact_sum(const T* data, size_t n) {
  FloatSum<T> s;
  for (size_t i = 0; i < n; ++i) {
    s.exact += static_cast<long double>(data[i]);
    s.magnitude += std::fabs(static_cast<long double>(data[i]));
  }
  return s;
}
template <class T>
long double float_add_bound(const FloatSum<T>& s, size_t n, uint64_t sequential_run) {
  const long double eps = std::numeric_limits<T>::epsilon() / 2;
  const long double depth = std::ceil(std::log2(static_cast<long double>(std::max<size_t>(n, 2))));
  return (static_cast<long double>(sequential_run) + depth + 1) * eps * s.magnitude;
}

// Fresh random values for an op: full-range integers (add wraps), floats in [-1, 1) for add so sums
// stay meaningful, and spread-out values for min/max.
template <class T>
void fill_random(std::vector<T>& v, std::mt19937_64& rng) {
  if constexpr (std::is_integral_v<T>) {
    for (auto& x : v) x = static_cast<T>(rng());
  } else {
    std::uniform_real_distribution<T> dist(T(-1), T(1));
    for (auto& x : v) x = dist(rng);
  }
}

template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

}  // namespace vkprim::host
