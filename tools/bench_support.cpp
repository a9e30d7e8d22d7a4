#include "bench_support.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "barriers.hpp"
#include "commands.hpp"
#include "context_impl.hpp"
#include "dispatch.hpp"
#include "errors.hpp"
#include "shader_groups.hpp"

namespace vkprim::tools {

using detail::make_error;

namespace {
bool profiling = false;  // --profile (open_bench): warm_and_time also prints each pass's time
bool show_progress = true;  // progress(): off under `vkprim demo`
}

void progress(const char* format, ...) {
  if (!show_progress) return;
  va_list args;
  va_start(args, format);
  std::vfprintf(stderr, format, args);
  va_end(args);
}

void set_progress(bool on) { show_progress = on; }

Recorder restore_input(const Device& device, const Buffer& pristine_keys, const Buffer& keys, VkDeviceSize key_bytes,
                       const Buffer& pristine_values, const Buffer& values, VkDeviceSize value_bytes) {
  auto& c = device.context().impl();
  return [&c, &pristine_keys, &keys, key_bytes, &pristine_values, &values,
          value_bytes](VkCommandBuffer cmd) -> Result<void> {
    const VkBufferCopy k{0, 0, key_bytes};
    c.vk.vkCmdCopyBuffer(cmd, pristine_keys.handle(), keys.handle(), 1, &k);
    if (value_bytes) {
      const VkBufferCopy v{0, 0, value_bytes};
      c.vk.vkCmdCopyBuffer(cmd, pristine_values.handle(), values.handle(), 1, &v);
    }
    return {};
  };
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

namespace {

// A timestamp query pool that lives for one measurement, and the conversion of its ticks to ns.
class TimestampPool {
 public:
  TimestampPool(detail::ContextImpl& c, uint32_t count) : c_(c), count_(count) {
    VkQueryPoolCreateInfo info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    info.queryType = VK_QUERY_TYPE_TIMESTAMP;
    info.queryCount = count;
    created_ = c.vk.vkCreateQueryPool(c.device, &info, nullptr, &pool_);
  }
  ~TimestampPool() {
    if (pool_) c_.vk.vkDestroyQueryPool(c_.device, pool_, nullptr);
  }
  TimestampPool(const TimestampPool&) = delete;
  TimestampPool& operator=(const TimestampPool&) = delete;

  Result<void> created() const {
    if (created_ != VK_SUCCESS) return detail::vk_error(created_, "vkCreateQueryPool");
    return {};
  }
  VkQueryPool handle() const { return pool_; }
  uint32_t count() const { return count_; }
  void reset(VkCommandBuffer cmd) const { c_.vk.vkCmdResetQueryPool(cmd, pool_, 0, count_); }
  Result<std::vector<uint64_t>> read(uint32_t stamps) const {
    std::vector<uint64_t> out(stamps);
    const VkResult r = c_.vk.vkGetQueryPoolResults(c_.device, pool_, 0, stamps, out.size() * 8, out.data(), 8,
                                                   VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
    if (r != VK_SUCCESS) return detail::vk_error(r, "vkGetQueryPoolResults");
    return out;
  }
  double ns(uint64_t from, uint64_t to) const {
    const uint32_t bits = c_.caps.timestamp_valid_bits;
    const uint64_t mask = bits >= 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;
    return double((to - from) & mask) * c_.caps.timestamp_period_ns;
  }

 private:
  detail::ContextImpl& c_;
  uint32_t count_;
  VkQueryPool pool_ = VK_NULL_HANDLE;
  VkResult created_ = VK_SUCCESS;
};

// Before each timed run: the previous run's writes before the next one (which may clear scratch or
// restore the input with transfers), then the restore.
Result<void> prepare_run(detail::ContextImpl& c, VkCommandBuffer cmd, const Recorder& restore) {
  detail::compute_to_fill_barrier(c, cmd);
  if (!restore) return {};
  auto restored = restore(cmd);
  detail::transfer_to_compute_barrier(c, cmd);
  return restored;
}

}  // namespace

Result<std::vector<double>> time_gpu(const Device& device, int repeats, const Recorder& record,
                                     const Recorder& restore) {
  auto& c = device.context().impl();
  if (!c.caps.has(feature_timestamps)) return make_error(Status::unsupported, "the queue has no timestamp support");
  const TimestampPool pool(c, uint32_t(2 * repeats));
  if (auto ok = pool.created(); !ok) return ok.error();
  Result<void> recorded;
  auto submitted = device.submit([&](VkCommandBuffer cmd) {
    pool.reset(cmd);
    for (int i = 0; i < repeats && recorded.ok(); ++i) {
      recorded = prepare_run(c, cmd, restore);
      c.vk.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool.handle(), uint32_t(2 * i));
      if (recorded) recorded = record(cmd);
      c.vk.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool.handle(), uint32_t(2 * i + 1));
    }
  });
  if (!submitted) return submitted.error();
  if (!recorded) return recorded.error();
  auto stamps = pool.read(pool.count());
  if (!stamps) return stamps.error();
  std::vector<double> ns;
  for (int i = 0; i < repeats; ++i) ns.push_back(pool.ns(stamps.value()[2 * i], stamps.value()[2 * i + 1]));
  return ns;
}

Result<std::vector<PassTime>> profile_passes(const Device& device, int repeats, const Recorder& record,
                                             const Recorder& restore) {
  auto& c = device.context().impl();
  if (!c.caps.has(feature_timestamps)) return make_error(Status::unsupported, "the queue has no timestamp support");
  const TimestampPool pool(c, 512);
  if (auto ok = pool.created(); !ok) return ok.error();
  std::vector<std::string> labels;
  std::vector<std::vector<double>> us;
  for (int run = 0; run < repeats; ++run) {
    detail::PassTimer timer;
    timer.pool = pool.handle();
    timer.capacity = pool.count();
    Result<void> recorded;
    auto submitted = device.submit([&](VkCommandBuffer cmd) {
      pool.reset(cmd);
      recorded = prepare_run(c, cmd, restore);
      c.pass_timer = &timer;
      if (recorded) recorded = record(cmd);
      c.pass_timer = nullptr;
    });
    if (!submitted) return submitted.error();
    if (!recorded) return recorded.error();
    if (timer.used < 2) break;
    auto stamps = pool.read(timer.used);
    if (!stamps) return stamps.error();
    if (labels.empty()) {
      labels.assign(timer.labels.begin() + 1, timer.labels.end());
      us.resize(labels.size());
    }
    for (size_t i = 1; i < stamps.value().size() && i - 1 < us.size(); ++i)
      us[i - 1].push_back(pool.ns(stamps.value()[i - 1], stamps.value()[i]) / 1e3);
  }
  std::vector<PassTime> out;
  for (size_t i = 0; i < labels.size(); ++i) out.push_back({labels[i], median(us[i])});
  return out;
}

void print_profile(const std::string& what, const std::vector<PassTime>& passes) {
  double total = 0;
  for (const PassTime& p : passes) total += p.median_us;
  std::printf("profile %s: %zu passes, %.2f us in all (each pass's time includes a scratch clear recorded "
              "before it)\n", what.c_str(), passes.size(), total);
  for (const PassTime& p : passes) std::printf("profile   %10.2f us  %s\n", p.median_us, p.label.c_str());
}

void print_pipeline_statistics(const Device& device) {
  const Context& context = device.context();
  if (!context.capabilities().has(feature_pipeline_statistics)) {
    std::printf("stats: %s does not support VK_KHR_pipeline_executable_properties (pipelineExecutableInfo); "
                "no pipeline statistics\n", context.capabilities().device_name.c_str());
    return;
  }
  for (const KernelStatistics& k : context.kernel_statistics()) {
    std::string values;
    for (const auto& [name, value] : k.values) values += (values.empty() ? "" : ", ") + name + "=" + value;
    // Appended, not "x" + to_string(): GCC 12 warns (-Wrestrict) on that concatenation, a false positive.
    std::string tuning;
    if (k.tuning) tuning.append("x").append(std::to_string(k.tuning));
    if (k.mode) tuning += " mode " + std::to_string(k.mode);  // e.g. a sort's key transform
    if (k.rounds) tuning += " rounds " + std::to_string(k.rounds);  // e.g. a sort's staging rounds
    std::printf("stats %s [%s] %ux%u%s: %s\n", k.kernel.c_str(), k.variant.c_str(), k.workgroup_size, k.items,
                tuning.c_str(), values.empty() ? "(the driver reported none)" : values.c_str());
  }
}

Result<void> warm_up(const Device& device, const Recorder& run, double ms, const Recorder& restore, int max_runs) {
  // Submissions of at most max_runs runs until `ms` of GPU time is spent: one capped submission of short
  // runs was too little (H100, 2^20 scan: 2000 runs of ~25 us at idle clocks left the first size of a
  // sweep at 26.9 us against 10.8 us in a later process). Then batches of about ms / 4 until two in a row
  // agree within 2%: after the CPU reference of a 2^31 reduce (1.3-1.9 s with the GPU idle), its first
  // plan still ran at half speed past 200 ms of runs (H200: 4386 us, then 1906 with 2000 ms of warm-up).
  // A wall-clock bound stops it where GPU time stays far below host time or runs never settle.
  const auto start = std::chrono::steady_clock::now();
  auto wall_ms = [&] { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count(); };
  double spent_ns = 0, previous_ns = 0;
  int repeats = 2;
  while (wall_ms() < 25 * ms) {
    auto timed = time_gpu(device, repeats, run, restore);
    if (!timed) return timed.error();
    for (double ns : timed.value()) spent_ns += ns;
    const double each_ns = std::max(1.0, median(timed.value()));
    const bool settled = previous_ns > 0 && std::fabs(each_ns - previous_ns) <= 0.02 * previous_ns;
    if (spent_ns >= ms * 1e6 && settled) break;
    if (spent_ns >= ms * 1e6) previous_ns = each_ns;
    const double batch_ns = spent_ns < ms * 1e6 ? ms * 1e6 - spent_ns : ms * 1e6 / 4;
    repeats = int(std::clamp(batch_ns / each_ns, 1.0, double(max_runs)));
  }
  return {};
}

Result<double> warm_and_time(const Device& device, int repeats, const Recorder& run, const Recorder& restore,
                             int max_warm_runs) {
  if (auto warmed = warm_up(device, run, 200, restore, max_warm_runs); !warmed) return warmed.error();
  auto ns = time_gpu(device, repeats, run, restore);
  if (!ns) return std::move(ns).error();
  if (profiling) {
    auto passes = profile_passes(device, std::min(repeats, 10), run, restore);
    if (!passes) return passes.error();
    print_profile("of the run just timed (median " + std::to_string(median(ns.value()) / 1e3) + " us)",
                  passes.value());
  }
  return median(ns.value());
}

namespace {

Result<std::vector<detail::Pass>> ceiling_passes(detail::ContextImpl& c, const Buffer& src, const Buffer& dst,
                                                 uint64_t bytes, bool copy, bool rotated) {
  // Past either buffer the passes would read or write memory that is not theirs.
  if (bytes > src.size() || (copy && bytes > dst.size()))
    return detail::make_error(Status::invalid_argument, "ceiling of ", bytes, " bytes over buffers of ", src.size(),
                              " and ", dst.size(), " bytes");
  detail::KernelDesc kd{copy ? detail::kernel_name("ceiling/copy") : detail::kernel_name("ceiling/read")};
  kd.group = &detail::kShaderGroup_ceiling;
  kd.variant = "default";
  kd.workgroup_size = 256;
  kd.items = 4;
  auto kernel = detail::get_kernel(c, kd);
  if (!kernel) return std::move(kernel).error();
  const uint64_t per_group = uint64_t(kd.workgroup_size) * kd.items;
  const uint64_t window = detail::window_elements(c, 16, per_group);
  std::vector<detail::Pass> passes;
  const uint64_t vectors = bytes / 16;
  for (uint64_t first = 0; first < vectors; first += window) {
    const uint64_t n = std::min(window, vectors - first);
    detail::Pass p;
    p.kernel = kernel.value();
    p.buffers[0] = detail::bind_elements(c, src.range(), first, n, 16).bound;
    p.buffers[1] = copy ? detail::bind_elements(c, dst.range(), first, n, 16).bound
                        : detail::bind_elements(c, dst.range(), 0, 256, 4).bound;
    p.groups = (n + per_group - 1) / per_group;
    // The read ceiling's third word seeds its sum; the copy's is the rotation: half the window, in whole
    // workgroup tiles (a copy whose writes trail its reads by a fixed distance can land both on the same
    // memory channels; the copy ceiling keeps the faster of the two).
    const uint64_t rotation = rotated ? n / 2 / per_group * per_group : 0;
    p.push = {uint32_t(n), uint32_t(p.groups), copy ? uint32_t(rotation) : 0x9E3779B9u};
    p.label = kd.kernel.name();
    passes.push_back(std::move(p));
  }
  return passes;
}

}  // namespace

Result<Ceilings> measure_ceilings(const Device& device, const Buffer& src, const Buffer& dst, uint64_t bytes,
                                  int repeats) {
  auto& c = device.context().impl();
  Ceilings out;
  // Without push descriptors every run writes fresh sets; they return once the runs have completed (warm_up
  // and time_gpu wait for their submissions).
  detail::DescriptorSets sets(c, c.options.descriptor_sets_per_pool);
  // The copy twice, straight and rotated by half the buffer; the ceiling is the faster.
  for (int which : {0, 1, 2}) {
    const bool copy = which < 2;
    auto passes = ceiling_passes(c, src, dst, bytes, copy, which == 1);
    if (!passes) return std::move(passes).error();
    auto run = [&](VkCommandBuffer cmd) { return detail::record_passes(c, sets, cmd, passes.value(), "ceiling", "record"); };
    if (auto warmed = warm_up(device, run); !warmed) return warmed.error();
    sets.release();
    auto ns = time_gpu(device, repeats, run);
    sets.release();
    if (!ns) return std::move(ns).error();
    const double gbps = double(bytes) * (copy ? 2 : 1) / median(ns.value());
    (which == 0 ? out.copy_straight_gbps : which == 1 ? out.copy_rotated_gbps : out.read_gbps) = gbps;
  }
  out.bytes = bytes;
  return out;
}

std::optional<Ceilings> ceilings_for(const Device& device, const Buffer& src, const Buffer& dst, uint64_t data_bytes,
                                     int repeats) {
  auto ceilings = measure_ceilings(device, src, dst, std::max<uint64_t>(data_bytes / 16 * 16, 16), repeats);
  if (!ceilings) {
    std::fprintf(stderr, "bench: ceilings: %s\n", ceilings.error().message.c_str());
    return std::nullopt;
  }
  // Said only where the two copies differ by more than 25% (the slow straight copy some NVIDIA processes show).
  const double slow = std::min(ceilings->copy_straight_gbps, ceilings->copy_rotated_gbps);
  if (slow * 1.25 < ceilings->copy_gbps())
    std::fprintf(stderr, "bench: copy ceiling of %llu bytes: straight %.1f GB/s, rotated %.1f GB/s (the faster counts)\n",
                 (unsigned long long)ceilings->bytes, ceilings->copy_straight_gbps, ceilings->copy_rotated_gbps);
  return ceilings.value();
}

bool parse_sizes(const std::string& text, std::vector<uint64_t>& out) {
  auto parse_one = [](const std::string& s, uint64_t& v) {
    if (s.empty()) return false;
    size_t plus = s.find('+', 1), minus = s.find('-', 1);
    size_t split = std::min(plus, minus);
    std::string head = s.substr(0, split);
    int64_t adjust = 0;
    if (split != std::string::npos) {
      adjust = std::strtoll(s.c_str() + split + 1, nullptr, 10);
      if (s[split] == '-') adjust = -adjust;
    }
    char* end = nullptr;
    if (head.rfind("2^", 0) == 0) {
      unsigned long e = std::strtoul(head.c_str() + 2, &end, 10);
      if (*end || e > 62) return false;
      v = uint64_t(1) << e;
    } else {
      v = std::strtoull(head.c_str(), &end, 10);
      if (*end) return false;
    }
    v = uint64_t(int64_t(v) + adjust);
    return true;
  };
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const size_t dots = item.find("..");
    if (dots != std::string::npos) {
      uint64_t lo, hi;
      if (!parse_one(item.substr(0, dots), lo) || !parse_one(item.substr(dots + 2), hi) || lo == 0) return false;
      for (uint64_t v = lo; v <= hi; v *= 2) out.push_back(v);
    } else {
      uint64_t v;
      if (!parse_one(item, v)) return false;
      out.push_back(v);
    }
  }
  return !out.empty();
}

std::string size_label(uint64_t n) {
  if (n && (n & (n - 1)) == 0) return "2^" + std::to_string(__builtin_ctzll(n));
  return std::to_string(n);
}

std::unique_ptr<Device> open_bench(std::vector<std::string>& args, const char* command, BenchArgs& out, int& rc) {
  std::string repeat = std::to_string(out.repeats);
  take_option(args, "--algorithm", out.algorithm);
  take_option(args, "--sizes", out.sizes);
  take_option(args, "--repeat", repeat);
  take_option(args, "--json", out.json);
  out.profile = take_flag(args, "--profile");
  out.stats = take_flag(args, "--stats");
  profiling = out.profile;
  out.repeats = std::max(10, std::atoi(repeat.c_str()));
  rc = 1;
  auto device = open_device(args, out.stats);
  if (!device) return nullptr;
  if (!args.empty()) {
    std::fprintf(stderr, "%s: unknown argument '%s'\n", command, args[0].c_str());
    rc = 2;
    return nullptr;
  }
  rc = 0;
  return device;
}

void print_bench_header(const Device& device, int repeats, const std::string& counting) {
  const Capabilities& caps = device.context().capabilities();
  std::printf("device: %s, driver %s %s; median of %d timed runs after ~200 ms of warm-up%s\n",
              caps.device_name.c_str(), caps.driver_name.c_str(), caps.driver_info.c_str(), repeats, counting.c_str());
}

std::vector<AlgorithmChoice> split_algorithms(const std::string& list) {
  std::vector<AlgorithmChoice> out;
  for (size_t pos = 0; pos <= list.size();) {
    size_t comma = list.find(',', pos);
    if (comma == std::string::npos) comma = list.size();
    AlgorithmChoice choice;
    choice.name = list.substr(pos, comma - pos);
    if (const size_t at = choice.name.find('@'); at != std::string::npos) {
      std::sscanf(choice.name.c_str() + at + 1, "%ux%ux%u", &choice.workgroup_size, &choice.per_thread, &choice.tuning);
      choice.shape = choice.name.substr(at);
      choice.name.resize(at);
    }
    out.push_back(choice);
    pos = comma + 1;
  }
  return out;
}

std::string shape_label(uint32_t workgroup_size, uint32_t per_thread, uint32_t tuning) {
  if (!workgroup_size && !per_thread && !tuning) return {};
  return "@" + std::to_string(workgroup_size) + "x" + std::to_string(per_thread) +
         (tuning ? "x" + std::to_string(tuning) : std::string());
}

std::string lookback_note(const Device& device, const Buffer& scratch, VkDeviceSize offset, bool tiles) {
  uint32_t stats[4] = {};
  if (!device.download(scratch, stats, sizeof(stats), offset)) return {};
  const std::string counted = (tiles ? "tiles=" + std::to_string(stats[0]) + " " : std::string()) +
                              "fallbacks=" + std::to_string(stats[1]);
  // Steps and depth are counted only under --lookback-stats (ContextOptions::collect_statistics).
  if (!device.context().options().collect_statistics) return counted;
  return counted + " steps/tile=" + std::to_string(stats[0] ? double(stats[2]) / stats[0] : 0.0).substr(0, 4) +
         " max_depth=" + std::to_string(stats[3]);
}

std::string scan_lookback_note(const Device& device, const Buffer& scratch, const Scan& plan) {
  const bool chained =
      plan.algorithm() == ScanAlgorithm::chained_lookback || plan.algorithm() == ScanAlgorithm::chained_fallback;
  return chained ? lookback_note(device, scratch, plan.statistics_offset(), true) : std::string();
}

std::string json_escape(const std::string& text) {
  std::string out;
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
      out += escaped;
    } else {
      out += ch;
    }
  }
  return out;
}

void write_json_objects(const std::string& path, const std::string& device, const std::vector<std::string>& objects) {
  std::ofstream out(path);
  out << "{\"device\": \"" << json_escape(device) << "\", \"rows\": [\n";
  for (size_t i = 0; i < objects.size(); ++i) out << "  " << objects[i] << (i + 1 < objects.size() ? "," : "") << "\n";
  out << "]}\n";
}

}  // namespace vkprim::tools
