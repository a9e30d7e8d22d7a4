// The segmented-reduce part of `vkprim verify`: every type and op, segments of every length class the plan
// resolves (short, medium, huge, empty) in one record with shuffled offsets, and record_fixed, against the
// host reduction of each segment.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "commands.hpp"
#include "host_reference.hpp"
#include "segmented_commands.hpp"
#include "vkprim/segmented_reduce.hpp"

namespace vkprim::tools {

namespace {

// Segment lengths around each of the plan's thresholds, and an empty one, in a shuffled order.
std::vector<uint32_t> lengths_of(const SegmentThresholds& t, std::mt19937_64& rng) {
  std::vector<uint32_t> lengths = {0, 1, t.short_max, t.short_max + 1, t.medium_max, t.medium_max + 1,
                                   3 * t.chunk + 7};
  std::shuffle(lengths.begin(), lengths.end(), rng);
  return lengths;
}

// One record with offsets (begin and end buffers, segments in shuffled order with a gap between them) and one
// record_fixed, both checked segment by segment.
template <class T>
bool verify_one(const Device& device, DataType type, Op op, std::mt19937_64& rng, std::string& why) {
  SegmentedReduceDesc desc{type, op, 64, 1u << 20};
  auto plan = SegmentedReduce::create(const_cast<Device&>(device).context(), desc);
  if (!plan) {
    why = plan.error().message;
    return false;
  }
  std::vector<uint32_t> begins, ends;
  uint32_t at = 0;
  for (uint32_t len : lengths_of(plan->thresholds(), rng)) {
    begins.push_back(at + 3);  // a gap of three elements before every segment
    ends.push_back(at + 3 + len);
    at += 3 + len;
  }
  const uint64_t n = std::min<uint64_t>(at, desc.max_count), segments = begins.size();
  std::vector<T> host(n), got(segments);
  host::fill_random(host, rng);
  auto input = device.create_buffer(n * sizeof(T));
  auto offsets = device.create_buffer(2 * segments * 4);
  auto output = device.create_buffer(segments * sizeof(T));
  auto scratch = device.create_buffer(plan->scratch_requirements().size);
  if (!input || !offsets || !output || !scratch) {
    why = "buffer allocation failed";
    return false;
  }
  for (const bool fixed : {false, true}) {
    const uint64_t size = plan->thresholds().short_max + 1, fixed_segments = std::min<uint64_t>(segments, n / size);
    auto ready = device.upload(input.value(), host.data(), n * sizeof(T));
    if (ready) ready = device.upload(offsets.value(), begins.data(), segments * 4);
    if (ready) ready = device.upload(offsets.value(), ends.data(), segments * 4, segments * 4);
    if (ready) ready = device.fill(output.value(), 0xDEADBEEF);
    Result<void> recorded;
    if (ready)
      ready = device.submit([&](VkCommandBuffer cmd) {
        recorded = fixed ? plan->record_fixed(cmd, input->range(), output->range(), size, fixed_segments, scratch->range())
                         : plan->record(cmd, input->range(), output->range(), offsets->range(0, segments * 4),
                                        offsets->range(segments * 4, segments * 4), segments, scratch->range());
      });
    if (ready && recorded) ready = device.download(output.value(), got.data(), segments * sizeof(T));
    if (!ready || !recorded) {
      why = !recorded ? recorded.message() : ready.message();
      return false;
    }
    for (uint64_t s = 0; s < (fixed ? fixed_segments : segments); ++s) {
      const uint64_t first = fixed ? s * size : begins[s], len = fixed ? size : ends[s] - begins[s];
      if (!same_result(*plan, host.data() + first, len, got[s], host::reduce<T>(op, host.data() + first, len))) {
        why = std::string(fixed ? "record_fixed" : "record") + " segment " + std::to_string(s) + " of " +
              std::to_string(len) + " elements differs from the host reduction";
        return false;
      }
    }
  }
  return true;
}

}  // namespace

int verify_segmented_reduce(const Device& device, std::mt19937_64& rng) {
  const Capabilities& caps = device.context().capabilities();
  int passed = 0, failed = 0, skipped = 0;
  for (DataType type : verify_types(caps, skipped)) {
    for (Op op : verify_ops(type)) {
      std::string why;
      const bool ok = host::with_type(type, [&](auto t) { return verify_one<decltype(t)>(device, type, op, rng, why); });
      if (ok) {
        ++passed;
      } else {
        ++failed;
        std::printf("FAIL segmented_reduce %s %s: %s\n", to_string(type), to_string(op), why.c_str());
      }
    }
  }
  std::printf("segmented_reduce: %d passed, %d failed%s\n", passed, failed,
              skipped ? " (64-bit types unsupported: skipped)" : "");
  return failed;
}

}  // namespace vkprim::tools
