// Deterministic float results (ScanDesc::deterministic, ReduceDesc::deterministic): f32 and f64 scans and
// reduces asked for it run 20 times over data of mixed magnitudes (so that any other grouping rounds
// differently) and must leave the same bits every run, on a plain device and under forced fallback, and
// stay within the documented bound of the exact result; automatic resolves to a fixed-tree algorithm for
// floats and keeps the chained scan for integers; a chained scan asked to be deterministic on a float type
// is refused at create.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "host_scan.hpp"
#include "scan_rig.hpp"
#include "test_support.hpp"
#include "vkprim/reduce.hpp"
#include "vkprim/scan.hpp"

using namespace vkprim;

namespace {

constexpr int kRuns = 20;
// reduce_then_scan tiles: 128 invocations x 4 vectors of 16 bytes (2048 f32, 1024 f64).
uint64_t scan_tile(DataType type) { return 128 * 4 * (16 / size_of(type)); }
// grid_stride tiles: 256 invocations x 4 vectors (4096 f32, 2048 f64); 300007 elements outnumber the tiles
// of its grid on CPU drivers (64 workgroups), so threads stride more than once there.
uint64_t reduce_tile(DataType type) { return 256 * 4 * (16 / size_of(type)); }
constexpr uint64_t kLargeReduce = 300007;

// The contexts every case runs under: plain, and every other tile skipping its publication with a spin
// limit of 0 (test::forced_fallback), where a chained scan falls back past every skipped tile and its
// float bits change from run to run.
std::vector<test::DeviceSetup> contexts() { return {test::DeviceSetup{}, test::forced_fallback(2, 0)}; }

std::string describe(const test::DeviceSetup& s) {
  return s.testing.skip_publication_period ? "forced fallback (skip period " +
                                                 std::to_string(s.testing.skip_publication_period) + ", spin limit " +
                                                 std::to_string(s.options.fallback_spin_limit) + ")"
                                           : std::string("plain context");
}
std::string describe(const Context& c) { return describe(test::DeviceSetup{c.options(), c.testing()}); }

// Random signs and magnitudes from 2^-20 to 2^21: partial sums lose different low bits under every grouping.
template <class T>
std::vector<T> mixed_magnitudes(uint64_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<T> mantissa(T(1), T(2));
  std::uniform_int_distribution<int> exponent(-20, 20);
  std::vector<T> v(n);
  for (T& x : v) x = std::ldexp(mantissa(rng), exponent(rng)) * (rng() & 1 ? T(-1) : T(1));
  return v;
}

template <class T>
T pairwise_sum(const T* x, size_t n) {
  if (n == 1) return x[0];
  return pairwise_sum(x, n / 2) + pairwise_sum(x + n / 2, n - n / 2);
}

// True when some other grouping of `data` (reversed, a balanced tree, runs of 7) sums to other bits than
// left to right: then a run that grouped differently from another would show in the output, so the
// same-bits checks below can fail. (One grouping alone can match by chance, a few percent of the time.)
template <class T>
bool grouping_changes_sum(const std::vector<T>& data) {
  T sequential = 0, reversed = 0, runs = 0;
  for (T x : data) sequential += x;
  for (size_t i = data.size(); i-- > 0;) reversed += data[i];
  for (size_t i = 0; i < data.size(); i += 7) {
    T run = 0;
    for (size_t j = i; j < std::min(i + 7, data.size()); ++j) run += data[j];
    runs += run;
  }
  const T tree = pairwise_sum(data.data(), data.size());
  return !host::same_bits(sequential, reversed) || !host::same_bits(sequential, tree) ||
         !host::same_bits(sequential, runs);
}

// Values of mixed_magnitudes whose first `checked` sum depends on the grouping, redrawn until they do: a
// draw passes grouping_changes_sum most of the time but not always (f64, 3077 values: seed
// 11468039320924502740 drew none of the three groupings off left to right).
template <class T>
std::vector<T> grouping_sensitive(uint64_t n, uint64_t checked, std::mt19937_64& rng) {
  for (int draw = 0; draw < 32; ++draw) {
    std::vector<T> data = mixed_magnitudes<T>(n, rng);
    if (grouping_changes_sum(std::vector<T>(data.begin(), data.begin() + ptrdiff_t(checked)))) return data;
  }
  FAIL("32 draws of " << checked << " values summed to the same bits in every grouping tried");
  return {};
}

// Runs `record` kRuns times, each in its own submission into freshly poisoned `output`, and returns the
// first `count` elements each run left there.
template <class T>
std::vector<std::vector<T>> run_repeatedly(Device& dev, const Buffer& output, uint64_t count,
                                           const std::function<Result<void>(VkCommandBuffer)>& record) {
  std::vector<std::vector<T>> runs;
  for (int r = 0; r < kRuns; ++r) {
    test::poison(dev, output);
    Result<void> recorded;
    auto submitted = test::submit_compute(dev, [&](VkCommandBuffer cmd) { recorded = record(cmd); });
    INFO("run " << r << ", record: " << recorded.message() << " submit: " << submitted.message());
    REQUIRE(recorded.ok());
    REQUIRE(submitted.ok());
    runs.push_back(test::download<T>(dev, output, count));
  }
  return runs;
}

// Every run must hold run 0's bits; names the first element of the first run that does not.
template <class T>
void check_same_bits(const std::vector<std::vector<T>>& runs) {
  size_t unlike = 0;
  std::string first;
  for (size_t r = 1; r < runs.size(); ++r) {
    if (std::memcmp(runs[r].data(), runs[0].data(), runs[0].size() * sizeof(T)) == 0) continue;
    if (unlike++ > 0) continue;
    size_t i = 0;
    while (host::same_bits(runs[r][i], runs[0][i])) ++i;
    first = "; run " + std::to_string(r) + " element " + std::to_string(i) + ": " + test::show(runs[r][i]) +
            " against " + test::show(runs[0][i]);
  }
  INFO(unlike << " of " << runs.size() - 1 << " runs differ from run 0" << first);
  CHECK(unlike == 0);
}

// A deterministic float add scan (automatic) over one to 600 tiles (600 tiles: two levels of tile sums).
template <class T>
void check_scan_repeats(Device& dev, DataType type, ScanKind kind, std::mt19937_64& rng) {
  const uint64_t tile = scan_tile(type);
  const std::vector<uint64_t> sizes = {1, tile - 1, 3 * tile + 5, 600 * tile + 3};
  ScanDesc desc{type, Op::add, kind, sizes.back(), ScanAlgorithm::automatic};
  desc.deterministic = true;
  const Scan plan = test::make_scan(dev.context(), desc);
  CHECK(plan.algorithm() == ScanAlgorithm::reduce_then_scan);
  CHECK(plan.desc().deterministic);
  Buffer input = test::make_buffer(dev, desc.max_count * sizeof(T));
  Buffer output = test::make_buffer(dev, desc.max_count * sizeof(T));
  Buffer scratch = test::make_scratch(dev, plan);
  for (uint64_t n : sizes) {
    INFO(to_string(type) << " " << to_string(kind) << " add, n=" << n << ", " << describe(dev.context()));
    const auto data = n > tile ? grouping_sensitive<T>(n, n, rng) : mixed_magnitudes<T>(n, rng);
    test::upload(dev, input, data);
    const VkDeviceSize bytes = n * sizeof(T);
    const auto runs = run_repeatedly<T>(dev, output, n, [&](VkCommandBuffer cmd) {
      return plan.record(cmd, input.range(0, bytes), output.range(0, bytes), n, scratch.range());
    });
    std::string why;
    const size_t bad = host::first_scan_mismatch(Op::add, kind, data.data(), runs[0].data(), n,
                                                 plan.float_add_depth(n), why);
    INFO(why);
    CHECK(bad == n);
    check_same_bits(runs);
  }
}

// A deterministic float add reduce with `algorithm` at sizes from one element to several grid-stride steps.
template <class T>
void check_reduce_repeats(Device& dev, DataType type, ReduceAlgorithm algorithm, std::mt19937_64& rng) {
  const uint64_t tile = reduce_tile(type);
  const std::vector<uint64_t> sizes = {1, tile - 1, 3 * tile + 5, kLargeReduce};
  ReduceDesc desc{type, Op::add, kLargeReduce, algorithm};
  desc.deterministic = true;
  const Reduce plan = test::make_reduce(dev.context(), desc);
  // Every reduce algorithm has a fixed tree, so deterministic leaves automatic's choice alone.
  CHECK(plan.algorithm() == (algorithm == ReduceAlgorithm::automatic ? ReduceAlgorithm::grid_stride : algorithm));
  CHECK(plan.desc().deterministic);
  Buffer input = test::make_buffer(dev, kLargeReduce * sizeof(T));
  Buffer output = test::make_buffer(dev, 64);
  Buffer scratch = test::make_scratch(dev, plan);
  for (uint64_t n : sizes) {
    INFO(to_string(plan.algorithm()) << " " << to_string(type) << " add, n=" << n << ", "
                                     << describe(dev.context()));
    const auto data = n > tile ? grouping_sensitive<T>(n, n, rng) : mixed_magnitudes<T>(n, rng);
    test::upload(dev, input, data);
    const auto runs = run_repeatedly<T>(dev, output, 1, [&](VkCommandBuffer cmd) {
      return plan.record(cmd, input.range(0, n * sizeof(T)), output.range(0, sizeof(T)), n, scratch.range());
    });
    CHECK(test::matches_reference(data, Op::add, runs[0][0], plan.sequential_run(n)));
    check_same_bits(runs);
  }
}

bool skip_unsupported(Device& dev, DataType type) {
  if (test::type_supported(dev.context(), type)) return false;
  test::skip(std::string(to_string(type)) + " is not supported by this device");
  return true;
}

constexpr ReduceAlgorithm kReduceAlgorithms[] = {
    ReduceAlgorithm::automatic,          ReduceAlgorithm::interleaved_divergent, ReduceAlgorithm::interleaved_strided,
    ReduceAlgorithm::sequential,         ReduceAlgorithm::first_add_during_load, ReduceAlgorithm::unrolled_subgroup,
    ReduceAlgorithm::unrolled_complete,  ReduceAlgorithm::grid_stride};

}  // namespace

TEST_CASE("deterministic f32 and f64 scans resolve to reduce_then_scan and repeat their bits over 20 runs, plain and "
          "under forced fallback",
          "[deterministic][scan]") {
  VKPRIM_TEST_RNG(rng);
  for (const test::DeviceSetup& setup : contexts()) {
    Device& dev = test::device(setup);
    for (ScanKind kind : {ScanKind::inclusive, ScanKind::exclusive}) {
      check_scan_repeats<float>(dev, DataType::f32, kind, rng);
      if (!skip_unsupported(dev, DataType::f64)) check_scan_repeats<double>(dev, DataType::f64, kind, rng);
    }
    REQUIRE_NO_VALIDATION_MESSAGES(dev);
  }
}

TEST_CASE("every fixed-tree scan algorithm accepts deterministic for floats and repeats its bits over 20 runs",
          "[deterministic][scan]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  const uint64_t n = 3 * scan_tile(DataType::f32) + 5;
  const auto data = grouping_sensitive<float>(n, n, rng);
  Buffer input = test::make_buffer(dev, n * 4);
  Buffer output = test::make_buffer(dev, n * 4);
  test::upload(dev, input, data);
  for (ScanAlgorithm a : {ScanAlgorithm::hillis_steele, ScanAlgorithm::blelloch_global, ScanAlgorithm::blocked_blelloch,
                          ScanAlgorithm::subgroup_blocked, ScanAlgorithm::reduce_then_scan}) {
    ScanDesc desc{DataType::f32, Op::add, ScanKind::exclusive, n, a};
    desc.deterministic = true;
    const Scan plan = test::make_scan(dev.context(), desc);
    CHECK(plan.algorithm() == a);
    Buffer scratch = test::make_scratch(dev, plan);
    INFO(to_string(a) << " f32 exclusive add, n=" << n);
    const auto runs = run_repeatedly<float>(dev, output, n, [&](VkCommandBuffer cmd) {
      return plan.record(cmd, input.range(), output.range(), n, scratch.range());
    });
    std::string why;
    const size_t bad = host::first_scan_mismatch(Op::add, ScanKind::exclusive, data.data(), runs[0].data(), n,
                                                 plan.float_add_depth(n), why);
    INFO(why);
    CHECK(bad == n);
    check_same_bits(runs);
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("deterministic integer scans keep the chained scan where the memory model is enabled and repeat their "
          "bits over 20 runs",
          "[deterministic][scan]") {
  VKPRIM_TEST_RNG(rng);
  for (const test::DeviceSetup& setup : contexts()) {
    Device& dev = test::device(setup);
    INFO(describe(setup));
    const bool memory_model = dev.context().capabilities().has(feature_memory_model);
    const uint64_t n = 37 * 4096 + 11;
    ScanDesc desc{DataType::u32, Op::add, ScanKind::inclusive, n, ScanAlgorithm::automatic};
    desc.deterministic = true;
    const Scan plan = test::make_scan(dev.context(), desc);
    // Integer add gives the same bits in any grouping, so deterministic does not cost the chained scan.
    CHECK(plan.algorithm() == (memory_model ? ScanAlgorithm::chained_fallback : ScanAlgorithm::reduce_then_scan));
    const auto data = test::random_values<uint32_t>(n, rng);
    Buffer input = test::make_buffer(dev, n * 4);
    Buffer output = test::make_buffer(dev, n * 4);
    Buffer scratch = test::make_scratch(dev, plan);
    test::upload(dev, input, data);
    const auto runs = run_repeatedly<uint32_t>(dev, output, n, [&](VkCommandBuffer cmd) {
      return plan.record(cmd, input.range(), output.range(), n, scratch.range());
    });
    CHECK(runs[0] == host::scan(Op::add, ScanKind::inclusive, data));
    check_same_bits(runs);
    REQUIRE_NO_VALIDATION_MESSAGES(dev);
  }
}

TEST_CASE("deterministic f32 and f64 reduces repeat their bits over 20 runs with every algorithm, and automatic "
          "under forced fallback",
          "[deterministic][reduce]") {
  VKPRIM_TEST_RNG(rng);
  for (const test::DeviceSetup& setup : contexts()) {
    Device& dev = test::device(setup);
    // No reduce kernel reads the fallback options; automatic under them stands for the rest.
    const bool plain = setup.testing.skip_publication_period == 0;
    for (ReduceAlgorithm a : kReduceAlgorithms) {
      if (!plain && a != ReduceAlgorithm::automatic) continue;
      check_reduce_repeats<float>(dev, DataType::f32, a, rng);
      if (!skip_unsupported(dev, DataType::f64)) check_reduce_repeats<double>(dev, DataType::f64, a, rng);
    }
    REQUIRE_NO_VALIDATION_MESSAGES(dev);
  }
}

TEST_CASE("deterministic plans recorded indirectly repeat their bits over 20 runs (reduce_then_scan, grid_stride)",
          "[deterministic][indirect]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  // The GPU count is below max_count, so the passes follow max_count's structure with fewer tiles.
  const uint32_t max_count = 200 * 2048 + 7, n = max_count - 3000;
  const auto data = grouping_sensitive<float>(max_count, n, rng);
  Buffer input = test::make_buffer(dev, max_count * 4);
  Buffer output = test::make_buffer(dev, max_count * 4);
  Buffer count = test::make_buffer(dev, 16);
  test::upload(dev, input, data);
  test::upload(dev, count, std::vector<uint32_t>{n});

  ScanDesc scan_desc{DataType::f32, Op::add, ScanKind::inclusive, max_count, ScanAlgorithm::automatic};
  scan_desc.deterministic = true;
  const Scan scan = test::make_scan(dev.context(), scan_desc);
  REQUIRE(scan.algorithm() == ScanAlgorithm::reduce_then_scan);
  Buffer scan_scratch = test::make_scratch(dev, scan);
  const auto scans = run_repeatedly<float>(dev, output, n, [&](VkCommandBuffer cmd) {
    return scan.record_indirect(cmd, input.range(), output.range(), count.range(0, 4), scan_scratch.range());
  });
  {
    std::string why;
    const size_t bad = host::first_scan_mismatch(Op::add, ScanKind::inclusive, data.data(), scans[0].data(), n,
                                                 scan.float_add_depth(max_count), why);
    INFO(why);
    CHECK(bad == n);
  }
  check_same_bits(scans);

  ReduceDesc reduce_desc{DataType::f32, Op::add, max_count, ReduceAlgorithm::automatic};
  reduce_desc.deterministic = true;
  const Reduce reduce = test::make_reduce(dev.context(), reduce_desc);
  REQUIRE(reduce.algorithm() == ReduceAlgorithm::grid_stride);
  Buffer reduce_scratch = test::make_scratch(dev, reduce);
  const auto sums = run_repeatedly<float>(dev, output, 1, [&](VkCommandBuffer cmd) {
    return reduce.record_indirect(cmd, input.range(), output.range(0, 4), count.range(0, 4), reduce_scratch.range());
  });
  CHECK(test::matches_reference(std::vector<float>(data.begin(), data.begin() + n), Op::add, sums[0][0],
                                reduce.sequential_run(n)));
  check_same_bits(sums);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("a chained scan asked to be deterministic on a float type is invalid_argument on any device, while "
          "integer types and deterministic off are accepted",
          "[deterministic][errors]") {
  test::DeviceSetup masked;
  masked.testing.mask_features = feature_memory_model;
  for (const test::DeviceSetup& setup : {test::DeviceSetup{}, masked}) {
    Device& dev = test::device(setup);
    const bool memory_model = dev.context().capabilities().has(feature_memory_model);
    INFO((memory_model ? "memory model enabled" : "memory model masked"));
    for (DataType type : {DataType::f32, DataType::f64}) {
      if (skip_unsupported(dev, type)) continue;
      for (ScanAlgorithm a : {ScanAlgorithm::chained_lookback, ScanAlgorithm::chained_fallback})
        for (Op op : {Op::add, Op::min}) {
          ScanDesc desc{type, op, ScanKind::inclusive, 10000, a};
          desc.deterministic = true;
          auto plan = Scan::create(dev.context(), desc);
          INFO(to_string(a) << " " << to_string(type) << " " << to_string(op) << ": "
                            << (plan ? std::string("ok") : plan.error().message));
          REQUIRE_FALSE(plan.ok());
          // Refused for what was asked, before the device's features are looked at.
          CHECK(plan.status() == Status::invalid_argument);
          CHECK(plan.error().message.find("deterministic") != std::string::npos);
          CHECK(plan.error().message.find(to_string(a)) != std::string::npos);
          CHECK(plan.error().message.find(to_string(type)) != std::string::npos);
        }
      // automatic with deterministic picks the fixed tree whatever the features.
      ScanDesc desc{type, Op::add, ScanKind::exclusive, 10000, ScanAlgorithm::automatic};
      desc.deterministic = true;
      CHECK(test::make_scan(dev.context(), desc).algorithm() == ScanAlgorithm::reduce_then_scan);
      // Without deterministic, automatic keeps the chained scan for floats where it can run.
      desc.deterministic = false;
      CHECK(test::make_scan(dev.context(), desc).algorithm() ==
            (memory_model ? ScanAlgorithm::chained_fallback : ScanAlgorithm::reduce_then_scan));
      if (memory_model) {
        desc.algorithm = ScanAlgorithm::chained_fallback;
        CHECK(Scan::create(dev.context(), desc).ok());
      }
    }
    if (memory_model) {
      // Integer results are exact in any grouping: an explicit chained scan stays allowed.
      ScanDesc desc{DataType::i32, Op::add, ScanKind::inclusive, 10000, ScanAlgorithm::chained_fallback};
      desc.deterministic = true;
      CHECK(test::make_scan(dev.context(), desc).algorithm() == ScanAlgorithm::chained_fallback);
    }
    REQUIRE_NO_VALIDATION_MESSAGES(dev);
  }
}
