// `vkprim bench scan`: GPU time from timestamps (median after warm-up), GB/s counting read + write, the
// ratio to the copy ceiling measured on the same buffers in the same run, a CPU row
// (std::inclusive_scan / std::exclusive_scan), and every result verified against the CPU.
// Warm-up is timed, not counted: each plan first runs for about 200 ms, and so does the first plan
// before the ceilings. Without it, a scan measured right after the short ceiling runs measured 15% slower
// on an H200 than the same scan measured after other work (clocks still ramping); with it, the order in
// which plans run does not matter.
#include <algorithm>
#include <cstdio>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "bench_support.hpp"
#include "commands.hpp"
#include "demo.hpp"
#include "host_scan.hpp"
#include "scan_commands.hpp"
#include "vkprim/scan.hpp"

namespace vkprim::tools {

namespace {

struct ScanRow {
  std::string primitive, algorithm, kind, type, op;
  uint64_t n = 0;
  double median_us = 0, gbps = 0, of_read = 0, of_copy = 0;
  bool verified = false;
  std::string note;  // chained scans: fallbacks and look-back depth of the last timed run
};

void write_scan_json(const std::string& path, const std::string& device, const std::vector<ScanRow>& rows) {
  write_json(path, device, rows, [](const ScanRow& r, JsonRow& json) {
    json.text("primitive", r.primitive).text("algorithm", r.algorithm).text("kind", r.kind).text("type", r.type);
    json.text("op", r.op).number("n", r.n).number("median_us", r.median_us).number("gbps", r.gbps);
    json.number("of_read", r.of_read).number("of_copy", r.of_copy).flag("verified", r.verified).text("note", r.note);
  });
}

void print_scan_rows(const std::vector<ScanRow>& rows) {
  std::printf("%-9s %-26s %-9s %-4s %-7s %8s %12s %10s %8s %8s %s\n", "primitive", "algorithm", "kind", "type", "op",
              "n", "median_us", "GB/s", "x_read", "x_copy", "verified  notes");
  for (const ScanRow& r : rows)
    std::printf("%-9s %-26s %-9s %-4s %-7s %8s %12.2f %10.1f %8.3f %8.3f %s\n", r.primitive.c_str(),
                r.algorithm.c_str(), r.kind.c_str(), r.type.c_str(), r.op.c_str(), size_label(r.n).c_str(),
                r.median_us, r.gbps, r.of_read, r.of_copy, verified_cell(r.verified, r.note).c_str());
}

// std::inclusive_scan / std::exclusive_scan with the operator chosen outside the loop (integer add
// through the unsigned type, so it wraps like the GPU).
template <class T>
void cpu_scan(Op op, ScanKind kind, const T* in, size_t n, T* out) {
  auto run = [&](auto f) {
    if (kind == ScanKind::inclusive) std::inclusive_scan(in, in + n, out, f);
    else std::exclusive_scan(in, in + n, out, host::identity<T>(op), f);
  };
  switch (op) {
    case Op::add:
      if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;
        return run([](T a, T b) { return T(U(a) + U(b)); });
      } else {
        return run([](T a, T b) { return a + b; });
      }
    case Op::min: return run([](T a, T b) { return std::min(a, b); });
    case Op::max: return run([](T a, T b) { return std::max(a, b); });
    default: return run([op](T a, T b) { return host::apply(op, a, b); });
  }
}

// The plans of every algorithm (base with its algorithm and tile) for max_n elements; false (after a message)
// when one fails or none is available.
bool make_scan_plans(const Device& device, const ScanDesc& base, const std::vector<ScanDesc>& algorithms,
                     uint64_t max_n, PlanSet<Scan>& set) {
  for (const ScanDesc& variant : algorithms) {
    ScanDesc desc = base;
    desc.max_count = max_n;
    desc.algorithm = variant.algorithm;
    desc.tuning = variant.tuning;  // set only where the algorithm came with @WGxV[xK]
    // An algorithm the device refuses (e.g. chained_lookback on lavapipe) is skipped: say so, go on.
    const std::string what = std::string("scan ") + to_string(variant.algorithm);
    const Tuning& t = desc.tuning;
    auto added = set.add(Scan::create(const_cast<Device&>(device).context(), desc),
                         shape_label(t.workgroup_size, t.vectors_per_thread, t.lookback_windows), what);
    if (!added) {
      std::fprintf(stderr, "%s: %s\n", what.c_str(), added.error().message.c_str());
      return false;
    }
  }
  if (set.plans.empty()) {
    std::fprintf(stderr, "bench: no requested scan algorithm is available on this device\n");
    return false;
  }
  return true;
}

template <class T>
int bench_scan_typed(const Device& device, const ScanDesc& base, const std::vector<ScanDesc>& algorithms,
                     const std::vector<uint64_t>& sizes, int repeats, std::vector<ScanRow>& rows) {
  const uint64_t max_n = *std::max_element(sizes.begin(), sizes.end());
  const uint32_t elem = sizeof(T);
  const DataType type = base.type;
  const Op op = base.op;
  const ScanKind kind = base.kind;
  PlanSet<Scan> set;
  if (!make_scan_plans(device, base, algorithms, max_n, set)) return 1;
  const std::vector<Scan>& plans = set.plans;
  // Largest buffers first (DESIGN.md: NVIDIA placed late large allocations slower). The copy ceiling
  // runs on the same input and output buffers as the scans.
  const VkDeviceSize bytes = vector_bytes(max_n * elem);
  auto input = device.create_buffer(bytes);
  auto output = device.create_buffer(bytes);
  auto scratch = device.create_buffer(set.scratch_bytes);
  if (!input || !output || !scratch) {
    std::fprintf(stderr, "bench: buffer allocation of 2 x %llu bytes failed\n", (unsigned long long)bytes);
    return 1;
  }
  const std::vector<T> host = upload_random<T>(device, input.value(), max_n);
  if (host.empty()) return 1;
  const char* kind_s = to_string(kind);
  std::vector<T> got(max_n), expected(max_n);
  int failures = 0;
  for (uint64_t n : sizes) {
    progress("bench scan %s %s %s n=%s ...\n", kind_s, to_string(type), to_string(op), size_label(n).c_str());
    auto record_for = [&](const Scan& plan) -> Recorder {
      return [&, n](VkCommandBuffer cmd) {
        return plan.record(cmd, input->range(0, n * elem), output->range(0, n * elem), n, scratch->range());
      };
    };
    const auto ceilings = warm_then_ceilings(device, plans.front(), record_for(plans.front()), input.value(),
                                             output.value(), n * elem, repeats);
    if (!ceilings) return 1;
    add_ceiling_rows(rows, *ceilings, [&](const char* name, double us, double gbps, double of_read, double of_copy) {
      return ScanRow{"ceiling", name, "-", "u32", "-", n, us, gbps, of_read, of_copy, true};
    });
    const double moved = 2.0 * double(n) * elem;  // read + write
    // CPU row: std::inclusive_scan / std::exclusive_scan, one core.
    const double cpu = time_cpu([&] { cpu_scan(op, kind, host.data(), n, expected.data()); });
    rows.push_back({"scan", "cpu (std::" + std::string(kind_s) + "_scan)", kind_s, to_string(type), to_string(op), n,
                    cpu / 1e3, moved / cpu, ceilings->of_read(moved / cpu), ceilings->of_copy(moved / cpu), true});
    for (size_t k = 0; k < plans.size(); ++k) {
      const Scan& plan = plans[k];
      const auto t = warm_and_time(device, repeats, record_for(plan));
      plan.release_descriptor_sets();
      if (!t) {
        std::fprintf(stderr, "bench: scan %s: %s\n", to_string(plan.algorithm()), t.error().message.c_str());
        return 1;
      }
      if (auto fetched = device.download(output.value(), got.data(), n * elem); !fetched) {
        std::fprintf(stderr, "bench: download: %s\n", fetched.message().c_str());
        return 1;
      }
      std::string why;
      const bool ok =
          host::first_scan_mismatch(op, kind, host.data(), got.data(), n, plan.float_add_depth(n), why) == n;
      if (!ok) {
        ++failures;
        std::fprintf(stderr, "MISMATCH scan %s n=%llu: %s\n", to_string(plan.algorithm()), (unsigned long long)n,
                     why.c_str());
      }
      const double gbps = moved / t.value();
      const std::string note = scan_lookback_note(device, scratch.value(), plan);
      rows.push_back({"scan", set.labels[k], kind_s, to_string(type), to_string(op), n, t.value() / 1e3, gbps,
                      ceilings->of_read(gbps), ceilings->of_copy(gbps), ok, note});
    }
  }
  return failures ? 1 : 0;
}

}  // namespace

std::optional<Summary> demo_scan(const Device& device, uint64_t n, int repeats) {
  std::vector<ScanRow> rows;
  const ScanDesc automatic{};  // u32 add inclusive, automatic
  bench_scan_typed<uint32_t>(device, automatic, {automatic}, {n}, repeats, rows);
  return summarize(rows, "scan", "u32 inclusive add");
}

int run_bench_scan(std::vector<std::string> args) {
  std::string kind_s = "inclusive", type_s = "u32", op_s = "add";
  take_option(args, "--kind", kind_s);
  take_option(args, "--type", type_s);
  take_option(args, "--op", op_s);
  BenchArgs common;
  int rc = 0;
  auto device = open_bench(args, "vkprim bench scan", common, rc);
  if (!device) return rc;
  ScanDesc desc;
  std::vector<uint64_t> sizes;
  if (!parse(kind_s.c_str(), desc.kind) || !parse_type(type_s, desc.type) || !parse_op(op_s, desc.op) ||
      !parse_sizes(common.sizes, sizes)) {
    std::fprintf(stderr, "vkprim bench scan: bad --kind, --type, --op or --sizes\n");
    return 2;
  }
  std::vector<ScanDesc> algorithms;  // algorithm + tuning overrides ("chained_fallback@256x8x2")
  auto add = [&](ScanAlgorithm a, uint32_t wg, uint32_t vectors, uint32_t windows) {
    ScanDesc d;
    d.algorithm = a;
    d.tuning.workgroup_size = wg;
    d.tuning.vectors_per_thread = vectors;
    d.tuning.lookback_windows = windows;
    algorithms.push_back(d);
  };
  if (common.algorithm == "all") {
    for (int a = int(ScanAlgorithm::hillis_steele); a <= int(ScanAlgorithm::chained_fallback); ++a)
      add(ScanAlgorithm(a), 0, 0, 0);
  } else {
    // One name or a comma-separated list; NAME@WGxV[xK] overrides the chained scans' workgroup size,
    // vectors per thread and look-back windows per step (0 keeps the default).
    for (const AlgorithmChoice& choice : split_algorithms(common.algorithm)) {
      ScanAlgorithm a;
      if (!parse(choice.name.c_str(), a)) {
        std::fprintf(stderr, "vkprim bench scan: unknown scan algorithm '%s'\n", choice.name.c_str());
        return 2;
      }
      add(a, choice.workgroup_size, choice.per_thread, choice.tuning);
    }
  }
  print_bench_header(*device, common.repeats, "; GB/s count read + write");
  std::vector<ScanRow> rows;
  rc = host::with_type(desc.type, [&](auto t) {
    return bench_scan_typed<decltype(t)>(*device, desc, algorithms, sizes, common.repeats, rows);
  });
  print_scan_rows(rows);
  if (!common.json.empty()) write_scan_json(common.json, device->context().capabilities().device_name, rows);
  if (common.stats) print_pipeline_statistics(*device);
  return rc;
}

}  // namespace vkprim::tools
