// Stream-compaction test rig shared by the Select and Partition tests: plan creation that
// reports why it failed, and a plan with guarded, poisoned buffers whose check() compares every output
// bit and the count against host_select.hpp's reference, and proves nothing else was written.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include <catch2/catch.hpp>

#include "host_select.hpp"
#include "test_support.hpp"
#include "vkprim/select.hpp"

namespace vkprim::test {

template <class T>
Comparand comparand_of(T v) {
  return Comparand::of(v);
}

template <class Plan>
Plan make_compaction(Context& context, const SelectDesc& desc) {
  auto plan = Plan::create(context, desc);
  INFO((std::is_same_v<Plan, Select> ? "Select" : "Partition")
       << "::create(" << to_string(desc.type) << ", max_count " << desc.max_count << ", " << to_string(desc.predicate)
       << ", " << to_string(desc.algorithm) << ", rejected " << to_string(desc.rejected_order)
       << "): " << (plan ? std::string("ok") : plan.error().message));
  REQUIRE(plan.ok());
  return std::move(plan).value();
}

// Where check() places things, in elements (count_word: u32 words).
struct Shifts {
  uint64_t input = 0, flags = 0, output = 0, count_word = 0;
};

template <class T, class Plan>
class CompactionRig {
 public:
  static constexpr uint64_t kGuard = 16;
  static constexpr bool kPartition = std::is_same_v<Plan, Partition>;

  CompactionRig(Device& dev, const SelectDesc& desc)
      : dev_(dev),
        plan_(make_compaction<Plan>(dev.context(), desc)),
        input_(make_buffer(dev, (desc.max_count + 2 * kGuard) * sizeof(T))),
        flags_(make_buffer(dev, (desc.max_count + 2 * kGuard) * 4)),
        output_(make_buffer(dev, (desc.max_count + 2 * kGuard) * sizeof(T))),
        count_(make_buffer(dev, 64)),
        scratch_(make_buffer(dev, std::max<VkDeviceSize>(16, plan_.scratch_requirements().size))) {}

  const Plan& plan() const { return plan_; }
  const Buffer& scratch() const { return scratch_; }
  const Buffer& input() const { return input_; }
  const Buffer& flags() const { return flags_; }
  const Buffer& output() const { return output_; }
  const Buffer& count() const { return count_; }
  Device& device() const { return dev_; }

  // Runs the plan on `data` (and `flags` under the flagged predicate) and checks every output bit, the
  // count, and that no other word of output or the count buffer changed. gpu_count: record_indirect with
  // that u32 count in a buffer (the plan clamps it to max_count); otherwise record with data.size().
  bool check(const std::vector<T>& data, const std::vector<uint32_t>& flags, T rhs, Shifts s = {},
             const uint32_t* gpu_count = nullptr) {
    const SelectDesc& d = plan_.desc();
    const uint64_t n = data.size();
    const uint64_t effective = gpu_count ? std::min<uint64_t>(*gpu_count, std::min<uint64_t>(n, d.max_count)) : n;
    INFO((kPartition ? "partition " : "select ") << to_string(plan_.algorithm()) << " rejected "
                                                 << to_string(d.rejected_order) << " " << to_string(d.type) << " "
                                                 << to_string(d.predicate) << " n=" << n << " comparand " << show(rhs)
                                                 << " shifts in/flags/out/count " << s.input << "/" << s.flags << "/"
                                                 << s.output << "/" << s.count_word
                                                 << (gpu_count ? " indirect count " + std::to_string(*gpu_count) : ""));
    REQUIRE(s.input <= kGuard);
    REQUIRE(s.flags <= kGuard);
    REQUIRE(s.output <= kGuard);
    REQUIRE(s.count_word < 12);
    const std::vector<T> used(data.begin(), data.begin() + std::ptrdiff_t(effective));
    std::vector<uint32_t> used_flags;
    if (!flags.empty()) used_flags.assign(flags.begin(), flags.begin() + std::ptrdiff_t(effective));
    uint64_t k = 0;
    std::vector<T> expected = host::compact(d.predicate, used, used_flags, rhs, kPartition, k);
    if (kPartition && d.rejected_order == RejectedOrder::reversed) expected = host::reverse_rejected(expected, k);
    // Input and flags: values past the data that the plan must not read as elements.
    std::vector<T> staged(s.input + n + kGuard, T(1));
    std::copy(data.begin(), data.end(), staged.begin() + std::ptrdiff_t(s.input));
    upload(dev_, input_, staged);
    std::vector<uint32_t> staged_flags(s.flags + n + kGuard, 1u);
    std::copy(flags.begin(), flags.end(), staged_flags.begin() + std::ptrdiff_t(s.flags));
    upload(dev_, flags_, staged_flags);
    poison(dev_, output_);
    poison(dev_, count_);
    if (gpu_count) upload(dev_, count_, std::vector<uint32_t>{*gpu_count}, 48);
    const bool flagged = d.predicate == SelectPredicate::flagged;
    const SelectOperands operands{.input = input_.range(s.input * sizeof(T), n * sizeof(T)),
                                  .flags = flagged ? flags_.range(s.flags * 4, n * 4) : BufferRange{},
                                  .output = output_.range(s.output * sizeof(T), n * sizeof(T)),
                                  .selected_count = count_.range(s.count_word * 4, 4),
                                  .scratch = scratch_.range()};
    Result<void> recorded;
    auto submitted = submit_compute(dev_, [&](VkCommandBuffer cmd) {
      if (gpu_count)
        recorded = plan_.record_indirect(cmd, operands, count_.range(48, 4), comparand_of(rhs));
      else
        recorded = plan_.record(cmd, operands, n, comparand_of(rhs));
    });
    INFO("record: " << recorded.message() << " submit: " << submitted.message());
    REQUIRE(recorded.ok());
    REQUIRE(submitted.ok());
    const auto got = download<T>(dev_, output_, s.output + n + kGuard);
    const auto counts = download<uint32_t>(dev_, count_, 16);
    INFO("selected_count " << counts[s.count_word] << ", expected " << k);
    bool ok = counts[s.count_word] == k;
    CHECK(ok);
    size_t bad = expected.size();
    for (size_t i = 0; i < expected.size(); ++i)
      if (std::memcmp(&got[s.output + i], &expected[i], sizeof(T)) != 0) {
        bad = i;
        break;
      }
    if (bad < expected.size()) {
      INFO("output[" << bad << "] = " << show(got[s.output + bad]) << ", expected " << show(expected[bad]));
      CHECK(bad == expected.size());
      ok = false;
    }
    std::vector<uint32_t> words(got.size() * sizeof(T) / 4);
    std::memcpy(words.data(), got.data(), words.size() * 4);
    bool untouched = true;
    for (uint64_t i = 0; i < got.size(); ++i) {
      if (i >= s.output && i < s.output + expected.size()) continue;
      for (size_t w = 0; w < sizeof(T) / 4; ++w) untouched = untouched && words[i * sizeof(T) / 4 + w] == kPoison;
    }
    for (size_t w = 0; w < 12; ++w)
      if (w != s.count_word) untouched = untouched && counts[w] == kPoison;
    INFO("output elements past the result and other count-buffer words must keep the poison");
    CHECK(untouched);
    return ok && untouched;
  }

 private:
  Device& dev_;
  Plan plan_;
  Buffer input_, flags_, output_, count_, scratch_;
};

}  // namespace vkprim::test
