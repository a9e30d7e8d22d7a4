// Scan test rig shared by test_scan and test_scan_chained: plan creation that reports why it failed, a
// plan with guarded input/output buffers whose check() compares every element with the host reference
// and proves nothing outside the output was written (the caller-side barrier between records is
// test_support.hpp's between_records), and batched checks of many records of one plan.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "host_scan.hpp"
#include "test_support.hpp"
#include "vkprim/scan.hpp"

namespace vkprim::test {

Scan make_scan(Context& context, const ScanDesc& desc) {
  auto plan = Scan::create(context, desc);
  INFO("Scan::create(" << to_string(desc.type) << ", " << to_string(desc.op) << ", " << to_string(desc.kind)
                       << ", max_count " << desc.max_count << ", " << to_string(desc.algorithm)
                       << (desc.deterministic ? ", deterministic" : "")
                       << "): " << (plan ? std::string("ok") : plan.error().message));
  REQUIRE(plan.ok());
  return std::move(plan).value();
}

Buffer make_scratch(const Device& dev, const Scan& plan) {
  return make_buffer(dev, std::max<VkDeviceSize>(16, plan.scratch_requirements().size));
}

// One plan with its input and output buffers (room for max_count plus guards) and scratch.
template <class T>
class ScanRig {
 public:
  static constexpr uint64_t kGuard = 16;

  ScanRig(Device& dev, const ScanDesc& desc)
      : dev_(dev),
        plan_(make_scan(dev.context(), desc)),
        input_(make_buffer(dev, (desc.max_count + 2 * kGuard) * sizeof(T))),
        output_(make_buffer(dev, (desc.max_count + 2 * kGuard) * sizeof(T))),
        scratch_(make_scratch(dev, plan_)) {}

  const Scan& plan() const { return plan_; }
  const Buffer& scratch() const { return scratch_; }
  Device& device() const { return dev_; }

  // Scans `data` placed at element `in_shift` of the input buffer into element `out_shift` of the
  // poisoned output buffer (or in place in the input buffer); checks every element against the
  // reference, and that nothing outside the output range was written.
  bool check(const std::vector<T>& data, uint64_t in_shift = 0, uint64_t out_shift = 0, bool in_place = false) {
    const ScanDesc& d = plan_.desc();
    const uint64_t n = data.size();
    REQUIRE(in_shift <= kGuard);
    REQUIRE(out_shift <= kGuard);
    const ContextOptions& o = dev_.context().options();
    const detail::Testing& t = dev_.context().testing();
    INFO(to_string(plan_.algorithm()) << " " << to_string(d.kind) << " " << to_string(d.type) << " "
                                      << to_string(d.op) << " n=" << n << " input shift " << in_shift
                                      << " output shift " << out_shift << (in_place ? " in place" : "")
                                      << "; spin limit " << o.fallback_spin_limit << ", skip period "
                                      << t.skip_publication_period);
    // [hostile x in_shift][data][hostile x kGuard]
    std::vector<T> staged(in_shift + n + kGuard, hostile<T>(d.op));
    std::copy(data.begin(), data.end(), staged.begin() + std::ptrdiff_t(in_shift));
    upload(dev_, input_, staged);
    poison(dev_, output_);
    const BufferRange in = input_.range(in_shift * sizeof(T), n * sizeof(T));
    const BufferRange out = in_place ? in : output_.range(out_shift * sizeof(T), n * sizeof(T));
    Result<void> recorded;
    auto submitted = submit_compute(dev_, [&](VkCommandBuffer cmd) {
      recorded = plan_.record(cmd, in, out, n, scratch_.range());
    });
    INFO("record: " << recorded.message() << " submit: " << submitted.message());
    REQUIRE(recorded.ok());
    REQUIRE(submitted.ok());
    bool ok = true;
    const uint64_t shift = in_place ? in_shift : out_shift;
    const auto got = download<T>(dev_, in_place ? input_ : output_, shift + n + kGuard);
    std::string why;
    const size_t bad = host::first_scan_mismatch(d.op, d.kind, data.data(), got.data() + shift, n,
                                                 plan_.float_add_depth(n), why);
    INFO(why);
    CHECK(bad == n);
    ok = ok && bad == n;
    // Guards: the poison (or, in place, the hostile values) around the output range are untouched.
    std::vector<uint32_t> words(got.size() * sizeof(T) / 4);
    std::memcpy(words.data(), got.data(), words.size() * 4);
    bool untouched = true;
    for (uint64_t i = 0; i < got.size(); ++i) {
      if (i >= shift && i < shift + n) continue;
      if (in_place) {
        untouched = untouched && host::same_bits(got[i], hostile<T>(d.op));
      } else {
        for (size_t w = 0; w < sizeof(T) / 4; ++w) untouched = untouched && words[i * sizeof(T) / 4 + w] == kPoison;
      }
    }
    INFO("elements outside the output range must keep their values");
    CHECK(untouched);
    return ok && untouched;
  }

 private:
  Device& dev_;
  Scan plan_;
  Buffer input_, output_, scratch_;
};

// Records `plan` twice into one command buffer over two fresh random inputs, sharing one scratch range
// with the caller's reuse barrier (between_records) in between, record i scanning counts[i] elements
// (indirect: record_indirect with counts[i] in a GPU buffer). Checks both outputs against the host and
// that nothing past counts[i] was written. Returns the scratch, as the second record left it.
template <class T>
Buffer check_two_records(Device& dev, const Scan& plan, const std::array<uint32_t, 2>& counts, bool indirect,
                         std::mt19937_64& rng) {
  const ScanDesc& d = plan.desc();
  const uint64_t max_n = d.max_count;
  INFO(to_string(plan.algorithm()) << (indirect ? " record_indirect" : " record") << " twice, counts " << counts[0]
                                   << " and " << counts[1]);
  std::array<std::vector<T>, 2> data;
  std::array<Buffer, 2> in = {make_buffer(dev, max_n * sizeof(T)), make_buffer(dev, max_n * sizeof(T))};
  std::array<Buffer, 2> out = {make_buffer(dev, (max_n + 1) * sizeof(T)), make_buffer(dev, (max_n + 1) * sizeof(T))};
  Buffer count_words = make_buffer(dev, 256);
  Buffer scratch = make_scratch(dev, plan);
  for (int i = 0; i < 2; ++i) {
    data[i] = random_values<T>(max_n, rng);
    upload(dev, in[i], data[i]);
    poison(dev, out[i]);
    upload(dev, count_words, std::vector<uint32_t>{counts[i]}, VkDeviceSize(128 * i));
  }
  const auto barrier = pipeline_barrier(dev);
  std::array<Result<void>, 2> recorded;
  auto submitted = submit_compute(dev, [&](VkCommandBuffer cmd) {
    for (int i = 0; i < 2; ++i) {
      if (i > 0) between_records(barrier, cmd);
      const BufferRange o = out[i].range(0, max_n * sizeof(T));
      recorded[i] = indirect ? plan.record_indirect(cmd, in[i].range(), o, count_words.range(128 * i, 4), scratch.range())
                             : plan.record(cmd, in[i].range(0, counts[i] * sizeof(T)),
                                           out[i].range(0, counts[i] * sizeof(T)), counts[i], scratch.range());
    }
  });
  INFO("records: " << recorded[0].message() << " / " << recorded[1].message() << "; submit " << submitted.message());
  REQUIRE((recorded[0].ok() && recorded[1].ok() && submitted.ok()));
  for (int i = 0; i < 2; ++i) {
    const uint64_t n = std::min<uint64_t>(counts[i], max_n);
    const auto got = download<T>(dev, out[i], max_n + 1);
    std::string why;
    INFO("record " << i);
    CHECK(host::first_scan_mismatch(d.op, d.kind, data[i].data(), got.data(), n, plan.float_add_depth(n), why) == n);
    INFO(why);
    std::vector<uint32_t> words((max_n + 1 - n) * sizeof(T) / 4);
    std::memcpy(words.data(), got.data() + n, words.size() * 4);
    CHECK(std::all_of(words.begin(), words.end(), [](uint32_t w) { return w == kPoison; }));
  }
  return scratch;
}

// Scans the first n elements of one upload of random u32 data for every n in `sizes` (each at most the
// plan's max_count): up to 128 records per command buffer, each into its own poisoned output slot, with the
// caller's reuse barrier (between_records) between them. Each slot must hold the first n elements of the
// host scan of all the data, then the poison; the first five wrong sizes are reported with their element.
inline void check_u32_prefixes(Device& dev, const Scan& plan, const std::vector<uint64_t>& sizes,
                               std::mt19937_64& rng) {
  const ScanDesc& d = plan.desc();
  const uint64_t max_n = d.max_count;
  const auto data = random_values<uint32_t>(max_n, rng);
  // The scan of the first n elements is the first n elements of the scan of all of them.
  const auto expected = host::scan(d.op, d.kind, data);
  Buffer input = make_buffer(dev, max_n * 4);
  Buffer scratch = make_scratch(dev, plan);
  constexpr uint64_t kBatch = 128;
  Buffer output = make_buffer(dev, kBatch * max_n * 4);
  upload(dev, input, data);
  const auto barrier = pipeline_barrier(dev);
  uint64_t failures = 0;
  for (size_t first = 0; first < sizes.size(); first += kBatch) {
    const size_t batch = std::min<size_t>(kBatch, sizes.size() - first);
    poison(dev, output);
    Result<void> recorded;
    auto submitted = submit_compute(dev, [&](VkCommandBuffer cmd) {
      for (size_t s = 0; s < batch && recorded.ok(); ++s) {
        if (s > 0) between_records(barrier, cmd);
        const uint64_t n = sizes[first + s];
        recorded = plan.record(cmd, input.range(0, n * 4), output.range(s * max_n * 4, n * 4), n, scratch.range());
      }
    });
    INFO("record: " << recorded.message() << " submit: " << submitted.message());
    REQUIRE(recorded.ok());
    REQUIRE(submitted.ok());
    const auto got = download<uint32_t>(dev, output, batch * max_n);
    for (size_t s = 0; s < batch; ++s) {
      const uint64_t n = sizes[first + s];
      for (uint64_t i = 0; i < max_n; ++i) {
        const uint32_t want = i < n ? expected[i] : kPoison;
        if (got[s * max_n + i] != want) {
          if (failures++ < 5)
            FAIL_CHECK(to_string(plan.algorithm()) << " " << to_string(d.kind) << " u32 " << to_string(d.op)
                                                   << " n=" << n << " element " << i << ": got " << got[s * max_n + i]
                                                   << ", expected " << want);
          break;
        }
      }
    }
  }
  INFO(to_string(plan.algorithm()) << " " << to_string(d.kind) << ": " << failures << " of " << sizes.size()
                                   << " sizes wrong");
  CHECK(failures == 0);
}

}  // namespace vkprim::test
