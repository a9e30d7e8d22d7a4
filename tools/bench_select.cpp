// `vkprim bench select` (and `--partition`): GPU time from timestamps (median after warm-up), GB/s
// counting the bytes read (input + flags) and written (the kept elements; Partition: all of them), the
// ratio to the read and copy ceilings measured on the same buffers in the same run, a CPU row
// (std::copy_if / std::stable_partition), and every result verified against the CPU.
// The comparand of a comparison predicate is the data's quantile that keeps about --density percent.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "bench_support.hpp"
#include "commands.hpp"
#include "select_commands.hpp"
#include "vkprim/select.hpp"

namespace vkprim::tools {

namespace {

struct SelectRow {
  std::string primitive, algorithm, type, predicate;
  uint64_t n = 0, kept = 0;
  double median_us = 0, gbps = 0, of_read = 0, of_copy = 0;
  bool verified = false;
  std::string note;
};

void write_select_json(const std::string& path, const std::string& device, const std::vector<SelectRow>& rows) {
  std::ofstream out(path);
  out << "{\"device\": \"" << device << "\", \"rows\": [\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const SelectRow& r = rows[i];
    out << "  {\"primitive\": \"" << r.primitive << "\", \"algorithm\": \"" << r.algorithm << "\", \"type\": \""
        << r.type << "\", \"predicate\": \"" << r.predicate << "\", \"n\": " << r.n << ", \"kept\": " << r.kept
        << ", \"median_us\": " << r.median_us << ", \"gbps\": " << r.gbps << ", \"of_read\": " << r.of_read
        << ", \"of_copy\": " << r.of_copy << ", \"verified\": " << (r.verified ? "true" : "false") << ", \"note\": \""
        << r.note << "\"}" << (i + 1 < rows.size() ? "," : "") << "\n";
  }
  out << "]}\n";
}

void print_select_rows(const std::vector<SelectRow>& rows) {
  std::printf("%-9s %-28s %-4s %-13s %8s %10s %12s %10s %8s %8s %s\n", "primitive", "algorithm", "type", "predicate",
              "n", "kept", "median_us", "GB/s", "x_read", "x_copy", "verified  notes");
  for (const SelectRow& r : rows)
    std::printf("%-9s %-28s %-4s %-13s %8s %10llu %12.2f %10.1f %8.3f %8.3f %s\n", r.primitive.c_str(),
                r.algorithm.c_str(), r.type.c_str(), r.predicate.c_str(), size_label(r.n).c_str(),
                (unsigned long long)r.kept, r.median_us, r.gbps, r.of_read, r.of_copy,
                ((r.verified ? std::string("yes       ") : std::string("NO        ")) + r.note).c_str());
}

template <class T>
bool host_keep(SelectPredicate p, T v, uint32_t flag, T rhs) {
  if (p == SelectPredicate::flagged) return flag != 0;
  if constexpr (std::is_floating_point_v<T>)
    if (v != v || rhs != rhs) return p == SelectPredicate::not_equal;
  switch (p) {
    case SelectPredicate::less: return v < rhs;
    case SelectPredicate::less_equal: return v <= rhs;
    case SelectPredicate::greater: return v > rhs;
    case SelectPredicate::greater_equal: return v >= rhs;
    case SelectPredicate::equal: return v == rhs;
    default: return !(v == rhs);
  }
}

struct Variant {
  SelectDesc desc;
  std::string label;
};

template <class T>
int bench_select_typed(const Device& device, bool partition, const SelectDesc& base, const std::vector<Variant>& variants,
                       const std::vector<uint64_t>& sizes, double density, int repeats, std::vector<SelectRow>& rows) {
  const uint64_t max_n = *std::max_element(sizes.begin(), sizes.end());
  const uint32_t elem = sizeof(T);
  const bool flagged = base.predicate == SelectPredicate::flagged;
  std::vector<Select> selects;
  std::vector<Partition> partitions;
  std::vector<std::string> labels;
  VkDeviceSize scratch_bytes = 16;
  for (const Variant& v : variants) {
    SelectDesc desc = v.desc;
    desc.type = base.type;
    desc.predicate = base.predicate;
    desc.max_count = max_n;
    auto fail = [&](const Error& e) {
      std::fprintf(stderr, "%s %s %s: %s\n", partition ? "partition" : "select", v.label.c_str(),
                   e.status == Status::unsupported ? "skipped" : "failed", e.message.c_str());
      return e.status == Status::unsupported ? 0 : 1;
    };
    if (partition) {
      auto plan = Partition::create(const_cast<Device&>(device).context(), desc);
      if (!plan) {
        if (fail(plan.error())) return 1;
        continue;
      }
      scratch_bytes = std::max(scratch_bytes, plan->scratch_requirements().size);
      labels.push_back(std::string(to_string(plan->algorithm())) + v.label);
      partitions.push_back(std::move(plan).value());
    } else {
      auto plan = Select::create(const_cast<Device&>(device).context(), desc);
      if (!plan) {
        if (fail(plan.error())) return 1;
        continue;
      }
      scratch_bytes = std::max(scratch_bytes, plan->scratch_requirements().size);
      labels.push_back(std::string(to_string(plan->algorithm())) + v.label);
      selects.push_back(std::move(plan).value());
    }
  }
  if (labels.empty()) {
    std::fprintf(stderr, "bench: no requested select algorithm is available on this device\n");
    return 1;
  }
  // Largest buffers first (DESIGN.md); the ceilings run on the input and output buffers.
  const VkDeviceSize bytes = (std::max<VkDeviceSize>(max_n * elem, 16) + 15) / 16 * 16;
  auto input = device.create_buffer(bytes);
  auto output = device.create_buffer(bytes);
  auto flags = device.create_buffer(std::max<VkDeviceSize>(max_n * 4, 16));
  auto scratch = device.create_buffer(scratch_bytes);
  auto count = device.create_buffer(16);
  if (!input || !output || !flags || !scratch || !count) {
    std::fprintf(stderr, "bench: buffer allocation failed\n");
    return 1;
  }
  const std::vector<T> host = upload_random<T>(device, input.value(), max_n);
  if (host.empty()) return 1;
  std::vector<uint32_t> host_flags(max_n);
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_real_distribution<double> u(0, 100);
  for (auto& f : host_flags) f = u(rng) < density ? 1u : 0u;
  if (auto ok = device.upload(flags.value(), host_flags.data(), max_n * 4); !ok) {
    std::fprintf(stderr, "bench: upload: %s\n", ok.message().c_str());
    return 1;
  }
  int failures = 0;
  std::vector<T> got(max_n), expected;
  expected.reserve(max_n);
  for (uint64_t n : sizes) {
    // The comparand: the quantile of the first n values that keeps about `density` percent.
    T rhs = host[0];
    if (!flagged && n > 0) {
      std::vector<T> sorted(host.begin(), host.begin() + std::ptrdiff_t(n));
      std::sort(sorted.begin(), sorted.end());
      const bool lower = base.predicate == SelectPredicate::less || base.predicate == SelectPredicate::less_equal;
      const double q = lower ? density / 100 : 1 - density / 100;
      rhs = sorted[std::min<size_t>(n - 1, size_t(q * double(n)))];
    }
    Comparand comparand = Comparand::of(rhs);
    // CPU reference and row.
    std::vector<double> cpu_ns;
    uint64_t kept = 0;
    for (int i = 0; i < 3; ++i) {
      expected.clear();
      auto t0 = std::chrono::steady_clock::now();
      std::vector<uint64_t> index(n);
      for (uint64_t j = 0; j < n; ++j) index[j] = j;
      auto keep = [&](uint64_t j) { return host_keep(base.predicate, host[j], host_flags[j], rhs); };
      if (partition) {
        auto mid = std::stable_partition(index.begin(), index.end(), keep);
        kept = uint64_t(mid - index.begin());
        for (uint64_t j : index) expected.push_back(host[j]);
      } else {
        for (uint64_t j = 0; j < n; ++j)
          if (keep(j)) expected.push_back(host[j]);
        kept = expected.size();
      }
      cpu_ns.push_back(
          double(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count()));
    }
    const double moved = double(n) * elem + (flagged ? double(n) * 4 : 0) + double(partition ? n : kept) * elem;
    std::fprintf(stderr, "bench %s %s %s n=%s (kept %llu) ...\n", partition ? "partition" : "select",
                 to_string(base.type), to_string(base.predicate), size_label(n).c_str(), (unsigned long long)kept);
    auto record_for = [&](size_t k) -> Recorder {
      return [&, k, n](VkCommandBuffer cmd) {
        const BufferRange in = input->range(0, n * elem), out = output->range(0, n * elem);
        const BufferRange fl = flagged ? flags->range(0, n * 4) : BufferRange{};
        if (partition) return partitions[k].record(cmd, in, fl, out, count->range(0, 4), n, scratch->range(), comparand);
        return selects[k].record(cmd, in, fl, out, count->range(0, 4), n, scratch->range(), comparand);
      };
    };
    if (auto warmed = warm_up(device, record_for(0)); !warmed) {
      std::fprintf(stderr, "bench: warm-up: %s\n", warmed.message().c_str());
      return 1;
    }
    const uint64_t ceiling_bytes = std::max<uint64_t>(n * elem / 16 * 16, 16);
    auto ceilings = measure_ceilings(device, input.value(), output.value(), ceiling_bytes, repeats);
    if (!ceilings) {
      std::fprintf(stderr, "bench: ceilings: %s\n", ceilings.error().message.c_str());
      return 1;
    }
    const double read = ceilings->read_gbps, copy = ceilings->copy_gbps;
    const char* prim = partition ? "partition" : "select";
    rows.push_back({"ceiling", "read (uvec4 shader)", "u32", "-", n, 0, double(ceiling_bytes) / read / 1e3, read, 1.0,
                    read / copy, true, ""});
    rows.push_back({"ceiling", "copy (uvec4 shader)", "u32", "-", n, 0, 2.0 * double(ceiling_bytes) / copy / 1e3, copy,
                    copy / read, 1.0, true, ""});
    const double cpu = median(cpu_ns);
    rows.push_back({prim, partition ? "cpu (std::stable_partition)" : "cpu (std::copy_if)", to_string(base.type),
                    to_string(base.predicate), n, kept, cpu / 1e3, moved / cpu, moved / cpu / read, moved / cpu / copy,
                    true, ""});
    for (size_t k = 0; k < labels.size(); ++k) {
      const Recorder run = record_for(k);
      auto warmed = warm_up(device, run);
      auto ns = warmed ? time_gpu(device, repeats, run) : Result<std::vector<double>>(warmed.error());
      if (!ns) {
        std::fprintf(stderr, "bench: %s %s: %s\n", prim, labels[k].c_str(), ns.error().message.c_str());
        return 1;
      }
      uint32_t got_count = 0;
      const uint64_t check_n = partition ? n : kept;
      bool ok = bool(device.download(count.value(), &got_count, 4)) &&
                (check_n == 0 || bool(device.download(output.value(), got.data(), check_n * elem)));
      ok = ok && got_count == kept && std::memcmp(got.data(), expected.data(), check_n * elem) == 0;
      if (!ok) {
        ++failures;
        std::fprintf(stderr, "MISMATCH %s %s n=%llu: count %u (expected %llu) or output differs\n", prim,
                     labels[k].c_str(), (unsigned long long)n, got_count, (unsigned long long)kept);
      }
      std::string note;
      const bool chained = partition ? partitions[k].algorithm() == SelectAlgorithm::chained
                                     : selects[k].algorithm() == SelectAlgorithm::chained;
      if (chained) {
        const VkDeviceSize at = partition ? partitions[k].statistics_offset() : selects[k].statistics_offset();
        uint32_t stats[4] = {};
        if (device.download(scratch.value(), stats, sizeof(stats), at))
          note = "tiles=" + std::to_string(stats[0]) + " fallbacks=" + std::to_string(stats[1]) +
                 " steps/tile=" + std::to_string(stats[0] ? double(stats[2]) / stats[0] : 0.0).substr(0, 4) +
                 " max_depth=" + std::to_string(stats[3]);
      }
      const double t = median(ns.value());
      const double gbps = moved / t;
      rows.push_back({prim, labels[k], to_string(base.type), to_string(base.predicate), n, kept, t / 1e3, gbps,
                      gbps / read, gbps / copy, ok, note});
    }
  }
  return failures ? 1 : 0;
}

}  // namespace

int run_bench_select(std::vector<std::string> args) {
  std::string type_s = "u32", pred_s = "flagged", alg_s = "automatic", sizes_s = "2^16..2^24", repeat_s = "20",
              density_s = "50", json;
  const bool partition = take_flag(args, "--partition");
  take_option(args, "--type", type_s);
  take_option(args, "--predicate", pred_s);
  take_option(args, "--algorithm", alg_s);
  take_option(args, "--sizes", sizes_s);
  take_option(args, "--repeat", repeat_s);
  take_option(args, "--density", density_s);
  take_option(args, "--json", json);
  auto device = open_device(args);
  if (!device) return 1;
  if (!args.empty()) {
    std::fprintf(stderr, "vkprim bench select: unknown argument '%s'\n", args[0].c_str());
    return 2;
  }
  SelectDesc base;
  std::vector<uint64_t> sizes;
  if (!parse_type(type_s, base.type) || !parse(pred_s.c_str(), base.predicate) || !parse_sizes(sizes_s, sizes)) {
    std::fprintf(stderr, "vkprim bench select: bad --type, --predicate or --sizes\n");
    return 2;
  }
  const double density = std::clamp(std::atof(density_s.c_str()), 0.0, 100.0);
  // One name, "all", or a comma-separated list; NAME@WGxV overrides the tile shape (0 keeps the default).
  std::vector<Variant> variants;
  const std::string list = alg_s == "all" ? "chained,count_scan_scatter" : alg_s;
  for (size_t pos = 0; pos <= list.size();) {
    size_t comma = list.find(',', pos);
    if (comma == std::string::npos) comma = list.size();
    std::string name = list.substr(pos, comma - pos);
    Variant v;
    if (const size_t at = name.find('@'); at != std::string::npos) {
      std::sscanf(name.c_str() + at + 1, "%ux%u", &v.desc.workgroup_size, &v.desc.vectors_per_thread);
      v.label = name.substr(at);
      name.resize(at);
    }
    if (!parse(name.c_str(), v.desc.algorithm)) {
      std::fprintf(stderr, "vkprim bench select: unknown algorithm '%s' (automatic, chained, count_scan_scatter)\n",
                   name.c_str());
      return 2;
    }
    variants.push_back(v);
    pos = comma + 1;
  }
  const int repeats = std::max(10, std::atoi(repeat_s.c_str()));
  const Capabilities& caps = device->context().capabilities();
  std::printf("device: %s, driver %s %s; median of %d timed runs after ~200 ms of warm-up; GB/s count input + flags "
              "read + kept (partition: all) written; density %.1f%%\n",
              caps.device_name.c_str(), caps.driver_name.c_str(), caps.driver_info.c_str(), repeats, density);
  std::vector<SelectRow> rows;
  const int rc = host::with_type(base.type, [&](auto t) {
    return bench_select_typed<decltype(t)>(*device, partition, base, variants, sizes, density, repeats, rows);
  });
  print_select_rows(rows);
  if (!json.empty()) write_select_json(json, caps.device_name, rows);
  return rc;
}

}  // namespace vkprim::tools
