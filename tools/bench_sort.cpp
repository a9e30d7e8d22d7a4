// `vkprim bench sort`: GPU time from timestamps (median after ~200 ms of warm-up), G keys/s (G pairs/s),
// GB/s counting each key (and value) read and written once (2 n (K + V) bytes, as cub_bench counts
// DeviceRadixSort), the ratio to the copy ceiling measured on the same buffers in the same run, and every
// result verified. The sort is in place, so before each timed run (outside the timestamps) the keys and
// values are restored from a pristine copy with vkCmdCopyBuffer: every run sorts the same random input.
// Keys are uniformly random bits of the key type (floats included: NaNs sort to the ends), or with --keys
// splat[:TILES] shaped as a Gaussian-splatting renderer sorts them (splat_key). --indirect times
// record_indirect with the count in a GPU buffer, as a renderer records it.
// `vkprim verify` runs verify_sort: every algorithm x key type x keys/pairs x order at small sizes.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "barriers.hpp"
#include "bench_support.hpp"
#include "commands.hpp"
#include "context_impl.hpp"
#include "demo.hpp"
#include "host_sort.hpp"
#include "sort_commands.hpp"
#include "vkprim/sort.hpp"
#include "vkprim/version.hpp"

namespace vkprim::tools {

namespace {

struct SortRow {
  std::string primitive, algorithm, key, value, order;
  uint64_t n = 0;
  double median_us = 0, gkeys = 0, gbps = 0, of_read = 0, of_copy = 0;
  bool verified = false;
  std::string note;
};

// The key bits sorted, as JSON carries them: "all", or "BEGIN..END" for a --bits range.
std::string bits_label(const SortDesc& d) {
  const uint32_t key_bits = 8 * size_of(d.key_type), end = d.end_bit ? d.end_bit : key_bits;
  if (d.begin_bit == 0 && end == key_bits) return "all";
  return std::to_string(d.begin_bit) + ".." + std::to_string(end);
}

// bits (bits_label) is the run's, the same on every row.
void write_sort_json(const std::string& path, const std::string& device, const std::vector<SortRow>& rows,
                     const std::string& bits) {
  write_json(path, device, rows, [&](const SortRow& r, JsonRow& json) {
    json.text("primitive", r.primitive).text("algorithm", r.algorithm).text("key", r.key).text("value", r.value);
    json.text("order", r.order).text("bits", bits).number("n", r.n).number("median_us", r.median_us);
    json.number("gelems", r.gkeys);
    json.number("gbps", r.gbps).number("of_read", r.of_read).number("of_copy", r.of_copy);
    json.flag("verified", r.verified).text("note", r.note);
  });
}

void print_sort_rows(const std::vector<SortRow>& rows) {
  std::printf("%-10s %-28s %-4s %-5s %-10s %8s %12s %9s %10s %8s %8s %s\n", "primitive", "algorithm", "key", "value",
              "order", "n", "median_us", "Gkeys/s", "GB/s", "x_read", "x_copy", "verified  notes");
  for (const SortRow& r : rows)
    std::printf("%-10s %-28s %-4s %-5s %-10s %8s %12.2f %9.2f %10.1f %8.3f %8.3f %s\n", r.primitive.c_str(),
                r.algorithm.c_str(), r.key.c_str(), r.value.c_str(), r.order.c_str(), size_label(r.n).c_str(),
                r.median_us, r.gkeys, r.gbps, r.of_read, r.of_copy, verified_cell(r.verified, r.note).c_str());
}

uint64_t mix(uint64_t x) {  // splitmix64 finalizer: an order-independent fingerprint term
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

uint64_t load_bits(const uint8_t* p, uint32_t bytes) {
  uint64_t v = 0;
  std::memcpy(&v, p, bytes);
  return v;
}

// A value of `bytes` bytes for input index i: the index in its first min(bytes, 8) bytes, and past 8 bytes
// words derived from it, so every word of a wide value is checked.
uint32_t value_tail_word(uint64_t i, uint32_t w) { return uint32_t(mix(i + w)); }
void make_value(uint64_t i, uint8_t* out, uint32_t bytes) {
  std::memcpy(out, &i, std::min<uint32_t>(bytes, 8));
  for (uint32_t w = 2; w < bytes / 4; ++w) {
    const uint32_t x = value_tail_word(i, w);
    std::memcpy(out + 4 * w, &x, 4);
  }
}

// O(n) check of a sort of `in` (values: the input index): keys ordered on [begin, end); keys only: the same
// multiset (fingerprint); pairs: values a permutation with key[i] == in[value[i]], equal keys in input order.
std::string check_sorted(const SortDesc& d, const std::vector<uint8_t>& in, const std::vector<uint8_t>& keys,
                         const std::vector<uint8_t>& values, uint64_t n) {
  const uint32_t kb = size_of(d.key_type), vb = d.value_size;
  auto field = [&](uint64_t bits) { return host::sort_field(bits, d); };
  std::vector<bool> seen(vb ? n : 0);
  uint64_t sum_in = 0, sum_out = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t k = load_bits(&keys[i * kb], kb);
    sum_in += mix(load_bits(&in[i * kb], kb));
    sum_out += mix(k);
    const bool tie = i > 0 && field(k) == field(load_bits(&keys[(i - 1) * kb], kb));
    if (i > 0 && !tie && field(k) < field(load_bits(&keys[(i - 1) * kb], kb)))
      return "keys out of order at " + std::to_string(i);
    if (vb) {
      const uint64_t v = load_bits(&values[i * vb], std::min<uint32_t>(vb, 8));
      if (v >= n || seen[v]) return "values are not a permutation at " + std::to_string(i);
      for (uint32_t w = 2; w < vb / 4; ++w)
        if (uint32_t(load_bits(&values[i * vb + 4 * w], 4)) != value_tail_word(v, w))
          return "word " + std::to_string(w) + " of the value at " + std::to_string(i) + " is not its input's";
      seen[v] = true;
      if (load_bits(&in[v * kb], kb) != k) return "value " + std::to_string(v) + " does not follow its key";
      if (tie && v < load_bits(&values[(i - 1) * vb], std::min<uint32_t>(vb, 8))) return "equal keys lost their order at " + std::to_string(i);
    }
  }
  if (sum_in != sum_out) return "the sorted keys are not a permutation of the input";
  return {};
}

// The input keys: uniform random bits, or splatting-shaped (splat_tiles > 0).
struct KeyShape {
  uint32_t splat_tiles = 0;  // 0: uniform bits; else tiles of the (tile, depth) keys
  bool indirect = false;     // time record_indirect, the count read from a GPU buffer
};

// A splatting renderer's sort key for input index i (scripts/compare-cub gives cub_bench the same formula):
// r = mix(seed + i); the depth is a positive f32, 0.1 + 99.9 * (r's low 32 bits >> 8) / 2^24, whose bits
// order as unsigned integers; 32-bit keys are the depth, 64-bit keys tile << 32 | depth with the tile
// (r >> 32) % tiles, so sorting bits [0, 32 + ceil(log2 tiles)) suffices.
uint64_t splat_key(uint64_t seed, uint64_t i, uint32_t tiles, uint32_t key_bytes) {
  const uint64_t r = mix(seed + i);
  const float depth = 0.1f + 99.9f * float(uint32_t(r) >> 8) / 16777216.0f;
  uint32_t bits;
  std::memcpy(&bits, &depth, 4);
  return key_bytes == 8 ? (((r >> 32) % tiles) << 32) | bits : bits;
}

// The plans of every variant (base with the variant's algorithm and tile) for max_n keys; false (after a
// message) when one fails or none is available.
bool make_sort_plans(const Device& device, const SortDesc& base, const std::vector<SortDesc>& variants, uint64_t max_n,
                     PlanSet<RadixSort>& set) {
  for (const SortDesc& v : variants) {
    SortDesc d = base;
    d.max_count = max_n;
    d.algorithm = v.algorithm;
    d.tuning = v.tuning;  // set only where the algorithm came with @WGxITEMS
    const std::string what = std::string("sort ") + to_string(v.algorithm);
    // Rows name the ranking and scatter when they were asked for (experiments against the defaults).
    std::string asked = base.ranking == SortRanking::automatic ? "" : std::string("/") + to_string(base.ranking);
    if (base.scatter != SortScatter::automatic) asked += std::string("/") + to_string(base.scatter);
    auto added = set.add(RadixSort::create(const_cast<Device&>(device).context(), d),
                         shape_label(d.tuning.workgroup_size, d.tuning.items_per_thread) + asked, what);
    if (!added) {
      std::fprintf(stderr, "%s: %s\n", what.c_str(), added.error().message.c_str());
      return false;
    }
  }
  if (set.plans.empty()) {
    std::fprintf(stderr, "bench: no requested sort algorithm is available on this device\n");
    return false;
  }
  return true;
}

// The buffers of a run (largest first: DESIGN.md, NVIDIA placed late large allocations slower) and the input
// on the host, uploaded to the pristine copies.
struct SortInput {
  Buffer scratch, keys, pristine_keys, values, pristine_values, count;
  std::vector<uint8_t> host_keys;
};

std::optional<SortInput> make_sort_input(const Device& device, VkDeviceSize scratch_bytes, const SortDesc& base,
                                         uint64_t max_n, const KeyShape& shape) {
  const uint32_t kb = size_of(base.key_type), vb = base.value_size;
  const VkDeviceSize key_bytes = (max_n * kb + 15) / 16 * 16, value_bytes = vector_bytes(max_n * vb);
  auto scratch = device.create_buffer(scratch_bytes);
  auto keys = device.create_buffer(key_bytes);
  auto pristine_keys = device.create_buffer(key_bytes);
  auto values = device.create_buffer(value_bytes);
  auto pristine_values = device.create_buffer(value_bytes);
  auto count = device.create_buffer(16);
  if (!scratch || !keys || !pristine_keys || !values || !pristine_values || !count) {
    std::fprintf(stderr, "bench: buffer allocation failed\n");
    return std::nullopt;
  }
  std::vector<uint8_t> host_keys(max_n * kb), host_values(max_n * vb);
  std::mt19937_64 rng(std::random_device{}());
  if (shape.splat_tiles) {
    const uint64_t seed = rng();
    for (uint64_t i = 0; i < max_n; ++i) {
      const uint64_t k = splat_key(seed, i, shape.splat_tiles, kb);
      std::memcpy(&host_keys[i * kb], &k, kb);
    }
  } else {
    for (uint64_t i = 0; i < max_n * kb; i += 8) {
      const uint64_t r = rng();
      std::memcpy(&host_keys[i], &r, std::min<uint64_t>(8, max_n * kb - i));
    }
  }
  for (uint64_t i = 0; i < max_n && vb; ++i) make_value(i, &host_values[i * vb], vb);
  if (!device.upload(pristine_keys.value(), host_keys.data(), max_n * kb) ||
      (vb && !device.upload(pristine_values.value(), host_values.data(), max_n * vb))) {
    std::fprintf(stderr, "bench: upload failed\n");
    return std::nullopt;
  }
  return SortInput{std::move(scratch).value(), std::move(keys).value(),   std::move(pristine_keys).value(),
                   std::move(values).value(),  std::move(pristine_values).value(), std::move(count).value(),
                   std::move(host_keys)};
}

// A row's note: the tile (or the one-workgroup path), the digit passes, the run's shape and, for onesweep,
// the look-back statistics the run left in scratch.
std::string sort_note(const Device& device, const RadixSort& plan, const Buffer& scratch, const KeyShape& shape,
                      bool one_workgroup, uint64_t passes_count) {
  std::string note = one_workgroup ? "one workgroup (up to " + std::to_string(plan.one_workgroup_keys()) + " keys)"
                                   : "tile=" + std::to_string(plan.keys_per_tile(passes_count));
  note += " passes=" + std::to_string(plan.digit_passes());
  if (shape.indirect) note += " indirect";
  if (shape.splat_tiles) note += " splat:" + std::to_string(shape.splat_tiles);
  if (plan.algorithm() == SortAlgorithm::onesweep && !one_workgroup)
    if (const std::string lookback = lookback_note(device, scratch, plan.statistics_offset(), false); !lookback.empty())
      note += " " + lookback;
  return note;
}

// The ceilings and every plan's row at n keys; the failures (mismatches), or -1 where a run cannot be timed.
int bench_sort_size(const Device& device, const SortDesc& base, const PlanSet<RadixSort>& set, SortInput& in,
                    uint64_t n, uint64_t max_n, int repeats, const KeyShape& shape, std::vector<SortRow>& rows) {
  const uint32_t kb = size_of(base.key_type), vb = base.value_size;
  const char* primitive = vb ? "sort_pairs" : "sort_keys";
  progress("bench sort %s %s n=%s ...\n", to_string(base.key_type), primitive, size_label(n).c_str());
  const uint32_t count32 = uint32_t(n);
  if (shape.indirect && !device.upload(in.count, &count32, 4)) {
    std::fprintf(stderr, "bench: upload failed\n");
    return -1;
  }
  const Recorder restore =
      restore_input(device, in.pristine_keys, in.keys, n * kb, in.pristine_values, in.values, n * vb);
  auto record_for = [&](const RadixSort& plan) -> Recorder {
    return [&, n](VkCommandBuffer cmd) {
      // record_indirect binds max_count elements; only the count's are touched.
      if (shape.indirect)
        return plan.record_indirect(cmd, in.keys.range(0, max_n * kb), vb ? in.values.range(0, max_n * vb) : BufferRange{},
                                    in.count.range(0, 4), in.scratch.range());
      return plan.record(cmd, in.keys.range(0, n * kb), vb ? in.values.range(0, n * vb) : BufferRange{}, n,
                         in.scratch.range());
    };
  };
  constexpr int kMaxWarmRuns = 500;  // each run also restores the input
  const auto ceilings = warm_then_ceilings(device, set.plans.front(), record_for(set.plans.front()), in.pristine_keys,
                                           in.keys, n * kb, repeats, restore, kMaxWarmRuns);
  if (!ceilings) return -1;
  add_ceiling_rows(rows, *ceilings, [&](const char* name, double us, double gbps, double of_read, double of_copy) {
    return SortRow{"ceiling", name, "u32", "-", "-", n, us, 0, gbps, of_read, of_copy, true};
  });
  const double moved = 2.0 * double(n) * (kb + vb);
  const std::vector<uint8_t> input(in.host_keys.begin(), in.host_keys.begin() + std::ptrdiff_t(n * kb));
  std::vector<uint8_t> got_keys(n * kb), got_values(n * vb);
  int failures = 0;
  for (size_t k = 0; k < set.plans.size(); ++k) {
    const RadixSort& plan = set.plans[k];
    const auto t = warm_and_time(device, repeats, record_for(plan), restore, kMaxWarmRuns);
    plan.release_descriptor_sets();
    if (!t) {
      std::fprintf(stderr, "bench: sort %s: %s\n", set.labels[k].c_str(), t.error().message.c_str());
      return -1;
    }
    std::string why;
    if (!device.download(in.keys, got_keys.data(), n * kb) || (vb && !device.download(in.values, got_values.data(), n * vb)))
      why = "download failed";
    else
      why = check_sorted(plan.desc(), input, got_keys, got_values, n);
    if (!why.empty()) {
      ++failures;
      std::fprintf(stderr, "MISMATCH sort %s n=%llu: %s\n", set.labels[k].c_str(), (unsigned long long)n, why.c_str());
    }
    // record_indirect takes max_count's passes whatever the count.
    const uint64_t passes_count = shape.indirect ? max_n : n;
    const bool one_workgroup = passes_count <= plan.one_workgroup_keys();
    const std::string note = sort_note(device, plan, in.scratch, shape, one_workgroup, passes_count);
    const double gbps = moved / t.value();
    rows.push_back({primitive, one_workgroup ? "one_workgroup" : set.labels[k], to_string(base.key_type),
                    vb == 0 ? "-" : std::to_string(8 * vb), to_string(base.order), n, t.value() / 1e3,
                    double(n) / t.value(), gbps, ceilings->of_read(gbps), ceilings->of_copy(gbps), why.empty(), note});
  }
  return failures;
}

int bench_sort(const Device& device, const SortDesc& base, const std::vector<SortDesc>& variants,
               const std::vector<uint64_t>& sizes, int repeats, const KeyShape& shape, std::vector<SortRow>& rows) {
  const uint64_t max_n = *std::max_element(sizes.begin(), sizes.end());
  PlanSet<RadixSort> set;
  if (!make_sort_plans(device, base, variants, max_n, set)) return 1;
  auto input = make_sort_input(device, set.scratch_bytes, base, max_n, shape);
  if (!input) return 1;
  int failures = 0;
  for (uint64_t n : sizes) {
    const int failed = bench_sort_size(device, base, set, *input, n, max_n, repeats, shape, rows);
    if (failed < 0) return 1;
    failures += failed;
  }
  return failures ? 1 : 0;
}

}  // namespace

std::optional<Summary> demo_sort(const Device& device, uint64_t n, int repeats) {
  std::vector<SortRow> rows;
  const SortDesc automatic{};  // u32 keys, ascending, every bit, automatic
  bench_sort(device, automatic, {automatic}, {n}, repeats, KeyShape{}, rows);
  return summarize(rows, "sort_keys", "u32 keys");
}

int run_bench_sort(std::vector<std::string> args) {
  std::string key_s = "u32", order_s = "ascending", value_s = "4", bits_s;
  const bool pairs = take_flag(args, "--pairs");
  take_option(args, "--value-size", value_s);
  take_option(args, "--key-type", key_s);
  take_option(args, "--order", order_s);
  take_option(args, "--bits", bits_s);
  std::string keys_s = "uniform";
  take_option(args, "--keys", keys_s);
  KeyShape shape;
  shape.indirect = take_flag(args, "--indirect");
  std::string ranking_s = "automatic", scatter_s = "automatic";
  take_option(args, "--ranking", ranking_s);
  take_option(args, "--scatter", scatter_s);
  BenchArgs common;
  int rc = 0;
  auto device = open_bench(args, "vkprim bench sort", common, rc);
  if (!device) return rc;
  SortDesc desc;
  std::vector<uint64_t> sizes;
  if (!parse_type(key_s, desc.key_type) || !parse(order_s.c_str(), desc.order) ||
      !parse(ranking_s.c_str(), desc.ranking) || !parse(scatter_s.c_str(), desc.scatter) ||
      !parse_sizes(common.sizes, sizes)) {
    std::fprintf(stderr, "vkprim bench sort: bad --key-type, --order, --ranking, --scatter or --sizes\n");
    return 2;
  }
  desc.value_size = pairs ? uint32_t(std::atoi(value_s.c_str())) : 0;
  if (keys_s.rfind("splat", 0) == 0) {
    shape.splat_tiles = keys_s.size() > 6 && keys_s[5] == ':' ? uint32_t(std::atoi(keys_s.c_str() + 6)) : 8160u;
    if (keys_s.size() > 5 && keys_s[5] != ':') shape.splat_tiles = 0;
  }
  if ((keys_s != "uniform" && !shape.splat_tiles) || (shape.splat_tiles && size_of(desc.key_type) < 4)) {
    std::fprintf(stderr, "vkprim bench sort: --keys takes uniform or splat[:TILES] (TILES >= 1; 32- or 64-bit keys)\n");
    return 2;
  }
  if (!bits_s.empty() && std::sscanf(bits_s.c_str(), "%u..%u", &desc.begin_bit, &desc.end_bit) != 2) {
    std::fprintf(stderr, "vkprim bench sort: --bits takes BEGIN..END\n");
    return 2;
  }
  std::vector<SortDesc> variants;  // algorithm + tile override ("onesweep@512x16")
  const std::string list = common.algorithm == "all" ? "onesweep,reduce_then_scan" : common.algorithm;
  for (const AlgorithmChoice& choice : split_algorithms(list)) {
    if (choice.tuning) {  // a third number would be an override RadixSort does not read
      std::fprintf(stderr, "vkprim bench sort: '%s%s': the tile override is @WGxITEMS\n", choice.name.c_str(),
                   choice.shape.c_str());
      return 2;
    }
    SortDesc v;
    v.tuning.workgroup_size = choice.workgroup_size;
    v.tuning.items_per_thread = choice.per_thread;
    if (!parse(choice.name.c_str(), v.algorithm)) {
      std::fprintf(stderr, "vkprim bench sort: unknown sort algorithm '%s'\n", choice.name.c_str());
      return 2;
    }
    variants.push_back(v);
  }
  print_bench_header(*device, common.repeats,
                     "; GB/s count 2n(K+V) bytes (each key and value read and written once, as cub_bench)");
  std::vector<SortRow> rows;
  rc = bench_sort(*device, desc, variants, sizes, common.repeats, shape, rows);
  print_sort_rows(rows);
  if (!common.json.empty())
    write_sort_json(common.json, device->context().capabilities().device_name, rows, bits_label(desc));
  if (common.stats) print_pipeline_statistics(*device);
  return rc;
}

int verify_sort(const Device& device, std::mt19937_64& rng) {
  int passed = 0, failed = 0;
  const Capabilities& caps = device.context().capabilities();
  // Ballot ranking with both scatters everywhere; partitioned ranking too where the device has
  // subgroupPartitionNV.
  for (SortRanking r : {SortRanking::ballots, SortRanking::partitioned})
  for (SortScatter sc : {SortScatter::staged, SortScatter::direct})
  for (SortAlgorithm a : {SortAlgorithm::onesweep, SortAlgorithm::reduce_then_scan}) {
    if (a == SortAlgorithm::onesweep && !caps.has(feature_memory_model)) continue;
    if (r == SortRanking::partitioned && (!caps.has(feature_subgroup_partitioned) || sc == SortScatter::direct)) continue;
    // The options automatic never picks exist only in builds with VKPRIM_SORT_OPTION_KERNELS.
    if (!VKPRIM_HAS_SORT_OPTION_KERNELS && (r != SortRanking::ballots || sc != SortScatter::staged)) continue;
    for (DataType t : {DataType::u32, DataType::i32, DataType::f32, DataType::u64, DataType::i64, DataType::f64,
                       DataType::u16, DataType::u8}) {
      if (is_64bit(t) && !caps.has(feature_int64)) continue;
      if (t == DataType::u8 && !caps.has(feature_storage_8bit)) continue;
      if (t == DataType::u16 && !caps.has(feature_storage_16bit)) continue;
      // Narrow keys rank with ballots and scatter staged only.
      if (size_of(t) < 4 && (r != SortRanking::ballots || sc != SortScatter::staged)) continue;
      for (uint32_t vb : {0u, 4u, 8u, 16u, 36u})  // 16 and 36: wide values in units of 16 and 4 bytes
        for (SortOrder o : {SortOrder::ascending, SortOrder::descending}) {
          SortDesc d;
          d.key_type = t;
          d.value_size = vb;
          d.order = o;
          d.algorithm = a;
          d.ranking = r;
          d.scatter = sc;
          d.max_count = 100003;
          std::string why;
          auto plan = RadixSort::create(const_cast<Device&>(device).context(), d);
          const uint32_t kb = size_of(t);
          for (uint64_t n : {uint64_t(1000), d.max_count}) {
            if (!plan) {
              why = plan.error().message;
              break;
            }
            std::vector<uint8_t> in(n * kb), vals(n * vb), got_k(n * kb), got_v(n * vb);
            for (auto& b : in) b = uint8_t(rng() & 0x3);  // few distinct keys: ties test stability
            for (uint64_t i = 0; i < n && vb; ++i) make_value(i, &vals[i * vb], vb);
            auto keys = device.create_buffer(n * kb);
            auto values = device.create_buffer(std::max<uint64_t>(n * vb, 16));
            auto scratch = device.create_buffer(plan->scratch_requirements().size);
            if (!keys || !values || !scratch || !device.upload(keys.value(), in.data(), n * kb) ||
                (vb && !device.upload(values.value(), vals.data(), n * vb))) {
              why = "buffer setup failed";
              break;
            }
            Result<void> recorded;
            auto done = device.submit([&](VkCommandBuffer cmd) {
              recorded = plan->record(cmd, keys->range(), vb ? values->range(0, n * vb) : BufferRange{}, n,
                                      scratch->range());
              detail::compute_to_fill_barrier(device.context().impl(), cmd);
            });
            if (!recorded || !done) {
              why = recorded ? done.message() : recorded.message();
              break;
            }
            if (!device.download(keys.value(), got_k.data(), n * kb) ||
                (vb && !device.download(values.value(), got_v.data(), n * vb))) {
              why = "download failed";
              break;
            }
            why = check_sorted(d, in, got_k, got_v, n);
            if (!why.empty()) break;
          }
          if (why.empty()) {
            ++passed;
          } else {
            ++failed;
            std::printf("FAIL sort %s (%s ranking, %s scatter) %s value_size %u %s: %s\n", to_string(a),
                        to_string(r), to_string(sc), to_string(t), vb, to_string(o), why.c_str());
          }
        }
    }
  }
  std::printf("sort: %d passed, %d failed\n", passed, failed);
  return failed;
}

}  // namespace vkprim::tools
