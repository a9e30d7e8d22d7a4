// `vkprim bench scan`: GPU time from timestamps (median after warm-up), GB/s counting read + write, the
// ratio to the copy ceiling measured on the same buffers in the same run, a CPU row
// (std::inclusive_scan / std::exclusive_scan), and every result verified against the CPU.
// Warm-up is timed, not counted: each plan first runs for about 200 ms, and so does the first plan
// before the ceilings. On an H200 a scan measured right after the short ceiling runs was 15% slower than
// the same scan measured after other work (clocks still ramping); with the timed warm-up the order in
// which plans run no longer matters.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <type_traits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "bench_support.hpp"
#include "commands.hpp"
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
  std::ofstream out(path);
  out << "{\"device\": \"" << device << "\", \"rows\": [\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const ScanRow& r = rows[i];
    out << "  {\"primitive\": \"" << r.primitive << "\", \"algorithm\": \"" << r.algorithm << "\", \"kind\": \""
        << r.kind << "\", \"type\": \"" << r.type << "\", \"op\": \"" << r.op << "\", \"n\": " << r.n
        << ", \"median_us\": " << r.median_us << ", \"gbps\": " << r.gbps << ", \"of_read\": " << r.of_read
        << ", \"of_copy\": " << r.of_copy << ", \"verified\": " << (r.verified ? "true" : "false")
        << ", \"note\": \"" << r.note << "\"}"
        << (i + 1 < rows.size() ? "," : "") << "\n";
  }
  out << "]}\n";
}

void print_scan_rows(const std::vector<ScanRow>& rows) {
  std::printf("%-9s %-26s %-9s %-4s %-7s %8s %12s %10s %8s %8s %s\n", "primitive", "algorithm", "kind", "type", "op",
              "n", "median_us", "GB/s", "x_read", "x_copy", "verified  notes");
  for (const ScanRow& r : rows)
    std::printf("%-9s %-26s %-9s %-4s %-7s %8s %12.2f %10.1f %8.3f %8.3f %s\n", r.primitive.c_str(),
                r.algorithm.c_str(), r.kind.c_str(), r.type.c_str(), r.op.c_str(), size_label(r.n).c_str(),
                r.median_us, r.gbps, r.of_read, r.of_copy, (r.verified ? std::string("yes       ") + r.note : std::string("NO        ") + r.note).c_str());
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

template <class T>
int bench_scan_typed(const Device& device, const ScanDesc& base, const std::vector<ScanDesc>& algorithms,
                     const std::vector<uint64_t>& sizes, int repeats, std::vector<ScanRow>& rows) {
  const uint64_t max_n = *std::max_element(sizes.begin(), sizes.end());
  const uint32_t elem = sizeof(T);
  const DataType type = base.type;
  const Op op = base.op;
  const ScanKind kind = base.kind;
  std::vector<Scan> plans;
  VkDeviceSize scratch_bytes = 16;
  std::vector<std::string> labels;
  for (const ScanDesc& variant : algorithms) {
    ScanDesc desc = base;
    desc.max_count = max_n;
    desc.algorithm = variant.algorithm;
    desc.workgroup_size = variant.workgroup_size;
    desc.vectors_per_thread = variant.vectors_per_thread;
    auto plan = Scan::create(const_cast<Device&>(device).context(), desc);
    if (!plan && plan.status() == Status::unsupported) {  // e.g. chained_lookback on lavapipe: say so, go on
      std::fprintf(stderr, "scan %s skipped: %s\n", to_string(variant.algorithm), plan.error().message.c_str());
      continue;
    }
    if (!plan) {
      std::fprintf(stderr, "scan %s: %s\n", to_string(variant.algorithm), plan.error().message.c_str());
      return 1;
    }
    std::string label = to_string(plan->algorithm());
    if (desc.workgroup_size || desc.vectors_per_thread)
      label += "@" + std::to_string(desc.workgroup_size) + "x" + std::to_string(desc.vectors_per_thread);
    labels.push_back(label);
    scratch_bytes = std::max(scratch_bytes, plan->scratch_requirements().size);
    plans.push_back(std::move(plan).value());
  }
  if (plans.empty()) {
    std::fprintf(stderr, "bench: no requested scan algorithm is available on this device\n");
    return 1;
  }
  // Largest buffers first (DESIGN.md: NVIDIA placed late large allocations slower). The copy ceiling
  // runs on the same input and output buffers as the scans.
  const VkDeviceSize bytes = (std::max<VkDeviceSize>(max_n * elem, 16) + 15) / 16 * 16;
  auto input = device.create_buffer(bytes);
  auto output = device.create_buffer(bytes);
  auto scratch = device.create_buffer(scratch_bytes);
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
    std::fprintf(stderr, "bench scan %s %s %s n=%s ...\n", kind_s, to_string(type), to_string(op),
                 size_label(n).c_str());
    const uint64_t ceiling_bytes = std::max<uint64_t>(n * elem / 16 * 16, 16);
    auto record_for = [&](const Scan& plan) -> Recorder {
      return [&, n](VkCommandBuffer cmd) {
        return plan.record(cmd, input->range(0, n * elem), output->range(0, n * elem), n, scratch->range());
      };
    };
    if (auto warmed = warm_up(device, record_for(plans.front())); !warmed) {
      std::fprintf(stderr, "bench: warm-up: %s\n", warmed.message().c_str());
      return 1;
    }
    auto ceilings = measure_ceilings(device, input.value(), output.value(), ceiling_bytes, repeats);
    if (!ceilings) {
      std::fprintf(stderr, "bench: ceilings: %s\n", ceilings.error().message.c_str());
      return 1;
    }
    const double read = ceilings->read_gbps, copy = ceilings->copy_gbps;
    rows.push_back({"ceiling", "read (uvec4 shader)", "-", "u32", "-", n, double(ceiling_bytes) / read / 1e3, read,
                    1.0, read / copy, true});
    rows.push_back({"ceiling", "copy (uvec4 shader)", "-", "u32", "-", n, 2.0 * double(ceiling_bytes) / copy / 1e3,
                    copy, copy / read, 1.0, true});
    const double moved = 2.0 * double(n) * elem;  // read + write
    // CPU row: std::inclusive_scan / std::exclusive_scan, one core.
    std::vector<double> cpu_ns;
    for (int i = 0; i < 3; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      cpu_scan(op, kind, host.data(), n, expected.data());
      cpu_ns.push_back(double(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count()));
    }
    const double cpu = median(cpu_ns);
    rows.push_back({"scan", "cpu (std::" + std::string(kind_s) + "_scan)", kind_s, to_string(type), to_string(op), n,
                    cpu / 1e3, moved / cpu, moved / cpu / read, moved / cpu / copy, true});
    for (size_t k = 0; k < plans.size(); ++k) {
      const Scan& plan = plans[k];
      const Recorder run = record_for(plan);
      auto warmed = warm_up(device, run);
      auto ns = warmed ? time_gpu(device, repeats, run) : Result<std::vector<double>>(warmed.error());
      if (!ns) {
        std::fprintf(stderr, "bench: scan %s: %s\n", to_string(plan.algorithm()), ns.error().message.c_str());
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
      const double t = median(ns.value());
      const double gbps = moved / t;
      std::string note;
      if (plan.algorithm() == ScanAlgorithm::chained_lookback || plan.algorithm() == ScanAlgorithm::chained_fallback) {
        uint32_t stats[4] = {};
        if (device.download(scratch.value(), stats, sizeof(stats), plan.statistics_offset()))
          note = "tiles=" + std::to_string(stats[0]) + " fallbacks=" + std::to_string(stats[1]) +
                 " steps/tile=" + std::to_string(stats[0] ? double(stats[2]) / stats[0] : 0.0).substr(0, 4) +
                 " max_depth=" + std::to_string(stats[3]);
      }
      rows.push_back({"scan", labels[k], kind_s, to_string(type), to_string(op), n, t / 1e3, gbps,
                      gbps / read, gbps / copy, ok, note});
    }
  }
  return failures ? 1 : 0;
}

}  // namespace

int run_bench_scan(std::vector<std::string> args) {
  std::string kind_s = "inclusive", type_s = "u32", op_s = "add", alg_s = "automatic", sizes_s = "2^16..2^24",
              repeat_s = "20", json;
  take_option(args, "--kind", kind_s);
  take_option(args, "--type", type_s);
  take_option(args, "--op", op_s);
  take_option(args, "--algorithm", alg_s);
  take_option(args, "--sizes", sizes_s);
  take_option(args, "--repeat", repeat_s);
  take_option(args, "--json", json);
  auto device = open_device(args);
  if (!device) return 1;
  if (!args.empty()) {
    std::fprintf(stderr, "vkprim bench scan: unknown argument '%s'\n", args[0].c_str());
    return 2;
  }
  ScanDesc desc;
  std::vector<uint64_t> sizes;
  if (!parse(kind_s.c_str(), desc.kind) || !parse_type(type_s, desc.type) || !parse_op(op_s, desc.op) ||
      !parse_sizes(sizes_s, sizes)) {
    std::fprintf(stderr, "vkprim bench scan: bad --kind, --type, --op or --sizes\n");
    return 2;
  }
  std::vector<ScanDesc> algorithms;  // algorithm + workgroup-size override ("chained_fallback@512")
  auto add = [&](ScanAlgorithm a, uint32_t wg, uint32_t vectors) {
    ScanDesc d;
    d.algorithm = a;
    d.workgroup_size = wg;
    d.vectors_per_thread = vectors;
    algorithms.push_back(d);
  };
  if (alg_s == "all") {
    for (int a = int(ScanAlgorithm::hillis_steele); a <= int(ScanAlgorithm::chained_fallback); ++a)
      add(ScanAlgorithm(a), 0, 0);
  } else {
    // One name or a comma-separated list; NAME@WGxV overrides the chained scans' workgroup size and
    // vectors per thread (0 keeps the default).
    for (size_t pos = 0; pos <= alg_s.size();) {
      size_t comma = alg_s.find(',', pos);
      if (comma == std::string::npos) comma = alg_s.size();
      std::string name = alg_s.substr(pos, comma - pos);
      uint32_t wg = 0, vectors = 0;
      if (const size_t at = name.find('@'); at != std::string::npos) {
        std::sscanf(name.c_str() + at + 1, "%ux%u", &wg, &vectors);
        name.resize(at);
      }
      ScanAlgorithm a;
      if (!parse(name.c_str(), a)) {
        std::fprintf(stderr, "vkprim bench scan: unknown scan algorithm '%s'\n", name.c_str());
        return 2;
      }
      add(a, wg, vectors);
      pos = comma + 1;
    }
  }
  const int repeats = std::max(10, std::atoi(repeat_s.c_str()));
  const Capabilities& caps = device->context().capabilities();
  std::printf("device: %s, driver %s %s; median of %d timed runs after ~200 ms of warm-up; GB/s count read + write\n",
              caps.device_name.c_str(), caps.driver_name.c_str(), caps.driver_info.c_str(), repeats);
  std::vector<ScanRow> rows;
  const int rc = host::with_type(desc.type, [&](auto t) {
    return bench_scan_typed<decltype(t)>(*device, desc, algorithms, sizes, repeats, rows);
  });
  print_scan_rows(rows);
  if (!json.empty()) write_scan_json(json, caps.device_name, rows);
  return rc;
}

}  // namespace vkprim::tools
