// TopK against the host reference (std::stable_sort of the input indices by the order-preserving key
// transform, then the first k): u32, i32 with negatives, f32 with negatives, -0.0, infinities and NaNs, both
// orders, keys only and pairs, counts 0 and 1, k = 1, k = count, k > count (clamped), k = max_k, all keys equal
// (the earliest inputs win), the sorted output's two orderings (ranks up to k = 1024, RadixSort past it), and
// the argument errors. Outputs are poisoned: the k results must be written and nothing past them. The path a
// record took (the sample's one read of the input, or the fallback's digit passes) is read from the scratch
// word TopK documents, so the cases that need one path assert it.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "host_sort.hpp"
#include "segment_layout.hpp"
#include "test_support.hpp"
#include "vkprim/topk.hpp"

using namespace vkprim;

namespace {

constexpr uint64_t kGuard = 16;  // words past the outputs that must stay poisoned

// The scratch word that says which path the last record took (vkprim/topk.hpp).
enum class Path : uint32_t { none = 0, sample = 1, fallback = 2 };
const char* path_name(Path p) { return p == Path::sample ? "sample" : p == Path::fallback ? "fallback" : "none"; }

// The input indices of the expected result, in output order.
template <class K>
std::vector<uint32_t> host_topk(DataType type, SortOrder order, const std::vector<K>& keys, uint64_t count,
                                uint32_t k) {
  std::vector<uint32_t> index(count);
  std::iota(index.begin(), index.end(), 0u);
  std::stable_sort(index.begin(), index.end(), [&](uint32_t a, uint32_t b) {
    return host::ordered_bits(keys[a], type, order) < host::ordered_bits(keys[b], type, order);
  });
  index.resize(std::min<uint64_t>(k, count));
  return index;
}

TopK make_topk(Context& context, const TopKDesc& d) {
  auto plan = TopK::create(context, d);
  INFO("TopK::create(" << to_string(d.key_type) << ", value_size " << d.value_size << ", " << to_string(d.order)
                       << ", max_count " << d.max_count << ", max_k " << d.max_k
                       << "): " << (plan ? std::string("ok") : plan.error().message));
  REQUIRE(plan.ok());
  return std::move(plan).value();
}

TopKDesc topk_desc(DataType type, SortOrder order, uint32_t value_size, uint64_t max_count, uint32_t max_k,
                   bool sorted = true) {
  TopKDesc d;
  d.sorted = sorted;
  d.key_type = type;
  d.order = order;
  d.value_size = value_size;
  d.max_count = max_count;
  d.max_k = max_k;
  return d;
}

// One plan with its buffers: keys and values (max_count), the outputs (max_k and guards), scratch. K: the
// keys' bits (uint32_t, or uint64_t for 64-bit key types).
template <class K = uint32_t>
class TopKRig {
 public:
  TopKRig(Device& dev, const TopKDesc& d)
      : dev_(dev),
        plan_(make_topk(dev.context(), d)),
        keys_(test::make_buffer(dev, (d.max_count + kGuard + 3) * sizeof(K))),
        values_(test::make_buffer(dev, (d.max_count + kGuard) * 4)),
        out_keys_(test::make_buffer(dev, (d.max_k + kGuard) * sizeof(K))),
        out_values_(test::make_buffer(dev, (d.max_k + kGuard) * 4)),
        scratch_(test::make_buffer(dev, plan_.scratch_requirements().size)),
        gpu_values_(test::make_buffer(dev, 64)) {}

  const TopK& plan() const { return plan_; }

  // Later checks read the keys from element `elements` of their buffer (0..3: 16-byte loads start past it).
  void offset_keys(uint64_t elements) { keys_offset_ = elements; }

  // The path the last check's record took.
  Path path() const { return Path(test::download<uint32_t>(dev_, scratch_, 1, TopK::kPathWord * 4)[0]); }

  // check, and that the record took `expected`.
  bool check_path(Path expected, const std::vector<K>& keys, uint64_t count, uint32_t k, bool gpu = false) {
    const bool ok = check(keys, count, k, gpu);
    const Path took = path();
    INFO("count " << count << " k " << k << (gpu ? " from the GPU" : "") << ": the " << path_name(took) << " path");
    CHECK(took == expected);
    return ok && took == expected;
  }

  // Runs the plan on keys[0..count) (values: i * 7 + 1) with `k`, checks the outputs against the host and that
  // no word past them was written. gpu: through record_indirect, the count and k uploaded as u32s at words 3
  // and 9 (clamped by the plan to max_count and max_k; the host reference clamps them the same way).
  bool check(const std::vector<K>& keys, uint64_t count, uint32_t k, bool gpu = false) {
    const TopKDesc& d = plan_.desc();
    const bool pairs = d.value_size != 0;
    INFO(to_string(d.key_type) << " " << to_string(d.order) << (pairs ? " pairs" : " keys") << ", count " << count
                               << ", k " << k << (gpu ? " from the GPU" : ""));
    const uint64_t gpu_count = count, gpu_k = k;
    if (gpu) {
      std::vector<uint32_t> words(16, 0);
      words[3] = uint32_t(gpu_count);
      words[9] = uint32_t(gpu_k);
      test::upload(dev_, gpu_values_, words);
      count = std::min<uint64_t>(count, d.max_count);
      k = std::min<uint32_t>(k, d.max_k);
    }
    REQUIRE(keys.size() >= count);
    std::vector<uint32_t> values(std::max<uint64_t>(count, 1));
    for (uint64_t i = 0; i < values.size(); ++i) values[i] = uint32_t(i * 7 + 1);
    test::upload(dev_, keys_, keys, keys_offset_ * sizeof(K));
    if (pairs) test::upload(dev_, values_, values);
    test::poison(dev_, out_keys_);
    test::poison(dev_, out_values_);
    const uint64_t m = std::min<uint64_t>(k, count);
    const uint64_t in_count = gpu ? d.max_count : std::max<uint64_t>(count, 1);
    const uint64_t out_count = gpu ? d.max_k : std::max<uint64_t>(m, 1);
    const VkDeviceSize in_bytes = in_count * sizeof(K), out_bytes = out_count * sizeof(K);
    const BufferRange values_range = pairs ? values_.range(0, in_count * 4) : BufferRange{};
    const BufferRange out_values_range = pairs ? out_values_.range(0, out_count * 4) : BufferRange{};
    Result<void> recorded;
    auto submitted = test::submit_compute(dev_, [&](VkCommandBuffer cmd) {
      const BufferRange scratch = scratch_.range(0, plan_.scratch_requirements().size);
      const BufferRange keys_range = keys_.range(keys_offset_ * sizeof(K), in_bytes);
      recorded = gpu ? plan_.record_indirect(cmd, keys_range, values_range, gpu_values_.range(12, 4),
                                             gpu_values_.range(36, 4), out_keys_.range(0, out_bytes), out_values_range,
                                             scratch)
                     : plan_.record(cmd, keys_range, values_range, count, k,
                                    out_keys_.range(0, out_bytes), out_values_range, scratch);
    });
    INFO("record: " << recorded.message() << " submit: " << submitted.message());
    REQUIRE(recorded.ok());
    REQUIRE(submitted.ok());
    const std::vector<uint32_t> expected = host_topk(d.key_type, d.order, keys, count, k);
    auto got_keys = test::download<K>(dev_, out_keys_, out_keys_.size() / sizeof(K));
    auto got_values = test::download<uint32_t>(dev_, out_values_, out_values_.size() / 4);
    if (!d.sorted) {
      // Any order: the rows put in the reference's, by key and then value (values grow with the input index).
      std::vector<std::pair<K, uint32_t>> rows(m);
      for (uint64_t i = 0; i < m; ++i) rows[i] = {got_keys[i], pairs ? got_values[i] : 0u};
      std::sort(rows.begin(), rows.end(), [&](const auto& a, const auto& b) {
        const uint64_t oa = host::ordered_bits(a.first, d.key_type, d.order);
        const uint64_t ob = host::ordered_bits(b.first, d.key_type, d.order);
        return oa != ob ? oa < ob : a.second < b.second;
      });
      for (uint64_t i = 0; i < m; ++i) {
        got_keys[i] = rows[i].first;
        if (pairs) got_values[i] = rows[i].second;
      }
    }
    const K key_poison = sizeof(K) == 4 ? K(test::kPoison) : K((uint64_t(test::kPoison) << 32) | test::kPoison);
    uint64_t wrong = 0, touched = 0;
    for (uint64_t i = 0; i < got_keys.size(); ++i) {
      if (i >= m) {
        touched += got_keys[i] != key_poison;
        touched += got_values[i] != test::kPoison;
        continue;
      }
      const uint32_t j = expected[i];
      const bool key_ok = got_keys[i] == keys[j];
      const bool value_ok = !pairs || got_values[i] == values[j];
      if ((!key_ok || !value_ok) && wrong++ < 5)
        UNSCOPED_INFO("out " << i << ": key " << std::hex << got_keys[i] << " value " << std::dec << got_values[i]
                             << ", expected key " << std::hex << keys[j] << " value " << std::dec << values[j]
                             << " (input " << j << ")");
    }
    CHECK(wrong == 0);
    CHECK(touched == 0);
    return wrong == 0 && touched == 0;
  }

 private:
  Device& dev_;
  TopK plan_;
  Buffer keys_, values_, out_keys_, out_values_, scratch_, gpu_values_;
  uint64_t keys_offset_ = 0;
};

bool pick_low(uint64_t r) { return (r >> 60) < 8; }

uint32_t bits_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

// Random keys of the type: u32 over the whole range, or (narrow) from 0..15 so that ties are many; i32 with
// negatives; f32 with negatives, both zeros, infinities and NaNs of both signs.
std::vector<uint32_t> random_keys(DataType type, uint64_t n, std::mt19937_64& rng, bool narrow = false) {
  std::vector<uint32_t> keys(n + kGuard);
  for (auto& k : keys) {
    const uint32_t r = uint32_t(rng());
    if (narrow) k = r % 16;
    else if (type == DataType::f32) {
      const float specials[] = {-0.0f, 0.0f, std::numeric_limits<float>::infinity(),
                                -std::numeric_limits<float>::infinity()};
      const uint32_t pick = r % 64;
      k = pick < 4     ? bits_of(specials[pick])
          : pick == 4  ? 0x7FC00000u   // +NaN
          : pick == 5  ? 0xFFC00000u   // -NaN
                       : bits_of(float(int32_t(r >> 8) % 100000) / 7.0f);
    } else
      k = r;
  }
  return keys;
}

// 64-bit keys: u64 over the whole range, or from 0..15; i64 with negatives; f64 with both zeros,
// infinities, NaNs of both signs, and values that differ only in their low word.
std::vector<uint64_t> random_keys64(DataType type, uint64_t n, std::mt19937_64& rng, bool narrow = false) {
  std::vector<uint64_t> keys(n + kGuard);
  for (auto& k : keys) {
    const uint64_t r = rng();
    if (narrow) k = r % 16;
    else if (type == DataType::f64) {
      const double specials[] = {-0.0, 0.0, std::numeric_limits<double>::infinity(),
                                 -std::numeric_limits<double>::infinity()};
      const uint32_t pick = uint32_t(r % 64);
      double v = pick < 4 ? specials[pick] : double(int64_t(r >> 12) % 1000) / 7.0 + double(r % 5) * 1e-12;
      std::memcpy(&k, &v, 8);
      if (pick == 4) k = 0x7FF8000000000000ull;  // +NaN
      if (pick == 5) k = 0xFFF8000000000000ull;  // -NaN
    } else if (pick_low(r))
      k = (r & 0xFFFFFFFF00000000ull) >> 40 << 32 | (r & 0xFF);  // few high words, so the low word decides
    else
      k = r;
  }
  return keys;
}

// Ties past the lists' room with smaller keys spread over other first digits: every key 5 << 24 but every 256th,
// which is below it with a first digit (bits 24..31) of 0..4. Up to k = n / 256 the k-th key is a smaller one;
// past it, the earliest of the ties.
std::vector<uint32_t> spread_ties(uint64_t n, std::mt19937_64& rng) {
  std::vector<uint32_t> keys(n + kGuard, 5u << 24);
  for (uint64_t i = 0; i < keys.size(); i += 256) keys[i] = uint32_t((i / 256) % 5) << 24 | uint32_t(rng() & 0xFFFFFF);
  return keys;
}

const DataType kTypes[] = {DataType::u32, DataType::i32, DataType::f32};
const SortOrder kOrders[] = {SortOrder::ascending, SortOrder::descending};

}  // namespace

TEST_CASE("topk of u32, i32 and f32 keys, both orders, keys and pairs, matches the host at edge counts and k",
          "[topk]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  for (DataType type : kTypes)
    for (SortOrder order : kOrders)
      for (uint32_t value_size : {0u, 4u}) {
        TopKRig<> rig(dev, topk_desc(type, order, value_size, 5000, 300));
        const std::vector<uint32_t> keys = random_keys(type, 5000, rng);
        CHECK(rig.check(keys, 0, 5));     // nothing
        CHECK(rig.check(keys, 5, 0));     // k = 0
        CHECK(rig.check(keys, 1, 1));
        CHECK(rig.check(keys, 1, 300));   // k > count: clamped
        CHECK(rig.check(keys, 4999, 1));
        CHECK(rig.check(keys, 250, 250));  // k = count
        CHECK(rig.check(keys, 5000, 300));  // k = max_k
        CHECK(rig.check(keys, 3001, 77));
      }
}

TEST_CASE("topk takes the earliest inputs among equal keys: all keys equal, and many ties", "[topk][stable]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  for (SortOrder order : kOrders)
    for (uint32_t value_size : {0u, 4u}) {
      TopKRig<> rig(dev, topk_desc(DataType::u32, order, value_size, 20000, 1000));
      const std::vector<uint32_t> same(20000 + kGuard, 42u);
      CHECK(rig.check(same, 20000, 1000));
      CHECK(rig.check(same, 20000, 1));
      CHECK(rig.check(random_keys(DataType::u32, 20000, rng, true), 20000, 1000));
      CHECK(rig.check(random_keys(DataType::u32, 20000, rng, true), 19999, 999));
    }
}

TEST_CASE("topk of 2^20 random keys with k = 65536 and k = 1024 matches the host", "[topk][large]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  const uint64_t n = uint64_t(1) << 20;
  for (DataType type : {DataType::u32, DataType::f32}) {
    TopKRig<> rig(dev, topk_desc(type, SortOrder::descending, 4, n, 65536));
    const std::vector<uint32_t> keys = random_keys(type, n, rng);
    CHECK(rig.check(keys, n, 65536));
    CHECK(rig.check(keys, n, 1024));
  }
}

TEST_CASE("topk orders up to 1024 selected keys by their ranks and more by RadixSort, alike at the boundary",
          "[topk][ranked]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  const uint64_t n = 40000;
  for (uint32_t value_size : {0u, 4u}) {
    // max_k 1024: every record ranks (record_indirect too); max_k 1100: k past 1024 sorts.
    TopKRig<> ranked(dev, topk_desc(DataType::f32, SortOrder::ascending, value_size, n, 1024));
    TopKRig<> both(dev, topk_desc(DataType::i32, SortOrder::descending, value_size, n, 1100));
    const std::vector<uint32_t> floats = random_keys(DataType::f32, n, rng);
    const std::vector<uint32_t> ints = random_keys(DataType::i32, n, rng);
    const std::vector<uint32_t> ties = random_keys(DataType::i32, n, rng, true);
    for (uint32_t k : {1u, 1023u, 1024u}) {
      CHECK(ranked.check(floats, n, k));
      CHECK(ranked.check(floats, n - 1, k, true));
    }
    for (uint32_t k : {1023u, 1024u, 1025u}) {
      CHECK(both.check(ints, n, k));
      CHECK(both.check(ties, n, k));  // ties: the earliest inputs first
    }
    CHECK(both.check(ints, n, 1024, true));  // record_indirect of a plan past 1024: the sorts
  }
}

TEST_CASE("topk with unsorted output selects the same keys and values, in any order", "[topk][unsorted]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  for (DataType type : kTypes)
    for (uint32_t value_size : {0u, 4u}) {
      TopKRig<> rig(dev, topk_desc(type, SortOrder::ascending, value_size, 30000, 3000, false));
      CHECK(rig.check(random_keys(type, 30000, rng), 30000, 3000));
      CHECK(rig.check(random_keys(type, 30000, rng, true), 29000, 2999));  // ties: the earliest inputs
      CHECK(rig.check(random_keys(type, 30000, rng), 20000, 50, true));
    }
  TopKRig<uint64_t> rig64(dev, topk_desc(DataType::f64, SortOrder::descending, 4, 5000, 700, false));
  CHECK(rig64.check(random_keys64(DataType::f64, 5000, rng), 5000, 700));
}

TEST_CASE("topk whose candidate list would pass one binding re-reads the input in every digit pass",
          "[topk][no_candidates]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  // 2^24 u32 keys: their candidate list (key and index, 128 MiB) passes lavapipe's 128 MiB binding.
  const uint64_t max_count = uint64_t(1) << 24;
  if (dev.context().capabilities().max_storage_buffer_range >= max_count * 8 + 4096) {
    test::skip("the device's storage-buffer range holds the candidate list of 2^25 keys");
    return;
  }
  for (uint32_t value_size : {0u, 4u}) {
    TopKRig<> rig(dev, topk_desc(DataType::i32, SortOrder::ascending, value_size, max_count, 2000));
    CHECK(rig.check(random_keys(DataType::i32, 100000, rng), 100000, 2000));
    CHECK(rig.check(random_keys(DataType::i32, 100000, rng, true), 100000, 1999, true));
    // Ties at the k-th key past the lists' room, smaller keys in other first digits: with no filter before it,
    // the fallback's selection takes those too.
    CHECK(rig.check_path(Path::fallback, spread_ties(200000, rng), 200000, 1999));
  }
}

TEST_CASE("topk_indirect reads the count and k on the GPU, clamps them to max_count and max_k, and writes "
          "nothing for 0", "[topk][indirect]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  for (DataType type : kTypes)
    for (uint32_t value_size : {0u, 4u}) {
      TopKRig<> rig(dev, topk_desc(type, SortOrder::descending, value_size, 6000, 500));
      const std::vector<uint32_t> keys = random_keys(type, 6000, rng);
      CHECK(rig.check(keys, 6000, 500, true));
      CHECK(rig.check(keys, 4321, 123, true));
      CHECK(rig.check(keys, 0, 10, true));     // count 0
      CHECK(rig.check(keys, 100, 0, true));    // k 0
      CHECK(rig.check(keys, 7, 100, true));    // k > count
      CHECK(rig.check(keys, 9000, 900, true)); // both past their maxima
      CHECK(rig.check(random_keys(type, 6000, rng, true), 6000, 499, true));  // ties
    }
}

TEST_CASE("topk of u64, i64 and f64 keys, both orders, keys and pairs, matches the host", "[topk][key64]") {
  Device& dev = test::device();
  if (!test::type_supported(dev.context(), DataType::u64)) {
    test::skip("64-bit keys need shaderInt64 (the sort of the selection)");
    return;
  }
  VKPRIM_TEST_RNG(rng);
  for (DataType type : {DataType::u64, DataType::i64, DataType::f64})
    for (SortOrder order : kOrders)
      for (uint32_t value_size : {0u, 4u}) {
        TopKRig<uint64_t> rig(dev, topk_desc(type, order, value_size, 7000, 400));
        const std::vector<uint64_t> keys = random_keys64(type, 7000, rng);
        CHECK(rig.check(keys, 1, 1));
        CHECK(rig.check(keys, 7000, 400));
        CHECK(rig.check(keys, 333, 333));
        CHECK(rig.check(keys, 5000, 17, true));
        CHECK(rig.check(random_keys64(type, 7000, rng, true), 7000, 399));  // ties
      }
}

TEST_CASE("topk refuses bad descriptions and operands with invalid_argument, recording nothing", "[topk][errors]") {
  Device& dev = test::device();
  Context& context = dev.context();
  const TopKDesc good = topk_desc(DataType::u32, SortOrder::ascending, 0, 1000, 100);
  auto refused = [&](TopKDesc d) { return TopK::create(context, d).error().status; };
  TopKDesc d = good;
  d.key_type = DataType::u8;
  CHECK(refused(d) == Status::invalid_argument);
  d = good;
  d.value_size = 8;
  CHECK(refused(d) == Status::invalid_argument);
  d = good;
  d.max_k = 0;
  CHECK(refused(d) == Status::invalid_argument);
  d = good;
  d.max_k = 65537;
  CHECK(refused(d) == Status::invalid_argument);
  d = good;
  d.max_count = 0;
  CHECK(refused(d) == Status::invalid_argument);
  d = good;
  d.order = SortOrder(7);
  CHECK(refused(d) == Status::invalid_argument);

  const TopK plan = make_topk(context, good);
  Buffer keys = test::make_buffer(dev, 4096), out = test::make_buffer(dev, 4096);
  Buffer scratch = test::make_buffer(dev, plan.scratch_requirements().size);
  const BufferRange s = scratch.range(0, plan.scratch_requirements().size);
  auto status = [&](uint64_t count, uint32_t k, BufferRange in, BufferRange o, BufferRange sc) {
    return test::recorded_result(dev, [&](VkCommandBuffer cmd) {
             return plan.record(cmd, in, {}, count, k, o, {}, sc);
           }).status();
  };
  CHECK(status(1001, 1, keys.range(), out.range(), s) == Status::invalid_argument);        // count > max_count
  CHECK(status(10, 101, keys.range(), out.range(), s) == Status::invalid_argument);        // k > max_k
  CHECK(status(10, 5, keys.range(), keys.range(), s) == Status::invalid_argument);         // out overlaps keys
  CHECK(status(10, 5, keys.range(), out.range(), {}) == Status::invalid_argument);         // no scratch
  CHECK(status(10, 5, keys.range(2, 40), out.range(), s) == Status::invalid_argument);     // misaligned keys
  CHECK(status(1000, 5, keys.range(0, 400), out.range(), s) == Status::invalid_argument);  // keys too small
  auto indirect = [&](BufferRange count, BufferRange k, BufferRange o) {
    return test::recorded_result(dev, [&](VkCommandBuffer cmd) {
             return plan.record_indirect(cmd, keys.range(), {}, count, k, o, {}, s);
           }).status();
  };
  CHECK(indirect({}, keys.range(0, 4), out.range()) == Status::invalid_argument);                // no count
  CHECK(indirect(keys.range(0, 4), keys.range(2, 4), out.range()) == Status::invalid_argument);  // misaligned k
  CHECK(indirect(out.range(0, 4), keys.range(0, 4), out.range()) == Status::invalid_argument);   // count in out
  CHECK(indirect(keys.range(0, 4), keys.range(0, 4), out.range(0, 40)) == Status::invalid_argument);  // < max_k
}

namespace {

// Keys drawn from the whole u32 range except that every 16th input is 0..4095 and the others are at least
// 2^31: a stride sample (any power-of-two stride of 16 or more) sees only the small keys, whose count is far
// below the threshold's guess, so too few keys fall at or below it.
std::vector<uint32_t> sample_defeating_keys(uint64_t n, std::mt19937_64& rng) {
  std::vector<uint32_t> keys(n + kGuard);
  for (uint64_t i = 0; i < keys.size(); ++i)
    keys[i] = i % 16 == 0 ? uint32_t(rng() % 4096) : uint32_t(rng() | 0x80000000u);
  return keys;
}

}  // namespace

TEST_CASE("topk takes the sample path (one read of the input) on uniform keys of every type, keys and pairs, "
          "record and record_indirect", "[topk][sample_path]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  const uint64_t n = 100000;
  for (DataType type : kTypes)
    for (uint32_t value_size : {0u, 4u}) {
      TopKRig<> rig(dev, topk_desc(type, value_size ? SortOrder::descending : SortOrder::ascending, value_size, n,
                                   2048));
      const std::vector<uint32_t> keys = random_keys(type, n, rng);
      for (const auto& [count, k, gpu] : {std::tuple<uint64_t, uint32_t, bool>{n, 1000, false},
                                          {n, 1, false},
                                          {n, 2048, true},
                                          {n - 3, 77, true},
                                          {2048, 2048, false},    // k = count below the sample's size
                                          {3001, 300, false}}) {  // count below the sample's size
        CHECK(rig.check_path(Path::sample, keys, count, k, gpu));
      }
    }
  // Sorted keys, either way (the smallest last: the sample must reach the input's end), at a count that is no
  // multiple of the sample's size.
  {
    const uint64_t odd = (uint64_t(1) << 17) - 1;
    TopKRig<> rig(dev, topk_desc(DataType::u32, SortOrder::ascending, 0, odd, 1000));
    std::vector<uint32_t> keys = random_keys(DataType::u32, odd, rng);
    std::sort(keys.begin(), keys.begin() + odd);
    CHECK(rig.check_path(Path::sample, keys, odd, 1000));
    std::reverse(keys.begin(), keys.begin() + odd);
    for (uint32_t k : {100u, 1000u}) {
      CHECK(rig.check_path(Path::sample, keys, odd, k));
    }
  }
  if (test::type_supported(dev.context(), DataType::u64))
    for (DataType type : {DataType::u64, DataType::f64}) {
      TopKRig<uint64_t> rig(dev, topk_desc(type, SortOrder::descending, 4, n, 1000));
      std::vector<uint64_t> keys(n + kGuard);
      for (auto& key : keys) key = rng();
      if (type == DataType::f64)
        for (auto& key : keys) key &= ~(uint64_t(0x7FF) << 52) | (uint64_t(0x3FF) << 52);  // finite, no NaNs
      CHECK(rig.check_path(Path::sample, keys, n, 1000));
      CHECK(rig.check_path(Path::sample, keys, n, 999, true));
    }
}

TEST_CASE("topk falls back to the digit passes when the sample misses: all keys equal, too few keys below the "
          "threshold, few distinct values, with the same results", "[topk][fallback]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  const uint64_t n = uint64_t(1) << 17;
  for (uint32_t value_size : {0u, 4u}) {
    TopKRig<> rig(dev, topk_desc(DataType::u32, SortOrder::ascending, value_size, n, 1000));
    const std::vector<uint32_t> same(n + kGuard, 7u);
    const std::vector<uint32_t> defeating = sample_defeating_keys(n, rng);
    const std::vector<uint32_t> narrow = random_keys(DataType::u32, n, rng, true);
    const std::vector<uint32_t> spread = spread_ties(n, rng);  // the filter takes the keys below the ties
    for (const auto* keys : {&same, &defeating, &narrow, &spread})
      for (const auto& [k, gpu] : {std::pair<uint32_t, bool>{1000, false}, {1, false}, {999, true}}) {
        // The few keys below the threshold (or the ties) still hold k = 1: the sample path.
        if ((keys == &defeating || keys == &spread) && k == 1) continue;
        INFO("input " << (keys == &same ? "equal" : keys == &defeating ? "sample-defeating"
                          : keys == &narrow ? "narrow" : "spread ties"));
        CHECK(rig.check_path(Path::fallback, *keys, n, k, gpu));
      }
  }
  // Descending i32 and f32 keys whose sample defeats the threshold the same way (the transform inverts them).
  for (DataType type : {DataType::i32, DataType::f32}) {
    TopKRig<> rig(dev, topk_desc(type, SortOrder::descending, 4, n, 1000, false));
    std::vector<uint32_t> keys(n + kGuard);
    for (uint64_t i = 0; i < keys.size(); ++i) {
      const int32_t v = i % 16 == 0 ? int32_t(1000000 + rng() % 4096) : -int32_t(rng() % 1000000);
      keys[i] = type == DataType::f32 ? bits_of(float(v)) : uint32_t(v);
    }
    CHECK(rig.check_path(Path::fallback, keys, n, 1000));
  }
  // 64-bit keys: all equal, and two values (the threshold's ties overflow the list).
  if (test::type_supported(dev.context(), DataType::u64)) {
    const uint64_t n64 = 50000;
    TopKRig<uint64_t> rig(dev, topk_desc(DataType::i64, SortOrder::descending, 4, n64, 500));
    CHECK(rig.check_path(Path::fallback, std::vector<uint64_t>(n64 + kGuard, 0x123456789ull), n64, 500));
    std::vector<uint64_t> two(n64 + kGuard);
    for (auto& key : two) key = rng() % 2 == 0 ? uint64_t(-5) : uint64_t(7) << 40;
    CHECK(rig.check_path(Path::fallback, two, n64, 499, true));
  }
}

// One plan and one scratch, records back to back in one command buffer (the barrier the contract asks between
// them): the fallback (all keys equal), the sample path, few distinct values, a short count with k past it, and
// the sample path again. Each writes what it would alone, whatever the record before it left in scratch (the
// state words, the lists, the fallback's dispatch arguments, the sorts' scratch), and nothing past its k.
TEST_CASE("topk records back to back on one scratch each select as they would alone", "[topk][sequence]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  const uint64_t n = uint64_t(1) << 16;
  const uint32_t max_k = 1000;
  const TopK plan = make_topk(dev.context(), topk_desc(DataType::u32, SortOrder::descending, 4, n, max_k));
  struct Run {
    std::vector<uint32_t> keys;
    uint64_t count;
    uint32_t k;
    Buffer keys_buffer, values_buffer, out_keys, out_values;
  };
  const std::vector<std::tuple<std::vector<uint32_t>, uint64_t, uint32_t>> inputs = {
      {std::vector<uint32_t>(n, 7u), n, max_k},
      {random_keys(DataType::u32, n, rng), n, max_k},
      {random_keys(DataType::u32, n, rng, true), n, 300},
      {random_keys(DataType::u32, 500, rng), 500, max_k},
      {random_keys(DataType::u32, n, rng), n - 3, 17}};
  std::vector<Run> runs;
  for (const auto& [keys, count, k] : inputs) {
    Run r{keys, count, k, test::make_buffer(dev, count * 4), test::make_buffer(dev, count * 4),
          test::make_buffer(dev, (max_k + kGuard) * 4), test::make_buffer(dev, (max_k + kGuard) * 4)};
    std::vector<uint32_t> values(count);
    for (uint64_t i = 0; i < count; ++i) values[i] = uint32_t(i * 7 + 1);
    test::upload(dev, r.keys_buffer, std::vector<uint32_t>(keys.begin(), keys.begin() + std::ptrdiff_t(count)));
    test::upload(dev, r.values_buffer, values);
    test::poison(dev, r.out_keys);
    test::poison(dev, r.out_values);
    runs.push_back(std::move(r));
  }
  const Buffer scratch = test::make_buffer(dev, plan.scratch_requirements().size);
  const auto barrier = test::pipeline_barrier(dev);
  std::vector<Result<void>> recorded(runs.size());
  auto submitted = test::submit_compute(dev, [&](VkCommandBuffer cmd) {
    for (size_t i = 0; i < runs.size(); ++i) {
      if (i > 0) test::between_records(barrier, cmd);  // the caller's barrier before scratch is reused
      const Run& r = runs[i];
      const uint64_t m = std::min<uint64_t>(r.k, r.count);
      recorded[i] = plan.record(cmd, r.keys_buffer.range(0, r.count * 4), r.values_buffer.range(0, r.count * 4),
                                r.count, r.k, r.out_keys.range(0, m * 4), r.out_values.range(0, m * 4),
                                scratch.range());
    }
  });
  REQUIRE(submitted.ok());
  for (size_t i = 0; i < runs.size(); ++i) {
    const Run& r = runs[i];
    INFO("record " << i << ": count " << r.count << ", k " << r.k);
    REQUIRE(recorded[i].ok());
    const std::vector<uint32_t> expected = host_topk(DataType::u32, SortOrder::descending, r.keys, r.count, r.k);
    const auto got_keys = test::download<uint32_t>(dev, r.out_keys, max_k + kGuard);
    const auto got_values = test::download<uint32_t>(dev, r.out_values, max_k + kGuard);
    uint64_t wrong = 0, touched = 0;
    for (size_t j = 0; j < got_keys.size(); ++j) {
      if (j >= expected.size()) {
        touched += (got_keys[j] != test::kPoison) + (got_values[j] != test::kPoison);
        continue;
      }
      wrong += got_keys[j] != r.keys[expected[j]] || got_values[j] != expected[j] * 7 + 1 ? 1 : 0;
    }
    CHECK(wrong == 0);
    CHECK(touched == 0);
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("topk reads keys that start off a 16-byte boundary and end mid-vector (scalar head and tail), on both "
          "paths", "[topk][alignment]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  const uint64_t n = 50000;
  for (uint64_t offset : {1u, 2u, 3u}) {
    TopKRig<> rig(dev, topk_desc(DataType::f32, SortOrder::ascending, 4, n, 500));
    rig.offset_keys(offset);
    INFO("keys from element " << offset);
    CHECK(rig.check_path(Path::sample, random_keys(DataType::f32, n, rng), n - offset, 500));
    CHECK(rig.check_path(Path::fallback, std::vector<uint32_t>(n + kGuard, 5u), n - 2, 499, true));
  }
  if (test::type_supported(dev.context(), DataType::u64)) {
    TopKRig<uint64_t> rig(dev, topk_desc(DataType::u64, SortOrder::descending, 0, n, 500));
    rig.offset_keys(1);
    std::vector<uint64_t> keys(n + kGuard);
    for (auto& key : keys) key = rng();
    CHECK(rig.check_path(Path::sample, keys, n - 1, 500));
  }
}

// TopK::record_segmented: the top k of each segment against the host reference per segment (host_topk over the
// segment's keys). Outputs are poisoned: slots past min(k, length) of each segment and the words past
// segments * k must stay so; the inputs must come back unchanged.
namespace {

using test::Arrangement;
using test::Layout;
using test::uniform_layout;

TopKDesc segmented_desc(DataType type, SortOrder order, uint32_t value_size, uint64_t max_count,
                        uint64_t max_segments, uint32_t max_k) {
  TopKDesc d = topk_desc(type, order, value_size, max_count, max_k);
  d.max_segments = max_segments;
  return d;
}

// One batched plan with its buffers: keys and values (max_count), the offsets (begin, end: max_segments each,
// or one CSR array), the outputs (max_segments * max_k and guards), scratch.
template <class K = uint32_t>
class SegmentedTopKRig {
 public:
  SegmentedTopKRig(Device& dev, const TopKDesc& d)
      : dev_(dev),
        plan_(make_topk(dev.context(), d)),
        keys_(test::make_buffer(dev, d.max_count * sizeof(K))),
        values_(test::make_buffer(dev, d.max_count * 4)),
        offsets_(test::make_buffer(dev, (2 * d.max_segments + 1) * 4)),
        out_keys_(test::make_buffer(dev, (d.max_segments * d.max_k + kGuard) * sizeof(K))),
        out_values_(test::make_buffer(dev, (d.max_segments * d.max_k + kGuard) * 4)),
        scratch_(test::make_buffer(dev, plan_.scratch_requirements().size)),
        count_(test::make_buffer(dev, 16)) {}

  // Runs the plan on keys[0..max_count) over the layout's segments with `k` (values: i * 7 + 1, so a value
  // names its input), and checks every segment's slots against the host. csr: the layout is end to end and the
  // offsets one array, end = begin + 4 bytes. gpu_count >= 0: through record_segmented_indirect with that count
  // (word 2 of a buffer), clamped to max_segments; the layout holds at least the clamped count.
  bool check(const std::vector<K>& keys, const Layout& l, uint32_t k, bool csr = false, int64_t gpu_count = -1) {
    const TopKDesc& d = plan_.desc();
    const bool pairs = d.value_size != 0, gpu = gpu_count >= 0;
    const uint64_t segments = gpu ? std::min<uint64_t>(uint64_t(gpu_count), d.max_segments) : l.size();
    const uint64_t n = d.max_count;
    const uint64_t bound = gpu ? d.max_segments : segments;  // the segments the ranges hold
    INFO(to_string(d.key_type) << " " << to_string(d.order) << (pairs ? " pairs" : " keys") << ", " << segments
                               << " segments, k " << k << (csr ? ", CSR offsets" : "")
                               << (gpu ? ", the count " + std::to_string(gpu_count) + " from the GPU" : ""));
    REQUIRE(l.size() >= segments);
    REQUIRE(keys.size() >= n);
    std::vector<uint32_t> values(n);
    for (uint64_t i = 0; i < n; ++i) values[i] = uint32_t(i * 7 + 1);
    test::upload(dev_, keys_, std::vector<K>(keys.begin(), keys.begin() + n));
    test::upload(dev_, values_, values);
    std::vector<uint32_t> offsets;
    if (csr) {
      offsets = l.begin;
      offsets.push_back(segments ? l.end.back() : 0u);
    } else {
      offsets.assign(2 * bound, 0u);
      std::copy(l.begin.begin(), l.begin.begin() + bound, offsets.begin());
      std::copy(l.end.begin(), l.end.begin() + bound, offsets.begin() + bound);
    }
    test::upload(dev_, offsets_, offsets);
    test::upload(dev_, count_, std::vector<uint32_t>{0u, 0u, uint32_t(gpu_count), 0u});
    test::poison(dev_, out_keys_);
    test::poison(dev_, out_values_);
    const uint64_t slots = std::max<uint64_t>(bound * k, 1);
    const BufferRange begin = offsets_.range(0, std::max<uint64_t>(bound, 1) * 4);
    const BufferRange end = offsets_.range(csr ? 4 : bound * 4, std::max<uint64_t>(bound, 1) * 4);
    const BufferRange values_range = pairs ? values_.range() : BufferRange{};
    const BufferRange out_keys = out_keys_.range(0, slots * sizeof(K));
    const BufferRange out_values = pairs ? out_values_.range(0, slots * 4) : BufferRange{};
    const BufferRange scratch = scratch_.range(0, plan_.scratch_requirements().size);
    Result<void> recorded;
    auto submitted = test::submit_compute(dev_, [&](VkCommandBuffer cmd) {
      recorded = gpu ? plan_.record_segmented_indirect(cmd, keys_.range(), values_range, begin, end, count_.range(8, 4), k,
                                                       out_keys, out_values, scratch)
                     : plan_.record_segmented(cmd, keys_.range(), values_range, begin, end, segments, k, out_keys,
                                              out_values, scratch);
    });
    INFO("record: " << recorded.message() << " submit: " << submitted.message());
    REQUIRE(recorded.ok());
    REQUIRE(submitted.ok());
    const auto got_keys = test::download<K>(dev_, out_keys_, out_keys_.size() / sizeof(K));
    const auto got_values = test::download<uint32_t>(dev_, out_values_, out_values_.size() / 4);
    const K key_poison = sizeof(K) == 4 ? K(test::kPoison) : K((uint64_t(test::kPoison) << 32) | test::kPoison);
    std::vector<bool> written(got_keys.size(), false);
    uint64_t wrong = 0, touched = 0;
    for (uint64_t s = 0; s < segments; ++s) {
      const uint32_t b = l.begin[s], len = l.end[s] > b ? l.end[s] - b : 0;
      const std::vector<K> segment(keys.begin() + b, keys.begin() + b + len);
      const std::vector<uint32_t> expected = host_topk(d.key_type, d.order, segment, len, k);
      for (uint64_t i = 0; i < expected.size(); ++i) {
        const uint64_t at = s * k + i, j = b + expected[i];
        written[at] = true;
        const bool ok = got_keys[at] == keys[j] && (!pairs || got_values[at] == values[j]);
        if (!ok && wrong++ < 5)
          UNSCOPED_INFO("segment " << s << " [" << b << ", " << b + len << ") slot " << i << ": key " << std::hex
                                   << got_keys[at] << " value " << std::dec << got_values[at] << ", expected key "
                                   << std::hex << keys[j] << " value " << std::dec << values[j] << " (input " << j
                                   << ")");
      }
    }
    for (uint64_t at = 0; at < got_keys.size(); ++at)
      if (!written[at]) touched += (got_keys[at] != key_poison) + (got_values[at] != test::kPoison);
    CHECK(wrong == 0);
    CHECK(touched == 0);
    // Not in place: the inputs come back as they went.
    const bool inputs_kept = test::download<K>(dev_, keys_, n) == std::vector<K>(keys.begin(), keys.begin() + n) &&
                             test::download<uint32_t>(dev_, values_, n) == values;
    CHECK(inputs_kept);
    return wrong == 0 && touched == 0 && inputs_kept;
  }

  const TopK& plan() const { return plan_; }

 private:
  Device& dev_;
  TopK plan_;
  Buffer keys_, values_, offsets_, out_keys_, out_values_, scratch_, count_;
};

// Power-law lengths (test::power_law_lengths), the last ones dropped until the layout with its gaps (at most 4
// keys before each segment) fits `keys`.
std::vector<uint64_t> lengths_within(size_t count, uint64_t largest, uint64_t keys, std::mt19937_64& rng) {
  std::vector<uint64_t> lengths = test::power_law_lengths(count, largest, rng);
  while (std::accumulate(lengths.begin(), lengths.end(), uint64_t(0)) + 4 * lengths.size() > keys) lengths.pop_back();
  return lengths;
}

}  // namespace

TEST_CASE("topk_segmented of uniform segments matches the host per segment: u32, i32, f32, both orders, keys and "
          "pairs, k = 1 to max_k",
          "[topk][segmented]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  for (DataType type : kTypes)
    for (SortOrder order : kOrders)
      for (uint32_t value_size : {0u, 4u}) {
        SegmentedTopKRig<> rig(dev, segmented_desc(type, order, value_size, 4096, 64, 32));
        const std::vector<uint32_t> keys = random_keys(type, 4096, rng);
        CHECK(rig.check(keys, uniform_layout(64, 64), 1));
        CHECK(rig.check(keys, uniform_layout(64, 64), 32));   // k = max_k
        CHECK(rig.check(keys, uniform_layout(40, 100), 17));
        CHECK(rig.check(keys, uniform_layout(1, 4096), 32));  // one segment: the whole input
      }
}

TEST_CASE("topk_segmented of power-law segments, shuffled with gaps and empty ones, leaves the slots past a short "
          "segment's length untouched",
          "[topk][segmented]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  for (DataType type : {DataType::u32, DataType::f32})
    for (uint32_t value_size : {0u, 4u}) {
      SegmentedTopKRig<> rig(dev, segmented_desc(type, SortOrder::descending, value_size, 20000, 400, 100));
      const std::vector<uint32_t> keys = random_keys(type, 20000, rng);
      std::vector<uint64_t> lengths = lengths_within(300, 3000, 20000 - 2500 - 8, rng);
      lengths.push_back(0);
      lengths.push_back(0);
      lengths.push_back(2500);  // a segment past the block tile: SegmentedSort's large passes
      Layout l = test::lay_out(lengths, Arrangement{true, true, false}, rng);
      REQUIRE(l.elements <= 20000);
      CHECK(rig.check(keys, l, 100));
      CHECK(rig.check(keys, l, 7));
      CHECK(rig.check(keys, l, 1));
    }
}

TEST_CASE("topk_segmented takes the earliest inputs among equal keys, first, in every segment", "[topk][segmented][stable]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  for (SortOrder order : kOrders) {
    SegmentedTopKRig<> rig(dev, segmented_desc(DataType::u32, order, 4, 6000, 100, 64));
    const std::vector<uint32_t> same(6000 + kGuard, 42u);
    const Layout l = test::lay_out(lengths_within(100, 1500, 6000, rng), Arrangement{true, true, false}, rng);
    REQUIRE(l.elements <= 6000);
    CHECK(rig.check(same, l, 64));
    CHECK(rig.check(random_keys(DataType::u32, 6000, rng, true), l, 50));  // many ties
  }
}

TEST_CASE("topk_segmented reads CSR offsets from one buffer (end = begin + 4 bytes)", "[topk][segmented]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  SegmentedTopKRig<> rig(dev, segmented_desc(DataType::i32, SortOrder::ascending, 4, 8000, 200, 16));
  const Layout l = test::lay_out(lengths_within(200, 100, 8000, rng), Arrangement{}, rng);
  REQUIRE(l.elements <= 8000);
  CHECK(rig.check(random_keys(DataType::i32, 8000, rng), l, 16, true));
}

TEST_CASE("topk_segmented_indirect reads the segment count on the GPU and clamps it to max_segments",
          "[topk][segmented][indirect]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  for (uint32_t value_size : {0u, 4u}) {
    SegmentedTopKRig<> rig(dev, segmented_desc(DataType::f32, SortOrder::ascending, value_size, 10000, 120, 40));
    const std::vector<uint32_t> keys = random_keys(DataType::f32, 10000, rng);
    const Layout l = test::lay_out(lengths_within(120, 400, 10000, rng), Arrangement{true, true, false}, rng);
    REQUIRE(l.size() == 120);
    CHECK(rig.check(keys, l, 40, false, 57));    // fewer than max_segments: the rest untouched
    CHECK(rig.check(keys, l, 3, false, 5000));   // clamped to max_segments
    CHECK(rig.check(keys, l, 40, false, 0));     // none
  }
}

TEST_CASE("topk_segmented of u64, i64 and f64 keys, both orders, keys and pairs, matches the host", "[topk][segmented][key64]") {
  Device& dev = test::device();
  if (!test::type_supported(dev.context(), DataType::u64)) {
    test::skip("64-bit keys need shaderInt64");
    return;
  }
  VKPRIM_TEST_RNG(rng);
  for (DataType type : {DataType::u64, DataType::i64, DataType::f64})
    for (SortOrder order : kOrders)
      for (uint32_t value_size : {0u, 4u}) {
        SegmentedTopKRig<uint64_t> rig(dev, segmented_desc(type, order, value_size, 3000, 80, 24));
        const Layout l = test::lay_out(lengths_within(80, 200, 3000, rng), Arrangement{true, true, false}, rng);
        REQUIRE(l.elements <= 3000);
        CHECK(rig.check(random_keys64(type, 3000, rng), l, 24));
        CHECK(rig.check(random_keys64(type, 3000, rng, true), l, 5));  // ties
      }
}

TEST_CASE("topk_segmented refuses a plan without max_segments, too many segments, k past max_k, short and "
          "overlapping ranges, recording nothing",
          "[topk][segmented][errors]") {
  Device& dev = test::device();
  Context& context = dev.context();
  const TopK single = make_topk(context, topk_desc(DataType::u32, SortOrder::ascending, 0, 1000, 10));
  const TopK plan = make_topk(context, segmented_desc(DataType::u32, SortOrder::ascending, 4, 1000, 8, 10));
  Buffer keys = test::make_buffer(dev, 4000), values = test::make_buffer(dev, 4000);
  Buffer offsets = test::make_buffer(dev, 4096), out = test::make_buffer(dev, 4096);
  Buffer scratch = test::make_buffer(dev, plan.scratch_requirements().size);
  const BufferRange s = scratch.range(0, plan.scratch_requirements().size);
  const BufferRange begin = offsets.range(0, 32), end = offsets.range(32, 32);
  const char* call = "TopK::record_segmented";
  auto record = [&](const TopK& p, uint64_t segments, uint32_t k, BufferRange in, BufferRange vals, BufferRange b,
                    BufferRange ok, BufferRange ov, BufferRange sc) {
    return [&p, segments, k, in, vals, b, ok, ov, sc, end](VkCommandBuffer cmd) {
      return p.record_segmented(cmd, in, vals, b, end, segments, k, ok, ov, sc);
    };
  };
  const BufferRange ok_out = out.range(0, 320), ok_values = out.range(1024, 320);
  test::check_refused(dev, out, call, "max_segments 0",
                      record(single, 1, 1, keys.range(), {}, begin, ok_out, {}, s));
  test::check_refused(dev, out, call, "exceeds max_segments",
                      record(plan, 9, 1, keys.range(), values.range(), begin, ok_out, ok_values, s));
  test::check_refused(dev, out, call, "exceeds max_k",
                      record(plan, 8, 11, keys.range(), values.range(), begin, ok_out, ok_values, s));
  test::check_refused(dev, out, call, "out_keys",  // 8 segments of 10 need 320 bytes
                      record(plan, 8, 10, keys.range(), values.range(), begin, out.range(0, 316), ok_values, s));
  test::check_refused(dev, out, call, "out_values",
                      record(plan, 8, 10, keys.range(), values.range(), begin, ok_out, out.range(1024, 100), s));
  test::check_refused(dev, out, call, "overlap",  // out_keys over the keys
                      record(plan, 8, 10, keys.range(), values.range(), begin, keys.range(0, 320), ok_values, s));
  test::check_refused(dev, out, call, "overlap",  // out_values over the offsets
                      record(plan, 8, 10, keys.range(), values.range(), begin, ok_out, offsets.range(0, 320), s));
  test::check_refused(dev, out, call, "begin_offsets",  // 8 segments need 32 bytes
                      record(plan, 8, 10, keys.range(), values.range(), offsets.range(0, 16), ok_out, ok_values, s));
  test::check_refused(dev, out, call, "values",  // pairs need values
                      record(plan, 8, 10, keys.range(), {}, begin, ok_out, ok_values, s));
  test::check_refused(dev, out, call, "scratch",
                      record(plan, 8, 10, keys.range(), values.range(), begin, ok_out, ok_values, {}));
  test::check_refused(dev, out, call, "keys",  // misaligned
                      record(plan, 8, 10, keys.range(2, 400), values.range(), begin, ok_out, ok_values, s));
  // record_segmented_indirect: the count's range, and the offsets and outputs for max_segments.
  const char* indirect = "TopK::record_segmented_indirect";
  auto gpu = [&](BufferRange count, BufferRange b, BufferRange ok) {
    return [&plan, count, b, ok, ok_values, end, &keys, &values, s](VkCommandBuffer cmd) {
      return plan.record_segmented_indirect(cmd, keys.range(), values.range(), b, end, count, 10, ok, ok_values, s);
    };
  };
  test::check_refused(dev, out, indirect, "count", gpu({}, begin, ok_out));                      // no count
  test::check_refused(dev, out, indirect, "", gpu(offsets.range(2, 4), begin, ok_out));          // misaligned
  test::check_refused(dev, out, indirect, "overlap", gpu(out.range(0, 4), begin, ok_out));       // count in out
  test::check_refused(dev, out, indirect, "begin_offsets", gpu(offsets.range(60, 4), offsets.range(0, 28), ok_out));
  test::check_refused(dev, out, indirect, "out_keys", gpu(offsets.range(60, 4), begin, out.range(0, 160)));
  test::check_refused(dev, out, indirect, "max_segments 0", [&](VkCommandBuffer cmd) {
    return single.record_segmented_indirect(cmd, keys.range(), {}, begin, end, offsets.range(60, 4), 1, ok_out, {}, s);
  });
  // segments 0 and k 0 record nothing.
  test::poison(dev, out);
  CHECK(test::recorded_result(dev, record(plan, 0, 10, keys.range(), values.range(), begin, ok_out, ok_values, s)).ok());
  CHECK(test::recorded_result(dev, record(plan, 8, 0, keys.range(), values.range(), begin, ok_out, ok_values, s)).ok());
  CHECK(test::still_poisoned(dev, out));
}

TEST_CASE("topk_segmented copies only the keys range and clamps offsets past it", "[topk][segmented]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  const TopK plan = make_topk(dev.context(), segmented_desc(DataType::u32, SortOrder::ascending, 0, 1000, 3, 8));
  const std::vector<uint32_t> keys = random_keys(DataType::u32, 1000, rng);
  Buffer keys_buffer = test::make_buffer(dev, 1000 * 4), offsets = test::make_buffer(dev, 24);
  Buffer out = test::make_buffer(dev, 3 * 8 * 4), scratch = test::make_buffer(dev, plan.scratch_requirements().size);
  test::upload(dev, keys_buffer, std::vector<uint32_t>(keys.begin(), keys.begin() + 1000));
  // [0, 100), [550, 700) read as [550, 600), [650, 800) as empty: the keys range holds 600.
  test::upload(dev, offsets, std::vector<uint32_t>{0, 550, 650, 100, 700, 800});
  test::poison(dev, out);
  const Result<void> r = test::recorded_result(dev, [&](VkCommandBuffer cmd) {
    return plan.record_segmented(cmd, keys_buffer.range(0, 600 * 4), {}, offsets.range(0, 12), offsets.range(12, 12),
                                 3, 8, out.range(), {}, scratch.range());
  });
  INFO("record: " << r.message());
  REQUIRE(r.ok());
  const auto got = test::download<uint32_t>(dev, out, 24);
  const uint32_t from[] = {0, 550}, to[] = {100, 600};
  for (int s = 0; s < 2; ++s) {
    std::vector<uint32_t> expected(keys.begin() + from[s], keys.begin() + to[s]);
    std::sort(expected.begin(), expected.end());
    CHECK(std::vector<uint32_t>(got.begin() + s * 8, got.begin() + s * 8 + 8) ==
          std::vector<uint32_t>(expected.begin(), expected.begin() + 8));
  }
  CHECK(std::all_of(got.begin() + 16, got.end(), [](uint32_t w) { return w == test::kPoison; }));
}
