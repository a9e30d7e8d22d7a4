// The keyed primitives (ReduceByKey, ScanByKey, RunLengthEncode, NonTrivialRuns, Unique) against the host
// references of tools/support/host_by_key.hpp: run lengths 1, 2, random and all equal; sizes 0, 1, a tile
// and one either side, across tile boundaries and odd large counts; every value type and operator; 64-bit
// and float keys (compared as bits); forced fallback; GPU-read counts; unaligned offsets; the errors. Every
// output is poisoned first and checked to hold nothing at or past the run count.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "host_by_key.hpp"
#include "test_support.hpp"
#include "vkprim/reduce_by_key.hpp"
#include "vkprim/run_length_encode.hpp"
#include "vkprim/scan_by_key.hpp"
#include "vkprim/unique.hpp"

using namespace vkprim;

namespace {

// Where the rig places the operands, in elements (count: u32 words), to reach the scalar paths.
struct Offsets {
  uint64_t keys = 0, values = 0, a = 0, b = 0, count = 0;
};

constexpr uint64_t kGuard = 8;

// Run shapes: mean run length (0: fixed length `fixed`).
struct Runs {
  const char* name;
  uint32_t mean;
  uint32_t fixed;
};
const Runs kDistinct{"all distinct", 0, 1};
const Runs kPairs{"pairs", 0, 2};
const Runs kRandom4{"random, mean 4", 4, 0};
const Runs kRandom64{"random, mean 64", 64, 0};
const Runs kAllEqual{"all equal", 0, 1u << 31};

template <class K>
std::vector<K> make_keys(uint64_t n, const Runs& runs, std::mt19937_64& rng) {
  return host::keys_with_runs<K>(n, runs.mean, runs.fixed, false, rng);
}

template <class V>
std::vector<V> make_values(uint64_t n, Op op, std::mt19937_64& rng) {
  std::vector<V> v(n);
  host::fill_random(v, rng);
  if constexpr (std::is_floating_point_v<V>)
    if (op != Op::add)
      for (auto& x : v) x = V(int64_t(rng() % 2001) - 1000) / V(8);
  return v;
}

// Buffers for one plan: keys, values, outputs A and B, the count word(s), scratch; all with guards.
struct Buffers {
  Buffer keys, values, a, b, count, scratch;
  Buffers(Device& dev, uint64_t max_count, uint32_t key_bytes, uint32_t value_bytes, VkDeviceSize scratch_bytes)
      : keys(test::make_buffer(dev, (max_count + 2 * kGuard) * key_bytes)),
        values(test::make_buffer(dev, (max_count + 2 * kGuard) * value_bytes)),
        a(test::make_buffer(dev, (max_count + 2 * kGuard) * std::max<uint32_t>(key_bytes, 4))),
        b(test::make_buffer(dev, (max_count + 2 * kGuard) * std::max<uint32_t>(value_bytes, 4))),
        count(test::make_buffer(dev, 64)),
        scratch(test::make_buffer(dev, std::max<VkDeviceSize>(16, scratch_bytes))) {}
};

// Element i of a downloaded buffer of T at element offset `shift`.
template <class T>
std::vector<T> fetch(Device& dev, const Buffer& b, uint64_t shift, uint64_t n) {
  return test::download<T>(dev, b, shift + n + kGuard);
}

// Every word of `b` from byte `from` on still holds the poison.
bool poisoned_from(Device& dev, const Buffer& b, VkDeviceSize from) {
  const auto words = test::download<uint32_t>(dev, b, b.size() / 4);
  for (size_t i = from / 4; i < words.size(); ++i)
    if (words[i] != test::kPoison) {
      UNSCOPED_INFO("word " << i << " (byte " << i * 4 << ") written: " << words[i]);
      return false;
    }
  return true;
}

// got[shift + i] == expected[i] for every i: bit-exact, or for float add within the bound of a sum of
// `bound_terms[i]` terms of magnitude `magnitudes[i]`.
template <class T>
bool same_elements(const std::vector<T>& got, uint64_t shift, const std::vector<T>& expected, const char* what,
                   const std::vector<long double>* magnitudes = nullptr, const std::vector<uint32_t>* terms = nullptr) {
  for (size_t i = 0; i < expected.size(); ++i) {
    const T g = got[shift + i];
    bool ok = host::same_bits(g, expected[i]);
    if constexpr (std::is_floating_point_v<T>) {
      if (!ok && magnitudes) {
        const long double eps = std::numeric_limits<T>::epsilon();
        const long double bound = ((*terms)[i] + 32) * eps * (*magnitudes)[i];
        ok = std::fabs(static_cast<long double>(g) - static_cast<long double>(expected[i])) <= bound;
      }
    }
    if (!ok) {
      UNSCOPED_INFO(what << "[" << i << "] = " << test::show(g) << ", expected " << test::show(expected[i]) << " (of "
                         << expected.size() << ")");
      return false;
    }
  }
  return true;
}

void submit(Device& dev, const std::function<Result<void>(VkCommandBuffer)>& record) {
  Result<void> recorded;
  auto submitted = test::submit_compute(dev, [&](VkCommandBuffer cmd) { recorded = record(cmd); });
  INFO("record: " << recorded.message() << "; submit: " << submitted.message());
  REQUIRE(recorded.ok());
  REQUIRE(submitted.ok());
}

// A plan of `desc`; an explicit algorithm must be the one the plan runs.
template <class Plan, class Desc>
Plan make_plan(Device& dev, const Desc& desc) {
  auto plan = Plan::create(dev.context(), desc);
  INFO("create: " << (plan ? std::string("ok") : plan.error().message));
  REQUIRE(plan.ok());
  if (desc.algorithm != KeyedAlgorithm::automatic) CHECK(plan->algorithm() == desc.algorithm);
  return std::move(plan).value();
}

// The count the plan sees: the GPU count clamped to max_count and the data, or the data's size.
uint64_t effective_count(uint64_t n, uint64_t max_count, const std::optional<uint32_t>& gpu_count) {
  return gpu_count ? std::min<uint64_t>({*gpu_count, n, max_count}) : n;
}

// Uploads keys (and values) at their offsets, poisons outputs, and writes the GPU count at word 12.
template <class K, class V>
void stage(Device& dev, Buffers& bufs, const std::vector<K>& keys, const std::vector<V>* values, const Offsets& o,
           const std::optional<uint32_t>& gpu_count) {
  std::vector<K> staged_keys(o.keys + keys.size() + kGuard);
  std::mt19937_64 noise(keys.size());
  host::fill_random(staged_keys, noise);  // keys around the data: a plan that reads them changes the runs
  std::copy(keys.begin(), keys.end(), staged_keys.begin() + std::ptrdiff_t(o.keys));
  test::upload(dev, bufs.keys, staged_keys);
  if (values) {
    std::vector<V> staged(o.values + values->size() + kGuard, V(77));
    std::copy(values->begin(), values->end(), staged.begin() + std::ptrdiff_t(o.values));
    test::upload(dev, bufs.values, staged);
  }
  test::poison(dev, bufs.a);
  test::poison(dev, bufs.b);
  test::poison(dev, bufs.count);
  if (gpu_count) test::upload(dev, bufs.count, std::vector<uint32_t>{*gpu_count}, 48);
}

// ---- ReduceByKey ----

template <class K, class V>
bool check_reduce_by_key(Device& dev, const ReduceByKey& plan, Buffers& bufs, const std::vector<K>& all_keys,
                         const std::vector<V>& all_values, Offsets o = {}, std::optional<uint32_t> gpu_count = {}) {
  const ReduceByKeyDesc& d = plan.desc();
  const uint64_t n = all_keys.size();
  const uint64_t used = effective_count(n, d.max_count, gpu_count);
  INFO("ReduceByKey " << to_string(d.key_type) << " keys, " << to_string(d.value_type) << " " << to_string(d.op)
                      << ", n " << n << (gpu_count ? ", GPU count " + std::to_string(*gpu_count) : std::string()));
  const std::vector<K> keys(all_keys.begin(), all_keys.begin() + std::ptrdiff_t(used));
  const std::vector<V> values(all_values.begin(), all_values.begin() + std::ptrdiff_t(used));
  std::vector<K> expected_keys;
  std::vector<V> expected;
  host::reduce_by_key(keys, values, d.op, expected_keys, expected);
  stage(dev, bufs, all_keys, &all_values, o, gpu_count);
  const ReduceByKeyOperands operands{.keys = bufs.keys.range(o.keys * sizeof(K), n * sizeof(K)),
                                     .values = bufs.values.range(o.values * sizeof(V), n * sizeof(V)),
                                     .unique_keys = bufs.a.range(o.a * sizeof(K), n * sizeof(K)),
                                     .aggregates = bufs.b.range(o.b * sizeof(V), n * sizeof(V)),
                                     .run_count = bufs.count.range(o.count * 4, 4),
                                     .scratch = bufs.scratch.range()};
  submit(dev, [&](VkCommandBuffer cmd) {
    return gpu_count ? plan.record_indirect(cmd, operands, bufs.count.range(48, 4)) : plan.record(cmd, operands, n);
  });
  const uint32_t runs = test::download<uint32_t>(dev, bufs.count, 16)[o.count];
  INFO("runs " << runs << ", expected " << expected.size());
  bool ok = runs == expected.size();
  const auto got_keys = fetch<K>(dev, bufs.a, o.a, n);
  const auto got = fetch<V>(dev, bufs.b, o.b, n);
  std::vector<long double> magnitudes;
  std::vector<uint32_t> terms;
  const auto starts = host::run_starts(keys);
  for (size_t r = 0; r < starts.size(); ++r) {
    const size_t end = r + 1 < starts.size() ? starts[r + 1] : keys.size();
    long double m = 0;
    for (size_t i = starts[r]; i < end; ++i) m += std::fabs(static_cast<long double>(values[i]));
    magnitudes.push_back(m);
    terms.push_back(uint32_t(end - starts[r]));
  }
  const bool float_add = std::is_floating_point_v<V> && d.op == Op::add;
  ok = same_elements(got_keys, o.a, expected_keys, "unique_keys") && ok;
  ok = same_elements(got, o.b, expected, "aggregates", float_add ? &magnitudes : nullptr, &terms) && ok;
  ok = poisoned_from(dev, bufs.a, (o.a + expected.size()) * sizeof(K)) && ok;
  ok = poisoned_from(dev, bufs.b, (o.b + expected.size()) * sizeof(V)) && ok;
  CHECK(ok);
  return ok;
}

template <class K, class V>
void reduce_by_key_cases(Device& dev, DataType kt, DataType vt, Op op, const std::vector<uint64_t>& sizes,
                         const std::vector<Runs>& shapes, std::mt19937_64& rng, uint32_t wg = 0, uint32_t items = 0,
                         KeyedAlgorithm algorithm = KeyedAlgorithm::automatic) {
  const uint64_t max_count = *std::max_element(sizes.begin(), sizes.end());
  const Tuning tuning{.workgroup_size = wg, .items_per_thread = items};
  auto plan = make_plan<ReduceByKey>(
      dev, ReduceByKeyDesc{kt, vt, op, std::max<uint64_t>(1, max_count), tuning, nullptr, algorithm});
  Buffers bufs(dev, max_count, sizeof(K), sizeof(V), plan.scratch_requirements().size);
  for (uint64_t n : sizes)
    for (const Runs& shape : shapes) {
      INFO("runs " << shape.name);
      check_reduce_by_key(dev, plan, bufs, make_keys<K>(n, shape, rng), make_values<V>(n, op, rng));
    }
}

uint64_t tile_of(Device& dev, DataType kt, DataType vt) {
  auto plan = make_plan<ReduceByKey>(dev, ReduceByKeyDesc{kt, vt, Op::add, 1});
  return plan.elements_per_tile();
}

// 0, 1, 2, each default tile size (the primitives' shapes differ) and one either side, and two of the
// largest tiles + 17.
std::vector<uint64_t> edge_sizes(Device& dev) {
  std::vector<uint64_t> tiles = {tile_of(dev, DataType::u32, DataType::u32)};
  auto scan = ScanByKey::create(dev.context(), ScanByKeyDesc{DataType::u32, DataType::u32, Op::add, ScanKind::inclusive, 1});
  auto keys_only = Unique::create(dev.context(), UniqueDesc{DataType::u32, 1});
  REQUIRE(scan.ok());
  REQUIRE(keys_only.ok());
  tiles.push_back(scan->elements_per_tile());
  tiles.push_back(keys_only->elements_per_tile());
  std::sort(tiles.begin(), tiles.end());
  tiles.erase(std::unique(tiles.begin(), tiles.end()), tiles.end());
  std::vector<uint64_t> sizes = {0, 1, 2};
  for (uint64_t t : tiles) sizes.insert(sizes.end(), {t - 1, t, t + 1});
  sizes.push_back(2 * tiles.back() + 17);
  return sizes;
}

// ---- ScanByKey ----

template <class K, class V>
bool check_scan_by_key(Device& dev, const ScanByKey& plan, Buffers& bufs, const std::vector<K>& all_keys,
                       const std::vector<V>& all_values, Offsets o = {}, std::optional<uint32_t> gpu_count = {}) {
  const ScanByKeyDesc& d = plan.desc();
  const uint64_t n = all_keys.size();
  const uint64_t used = effective_count(n, d.max_count, gpu_count);
  const bool inclusive = d.kind == ScanKind::inclusive;
  INFO("ScanByKey " << (inclusive ? "inclusive " : "exclusive ") << to_string(d.key_type) << " keys, "
                    << to_string(d.value_type) << " " << to_string(d.op) << ", n " << n
                    << (gpu_count ? ", GPU count " + std::to_string(*gpu_count) : std::string()));
  const std::vector<K> keys(all_keys.begin(), all_keys.begin() + std::ptrdiff_t(used));
  const std::vector<V> values(all_values.begin(), all_values.begin() + std::ptrdiff_t(used));
  const std::vector<V> expected = host::scan_by_key(keys, values, d.op, inclusive);
  stage(dev, bufs, all_keys, &all_values, o, gpu_count);
  const ScanByKeyOperands operands{.keys = bufs.keys.range(o.keys * sizeof(K), n * sizeof(K)),
                                   .values = bufs.values.range(o.values * sizeof(V), n * sizeof(V)),
                                   .output = bufs.b.range(o.b * sizeof(V), n * sizeof(V)),
                                   .scratch = bufs.scratch.range()};
  submit(dev, [&](VkCommandBuffer cmd) {
    return gpu_count ? plan.record_indirect(cmd, operands, bufs.count.range(48, 4)) : plan.record(cmd, operands, n);
  });
  const auto got = fetch<V>(dev, bufs.b, o.b, n);
  std::vector<long double> magnitudes(used);
  std::vector<uint32_t> terms(used);
  long double m = 0;
  uint32_t t = 0;
  for (size_t i = 0; i < used; ++i) {
    if (i == 0 || !host::same_bits(keys[i], keys[i - 1])) m = 0, t = 0;
    m += std::fabs(static_cast<long double>(values[i]));
    magnitudes[i] = m;
    terms[i] = ++t;
  }
  const bool float_add = std::is_floating_point_v<V> && d.op == Op::add;
  bool ok = same_elements(got, o.b, expected, "output", float_add ? &magnitudes : nullptr, &terms);
  ok = poisoned_from(dev, bufs.b, (o.b + used) * sizeof(V)) && ok;
  ok = poisoned_from(dev, bufs.a, 0) && ok;
  CHECK(ok);
  return ok;
}

// ---- RunLengthEncode, NonTrivialRuns, Unique ----

template <class K, class Plan>
bool check_runs(Device& dev, const Plan& plan, Buffers& bufs, const std::vector<K>& all_keys, Offsets o = {},
                std::optional<uint32_t> gpu_count = {}) {
  constexpr bool kNonTrivial = std::is_same_v<Plan, NonTrivialRuns>;
  const uint64_t n = all_keys.size();
  const uint64_t used = effective_count(n, plan.desc().max_count, gpu_count);
  INFO((kNonTrivial ? "NonTrivialRuns " : "RunLengthEncode ")
       << to_string(plan.desc().key_type) << " keys, n " << n
       << (gpu_count ? ", GPU count " + std::to_string(*gpu_count) : std::string()));
  const std::vector<K> keys(all_keys.begin(), all_keys.begin() + std::ptrdiff_t(used));
  std::vector<K> expected_keys;
  std::vector<uint32_t> expected_offsets, expected_lengths;
  host::run_lengths(keys, kNonTrivial, expected_keys, expected_offsets, expected_lengths);
  stage<K, uint32_t>(dev, bufs, all_keys, nullptr, o, gpu_count);
  const uint64_t out_n = kNonTrivial ? n / 2 : n;
  const uint32_t a_elem = kNonTrivial ? 4 : sizeof(K);
  // RunLengthEncodeOperands {keys, unique_keys, lengths, run_count, scratch} or NonTrivialRunsOperands
  // {keys, offsets, lengths, run_count, scratch}: output A is unique_keys or offsets, B the lengths.
  using Operands = std::conditional_t<kNonTrivial, NonTrivialRunsOperands, RunLengthEncodeOperands>;
  const Operands operands{bufs.keys.range(o.keys * sizeof(K), n * sizeof(K)),
                          bufs.a.range(o.a * a_elem, out_n * a_elem),
                          bufs.b.range(o.b * 4, out_n * 4),
                          bufs.count.range(o.count * 4, 4),
                          bufs.scratch.range()};
  submit(dev, [&](VkCommandBuffer cmd) {
    return gpu_count ? plan.record_indirect(cmd, operands, bufs.count.range(48, 4)) : plan.record(cmd, operands, n);
  });
  const uint32_t runs = test::download<uint32_t>(dev, bufs.count, 16)[o.count];
  INFO("runs " << runs << ", expected " << expected_lengths.size());
  bool ok = runs == expected_lengths.size();
  if constexpr (kNonTrivial)
    ok = same_elements(fetch<uint32_t>(dev, bufs.a, o.a, n), o.a, expected_offsets, "offsets") && ok;
  else
    ok = same_elements(fetch<K>(dev, bufs.a, o.a, n), o.a, expected_keys, "unique_keys") && ok;
  ok = same_elements(fetch<uint32_t>(dev, bufs.b, o.b, n), o.b, expected_lengths, "lengths") && ok;
  ok = poisoned_from(dev, bufs.a, (o.a + expected_lengths.size()) * a_elem) && ok;
  ok = poisoned_from(dev, bufs.b, (o.b + expected_lengths.size()) * 4) && ok;
  CHECK(ok);
  return ok;
}

template <class K>
bool check_unique(Device& dev, const Unique& plan, Buffers& bufs, const std::vector<K>& all_keys, Offsets o = {},
                  std::optional<uint32_t> gpu_count = {}) {
  const bool indices = plan.desc().output == SelectOutput::indices;
  const uint64_t n = all_keys.size();
  const uint64_t used = effective_count(n, plan.desc().max_count, gpu_count);
  INFO("Unique " << to_string(plan.desc().key_type) << (indices ? " indices" : " keys") << ", n " << n
                 << (gpu_count ? ", GPU count " + std::to_string(*gpu_count) : std::string()));
  const std::vector<K> keys(all_keys.begin(), all_keys.begin() + std::ptrdiff_t(used));
  const auto starts = host::run_starts(keys);
  stage<K, uint32_t>(dev, bufs, all_keys, nullptr, o, gpu_count);
  const uint32_t out_elem = indices ? 4 : sizeof(K);
  const UniqueOperands operands{.keys = bufs.keys.range(o.keys * sizeof(K), n * sizeof(K)),
                                .output = bufs.a.range(o.a * out_elem, n * out_elem),
                                .unique_count = bufs.count.range(o.count * 4, 4),
                                .scratch = bufs.scratch.range()};
  submit(dev, [&](VkCommandBuffer cmd) {
    return gpu_count ? plan.record_indirect(cmd, operands, bufs.count.range(48, 4)) : plan.record(cmd, operands, n);
  });
  const uint32_t runs = test::download<uint32_t>(dev, bufs.count, 16)[o.count];
  INFO("runs " << runs << ", expected " << starts.size());
  bool ok = runs == starts.size();
  if (indices) {
    ok = same_elements(fetch<uint32_t>(dev, bufs.a, o.a, n), o.a, starts, "indices") && ok;
  } else {
    std::vector<K> expected;
    for (uint32_t s : starts) expected.push_back(keys[s]);
    ok = same_elements(fetch<K>(dev, bufs.a, o.a, n), o.a, expected, "output") && ok;
  }
  ok = poisoned_from(dev, bufs.a, (o.a + starts.size()) * out_elem) && ok;
  ok = poisoned_from(dev, bufs.b, 0) && ok;
  CHECK(ok);
  return ok;
}

// Every keyed primitive on u32 keys (and u32 values) over `sizes` and `shapes`, on `dev`, with `algorithm` and
// the tile shape wg x items (0: the defaults).
void all_primitives_u32(Device& dev, const std::vector<uint64_t>& sizes, const std::vector<Runs>& shapes,
                        std::mt19937_64& rng, KeyedAlgorithm algorithm = KeyedAlgorithm::automatic, uint32_t wg = 0,
                        uint32_t items = 0) {
  const uint64_t max_count = std::max<uint64_t>(1, *std::max_element(sizes.begin(), sizes.end()));
  const DataType u32 = DataType::u32;
  const Tuning tuning{.workgroup_size = wg, .items_per_thread = items};
  auto rbk = make_plan<ReduceByKey>(dev, ReduceByKeyDesc{u32, u32, Op::add, max_count, tuning, nullptr, algorithm});
  auto incl = make_plan<ScanByKey>(
      dev, ScanByKeyDesc{u32, u32, Op::add, ScanKind::inclusive, max_count, tuning, nullptr, algorithm});
  auto excl = make_plan<ScanByKey>(
      dev, ScanByKeyDesc{u32, u32, Op::max, ScanKind::exclusive, max_count, tuning, nullptr, algorithm});
  auto rle = make_plan<RunLengthEncode>(dev, RunLengthEncodeDesc{u32, max_count, tuning, algorithm});
  auto ntr = make_plan<NonTrivialRuns>(dev, RunLengthEncodeDesc{u32, max_count, tuning, algorithm});
  auto uniq = make_plan<Unique>(dev, UniqueDesc{u32, max_count, SelectOutput::elements, tuning, algorithm});
  auto uniq_idx = make_plan<Unique>(dev, UniqueDesc{u32, max_count, SelectOutput::indices, tuning, algorithm});
  VkDeviceSize scratch = 0;
  for (VkDeviceSize s : {rbk.scratch_requirements().size, incl.scratch_requirements().size,
                         rle.scratch_requirements().size, ntr.scratch_requirements().size,
                         uniq.scratch_requirements().size})
    scratch = std::max(scratch, s);
  Buffers bufs(dev, max_count, 4, 4, scratch);
  for (uint64_t n : sizes)
    for (const Runs& shape : shapes) {
      INFO("runs " << shape.name);
      const auto keys = make_keys<uint32_t>(n, shape, rng);
      const auto values = make_values<uint32_t>(n, Op::add, rng);
      check_reduce_by_key(dev, rbk, bufs, keys, values);
      check_scan_by_key(dev, incl, bufs, keys, values);
      check_scan_by_key(dev, excl, bufs, keys, values);
      check_runs(dev, rle, bufs, keys);
      check_runs(dev, ntr, bufs, keys);
      check_unique(dev, uniq, bufs, keys);
      check_unique(dev, uniq_idx, bufs, keys);
    }
}

test::DeviceSetup fallback_options(uint32_t period, bool subgroups) {
  test::DeviceSetup s = test::forced_fallback(period);
  s.options.force_no_subgroups = !subgroups;
  return s;
}

// record_indirect of four primitives with `algorithm`: GPU counts 0, 1, tile + 1, n, past n and 2^32-1.
void indirect_counts(Device& dev, KeyedAlgorithm algorithm, std::mt19937_64& rng) {
  const uint64_t tile = tile_of(dev, DataType::u32, DataType::u32);
  const uint64_t n = 4 * tile + 11;
  const DataType u32 = DataType::u32;
  auto rbk = make_plan<ReduceByKey>(dev, ReduceByKeyDesc{u32, u32, Op::add, n, {}, nullptr, algorithm});
  auto scan = make_plan<ScanByKey>(dev, ScanByKeyDesc{u32, u32, Op::add, ScanKind::exclusive, n, {}, nullptr, algorithm});
  auto ntr = make_plan<NonTrivialRuns>(dev, RunLengthEncodeDesc{u32, n, {}, algorithm});
  auto uniq = make_plan<Unique>(dev, UniqueDesc{u32, n, SelectOutput::elements, {}, algorithm});
  Buffers bufs(dev, n, 4, 4, std::max({rbk.scratch_requirements().size, scan.scratch_requirements().size,
                                      ntr.scratch_requirements().size, uniq.scratch_requirements().size}));
  const auto keys = make_keys<uint32_t>(n, kRandom4, rng);
  const auto values = make_values<uint32_t>(n, Op::add, rng);
  for (uint32_t gpu_count : {0u, 1u, uint32_t(tile + 1), uint32_t(n), uint32_t(n + 1000), 0xFFFFFFFFu}) {
    check_reduce_by_key(dev, rbk, bufs, keys, values, {}, gpu_count);
    check_scan_by_key(dev, scan, bufs, keys, values, {}, gpu_count);
    check_runs(dev, ntr, bufs, keys, {}, gpu_count);
    check_unique(dev, uniq, bufs, keys, {}, gpu_count);
  }
}

// Three primitives with `algorithm` at unaligned element offsets (the scalar load and store paths).
void unaligned_offsets(Device& dev, KeyedAlgorithm algorithm, std::mt19937_64& rng) {
  const uint64_t tile = tile_of(dev, DataType::u32, DataType::u32);
  const uint64_t n = 2 * tile + 5;
  const DataType u32 = DataType::u32;
  auto rbk = make_plan<ReduceByKey>(dev, ReduceByKeyDesc{u32, u32, Op::add, n, {}, nullptr, algorithm});
  auto scan = make_plan<ScanByKey>(dev, ScanByKeyDesc{u32, u32, Op::add, ScanKind::inclusive, n, {}, nullptr, algorithm});
  auto rle = make_plan<RunLengthEncode>(dev, RunLengthEncodeDesc{u32, n, {}, algorithm});

  Buffers bufs(dev, n, 4, 4, std::max({rbk.scratch_requirements().size, scan.scratch_requirements().size,
                                      rle.scratch_requirements().size}));
  for (const Offsets& o : {Offsets{1, 3, 5, 7, 2}, Offsets{4, 1, 0, 3, 9}, Offsets{3, 0, 2, 0, 0}}) {
    INFO("offsets keys " << o.keys << ", values " << o.values << ", a " << o.a << ", b " << o.b << ", count " << o.count);
    const auto keys = make_keys<uint32_t>(n, kRandom4, rng);
    const auto values = make_values<uint32_t>(n, Op::add, rng);
    check_reduce_by_key(dev, rbk, bufs, keys, values, o);
    check_scan_by_key(dev, scan, bufs, keys, values, o);
    check_runs(dev, rle, bufs, keys, o);
  }
}

// The portable path: a device without the memory model (masked), optionally without subgroups.
Device& portable_device(bool subgroups = true) {
  test::DeviceSetup s;
  s.testing.mask_features = feature_memory_model;
  s.options.force_no_subgroups = !subgroups;
  return test::device(s);
}


}  // namespace

TEST_CASE("keyed primitives on u32 match the CPU at sizes 0, 1, 2, tile-1, tile, tile+1 of each default tile and 2 tiles+17 "
          "for run lengths 1, 2, random (mean 4) and all equal",
          "[by_key][sizes]") {
  Device& dev = test::device();
  if (!test::has_features(dev, feature_memory_model, "the keyed primitives")) return;
  VKPRIM_TEST_RNG(rng);
  all_primitives_u32(dev, edge_sizes(dev),
                     {kDistinct, kPairs, kRandom4, kAllEqual}, rng);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("keyed primitives on u32 match the CPU over 40 tiles + 3 with runs of mean 64 crossing tile boundaries",
          "[by_key][large]") {
  Device& dev = test::device();
  if (!test::has_features(dev, feature_memory_model, "the keyed primitives")) return;
  VKPRIM_TEST_RNG(rng);
  all_primitives_u32(dev, {40 * tile_of(dev, DataType::u32, DataType::u32) + 3}, {kRandom64, kRandom4}, rng);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("ReduceByKey applies every operator to every value type in input order", "[by_key][types]") {
  Device& dev = test::device();
  if (!test::has_features(dev, feature_memory_model, "the keyed primitives")) return;
  VKPRIM_TEST_RNG(rng);
  for (DataType vt : {DataType::u32, DataType::i32, DataType::f32, DataType::u64, DataType::i64, DataType::f64}) {
    if (!test::type_supported(dev.context(), vt)) continue;
    host::with_type(vt, [&](auto v) {
      using V = decltype(v);
      const uint64_t n = 3 * tile_of(dev, DataType::u32, vt) + 5;
      for (Op op : {Op::add, Op::min, Op::max, Op::bit_and, Op::bit_or, Op::bit_xor}) {
        if (std::is_floating_point_v<V> && int(op) > int(Op::max)) continue;
        INFO("value type " << to_string(vt) << ", " << to_string(op));
        reduce_by_key_cases<uint32_t, V>(dev, DataType::u32, vt, op, {n}, {kRandom4}, rng);
      }
    });
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("ScanByKey inclusive and exclusive apply every value type's operators and restart at each run",
          "[by_key][types]") {
  Device& dev = test::device();
  if (!test::has_features(dev, feature_memory_model, "the keyed primitives")) return;
  VKPRIM_TEST_RNG(rng);
  for (DataType vt : {DataType::i32, DataType::f32, DataType::u64, DataType::f64}) {
    if (!test::type_supported(dev.context(), vt)) continue;
    host::with_type(vt, [&](auto v) {
      using V = decltype(v);
      const uint64_t n = 3 * tile_of(dev, DataType::u32, vt) + 5;
      for (Op op : {Op::add, Op::min, Op::bit_xor})
        for (ScanKind kind : {ScanKind::inclusive, ScanKind::exclusive}) {
          if (std::is_floating_point_v<V> && op == Op::bit_xor) continue;
          auto plan = make_plan<ScanByKey>(dev, ScanByKeyDesc{DataType::u32, vt, op, kind, n});
          Buffers bufs(dev, n, 4, sizeof(V), plan.scratch_requirements().size);
          check_scan_by_key(dev, plan, bufs, make_keys<uint32_t>(n, kRandom4, rng), make_values<V>(n, op, rng));
        }
    });
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("keyed primitives compare 64-bit and float keys by their bits (-0.0 differs from +0.0, a NaN equals itself)",
          "[by_key][keys]") {
  Device& dev = test::device();
  if (!test::has_features(dev, feature_memory_model, "the keyed primitives")) return;
  VKPRIM_TEST_RNG(rng);
  // Float keys: runs of +0.0, -0.0, one NaN pattern and ordinary values.
  {
    std::vector<float> keys;
    const float specials[] = {0.0f, -0.0f, std::numeric_limits<float>::quiet_NaN(), 1.5f, -2.0f};
    for (int r = 0; r < 3000; ++r) {
      const float k = specials[rng() % 5];
      for (uint64_t j = 1 + rng() % 4; j > 0; --j) keys.push_back(k);
    }
    const uint64_t n = keys.size();
    auto rbk = make_plan<ReduceByKey>(dev, ReduceByKeyDesc{DataType::f32, DataType::u32, Op::add, n});
    auto rle = make_plan<RunLengthEncode>(dev, RunLengthEncodeDesc{DataType::f32, n});
    Buffers bufs(dev, n, 4, 4, std::max(rbk.scratch_requirements().size, rle.scratch_requirements().size));
    check_reduce_by_key(dev, rbk, bufs, keys, make_values<uint32_t>(n, Op::add, rng));
    check_runs(dev, rle, bufs, keys);
  }
  for (DataType kt : {DataType::u64, DataType::i64, DataType::f64}) {
    if (!test::type_supported(dev.context(), kt)) continue;
    const uint64_t tile = tile_of(dev, kt, DataType::u32);
    const uint64_t n = 3 * tile + 7;
    // 64-bit keys that differ only in their high word: a plan comparing one word would merge runs.
    auto keys = make_keys<uint64_t>(n, kRandom4, rng);
    for (size_t i = 0; i < n; ++i) keys[i] = (keys[i] << 32) | 5u;
    auto rbk = make_plan<ReduceByKey>(dev, ReduceByKeyDesc{kt, DataType::u32, Op::add, n});
    auto scan = make_plan<ScanByKey>(dev, ScanByKeyDesc{kt, DataType::u64, Op::add, ScanKind::inclusive, n});
    auto ntr = make_plan<NonTrivialRuns>(dev, RunLengthEncodeDesc{kt, n});
    auto uniq = make_plan<Unique>(dev, UniqueDesc{kt, n});
    Buffers bufs(dev, n, 8, 8,
                 std::max({rbk.scratch_requirements().size, scan.scratch_requirements().size,
                           ntr.scratch_requirements().size, uniq.scratch_requirements().size}));
    INFO("key type " << to_string(kt));
    check_reduce_by_key(dev, rbk, bufs, keys, make_values<uint32_t>(n, Op::add, rng));
    if (test::type_supported(dev.context(), DataType::u64))
      check_scan_by_key(dev, scan, bufs, keys, make_values<uint64_t>(n, Op::add, rng));
    check_runs(dev, ntr, bufs, keys);
    check_unique(dev, uniq, bufs, keys);
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("keyed primitives with forced fallback (spin limit 0, every 3rd tile publishing nothing) fall back and match",
          "[by_key][fallback]") {
  for (bool subgroups : {true, false}) {
    Device& dev = test::device(fallback_options(3, subgroups));
    if (!test::has_features(dev, feature_memory_model, "the keyed primitives")) return;
    VKPRIM_TEST_RNG(rng);
    const uint64_t tiles = 12;
    const uint64_t n = tiles * tile_of(dev, DataType::u32, DataType::u32) - 3;
    INFO("subgroups " << subgroups);
    all_primitives_u32(dev, {n}, {kRandom4, kAllEqual}, rng);
    // The float value path of the fallback: the owner's summary bits, recomputed.
    reduce_by_key_cases<uint32_t, float>(dev, DataType::u32, DataType::f32, Op::add, {n}, {kRandom64}, rng);
    auto plan = make_plan<Unique>(dev, UniqueDesc{DataType::u32, n});
    Buffers bufs(dev, n, 4, 4, plan.scratch_requirements().size);
    check_unique(dev, plan, bufs, make_keys<uint32_t>(n, kPairs, rng));
    const auto stats = test::download<uint32_t>(dev, bufs.scratch, 4, plan.statistics_offset());
    INFO("tiles " << stats[0] << ", fallbacks " << stats[1]);
    CHECK(stats[0] == tiles);
    CHECK(stats[1] >= 3);  // tiles 2, 5, 8 never publish and have successors
    REQUIRE_NO_VALIDATION_MESSAGES(dev);
  }
}

TEST_CASE("keyed primitives with tiles taken in launch order (workgroup index, no ticket) match the CPU, also with "
          "forced fallback",
          "[by_key][fallback][tile_order]") {
  // Every mode but ScanByKey then reads its tile index without a barrier (shaders/common/tile_state.glsl).
  for (uint32_t period : {0u, 3u}) {
    Device& dev = test::device(test::launch_order(period));
    if (!test::has_features(dev, feature_memory_model, "the keyed primitives")) return;
    VKPRIM_TEST_RNG(rng);
    const uint64_t n = 40 * tile_of(dev, DataType::u32, DataType::u32) + 3;
    INFO("skip period " << period);
    all_primitives_u32(dev, {n}, {kRandom4, kRandom64}, rng);
    REQUIRE_NO_VALIDATION_MESSAGES(dev);
  }
}

TEST_CASE("keyed primitives without 64-bit atomics keep their tile state in 16-bit parts and match the CPU, "
          "forced fallback included",
          "[by_key][state_parts]") {
  for (uint32_t period : {0u, 3u}) {
    Device& dev =
        test::device_without(feature_int64_atomics, period ? test::forced_fallback(period) : test::DeviceSetup{});
    if (!test::has_features(dev, feature_memory_model, "the keyed primitives")) return;
    VKPRIM_TEST_RNG(rng);
    INFO("fallback period " << period);
    const uint64_t tile = tile_of(dev, DataType::u32, DataType::u32);
    all_primitives_u32(dev, {1, tile + 1, 12 * tile - 3}, {kRandom4, kRandom64, kAllEqual}, rng);
    // Two-word values: four 16-bit parts (eight bytes of the 64-bit-word state).
    if (test::type_supported(dev.context(), DataType::u64))
      reduce_by_key_cases<uint32_t, uint64_t>(dev, DataType::u32, DataType::u64, Op::add, {12 * tile - 3}, {kRandom4}, rng);
    REQUIRE_NO_VALIDATION_MESSAGES(dev);
  }
}

TEST_CASE("keyed primitives on the no-subgroup path match the CPU", "[by_key][no_subgroups][no_subgroup_ops]") {
  Device& dev = test::device(test::no_subgroups());
  if (!test::has_features(dev, feature_memory_model, "the keyed primitives")) return;
  VKPRIM_TEST_RNG(rng);
  const uint64_t tile = tile_of(dev, DataType::u32, DataType::u32);
  all_primitives_u32(dev, {1, tile + 1, 5 * tile + 9}, {kRandom4, kDistinct}, rng);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("keyed primitives record_indirect read the count on the GPU, clamp it to max_count and handle 0",
          "[by_key][indirect]") {
  Device& dev = test::device();
  if (!test::has_features(dev, feature_memory_model, "the keyed primitives")) return;
  VKPRIM_TEST_RNG(rng);
  indirect_counts(dev, KeyedAlgorithm::chained, rng);
  auto plan = make_plan<Unique>(dev, UniqueDesc{DataType::u32, 100});
  CHECK(plan.dispatch_count(0) == 1);
  CHECK(plan.dispatch_count(100) == 1);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("keyed primitives read and write at unaligned element offsets (scalar paths) and any count offset",
          "[by_key][offsets]") {
  Device& dev = test::device();
  if (!test::has_features(dev, feature_memory_model, "the keyed primitives")) return;
  VKPRIM_TEST_RNG(rng);
  unaligned_offsets(dev, KeyedAlgorithm::chained, rng);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("keyed primitives with tuned tile shapes match the CPU", "[by_key][tuning]") {
  Device& dev = test::device();
  if (!test::has_features(dev, feature_memory_model, "the keyed primitives")) return;
  VKPRIM_TEST_RNG(rng);
  for (auto [wg, items] : {std::pair<uint32_t, uint32_t>{64, 4}, {128, 32}, {1024, 8}}) {
    INFO("workgroup " << wg << ", items " << items);
    const uint64_t n = 3 * uint64_t(wg) * items + 13;
    reduce_by_key_cases<uint32_t, uint32_t>(dev, DataType::u32, DataType::u32, Op::add, {n}, {kRandom4}, rng, wg, items);
  }
  // The defaults of plans for more than 2^22 elements (scans 512 x 12, keys alone 128 x 24), which the
  // tests' smaller plans do not take, at their tile edges.
  for (auto [wg, items] : {std::pair<uint32_t, uint32_t>{512, 12}, {128, 24}}) {
    INFO("workgroup " << wg << ", items " << items);
    const uint64_t tile = uint64_t(wg) * items;
    all_primitives_u32(dev, {tile - 1, tile + 1, 2 * tile + 17}, {kRandom4, kAllEqual}, rng, KeyedAlgorithm::automatic,
                       wg, items);
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("keyed plans tile counts up to 2^22 in 256 x 12; larger plans keep their large tiles for larger counts "
          "and record_indirect",
          "[by_key][tuning][host]") {
  Device& dev = test::device();
  if (!test::has_features(dev, feature_memory_model, "the keyed primitives")) return;
  const DataType u32 = DataType::u32;
  const uint64_t small = uint64_t(1) << 22;
  for (uint64_t max_count : {uint64_t(1), small, small + 1}) {
    INFO("max_count " << max_count);
    const bool large = max_count > small;
    auto scan = make_plan<ScanByKey>(dev, ScanByKeyDesc{u32, u32, Op::add, ScanKind::inclusive, max_count});
    auto uniq = make_plan<Unique>(dev, UniqueDesc{u32, max_count});
    auto rbk = make_plan<ReduceByKey>(dev, ReduceByKeyDesc{u32, u32, Op::add, max_count});
    CHECK(scan.elements_per_tile() == (large ? 512u * 12 : 256u * 12));
    CHECK(scan.elements_per_tile(1) == 256u * 12);
    CHECK(scan.elements_per_tile(small) == 256u * 12);
    CHECK(uniq.elements_per_tile(small) == 256u * 12);
    CHECK(rbk.elements_per_tile() == 256u * 12);
    if (large) CHECK(scan.elements_per_tile(small + 1) == 512u * 12);
    // A tuned shape holds at every count.
    auto tuned = make_plan<ScanByKey>(dev, ScanByKeyDesc{u32, u32, Op::add, ScanKind::inclusive, max_count,
                                                         Tuning{.workgroup_size = 512, .items_per_thread = 12}});
    CHECK(tuned.elements_per_tile(1) == 512u * 12);
  }
}

TEST_CASE("keyed plans for more than 2^22 elements run small counts in the small tiles, and their scans' "
          "record_indirect in the large tiles, and match the CPU",
          "[by_key][tuning][indirect]") {
  Device& dev = test::device();
  if (!test::has_features(dev, feature_memory_model, "the keyed primitives")) return;
  VKPRIM_TEST_RNG(rng);
  const DataType u32 = DataType::u32;
  const uint64_t max_count = (uint64_t(1) << 22) + 1;
  auto incl = make_plan<ScanByKey>(dev, ScanByKeyDesc{u32, u32, Op::add, ScanKind::inclusive, max_count});
  auto excl = make_plan<ScanByKey>(dev, ScanByKeyDesc{u32, u32, Op::max, ScanKind::exclusive, max_count});
  auto rle = make_plan<RunLengthEncode>(dev, RunLengthEncodeDesc{u32, max_count});
  auto uniq = make_plan<Unique>(dev, UniqueDesc{u32, max_count});
  const uint64_t tile = incl.elements_per_tile(1);
  REQUIRE(tile < incl.elements_per_tile());
  VkDeviceSize scratch = 0;
  for (VkDeviceSize sz : {incl.scratch_requirements().size, excl.scratch_requirements().size,
                          rle.scratch_requirements().size, uniq.scratch_requirements().size})
    scratch = std::max(scratch, sz);
  const uint64_t largest = 2 * incl.elements_per_tile() + 5;
  {
    Buffers bufs(dev, largest, 4, 4, scratch);
    for (uint64_t n : {tile - 1, tile + 1, largest}) {
      INFO("n " << n);
      const auto keys = make_keys<uint32_t>(n, kRandom4, rng);
      const auto values = make_values<uint32_t>(n, Op::add, rng);
      check_scan_by_key(dev, incl, bufs, keys, values);
      // The tiles started (statistics header word 0) are those of the small shape.
      const auto stats = test::download<uint32_t>(dev, bufs.scratch, 1, incl.statistics_offset());
      CHECK(stats[0] == (n + tile - 1) / tile);
      check_scan_by_key(dev, excl, bufs, keys, values);
      check_runs(dev, rle, bufs, keys);
      check_unique(dev, uniq, bufs, keys);
    }
  }
  // record_indirect takes the large tiles, whose exclusive scan keeps the 16-bit-part tile state even where
  // 64-bit atomics are enabled (src/by_key.cpp): small GPU counts reach them without a 2^22-element input,
  // but the buffers must hold max_count elements.
  const uint64_t large = excl.elements_per_tile();
  REQUIRE(large > excl.elements_per_tile(1));
  Buffers bufs(dev, max_count, 4, 4, scratch);
  const auto keys = make_keys<uint32_t>(max_count, kRandom4, rng);
  const auto values = make_values<uint32_t>(max_count, Op::add, rng);
  for (uint32_t gpu_count : {1u, uint32_t(large - 1), uint32_t(large + 1), uint32_t(2 * large + 17)}) {
    INFO("GPU count " << gpu_count);
    for (const ScanByKey* plan : {&excl, &incl}) {
      check_scan_by_key(dev, *plan, bufs, keys, values, {}, gpu_count);
      // The tiles started are those of the large shape.
      const auto stats = test::download<uint32_t>(dev, bufs.scratch, 1, plan->statistics_offset());
      CHECK(stats[0] == (gpu_count + large - 1) / large);
    }
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("keyed primitives refuse bad descriptions and bad buffers with a message and record nothing",
          "[by_key][errors][host]") {
  Device& dev = test::device();
  if (!test::has_features(dev, feature_memory_model, "the keyed primitives")) return;
  auto refused = [&](auto created, Status status, const char* words) {
    INFO("expected " << to_string(status) << " naming '" << words << "', got "
                     << (created ? std::string("a plan") : created.error().message));
    REQUIRE_FALSE(created.ok());
    CHECK(created.error().status == status);
    CHECK(created.error().message.find(words) != std::string::npos);
  };
  Context& c = dev.context();
  refused(ReduceByKey::create(c, ReduceByKeyDesc{DataType::u32, DataType::u32, Op::add, 0}), Status::invalid_argument,
          "max_count");
  refused(ReduceByKey::create(c, ReduceByKeyDesc{DataType::u32, DataType::u32, Op::add, 1ull << 32}),
          Status::invalid_argument, "max_count");
  refused(ReduceByKey::create(c, ReduceByKeyDesc{DataType::u32, DataType::f32, Op::bit_xor, 100}),
          Status::invalid_argument, "bitwise");
  refused(ScanByKey::create(c, ScanByKeyDesc{DataType::u32, DataType::u32, Op::add, ScanKind(7), 100}),
          Status::invalid_argument, "kind");
  refused(RunLengthEncode::create(c, RunLengthEncodeDesc{DataType::u32, 100, Tuning{.workgroup_size = 96}}),
          Status::invalid_argument, "tuning.workgroup_size");
  refused(Unique::create(c, UniqueDesc{DataType::u32, 100, SelectOutput::elements, Tuning{.items_per_thread = 6}}),
          Status::invalid_argument, "tuning.items_per_thread");
  refused(Unique::create(c, UniqueDesc{DataType::u32, 100, SelectOutput(9)}), Status::invalid_argument, "output");
  // The sort-key types, as keys or as values.
  for (DataType type : {DataType::u8, DataType::u16}) {
    const std::string words = std::string(to_string(type)) + " is a sort-key type only (RadixSort)";
    refused(ReduceByKey::create(c, ReduceByKeyDesc{type, DataType::u32, Op::add, 100}), Status::invalid_argument,
            words.c_str());
    refused(ReduceByKey::create(c, ReduceByKeyDesc{DataType::u32, type, Op::add, 100}), Status::invalid_argument,
            words.c_str());
    refused(ScanByKey::create(c, ScanByKeyDesc{type, DataType::u32, Op::add, ScanKind::inclusive, 100}),
            Status::invalid_argument, words.c_str());
    refused(ScanByKey::create(c, ScanByKeyDesc{DataType::u32, type, Op::max, ScanKind::exclusive, 100}),
            Status::invalid_argument, words.c_str());
    refused(RunLengthEncode::create(c, RunLengthEncodeDesc{type, 100}), Status::invalid_argument, words.c_str());
    refused(NonTrivialRuns::create(c, RunLengthEncodeDesc{type, 100}), Status::invalid_argument, words.c_str());
    refused(Unique::create(c, UniqueDesc{type, 100}), Status::invalid_argument, words.c_str());
  }

  const uint64_t n = 1000;
  auto plan = make_plan<ReduceByKey>(dev, ReduceByKeyDesc{DataType::u32, DataType::u32, Op::add, n});
  Buffers bufs(dev, n, 4, 4, plan.scratch_requirements().size);
  test::poison(dev, bufs.a);
  test::poison(dev, bufs.b);
  test::poison(dev, bufs.count);
  const ReduceByKeyOperands good{.keys = bufs.keys.range(0, n * 4),
                                 .values = bufs.values.range(0, n * 4),
                                 .unique_keys = bufs.a.range(0, n * 4),
                                 .aggregates = bufs.b.range(0, n * 4),
                                 .run_count = bufs.count.range(0, 4),
                                 .scratch = bufs.scratch.range()};
  // `good` with one operand changed.
  auto with = [&](auto change) {
    ReduceByKeyOperands changed = good;
    change(changed);
    return changed;
  };
  auto record_refused = [&](const std::function<Result<void>(VkCommandBuffer)>& record, const char* words) {
    const Result<void> r = test::recorded_result(dev, record);
    INFO("expected a refusal naming '" << words << "', got " << (r ? std::string("success") : r.message()));
    REQUIRE_FALSE(r.ok());
    CHECK(r.status() == Status::invalid_argument);
    CHECK(r.message().find(words) != std::string::npos);
  };
  record_refused([&](VkCommandBuffer cmd) { return plan.record(cmd, good, n + 1); }, "max_count");
  record_refused([&](VkCommandBuffer cmd) {
    return plan.record(cmd, with([](ReduceByKeyOperands& o) { o.keys = {}; }), n);
  }, "keys");
  record_refused([&](VkCommandBuffer cmd) {
    return plan.record(cmd, with([](ReduceByKeyOperands& o) { o.run_count = {}; }), n);
  }, "run_count");
  record_refused([&](VkCommandBuffer cmd) {
    return plan.record(cmd, with([&](ReduceByKeyOperands& o) { o.unique_keys = bufs.a.range(0, 40); }), n);
  }, "unique_keys");
  record_refused([&](VkCommandBuffer cmd) {
    return plan.record(cmd, with([](ReduceByKeyOperands& o) { o.aggregates = o.unique_keys; }), n);
  }, "overlap");
  record_refused([&](VkCommandBuffer cmd) {
    return plan.record(cmd, with([&](ReduceByKeyOperands& o) { o.scratch = bufs.scratch.range(0, 16); }), n);
  }, "scratch");
  record_refused([&](VkCommandBuffer cmd) {
    return plan.record(cmd, with([&](ReduceByKeyOperands& o) { o.unique_keys = bufs.a.range(2, n * 4); }), n);
  }, "offset");
  record_refused([&](VkCommandBuffer cmd) { return plan.record_indirect(cmd, good, bufs.count.range(2, 4)); }, "count");
  CHECK(test::still_poisoned(dev, bufs.a));
  CHECK(test::still_poisoned(dev, bufs.b));
  CHECK(test::still_poisoned(dev, bufs.count));
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

// ---- reduce_then_scan: the portable path (no memory model) ----

TEST_CASE("keyed primitives without the Vulkan memory model run reduce_then_scan and match the CPU at sizes 0, 1, 2, "
          "tile-1, tile, tile+1 and 2 tiles+17",
          "[by_key][reduce_then_scan][sizes]") {
  Device& dev = portable_device();
  CHECK_FALSE(dev.context().capabilities().has(feature_memory_model));
  VKPRIM_TEST_RNG(rng);
  auto probe = make_plan<ReduceByKey>(dev, ReduceByKeyDesc{DataType::u32, DataType::u32, Op::add, 100});
  CHECK(probe.algorithm() == KeyedAlgorithm::reduce_then_scan);
  CHECK(probe.dispatch_count(0) == 3);
  CHECK(probe.dispatch_count(100) == 3);
  all_primitives_u32(dev, edge_sizes(dev), {kDistinct, kPairs, kRandom4, kAllEqual}, rng);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("reduce_then_scan carries run summaries across the steps of its one-workgroup scan (runs spanning many tiles)",
          "[by_key][reduce_then_scan][large]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  // 64 x 4 tiles: the scan takes 64 x 4 = 256 tiles per step, so 2 x 256 + 3 tiles need three steps.
  const uint64_t tile = 64 * 4;
  const uint64_t n = (2 * 256 + 3) * tile + 7;
  all_primitives_u32(dev, {n}, {kRandom64, kAllEqual, kRandom4}, rng, KeyedAlgorithm::reduce_then_scan, 64, 4);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("reduce_then_scan applies every value type's operators in input order and compares 64-bit keys by their bits",
          "[by_key][reduce_then_scan][types]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  const KeyedAlgorithm rts = KeyedAlgorithm::reduce_then_scan;
  for (DataType vt : {DataType::u32, DataType::i32, DataType::f32, DataType::u64, DataType::i64, DataType::f64}) {
    if (!test::type_supported(dev.context(), vt)) continue;
    host::with_type(vt, [&](auto v) {
      using V = decltype(v);
      const uint64_t n = 3 * tile_of(dev, DataType::u32, vt) + 5;
      for (Op op : {Op::add, Op::min, Op::max, Op::bit_xor}) {
        if (std::is_floating_point_v<V> && op == Op::bit_xor) continue;
        INFO("value type " << to_string(vt) << ", " << to_string(op));
        reduce_by_key_cases<uint32_t, V>(dev, DataType::u32, vt, op, {n}, {kRandom4}, rng, 0, 0, rts);
        for (ScanKind kind : {ScanKind::inclusive, ScanKind::exclusive}) {
          auto plan = make_plan<ScanByKey>(dev, ScanByKeyDesc{DataType::u32, vt, op, kind, n, {}, nullptr, rts});
          Buffers bufs(dev, n, 4, sizeof(V), plan.scratch_requirements().size);
          check_scan_by_key(dev, plan, bufs, make_keys<uint32_t>(n, kRandom4, rng), make_values<V>(n, op, rng));
        }
      }
    });
  }
  if (test::type_supported(dev.context(), DataType::u64)) {
    const uint64_t n = 3 * tile_of(dev, DataType::u64, DataType::u32) + 7;
    // 64-bit keys that differ only in their high word: a plan comparing one word would merge runs.
    auto keys = make_keys<uint64_t>(n, kRandom4, rng);
    for (auto& k : keys) k = (k << 32) | 5u;
    auto rbk = make_plan<ReduceByKey>(dev, ReduceByKeyDesc{DataType::u64, DataType::u32, Op::add, n, {}, nullptr, rts});
    auto uniq = make_plan<Unique>(dev, UniqueDesc{DataType::u64, n, SelectOutput::elements, {}, rts});
    auto ntr = make_plan<NonTrivialRuns>(dev, RunLengthEncodeDesc{DataType::u64, n, {}, rts});
    auto scan = make_plan<ScanByKey>(
        dev, ScanByKeyDesc{DataType::u64, DataType::u64, Op::add, ScanKind::exclusive, n, {}, nullptr, rts});
    Buffers bufs(dev, n, 8, 8,
                 std::max({rbk.scratch_requirements().size, uniq.scratch_requirements().size,
                           ntr.scratch_requirements().size, scan.scratch_requirements().size}));
    check_reduce_by_key(dev, rbk, bufs, keys, make_values<uint32_t>(n, Op::add, rng));
    check_unique(dev, uniq, bufs, keys);
    check_runs(dev, ntr, bufs, keys);
    check_scan_by_key(dev, scan, bufs, keys, make_values<uint64_t>(n, Op::add, rng));
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("reduce_then_scan on the no-subgroup path matches the CPU",
          "[by_key][reduce_then_scan][no_subgroups][no_subgroup_ops]") {
  Device& dev = portable_device(false);
  VKPRIM_TEST_RNG(rng);
  const uint64_t tile = tile_of(dev, DataType::u32, DataType::u32);
  all_primitives_u32(dev, {1, tile + 1, 5 * tile + 9}, {kRandom4, kDistinct, kAllEqual}, rng);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("reduce_then_scan with push descriptors off records through descriptor sets from the plan's pools and "
          "matches",
          "[by_key][reduce_then_scan][descriptors]") {
  test::DeviceSetup o;
  o.testing.mask_features = feature_memory_model;
  o.options.disable_push_descriptors = true;
  o.options.descriptor_sets_per_pool = 2;  // per pool; a record takes three, so records span several pools
  Device& dev = test::device(o);
  VKPRIM_TEST_RNG(rng);
  const uint64_t tile = tile_of(dev, DataType::u32, DataType::u32);
  for (int round = 0; round < 2; ++round) {
    all_primitives_u32(dev, {tile + 1}, {kRandom4}, rng);
    auto plan = make_plan<ReduceByKey>(dev, ReduceByKeyDesc{DataType::u32, DataType::u32, Op::add, 5 * tile});
    CHECK(plan.dispatch_count(5 * tile) == 3);
    reduce_by_key_cases<uint32_t, uint32_t>(dev, DataType::u32, DataType::u32, Op::add, {5 * tile - 1}, {kRandom64}, rng);
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("reduce_then_scan record_indirect reads the count on the GPU, and its scalar paths serve unaligned offsets",
          "[by_key][reduce_then_scan][indirect][offsets]") {
  Device& dev = portable_device();
  VKPRIM_TEST_RNG(rng);
  indirect_counts(dev, KeyedAlgorithm::reduce_then_scan, rng);
  unaligned_offsets(dev, KeyedAlgorithm::reduce_then_scan, rng);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("keyed primitives refuse chained without the memory model and an unknown algorithm, naming them",
          "[by_key][reduce_then_scan][errors][host]") {
  Device& dev = portable_device();
  Context& c = dev.context();
  auto chained = ReduceByKey::create(c, ReduceByKeyDesc{DataType::u32, DataType::u32, Op::add, 100, {}, nullptr,
                                                        KeyedAlgorithm::chained});
  REQUIRE_FALSE(chained.ok());
  CHECK(chained.error().status == Status::unsupported);
  CHECK(chained.error().message.find("chained needs the vulkanMemoryModel") != std::string::npos);
  auto unknown = Unique::create(c, UniqueDesc{DataType::u32, 100, SelectOutput::elements, {}, KeyedAlgorithm(7)});
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().status == Status::invalid_argument);
  CHECK(unknown.error().message.find("unknown algorithm 7") != std::string::npos);
  KeyedAlgorithm parsed = KeyedAlgorithm::automatic;
  for (KeyedAlgorithm a : {KeyedAlgorithm::automatic, KeyedAlgorithm::chained, KeyedAlgorithm::reduce_then_scan}) {
    REQUIRE(parse(to_string(a), parsed));
    CHECK(parsed == a);
  }
  CHECK_FALSE(parse("lookback", parsed));
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}
