// `vkprim bench segmented_sort`: a stable sort of every segment, in place, segments laid end to end (CSR
// offsets: begin = offsets[0 .. S), end = offsets[1 .. S]) of one --segment-size each (the last one cut at n),
// or of power-law ("splat") lengths as a splatting renderer's tiles. GPU time from timestamps (median after
// warm-up; the input is restored with transfers outside the timed region); GB/s count each key and value read
// and written once, 2 n (K + V) bytes, as cub_bench's segmented_sort; the ratios to the read and copy ceilings
// of the keys measured in the same run; every result verified against std::stable_sort of each segment.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench_support.hpp"
#include "commands.hpp"
#include "context_impl.hpp"
#include "host_sort.hpp"
#include "segmented_commands.hpp"
#include "vkprim/segmented_sort.hpp"

namespace vkprim::tools {

namespace {

struct SegSortRow {
  std::string primitive, algorithm, key_type, segments_label;
  uint32_t value_bits = 0;
  uint64_t n = 0, segments = 0, segment_size = 0;  // segment_size 0: splat lengths
  double median_us = 0, gkeys = 0, gbps = 0, of_read = 0, of_copy = 0;
  bool verified = false;
};

void write_rows_json(const std::string& path, const std::string& device, const std::vector<SegSortRow>& rows) {
  write_json(path, device, rows, [](const SegSortRow& r, JsonRow& json) {
    json.text("primitive", r.primitive).text("algorithm", r.algorithm).text("type", r.key_type);
    json.number("value_bits", r.value_bits).text("segments_kind", r.segments_label).number("n", r.n);
    json.number("segment_size", r.segment_size);
    json.number("segments", r.segments).number("median_us", r.median_us).number("gkeys", r.gkeys);
    json.number("gbps", r.gbps).number("of_read", r.of_read).number("of_copy", r.of_copy).flag("verified", r.verified);
  });
}

void print_rows(const std::vector<SegSortRow>& rows) {
  std::printf("%-20s %-16s %-4s %-6s %-10s %12s %10s %12s %9s %10s %8s %8s %s\n", "primitive", "algorithm", "key",
              "value", "segments", "n", "count", "median_us", "Gkeys/s", "GB/s", "x_read", "x_copy", "verified");
  for (const SegSortRow& r : rows)
    std::printf("%-20s %-16s %-4s %-6s %-10s %12s %10llu %12.2f %9.3f %10.1f %8.3f %8.3f %s\n", r.primitive.c_str(),
                r.algorithm.c_str(), r.key_type.c_str(), r.value_bits ? std::to_string(r.value_bits).c_str() : "-",
                r.segments_label.c_str(), size_label(r.n).c_str(), (unsigned long long)r.segments, r.median_us, r.gkeys,
                r.gbps, r.of_read, r.of_copy, r.verified ? "yes" : "NO");
}

// "" where every segment of `got` (keys, and values = the input index) is the stable sort of the input's, else
// what is wrong first.
std::string check_segments(const SegmentedSortDesc& d, const std::vector<uint64_t>& keys,
                           const std::vector<uint32_t>& offsets, const std::vector<uint8_t>& got_keys,
                           const std::vector<uint32_t>& got_values) {
  SortDesc sd;
  sd.key_type = d.key_type;
  sd.order = d.order;
  const uint32_t kb = size_of(d.key_type);
  for (size_t s = 0; s + 1 < offsets.size(); ++s) {
    const std::vector<uint64_t> part(keys.begin() + offsets[s], keys.begin() + offsets[s + 1]);
    const std::vector<uint64_t> order = host::stable_sort_order(part, sd);
    for (size_t i = 0; i < order.size(); ++i) {
      const uint64_t at = offsets[s] + i;
      uint64_t k = 0;
      std::memcpy(&k, &got_keys[at * kb], kb);
      if (k != part[order[i]]) return "key " + std::to_string(at) + " of segment " + std::to_string(s) + " wrong";
      if (d.value_size && got_values[at * (d.value_size / 4)] != uint32_t(offsets[s] + order[i]))
        return "value " + std::to_string(at) + " of segment " + std::to_string(s) + " wrong";
    }
  }
  return "";
}

struct SegSortBuffers {
  Buffer keys, values, pristine_keys, pristine_values, offsets, scratch, count;
};

// The rows of one segment shape and size n: the ceilings, then record (offsets), record_fixed (uniform segments)
// and record_indirect (--indirect), each verified.
int bench_shape(const Device& device, const SegmentedSort& plan, SegSortBuffers& b, const std::vector<uint64_t>& keys,
                uint64_t n, uint64_t size, bool indirect, int repeats, std::mt19937_64& rng,
                std::vector<SegSortRow>& rows) {
  const SegmentedSortDesc& d = plan.desc();
  const uint32_t kb = size_of(d.key_type), vb = d.value_size;
  const std::vector<uint32_t> offsets = size ? segment_offsets(n, size, 0.0, 1, rng) : splat_segment_offsets(n, rng);
  const uint64_t segments = offsets.size() - 1;
  const uint32_t count32 = uint32_t(segments);
  if (!device.upload(b.offsets, offsets.data(), offsets.size() * 4) || !device.upload(b.count, &count32, 4)) return 1;
  const std::string label = size ? size_label(size) : "splat";
  progress("bench segmented_sort %s n=%s segments %s ...\n", to_string(d.key_type), size_label(n).c_str(), label.c_str());
  const Recorder restore = restore_input(device, b.pristine_keys, b.keys, n * kb, b.pristine_values, b.values, n * vb);
  const BufferRange kr = b.keys.range(0, n * kb), vr = vb ? b.values.range(0, n * vb) : BufferRange{};
  const BufferRange begin = b.offsets.range(0, std::max<uint64_t>(segments, 1) * 4);
  const BufferRange end = b.offsets.range(4, std::max<uint64_t>(segments, 1) * 4);
  std::vector<std::pair<std::string, Recorder>> runs = {
      {"offsets", [&](VkCommandBuffer cmd) { return plan.record(cmd, kr, vr, begin, end, segments, b.scratch.range()); }}};
  if (size && n % size == 0)
    runs.push_back({"fixed", [&](VkCommandBuffer cmd) { return plan.record_fixed(cmd, kr, vr, size, segments, b.scratch.range()); }});
  if (indirect) {
    const BufferRange all_k = b.keys.range(0, d.max_count * kb), all_v = vb ? b.values.range(0, d.max_count * vb) : BufferRange{};
    const BufferRange all_begin = b.offsets.range(0, d.max_segments * 4), all_end = b.offsets.range(4, d.max_segments * 4);
    runs.push_back({"indirect", [&, all_k, all_v, all_begin, all_end](VkCommandBuffer cmd) {
                      return plan.record_indirect(cmd, all_k, all_v, all_begin, all_end, b.count.range(0, 4),
                                                  b.scratch.range());
                    }});
  }
  const auto ceilings = ceilings_for(device, b.pristine_keys, b.keys, n * kb, repeats);
  if (!ceilings) return 1;
  add_ceiling_rows(rows, *ceilings, [&](const char* name, double us, double gbps, double of_read, double of_copy) {
    return SegSortRow{"ceiling", name, "u32", label, 0, n, segments, size, us, 0, gbps, of_read, of_copy, true};
  });
  int failures = 0;
  std::vector<uint8_t> got_keys(n * kb);
  std::vector<uint32_t> got_values(std::max<uint64_t>(n * vb / 4, 1));
  for (const auto& [name, record] : runs) {
    constexpr int kMaxWarmRuns = 500;  // each run also restores the input
    const auto t = warm_and_time(device, repeats, record, restore, kMaxWarmRuns);
    plan.release_descriptor_sets();
    if (!t) {
      std::fprintf(stderr, "bench: segmented_sort %s: %s\n", name.c_str(), t.error().message.c_str());
      return 1;
    }
    std::string why;
    if (!device.download(b.keys, got_keys.data(), n * kb) || (vb && !device.download(b.values, got_values.data(), n * vb)))
      why = "download failed";
    else
      why = check_segments(d, keys, offsets, got_keys, got_values);
    if (!why.empty()) {
      ++failures;
      std::fprintf(stderr, "MISMATCH segmented_sort %s n=%llu segments %s: %s\n", name.c_str(), (unsigned long long)n,
                   label.c_str(), why.c_str());
    }
    const double gbps = 2.0 * double(n) * (kb + vb) / t.value();
    rows.push_back({vb ? "segmented_sort_pairs" : "segmented_sort_keys", name, to_string(d.key_type), label, 8 * vb, n,
                    segments, size, t.value() / 1e3, double(n) / t.value(), gbps, ceilings->of_read(gbps),
                    ceilings->of_copy(gbps), why.empty()});
  }
  return failures;
}

// The plan for the largest size and the smallest segments, its buffers (largest first: DESIGN.md), random keys
// and values = the index, then every (segment size, n).
int bench_segmented_sort(const Device& device, const SegmentedSortDesc& base, const std::vector<uint64_t>& sizes,
                         const std::vector<uint64_t>& segment_sizes, bool indirect, int repeats,
                         std::vector<SegSortRow>& rows) {
  const uint64_t max_n = *std::max_element(sizes.begin(), sizes.end());
  const uint64_t smallest = *std::min_element(segment_sizes.begin(), segment_sizes.end());
  SegmentedSortDesc desc = base;
  desc.max_count = max_n;
  desc.max_segments = smallest ? (max_n + smallest - 1) / smallest : max_n;
  auto plan = SegmentedSort::create(const_cast<Device&>(device).context(), desc);
  if (!plan) {
    std::fprintf(stderr, "segmented_sort: %s\n", plan.error().message.c_str());
    return 1;
  }
  std::printf("# large segments: %s, tiles of %llu keys\n", to_string(plan->large_algorithm()),
              (unsigned long long)plan->large_tile_keys());
  const uint32_t kb = size_of(desc.key_type), vb = desc.value_size;
  auto make = [&](VkDeviceSize bytes) { return device.create_buffer(vector_bytes(bytes)); };
  auto keys = make(max_n * kb), pristine_keys = make(max_n * kb), values = make(max_n * vb),
       pristine_values = make(max_n * vb), scratch = make(plan->scratch_requirements().size),
       offsets = make((desc.max_segments + 1) * 4), count = make(16);
  if (!keys || !pristine_keys || !values || !pristine_values || !scratch || !offsets || !count) {
    std::fprintf(stderr, "bench: buffer allocation failed\n");
    return 1;
  }
  std::mt19937_64 rng(std::random_device{}());
  std::vector<uint64_t> host(max_n);
  std::vector<uint8_t> key_bytes(max_n * kb);
  std::vector<uint32_t> value_words(std::max<uint64_t>(max_n * vb / 4, 1));
  for (uint64_t i = 0; i < max_n; ++i) {
    host[i] = kb == 8 ? rng() : rng() & 0xFFFFFFFFull;
    std::memcpy(&key_bytes[i * kb], &host[i], kb);
    for (uint32_t w = 0; w < vb / 4; ++w) value_words[i * (vb / 4) + w] = w == 0 ? uint32_t(i) : ~uint32_t(i);
  }
  if (!device.upload(pristine_keys.value(), key_bytes.data(), max_n * kb) ||
      (vb && !device.upload(pristine_values.value(), value_words.data(), max_n * vb))) {
    std::fprintf(stderr, "bench: upload failed\n");
    return 1;
  }
  SegSortBuffers b{std::move(keys).value(),    std::move(values).value(),  std::move(pristine_keys).value(),
                   std::move(pristine_values).value(), std::move(offsets).value(), std::move(scratch).value(),
                   std::move(count).value()};
  int failures = 0;
  for (uint64_t size : segment_sizes)
    for (uint64_t n : sizes) failures += bench_shape(device, plan.value(), b, host, n, size, indirect, repeats, rng, rows);
  return failures ? 1 : 0;
}

// "WGxITEMS" into a tile override (empty: none, the policy's tile); false where it is malformed.
bool parse_tile(const std::string& s, Tuning& tile) {
  return s.empty() || std::sscanf(s.c_str(), "%ux%u", &tile.workgroup_size, &tile.items_per_thread) == 2;
}

}  // namespace

int run_bench_segmented_sort(std::vector<std::string> args) {
  std::string key_s = "u32", value_s = "4", size_s = "16,256,4096,2^20", kind_s = "uniform", thresholds_s;
  std::string block_s, medium_s, large_s = "automatic";
  take_option(args, "--key-type", key_s);
  take_option(args, "--value-size", value_s);
  take_option(args, "--segment-size", size_s);
  take_option(args, "--segments", kind_s);
  take_option(args, "--thresholds", thresholds_s);
  take_option(args, "--block-tile", block_s);
  take_option(args, "--medium-tile", medium_s);
  take_option(args, "--large-algorithm", large_s);
  const bool indirect = take_flag(args, "--indirect");
  BenchArgs common;
  common.sizes = "2^20,2^24";
  int rc = 0;
  auto device = open_bench(args, "vkprim bench segmented_sort", common, rc);
  if (!device) return rc;
  SegmentedSortDesc desc;
  std::vector<uint64_t> sizes, segment_sizes;
  unsigned small = 0, medium = 0;
  const bool thresholds_ok = thresholds_s.empty() || std::sscanf(thresholds_s.c_str(), "%u:%u", &small, &medium) == 2;
  const bool tiles_ok = parse_tile(block_s, desc.block_tuning) && parse_tile(medium_s, desc.medium_tuning);
  const auto shapes = split_algorithms(common.algorithm);
  if (!parse_type(key_s, desc.key_type) || (value_s != "0" && value_s != "4" && value_s != "8") ||
      !parse_sizes(common.sizes, sizes) || !parse_sizes(size_s, segment_sizes) ||
      (kind_s != "uniform" && kind_s != "splat") || !thresholds_ok || !tiles_ok ||
      !parse(large_s.c_str(), desc.large_algorithm) || shapes.size() != 1 ||
      shapes[0].name != "automatic") {
    std::fprintf(stderr, "vkprim bench segmented_sort: bad --key-type, --value-size (0, 4, 8), --sizes, "
                         "--segment-size, --segments (uniform or splat), --thresholds (S:M), --block-tile or "
                         "--medium-tile (WGxITEMS), --large-algorithm (automatic, onesweep, reduce_then_scan) or "
                         "--algorithm (automatic[@WGxITEMS])\n");
    return 2;
  }
  desc.value_size = uint32_t(std::stoul(value_s));
  desc.thresholds = {small, medium};
  desc.tuning.workgroup_size = shapes[0].workgroup_size;
  desc.tuning.items_per_thread = shapes[0].per_thread;
  if (kind_s == "splat") segment_sizes = {0};
  print_bench_header(*device, common.repeats, "; GB/s count 2n(K+V) bytes (each key and value read and written once)");
  std::vector<SegSortRow> rows;
  rc = bench_segmented_sort(*device, desc, sizes, segment_sizes, indirect, common.repeats, rows);
  print_rows(rows);
  if (!common.json.empty()) write_rows_json(common.json, device->context().capabilities().device_name, rows);
  if (common.stats) print_pipeline_statistics(*device);
  return rc;
}

}  // namespace vkprim::tools
