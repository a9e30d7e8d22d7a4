// Runtime paths behind the plans: the no-subgroup emulation, masked features, the descriptor sets
// written per record without push descriptors, workgroup counts spilling into y/z, storage-range windows
// (lowered limits and one real input past lavapipe's 128 MiB), and recording from several threads.
#include <array>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "test_support.hpp"
#include "vkprim/reduce_by_key.hpp"
#include "vkprim/scan.hpp"
#include "vkprim/select.hpp"
#include "vkprim/sort.hpp"

using namespace vkprim;
using vkprim::test::ReduceRig;

namespace {

// Runs `desc` (with T the C++ type of desc.type) over fresh random data at every size; shifted runs
// place the input and output at unaligned element offsets.
template <class T>
void check_sizes(Device& dev, ReduceDesc desc, const std::vector<uint64_t>& sizes, std::mt19937_64& rng,
                 bool also_shifted = false) {
  uint64_t largest = 0;
  for (uint64_t n : sizes) largest = std::max(largest, n);
  desc.max_count = std::max<uint64_t>(largest, 1);
  ReduceRig<T> rig(dev, desc);
  for (uint64_t n : sizes) {
    const auto data = test::random_values<T>(n, rng);
    CHECK(rig.check(data));
    if (also_shifted) CHECK(rig.check(data, 3, 1));
  }
}

void check_all_types_ops(Device& dev, ReduceAlgorithm algorithm, const std::vector<uint64_t>& sizes,
                         std::mt19937_64& rng, bool also_shifted = false) {
  for (DataType type : {DataType::u32, DataType::i32, DataType::f32, DataType::u64, DataType::i64, DataType::f64}) {
    if (!test::type_supported(dev.context(), type)) continue;
    for (Op op : test::ops_for(type))
      host::with_type(type, [&](auto t) {
        check_sizes<decltype(t)>(dev, ReduceDesc{type, op, 0, algorithm}, sizes, rng, also_shifted);
      });
  }
}

const std::vector<uint64_t> kSmallEdgeSizes = {0, 1, 7, 8, 9, 33, 255, 256, 257, 511, 512, 513, 2047, 2048, 2049,
                                               4095, 4096, 4097, 65537};

void check_no_subgroups(ReduceAlgorithm algorithm) {
  Device& dev = test::device(test::no_subgroups());
  VKPRIM_TEST_RNG(rng);
  check_all_types_ops(dev, algorithm, kSmallEdgeSizes, rng);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

}  // namespace

TEST_CASE("unrolled_subgroup without subgroup operations (force_no_subgroups) matches the CPU for every type and op",
          "[runtime][nosg]") {
  check_no_subgroups(ReduceAlgorithm::unrolled_subgroup);
}
TEST_CASE("unrolled_complete without subgroup operations (force_no_subgroups) matches the CPU for every type and op",
          "[runtime][nosg]") {
  check_no_subgroups(ReduceAlgorithm::unrolled_complete);
}
TEST_CASE("grid_stride without subgroup operations (force_no_subgroups) matches the CPU for every type and op",
          "[runtime][nosg]") {
  check_no_subgroups(ReduceAlgorithm::grid_stride);
}

TEST_CASE("masking subgroup arithmetic falls back to the shared-memory emulation and stays correct",
          "[runtime][nosg][mask]") {
  Device& dev = test::device_without(feature_subgroup_arithmetic);
  VKPRIM_TEST_RNG(rng);
  for (ReduceAlgorithm a : {ReduceAlgorithm::automatic, ReduceAlgorithm::unrolled_subgroup,
                            ReduceAlgorithm::unrolled_complete, ReduceAlgorithm::grid_stride}) {
    check_sizes<uint32_t>(dev, ReduceDesc{DataType::u32, Op::add, 0, a}, {0, 1, 9, 257, 4097, 100003}, rng);
    check_sizes<float>(dev, ReduceDesc{DataType::f32, Op::min, 0, a}, {1, 31, 513, 4095, 70001}, rng);
    if (test::type_supported(dev.context(), DataType::i64))
      check_sizes<int64_t>(dev, ReduceDesc{DataType::i64, Op::max, 0, a}, {1, 33, 2049, 70001}, rng);
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("masking subgroup extended types keeps 64-bit integer reduces correct", "[runtime][nosg][mask]") {
  Device& dev = test::device_without(feature_subgroup_extended_types);
  if (!test::type_supported(dev.context(), DataType::u64)) {
    test::skip("no shaderInt64");
    return;
  }
  VKPRIM_TEST_RNG(rng);
  for (ReduceAlgorithm a : {ReduceAlgorithm::unrolled_subgroup, ReduceAlgorithm::unrolled_complete,
                            ReduceAlgorithm::grid_stride}) {
    check_sizes<uint64_t>(dev, ReduceDesc{DataType::u64, Op::add, 0, a}, {1, 9, 513, 2049, 70001}, rng);
    check_sizes<int64_t>(dev, ReduceDesc{DataType::i64, Op::min, 0, a}, {1, 9, 513, 2049, 70001}, rng);
    check_sizes<uint32_t>(dev, ReduceDesc{DataType::u32, Op::bit_xor, 0, a}, {1, 9, 4097, 70001}, rng);
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

namespace {

// What the driver offers of 8- and 16-bit storage-buffer access (Vulkan 1.2 feature structs; nothing on 1.1).
std::pair<bool, bool> supported_storage_8_16(const Device& dev) {
  auto get_features = reinterpret_cast<PFN_vkGetPhysicalDeviceFeatures2>(
      dev.get_instance_proc_addr()(dev.instance(), "vkGetPhysicalDeviceFeatures2"));
  REQUIRE(get_features);
  if (dev.context().capabilities().api_version < VK_API_VERSION_1_2) return {false, false};
  VkPhysicalDeviceVulkan12Features v12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan11Features v11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  v11.pNext = &v12;
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  features.pNext = &v11;
  get_features(dev.physical_device(), &features);
  return {v12.storageBuffer8BitAccess == VK_TRUE, v11.storageBuffer16BitAccess == VK_TRUE};
}

}  // namespace

TEST_CASE("a Device enables 8- and 16-bit storage where the driver has them, and masking hides only them",
          "[runtime][mask]") {
  Device& dev = test::device();
  const Capabilities& caps = dev.context().capabilities();
  const auto [has8, has16] = supported_storage_8_16(dev);
  if (caps.driver_id == VK_DRIVER_ID_MESA_LLVMPIPE) {
    CHECK(has8);  // lavapipe has both: the comparisons below are not vacuous there
    CHECK(has16);
  }
  CHECK(caps.has(feature_storage_8bit) == has8);
  CHECK(caps.has(feature_storage_16bit) == has16);

  const uint32_t storage = feature_storage_8bit | feature_storage_16bit;
  Device& masked = test::device_without(storage);
  CHECK(masked.context().capabilities().features == (caps.features & ~storage));
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
  REQUIRE_NO_VALIDATION_MESSAGES(masked);
}

// ---------------------------------------------------------------------------------------------------
// Descriptor sets instead of push descriptors.

namespace {

Device& no_push_device(uint32_t sets_per_pool = 64) {
  ContextOptions options;
  options.disable_push_descriptors = true;
  options.descriptor_sets_per_pool = sets_per_pool;
  Device& dev = test::device(options);
  CHECK_FALSE(dev.context().capabilities().has(feature_push_descriptors));
  return dev;
}

PFN_vkCmdPipelineBarrier load_barrier(const Device& dev) {
  auto gdpa = reinterpret_cast<PFN_vkGetDeviceProcAddr>(
      dev.get_instance_proc_addr()(dev.instance(), "vkGetDeviceProcAddr"));
  return reinterpret_cast<PFN_vkCmdPipelineBarrier>(gdpa(dev.device(), "vkCmdPipelineBarrier"));
}

// What a caller places between two reductions that reuse the same output and scratch.
void compute_to_compute(PFN_vkCmdPipelineBarrier barrier, VkCommandBuffer cmd) {
  VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  b.srcAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  b.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  barrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &b, 0, nullptr, 0,
          nullptr);
}

}  // namespace

TEST_CASE("without push descriptors every algorithm matches the CPU through descriptor sets",
          "[runtime][descriptors]") {
  Device& dev = no_push_device();
  VKPRIM_TEST_RNG(rng);
  for (int a = 0; a <= int(ReduceAlgorithm::grid_stride); ++a) {
    check_sizes<uint32_t>(dev, ReduceDesc{DataType::u32, Op::add, 0, ReduceAlgorithm(a)}, {0, 1, 257, 4097, 100003},
                          rng, true);
    check_sizes<double>(dev, ReduceDesc{DataType::f64, Op::max, 0, ReduceAlgorithm(a)}, {1, 513, 70001}, rng);
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("without push descriptors one plan records 200 times, its sets spread over many small pools",
          "[runtime][descriptors]") {
  Device& dev = no_push_device(4);
  VKPRIM_TEST_RNG(rng);
  auto barrier = load_barrier(dev);
  REQUIRE(barrier);
  for (ReduceAlgorithm a : {ReduceAlgorithm::sequential, ReduceAlgorithm::unrolled_complete,
                            ReduceAlgorithm::grid_stride}) {
    INFO(to_string(a));
    const uint64_t n = 100003;
    auto plan = test::make_reduce(dev.context(), ReduceDesc{DataType::u32, Op::bit_xor, n, a});
    auto input = test::make_buffer(dev, n * 4);
    auto output = test::make_buffer(dev, 16);
    auto scratch = test::make_scratch(dev, plan);
    const auto data = test::random_values<uint32_t>(n, rng);
    test::upload(dev, input, data);
    for (int submit = 0; submit < 2; ++submit) {
      test::poison(dev, output);
      std::vector<Result<void>> recorded(100);
      auto submitted = test::submit_compute(dev, [&](VkCommandBuffer cmd) {
        for (size_t i = 0; i < recorded.size(); ++i) {
          if (i) compute_to_compute(barrier, cmd);
          recorded[i] = plan.record(cmd, input.range(0, n * 4), output.range(0, 4), n, scratch.range());
        }
      });
      REQUIRE(submitted.ok());
      for (const auto& r : recorded) {
        INFO(r.message());
        REQUIRE(r.ok());
      }
      const auto words = test::download<uint32_t>(dev, output, 4);
      CHECK(words[0] == host::reduce<uint32_t>(Op::bit_xor, data.data(), n));
      CHECK(words[1] == test::kPoison);
    }
    plan.release_descriptor_sets();
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("without push descriptors records never run out of sets, and sets released after completion are reused",
          "[runtime][descriptors]") {
  // Pools of two sets, three passes per record: every record needs a second pool, and 40 records need 60.
  Device& dev = no_push_device(2);
  VKPRIM_TEST_RNG(rng);
  const uint64_t n = 70000;  // three levels of the one-element kernels: three passes, three sets
  auto plan = test::make_reduce(dev.context(), ReduceDesc{DataType::u32, Op::add, n, ReduceAlgorithm::sequential});
  REQUIRE(plan.dispatch_count(n) == 3);
  auto input = test::make_buffer(dev, n * 4);
  auto output = test::make_buffer(dev, 64 * 4);
  auto scratch = test::make_scratch(dev, plan);
  const auto data = test::random_values<uint32_t>(n, rng);
  const uint32_t expected = host::reduce<uint32_t>(Op::add, data.data(), n);
  test::upload(dev, input, data);
  auto record_slots = [&](uint32_t first, uint32_t count) {
    std::vector<Result<void>> recorded(count);
    auto submitted = test::submit_compute(dev, [&](VkCommandBuffer cmd) {
      for (uint32_t i = 0; i < count; ++i)
        recorded[i] = plan.record(cmd, input.range(0, n * 4), output.range((first + i) * 4, 4), n, scratch.range());
    });
    REQUIRE(submitted.ok());
    for (uint32_t i = 0; i < count; ++i) {
      INFO("slot " << first + i << ": " << recorded[i].message());
      REQUIRE(recorded[i].ok());
    }
  };
  test::poison(dev, output);
  // Records into one command buffer share scratch, which the records' own barriers order.
  record_slots(0, 40);
  auto words = test::download<uint32_t>(dev, output, 64);
  for (uint32_t slot = 0; slot < 40; ++slot) CHECK(words[slot] == expected);
  for (uint32_t slot = 40; slot < 64; ++slot) CHECK(words[slot] == test::kPoison);
  // submit waited, so every set may return to the pools.
  plan.release_descriptor_sets();
  record_slots(40, 20);
  words = test::download<uint32_t>(dev, output, 64);
  for (uint32_t slot = 0; slot < 60; ++slot) CHECK(words[slot] == expected);
  for (uint32_t slot = 60; slot < 64; ++slot) CHECK(words[slot] == test::kPoison);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("without push descriptors a buffer handle reused after vkDestroyBuffer binds the new buffer",
          "[runtime][descriptors]") {
  // A cache keyed by buffer handles would hand the second record the set written for the destroyed
  // buffer when the driver gives the new buffer the same handle. The validation layer wraps handles in
  // ids it never reuses, so this case runs on a device of its own without validation, where lavapipe's
  // handles are heap pointers that come back. Buffers are created and destroyed until the handle does, and
  // either way every reduction must be of the buffer it was recorded with.
  DeviceOptions options;
  options.validation = false;
  options.options.disable_push_descriptors = true;
  auto created = Device::create(options);
  INFO((created ? std::string("device ok") : created.error().message));
  REQUIRE(created.ok());
  Device& dev = *created.value();
  VKPRIM_TEST_RNG(rng);
  const uint64_t n = 4099;
  {
    auto plan = test::make_reduce(dev.context(), ReduceDesc{DataType::u32, Op::add, n, ReduceAlgorithm::grid_stride});
    auto output = test::make_buffer(dev, 16);
    auto scratch = test::make_scratch(dev, plan);
    auto reduce_of = [&](const Buffer& input) {
      test::poison(dev, output);
      Result<void> recorded;
      auto submitted = test::submit_compute(dev, [&](VkCommandBuffer cmd) {
        recorded = plan.record(cmd, input.range(0, n * 4), output.range(0, 4), n, scratch.range());
      });
      REQUIRE(submitted.ok());
      INFO(recorded.message());
      REQUIRE(recorded.ok());
      return test::download<uint32_t>(dev, output, 1)[0];
    };
    bool reused = false;
    VkBuffer previous = VK_NULL_HANDLE;
    for (int attempt = 0; attempt < 16 && !reused; ++attempt) {
      auto input = test::make_buffer(dev, n * 4);
      reused = input.handle() == previous;
      previous = input.handle();
      const auto data = test::random_values<uint32_t>(n, rng);
      test::upload(dev, input, data);
      INFO("attempt " << attempt << (reused ? ", the previous buffer's handle" : ""));
      CHECK(reduce_of(input) == host::reduce<uint32_t>(Op::add, data.data(), n));
    }  // each input is destroyed before the next is created
    if (!reused) WARN("the driver never reused a destroyed buffer's handle: the stale-set hazard was not exercised");
  }
}

TEST_CASE("a plan whose record needs more sets than one pool holds records through several pools",
          "[runtime][descriptors]") {
  Device& dev = no_push_device(1);
  VKPRIM_TEST_RNG(rng);
  const uint64_t n = 70000;  // three passes, pools of one set
  test::ReduceRig<uint32_t> rig(dev, ReduceDesc{DataType::u32, Op::add, n, ReduceAlgorithm::sequential});
  REQUIRE(rig.plan().dispatch_count(n) == 3);
  CHECK(rig.check(test::random_values<uint32_t>(n, rng)));  // the sum, and the rest of the output untouched
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

// ---------------------------------------------------------------------------------------------------
// Dispatch geometry: at most 7 workgroups per dimension, so counts spill into y and z.

namespace {

Device& spill_device() {
  test::DeviceSetup setup;
  setup.testing.max_workgroups_per_dimension = 7;
  Device& dev = test::device(setup);
  const auto& caps = dev.context().capabilities();
  CHECK(caps.max_workgroup_count[0] == 7);
  CHECK(caps.max_workgroup_count[1] == 7);
  CHECK(caps.max_workgroup_count[2] == 7);
  return dev;
}

uint64_t elements_per_group(ReduceAlgorithm a, DataType type) {
  switch (a) {
    case ReduceAlgorithm::interleaved_divergent:
    case ReduceAlgorithm::interleaved_strided:
    case ReduceAlgorithm::sequential: return 256;
    case ReduceAlgorithm::first_add_during_load:
    case ReduceAlgorithm::unrolled_subgroup:
    case ReduceAlgorithm::unrolled_complete: return 512;
    default: return 256 * 4 * (16 / size_of(type));
  }
}

}  // namespace

TEST_CASE("workgroup counts above the per-dimension limit spill into y and z and give the right results",
          "[runtime][spill]") {
  Device& dev = spill_device();
  VKPRIM_TEST_RNG(rng);
  for (int a = 0; a <= int(ReduceAlgorithm::grid_stride); ++a) {
    const auto algorithm = ReduceAlgorithm(a);
    const bool grid = algorithm == ReduceAlgorithm::automatic || algorithm == ReduceAlgorithm::grid_stride;
    for (DataType type : {DataType::u32, DataType::f64}) {
      if (!test::type_supported(dev.context(), type)) continue;
      const uint64_t e = elements_per_group(algorithm, type);
      // x only (7 groups), into y (8), y full (49), into z (50), z partly (100), every group (343).
      std::vector<uint64_t> sizes = {7 * e, 7 * e + 1, 49 * e - 1, 49 * e + 1, 100 * e + 3, 343 * e};
      if (grid) sizes = {7 * e, 8 * e + 1, 50 * e + 1, 64 * e + 5, 300 * e + 7};  // the grid is capped
      host::with_type(type, [&](auto t) {
        check_sizes<decltype(t)>(dev, ReduceDesc{type, type == DataType::u32 ? Op::add : Op::max, 0, algorithm},
                                 sizes, rng);
      });
    }
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("a count needing more workgroups than x*y*z allows fails cleanly without recording anything",
          "[runtime][spill]") {
  Device& dev = spill_device();
  const uint64_t n = 344 * 256;  // 344 > 7*7*7 groups of the one-element kernels
  auto created = Reduce::create(dev.context(), ReduceDesc{DataType::u32, Op::add, n, ReduceAlgorithm::sequential});
  if (!created) {
    // Rejecting the plan up front is acceptable too.
    INFO(created.error().message);
    CHECK(created.status() == Status::unsupported);
  } else {
    const Reduce& plan = created.value();
    auto input = test::make_buffer(dev, n * 4);
    auto output = test::make_buffer(dev, 16);
    auto scratch = test::make_scratch(dev, plan);
    for (const Buffer* b : {&input, &output, &scratch}) test::poison(dev, *b);
    Result<void> recorded;
    auto submitted = test::submit_compute(dev, [&](VkCommandBuffer cmd) {
      recorded = plan.record(cmd, input.range(0, n * 4), output.range(0, 4), n, scratch.range());
    });
    REQUIRE(submitted.ok());
    INFO(recorded.message());
    CHECK_FALSE(recorded.ok());
    CHECK(recorded.message().find("workgroups") != std::string::npos);
    CHECK(test::still_poisoned(dev, output));
    CHECK(test::still_poisoned(dev, scratch));
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

// ---------------------------------------------------------------------------------------------------
// Storage-range windows.

namespace {

Device& window_device() {
  Device& dev = test::device(test::small_windows());
  CHECK(dev.context().capabilities().max_storage_buffer_range == 64 * 1024);
  return dev;
}

}  // namespace

TEST_CASE("inputs larger than a 64 KiB storage range are reduced in windows by every algorithm",
          "[runtime][windows]") {
  Device& dev = window_device();
  VKPRIM_TEST_RNG(rng);
  for (int a = 0; a <= int(ReduceAlgorithm::grid_stride); ++a) {
    const auto algorithm = ReduceAlgorithm(a);
    INFO(to_string(algorithm));
    // A window holds at most (64 KiB - 16) / 4 = 16380 u32: the first level alone takes 7 dispatches.
    auto probe = test::make_reduce(dev.context(), ReduceDesc{DataType::u32, Op::add, 100003, algorithm});
    CHECK(probe.dispatch_count(100003) >= 100003 / 16380 + 2);
    // Counts at exact multiples of this plan's window, and one past them.
    const uint64_t e = elements_per_group(algorithm, DataType::u32);
    const uint64_t w = (64 * 1024 - 16) / 4 / e * e;
    check_sizes<uint32_t>(dev, ReduceDesc{DataType::u32, Op::add, 0, algorithm},
                          {w - 1, w, w + 1, 2 * w, 2 * w + 1, 16381, 3 * 16384 + 7, 100003, 262147}, rng, true);
    check_sizes<float>(dev, ReduceDesc{DataType::f32, Op::add, 0, algorithm}, {16385, 100003}, rng, true);
    if (test::type_supported(dev.context(), DataType::i64))
      check_sizes<int64_t>(dev, ReduceDesc{DataType::i64, Op::min, 0, algorithm}, {8191, 8193, 50001}, rng, true);
    if (test::type_supported(dev.context(), DataType::f64))
      check_sizes<double>(dev, ReduceDesc{DataType::f64, Op::add, 0, algorithm}, {8189, 50001}, rng, true);
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("a 4 KiB storage range makes the partials of later levels span several windows too",
          "[runtime][windows]") {
  test::DeviceSetup setup;
  setup.testing.max_storage_buffer_range = 4 * 1024;
  Device& dev = test::device(setup);
  VKPRIM_TEST_RNG(rng);
  for (int a = 0; a <= int(ReduceAlgorithm::grid_stride); ++a) {
    check_sizes<uint32_t>(dev, ReduceDesc{DataType::u32, Op::add, 0, ReduceAlgorithm(a)}, {1, 1021, 262147}, rng,
                          true);
    check_sizes<double>(dev, ReduceDesc{DataType::f64, Op::min, 0, ReduceAlgorithm(a)}, {509, 70001}, rng, true);
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("windows combine with y/z spill", "[runtime][windows][spill]") {
  test::DeviceSetup setup = test::small_windows();
  setup.testing.max_workgroups_per_dimension = 7;
  Device& dev = test::device(setup);
  VKPRIM_TEST_RNG(rng);
  for (ReduceAlgorithm a : {ReduceAlgorithm::sequential, ReduceAlgorithm::unrolled_subgroup,
                            ReduceAlgorithm::grid_stride}) {
    check_sizes<uint32_t>(dev, ReduceDesc{DataType::u32, Op::add, 0, a}, {60001, 87000}, rng, true);
    check_sizes<int32_t>(dev, ReduceDesc{DataType::i32, Op::bit_or, 0, a}, {60001}, rng);
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("grid_stride reduce of 2^25+5 u32 add (input 128 MiB + 20 bytes, past maxStorageBufferRange) matches "
          "the CPU",
          "[runtime][windows][large]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  const uint64_t n = (uint64_t(1) << 25) + 5;
  const auto& caps = dev.context().capabilities();
  INFO("maxStorageBufferRange " << caps.max_storage_buffer_range);
  if (n * 4 <= caps.max_storage_buffer_range) WARN("this device's storage range holds the whole input: no windows");
  ReduceRig<uint32_t> rig(dev, ReduceDesc{DataType::u32, Op::add, n, ReduceAlgorithm::grid_stride});
  if (n * 4 > caps.max_storage_buffer_range) CHECK(rig.plan().dispatch_count(n) >= 3);  // two windows + a level
  CHECK(rig.check(test::random_values<uint32_t>(n, rng)));
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

// ---------------------------------------------------------------------------------------------------
// Recording from several threads into their own command buffers.

namespace {

using test::RawVulkan;

void check_threaded_recording(Device& dev, std::mt19937_64& rng) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 8;
  const uint64_t n = 70001;
  RawVulkan vk(dev);
  auto plan = test::make_reduce(dev.context(), ReduceDesc{DataType::u32, Op::add, n, ReduceAlgorithm::sequential});
  auto input = test::make_buffer(dev, n * 4);
  auto output = test::make_buffer(dev, kThreads * kPerThread * 16);
  std::vector<Buffer> scratch;
  for (int i = 0; i < kThreads * kPerThread; ++i) scratch.push_back(test::make_scratch(dev, plan));
  const auto data = test::random_values<uint32_t>(n, rng);
  test::upload(dev, input, data);
  test::poison(dev, output);

  std::vector<VkCommandPool> pools(kThreads);
  std::vector<VkCommandBuffer> cmds(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    VkCommandPoolCreateInfo info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    info.queueFamilyIndex = dev.queue_family_index();
    REQUIRE(vk.create_pool(dev.device(), &info, nullptr, &pools[t]) == VK_SUCCESS);
    VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    alloc.commandPool = pools[t];
    alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    alloc.commandBufferCount = 1;
    REQUIRE(vk.allocate(dev.device(), &alloc, &cmds[t]) == VK_SUCCESS);
  }
  // Each job reduces a different prefix into its own output slot with its own scratch.
  auto count_of = [&](int job) { return n - uint64_t(job) * 997; };
  std::vector<Result<void>> recorded(kThreads * kPerThread);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
      begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
      vk.begin(cmds[t], &begin);
      VkMemoryBarrier before{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
      before.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
      before.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
      vk.barrier(cmds[t], VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &before, 0,
                 nullptr, 0, nullptr);
      for (int k = 0; k < kPerThread; ++k) {
        const int job = t * kPerThread + k;
        recorded[job] = plan.record(cmds[t], input.range(0, count_of(job) * 4), output.range(job * 16, 4),
                                    count_of(job), scratch[job].range());
      }
      VkMemoryBarrier after{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
      after.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
      after.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
      vk.barrier(cmds[t], VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &after, 0,
                 nullptr, 0, nullptr);
      vk.end(cmds[t]);
    });
  for (auto& th : threads) th.join();
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = kThreads;
  submit.pCommandBuffers = cmds.data();
  CHECK(vk.submit(dev.queue(), 1, &submit, VK_NULL_HANDLE) == VK_SUCCESS);
  CHECK(vk.wait_idle(dev.queue()) == VK_SUCCESS);
  for (int t = 0; t < kThreads; ++t) vk.destroy_pool(dev.device(), pools[t], nullptr);
  const auto words = test::download<uint32_t>(dev, output, kThreads * kPerThread * 4);
  for (int job = 0; job < kThreads * kPerThread; ++job) {
    INFO("job " << job << ": " << recorded[job].message());
    REQUIRE(recorded[job].ok());
    CHECK(words[job * 4] == host::reduce<uint32_t>(Op::add, data.data(), count_of(job)));
  }
}

}  // namespace

TEST_CASE("one plan records from four threads at once, with push descriptors", "[runtime][threads]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  check_threaded_recording(dev, rng);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("one plan records from four threads at once, through descriptor sets from its pools", "[runtime][threads]") {
  Device& dev = no_push_device();
  VKPRIM_TEST_RNG(rng);
  check_threaded_recording(dev, rng);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

// ---------------------------------------------------------------------------------------------------
// Caller-side patterns.

TEST_CASE("input, scratch and output sub-allocated from one buffer reduce correctly", "[runtime][ranges]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  for (ReduceAlgorithm a : {ReduceAlgorithm::sequential, ReduceAlgorithm::unrolled_subgroup,
                            ReduceAlgorithm::grid_stride}) {
    INFO(to_string(a));
    const uint64_t n = 100003;
    auto plan = test::make_reduce(dev.context(), ReduceDesc{DataType::u32, Op::add, n, a});
    const ScratchRequirements need = plan.scratch_requirements();
    const VkDeviceSize input_offset = 4;  // element-aligned only
    const VkDeviceSize scratch_offset = (input_offset + n * 4 + need.alignment - 1) / need.alignment * need.alignment;
    const VkDeviceSize output_offset = scratch_offset + need.size + 12;
    auto buffer = test::make_buffer(dev, output_offset + 64);
    test::poison(dev, buffer);
    const auto data = test::random_values<uint32_t>(n, rng);
    test::upload(dev, buffer, data, input_offset);
    Result<void> recorded;
    auto submitted = test::submit_compute(dev, [&](VkCommandBuffer cmd) {
      recorded = plan.record(cmd, buffer.range(input_offset, n * 4), buffer.range(output_offset, 4), n,
                             buffer.range(scratch_offset, need.size));
    });
    INFO(recorded.message());
    REQUIRE(recorded.ok());
    REQUIRE(submitted.ok());
    const auto words = test::download<uint32_t>(dev, buffer, 3, output_offset - 4);
    CHECK(words[0] == test::kPoison);
    CHECK(words[1] == host::reduce<uint32_t>(Op::add, data.data(), n));
    CHECK(words[2] == test::kPoison);
    CHECK(test::download<uint32_t>(dev, buffer, 1, 0)[0] == test::kPoison);
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("ranges of BufferRange's default size or VK_WHOLE_SIZE are refused with invalid_argument, nothing written",
          "[runtime][ranges]") {
  // Sizes are never guessed: a range of 0 bytes (the default) or VK_WHOLE_SIZE on a 4000-byte buffer, with a
  // count of 4000 u32, was once bound as 16000 bytes (a validation error and heap corruption); scratch as
  // {64-byte buffer, 0, VK_WHOLE_SIZE} was filled past its end.
  Device& dev = test::device();
  const uint64_t n = 4000;
  auto reduce = test::make_reduce(dev.context(), ReduceDesc{DataType::u32, Op::add, n});
  auto created = Scan::create(dev.context(), ScanDesc{DataType::u32, Op::add, ScanKind::inclusive, n});
  REQUIRE(created.ok());
  const Scan scan = std::move(created).value();
  auto input = test::make_buffer(dev, 4000);
  auto output = test::make_buffer(dev, 4000);
  auto small_scratch = test::make_buffer(dev, 64);
  auto scratch = test::make_buffer(dev, std::max<VkDeviceSize>(
                                            {16, reduce.scratch_requirements().size, scan.scratch_requirements().size}));
  test::poison(dev, output);
  test::poison(dev, small_scratch);
  auto refused = [&](const char* plan, const char* why, const std::function<Result<void>(VkCommandBuffer)>& record) {
    const Result<void> r = test::recorded_result(dev, record);
    INFO(plan << ": " << r.message());
    CHECK(r.status() == Status::invalid_argument);
    CHECK(r.message().rfind(plan, 0) == 0);
    CHECK(r.message().find(why) != std::string::npos);
  };
  const BufferRange whole_input{input.handle(), 0, VK_WHOLE_SIZE};
  const BufferRange default_input{input.handle()};
  refused("Reduce", "size 0", [&](VkCommandBuffer cmd) {
    return reduce.record(cmd, default_input, output.range(0, 4), n, scratch.range());
  });
  refused("Reduce", "VK_WHOLE_SIZE", [&](VkCommandBuffer cmd) {
    return reduce.record(cmd, whole_input, output.range(0, 4), n, scratch.range());
  });
  refused("Scan", "VK_WHOLE_SIZE", [&](VkCommandBuffer cmd) {
    return scan.record(cmd, input.range(), BufferRange{output.handle(), 0, VK_WHOLE_SIZE}, n / 4, scratch.range());
  });
  refused("Scan", "VK_WHOLE_SIZE", [&](VkCommandBuffer cmd) {
    return scan.record(cmd, input.range(), output.range(), n / 4, BufferRange{small_scratch.handle(), 0, VK_WHOLE_SIZE});
  });
  CHECK(test::still_poisoned(dev, output));
  CHECK(test::still_poisoned(dev, small_scratch));
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("an override a plan does not read is refused, naming the field", "[runtime][tuning][errors][host]") {
  // Every description has the same Tuning (types.hpp); a field its plan does not read must stay 0, so that a
  // benchmark override is never silently ignored.
  Device& dev = test::device();
  Context& c = dev.context();
  auto refused = [](const char* plan, const char* field, auto created) {
    INFO(plan << " with tuning." << field << " set: " << (created ? std::string("created") : created.error().message));
    REQUIRE_FALSE(created.ok());
    CHECK(created.status() == Status::invalid_argument);
    CHECK(created.error().message.rfind(plan, 0) == 0);
    CHECK(created.error().message.find(std::string("tuning.") + field) != std::string::npos);
  };
  auto created_fine = [](const char* plan, auto created) {
    INFO(plan << ": " << (created ? std::string("created") : created.error().message));
    CHECK(created.ok());
  };

  SelectDesc select{DataType::u32, 1000, SelectPredicate::flagged};  // reads workgroup_size, vectors_per_thread
  select.tuning.items_per_thread = 4;
  refused("Select", "items_per_thread", Select::create(c, select));
  refused("Partition", "items_per_thread", Partition::create(c, select));
  select.tuning.items_per_thread = 0;
  created_fine("Select", Select::create(c, select));
  created_fine("Partition", Partition::create(c, select));

  SortDesc sort;  // reads workgroup_size, items_per_thread
  sort.max_count = 1000;
  sort.tuning.vectors_per_thread = 2;
  refused("RadixSort", "vectors_per_thread", RadixSort::create(c, sort));
  sort.tuning.vectors_per_thread = 0;
  created_fine("RadixSort", RadixSort::create(c, sort));

  // Scan reads overrides only for the chained algorithms.
  ScanDesc scan{DataType::u32, Op::add, ScanKind::inclusive, 1000, ScanAlgorithm::reduce_then_scan};
  scan.tuning.workgroup_size = 256;
  refused("Scan", "workgroup_size", Scan::create(c, scan));
  scan.tuning.workgroup_size = 0;
  created_fine("Scan", Scan::create(c, scan));

  ReduceByKeyDesc by_key{DataType::u32, DataType::u32, Op::add, 1000};  // reads workgroup_size, items_per_thread
  by_key.tuning.lookback_windows = 1;
  refused("ReduceByKey", "lookback_windows", ReduceByKey::create(c, by_key));
  by_key.tuning.lookback_windows = 0;
  created_fine("ReduceByKey", ReduceByKey::create(c, by_key));
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

// Run only by the case below, in a process of its own.
TEST_CASE("lifetime child: destroys a Context while a plan created from it lives", "[.][lifetime_child]") {
  DeviceOptions options;
  options.persistent_pipeline_cache = false;
  auto dev = Device::create(options);
  if (!dev) std::_Exit(3);
  auto plan = Reduce::create(dev.value()->context(), ReduceDesc{DataType::u32, Op::add, 1000});
  if (!plan) std::_Exit(4);
  dev.value().reset();  // destroys the Context first: must abort here
  std::_Exit(0);
}

TEST_CASE("destroying a Context while a plan created from it lives aborts with a message", "[runtime][lifetime]") {
  // Without the check a plan recorded (or destroyed) after its Context died used freed memory. A new
  // process: a forked child may not use the GPU driver its parent initialised (on an H200 a forked child
  // neither aborted nor wrote a word).
  const test::ChildOutcome out =
      test::run_case_in_new_process("lifetime child: destroys a Context while a plan created from it lives");
  INFO("stderr: " << out.stderr_text << "\nexit code: " << out.exit_code);
  CHECK(out.aborted);
  CHECK(out.stderr_text.find("Context destroyed while 1 plans created from it are alive") != std::string::npos);
}

TEST_CASE("plans are created from four threads at once on one context", "[runtime][threads]") {
  ContextOptions options;
  options.debug_labels = false;  // also a context without debug labels
  Device& dev = test::device(options);
  VKPRIM_TEST_RNG(rng);
  struct Job {
    DataType type;
    Op op;
    ReduceAlgorithm algorithm;
  };
  std::vector<Job> jobs;
  for (DataType type : {DataType::u32, DataType::i32, DataType::f32, DataType::u64})
    for (ReduceAlgorithm a : {ReduceAlgorithm::sequential, ReduceAlgorithm::unrolled_complete,
                              ReduceAlgorithm::grid_stride})
      for (Op op : {Op::add, Op::min}) jobs.push_back({type, op, a});
  std::vector<std::unique_ptr<Result<Reduce>>> plans(jobs.size());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      // Every thread creates every plan, so threads race on the same kernels.
      for (size_t i = 0; i < jobs.size(); ++i) {
        const size_t j = (i + size_t(t) * 5) % jobs.size();
        auto plan = std::make_unique<Result<Reduce>>(
            Reduce::create(dev.context(), ReduceDesc{jobs[j].type, jobs[j].op, 70001, jobs[j].algorithm}));
        if (t == 0) plans[j] = std::move(plan);
      }
    });
  for (auto& th : threads) th.join();
  for (size_t j = 0; j < jobs.size(); ++j) {
    REQUIRE(plans[j]);
    INFO(to_string(jobs[j].type) << " " << to_string(jobs[j].op) << " " << to_string(jobs[j].algorithm) << ": "
                                 << (plans[j]->ok() ? std::string("ok") : plans[j]->error().message));
    REQUIRE(plans[j]->ok());
  }
  // The plans made concurrently work.
  ReduceRig<float> rig(dev, ReduceDesc{DataType::f32, Op::min, 70001, ReduceAlgorithm::grid_stride});
  CHECK(rig.check(test::random_values<float>(70001, rng)));
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("the validation layer with synchronization validation is live: an unsynchronized write-after-write is "
          "reported",
          "[runtime][validation]") {
  Device& dev = test::device();
  auto buffer = test::make_buffer(dev, 256);
  auto gdpa = reinterpret_cast<PFN_vkGetDeviceProcAddr>(
      dev.get_instance_proc_addr()(dev.instance(), "vkGetDeviceProcAddr"));
  auto fill = reinterpret_cast<PFN_vkCmdFillBuffer>(gdpa(dev.device(), "vkCmdFillBuffer"));
  REQUIRE(fill);
  auto submitted = dev.submit([&](VkCommandBuffer cmd) {
    fill(cmd, buffer.handle(), 0, 256, 1u);
    fill(cmd, buffer.handle(), 0, 256, 2u);  // no barrier: a write-after-write hazard
  });
  REQUIRE(submitted.ok());
  CHECK(dev.validation_message_count() > 0);
  bool hazard = false;
  for (const auto& m : dev.validation_messages())
    if (m.find("WRITE-AFTER-WRITE") != std::string::npos || m.find("WRITE_AFTER_WRITE") != std::string::npos)
      hazard = true;
  INFO(test::describe_messages(dev));
  CHECK(hazard);
  dev.clear_validation_messages();
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("grid_stride reduce of 2^24+3 f64 add (input 128 MiB + 24 bytes, past maxStorageBufferRange) stays within "
          "the float bound",
          "[runtime][windows][large]") {
  Device& dev = test::device();
  if (!test::type_supported(dev.context(), DataType::f64)) {
    test::skip("no shaderFloat64");
    return;
  }
  VKPRIM_TEST_RNG(rng);
  const uint64_t n = (uint64_t(1) << 24) + 3;
  ReduceRig<double> rig(dev, ReduceDesc{DataType::f64, Op::add, n, ReduceAlgorithm::grid_stride});
  if (n * 8 > dev.context().capabilities().max_storage_buffer_range) CHECK(rig.plan().dispatch_count(n) >= 3);
  CHECK(rig.check(test::random_values<double>(n, rng)));
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}
