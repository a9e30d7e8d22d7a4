// `vkprim bench select` (and `--partition`): GPU time from timestamps (median after warm-up), GB/s
// counting the bytes read (input + flags) and written (the kept elements; Partition: all of them), the
// ratio to the read and copy ceilings measured on the same buffers in the same run, a CPU row
// (std::copy_if / std::stable_partition), and every result verified against the CPU.
// The comparand of a comparison predicate is the data's quantile that keeps about --density percent.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "bench_support.hpp"
#include "commands.hpp"
#include "demo.hpp"
#include "host_select.hpp"
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

// output ("elements" or "indices") and density (percent of flags set, or kept by the comparand) are the
// run's, the same on every row.
void write_select_json(const std::string& path, const std::string& device, const std::vector<SelectRow>& rows,
                       const char* output, double density) {
  write_json(path, device, rows, [&](const SelectRow& r, JsonRow& json) {
    json.text("primitive", r.primitive).text("algorithm", r.algorithm).text("type", r.type);
    json.text("predicate", r.predicate).text("output", output).number("density", density).number("n", r.n);
    json.number("kept", r.kept).number("median_us", r.median_us);
    json.number("gbps", r.gbps).number("of_read", r.of_read).number("of_copy", r.of_copy);
    json.flag("verified", r.verified).text("note", r.note);
  });
}

void print_select_rows(const std::vector<SelectRow>& rows) {
  std::printf("%-9s %-28s %-4s %-13s %8s %10s %12s %10s %8s %8s %s\n", "primitive", "algorithm", "type", "predicate",
              "n", "kept", "median_us", "GB/s", "x_read", "x_copy", "verified  notes");
  for (const SelectRow& r : rows)
    std::printf("%-9s %-28s %-4s %-13s %8s %10llu %12.2f %10.1f %8.3f %8.3f %s\n", r.primitive.c_str(),
                r.algorithm.c_str(), r.type.c_str(), r.predicate.c_str(), size_label(r.n).c_str(),
                (unsigned long long)r.kept, r.median_us, r.gbps, r.of_read, r.of_copy,
                verified_cell(r.verified, r.note).c_str());
}

struct Variant {
  SelectDesc desc;
  std::string label;  // the tile override as written ("@512x2"), empty without one
};

template <class T, class Plan>
int bench_select_typed(const Device& device, const SelectDesc& base, const std::vector<Variant>& variants,
                       const std::vector<uint64_t>& sizes, double density, int repeats, std::vector<SelectRow>& rows) {
  constexpr bool partition = std::is_same_v<Plan, Partition>;
  const char* prim = partition ? "partition" : "select";
  const uint64_t max_n = *std::max_element(sizes.begin(), sizes.end());
  const uint32_t elem = sizeof(T);
  const bool flagged = base.predicate == SelectPredicate::flagged;
  // --output indices: u32 positions are written, and flagged selection reads no input.
  const bool indices = base.output == SelectOutput::indices;
  const uint32_t out_elem = indices ? 4 : elem;
  const bool reads_input = !(indices && flagged);
  PlanSet<Plan> set;
  for (const Variant& v : variants) {
    SelectDesc desc = v.desc;
    desc.type = base.type;
    desc.predicate = base.predicate;
    desc.output = base.output;
    desc.max_count = max_n;
    const std::string what = std::string(prim) + " " + v.label;
    if (auto added = set.add(Plan::create(const_cast<Device&>(device).context(), desc), v.label, what); !added) {
      std::fprintf(stderr, "%s failed: %s\n", what.c_str(), added.error().message.c_str());
      return 1;
    }
  }
  const std::vector<Plan>& plans = set.plans;
  const std::vector<std::string>& labels = set.labels;
  if (plans.empty()) {
    std::fprintf(stderr, "bench: no requested select algorithm is available on this device\n");
    return 1;
  }
  // Largest buffers first (DESIGN.md); the ceilings run on the input and output buffers.
  const VkDeviceSize bytes = vector_bytes(max_n * elem);
  auto input = device.create_buffer(bytes);
  auto output = device.create_buffer(std::max<VkDeviceSize>(bytes, vector_bytes(max_n * 4)));
  auto flags = device.create_buffer(std::max<VkDeviceSize>(max_n * 4, 16));
  auto scratch = device.create_buffer(set.scratch_bytes);
  auto count = device.create_buffer(16);
  if (!input || !output || !flags || !scratch || !count) {
    std::fprintf(stderr, "bench: buffer allocation failed\n");
    return 1;
  }
  const std::vector<T> host = upload_random<T>(device, input.value(), max_n);
  if (host.empty()) return 1;
  std::mt19937_64 rng(std::random_device{}());
  const std::vector<uint32_t> host_flags = host::random_flags(max_n, density, rng);
  if (auto ok = device.upload(flags.value(), host_flags.data(), max_n * 4); !ok) {
    std::fprintf(stderr, "bench: upload: %s\n", ok.message().c_str());
    return 1;
  }
  const bool any_reversed = std::any_of(plans.begin(), plans.end(), [](const Plan& plan) {
    return plan.desc().rejected_order == RejectedOrder::reversed;
  });
  int failures = 0;
  std::vector<T> got(max_n), expected, expected_reversed;
  std::vector<uint32_t> got_indices(max_n), expected_indices, expected_indices_reversed;
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
    // CPU reference and row: std::copy_if / std::stable_partition.
    uint64_t kept = 0;
    const double cpu = time_cpu(
        [&] { expected = host::compact(base.predicate, host.data(), host_flags.data(), n, rhs, partition, kept); });
    if (indices) {
      expected_indices.clear();
      for (int side = 0; side < (partition ? 2 : 1); ++side)
        for (uint32_t i = 0; i < n; ++i)
          if (host::select_keep(base.predicate, host[i], host_flags[i], rhs) == (side == 0)) expected_indices.push_back(i);
    }
    // RejectedOrder::reversed: the same with the rejected side reversed, made only where a plan needs it.
    if (any_reversed) {
      expected_reversed = host::reverse_rejected(expected, kept);
      expected_indices_reversed = host::reverse_rejected(expected_indices, kept);
    }
    const double moved = (reads_input ? double(n) * elem : 0) + (flagged ? double(n) * 4 : 0) +
                         double(partition ? n : kept) * out_elem;
    progress("bench %s %s %s n=%s (kept %llu) ...\n", prim, to_string(base.type), to_string(base.predicate),
             size_label(n).c_str(), (unsigned long long)kept);
    auto record_for = [&](const Plan& plan) -> Recorder {
      return [&, n](VkCommandBuffer cmd) {
        const SelectOperands operands{.input = reads_input ? input->range(0, n * elem) : BufferRange{},
                                      .flags = flagged ? flags->range(0, n * 4) : BufferRange{},
                                      .output = output->range(0, n * out_elem),
                                      .selected_count = count->range(0, 4),
                                      .scratch = scratch->range()};
        return plan.record(cmd, operands, n, comparand);
      };
    };
    if (auto warmed = warm_up(device, record_for(plans.front())); !warmed) {
      std::fprintf(stderr, "bench: warm-up: %s\n", warmed.message().c_str());
      return 1;
    }
    plans.front().release_descriptor_sets();  // runs done: return the sets they wrote (no push descriptors)
    const auto ceilings = ceilings_for(device, input.value(), output.value(), n * elem, repeats);
    if (!ceilings) return 1;
    add_ceiling_rows(rows, *ceilings, [&](const char* name, double us, double gbps, double of_read, double of_copy) {
      return SelectRow{"ceiling", name, "u32", "-", n, 0, us, gbps, of_read, of_copy, true, ""};
    });
    rows.push_back({prim, partition ? "cpu (std::stable_partition)" : "cpu (std::copy_if)", to_string(base.type),
                    to_string(base.predicate), n, kept, cpu / 1e3, moved / cpu, ceilings->of_read(moved / cpu),
                    ceilings->of_copy(moved / cpu), true, ""});
    for (size_t k = 0; k < plans.size(); ++k) {
      const auto t = warm_and_time(device, repeats, record_for(plans[k]));
      plans[k].release_descriptor_sets();
      if (!t) {
        std::fprintf(stderr, "bench: %s %s: %s\n", prim, labels[k].c_str(), t.error().message.c_str());
        return 1;
      }
      uint32_t got_count = 0;
      const uint64_t check_n = partition ? n : kept;
      void* got_data = indices ? static_cast<void*>(got_indices.data()) : static_cast<void*>(got.data());
      const bool reversed = plans[k].desc().rejected_order == RejectedOrder::reversed;
      const void* expected_data =
          indices ? static_cast<const void*>((reversed ? expected_indices_reversed : expected_indices).data())
                  : static_cast<const void*>((reversed ? expected_reversed : expected).data());
      bool ok = bool(device.download(count.value(), &got_count, 4)) &&
                (check_n == 0 || bool(device.download(output.value(), got_data, check_n * out_elem)));
      ok = ok && got_count == kept && std::memcmp(got_data, expected_data, check_n * out_elem) == 0;
      if (!ok) {
        ++failures;
        std::fprintf(stderr, "MISMATCH %s %s n=%llu: count %u (expected %llu) or output differs\n", prim,
                     labels[k].c_str(), (unsigned long long)n, got_count, (unsigned long long)kept);
      }
      std::string note;
      if (plans[k].algorithm() == SelectAlgorithm::chained)
        note = lookback_note(device, scratch.value(), plans[k].statistics_offset(), true);
      const double gbps = moved / t.value();
      rows.push_back({prim, labels[k], to_string(base.type), to_string(base.predicate), n, kept, t.value() / 1e3, gbps,
                      ceilings->of_read(gbps), ceilings->of_copy(gbps), ok, note});
    }
  }
  return failures ? 1 : 0;
}

}  // namespace

std::optional<Summary> demo_select(const Device& device, uint64_t n, int repeats) {
  std::vector<SelectRow> rows;
  const SelectDesc automatic{};  // u32, flagged, automatic, elements
  bench_select_typed<uint32_t, Select>(device, automatic, {Variant{automatic, ""}}, {n}, 50, repeats, rows);
  return summarize(rows, "select", "u32 flagged 50%");
}

int run_bench_select(std::vector<std::string> args) {
  std::string type_s = "u32", pred_s = "flagged", density_s = "50", output_s = "elements", order_s = "input";
  const bool partition = take_flag(args, "--partition");
  take_option(args, "--rejected-order", order_s);
  take_option(args, "--output", output_s);
  take_option(args, "--type", type_s);
  take_option(args, "--predicate", pred_s);
  take_option(args, "--density", density_s);
  BenchArgs common;
  int rc = 0;
  auto device = open_bench(args, "vkprim bench select", common, rc);
  if (!device) return rc;
  SelectDesc base;
  std::vector<uint64_t> sizes;
  if (!parse_type(type_s, base.type) || !parse(pred_s.c_str(), base.predicate) ||
      !parse(output_s.c_str(), base.output) || !parse_sizes(common.sizes, sizes)) {
    std::fprintf(stderr, "vkprim bench select: bad --type, --predicate, --output or --sizes\n");
    return 2;
  }
  const double density = std::clamp(std::atof(density_s.c_str()), 0.0, 100.0);
  // --rejected-order input, reversed or both (Partition): both benches each plan in either order.
  std::vector<RejectedOrder> orders;
  RejectedOrder order = RejectedOrder::input;
  if (order_s == "both") orders = {RejectedOrder::input, RejectedOrder::reversed};
  else if (parse(order_s.c_str(), order)) orders = {order};
  if (orders.empty() || (!partition && orders != std::vector<RejectedOrder>{RejectedOrder::input})) {
    std::fprintf(stderr, "vkprim bench select: --rejected-order takes input, reversed or both, with --partition\n");
    return 2;
  }
  // One name, "all", or a comma-separated list; NAME@WGxV overrides the tile shape (0 keeps the default).
  std::vector<Variant> variants;
  const std::string list = common.algorithm == "all" ? "chained,count_scan_scatter" : common.algorithm;
  for (const AlgorithmChoice& choice : split_algorithms(list)) {
    if (choice.tuning) {  // a third number would be an override Select does not read
      std::fprintf(stderr, "vkprim bench select: '%s%s': the tile override is @WGxV\n", choice.name.c_str(),
                   choice.shape.c_str());
      return 2;
    }
    for (RejectedOrder o : orders) {
      Variant v;
      v.desc.tuning.workgroup_size = choice.workgroup_size;
      v.desc.tuning.vectors_per_thread = choice.per_thread;
      v.desc.rejected_order = o;
      v.label = choice.shape + (o == RejectedOrder::reversed ? "/reversed" : "");
      if (!parse(choice.name.c_str(), v.desc.algorithm)) {
        std::fprintf(stderr, "vkprim bench select: unknown algorithm '%s' (automatic, chained, count_scan_scatter)\n",
                     choice.name.c_str());
        return 2;
      }
      variants.push_back(v);
    }
  }
  char counting[224];
  std::snprintf(counting, sizeof(counting),
                "; GB/s count input (unless flagged indices) + flags read + kept (partition: all) written as %s; "
                "density %.1f%%", to_string(base.output), density);
  print_bench_header(*device, common.repeats, counting);
  std::vector<SelectRow> rows;
  rc = host::with_type(base.type, [&](auto t) {
    using T = decltype(t);
    return partition ? bench_select_typed<T, Partition>(*device, base, variants, sizes, density, common.repeats, rows)
                     : bench_select_typed<T, Select>(*device, base, variants, sizes, density, common.repeats, rows);
  });
  print_select_rows(rows);
  if (!common.json.empty())
    write_select_json(common.json, device->context().capabilities().device_name, rows, to_string(base.output),
                      density);
  if (common.stats) print_pipeline_statistics(*device);
  return rc;
}

}  // namespace vkprim::tools
