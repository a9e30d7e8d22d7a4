// Host references of the sample user operators (tools/operators/CMakeLists.txt): identity, combine and
// random elements for each, as the tests and `vkprim bench` use them. combine(a, b) is a then b, as on
// the GPU.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "vkprim_ops/aabb_union.hpp"
#include "vkprim_ops/affine.hpp"
#include "vkprim_ops/argmin.hpp"
#include "vkprim_ops/mat4_product.hpp"
#include "vkprim_ops/sum4.hpp"
#include "vkprim_ops/welford.hpp"

namespace vkprim::samples {

using vkprim_ops::Aabb;
using vkprim_ops::Affine;
using vkprim_ops::ArgMin;
using vkprim_ops::Mat4;
using vkprim_ops::Sum4;
using vkprim_ops::Welford;

Aabb identity_of(const Aabb*);
Aabb combine(const Aabb& a, const Aabb& b);
Aabb random_element(std::mt19937_64& rng, const Aabb*);

Affine identity_of(const Affine*);
Affine combine(const Affine& a, const Affine& b);
Affine random_element(std::mt19937_64& rng, const Affine*);

ArgMin identity_of(const ArgMin*);
ArgMin combine(const ArgMin& a, const ArgMin& b);
ArgMin random_element(std::mt19937_64& rng, const ArgMin*);  // values from a few hundred, so many tie

Mat4 identity_of(const Mat4*);
Mat4 combine(const Mat4& a, const Mat4& b);
Mat4 random_element(std::mt19937_64& rng, const Mat4*);

Welford identity_of(const Welford*);
Welford combine(const Welford& a, const Welford& b);
Welford random_element(std::mt19937_64& rng, const Welford*);  // one sample: (1, x, 0)

Sum4 identity_of(const Sum4*);
Sum4 combine(const Sum4& a, const Sum4& b);
Sum4 random_element(std::mt19937_64& rng, const Sum4*);

template <class T>
T identity() {
  return identity_of(static_cast<const T*>(nullptr));
}

template <class T>
std::vector<T> random_elements(std::mt19937_64& rng, size_t n) {
  std::vector<T> v(n);
  for (T& x : v) x = random_element(rng, static_cast<const T*>(nullptr));
  return v;
}

// Left to right, one element at a time.
template <class T>
T reduce(const std::vector<T>& x) {
  T acc = identity<T>();
  for (const T& v : x) acc = combine(acc, v);
  return acc;
}
template <class T>
std::vector<T> scan(const std::vector<T>& x, bool exclusive) {
  std::vector<T> out(x.size());
  T acc = identity<T>();
  for (size_t i = 0; i < x.size(); ++i) {
    if (exclusive) out[i] = acc;
    acc = combine(acc, x[i]);
    if (!exclusive) out[i] = acc;
  }
  return out;
}

}  // namespace vkprim::samples
