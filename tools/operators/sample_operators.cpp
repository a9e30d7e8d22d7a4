#include "sample_operators.hpp"

#include <cstring>
#include <limits>

namespace vkprim::samples {

namespace {
float uniform(std::mt19937_64& rng, float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng); }
int32_t small_int(std::mt19937_64& rng) { return std::uniform_int_distribution<int32_t>(-3, 3)(rng); }
// Wrapping 32-bit products and sums, as the GPU computes them.
int32_t wrap(uint64_t v) { return int32_t(uint32_t(v)); }
int32_t mul(int32_t a, int32_t b) { return wrap(uint64_t(uint32_t(a)) * uint32_t(b)); }
int32_t add(int32_t a, int32_t b) { return wrap(uint64_t(uint32_t(a)) + uint32_t(b)); }
}  // namespace

Aabb identity_of(const Aabb*) {
  Aabb r{};
  const float inf = std::numeric_limits<float>::infinity();
  for (int k = 0; k < 3; ++k) {
    r.lo[k] = inf;
    r.hi[k] = -inf;
  }
  return r;
}
Aabb combine(const Aabb& a, const Aabb& b) {
  Aabb r{};
  for (int k = 0; k < 3; ++k) {
    r.lo[k] = std::min(a.lo[k], b.lo[k]);
    r.hi[k] = std::max(a.hi[k], b.hi[k]);
  }
  return r;
}
Aabb random_element(std::mt19937_64& rng, const Aabb*) {
  Aabb r{};
  for (int k = 0; k < 3; ++k) {
    const float c = uniform(rng, -1000.0f, 1000.0f), e = uniform(rng, 0.0f, 10.0f);
    r.lo[k] = c - e;
    r.hi[k] = c + e;
  }
  return r;
}

Affine identity_of(const Affine*) { return Affine{{1, 0}, {0, 1}, {0, 0}}; }
Affine combine(const Affine& a, const Affine& b) {
  auto linear = [&](const int32_t p[2], int32_t out[2]) {
    for (int k = 0; k < 2; ++k) out[k] = add(mul(b.x[k], p[0]), mul(b.y[k], p[1]));
  };
  Affine r{};
  linear(a.x, r.x);
  linear(a.y, r.y);
  linear(a.t, r.t);
  for (int k = 0; k < 2; ++k) r.t[k] = add(r.t[k], b.t[k]);
  return r;
}
Affine random_element(std::mt19937_64& rng, const Affine*) {
  Affine r{};
  for (int k = 0; k < 2; ++k) {
    r.x[k] = small_int(rng);
    r.y[k] = small_int(rng);
    r.t[k] = std::uniform_int_distribution<int32_t>(-1000, 1000)(rng);
  }
  return r;
}

ArgMin identity_of(const ArgMin*) { return ArgMin{std::numeric_limits<float>::infinity(), 0xFFFFFFFFu}; }
ArgMin combine(const ArgMin& a, const ArgMin& b) {
  return b.value < a.value || (b.value == a.value && b.index < a.index) ? b : a;
}
ArgMin random_element(std::mt19937_64& rng, const ArgMin*) {
  return ArgMin{float(std::uniform_int_distribution<int>(-300, 300)(rng)) * 0.25f, uint32_t(rng())};
}

Mat4 identity_of(const Mat4*) {
  Mat4 r{};
  for (int j = 0; j < 4; ++j) r.c[j][j] = 1;
  return r;
}
Mat4 combine(const Mat4& a, const Mat4& b) {
  Mat4 r{};
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 4; ++i) {
      uint32_t s = 0;
      for (int k = 0; k < 4; ++k) s += a.c[k][i] * b.c[j][k];
      r.c[j][i] = s;
    }
  return r;
}
Mat4 random_element(std::mt19937_64& rng, const Mat4*) {
  Mat4 r{};
  for (auto& col : r.c)
    for (uint32_t& v : col) v = uint32_t(rng());
  return r;
}

Welford identity_of(const Welford*) { return Welford{0.0f, 0.0f, 0.0f}; }
Welford combine(const Welford& a, const Welford& b) {
  const float n = a.n + b.n;
  if (n == 0.0f) return a;
  const float d = b.mean - a.mean;
  return Welford{n, a.mean + d * (b.n / n), a.m2 + b.m2 + d * d * (a.n * b.n / n)};
}
Welford random_element(std::mt19937_64& rng, const Welford*) { return Welford{1.0f, uniform(rng, 10.0f, 20.0f), 0.0f}; }

Sum4 identity_of(const Sum4*) { return Sum4{}; }
Sum4 combine(const Sum4& a, const Sum4& b) {
  Sum4 r{};
  for (int k = 0; k < 4; ++k) r.v[k] = a.v[k] + b.v[k];
  return r;
}
Sum4 random_element(std::mt19937_64& rng, const Sum4*) {
  Sum4 r{};
  for (float& v : r.v) v = uniform(rng, 0.0f, 1.0f);
  return r;
}

}  // namespace vkprim::samples
