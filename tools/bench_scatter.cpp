// `vkprim bench scatter`: the scatter ceiling of a radix digit pass (shaders/ceiling/scatter.comp) for D
// digits and tiles of WG x ITEMS keys, the design question of a sort with wider digits (issue 47: 11-bit digits
// put 2048 runs in a tile where 8-bit ones put 256). Keys uniform random u32 (and u32 values), grouped by their
// low digit within each tile on the host; GPU time from timestamps (median after warm-up); GB/s counting the
// keys (and values) read and written once, as a sort pass moves them, against the copy ceiling of the same
// bytes in the same run; the offsets' own bytes (4 D per tile, standing in for the look-back) are extra and
// shown per key. Every output checked against the host's stable pass.
#include <algorithm>
#include <array>
#include <cstdio>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench_support.hpp"
#include "commands.hpp"
#include "context_impl.hpp"
#include "host_reference.hpp"
#include "dispatch.hpp"
#include "shader_groups.hpp"
#include "sort_commands.hpp"

namespace vkprim::tools {

namespace {

struct ScatterRow {
  std::string primitive, shape;
  uint32_t digits = 0, tile = 0;
  uint64_t n = 0;
  double median_us = 0, gbps = 0, of_copy = 0, offset_bytes_per_key = 0;
  bool verified = false;
};

void print_scatter_rows(const std::vector<ScatterRow>& rows) {
  std::printf("%-9s %-20s %6s %6s %8s %12s %10s %8s %10s %s\n", "primitive", "shape", "digits", "tile", "n",
              "median_us", "GB/s", "x_copy", "offsets_B", "verified");
  for (const ScatterRow& r : rows)
    std::printf("%-9s %-20s %6u %6u %8s %12.2f %10.1f %8.3f %10.3f %s\n", r.primitive.c_str(), r.shape.c_str(),
                r.digits, r.tile, size_label(r.n).c_str(), r.median_us, r.gbps, r.of_copy, r.offset_bytes_per_key,
                verified_cell(r.verified, "").c_str());
}

void write_scatter_json(const std::string& path, const std::string& device, const std::vector<ScatterRow>& rows) {
  write_json(path, device, rows, [&](const ScatterRow& r, JsonRow& json) {
    json.text("primitive", r.primitive).text("shape", r.shape).number("digits", r.digits).number("tile", r.tile);
    json.number("n", r.n).number("median_us", r.median_us).number("gbps", r.gbps).number("of_copy", r.of_copy);
    json.number("offset_bytes_per_key", r.offset_bytes_per_key).flag("verified", r.verified);
  });
}

struct Shape {
  uint32_t workgroup = 256, items = 8;
  uint32_t tile() const { return workgroup * items; }
};

// "384x18,1024x16": workgroups of 64 to 1024 invocations (multiples of 32), 1 to 32 keys each.
bool parse_shapes(const std::string& text, std::vector<Shape>& out) {
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    Shape s;
    if (std::sscanf(item.c_str(), "%ux%u", &s.workgroup, &s.items) != 2 || s.workgroup < 64 || s.workgroup > 1024 ||
        s.workgroup % 32 != 0 || s.items < 1 || s.items > 32)
      return false;
    out.push_back(s);
  }
  return !out.empty();
}

// The host's side of one shape: the keys (and values) grouped stably by digit within each tile, the offsets,
// and the stable pass of the whole input that the GPU must produce.
struct Prepared {
  std::vector<uint32_t> keys, values, offsets, want_keys, want_values;
};

Prepared prepare(const std::vector<uint32_t>& keys, const std::vector<uint32_t>& values, uint64_t n,
                 uint32_t digits, uint32_t tile) {
  const uint64_t tiles = (n + tile - 1) / tile;
  const uint32_t mask = digits - 1;
  Prepared p;
  p.keys.resize(n);
  p.values.resize(n);
  p.offsets.resize(tiles * digits);
  // Each tile grouped stably by digit; its digit counts kept in the offsets' words for now.
  std::vector<uint32_t> at(digits);
  for (uint64_t t = 0; t < tiles; ++t) {
    const uint64_t first = t * tile, last = std::min<uint64_t>(n, first + tile);
    uint32_t* count = p.offsets.data() + t * digits;
    for (uint64_t i = first; i < last; ++i) ++count[keys[i] & mask];
    for (uint32_t d = 0, sum = 0; d < digits; sum += count[d], ++d) at[d] = sum;
    for (uint64_t i = first; i < last; ++i) {
      const uint32_t j = at[keys[i] & mask]++;
      p.keys[first + j] = keys[i];
      p.values[first + j] = values[i];
    }
  }
  // base[d]: the keys of smaller digits, then (tile by tile) the digit's keys in earlier tiles. A tile's offset
  // of d is that base less the tile's keys of smaller digits (unsigned: the offset may wrap, its sum with a
  // key's position in the tile does not).
  std::vector<uint64_t> base(digits, 0);
  for (uint64_t t = 0; t < tiles; ++t)
    for (uint32_t d = 0; d + 1 < digits; ++d) base[d + 1] += p.offsets[t * digits + d];
  for (uint32_t d = 1; d < digits; ++d) base[d] += base[d - 1];
  const std::vector<uint64_t> digit_start = base;
  for (uint64_t t = 0; t < tiles; ++t) {
    uint32_t below = 0;
    for (uint32_t d = 0; d < digits; ++d) {
      const uint32_t count = p.offsets[t * digits + d];
      p.offsets[t * digits + d] = uint32_t(base[d]) - below;
      below += count;
      base[d] += count;
    }
  }
  // What a stable pass on the digit makes of the original input.
  p.want_keys.resize(n);
  p.want_values.resize(n);
  std::vector<uint64_t> next = digit_start;
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t j = next[keys[i] & mask]++;
    p.want_keys[j] = keys[i];
    p.want_values[j] = values[i];
  }
  return p;
}

struct ScatterBuffers {
  Buffer keys_in, keys_out, values_in, values_out, offsets;
};

detail::Pass scatter_pass(detail::ContextImpl& c, const detail::Kernel* kernel, const ScatterBuffers& b, uint64_t n,
                          uint32_t digits, Shape shape, bool pairs) {
  const uint64_t tiles = (n + shape.tile() - 1) / shape.tile();
  detail::Pass pass;
  pass.kernel = kernel;
  pass.buffers[0] = detail::bind_elements(c, b.keys_in.range(), 0, n, 4).bound;
  pass.buffers[1] = detail::bind_elements(c, b.keys_out.range(), 0, n, 4).bound;
  pass.buffers[2] = detail::bind_elements(c, b.values_in.range(), 0, pairs ? n : 1, 4).bound;
  pass.buffers[3] = detail::bind_elements(c, b.values_out.range(), 0, pairs ? n : 1, 4).bound;
  pass.buffers[4] = detail::bind_elements(c, b.offsets.range(), 0, tiles * digits, 4).bound;
  pass.push = {uint32_t(n), 0u, uint32_t(__builtin_ctz(digits)), pairs ? 1u : 0u};
  pass.groups = tiles;
  pass.label = "ceiling/scatter";
  return pass;
}

// One shape at one size: uploads its prepared input, times the pass, checks the output. A row, or nothing
// after printing an error.
std::optional<ScatterRow> bench_shape(const Device& device, const ScatterBuffers& b, const std::vector<uint32_t>& keys,
                                      const std::vector<uint32_t>& values, uint64_t n, uint32_t digits, Shape shape,
                                      bool pairs, const Ceilings& ceilings, int repeats) {
  auto& c = device.context().impl();
  detail::KernelDesc kd{detail::kernel_name("ceiling/scatter")};
  kd.group = &detail::kShaderGroup_ceiling;
  kd.variant = "default";
  kd.workgroup_size = shape.workgroup;
  kd.items = shape.items;
  auto kernel = detail::get_kernel(c, kd);
  if (!kernel) {
    std::fprintf(stderr, "bench: scatter: %s\n", kernel.error().message.c_str());
    return std::nullopt;
  }
  const Prepared p = prepare(keys, values, n, digits, shape.tile());
  const bool uploaded = device.upload(b.keys_in, p.keys.data(), n * 4) &&
                        (!pairs || device.upload(b.values_in, p.values.data(), n * 4)) &&
                        device.upload(b.offsets, p.offsets.data(), p.offsets.size() * 4);
  if (!uploaded) {
    std::fprintf(stderr, "bench: scatter: upload failed\n");
    return std::nullopt;
  }
  const std::vector<detail::Pass> passes = {scatter_pass(c, kernel.value(), b, n, digits, shape, pairs)};
  detail::DescriptorSets sets(c, c.options.descriptor_sets_per_pool);
  Recorder run = [&](VkCommandBuffer cmd) { return detail::record_passes(c, sets, cmd, passes, "ceiling", "record"); };
  const auto ns = warm_and_time(device, repeats, run);
  sets.release();
  if (!ns) {
    std::fprintf(stderr, "bench: scatter: %s\n", ns.error().message.c_str());
    return std::nullopt;
  }
  std::vector<uint32_t> got(n);
  bool ok = bool(device.download(b.keys_out, got.data(), n * 4)) && got == p.want_keys;
  if (pairs) ok = ok && bool(device.download(b.values_out, got.data(), n * 4)) && got == p.want_values;
  if (!ok)
    std::fprintf(stderr, "MISMATCH scatter digits=%u tile=%u n=%llu\n", digits, shape.tile(), (unsigned long long)n);
  const double bytes = 2.0 * double(n) * (pairs ? 8 : 4), gbps = bytes / ns.value();
  const std::string name =
      std::to_string(shape.workgroup) + "x" + std::to_string(shape.items) + (pairs ? " pairs" : " keys");
  return ScatterRow{"scatter", name, digits, shape.tile(), n, ns.value() / 1e3, gbps, ceilings.of_copy(gbps),
                    4.0 * digits / shape.tile(), ok};
}

// Every digit count and shape at size n: the number of mismatches, or -1 after printing an error.
int bench_size(const Device& device, uint64_t n, const std::vector<uint64_t>& digit_counts,
               const std::vector<Shape>& shapes, bool pairs, int repeats, std::vector<ScatterRow>& rows) {
  uint64_t offset_words = 1;
  for (uint64_t d : digit_counts)
    for (Shape s : shapes) offset_words = std::max<uint64_t>(offset_words, (n + s.tile() - 1) / s.tile() * d);
  // The key buffers also hold the ceilings' bytes (keys and values).
  const VkDeviceSize moved = vector_bytes(n * (pairs ? 8 : 4)), value_bytes = pairs ? vector_bytes(n * 4) : 16;
  // Keys in and out, values in and out, offsets: the largest allocated first.
  const std::array<VkDeviceSize, 5> need = {moved, moved, value_bytes, value_bytes, vector_bytes(offset_words * 4)};
  std::array<size_t, 5> order = {0, 1, 2, 3, 4};
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return need[a] > need[b]; });
  std::array<std::optional<Buffer>, 5> made;
  for (size_t i : order) {
    auto buffer = device.create_buffer(need[i]);
    if (!buffer) {
      std::fprintf(stderr, "bench: buffer allocation failed: %s\n", buffer.error().message.c_str());
      return -1;
    }
    made[i] = std::move(buffer).value();
  }
  const ScatterBuffers b{std::move(*made[0]), std::move(*made[1]), std::move(*made[2]), std::move(*made[3]),
                         std::move(*made[4])};
  std::mt19937_64 rng(std::random_device{}());
  std::vector<uint32_t> keys(n), values(n);
  host::fill_random(keys, rng);
  host::fill_random(values, rng);
  // The copy and read ceilings of the bytes a pass reads (each ceiling warms up before it is timed).
  const auto ceilings = ceilings_for(device, b.keys_in, b.keys_out, n * (pairs ? 8 : 4), repeats);
  if (!ceilings) return -1;
  add_ceiling_rows(rows, *ceilings, [&](const char* name, double us, double gbps, double, double of_copy) {
    return ScatterRow{"ceiling", name, 0, 0, n, us, gbps, of_copy, 0, true};
  });
  int failures = 0;
  for (uint64_t d : digit_counts)
    for (Shape s : shapes) {
      progress("bench scatter digits=%llu tile=%ux%u n=%s ...\n", (unsigned long long)d, s.workgroup, s.items,
               size_label(n).c_str());
      const auto row = bench_shape(device, b, keys, values, n, uint32_t(d), s, pairs, *ceilings, repeats);
      if (!row) return -1;
      failures += row->verified ? 0 : 1;
      rows.push_back(*row);
    }
  return failures;
}

}  // namespace

int run_bench_scatter(std::vector<std::string> args) {
  // 384 x 18: the tile of onesweep's u32 key passes on GPUs (src/sort.cpp).
  std::string digits_s = "256,2048", shapes_s = "384x18,1024x16,1024x32";
  take_option(args, "--digits", digits_s);
  take_option(args, "--tile", shapes_s);
  const bool pairs = take_flag(args, "--pairs");
  BenchArgs common;
  common.sizes = "2^24,2^26";
  int rc = 0;
  auto device = open_bench(args, "vkprim bench scatter", common, rc);
  if (!device) return rc;
  std::vector<uint64_t> sizes, digit_counts;
  std::vector<Shape> shapes;
  bool ok = parse_sizes(common.sizes, sizes) && parse_sizes(digits_s, digit_counts) && parse_shapes(shapes_s, shapes);
  for (uint64_t d : digit_counts) ok = ok && d >= 2 && d <= 4096 && (d & (d - 1)) == 0;
  for (uint64_t n : sizes) ok = ok && n >= 1 && n <= (uint64_t(1) << 30);
  if (!ok) {
    std::fprintf(stderr, "vkprim bench scatter: bad --digits (powers of two, 2..4096), --tile (WGxITEMS: 64..1024 "
                         "in multiples of 32 x 1..32) or --sizes (1..2^30)\n");
    return 2;
  }
  print_bench_header(*device, common.repeats,
                     "; GB/s count the keys (and values) read and written once; offsets_B: the offsets' bytes per "
                     "key, extra");
  std::vector<ScatterRow> rows;
  int failures = 0;
  for (uint64_t n : sizes) {
    const int f = bench_size(*device, n, digit_counts, shapes, pairs, common.repeats, rows);
    failures = f < 0 || failures < 0 ? -1 : failures + f;
  }
  print_scatter_rows(rows);
  if (!common.json.empty()) write_scatter_json(common.json, device->context().capabilities().device_name, rows);
  if (common.stats) print_pipeline_statistics(*device);
  return failures == 0 ? 0 : 1;
}

}  // namespace vkprim::tools
