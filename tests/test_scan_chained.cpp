// Single-pass chained scans (chained_lookback, chained_fallback; issue 4, "Proving it"): every size from one
// tile to two, every kind x type x op at edge and random sizes, 2^20+1, forced fallback (the test knob
// detail::Testing::skip_publication_period with spin limit 0) with the statistics counters in scratch,
// storage-range windows (the carry crosses windows), workgroup grids spilled into y/z (the ticket keeps
// tile order), in place, the no-subgroup path, push descriptors off, and a context without the Vulkan
// memory model. tests/CMakeLists.txt runs the whole binary again under LP_NUM_THREADS=1, 2 and 8.
#include <array>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "host_scan.hpp"
#include "scan_rig.hpp"
#include "test_support.hpp"
#include "vkprim/scan.hpp"

using namespace vkprim;
using test::make_scan;
using test::make_scratch;
using test::no_subgroups;
using test::small_windows;

namespace {

constexpr uint64_t kWorkgroup = 256;  // invocations per chained tile
constexpr uint64_t kRows = 4;         // 16-byte vectors per invocation

// The tile-boundary and statistics cases need a known tile: pin 256 x 4 vectors, the default everywhere
// but on NVIDIA's driver (where integer scans take 8 vectors; vkprim verify and the bench check that shape).
ScanDesc pinned(ScanDesc d) {
  d.tuning.workgroup_size = uint32_t(kWorkgroup);
  d.tuning.vectors_per_thread = uint32_t(kRows);
  return d;
}
constexpr uint64_t kLargeCount = (uint64_t(1) << 20) + 1;

constexpr std::array<ScanAlgorithm, 2> kChained = {ScanAlgorithm::chained_lookback, ScanAlgorithm::chained_fallback};
constexpr std::array<ScanKind, 2> kKinds = {ScanKind::inclusive, ScanKind::exclusive};

// chained_lookback needs forward progress between workgroups; lavapipe does not give it (its loops stop
// after 65535 iterations), so Scan::create refuses it there and these tests skip it.
bool lookback_refused(const Device& dev, ScanAlgorithm a) {
  if (a != ScanAlgorithm::chained_lookback) return false;
  if (dev.context().capabilities().driver_id != VK_DRIVER_ID_MESA_LLVMPIPE) return false;
  auto plan = Scan::create(const_cast<Device&>(dev).context(), pinned(ScanDesc{DataType::u32, Op::add, ScanKind::inclusive, 64, a}));
  CHECK(plan.status() == Status::unsupported);
  if (!plan.ok()) CHECK(plan.error().message.find("forward progress") != std::string::npos);
  test::skip("chained_lookback is refused on lavapipe (no forward progress)");
  return true;
}

std::vector<ScanAlgorithm> chained_algorithms(const Device& dev) {
  std::vector<ScanAlgorithm> out;
  for (ScanAlgorithm a : kChained)
    if (!lookback_refused(dev, a)) out.push_back(a);
  return out;
}

// 4096 elements of 32-bit types, 2048 of 64-bit ones.
uint64_t tile_of(DataType type) { return kWorkgroup * kRows * (16 / size_of(type)); }



// The four counters the last window's dispatch left in scratch.
struct Statistics {
  uint32_t tiles = 0, fallbacks = 0, steps = 0, depth = 0;
};

Statistics read_statistics(const Device& dev, const Scan& plan, const Buffer& scratch) {
  const auto words = test::download<uint32_t>(dev, scratch, 4, plan.statistics_offset());
  return {words[0], words[1], words[2], words[3]};
}

std::string describe(const Statistics& s) {
  return "tiles started " + std::to_string(s.tiles) + ", fallbacks " + std::to_string(s.fallbacks) +
         ", look-back steps " + std::to_string(s.steps) + ", deepest look-back " + std::to_string(s.depth);
}

// Tiles 1..tiles-2 with tile % period == period - 1 skip their publication and have a successor: under
// chained_fallback each must be reduced by a successor at least once, whatever the scheduler does (with
// LP_NUM_THREADS=1 lavapipe runs workgroups one after another, so only a tile that never publishes makes
// its successor fall back).
uint64_t skipped_with_successor(uint64_t tiles, uint32_t period) {
  uint64_t skipped = 0;
  for (uint64_t t = 1; t + 1 < tiles; ++t) skipped += period != 0 && t % period == period - 1;
  return skipped;
}

// The shared scan rig (support/scan_rig.hpp) and the statistics of its last record.
template <class T>
using ChainRig = test::ScanRig<T>;

template <class T>
Statistics statistics_of(const ChainRig<T>& rig) {
  return read_statistics(rig.device(), rig.plan(), rig.scratch());
}

// Every `stride`-th size from one tile to two tiles of u32 add, and two tiles, batched: one plan, one upload
// of random data, many records per command buffer (test::check_u32_prefixes).
void check_every_size(Device& dev, ScanAlgorithm algorithm, ScanKind kind, uint64_t stride, std::mt19937_64& rng) {
  if (lookback_refused(dev, algorithm)) return;
  const uint64_t tile = tile_of(DataType::u32);
  const uint64_t max_n = 2 * tile;
  const Scan plan = make_scan(dev.context(), pinned(ScanDesc{DataType::u32, Op::add, kind, max_n, algorithm}));
  REQUIRE(plan.algorithm() == algorithm);
  std::vector<uint64_t> sizes;
  for (uint64_t n = tile; n <= max_n; n += stride) sizes.push_back(n);
  if (sizes.back() != max_n) sizes.push_back(max_n);
  test::check_u32_prefixes(dev, plan, sizes, rng);
}

// Edge sizes: subgroup-ish small counts, workgroup +-1, tile +-1, several tiles with a remainder, and a
// random size (checked with unaligned input and output offsets).
std::vector<uint64_t> edge_sizes(DataType type, std::mt19937_64& rng) {
  const uint64_t tile = tile_of(type);
  std::vector<uint64_t> sizes = {1, 2, 7, 8, 9, 255, 256, 257, tile - 1, tile, tile + 1, 3 * tile + 5};
  sizes.push_back(std::uniform_int_distribution<uint64_t>(3, 4 * tile)(rng));
  return sizes;
}

template <class T>
void check_matrix_typed(Device& dev, ScanAlgorithm algorithm, DataType type, std::mt19937_64& rng) {
  for (ScanKind kind : kKinds) {
    for (Op op : test::ops_for(type)) {
      const auto sizes = edge_sizes(type, rng);
      const uint64_t max_n = *std::max_element(sizes.begin(), sizes.end());
      ChainRig<T> rig(dev, pinned(ScanDesc{type, op, kind, max_n, algorithm}));
      CHECK(rig.plan().algorithm() == algorithm);
      CHECK(rig.plan().dispatch_count(max_n) == 1);  // one pass, one window
      CHECK(rig.check({}));                          // count 0 writes nothing
      for (size_t i = 0; i < sizes.size(); ++i) {
        const bool shifted = i + 1 == sizes.size();
        CHECK(rig.check(test::random_values<T>(sizes[i], rng), shifted ? 1 : 0, shifted ? 3 : 0));
      }
      const Statistics s = statistics_of(rig);
      INFO(describe(s));
      CHECK(s.tiles == (sizes.back() + tile_of(type) - 1) / tile_of(type));
      if (algorithm == ScanAlgorithm::chained_lookback) CHECK(s.fallbacks == 0);
    }
  }
}

void check_matrix(ScanAlgorithm algorithm, DataType type, const ContextOptions& options = {}) {
  Device& dev = test::device(options);
  if (lookback_refused(dev, algorithm)) return;
  if (!test::type_supported(dev.context(), type)) {
    test::skip(std::string(to_string(type)) + " is not supported by this device");
    return;
  }
  VKPRIM_TEST_RNG(rng);
  host::with_type(type, [&](auto t) { check_matrix_typed<decltype(t)>(dev, algorithm, type, rng); });
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

test::DeviceSetup forced(uint32_t spin_limit, uint32_t period) {
  test::DeviceSetup s = test::forced_fallback(period, spin_limit);
  s.options.collect_statistics = true;  // the forced cases check the look-back steps and depth too
  return s;
}

}  // namespace

TEST_CASE("chained_lookback and chained_fallback u32 add inclusive match the CPU at every size from one tile to two",
          "[chained][every_size]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  for (ScanAlgorithm a : chained_algorithms(dev)) check_every_size(dev, a, ScanKind::inclusive, 1, rng);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("chained_lookback and chained_fallback u32 add exclusive match the CPU at every 7th size from one tile to two",
          "[chained][every_size]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  for (ScanAlgorithm a : chained_algorithms(dev)) check_every_size(dev, a, ScanKind::exclusive, 7, rng);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

#define VKPRIM_CHAINED_MATRIX_CASE(ALG, TYPE)                                                            \
  TEST_CASE(#ALG " scan of " #TYPE " matches the CPU for both kinds and every op at edge and random sizes", \
            "[chained][matrix][" #ALG "][" #TYPE "]") {                                                  \
    check_matrix(ScanAlgorithm::ALG, DataType::TYPE);                                                    \
  }
#define VKPRIM_CHAINED_MATRIX_ALGORITHM(ALG) \
  VKPRIM_CHAINED_MATRIX_CASE(ALG, u32)       \
  VKPRIM_CHAINED_MATRIX_CASE(ALG, i32)       \
  VKPRIM_CHAINED_MATRIX_CASE(ALG, f32)       \
  VKPRIM_CHAINED_MATRIX_CASE(ALG, u64)       \
  VKPRIM_CHAINED_MATRIX_CASE(ALG, i64)       \
  VKPRIM_CHAINED_MATRIX_CASE(ALG, f64)

VKPRIM_CHAINED_MATRIX_ALGORITHM(chained_lookback)
VKPRIM_CHAINED_MATRIX_ALGORITHM(chained_fallback)

#define VKPRIM_CHAINED_NOSG_CASE(ALG, TYPE)                                                 \
  TEST_CASE(#ALG " scan of " #TYPE " matches the CPU on the no-subgroup path",              \
            "[chained][no_subgroups][no_subgroup_ops][" #ALG "][" #TYPE "]") {              \
    check_matrix(ScanAlgorithm::ALG, DataType::TYPE, no_subgroups());                      \
  }
#define VKPRIM_CHAINED_NOSG_ALGORITHM(ALG) \
  VKPRIM_CHAINED_NOSG_CASE(ALG, u32)       \
  VKPRIM_CHAINED_NOSG_CASE(ALG, i32)       \
  VKPRIM_CHAINED_NOSG_CASE(ALG, f32)       \
  VKPRIM_CHAINED_NOSG_CASE(ALG, u64)       \
  VKPRIM_CHAINED_NOSG_CASE(ALG, i64)       \
  VKPRIM_CHAINED_NOSG_CASE(ALG, f64)

VKPRIM_CHAINED_NOSG_ALGORITHM(chained_lookback)
VKPRIM_CHAINED_NOSG_ALGORITHM(chained_fallback)

TEST_CASE("automatic scan resolves to chained_fallback where the memory model is enabled and matches the CPU",
          "[chained][automatic]") {
  Device& dev = test::device();
  // Without the memory model automatic is reduce_then_scan (covered by test_scan).
  if (!test::has_features(dev, feature_memory_model, "automatic as chained_fallback (the Vulkan memory model)")) return;
  VKPRIM_TEST_RNG(rng);
  for (ScanKind kind : kKinds) {
    ChainRig<uint32_t> rig(dev, pinned(ScanDesc{DataType::u32, Op::add, kind, 20000, ScanAlgorithm::automatic}));
    CHECK(rig.plan().algorithm() == ScanAlgorithm::chained_fallback);
    for (uint64_t n : {1ull, 4097ull, 20000ull}) CHECK(rig.check(test::random_values<uint32_t>(n, rng)));
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

namespace {

template <class T>
void check_large(Device& dev, DataType type, Op op, ScanKind kind, ScanAlgorithm a, std::mt19937_64& rng) {
  if (lookback_refused(dev, a)) return;
  ChainRig<T> rig(dev, pinned(ScanDesc{type, op, kind, kLargeCount, a}));
  CHECK(rig.check(test::random_values<T>(kLargeCount, rng), 1, 2));
  const Statistics s = statistics_of(rig);
  INFO(to_string(a) << " " << describe(s));
  CHECK(s.tiles == (kLargeCount + tile_of(type) - 1) / tile_of(type));
  if (a == ScanAlgorithm::chained_lookback) CHECK(s.fallbacks == 0);
}

}  // namespace

TEST_CASE("chained scans of 2^20+1 elements match the CPU (u32 add, f32 add, i64 max, f64 add)", "[chained][large]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  for (ScanAlgorithm a : chained_algorithms(dev)) {
    for (ScanKind kind : kKinds) check_large<uint32_t>(dev, DataType::u32, Op::add, kind, a, rng);
    check_large<float>(dev, DataType::f32, Op::add, ScanKind::inclusive, a, rng);
  }
  if (test::type_supported(dev.context(), DataType::i64))
    check_large<int64_t>(dev, DataType::i64, Op::max, ScanKind::exclusive, ScanAlgorithm::chained_fallback, rng);
  if (test::type_supported(dev.context(), DataType::f64))
    check_large<double>(dev, DataType::f64, Op::add, ScanKind::inclusive, ScanAlgorithm::chained_lookback, rng);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("chained float add stays within the documented bound with a meaningful depth", "[chained][float]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  std::vector<float> positive(kLargeCount);
  std::uniform_real_distribution<float> dist(0.5f, 1.0f);
  for (auto& x : positive) x = dist(rng);
  for (ScanAlgorithm a : chained_algorithms(dev))
    for (ScanKind kind : kKinds) {
      ChainRig<float> rig(dev, pinned(ScanDesc{DataType::f32, Op::add, kind, kLargeCount, a}));
      const uint64_t depth = rig.plan().float_add_depth(kLargeCount);
      INFO(to_string(a) << " float_add_depth(2^20+1) = " << depth);
      // Far below n, so the bound still says something (wider subgroups chain a few more per lane).
      CHECK(depth < 400 + 4 * dev.context().capabilities().max_subgroup_size);
      CHECK(rig.check(positive));
    }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

namespace {

// Values just below 2^bits: every pair overflows, so each prefix is right only modulo 2^bits.
template <class T>
void check_wraparound(Device& dev, DataType type, std::mt19937_64& rng) {
  using U = std::make_unsigned_t<T>;
  for (ScanAlgorithm a : chained_algorithms(dev))
    for (ScanKind kind : kKinds) {
      ChainRig<T> rig(dev, pinned(ScanDesc{type, Op::add, kind, 20000, a}));
      for (uint64_t n : {2ull, 4099ull, 20000ull}) {
        std::vector<T> data(n);
        for (auto& x : data) x = T(std::numeric_limits<U>::max() - U(rng() % 1000));
        CHECK(rig.check(data));
      }
    }
}

// A forced-fallback run: `tiles` tiles plus a remainder tile, with the device's skip period and spin limit;
// `window_tiles` > 0 when the device's storage-range limit splits the count into windows of that many tiles.
// The statistics are those of the last window's dispatch.
template <class T>
void check_forced(Device& dev, DataType type, Op op, ScanKind kind, ScanAlgorithm a, uint64_t tiles,
                  std::mt19937_64& rng, uint64_t window_tiles = 0, uint32_t lookback_windows = 0) {
  if (lookback_refused(dev, a)) return;
  const uint64_t n = tiles * tile_of(type) + 5;
  ScanDesc desc = pinned(ScanDesc{type, op, kind, n, a});
  desc.tuning.lookback_windows = lookback_windows;
  ChainRig<T> rig(dev, desc);
  CHECK(rig.check(test::random_values<T>(n, rng), 1, 0));
  const uint64_t windows = rig.plan().dispatch_count(n);
  const uint64_t last = window_tiles ? tiles + 1 - (windows - 1) * window_tiles : tiles + 1;
  if (window_tiles == 0) CHECK(windows == 1);
  const Statistics s = statistics_of(rig);
  INFO(to_string(a) << " " << to_string(kind) << " " << to_string(type) << " " << to_string(op) << " n=" << n
                    << " look-back windows " << lookback_windows << " (" << windows << " windows, " << last
                    << " tiles in the last) spin limit "
                    << dev.context().options().fallback_spin_limit << ", skip period "
                    << dev.context().testing().skip_publication_period << ": " << describe(s));
  CHECK(s.tiles == last);
  CHECK(s.depth <= last - 1);
  CHECK(s.steps >= last - 1);  // every tile but the first looks back at least one step
  if (a == ScanAlgorithm::chained_lookback) CHECK(s.fallbacks == 0);
  if (a == ScanAlgorithm::chained_fallback) {
    const uint64_t skipped = skipped_with_successor(last, dev.context().testing().skip_publication_period);
    INFO(skipped << " tiles of the last window skip their publication and have a successor");
    if (skipped > 0) CHECK(s.fallbacks > 0);
    CHECK(s.fallbacks >= skipped);
  }
  // Each fallback follows at least one not-ready poll, which counts as a look-back step.
  CHECK(s.fallbacks <= s.steps);
}

}  // namespace

TEST_CASE("with collect_statistics off the chained scan leaves the step and depth counters at zero, still counts "
          "fallbacks and matches the CPU",
          "[chained][statistics]") {
  test::DeviceSetup setup = forced(0, 3);
  setup.options.collect_statistics = false;
  Device& dev = test::device(setup);
  VKPRIM_TEST_RNG(rng);
  const uint64_t n = 9 * tile_of(DataType::u32) + 5;
  ChainRig<uint32_t> rig(dev, pinned(ScanDesc{DataType::u32, Op::add, ScanKind::inclusive, n, ScanAlgorithm::chained_fallback}));
  CHECK(rig.check(test::random_values<uint32_t>(n, rng), 1, 0));
  const Statistics s = statistics_of(rig);
  INFO(describe(s));
  CHECK(s.tiles == 10);
  CHECK(s.steps == 0);
  CHECK(s.depth == 0);
  CHECK(s.fallbacks >= skipped_with_successor(10, 3));
  CHECK(s.fallbacks > 0);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("integer add wraps modulo 2^bits in the chained scans", "[chained][wraparound]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  check_wraparound<uint32_t>(dev, DataType::u32, rng);
  if (test::type_supported(dev.context(), DataType::i64)) check_wraparound<int64_t>(dev, DataType::i64, rng);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("chained_fallback with spin limit 0 and every k-th tile skipping its publication falls back, terminates and "
          "matches the CPU",
          "[chained][fallback]") {
  VKPRIM_TEST_RNG(rng);
  for (uint32_t period : {1u, 2u, 3u, 7u}) {
    Device& dev = test::device(forced(0, period));
    REQUIRE(dev.context().testing().skip_publication_period == period);
    REQUIRE(dev.context().options().fallback_spin_limit == 0);
    INFO("skip period " << period);
    check_forced<uint32_t>(dev, DataType::u32, Op::add, ScanKind::inclusive, ScanAlgorithm::chained_fallback, 64, rng);
    check_forced<float>(dev, DataType::f32, Op::max, ScanKind::exclusive, ScanAlgorithm::chained_fallback, 24, rng);
    if (test::type_supported(dev.context(), DataType::i64))
      check_forced<int64_t>(dev, DataType::i64, Op::add, ScanKind::exclusive, ScanAlgorithm::chained_fallback, 24, rng);
    if (test::type_supported(dev.context(), DataType::f64))
      check_forced<double>(dev, DataType::f64, Op::min, ScanKind::inclusive, ScanAlgorithm::chained_fallback, 24, rng);
    REQUIRE_NO_VALIDATION_MESSAGES(dev);
  }
  // The default spin limit with half the tiles skipping stays correct too.
  Device& dev = test::device(forced(64, 2));
  check_forced<uint32_t>(dev, DataType::u32, Op::add, ScanKind::exclusive, ScanAlgorithm::chained_fallback, 40, rng);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

// llvmpipe ends every loop after 65535 iterations and falls through with its state undefined. A spin
// limit at or past that, with tiles that never publish, would leave the look-back to that cut (seen: a
// wrong count); the context keeps lavapipe's limit below it (ContextImpl::spin_limit), so the tiles fall
// back instead.
TEST_CASE("chained_fallback asked for a spin limit past lavapipe's loop cut (65535 iterations), with tiles "
          "that never publish, falls back and matches the CPU",
          "[chained][fallback][loop_limit]") {
  Device& dev = test::device(forced(0xFFFFFFFFu, 3));
  if (dev.context().capabilities().driver_id != VK_DRIVER_ID_MESA_LLVMPIPE) {
    test::skip("only lavapipe cuts loops short; elsewhere this would wait for ever");
    return;
  }
  VKPRIM_TEST_RNG(rng);
  check_forced<uint32_t>(dev, DataType::u32, Op::add, ScanKind::inclusive, ScanAlgorithm::chained_fallback, 7, rng);
  check_forced<float>(dev, DataType::f32, Op::add, ScanKind::exclusive, ScanAlgorithm::chained_fallback, 7, rng);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("chained_fallback with tiles taken in launch order (workgroup index, no ticket) matches the CPU, also with "
          "forced fallback",
          "[chained][fallback][tile_order]") {
  VKPRIM_TEST_RNG(rng);
  for (uint32_t period : {0u, 3u}) {
    test::DeviceSetup o = test::launch_order(period);
    o.options.collect_statistics = true;  // as in forced(): check_forced checks the look-back steps and depth
    Device& dev = test::device(o);
    INFO("skip period " << period);
    check_forced<uint32_t>(dev, DataType::u32, Op::add, ScanKind::inclusive, ScanAlgorithm::chained_fallback, 40, rng);
    check_forced<float>(dev, DataType::f32, Op::max, ScanKind::exclusive, ScanAlgorithm::chained_fallback, 12, rng);
    if (test::type_supported(dev.context(), DataType::i64))
      check_forced<int64_t>(dev, DataType::i64, Op::add, ScanKind::exclusive, ScanAlgorithm::chained_fallback, 12, rng);
    REQUIRE_NO_VALIDATION_MESSAGES(dev);
  }
}

TEST_CASE("chained scans loading 2, 3 or 8 look-back windows per step match the CPU, also with forced fallback",
          "[chained][fallback][tuning]") {
  // Blocked and inclusive states then fall inside any window of a step, not only the first.
  VKPRIM_TEST_RNG(rng);
  for (uint32_t windows : {2u, 3u, 8u}) {
    INFO("look-back windows " << windows);
    Device& dev = test::device();
    for (ScanAlgorithm a : chained_algorithms(dev)) {
      ScanDesc desc = pinned(ScanDesc{DataType::u32, Op::add, ScanKind::inclusive, 300 * tile_of(DataType::u32) + 5, a});
      desc.tuning.lookback_windows = windows;
      ChainRig<uint32_t> rig(dev, desc);
      CHECK(rig.check(test::random_values<uint32_t>(desc.max_count, rng), 1, 0));
    }
    for (uint32_t period : {2u, 3u}) {
      Device& forced_dev = test::device(forced(0, period));
      check_forced<uint32_t>(forced_dev, DataType::u32, Op::add, ScanKind::exclusive, ScanAlgorithm::chained_fallback,
                             100, rng, 0, windows);
      check_forced<float>(forced_dev, DataType::f32, Op::max, ScanKind::inclusive, ScanAlgorithm::chained_fallback, 40,
                          rng, 0, windows);
      REQUIRE_NO_VALIDATION_MESSAGES(forced_dev);
    }
    REQUIRE_NO_VALIDATION_MESSAGES(dev);
  }
  // Outside 1..8 the override is invalid_argument.
  ScanDesc desc{DataType::u32, Op::add, ScanKind::inclusive, 1000, ScanAlgorithm::chained_fallback};
  desc.tuning.lookback_windows = 9;
  auto plan = Scan::create(test::device().context(), desc);
  CHECK(plan.status() == Status::invalid_argument);
  if (!plan.ok()) CHECK(plan.error().message.find("tuning.lookback_windows") != std::string::npos);
}

TEST_CASE("chained_fallback with forced fallback on the no-subgroup path matches the CPU", "[chained][fallback][no_subgroups][no_subgroup_ops]") {
  VKPRIM_TEST_RNG(rng);
  test::DeviceSetup o = forced(0, 2);
  o.options.force_no_subgroups = true;
  Device& dev = test::device(o);
  check_forced<uint32_t>(dev, DataType::u32, Op::add, ScanKind::inclusive, ScanAlgorithm::chained_fallback, 32, rng);
  if (test::type_supported(dev.context(), DataType::u64))
    check_forced<uint64_t>(dev, DataType::u64, Op::bit_xor, ScanKind::exclusive, ScanAlgorithm::chained_fallback, 16, rng);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("chained_lookback with every k-th tile skipping its aggregate waits for the inclusive prefix and matches the "
          "CPU",
          "[chained][fallback][lookback]") {
  VKPRIM_TEST_RNG(rng);
  for (uint32_t period : {2u, 3u}) {
    Device& dev = test::device(forced(64, period));
    INFO("skip period " << period);
    check_forced<uint32_t>(dev, DataType::u32, Op::add, ScanKind::inclusive, ScanAlgorithm::chained_lookback, 40, rng);
    check_forced<int32_t>(dev, DataType::i32, Op::min, ScanKind::exclusive, ScanAlgorithm::chained_lookback, 16, rng);
    if (test::type_supported(dev.context(), DataType::f64))
      check_forced<double>(dev, DataType::f64, Op::add, ScanKind::exclusive, ScanAlgorithm::chained_lookback, 16, rng);
    REQUIRE_NO_VALIDATION_MESSAGES(dev);
  }
}

namespace {

// A 64 KiB storage-range limit: windows of 3 tiles (12288 32-bit or 6144 64-bit elements), so these sizes
// span one to a dozen windows with odd remainders; one of them also runs in place (chained_lookback).
template <class T>
void check_windows(Device& dev, DataType type, Op op, std::mt19937_64& rng) {
  const uint64_t tile = tile_of(type);
  const uint64_t window = 3 * tile;
  const std::vector<uint64_t> sizes = {window - 1, window + 1, 2 * window + tile + 3, 4 * window + 77,
                                       12 * window + 2 * tile + 1};
  for (ScanAlgorithm a : chained_algorithms(dev))
    for (ScanKind kind : kKinds) {
      ChainRig<T> rig(dev, pinned(ScanDesc{type, op, kind, sizes.back(), a}));
      for (size_t i = 0; i < sizes.size(); ++i) {
        const bool in_place = i == 2 && a == ScanAlgorithm::chained_lookback;
        const uint64_t n = sizes[i];
        CHECK(rig.check(test::random_values<T>(n, rng), i % 2, in_place ? 0 : (i % 3), in_place));
        const uint64_t windows = (n + window - 1) / window;
        CHECK(rig.plan().dispatch_count(n) == windows);
        // The counters are the last window's.
        const Statistics s = statistics_of(rig);
        INFO(to_string(a) << " n=" << n << ": " << describe(s));
        CHECK(s.tiles == (n - (windows - 1) * window + tile - 1) / tile);
      }
    }
}

}  // namespace

TEST_CASE("chained scans carry the running total across storage-range windows (u32 add, f32 add)", "[chained][windows][host]") {
  Device& dev = test::device(small_windows());
  VKPRIM_TEST_RNG(rng);
  check_windows<uint32_t>(dev, DataType::u32, Op::add, rng);
  check_windows<float>(dev, DataType::f32, Op::add, rng);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("chained scans carry the running total across storage-range windows (64-bit types, bitwise)",
          "[chained][windows][host]") {
  Device& dev = test::device(small_windows());
  VKPRIM_TEST_RNG(rng);
  check_windows<int32_t>(dev, DataType::i32, Op::bit_xor, rng);
  if (!test::type_supported(dev.context(), DataType::i64) || !test::type_supported(dev.context(), DataType::f64)) {
    test::skip("64-bit types are not supported by this device");
    return;
  }
  check_windows<int64_t>(dev, DataType::i64, Op::max, rng);
  check_windows<double>(dev, DataType::f64, Op::add, rng);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("chained_fallback with forced fallback carries the running total across storage-range windows",
          "[chained][windows][fallback]") {
  VKPRIM_TEST_RNG(rng);
  for (uint32_t period : {1u, 2u}) {
    test::DeviceSetup o = small_windows();
    o.options.fallback_spin_limit = 0;
    o.testing.skip_publication_period = period;
    o.options.collect_statistics = true;
    Device& dev = test::device(o);
    INFO("skip period " << period);
    // Windows of 3 tiles; 9 full windows, then one of 3 tiles (the statistics are the last window's).
    check_forced<uint32_t>(dev, DataType::u32, Op::add, ScanKind::exclusive, ScanAlgorithm::chained_fallback, 29, rng,
                           3);
    if (test::type_supported(dev.context(), DataType::f64))
      check_forced<double>(dev, DataType::f64, Op::add, ScanKind::inclusive, ScanAlgorithm::chained_fallback, 29, rng,
                           3);
    REQUIRE_NO_VALIDATION_MESSAGES(dev);
  }
}

TEST_CASE("chained scans over a grid spilled into y and z keep the tile order (about 100 tiles, 7 per dimension)",
          "[chained][dispatch][host]") {
  test::DeviceSetup setup;
  setup.testing.max_workgroups_per_dimension = 7;  // x, y, z <= 7: 50..343 workgroups need z
  Device& dev = test::device(setup);
  VKPRIM_TEST_RNG(rng);
  for (ScanAlgorithm a : chained_algorithms(dev))
    for (ScanKind kind : kKinds) {
      const uint64_t tiles = 100;
      const uint64_t n = (tiles - 1) * tile_of(DataType::u32) + 5;
      ChainRig<uint32_t> rig(dev, pinned(ScanDesc{DataType::u32, Op::add, kind, n, a}));
      CHECK(rig.check(test::random_values<uint32_t>(n, rng), 0, 1));
      const Statistics s = statistics_of(rig);
      INFO(to_string(a) << " " << to_string(kind) << ": " << describe(s));
      CHECK(s.tiles == tiles);  // the grid is padded to 7 x 7 x 3; the extra workgroups take no ticket
    }
  // The same with forced fallback: tiles reduce predecessors wherever the spilled grid placed them.
  setup.options.fallback_spin_limit = 0;
  setup.testing.skip_publication_period = 2;
  Device& forced_dev = test::device(setup);
  const uint64_t n = 99 * tile_of(DataType::i64) + 5;
  if (test::type_supported(forced_dev.context(), DataType::i64)) {
    ChainRig<int64_t> rig(forced_dev, pinned(ScanDesc{DataType::i64, Op::add, ScanKind::exclusive, n, ScanAlgorithm::chained_fallback}));
    CHECK(rig.check(test::random_values<int64_t>(n, rng), 1, 0));
    const Statistics s = statistics_of(rig);
    INFO("forced fallback over the spilled grid: " << describe(s));
    CHECK(s.tiles == 100);
    CHECK(s.fallbacks >= skipped_with_successor(100, 2));
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
  REQUIRE_NO_VALIDATION_MESSAGES(forced_dev);
}

namespace {

template <class T>
void check_in_place(Device& dev, DataType type, Op op, std::mt19937_64& rng) {
  if (lookback_refused(dev, ScanAlgorithm::chained_lookback)) return;
  const uint64_t tile = tile_of(type);
  for (ScanKind kind : kKinds) {
    ChainRig<T> rig(dev, pinned(ScanDesc{type, op, kind, 5 * tile + 5, ScanAlgorithm::chained_lookback}));
    for (uint64_t n : {uint64_t(1), uint64_t(2), uint64_t(255), uint64_t(513), tile - 1, tile + 1, 5 * tile + 5})
      CHECK(rig.check(test::random_values<T>(n, rng), n % 3, 0, true));
  }
}

}  // namespace

TEST_CASE("chained_lookback scans in place (input range == output range)", "[chained][in_place]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  check_in_place<uint32_t>(dev, DataType::u32, Op::add, rng);
  check_in_place<float>(dev, DataType::f32, Op::max, rng);
  if (test::type_supported(dev.context(), DataType::f64)) check_in_place<double>(dev, DataType::f64, Op::min, rng);
  if (test::type_supported(dev.context(), DataType::i64)) check_in_place<int64_t>(dev, DataType::i64, Op::bit_xor, rng);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("chained_fallback in place is invalid_argument with a message and writes nothing", "[chained][in_place][errors][host]") {
  Device& dev = test::device();
  const uint64_t n = 3 * tile_of(DataType::u32) + 7;
  const Scan plan = make_scan(dev.context(), pinned(ScanDesc{DataType::u32, Op::add, ScanKind::inclusive, n,
                                                      ScanAlgorithm::chained_fallback}));
  Buffer data = test::make_buffer(dev, n * 4 + 64);
  Buffer scratch = make_scratch(dev, plan);
  std::vector<uint32_t> values(n + 16);
  for (uint64_t i = 0; i < values.size(); ++i) values[i] = uint32_t(i * 2654435761u);
  for (VkDeviceSize offset : {VkDeviceSize(0), VkDeviceSize(16)}) {
    INFO("in place at byte offset " << offset);
    test::upload(dev, data, values);
    test::poison(dev, scratch);
    Result<void> recorded;
    auto submitted = test::submit_compute(dev, [&](VkCommandBuffer cmd) {
      recorded = plan.record(cmd, data.range(offset, n * 4), data.range(offset, n * 4), n, scratch.range());
    });
    REQUIRE(submitted.ok());
    INFO("record: " << recorded.message());
    CHECK(recorded.status() == Status::invalid_argument);
    CHECK(recorded.message().find("in place") != std::string::npos);
    CHECK(test::download<uint32_t>(dev, data, values.size()) == values);
    CHECK(test::still_poisoned(dev, scratch));
  }
  // A partial overlap is invalid for both chained algorithms.
  for (ScanAlgorithm a : chained_algorithms(dev)) {
    const Scan p = make_scan(dev.context(), pinned(ScanDesc{DataType::u32, Op::add, ScanKind::exclusive, n, a}));
    Buffer s = make_scratch(dev, p);
    test::upload(dev, data, values);
    Result<void> recorded;
    auto submitted = test::submit_compute(dev, [&](VkCommandBuffer cmd) {
      recorded = p.record(cmd, data.range(0, n * 4), data.range(16, n * 4), n, s.range());
    });
    REQUIRE(submitted.ok());
    INFO(to_string(a) << " partial overlap, record: " << recorded.message());
    CHECK(recorded.status() == Status::invalid_argument);
    CHECK_FALSE(recorded.message().empty());
    CHECK(test::download<uint32_t>(dev, data, values.size()) == values);
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("chained scans work with push descriptors off (descriptor sets per record)", "[chained][descriptors][host]") {
  ContextOptions options;
  options.disable_push_descriptors = true;
  Device& dev = test::device(options);
  VKPRIM_TEST_RNG(rng);
  const uint64_t tile = tile_of(DataType::u32);
  for (ScanAlgorithm a : chained_algorithms(dev))
    for (ScanKind kind : kKinds) {
      ChainRig<uint32_t> rig(dev, pinned(ScanDesc{DataType::u32, Op::add, kind, 3 * tile + 1, a}));
      for (uint64_t n : {uint64_t(1), uint64_t(513), tile + 1, 3 * tile + 1}) {
        CHECK(rig.check(test::random_values<uint32_t>(n, rng), n % 2, 1));
        // The same ranges again reuse the cached sets.
        CHECK(rig.check(test::random_values<uint32_t>(n, rng), n % 2, 1));
        rig.plan().release_descriptor_sets();
      }
    }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("a chained plan records many times into one command buffer (scratch cleared each time)", "[chained][reuse]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  const uint32_t n = 50000;
  for (ScanAlgorithm a : chained_algorithms(dev)) {
    const Scan plan = make_scan(dev.context(), pinned(ScanDesc{DataType::i32, Op::max, ScanKind::exclusive, n, a}));
    const Buffer scratch = test::check_two_records<int32_t>(dev, plan, {n, n}, false, rng);
    INFO(to_string(a));
    CHECK(read_statistics(dev, plan, scratch).tiles == (n + 4095) / 4096);
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("an automatic u32 plan for 2^25+5 elements scans 2^25+5 and then 2^20+3 in one command buffer (two tile "
          "shapes on NVIDIA's driver)", "[chained][large][reuse][host]") {
  // On NVIDIA's driver a plan this large keeps 8-vector tiles for counts from 2^25 and a 4-vector kernel for
  // smaller ones, with one tile state sized for both; elsewhere both records use the same kernel.
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  const uint32_t large = (1u << 25) + 5, small = (1u << 20) + 3;
  const Scan plan = make_scan(dev.context(), ScanDesc{DataType::u32, Op::add, ScanKind::inclusive, large});
  test::check_two_records<uint32_t>(dev, plan, {large, small}, false, rng);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("without the Vulkan memory model an explicit chained scan is unsupported and automatic is reduce_then_scan",
          "[chained][errors][memory_model][host]") {
  test::DeviceSetup masked;
  masked.testing.mask_features = feature_memory_model;
  Device& dev = test::device(masked);
  CHECK_FALSE(dev.context().capabilities().has(feature_memory_model));
  for (ScanAlgorithm a : kChained) {
    auto plan = Scan::create(dev.context(), pinned(ScanDesc{DataType::u32, Op::add, ScanKind::inclusive, 100, a}));
    INFO(to_string(a) << ": " << (plan ? std::string("ok") : plan.error().message));
    REQUIRE_FALSE(plan.ok());
    CHECK(plan.status() == Status::unsupported);
    CHECK(plan.error().message.find("vulkanMemoryModel") != std::string::npos);
    CHECK(plan.error().message.find(to_string(a)) != std::string::npos);
  }
  VKPRIM_TEST_RNG(rng);
  for (ScanKind kind : kKinds) {
    // No tile override: reduce_then_scan takes none.
    ChainRig<uint32_t> rig(dev, ScanDesc{DataType::u32, Op::add, kind, 20000, ScanAlgorithm::automatic});
    CHECK(rig.plan().algorithm() == ScanAlgorithm::reduce_then_scan);
    for (uint64_t n : {1ull, 4097ull, 20000ull}) CHECK(rig.check(test::random_values<uint32_t>(n, rng)));
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("chained plans report one dispatch per window, scratch with room for the tile state, and the statistics offset",
          "[chained][api][host]") {
  Device& dev = test::device();
  for (ScanAlgorithm a : chained_algorithms(dev))
    for (DataType type : {DataType::u32, DataType::f64}) {
      if (!test::type_supported(dev.context(), type)) continue;
      const uint64_t tile = tile_of(type);
      const Scan plan = make_scan(dev.context(), pinned(ScanDesc{type, Op::add, ScanKind::inclusive, 1 << 20, a}));
      INFO(to_string(a) << " " << to_string(type));
      CHECK(plan.algorithm() == a);
      const ScratchRequirements need = plan.scratch_requirements();
      CHECK(need.alignment >= 16);
      CHECK((need.usage & VK_BUFFER_USAGE_STORAGE_BUFFER_BIT) != 0);
      // 64-byte header (ticket + counters) and a state per tile after the statistics offset.
      CHECK(plan.statistics_offset() % 4 == 0);
      CHECK(need.size >= plan.statistics_offset() + 64 + ((1 << 20) / tile) * 8);
      CHECK(plan.dispatch_count(0) == 0);
      CHECK(plan.dispatch_count(1) == 1);
      CHECK(plan.dispatch_count(1 << 20) == 1);
      CHECK(plan.float_add_depth(1 << 20) >= plan.float_add_depth(tile));
    }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

namespace {

// A tuned plan either fails create with a Status and a message (a tile shape the device cannot hold, e.g.
// shared memory past maxComputeSharedMemorySize) or builds without validation messages and scans
// correctly. Returns the failed create's status (success when the plan ran).
template <class T>
Status check_shape(Device& dev, const ScanDesc& desc, std::mt19937_64& rng) {
  const uint64_t tile = uint64_t(desc.tuning.workgroup_size) * desc.tuning.vectors_per_thread * (16 / sizeof(T));
  INFO(to_string(desc.algorithm) << " " << to_string(desc.type) << " workgroup_size " << desc.tuning.workgroup_size
                                 << ", vectors_per_thread " << desc.tuning.vectors_per_thread << " (tile " << tile
                                 << ")");
  const uint64_t messages_before = dev.validation_message_count();
  auto plan = Scan::create(dev.context(), desc);
  INFO("validation messages:\n" << test::describe_messages(dev));
  CHECK(dev.validation_message_count() == messages_before);
  if (!plan) {
    INFO("create: " << plan.error().message);
    CHECK(plan.status() != Status::success);
    CHECK_FALSE(plan.error().message.empty());
    return plan.status();
  }
  ChainRig<T> rig(dev, desc);
  for (uint64_t n : {uint64_t(1), tile - 1, tile + 1, desc.max_count})
    CHECK(rig.check(test::random_values<T>(n, rng), n % 2, 1));
  CHECK(statistics_of(rig).tiles == (desc.max_count + tile - 1) / tile);
  return Status::success;
}

}  // namespace

TEST_CASE("chained scans with tuned tile shapes (workgroup_size, vectors_per_thread) match the CPU or fail create",
          "[chained][tuning]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  struct Shape {
    uint32_t workgroup_size, vectors;
  };
  const uint32_t max_invocations = dev.context().capabilities().max_workgroup_invocations;
  for (Shape shape : {Shape{64, 1}, Shape{128, 8}, Shape{512, 2}, Shape{1024, 4}}) {
    if (shape.workgroup_size > max_invocations) continue;
    for (ScanAlgorithm a : chained_algorithms(dev)) {
      const uint64_t tile32 = uint64_t(shape.workgroup_size) * shape.vectors * 4;
      ScanDesc desc{DataType::u32, Op::add, ScanKind::inclusive, 3 * tile32 + 5, a};
      desc.tuning.workgroup_size = shape.workgroup_size;
      desc.tuning.vectors_per_thread = shape.vectors;
      // The default-sized 32-bit shapes fit every device vkprim supports (32 KiB of shared memory).
      CHECK(check_shape<uint32_t>(dev, desc, rng) == Status::success);
      if (test::type_supported(dev.context(), DataType::f64)) {
        desc.type = DataType::f64;
        desc.op = Op::min;
        desc.kind = ScanKind::exclusive;
        desc.max_count = 3 * tile32 / 2 + 5;
        check_shape<double>(dev, desc, rng);
      }
    }
  }
  // Overrides outside the documented ranges are invalid_argument.
  for (auto [wg, vectors] : {std::pair{100u, 0u}, std::pair{32u, 0u}, std::pair{2048u, 0u}, std::pair{0u, 9u}}) {
    ScanDesc desc{DataType::u32, Op::add, ScanKind::inclusive, 1000, ScanAlgorithm::chained_fallback};
    desc.tuning.workgroup_size = wg;
    desc.tuning.vectors_per_thread = vectors;
    auto plan = Scan::create(dev.context(), desc);
    INFO("workgroup_size " << wg << ", vectors_per_thread " << vectors << ": "
                           << (plan ? std::string("ok") : plan.error().message));
    CHECK(plan.status() == Status::invalid_argument);
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}
