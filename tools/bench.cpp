// `vkprim bench reduce`: GPU time from timestamps (median after warm-up), GB/s, ratios to the read and
// copy ceilings measured in the same run, a CPU row, and every result verified against the CPU.
#include <cstdio>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "bench_support.hpp"
#include "commands.hpp"
#include "demo.hpp"
#include "host_reference.hpp"
#include "scan_commands.hpp"
#include "by_key_commands.hpp"
#include "histogram_commands.hpp"
#include "segmented_commands.hpp"
#include "select_commands.hpp"
#include "sort_commands.hpp"
#include "topk_commands.hpp"
#include "vkprim/reduce.hpp"

namespace vkprim::tools {

namespace {

struct Row {
  std::string primitive, algorithm, type, op;
  uint64_t n = 0;
  double median_us = 0, gbps = 0, of_read = 0, of_copy = 0;
  bool verified = false;
};

void write_reduce_json(const std::string& path, const std::string& device, const std::vector<Row>& rows) {
  write_json(path, device, rows, [](const Row& r, JsonRow& json) {
    json.text("primitive", r.primitive).text("algorithm", r.algorithm).text("type", r.type).text("op", r.op);
    json.number("n", r.n).number("median_us", r.median_us).number("gbps", r.gbps).number("of_read", r.of_read);
    json.number("of_copy", r.of_copy).flag("verified", r.verified);
  });
}

// A plan to measure and its row label ("grid_stride" or, for tuning sweeps, "grid_stride[1056x4]").
struct Variant {
  ReduceDesc desc;
  std::string label;
};

// Whether a reduce's result is right: integers and float min/max exactly, float sums within the bound of
// their summation order (host::float_add_bound) around the exact sum.
template <class T>
bool reduce_result_ok(Op op, T got, T expected, const host::FloatSum<T>& exact, uint64_t n, const Reduce& plan) {
  if constexpr (std::is_floating_point_v<T>) {
    return op != Op::add ? host::same_bits(got, expected)
                         : std::fabs((long double)got - exact.exact) <= host::float_add_bound(exact, n, plan.sequential_run(n));
  } else {
    return got == expected;
  }
}

template <class T>
int bench_reduce_typed(const Device& device, const std::vector<Variant>& variants, const std::vector<uint64_t>& sizes,
                       int repeats, std::vector<Row>& rows) {
  const DataType type = variants.front().desc.type;
  const Op op = variants.front().desc.op;
  const uint64_t max_n = *std::max_element(sizes.begin(), sizes.end());
  const uint32_t elem = sizeof(T);
  std::vector<Reduce> plans;
  std::vector<std::string> labels;  // automatic rows carry the algorithm it resolved to, as the other benches'
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
    labels.push_back(v.desc.algorithm == ReduceAlgorithm::automatic ? to_string(plan->algorithm()) : v.label);
    plans.push_back(std::move(plan).value());
  }
  // Largest buffers first (see DESIGN.md: NVIDIA placed late large allocations slower).
  const VkDeviceSize bytes = std::max<VkDeviceSize>(max_n * elem, 16);
  auto input = device.create_buffer(vector_bytes(bytes));
  auto copy_dst = device.create_buffer(vector_bytes(bytes));
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
    progress("bench reduce %s %s n=%s ...\n", to_string(type), to_string(op), size_label(n).c_str());
    const auto ceilings = ceilings_for(device, input.value(), copy_dst.value(), n * elem, repeats);
    if (!ceilings) return 1;
    add_ceiling_rows(rows, *ceilings, [&](const char* name, double us, double gbps, double of_read, double of_copy) {
      return Row{"ceiling", name, "u32", "-", n, us, gbps, of_read, of_copy, true};
    });
    // CPU row: std::reduce on one core.
    const T expected = host::reduce<T>(op, host.data(), n);
    const double cpu = time_cpu([&] {
      volatile T sink = host::std_reduce<T>(op, host.data(), n);
      (void)sink;
    });
    const double cpu_gbps = double(n * elem) / cpu;
    rows.push_back({"reduce", "cpu (std::reduce)", to_string(type), to_string(op), n, cpu / 1e3, cpu_gbps,
                    ceilings->of_read(cpu_gbps), ceilings->of_copy(cpu_gbps), true});
    const auto exact = host::exact_sum(host.data(), n);
    for (size_t k = 0; k < plans.size(); ++k) {
      const Reduce& plan = plans[k];
      auto run = [&](VkCommandBuffer cmd) {
        return plan.record(cmd, input->range(0, n * elem), output->range(0, elem), n, scratch->range());
      };
      const auto t = warm_and_time(device, repeats, run);
      plan.release_descriptor_sets();  // runs done: return the sets they wrote (no push descriptors)
      if (!t) {
        std::fprintf(stderr, "bench: reduce %s: %s\n", to_string(plan.algorithm()), t.error().message.c_str());
        return 1;
      }
      T got{};
      if (auto fetched = device.download(output.value(), &got, elem); !fetched) {
        std::fprintf(stderr, "bench: download: %s\n", fetched.message().c_str());
        return 1;
      }
      const bool ok = reduce_result_ok<T>(op, got, expected, exact, n, plan);
      if (!ok) {
        ++failures;
        std::fprintf(stderr, "MISMATCH reduce %s n=%llu: got %.17g expected %.17g\n", to_string(plan.algorithm()),
                     (unsigned long long)n, double(got), double(expected));
      }
      const double gbps = double(n * elem) / t.value();
      rows.push_back({"reduce", labels[k], to_string(type), to_string(op), n, t.value() / 1e3, gbps,
                      ceilings->of_read(gbps), ceilings->of_copy(gbps), ok});
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

std::optional<Summary> demo_reduce(const Device& device, uint64_t n, int repeats) {
  std::vector<Row> rows;
  bench_reduce_typed<uint32_t>(device, {{ReduceDesc{DataType::u32, Op::add}, "automatic"}}, {n}, repeats, rows);
  return summarize(rows, "reduce", "u32 add");
}

int run_bench(std::vector<std::string> args) {
  if (!args.empty() && (args[0] == "reduce" || args[0] == "scan")) {
    std::vector<std::string> rest(args.begin() + 1, args.end());
    std::string op_name;
    if (take_option(rest, "--operator", op_name)) return run_bench_user(args[0] == "scan", rest, op_name);
  }
  if (!args.empty() && args[0] == "scan") return run_bench_scan({args.begin() + 1, args.end()});
  if (!args.empty() && args[0] == "select") return run_bench_select({args.begin() + 1, args.end()});
  if (!args.empty() && args[0] == "sort") return run_bench_sort({args.begin() + 1, args.end()});
  if (!args.empty() && args[0] == "scatter") return run_bench_scatter({args.begin() + 1, args.end()});
  if (!args.empty() && args[0] == "histogram") return run_bench_histogram({args.begin() + 1, args.end()});
  if (!args.empty() && args[0] == "topk") return run_bench_topk({args.begin() + 1, args.end()});
  if (!args.empty() && args[0] == "segmented_reduce") return run_bench_segmented({args.begin() + 1, args.end()});
  if (!args.empty() && args[0] == "segmented_sort") return run_bench_segmented_sort({args.begin() + 1, args.end()});
  if (!args.empty() && is_by_key_bench(args[0])) return run_bench_by_key(args[0], {args.begin() + 1, args.end()});
  if (args.empty() || args[0] != "reduce") {
    std::fprintf(stderr, "usage: vkprim bench reduce [options] (see vkprim --help)\n");
    return 2;
  }
  args.erase(args.begin());
  std::string type_s = "u32", op_s = "add", grid_s;
  take_option(args, "--type", type_s);
  take_option(args, "--op", op_s);
  take_option(args, "--grid", grid_s);  // grid_stride sweep: "1056x4,2048x4,..." (workgroups x vectors)
  BenchArgs common;
  int rc = 0;
  auto device = open_bench(args, "vkprim bench", common, rc);
  if (!device) return rc;
  const std::string& alg_s = common.algorithm;
  DataType type;
  Op op;
  std::vector<uint64_t> sizes;
  if (!parse_type(type_s, type) || !parse_op(op_s, op) || !parse_sizes(common.sizes, sizes)) {
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
    ReduceDesc desc{type, op, 0, ReduceAlgorithm::grid_stride};
    desc.tuning.max_workgroups = groups;
    desc.tuning.vectors_per_thread = vectors;
    variants.push_back({desc, "grid_stride[" + item + "]"});
    pos = comma + 1;
  }
  print_bench_header(*device, common.repeats);
  std::vector<Row> rows;
  rc = host::with_type(type, [&](auto t) {
    return bench_reduce_typed<decltype(t)>(*device, variants, sizes, common.repeats, rows);
  });
  print_rows(rows);
  if (!common.json.empty()) write_reduce_json(common.json, device->context().capabilities().device_name, rows);
  if (common.stats) print_pipeline_statistics(*device);
  return rc;
}

}  // namespace vkprim::tools
