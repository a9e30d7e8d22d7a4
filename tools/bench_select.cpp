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

// The plans of every variant for max_n elements; false (after a message) when one fails or none is available.
template <class Plan>
bool make_select_plans(const Device& device, const SelectDesc& base, const std::vector<Variant>& variants,
                       uint64_t max_n, const char* prim, PlanSet<Plan>& set) {
  for (const Variant& v : variants) {
    SelectDesc desc = v.desc;
    desc.type = base.type;
    desc.predicate = base.predicate;
    desc.output = base.output;
    desc.max_count = max_n;
    const std::string what = std::string(prim) + " " + v.label;
    if (auto added = set.add(Plan::create(const_cast<Device&>(device).context(), desc), v.label, what); !added) {
      std::fprintf(stderr, "%s failed: %s\n", what.c_str(), added.error().message.c_str());
      return false;
    }
  }
  if (set.plans.empty()) {
    std::fprintf(stderr, "bench: no requested select algorithm is available on this device\n");
    return false;
  }
  return true;
}

// The buffers of a run (largest first: DESIGN.md; the ceilings run on input and output) and the random input
// and flags, uploaded.
template <class T>
struct SelectInput {
  Buffer input, output, flags, scratch, count;
  std::vector<T> host;
  std::vector<uint32_t> host_flags;
};

template <class T>
std::optional<SelectInput<T>> make_select_input(const Device& device, VkDeviceSize scratch_bytes, uint64_t max_n,
                                                double density) {
  const VkDeviceSize bytes = vector_bytes(max_n * sizeof(T));
  auto input = device.create_buffer(bytes);
  auto output = device.create_buffer(std::max<VkDeviceSize>(bytes, vector_bytes(max_n * 4)));
  auto flags = device.create_buffer(std::max<VkDeviceSize>(max_n * 4, 16));
  auto scratch = device.create_buffer(scratch_bytes);
  auto count = device.create_buffer(16);
  if (!input || !output || !flags || !scratch || !count) {
    std::fprintf(stderr, "bench: buffer allocation failed\n");
    return std::nullopt;
  }
  std::vector<T> host = upload_random<T>(device, input.value(), max_n);
  if (host.empty()) return std::nullopt;
  std::mt19937_64 rng(std::random_device{}());
  std::vector<uint32_t> host_flags = host::random_flags(max_n, density, rng);
  if (auto ok = device.upload(flags.value(), host_flags.data(), max_n * 4); !ok) {
    std::fprintf(stderr, "bench: upload: %s\n", ok.message().c_str());
    return std::nullopt;
  }
  return SelectInput<T>{std::move(input).value(), std::move(output).value(), std::move(flags).value(),
                        std::move(scratch).value(), std::move(count).value(), std::move(host), std::move(host_flags)};
}

// What a run at n elements must produce: the comparand (the quantile of the first n values that keeps about
// `density` percent), the kept count, the elements or indices (and, where a plan asks, with the rejected side
// reversed), and the CPU reference's time (std::copy_if / std::stable_partition).
template <class T>
struct SelectExpected {
  T rhs{};
  uint64_t kept = 0;
  double cpu_ns = 0;
  std::vector<T> values, values_reversed;
  std::vector<uint32_t> indices, indices_reversed;
};

template <class T>
SelectExpected<T> select_reference(const SelectDesc& base, const SelectInput<T>& in, uint64_t n, double density,
                                   bool partition, bool any_reversed) {
  const bool flagged = base.predicate == SelectPredicate::flagged;
  SelectExpected<T> e;
  e.rhs = in.host[0];
  if (!flagged && n > 0) {
    std::vector<T> sorted(in.host.begin(), in.host.begin() + std::ptrdiff_t(n));
    std::sort(sorted.begin(), sorted.end());
    const bool lower = base.predicate == SelectPredicate::less || base.predicate == SelectPredicate::less_equal;
    const double q = lower ? density / 100 : 1 - density / 100;
    e.rhs = sorted[std::min<size_t>(n - 1, size_t(q * double(n)))];
  }
  e.cpu_ns = time_cpu([&] {
    e.values = host::compact(base.predicate, in.host.data(), in.host_flags.data(), n, e.rhs, partition, e.kept);
  });
  if (base.output == SelectOutput::indices)
    for (int side = 0; side < (partition ? 2 : 1); ++side)
      for (uint32_t i = 0; i < n; ++i)
        if (host::select_keep(base.predicate, in.host[i], in.host_flags[i], e.rhs) == (side == 0)) e.indices.push_back(i);
  if (any_reversed) {
    e.values_reversed = host::reverse_rejected(e.values, e.kept);
    e.indices_reversed = host::reverse_rejected(e.indices, e.kept);
  }
  return e;
}

// The ceilings, the CPU row and every plan's row at n elements; the failures, or -1 where a run cannot be
// timed.
template <class T, class Plan>
int bench_select_size(const Device& device, const SelectDesc& base, const PlanSet<Plan>& set, SelectInput<T>& in,
                      uint64_t n, double density, int repeats, std::vector<SelectRow>& rows) {
  constexpr bool partition = std::is_same_v<Plan, Partition>;
  const char* prim = partition ? "partition" : "select";
  const uint32_t elem = sizeof(T);
  const bool flagged = base.predicate == SelectPredicate::flagged;
  // --output indices: u32 positions are written, and flagged selection reads no input.
  const bool indices = base.output == SelectOutput::indices;
  const uint32_t out_elem = indices ? 4 : elem;
  const bool reads_input = !(indices && flagged);
  const bool any_reversed = std::any_of(set.plans.begin(), set.plans.end(), [](const Plan& plan) {
    return plan.desc().rejected_order == RejectedOrder::reversed;
  });
  const SelectExpected<T> e = select_reference(base, in, n, density, partition, any_reversed);
  const uint64_t kept = e.kept;
  const double moved = (reads_input ? double(n) * elem : 0) + (flagged ? double(n) * 4 : 0) +
                       double(partition ? n : kept) * out_elem;
  progress("bench %s %s %s n=%s (kept %llu) ...\n", prim, to_string(base.type), to_string(base.predicate),
           size_label(n).c_str(), (unsigned long long)kept);
  const Comparand comparand = Comparand::of(e.rhs);
  auto record_for = [&](const Plan& plan) -> Recorder {
    return [&, n](VkCommandBuffer cmd) {
      const SelectOperands operands{.input = reads_input ? in.input.range(0, n * elem) : BufferRange{},
                                    .flags = flagged ? in.flags.range(0, n * 4) : BufferRange{},
                                    .output = in.output.range(0, n * out_elem),
                                    .selected_count = in.count.range(0, 4),
                                    .scratch = in.scratch.range()};
      return plan.record(cmd, operands, n, comparand);
    };
  };
  const auto ceilings =
      warm_then_ceilings(device, set.plans.front(), record_for(set.plans.front()), in.input, in.output, n * elem, repeats);
  if (!ceilings) return -1;
  add_ceiling_rows(rows, *ceilings, [&](const char* name, double us, double gbps, double of_read, double of_copy) {
    return SelectRow{"ceiling", name, "u32", "-", n, 0, us, gbps, of_read, of_copy, true, ""};
  });
  rows.push_back({prim, partition ? "cpu (std::stable_partition)" : "cpu (std::copy_if)", to_string(base.type),
                  to_string(base.predicate), n, kept, e.cpu_ns / 1e3, moved / e.cpu_ns,
                  ceilings->of_read(moved / e.cpu_ns), ceilings->of_copy(moved / e.cpu_ns), true, ""});
  std::vector<T> got(n);
  std::vector<uint32_t> got_indices(n);
  int failures = 0;
  for (size_t k = 0; k < set.plans.size(); ++k) {
    const Plan& plan = set.plans[k];
    const auto t = warm_and_time(device, repeats, record_for(plan));
    plan.release_descriptor_sets();
    if (!t) {
      std::fprintf(stderr, "bench: %s %s: %s\n", prim, set.labels[k].c_str(), t.error().message.c_str());
      return -1;
    }
    uint32_t got_count = 0;
    const uint64_t check_n = partition ? n : kept;
    void* got_data = indices ? static_cast<void*>(got_indices.data()) : static_cast<void*>(got.data());
    const bool reversed = plan.desc().rejected_order == RejectedOrder::reversed;
    const void* expected_data = indices ? static_cast<const void*>((reversed ? e.indices_reversed : e.indices).data())
                                        : static_cast<const void*>((reversed ? e.values_reversed : e.values).data());
    bool ok = bool(device.download(in.count, &got_count, 4)) &&
              (check_n == 0 || bool(device.download(in.output, got_data, check_n * out_elem)));
    ok = ok && got_count == kept && std::memcmp(got_data, expected_data, check_n * out_elem) == 0;
    if (!ok) {
      ++failures;
      std::fprintf(stderr, "MISMATCH %s %s n=%llu: count %u (expected %llu) or output differs\n", prim,
                   set.labels[k].c_str(), (unsigned long long)n, got_count, (unsigned long long)kept);
    }
    std::string note;
    if (plan.algorithm() == SelectAlgorithm::chained)
      note = lookback_note(device, in.scratch, plan.statistics_offset(), true);
    const double gbps = moved / t.value();
    rows.push_back({prim, set.labels[k], to_string(base.type), to_string(base.predicate), n, kept, t.value() / 1e3,
                    gbps, ceilings->of_read(gbps), ceilings->of_copy(gbps), ok, note});
  }
  return failures;
}

template <class T, class Plan>
int bench_select_typed(const Device& device, const SelectDesc& base, const std::vector<Variant>& variants,
                       const std::vector<uint64_t>& sizes, double density, int repeats, std::vector<SelectRow>& rows) {
  constexpr bool partition = std::is_same_v<Plan, Partition>;
  const uint64_t max_n = *std::max_element(sizes.begin(), sizes.end());
  PlanSet<Plan> set;
  if (!make_select_plans(device, base, variants, max_n, partition ? "partition" : "select", set)) return 1;
  auto input = make_select_input<T>(device, set.scratch_bytes, max_n, density);
  if (!input) return 1;
  int failures = 0;
  for (uint64_t n : sizes) {
    const int failed = bench_select_size<T, Plan>(device, base, set, *input, n, density, repeats, rows);
    if (failed < 0) return 1;
    failures += failed;
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
