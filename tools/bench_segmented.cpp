// `vkprim bench segmented_reduce`: one reduction per segment, segments laid end to end (CSR offsets: begin =
// offsets[0 .. S), end = offsets[1 .. S]), of one --segment-size each (the last one cut at n), or of power-law
// lengths. GPU time from timestamps (median after warm-up); GB/s count the input, the S + 1 u32 offsets and
// the S outputs (the fixed rows, which read no offsets, count them too, so every row and cub_bench's
// segmented_reduce compare by time); the ratios to the read and copy ceilings of the input measured in the
// same run; every result verified against the CPU.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "bench_support.hpp"
#include "commands.hpp"
#include "segmented_commands.hpp"
#include "vkprim/segmented_reduce.hpp"

namespace vkprim::tools {

namespace {

struct SegmentedRow {
  std::string algorithm, type, op, segments_label;
  uint64_t n = 0, segments = 0, segment_size = 0;  // segment_size 0: power-law lengths
  double median_us = 0, gbps = 0, of_read = 0, of_copy = 0;
  bool verified = false;
};

void write_segmented_json(const std::string& path, const std::string& device, const std::vector<SegmentedRow>& rows) {
  write_json(path, device, rows, [](const SegmentedRow& r, JsonRow& json) {
    json.text("primitive", r.algorithm.rfind("read", 0) == 0 || r.algorithm.rfind("copy", 0) == 0 ? "ceiling"
                                                                                                    : "segmented_reduce");
    json.text("algorithm", r.algorithm).text("type", r.type).text("op", r.op).text("segments_kind", r.segments_label);
    json.number("segment_size", r.segment_size).number("n", r.n).number("segments", r.segments);
    json.number("median_us", r.median_us).number("gbps", r.gbps).number("of_read", r.of_read);
    json.number("of_copy", r.of_copy).flag("verified", r.verified);
  });
}

void print_segmented_rows(const std::vector<SegmentedRow>& rows) {
  std::printf("%-20s %-4s %-7s %-10s %12s %10s %12s %10s %8s %8s %s\n", "algorithm", "type", "op", "segments", "n",
              "count", "median_us", "GB/s", "x_read", "x_copy", "verified");
  for (const SegmentedRow& r : rows)
    std::printf("%-20s %-4s %-7s %-10s %12s %10llu %12.2f %10.1f %8.3f %8.3f %s\n", r.algorithm.c_str(),
                r.type.c_str(), r.op.c_str(), r.segments_label.c_str(), size_label(r.n).c_str(),
                (unsigned long long)r.segments, r.median_us, r.gbps, r.of_read, r.of_copy, r.verified ? "yes" : "NO");
}

// CSR offsets of n elements: segments of `size` elements (the last cut at n), or power-law lengths from 0 to
// 2^16 (most a few elements, a few tens of thousands), cut at n.
std::vector<uint32_t> segment_offsets(uint64_t n, uint64_t size, std::mt19937_64& rng) {
  std::vector<uint32_t> offsets = {0};
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (uint64_t at = 0; at < n;) {
    const uint64_t len = size ? size : uint64_t(std::pow(65537.0, u(rng) * u(rng))) - 1;
    at = std::min(n, at + len);
    offsets.push_back(uint32_t(at));
  }
  return offsets;
}

// Integers and float min/max exactly; float add within the plan's documented bound.
template <class T>
bool same_result(const SegmentedReduce& plan, const T* x, uint64_t len, T got, T want) {
  if constexpr (std::is_floating_point_v<T>) {
    if (plan.desc().op == Op::add) {
      const auto exact = host::exact_sum(x, len);
      return std::fabs((long double)got - exact.exact) <= host::float_add_bound(exact, len, plan.sequential_run(len));
    }
  }
  return host::same_bits(got, want);
}

struct SegmentedRun {
  const Device& device;
  const SegmentedReduce& plan;
  const Buffer &input, &copy_dst, &offsets, &output, &scratch;
  int repeats;
};

// The rows of one size: the ceilings, the offsets plan and, for uniform segments that divide n, record_fixed.
template <class T>
int bench_one_size(const SegmentedRun& run, const std::vector<T>& host, uint64_t n, uint64_t size,
                   std::mt19937_64& rng, std::vector<SegmentedRow>& rows) {
  const uint32_t elem = sizeof(T);
  const Op op = run.plan.desc().op;
  const std::vector<uint32_t> offsets = segment_offsets(n, size, rng);
  const uint64_t segments = offsets.size() - 1;
  if (auto ok = run.device.upload(run.offsets, offsets.data(), offsets.size() * 4); !ok) {
    std::fprintf(stderr, "bench: upload: %s\n", ok.message().c_str());
    return 1;
  }
  std::vector<T> want(segments);
  for (uint64_t s = 0; s < segments; ++s) want[s] = host::reduce<T>(op, host.data() + offsets[s], offsets[s + 1] - offsets[s]);
  const std::string label = size ? size_label(size) : "power-law";
  progress("bench segmented_reduce %s %s n=%s segments %s ...\n", to_string(run.plan.desc().type), to_string(op),
           size_label(n).c_str(), label.c_str());
  const double bytes = double(n) * elem + double(segments + 1) * 4 + double(segments) * elem;
  const auto ceilings = ceilings_for(run.device, run.input, run.copy_dst, n * elem, run.repeats);
  if (!ceilings) return 1;
  add_ceiling_rows(rows, *ceilings, [&](const char* name, double us, double gbps, double of_read, double of_copy) {
    return SegmentedRow{name, "u32", "-", label, n, segments, size, us, gbps, of_read, of_copy, true};
  });
  const BufferRange in = run.input.range(0, n * elem), out = run.output.range(0, segments * elem);
  const BufferRange begin = run.offsets.range(0, segments * 4), end = run.offsets.range(4, segments * 4);
  std::vector<std::pair<std::string, Recorder>> plans = {{"offsets", [&](VkCommandBuffer cmd) {
    return run.plan.record(cmd, in, out, begin, end, segments, run.scratch.range());
  }}};
  if (size && n % size == 0)
    plans.push_back({"fixed", [&](VkCommandBuffer cmd) {
      return run.plan.record_fixed(cmd, in, out, size, segments, run.scratch.range());
    }});
  int failures = 0;
  std::vector<T> got(segments);
  for (const auto& [name, record] : plans) {
    const auto t = warm_and_time(run.device, run.repeats, record);
    run.plan.release_descriptor_sets();
    if (!t) {
      std::fprintf(stderr, "bench: segmented_reduce %s: %s\n", name.c_str(), t.error().message.c_str());
      return 1;
    }
    bool ok = bool(run.device.download(run.output, got.data(), segments * elem));
    for (uint64_t s = 0; ok && s < segments; ++s)
      ok = same_result(run.plan, host.data() + offsets[s], offsets[s + 1] - offsets[s], got[s], want[s]);
    if (!ok) {
      ++failures;
      std::fprintf(stderr, "MISMATCH segmented_reduce %s n=%llu segments %s\n", name.c_str(), (unsigned long long)n,
                   label.c_str());
    }
    const double gbps = bytes / t.value();
    rows.push_back({name, to_string(run.plan.desc().type), to_string(op), label, n, segments, size, t.value() / 1e3,
                    gbps, ceilings->of_read(gbps), ceilings->of_copy(gbps), ok});
  }
  return failures;
}

template <class T>
int bench_segmented_typed(const Device& device, SegmentedReduceDesc desc, const std::vector<uint64_t>& sizes,
                          const std::vector<uint64_t>& segment_sizes, int repeats, std::vector<SegmentedRow>& rows) {
  const uint64_t max_n = *std::max_element(sizes.begin(), sizes.end());
  const uint64_t smallest = *std::min_element(segment_sizes.begin(), segment_sizes.end());
  desc.max_count = max_n;
  desc.max_segments = smallest ? (max_n + smallest - 1) / smallest : max_n;
  auto plan = SegmentedReduce::create(const_cast<Device&>(device).context(), desc);
  if (!plan) {
    std::fprintf(stderr, "segmented_reduce: %s\n", plan.error().message.c_str());
    return 1;
  }
  // Largest buffers first (DESIGN.md).
  const uint32_t elem = sizeof(T);
  auto input = device.create_buffer(vector_bytes(max_n * elem));
  auto copy_dst = device.create_buffer(vector_bytes(max_n * elem));
  auto output = device.create_buffer(vector_bytes(desc.max_segments * elem));
  auto scratch = device.create_buffer(plan->scratch_requirements().size);
  auto offsets = device.create_buffer(vector_bytes((desc.max_segments + 1) * 4));
  if (!input || !copy_dst || !output || !scratch || !offsets) {
    std::fprintf(stderr, "bench: buffer allocation failed\n");
    return 1;
  }
  std::vector<T> host = upload_random<T>(device, input.value(), max_n);
  if (host.empty()) return 1;
  std::mt19937_64 rng(std::random_device{}());
  const SegmentedRun run{device, plan.value(), input.value(), copy_dst.value(), offsets.value(), output.value(),
                         scratch.value(), repeats};
  int failures = 0;
  for (uint64_t size : segment_sizes)
    for (uint64_t n : sizes) failures += bench_one_size<T>(run, host, n, size, rng, rows);
  return failures ? 1 : 0;
}

}  // namespace

int run_bench_segmented(std::vector<std::string> args) {
  std::string type_s = "u32", op_s = "add", size_s = "1,32,1024,2^20", kind_s = "uniform";
  take_option(args, "--type", type_s);
  take_option(args, "--op", op_s);
  take_option(args, "--segment-size", size_s);
  take_option(args, "--segments", kind_s);
  BenchArgs common;
  int rc = 0;
  auto device = open_bench(args, "vkprim bench segmented_reduce", common, rc);
  if (!device) return rc;
  SegmentedReduceDesc desc;
  std::vector<uint64_t> sizes, segment_sizes;
  if (!parse_type(type_s, desc.type) || !parse_op(op_s, desc.op) || !parse_sizes(common.sizes, sizes) ||
      !parse_sizes(size_s, segment_sizes) || (kind_s != "uniform" && kind_s != "power-law") ||
      common.algorithm != "automatic") {
    std::fprintf(stderr, "vkprim bench segmented_reduce: bad --type, --op, --sizes, --segment-size or --segments "
                         "(uniform or power-law), or an --algorithm (it has one)\n");
    return 2;
  }
  if (kind_s == "power-law") segment_sizes = {0};
  print_bench_header(*device, common.repeats,
                     "; GB/s count input + (segments + 1) u32 offsets + outputs; fixed: record_fixed, same bytes");
  std::vector<SegmentedRow> rows;
  rc = host::with_type(desc.type, [&](auto t) {
    return bench_segmented_typed<decltype(t)>(*device, desc, sizes, segment_sizes, common.repeats, rows);
  });
  print_segmented_rows(rows);
  if (!common.json.empty()) write_segmented_json(common.json, device->context().capabilities().device_name, rows);
  if (common.stats) print_pipeline_statistics(*device);
  return rc;
}

}  // namespace vkprim::tools
