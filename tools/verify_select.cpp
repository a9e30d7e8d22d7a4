// The select part of `vkprim verify`: Select and Partition (both rejected orders), every algorithm the device
// accepts, every type and predicate, at a few sizes (one of several tiles), against std::copy_if /
// std::stable_partition.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "commands.hpp"
#include "host_reference.hpp"
#include "host_select.hpp"
#include "select_commands.hpp"
#include "vkprim/select.hpp"

namespace vkprim::tools {

namespace {

template <class T, class Plan>
bool verify_one(const Device& device, const SelectDesc& desc, std::mt19937_64& rng, std::string& why) {
  constexpr bool partition = std::is_same_v<Plan, Partition>;
  const uint64_t sizes[] = {0, 1, 777, 65537};
  auto plan = Plan::create(const_cast<Device&>(device).context(), desc);
  if (!plan) {
    why = plan.error().message;
    return false;
  }
  auto input = device.create_buffer(desc.max_count * sizeof(T));
  auto flags = device.create_buffer(desc.max_count * 4);
  auto output = device.create_buffer(desc.max_count * sizeof(T));
  auto count = device.create_buffer(16);
  auto scratch = device.create_buffer(plan->scratch_requirements().size);
  if (!input || !flags || !output || !count || !scratch) {
    why = "buffer allocation failed";
    return false;
  }
  std::vector<T> host(desc.max_count), got(desc.max_count);
  for (uint64_t n : sizes) {
    host::fill_random(host, rng);
    const std::vector<uint32_t> host_flags = host::random_flags(desc.max_count, 50, rng);
    const T rhs = host[rng() % host.size()];
    auto prepared = device.upload(input.value(), host.data(), desc.max_count * sizeof(T));
    if (prepared) prepared = device.upload(flags.value(), host_flags.data(), desc.max_count * 4);
    if (prepared) prepared = device.fill(output.value(), 0xDEADBEEF);
    if (prepared) prepared = device.fill(count.value(), 0xDEADBEEF);
    if (!prepared) {
      why = prepared.message();
      return false;
    }
    Result<void> recorded;
    auto submitted = device.submit([&](VkCommandBuffer cmd) {
      const SelectOperands operands{
          .input = input->range(0, n * sizeof(T)),
          .flags = desc.predicate == SelectPredicate::flagged ? flags->range(0, n * 4) : BufferRange{},
          .output = output->range(0, n * sizeof(T)),
          .selected_count = count->range(0, 4),
          .scratch = scratch->range()};
      recorded = plan->record(cmd, operands, n, Comparand::of(rhs));
    });
    if (!recorded || !submitted) {
      why = !recorded ? recorded.message() : submitted.message();
      return false;
    }
    uint32_t k = 0;
    auto fetched = device.download(output.value(), got.data(), desc.max_count * sizeof(T));
    if (fetched) fetched = device.download(count.value(), &k, 4);
    if (!fetched) {
      why = fetched.message();
      return false;
    }
    uint64_t kept = 0;
    std::vector<T> expected = host::compact(desc.predicate, host.data(), host_flags.data(), n, rhs, partition, kept);
    if (desc.rejected_order == RejectedOrder::reversed) expected = host::reverse_rejected(expected, kept);
    if (k != kept) {
      why = "n=" + std::to_string(n) + ": selected_count " + std::to_string(k) + ", expected " + std::to_string(kept);
      return false;
    }
    if (std::memcmp(got.data(), expected.data(), expected.size() * sizeof(T)) != 0) {
      why = "n=" + std::to_string(n) + ": output differs from the CPU";
      return false;
    }
    for (uint64_t i = expected.size(); i < desc.max_count; ++i) {
      uint32_t word;
      std::memcpy(&word, &got[i], 4);
      if (word != 0xDEADBEEFu) {
        why = "n=" + std::to_string(n) + ": element " + std::to_string(i) + " past the result was written";
        return false;
      }
    }
  }
  return true;
}

}  // namespace

int verify_select(const Device& device, std::mt19937_64& rng) {
  const Capabilities& caps = device.context().capabilities();
  int passed = 0, failed = 0, skipped = 0, refused = 0;
  for (DataType type : verify_types(caps, skipped)) {
    for (int p = 0; p <= int(SelectPredicate::not_equal); ++p)
      for (int a = int(SelectAlgorithm::chained); a <= int(SelectAlgorithm::count_scan_scatter); ++a)
        for (int plan = 0; plan < 3; ++plan) {  // Select, Partition, Partition with the rejected side reversed
          const bool partition = plan > 0;
          SelectDesc desc{type, 65537, SelectPredicate(p), SelectAlgorithm(a)};
          if (plan == 2) desc.rejected_order = RejectedOrder::reversed;
          if (Select::create(const_cast<Device&>(device).context(), desc).status() == Status::unsupported) {
            ++refused;
            continue;
          }
          std::string why;
          const bool ok = host::with_type(type, [&](auto t) {
            return partition ? verify_one<decltype(t), Partition>(device, desc, rng, why)
                             : verify_one<decltype(t), Select>(device, desc, rng, why);
          });
          if (ok) {
            ++passed;
          } else {
            ++failed;
            const char* what = plan == 2 ? "partition (reversed)" : partition ? "partition" : "select";
            std::printf("FAIL %s %s %s %s: %s\n", what, to_string(SelectAlgorithm(a)), to_string(type),
                        to_string(SelectPredicate(p)), why.c_str());
          }
        }
  }
  std::printf("select: %d passed, %d failed%s%s\n", passed, failed, skipped ? " (64-bit types unsupported: skipped)" : "",
              refused ? " (algorithms the device refuses, e.g. chained without the memory model: skipped)" : "");
  return failed;
}

}  // namespace vkprim::tools
