// Reduce correctness: every algorithm x type x op at edge sizes against the host reference, integer
// wrap-around, the float-add bound, and counts that need more than 65535 workgroups.
#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include "test_support.hpp"

using namespace vkprim;
using vkprim::test::ReduceRig;

namespace {

constexpr uint64_t kWorkgroup = 256;
constexpr uint64_t kTwoElementTile = 2 * kWorkgroup;  // first_add_during_load, unrolled_*
constexpr uint64_t kLargeCount = (uint64_t(1) << 20) + 1;

// grid_stride covers 256 threads x 4 vectors of 16 bytes per tile: 4096 32-bit or 2048 64-bit elements.
uint64_t grid_stride_tile(DataType type) { return kWorkgroup * 4 * (16 / size_of(type)); }

// Sizes every algorithm is checked at: the edges of a subgroup (8 on lavapipe), a workgroup, each
// kernel's tile, a multi-level count, 2^20 + 1, and two fresh random sizes.
std::vector<uint64_t> edge_sizes(DataType type, std::mt19937_64& rng) {
  const uint64_t gs = grid_stride_tile(type);
  std::vector<uint64_t> sizes = {1, 2, 7, 8, 9, 31, 32, 33,
                                 kWorkgroup - 1, kWorkgroup, kWorkgroup + 1,
                                 kTwoElementTile - 1, kTwoElementTile, kTwoElementTile + 1,
                                 gs - 1, gs, gs + 1, 4 * gs + 3,
                                 kWorkgroup * kWorkgroup + 1,  // three levels of the one-element kernels
                                 kLargeCount};
  sizes.push_back(std::uniform_int_distribution<uint64_t>(1, 5000)(rng));
  sizes.push_back(std::uniform_int_distribution<uint64_t>(5001, kLargeCount)(rng));
  return sizes;
}

template <class T>
void check_algorithm_type(ReduceAlgorithm algorithm, DataType type, std::mt19937_64& rng) {
  Device& dev = test::device();
  for (Op op : test::ops_for(type)) {
    ReduceRig<T> rig(dev, ReduceDesc{type, op, kLargeCount, algorithm});
    if (algorithm != ReduceAlgorithm::automatic) CHECK(rig.plan().algorithm() == algorithm);
    CHECK(rig.plan().algorithm() != ReduceAlgorithm::automatic);
    // count 0 writes the identity.
    CHECK(rig.check({}));
    const auto sizes = edge_sizes(type, rng);
    for (size_t i = 0; i < sizes.size(); ++i) {
      const auto data = test::random_values<T>(sizes[i], rng);
      // The two random sizes also use unaligned input and output element offsets.
      const bool shifted = i + 2 >= sizes.size();
      CHECK(rig.check(data, shifted ? 1 : 0, shifted ? 3 : 0));
    }
  }
}

void check_matrix(ReduceAlgorithm algorithm, DataType type) {
  Device& dev = test::device();
  if (!test::type_supported(dev.context(), type)) {
    test::skip(std::string(to_string(type)) + " is not supported by this device");
    return;
  }
  VKPRIM_TEST_RNG(rng);
  host::with_type(type, [&](auto t) { check_algorithm_type<decltype(t)>(algorithm, type, rng); });
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

}  // namespace

#define VKPRIM_REDUCE_MATRIX_CASE(ALG, TYPE)                                                              \
  TEST_CASE(#ALG " reduce of " #TYPE " matches the CPU for every op at edge sizes and 2^20+1",            \
            "[reduce][matrix][" #ALG "][" #TYPE "]") {                                                    \
    check_matrix(ReduceAlgorithm::ALG, DataType::TYPE);                                                   \
  }

#define VKPRIM_REDUCE_MATRIX_ALGORITHM(ALG) \
  VKPRIM_REDUCE_MATRIX_CASE(ALG, u32)       \
  VKPRIM_REDUCE_MATRIX_CASE(ALG, i32)       \
  VKPRIM_REDUCE_MATRIX_CASE(ALG, f32)       \
  VKPRIM_REDUCE_MATRIX_CASE(ALG, u64)       \
  VKPRIM_REDUCE_MATRIX_CASE(ALG, i64)       \
  VKPRIM_REDUCE_MATRIX_CASE(ALG, f64)

VKPRIM_REDUCE_MATRIX_ALGORITHM(automatic)
VKPRIM_REDUCE_MATRIX_ALGORITHM(interleaved_divergent)
VKPRIM_REDUCE_MATRIX_ALGORITHM(interleaved_strided)
VKPRIM_REDUCE_MATRIX_ALGORITHM(sequential)
VKPRIM_REDUCE_MATRIX_ALGORITHM(first_add_during_load)
VKPRIM_REDUCE_MATRIX_ALGORITHM(unrolled_subgroup)
VKPRIM_REDUCE_MATRIX_ALGORITHM(unrolled_complete)
VKPRIM_REDUCE_MATRIX_ALGORITHM(grid_stride)

namespace {

constexpr std::array<ReduceAlgorithm, 8> kAllAlgorithms = {
    ReduceAlgorithm::automatic,          ReduceAlgorithm::interleaved_divergent, ReduceAlgorithm::interleaved_strided,
    ReduceAlgorithm::sequential,         ReduceAlgorithm::first_add_during_load, ReduceAlgorithm::unrolled_subgroup,
    ReduceAlgorithm::unrolled_complete,  ReduceAlgorithm::grid_stride};

// Values just below 2^bits: every pair overflows, so the sum is correct only modulo 2^bits.
template <class T>
void check_wraparound(DataType type, std::mt19937_64& rng) {
  using U = std::make_unsigned_t<T>;
  Device& dev = test::device();
  for (ReduceAlgorithm algorithm : kAllAlgorithms) {
    ReduceRig<T> rig(dev, ReduceDesc{type, Op::add, 20000, algorithm});
    for (uint64_t n : {2ull, 3ull, 1000ull, 4099ull, 20000ull}) {
      std::vector<T> data(n);
      for (auto& x : data) x = T(std::numeric_limits<U>::max() - U(rng() % 1000));
      // The exact sum does not fit T: the wrapped result differs from any saturating one.
      CHECK(rig.check(data));
    }
    // A known answer: (2^bits - 1) * 3 wraps to 2^bits - 3.
    std::vector<T> three(3, T(std::numeric_limits<U>::max()));
    CHECK(rig.check(three));
    CHECK(host::reduce<T>(Op::add, three.data(), 3) == T(U(std::numeric_limits<U>::max() - 2)));
  }
}

}  // namespace

TEST_CASE("integer add wraps modulo 2^32 for u32 and i32 in every algorithm", "[reduce][wrap]") {
  VKPRIM_TEST_RNG(rng);
  check_wraparound<uint32_t>(DataType::u32, rng);
  check_wraparound<int32_t>(DataType::i32, rng);
  REQUIRE_NO_VALIDATION_MESSAGES(test::device());
}

TEST_CASE("integer add wraps modulo 2^64 for u64 and i64 in every algorithm", "[reduce][wrap]") {
  if (!test::type_supported(test::device().context(), DataType::u64)) {
    test::skip("no shaderInt64");
    return;
  }
  VKPRIM_TEST_RNG(rng);
  check_wraparound<uint64_t>(DataType::u64, rng);
  check_wraparound<int64_t>(DataType::i64, rng);
  REQUIRE_NO_VALIDATION_MESSAGES(test::device());
}

namespace {

// Positive values of very different magnitudes maximise rounding; the result must stay within the
// documented bound (L + ceil(log2 n)) * eps * sum|x| for every algorithm.
template <class T>
void check_float_bound(DataType type, std::mt19937_64& rng) {
  Device& dev = test::device();
  for (ReduceAlgorithm algorithm : kAllAlgorithms) {
    ReduceRig<T> rig(dev, ReduceDesc{type, Op::add, kLargeCount, algorithm});
    std::uniform_real_distribution<double> exponent(-20, 20);
    for (uint64_t n : {uint64_t(3), uint64_t(4097), uint64_t(100003), kLargeCount}) {
      std::vector<T> data(n);
      for (auto& x : data) x = T(std::exp2(exponent(rng)) * ((rng() & 1) ? 1 : -1));
      CHECK(rig.check(data));
      for (auto& x : data) x = T(1) + T(std::ldexp(double(rng() % 1024), -10));  // all positive
      CHECK(rig.check(data));
    }
  }
}

}  // namespace

TEST_CASE("float add stays within the documented error bound for every algorithm", "[reduce][float]") {
  VKPRIM_TEST_RNG(rng);
  check_float_bound<float>(DataType::f32, rng);
  if (test::type_supported(test::device().context(), DataType::f64)) check_float_bound<double>(DataType::f64, rng);
  REQUIRE_NO_VALIDATION_MESSAGES(test::device());
}

namespace {

template <class T>
void check_infinities(DataType type, std::mt19937_64& rng) {
  Device& dev = test::device();
  const T inf = std::numeric_limits<T>::infinity();
  for (ReduceAlgorithm algorithm : kAllAlgorithms) {
    for (Op op : {Op::min, Op::max}) {
      ReduceRig<T> rig(dev, ReduceDesc{type, op, 10000, algorithm});
      for (uint64_t n : {uint64_t(1), uint64_t(9), uint64_t(4097), uint64_t(10000)}) {
        auto data = test::random_values<T>(n, rng);
        data[rng() % n] = inf;
        CHECK(rig.check(data));  // max is +inf
        data[rng() % n] = -inf;
        CHECK(rig.check(data));  // min is -inf, max +inf unless overwritten
        std::fill(data.begin(), data.end(), op == Op::min ? inf : -inf);
        CHECK(rig.check(data));  // all identity-valued
      }
    }
  }
}

}  // namespace

TEST_CASE("float min and max handle infinities in every algorithm", "[reduce][float]") {
  VKPRIM_TEST_RNG(rng);
  check_infinities<float>(DataType::f32, rng);
  if (test::type_supported(test::device().context(), DataType::f64)) check_infinities<double>(DataType::f64, rng);
  REQUIRE_NO_VALIDATION_MESSAGES(test::device());
}

namespace {

// u32 add at a count whose first level needs more than 65535 workgroups (lavapipe's
// maxComputeWorkGroupCount[0]): the dispatch spills into y (or the level splits into windows).
void check_many_workgroups(ReduceAlgorithm algorithm, uint64_t elements_per_group) {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  const uint64_t n = 65536 * elements_per_group + 3;
  ReduceRig<uint32_t> rig(dev, ReduceDesc{DataType::u32, Op::add, n, algorithm});
  CHECK(rig.plan().dispatch_count(n) >= 2);
  const auto data = test::random_values<uint32_t>(n, rng);
  CHECK(rig.check(data));
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

}  // namespace

TEST_CASE("interleaved_divergent reduce of 65536*256+3 u32 (more than 65535 workgroups) matches the CPU",
          "[reduce][large][host]") {
  check_many_workgroups(ReduceAlgorithm::interleaved_divergent, kWorkgroup);
}
TEST_CASE("interleaved_strided reduce of 65536*256+3 u32 (more than 65535 workgroups) matches the CPU",
          "[reduce][large][host]") {
  check_many_workgroups(ReduceAlgorithm::interleaved_strided, kWorkgroup);
}
TEST_CASE("sequential reduce of 65536*256+3 u32 (more than 65535 workgroups) matches the CPU", "[reduce][large][host]") {
  check_many_workgroups(ReduceAlgorithm::sequential, kWorkgroup);
}
TEST_CASE("first_add_during_load reduce of 65536*512+3 u32 (more than 65535 workgroups) matches the CPU",
          "[reduce][large][host]") {
  check_many_workgroups(ReduceAlgorithm::first_add_during_load, kTwoElementTile);
}
TEST_CASE("unrolled_subgroup reduce of 65536*512+3 u32 (more than 65535 workgroups) matches the CPU",
          "[reduce][large][host]") {
  check_many_workgroups(ReduceAlgorithm::unrolled_subgroup, kTwoElementTile);
}
TEST_CASE("unrolled_complete reduce of 65536*512+3 u32 (more than 65535 workgroups) matches the CPU",
          "[reduce][large][host]") {
  check_many_workgroups(ReduceAlgorithm::unrolled_complete, kTwoElementTile);
}

TEST_CASE("grid_stride reduce of 2^20+1 u32 add matches the CPU with a grid capped below the tile count",
          "[reduce]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  ReduceRig<uint32_t> rig(dev, ReduceDesc{DataType::u32, Op::add, kLargeCount, ReduceAlgorithm::grid_stride});
  // The grid is capped, so two levels (two dispatches) suffice even at 2^20+1.
  CHECK(rig.plan().dispatch_count(kLargeCount) == 2);
  CHECK(rig.check(test::random_values<uint32_t>(kLargeCount, rng)));
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("automatic resolves to a concrete algorithm and the same plan records many counts in one command buffer",
          "[reduce]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  const uint64_t max_n = 70000;
  auto plan = test::make_reduce(dev.context(), ReduceDesc{DataType::u32, Op::add, max_n});
  CHECK(plan.algorithm() != ReduceAlgorithm::automatic);
  CHECK(plan.desc().algorithm == ReduceAlgorithm::automatic);
  // Several reductions of prefixes of one input into distinct output slots, each with its own scratch.
  const std::vector<uint64_t> counts = {0, 1, 33, 4097, 65537, max_n};
  const auto data = test::random_values<uint32_t>(max_n, rng);
  auto input = test::make_buffer(dev, max_n * 4);
  auto output = test::make_buffer(dev, counts.size() * 16);
  std::vector<Buffer> scratch;
  for (size_t i = 0; i < counts.size(); ++i) scratch.push_back(test::make_scratch(dev, plan));
  test::upload(dev, input, data);
  test::poison(dev, output);
  std::vector<Result<void>> recorded(counts.size());
  auto submitted = test::submit_compute(dev, [&](VkCommandBuffer cmd) {
    for (size_t i = 0; i < counts.size(); ++i)
      recorded[i] = plan.record(cmd, input.range(0, counts[i] * 4), output.range(i * 16, 4), counts[i],
                                scratch[i].range());
  });
  REQUIRE(submitted.ok());
  const auto words = test::download<uint32_t>(dev, output, counts.size() * 4);
  for (size_t i = 0; i < counts.size(); ++i) {
    INFO("count " << counts[i] << ": " << recorded[i].message());
    REQUIRE(recorded[i].ok());
    CHECK(words[i * 4] == host::reduce<uint32_t>(Op::add, data.data(), counts[i]));
    for (int w = 1; w < 4; ++w) CHECK(words[i * 4 + w] == test::kPoison);
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}
