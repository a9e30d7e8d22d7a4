// The scan part of `vkprim verify`: every scan algorithm x kind x type x op at a few sizes (one of them
// several levels deep) against the CPU reference.
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "commands.hpp"
#include "host_scan.hpp"
#include "scan_commands.hpp"
#include "vkprim/scan.hpp"

namespace vkprim::tools {

namespace {

template <class T>
bool verify_one(const Device& device, const ScanDesc& desc, std::mt19937_64& rng, std::string& why) {
  const uint64_t sizes[] = {0, 1, 777, 65537};
  auto plan = Scan::create(const_cast<Device&>(device).context(), desc);
  if (!plan) {
    why = plan.error().message;
    return false;
  }
  auto input = device.create_buffer(desc.max_count * sizeof(T));
  auto output = device.create_buffer(desc.max_count * sizeof(T));
  auto scratch = device.create_buffer(std::max<VkDeviceSize>(16, plan->scratch_requirements().size));
  if (!input || !output || !scratch) {
    why = "buffer allocation failed";
    return false;
  }
  std::vector<T> host(desc.max_count), got(desc.max_count);
  for (uint64_t n : sizes) {
    host::fill_random(host, rng);
    auto prepared = device.upload(input.value(), host.data(), desc.max_count * sizeof(T));
    if (prepared) prepared = device.fill(output.value(), 0xDEADBEEF);
    if (!prepared) {
      why = prepared.message();
      return false;
    }
    Result<void> recorded;
    auto submitted = device.submit([&](VkCommandBuffer cmd) {
      recorded = plan->record(cmd, input->range(0, n * sizeof(T)), output->range(0, n * sizeof(T)), n,
                              scratch->range());
    });
    if (!recorded || !submitted) {
      why = !recorded ? recorded.message() : submitted.message();
      return false;
    }
    if (auto fetched = device.download(output.value(), got.data(), desc.max_count * sizeof(T)); !fetched) {
      why = fetched.message();
      return false;
    }
    std::string mismatch;
    if (host::first_scan_mismatch(desc.op, desc.kind, host.data(), got.data(), n, plan->float_add_depth(n),
                                  mismatch) != n) {
      why = "n=" + std::to_string(n) + ": " + mismatch;
      return false;
    }
    // Nothing past the output range is written.
    for (uint64_t i = n; i < desc.max_count; ++i) {
      uint32_t word;
      std::memcpy(&word, &got[i], 4);
      if (word != 0xDEADBEEFu) {
        why = "n=" + std::to_string(n) + ": element " + std::to_string(i) + " past the output range was written";
        return false;
      }
    }
  }
  return true;
}

}  // namespace

int verify_scan(const Device& device, std::mt19937_64& rng) {
  const Capabilities& caps = device.context().capabilities();
  int passed = 0, failed = 0, skipped = 0, refused = 0;
  for (DataType type : verify_types(caps, skipped)) {
    for (Op op : verify_ops(type)) {
      for (ScanKind kind : {ScanKind::inclusive, ScanKind::exclusive}) {
        // automatic and every algorithm the device accepts (chained_lookback is refused where there is no
        // forward progress, e.g. lavapipe).
        for (int a = int(ScanAlgorithm::automatic); a <= int(ScanAlgorithm::chained_fallback); ++a) {
          std::string why;
          const ScanDesc desc{type, op, kind, 65537, ScanAlgorithm(a)};
          if (Scan::create(const_cast<Device&>(device).context(), desc).status() == Status::unsupported) {
            ++refused;
            continue;
          }
          const bool ok = host::with_type(type, [&](auto t) { return verify_one<decltype(t)>(device, desc, rng, why); });
          if (ok) {
            ++passed;
          } else {
            ++failed;
            std::printf("FAIL scan %s %s %s %s: %s\n", to_string(ScanAlgorithm(a)), to_string(kind), to_string(type),
                        to_string(op), why.c_str());
          }
        }
      }
    }
  }
  std::printf("scan: %d passed, %d failed%s%s\n", passed, failed, skipped ? " (64-bit types unsupported: skipped)" : "",
              refused ? " (algorithms the device refuses, e.g. chained_lookback without forward progress: skipped)" : "");
  return failed;
}

}  // namespace vkprim::tools
