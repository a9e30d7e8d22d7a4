// `vkprim bench sort`: GPU time from timestamps (median after ~200 ms of warm-up), G keys/s (G pairs/s),
// GB/s counting each key (and value) read and written once (2 n (K + V) bytes, as cub_bench counts
// DeviceRadixSort), the ratio to the copy ceiling measured on the same buffers in the same run, and every
// result verified. The sort is in place, so before each timed run (outside the timestamps) the keys and
// values are restored from a pristine copy with vkCmdCopyBuffer: every run sorts the same random input.
// Keys are uniformly random bits of the key type (floats included: NaNs sort to the ends).
// `vkprim verify` runs verify_sort: every algorithm x key type x keys/pairs x order at small sizes.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "barriers.hpp"
#include "bench_support.hpp"
#include "commands.hpp"
#include "context_impl.hpp"
#include "errors.hpp"
#include "sort_commands.hpp"
#include "vkprim/sort.hpp"

namespace vkprim::tools {

namespace {

struct SortRow {
  std::string primitive, algorithm, key, value, order;
  uint64_t n = 0;
  double median_us = 0, gkeys = 0, gbps = 0, of_read = 0, of_copy = 0;
  bool verified = false;
  std::string note;
};

void write_sort_json(const std::string& path, const std::string& device, const std::vector<SortRow>& rows) {
  std::ofstream out(path);
  out << "{\"device\": \"" << device << "\", \"rows\": [\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const SortRow& r = rows[i];
    out << "  {\"primitive\": \"" << r.primitive << "\", \"algorithm\": \"" << r.algorithm << "\", \"key\": \"" << r.key
        << "\", \"value\": \"" << r.value << "\", \"order\": \"" << r.order << "\", \"n\": " << r.n
        << ", \"median_us\": " << r.median_us << ", \"gelems\": " << r.gkeys << ", \"gbps\": " << r.gbps
        << ", \"of_read\": " << r.of_read << ", \"of_copy\": " << r.of_copy
        << ", \"verified\": " << (r.verified ? "true" : "false") << ", \"note\": \"" << r.note << "\"}"
        << (i + 1 < rows.size() ? "," : "") << "\n";
  }
  out << "]}\n";
}

void print_sort_rows(const std::vector<SortRow>& rows) {
  std::printf("%-10s %-28s %-4s %-5s %-10s %8s %12s %9s %10s %8s %8s %s\n", "primitive", "algorithm", "key", "value",
              "order", "n", "median_us", "Gkeys/s", "GB/s", "x_read", "x_copy", "verified  notes");
  for (const SortRow& r : rows)
    std::printf("%-10s %-28s %-4s %-5s %-10s %8s %12.2f %9.2f %10.1f %8.3f %8.3f %s\n", r.primitive.c_str(),
                r.algorithm.c_str(), r.key.c_str(), r.value.c_str(), r.order.c_str(), size_label(r.n).c_str(),
                r.median_us, r.gkeys, r.gbps, r.of_read, r.of_copy,
                ((r.verified ? std::string("yes       ") : std::string("NO        ")) + r.note).c_str());
}

// The documented order-preserving transform on the host (see vkprim/sort.hpp).
uint64_t ordered_bits(uint64_t bits, DataType type, SortOrder order) {
  const uint32_t width = 8 * size_of(type);
  const uint64_t mask = width == 64 ? ~uint64_t(0) : (uint64_t(1) << width) - 1;
  const uint64_t sign = uint64_t(1) << (width - 1);
  bits &= mask;
  if (type == DataType::f32 || type == DataType::f64) bits = (bits & sign) ? (~bits & mask) : (bits ^ sign);
  else if (type == DataType::i32 || type == DataType::i64) bits ^= sign;
  if (order == SortOrder::descending) bits = ~bits & mask;
  return bits;
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

// O(n) check of a sort of `in` (values: the input index): keys ordered on [begin, end); keys only: the same
// multiset (fingerprint); pairs: values a permutation with key[i] == in[value[i]], equal keys in input order.
std::string check_sorted(const SortDesc& d, const std::vector<uint8_t>& in, const std::vector<uint8_t>& keys,
                         const std::vector<uint8_t>& values, uint64_t n) {
  const uint32_t kb = size_of(d.key_type), vb = d.value_size;
  const uint32_t end = d.end_bit ? d.end_bit : 8 * kb;
  auto field = [&](uint64_t bits) {
    const uint64_t o = ordered_bits(bits, d.key_type, d.order) >> d.begin_bit;
    const uint32_t w = end - d.begin_bit;
    return w == 64 ? o : o & ((uint64_t(1) << w) - 1);
  };
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
      const uint64_t v = load_bits(&values[i * vb], vb);
      if (v >= n || seen[v]) return "values are not a permutation at " + std::to_string(i);
      seen[v] = true;
      if (load_bits(&in[v * kb], kb) != k) return "value " + std::to_string(v) + " does not follow its key";
      if (tie && v < load_bits(&values[(i - 1) * vb], vb)) return "equal keys lost their order at " + std::to_string(i);
    }
  }
  if (sum_in != sum_out) return "the sorted keys are not a permutation of the input";
  return {};
}

// Times `record` `repeats` times in one command buffer; before each run (outside the timestamps) `restore`
// puts the input back with transfers.
Result<std::vector<double>> time_sorts(const Device& device, int repeats, const Recorder& restore, const Recorder& record) {
  auto& c = device.context().impl();
  if (!c.caps.has(feature_timestamps)) return detail::make_error(Status::unsupported, "the queue has no timestamp support");
  VkQueryPoolCreateInfo info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
  info.queryType = VK_QUERY_TYPE_TIMESTAMP;
  info.queryCount = uint32_t(2 * repeats);
  VkQueryPool pool = VK_NULL_HANDLE;
  VkResult r = c.vk.vkCreateQueryPool(c.device, &info, nullptr, &pool);
  if (r != VK_SUCCESS) return detail::vk_error(r, "vkCreateQueryPool");
  Result<void> recorded;
  auto submitted = device.submit([&](VkCommandBuffer cmd) {
    c.vk.vkCmdResetQueryPool(cmd, pool, 0, info.queryCount);
    for (int i = 0; i < repeats && recorded.ok(); ++i) {
      detail::compute_to_fill_barrier(c, cmd);  // the previous sort's writes before the restoring copies
      recorded = restore(cmd);
      detail::transfer_to_compute_barrier(c, cmd);
      c.vk.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, uint32_t(2 * i));
      if (recorded) recorded = record(cmd);
      c.vk.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, uint32_t(2 * i + 1));
    }
  });
  std::vector<uint64_t> stamps(info.queryCount);
  if (submitted && recorded)
    r = c.vk.vkGetQueryPoolResults(c.device, pool, 0, info.queryCount, stamps.size() * 8, stamps.data(), 8,
                                   VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
  c.vk.vkDestroyQueryPool(c.device, pool, nullptr);
  if (!submitted) return submitted.error();
  if (!recorded) return recorded.error();
  if (r != VK_SUCCESS) return detail::vk_error(r, "vkGetQueryPoolResults");
  const uint64_t mask = c.caps.timestamp_valid_bits >= 64 ? ~uint64_t(0) : (uint64_t(1) << c.caps.timestamp_valid_bits) - 1;
  std::vector<double> ns;
  for (int i = 0; i < repeats; ++i) ns.push_back(double((stamps[2 * i + 1] - stamps[2 * i]) & mask) * c.caps.timestamp_period_ns);
  return ns;
}

int bench_sort(const Device& device, const SortDesc& base, const std::vector<SortDesc>& variants,
               const std::vector<uint64_t>& sizes, int repeats, std::vector<SortRow>& rows) {
  const uint64_t max_n = *std::max_element(sizes.begin(), sizes.end());
  const uint32_t kb = size_of(base.key_type), vb = base.value_size;
  std::vector<RadixSort> plans;
  std::vector<std::string> labels;
  VkDeviceSize scratch_bytes = 16;
  for (const SortDesc& v : variants) {
    SortDesc d = base;
    d.max_count = max_n;
    d.algorithm = v.algorithm;
    d.workgroup_size = v.workgroup_size;
    d.items_per_thread = v.items_per_thread;
    auto plan = RadixSort::create(const_cast<Device&>(device).context(), d);
    if (!plan && plan.status() == Status::unsupported) {
      std::fprintf(stderr, "sort %s skipped: %s\n", to_string(v.algorithm), plan.error().message.c_str());
      continue;
    }
    if (!plan) {
      std::fprintf(stderr, "sort %s: %s\n", to_string(v.algorithm), plan.error().message.c_str());
      return 1;
    }
    std::string label = to_string(plan->algorithm());
    if (d.workgroup_size || d.items_per_thread)
      label += "@" + std::to_string(d.workgroup_size) + "x" + std::to_string(d.items_per_thread);
    labels.push_back(label);
    scratch_bytes = std::max(scratch_bytes, plan->scratch_requirements().size);
    plans.push_back(std::move(plan).value());
  }
  if (plans.empty()) {
    std::fprintf(stderr, "bench: no requested sort algorithm is available on this device\n");
    return 1;
  }
  // Largest buffers first (DESIGN.md: NVIDIA placed late large allocations slower).
  const VkDeviceSize key_bytes = (max_n * kb + 15) / 16 * 16, value_bytes = (std::max<uint64_t>(max_n * vb, 16) + 15) / 16 * 16;
  auto scratch = device.create_buffer(scratch_bytes);
  auto keys = device.create_buffer(key_bytes);
  auto pristine_keys = device.create_buffer(key_bytes);
  auto values = device.create_buffer(value_bytes);
  auto pristine_values = device.create_buffer(value_bytes);
  if (!scratch || !keys || !pristine_keys || !values || !pristine_values) {
    std::fprintf(stderr, "bench: buffer allocation failed\n");
    return 1;
  }
  std::vector<uint8_t> host_keys(max_n * kb), host_values(max_n * vb);
  std::mt19937_64 rng(std::random_device{}());
  for (uint64_t i = 0; i < max_n * kb; i += 8) {
    const uint64_t r = rng();
    std::memcpy(&host_keys[i], &r, std::min<uint64_t>(8, max_n * kb - i));
  }
  for (uint64_t i = 0; i < max_n && vb; ++i) {
    const uint64_t v = i;
    std::memcpy(&host_values[i * vb], &v, vb);
  }
  if (!device.upload(pristine_keys.value(), host_keys.data(), max_n * kb) ||
      (vb && !device.upload(pristine_values.value(), host_values.data(), max_n * vb))) {
    std::fprintf(stderr, "bench: upload failed\n");
    return 1;
  }
  auto& c = device.context().impl();
  const char* value_s = vb == 0 ? "-" : (vb == 4 ? "32" : "64");
  const char* primitive = vb ? "sort_pairs" : "sort_keys";
  std::vector<uint8_t> got_keys(max_n * kb), got_values(max_n * vb);
  int failures = 0;
  for (uint64_t n : sizes) {
    std::fprintf(stderr, "bench sort %s %s n=%s ...\n", to_string(base.key_type), primitive, size_label(n).c_str());
    auto restore = [&, n](VkCommandBuffer cmd) -> Result<void> {
      VkBufferCopy k{0, 0, n * kb};
      c.vk.vkCmdCopyBuffer(cmd, pristine_keys->handle(), keys->handle(), 1, &k);
      if (vb) {
        VkBufferCopy v{0, 0, n * vb};
        c.vk.vkCmdCopyBuffer(cmd, pristine_values->handle(), values->handle(), 1, &v);
      }
      return {};
    };
    auto record_for = [&](const RadixSort& plan) -> Recorder {
      return [&, n](VkCommandBuffer cmd) {
        return plan.record(cmd, keys->range(0, n * kb), vb ? values->range(0, n * vb) : BufferRange{}, n,
                           scratch->range());
      };
    };
    auto warm = [&](const Recorder& run) -> Result<void> {
      auto first = time_sorts(device, 2, restore, run);
      if (!first) return first.error();
      const int more = int(std::clamp(200e6 / std::max(1.0, median(first.value())), 0.0, 500.0));
      if (more > 0)
        if (auto again = time_sorts(device, more, restore, run); !again) return again.error();
      return {};
    };
    if (auto warmed = warm(record_for(plans.front())); !warmed) {
      std::fprintf(stderr, "bench: warm-up: %s\n", warmed.message().c_str());
      return 1;
    }
    const uint64_t ceiling_bytes = std::max<uint64_t>(n * kb / 16 * 16, 16);
    auto ceilings = measure_ceilings(device, pristine_keys.value(), keys.value(), ceiling_bytes, repeats);
    if (!ceilings) {
      std::fprintf(stderr, "bench: ceilings: %s\n", ceilings.error().message.c_str());
      return 1;
    }
    const double read = ceilings->read_gbps, copy = ceilings->copy_gbps;
    rows.push_back({"ceiling", "read (uvec4 shader)", "u32", "-", "-", n, double(ceiling_bytes) / read / 1e3, 0, read,
                    1.0, read / copy, true});
    rows.push_back({"ceiling", "copy (uvec4 shader)", "u32", "-", "-", n, 2.0 * double(ceiling_bytes) / copy / 1e3, 0,
                    copy, copy / read, 1.0, true});
    const double moved = 2.0 * double(n) * (kb + vb);
    std::vector<uint8_t> input(host_keys.begin(), host_keys.begin() + std::ptrdiff_t(n * kb));
    for (size_t k = 0; k < plans.size(); ++k) {
      const RadixSort& plan = plans[k];
      const Recorder run = record_for(plan);
      auto warmed = warm(run);
      auto ns = warmed ? time_sorts(device, repeats, restore, run) : Result<std::vector<double>>(warmed.error());
      if (!ns) {
        std::fprintf(stderr, "bench: sort %s: %s\n", labels[k].c_str(), ns.error().message.c_str());
        return 1;
      }
      std::string why;
      if (!device.download(keys.value(), got_keys.data(), n * kb) ||
          (vb && !device.download(values.value(), got_values.data(), n * vb)))
        why = "download failed";
      else
        why = check_sorted(plan.desc(), input, got_keys, got_values, n);
      if (!why.empty()) {
        ++failures;
        std::fprintf(stderr, "MISMATCH sort %s n=%llu: %s\n", labels[k].c_str(), (unsigned long long)n, why.c_str());
      }
      std::string note = "tile=" + std::to_string(plan.keys_per_tile()) + " passes=" + std::to_string(plan.digit_passes());
      if (plan.algorithm() == SortAlgorithm::onesweep) {
        uint32_t stats[4] = {};
        if (device.download(scratch.value(), stats, sizeof(stats), plan.statistics_offset()))
          note += " fallbacks=" + std::to_string(stats[1]) + " steps/tile=" +
                  std::to_string(stats[0] ? double(stats[2]) / stats[0] : 0.0).substr(0, 4) +
                  " max_depth=" + std::to_string(stats[3]);
      }
      const double t = median(ns.value());
      rows.push_back({primitive, labels[k], to_string(base.key_type), value_s, to_string(base.order), n, t / 1e3,
                      double(n) / t, moved / t, moved / t / read, moved / t / copy, why.empty(), note});
    }
  }
  return failures ? 1 : 0;
}

}  // namespace

int run_bench_sort(std::vector<std::string> args) {
  std::string key_s = "u32", alg_s = "automatic", sizes_s = "2^16..2^24", repeat_s = "20", order_s = "ascending",
              value_s = "4", bits_s, json;
  const bool pairs = take_flag(args, "--pairs");
  take_option(args, "--value-size", value_s);
  take_option(args, "--key-type", key_s);
  take_option(args, "--order", order_s);
  take_option(args, "--bits", bits_s);
  take_option(args, "--algorithm", alg_s);
  take_option(args, "--sizes", sizes_s);
  take_option(args, "--repeat", repeat_s);
  take_option(args, "--json", json);
  auto device = open_device(args);
  if (!device) return 1;
  if (!args.empty()) {
    std::fprintf(stderr, "vkprim bench sort: unknown argument '%s'\n", args[0].c_str());
    return 2;
  }
  SortDesc desc;
  std::vector<uint64_t> sizes;
  if (!parse_type(key_s, desc.key_type) || !parse(order_s.c_str(), desc.order) || !parse_sizes(sizes_s, sizes)) {
    std::fprintf(stderr, "vkprim bench sort: bad --key-type, --order or --sizes\n");
    return 2;
  }
  desc.value_size = pairs ? uint32_t(std::atoi(value_s.c_str())) : 0;
  if (!bits_s.empty() && std::sscanf(bits_s.c_str(), "%u..%u", &desc.begin_bit, &desc.end_bit) != 2) {
    std::fprintf(stderr, "vkprim bench sort: --bits takes BEGIN..END\n");
    return 2;
  }
  std::vector<SortDesc> variants;  // algorithm + tile override ("onesweep@512x16")
  if (alg_s == "all") alg_s = "onesweep,reduce_then_scan";
  for (size_t pos = 0; pos <= alg_s.size();) {
    size_t comma = alg_s.find(',', pos);
    if (comma == std::string::npos) comma = alg_s.size();
    std::string name = alg_s.substr(pos, comma - pos);
    SortDesc v;
    if (const size_t at = name.find('@'); at != std::string::npos) {
      std::sscanf(name.c_str() + at + 1, "%ux%u", &v.workgroup_size, &v.items_per_thread);
      name.resize(at);
    }
    if (!parse(name.c_str(), v.algorithm)) {
      std::fprintf(stderr, "vkprim bench sort: unknown sort algorithm '%s'\n", name.c_str());
      return 2;
    }
    variants.push_back(v);
    pos = comma + 1;
  }
  const int repeats = std::max(10, std::atoi(repeat_s.c_str()));
  const Capabilities& caps = device->context().capabilities();
  std::printf("device: %s, driver %s %s; median of %d timed runs after ~200 ms of warm-up; GB/s count 2n(K+V) bytes "
              "(each key and value read and written once, as cub_bench)\n",
              caps.device_name.c_str(), caps.driver_name.c_str(), caps.driver_info.c_str(), repeats);
  std::vector<SortRow> rows;
  const int rc = bench_sort(*device, desc, variants, sizes, repeats, rows);
  print_sort_rows(rows);
  if (!json.empty()) write_sort_json(json, caps.device_name, rows);
  return rc;
}

int verify_sort(const Device& device, std::mt19937_64& rng) {
  int passed = 0, failed = 0;
  const Capabilities& caps = device.context().capabilities();
  for (SortAlgorithm a : {SortAlgorithm::onesweep, SortAlgorithm::reduce_then_scan}) {
    if (a == SortAlgorithm::onesweep && !caps.has(feature_memory_model)) continue;
    for (DataType t : {DataType::u32, DataType::i32, DataType::f32, DataType::u64, DataType::i64, DataType::f64}) {
      if (is_64bit(t) && !caps.has(feature_int64)) continue;
      for (uint32_t vb : {0u, 4u, 8u})
        for (SortOrder o : {SortOrder::ascending, SortOrder::descending}) {
          SortDesc d;
          d.key_type = t;
          d.value_size = vb;
          d.order = o;
          d.algorithm = a;
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
            for (uint64_t i = 0; i < n && vb; ++i) std::memcpy(&vals[i * vb], &i, vb);
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
            std::printf("FAIL sort %s %s value_size %u %s: %s\n", to_string(a), to_string(t), vb, to_string(o),
                        why.c_str());
          }
        }
    }
  }
  std::printf("sort: %d passed, %d failed\n", passed, failed);
  return failed;
}

}  // namespace vkprim::tools
