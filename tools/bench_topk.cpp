// `vkprim bench topk`: GPU time from timestamps (median after warm-up) of TopK::record on uniform random keys,
// GB/s counting the keys (and values) read once, G keys/s, the ratio to the read and copy ceilings measured on
// the same buffers in the same run, a CPU row (std::partial_sort of indices), and every result verified
// against the host. Issue 48's target: k = 1024 of 2^26 keys at >= 0.5 of the read ceiling. With
// --segment-size S, TopK::record_segmented instead: the k of every segment of S keys (CSR offsets), each
// segment verified.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "bench_support.hpp"
#include "commands.hpp"
#include "host_sort.hpp"
#include "segment_shapes.hpp"
#include "topk_commands.hpp"
#include "vkprim/topk.hpp"

namespace vkprim::tools {

namespace {

struct TopKRow {
  std::string primitive, algorithm, type, order;
  uint32_t k = 0, value_size = 0;
  uint64_t n = 0;
  double median_us = 0, gbps = 0, gkeys = 0, of_read = 0, of_copy = 0;
  bool verified = false;
};

void print_topk_rows(const std::vector<TopKRow>& rows) {
  std::printf("%-9s %-10s %-4s %-10s %6s %5s %8s %12s %10s %10s %8s %8s %s\n", "primitive", "algorithm", "type",
              "order", "k", "value", "n", "median_us", "GB/s", "Gkey/s", "x_read", "x_copy", "verified");
  for (const TopKRow& r : rows)
    std::printf("%-9s %-10s %-4s %-10s %6u %5u %8s %12.2f %10.1f %10.2f %8.3f %8.3f %s\n", r.primitive.c_str(),
                r.algorithm.c_str(), r.type.c_str(), r.order.c_str(), r.k, r.value_size, size_label(r.n).c_str(),
                r.median_us, r.gbps, r.gkeys, r.of_read, r.of_copy, verified_cell(r.verified, "").c_str());
}

void write_topk_json(const std::string& path, const std::string& device, const std::vector<TopKRow>& rows) {
  write_json(path, device, rows, [&](const TopKRow& r, JsonRow& json) {
    json.text("primitive", r.primitive).text("algorithm", r.algorithm).text("type", r.type).text("order", r.order);
    json.number("k", r.k).number("value_size", r.value_size).number("n", r.n).number("median_us", r.median_us);
    json.number("gbps", r.gbps).number("gkeys", r.gkeys).number("of_read", r.of_read).number("of_copy", r.of_copy);
    json.flag("verified", r.verified);
  });
}

// The k expected keys in output order (ties to the earliest input).
std::vector<uint32_t> host_topk(DataType type, SortOrder order, const std::vector<uint32_t>& keys, uint64_t n,
                                uint32_t k) {
  std::vector<uint32_t> index(n);
  std::iota(index.begin(), index.end(), 0u);
  const uint32_t m = uint32_t(std::min<uint64_t>(k, n));
  std::partial_sort(index.begin(), index.begin() + m, index.end(), [&](uint32_t a, uint32_t b) {
    const uint64_t oa = host::ordered_bits(keys[a], type, order), ob = host::ordered_bits(keys[b], type, order);
    return oa != ob ? oa < ob : a < b;
  });
  std::vector<uint32_t> out(m);
  for (uint32_t i = 0; i < m; ++i) out[i] = keys[index[i]];
  return out;
}

// Every k at every size for one plan shape; the number of mismatches, or -1 after printing an error.
int bench_topk(const Device& device, const TopKDesc& base, const std::vector<uint64_t>& sizes,
               const std::vector<uint64_t>& ks, int repeats, std::vector<TopKRow>& rows) {
  TopKDesc desc = base;
  desc.max_count = *std::max_element(sizes.begin(), sizes.end());
  desc.max_k = uint32_t(std::min<uint64_t>(*std::max_element(ks.begin(), ks.end()), 65536));
  auto plan = TopK::create(const_cast<Device&>(device).context(), desc);
  if (!plan) {
    std::fprintf(stderr, "bench: TopK::create: %s\n", plan.error().message.c_str());
    return -1;
  }
  // The keys' buffer and the copy's target hold the ceilings' bytes: the keys and the values.
  const VkDeviceSize bytes = vector_bytes(desc.max_count * 4);
  const VkDeviceSize ceiling_bytes = vector_bytes(desc.max_count * (4 + desc.value_size));
  auto keys = device.create_buffer(ceiling_bytes), copy_target = device.create_buffer(ceiling_bytes);
  auto values = device.create_buffer(bytes), out_keys = device.create_buffer(uint64_t(desc.max_k) * 4);
  auto out_values = device.create_buffer(uint64_t(desc.max_k) * 4);
  auto scratch = device.create_buffer(plan->scratch_requirements().size);
  if (!keys || !copy_target || !values || !out_keys || !out_values || !scratch) {
    std::fprintf(stderr, "bench: buffer allocation failed\n");
    return -1;
  }
  const std::vector<uint32_t> host_keys = upload_random<uint32_t>(device, keys.value(), desc.max_count);
  if (host_keys.empty()) return -1;
  int failures = 0;
  for (uint64_t n : sizes)
    for (uint64_t k64 : ks) {
      const uint32_t k = uint32_t(std::min<uint64_t>(k64, desc.max_k));
      progress("bench topk %s %s k=%u n=%s ...\n", to_string(desc.key_type), to_string(desc.order), k,
               size_label(n).c_str());
      std::vector<uint32_t> expected;
      const double cpu = time_cpu([&] { expected = host_topk(desc.key_type, desc.order, host_keys, n, k); });
      const double read = double(n) * (4 + desc.value_size);
      const auto ceilings = ceilings_for(device, keys.value(), copy_target.value(), uint64_t(read), repeats);
      if (!ceilings) return -1;
      add_ceiling_rows(rows, *ceilings, [&](const char* name, double us, double gbps, double of_read, double of_copy) {
        return TopKRow{"ceiling", name, "u32", "-", 0, 0, n, us, gbps, 0, of_read, of_copy, true};
      });
      Recorder record = [&, n, k](VkCommandBuffer cmd) {
        const bool pairs = desc.value_size != 0;
        return plan->record(cmd, keys->range(0, n * 4), pairs ? values->range(0, n * 4) : BufferRange{}, n, k,
                            out_keys->range(0, std::max<uint64_t>(1, std::min<uint64_t>(k, n)) * 4),
                            pairs ? out_values->range() : BufferRange{}, scratch->range());
      };
      const auto t = warm_and_time(device, repeats, record);
      plan->release_descriptor_sets();
      if (!t) {
        std::fprintf(stderr, "bench: topk: %s\n", t.error().message.c_str());
        return -1;
      }
      std::vector<uint32_t> got(expected.size());
      bool ok = bool(device.download(out_keys.value(), got.data(), got.size() * 4));
      if (!desc.sorted)  // any order: compare as sorted lists
        std::sort(got.begin(), got.end(), [&](uint32_t a, uint32_t b) {
          return host::ordered_bits(a, desc.key_type, desc.order) <
                 host::ordered_bits(b, desc.key_type, desc.order);
        });
      ok = ok && got == expected;
      if (!ok) {
        ++failures;
        std::fprintf(stderr, "MISMATCH topk k=%u n=%llu\n", k, (unsigned long long)n);
      }
      auto row = [&](const char* algorithm, double ns, bool verified) {
        const double gbps = read / ns;
        return TopKRow{"topk", algorithm, to_string(desc.key_type), to_string(desc.order), k, desc.value_size, n,
                       ns / 1e3, gbps, double(n) / ns, ceilings->of_read(gbps), ceilings->of_copy(gbps), verified};
      };
      rows.push_back(row("cpu", cpu, true));
      rows.push_back(row(desc.sorted ? "radix" : "unsorted", t.value(), ok));
    }
  return failures;
}

// record_segmented over segments of `size` keys end to end at every n and k: the number of mismatching segments,
// or -1 after printing an error. Rows' algorithm "segments S".
int bench_topk_segmented(const Device& device, const TopKDesc& base, const std::vector<uint64_t>& sizes,
                         const std::vector<uint64_t>& ks, uint64_t size, int repeats, std::vector<TopKRow>& rows) {
  TopKDesc desc = base;
  desc.max_count = *std::max_element(sizes.begin(), sizes.end());
  desc.max_k = uint32_t(std::min<uint64_t>(*std::max_element(ks.begin(), ks.end()), 65536));
  desc.max_segments = (desc.max_count + size - 1) / size;
  auto plan = TopK::create(const_cast<Device&>(device).context(), desc);
  if (!plan) {
    std::fprintf(stderr, "bench: TopK::create: %s\n", plan.error().message.c_str());
    return -1;
  }
  const VkDeviceSize bytes = vector_bytes(desc.max_count * 4), out_bytes = desc.max_segments * desc.max_k * 4;
  const VkDeviceSize ceiling_bytes = vector_bytes(desc.max_count * (4 + desc.value_size));  // keys and values
  auto scratch = device.create_buffer(plan->scratch_requirements().size);
  auto keys = device.create_buffer(ceiling_bytes), copy_target = device.create_buffer(ceiling_bytes);
  auto values = device.create_buffer(bytes), out_keys = device.create_buffer(out_bytes);
  auto out_values = device.create_buffer(out_bytes), offsets = device.create_buffer((desc.max_segments + 1) * 4);
  if (!scratch || !keys || !copy_target || !values || !out_keys || !out_values || !offsets) {
    std::fprintf(stderr, "bench: buffer allocation failed\n");
    return -1;
  }
  const std::vector<uint32_t> host_keys = upload_random<uint32_t>(device, keys.value(), desc.max_count);
  if (host_keys.empty()) return -1;
  std::mt19937_64 rng(size);
  int failures = 0;
  for (uint64_t n : sizes) {
    const std::vector<uint32_t> cuts = segment_offsets(n, size, 0.0, 1, rng);
    const uint64_t segments = cuts.size() - 1;
    if (!device.upload(offsets.value(), cuts.data(), cuts.size() * 4)) return -1;
    for (uint64_t k64 : ks) {
      const uint32_t k = uint32_t(std::min<uint64_t>(k64, desc.max_k));
      progress("bench topk segmented %s k=%u n=%s segments of %s ...\n", to_string(desc.order), k,
               size_label(n).c_str(), size_label(size).c_str());
      const double read = double(n) * (4 + desc.value_size);
      const auto ceilings = ceilings_for(device, keys.value(), copy_target.value(), uint64_t(read), repeats);
      if (!ceilings) return -1;
      const bool pairs = desc.value_size != 0;
      Recorder record = [&, n, k, segments](VkCommandBuffer cmd) {
        return plan->record_segmented(cmd, keys->range(0, n * 4), pairs ? values->range(0, n * 4) : BufferRange{},
                                      offsets->range(0, segments * 4), offsets->range(4, segments * 4), segments, k,
                                      out_keys->range(0, segments * k * 4),
                                      pairs ? out_values->range(0, segments * k * 4) : BufferRange{}, scratch->range());
      };
      const auto t = warm_and_time(device, repeats, record);
      plan->release_descriptor_sets();
      if (!t) {
        std::fprintf(stderr, "bench: topk segmented: %s\n", t.error().message.c_str());
        return -1;
      }
      std::vector<uint32_t> got(segments * k);
      bool ok = bool(device.download(out_keys.value(), got.data(), got.size() * 4));
      for (uint64_t s = 0; ok && s < segments; ++s) {
        const std::vector<uint32_t> seg(host_keys.begin() + cuts[s], host_keys.begin() + cuts[s + 1]);
        const std::vector<uint32_t> want = host_topk(desc.key_type, desc.order, seg, seg.size(), k);
        std::vector<uint32_t> have(got.begin() + s * k, got.begin() + s * k + want.size());
        if (!desc.sorted)
          std::sort(have.begin(), have.end(), [&](uint32_t a, uint32_t b) {
            return host::ordered_bits(a, desc.key_type, desc.order) < host::ordered_bits(b, desc.key_type, desc.order);
          });
        if (have != want) {
          ++failures;
          ok = false;
          std::fprintf(stderr, "MISMATCH topk segmented k=%u n=%llu segment %llu\n", k, (unsigned long long)n,
                       (unsigned long long)s);
        }
      }
      const double ns = t.value(), gbps = read / ns;
      rows.push_back(TopKRow{"topk", "segments " + size_label(size), to_string(desc.key_type), to_string(desc.order),
                             k, desc.value_size, n, ns / 1e3, gbps, double(n) / ns, ceilings->of_read(gbps),
                             ceilings->of_copy(gbps), ok});
    }
  }
  return failures;
}

}  // namespace

int run_bench_topk(std::vector<std::string> args) {
  std::string type_s = "u32", order_s = "descending", ks_s = "1024", values_s = "0", sorted_s = "yes", segment_s;
  take_option(args, "--type", type_s);
  take_option(args, "--order", order_s);
  take_option(args, "--k", ks_s);
  take_option(args, "--value-size", values_s);
  take_option(args, "--sorted", sorted_s);
  take_option(args, "--segment-size", segment_s);
  BenchArgs common;
  int rc = 0;
  auto device = open_bench(args, "vkprim bench topk", common, rc);
  if (!device) return rc;
  TopKDesc base;
  std::vector<uint64_t> sizes, ks, segment_sizes;
  if (!parse_type(type_s, base.key_type) || size_of(base.key_type) != 4 || !parse(order_s.c_str(), base.order) ||
      !parse_sizes(common.sizes, sizes) || !parse_sizes(ks_s, ks) || (values_s != "0" && values_s != "4") ||
      (!segment_s.empty() && !parse_sizes(segment_s, segment_sizes))) {
    std::fprintf(stderr, "vkprim bench topk: bad --type (u32, i32, f32), --order, --k, --value-size (0, 4), "
                         "--segment-size or --sizes\n");
    return 2;
  }
  base.value_size = uint32_t(std::atoi(values_s.c_str()));
  base.sorted = sorted_s != "no";
  print_bench_header(*device, common.repeats, "; GB/s count the keys (and values) read once; keys uniform random bits");
  std::vector<TopKRow> rows;
  int failures = 0;
  if (segment_sizes.empty()) failures = bench_topk(*device, base, sizes, ks, common.repeats, rows);
  for (uint64_t size : segment_sizes) {
    const int f = bench_topk_segmented(*device, base, sizes, ks, std::max<uint64_t>(size, 1), common.repeats, rows);
    failures = f < 0 || failures < 0 ? -1 : failures + f;
  }
  print_topk_rows(rows);
  if (!common.json.empty()) write_topk_json(common.json, device->context().capabilities().device_name, rows);
  if (common.stats) print_pipeline_statistics(*device);
  return failures == 0 ? 0 : 1;
}

}  // namespace vkprim::tools
