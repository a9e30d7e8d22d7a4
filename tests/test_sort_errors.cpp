// RadixSort errors: every refused description or call returns the documented Status with a message naming
// the problem, and a refused record leaves the command buffer empty (the keys keep their values).
#include <cstdint>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "vkprim/sort.hpp"

using namespace vkprim;

namespace {

SortDesc valid_desc() {
  SortDesc d;
  d.max_count = 1000;
  d.algorithm = SortAlgorithm::reduce_then_scan;
  return d;
}

// valid_desc() with one change.
template <class Change>
SortDesc changed(Change&& change) {
  SortDesc d = valid_desc();
  change(d);
  return d;
}

void expect_create_error(Context& context, const SortDesc& d, Status status, const std::string& words) {
  auto plan = RadixSort::create(context, d);
  REQUIRE_FALSE(plan.ok());
  INFO("message: " << plan.error().message);
  CHECK(plan.status() == status);
  CHECK(plan.error().message.find(words) != std::string::npos);
}

}  // namespace

TEST_CASE("RadixSort::create refuses bad counts, bits, value sizes, enums and tile shapes with invalid_argument",
          "[sort][errors]") {
  Device& dev = test::device();
  Context& c = dev.context();
  const Status bad = Status::invalid_argument;
  expect_create_error(c, changed([](SortDesc& d) { d.max_count = 0; }), bad, "max_count");
  expect_create_error(c, changed([](SortDesc& d) { d.max_count = uint64_t(1) << 30; }), bad, "2^30");
  expect_create_error(c, changed([](SortDesc& d) { d.value_size = 2; }), bad, "value_size");
  expect_create_error(c, changed([](SortDesc& d) { d.value_size = 18; }), bad, "multiple of 4");
  expect_create_error(c, changed([](SortDesc& d) { d.value_size = 68; }), bad, "up to 64");
  expect_create_error(c, changed([](SortDesc& d) { d.begin_bit = d.end_bit = 8; }), bad, "begin_bit < end_bit");
  expect_create_error(c, changed([](SortDesc& d) { d.end_bit = 33; }), bad, "end_bit <= 32");
  expect_create_error(c, changed([](SortDesc& d) { d.begin_bit = 40; }), bad, "begin_bit");
  expect_create_error(c, changed([](SortDesc& d) { d.algorithm = SortAlgorithm(7); }), bad, "algorithm");
  expect_create_error(c, changed([](SortDesc& d) { d.order = SortOrder(3); }), bad, "order");
  expect_create_error(c, changed([](SortDesc& d) { d.ranking = SortRanking(7); }), bad, "ranking");
  expect_create_error(c, changed([](SortDesc& d) { d.scatter = SortScatter(7); }), bad, "scatter");
  expect_create_error(c, changed([](SortDesc& d) { d.tuning.workgroup_size = 128; }), bad, "tuning.workgroup_size");
  expect_create_error(c, changed([](SortDesc& d) { d.tuning.workgroup_size = 320; }), bad, "multiple of 128");
  expect_create_error(c, changed([](SortDesc& d) { d.tuning.workgroup_size = 1152; }), bad, "multiple of 128");
  expect_create_error(c, changed([](SortDesc& d) { d.tuning.items_per_thread = 33; }), bad, "tuning.items_per_thread");
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("RadixSort::create refuses 64-bit keys without shaderInt64, onesweep without the memory model and keys "
          "past one binding with unsupported",
          "[sort][errors]") {
  test::DeviceSetup o;
  o.testing.mask_features = feature_int64 | feature_memory_model;
  o.testing.max_storage_buffer_range = 1 << 20;
  Device& dev = test::device(o);
  Context& c = dev.context();
  const Status unsupported = Status::unsupported;
  expect_create_error(c, changed([](SortDesc& d) { d.key_type = DataType::u64; }), unsupported, "shaderInt64");
  expect_create_error(c, changed([](SortDesc& d) { d.key_type = DataType::f64; }), unsupported, "shaderInt64");
  expect_create_error(c, changed([](SortDesc& d) { d.algorithm = SortAlgorithm::onesweep; }), unsupported,
                      "vulkanMemoryModel");
  expect_create_error(c, changed([](SortDesc& d) { d.max_count = (1 << 20) / 4 + 1; }), unsupported,
                      "storage-buffer binding");
  expect_create_error(c, changed([](SortDesc& d) {
                        d.max_count = (1 << 20) / 8;
                        d.value_size = 8;
                      }),
                      unsupported, "values");
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("RadixSort::record refuses bad buffers, counts and overlaps with invalid_argument and records nothing",
          "[sort][errors]") {
  Device& dev = test::device();
  for (SortAlgorithm a : {SortAlgorithm::onesweep, SortAlgorithm::reduce_then_scan}) {
    if (a == SortAlgorithm::onesweep && !dev.context().capabilities().has(feature_memory_model)) continue;
    SortDesc d = valid_desc();
    d.algorithm = a;
    d.value_size = 4;
    auto made = RadixSort::create(dev.context(), d);
    REQUIRE(made.ok());
    const RadixSort& plan = made.value();
    const uint64_t n = 1000;
    Buffer keys = test::make_buffer(dev, 8 * n), values = test::make_buffer(dev, 8 * n);
    Buffer scratch = test::make_buffer(dev, plan.scratch_requirements().size + 64);
    std::vector<uint32_t> original(2 * n);
    for (uint64_t i = 0; i < 2 * n; ++i) original[i] = uint32_t(2 * n - i);
    test::upload(dev, keys, original);
    auto expect = [&](const char* words, auto&& call) {
      const Result<void> r = test::recorded_result(dev, call);
      INFO(to_string(a) << " message: " << r.message());
      CHECK(r.status() == Status::invalid_argument);
      CHECK(r.message().find(words) != std::string::npos);
      CHECK(test::download<uint32_t>(dev, keys, 2 * n) == original);
    };
    const BufferRange s = scratch.range();
    expect("exceeds max_count", [&](VkCommandBuffer cmd) { return plan.record(cmd, keys.range(), values.range(), n + 1, s); });
    expect("keys buffer is VK_NULL_HANDLE", [&](VkCommandBuffer cmd) { return plan.record(cmd, {}, values.range(), n, s); });
    expect("values buffer is VK_NULL_HANDLE", [&](VkCommandBuffer cmd) { return plan.record(cmd, keys.range(), {}, n, s); });
    expect("keys range holds", [&](VkCommandBuffer cmd) { return plan.record(cmd, keys.range(0, 4 * n - 4), values.range(), n, s); });
    expect("keys offset 2", [&](VkCommandBuffer cmd) { return plan.record(cmd, keys.range(2, 4 * n), values.range(), n, s); });
    expect("scratch range holds", [&](VkCommandBuffer cmd) {
      return plan.record(cmd, keys.range(), values.range(), n, scratch.range(0, plan.scratch_requirements().size - 4));
    });
    expect("scratch buffer is VK_NULL_HANDLE", [&](VkCommandBuffer cmd) { return plan.record(cmd, keys.range(), values.range(), n, {}); });
    expect("scratch offset", [&](VkCommandBuffer cmd) {
      return plan.record(cmd, keys.range(), values.range(), n, scratch.range(4, plan.scratch_requirements().size));
    });
    expect("keys and values ranges overlap", [&](VkCommandBuffer cmd) {
      return plan.record(cmd, keys.range(0, 4 * n), keys.range(4 * n - 8, 4 * n), n, s);
    });
    expect("scratch and keys ranges overlap", [&](VkCommandBuffer cmd) {
      return plan.record(cmd, scratch.range(0, 4 * n), values.range(), n, s);
    });
    expect("scratch and values ranges overlap", [&](VkCommandBuffer cmd) {
      return plan.record(cmd, keys.range(), scratch.range(0, 4 * n), n, s);
    });
    expect("count buffer is VK_NULL_HANDLE", [&](VkCommandBuffer cmd) {
      return plan.record_indirect(cmd, keys.range(), values.range(), {}, s);
    });
    expect("count buffer offset", [&](VkCommandBuffer cmd) {
      return plan.record_indirect(cmd, keys.range(), values.range(), values.range(2, 4), s);
    });
    // Keys only: values are ignored, even null.
    SortDesc k = d;
    k.value_size = 0;
    auto keys_only = RadixSort::create(dev.context(), k);
    REQUIRE(keys_only.ok());
    CHECK(keys_only.value().dispatch_count(0) == 0);
    CHECK(keys_only.value().dispatch_count(1) == 0);
    CHECK(keys_only.value().dispatch_count(n) == (a == SortAlgorithm::onesweep ? 5u : 12u));
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}
