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
  std::printf("%-28s %-4s %-7s %-10s %12s %10s %12s %10s %8s %8s %s\n", "algorithm", "type", "op", "segments", "n",
              "count", "median_us", "GB/s", "x_read", "x_copy", "verified");
  for (const SegmentedRow& r : rows)
    std::printf("%-28s %-4s %-7s %-10s %12s %10llu %12.2f %10.1f %8.3f %8.3f %s\n", r.algorithm.c_str(),
                r.type.c_str(), r.op.c_str(), r.segments_label.c_str(), size_label(r.n).c_str(),
                (unsigned long long)r.segments, r.median_us, r.gbps, r.of_read, r.of_copy, r.verified ? "yes" : "NO");
}

// The plans measured (one per --algorithm shape and --thresholds triple), their row-label suffixes, and the
// buffers they share.
struct SegmentedRun {
  const Device& device;
  const std::vector<SegmentedReduce>& plans;
  const std::vector<std::string>& labels;
  const Buffer &input, &copy_dst, &offsets, &output, &scratch;
  int repeats;
};

// The rows of one size: the ceilings, and each plan's record with the offsets and, for uniform segments that
// divide n, its record_fixed.
template <class T>
int bench_one_size(const SegmentedRun& run, const std::vector<T>& host, uint64_t n, uint64_t size,
                   std::mt19937_64& rng, std::vector<SegmentedRow>& rows) {
  const uint32_t elem = sizeof(T);
  const SegmentedReduce& first = run.plans.front();
  const Op op = first.desc().op;
  const std::vector<uint32_t> offsets = segment_offsets(n, size, 65537.0, 0, rng);  // power-law: 0 to 2^16
  const uint64_t segments = offsets.size() - 1;
  if (auto ok = run.device.upload(run.offsets, offsets.data(), offsets.size() * 4); !ok) {
    std::fprintf(stderr, "bench: upload: %s\n", ok.message().c_str());
    return 1;
  }
  std::vector<T> want(segments);
  for (uint64_t s = 0; s < segments; ++s) want[s] = host::reduce<T>(op, host.data() + offsets[s], offsets[s + 1] - offsets[s]);
  const std::string label = size ? size_label(size) : "power-law";
  progress("bench segmented_reduce %s %s n=%s segments %s ...\n", to_string(first.desc().type), to_string(op),
           size_label(n).c_str(), label.c_str());
  const double bytes = double(n) * elem + double(segments + 1) * 4 + double(segments) * elem;
  const auto ceilings = ceilings_for(run.device, run.input, run.copy_dst, n * elem, run.repeats);
  if (!ceilings) return 1;
  add_ceiling_rows(rows, *ceilings, [&](const char* name, double us, double gbps, double of_read, double of_copy) {
    return SegmentedRow{name, "u32", "-", label, n, segments, size, us, gbps, of_read, of_copy, true};
  });
  const BufferRange in = run.input.range(0, n * elem), out = run.output.range(0, segments * elem);
  const BufferRange begin = run.offsets.range(0, segments * 4), end = run.offsets.range(4, segments * 4);
  struct Timed {
    const SegmentedReduce* plan;
    std::string name;
    Recorder record;
  };
  std::vector<Timed> timed;
  for (size_t k = 0; k < run.plans.size(); ++k) {
    const SegmentedReduce& plan = run.plans[k];
    timed.push_back({&plan, "offsets" + run.labels[k], [&plan, &run, in, out, begin, end, segments](VkCommandBuffer cmd) {
                       return plan.record(cmd, in, out, begin, end, segments, run.scratch.range());
                     }});
    if (size && n % size == 0)
      timed.push_back({&plan, "fixed" + run.labels[k], [&plan, &run, in, out, size, segments](VkCommandBuffer cmd) {
                         return plan.record_fixed(cmd, in, out, size, segments, run.scratch.range());
                       }});
  }
  int failures = 0;
  std::vector<T> got(segments);
  for (const auto& [plan, name, record] : timed) {
    const auto t = warm_and_time(run.device, run.repeats, record);
    plan->release_descriptor_sets();
    if (!t) {
      std::fprintf(stderr, "bench: segmented_reduce %s: %s\n", name.c_str(), t.error().message.c_str());
      return 1;
    }
    bool ok = bool(run.device.download(run.output, got.data(), segments * elem));
    for (uint64_t s = 0; ok && s < segments; ++s)
      ok = same_result(*plan, host.data() + offsets[s], offsets[s + 1] - offsets[s], got[s], want[s]);
    if (!ok) {
      ++failures;
      std::fprintf(stderr, "MISMATCH segmented_reduce %s n=%llu segments %s\n", name.c_str(), (unsigned long long)n,
                   label.c_str());
    }
    const double gbps = bytes / t.value();
    rows.push_back({name, to_string(first.desc().type), to_string(op), label, n, segments, size, t.value() / 1e3,
                    gbps, ceilings->of_read(gbps), ceilings->of_copy(gbps), ok});
  }
  return failures;
}

// A plan to measure and its row-label suffix ("" for the defaults, else "@WGxV" and "[T:H:C]").
struct Variant {
  SegmentedReduceDesc desc;
  std::string label;
};

template <class T>
int bench_segmented_typed(const Device& device, const std::vector<Variant>& variants, const std::vector<uint64_t>& sizes,
                          const std::vector<uint64_t>& segment_sizes, int repeats, std::vector<SegmentedRow>& rows) {
  const uint64_t max_n = *std::max_element(sizes.begin(), sizes.end());
  const uint64_t smallest = *std::min_element(segment_sizes.begin(), segment_sizes.end());
  const uint64_t max_segments = smallest ? (max_n + smallest - 1) / smallest : max_n;
  std::vector<SegmentedReduce> plans;
  std::vector<std::string> labels;
  VkDeviceSize scratch_bytes = 16;
  for (const Variant& v : variants) {
    SegmentedReduceDesc desc = v.desc;
    desc.max_count = max_n;
    desc.max_segments = max_segments;
    auto plan = SegmentedReduce::create(const_cast<Device&>(device).context(), desc);
    if (!plan) {
      std::fprintf(stderr, "segmented_reduce%s: %s\n", v.label.c_str(), plan.error().message.c_str());
      return 1;
    }
    scratch_bytes = std::max(scratch_bytes, plan->scratch_requirements().size);
    plans.push_back(std::move(plan).value());
    labels.push_back(v.label);
  }
  // Largest buffers first (DESIGN.md).
  const uint32_t elem = sizeof(T);
  auto input = device.create_buffer(vector_bytes(max_n * elem));
  auto copy_dst = device.create_buffer(vector_bytes(max_n * elem));
  auto output = device.create_buffer(vector_bytes(max_segments * elem));
  auto scratch = device.create_buffer(scratch_bytes);
  auto offsets = device.create_buffer(vector_bytes((max_segments + 1) * 4));
  if (!input || !copy_dst || !output || !scratch || !offsets) {
    std::fprintf(stderr, "bench: buffer allocation failed\n");
    return 1;
  }
  std::vector<T> host = upload_random<T>(device, input.value(), max_n);
  if (host.empty()) return 1;
  std::mt19937_64 rng(std::random_device{}());
  const SegmentedRun run{device,         plans,          labels,         input.value(), copy_dst.value(),
                         offsets.value(), output.value(), scratch.value(), repeats};
  int failures = 0;
  for (uint64_t size : segment_sizes)
    for (uint64_t n : sizes) failures += bench_one_size<T>(run, host, n, size, rng, rows);
  return failures ? 1 : 0;
}

}  // namespace

namespace {

// One variant per --algorithm shape (automatic or automatic@WGxV[xG], G the ranges grid) and --thresholds
// triple (T:H:C, 0 keeping the plan's): their cross product. False on a malformed entry.
bool segmented_variants(const SegmentedReduceDesc& base, const std::string& shapes, const std::string& thresholds,
                        std::vector<Variant>& out) {
  std::vector<std::pair<SegmentThresholds, std::string>> triples;
  for (size_t pos = 0; pos <= thresholds.size() && !thresholds.empty();) {
    const size_t comma = std::min(thresholds.find(',', pos), thresholds.size());
    const std::string item = thresholds.substr(pos, comma - pos);
    unsigned t = 0, h = 0, c = 0;
    if (std::sscanf(item.c_str(), "%u:%u:%u", &t, &h, &c) != 3) return false;
    triples.push_back({SegmentThresholds{t, h, c}, "[" + item + "]"});
    pos = comma + 1;
  }
  if (triples.empty()) triples.push_back({SegmentThresholds{}, ""});
  for (const AlgorithmChoice& choice : split_algorithms(shapes)) {
    if (choice.name != "automatic") return false;
    for (const auto& [t, label] : triples) {
      Variant v{base, choice.shape + label};
      v.desc.tuning = {choice.workgroup_size, 0, choice.per_thread, choice.tuning, 0};
      v.desc.thresholds = t;
      out.push_back(v);
    }
  }
  return !out.empty();
}

}  // namespace

int run_bench_segmented(std::vector<std::string> args) {
  std::string type_s = "u32", op_s = "add", size_s = "1,32,1024,2^20", kind_s = "uniform", thresholds_s;
  take_option(args, "--type", type_s);
  take_option(args, "--op", op_s);
  take_option(args, "--segment-size", size_s);
  take_option(args, "--segments", kind_s);
  take_option(args, "--thresholds", thresholds_s);
  BenchArgs common;
  int rc = 0;
  auto device = open_bench(args, "vkprim bench segmented_reduce", common, rc);
  if (!device) return rc;
  SegmentedReduceDesc desc;
  std::vector<uint64_t> sizes, segment_sizes;
  std::vector<Variant> variants;
  if (!parse_type(type_s, desc.type) || !parse_op(op_s, desc.op) || !parse_sizes(common.sizes, sizes) ||
      !parse_sizes(size_s, segment_sizes) || (kind_s != "uniform" && kind_s != "power-law") ||
      !segmented_variants(desc, common.algorithm, thresholds_s, variants)) {
    std::fprintf(stderr, "vkprim bench segmented_reduce: bad --type, --op, --sizes, --segment-size, --segments "
                         "(uniform or power-law), --algorithm (automatic[@WGxV[xG]],...) or --thresholds (T:H:C,...)\n");
    return 2;
  }
  if (kind_s == "power-law") segment_sizes = {0};
  print_bench_header(*device, common.repeats,
                     "; GB/s count input + (segments + 1) u32 offsets + outputs; fixed: record_fixed, same bytes");
  std::vector<SegmentedRow> rows;
  rc = host::with_type(desc.type, [&](auto t) {
    return bench_segmented_typed<decltype(t)>(*device, variants, sizes, segment_sizes, common.repeats, rows);
  });
  print_segmented_rows(rows);
  if (!common.json.empty()) write_segmented_json(common.json, device->context().capabilities().device_name, rows);
  if (common.stats) print_pipeline_statistics(*device);
  return rc;
}

}  // namespace vkprim::tools
