// `vkprim verify`: every reduce algorithm x type x op at a few sizes against the CPU reference.
#include <cstdio>
#include <random>

#include "by_key_commands.hpp"
#include "commands.hpp"
#include "histogram_commands.hpp"
#include "host_reference.hpp"
#include "scan_commands.hpp"
#include "segmented_commands.hpp"
#include "select_commands.hpp"
#include "sort_commands.hpp"
#include "vkprim/reduce.hpp"

namespace vkprim::tools {

namespace {

template <class T>
bool verify_reduce(const Device& device, DataType type, Op op, ReduceAlgorithm algorithm, std::mt19937_64& rng,
                   std::string& why) {
  const uint64_t sizes[] = {0, 1, 777, 65537};
  const uint64_t max_n = 65537;
  auto plan = Reduce::create(const_cast<Device&>(device).context(), ReduceDesc{type, op, max_n, algorithm});
  if (!plan) {
    why = plan.error().message;
    return false;
  }
  auto input = device.create_buffer(max_n * sizeof(T));
  auto output = device.create_buffer(16);
  auto scratch = device.create_buffer(std::max<VkDeviceSize>(16, plan->scratch_requirements().size));
  if (!input || !output || !scratch) {
    why = "buffer allocation failed";
    return false;
  }
  std::vector<T> host(max_n);
  for (uint64_t n : sizes) {
    host::fill_random(host, rng);
    auto prepared = device.upload(input.value(), host.data(), max_n * sizeof(T));
    if (prepared) prepared = device.fill(output.value(), 0xDEADBEEF);
    if (!prepared) {
      why = prepared.message();
      return false;
    }
    Result<void> recorded;
    auto submitted = device.submit([&](VkCommandBuffer cmd) {
      recorded = plan->record(cmd, input->range(0, n * sizeof(T)), output->range(0, sizeof(T)), n, scratch->range());
    });
    if (!recorded || !submitted) {
      why = !recorded ? recorded.message() : submitted.message();
      return false;
    }
    T got{};
    if (auto fetched = device.download(output.value(), &got, sizeof(T)); !fetched) {
      why = fetched.message();
      return false;
    }
    const T expected = host::reduce<T>(op, host.data(), n);
    bool ok = host::same_bits(got, expected);
    if constexpr (std::is_floating_point_v<T>) {
      if (op == Op::add) {
        const auto exact = host::exact_sum(host.data(), n);
        ok = std::fabs((long double)got - exact.exact) <= host::float_add_bound(exact, n, plan->sequential_run(n));
      }
    }
    if (!ok) {
      why = "n=" + std::to_string(n) + ": got " + std::to_string(double(got)) + ", expected " +
            std::to_string(double(expected));
      return false;
    }
  }
  return true;
}

}  // namespace

int run_verify(std::vector<std::string> args) {
  auto device = open_device(args);
  if (!device) return 1;
  const Capabilities& caps = device->context().capabilities();
  std::printf("verifying on %s\n", caps.device_name.c_str());
  std::mt19937_64 rng(std::random_device{}());
  int passed = 0, failed = 0, skipped = 0;
  for (DataType type : verify_types(caps, skipped)) {
    for (Op op : verify_ops(type)) {
      for (int a = int(ReduceAlgorithm::automatic); a <= int(ReduceAlgorithm::grid_stride); ++a) {
        std::string why;
        const bool ok = host::with_type(type, [&](auto t) {
          return verify_reduce<decltype(t)>(*device, type, op, ReduceAlgorithm(a), rng, why);
        });
        if (ok) {
          ++passed;
        } else {
          ++failed;
          std::printf("FAIL reduce %s %s %s: %s\n", to_string(ReduceAlgorithm(a)), to_string(type), to_string(op),
                      why.c_str());
        }
      }
    }
  }
  std::printf("reduce: %d passed, %d failed%s\n", passed, failed, skipped ? " (64-bit types unsupported: skipped)" : "");
  failed += verify_scan(*device, rng);
  failed += verify_select(*device, rng);
  failed += verify_sort(*device, rng);
  failed += verify_by_key(*device, rng);
  failed += verify_segmented_reduce(*device, rng);
  failed += verify_histogram(*device, rng);
  return failed ? 1 : 0;
}

}  // namespace vkprim::tools
