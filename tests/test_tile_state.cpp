// The chained scans' tile-state protocol (shaders/common/tile_state.glsl) under a message-passing
// litmus test: many slots, writer and reader workgroups in permuted orders, every encoding the device
// supports (one 64-bit word per state, or 16-bit halves over 2 or 4 u32 words). The litmus kernel also
// shows build_kernel refusing a specialization constant that a kernel does not declare.
#include <catch2/catch.hpp>

#include "context_impl.hpp"
#include "dispatch.hpp"
#include "shader_groups.hpp"
#include "test_support.hpp"

using namespace vkprim;
using namespace vkprim::test;

namespace {

struct LitmusResult {
  uint32_t violations = 0, saw_aggregate = 0, saw_inclusive = 0, not_ready_reads = 0;
};

LitmusResult run_litmus(Device& dev, detail::KernelName litmus, const char* variant, uint32_t slots,
                        uint32_t seed, uint32_t polls, uint32_t parts) {
  auto& c = dev.context().impl();
  detail::KernelDesc kd{litmus};
  kd.group = &detail::kShaderGroup_test;
  kd.variant = variant;
  kd.workgroup_size = 32;
  auto kernel = detail::get_kernel(c, kd);
  INFO((kernel.ok() ? std::string() : kernel.error().message));
  REQUIRE(kernel.ok());
  Buffer data = make_buffer(dev, slots * 4);
  Buffer results = make_buffer(dev, 16);
  Buffer state = make_buffer(dev, (16 + VkDeviceSize(slots) * parts) * 4);
  REQUIRE(dev.fill(data, 0).ok());
  REQUIRE(dev.fill(results, 0).ok());
  REQUIRE(dev.fill(state, 0).ok());
  detail::Pass pass;
  pass.kernel = kernel.value();
  pass.buffers[0] = {data.handle(), 0, data.size()};
  pass.buffers[1] = {results.handle(), 0, results.size()};
  pass.buffers[2] = {state.handle(), 0, state.size()};
  pass.groups = 2u * slots;
  pass.push = {slots, seed, polls};
  detail::DescriptorSets descriptors(c, 4);  // sets per pool (used without push descriptors)
  Result<void> recorded;
  auto submitted = submit_compute(dev, [&](VkCommandBuffer cmd) {
    recorded = detail::record_passes(c, descriptors, cmd, {pass}, "tile-state litmus", "record");
  });
  REQUIRE(recorded.ok());
  REQUIRE(submitted.ok());
  auto r = download<uint32_t>(dev, results, 4);
  return {r[0], r[1], r[2], r[3]};
}

void litmus_rounds(Device& dev, detail::KernelName litmus, const char* variant, uint32_t parts) {
  std::mt19937_64 rng(fresh_seed());
  LitmusResult total;
  for (int round = 0; round < 8; ++round) {
    // The seed's low bit says whether a slot's writer or reader has the lower workgroup index; a
    // driver that runs workgroups one after another in index order (lavapipe) lets a reader
    // see INCLUSIVE only when the writer comes first, so the rounds alternate between both orders.
    const uint32_t seed = (uint32_t(rng()) & ~1u) | uint32_t(round & 1);
    INFO("round " << round << " seed " << seed);
    const LitmusResult r = run_litmus(dev, litmus, variant, 4096, seed, 256, parts);
    CHECK(r.violations == 0);
    total.saw_aggregate += r.saw_aggregate;
    total.saw_inclusive += r.saw_inclusive;
    total.not_ready_reads += r.not_ready_reads;
  }
  // The protocol was exercised: readers saw published states (most end on INCLUSIVE).
  CHECK(total.saw_inclusive > 0);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

}  // namespace

TEST_CASE("tile state split into 16-bit halves of a 32-bit value passes the message-passing litmus test") {
  Device& dev = device();
  if (!test::has_features(dev, feature_memory_model, "the tile-state litmus (the Vulkan memory model)")) return;
  litmus_rounds(dev, detail::kernel_name("test/litmus"), "u32", 2);
}

TEST_CASE("tile state split into 16-bit quarters of a 64-bit value passes the message-passing litmus test") {
  Device& dev = device();
  if (!test::has_features(dev, feature_memory_model | feature_int64, "the 64-bit tile-state litmus")) return;
  litmus_rounds(dev, detail::kernel_name("test/litmus"), "u64", 4);
}

TEST_CASE("tile state in one 64-bit atomic word passes the message-passing litmus test") {
  Device& dev = device();
  if (!test::has_features(dev, feature_memory_model | feature_int64_atomics, "the 64-bit atomic tile-state litmus"))
    return;
  litmus_rounds(dev, detail::kernel_name("test/litmus64"), "u32", 2);
}

TEST_CASE("a specialization constant the kernel does not declare is refused, naming the kernel and the constant") {
  Device& dev = device();
  if (!test::has_features(dev, feature_memory_model, "the litmus kernel (the Vulkan memory model)")) return;
  detail::KernelDesc kd{detail::kernel_name("test/litmus")};
  kd.group = &detail::kShaderGroup_test;
  kd.variant = "u32";
  kd.workgroup_size = 32;
  kd.plan = "Litmus";
  kd.spec.key_flags = 1;  // a sort constant
  auto kernel = detail::get_kernel(dev.context().impl(), kd);
  REQUIRE_FALSE(kernel.ok());
  CHECK(kernel.status() == Status::unsupported);
  INFO(kernel.error().message);
  CHECK(kernel.error().message.find("Litmus: ") == 0);
  CHECK(kernel.error().message.find("KEY_FLAGS of kernel test/litmus") != std::string::npos);
}
