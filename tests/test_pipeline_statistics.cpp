// Pipeline statistics (VK_KHR_pipeline_executable_properties): a Device asked for them reports every
// pipeline a plan built, with the driver's values, where the physical device supports the extension; where
// it does not (lavapipe in Mesa 22.3), or where capture is off, kernel_statistics() is empty and nothing fails.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "vkprim/device.hpp"
#include "vkprim/reduce.hpp"

using namespace vkprim;

namespace {

// Asked of the driver directly, not through vkprim: VK_KHR_pipeline_executable_properties with
// pipelineExecutableInfo on the device's physical device.
bool driver_supports_statistics(const Device& dev) {
  auto gipa = dev.get_instance_proc_addr();
  auto enumerate = reinterpret_cast<PFN_vkEnumerateDeviceExtensionProperties>(
      gipa(dev.instance(), "vkEnumerateDeviceExtensionProperties"));
  auto features2 =
      reinterpret_cast<PFN_vkGetPhysicalDeviceFeatures2>(gipa(dev.instance(), "vkGetPhysicalDeviceFeatures2"));
  REQUIRE(enumerate != nullptr);
  REQUIRE(features2 != nullptr);
  uint32_t count = 0;
  enumerate(dev.physical_device(), nullptr, &count, nullptr);
  std::vector<VkExtensionProperties> extensions(count);
  enumerate(dev.physical_device(), nullptr, &count, extensions.data());
  bool listed = false;
  for (const auto& e : extensions)
    listed |= std::strcmp(e.extensionName, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME) == 0;
  if (!listed) return false;
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR executable{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  features.pNext = &executable;
  features2(dev.physical_device(), &features);
  return executable.pipelineExecutableInfo == VK_TRUE;
}

// A validated device of its own (the cached test devices never enable the extension).
std::unique_ptr<Device> make_device(bool pipeline_statistics, bool capture_option) {
  DeviceOptions options;
  options.validation = true;
  options.persistent_pipeline_cache = false;
  options.pipeline_statistics = pipeline_statistics;
  options.options.capture_pipeline_statistics = capture_option;
  auto created = Device::create(options);
  INFO("Device::create: " << (created ? std::string("ok") : created.error().message));
  REQUIRE(created.ok());
  return std::move(created).value();
}

}  // namespace

TEST_CASE("DeviceOptions::pipeline_statistics reports the driver's statistics for every Reduce pipeline where the "
          "device supports VK_KHR_pipeline_executable_properties, and nothing (no error) elsewhere",
          "[statistics]") {
  auto dev = make_device(true, false);
  const bool supported = driver_supports_statistics(*dev);
  const Context& context = dev->context();
  INFO("device " << context.capabilities().device_name << ", extension supported: " << supported);
  CHECK(context.capabilities().has(feature_pipeline_statistics) == supported);
  CHECK(context.options().capture_pipeline_statistics == supported);
  {
    // The pipelines built with the capture flag still compute the right result.
    VKPRIM_TEST_RNG(rng);
    test::ReduceRig<uint32_t> rig(*dev, ReduceDesc{DataType::u32, Op::add, 1u << 16});
    CHECK(rig.check(test::random_values<uint32_t>((1u << 16) - 3, rng)));
    const std::vector<KernelStatistics> stats = context.kernel_statistics();
    if (supported) {
      REQUIRE(!stats.empty());
      bool reduce_kernel = false;
      for (const KernelStatistics& k : stats) {
        INFO(k.kernel << " [" << k.variant << "] " << k.workgroup_size << "x" << k.items);
        reduce_kernel |= k.kernel.rfind("reduce/", 0) == 0;
        CHECK(k.workgroup_size > 0);
        CHECK(k.items > 0);
        CHECK(!k.values.empty());
        for (const auto& [name, value] : k.values) {
          CHECK(!name.empty());
          CHECK(!value.empty());
        }
      }
      CHECK(reduce_kernel);
    } else {
      CHECK(stats.empty());
    }
  }
  REQUIRE_NO_VALIDATION_MESSAGES(*dev);
}

TEST_CASE("capture_pipeline_statistics without the extension enabled, or capture off, gives empty statistics",
          "[statistics]") {
  SECTION("capture requested, extension not enabled at vkCreateDevice") {
    auto dev = make_device(false, true);
    CHECK_FALSE(dev->context().capabilities().has(feature_pipeline_statistics));
    {
      auto plan = Reduce::create(dev->context(), ReduceDesc{DataType::u32, Op::add, 1u << 16});
      INFO((plan ? std::string("ok") : plan.error().message));
      REQUIRE(plan.ok());
      CHECK(dev->context().kernel_statistics().empty());
    }
    REQUIRE_NO_VALIDATION_MESSAGES(*dev);
  }
  SECTION("capture off (the shared test device, default options)") {
    Device& dev = test::device();
    auto plan = Reduce::create(dev.context(), ReduceDesc{DataType::u32, Op::add, 1u << 16});
    REQUIRE(plan.ok());
    CHECK(dev.context().kernel_statistics().empty());
    REQUIRE_NO_VALIDATION_MESSAGES(dev);
  }
}
