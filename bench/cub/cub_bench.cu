// cub_bench: times NVIDIA CUB device-wide primitives so vkprim can be compared with them in the same
// device run.
//
// What it measures: cub::DeviceReduce::Sum, DeviceScan::InclusiveSum / ExclusiveSum,
// DeviceRadixSort::SortKeys / SortPairs (u32, f32 or u64 keys, all bits or --bits; values u32, or with
// --value-bytes structs of 8 to 64 bytes), DeviceSelect::Flagged and DevicePartition::Flagged (u32 flags, about half set), on u32 or f32
// data, over a sweep of sizes; and the keyed primitives on u32 keys (and u32 values): DeviceReduce::ReduceByKey
// (sum), DeviceScan::InclusiveSumByKey / ExclusiveSumByKey, DeviceRunLengthEncode::Encode / NonTrivialRuns and
// DeviceSelect::Unique; DeviceHistogram::HistogramEven of u32 samples (--bins, --skew); and
// DeviceSegmentedReduce::Sum, DeviceSegmentedSort::StableSortKeys / StableSortPairs and
// DeviceSegmentedRadixSort::SortKeys / SortPairs (u32 values) over segments of one --segment-size laid end to end.
// CUB's partition writes the rejected elements in REVERSE input order after the kept ones (one pass);
// vkprim's Partition keeps them in input order (std::stable_partition), which its chained algorithm
// pays for with a second pass over the rejected elements.
//
// How: the largest buffers of the sweep are allocated first with plain cudaMalloc (largest first, no
// managed memory) and every size uses a prefix of them, since an allocation made after large frees can
// be slower (see DESIGN.md, "Benchmark method notes"). Inputs are random, generated on the GPU by a
// counter hash (f32 in [-1, 1), u32 full range) and copied back once for the CPU checks. Each op/type/size
// runs in several configurations (an int or an int64_t num_items; for the sorts also cub::DoubleBuffer),
// each with its own temporary-storage size, queried once before the buffers are allocated. Per
// configuration: 3 warm-up runs, then N timed runs, each between its own pair of cudaEvents, all enqueued
// back to back on one stream and waited for once (so an interval is GPU time, not launch latency; no L2
// flush between runs). The DoubleBuffer sorts get their unsorted input copied back before every run,
// ahead of its start event. The median and the minimum are reported, for the configuration with the
// lowest median (--config best) or for each. The output of each configuration's last run is checked on
// the CPU; a wrong result prints FAIL and the program exits with status 1.
//
// Keyed input (--run-length L; vkprim's bench makes the same, so it is defined exactly; see make_run_keys):
// the keys are runs of equal keys, the key of run r (r = 0, 1, ...) being r as a u32, so they are sorted and
// adjacent runs differ. Run r's length is 1 + ((x_r >> 32) * (2L - 1) >> 32), x_r the r-th output (from 0)
// of splitmix64 seeded with 0x5EED4B4559 (kRunSeed): i.i.d. uniform on [1, 2L - 1] (mean L; the
// multiply-shift's bias is below (2L - 1) / 2^32). The runs are laid end to end and a size n takes the first n
// keys (its last run may be cut short). Value i is the u32 input of the other ops: hash32(0xC0B0 ^ i)
// (fill_kernel; hash32(x) is the upper half of splitmix64's output for the state x + 0x9E3779B97F4A7C15).
//
// Bytes counted for GB/s (each byte once; CUB's extra passes and temporary storage are not counted):
//   reduce          n * sizeof(T)                               read
//   scans           2 * n * sizeof(T)                           read + write
//   sort_keys       2 * n * sizeof(K)                           keys read + written once
//   sort_pairs      2 * n * (sizeof(K) + sizeof(V))             keys and values read + written once
//                   (V: 4 bytes, or --value-bytes)
//   select_flagged  n * sizeof(T) + n * sizeof(flag) + s * sizeof(T)   read input and flags, write s kept
//   partition_flagged n * sizeof(T) + n * sizeof(flag) + n * sizeof(T) read input and flags, write all
//   reduce_by_key   n * 4 keys + n * 4 values + runs * (4 + 4)     read, write unique keys and sums
//   scans by key    n * 4 keys + n * 4 values + n * 4              read, write
//   rle_encode      n * 4 + runs * (4 + 4)                         read keys, write unique keys and lengths
//   rle_non_trivial_runs n * 4 + nontrivial * (4 + 4)              read keys, write offset and length of
//                                                                  each run longer than 1
//   unique          n * 4 + runs * 4                               read keys, write unique keys
//   histogram_even  n * 4                                          read the samples (the bins written are
//                                                                  a few KiB)
//   segmented_reduce n * sizeof(T) + (S + 1) * 4 + S * sizeof(T)   read input and S + 1 offsets (counted as
//                                                                  4 bytes, as vkprim's u32), write S sums
//   segmented sorts 2 * n * sizeof(K) (+ 2 * n * 4 with values)    keys (and values) read + written once, as
//                                                                  vkprim bench segmented_sort counts
// Gelem/s is n / median time (for the sorts: G keys/s or G pairs/s).
//
// Exit status: 0 all results correct, 1 a result was wrong, 2 usage error or no CUDA device,
// 3 CUDA error (including out of memory).

#include <cub/cub.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "../../tools/segment_shapes.hpp"  // the splat segments of vkprim bench segmented_sort

namespace {

// ---------------------------------------------------------------------------------------------------
// Errors

[[noreturn]] void die(int status, const std::string& message) {
  std::fprintf(stderr, "cub_bench: error: %s\n", message.c_str());
  std::exit(status);
}

void check_cuda(cudaError_t err, const char* what, const char* file, int line) {
  if (err == cudaSuccess) return;
  std::string msg = std::string(what) + " failed at " + file + ":" + std::to_string(line) + ": " +
                    cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")";
  if (err == cudaErrorNoKernelImageForDevice || err == cudaErrorUnsupportedPtxVersion)
    msg += "; this binary was built for sm_90 (Hopper): rebuild for the device's architecture";
  if (err == cudaErrorMemoryAllocation) msg += "; use smaller --sizes";
  die(3, msg);
}
#define CUDA_CHECK(expr) check_cuda((expr), #expr, __FILE__, __LINE__)

// ---------------------------------------------------------------------------------------------------
// Operations, types and command line

enum class Op {
  reduce, inclusive_scan, exclusive_scan, sort_keys, sort_pairs, select_flagged, partition_flagged,
  segmented_reduce,  // S = ceil(n / --segment-size) segments end to end (CSR offsets; the last cut at n)
  // the same segments sorted (op segmented_sort: all four): DeviceSegmentedSort::StableSort*, then
  // DeviceSegmentedRadixSort::Sort*, keys only and with u32 values
  segmented_sort_keys, segmented_sort_pairs, segmented_radix_sort_keys, segmented_radix_sort_pairs,
  // keyed (is_keyed): u32 keys in runs (--run-length), u32 values
  reduce_by_key, inclusive_scan_by_key, exclusive_scan_by_key, rle_encode, rle_non_trivial_runs, unique,
  // u32 samples, uniform on [0, 2^32) or skewed (--skew), into --bins even bins
  histogram_even
};
const Op kAllOps[] = {Op::reduce,         Op::inclusive_scan,        Op::exclusive_scan,
                      Op::sort_keys,      Op::sort_pairs,            Op::select_flagged,
                      Op::partition_flagged, Op::segmented_reduce,   Op::segmented_sort_keys,
                      Op::segmented_sort_pairs, Op::segmented_radix_sort_keys, Op::segmented_radix_sort_pairs,
                      Op::reduce_by_key,
                      Op::inclusive_scan_by_key,
                      Op::exclusive_scan_by_key, Op::rle_encode,     Op::rle_non_trivial_runs,
                      Op::unique,         Op::histogram_even};

const char* op_name(Op op) {
  switch (op) {
    case Op::reduce: return "reduce";
    case Op::inclusive_scan: return "inclusive_scan";
    case Op::exclusive_scan: return "exclusive_scan";
    case Op::sort_keys: return "sort_keys";
    case Op::sort_pairs: return "sort_pairs";
    case Op::select_flagged: return "select_flagged";
    case Op::partition_flagged: return "partition_flagged";
    case Op::segmented_reduce: return "segmented_reduce";
    case Op::segmented_sort_keys: return "segmented_sort_keys";
    case Op::segmented_sort_pairs: return "segmented_sort_pairs";
    case Op::segmented_radix_sort_keys: return "segmented_radix_sort_keys";
    case Op::segmented_radix_sort_pairs: return "segmented_radix_sort_pairs";
    case Op::reduce_by_key: return "reduce_by_key";
    case Op::inclusive_scan_by_key: return "inclusive_scan_by_key";
    case Op::exclusive_scan_by_key: return "exclusive_scan_by_key";
    case Op::rle_encode: return "rle_encode";
    case Op::rle_non_trivial_runs: return "rle_non_trivial_runs";
    case Op::unique: return "unique";
    case Op::histogram_even: return "histogram_even";
  }
  return "?";
}

bool is_keyed(Op op) { return op >= Op::reduce_by_key && op <= Op::unique; }
bool is_segmented_sort(Op op) { return op >= Op::segmented_sort_keys && op <= Op::segmented_radix_sort_pairs; }
// The ops over segments of --segment-size (their segments and offsets made per size: set_segments).
bool is_segmented(Op op) { return op == Op::segmented_reduce || is_segmented_sort(op); }
bool is_pairs(Op op) {
  return op == Op::sort_pairs || op == Op::segmented_sort_pairs || op == Op::segmented_radix_sort_pairs;
}

// u32 and f32, u64 (the sorts' keys only), and two user types as vkprim's tools/operators declare them:
// sum4, a float4 summed componentwise, and box, the union of axis-aligned boxes {float3 lo, pad, float3 hi,
// pad} (32 bytes).
enum class Type { u32, f32, u64, sum4, box };
const char* type_name(Type t) {
  switch (t) {
    case Type::u32: return "u32";
    case Type::f32: return "f32";
    case Type::u64: return "u64";
    case Type::sum4: return "sum4";
    case Type::box: return "box";
  }
  return "?";
}
bool is_user_type(Type t) { return t == Type::sum4 || t == Type::box; }
size_t elem_bytes(Type t) { return t == Type::sum4 ? 16 : t == Type::box ? 32 : t == Type::u64 ? 8 : 4; }

// The keyed ops' keys and values are u32 whatever --type says: they run with u32 alone. The user types
// run the reduce and the scans (CUB's DeviceReduce::Reduce and DeviceScan::Inclusive/ExclusiveScan with the
// type's operator).
bool runs_on(Op op, Type t) {
  if (op == Op::histogram_even) return t == Type::u32;
  if (is_user_type(t)) return op == Op::reduce || op == Op::inclusive_scan || op == Op::exclusive_scan;
  if (t == Type::u64) return op == Op::sort_keys || op == Op::sort_pairs || is_segmented_sort(op);
  return !is_keyed(op) || t == Type::u32;
}

// How CUB is called (see "CUB calls"): the type of num_items, and for the sorts the API.
enum class Config { i32, i64, i32_double_buffer, i64_double_buffer };
const Config kAllConfigs[] = {Config::i32, Config::i64, Config::i32_double_buffer, Config::i64_double_buffer};

const char* config_name(Config c) {
  switch (c) {
    case Config::i32: return "int";
    case Config::i64: return "int64";
    case Config::i32_double_buffer: return "int+DoubleBuffer";
    case Config::i64_double_buffer: return "int64+DoubleBuffer";
  }
  return "?";
}

// --config best (the default) reports the fastest configuration per op and size; all, or a list, reports each.
enum class Report { best, each };

// sort_pairs values. 4 bytes (the default): Value, a u32 holding the input index, so the permutation can be
// checked. --value-bytes B > 4: Words<B / 4>, B / 4 u32 words that CUB moves as one object; word 0 holds the
// input index, the others words made from it (make_value), so every word is checked after the sort
// (check_sort_pairs).
//
// Alignment: the largest power of two up to kValueAlign that divides B (16 for 16, 32, 48 and 64 bytes, 8 for
// 8 and 24, 4 for 12), not the 4 bytes of a u32 word: CUB copies a value as one object, so its loads and
// stores are as wide as the alignment allows: on an H100 (CUB 3.0.1, u32 keys, 2^24 pairs, the fastest
// configuration) 16-byte alignment took 16-byte values from 1.67 to 1.34 ms, 32 bytes from 6.69 to 2.69 ms,
// 64 bytes from 19.5 to 6.78 ms, and 8-byte alignment 24 bytes from 3.69 to 2.72 ms (8 and 12 bytes: no
// change). -DCUB_BENCH_VALUE_ALIGN=4 builds the natural 4-byte alignment instead (=8: at most 8 bytes).
using Value = uint32_t;
#ifndef CUB_BENCH_VALUE_ALIGN
#define CUB_BENCH_VALUE_ALIGN 16
#endif
constexpr size_t kValueAlign = CUB_BENCH_VALUE_ALIGN;
static_assert(kValueAlign == 4 || kValueAlign == 8 || kValueAlign == 16, "CUB_BENCH_VALUE_ALIGN: 4, 8 or 16");
template <int W>
constexpr size_t words_align() {
  size_t a = kValueAlign;
  while (a > 4 && (4 * W) % a != 0) a /= 2;
  return a;
}
template <int W>
struct alignas(words_align<W>()) Words {
  uint32_t w[W];
};

// The value sizes --value-bytes takes, in bytes; 4 is Value, the others Words. with_value_type calls f with
// Tag<V> for the value type of a size.
template <uint32_t... B>
struct ValueSizes {};
using AllValueSizes = ValueSizes<4, 8, 12, 16, 24, 32, 48, 64>;
template <uint32_t... B>
constexpr std::array<uint32_t, sizeof...(B)> value_sizes(ValueSizes<B...>) {
  return {B...};
}
constexpr auto kValueBytes = value_sizes(AllValueSizes{});
template <class V>
struct Tag {
  using type = V;
};
template <uint32_t B>
using ValueOf = std::conditional_t<B == 4, Value, Words<B / 4>>;
static_assert(sizeof(ValueOf<12>) == 12 && sizeof(ValueOf<64>) == 64, "values are exactly --value-bytes long");

template <class F, uint32_t B0, uint32_t... Bs>
decltype(auto) with_value_type_of(uint32_t bytes, F&& f, ValueSizes<B0, Bs...>) {
  if constexpr (sizeof...(Bs) == 0) return f(Tag<ValueOf<B0>>{});  // parse_args admits kValueBytes only
  else return bytes == B0 ? f(Tag<ValueOf<B0>>{}) : with_value_type_of(bytes, f, ValueSizes<Bs...>{});
}
template <class F>
decltype(auto) with_value_type(uint32_t bytes, F&& f) {
  return with_value_type_of(bytes, f, AllValueSizes{});
}

using Flag = uint32_t;   // select_flagged / partition_flagged flags: 0 or 1, 32-bit as a GLSL storage buffer would hold them

struct Options {
  std::vector<Op> ops;
  std::vector<Type> types{Type::u32};
  std::vector<int64_t> sizes;
  int iterations = 20;
  std::string json_path;
  std::vector<Config> configs{std::begin(kAllConfigs), std::end(kAllConfigs)};
  Report report = Report::best;
  std::vector<uint32_t> run_lengths{4};  // keyed ops: mean run length L of the keys (see make_run_keys)
  std::vector<uint32_t> value_bytes{4};  // sort_pairs: bytes per value, each size run in turn
  int begin_bit = 0, end_bit = 0;        // sorts: the key bits sorted (--bits); end 0: every bit of the key
  uint32_t splat_tiles = 0;              // sorts: splatting-shaped keys (--keys splat[:TILES], splat_key)
  std::vector<uint32_t> bins{256};       // histogram_even: bins, each run in turn
  std::vector<uint32_t> skews{0};        // histogram_even: percent of the samples in one bin, each run in turn
  std::vector<uint32_t> segment_sizes{1, 32, 1024, 1u << 20};  // segmented_reduce: elements per segment
};

// Whether sort_pairs' rows name their value size (text: the last column, V; JSON: value_bytes): when
// --value-bytes names a size other than 4. Without it the output is as before the option existed.
bool value_column(const Options& opt) {
  return std::any_of(opt.value_bytes.begin(), opt.value_bytes.end(), [](uint32_t v) { return v != 4; });
}

constexpr uint32_t kMaxRunLength = 1u << 30;  // 2L - 1 fits a u32

constexpr int kWarmupRuns = 3;

void print_usage(FILE* f) {
  std::fprintf(f,
               "usage: cub_bench <op> [--type u32|f32|sum4|box] [--sizes LIST] [--iterations N] [--config C]\n"
               "                 [--run-length L] [--value-bytes LIST] [--bits B..E] [--keys uniform|splat[:T]]\n"
               "                 [--bins LIST] [--skew LIST] [--segment-size LIST] [--json FILE]\n"
               "  op:           reduce | inclusive_scan | exclusive_scan | sort_keys | sort_pairs |\n"
               "                select_flagged | partition_flagged | segmented_reduce | segmented_sort |\n"
               "                segmented_sort_keys | segmented_sort_pairs | segmented_radix_sort_keys |\n"
               "                segmented_radix_sort_pairs | reduce_by_key |\n"
               "                inclusive_scan_by_key | exclusive_scan_by_key | rle_encode | rle_non_trivial_runs |\n"
               "                unique | histogram_even | all, or a comma list of ops\n"
               "  --type        u32 (default) or f32; a comma list such as u32,f32 runs both (the keyed ops,\n"
               "                reduce_by_key to unique: u32 keys and values, with u32 only); u64: the sorts'\n"
               "                keys; sum4 (float4 sum) and box (box union, 32 bytes): user types for reduce\n"
               "                and the scans\n"
               "  --sizes       comma list of element counts: 1048576, 2^20, or a range 2^10..2^28\n"
               "                (every power of two); default 2^20,2^22,2^24,2^26,2^28\n"
               "  --iterations  timed runs per size after %d warm-up runs (default 20; use >= 10)\n"
               "  --config      best (default): time every configuration, report the fastest; all: report\n"
               "                each; or a comma list of int, int64, int+DoubleBuffer, int64+DoubleBuffer\n"
               "                (DoubleBuffer: sorts only), each reported\n"
               "  --run-length  keyed ops: runs of equal keys with lengths uniform on [1, 2L-1], mean L\n"
               "                (default 4); a comma list such as 4,64 runs each\n"
               "  --value-bytes sort_pairs: bytes per value, 4 (default: u32), 8, 12, 16, 24, 32, 48 or 64 (a\n"
               "                struct of u32 words); a comma list such as 4,16 runs each. Needs sort_pairs\n"
               "                (or all) as the op; the other ops run once, as without it\n"
               "  --bits B..E   sorts of u32 or u64 keys: sort key bits [B, E) (CUB's begin_bit, end_bit)\n"
               "  --keys        sorts: uniform random bits (default), or splat[:T]: keys shaped as a splatting\n"
               "                renderer sorts them, the formula of vkprim bench sort --keys splat (positive f32\n"
               "                depths; u64 keys tile << 32 | depth, T tiles, default 8160)\n"
               "  --bins        histogram_even: even bins over [0, 2^32) (default 256); a comma list such as\n"
               "                256,65536 runs each\n"
               "  --skew        histogram_even: percent of the samples set to one value (one bin), the rest\n"
               "                uniform (default 0); a comma list such as 0,90 runs each\n"
               "  --segment-size segmented_reduce and the segmented sorts: elements per segment, segments laid end\n"
               "                to end (the last cut at n); a comma list such as 1,32,1024,2^20 (the default) runs\n"
               "                each; int and int64 configurations: the offsets' type (segmented sorts: u32, f32 or\n"
               "                u64 keys, u32 values; segmented_sort runs DeviceSegmentedSort's stable sorts and\n"
               "                DeviceSegmentedRadixSort's, keys only and pairs); splat (segmented sorts only): the\n"
               "                power-law lengths of vkprim bench segmented_sort --segments splat\n"
               "  --json FILE   also write the results as a JSON array\n",
               kWarmupRuns);
}

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr, "cub_bench: error: %s\n", message.c_str());
  print_usage(stderr);
  std::exit(2);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t end = s.find(sep, start);
    parts.push_back(s.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

// Parses "123" or "2^k". Returns false on anything else.
bool parse_count(const std::string& s, int64_t& out, bool& is_power) {
  if (s.empty()) return false;
  is_power = s.size() > 2 && s[0] == '2' && s[1] == '^';
  const std::string digits = is_power ? s.substr(2) : s;
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) return false;
  errno = 0;
  const unsigned long long v = std::strtoull(digits.c_str(), nullptr, 10);
  if (errno != 0) return false;
  if (is_power) {
    if (v > 62) return false;
    out = int64_t{1} << v;
  } else {
    if (v > static_cast<unsigned long long>(INT64_MAX)) return false;
    out = static_cast<int64_t>(v);
  }
  return true;
}

std::vector<int64_t> parse_sizes(const std::string& list) {
  std::vector<int64_t> sizes;
  for (const std::string& item : split(list, ',')) {
    const size_t dots = item.find("..");
    if (dots != std::string::npos) {
      int64_t lo = 0, hi = 0;
      bool lo_pow = false, hi_pow = false;
      if (!parse_count(item.substr(0, dots), lo, lo_pow) || !parse_count(item.substr(dots + 2), hi, hi_pow))
        usage_error("bad size range '" + item + "' (expected e.g. 2^10..2^28)");
      auto is_pow2 = [](int64_t v) { return v > 0 && (v & (v - 1)) == 0; };
      if (!is_pow2(lo) || !is_pow2(hi) || lo > hi)
        usage_error("size range '" + item + "' must go from a power of two up to a power of two");
      for (int64_t v = lo; v <= hi; v *= 2) sizes.push_back(v);
    } else {
      int64_t v = 0;
      bool pow = false;
      if (!parse_count(item, v, pow)) usage_error("bad size '" + item + "' (expected e.g. 1048576 or 2^20)");
      sizes.push_back(v);
    }
  }
  for (int64_t n : sizes) {
    // sort_pairs' values are u32 input indices. The int configurations run only where n fits an int.
    if (n < 1 || n > int64_t{UINT32_MAX})
      usage_error("size " + std::to_string(n) + " out of range [1, 2^32 - 1]");
  }
  return sizes;
}

Options parse_args(int argc, char** argv) {
  Options opt;
  if (argc < 2) usage_error("missing <op>");
  const std::string first = argv[1];
  if (first == "-h" || first == "--help") {
    print_usage(stdout);
    std::exit(0);
  }
  if (first == "all") {
    opt.ops.assign(std::begin(kAllOps), std::end(kAllOps));
  } else if (first == "segmented_sort") {
    opt.ops = {Op::segmented_sort_keys, Op::segmented_sort_pairs, Op::segmented_radix_sort_keys,
               Op::segmented_radix_sort_pairs};
  } else {
    for (const std::string& name : split(first, ','))  // one op, or a comma list of them
      for (Op op : kAllOps)
        if (name == op_name(op) && std::find(opt.ops.begin(), opt.ops.end(), op) == opt.ops.end()) opt.ops.push_back(op);
    if (opt.ops.empty() || opt.ops.size() < split(first, ',').size()) usage_error("unknown op in '" + first + "'");
  }
  opt.sizes = parse_sizes("2^20,2^22,2^24,2^26,2^28");

  bool value_bytes_given = false, histogram_given = false;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--type") {
      opt.types.clear();
      for (const std::string& t : split(value(), ',')) {
        if (t == "u32") opt.types.push_back(Type::u32);
        else if (t == "f32") opt.types.push_back(Type::f32);
        else if (t == "u64") opt.types.push_back(Type::u64);
        else if (t == "sum4") opt.types.push_back(Type::sum4);
        else if (t == "box") opt.types.push_back(Type::box);
        else usage_error("unknown type '" + t + "' (expected u32, f32, u64, sum4 or box)");
      }
    } else if (arg == "--sizes") {
      opt.sizes = parse_sizes(value());
    } else if (arg == "--iterations") {
      const std::string v = value();
      char* end = nullptr;
      const long n = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || n < 1 || n > 100000) usage_error("bad --iterations '" + v + "'");
      opt.iterations = static_cast<int>(n);
    } else if (arg == "--config") {
      const std::string v = value();
      opt.report = v == "best" ? Report::best : Report::each;
      if (v != "best" && v != "all") {
        opt.configs.clear();
        for (const std::string& name : split(v, ',')) {
          auto c = std::find_if(std::begin(kAllConfigs), std::end(kAllConfigs),
                                [&](Config k) { return name == config_name(k); });
          if (c == std::end(kAllConfigs))
            usage_error("unknown configuration '" + name + "' (expected best, all, or a list of int, int64, "
                        "int+DoubleBuffer, int64+DoubleBuffer)");
          if (std::find(opt.configs.begin(), opt.configs.end(), *c) == opt.configs.end()) opt.configs.push_back(*c);
        }
      }
    } else if (arg == "--run-length") {
      opt.run_lengths.clear();
      for (const std::string& v : split(value(), ',')) {
        int64_t L = 0;
        bool pow = false;
        if (!parse_count(v, L, pow) || L < 1 || L > kMaxRunLength)
          usage_error("bad --run-length '" + v + "' (expected 1 to 2^30)");
        opt.run_lengths.push_back(static_cast<uint32_t>(L));
      }
    } else if (arg == "--value-bytes") {
      opt.value_bytes.clear();
      for (const std::string& v : split(value(), ',')) {
        int64_t bytes = 0;
        bool pow = false;
        const bool known = parse_count(v, bytes, pow) &&
                           std::find(kValueBytes.begin(), kValueBytes.end(), bytes) != kValueBytes.end();
        if (!known) usage_error("bad --value-bytes '" + v + "' (expected 4, 8, 12, 16, 24, 32, 48 or 64)");
        if (std::find(opt.value_bytes.begin(), opt.value_bytes.end(), bytes) == opt.value_bytes.end())
          opt.value_bytes.push_back(static_cast<uint32_t>(bytes));
      }
      value_bytes_given = true;
    } else if (arg == "--bits") {
      const std::string v = value();
      if (std::sscanf(v.c_str(), "%d..%d", &opt.begin_bit, &opt.end_bit) != 2 || opt.begin_bit < 0 ||
          opt.end_bit <= opt.begin_bit || opt.end_bit > 64)
        usage_error("bad --bits '" + v + "' (expected B..E, 0 <= B < E <= 64)");
    } else if (arg == "--keys") {
      const std::string v = value();
      if (v.rfind("splat", 0) == 0 && (v.size() == 5 || (v[5] == ':' && v.size() > 6)))
        opt.splat_tiles = v.size() == 5 ? 8160u : static_cast<uint32_t>(std::strtoul(v.c_str() + 6, nullptr, 10));
      if (v != "uniform" && opt.splat_tiles == 0) usage_error("bad --keys '" + v + "' (expected uniform or splat[:T])");
    } else if (arg == "--bins" || arg == "--skew") {
      const bool bins = arg == "--bins";
      std::vector<uint32_t>& list = bins ? opt.bins : opt.skews;
      list.clear();
      for (const std::string& v : split(value(), ',')) {
        int64_t x = 0;
        bool pow = false;
        if (!parse_count(v, x, pow) || (bins ? x < 1 || x > 65536 : x > 100))
          usage_error("bad " + arg + " '" + v + (bins ? "' (expected 1 to 65536)" : "' (expected 0 to 100)"));
        list.push_back(static_cast<uint32_t>(x));
      }
      histogram_given = true;
    } else if (arg == "--segment-size") {
      opt.segment_sizes.clear();
      for (const std::string& v : split(value(), ',')) {
        int64_t size = 0;  // 0: splat
        bool pow = false;
        if (v != "splat" && (!parse_count(v, size, pow) || size < 1 || size > int64_t{UINT32_MAX}))
          usage_error("bad --segment-size '" + v + "' (expected 1 to 2^32 - 1 or splat)");
        opt.segment_sizes.push_back(static_cast<uint32_t>(size));
      }
    } else if (arg == "--json") {
      opt.json_path = value();
    } else if (arg == "-h" || arg == "--help") {
      print_usage(stdout);
      std::exit(0);
    } else {
      usage_error("unknown argument '" + arg + "'");
    }
  }
  if (value_bytes_given && std::find(opt.ops.begin(), opt.ops.end(), Op::sort_pairs) == opt.ops.end())
    usage_error("--value-bytes is for sort_pairs (or all); " + first + " has no values");
  for (Type t : opt.types)
    if (opt.end_bit > int(8 * elem_bytes(t)) || (opt.end_bit && t != Type::u32 && t != Type::u64))
      usage_error(std::string("--bits ") + std::to_string(opt.end_bit) + " past the keys of type " + type_name(t) +
                  " (bit ranges: u32 and u64 keys)");
  if (histogram_given && std::find(opt.ops.begin(), opt.ops.end(), Op::histogram_even) == opt.ops.end())
    usage_error("--bins and --skew are for histogram_even (or all); " + first + " has no bins");
  if (std::find(opt.segment_sizes.begin(), opt.segment_sizes.end(), 0u) != opt.segment_sizes.end() &&
      std::find(opt.ops.begin(), opt.ops.end(), Op::segmented_reduce) != opt.ops.end())
    usage_error("--segment-size splat is for the segmented sorts");
  return opt;
}

// ---------------------------------------------------------------------------------------------------
// Device buffers and input generation

// One allocation per role, sized for the largest n of the sweep; every size uses a prefix.
struct Buffers {
  void* in = nullptr;          // keys / values to reduce, scan, sort or select (4-byte elements); keyed ops' values
  void* out = nullptr;         // result of the op (keyed ops: unique keys, scans, or run offsets)
  void* values_in = nullptr;   // sort_pairs only: Value or Words (--value-bytes)
  uint32_t* values_out = nullptr;  // sort_pairs (its value type); reduce_by_key's sums and the run-length
                                   // encodings' lengths (u32)
  uint32_t* keys = nullptr;    // keyed ops: the runs of keys (make_run_keys)
  Flag* flags = nullptr;       // select_flagged and partition_flagged only
  void* keys_pristine = nullptr;       // sorts only: the unsorted input, restored before each DoubleBuffer run
  void* values_pristine = nullptr;     // sort_pairs only
  int64_t* num_selected = nullptr;  // select_flagged, partition_flagged; keyed ops: number of runs (or unique keys)
  uint32_t* histogram = nullptr;    // histogram_even: the counts of the most bins of --bins
  int* offsets32 = nullptr;         // segmented_reduce: the S + 1 CSR offsets as int (config int) and int64_t
  int64_t* offsets64 = nullptr;
  int64_t segment_size = 0, segments = 0;  // the segmented ops: set per segment size and n (set_segments);
                                           // segment_size 0: splat, whose offsets are also in splat_offsets
  std::vector<uint32_t> splat_offsets;
  void* temp = nullptr;
  size_t temp_bytes = 0;
  int begin_bit = 0, end_bit = 0;  // the sorts' key bits (--bits); end 0: all of the key
};

constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;  // splitmix64's increment

// splitmix64's finalizer of a counter: cheap, well mixed, reproducible on host and device.
__host__ __device__ uint64_t mix64(uint64_t x) {
  x += kGolden;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
__host__ __device__ uint32_t hash32(uint64_t x) { return static_cast<uint32_t>(mix64(x) >> 32); }

struct alignas(16) Sum4 {
  float v[4];
};
struct alignas(16) Box {
  float lo[3], pad0, hi[3], pad1;
};
struct Sum4Op {
  __host__ __device__ Sum4 operator()(const Sum4& a, const Sum4& b) const {
    return Sum4{{a.v[0] + b.v[0], a.v[1] + b.v[1], a.v[2] + b.v[2], a.v[3] + b.v[3]}};
  }
};
struct BoxOp {
  __host__ __device__ Box operator()(const Box& a, const Box& b) const {
    Box r{};
    for (int k = 0; k < 3; ++k) r.lo[k] = fminf(a.lo[k], b.lo[k]), r.hi[k] = fmaxf(a.hi[k], b.hi[k]);
    return r;
  }
};
__host__ __device__ inline Sum4 identity_of(Sum4*) { return Sum4{{0.0f, 0.0f, 0.0f, 0.0f}}; }
__host__ __device__ inline Box identity_of(Box*) {
  const float inf = __builtin_huge_valf();
  return Box{{inf, inf, inf}, 0.0f, {-inf, -inf, -inf}, 0.0f};
}

__device__ void store_random(uint32_t* p, uint32_t h) { *p = h; }
__device__ void store_random(uint64_t* p, uint32_t h) { *p = (uint64_t{h} << 32) | hash32(uint64_t{h} ^ 0x5BD1E995u); }

// A splatting renderer's key for index i, as vkprim's bench sort --keys splat makes it: r = mix64(seed + i);
// the depth is a positive f32, 0.1 + 99.9 * (r's low 32 bits >> 8) / 2^24, whose bits order as unsigned
// integers; 32-bit keys are the depth, 64-bit keys (r >> 32) % tiles << 32 | depth.
template <class T>
__device__ T splat_key(uint64_t seed, uint64_t i, uint32_t tiles) {
  const uint64_t r = mix64(seed + i);
  const float depth = 0.1f + 99.9f * static_cast<float>(static_cast<uint32_t>(r) >> 8) / 16777216.0f;
  const uint32_t bits = __float_as_uint(depth);
  if constexpr (sizeof(T) == 8) return (((r >> 32) % tiles) << 32) | bits;
  else return static_cast<T>(bits);
}
__device__ void store_random(Sum4* p, uint32_t h) {
  for (int k = 0; k < 4; ++k) p->v[k] = static_cast<float>(hash32(h + k) >> 8) * (1.0f / 16777216.0f);  // [0, 1)
}
__device__ void store_random(Box* p, uint32_t h) {
  for (int k = 0; k < 3; ++k) {
    const float c = static_cast<float>(hash32(h + k) >> 8) * (2000.0f / 16777216.0f) - 1000.0f;
    const float e = static_cast<float>(hash32(h + 7 + k) >> 20) * (10.0f / 4096.0f);
    p->lo[k] = c - e, p->hi[k] = c + e;
  }
  p->pad0 = p->pad1 = 0.0f;
}
__device__ void store_random(float* p, uint32_t h) {
  *p = static_cast<float>(h >> 8) * (1.0f / 8388608.0f) - 1.0f;  // [-1, 1), 2^-23 steps, exact in f32
}

template <class T>
__global__ void fill_kernel(T* in, Flag* flags, int64_t n, uint64_t seed, uint32_t splat_tiles) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    if constexpr (std::is_same_v<T, uint32_t> || std::is_same_v<T, uint64_t>) {
      if (splat_tiles) in[i] = splat_key<T>(seed, static_cast<uint64_t>(i), splat_tiles);
      else store_random(&in[i], hash32(seed ^ static_cast<uint64_t>(i)));
    } else {
      store_random(&in[i], hash32(seed ^ static_cast<uint64_t>(i)));
    }
    if (flags) flags[i] = hash32((seed + 0x5151) * 0x2545F4914F6CDD1Dull + static_cast<uint64_t>(i)) & 1u;
  }
}

// histogram_even's skewed input (--skew P): sample i becomes kHotSample where hash32(kSkewSeed ^ i) falls in
// the first P of 100 equal parts of [0, 2^32) (about P% of the samples, all in one bin); the others keep their
// uniform value.
constexpr uint64_t kSkewSeed = 0x5CE3000000000000ull;
constexpr uint32_t kHotSample = 0x9E3779B9u;
__global__ void skew_kernel(uint32_t* in, int64_t n, uint32_t percent) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    if (((uint64_t{hash32(kSkewSeed ^ static_cast<uint64_t>(i))} * 100) >> 32) < percent) in[i] = kHotSample;
}

// sort_pairs' value of input index i: Value i, or Words with word 0 i and word k >= 1
// hash32(kValueSeed ^ i) ^ (k * 0x9E3779B9) (value_word of that hash h): one hash of i per value, cheap to
// check on the CPU at any size, its words told apart by an odd multiple of k.
constexpr uint64_t kValueSeed = 0x7A1E000000000000ull;
__host__ __device__ inline uint32_t value_word(uint32_t h, int k) { return h ^ (static_cast<uint32_t>(k) * 0x9E3779B9u); }
__host__ __device__ inline void make_value(uint32_t index, Value& v) { v = index; }
template <int W>
__host__ __device__ void make_value(uint32_t index, Words<W>& v) {
  const uint32_t h = hash32(kValueSeed ^ index);
  v.w[0] = index;
  for (int k = 1; k < W; ++k) v.w[k] = value_word(h, k);
}
inline uint32_t value_index(const Value& v) { return v; }
template <int W>
uint32_t value_index(const Words<W>& v) { return v.w[0]; }
// The first word of a value that is not its index's (0: none).
inline int bad_word(const Value&) { return 0; }
template <int W>
int bad_word(const Words<W>& v) {
  const uint32_t h = hash32(kValueSeed ^ v.w[0]);
  for (int k = 1; k < W; ++k)
    if (v.w[k] != value_word(h, k)) return k;
  return 0;
}

// The values of indices 0..n-1 into both buffers (the input and the unsorted copy DoubleBuffer runs restore).
template <class V>
__global__ void fill_values_kernel(V* values, V* pristine, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    V v;
    make_value(static_cast<uint32_t>(i), v);  // n < 2^32
    values[i] = v;
    if (pristine) pristine[i] = v;
  }
}

// segmented_reduce's CSR offsets: offset k = min(k * size, n), k = 0 .. segments.
template <class N>
__global__ void fill_offsets_kernel(N* offsets, int64_t segments, int64_t size, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k <= segments; k += stride)
    offsets[k] = static_cast<N>(k * size < n ? k * size : n);
}

// The segmented ops' segments of b.segment_size elements over n, or splat segments (segment_size 0, drawn on
// the CPU with a seed fixed per n): their count and both offset arrays.
constexpr uint64_t kSplatSeed = 0x5EED5E6ull;

void set_segments(Buffers& b, int64_t n, cudaStream_t s) {
  b.splat_offsets.clear();
  if (b.segment_size == 0) {
    std::mt19937_64 rng(kSplatSeed + static_cast<uint64_t>(n));
    b.splat_offsets = vkprim::tools::splat_segment_offsets(static_cast<uint64_t>(n), rng);
    b.segments = static_cast<int64_t>(b.splat_offsets.size()) - 1;
    std::vector<int64_t> wide(b.splat_offsets.begin(), b.splat_offsets.end());
    if (n <= INT_MAX) {
      std::vector<int> narrow(b.splat_offsets.begin(), b.splat_offsets.end());
      CUDA_CHECK(cudaMemcpy(b.offsets32, narrow.data(), narrow.size() * sizeof(int), cudaMemcpyHostToDevice));
    }
    CUDA_CHECK(cudaMemcpy(b.offsets64, wide.data(), wide.size() * sizeof(int64_t), cudaMemcpyHostToDevice));
    std::printf("# splat segments of n=%lld: %lld\n", static_cast<long long>(n), static_cast<long long>(b.segments));
    return;
  }
  b.segments = (n + b.segment_size - 1) / b.segment_size;
  if (n <= INT_MAX) fill_offsets_kernel<int><<<1024, 256, 0, s>>>(b.offsets32, b.segments, b.segment_size, n);
  fill_offsets_kernel<int64_t><<<1024, 256, 0, s>>>(b.offsets64, b.segments, b.segment_size, n);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaStreamSynchronize(s));
}

constexpr uint64_t kRunSeed = 0x5EED4B4559ull;

// The keyed ops' keys for mean run length L, all of keys.size() (see the top of the file): run r has key r
// and is 1 + ((x_r >> 32) * (2L - 1) >> 32) long, x_r the r-th output (from 0) of splitmix64 seeded with
// kRunSeed, whose upper half is hash32(kRunSeed + r * kGolden). Uniform on [1, 2L - 1]; the last run is cut
// at the end. On the CPU, a run at a time (2^28 keys in well under a second).
void make_run_keys(uint32_t L, std::vector<uint32_t>& keys) {
  const uint64_t span = 2ull * L - 1;
  const size_t n = keys.size();
  size_t i = 0;
  for (uint64_t r = 0; i < n; ++r) {
    const uint64_t length = 1 + ((uint64_t{hash32(kRunSeed + r * kGolden)} * span) >> 32);
    const size_t end = static_cast<size_t>(std::min<uint64_t>(n, i + length));
    std::fill(keys.begin() + static_cast<std::ptrdiff_t>(i), keys.begin() + static_cast<std::ptrdiff_t>(end),
              static_cast<uint32_t>(r));  // n < 2^32, so r < 2^32
    i = end;
  }
}

// ---------------------------------------------------------------------------------------------------
// CUB calls. With temp == nullptr this only writes the needed temporary-storage size (CUB's protocol).
//
// CUB picks its offsets and tuning from the type of num_items, and its sorts have two APIs, so each op is
// timed in every configuration and the fastest is reported: an int or an int64_t count, and for the sorts
// also cub::DoubleBuffer (which ping-pongs between the two buffers instead of writing the output buffer on
// every pass; the unsorted input is restored before each run, outside the timing). A configuration runs
// only where it is a call of its own: in CUB 3 DeviceSelect::Flagged and Unique take a fixed
// ::cuda::std::int64_t count (an int converts to it: the same code) and DeviceRunLengthEncode::Encode and
// NonTrivialRuns a fixed int, where the other calls take any integer type (NumItemsT). count_types reads
// which from CUB's signatures at compile time.

uint32_t* u32(void* p) { return static_cast<uint32_t*>(p); }

}  // namespace

// A count that converts to N and to no other type. A fixed num_items parameter accepts it only when the
// parameter is N; a template one (NumItemsT) accepts it for any N. Its operator and SelectFlaggedProbe's are
// only named in unevaluated calls, never defined, and the keyed calls are named so for counts of this type
// (count_types): all outside the anonymous namespace, where nvcc would warn that they are never referenced.
namespace cub_bench {
template <class N>
struct OnlyConvertsTo {
  template <class U, std::enable_if_t<std::is_same_v<U, N>, int> = 0>
  operator U() const;
};

// DeviceSelect::Flagged as the keyed calls below, for count_types alone (call_cub makes the call, for u32 or f32).
struct SelectFlaggedProbe {
  template <class C>
  auto operator()(void* temp, size_t& temp_bytes, const Buffers& b, C n, cudaStream_t s) const
      -> decltype(cub::DeviceSelect::Flagged(temp, temp_bytes, static_cast<uint32_t*>(b.in), b.flags,
                                             static_cast<uint32_t*>(b.out), b.num_selected, n, s));
};

// The keyed ops' CUB calls, each written once as a function object of the count type C: call_cub_keyed makes
// the call, count_types probes it. Keys b.keys, values b.in, outputs b.out and b.values_out, the number of
// runs (or unique keys) in b.num_selected; u32 keys and values (runs_on).
#define KEYED_CUB_CALL(Name, ...)                                                                           \
  struct Name {                                                                                           \
    template <class C>                                                                                    \
    auto operator()(void* temp, size_t& temp_bytes, const Buffers& b, C n, cudaStream_t s) const          \
        -> decltype(__VA_ARGS__) {                                                                        \
      return __VA_ARGS__;                                                                                 \
    }                                                                                                     \
  }
KEYED_CUB_CALL(ReduceByKeyCall, cub::DeviceReduce::ReduceByKey(temp, temp_bytes, b.keys, u32(b.out), u32(b.in),
                                                               b.values_out, b.num_selected, ::cuda::std::plus<>{}, n, s));
KEYED_CUB_CALL(InclusiveSumByKeyCall, cub::DeviceScan::InclusiveSumByKey(temp, temp_bytes, b.keys, u32(b.in), u32(b.out),
                                                                         n, ::cuda::std::equal_to<>{}, s));
KEYED_CUB_CALL(ExclusiveSumByKeyCall, cub::DeviceScan::ExclusiveSumByKey(temp, temp_bytes, b.keys, u32(b.in), u32(b.out),
                                                                         n, ::cuda::std::equal_to<>{}, s));
KEYED_CUB_CALL(EncodeCall, cub::DeviceRunLengthEncode::Encode(temp, temp_bytes, b.keys, u32(b.out), b.values_out,
                                                              b.num_selected, n, s));
KEYED_CUB_CALL(NonTrivialRunsCall, cub::DeviceRunLengthEncode::NonTrivialRuns(temp, temp_bytes, b.keys, u32(b.out),
                                                                              b.values_out, b.num_selected, n, s));
KEYED_CUB_CALL(UniqueCall, cub::DeviceSelect::Unique(temp, temp_bytes, b.keys, u32(b.out), b.num_selected, n, s));
#undef KEYED_CUB_CALL
}  // namespace cub_bench

namespace {

using namespace cub_bench;

// f applied to the function object of a keyed op's CUB call; `otherwise` for the other ops.
template <class R, class F>
R with_keyed_call(Op op, R otherwise, F f) {
  switch (op) {
    case Op::reduce_by_key: return f(ReduceByKeyCall{});
    case Op::inclusive_scan_by_key: return f(InclusiveSumByKeyCall{});
    case Op::exclusive_scan_by_key: return f(ExclusiveSumByKeyCall{});
    case Op::rle_encode: return f(EncodeCall{});
    case Op::rle_non_trivial_runs: return f(NonTrivialRunsCall{});
    case Op::unique: return f(UniqueCall{});
    default: return otherwise;
  }
}

// Whether a call (a function object as above) takes a count of type N itself, not by conversion.
template <class Call, class N, class = void>
struct Accepts : std::false_type {};
template <class Call, class N>
struct Accepts<Call, N, std::void_t<decltype(Call{}(std::declval<void*>(), std::declval<size_t&>(),
                                                   std::declval<const Buffers&>(), OnlyConvertsTo<N>{},
                                                   cudaStream_t{}))>> : std::true_type {};

// Which count types a CUB call has a call of its own for: both for a template count (or one this test cannot
// see), one where the parameter is fixed.
struct CountTypes {
  bool i32, i64;
};
template <class Call>
constexpr CountTypes count_types_of() {
  constexpr bool takes_int = Accepts<Call, int>::value, takes_int64 = Accepts<Call, int64_t>::value;
  return {takes_int || !takes_int64, takes_int64 || !takes_int};
}

// Per op; the calls not probed (Sum, the scans, the sorts, DevicePartition::Flagged) take NumItemsT.
CountTypes count_types(Op op) {
  if (op == Op::select_flagged) return count_types_of<SelectFlaggedProbe>();
  return with_keyed_call(op, CountTypes{true, true}, [](auto call) { return count_types_of<decltype(call)>(); });
}

const char* count_types_name(Op op) {
  const CountTypes ct = count_types(op);
  return ct.i32 && ct.i64 ? "int and int64" : ct.i64 ? "int64 only" : "int only";
}

bool is_sort(Op op) { return op == Op::sort_keys || op == Op::sort_pairs || is_segmented_sort(op); }
bool writes_values_out(Op op) {
  return is_pairs(op) || op == Op::reduce_by_key || op == Op::rle_encode || op == Op::rle_non_trivial_runs;
}
// Bytes per value a sort moves: sort_pairs' param (--value-bytes), the segmented pairs' u32, else 0.
uint32_t sort_value_bytes(Op op, uint32_t param) {
  return op == Op::sort_pairs ? param : is_pairs(op) ? uint32_t(sizeof(Value)) : 0u;
}
bool writes_count(Op op) {
  return op == Op::select_flagged || op == Op::partition_flagged ||
         (is_keyed(op) && op != Op::inclusive_scan_by_key && op != Op::exclusive_scan_by_key);
}
bool double_buffer(Config c) { return c == Config::i32_double_buffer || c == Config::i64_double_buffer; }
bool wide_count(Config c) { return c == Config::i64 || c == Config::i64_double_buffer; }

// Whether op at size n runs in configuration c: DoubleBuffer is for the sorts, an int count needs n < 2^31,
// and a call with a fixed count type (count_types) runs only with that one.
bool applies(Op op, Config c, int64_t n) {
  if (double_buffer(c) && !is_sort(op)) return false;
  if (!wide_count(c) && n > INT_MAX) return false;
  return wide_count(c) ? count_types(op).i64 : count_types(op).i32;
}

// The configurations of `wanted` (--config) that op at size n runs in, in kAllConfigs' order.
std::vector<Config> configs_for(Op op, int64_t n, const std::vector<Config>& wanted) {
  std::vector<Config> configs;
  for (Config c : kAllConfigs)
    if (applies(op, c, n) && std::find(wanted.begin(), wanted.end(), c) != wanted.end()) configs.push_back(c);
  return configs;
}

// Where a call left the sorted keys and values (DoubleBuffer decides at run time).
struct Output {
  const void* keys = nullptr;
  const void* values = nullptr;
};

// The segmented sorts over b.segments segments of b.offsets (the configuration's count type N is the offsets',
// as for segmented_reduce): DeviceSegmentedSort's stable sorts (every key bit) or DeviceSegmentedRadixSort's
// (--bits), keys only or with Value values, into the output buffers or through cub::DoubleBuffer.
template <class T, class V, class N>
cudaError_t call_cub_segmented_sort(Op op, bool use_double_buffer, void* temp, size_t& temp_bytes, const Buffers& b,
                                    N n, cudaStream_t s, Output* where) {
  N* offsets = nullptr;
  if constexpr (std::is_same_v<N, int>) offsets = b.offsets32;
  else offsets = b.offsets64;
  const N* begin = offsets;
  const N* end = offsets + 1;
  T* in = static_cast<T*>(b.in);
  T* out = static_cast<T*>(b.out);
  V* values_in = static_cast<V*>(b.values_in);
  V* values_out = static_cast<V*>(static_cast<void*>(b.values_out));
  const bool radix = op == Op::segmented_radix_sort_keys || op == Op::segmented_radix_sort_pairs;
  const bool pairs = is_pairs(op);
  const int end_bit = b.end_bit ? b.end_bit : int(sizeof(T) * 8);
  using Radix = cub::DeviceSegmentedRadixSort;
  using Stable = cub::DeviceSegmentedSort;
  if (use_double_buffer) {
    cub::DoubleBuffer<T> keys(in, out);
    cub::DoubleBuffer<V> values(values_in, values_out);
    cudaError_t err;
    if (radix)
      err = pairs ? Radix::SortPairs(temp, temp_bytes, keys, values, n, b.segments, begin, end, b.begin_bit, end_bit, s)
                  : Radix::SortKeys(temp, temp_bytes, keys, n, b.segments, begin, end, b.begin_bit, end_bit, s);
    else
      err = pairs ? Stable::StableSortPairs(temp, temp_bytes, keys, values, n, b.segments, begin, end, s)
                  : Stable::StableSortKeys(temp, temp_bytes, keys, n, b.segments, begin, end, s);
    if (where) *where = {keys.Current(), values.Current()};
    return err;
  }
  if (where) *where = {out, values_out};
  const T* keys_in = in;
  const V* vin = values_in;
  if (radix)
    return pairs ? Radix::SortPairs(temp, temp_bytes, keys_in, out, vin, values_out, n, b.segments, begin, end,
                                    b.begin_bit, end_bit, s)
                 : Radix::SortKeys(temp, temp_bytes, keys_in, out, n, b.segments, begin, end, b.begin_bit, end_bit, s);
  return pairs ? Stable::StableSortPairs(temp, temp_bytes, keys_in, out, vin, values_out, n, b.segments, begin, end, s)
               : Stable::StableSortKeys(temp, temp_bytes, keys_in, out, n, b.segments, begin, end, s);
}

// Keys T, sort_pairs' values V (Value for the other ops), count N.
template <class T, class V, class N>
cudaError_t call_cub(Op op, bool use_double_buffer, void* temp, size_t& temp_bytes, const Buffers& b, N n,
                     cudaStream_t s, Output* where = nullptr) {
  if (is_segmented_sort(op)) return call_cub_segmented_sort<T, V, N>(op, use_double_buffer, temp, temp_bytes, b, n, s, where);
  T* in = static_cast<T*>(b.in);
  T* out = static_cast<T*>(b.out);
  V* values_in = static_cast<V*>(b.values_in);
  V* values_out = static_cast<V*>(static_cast<void*>(b.values_out));
  if (where) *where = {out, values_out};
  const int end_bit = b.end_bit ? b.end_bit : int(sizeof(T) * 8);
  if (use_double_buffer) {
    cub::DoubleBuffer<T> keys(in, out);
    cub::DoubleBuffer<V> values(values_in, values_out);
    const cudaError_t err =
        op == Op::sort_keys
            ? cub::DeviceRadixSort::SortKeys(temp, temp_bytes, keys, n, b.begin_bit, end_bit, s)
            : cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys, values, n, b.begin_bit, end_bit, s);
    if (where) *where = {keys.Current(), values.Current()};
    return err;
  }
  switch (op) {
    case Op::reduce: return cub::DeviceReduce::Sum(temp, temp_bytes, in, out, n, s);
    case Op::inclusive_scan: return cub::DeviceScan::InclusiveSum(temp, temp_bytes, in, out, n, s);
    case Op::exclusive_scan: return cub::DeviceScan::ExclusiveSum(temp, temp_bytes, in, out, n, s);
    case Op::sort_keys:
      return cub::DeviceRadixSort::SortKeys(temp, temp_bytes, static_cast<const T*>(in), out, n, b.begin_bit,
                                            end_bit, s);
    case Op::sort_pairs:
      return cub::DeviceRadixSort::SortPairs(temp, temp_bytes, static_cast<const T*>(in), out,
                                             static_cast<const V*>(values_in), values_out, n, b.begin_bit,
                                             end_bit, s);
    case Op::select_flagged:
      return cub::DeviceSelect::Flagged(temp, temp_bytes, in, b.flags, out, b.num_selected, n, s);
    case Op::partition_flagged:
      return cub::DevicePartition::Flagged(temp, temp_bytes, in, b.flags, out, b.num_selected, n, s);
    case Op::segmented_reduce: {
      // The configuration's count type is the offsets' (CUB's OffsetT, from the offset iterators); CUB 3 takes
      // the segment count as an int64_t whatever it is.
      N* offsets = nullptr;
      if constexpr (std::is_same_v<N, int>) offsets = b.offsets32;
      else offsets = b.offsets64;
      return cub::DeviceSegmentedReduce::Sum(temp, temp_bytes, in, out, b.segments, offsets, offsets + 1, s);
    }
    default: return cudaErrorInvalidValue;  // the keyed ops: call_cub_keyed
  }
}

// A keyed op's call, made only with a count type the call takes itself (applies).
template <class N>
cudaError_t call_cub_keyed(Op op, void* temp, size_t& temp_bytes, const Buffers& b, N n, cudaStream_t s) {
  return with_keyed_call(op, cudaErrorInvalidValue, [&](auto call) {
    if constexpr (Accepts<decltype(call), N>::value) return call(temp, temp_bytes, b, n, s);
    else return cudaErrorInvalidValue;
  });
}

// The user types: CUB's generic reduce and scans with the type's operator and identity.
template <class T, class OpT, class N>
cudaError_t call_cub_user(Op op, void* temp, size_t& temp_bytes, const Buffers& b, N n, cudaStream_t s) {
  const T* in = static_cast<const T*>(b.in);
  T* out = static_cast<T*>(b.out);
  const T init = identity_of(static_cast<T*>(nullptr));
  switch (op) {
    case Op::reduce: return cub::DeviceReduce::Reduce(temp, temp_bytes, in, out, n, OpT{}, init, s);
    case Op::inclusive_scan: return cub::DeviceScan::InclusiveScan(temp, temp_bytes, in, out, OpT{}, n, s);
    case Op::exclusive_scan: return cub::DeviceScan::ExclusiveScan(temp, temp_bytes, in, out, OpT{}, init, n, s);
    default: return cudaErrorInvalidValue;
  }
}

// histogram_even: `bins` even bins over [0, 2^32) of u32 samples, u32 counts. The levels are 64-bit, since
// 2^32 does not fit a u32; CUB's bin arithmetic for u32 samples is 64-bit with either level type.
constexpr uint64_t kHistogramLower = 0, kHistogramUpper = uint64_t{1} << 32;
template <class N>
cudaError_t call_cub_histogram(uint32_t bins, void* temp, size_t& temp_bytes, const Buffers& b, N n, cudaStream_t s) {
  return cub::DeviceHistogram::HistogramEven(temp, temp_bytes, static_cast<const uint32_t*>(b.in), b.histogram,
                                             static_cast<int>(bins) + 1, kHistogramLower, kHistogramUpper, n, s);
}

// param: sort_pairs' value size (--value-bytes), histogram_even's bins (--bins); the other ops ignore it.
cudaError_t call_cub(Type t, Op op, Config c, uint32_t param, void* temp, size_t& temp_bytes, const Buffers& b,
                     int64_t n, cudaStream_t s, Output* where = nullptr) {
  const bool db = double_buffer(c);
  const bool wide = wide_count(c);
  if (op == Op::histogram_even)
    return wide ? call_cub_histogram<int64_t>(param, temp, temp_bytes, b, n, s)
                : call_cub_histogram<int>(param, temp, temp_bytes, b, static_cast<int>(n), s);
  if (t == Type::sum4)
    return wide ? call_cub_user<Sum4, Sum4Op, int64_t>(op, temp, temp_bytes, b, n, s)
                : call_cub_user<Sum4, Sum4Op, int>(op, temp, temp_bytes, b, static_cast<int>(n), s);
  if (t == Type::box)
    return wide ? call_cub_user<Box, BoxOp, int64_t>(op, temp, temp_bytes, b, n, s)
                : call_cub_user<Box, BoxOp, int>(op, temp, temp_bytes, b, static_cast<int>(n), s);
  if (is_keyed(op))
    return wide ? call_cub_keyed<int64_t>(op, temp, temp_bytes, b, n, s)
                : call_cub_keyed<int>(op, temp, temp_bytes, b, static_cast<int>(n), s);
  auto with_key = [&](auto value) {
    using V = typename decltype(value)::type;
    if (t == Type::u32)
      return wide ? call_cub<uint32_t, V, int64_t>(op, db, temp, temp_bytes, b, n, s, where)
                  : call_cub<uint32_t, V, int>(op, db, temp, temp_bytes, b, static_cast<int>(n), s, where);
    if (t == Type::u64)
      return wide ? call_cub<uint64_t, V, int64_t>(op, db, temp, temp_bytes, b, n, s, where)
                  : call_cub<uint64_t, V, int>(op, db, temp, temp_bytes, b, static_cast<int>(n), s, where);
    return wide ? call_cub<float, V, int64_t>(op, db, temp, temp_bytes, b, n, s, where)
                : call_cub<float, V, int>(op, db, temp, temp_bytes, b, static_cast<int>(n), s, where);
  };
  return op == Op::sort_pairs ? with_value_type(param, with_key) : with_key(Tag<Value>{});
}

// A DoubleBuffer sort overwrites its input: the unsorted keys (and values, value_bytes each) go back before
// every run.
void restore_sort_input(Op op, Type t, const Buffers& b, int64_t n, uint32_t value_bytes, cudaStream_t s) {
  CUDA_CHECK(cudaMemcpyAsync(b.in, b.keys_pristine, n * elem_bytes(t), cudaMemcpyDeviceToDevice, s));
  if (is_pairs(op))
    CUDA_CHECK(cudaMemcpyAsync(b.values_in, b.values_pristine, n * value_bytes, cudaMemcpyDeviceToDevice, s));
}

// Before each configuration its outputs are set to 0xFF bytes (u32 0xFFFFFFFF, f32 NaN, count -1), so its
// check cannot pass on what an earlier configuration wrote.
// param as call_cub's.
void clear_outputs(Op op, Type t, const Buffers& b, int64_t n, uint32_t param, cudaStream_t s) {
  if (op == Op::histogram_even) {
    CUDA_CHECK(cudaMemsetAsync(b.histogram, 0xFF, param * sizeof(uint32_t), s));
    return;
  }
  CUDA_CHECK(cudaMemsetAsync(b.out, 0xFF, n * elem_bytes(t), s));
  if (writes_values_out(op))
    CUDA_CHECK(cudaMemsetAsync(b.values_out, 0xFF, n * (op == Op::sort_pairs ? param : sizeof(uint32_t)), s));
  if (writes_count(op)) CUDA_CHECK(cudaMemsetAsync(b.num_selected, 0xFF, sizeof(int64_t), s));
}

// ---------------------------------------------------------------------------------------------------
// CPU checks. Each returns an empty string when the result is right, else a description.

std::string at(int64_t i) { return "at index " + std::to_string(i); }

// f32 sums: CUB adds in a different order than the CPU, so compare with a double-precision reference
// and allow an error relative to the sum of magnitudes (|x_0| + ... + |x_i|): 1e-5 of it is far above
// the rounding error of any reasonable summation order at these sizes and far below one input element
// at small sizes.
constexpr double kF32RelTol = 1e-5;

bool close_f32(float got, double ref, double magnitude) {
  return std::isfinite(got) && std::fabs(static_cast<double>(got) - ref) <= kF32RelTol * magnitude;
}

std::string fmt_f(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

std::string check_reduce(const uint32_t* in, int64_t n, uint32_t got) {
  uint32_t ref = 0;
  for (int64_t i = 0; i < n; ++i) ref += in[i];  // unsigned add wraps modulo 2^32, as on the GPU
  return got == ref ? "" : "sum " + std::to_string(got) + " != expected " + std::to_string(ref);
}

std::string check_reduce(const float* in, int64_t n, float got) {
  double ref = 0, mag = 0;
  for (int64_t i = 0; i < n; ++i) ref += in[i], mag += std::fabs(in[i]);
  return close_f32(got, ref, mag) ? "" : "sum " + fmt_f(got) + " != expected " + fmt_f(ref);
}

// segmented_reduce: segment k is in[k * size, min((k + 1) * size, n)), checked as a reduce.
template <class T>
std::string check_segmented(const T* in, int64_t n, int64_t size, const T* out, int64_t segments) {
  for (int64_t k = 0; k < segments; ++k) {
    const int64_t first = k * size;
    const std::string error = check_reduce(in + first, std::min(n, first + size) - first, out[k]);
    if (!error.empty()) return "segment " + std::to_string(k) + ": " + error;
  }
  return "";
}

// With keys (the scans by key) the sum starts again at 0 wherever the key changes.
std::string check_scan(const uint32_t* in, const uint32_t* out, int64_t n, bool inclusive,
                       const uint32_t* keys = nullptr) {
  uint32_t run = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (keys && i > 0 && keys[i] != keys[i - 1]) run = 0;
    if (inclusive) run += in[i];
    if (out[i] != run) return at(i) + ": " + std::to_string(out[i]) + " != expected " + std::to_string(run);
    if (!inclusive) run += in[i];
  }
  return "";
}

std::string check_scan(const float* in, const float* out, int64_t n, bool inclusive) {
  double run = 0, mag = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (inclusive) run += in[i], mag += std::fabs(in[i]);
    if (!close_f32(out[i], run, mag)) return at(i) + ": " + fmt_f(out[i]) + " != expected " + fmt_f(run);
    if (!inclusive) run += in[i], mag += std::fabs(in[i]);
  }
  return "";
}

// The user types: box unions exactly (min and max round nothing); sum4 against a double-precision sum,
// component by component, within kF32RelTol of the sum of magnitudes.
std::string check_user(const Box* in, int64_t n, const Box* out, Op op) {
  auto same = [](const Box& x, const Box& y) {
    return std::memcmp(x.lo, y.lo, sizeof x.lo) == 0 && std::memcmp(x.hi, y.hi, sizeof x.hi) == 0;
  };
  Box run = identity_of(static_cast<Box*>(nullptr));
  for (int64_t i = 0; i < n; ++i) {
    const Box before = run;
    run = BoxOp{}(run, in[i]);
    if (op == Op::inclusive_scan && !same(out[i], run)) return at(i) + ": box differs";
    if (op == Op::exclusive_scan && !same(out[i], before)) return at(i) + ": box differs";
  }
  if (op == Op::reduce && !same(out[0], run)) return "reduced box differs";
  return "";
}
std::string check_user(const Sum4* in, int64_t n, const Sum4* out, Op op) {
  double run[4] = {0, 0, 0, 0}, mag = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (op == Op::exclusive_scan)
      for (int k = 0; k < 4; ++k)
        if (!close_f32(out[i].v[k], run[k], mag + 1)) return at(i) + ": component " + std::to_string(k) + " differs";
    for (int k = 0; k < 4; ++k) run[k] += in[i].v[k], mag += std::fabs(in[i].v[k]);
    if (op == Op::inclusive_scan)
      for (int k = 0; k < 4; ++k)
        if (!close_f32(out[i].v[k], run[k], mag)) return at(i) + ": component " + std::to_string(k) + " differs";
  }
  if (op == Op::reduce)
    for (int k = 0; k < 4; ++k)
      if (!close_f32(out[0].v[k], run[k], mag + 1)) return "reduced component " + std::to_string(k) + " differs";
  return "";
}

template <class T>
uint64_t bits(T v) {
  static_assert(sizeof(T) <= 8);
  uint64_t u = 0;
  std::memcpy(&u, &v, sizeof v);
  return u;
}

// The key bits a sort orders by (--bits; all of them by default): integer keys only.
struct KeyField {
  int begin = 0, end = 0;  // end 0: every bit
  template <class T>
  T of(T k) const {
    if constexpr (std::is_integral_v<T>) {
      if (end == 0) return k;
      const T shifted = static_cast<T>(k >> begin);
      return end - begin >= int(8 * sizeof(T)) ? shifted : static_cast<T>(shifted & ((T{1} << (end - begin)) - 1));
    } else {
      return k;
    }
  }
};

// Radix order of the key type over the sorted bits: unsigned order for u32 and u64, numeric order for f32
// (the inputs hold no NaN and no -0.0, so the two float orders agree).
template <class T>
bool radix_less(T a, T b, KeyField f = {}) { return f.of(a) < f.of(b); }

// Sorted keys: non-decreasing, and the same multiset as the input, compared through two
// order-independent 64-bit fingerprints (sum and xor of a hash of each key's bits). Sorting 2^28 keys
// on the CPU for every size would take far longer than the benchmark.
template <class T>
std::string check_sort_keys(const T* in, const T* out, int64_t n, KeyField f) {
  for (int64_t i = 1; i < n; ++i)
    if (radix_less(out[i], out[i - 1], f)) return at(i) + ": keys out of order";
  uint64_t sum_in = 0, xor_in = 0, sum_out = 0, xor_out = 0;
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t hi = hash32(bits(in[i])), ho = hash32(bits(out[i]));
    const uint64_t a = (hi << 32) | hash32(hi ^ 0xA5A5), b = (ho << 32) | hash32(ho ^ 0xA5A5);
    sum_in += a, xor_in ^= a, sum_out += b, xor_out ^= b;
  }
  return sum_in == sum_out && xor_in == xor_out ? "" : "output keys are not a permutation of the input";
}

// Sorted pairs: the values held the input indices (word 0 of a wider value), so they must be a permutation
// of 0..n-1, each output key must be the input key at its value's index, keys must be non-decreasing, and
// equal keys must keep input order (CUB's radix sort is stable). Every other word of every wide value must
// be the one made for its index (make_value): values moved whole.
template <class T, class V>
std::string check_sort_pairs(const T* in, const T* keys, const V* values, int64_t n, KeyField f) {
  std::vector<bool> seen(static_cast<size_t>(n), false);
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t v = value_index(values[i]);
    if (v >= static_cast<uint64_t>(n) || seen[v]) return at(i) + ": values are not a permutation";
    seen[v] = true;
    if (const int k = bad_word(values[i]))
      return at(i) + ": word " + std::to_string(k) + " of the value is not its input's";
    if (bits(in[v]) != bits(keys[i])) return at(i) + ": key does not match its value's input key";
    if (i > 0) {
      if (radix_less(keys[i], keys[i - 1], f)) return at(i) + ": keys out of order";
      if (!radix_less(keys[i - 1], keys[i], f) && value_index(values[i - 1]) > v) return at(i) + ": equal keys not stable";
    }
  }
  return "";
}

template <class T>
std::string check_select(const T* in, const Flag* flags, int64_t n, const T* out, int64_t got_count) {
  int64_t k = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!flags[i]) continue;
    if (k >= got_count) break;
    if (bits(out[k]) != bits(in[i])) return "output " + at(k) + " is not input element " + std::to_string(i);
    ++k;
  }
  int64_t ref_count = 0;
  for (int64_t i = 0; i < n; ++i) ref_count += flags[i] != 0;
  if (got_count != ref_count)
    return "selected " + std::to_string(got_count) + " != expected " + std::to_string(ref_count);
  return "";
}

// CUB's partition: the kept elements in input order, then the rejected ones in reverse input order.
template <class T>
std::string check_partition(const T* in, const Flag* flags, int64_t n, const T* out, int64_t got_count) {
  int64_t ref_count = 0;
  for (int64_t i = 0; i < n; ++i) ref_count += flags[i] != 0;
  if (got_count != ref_count)
    return "selected " + std::to_string(got_count) + " != expected " + std::to_string(ref_count);
  int64_t kept = 0, rejected = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t slot = flags[i] ? kept++ : n - 1 - rejected++;
    if (bits(out[slot]) != bits(in[i])) return "output " + at(slot) + " is not input element " + std::to_string(i);
  }
  return "";
}

// reduce_by_key, rle_encode, rle_non_trivial_runs and unique: got_count entries of out (and of out2 where
// not null) against the runs of equal keys, in order: unique keys and sums (u32, wrapping) or lengths, the
// runs' offsets and lengths where longer than 1 (non-trivial), or the unique keys alone.
std::string check_runs(Op op, const uint32_t* keys, const uint32_t* values, int64_t n, const uint32_t* out,
                       const uint32_t* out2, int64_t got_count) {
  const bool non_trivial = op == Op::rle_non_trivial_runs;
  std::string error;
  int64_t k = 0, start = 0;
  uint32_t sum = 0;
  for (int64_t i = 0; i <= n; ++i) {
    if (i == n || (i > start && keys[i] != keys[i - 1])) {  // the run [start, i) ends
      const int64_t length = i - start;
      if (!non_trivial || length > 1) {
        const uint32_t first = non_trivial ? static_cast<uint32_t>(start) : keys[start];
        const uint32_t second = op == Op::reduce_by_key ? sum : static_cast<uint32_t>(length);
        if (error.empty() && k < got_count) {
          if (out[k] != first)
            error = "output " + at(k) + ": " + std::to_string(out[k]) + " != expected " + std::to_string(first);
          else if (out2 && out2[k] != second)
            error = "second output " + at(k) + ": " + std::to_string(out2[k]) + " != expected " + std::to_string(second);
        }
        ++k;
      }
      start = i;
      sum = 0;
    }
    if (i < n) sum += values[i];
  }
  if (got_count != k) return "count " + std::to_string(got_count) + " != expected " + std::to_string(k);
  return error;
}

// ---------------------------------------------------------------------------------------------------
// Timing and reporting

struct Result {
  Op op;
  Type type;
  int64_t n;
  double median_ms, min_ms, gbps, gelems;
  Config config;                                     // the configuration these times are of
  std::vector<std::pair<Config, double>> medians;    // every timed configuration's median_ms
  uint32_t run_length;                               // keyed ops: --run-length of the keys; else 0
  uint32_t value_bytes;                              // sort_pairs: bytes per value (--value-bytes); else 0
  uint32_t bins, skew;                               // histogram_even: --bins and --skew of the input; else 0
  uint32_t segment_size;                             // segmented_reduce: --segment-size; else 0
};

double bytes_moved(Op op, Type t, int64_t n, int64_t selected, uint32_t param) {
  const double e = double(elem_bytes(t));  // keyed ops and sorts: u32 and f32 only
  switch (op) {
    case Op::reduce: return n * e;
    case Op::inclusive_scan:
    case Op::exclusive_scan: return 2.0 * n * e;
    case Op::sort_keys: return 2.0 * n * e;
    case Op::sort_pairs: return 2.0 * n * (e + param);
    case Op::select_flagged: return n * e + n * double(sizeof(Flag)) + selected * e;
    case Op::partition_flagged: return n * e + n * double(sizeof(Flag)) + n * e;
    // `selected` is the number of segments S.
    case Op::segmented_reduce: return n * e + (selected + 1) * 4.0 + selected * e;
    case Op::segmented_sort_keys:
    case Op::segmented_radix_sort_keys: return 2.0 * n * e;
    case Op::segmented_sort_pairs:
    case Op::segmented_radix_sort_pairs: return 2.0 * n * (e + sizeof(Value));
    // Keyed: u32 keys and values; `selected` is the number of runs (non-trivial runs, unique keys) written.
    case Op::reduce_by_key: return 2.0 * n * 4 + selected * (4.0 + 4.0);
    case Op::inclusive_scan_by_key:
    case Op::exclusive_scan_by_key: return 3.0 * n * 4;
    case Op::rle_encode:
    case Op::rle_non_trivial_runs: return n * 4.0 + selected * (4.0 + 4.0);
    case Op::unique: return n * 4.0 + selected * 4.0;
    case Op::histogram_even: return n * e;
  }
  return 0;
}

struct Timing {
  double median_ms, min_ms;
};

// All timed runs are enqueued back to back, each between its own pair of events, and waited for once
// at the end: the host stays ahead of the GPU, so each interval is the GPU time of one run rather than
// launch latency.
Timing time_op(Type t, Op op, Config c, uint32_t param, const Buffers& b, size_t temp_bytes, int64_t n,
               int iterations, cudaStream_t s, Output& where) {
  const bool restore = double_buffer(c);
  for (int i = 0; i < kWarmupRuns; ++i) {
    size_t bytes = temp_bytes;
    if (restore) restore_sort_input(op, t, b, n, sort_value_bytes(op, param), s);
    CUDA_CHECK(call_cub(t, op, c, param, b.temp, bytes, b, n, s));
  }
  std::vector<cudaEvent_t> start(static_cast<size_t>(iterations)), stop(static_cast<size_t>(iterations));
  for (int i = 0; i < iterations; ++i) {
    CUDA_CHECK(cudaEventCreate(&start[i]));
    CUDA_CHECK(cudaEventCreate(&stop[i]));
  }
  CUDA_CHECK(cudaStreamSynchronize(s));
  for (int i = 0; i < iterations; ++i) {
    size_t bytes = temp_bytes;
    if (restore) restore_sort_input(op, t, b, n, sort_value_bytes(op, param), s);  // before the start event: not timed
    CUDA_CHECK(cudaEventRecord(start[i], s));
    CUDA_CHECK(call_cub(t, op, c, param, b.temp, bytes, b, n, s, &where));
    CUDA_CHECK(cudaEventRecord(stop[i], s));
  }
  CUDA_CHECK(cudaStreamSynchronize(s));
  CUDA_CHECK(cudaGetLastError());
  std::vector<double> ms(static_cast<size_t>(iterations));
  for (int i = 0; i < iterations; ++i) {
    float elapsed = 0;
    CUDA_CHECK(cudaEventElapsedTime(&elapsed, start[i], stop[i]));
    ms[static_cast<size_t>(i)] = elapsed;
    CUDA_CHECK(cudaEventDestroy(start[i]));
    CUDA_CHECK(cudaEventDestroy(stop[i]));
  }
  std::sort(ms.begin(), ms.end());
  const size_t m = ms.size();
  const double median = m % 2 ? ms[m / 2] : 0.5 * (ms[m / 2 - 1] + ms[m / 2]);
  return {median, ms.front()};
}

// with_values (value_column): sort_pairs' rows carry value_bytes after n.
void write_json(const std::string& path, const std::vector<Result>& results, bool with_values) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) die(3, "cannot open '" + path + "' for writing: " + std::strerror(errno));
  std::fprintf(f, "[\n");
  for (size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    std::string configs;
    for (const auto& [c, ms] : r.medians)
      configs += std::string(configs.empty() ? "" : ", ") + "\"" + config_name(c) + "\": " + std::to_string(ms);
    const std::string run_length =
        is_keyed(r.op) ? ", \"run_length\": " + std::to_string(r.run_length)
        : with_values && r.op == Op::sort_pairs ? ", \"value_bytes\": " + std::to_string(r.value_bytes)
        : r.op == Op::histogram_even ? ", \"bins\": " + std::to_string(r.bins) + ", \"skew\": " + std::to_string(r.skew)
        : is_segmented(r.op) ? ", \"segment_size\": " + std::to_string(r.segment_size)
                                       : "";
    std::fprintf(f,
                 "  {\"op\": \"%s\", \"type\": \"%s\", \"n\": %lld%s, \"median_ms\": %.6f, \"min_ms\": %.6f, "
                 "\"gbps\": %.3f, \"gelems\": %.4f, \"config\": \"%s\", \"configs_median_ms\": {%s}}%s\n",
                 op_name(r.op), type_name(r.type), static_cast<long long>(r.n), run_length.c_str(), r.median_ms,
                 r.min_ms, r.gbps, r.gelems, config_name(r.config), configs.c_str(), i + 1 < results.size() ? "," : "");
  }
  std::fprintf(f, "]\n");
  if (std::fclose(f) != 0) die(3, "writing '" + path + "' failed");
}

std::string version_string(int v) {  // CUDA encodes 13.0 as 13000
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

// ---------------------------------------------------------------------------------------------------
// Driver

bool uses(const Options& opt, Op op) { return std::find(opt.ops.begin(), opt.ops.end(), op) != opt.ops.end(); }

// Host copies of one type's inputs (largest size; each size checks a prefix).
template <class T>
struct HostInputs {
  std::vector<T> in;
  std::vector<Flag> flags;
  std::vector<uint32_t> keys;  // keyed ops: the keys of the current --run-length (u32 inputs only)
};

template <class T>
void fill_inputs(const Buffers& b, int64_t max_n, bool with_flags, uint64_t seed, uint32_t splat_tiles,
                 HostInputs<T>& host) {
  fill_kernel<T><<<1024, 256>>>(static_cast<T*>(b.in), with_flags ? b.flags : nullptr, max_n, seed, splat_tiles);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  host.in.resize(static_cast<size_t>(max_n));
  CUDA_CHECK(cudaMemcpy(host.in.data(), b.in, max_n * sizeof(T), cudaMemcpyDeviceToHost));
  if (with_flags) {
    host.flags.resize(static_cast<size_t>(max_n));
    CUDA_CHECK(cudaMemcpy(host.flags.data(), b.flags, max_n * sizeof(Flag), cudaMemcpyDeviceToHost));
  }
}

// The unsorted keys, for the DoubleBuffer sorts to start from (restore_sort_input).
void keep_pristine(const Buffers& b, int64_t n, size_t key_bytes) {
  if (b.keys_pristine) CUDA_CHECK(cudaMemcpy(b.keys_pristine, b.in, n * key_bytes, cudaMemcpyDeviceToDevice));
}

// sort_pairs' values of value_bytes each (make_value of the index), into the input and the unsorted copy.
void fill_values(const Buffers& b, int64_t n, uint32_t value_bytes) {
  with_value_type(value_bytes, [&](auto tag) {
    using V = typename decltype(tag)::type;
    fill_values_kernel<V><<<1024, 256>>>(static_cast<V*>(b.values_in), static_cast<V*>(b.values_pristine), n);
  });
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
}

// A keyed op's output (keys, values: the host copies of its input) against the CPU; "" when right.
std::string check_keyed(Op op, const Buffers& b, const uint32_t* keys, const uint32_t* values, int64_t n,
                        int64_t& selected) {
  if (!writes_count(op)) {  // the scans by key
    std::vector<uint32_t> out(static_cast<size_t>(n));
    CUDA_CHECK(cudaMemcpy(out.data(), b.out, n * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    return check_scan(values, out.data(), n, op == Op::inclusive_scan_by_key, keys);
  }
  CUDA_CHECK(cudaMemcpy(&selected, b.num_selected, sizeof selected, cudaMemcpyDeviceToHost));
  if (selected < 0 || selected > n) return "count " + std::to_string(selected) + " out of range [0, n]";
  std::vector<uint32_t> out(static_cast<size_t>(selected)), out2(writes_values_out(op) ? out.size() : 0);
  if (selected > 0) {
    CUDA_CHECK(cudaMemcpy(out.data(), b.out, out.size() * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    if (!out2.empty())
      CUDA_CHECK(cudaMemcpy(out2.data(), b.values_out, out2.size() * sizeof(uint32_t), cudaMemcpyDeviceToHost));
  }
  return check_runs(op, keys, values, n, out.data(), out2.empty() ? nullptr : out2.data(), selected);
}

// The segmented sorts: each segment (of b.segment_size keys, or splat) holds the stable sort of its input keys
// (by the --bits field for DeviceSegmentedRadixSort, every bit for DeviceSegmentedSort), and each value is the
// input index of its key; "" when right.
template <class T>
std::string check_segmented_sort(Op op, const Buffers& b, const T* in, int64_t n, const std::vector<T>& keys,
                                 const Output& where) {
  std::vector<Value> values(is_pairs(op) ? static_cast<size_t>(n) : 0);
  if (!values.empty())
    CUDA_CHECK(cudaMemcpy(values.data(), where.values, values.size() * sizeof(Value), cudaMemcpyDeviceToHost));
  const bool radix = op == Op::segmented_radix_sort_keys || op == Op::segmented_radix_sort_pairs;
  const KeyField f = radix ? KeyField{b.begin_bit, b.end_bit} : KeyField{};
  std::vector<int64_t> order;
  for (int64_t k = 0; k < b.segments; ++k) {
    const int64_t first = b.segment_size ? k * b.segment_size : b.splat_offsets[k];
    const int64_t last = b.segment_size ? std::min(n, first + b.segment_size) : b.splat_offsets[k + 1];
    order.resize(static_cast<size_t>(last - first));
    for (size_t i = 0; i < order.size(); ++i) order[i] = first + static_cast<int64_t>(i);
    std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return radix_less(in[x], in[y], f); });
    for (size_t i = 0; i < order.size(); ++i) {
      const int64_t k = first + static_cast<int64_t>(i);
      if (bits(keys[k]) != bits(in[order[i]])) return at(k) + ": not the stable sort of its segment's keys";
      if (!values.empty() && value_index(values[k]) != static_cast<uint64_t>(order[i]))
        return at(k) + ": value is not its key's input index";
    }
  }
  return "";
}

// A sort's keys (and values) where the last run left them, against the CPU; "" when right.
template <class T>
std::string check_sort_output(Op op, uint32_t value_bytes, const Buffers& b, const T* in, int64_t n,
                              const Output& where) {
  std::vector<T> keys(static_cast<size_t>(n));
  CUDA_CHECK(cudaMemcpy(keys.data(), where.keys, keys.size() * sizeof(T), cudaMemcpyDeviceToHost));
  if (is_segmented_sort(op)) return check_segmented_sort(op, b, in, n, keys, where);
  const KeyField field{b.begin_bit, b.end_bit};
  if (op == Op::sort_keys) return check_sort_keys(in, keys.data(), n, field);
  return with_value_type(value_bytes, [&](auto tag) {
    using V = typename decltype(tag)::type;
    std::vector<V> values(static_cast<size_t>(n));
    CUDA_CHECK(cudaMemcpy(values.data(), where.values, n * sizeof(V), cudaMemcpyDeviceToHost));
    return check_sort_pairs(in, keys.data(), values.data(), n, field);
  });
}

// histogram_even's counts against the CPU: bin = s * bins >> 32, which is CUB's floor((s - 0) * bins / 2^32).
std::string check_histogram(const Buffers& b, const uint32_t* in, int64_t n, uint32_t bins) {
  std::vector<uint32_t> got(bins), expected(bins, 0);
  CUDA_CHECK(cudaMemcpy(got.data(), b.histogram, bins * sizeof(uint32_t), cudaMemcpyDeviceToHost));
  for (int64_t i = 0; i < n; ++i) ++expected[(uint64_t{in[i]} * bins) >> 32];
  for (uint32_t k = 0; k < bins; ++k)
    if (got[k] != expected[k])
      return "bin " + std::to_string(k) + ": " + std::to_string(got[k]) + " != expected " + std::to_string(expected[k]);
  return "";
}

// The output of the last run of one configuration against the CPU; "" when right.
template <class T>
std::string check_output(Op op, uint32_t param, const Buffers& b, const HostInputs<T>& host, int64_t n,
                         const Output& where, int64_t& selected) {
  if constexpr (std::is_same_v<T, uint32_t>) {
    if (is_keyed(op)) return check_keyed(op, b, host.keys.data(), host.in.data(), n, selected);
    if (op == Op::histogram_even) return check_histogram(b, host.in.data(), n, param);
  }
  if constexpr (std::is_same_v<T, Sum4> || std::is_same_v<T, Box>) {
    std::vector<T> out(op == Op::reduce ? 1 : static_cast<size_t>(n));
    CUDA_CHECK(cudaMemcpy(out.data(), b.out, out.size() * sizeof(T), cudaMemcpyDeviceToHost));
    return check_user(host.in.data(), n, out.data(), op);
  } else if constexpr (std::is_same_v<T, uint64_t>) {  // the sorts' keys only (runs_on)
    return check_sort_output(op, param, b, host.in.data(), n, where);
  } else {
  if (is_sort(op)) return check_sort_output(op, param, b, host.in.data(), n, where);
  const T* in = host.in.data();
  std::vector<T> out(op == Op::reduce ? 1 : static_cast<size_t>(n));
  CUDA_CHECK(cudaMemcpy(out.data(), b.out, out.size() * sizeof(T), cudaMemcpyDeviceToHost));
  switch (op) {
    case Op::reduce: return check_reduce(in, n, out[0]);
    case Op::inclusive_scan: return check_scan(in, out.data(), n, true);
    case Op::exclusive_scan: return check_scan(in, out.data(), n, false);
    case Op::select_flagged:
      CUDA_CHECK(cudaMemcpy(&selected, b.num_selected, sizeof selected, cudaMemcpyDeviceToHost));
      return check_select(in, host.flags.data(), n, out.data(), selected);
    case Op::partition_flagged:
      CUDA_CHECK(cudaMemcpy(&selected, b.num_selected, sizeof selected, cudaMemcpyDeviceToHost));
      return check_partition(in, host.flags.data(), n, out.data(), selected);
    case Op::segmented_reduce:
      selected = b.segments;
      return check_segmented(in, n, b.segment_size, out.data(), b.segments);
    default: return "unknown op";  // the keyed ops: check_keyed
  }
  }
}

// The keyed ops' rows end with the run length L (the last column); with_values (value_column), sort_pairs'
// rows with the value size V in bytes; histogram_even's with its bins and skew.
void print_row(const Result& r, bool with_values) {
  std::printf("%-21s %-4s %11lld %11.4f %9.1f %9.2f %11.4f  %s", op_name(r.op), type_name(r.type),
              static_cast<long long>(r.n), r.median_ms, r.gbps, r.gelems, r.min_ms, config_name(r.config));
  const int pad = static_cast<int>(18 - std::strlen(config_name(r.config)));
  if (is_keyed(r.op)) std::printf("%*s %u", pad, "", r.run_length);
  if (with_values && r.op == Op::sort_pairs) std::printf("%*s %u", pad, "", r.value_bytes);
  if (r.op == Op::histogram_even) std::printf("%*s %u %u%%", pad, "", r.bins, r.skew);
  if (is_segmented(r.op)) {
    if (r.segment_size) std::printf("%*s %u", pad, "", r.segment_size);
    else std::printf("%*s splat", pad, "");
  }
  std::printf("\n");
  std::fflush(stdout);
}

// By op, type, n, configuration and param (sort_pairs' value size, histogram_even's bins; 0 for the other ops).
using TempSizes = std::map<std::tuple<Op, Type, int64_t, Config, uint32_t>, size_t>;

// Runs one op over the sweep for element type T, in every configuration of --config at every size (each
// checked); reports the fastest, or with --config all or a list each one. Returns false (after printing
// FAIL) on a wrong result. run_length: keyed ops' L, histogram_even's skew, else 0; param: sort_pairs' value
// size, histogram_even's bins, segmented_reduce's segment size (its segments and offsets are made here for
// each n), else 0.
template <class T>
bool run_op(Op op, Type type, uint32_t run_length, uint32_t param, const Options& opt, const Buffers& base,
            const HostInputs<T>& host, const TempSizes& temp_sizes, cudaStream_t s, std::vector<Result>& results) {
  for (int64_t n : opt.sizes) {
    Buffers b = base;
    if (is_segmented(op)) {
      b.segment_size = param;
      set_segments(b, n, s);
    }
    const std::vector<Config> configs = configs_for(op, n, opt.configs);
    if (configs.empty()) {
      std::printf("# %s n=%lld: no configuration of --config applies (DoubleBuffer: sorts only; int: n < 2^31; "
                  "this op's CUB call: %s)\n", op_name(op), static_cast<long long>(n), count_types_name(op));
      continue;
    }
    std::vector<Result> timed;
    for (Config c : configs) {
      clear_outputs(op, type, b, n, param, s);
      Output where;
      const Timing t = time_op(type, op, c, param, b, temp_sizes.at({op, type, n, c, param}), n, opt.iterations, s,
                               where);
      int64_t selected = 0;
      const std::string error = check_output(op, param, b, host, n, where, selected);
      if (double_buffer(c)) {  // the input buffer now holds a pass's keys: the unsorted ones go back
        restore_sort_input(op, type, b, n, sort_value_bytes(op, param), s);
        CUDA_CHECK(cudaStreamSynchronize(s));
      }
      if (!error.empty()) {
        const std::string where_in_sweep =
            is_keyed(op)                                ? " L=" + std::to_string(run_length)
            : op == Op::sort_pairs && value_column(opt) ? " V=" + std::to_string(param)
            : op == Op::histogram_even ? " bins=" + std::to_string(param) + " skew=" + std::to_string(run_length)
            : is_segmented(op) ? " S=" + std::to_string(param)
                                         : "";
        std::printf("FAIL %s %s n=%lld%s (%s): %s\n", op_name(op), type_name(type), static_cast<long long>(n),
                    where_in_sweep.c_str(), config_name(c), error.c_str());
        std::fflush(stdout);
        return false;
      }
      const double seconds = t.median_ms * 1e-3;
      const bool histogram = op == Op::histogram_even;
      timed.push_back({op, type, n, t.median_ms, t.min_ms,
                       bytes_moved(op, type, n, selected, param) / seconds / 1e9, n / seconds / 1e9, c, {},
                       is_keyed(op) ? run_length : 0, op == Op::sort_pairs ? param : 0, histogram ? param : 0,
                       histogram ? run_length : 0, is_segmented(op) ? param : 0});
    }
    std::vector<std::pair<Config, double>> medians;
    for (const Result& r : timed) medians.push_back({r.config, r.median_ms});
    if (opt.report == Report::best) {
      const auto fastest = std::min_element(timed.begin(), timed.end(), [](const Result& x, const Result& y) {
        return x.median_ms < y.median_ms;
      });
      timed = {*fastest};
    }
    for (Result& r : timed) {
      r.medians = medians;
      results.push_back(r);
      print_row(r, value_column(opt));
    }
  }
  return true;
}

// Every op of --ops for element type t: its inputs made and copied back, the ops that are not keyed run
// (sort_pairs once per --value-bytes, its values made for that size), then for each --run-length the keys
// made here, uploaded, and the keyed ops run on them, then histogram_even on fresh inputs skewed for each
// --skew, once per --bins. False on a FAIL.
template <class T>
bool run_type(Type t, const Options& opt, const Buffers& b, int64_t max_n, bool need_flags,
              const TempSizes& temp_sizes, cudaStream_t s, std::vector<Result>& results) {
  HostInputs<T> host;
  fill_inputs(b, max_n, need_flags, 0xC0B0 + static_cast<uint64_t>(t), opt.splat_tiles, host);
  keep_pristine(b, max_n, sizeof(T));
  for (Op op : opt.ops) {
    if (is_keyed(op) || op == Op::histogram_even || !runs_on(op, t)) continue;
    if (is_segmented(op)) {
      if (is_pairs(op)) fill_values(b, max_n, sizeof(Value));
      for (uint32_t size : opt.segment_sizes)
        if (!run_op<T>(op, t, 0, size, opt, b, host, temp_sizes, s, results)) return false;
      continue;
    }
    if (op != Op::sort_pairs) {
      if (!run_op<T>(op, t, 0, 0, opt, b, host, temp_sizes, s, results)) return false;
      continue;
    }
    for (uint32_t value_bytes : opt.value_bytes) {
      fill_values(b, max_n, value_bytes);
      if (!run_op<T>(op, t, 0, value_bytes, opt, b, host, temp_sizes, s, results)) return false;
    }
  }
  if (std::any_of(opt.ops.begin(), opt.ops.end(), [&](Op op) { return is_keyed(op) && runs_on(op, t); })) {
    host.keys.resize(static_cast<size_t>(max_n));
    for (uint32_t run_length : opt.run_lengths) {
      make_run_keys(run_length, host.keys);
      CUDA_CHECK(cudaMemcpy(b.keys, host.keys.data(), max_n * sizeof(uint32_t), cudaMemcpyHostToDevice));
      for (Op op : opt.ops)
        if (is_keyed(op) && !run_op<T>(op, t, run_length, 0, opt, b, host, temp_sizes, s, results)) return false;
    }
  }
  if constexpr (std::is_same_v<T, uint32_t>) {
    if (!uses(opt, Op::histogram_even) || !runs_on(Op::histogram_even, t)) return true;
    for (uint32_t skew : opt.skews) {  // last: the skew overwrites the input the other ops use
      fill_inputs(b, max_n, false, 0xC0B0 + static_cast<uint64_t>(t), 0, host);
      skew_kernel<<<1024, 256>>>(u32(b.in), max_n, skew);
      CUDA_CHECK(cudaGetLastError());
      CUDA_CHECK(cudaMemcpy(host.in.data(), b.in, max_n * sizeof(uint32_t), cudaMemcpyDeviceToHost));
      for (uint32_t bins : opt.bins)
        if (!run_op<T>(Op::histogram_even, t, skew, bins, opt, b, host, temp_sizes, s, results)) return false;
    }
  }
  return true;
}

// The params an op runs with (call_cub's): sort_pairs' value sizes, histogram_even's bins, else one 0.
std::vector<uint32_t> params_of(Op op, const Options& opt) {
  if (op == Op::sort_pairs) return opt.value_bytes;
  if (op == Op::histogram_even) return opt.bins;
  if (is_segmented(op)) return opt.segment_sizes;
  return {0};
}

}  // namespace

int main(int argc, char** argv) {
  const Options opt = parse_args(argc, argv);

  int device_count = 0;
  const cudaError_t count_err = cudaGetDeviceCount(&device_count);
  if (count_err != cudaSuccess || device_count == 0) {
    std::fprintf(stderr,
                 "cub_bench: error: no CUDA device available (%s); this program needs an NVIDIA GPU and driver\n",
                 count_err != cudaSuccess ? cudaGetErrorString(count_err) : "cudaGetDeviceCount found 0 devices");
    return 2;
  }
  int device = 0;
  CUDA_CHECK(cudaSetDevice(device));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  int driver = 0, runtime = 0;
  CUDA_CHECK(cudaDriverGetVersion(&driver));
  CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  std::printf("# device: %s (sm_%d%d, %d SMs, %.1f GiB) | driver: CUDA %s (%d) | runtime: CUDA %s (%d) | CUB %d.%d.%d\n",
              prop.name, prop.major, prop.minor, prop.multiProcessorCount,
              prop.totalGlobalMem / double(1ull << 30), version_string(driver).c_str(), driver,
              version_string(runtime).c_str(), runtime, CUB_MAJOR_VERSION, CUB_MINOR_VERSION,
              CUB_SUBMINOR_VERSION);

  const int64_t max_n = *std::max_element(opt.sizes.begin(), opt.sizes.end());
  const bool need_values = std::any_of(opt.ops.begin(), opt.ops.end(), is_pairs);
  const bool segmented = std::any_of(opt.ops.begin(), opt.ops.end(), is_segmented);
  const bool need_flags = uses(opt, Op::select_flagged) || uses(opt, Op::partition_flagged);
  const bool need_values_out = std::any_of(opt.ops.begin(), opt.ops.end(), writes_values_out);
  const bool need_keys = std::find(opt.types.begin(), opt.types.end(), Type::u32) != opt.types.end() &&
                         std::any_of(opt.ops.begin(), opt.ops.end(), is_keyed);

  // Query every temporary-storage size once, before allocating, so the temp buffer can be sized for
  // the whole sweep and allocated together with the others, largest first. CUB's query reads no data.
  TempSizes temp_sizes;
  size_t max_temp = 1;
  {
    Buffers dummy;
    dummy.begin_bit = opt.begin_bit;
    dummy.end_bit = opt.end_bit;
    for (Type t : opt.types)
      for (Op op : opt.ops)
        for (int64_t n : runs_on(op, t) ? opt.sizes : std::vector<int64_t>{})
          for (Config c : configs_for(op, n, opt.configs))
            for (uint32_t param : params_of(op, opt)) {
              size_t bytes = 0;
              dummy.segment_size = is_segmented(op) ? param : 0;  // the segmented ops: their segments
              // splat (param 0): n segments at most, a temp size that holds the drawn ones
              dummy.segments = !is_segmented(op) ? 0 : param ? (n + param - 1) / param : n;
              CUDA_CHECK(call_cub(t, op, c, param, nullptr, bytes, dummy, n, nullptr));
              temp_sizes[{op, t, n, c, param}] = bytes;
              max_temp = std::max(max_temp, bytes);
            }
  }
  if (temp_sizes.empty())
    usage_error("no configuration of --config applies to these ops, types and sizes (keyed ops: u32 only)");

  Buffers b;
  b.begin_bit = opt.begin_bit;
  b.end_bit = opt.end_bit;
  struct Allocation {
    void** ptr;
    size_t bytes;
    const char* name;
  };
  size_t widest = 4;
  for (Type t : opt.types) widest = std::max(widest, elem_bytes(t));
  const size_t elems = static_cast<size_t>(max_n) * widest;
  // sort_pairs' values: the widest of --value-bytes (values out also holds the keyed ops' u32 outputs).
  const size_t value_bytes = *std::max_element(opt.value_bytes.begin(), opt.value_bytes.end());
  const size_t values = static_cast<size_t>(max_n) * value_bytes;
  const size_t values_out = static_cast<size_t>(max_n) * (need_values ? value_bytes : sizeof(uint32_t));
  std::vector<Allocation> allocations = {{&b.in, elems, "input"}, {&b.out, elems, "output"},
                                         {&b.temp, max_temp, "temp storage"},
                                         {reinterpret_cast<void**>(&b.num_selected), sizeof(int64_t), "count"}};
  if (need_values) allocations.push_back({&b.values_in, values, "values in"});
  if (need_values_out) allocations.push_back({reinterpret_cast<void**>(&b.values_out), values_out, "values out"});
  if (need_keys) allocations.push_back({reinterpret_cast<void**>(&b.keys), elems, "run keys"});
  if (need_flags) allocations.push_back({reinterpret_cast<void**>(&b.flags), max_n * sizeof(Flag), "flags"});
  if (uses(opt, Op::histogram_even))
    allocations.push_back({reinterpret_cast<void**>(&b.histogram),
                           *std::max_element(opt.bins.begin(), opt.bins.end()) * sizeof(uint32_t), "histogram"});
  if (segmented) {
    const uint32_t smallest = *std::min_element(opt.segment_sizes.begin(), opt.segment_sizes.end());
    const size_t offsets = static_cast<size_t>((max_n + std::max(smallest, 1u) - 1) / std::max(smallest, 1u) + 1);
    allocations.push_back({reinterpret_cast<void**>(&b.offsets32), offsets * sizeof(int), "offsets (int)"});
    allocations.push_back({reinterpret_cast<void**>(&b.offsets64), offsets * sizeof(int64_t), "offsets (int64)"});
  }
  const bool need_pristine = std::any_of(opt.ops.begin(), opt.ops.end(), is_sort);
  if (need_pristine) allocations.push_back({&b.keys_pristine, elems, "unsorted keys"});
  if (need_pristine && need_values) allocations.push_back({&b.values_pristine, values, "unsorted values"});
  std::stable_sort(allocations.begin(), allocations.end(),
                   [](const Allocation& x, const Allocation& y) { return x.bytes > y.bytes; });
  for (const Allocation& a : allocations) {
    const cudaError_t err = cudaMalloc(a.ptr, a.bytes);
    if (err != cudaSuccess)
      die(3, std::string("cudaMalloc of ") + std::to_string(a.bytes) + " bytes (" + a.name +
                 ") failed: " + cudaGetErrorString(err) + "; use smaller --sizes");
  }
  b.temp_bytes = max_temp;

  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  std::printf("# %d warm-up + %d timed runs per size, cudaEvent per run; median reported (min last).\n",
              kWarmupRuns, opt.iterations);
  std::printf("# GB/s bytes: reduce n*4 read; scans 2n*4 read+write; sort_keys 2n*4 and sort_pairs 2n*8\n"
              "#   keys(+values) read+written once; select_flagged n*4 in + n*4 u32 flags + kept*4 out;\n"
              "#   partition_flagged n*4 in + n*4 flags + n*4 out (rejected in reverse order, CUB's contract).\n"
              "#   Gelem/s for sorts = G keys/s (G pairs/s).\n");
  if (uses(opt, Op::histogram_even))
    std::printf("# histogram_even: u32 samples uniform on [0, 2^32), the given percent of them set to one value (skew),\n"
                "#   into B even bins with 64-bit levels [0, 2^32); GB/s n*4 samples read. Its rows end with B and skew.\n");
  if (value_column(opt))
    std::printf("# sort_pairs values: V bytes (last column); 4: a u32, wider: a struct of V/4 u32 words aligned to\n"
                "#   the largest power of two up to %zu dividing V. GB/s bytes 2n*(4+V).\n", kValueAlign);
  if (uses(opt, Op::segmented_reduce))
    std::printf("# segmented_reduce: DeviceSegmentedReduce::Sum over S = ceil(n / segment size) segments end to end\n"
                "#   (CSR offsets, the last segment cut at n; last column S: the segment size); GB/s bytes n*4 in +\n"
                "#   (S+1)*4 offsets + S*4 out; configurations int and int64: the offsets' type.\n");
  if (std::any_of(opt.ops.begin(), opt.ops.end(), is_segmented_sort))
    std::printf("# segmented sorts: DeviceSegmentedSort::StableSortKeys/Pairs (segmented_sort_*) and\n"
                "#   DeviceSegmentedRadixSort::SortKeys/Pairs (segmented_radix_sort_*) over S = ceil(n / segment size)\n"
                "#   segments end to end (last column S); u32 values; GB/s bytes 2n*(K(+4)); int and int64: the\n"
                "#   offsets' type; each segment checked against std::stable_sort.\n");
  if (need_keys)
    std::printf("# Keyed ops (u32 keys in runs of mean length L, uniform on [1, 2L-1]; u32 values): reduce_by_key\n"
                "#   n*8 in + runs*8 out; scans by key n*8 in + n*4 out; rle_encode n*4 + runs*8; rle_non_trivial_runs\n"
                "#   n*4 + nontrivial*8; unique n*4 + runs*4.\n");
  std::string fixed;
  for (Op op : opt.ops)
    if (!count_types(op).i32 || !count_types(op).i64)
      fixed += std::string(fixed.empty() ? "" : ", ") + op_name(op) + " " + count_types_name(op);
  std::printf("# Configurations: int and int64 num_items; sorts also cub::DoubleBuffer with each (input restored\n"
              "#   before every run, untimed); CUB's calls take one count type here for %s. %s\n",
              fixed.empty() ? "none of these ops" : fixed.c_str(),
              opt.report == Report::best ? "Each line is the fastest; config names it (JSON: every median)."
                                         : "A line per configuration (--config).");
  const bool with_values = value_column(opt);
  // The last columns' names: L (keyed ops), V (sort_pairs' values), S (segment size), B skew (histogram_even).
  std::string extra;
  for (const auto& [used, name] : {std::pair{need_keys, "L"}, std::pair{with_values, "V"},
                                    std::pair{segmented, "S"},
                                    std::pair{uses(opt, Op::histogram_even), "B skew"}})
    if (used) extra += std::string(extra.empty() ? "             " : "/") + name;
  std::printf("%-21s %-4s %11s %11s %9s %9s %11s  config%s\n", "op", "type", "n", "median_ms", "GB/s", "Gelem/s",
              "min_ms", extra.c_str());
  std::fflush(stdout);

  std::vector<Result> results;
  bool ok = true;
  for (Type t : opt.types) {
    switch (t) {
      case Type::u32: ok = run_type<uint32_t>(t, opt, b, max_n, need_flags, temp_sizes, stream, results); break;
      case Type::f32: ok = run_type<float>(t, opt, b, max_n, need_flags, temp_sizes, stream, results); break;
      case Type::u64: ok = run_type<uint64_t>(t, opt, b, max_n, need_flags, temp_sizes, stream, results); break;
      case Type::sum4: ok = run_type<Sum4>(t, opt, b, max_n, need_flags, temp_sizes, stream, results); break;
      case Type::box: ok = run_type<Box>(t, opt, b, max_n, need_flags, temp_sizes, stream, results); break;
    }
    if (!ok) break;
  }

  CUDA_CHECK(cudaStreamDestroy(stream));
  for (const Allocation& a : allocations) CUDA_CHECK(cudaFree(*a.ptr));

  if (!ok) return 1;  // FAIL was printed; no JSON is written for a run with a wrong result
  if (!opt.json_path.empty()) write_json(opt.json_path, results, with_values);
  return 0;
}
