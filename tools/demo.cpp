// `vkprim demo`: the first look at a device. Every primitive's automatic plan at one size, timed and
// verified against the CPU by its bench's own code, next to the read and copy ceilings measured in the same
// process; one line each.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bench_support.hpp"
#include "commands.hpp"
#include "demo.hpp"
#include "vkprim/version.hpp"

namespace vkprim::tools {

namespace {

void print_summary_header() {
  std::printf("%-9s %-18s %-20s %6s %11s %9s %7s %7s %s\n", "primitive", "workload", "algorithm", "n", "median_us",
              "GB/s", "x_read", "x_copy", "verified");
}

// GB/s with three or four significant digits, from a CPU driver's 0.0012 to a GPU's 2981.
std::string gbps_text(double gbps) {
  char text[32];
  std::snprintf(text, sizeof(text), gbps >= 100 ? "%.0f" : gbps >= 1 ? "%.2f" : "%.4f", gbps);
  return text;
}

void print_summary(const char* primitive, const std::optional<Summary>& s) {
  if (!s) {
    std::printf("%-9s %s\n", primitive, "did not run (the reason is above)");
    return;
  }
  std::printf("%-9s %-18s %-20s %6s %11.2f %9s %7.3f %7.3f %s\n", primitive, s->what.c_str(), s->algorithm.c_str(),
              size_label(s->n).c_str(), s->median_us, gbps_text(s->gbps).c_str(), s->of_read, s->of_copy,
              s->verified ? "yes" : "NO");
}

// The default size: 2^24 elements on a GPU (past its caches, a few milliseconds in all), 2^18 on a CPU
// driver, where lavapipe's onesweep sort of 2^20 keys alone takes 3 s a run.
std::string default_size(const Device& device) {
  return device.context().capabilities().device_type == VK_PHYSICAL_DEVICE_TYPE_CPU ? "2^18" : "2^24";
}

}  // namespace

int run_demo(std::vector<std::string> args) {
  std::string size_s, repeat_s = "10";
  take_option(args, "--size", size_s);
  take_option(args, "--repeat", repeat_s);
  auto device = open_device(args);
  if (!device) return 1;
  if (size_s.empty()) size_s = default_size(*device);
  std::vector<uint64_t> sizes;
  if (!args.empty() || !parse_sizes(size_s, sizes) || sizes.size() != 1 || sizes[0] == 0) {
    std::fprintf(stderr, "usage: vkprim demo [--size N] [--repeat N] [--device INDEX|NAME] (see vkprim --help)\n");
    return 2;
  }
  const uint64_t n = sizes[0];
  const int repeats = std::max(10, std::atoi(repeat_s.c_str()));
  const Capabilities& caps = device->context().capabilities();
  std::printf("vkprim %s demo on %s, driver %s %s\n", version().string, caps.device_name.c_str(),
              caps.driver_name.c_str(), caps.driver_info.c_str());
  std::printf("each primitive's automatic plan on %s u32 elements: median of %d timed runs after ~200 ms of "
              "warm-up, result checked against the CPU\n",
              size_label(n).c_str(), repeats);
  std::fflush(stdout);
  set_progress(false);
  print_summary_header();
  // Each line is printed as soon as it is measured: a slow device shows progress.
  const std::pair<const char*, std::optional<Summary> (*)(const Device&, uint64_t, int)> runs[] = {
      {"reduce", demo_reduce}, {"scan", demo_scan}, {"sort", demo_sort}, {"select", demo_select}};
  bool all_verified = true;
  for (const auto& [primitive, run] : runs) {
    const std::optional<Summary> s = run(*device, n, repeats);
    print_summary(primitive, s);
    std::fflush(stdout);
    all_verified = all_verified && s && s->verified;
  }
  std::printf("GB/s count the bytes read (reduce), read + written (scan; sort: each key once), or input + flags\n"
              "read + kept written (select). x_read, x_copy: GB/s over a 16-byte-vector shader read and copy\n"
              "measured on the same buffers just before each.\n");
  return all_verified ? 0 : 1;
}

}  // namespace vkprim::tools
