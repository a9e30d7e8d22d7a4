// `vkprim bench reduce`: GPU time from timestamps (median after warm-up), GB/s, ratios to the read and
// copy ceilings measured in the same run, a CPU row, and every result verified against the CPU.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "bench_support.hpp"
#include "commands.hpp"
#include "host_reference.hpp"
#include "scan_commands.hpp"
#include "select_commands.hpp"
#include "sort_commands.hpp"
#include "vkprim/reduce.hpp"

namespace vkprim::tools {

namespace {

struct Row {
  std::string primitive, algorithm, type, op;
  uint64_t n = 0;
  double median_us = 0, gbps = 0, of_read = 0, of_copy = 0;
  bool verified = false;
};

void write_json(const std::string& path, const std::string& device, const std::vector<Row>& rows) {
  std::ofstream out(path);
  out << "{\"device\": \"" << device << "\", \"rows\": [\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    out << "  {\"primitive\": \"" << r.primitive << "\", \"algorithm\": \"" << r.algorithm << "\", \"type\": \""
        << r.type << "\", \"op\": \"" << r.op << "\", \"n\": " << r.n << ", \"median_us\": " << r.median_us
        << ", \"gbps\": " << r.gbps << ", \"of_read\": " << r.of_read << ", \"of_copy\": " << r.of_copy
        << ", \"verified\": " << (r.verified ? "true" : "false") << "}" << (i + 1 < rows.size() ? "," : "") << "\n";
  }
  out << "]}\n";
}

// A plan to measure and its row label ("grid_stride" or, for tuning sweeps, "grid_stride[1056x4]").
struct Variant {
  ReduceDesc desc;
  std::string label;
};

template <class T>
int bench_reduce_typed(const Device& device, const std::vector<Variant>& variants, const std::vector<uint64_t>& sizes,
                       int repeats, std::vector<Row>& rows) {
  const DataType type = variants.front().desc.type;
  const Op op = variants.front().desc.op;
  const uint64_t max_n = *std::max_element(sizes.begin(), sizes.end());
  const uint32_t elem = sizeof(T);
  std::vector<Reduce> plans;
  VkDeviceSize scratch_bytes = 16;
  for (const Variant& v : variants) {
    ReduceDesc desc = v.desc;
    desc.max_count = max_n;
    auto plan = Reduce::create(const_cast<Device&>(device).context(), desc);
    if (!plan) {
      std::fprintf(stderr, "reduce %s: %s\n", v.label.c_str(), plan.error().message.c_str());
      return 1;
    }
    scratch_bytes = std::max(scratch_bytes, plan->scratch_requirements().size);
    plans.push_back(std::move(plan).value());
  }
  // Largest buffers first (see DESIGN.md: NVIDIA placed late large allocations slower).
  const VkDeviceSize bytes = std::max<VkDeviceSize>(max_n * elem, 16);
  auto input = device.create_buffer((bytes + 15) / 16 * 16);
  auto copy_dst = device.create_buffer((bytes + 15) / 16 * 16);
  auto output = device.create_buffer(64);
  auto scratch = device.create_buffer(scratch_bytes);
  if (!input || !copy_dst || !output || !scratch) {
    std::fprintf(stderr, "bench: buffer allocation of %llu bytes failed\n", (unsigned long long)bytes);
    return 1;
  }
  const std::vector<T> host = upload_random<T>(device, input.value(), max_n);
  if (host.empty()) return 1;
  int failures = 0;
  for (uint64_t n : sizes) {
    std::fprintf(stderr, "bench reduce %s %s n=%s ...\n", to_string(type), to_string(op), size_label(n).c_str());
    const uint64_t ceiling_bytes = std::max<uint64_t>(n * elem / 16 * 16, 16);
    auto ceilings = measure_ceilings(device, input.value(), copy_dst.value(), ceiling_bytes, repeats);
    if (!ceilings) {
      std::fprintf(stderr, "bench: ceilings: %s\n", ceilings.error().message.c_str());
      return 1;
    }
    const double read = ceilings->read_gbps, copy = ceilings->copy_gbps;
    rows.push_back({"ceiling", "read (uvec4 shader)", "u32", "-", n, double(ceiling_bytes) / read / 1e3, read, 1.0,
                    read / copy, true});
    rows.push_back({"ceiling", "copy (uvec4 shader)", "u32", "-", n, 2.0 * double(ceiling_bytes) / copy / 1e3, copy,
                    copy / read, 1.0, true});
    // CPU row: std::reduce on one core.
    std::vector<double> cpu_ns;
    const T expected = host::reduce<T>(op, host.data(), n);
    for (int i = 0; i < 3; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      volatile T sink = host::std_reduce<T>(op, host.data(), n);
      (void)sink;
      cpu_ns.push_back(double(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count()));
    }
    const double cpu = median(cpu_ns);
    rows.push_back({"reduce", "cpu (std::reduce)", to_string(type), to_string(op), n, cpu / 1e3, double(n * elem) / cpu,
                    double(n * elem) / cpu / read, double(n * elem) / cpu / copy, true});
    const auto exact = host::exact_sum(host.data(), n);
    for (size_t k = 0; k < plans.size(); ++k) {
      const Reduce& plan = plans[k];
      auto run = [&](VkCommandBuffer cmd) {
        return plan.record(cmd, input->range(0, n * elem), output->range(0, elem), n, scratch->range());
      };
      auto warmed = warm_up(device, run);
      auto ns = warmed ? time_gpu(device, repeats, run) : Result<std::vector<double>>(warmed.error());
      if (!ns) {
        std::fprintf(stderr, "bench: reduce %s: %s\n", to_string(plan.algorithm()), ns.error().message.c_str());
        return 1;
      }
      T got{};
      if (auto fetched = device.download(output.value(), &got, elem); !fetched) {
        std::fprintf(stderr, "bench: download: %s\n", fetched.message().c_str());
        return 1;
      }
      bool ok;
      if constexpr (std::is_floating_point_v<T>) {
        ok = op != Op::add ? host::same_bits(got, expected)
                           : std::fabs((long double)got - exact.exact) <=
                                 host::float_add_bound(exact, n, plan.sequential_run(n));
      } else {
        ok = got == expected;
      }
      if (!ok) {
        ++failures;
        std::fprintf(stderr, "MISMATCH reduce %s n=%llu: got %.17g expected %.17g\n", to_string(plan.algorithm()),
                     (unsigned long long)n, double(got), double(expected));
      }
      const double t = median(ns.value());
      const double gbps = double(n * elem) / t;
      rows.push_back({"reduce", variants[k].label, to_string(type), to_string(op), n, t / 1e3, gbps,
                      gbps / read, gbps / copy, ok});
    }
  }
  return failures ? 1 : 0;
}

void print_rows(const std::vector<Row>& rows) {
  std::printf("%-10s %-26s %-4s %-7s %12s %12s %10s %8s %8s %8s %s\n", "primitive", "algorithm", "type", "op", "n",
              "median_us", "GB/s", "x_read", "x_copy", "x_prev", "verified");
  const Row* prev = nullptr;
  for (const Row& r : rows) {
    char step[16] = "-";
    if (prev && r.primitive == "reduce" && prev->primitive == "reduce" && prev->n == r.n &&
        prev->algorithm.rfind("cpu", 0) != 0)
      std::snprintf(step, sizeof(step), "%.2f", prev->median_us / r.median_us);
    std::printf("%-10s %-26s %-4s %-7s %12s %12.2f %10.1f %8.3f %8.3f %8s %s\n", r.primitive.c_str(),
                r.algorithm.c_str(), r.type.c_str(), r.op.c_str(), size_label(r.n).c_str(), r.median_us, r.gbps,
                r.of_read, r.of_copy, step, r.verified ? "yes" : "NO");
    prev = &r;
  }
}

}  // namespace

int run_bench(std::vector<std::string> args) {
  if (!args.empty() && args[0] == "scan") return run_bench_scan({args.begin() + 1, args.end()});
  if (!args.empty() && args[0] == "select") return run_bench_select({args.begin() + 1, args.end()});
  if (!args.empty() && args[0] == "sort") return run_bench_sort({args.begin() + 1, args.end()});
  if (args.empty() || args[0] != "reduce") {
    std::fprintf(stderr, "usage: vkprim bench reduce [options] (see vkprim --help)\n");
    return 2;
  }
  args.erase(args.begin());
  std::string type_s = "u32", op_s = "add", alg_s = "automatic", sizes_s = "2^16..2^24", repeat_s = "20", json, grid_s;
  take_option(args, "--type", type_s);
  take_option(args, "--op", op_s);
  take_option(args, "--algorithm", alg_s);
  take_option(args, "--sizes", sizes_s);
  take_option(args, "--repeat", repeat_s);
  take_option(args, "--json", json);
  take_option(args, "--grid", grid_s);  // grid_stride sweep: "1056x4,2048x4,..." (workgroups x vectors)
  auto device = open_device(args);
  if (!device) return 1;
  if (!args.empty()) {
    std::fprintf(stderr, "vkprim bench: unknown argument '%s'\n", args[0].c_str());
    return 2;
  }
  DataType type;
  Op op;
  std::vector<uint64_t> sizes;
  if (!parse_type(type_s, type) || !parse_op(op_s, op) || !parse_sizes(sizes_s, sizes)) {
    std::fprintf(stderr, "vkprim bench: bad --type, --op or --sizes\n");
    return 2;
  }
  std::vector<ReduceAlgorithm> algorithms;
  if (alg_s == "all") {
    for (int a = int(ReduceAlgorithm::interleaved_divergent); a <= int(ReduceAlgorithm::grid_stride); ++a)
      algorithms.push_back(ReduceAlgorithm(a));
  } else {
    ReduceAlgorithm a;
    if (!parse(alg_s.c_str(), a)) {
      std::fprintf(stderr, "vkprim bench: unknown reduce algorithm '%s'\n", alg_s.c_str());
      return 2;
    }
    algorithms.push_back(a);
  }
  std::vector<Variant> variants;
  for (ReduceAlgorithm a : algorithms) variants.push_back({ReduceDesc{type, op, 0, a}, to_string(a)});
  for (size_t pos = 0; pos < grid_s.size();) {
    size_t comma = grid_s.find(',', pos);
    if (comma == std::string::npos) comma = grid_s.size();
    const std::string item = grid_s.substr(pos, comma - pos);
    unsigned groups = 0, vectors = 0;
    if (std::sscanf(item.c_str(), "%ux%u", &groups, &vectors) != 2 || !groups || !vectors) {
      std::fprintf(stderr, "vkprim bench: bad --grid entry '%s' (want GROUPSxVECTORS)\n", item.c_str());
      return 2;
    }
    ReduceDesc desc{type, op, 0, ReduceAlgorithm::grid_stride, groups, vectors};
    variants.push_back({desc, "grid_stride[" + item + "]"});
    pos = comma + 1;
  }
  const int repeats = std::max(10, std::atoi(repeat_s.c_str()));
  const Capabilities& caps = device->context().capabilities();
  std::printf("device: %s, driver %s %s; median of %d timed runs after ~200 ms of warm-up\n", caps.device_name.c_str(),
              caps.driver_name.c_str(), caps.driver_info.c_str(), repeats);
  std::vector<Row> rows;
  const int rc = host::with_type(type, [&](auto t) {
    return bench_reduce_typed<decltype(t)>(*device, variants, sizes, repeats, rows);
  });
  print_rows(rows);
  if (!json.empty()) write_json(json, caps.device_name, rows);
  return rc;
}

}  // namespace vkprim::tools
