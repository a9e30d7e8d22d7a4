// `vkprim bench reduce|scan --operator NAME`: Reduce and Scan with one of the sample user operators
// (tools/operators), timed like the built-in benches, with the read and copy ceilings of the same run, and
// every result checked against the host's left-to-right reference.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "bench_support.hpp"
#include "commands.hpp"
#include "sample_operators.hpp"
#include "vkprim/reduce.hpp"
#include "vkprim/scan.hpp"

namespace vkprim::tools {

namespace {

using namespace vkprim::samples;

struct UserRow {
  std::string primitive, algorithm, kind, op;
  uint64_t n = 0;
  double median_us = 0, gbps = 0, of_read = 0, of_copy = 0;
  bool verified = false;
  std::string note;  // chained scans: fallbacks and look-back depth of the last timed run
};

// Results the host reference accepts: exact members for the exact operators; the float sums and merges
// within a relative error that a lost, repeated or misordered element would exceed.
bool near(float got, double want, double rel) { return std::fabs(got - want) <= rel * std::max(1.0, std::fabs(want)); }
bool accept(const Aabb& a, const Aabb& b) {
  return std::memcmp(a.lo, b.lo, sizeof(a.lo)) == 0 && std::memcmp(a.hi, b.hi, sizeof(a.hi)) == 0;
}
bool accept(const Affine& a, const Affine& b) {
  return std::memcmp(a.x, b.x, sizeof(a.x)) == 0 && std::memcmp(a.y, b.y, sizeof(a.y)) == 0 &&
         std::memcmp(a.t, b.t, sizeof(a.t)) == 0;
}
bool accept(const Mat4& a, const Mat4& b) { return std::memcmp(a.c, b.c, sizeof(a.c)) == 0; }
bool accept(const ArgMin& a, const ArgMin& b) {
  return std::memcmp(&a.value, &b.value, sizeof(a.value)) == 0 && a.index == b.index;
}
// Welford counts are floats: exact up to 2^24; past it each combine rounds, and the algorithms combine in
// different orders (reduce_then_scan at 2^25 gave 16777224 where the double reference gives 16777226).
bool accept(const Welford& a, const Welford& b) {
  const bool count = b.n <= 16777216.0f ? a.n == b.n : near(a.n, b.n, 1e-5);
  return count && near(a.mean, b.mean, 1e-3) && near(a.m2, b.m2, 1e-2);
}
bool accept(const Sum4& a, const Sum4& b) {
  for (int k = 0; k < 4; ++k)
    if (!near(a.v[k], b.v[k], 1e-2)) return false;
  return true;
}

const UserOperator& operator_of(const Aabb*) { return vkprim_ops::aabb_union(); }
const UserOperator& operator_of(const Affine*) { return vkprim_ops::affine(); }
const UserOperator& operator_of(const Mat4*) { return vkprim_ops::mat4_product(); }
const UserOperator& operator_of(const ArgMin*) { return vkprim_ops::argmin(); }
const UserOperator& operator_of(const Welford*) { return vkprim_ops::welford(); }
const UserOperator& operator_of(const Sum4*) { return vkprim_ops::sum4(); }

// Host reference: left to right; Sum4 in double, so the reference itself does not round away the sum.
template <class T>
std::vector<T> host_scan(const std::vector<T>& x, bool exclusive) {
  return scan(x, exclusive);
}
// Welford in double: a float running merge over millions of samples drifts further than the GPU's tree.
template <>
std::vector<Welford> host_scan(const std::vector<Welford>& x, bool exclusive) {
  std::vector<Welford> out(x.size());
  double n = 0, mean = 0, m2 = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (exclusive) out[i] = Welford{float(n), float(mean), float(m2)};
    const double bn = x[i].n, total = n + bn;
    if (total > 0) {
      const double d = x[i].mean - mean;
      m2 += x[i].m2 + d * d * n * bn / total;
      mean += d * bn / total;
      n = total;
    }
    if (!exclusive) out[i] = Welford{float(n), float(mean), float(m2)};
  }
  return out;
}
template <>
std::vector<Sum4> host_scan(const std::vector<Sum4>& x, bool exclusive) {
  std::vector<Sum4> out(x.size());
  double acc[4] = {0, 0, 0, 0};
  for (size_t i = 0; i < x.size(); ++i) {
    for (int k = 0; k < 4 && exclusive; ++k) out[i].v[k] = float(acc[k]);
    for (int k = 0; k < 4; ++k) acc[k] += x[i].v[k];
    for (int k = 0; k < 4 && !exclusive; ++k) out[i].v[k] = float(acc[k]);
  }
  return out;
}

// The plans a run times: a scan per algorithm choice, or one reduce (rows per tile from the first choice).
struct UserPlans {
  std::vector<Reduce> reduces;
  PlanSet<Scan> scans;
  VkDeviceSize scratch_bytes() const {
    return std::max<VkDeviceSize>(16, reduces.empty() ? scans.scratch_bytes : reduces.front().scratch_requirements().size);
  }
};

// 0, or the exit code after a message (2: an unknown algorithm name).
int make_user_plans(Context& context, const UserOperator& op, bool is_scan, ScanKind kind,
                    const std::vector<AlgorithmChoice>& algorithms, uint64_t max_n, UserPlans& plans) {
  if (!is_scan) {
    ReduceDesc d;
    d.user_operator = &op;
    d.max_count = max_n;
    d.tuning.vectors_per_thread = algorithms.front().per_thread;  // rows per tile (ordered@xR)
    auto plan = Reduce::create(context, d);
    if (!plan) {
      std::fprintf(stderr, "reduce: %s\n", plan.error().message.c_str());
      return 1;
    }
    plans.reduces.push_back(std::move(plan).value());
    return 0;
  }
  for (const AlgorithmChoice& choice : algorithms) {
    ScanDesc d;
    d.user_operator = &op;
    d.kind = kind;
    d.max_count = max_n;
    if (!parse(choice.name.c_str(), d.algorithm)) {
      std::fprintf(stderr, "vkprim bench: unknown scan algorithm '%s'\n", choice.name.c_str());
      return 2;
    }
    d.tuning.workgroup_size = choice.workgroup_size;
    d.tuning.vectors_per_thread = choice.per_thread;
    d.tuning.lookback_windows = choice.tuning;
    const std::string what = "scan " + choice.name;
    const std::string shape = shape_label(choice.workgroup_size, choice.per_thread, choice.tuning);
    if (auto added = plans.scans.add(Scan::create(context, d), shape, what); !added) {
      std::fprintf(stderr, "%s: %s\n", what.c_str(), added.error().message.c_str());
      return 1;
    }
  }
  if (plans.scans.plans.empty()) {
    std::fprintf(stderr, "bench: no requested scan algorithm is available on this device\n");
    return 1;
  }
  return 0;
}

// The input and output (largest first: DESIGN.md, NVIDIA placed late large allocations slower), scratch, and
// the seeded random input, uploaded.
template <class T>
struct UserInput {
  Buffer input, output, scratch;
  std::vector<T> host;
};

template <class T>
std::optional<UserInput<T>> make_user_input(const Device& device, VkDeviceSize scratch_bytes, uint64_t max_n) {
  const VkDeviceSize bytes = vector_bytes(max_n * sizeof(T));
  auto input = device.create_buffer(bytes);
  auto output = device.create_buffer(bytes);
  auto scratch = device.create_buffer(scratch_bytes);
  if (!input || !output || !scratch) {
    std::fprintf(stderr, "bench: buffer allocation of 2 x %llu bytes failed\n", (unsigned long long)bytes);
    return std::nullopt;
  }
  std::mt19937_64 rng(0x5eed);
  std::vector<T> host = random_elements<T>(rng, size_t(max_n));
  if (auto up = device.upload(input.value(), host.data(), max_n * sizeof(T)); !up) {
    std::fprintf(stderr, "bench: upload: %s\n", up.message().c_str());
    return std::nullopt;
  }
  return UserInput<T>{std::move(input).value(), std::move(output).value(), std::move(scratch).value(), std::move(host)};
}

// Whether `got` (n elements of the scan, or the reduce's one) matches the host's fold of x.
template <class T>
bool user_result_ok(const std::vector<T>& got, const std::vector<T>& x, bool is_scan, ScanKind kind) {
  if (is_scan) {
    const std::vector<T> want = host_scan(x, kind == ScanKind::exclusive);
    for (size_t i = 0; i < x.size(); ++i)
      if (!accept(got[i], want[i])) return false;
    return true;
  }
  return x.empty() ? accept(got[0], identity<T>()) : accept(got[0], host_scan(x, false).back());
}

// The ceilings and every plan's row at n elements; the failures, or -1 where a run cannot be timed.
template <class T>
int bench_user_size(const Device& device, const UserOperator& op, bool is_scan, ScanKind kind,
                    const std::vector<AlgorithmChoice>& algorithms, const UserPlans& plans, UserInput<T>& in,
                    uint64_t n, int repeats, std::vector<UserRow>& rows) {
  const uint32_t elem = sizeof(T);
  progress("bench %s %s n=%s ...\n", is_scan ? "scan" : "reduce", op.name, size_label(n).c_str());
  const std::vector<T> x(in.host.begin(), in.host.begin() + ptrdiff_t(n));
  const auto ceilings = ceilings_for(device, in.input, in.output, n * elem, repeats);
  if (!ceilings) return -1;
  add_ceiling_rows(rows, *ceilings, [&](const char* name, double us, double gbps, double of_read, double of_copy) {
    return UserRow{"ceiling", name, "-", "-", n, us, gbps, of_read, of_copy, true};
  });
  std::vector<T> got(std::max<uint64_t>(n, 1));
  int failures = 0;
  const size_t plan_count = is_scan ? plans.scans.plans.size() : 1;
  for (size_t k = 0; k < plan_count; ++k) {
    Recorder run;
    std::string label;
    if (is_scan) {
      const Scan& plan = plans.scans.plans[k];
      label = plans.scans.labels[k];
      run = [&, n](VkCommandBuffer cmd) {
        return plan.record(cmd, in.input.range(0, n * elem), in.output.range(0, n * elem), n, in.scratch.range());
      };
    } else {
      label = std::string(to_string(plans.reduces.front().algorithm())) + shape_label(0, algorithms.front().per_thread);
      run = [&, n](VkCommandBuffer cmd) {
        return plans.reduces.front().record(cmd, in.input.range(0, n * elem), in.output.range(0, elem), n,
                                            in.scratch.range());
      };
    }
    const auto t = warm_and_time(device, repeats, run);
    // The runs have completed: hand back the descriptor sets each wrote without push descriptors.
    if (is_scan) plans.scans.plans[k].release_descriptor_sets();
    else plans.reduces.front().release_descriptor_sets();
    if (!t) {
      std::fprintf(stderr, "bench: %s: %s\n", label.c_str(), t.error().message.c_str());
      return -1;
    }
    if (auto fetched = device.download(in.output, got.data(), (is_scan ? n : 1) * elem); !fetched) {
      std::fprintf(stderr, "bench: download: %s\n", fetched.message().c_str());
      return -1;
    }
    const bool ok = user_result_ok(got, x, is_scan, kind);
    if (!ok) {
      ++failures;
      std::fprintf(stderr, "MISMATCH %s %s n=%llu\n", label.c_str(), op.name, (unsigned long long)n);
    }
    const double moved = double(n) * elem * (is_scan ? 2.0 : 1.0);
    const double gbps = moved / t.value();
    const std::string note = is_scan ? scan_lookback_note(device, in.scratch, plans.scans.plans[k]) : std::string();
    rows.push_back({is_scan ? "scan" : "reduce", label, is_scan ? to_string(kind) : "-", op.name, n, t.value() / 1e3,
                    gbps, ceilings->of_read(gbps), ceilings->of_copy(gbps), ok, note});
  }
  return failures;
}

template <class T>
int bench_user_typed(const Device& device, bool is_scan, ScanKind kind, const std::vector<AlgorithmChoice>& algorithms,
                     const std::vector<uint64_t>& sizes, int repeats, std::vector<UserRow>& rows) {
  const UserOperator& op = operator_of(static_cast<const T*>(nullptr));
  const uint64_t max_n = *std::max_element(sizes.begin(), sizes.end());
  UserPlans plans;
  if (const int made = make_user_plans(const_cast<Device&>(device).context(), op, is_scan, kind, algorithms, max_n, plans))
    return made;
  auto input = make_user_input<T>(device, plans.scratch_bytes(), max_n);
  if (!input) return 1;
  int failures = 0;
  for (uint64_t n : sizes) {
    const int failed = bench_user_size(device, op, is_scan, kind, algorithms, plans, *input, n, repeats, rows);
    if (failed < 0) return 1;
    failures += failed;
  }
  return failures ? 1 : 0;
}

}  // namespace

int run_bench_user(bool is_scan, std::vector<std::string> args, const std::string& op_name) {
  std::string kind_s = "inclusive";
  take_option(args, "--kind", kind_s);
  BenchArgs common;
  int rc = 0;
  auto device = open_bench(args, "vkprim bench", common, rc);
  if (!device) return rc;
  ScanKind kind;
  std::vector<uint64_t> sizes;
  if (!parse(kind_s.c_str(), kind) || !parse_sizes(common.sizes, sizes)) {
    std::fprintf(stderr, "vkprim bench: bad --kind or --sizes\n");
    return 2;
  }
  // NAME or a comma-separated list; NAME@WGxV[xK] sets the scans' shape (reduce: ordered@0xR, R rows per tile).
  std::vector<AlgorithmChoice> algorithms = split_algorithms(
      common.algorithm == "all" ? std::string("reduce_then_scan,chained_lookback,chained_fallback") : common.algorithm);
  if (!is_scan && algorithms.size() != 1) {
    std::fprintf(stderr, "vkprim bench reduce: one --algorithm (ordered or automatic)\n");
    return 2;
  }
  if (!is_scan && (algorithms.front().workgroup_size || algorithms.front().tuning)) {  // Reduce reads neither
    std::fprintf(stderr, "vkprim bench reduce: the tile override is ordered@0xR (R values per invocation)\n");
    return 2;
  }
  print_bench_header(*device, common.repeats, is_scan ? "; GB/s counts read + write" : "; GB/s counts the read");
  std::vector<UserRow> rows;
  auto bench = [&](auto* t) {
    using T = std::remove_pointer_t<decltype(t)>;
    return bench_user_typed<T>(*device, is_scan, kind, algorithms, sizes, common.repeats, rows);
  };
  if (op_name == "aabb_union") rc = bench(static_cast<Aabb*>(nullptr));
  else if (op_name == "affine") rc = bench(static_cast<Affine*>(nullptr));
  else if (op_name == "mat4_product") rc = bench(static_cast<Mat4*>(nullptr));
  else if (op_name == "welford") rc = bench(static_cast<Welford*>(nullptr));
  else if (op_name == "sum4") rc = bench(static_cast<Sum4*>(nullptr));
  else if (op_name == "argmin") rc = bench(static_cast<ArgMin*>(nullptr));
  else {
    std::fprintf(stderr, "vkprim bench: unknown --operator '%s' (aabb_union, affine, argmin, mat4_product, welford, sum4)\n",
                 op_name.c_str());
    return 2;
  }
  std::printf("%-10s %-18s %-9s %-13s %12s %12s %10s %8s %8s %s\n", "primitive", "algorithm", "kind", "operator", "n",
              "median_us", "GB/s", "x_read", "x_copy", "verified  notes");
  for (const UserRow& r : rows)
    std::printf("%-10s %-18s %-9s %-13s %12s %12.2f %10.1f %8.3f %8.3f %s\n", r.primitive.c_str(), r.algorithm.c_str(),
                r.kind.c_str(), r.op.c_str(), size_label(r.n).c_str(), r.median_us, r.gbps, r.of_read, r.of_copy,
                verified_cell(r.verified, r.note).c_str());
  if (!common.json.empty())
    write_json(common.json, device->context().capabilities().device_name, rows, [](const UserRow& r, JsonRow& json) {
      json.text("primitive", r.primitive).text("algorithm", r.algorithm).text("kind", r.kind).text("op", r.op);
      json.number("n", r.n).number("median_us", r.median_us).number("gbps", r.gbps).number("of_read", r.of_read);
      json.number("of_copy", r.of_copy).flag("verified", r.verified).text("note", r.note);
    });
  if (common.stats) print_pipeline_statistics(*device);
  return rc;
}

}  // namespace vkprim::tools
