// Bad inputs: each returns its Status with a message that names the problem, and records nothing
// (every buffer involved keeps its poison after the command buffer ran).
#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "test_support.hpp"

using namespace vkprim;

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

bool mentions(const std::string& message, const std::string& word) {
  return lower(message).find(lower(word)) != std::string::npos;
}

// Poisons every watched buffer, records the bad call inside a submitted command buffer, and checks the
// status, the message and that every watched buffer still holds only poison.
void expect_rejected(const Device& dev, const Reduce& plan, const BufferRange& input, const BufferRange& output,
                     uint64_t count, const BufferRange& scratch, Status status, const std::vector<std::string>& words,
                     const std::vector<const Buffer*>& watched) {
  for (const Buffer* b : watched) test::poison(dev, *b);
  Result<void> recorded;
  auto submitted = test::submit_compute(dev, [&](VkCommandBuffer cmd) {
    recorded = plan.record(cmd, input, output, count, scratch);
  });
  REQUIRE(submitted.ok());
  INFO("status " << to_string(recorded.status()) << ", message: \"" << recorded.message() << "\"");
  CHECK(recorded == status);
  CHECK_FALSE(recorded.message().empty());
  for (const auto& w : words) {
    INFO("the message should mention '" << w << "'");
    CHECK(mentions(recorded.message(), w));
  }
  for (const Buffer* b : watched) CHECK(test::still_poisoned(dev, *b));
}

constexpr uint64_t kMax = 100000;

// A u32 add plan whose scratch is not empty, with buffers large enough for kMax.
struct Setup {
  Device& dev = test::device();
  Reduce plan = test::make_reduce(dev.context(), ReduceDesc{DataType::u32, Op::add, kMax, ReduceAlgorithm::sequential});
  Buffer input = test::make_buffer(dev, (kMax + 64) * 4);
  Buffer output = test::make_buffer(dev, 64);
  Buffer scratch = test::make_scratch(dev, plan);
  std::vector<const Buffer*> all() const { return {&input, &output, &scratch}; }
};

}  // namespace

TEST_CASE("record rejects count > max_count with invalid_argument and records nothing", "[reduce][errors]") {
  Setup s;
  expect_rejected(s.dev, s.plan, s.input.range(), s.output.range(0, 4), kMax + 1, s.scratch.range(),
                  Status::invalid_argument, {"count", "max_count"}, s.all());
  REQUIRE_NO_VALIDATION_MESSAGES(s.dev);
}

TEST_CASE("record rejects a null input buffer when count > 0 and records nothing", "[reduce][errors]") {
  Setup s;
  expect_rejected(s.dev, s.plan, BufferRange{}, s.output.range(0, 4), 10, s.scratch.range(), Status::invalid_argument,
                  {"input", "null"}, s.all());
  REQUIRE_NO_VALIDATION_MESSAGES(s.dev);
}

TEST_CASE("record rejects a null output buffer and records nothing", "[reduce][errors]") {
  Setup s;
  expect_rejected(s.dev, s.plan, s.input.range(0, 400), BufferRange{}, 100, s.scratch.range(),
                  Status::invalid_argument, {"output", "null"}, s.all());
  expect_rejected(s.dev, s.plan, BufferRange{}, BufferRange{}, 0, s.scratch.range(), Status::invalid_argument,
                  {"output"}, s.all());
  REQUIRE_NO_VALIDATION_MESSAGES(s.dev);
}

TEST_CASE("record rejects an input range smaller than count elements and records nothing", "[reduce][errors]") {
  Setup s;
  expect_rejected(s.dev, s.plan, s.input.range(0, 4 * 1000 - 4), s.output.range(0, 4), 1000, s.scratch.range(),
                  Status::invalid_argument, {"input"}, s.all());
  expect_rejected(s.dev, s.plan, s.input.range(0, 0), s.output.range(0, 4), 1, s.scratch.range(),
                  Status::invalid_argument, {"input"}, s.all());
  REQUIRE_NO_VALIDATION_MESSAGES(s.dev);
}

TEST_CASE("record rejects an output range smaller than one element and records nothing", "[reduce][errors]") {
  Setup s;
  expect_rejected(s.dev, s.plan, s.input.range(0, 400), s.output.range(0, 3), 100, s.scratch.range(),
                  Status::invalid_argument, {"output"}, s.all());
  expect_rejected(s.dev, s.plan, s.input.range(0, 400), s.output.range(64, 0), 100, s.scratch.range(),
                  Status::invalid_argument, {"output"}, s.all());
  REQUIRE_NO_VALIDATION_MESSAGES(s.dev);
}

TEST_CASE("record rejects input and output offsets that are not a multiple of the element size",
          "[reduce][errors]") {
  Setup s;
  expect_rejected(s.dev, s.plan, s.input.range(2, 400), s.output.range(0, 4), 100, s.scratch.range(),
                  Status::invalid_argument, {"input", "offset"}, s.all());
  expect_rejected(s.dev, s.plan, s.input.range(0, 400), s.output.range(6, 4), 100, s.scratch.range(),
                  Status::invalid_argument, {"output", "offset"}, s.all());
  if (test::type_supported(s.dev.context(), DataType::u64)) {
    // 64-bit elements: an offset of 4 bytes is 4-aligned but not 8-aligned.
    auto plan64 = test::make_reduce(s.dev.context(), ReduceDesc{DataType::u64, Op::bit_xor, 1000});
    auto scratch64 = test::make_scratch(s.dev, plan64);
    std::vector<const Buffer*> watched = {&s.input, &s.output, &scratch64};
    expect_rejected(s.dev, plan64, s.input.range(4, 800), s.output.range(0, 8), 100, scratch64.range(),
                    Status::invalid_argument, {"input", "offset"}, watched);
    expect_rejected(s.dev, plan64, s.input.range(0, 800), s.output.range(12, 8), 100, scratch64.range(),
                    Status::invalid_argument, {"output", "offset"}, watched);
  }
  REQUIRE_NO_VALIDATION_MESSAGES(s.dev);
}

TEST_CASE("record rejects a null, undersized or misaligned scratch range and records nothing", "[reduce][errors]") {
  Setup s;
  const ScratchRequirements need = s.plan.scratch_requirements();
  REQUIRE(need.size > 0);
  CHECK(need.alignment >= 4);
  CHECK((need.usage & VK_BUFFER_USAGE_STORAGE_BUFFER_BIT) != 0);
  SECTION("null scratch") {
    expect_rejected(s.dev, s.plan, s.input.range(0, 400), s.output.range(0, 4), 100, BufferRange{},
                    Status::invalid_argument, {"scratch"}, s.all());
  }
  SECTION("undersized scratch") {
    expect_rejected(s.dev, s.plan, s.input.range(0, 400), s.output.range(0, 4), 100, s.scratch.range(0, need.size - 4),
                    Status::invalid_argument, {"scratch"}, s.all());
  }
  SECTION("misaligned scratch offset") {
    auto big = test::make_buffer(s.dev, need.size + 2 * need.alignment);
    std::vector<const Buffer*> watched = {&s.input, &s.output, &big};
    expect_rejected(s.dev, s.plan, s.input.range(0, 400), s.output.range(0, 4), 100, big.range(4),
                    Status::invalid_argument, {"scratch", "offset"}, watched);
    if (need.alignment > 4)
      expect_rejected(s.dev, s.plan, s.input.range(0, 400), s.output.range(0, 4), 100, big.range(need.alignment / 2),
                      Status::invalid_argument, {"scratch", "offset"}, watched);
  }
  REQUIRE_NO_VALIDATION_MESSAGES(s.dev);
}

TEST_CASE("record rejects overlapping input, output and scratch ranges and records nothing", "[reduce][errors]") {
  Setup s;
  SECTION("output inside the input") {
    expect_rejected(s.dev, s.plan, s.input.range(0, 4000), s.input.range(8, 4), 1000, s.scratch.range(),
                    Status::invalid_argument, {"overlap"}, s.all());
  }
  SECTION("output at the last input element") {
    expect_rejected(s.dev, s.plan, s.input.range(16, 4000), s.input.range(16 + 3996, 4), 1000, s.scratch.range(),
                    Status::invalid_argument, {"overlap"}, s.all());
  }
  SECTION("scratch overlapping the output") {
    expect_rejected(s.dev, s.plan, s.input.range(0, 4000), s.scratch.range(0, 4), 1000, s.scratch.range(),
                    Status::invalid_argument, {"overlap"}, s.all());
  }
  SECTION("scratch overlapping the input") {
    auto shared = test::make_buffer(s.dev, 4000 + s.scratch.size() + 64);
    std::vector<const Buffer*> watched = {&shared, &s.output};
    expect_rejected(s.dev, s.plan, shared.range(0, 4000), s.output.range(0, 4), 1000, shared.range(3984),
                    Status::invalid_argument, {"overlap"}, watched);
  }
  REQUIRE_NO_VALIDATION_MESSAGES(s.dev);
}

TEST_CASE("output right after the input is not an overlap", "[reduce][errors]") {
  Setup s;
  VKPRIM_TEST_RNG(rng);
  const auto data = test::random_values<uint32_t>(1000, rng);
  test::upload(s.dev, s.input, data);
  test::poison(s.dev, s.output);
  Result<void> recorded;
  auto submitted = test::submit_compute(s.dev, [&](VkCommandBuffer cmd) {
    recorded = s.plan.record(cmd, s.input.range(0, 4000), s.input.range(4000, 4), 1000, s.scratch.range());
  });
  INFO(recorded.message());
  REQUIRE(recorded.ok());
  REQUIRE(submitted.ok());
  CHECK(test::download<uint32_t>(s.dev, s.input, 1, 4000)[0] == host::reduce<uint32_t>(Op::add, data.data(), 1000));
  REQUIRE_NO_VALIDATION_MESSAGES(s.dev);
}

TEST_CASE("record rejects a null command buffer", "[reduce][errors]") {
  Setup s;
  auto recorded = s.plan.record(VK_NULL_HANDLE, s.input.range(0, 400), s.output.range(0, 4), 100, s.scratch.range());
  INFO(recorded.message());
  CHECK(recorded == Status::invalid_argument);
  CHECK(mentions(recorded.message(), "command buffer"));
  REQUIRE_NO_VALIDATION_MESSAGES(s.dev);
}

TEST_CASE("count 0 accepts a null input and writes the identity", "[reduce][errors]") {
  Device& dev = test::device();
  for (Op op : {Op::add, Op::min, Op::max, Op::bit_and}) {
    auto plan = test::make_reduce(dev.context(), ReduceDesc{DataType::u32, op, 10});
    auto output = test::make_buffer(dev, 16);
    auto scratch = test::make_scratch(dev, plan);
    test::poison(dev, output);
    Result<void> recorded;
    auto submitted = test::submit_compute(dev, [&](VkCommandBuffer cmd) {
      recorded = plan.record(cmd, BufferRange{}, output.range(0, 4), 0, scratch.range());
    });
    INFO(to_string(op) << ": " << recorded.message());
    REQUIRE(recorded.ok());
    REQUIRE(submitted.ok());
    const auto words = test::download<uint32_t>(dev, output, 4);
    CHECK(words[0] == host::identity<uint32_t>(op));
    CHECK(words[1] == test::kPoison);
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("Reduce::create rejects bitwise operators on f32 and f64 with invalid_argument", "[reduce][errors]") {
  Device& dev = test::device();
  for (DataType type : {DataType::f32, DataType::f64}) {
    for (Op op : {Op::bit_and, Op::bit_or, Op::bit_xor}) {
      for (int a = 0; a <= int(ReduceAlgorithm::grid_stride); ++a) {
        auto plan = Reduce::create(dev.context(), ReduceDesc{type, op, 1000, ReduceAlgorithm(a)});
        INFO(to_string(type) << " " << to_string(op) << " " << to_string(ReduceAlgorithm(a)));
        REQUIRE_FALSE(plan.ok());
        INFO(plan.error().message);
        CHECK(plan.status() == Status::invalid_argument);
        CHECK(mentions(plan.error().message, to_string(op)));
        CHECK(mentions(plan.error().message, to_string(type)));
      }
    }
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("Reduce::create refuses the sort-key types u8 and u16 with invalid_argument naming the type",
          "[reduce][errors]") {
  Device& dev = test::device();
  for (DataType type : {DataType::u8, DataType::u16}) {
    for (int a = 0; a <= int(ReduceAlgorithm::grid_stride); ++a) {
      auto plan = Reduce::create(dev.context(), ReduceDesc{type, Op::add, 1000, ReduceAlgorithm(a)});
      INFO(to_string(type) << " " << to_string(ReduceAlgorithm(a)));
      REQUIRE_FALSE(plan.ok());
      INFO(plan.error().message);
      CHECK(plan.status() == Status::invalid_argument);
      CHECK(mentions(plan.error().message, std::string(to_string(type)) + " is a sort-key type only"));
      CHECK(mentions(plan.error().message, "RadixSort"));
    }
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("Reduce::create refuses a DataType or Op value no enumerator names with invalid_argument naming it",
          "[reduce][errors]") {
  Device& dev = test::device();
  for (int a = 0; a <= int(ReduceAlgorithm::grid_stride); ++a) {
    INFO(to_string(ReduceAlgorithm(a)));
    auto bad_type = Reduce::create(dev.context(), ReduceDesc{DataType(42), Op::add, 1000, ReduceAlgorithm(a)});
    REQUIRE_FALSE(bad_type.ok());
    CHECK(bad_type.status() == Status::invalid_argument);
    CHECK(mentions(bad_type.error().message, "unknown DataType 42"));
    auto bad_op = Reduce::create(dev.context(), ReduceDesc{DataType::u32, Op(-3), 1000, ReduceAlgorithm(a)});
    REQUIRE_FALSE(bad_op.ok());
    CHECK(bad_op.status() == Status::invalid_argument);
    CHECK(mentions(bad_op.error().message, "unknown operator -3"));
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("Reduce::create rejects max_count 0 and max_count above 2^40 with invalid_argument", "[reduce][errors]") {
  Device& dev = test::device();
  for (uint64_t max_count : {uint64_t(0), (uint64_t(1) << 40) + 1, ~uint64_t(0)}) {
    auto plan = Reduce::create(dev.context(), ReduceDesc{DataType::u32, Op::add, max_count});
    INFO("max_count " << max_count);
    REQUIRE_FALSE(plan.ok());
    INFO(plan.error().message);
    CHECK(plan.status() == Status::invalid_argument);
    CHECK(mentions(plan.error().message, "max_count"));
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("Reduce::create rejects vectors_per_thread above 16 with invalid_argument and takes 16", "[reduce][errors]") {
  Device& dev = test::device();
  ReduceDesc desc{DataType::u32, Op::add, 1000, ReduceAlgorithm::grid_stride};
  desc.tuning.vectors_per_thread = 17;
  auto plan = Reduce::create(dev.context(), desc);
  REQUIRE_FALSE(plan.ok());
  INFO(plan.error().message);
  CHECK(plan.status() == Status::invalid_argument);
  CHECK(mentions(plan.error().message, "tuning.vectors_per_thread 17"));
  desc.tuning.vectors_per_thread = 16;
  VKPRIM_TEST_RNG(rng);
  test::ReduceRig<uint32_t> rig(dev, desc);
  CHECK(rig.check(test::random_values<uint32_t>(1000, rng)));
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("64-bit types on a device without shaderInt64 and shaderFloat64 are unsupported", "[reduce][errors]") {
  test::DeviceSetup masked;
  masked.testing.mask_features = feature_int64 | feature_float64;
  Device& dev = test::device(masked);
  CHECK_FALSE(dev.context().capabilities().has(feature_int64));
  CHECK_FALSE(dev.context().capabilities().has(feature_float64));
  for (DataType type : {DataType::u64, DataType::i64, DataType::f64}) {
    for (int a = 0; a <= int(ReduceAlgorithm::grid_stride); ++a) {
      auto plan = Reduce::create(dev.context(), ReduceDesc{type, Op::add, 1000, ReduceAlgorithm(a)});
      INFO(to_string(type) << " " << to_string(ReduceAlgorithm(a)));
      REQUIRE_FALSE(plan.ok());
      INFO(plan.error().message);
      CHECK(plan.status() == Status::unsupported);
      CHECK(mentions(plan.error().message, to_string(type)));
      CHECK(mentions(plan.error().message, type == DataType::f64 ? "shaderFloat64" : "shaderInt64"));
    }
  }
  // 32-bit types still work on that device.
  VKPRIM_TEST_RNG(rng);
  test::ReduceRig<int32_t> rig(dev, ReduceDesc{DataType::i32, Op::max, 5000});
  CHECK(rig.check(test::random_values<int32_t>(4097, rng)));
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("Status names are stable", "[errors]") {
  CHECK(std::string(to_string(Status::success)) == "success");
  CHECK(std::string(to_string(Status::invalid_argument)) == "invalid_argument");
  CHECK(std::string(to_string(Status::unsupported)) == "unsupported");
  CHECK(std::string(to_string(Status::out_of_memory)) == "out_of_memory");
  CHECK(std::string(to_string(Status::device_lost)) == "device_lost");
  CHECK(std::string(to_string(Status::vulkan_error)) == "vulkan_error");
  ReduceAlgorithm parsed{};
  CHECK(parse("grid_stride", parsed));
  CHECK(parsed == ReduceAlgorithm::grid_stride);
  CHECK_FALSE(parse("no_such_algorithm", parsed));
}

TEST_CASE("DataType names, sizes and kinds are stable, the sort-key types u8 and u16 included", "[types]") {
  struct Expected {
    DataType type;
    const char* name;
    uint32_t bytes;
    bool integer, wide;
  };
  for (const Expected& e : {Expected{DataType::u32, "u32", 4, true, false}, Expected{DataType::i32, "i32", 4, true, false},
                            Expected{DataType::f32, "f32", 4, false, false}, Expected{DataType::u64, "u64", 8, true, true},
                            Expected{DataType::i64, "i64", 8, true, true}, Expected{DataType::f64, "f64", 8, false, true},
                            Expected{DataType::u8, "u8", 1, true, false}, Expected{DataType::u16, "u16", 2, true, false}}) {
    INFO(e.name);
    CHECK(std::string(to_string(e.type)) == e.name);
    CHECK(size_of(e.type) == e.bytes);
    CHECK(is_integer(e.type) == e.integer);
    CHECK(is_64bit(e.type) == e.wide);
  }
  // Appended: the types before them keep their values.
  CHECK(int(DataType::f64) == 5);
  CHECK(int(DataType::u8) == 6);
  CHECK(int(DataType::u16) == 7);
}
