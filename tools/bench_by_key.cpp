// `vkprim bench reduce_by_key | scan_by_key | rle | non_trivial_runs | unique`: u32 keys (and u32 values),
// GPU time from timestamps (median after warm-up), GB/s counting the minimum traffic (inputs read once, the
// outputs written once), the ratio to the read and copy ceilings measured on the same buffers in the same
// run, and every result verified against tools/support/host_by_key.hpp.
// Input (the same as bench/cub's --run-length): run lengths uniform on 1 .. 2L - 1 (mean L), run r's key r
// (sorted, as after a radix sort), random u32 values.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench_support.hpp"
#include "by_key_commands.hpp"
#include "commands.hpp"
#include "host_by_key.hpp"
#include "vkprim/reduce_by_key.hpp"
#include "vkprim/run_length_encode.hpp"
#include "vkprim/scan_by_key.hpp"
#include "vkprim/unique.hpp"

namespace vkprim::tools {

namespace {

struct ByKeyRow {
  std::string primitive, algorithm;
  uint64_t n = 0, runs = 0;
  double median_us = 0, gbps = 0, of_read = 0, of_copy = 0;
  bool verified = false;
  std::string note;
};

void print_rows(const std::vector<ByKeyRow>& rows) {
  std::printf("%-22s %-20s %8s %10s %12s %10s %8s %8s %s\n", "primitive", "algorithm", "n", "runs", "median_us", "GB/s",
              "x_read", "x_copy", "verified  notes");
  for (const ByKeyRow& r : rows)
    std::printf("%-22s %-20s %8s %10llu %12.2f %10.1f %8.3f %8.3f %s\n", r.primitive.c_str(), r.algorithm.c_str(),
                size_label(r.n).c_str(), (unsigned long long)r.runs, r.median_us, r.gbps, r.of_read, r.of_copy,
                verified_cell(r.verified, r.note).c_str());
}

enum class Prim { reduce_by_key, inclusive_scan_by_key, exclusive_scan_by_key, rle_encode, rle_non_trivial_runs, unique };

const char* prim_name(Prim p) {
  switch (p) {
    case Prim::reduce_by_key: return "reduce_by_key";
    case Prim::inclusive_scan_by_key: return "inclusive_scan_by_key";
    case Prim::exclusive_scan_by_key: return "exclusive_scan_by_key";
    case Prim::rle_encode: return "rle_encode";
    case Prim::rle_non_trivial_runs: return "rle_non_trivial_runs";
    case Prim::unique: return "unique";
  }
  return "?";
}

// One plan of any keyed primitive behind one record signature: (keys, values, a, b, count).
struct AnyPlan {
  std::function<Result<void>(VkCommandBuffer, const BufferRange&, const BufferRange&, const BufferRange&,
                             const BufferRange&, const BufferRange&, uint64_t, const BufferRange&)>
      record;
  std::function<void()> release_descriptor_sets;
  VkDeviceSize scratch = 16;
  VkDeviceSize statistics = 0;
  KeyedAlgorithm algorithm = KeyedAlgorithm::chained;  // resolved
};

template <class Plan>
Result<AnyPlan> wrap(Result<Plan> made) {
  if (!made) return std::move(made).error();
  auto plan = std::make_shared<Plan>(std::move(made).value());
  AnyPlan any;
  any.scratch = std::max<VkDeviceSize>(16, plan->scratch_requirements().size);
  any.statistics = plan->statistics_offset();
  any.algorithm = plan->algorithm();
  any.release_descriptor_sets = [plan] { plan->release_descriptor_sets(); };
  any.record = [plan](VkCommandBuffer cmd, const BufferRange& k, const BufferRange& v, const BufferRange& a,
                      const BufferRange& b, const BufferRange& c, uint64_t n, const BufferRange& s) -> Result<void> {
    if constexpr (std::is_same_v<Plan, ReduceByKey>)
      return plan->record(
          cmd, {.keys = k, .values = v, .unique_keys = a, .aggregates = b, .run_count = c, .scratch = s}, n);
    else if constexpr (std::is_same_v<Plan, ScanByKey>)
      return plan->record(cmd, {.keys = k, .values = v, .output = b, .scratch = s}, n);
    else if constexpr (std::is_same_v<Plan, Unique>)
      return plan->record(cmd, {.keys = k, .output = a, .unique_count = c, .scratch = s}, n);
    else if constexpr (std::is_same_v<Plan, RunLengthEncode>)
      return plan->record(cmd, {.keys = k, .unique_keys = a, .lengths = b, .run_count = c, .scratch = s}, n);
    else
      return plan->record(cmd, {.keys = k, .offsets = a, .lengths = b, .run_count = c, .scratch = s}, n);
  };
  return any;
}

// tuning: workgroup_size and items_per_thread, 0 (the default) unless NAME@WGxITEMS asked for them.
Result<AnyPlan> make_plan(Context& c, Prim p, uint64_t max_count, const Tuning& tuning,
                          KeyedAlgorithm algorithm = KeyedAlgorithm::automatic) {
  switch (p) {
    case Prim::reduce_by_key:
      return wrap(ReduceByKey::create(c, ReduceByKeyDesc{.key_type = DataType::u32,
                                                         .value_type = DataType::u32,
                                                         .op = Op::add,
                                                         .max_count = max_count,
                                                         .tuning = tuning,
                                                         .algorithm = algorithm}));
    case Prim::inclusive_scan_by_key:
    case Prim::exclusive_scan_by_key:
      return wrap(ScanByKey::create(
          c, ScanByKeyDesc{.key_type = DataType::u32,
                           .value_type = DataType::u32,
                           .op = Op::add,
                           .kind = p == Prim::inclusive_scan_by_key ? ScanKind::inclusive : ScanKind::exclusive,
                           .max_count = max_count,
                           .tuning = tuning,
                           .algorithm = algorithm}));
    case Prim::rle_encode:
      return wrap(RunLengthEncode::create(
          c, RunLengthEncodeDesc{
                 .key_type = DataType::u32, .max_count = max_count, .tuning = tuning, .algorithm = algorithm}));
    case Prim::rle_non_trivial_runs:
      return wrap(NonTrivialRuns::create(
          c, RunLengthEncodeDesc{
                 .key_type = DataType::u32, .max_count = max_count, .tuning = tuning, .algorithm = algorithm}));
    case Prim::unique:
      return wrap(Unique::create(c, UniqueDesc{.key_type = DataType::u32,
                                               .max_count = max_count,
                                               .output = SelectOutput::elements,
                                               .tuning = tuning,
                                               .algorithm = algorithm}));
  }
  return Error{Status::invalid_argument, VK_SUCCESS, "unknown primitive"};
}

// The expected outputs (a, b, count) and the bytes the primitive must move at minimum.
struct Expected {
  std::vector<uint32_t> a, b;
  uint64_t runs = 0;
  double bytes = 0;
};

Expected expect(Prim p, const std::vector<uint32_t>& keys, const std::vector<uint32_t>& values) {
  Expected e;
  const double n = double(keys.size());
  std::vector<uint32_t> offsets;
  switch (p) {
    case Prim::reduce_by_key:
      host::reduce_by_key(keys, values, Op::add, e.a, e.b);
      e.runs = e.a.size();
      e.bytes = n * 8 + double(e.runs) * 8;
      break;
    case Prim::inclusive_scan_by_key:
    case Prim::exclusive_scan_by_key:
      e.b = host::scan_by_key(keys, values, Op::add, p == Prim::inclusive_scan_by_key);
      e.runs = host::run_starts(keys).size();
      e.bytes = n * 12;
      break;
    case Prim::rle_encode:
    case Prim::rle_non_trivial_runs: {
      std::vector<uint32_t> unique_keys;
      host::run_lengths(keys, p == Prim::rle_non_trivial_runs, unique_keys, offsets, e.b);
      e.a = p == Prim::rle_encode ? unique_keys : offsets;
      e.runs = e.b.size();
      e.bytes = n * 4 + double(e.runs) * 8;
      break;
    }
    case Prim::unique:
      for (uint32_t s : host::run_starts(keys)) e.a.push_back(keys[s]);
      e.runs = e.a.size();
      e.bytes = n * 4 + double(e.runs) * 4;
      break;
  }
  return e;
}

// The plans of the chosen algorithms and tiles ("all": every algorithm the device runs).
struct ByKeyPlans {
  std::vector<AnyPlan> plans;
  std::vector<std::string> labels;
  VkDeviceSize scratch_bytes = 16;
};

// 0, or the exit code after a message (2: a bad choice).
int make_by_key_plans(const Device& device, Prim prim, const std::vector<AlgorithmChoice>& choices, uint64_t max_n,
                      ByKeyPlans& out) {
  const bool memory_model = device.context().capabilities().has(feature_memory_model);
  for (const AlgorithmChoice& ch : choices) {
    if (ch.tuning) {  // a third number would be an override the keyed plans do not read
      std::fprintf(stderr, "vkprim bench %s: '%s%s': the tile override is @WGxITEMS\n", prim_name(prim),
                   ch.name.c_str(), ch.shape.c_str());
      return 2;
    }
    std::vector<KeyedAlgorithm> algorithms;
    KeyedAlgorithm one = KeyedAlgorithm::automatic;
    if (ch.name == "all") {
      if (memory_model) algorithms.push_back(KeyedAlgorithm::chained);  // else unsupported: left out
      algorithms.push_back(KeyedAlgorithm::reduce_then_scan);
    } else if (parse(ch.name.c_str(), one)) {
      algorithms.push_back(one);
    } else {
      std::fprintf(stderr, "vkprim bench %s: unknown algorithm '%s' (automatic, chained, reduce_then_scan, all)\n",
                   prim_name(prim), ch.name.c_str());
      return 2;
    }
    for (KeyedAlgorithm algorithm : algorithms) {
      const Tuning tuning{.workgroup_size = ch.workgroup_size, .items_per_thread = ch.per_thread};
      auto made = make_plan(const_cast<Device&>(device).context(), prim, max_n, tuning, algorithm);
      if (!made) {
        std::fprintf(stderr, "%s failed: %s\n", prim_name(prim), made.error().message.c_str());
        return 1;
      }
      out.scratch_bytes = std::max(out.scratch_bytes, made->scratch);
      out.labels.push_back(to_string(made->algorithm) + ch.shape);
      out.plans.push_back(std::move(made).value());
    }
  }
  return 0;
}

// The buffers (largest first: DESIGN.md; the ceilings run on the keys and output B), keys in runs of about
// run_length and random values, uploaded.
struct ByKeyInput {
  Buffer keys, values, a, b, scratch, count;
  std::vector<uint32_t> host_keys, host_values;
};

std::optional<ByKeyInput> make_by_key_input(const Device& device, VkDeviceSize scratch_bytes, uint64_t max_n,
                                            uint32_t run_length) {
  const VkDeviceSize bytes = vector_bytes(max_n * 4);
  auto keys = device.create_buffer(bytes);
  auto values = device.create_buffer(bytes);
  auto a = device.create_buffer(bytes);
  auto b = device.create_buffer(bytes);
  auto scratch = device.create_buffer(scratch_bytes);
  auto count = device.create_buffer(16);
  if (!keys || !values || !a || !b || !scratch || !count) {
    std::fprintf(stderr, "bench: buffer allocation failed\n");
    return std::nullopt;
  }
  std::mt19937_64 rng(std::random_device{}());
  std::vector<uint32_t> host_keys = host::keys_with_runs<uint32_t>(max_n, run_length, 0, true, rng);
  std::vector<uint32_t> host_values = upload_random<uint32_t>(device, values.value(), max_n);
  if (host_values.empty() || !device.upload(keys.value(), host_keys.data(), max_n * 4)) {
    std::fprintf(stderr, "bench: upload failed\n");
    return std::nullopt;
  }
  return ByKeyInput{std::move(keys).value(),    std::move(values).value(), std::move(a).value(),
                    std::move(b).value(),       std::move(scratch).value(), std::move(count).value(),
                    std::move(host_keys),       std::move(host_values)};
}

// Whether a run's outputs (the count where the primitive writes one, A and B) are the expected ones.
bool by_key_outputs_ok(const Device& device, Prim prim, const ByKeyInput& in, const Expected& e, uint32_t& got_count) {
  const bool scan = prim == Prim::inclusive_scan_by_key || prim == Prim::exclusive_scan_by_key;
  got_count = uint32_t(e.runs);
  std::vector<uint32_t> got_a(e.a.size()), got_b(e.b.size());
  const bool fetched = (scan || bool(device.download(in.count, &got_count, 4))) &&
                       (got_a.empty() || bool(device.download(in.a, got_a.data(), got_a.size() * 4))) &&
                       (got_b.empty() || bool(device.download(in.b, got_b.data(), got_b.size() * 4)));
  return fetched && got_count == e.runs && got_a == e.a && got_b == e.b;
}

// The ceilings and every plan's row at n elements; the failures, or -1 where a run cannot be timed.
int bench_by_key_size(const Device& device, Prim prim, const ByKeyPlans& set, ByKeyInput& in, uint64_t n,
                      int repeats, std::vector<ByKeyRow>& rows) {
  const std::vector<uint32_t> k(in.host_keys.begin(), in.host_keys.begin() + std::ptrdiff_t(n));
  const std::vector<uint32_t> v(in.host_values.begin(), in.host_values.begin() + std::ptrdiff_t(n));
  const Expected e = expect(prim, k, v);
  progress("bench %s n=%s (runs %llu) ...\n", prim_name(prim), size_label(n).c_str(), (unsigned long long)e.runs);
  auto record_for = [&](const AnyPlan& plan) -> Recorder {
    return [&, n](VkCommandBuffer cmd) {
      return plan.record(cmd, in.keys.range(0, n * 4), in.values.range(0, n * 4), in.a.range(0, n * 4),
                         in.b.range(0, n * 4), in.count.range(0, 4), n, in.scratch.range());
    };
  };
  const auto ceilings =
      warm_then_ceilings(device, set.plans.front(), record_for(set.plans.front()), in.keys, in.b, n * 4, repeats);
  if (!ceilings) return -1;
  add_ceiling_rows(rows, *ceilings, [&](const char* name, double us, double gbps, double of_read, double of_copy) {
    return ByKeyRow{"ceiling", name, n, 0, us, gbps, of_read, of_copy, true, ""};
  });
  int failures = 0;
  for (size_t i = 0; i < set.plans.size(); ++i) {
    const AnyPlan& plan = set.plans[i];
    const auto t = warm_and_time(device, repeats, record_for(plan));
    plan.release_descriptor_sets();
    if (!t) {
      std::fprintf(stderr, "bench: %s: %s\n", prim_name(prim), t.error().message.c_str());
      return -1;
    }
    uint32_t got_count = 0;
    const bool ok = by_key_outputs_ok(device, prim, in, e, got_count);
    if (!ok) {
      ++failures;
      std::fprintf(stderr, "MISMATCH %s %s n=%llu: count %u (expected %llu) or outputs differ\n", prim_name(prim),
                   set.labels[i].c_str(), (unsigned long long)n, got_count, (unsigned long long)e.runs);
    }
    const double gbps = e.bytes / t.value();
    rows.push_back({prim_name(prim), set.labels[i], n, e.runs, t.value() / 1e3, gbps, ceilings->of_read(gbps),
                    ceilings->of_copy(gbps), ok,
                    plan.algorithm == KeyedAlgorithm::chained ? lookback_note(device, in.scratch, plan.statistics, true)
                                                              : std::string()});
  }
  return failures;
}

int bench(const Device& device, Prim prim, const std::vector<AlgorithmChoice>& choices,
          const std::vector<uint64_t>& sizes, uint32_t run_length, int repeats, std::vector<ByKeyRow>& rows) {
  const uint64_t max_n = *std::max_element(sizes.begin(), sizes.end());
  ByKeyPlans set;
  if (const int made = make_by_key_plans(device, prim, choices, max_n, set)) return made;
  auto input = make_by_key_input(device, set.scratch_bytes, max_n, run_length);
  if (!input) return 1;
  int failures = 0;
  for (uint64_t n : sizes) {
    const int failed = bench_by_key_size(device, prim, set, *input, n, repeats, rows);
    if (failed < 0) return 1;
    failures += failed;
  }
  return failures ? 1 : 0;
}

}  // namespace

int verify_by_key(const Device& device, std::mt19937_64& rng) {
  std::vector<KeyedAlgorithm> algorithms = {KeyedAlgorithm::reduce_then_scan};
  if (device.context().capabilities().has(feature_memory_model)) algorithms.insert(algorithms.begin(), KeyedAlgorithm::chained);
  int passed = 0, failed = 0;
  constexpr uint64_t kMax = 100003;
  auto keys = device.create_buffer(kMax * 4), values = device.create_buffer(kMax * 4);
  auto a = device.create_buffer(kMax * 4), b = device.create_buffer(kMax * 4), count = device.create_buffer(16);
  if (!keys || !values || !a || !b || !count) {
    std::printf("FAIL keyed primitives: buffer allocation\n");
    return 1;
  }
  for (KeyedAlgorithm algorithm : algorithms) {
    for (Prim prim : {Prim::reduce_by_key, Prim::inclusive_scan_by_key, Prim::exclusive_scan_by_key, Prim::rle_encode,
                      Prim::rle_non_trivial_runs, Prim::unique}) {
      auto plan = make_plan(const_cast<Device&>(device).context(), prim, kMax, Tuning{}, algorithm);
      auto scratch = plan ? device.create_buffer(plan->scratch) : Result<Buffer>(plan.error());
      if (!plan || !scratch) {
        ++failed;
        std::printf("FAIL %s %s: %s\n", prim_name(prim), to_string(algorithm),
                    (plan ? scratch.error() : plan.error()).message.c_str());
        continue;
      }
      for (uint64_t n : {uint64_t(1), uint64_t(1000), kMax})
        for (uint32_t run_length : {1u, 4u, 64u}) {
          const auto k = host::keys_with_runs<uint32_t>(n, run_length, 0, false, rng);
          std::vector<uint32_t> v(n);
          for (auto& x : v) x = uint32_t(rng());
          const Expected e = expect(prim, k, v);
          Result<void> recorded;
          bool ok = device.upload(keys.value(), k.data(), n * 4).ok() &&
                    device.upload(values.value(), v.data(), n * 4).ok();
          ok = ok && device.submit([&](VkCommandBuffer cmd) {
                   recorded = plan->record(cmd, keys->range(0, n * 4), values->range(0, n * 4), a->range(0, n * 4),
                                           b->range(0, n * 4), count->range(0, 4), n, scratch->range());
                 }).ok() && recorded.ok();
          const bool scan = prim == Prim::inclusive_scan_by_key || prim == Prim::exclusive_scan_by_key;
          uint32_t got_count = uint32_t(e.runs);
          std::vector<uint32_t> got_a(e.a.size()), got_b(e.b.size());
          ok = ok && (scan || device.download(count.value(), &got_count, 4).ok()) &&
               (got_a.empty() || device.download(a.value(), got_a.data(), got_a.size() * 4).ok()) &&
               (got_b.empty() || device.download(b.value(), got_b.data(), got_b.size() * 4).ok());
          if (ok && got_count == e.runs && got_a == e.a && got_b == e.b) {
            ++passed;
          } else {
            ++failed;
            std::printf("FAIL %s %s n=%llu runs of mean %u: %s\n", prim_name(prim), to_string(algorithm),
                        (unsigned long long)n, run_length,
                        recorded ? "outputs or count differ from the CPU" : recorded.message().c_str());
          }
        }
    }
  }
  std::printf("keyed primitives: %d passed, %d failed\n", passed, failed);
  return failed;
}

bool is_by_key_bench(const std::string& name) {
  return name == "reduce_by_key" || name == "scan_by_key" || name == "rle" || name == "non_trivial_runs" ||
         name == "unique";
}

int run_bench_by_key(const std::string& name, std::vector<std::string> args) {
  std::string run_length_s = "4";
  take_option(args, "--run-length", run_length_s);
  std::string kind_s = "inclusive";
  take_option(args, "--kind", kind_s);
  const bool exclusive = kind_s == "exclusive";
  BenchArgs common;
  int rc = 0;
  const std::string command = "vkprim bench " + name;
  auto device = open_bench(args, command.c_str(), common, rc);
  if (!device) return rc;
  std::vector<uint64_t> sizes;
  const long run_length = std::atol(run_length_s.c_str());
  if (!parse_sizes(common.sizes, sizes) || run_length < 1 || run_length > (1 << 30) ||
      (kind_s != "inclusive" && kind_s != "exclusive")) {
    std::fprintf(stderr, "%s: bad --sizes, --run-length or --kind\n", command.c_str());
    return 2;
  }
  Prim prim = Prim::reduce_by_key;
  if (name == "scan_by_key") prim = exclusive ? Prim::exclusive_scan_by_key : Prim::inclusive_scan_by_key;
  if (name == "rle") prim = Prim::rle_encode;
  if (name == "non_trivial_runs") prim = Prim::rle_non_trivial_runs;
  if (name == "unique") prim = Prim::unique;
  char counting[256];
  std::snprintf(counting, sizeof(counting),
                "; u32 keys (values); run lengths uniform on 1..%ld; GB/s count keys (values) read once and the "
                "outputs written once",
                2 * run_length - 1);
  print_bench_header(*device, common.repeats, counting);
  std::vector<ByKeyRow> rows;
  rc = bench(*device, prim, split_algorithms(common.algorithm), sizes, uint32_t(run_length), common.repeats, rows);
  print_rows(rows);
  if (!common.json.empty())
    write_json(common.json, device->context().capabilities().device_name, rows, [&](const ByKeyRow& r, JsonRow& json) {
      json.text("primitive", r.primitive).text("algorithm", r.algorithm).text("type", "u32").number("n", r.n);
      json.number("run_length", double(run_length)).number("runs", r.runs).number("median_us", r.median_us);
      json.number("gbps", r.gbps).number("of_read", r.of_read).number("of_copy", r.of_copy);
      json.flag("verified", r.verified).text("note", r.note);
    });
  if (common.stats) print_pipeline_statistics(*device);
  return rc;
}

}  // namespace vkprim::tools
