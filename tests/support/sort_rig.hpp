// RadixSort test rig shared by test_sort and test_sort_payloads: plan creation that reports why it failed,
// key generators, and a plan with guarded key and value buffers whose check() compares keys and values with
// std::stable_sort of the indices (host_sort.hpp) and proves nothing around them was written. Values are
// derived from the input index word by word, so a value of any width shows where it came from.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "host_sort.hpp"
#include "test_support.hpp"
#include "vkprim/sort.hpp"

namespace vkprim::test {

constexpr std::array<SortAlgorithm, 2> kAlgorithms = {SortAlgorithm::onesweep, SortAlgorithm::reduce_then_scan};

RadixSort make_sort(Context& context, const SortDesc& desc) {
  auto plan = RadixSort::create(context, desc);
  INFO("RadixSort::create(" << to_string(desc.key_type) << ", value_size " << desc.value_size << ", "
                            << to_string(desc.order) << ", max_count " << desc.max_count << ", bits ["
                            << desc.begin_bit << ", " << desc.end_bit << "), " << to_string(desc.algorithm)
                            << "): " << (plan ? std::string("ok") : plan.error().message));
  REQUIRE(plan.ok());
  return std::move(plan).value();
}

// onesweep needs the Vulkan memory model; where the device lacks it the onesweep cases are skipped.
bool available(Device& dev, SortAlgorithm a) {
  return a != SortAlgorithm::onesweep || test::has_features(dev, feature_memory_model, "onesweep (the Vulkan memory model)");
}

// Runs body(a) for each algorithm the device has.
template <class Body>
void for_each_algorithm(Device& dev, Body&& body) {
  for (SortAlgorithm a : kAlgorithms)
    if (available(dev, a)) body(a);
}

// As type_supported (test_support.hpp: 8- or 16-bit storage for u8 and u16), except that f64 keys, sorted as
// bits, need shaderInt64 rather than shaderFloat64.
bool key_type_supported(const Context& context, DataType t) {
  return is_64bit(t) ? context.capabilities().has(feature_int64) : type_supported(context, t);
}

// Keys as raw bits (the low 32 bits for 32-bit key types).
using Keys = std::vector<uint64_t>;

// One plan with guarded key and value buffers and its scratch.
class SortRig {
 public:
  static constexpr uint64_t kGuard = 8;

  SortRig(Device& dev, const SortDesc& desc)
      : dev_(dev),
        plan_(make_sort(dev.context(), desc)),
        kb_(size_of(desc.key_type)),
        vb_(desc.value_size),
        keys_(test::make_buffer(dev, (desc.max_count + 2 * kGuard) * kb_)),
        values_(test::make_buffer(dev, (desc.max_count + 2 * kGuard) * std::max<uint32_t>(vb_, 4))),
        scratch_(test::make_buffer(dev, std::max<VkDeviceSize>(16, plan_.scratch_requirements().size))) {}

  const RadixSort& plan() const { return plan_; }
  const Buffer& scratch() const { return scratch_; }
  const Buffer& keys() const { return keys_; }
  const Buffer& values() const { return values_; }
  // The word every scratch word holds before each sort (test::kPoison unless set).
  void set_scratch_word(uint32_t word) { scratch_word_ = word; }

  // Sorts `keys` placed at element `shift` of the key buffer (values = the original index, and for 8-byte
  // values index | ~index << 32) and checks keys, values and guards. indirect: the count comes from a
  // GPU buffer.
  bool check(const Keys& keys, uint64_t shift = 0, bool indirect = false) {
    const SortDesc& d = plan_.desc();
    const uint64_t n = keys.size();
    REQUIRE(shift <= kGuard);
    const uint32_t end = d.end_bit ? d.end_bit : 8 * kb_;
    INFO(to_string(plan_.algorithm()) << " " << to_string(d.key_type) << " value_size " << vb_ << " "
                                      << to_string(d.order) << " bits [" << d.begin_bit << ", " << end << ") n=" << n
                                      << " shift " << shift << (indirect ? " indirect" : ""));
    // [guard x shift][keys][guard x kGuard] with guards of a recognisable pattern.
    const uint64_t slots = shift + n + kGuard;
    std::vector<uint8_t> key_bytes(slots * kb_, 0xA5), value_bytes(slots * std::max<uint32_t>(vb_, 4), 0x5A);
    for (uint64_t i = 0; i < n; ++i) std::memcpy(&key_bytes[(shift + i) * kb_], &keys[i], kb_);
    for (uint64_t i = 0; i < n && vb_; ++i) value_bytes_of(i, &value_bytes[(shift + i) * vb_]);
    test::upload(dev_, keys_, key_bytes);
    test::upload(dev_, values_, value_bytes);
    test::poison(dev_, scratch_, scratch_word_);
    // record_indirect's ranges hold max_count elements (the count is only known on the GPU).
    const uint64_t range_n = indirect ? d.max_count : n;
    const BufferRange kr = keys_.range(shift * kb_, range_n * kb_);
    const BufferRange vr = vb_ ? values_.range(shift * vb_, range_n * vb_) : BufferRange{};
    Buffer count_buffer = test::make_buffer(dev_, 16);
    if (indirect) test::upload(dev_, count_buffer, std::vector<uint32_t>{uint32_t(n), 0, 0, 0});
    Result<void> recorded;
    auto submitted = test::submit_compute(dev_, [&](VkCommandBuffer cmd) {
      recorded = indirect ? plan_.record_indirect(cmd, kr, vr, count_buffer.range(0, 4), scratch_.range())
                          : plan_.record(cmd, kr, vr, n, scratch_.range());
    });
    INFO("record: " << recorded.message() << " submit: " << submitted.message());
    REQUIRE(recorded.ok());
    REQUIRE(submitted.ok());

    // Reference: stable sort of the indices by the transformed key field (host_sort.hpp).
    const std::vector<uint64_t> order = host::stable_sort_order(keys, d);

    const auto got_keys = test::download<uint8_t>(dev_, keys_, slots * kb_);
    const auto got_values = test::download<uint8_t>(dev_, values_, slots * std::max<uint32_t>(vb_, 4));
    uint64_t bad_key = n, bad_value = n;
    std::vector<uint8_t> expected(vb_);
    for (uint64_t i = 0; i < n; ++i) {
      uint64_t k = 0;
      std::memcpy(&k, &got_keys[(shift + i) * kb_], kb_);
      if (k != keys[order[i]] && bad_key == n) bad_key = i;
      if (vb_ && bad_value == n) {
        value_bytes_of(order[i], expected.data());
        if (std::memcmp(expected.data(), &got_values[(shift + i) * vb_], vb_) != 0) bad_value = i;
      }
    }
    if (bad_key < n) {
      uint64_t k = 0;
      std::memcpy(&k, &got_keys[(shift + bad_key) * kb_], kb_);
      INFO("first wrong key at " << bad_key << ": got 0x" << std::hex << k << ", expected 0x" << keys[order[bad_key]]);
      CHECK(bad_key == n);
    }
    if (bad_value < n) {
      uint32_t first_word = 0;
      std::memcpy(&first_word, &got_values[(shift + bad_value) * vb_], 4);
      INFO("first wrong value at " << bad_value << ": its first word " << first_word << ", expected the value of input "
                                   << order[bad_value]);
      CHECK(bad_value == n);
    }
    bool guards = true;
    for (uint64_t i = 0; i < slots; ++i) {
      if (i >= shift && i < shift + n) continue;
      for (uint32_t b = 0; b < kb_; ++b) guards = guards && got_keys[i * kb_ + b] == 0xA5;
      if (vb_)
        for (uint32_t b = 0; b < vb_; ++b) guards = guards && got_values[i * vb_ + b] == 0x5A;
    }
    INFO("elements around the keys and values must keep their values");
    CHECK(guards);
    return bad_key == n && bad_value == n && guards;
  }

 private:
  // Word w of element i's value: i, then ~i, then a hash of both, so every word of a wide value is checked.
  static uint32_t value_word(uint64_t i, uint32_t w) {
    return w == 0 ? uint32_t(i) : w == 1 ? ~uint32_t(i) : uint32_t(i) * 0x9E3779B9u ^ (w * 0x85EBCA6Bu);
  }
  void value_bytes_of(uint64_t i, uint8_t* out) const {
    for (uint32_t w = 0; w < vb_ / 4; ++w) {
      const uint32_t x = value_word(i, w);
      std::memcpy(out + 4 * w, &x, 4);
    }
  }

  Device& dev_;
  RadixSort plan_;
  uint32_t kb_, vb_;
  Buffer keys_, values_, scratch_;
  uint32_t scratch_word_ = test::kPoison;
};

Keys random_keys(uint64_t n, DataType type, std::mt19937_64& rng) {
  Keys k(n);
  const uint64_t mask = size_of(type) == 8 ? ~uint64_t(0) : (uint64_t(1) << (8 * size_of(type))) - 1;
  for (auto& x : k) x = rng() & mask;
  return k;
}

// Random floats with the special values mixed in: +-0, +-inf, NaNs of both signs, denormals.
Keys float_keys(uint64_t n, DataType type, std::mt19937_64& rng) {
  Keys k(n);
  std::uniform_real_distribution<double> value(-1e6, 1e6);
  for (uint64_t i = 0; i < n; ++i) {
    const double v = value(rng);
    const int pick = int(rng() % 12);
    if (type == DataType::f32) {
      const uint32_t specials[] = {0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00001u,
                                   0x00000001u, 0x80000001u};
      float f = float(v);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      k[i] = pick < 8 ? specials[pick] : bits;
    } else {
      const uint64_t specials[] = {0x0ull, 0x8000000000000000ull, 0x7FF0000000000000ull, 0xFFF0000000000000ull,
                                   0x7FF8000000000000ull, 0xFFF8000000000001ull, 0x1ull, 0x8000000000000001ull};
      uint64_t bits;
      std::memcpy(&bits, &v, 8);
      k[i] = pick < 8 ? specials[pick] : bits;
    }
  }
  return k;
}

// Random u32 keys with few distinct values (bits 0x0F0F only): equal keys meet, so stability shows.
Keys few_distinct_keys(uint64_t n, std::mt19937_64& rng) {
  Keys k = random_keys(n, DataType::u32, rng);
  for (auto& x : k) x &= 0x0F0F;
  return k;
}

Keys keys_for(DataType type, uint64_t n, std::mt19937_64& rng) {
  return type == DataType::f32 || type == DataType::f64 ? float_keys(n, type, rng) : random_keys(n, type, rng);
}

// Keys per tile of the tuned plan for u32 keys with `value_size` values (every case crosses real tiles;
// on GPUs onesweep's tile differs from reduce_then_scan's).
uint64_t tile_of(Device& dev, uint32_t value_size, SortAlgorithm algorithm = SortAlgorithm::reduce_then_scan) {
  SortDesc d;
  d.max_count = 1;
  d.value_size = value_size;
  d.algorithm = algorithm;
  return make_sort(dev.context(), d).keys_per_tile();
}

// The raw key whose ordered form (host::ordered_bits) has every bit set: the kernels pad a partial last
// tile with that ordered key, so real keys equal to it must still rank before the padding and stay stable.
// It is one of the extremes of the raw bits: all ones, all but the sign, the sign alone, zero.
uint64_t padding_twin(DataType t, SortOrder o) {
  const bool wide = size_of(t) == 8;
  const uint64_t ones = wide ? ~uint64_t(0) : 0xFFFFFFFFull;
  const uint64_t sign = wide ? uint64_t(1) << 63 : uint64_t(1) << 31;
  for (uint64_t raw : {ones, ones & ~sign, sign, uint64_t(0)})
    if (host::ordered_bits(raw, t, o) == ones) return raw;
  FAIL("no raw key orders as all ones for " << to_string(t) << " " << to_string(o));
  return 0;
}

SortDesc desc_of(SortAlgorithm a, DataType key, uint64_t max_count, uint32_t value_size = 0,
                 SortOrder order = SortOrder::ascending) {
  SortDesc d;
  d.key_type = key;
  d.value_size = value_size;
  d.order = order;
  d.max_count = max_count;
  d.algorithm = a;
  return d;
}

}  // namespace vkprim::test
