// User operators (vkprim/operator.hpp): engine structs and combine functions compiled by
// vkprim_add_operator into the reduce, scan and keyed kernels (tools/operators: AABB union, 2D affine composition,
// 4x4 matrix product, Welford merge, argmin pairs; tests/operators: values of 1, 4, 5, 8 and 12 words). Every plan
// must give the left-to-right combination, for operators that do not commute too: against host references at
// sizes 0, 1, tile-1, tile, tile+1, two tiles and an odd large count, every scan algorithm and kind, forced
// fallback, the emulation, record_indirect, storage-range windows, byte offsets that are not multiples of 16,
// the errors, and ReduceByKey / ScanByKey over runs of mean length 1, 4 and 64 (with forced fallback).
#include <array>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "host_by_key.hpp"
#include "sample_operators.hpp"
#include "scan_rig.hpp"
#include "spirv_uniformity.hpp"
#include "test_support.hpp"
#include "vkprim/reduce.hpp"
#include "vkprim/reduce_by_key.hpp"
#include "vkprim/scan.hpp"
#include "vkprim/scan_by_key.hpp"
#include "vkprim_ops/words1.hpp"
#include "vkprim_ops/words12.hpp"
#include "vkprim_ops/words4.hpp"
#include "vkprim_ops/words5.hpp"
#include "vkprim_ops/words8.hpp"

// Host references of the test operators of tests/operators/words.glsl (found by argument-dependent lookup from
// vkprim::samples' templates): word pairs are maps x -> x * m + c on wrapping u32, composed left to right; an
// odd last word takes the right operand's unless it is zero.
namespace vkprim_ops {
template <class W>
concept WordOperands = requires(W x) {
  { x.w[0] } -> std::same_as<uint32_t&>;
};
template <WordOperands W>
W identity_of(const W*) {
  W r{};
  const size_t n = std::size(r.w);
  for (size_t i = 0; i + 1 < n; i += 2) r.w[i] = 1;
  return r;
}
template <WordOperands W>
W combine(const W& a, const W& b) {
  W r = b;
  const size_t n = std::size(r.w);
  for (size_t i = 0; i + 1 < n; i += 2) {
    r.w[i] = a.w[i] * b.w[i];
    r.w[i + 1] = a.w[i + 1] * b.w[i] + b.w[i + 1];
  }
  if (n % 2 == 1 && b.w[n - 1] == 0) r.w[n - 1] = a.w[n - 1];
  return r;
}
template <WordOperands W>
W random_element(std::mt19937_64& rng, const W*) {
  W r{};
  for (uint32_t& x : r.w) x = uint32_t(rng());
  if (std::size(r.w) % 2 == 1 && rng() % 2 == 0) r.w[std::size(r.w) - 1] = 0;  // half the last words defer
  return r;
}
}  // namespace vkprim_ops

using namespace vkprim;
using namespace vkprim::samples;
using vkprim_ops::Words1;
using vkprim_ops::Words12;
using vkprim_ops::Words4;
using vkprim_ops::Words5;
using vkprim_ops::Words8;

namespace {

// The operator and how results compare, per sample type.
const UserOperator& operator_of(const Aabb*) { return vkprim_ops::aabb_union(); }
const UserOperator& operator_of(const Affine*) { return vkprim_ops::affine(); }
const UserOperator& operator_of(const ArgMin*) { return vkprim_ops::argmin(); }
const UserOperator& operator_of(const Mat4*) { return vkprim_ops::mat4_product(); }
const UserOperator& operator_of(const Welford*) { return vkprim_ops::welford(); }
const UserOperator& operator_of(const Words1*) { return vkprim_ops::words1(); }
const UserOperator& operator_of(const Words4*) { return vkprim_ops::words4(); }
const UserOperator& operator_of(const Words5*) { return vkprim_ops::words5(); }
const UserOperator& operator_of(const Words8*) { return vkprim_ops::words8(); }
const UserOperator& operator_of(const Words12*) { return vkprim_ops::words12(); }
template <class T>
const UserOperator& user_op() {
  return operator_of(static_cast<const T*>(nullptr));
}

template <size_t N, class E>
bool same(const E (&a)[N], const E (&b)[N]) {
  return std::memcmp(a, b, sizeof(a)) == 0;
}
// Members only: the GPU stores members, never the padding between them.
bool equal(const Aabb& a, const Aabb& b) { return same(a.lo, b.lo) && same(a.hi, b.hi); }
bool equal(const Affine& a, const Affine& b) { return same(a.x, b.x) && same(a.y, b.y) && same(a.t, b.t); }
bool equal(const ArgMin& a, const ArgMin& b) {
  return std::memcmp(&a.value, &b.value, sizeof(a.value)) == 0 && a.index == b.index;
}
bool equal(const Mat4& a, const Mat4& b) { return std::memcmp(a.c, b.c, sizeof(a.c)) == 0; }
template <vkprim_ops::WordOperands W>
bool equal(const W& a, const W& b) {
  return std::memcmp(a.w, b.w, sizeof(a.w)) == 0;
}
// Welford merges round differently in another grouping: counts are exact, mean and M2 within a relative
// error far below what a wrong order or a lost element would change.
bool equal(const Welford& a, const Welford& b) {
  auto near = [](float x, float y, float rel) { return std::fabs(x - y) <= rel * std::max(1.0f, std::fabs(y)); };
  return a.n == b.n && near(a.mean, b.mean, 1e-4f) && near(a.m2, b.m2, 2e-3f);
}
std::string show(const ArgMin& m) {
  std::ostringstream s;
  s << '(' << m.value << ", " << m.index << ')';
  return s.str();
}
std::string show(const Welford& w) {
  std::ostringstream s;
  s << '(' << w.n << ", " << w.mean << ", " << w.m2 << ')';
  return s.str();
}
template <class T>
std::string show(const T&) {
  return "(struct)";
}

// The left-to-right combination of x[begin, end).
template <class T>
T reduce_range(const std::vector<T>& x, uint64_t begin, uint64_t end) {
  T acc = identity<T>();
  for (uint64_t i = begin; i < end; ++i) acc = combine(acc, x[i]);
  return acc;
}

// Plans for the tests, in their default tile shapes (kSizes below covers their boundaries).
ScanDesc scan_desc(const UserOperator& op, ScanAlgorithm a, ScanKind kind, uint64_t max_count) {
  ScanDesc d;
  d.user_operator = &op;
  d.algorithm = a;
  d.kind = kind;
  d.max_count = max_count;
  return d;
}
ReduceDesc reduce_desc(const UserOperator& op, uint64_t max_count) {
  ReduceDesc d;
  d.user_operator = &op;
  d.max_count = max_count;
  return d;
}

std::vector<ScanAlgorithm> scan_algorithms(Device& dev) {
  std::vector<ScanAlgorithm> out = {ScanAlgorithm::reduce_then_scan};
  if (!dev.context().capabilities().has(feature_memory_model)) return out;
  out.push_back(ScanAlgorithm::chained_fallback);
  if (dev.context().capabilities().driver_id != VK_DRIVER_ID_MESA_LLVMPIPE) out.push_back(ScanAlgorithm::chained_lookback);
  return out;
}

// Elements past `count` of `buffer` (of `size`-byte elements) still hold the poison word.
bool tail_poisoned(const Device& dev, const Buffer& buffer, uint64_t count, uint64_t elements, uint32_t size) {
  const auto words = test::download<uint32_t>(dev, buffer, size_t((elements - count) * size / 4), count * size);
  for (uint32_t w : words)
    if (w != test::kPoison) return false;
  return true;
}

// Records `plan` over n random elements (input and output at the byte offsets given) and checks its output
// against the host's left-to-right scan, and that nothing past the count was written.
template <class T>
void check_scan_plan(Device& dev, const Scan& plan, ScanKind kind, uint64_t n, std::mt19937_64& rng,
                     VkDeviceSize in_offset = 0, VkDeviceSize out_offset = 0) {
  const std::vector<T> x = random_elements<T>(rng, size_t(n));
  const uint64_t slack = 3;
  Buffer in = test::make_buffer(dev, in_offset + (n + 1) * sizeof(T));
  Buffer out = test::make_buffer(dev, out_offset + (n + slack) * sizeof(T));
  Buffer scratch = test::make_scratch(dev, plan);
  test::upload(dev, in, x, in_offset);
  test::poison(dev, out);
  auto done = test::submit_compute(dev, [&](VkCommandBuffer cmd) {
    auto r = plan.record(cmd, in.range(in_offset, (n + 1) * sizeof(T)), out.range(out_offset), n, scratch.range());
    INFO(r.error().message);
    REQUIRE(r.ok());
  });
  REQUIRE(done.ok());
  const auto want = scan(x, kind == ScanKind::exclusive);
  const auto got = test::download<T>(dev, out, size_t(n), out_offset);
  for (size_t i = 0; i < got.size(); ++i)
    if (!equal(got[i], want[i])) {
      FAIL_CHECK("element " << i << " differs: got " << show(got[i]) << ", want " << show(want[i]));
      break;
    }
  if (out_offset == 0) CHECK(tail_poisoned(dev, out, n, n + slack, sizeof(T)));
}

template <class T>
void check_scan(Device& dev, ScanAlgorithm algorithm, ScanKind kind, uint64_t n, std::mt19937_64& rng,
                VkDeviceSize in_offset = 0, VkDeviceSize out_offset = 0, uint32_t workgroup_size = 0,
                uint32_t per_invocation = 0, uint32_t lookback_windows = 0) {
  const UserOperator& op = user_op<T>();
  INFO(op.name << " " << to_string(algorithm) << " " << to_string(kind) << " n=" << n << " offsets " << in_offset
                << "/" << out_offset << " shape " << workgroup_size << "x" << per_invocation << "x"
                << lookback_windows);
  ScanDesc desc = scan_desc(op, algorithm, kind, std::max<uint64_t>(n, 1));
  desc.tuning.workgroup_size = workgroup_size;
  desc.tuning.vectors_per_thread = per_invocation;
  desc.tuning.lookback_windows = lookback_windows;
  const Scan plan = test::make_scan(dev.context(), desc);
  REQUIRE(plan.algorithm() == algorithm);
  check_scan_plan<T>(dev, plan, kind, n, rng, in_offset, out_offset);
}

template <class T>
void check_reduce(Device& dev, uint64_t n, std::mt19937_64& rng) {
  const UserOperator& op = user_op<T>();
  INFO(op.name << " reduce n=" << n);
  const Reduce plan = test::make_reduce(dev.context(), reduce_desc(op, std::max<uint64_t>(n, 1)));
  REQUIRE(plan.algorithm() == ReduceAlgorithm::ordered);
  const std::vector<T> x = random_elements<T>(rng, size_t(n));
  Buffer in = test::make_buffer(dev, (n + 1) * sizeof(T));
  Buffer out = test::make_buffer(dev, 2 * sizeof(T));
  Buffer scratch = test::make_scratch(dev, plan);
  test::upload(dev, in, x);
  test::poison(dev, out);
  auto done = test::submit_compute(dev, [&](VkCommandBuffer cmd) {
    auto r = plan.record(cmd, in.range(), out.range(), n, scratch.range());
    INFO(r.error().message);
    REQUIRE(r.ok());
  });
  REQUIRE(done.ok());
  const T got = test::download<T>(dev, out, 1)[0];
  const T want = reduce(x);
  CHECK(equal(got, want));
  CHECK(tail_poisoned(dev, out, 1, 2, sizeof(T)));
}

// Sizes around the tiles of every plan: a user tile holds 64 / size values per invocation (one for 64-byte
// values, five for 12-byte ones; the chained scan a power of two of them, four for 12-byte ones) of 64 to 256
// invocations, whatever the device's shared memory allows.
const std::array<uint64_t, 23> kSizes = {0,   1,    2,    63,   64,   65,   127,  128,           129,   255, 256, 257,
                                         511, 512,  513,  1023, 1024, 1025, 1279, 2 * 1280 + 17, 1280, 1281, 100003};

}  // namespace

TEST_CASE("a user reduce is the left-to-right combination at every size", "[user][reduce]") {
  Device& dev = test::device();
  std::mt19937_64 rng(test::fresh_seed());
  for (uint64_t n : kSizes) {
    check_reduce<Aabb>(dev, n, rng);
    check_reduce<Affine>(dev, n, rng);
    check_reduce<Mat4>(dev, n, rng);
    check_reduce<Welford>(dev, n, rng);
    check_reduce<ArgMin>(dev, n, rng);
  }
}

TEST_CASE("a user scan keeps order with every algorithm and kind", "[user][scan]") {
  Device& dev = test::device();
  std::mt19937_64 rng(test::fresh_seed());
  for (ScanAlgorithm a : scan_algorithms(dev))
    for (ScanKind kind : {ScanKind::inclusive, ScanKind::exclusive})
      for (uint64_t n : kSizes) {
        check_scan<Affine>(dev, a, kind, n, rng);
        check_scan<Mat4>(dev, a, kind, n, rng);
        check_scan<Aabb>(dev, a, kind, n, rng);
        check_scan<Welford>(dev, a, kind, n, rng);
        check_scan<ArgMin>(dev, a, kind, n, rng);
      }
}

namespace {

// Reduces and scans values of WORDS words each (the word-count operators of tests/CMakeLists.txt) with every
// algorithm and kind, at sizes around the tiles.
template <typename... Words>
void check_word_counts() {
  Device& dev = test::device();
  std::mt19937_64 rng(test::fresh_seed());
  for (uint64_t n : {0, 1, 2, 63, 65, 255, 257, 1023, 1025, 2 * 1280 + 17, 100003}) {
    (check_reduce<Words>(dev, n, rng), ...);
    for (ScanAlgorithm a : scan_algorithms(dev))
      for (ScanKind kind : {ScanKind::inclusive, ScanKind::exclusive}) (check_scan<Words>(dev, a, kind, n, rng), ...);
  }
}

}  // namespace

// Two cases, each a test of its own on an empty shader cache.
TEST_CASE("user values of 1, 4 and 5 words reduce and scan in order with every algorithm and kind",
          "[user][scan][words]") {
  check_word_counts<Words1, Words4, Words5>();
}

TEST_CASE("user values of 8 and 12 words reduce and scan in order with every algorithm and kind",
          "[user][scan][words]") {
  check_word_counts<Words8, Words12>();
}

TEST_CASE("user chained scans store every tile shape through the group transposition or directly",
          "[user][scan]") {
  Device& dev = test::device();
  if (!dev.context().capabilities().has(feature_memory_model)) {
    WARN("no Vulkan memory model: no chained scan to check");
    return;
  }
  std::mt19937_64 rng(test::fresh_seed());
  // Values per invocation stored as rows (2, 4), through the group butterfly (Welford, 3 words: 6 in three
  // blocks of 2, 8 in one of 8, or two of 4 at subgroups of 4) and directly (1, 3, and where the butterfly is
  // not written out: boxes, 6 words, past 4 values; Welford past 8): common/blocked_tile.glsl.
  for (uint32_t per_invocation : {1u, 2u, 3u, 4u, 6u, 8u, 16u})
    for (ScanKind kind : {ScanKind::inclusive, ScanKind::exclusive}) {
      const uint64_t tile = 64 * per_invocation;
      for (uint64_t n : {tile - 1, tile, tile + 1, 3 * tile + 5}) {
        check_scan<Aabb>(dev, ScanAlgorithm::chained_fallback, kind, n, rng, 0, 0, 64, per_invocation);
        check_scan<Welford>(dev, ScanAlgorithm::chained_fallback, kind, n, rng, 0, 0, 64, per_invocation);
      }
    }
}

TEST_CASE("user chained scans without 64-bit atomics keep their tile state in 16-bit parts, forced fallback included",
          "[user][scan][state_parts]") {
  for (uint32_t period : {0u, 3u}) {
    Device& dev =
        test::device_without(feature_int64_atomics, period ? test::forced_fallback(period) : test::DeviceSetup{});
    if (!test::has_features(dev, feature_memory_model, "the chained scan")) return;
    std::mt19937_64 rng(test::fresh_seed());
    INFO("fallback period " << period);
    for (uint64_t n : {uint64_t(1025), uint64_t(100003)}) {
      check_scan<Affine>(dev, ScanAlgorithm::chained_fallback, ScanKind::inclusive, n, rng);
      check_scan<Mat4>(dev, ScanAlgorithm::chained_fallback, ScanKind::exclusive, n, rng);
      check_scan<Welford>(dev, ScanAlgorithm::chained_fallback, ScanKind::inclusive, n, rng);
    }
  }
}

TEST_CASE("user scans through the subgroup emulation", "[user][scan][no_subgroup_ops]") {
  Device& dev = test::device(test::no_subgroups());
  std::mt19937_64 rng(test::fresh_seed());
  for (ScanAlgorithm a : scan_algorithms(dev))
    for (uint64_t n : {uint64_t(1025), uint64_t(100003)}) {
      check_scan<Affine>(dev, a, ScanKind::inclusive, n, rng);
      check_scan<Mat4>(dev, a, ScanKind::exclusive, n, rng);
    }
  for (uint64_t n : {uint64_t(1025), uint64_t(100003)}) check_reduce<Affine>(dev, n, rng);
}

TEST_CASE("a forced fallback reduces stuck user tiles in the owner's order", "[user][scan][fallback]") {
  Device& dev = test::device(test::forced_fallback(3));
  if (!test::has_features(dev, feature_memory_model, "the chained scan")) return;
  std::mt19937_64 rng(test::fresh_seed());
  for (uint64_t n : {uint64_t(1025), uint64_t(20000), uint64_t(100003)}) {
    check_scan<Affine>(dev, ScanAlgorithm::chained_fallback, ScanKind::inclusive, n, rng);
    check_scan<Mat4>(dev, ScanAlgorithm::chained_fallback, ScanKind::exclusive, n, rng);
    check_scan<Welford>(dev, ScanAlgorithm::chained_fallback, ScanKind::inclusive, n, rng);
    check_scan<Words1>(dev, ScanAlgorithm::chained_fallback, ScanKind::exclusive, n, rng);
    check_scan<Words12>(dev, ScanAlgorithm::chained_fallback, ScanKind::inclusive, n, rng);
  }
  // The fallbacks happened: the statistics counters in scratch.
  const uint64_t n = 20000;
  const Scan plan = test::make_scan(dev.context(), scan_desc(user_op<Affine>(), ScanAlgorithm::chained_fallback,
                                                             ScanKind::inclusive, n));
  Buffer in = test::make_buffer(dev, n * sizeof(Affine));
  Buffer out = test::make_buffer(dev, n * sizeof(Affine));
  Buffer scratch = test::make_scratch(dev, plan);
  test::upload(dev, in, random_elements<Affine>(rng, n));
  REQUIRE(test::submit_compute(dev, [&](VkCommandBuffer cmd) {
            REQUIRE(plan.record(cmd, in.range(), out.range(), n, scratch.range()).ok());
          }).ok());
  const auto counters = test::download<uint32_t>(dev, scratch, 2, plan.statistics_offset());
  INFO("tiles " << counters[0] << ", fallbacks " << counters[1]);
  CHECK(counters[1] > 0);
}

TEST_CASE("user look-backs over several windows keep order, stuck predecessors and forced fallbacks included",
          "[user][scan][fallback]") {
  // A step reads lookback_windows windows of predecessors (shaders/scan/chained.comp) and folds them up to
  // the first not-ready one; the fallbacks recompute a stuck tile from 2 values per invocation (the owner's
  // scan) or 8 (folded as they load) and must give the owner's bits.
  for (uint32_t period : {0u, 2u, 5u}) {
    Device& dev = test::device(period ? test::forced_fallback(period) : test::DeviceSetup{});
    if (!test::has_features(dev, feature_memory_model, "the chained scan")) return;
    std::mt19937_64 rng(test::fresh_seed());
    INFO("fallback period " << period);
    for (uint32_t windows : {1u, 2u, 3u, 8u})
      for (uint64_t n : {uint64_t(64 * 8 * 9 + 1), uint64_t(100003)}) {
        check_scan<Affine>(dev, ScanAlgorithm::chained_fallback, ScanKind::inclusive, n, rng, 0, 0, 64, 2, windows);
        check_scan<Words4>(dev, ScanAlgorithm::chained_fallback, ScanKind::exclusive, n, rng, 0, 0, 64, 8, windows);
        check_scan<Mat4>(dev, ScanAlgorithm::chained_fallback, ScanKind::inclusive, n, rng, 0, 0, 64, 1, windows);
      }
  }
}

TEST_CASE("user reduce and scan read their count on the GPU", "[user][indirect]") {
  Device& dev = test::device();
  std::mt19937_64 rng(test::fresh_seed());
  const uint64_t max_count = 5000;
  const std::vector<Affine> x = random_elements<Affine>(rng, max_count);
  Buffer in = test::make_buffer(dev, max_count * sizeof(Affine));
  Buffer out = test::make_buffer(dev, max_count * sizeof(Affine));
  Buffer count = test::make_buffer(dev, 16);
  test::upload(dev, in, x);
  std::vector<ScanAlgorithm> algorithms = scan_algorithms(dev);
  for (uint32_t c : {0u, 1u, 1025u, 5000u, 7000u}) {
    const uint64_t n = std::min<uint64_t>(c, max_count);
    INFO("count " << c);
    test::upload(dev, count, std::vector<uint32_t>{c});
    const std::vector<Affine> prefix(x.begin(), x.begin() + ptrdiff_t(n));
    for (ScanAlgorithm a : algorithms) {
      INFO(to_string(a));
      const Scan plan = test::make_scan(dev.context(), scan_desc(user_op<Affine>(), a, ScanKind::exclusive, max_count));
      Buffer scratch = test::make_scratch(dev, plan);
      test::poison(dev, out);
      REQUIRE(test::submit_compute(dev, [&](VkCommandBuffer cmd) {
                auto r = plan.record_indirect(cmd, in.range(), out.range(), count.range(0, 4), scratch.range());
                INFO(r.error().message);
                REQUIRE(r.ok());
              }).ok());
      const auto want = scan(prefix, true);
      const auto got = test::download<Affine>(dev, out, size_t(n));
      bool all = true;
      for (size_t i = 0; i < got.size() && all; ++i) all = equal(got[i], want[i]);
      CHECK(all);
      CHECK(tail_poisoned(dev, out, n, max_count, sizeof(Affine)));
    }
    const Reduce plan = test::make_reduce(dev.context(), reduce_desc(user_op<Affine>(), max_count));
    Buffer scratch = test::make_scratch(dev, plan);
    REQUIRE(test::submit_compute(dev, [&](VkCommandBuffer cmd) {
              auto r = plan.record_indirect(cmd, in.range(), out.range(0, sizeof(Affine)), count.range(0, 4), scratch.range());
              INFO(r.error().message);
              REQUIRE(r.ok());
            }).ok());
    CHECK(equal(test::download<Affine>(dev, out, 1)[0], reduce(prefix)));
  }
}

TEST_CASE("12-byte user elements at offsets that are not multiples of 16", "[user][offsets]") {
  Device& dev = test::device();
  std::mt19937_64 rng(test::fresh_seed());
  for (ScanAlgorithm a : scan_algorithms(dev))
    for (VkDeviceSize in_offset : {VkDeviceSize(12), VkDeviceSize(60), VkDeviceSize(12 * 37)})
      check_scan<Welford>(dev, a, ScanKind::inclusive, 3001, rng, in_offset, 12 * 11);
}

TEST_CASE("user scans and reduces across storage-buffer windows", "[user][host][windows]") {
  // 64-byte elements: lavapipe's 128 MiB maxStorageBufferRange holds about 2^21 of them.
  Device& dev = test::device();
  const uint64_t range = dev.context().capabilities().max_storage_buffer_range;
  const uint64_t n = range / sizeof(Mat4) + 1000;
  if (n * sizeof(Mat4) > (uint64_t(1) << 31)) {
    test::skip("maxStorageBufferRange " + std::to_string(range) + ": windows of 64-byte elements take more than 2 GiB here");
    return;
  }
  std::mt19937_64 rng(test::fresh_seed());
  for (ScanAlgorithm a : scan_algorithms(dev)) check_scan<Mat4>(dev, a, ScanKind::inclusive, n, rng);
  check_reduce<Mat4>(dev, n, rng);
}

// automatic's choice for a user operator, checked on the plan, and the plan's result against the host's at
// `n` elements.
template <class T>
void check_automatic(Device& dev, uint64_t max_count, ScanAlgorithm want, uint64_t n, std::mt19937_64& rng) {
  const UserOperator& op = user_op<T>();
  INFO(op.name << " max_count " << max_count << " n=" << n);
  const Scan plan = test::make_scan(dev.context(), scan_desc(op, ScanAlgorithm::automatic, ScanKind::inclusive, max_count));
  CHECK(plan.algorithm() == want);
  check_scan_plan<T>(dev, plan, ScanKind::inclusive, n, rng);
}

TEST_CASE("automatic user scans chain values of up to 16 bytes from 2^20 elements, else reduce_then_scan, and match the CPU",
          "[user][scan][automatic]") {
  Device& dev = test::device();
  std::mt19937_64 rng(test::fresh_seed());
  const uint64_t large = uint64_t(1) << 20;
  const ScanAlgorithm chained = dev.context().capabilities().has(feature_memory_model) ? ScanAlgorithm::chained_fallback
                                                                                       : ScanAlgorithm::reduce_then_scan;
  check_automatic<Words1>(dev, large, chained, 100003, rng);     // 4 bytes
  check_automatic<ArgMin>(dev, large << 4, chained, 4097, rng);  // 8
  check_automatic<Welford>(dev, large, chained, 1, rng);         // 12
  check_automatic<Words4>(dev, large, chained, 4097, rng);       // 16
  check_automatic<Welford>(dev, large - 1, ScanAlgorithm::reduce_then_scan, 4097, rng);
  check_automatic<Words5>(dev, large, ScanAlgorithm::reduce_then_scan, 4097, rng);  // 20
  check_automatic<Aabb>(dev, large << 4, ScanAlgorithm::reduce_then_scan, 4097, rng);
  check_automatic<Affine>(dev, 1025, ScanAlgorithm::reduce_then_scan, 1025, rng);
}

TEST_CASE("user reduce_then_scan and reduce repeat their bits", "[user][deterministic]") {
  Device& dev = test::device();
  std::mt19937_64 rng(test::fresh_seed());
  const uint64_t n = 100003;
  // A plan large enough that automatic would chain Welford without deterministic.
  ScanDesc d = scan_desc(user_op<Welford>(), ScanAlgorithm::automatic, ScanKind::inclusive, uint64_t(1) << 20);
  d.deterministic = true;
  const Scan plan = test::make_scan(dev.context(), d);
  CHECK(plan.algorithm() == ScanAlgorithm::reduce_then_scan);
  const std::vector<Welford> x = random_elements<Welford>(rng, n);
  Buffer in = test::make_buffer(dev, n * sizeof(Welford));
  Buffer out = test::make_buffer(dev, n * sizeof(Welford));
  Buffer scratch = test::make_scratch(dev, plan);
  test::upload(dev, in, x);
  std::vector<uint32_t> first;
  for (int run = 0; run < 3; ++run) {
    REQUIRE(test::submit_compute(dev, [&](VkCommandBuffer cmd) {
              REQUIRE(plan.record(cmd, in.range(), out.range(), n, scratch.range()).ok());
            }).ok());
    const auto bits = test::download<uint32_t>(dev, out, n * 3);
    if (run == 0) first = bits;
    else CHECK(bits == first);
  }
}

TEST_CASE("no user operator's look-back branches on a value that differs between the lanes of a subgroup",
          "[user][host][uniformity]") {
  // As for the built-in kernels (test_subgroup_uniformity.cpp); user values pick through word selects.
  test::LookBackReport report;
  for (const UserOperator* op : {&vkprim_ops::aabb_union(), &vkprim_ops::affine(), &vkprim_ops::argmin(),
                                 &vkprim_ops::mat4_product(), &vkprim_ops::welford(), &vkprim_ops::words1(),
                                 &vkprim_ops::words4(), &vkprim_ops::words5(), &vkprim_ops::words8(),
                                 &vkprim_ops::words12()})
    test::check_look_backs(*op->kernels, op->name, report);
  CHECK(report.unpacked);
  for (const std::string& branch : report.divergent) FAIL_CHECK(branch);
  CHECK(report.modules_with_look_back >= 10);
}

TEST_CASE("user operator errors name the problem and record nothing", "[user][errors][host]") {
  Device& dev = test::device();
  Context& ctx = dev.context();
  UserOperator broken = vkprim_ops::affine();
  broken.kernels = nullptr;
  ScanDesc sd = scan_desc(broken, ScanAlgorithm::automatic, ScanKind::inclusive, 100);
  auto s = Scan::create(ctx, sd);
  CHECK(s.status() == Status::invalid_argument);
  CHECK(s.error().message.find("no kernels") != std::string::npos);

  UserOperator big = vkprim_ops::affine();
  big.size = 68;
  ReduceDesc rd = reduce_desc(big, 100);
  auto r = Reduce::create(ctx, rd);
  CHECK(r.status() == Status::invalid_argument);
  CHECK(r.error().message.find("size 68") != std::string::npos);

  rd = reduce_desc(vkprim_ops::affine(), 100);
  rd.algorithm = ReduceAlgorithm::grid_stride;
  r = Reduce::create(ctx, rd);
  CHECK(r.status() == Status::invalid_argument);
  CHECK(r.error().message.find("out of order") != std::string::npos);

  ReduceDesc plain;
  plain.max_count = 100;
  plain.algorithm = ReduceAlgorithm::ordered;
  r = Reduce::create(ctx, plain);
  CHECK(r.status() == Status::invalid_argument);
  CHECK(r.error().message.find("user operators only") != std::string::npos);

  sd = scan_desc(vkprim_ops::affine(), ScanAlgorithm::hillis_steele, ScanKind::inclusive, 100);
  s = Scan::create(ctx, sd);
  CHECK(s.status() == Status::invalid_argument);
  CHECK(s.error().message.find("hillis_steele") != std::string::npos);

  sd = scan_desc(vkprim_ops::welford(), ScanAlgorithm::chained_fallback, ScanKind::inclusive, 100);
  sd.deterministic = true;
  s = Scan::create(ctx, sd);
  CHECK(s.status() == Status::invalid_argument);
  CHECK(s.error().message.find("welford") != std::string::npos);

  // A 12-byte element at an offset that is not a multiple of 12: refused before anything is recorded.
  const Scan plan = test::make_scan(ctx, scan_desc(vkprim_ops::welford(), ScanAlgorithm::reduce_then_scan,
                                                   ScanKind::inclusive, 100));
  Buffer in = test::make_buffer(dev, 4096);
  Buffer out = test::make_buffer(dev, 4096);
  Buffer scratch = test::make_scratch(dev, plan);
  test::poison(dev, out);
  auto rec = test::recorded_result(dev, [&](VkCommandBuffer cmd) {
    return plan.record(cmd, in.range(16), out.range(), 100, scratch.range());
  });
  CHECK(rec.status() == Status::invalid_argument);
  CHECK(rec.error().message.find("multiple of the element size 12") != std::string::npos);
  CHECK(test::still_poisoned(dev, out));
}

namespace {

// Keyed user reductions and scans against the host: runs of mean length `mean` over u32 keys, with `algorithm`
// (the resolved one when automatic).
template <class T>
void check_by_key(Device& dev, uint64_t n, uint32_t mean, std::mt19937_64& rng,
                  KeyedAlgorithm algorithm = KeyedAlgorithm::automatic) {
  const UserOperator& op = user_op<T>();
  INFO(op.name << " by key n=" << n << " mean run " << mean);
  const std::vector<uint32_t> keys = host::keys_with_runs<uint32_t>(size_t(n), mean, 0, false, rng);
  const std::vector<T> x = random_elements<T>(rng, size_t(n));
  const std::vector<uint32_t> starts = host::run_starts(keys);
  const uint64_t runs = starts.size();
  Buffer key_buf = test::make_buffer(dev, (n + 1) * 4);
  Buffer value_buf = test::make_buffer(dev, (n + 1) * sizeof(T));
  Buffer out_keys = test::make_buffer(dev, (n + 2) * 4);
  Buffer out_values = test::make_buffer(dev, (n + 2) * sizeof(T));
  Buffer count = test::make_buffer(dev, 16);
  test::upload(dev, key_buf, keys);
  test::upload(dev, value_buf, x);

  ReduceByKeyDesc rd;
  rd.user_operator = &op;
  rd.max_count = std::max<uint64_t>(n, 1);
  rd.algorithm = algorithm;
  auto reduce = ReduceByKey::create(dev.context(), rd);
  if (!reduce) FAIL(reduce.error().message);
  if (algorithm != KeyedAlgorithm::automatic) CHECK(reduce.value().algorithm() == algorithm);
  Buffer scratch = test::make_buffer(dev, std::max<VkDeviceSize>(16, reduce.value().scratch_requirements().size));
  test::poison(dev, out_keys);
  test::poison(dev, out_values);
  REQUIRE(test::submit_compute(dev, [&](VkCommandBuffer cmd) {
            auto r = reduce.value().record(cmd,
                                           ReduceByKeyOperands{.keys = key_buf.range(),
                                                               .values = value_buf.range(),
                                                               .unique_keys = out_keys.range(),
                                                               .aggregates = out_values.range(),
                                                               .run_count = count.range(0, 4),
                                                               .scratch = scratch.range()},
                                           n);
            INFO(r.error().message);
            REQUIRE(r.ok());
          }).ok());
  CHECK(test::download<uint32_t>(dev, count, 1)[0] == runs);
  const auto got_keys = test::download<uint32_t>(dev, out_keys, size_t(runs));
  const auto got = test::download<T>(dev, out_values, size_t(runs));
  bool all = true;
  for (uint64_t r = 0; r < runs && all; ++r) {
    const uint64_t end = r + 1 < runs ? starts[r + 1] : n;
    const T want = reduce_range(x, starts[r], end);
    all = got_keys[r] == keys[starts[r]] && equal(got[r], want);
    if (!all) FAIL_CHECK("run " << r << " [" << starts[r] << ", " << end << ") differs");
  }
  CHECK(tail_poisoned(dev, out_values, runs, n + 2, sizeof(T)));

  for (ScanKind kind : {ScanKind::inclusive, ScanKind::exclusive}) {
    ScanByKeyDesc sd;
    sd.user_operator = &op;
    sd.kind = kind;
    sd.max_count = std::max<uint64_t>(n, 1);
    sd.algorithm = algorithm;
    auto scan_plan = ScanByKey::create(dev.context(), sd);
    if (!scan_plan) FAIL(scan_plan.error().message);
    if (algorithm != KeyedAlgorithm::automatic) CHECK(scan_plan.value().algorithm() == algorithm);
    Buffer scan_scratch = test::make_buffer(dev, std::max<VkDeviceSize>(16, scan_plan.value().scratch_requirements().size));
    test::poison(dev, out_values);
    REQUIRE(test::submit_compute(dev, [&](VkCommandBuffer cmd) {
              auto r = scan_plan.value().record(cmd,
                                                ScanByKeyOperands{.keys = key_buf.range(),
                                                                  .values = value_buf.range(),
                                                                  .output = out_values.range(),
                                                                  .scratch = scan_scratch.range()},
                                                n);
              INFO(r.error().message);
              REQUIRE(r.ok());
            }).ok());
    const auto scanned = test::download<T>(dev, out_values, size_t(n));
    bool same = true;
    for (uint64_t r = 0; r < runs && same; ++r) {
      const uint64_t end = r + 1 < runs ? starts[r + 1] : n;
      const std::vector<T> run(x.begin() + ptrdiff_t(starts[r]), x.begin() + ptrdiff_t(end));
      const std::vector<T> want = scan(run, kind == ScanKind::exclusive);
      for (uint64_t i = 0; i < want.size() && same; ++i) same = equal(scanned[starts[r] + i], want[i]);
      if (!same) FAIL_CHECK(to_string(kind) << " scan of run " << r << " [" << starts[r] << ", " << end << ") differs");
    }
    CHECK(tail_poisoned(dev, out_values, n, n + 2, sizeof(T)));
  }
}

}  // namespace

TEST_CASE("user operators reduce and scan runs of equal keys in order", "[user][by_key]") {
  Device& dev = test::device();
  if (!test::has_features(dev, feature_memory_model, "the keyed primitives")) return;
  std::mt19937_64 rng(test::fresh_seed());
  for (uint64_t n : {uint64_t(0), uint64_t(1), uint64_t(2), uint64_t(1023), uint64_t(1025), uint64_t(30011)})
    for (uint32_t mean : {1u, 4u, 64u}) {
      check_by_key<Affine>(dev, n, mean, rng);
      check_by_key<Aabb>(dev, n, mean, rng);
    }
  check_by_key<Mat4>(dev, 30011, 16, rng);
  check_by_key<Welford>(dev, 30011, 64, rng);
  check_by_key<ArgMin>(dev, 30011, 4, rng);
  check_by_key<Words1>(dev, 30011, 4, rng);
  check_by_key<Words4>(dev, 30011, 4, rng);
  check_by_key<Words5>(dev, 30011, 4, rng);
  check_by_key<Words8>(dev, 30011, 4, rng);
  check_by_key<Words12>(dev, 30011, 4, rng);
}

TEST_CASE("keyed user reductions fall back in the owner's order", "[user][by_key][fallback]") {
  Device& dev = test::device(test::forced_fallback(3));
  if (!test::has_features(dev, feature_memory_model, "the keyed primitives")) return;
  std::mt19937_64 rng(test::fresh_seed());
  check_by_key<Affine>(dev, 30011, 64, rng);
  check_by_key<Mat4>(dev, 20011, 300, rng);
}

TEST_CASE("user operators by key without the memory model take reduce_then_scan and keep input order",
          "[user][by_key][reduce_then_scan]") {
  test::DeviceSetup o;
  o.testing.mask_features = feature_memory_model;
  Device& dev = test::device(o);
  std::mt19937_64 rng(test::fresh_seed());
  const KeyedAlgorithm rts = KeyedAlgorithm::reduce_then_scan;
  for (uint64_t n : {uint64_t(0), uint64_t(1), uint64_t(1025), uint64_t(30011)})
    for (uint32_t mean : {1u, 64u}) {
      check_by_key<Affine>(dev, n, mean, rng, rts);
      check_by_key<Aabb>(dev, n, mean, rng, rts);
    }
  check_by_key<Mat4>(dev, 30011, 16, rng, rts);
  check_by_key<Welford>(dev, 30011, 300, rng, rts);
  check_by_key<ArgMin>(dev, 30011, 4, rng, rts);
}
