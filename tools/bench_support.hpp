// Helpers every `vkprim bench` shares: common options, timestamp timing, the copy/read ceilings, size lists,
// plan sets, and the table and JSON output.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "host_reference.hpp"
#include "vkprim/device.hpp"
#include "vkprim/scan.hpp"

namespace vkprim::tools {

using Recorder = std::function<Result<void>(VkCommandBuffer)>;

// GPU time of `record`, run `repeats` times in one command buffer, each run between two bottom-of-pipe
// timestamps with a full compute barrier before it (runs never overlap). `restore`, when given, runs before
// each timed run outside the timestamps, followed by a transfer-to-compute barrier: it puts the input of an
// in-place primitive back with transfers. Returns nanoseconds per run.
Result<std::vector<double>> time_gpu(const Device& device, int repeats, const Recorder& record,
                                     const Recorder& restore = {});

double median(std::vector<double> values);

// The restore of an in-place sort's input before each timed run (outside the timestamps): key_bytes of
// pristine_keys to keys and, where value_bytes is not 0, value_bytes of pristine_values to values, with
// vkCmdCopyBuffer. The buffers must outlive the recorder.
Recorder restore_input(const Device& device, const Buffer& pristine_keys, const Buffer& keys, VkDeviceSize key_bytes,
                       const Buffer& pristine_values, const Buffer& values, VkDeviceSize value_bytes);

// Runs `run` back to back (at most `max_runs` runs per submission) until about `ms` milliseconds of GPU
// time are spent, so clocks have ramped up before timing (a scan timed right after short ceiling runs
// measured ~15% slower on an H200).
Result<void> warm_up(const Device& device, const Recorder& run, double ms = 200, const Recorder& restore = {},
                     int max_runs = 2000);

// warm_up (200 ms), then the median of `repeats` timed runs in nanoseconds.
Result<double> warm_and_time(const Device& device, int repeats, const Recorder& run, const Recorder& restore = {},
                             int max_warm_runs = 2000);

// Median nanoseconds of three runs of `f` on the CPU (the benches' CPU rows).
template <class F>
double time_cpu(F&& f) {
  std::vector<double> ns;
  for (int i = 0; i < 3; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    ns.push_back(double(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count()));
  }
  return median(ns);
}

// 16-byte-vector shader copy (src -> dst) and read of `bytes` bytes: the ceilings scans and reduces are
// compared against. GB/s from the median of `repeats` runs.
struct Ceilings {
  double copy_straight_gbps = 0;  // counting read + write: vector i to i
  double copy_rotated_gbps = 0;   // vector i to i + half the buffer, wrapping
  double read_gbps = 0;
  uint64_t bytes = 0;    // read (the copy writes as many again)

  // A primitive's GB/s as a fraction of each ceiling.
  double of_read(double gbps) const { return gbps / read_gbps; }
  double copy_gbps() const { return std::max(copy_straight_gbps, copy_rotated_gbps); }  // the ceiling
  double of_copy(double gbps) const { return gbps / copy_gbps(); }
  // The ceiling rows' own times in microseconds.
  double read_us() const { return double(bytes) / read_gbps / 1e3; }
  double copy_us() const { return 2.0 * double(bytes) / copy_gbps() / 1e3; }
};
Result<Ceilings> measure_ceilings(const Device& device, const Buffer& src, const Buffer& dst, uint64_t bytes,
                                  int repeats);
// The ceilings next to a primitive over `data_bytes` bytes: whole 16-byte vectors, at least one. Prints
// "bench: ceilings: ..." and returns nothing on failure.
std::optional<Ceilings> ceilings_for(const Device& device, const Buffer& src, const Buffer& dst, uint64_t data_bytes,
                                     int repeats);
// What a bench does at each size before timing its plans: `run` (the first plan's) warmed up so that clocks
// have ramped, that plan's descriptor sets handed back (its runs are done), then ceilings_for(src, dst,
// data_bytes). Prints the failure and returns nothing on error.
template <class Plan>
std::optional<Ceilings> warm_then_ceilings(const Device& device, const Plan& first, const Recorder& run, const Buffer& src,
                                           const Buffer& dst, uint64_t data_bytes, int repeats,
                                           const Recorder& restore = {}, int max_warm_runs = 2000) {
  if (auto warmed = warm_up(device, run, 200, restore, max_warm_runs); !warmed) {
    std::fprintf(stderr, "bench: warm-up: %s\n", warmed.message().c_str());
    return std::nullopt;
  }
  first.release_descriptor_sets();
  return ceilings_for(device, src, dst, data_bytes, repeats);
}
// The two ceiling rows of a table: make(algorithm, median_us, gbps, of_read, of_copy) builds one.
template <class Row, class Make>
void add_ceiling_rows(std::vector<Row>& rows, const Ceilings& c, Make&& make) {
  rows.push_back(make("read (uvec4 shader)", c.read_us(), c.read_gbps, 1.0, c.of_copy(c.read_gbps)));
  rows.push_back(make("copy (uvec4 shader)", c.copy_us(), c.copy_gbps(), c.of_read(c.copy_gbps()), 1.0));
}

// Bytes of a buffer for `bytes` bytes of data: whole 16-byte vectors, at least one.
inline uint64_t vector_bytes(uint64_t bytes) { return (std::max<uint64_t>(bytes, 16) + 15) / 16 * 16; }

// Fresh random values (host_reference.hpp's fill_random) for `n` elements, uploaded to the start of
// `buffer`; the host copy is returned for verification. Prints and returns an empty vector on failure.
template <class T>
std::vector<T> upload_random(const Device& device, const Buffer& buffer, uint64_t n) {
  std::vector<T> host(n);
  std::mt19937_64 rng(std::random_device{}());
  host::fill_random(host, rng);
  if (auto ok = device.upload(buffer, host.data(), n * sizeof(T)); !ok) {
    std::fprintf(stderr, "bench: upload failed: %s\n", ok.message().c_str());
    return {};
  }
  return host;
}

// A progress line ("bench reduce u32 add n=2^20 ...") on stderr, so stdout holds only the tables; printf
// format. `vkprim demo` turns them off (set_progress(false)).
void progress(const char* format, ...) __attribute__((format(printf, 1, 2)));
void set_progress(bool on);

// "2^10..2^28" (every power of two), "2^20,2^24+1,1000" or a mix.
bool parse_sizes(const std::string& text, std::vector<uint64_t>& out);
std::string size_label(uint64_t n);

// The options every bench takes besides its own (and the device's): --algorithm, --sizes, --repeat, --json.
struct BenchArgs {
  std::string algorithm = "automatic", sizes = "2^16..2^24", json;
  int repeats = 20;  // at least 10
  bool profile = false;  // --profile: also the median time of each of the plan's passes
  bool stats = false;    // --stats: the driver's statistics of every pipeline, after the tables
};
// Takes the common options from `args` (after the bench's own), opens the device and refuses an argument
// left over ("<command>: unknown argument '...'"). Null on failure, with the exit code in `rc`.
std::unique_ptr<Device> open_bench(std::vector<std::string>& args, const char* command, BenchArgs& out, int& rc);
// "device: ..., driver ...; median of N timed runs after ~200 ms of warm-up" and `counting` (e.g. "; GB/s ...").
void print_bench_header(const Device& device, int repeats, const std::string& counting = "");

// --profile: the median GPU time of each pass `record` issues (a timestamp after every dispatch, through the
// runtime's PassTimer hook), over `repeats` runs after `restore`; printed as "profile ..." lines.
struct PassTime {
  std::string label;
  double median_us = 0;
};
Result<std::vector<PassTime>> profile_passes(const Device& device, int repeats, const Recorder& record,
                                             const Recorder& restore = {});
void print_profile(const std::string& what, const std::vector<PassTime>& passes);

// --stats: one "stats <kernel> [<variant>] <wg>x<items>: <name>=<value>, ..." line per pipeline the context
// built (Context::kernel_statistics), or one line saying the device cannot report them.
void print_pipeline_statistics(const Device& device);

// One entry of --algorithm's comma-separated list: NAME or NAME@WGxV (a tile override; 0 keeps the default).
struct AlgorithmChoice {
  std::string name;
  uint32_t workgroup_size = 0, per_thread = 0, tuning = 0;  // "@WGxV" or "@WGxVxT" (T: a kernel-specific knob)
  std::string shape;  // "@WGxV[xT]" as written, empty without one
};
std::vector<AlgorithmChoice> split_algorithms(const std::string& list);
// "@WGxV" (or "@WGxVxT") of a tile override, empty when all are 0 (the default shape).
std::string shape_label(uint32_t workgroup_size, uint32_t per_thread, uint32_t tuning = 0);

// The plans a bench measures, their row labels (the resolved algorithm and a shape suffix) and the
// scratch they need.
template <class Plan>
struct PlanSet {
  std::vector<Plan> plans;
  std::vector<std::string> labels;
  VkDeviceSize scratch_bytes = 16;

  // Adds a plan; one the device refuses as unsupported (e.g. a chained scan on lavapipe) is left out with
  // "<what> skipped: <why>" on stderr. Any other error is returned.
  Result<void> add(Result<Plan> made, const std::string& suffix, const std::string& what) {
    if (!made && made.status() == Status::unsupported) {
      std::fprintf(stderr, "%s skipped: %s\n", what.c_str(), made.error().message.c_str());
      return {};
    }
    if (!made) return std::move(made).error();
    labels.push_back(to_string(made->algorithm()) + suffix);
    scratch_bytes = std::max(scratch_bytes, made->scratch_requirements().size);
    plans.push_back(std::move(made).value());
    return {};
  }
};

// "fallbacks=F steps/tile=S max_depth=D" (with "tiles=T " first when `tiles`) from a chained plan's
// statistics at `offset` in scratch; empty when they cannot be read.
std::string lookback_note(const Device& device, const Buffer& scratch, VkDeviceSize offset, bool tiles);
// lookback_note of a scan plan with its tiles: chained algorithms only (the others keep no statistics), else
// empty.
std::string scan_lookback_note(const Device& device, const Buffer& scratch, const Scan& plan);
// The last table column: "yes       " or "NO        " and the note.
inline std::string verified_cell(bool verified, const std::string& note) {
  return (verified ? std::string("yes       ") : std::string("NO        ")) + note;
}

// `text` as the body of a JSON string: quotes, backslashes and control characters escaped.
std::string json_escape(const std::string& text);

// One result row as a JSON object, fields in the order added (numbers as std::ostream prints them).
class JsonRow {
 public:
  JsonRow& text(const char* key, const std::string& value) {
    field(key) << '"' << json_escape(value) << '"';
    return *this;
  }
  template <class Number>
  JsonRow& number(const char* key, Number value) {
    field(key) << value;
    return *this;
  }
  JsonRow& flag(const char* key, bool value) {
    field(key) << (value ? "true" : "false");
    return *this;
  }
  std::string str() const { return out_.str() + "}"; }

 private:
  std::ostream& field(const char* key) {
    out_ << (out_.tellp() == 0 ? "{" : ", ") << '"' << key << "\": ";
    return out_;
  }
  std::ostringstream out_;
};
// {"device": "...", "rows": [ one object a line ]} into `path`; fields(row, json) adds a row's fields.
void write_json_objects(const std::string& path, const std::string& device, const std::vector<std::string>& objects);
template <class Row, class Fields>
void write_json(const std::string& path, const std::string& device, const std::vector<Row>& rows, Fields&& fields) {
  std::vector<std::string> objects;
  for (const Row& r : rows) {
    JsonRow json;
    fields(r, json);
    objects.push_back(json.str());
  }
  write_json_objects(path, device, objects);
}

}  // namespace vkprim::tools
