// SegmentedSort against a CPU reference (std::stable_sort of each segment by RadixSort's order transform,
// host_sort.hpp): segments of every size class around the plan's thresholds (0, 1, 2, small_max, medium_max and
// the large tile, each +-1), in order and shuffled with gaps, one huge segment among tiny ones, all keys equal
// (stability through values = index), every key type and both orders, bit ranges (an odd number of digit passes
// copies back), pairs with 4- and 8-byte values, record_fixed, record_indirect with the count written on the GPU,
// zero segments, a splatting-shaped sort ((tile, depth) pairs of power-law tile sizes), the shared-memory
// emulation, and the errors (a message, nothing written). Keys outside every segment (gaps) and the guard past
// the keys must keep their values.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "host_sort.hpp"
#include "segment_layout.hpp"
#include "sort_rig.hpp"
#include "test_support.hpp"
#include "vkprim/segmented_sort.hpp"

using namespace vkprim;
using vkprim::test::Layout;
using vkprim::test::lay_out;
using vkprim::test::power_law_lengths;

namespace {

using test::Keys;  // raw key bits (the low 32 for 32-bit key types)

// The lengths around a plan's thresholds and its large tile, in random order, `copies` of each.
std::vector<uint64_t> edge_lengths(const SegmentedSort& plan, int copies, std::mt19937_64& rng) {
  const SegmentedSortThresholds t = plan.thresholds();
  std::vector<uint64_t> base = {0, 1, 2, 3, 17};
  for (uint64_t edge : {uint64_t(t.small_max), uint64_t(t.medium_max), plan.medium_tile_keys(), plan.block_tile_keys(),
                        plan.large_tile_keys()})
    for (uint64_t d : {edge - 1, edge, edge + 1}) base.push_back(d);
  base.push_back(2 * plan.large_tile_keys() + 3);
  std::vector<uint64_t> out;
  for (int c = 0; c < copies; ++c) out.insert(out.end(), base.begin(), base.end());
  std::shuffle(out.begin(), out.end(), rng);
  return out;
}


SegmentedSortDesc desc_of(DataType key, uint64_t max_count, uint64_t max_segments, uint32_t value_size = 0,
                          SortOrder order = SortOrder::ascending) {
  SegmentedSortDesc d;
  d.key_type = key;
  d.value_size = value_size;
  d.order = order;
  d.max_count = max_count;
  d.max_segments = max_segments;
  return d;
}

// `d` with room for exactly the keys and segments of `l`.
SegmentedSortDesc fitted(SegmentedSortDesc d, const Layout& l) {
  d.max_count = l.elements;
  d.max_segments = l.size();
  return d;
}

// A tile override of workgroup_size x items_per_thread (SegmentedSortDesc's tuning fields).
Tuning tile(uint32_t workgroup_size, uint32_t items_per_thread) {
  Tuning t;
  t.workgroup_size = workgroup_size;
  t.items_per_thread = items_per_thread;
  return t;
}

SegmentedSort make_plan(Device& dev, const SegmentedSortDesc& d) {
  auto plan = SegmentedSort::create(dev.context(), d);
  INFO("SegmentedSort::create(" << to_string(d.key_type) << ", value_size " << d.value_size << ", "
                                << to_string(d.order) << ", max_count " << d.max_count << ", max_segments "
                                << d.max_segments << "): " << (plan ? std::string("ok") : plan.error().message));
  REQUIRE(plan.ok());
  return std::move(plan).value();
}

enum class How { record, fixed, indirect_upload, indirect_gpu };

// One plan with guarded keys and values, the offsets, scratch and a count word.
class Rig {
 public:
  static constexpr uint64_t kGuard = 8;
  // Overlapping segments (the caller's error): only the keys and values outside every segment, and the guards,
  // are checked (they must keep their values).
  bool overlapping = false;

  Rig(Device& dev, const SegmentedSortDesc& d)
      : dev_(dev), plan_(make_plan(dev, d)), kb_(size_of(d.key_type)), vb_(d.value_size),
        keys_(test::make_buffer(dev, (d.max_count + kGuard) * kb_)),
        values_(test::make_buffer(dev, (d.max_count + kGuard) * std::max<uint32_t>(vb_, 4))),
        offsets_(test::make_buffer(dev, (2 * d.max_segments + 4) * 4)),
        scratch_(test::make_buffer(dev, plan_.scratch_requirements().size)), count_(test::make_buffer(dev, 16)) {}

  const SegmentedSort& plan() const { return plan_; }

  // Sorts `keys` (the whole key range; values = the index) by the segments of `l` and checks every key and
  // value against the reference, the gaps and the guards. fixed: segments of l.begin[0]'s size (record_fixed).
  // gpu_count: what the count word holds for the indirect records (default: the segments).
  bool check(const Keys& keys, const Layout& l, How how = How::record, int64_t gpu_count = -1) {
    const SegmentedSortDesc& d = plan_.desc();
    const uint64_t n = keys.size(), segments = l.size();
    INFO(to_string(d.key_type) << " value_size " << vb_ << " " << to_string(d.order) << " bits [" << d.begin_bit
                               << ", " << d.end_bit << ") keys " << n << " segments " << segments << " how "
                               << int(how));
    REQUIRE(n <= d.max_count);
    std::vector<uint8_t> key_bytes((n + kGuard) * kb_, 0xA5), value_bytes((n + kGuard) * std::max<uint32_t>(vb_, 4), 0x5A);
    for (uint64_t i = 0; i < n; ++i) std::memcpy(&key_bytes[i * kb_], &keys[i], kb_);
    for (uint64_t i = 0; i < n && vb_; ++i) value_of(i, &value_bytes[i * vb_]);
    test::upload(dev_, keys_, key_bytes);
    test::upload(dev_, values_, value_bytes);
    std::vector<uint32_t> words(l.begin);
    words.insert(words.end(), l.end.begin(), l.end.end());
    words.push_back(0);
    test::upload(dev_, offsets_, words);
    test::poison(dev_, scratch_);
    const uint32_t count_word = gpu_count < 0 ? uint32_t(segments) : uint32_t(gpu_count);
    if (how == How::indirect_upload) test::upload(dev_, count_, std::vector<uint32_t>{count_word, 0, 0, 0});
    else test::poison(dev_, count_);
    const bool indirect = how == How::indirect_upload || how == How::indirect_gpu;
    // Ranges: the keys (record_indirect: max_count, record_fixed: the fixed segments), offsets as CSR-like halves.
    const uint64_t range_n = std::max<uint64_t>(n, 1);
    const BufferRange kr = keys_.range(0, range_n * kb_);
    const BufferRange vr = vb_ ? values_.range(0, range_n * vb_) : BufferRange{};
    const uint64_t offset_words = indirect ? d.max_segments : std::max<uint64_t>(segments, 1);
    const BufferRange begin = offsets_.range(0, offset_words * 4);
    const BufferRange end = offsets_.range(segments * 4, offset_words * 4);
    Result<void> recorded;
    auto submitted = test::submit_compute(dev_, [&](VkCommandBuffer cmd) {
      if (how == How::indirect_gpu) fill_count(cmd, count_word);
      switch (how) {
        case How::record: recorded = plan_.record(cmd, kr, vr, begin, end, segments, scratch_.range()); break;
        case How::fixed:
          recorded = plan_.record_fixed(cmd, kr, vr, l.end[0] - l.begin[0], segments, scratch_.range());
          break;
        default: recorded = plan_.record_indirect(cmd, kr, vr, begin, end, count_.range(0, 4), scratch_.range());
      }
    });
    INFO("record: " << recorded.message() << " submit: " << submitted.message());
    REQUIRE(recorded.ok());
    REQUIRE(submitted.ok());
    return compare(keys, l, indirect ? std::min<uint64_t>(count_word, d.max_segments) : segments);
  }

 private:
  // The count written on the GPU before the record: vkCmdFillBuffer, then a transfer -> compute barrier.
  void fill_count(VkCommandBuffer cmd, uint32_t count) {
    auto gipa = dev_.get_instance_proc_addr();
    auto gdpa = reinterpret_cast<PFN_vkGetDeviceProcAddr>(gipa(dev_.instance(), "vkGetDeviceProcAddr"));
    auto fill = reinterpret_cast<PFN_vkCmdFillBuffer>(gdpa(dev_.device(), "vkCmdFillBuffer"));
    fill(cmd, count_.handle(), 0, 4, count);
    VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    b.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    b.dstAccessMask = VK_ACCESS_SHADER_READ_BIT;
    test::pipeline_barrier(dev_)(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &b, 0,
                                 nullptr, 0, nullptr);
  }

  // The expected keys and value indices: each of the first `segments` segments stably sorted.
  bool compare(const Keys& keys, const Layout& l, uint64_t segments) {
    const SegmentedSortDesc& d = plan_.desc();
    SortDesc sd;
    sd.key_type = d.key_type;
    sd.order = d.order;
    sd.begin_bit = d.begin_bit;
    sd.end_bit = d.end_bit;
    const uint64_t n = keys.size();
    std::vector<uint64_t> from(n);
    std::iota(from.begin(), from.end(), uint64_t(0));
    std::vector<bool> inside(n, false);
    for (uint64_t s = 0; s < segments; ++s)
      for (uint64_t i = l.begin[s]; i < l.end[s]; ++i) inside[i] = true;
    for (uint64_t s = 0; s < segments && !overlapping; ++s) {
      if (l.end[s] <= l.begin[s]) continue;
      const Keys part(keys.begin() + l.begin[s], keys.begin() + l.end[s]);
      const std::vector<uint64_t> order = host::stable_sort_order(part, sd);
      for (size_t i = 0; i < order.size(); ++i) from[l.begin[s] + i] = l.begin[s] + order[i];
    }
    const auto got_keys = test::download<uint8_t>(dev_, keys_, (n + kGuard) * kb_);
    const auto got_values = test::download<uint8_t>(dev_, values_, (n + kGuard) * std::max<uint32_t>(vb_, 4));
    uint64_t bad_key = n, bad_value = n;
    std::vector<uint8_t> expected(vb_);
    for (uint64_t i = 0; i < n && (bad_key == n || bad_value == n); ++i) {
      if (overlapping && inside[i]) continue;
      uint64_t k = 0;
      std::memcpy(&k, &got_keys[i * kb_], kb_);
      if (k != keys[from[i]] && bad_key == n) bad_key = i;
      if (vb_ && bad_value == n) {
        value_of(from[i], expected.data());
        if (std::memcmp(expected.data(), &got_values[i * vb_], vb_) != 0) bad_value = i;
      }
    }
    if (bad_key < n) {
      uint64_t k = 0;
      std::memcpy(&k, &got_keys[bad_key * kb_], kb_);
      INFO("first wrong key at " << bad_key << ": got 0x" << std::hex << k << ", expected 0x" << keys[from[bad_key]]);
      CHECK(bad_key == n);
    }
    if (bad_value < n) {
      uint32_t word = 0;
      std::memcpy(&word, &got_values[bad_value * vb_], 4);
      INFO("first wrong value at " << bad_value << ": its first word " << word << ", expected the value of key "
                                   << from[bad_value]);
      CHECK(bad_value == n);
    }
    bool guards = true;
    for (uint64_t i = n * kb_; i < got_keys.size(); ++i) guards = guards && got_keys[i] == 0xA5;
    for (uint64_t i = n * std::max<uint32_t>(vb_, 4); vb_ && i < got_values.size(); ++i)
      guards = guards && got_values[i] == 0x5A;
    INFO("the keys and values past the range must keep their values");
    CHECK(guards);
    return bad_key == n && bad_value == n && guards;
  }

  // Word 0 of element i's value is i, word 1 ~i.
  void value_of(uint64_t i, uint8_t* out) const {
    const uint32_t words[2] = {uint32_t(i), ~uint32_t(i)};
    std::memcpy(out, words, vb_);
  }

  Device& dev_;
  SegmentedSort plan_;
  uint32_t kb_, vb_;
  Buffer keys_, values_, offsets_, scratch_, count_;
};

// Every size class around the thresholds, end to end and shuffled with gaps.
void check_edges(Device& dev, const SegmentedSortDesc& base, int copies, std::mt19937_64& rng) {
  // A plan of a size to learn the thresholds, then one that holds the layout.
  const SegmentedSort probe = make_plan(dev, base);
  const std::vector<uint64_t> lengths = edge_lengths(probe, copies, rng);
  for (const bool shuffled : {false, true}) {
    const Layout l = lay_out(lengths, {shuffled, shuffled, false}, rng);
    Rig rig(dev, fitted(base, l));
    INFO((shuffled ? "shuffled with gaps" : "end to end"));
    CHECK(rig.check(test::keys_for(base.key_type, l.elements, rng), l));
  }
}

bool key_type_supported(Device& dev, DataType t) {
  return !is_64bit(t) || test::has_features(dev, feature_int64, "64-bit keys (shaderInt64)");
}

}  // namespace

TEST_CASE("u32 keys sort in every size class, end to end and shuffled with gaps", "[segmented_sort][edges]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  check_edges(dev, desc_of(DataType::u32, 1 << 16, 1024), 2, rng);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("each key type sorts ascending and descending in every size class", "[segmented_sort][types]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  for (DataType t : {DataType::i32, DataType::f32, DataType::u64, DataType::i64, DataType::f64}) {
    if (!key_type_supported(dev, t)) continue;
    for (SortOrder o : {SortOrder::ascending, SortOrder::descending}) {
      if (t == DataType::u64 && o == SortOrder::descending) continue;  // u32 descending below; keep pipelines few
      INFO(to_string(t) << " " << to_string(o));
      check_edges(dev, desc_of(t, 1 << 16, 1024, 0, o), 1, rng);
    }
  }
  check_edges(dev, desc_of(DataType::u32, 1 << 16, 1024, 0, SortOrder::descending), 1, rng);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("pairs with 4- and 8-byte values move with their keys in every size class", "[segmented_sort][pairs]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  check_edges(dev, desc_of(DataType::u32, 1 << 16, 1024, 4), 1, rng);
  check_edges(dev, desc_of(DataType::f32, 1 << 16, 1024, 8, SortOrder::descending), 1, rng);
  if (key_type_supported(dev, DataType::u64)) check_edges(dev, desc_of(DataType::u64, 1 << 16, 1024, 8), 1, rng);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("all keys equal keep their input order (stable), and few distinct keys too", "[segmented_sort][stable]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  const SegmentedSort probe = make_plan(dev, desc_of(DataType::u32, 1 << 16, 1024, 4));
  const Layout l = lay_out(edge_lengths(probe, 1, rng), {true, true, false}, rng);
  Rig rig(dev, desc_of(DataType::u32, l.elements, l.size(), 4));
  CHECK(rig.check(Keys(l.elements, 0x12345678u), l));
  Keys few = test::keys_for(DataType::u32, l.elements, rng);
  for (auto& k : few) k &= 0x0F0F;
  CHECK(rig.check(few, l));
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("bit ranges sort on their bits only, and an odd number of digit passes copies back", "[segmented_sort][bits]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  SegmentedSortDesc d = desc_of(DataType::u32, 1 << 16, 1024, 4);
  d.begin_bit = 4;
  d.end_bit = 20;  // two digit passes
  check_edges(dev, d, 1, rng);
  d.begin_bit = 0;
  d.end_bit = 20;  // three: the large segments end in scratch and are copied back
  check_edges(dev, d, 1, rng);
  if (key_type_supported(dev, DataType::i64)) {
    SegmentedSortDesc w = desc_of(DataType::i64, 1 << 16, 1024, 8, SortOrder::descending);
    w.begin_bit = 28;
    w.end_bit = 45;  // three passes across the word boundary
    check_edges(dev, w, 1, rng);
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("overridden thresholds and large tiles sort every size class", "[segmented_sort][tuning]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  SegmentedSortDesc d = desc_of(DataType::u32, 1 << 16, 1024, 4);
  d.thresholds = {32, 600};
  d.tuning = tile(256, 2);  // large tiles of 512 keys (512-invocation tiles exceed lavapipe's shared memory)
  const SegmentedSort plan = make_plan(dev, d);
  CHECK(plan.thresholds().small_max == 32);
  CHECK(plan.thresholds().medium_max == 600);
  CHECK(plan.large_tile_keys() == 512);
  check_edges(dev, d, 1, rng);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("segments past medium_max sort whole in a batch up to the block tile and as one large tile past it",
          "[segmented_sort][tuning]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  // medium_max 300 below the block tile (1024), large tiles of 2048: lengths 33..300 are medium, 301..1024
  // batches of their own, 1025..2048 one-tile large segments (their downsweep takes the tile's own digit
  // starts, no upsweep or scan), 2049 and 4099 span tiles through the digit table.
  SegmentedSortDesc d = desc_of(DataType::u32, 1 << 16, 1024, 4);
  d.thresholds = {32, 300};
  d.tuning = tile(256, 8);
  d.block_tuning = tile(256, 4);  // the policy's block tile on lavapipe, set for every device
  const SegmentedSort plan = make_plan(dev, d);
  REQUIRE(plan.block_tile_keys() == 1024);
  REQUIRE(plan.large_tile_keys() == 2048);
  check_edges(dev, d, 1, rng);
  SegmentedSortDesc odd = d;
  odd.key_type = DataType::i32;
  odd.value_size = 8;
  odd.end_bit = 20;  // three digit passes: the one-tile segments end in scratch and are copied back
  check_edges(dev, odd, 1, rng);
  // Stable: equal keys keep their input order within one-tile segments too.
  const Layout l = lay_out(edge_lengths(plan, 1, rng), {true, true, false}, rng);
  Rig rig(dev, fitted(d, l));
  CHECK(rig.check(Keys(l.elements, 0x9E3779B9u), l));
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

// Medium segments list their bounds from the start of one list and one-tile large segments from its end: with
// every segment in one of the two classes and max_segments the segment count, the two runs meet with no word
// to spare (record, and record_indirect, whose list holds max_segments).
TEST_CASE("medium and one-tile large segments alone fill their shared list from both ends",
          "[segmented_sort][lists]") {
  for (const test::DeviceSetup& setup : {test::DeviceSetup{}, test::launch_order(1)}) {
    Device& dev = test::device(setup);
    VKPRIM_TEST_RNG(rng);
    for (const SortAlgorithm large : {SortAlgorithm::reduce_then_scan, SortAlgorithm::onesweep}) {
      if (large == SortAlgorithm::onesweep && !test::has_features(dev, feature_memory_model, "the chained large passes"))
        continue;
      // As above: 33..300 medium, 1025..2048 one tile of a large segment.
      SegmentedSortDesc d = desc_of(DataType::u32, 1 << 16, 1024, 4);
      d.thresholds = {32, 300};
      d.tuning = tile(256, 8);
      d.block_tuning = tile(256, 4);
      d.large_algorithm = large;
      std::vector<uint64_t> lengths;
      for (int i = 0; i < 11; ++i) lengths.push_back(33 + rng() % 268);
      for (int i = 0; i < 7; ++i) lengths.push_back(1025 + rng() % 1024);
      lengths.push_back(300);
      lengths.push_back(2048);
      std::shuffle(lengths.begin(), lengths.end(), rng);
      const Layout l = lay_out(lengths, {true, true, false}, rng);
      Rig rig(dev, fitted(d, l));
      REQUIRE(rig.plan().large_algorithm() == large);
      CHECK(rig.check(test::keys_for(DataType::u32, l.elements, rng), l));
      CHECK(rig.check(test::keys_for(DataType::u32, l.elements, rng), l, How::indirect_gpu));
    }
    REQUIRE_NO_VALIDATION_MESSAGES(dev);
  }
}

TEST_CASE("overridden batch and medium tiles shrink the default thresholds and sort every size class",
          "[segmented_sort][tuning]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  SegmentedSortDesc d = desc_of(DataType::u32, 1 << 16, 1024, 4);
  d.block_tuning = tile(256, 1);   // batches of 256 keys, small_max 128 (half of them, at most)
  d.medium_tuning = tile(256, 2);  // a medium tile of 512: medium_max shrinks from the policy's 1024
  const SegmentedSort plan = make_plan(dev, d);
  CHECK(plan.block_tile_keys() == 256);
  CHECK(plan.medium_tile_keys() == 512);
  CHECK(plan.thresholds().small_max == 128);
  CHECK(plan.thresholds().medium_max == 512);
  check_edges(dev, d, 1, rng);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("zero segments, one segment, and one huge segment among tiny ones", "[segmented_sort][shapes]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  constexpr uint64_t kHuge = 50000;
  std::vector<uint64_t> lengths = power_law_lengths(400, 40, rng);
  lengths.insert(lengths.begin() + 123, kHuge);
  const Layout l = lay_out(lengths, {true, true, false}, rng);
  Rig rig(dev, desc_of(DataType::u32, l.elements, l.size(), 4));
  const Keys keys = test::keys_for(DataType::u32, l.elements, rng);
  CHECK(rig.check(keys, l));
  Layout none = l;
  none.begin.clear();
  none.end.clear();
  CHECK(rig.check(keys, none));  // nothing recorded: every key keeps its place
  Layout one;
  one.begin = {0};
  one.end = {uint32_t(l.elements)};
  one.elements = l.elements;
  CHECK(rig.check(keys, one));
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("overlapping segments write nothing outside the segments and the keys", "[segmented_sort][overlap]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  const SegmentedSort probe = make_plan(dev, desc_of(DataType::u32, 1 << 16, 1024, 4));
  const Layout l = lay_out(edge_lengths(probe, 1, rng), {true, true, true}, rng);
  Rig rig(dev, desc_of(DataType::u32, l.elements, l.size(), 4));
  rig.overlapping = true;
  CHECK(rig.check(test::keys_for(DataType::u32, l.elements, rng), l));
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("record_fixed sorts segments of one size in every size class", "[segmented_sort][fixed]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  constexpr uint64_t kKeys = 1 << 15;
  Rig rig(dev, desc_of(DataType::u32, kKeys + 16, kKeys, 4));
  const SegmentedSortThresholds t = rig.plan().thresholds();
  for (uint64_t size : {uint64_t(1), uint64_t(2), uint64_t(t.small_max), uint64_t(t.small_max) + 1,
                        uint64_t(t.medium_max), uint64_t(t.medium_max) + 1, uint64_t(3000)}) {
    INFO("segment size " << size);
    Layout l = test::uniform_layout(kKeys / size, size);
    l.elements += 5;  // five keys past the segments stay as they are
    CHECK(rig.check(test::keys_for(DataType::u32, l.elements, rng), l, How::fixed));
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

// One plan and one scratch, records of different shapes back to back in one command buffer (the barrier the
// contract asks between them): each sorts its own keys as it would alone, whatever the record before it left in
// scratch (lists, tile owners and states, tickets, the dispatch arguments).
TEST_CASE("records of different shapes back to back on one scratch each sort as they would alone",
          "[segmented_sort][sequence]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  // Bits [0, 24): three digit passes, so a record leaves onesweep's tile states in the encoding the next
  // record's first pass would read as written, unless marked again.
  for (const auto& [large, end_bit] : {std::pair{SortAlgorithm::reduce_then_scan, 32u},
                                       std::pair{SortAlgorithm::onesweep, 32u}, std::pair{SortAlgorithm::onesweep, 24u}}) {
    if (large == SortAlgorithm::onesweep && !test::has_features(dev, feature_memory_model, "the chained large passes"))
      continue;
    SegmentedSortDesc d = desc_of(DataType::u32, 1 << 15, 1024, 4);
    d.large_algorithm = large;
    d.end_bit = end_bit;
    const SegmentedSort plan = make_plan(dev, d);
    const uint64_t tile = plan.large_tile_keys(), medium = plan.thresholds().medium_max;
    // Medium segments, several tiles each (fixed), one tile each (fixed), every class, several tiles again.
    const std::vector<std::pair<Layout, bool>> shapes = {
        {test::uniform_layout(24, medium), false},
        {test::uniform_layout(5, 5 * tile + 3), true},
        {test::uniform_layout(20, tile), true},
        {lay_out(edge_lengths(plan, 1, rng), {true, true, false}, rng), false},
        {test::uniform_layout(3, 7 * tile), true}};
    struct Run {
      Keys keys;
      Buffer key_buffer, value_buffer, offsets;
    };
    std::vector<Run> runs;
    for (const auto& [l, fixed] : shapes) {
      REQUIRE(l.elements <= d.max_count);
      Run r{test::keys_for(DataType::u32, l.elements, rng), test::make_buffer(dev, l.elements * 4),
            test::make_buffer(dev, l.elements * 4), test::make_buffer(dev, (2 * l.size() + 1) * 4)};
      std::vector<uint32_t> words(r.keys.begin(), r.keys.end()), index(l.elements);
      std::iota(index.begin(), index.end(), 0u);
      test::upload(dev, r.key_buffer, words);
      test::upload(dev, r.value_buffer, index);
      std::vector<uint32_t> offsets(l.begin);
      offsets.insert(offsets.end(), l.end.begin(), l.end.end());
      test::upload(dev, r.offsets, offsets);
      runs.push_back(std::move(r));
    }
    const Buffer scratch = test::make_buffer(dev, plan.scratch_requirements().size);
    test::poison(dev, scratch);
    const auto barrier = test::pipeline_barrier(dev);
    std::vector<Result<void>> recorded(shapes.size());
    auto submitted = test::submit_compute(dev, [&](VkCommandBuffer cmd) {
      for (size_t i = 0; i < shapes.size(); ++i) {
        if (i > 0) test::between_records(barrier, cmd);  // the caller's barrier before scratch is reused
        const Layout& l = shapes[i].first;
        const Run& r = runs[i];
        const BufferRange keys = r.key_buffer.range(0, l.elements * 4), values = r.value_buffer.range(0, l.elements * 4);
        recorded[i] = shapes[i].second
                          ? plan.record_fixed(cmd, keys, values, l.end[0] - l.begin[0], l.size(), scratch.range())
                          : plan.record(cmd, keys, values, r.offsets.range(0, l.size() * 4),
                                        r.offsets.range(l.size() * 4, l.size() * 4), l.size(), scratch.range());
      }
    });
    REQUIRE(submitted.ok());
    SortDesc sd;
    sd.key_type = DataType::u32;
    sd.end_bit = end_bit;
    for (size_t i = 0; i < shapes.size(); ++i) {
      INFO(to_string(large) << " bits [0, " << end_bit << "), record " << i << (shapes[i].second ? " (record_fixed)" : " (record)"));
      REQUIRE(recorded[i].ok());
      const Layout& l = shapes[i].first;
      std::vector<uint64_t> from(l.elements);
      std::iota(from.begin(), from.end(), uint64_t(0));
      for (size_t seg = 0; seg < l.size(); ++seg) {
        const Keys part(runs[i].keys.begin() + l.begin[seg], runs[i].keys.begin() + l.end[seg]);
        const std::vector<uint64_t> order = host::stable_sort_order(part, sd);
        for (size_t j = 0; j < order.size(); ++j) from[l.begin[seg] + j] = l.begin[seg] + order[j];
      }
      const auto got_keys = test::download<uint32_t>(dev, runs[i].key_buffer, l.elements);
      const auto got_values = test::download<uint32_t>(dev, runs[i].value_buffer, l.elements);
      uint64_t wrong = 0;
      for (uint64_t j = 0; j < l.elements; ++j)
        wrong += got_keys[j] != uint32_t(runs[i].keys[from[j]]) || got_values[j] != uint32_t(from[j]) ? 1 : 0;
      CHECK(wrong == 0);
    }
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("record_indirect reads the segment count on the GPU and clamps it to max_segments",
          "[segmented_sort][indirect]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  const SegmentedSort probe = make_plan(dev, desc_of(DataType::u32, 1 << 16, 1024, 4));
  const Layout l = lay_out(edge_lengths(probe, 1, rng), {true, true, false}, rng);
  Rig rig(dev, desc_of(DataType::u32, l.elements, l.size(), 4));
  const Keys keys = test::keys_for(DataType::u32, l.elements, rng);
  CHECK(rig.check(keys, l, How::indirect_gpu));
  CHECK(rig.check(keys, l, How::indirect_upload, int64_t(l.size() / 2)));
  CHECK(rig.check(keys, l, How::indirect_upload, 0));
  CHECK(rig.check(keys, l, How::indirect_gpu, int64_t(l.size()) + 1000));  // clamped to max_segments
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("splatting: (tile, depth) pairs in power-law tiles, the tile count from a GPU buffer",
          "[segmented_sort][splat]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  // ~2^16 depths in 300 tiles (the segments), values the splat index; depths are positive floats.
  const std::vector<uint64_t> lengths = power_law_lengths(300, 8000, rng);
  const Layout l = lay_out(lengths, {}, rng);
  Rig rig(dev, desc_of(DataType::f32, std::max<uint64_t>(l.elements, 1), 512, 4));
  Keys depths(l.elements);
  std::uniform_real_distribution<float> depth(0.1f, 100.0f);
  for (auto& k : depths) {
    const float f = depth(rng);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    k = bits;
  }
  CHECK(rig.check(depths, l, How::indirect_gpu));
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("the shared-memory emulation sorts every size class", "[segmented_sort][no_subgroup_ops]") {
  Device& dev = test::device(test::no_subgroups());
  VKPRIM_TEST_RNG(rng);
  check_edges(dev, desc_of(DataType::u32, 1 << 16, 1024, 4), 1, rng);
  SegmentedSortDesc chained = desc_of(DataType::u32, 1 << 16, 1024, 4);
  chained.large_algorithm = SortAlgorithm::onesweep;
  if (test::has_features(dev, feature_memory_model, "the chained large passes")) check_edges(dev, chained, 1, rng);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

// The large segments by onesweep: chained digit passes within each segment (SegmentedSortDesc::large_algorithm).
SegmentedSortDesc chained_desc(DataType key, uint32_t value_size, SortOrder order = SortOrder::ascending) {
  SegmentedSortDesc d = desc_of(key, 1 << 16, 1024, value_size, order);
  d.large_algorithm = SortAlgorithm::onesweep;
  return d;
}

// Large segments of 2..40 tiles and one-tile ones, among the other classes.
std::vector<uint64_t> chained_lengths(const SegmentedSort& plan, std::mt19937_64& rng) {
  std::vector<uint64_t> lengths = edge_lengths(plan, 1, rng);
  const uint64_t tile = plan.large_tile_keys();
  for (uint64_t tiles : {2u, 3u, 7u, 40u}) lengths.push_back(tiles * tile - 1 + rng() % 3);
  std::shuffle(lengths.begin(), lengths.end(), rng);
  return lengths;
}

TEST_CASE("chained large passes (onesweep) sort keys and pairs of every width, and with forced fallback in "
          "ticket and launch order",
          "[segmented_sort][chained][fallback]") {
  for (const test::DeviceSetup& setup : {test::DeviceSetup{}, test::forced_fallback(3), test::launch_order(1),
                                         test::launch_order(4)}) {
    Device& dev = test::device(setup);
    if (!test::has_features(dev, feature_memory_model, "the chained large passes")) return;
    VKPRIM_TEST_RNG(rng);
    const SegmentedSort probe = make_plan(dev, chained_desc(DataType::u32, 4));
    REQUIRE(probe.large_algorithm() == SortAlgorithm::onesweep);
    const Layout l = lay_out(chained_lengths(probe, rng), {true, true, false}, rng);
    Rig pairs(dev, fitted(chained_desc(DataType::u32, 4), l));
    CHECK(pairs.check(test::keys_for(DataType::u32, l.elements, rng), l));
    CHECK(pairs.check(Keys(l.elements, 0x2468ACEu), l));  // all keys equal: stable
    CHECK(pairs.check(test::keys_for(DataType::u32, l.elements, rng), l, How::indirect_gpu));
    if (key_type_supported(dev, DataType::i64)) {
      SegmentedSortDesc w = fitted(chained_desc(DataType::i64, 8, SortOrder::descending), l);
      w.begin_bit = 28;
      w.end_bit = 45;  // three passes across the word boundary, then the copy back
      Rig wide(dev, w);
      CHECK(wide.check(test::keys_for(DataType::i64, l.elements, rng), l));
    }
    REQUIRE_NO_VALIDATION_MESSAGES(dev);
  }
}

TEST_CASE("chained large passes sort every size class, record_fixed at several tiles, and the automatic "
          "algorithm follows the policy",
          "[segmented_sort][chained]") {
  Device& dev = test::device();
  if (!test::has_features(dev, feature_memory_model, "the chained large passes")) return;
  VKPRIM_TEST_RNG(rng);
  check_edges(dev, chained_desc(DataType::f32, 0, SortOrder::descending), 1, rng);
  const SegmentedSort probe = make_plan(dev, chained_desc(DataType::u32, 0));
  const Layout l = lay_out(std::vector<uint64_t>(6, 5 * probe.large_tile_keys() + 1), {}, rng);  // end to end
  Rig rig(dev, fitted(chained_desc(DataType::u32, 0), l));
  CHECK(rig.check(test::keys_for(DataType::u32, l.elements, rng), l, How::fixed));
  // automatic: onesweep on GPUs with the memory model, reduce_then_scan on CPU drivers.
  const SegmentedSort automatic = make_plan(dev, desc_of(DataType::u32, 1 << 16, 1024));
  const bool cpu = dev.context().capabilities().device_type == VK_PHYSICAL_DEVICE_TYPE_CPU;
  CHECK(automatic.large_algorithm() == (cpu ? SortAlgorithm::reduce_then_scan : SortAlgorithm::onesweep));
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}


TEST_CASE("create refuses bad descriptions with a message naming the plan and the problem",
          "[segmented_sort][errors][host]") {
  Device& dev = test::device();
  std::vector<test::BadDesc<SegmentedSortDesc>> bad;
  auto add = [&](auto change, Status status, const char* says) {
    SegmentedSortDesc d = desc_of(DataType::u32, 1000, 10);
    change(d);
    bad.push_back({d, status, says});
  };
  add([](auto& d) { d.max_segments = 0; }, Status::invalid_argument, "max_segments 0");
  add([](auto& d) { d.max_count = 0; }, Status::invalid_argument, "max_count 0");
  add([](auto& d) { d.max_count = uint64_t(1) << 30; }, Status::invalid_argument, "max_count");
  add([](auto& d) { d.value_size = 12; }, Status::invalid_argument, "value_size 12");
  add([](auto& d) { d.end_bit = 33; }, Status::invalid_argument, "bits [0, 33)");
  add([](auto& d) { d.begin_bit = 8, d.end_bit = 8; }, Status::invalid_argument, "begin_bit < end_bit");
  add([](auto& d) { d.order = SortOrder(7); }, Status::invalid_argument, "unknown order");
  add([](auto& d) { d.key_type = DataType(99); }, Status::invalid_argument, "unknown key type");
  add([](auto& d) { d.tuning.workgroup_size = 384; }, Status::invalid_argument, "workgroup_size 384");
  add([](auto& d) { d.tuning.vectors_per_thread = 2; }, Status::invalid_argument, "vectors_per_thread");
  add([](auto& d) { d.block_tuning.workgroup_size = 128; }, Status::invalid_argument, "block_tuning.workgroup_size 128");
  add([](auto& d) { d.medium_tuning.items_per_thread = 17; }, Status::invalid_argument, "medium_tuning.items_per_thread 17");
  add([](auto& d) { d.thresholds = {64, 8}; }, Status::invalid_argument, "medium_max 8");
  add([](auto& d) { d.thresholds = {100000, 0}; }, Status::invalid_argument, "small_max 100000");
  add([](auto& d) { d.key_type = DataType::u16; }, Status::unsupported, "u16 keys are not supported");
  add([](auto& d) { d.large_algorithm = SortAlgorithm(9); }, Status::invalid_argument, "unknown large_algorithm 9");
  test::check_create_refused(bad, "SegmentedSort",
                            [&](const SegmentedSortDesc& d) { return SegmentedSort::create(dev.context(), d); });
  Device& plain = test::device_without(feature_memory_model);
  SegmentedSortDesc chained = desc_of(DataType::u32, 1u << 16, 10);
  chained.large_algorithm = SortAlgorithm::onesweep;
  const auto no_model = SegmentedSort::create(plain.context(), chained);
  REQUIRE(!no_model);
  CHECK(no_model.status() == Status::unsupported);
  CHECK(no_model.error().message.find("vulkanMemoryModel") != std::string::npos);
  Device& small_range = test::device(test::small_windows());  // 64 KiB bindings
  if (small_range.context().capabilities().has(feature_memory_model) &&
      key_type_supported(small_range, DataType::u64)) {
    // 4096 u64 keys: reduce_then_scan's lists fit one binding, onesweep's per-tile counts of eight digit passes
    // do not: refused, with the binding named (automatic takes reduce_then_scan there).
    SegmentedSortDesc wide = desc_of(DataType::u64, 4096, 4);
    wide.large_algorithm = SortAlgorithm::reduce_then_scan;
    const auto fits = SegmentedSort::create(small_range.context(), wide);
    INFO((fits ? std::string("ok") : fits.error().message));
    CHECK(fits.ok());
    wide.large_algorithm = SortAlgorithm::onesweep;
    const auto past = SegmentedSort::create(small_range.context(), wide);
    REQUIRE(!past);
    CHECK(past.status() == Status::unsupported);
    CHECK(past.error().message.find("storage-buffer binding") != std::string::npos);
  }
  chained.large_algorithm = SortAlgorithm::automatic;
  const auto fallback = SegmentedSort::create(plain.context(), chained);
  REQUIRE(fallback.ok());
  CHECK(fallback.value().large_algorithm() == SortAlgorithm::reduce_then_scan);
  Device& small = test::device(test::small_windows());
  const auto r = SegmentedSort::create(small.context(), desc_of(DataType::u32, 1u << 20, 10));
  REQUIRE(!r);
  CHECK(r.status() == Status::unsupported);
  CHECK(r.error().message.find("storage-buffer binding") != std::string::npos);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("records refuse bad counts, ranges and overlaps and record nothing", "[segmented_sort][errors][host]") {
  constexpr const char* kRecord = "SegmentedSort::record";
  Device& dev = test::device();
  const SegmentedSort plan = make_plan(dev, desc_of(DataType::u32, 1000, 16, 4));
  const VkDeviceSize scratch_bytes = plan.scratch_requirements().size;
  Buffer k = test::make_buffer(dev, 4096), v = test::make_buffer(dev, 4096), offsets = test::make_buffer(dev, 256);
  Buffer scratch = test::make_buffer(dev, scratch_bytes + 256), count = test::make_buffer(dev, 16);
  const BufferRange keys = k.range(0, 4000), values = v.range(0, 4000), begin = offsets.range(0, 64);
  const BufferRange end = offsets.range(4, 64), work = scratch.range(0, scratch_bytes);
  test::check_refused(dev, k, kRecord, "segments 17 exceeds max_segments 16", [&](VkCommandBuffer cmd) {
    return plan.record(cmd, keys, values, offsets.range(0, 68), offsets.range(4, 68), 17, work);
  });
  test::check_refused(dev, k, kRecord, "keys and values ranges overlap", [&](VkCommandBuffer cmd) {
    return plan.record(cmd, keys, k.range(0, 4000), begin, end, 16, work);
  });
  test::check_refused(dev, k, kRecord, "values range holds", [&](VkCommandBuffer cmd) {
    return plan.record(cmd, keys, v.range(0, 400), begin, end, 16, work);
  });
  test::check_refused(dev, k, kRecord, "keys and scratch ranges overlap", [&](VkCommandBuffer cmd) {
    return plan.record(cmd, scratch.range(0, 4000), values, begin, end, 16, work);
  });
  test::check_refused(dev, k, kRecord, "scratch and begin offsets ranges overlap", [&](VkCommandBuffer cmd) {
    return plan.record(cmd, keys, values, scratch.range(0, 64), end, 16, work);
  });
  test::check_refused(dev, k, kRecord, "end offsets range holds 60 bytes",
                [&](VkCommandBuffer cmd) { return plan.record(cmd, keys, values, begin, offsets.range(4, 60), 16, work); });
  test::check_refused(dev, k, kRecord, "keys offset 2",
                [&](VkCommandBuffer cmd) { return plan.record(cmd, k.range(2, 400), values, begin, end, 16, work); });
  test::check_refused(dev, k, kRecord, "scratch range holds", [&](VkCommandBuffer cmd) {
    return plan.record(cmd, keys, values, begin, end, 16, scratch.range(0, scratch_bytes - 16));
  });
  test::check_refused(dev, k, kRecord, "16 segments of 63 keys exceed max_count 1000",
                [&](VkCommandBuffer cmd) { return plan.record_fixed(cmd, keys, values, 63, 16, work); });
  test::check_refused(dev, k, kRecord, "keys range holds 400 bytes",
                [&](VkCommandBuffer cmd) { return plan.record_fixed(cmd, k.range(0, 400), values, 10, 16, work); });
  test::check_refused(dev, k, kRecord, "count buffer offset 2", [&](VkCommandBuffer cmd) {
    return plan.record_indirect(cmd, keys, values, begin, end, count.range(2, 4), work);
  });
  test::check_refused(dev, k, kRecord, "the segment count overlaps", [&](VkCommandBuffer cmd) {
    return plan.record_indirect(cmd, keys, values, begin, end, scratch.range(0, 4), work);
  });
  test::check_refused(dev, k, kRecord, "command buffer is VK_NULL_HANDLE", [&](VkCommandBuffer) {
    return plan.record(VK_NULL_HANDLE, keys, values, begin, end, 16, work);
  });
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}
