// SegmentedReduce against a CPU reference: segments of every length class around the plan's thresholds
// (0, 1, the subgroup size, short_max, medium_max and the chunk, each +-1), one huge segment among tiny ones,
// power-law lengths, unordered and overlapping offsets with gaps, offsets past max_count, every type and
// operator, a non-commutative user operator (2D affine maps), record_fixed, record_indirect with the count
// from a GPU buffer (0, some, past max_segments), the shared-memory emulation, repeatable float sums, and the
// errors (a message, nothing written). Outputs are poisoned before every record; words past the segments'
// outputs must keep the poison.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "sample_operators.hpp"
#include "segment_layout.hpp"
#include "test_support.hpp"
#include "vkprim/segmented_reduce.hpp"

using namespace vkprim;
using vkprim::test::Arrangement;
using vkprim::test::Layout;
using vkprim::test::lay_out;
using vkprim::test::power_law_lengths;

namespace {

// The lengths around a plan's thresholds (and the subgroup size), in random order, `copies` of each.
std::vector<uint64_t> edge_lengths(const SegmentThresholds& t, uint32_t subgroup, int copies, std::mt19937_64& rng) {
  std::vector<uint64_t> base = {0, 1, 2, 3, subgroup - 1, subgroup, subgroup + 1};
  for (uint64_t edge : {uint64_t(t.short_max), uint64_t(t.medium_max), uint64_t(t.chunk), uint64_t(2) * t.medium_max})
    for (uint64_t d : {edge - 1, edge, edge + 1}) base.push_back(d);
  base.push_back(3ull * t.chunk + 7);
  std::vector<uint64_t> out;
  for (int c = 0; c < copies; ++c) out.insert(out.end(), base.begin(), base.end());
  std::shuffle(out.begin(), out.end(), rng);
  return out;
}


// The operator's host semantics: a built-in type and op, or a sample user operator.
template <class T>
struct BuiltIn {
  Op op;
  T identity() const { return host::identity<T>(op); }
  T combine(T a, T b) const { return host::apply(op, a, b); }
  bool equal(T a, T b) const { return host::same_bits(a, b); }
  // Integer-valued floats keep every sum exact (below 2^24), so every result compares bit for bit.
  T random(std::mt19937_64& rng) const {
    if constexpr (std::is_floating_point_v<T>) return T(int(rng() % 33) - 16);
    else return T(rng());
  }
};
struct AffineOps {
  using T = samples::Affine;
  T identity() const { return samples::identity<T>(); }
  T combine(const T& a, const T& b) const { return samples::combine(a, b); }
  bool equal(const T& a, const T& b) const { return std::memcmp(&a, &b, sizeof(T)) == 0; }
  T random(std::mt19937_64& rng) const { return samples::random_element(rng, static_cast<const T*>(nullptr)); }
};

// One plan with its buffers: input (max_count elements plus guards), output (max_segments plus guards), the
// offsets, scratch and a count word. Inputs and outputs start at element shifts that are not multiples of 16
// bytes.
template <class T, class Ops>
class Rig {
 public:
  static constexpr uint64_t kGuard = 8, kInShift = 1, kOutShift = 3;

  Rig(Device& dev, const SegmentedReduceDesc& desc, Ops ops)
      : dev_(dev), ops_(ops), plan_(SegmentedReduce::create(dev.context(), desc).value()),
        input_(test::make_buffer(dev, (desc.max_count + kInShift + 2 * kGuard) * sizeof(T))),
        output_(test::make_buffer(dev, (desc.max_segments + kOutShift + kGuard) * sizeof(T))),
        begin_(test::make_buffer(dev, desc.max_segments * 4 + 16)),
        end_(test::make_buffer(dev, desc.max_segments * 4 + 16)),
        scratch_(test::make_buffer(dev, plan_.scratch_requirements().size)),
        count_(test::make_buffer(dev, 16)) {}

  const SegmentedReduce& plan() const { return plan_; }
  std::vector<T> random_input(uint64_t n, std::mt19937_64& rng) const {
    std::vector<T> x(n);
    for (T& v : x) v = ops_.random(rng);
    return x;
  }
  // The reduction of each segment with its offsets clamped to `bound` elements of x.
  std::vector<T> reference(const std::vector<T>& x, const Layout& l, size_t segments, uint64_t bound) const {
    std::vector<T> out(segments, ops_.identity());
    for (size_t s = 0; s < segments; ++s) {
      const uint64_t b = std::min<uint64_t>(l.begin[s], bound), e = std::clamp<uint64_t>(l.end[s], b, bound);
      for (uint64_t i = b; i < e; ++i) out[s] = ops_.combine(out[s], x[i]);
    }
    return out;
  }

  enum class Call { record, indirect };
  // Records `call` over x (the input range holds x, or `input_elements` when given) and the layout, and checks
  // the first `expected` outputs against the reference and the guards. gpu_count: the count word of
  // record_indirect.
  void check(const std::vector<T>& x, const Layout& l, Call call = Call::record, uint32_t gpu_count = 0) {
    const size_t segments = call == Call::indirect ? std::min<size_t>(gpu_count, l.size()) : l.size();
    stage(x, l);
    test::upload(dev_, count_, std::vector<uint32_t>{gpu_count});
    const BufferRange in = input_.range(kInShift * sizeof(T), x.size() * sizeof(T));
    const BufferRange out = output_.range(kOutShift * sizeof(T), plan_.desc().max_segments * sizeof(T));
    const BufferRange begin = begin_.range(0, plan_.desc().max_segments * 4);
    const BufferRange end = end_.range(0, plan_.desc().max_segments * 4);
    Result<void> recorded;
    auto submitted = test::submit_compute(dev_, [&](VkCommandBuffer cmd) {
      if (call == Call::indirect)
        recorded = plan_.record_indirect(cmd, in, out, begin, end, count_.range(0, 4), scratch_.range());
      else
        recorded = plan_.record(cmd, in, out, begin, end, l.size(), scratch_.range());
    });
    INFO("record: " << recorded.message() << " submit: " << submitted.message());
    REQUIRE(recorded.ok());
    REQUIRE(submitted.ok());
    compare(reference(x, l, segments, std::min<uint64_t>(x.size(), plan_.desc().max_count)), l);
  }

  // record_fixed of `segments` segments of `size` elements of x.
  void check_fixed(const std::vector<T>& x, uint64_t size, uint64_t segments) {
    Layout l;
    for (uint64_t s = 0; s < segments; ++s) {
      l.begin.push_back(uint32_t(s * size));
      l.end.push_back(uint32_t((s + 1) * size));
    }
    stage(x, Layout{});
    Result<void> recorded;
    auto submitted = test::submit_compute(dev_, [&](VkCommandBuffer cmd) {
      recorded = plan_.record_fixed(cmd, input_.range(kInShift * sizeof(T), std::max<size_t>(x.size(), 1) * sizeof(T)),
                                    output_.range(kOutShift * sizeof(T), segments * sizeof(T)), size, segments,
                                    scratch_.range());
    });
    INFO("record_fixed: " << recorded.message() << " submit: " << submitted.message());
    REQUIRE(recorded.ok());
    REQUIRE(submitted.ok());
    compare(reference(x, l, segments, x.size()), l);
  }

  const Buffer& input() const { return input_; }
  const Buffer& output() const { return output_; }
  const Buffer& offsets() const { return begin_; }
  const Buffer& scratch() const { return scratch_; }
  const Buffer& count() const { return count_; }

 private:
  void stage(const std::vector<T>& x, const Layout& l) {
    std::vector<T> staged(kInShift, ops_.random(rng_));
    staged.insert(staged.end(), x.begin(), x.end());
    for (uint64_t g = 0; g < kGuard; ++g) staged.push_back(ops_.random(rng_));  // never read: past the bound
    test::upload(dev_, input_, staged);
    test::upload(dev_, begin_, l.begin);
    test::upload(dev_, end_, l.end);
    test::poison(dev_, output_);
  }

  void compare(const std::vector<T>& want, const Layout& l) {
    const auto got = test::download<T>(dev_, output_, want.size(), kOutShift * sizeof(T));
    size_t wrong = 0;
    for (size_t s = 0; s < want.size(); ++s)
      if (!ops_.equal(got[s], want[s]) && wrong++ < 5)
        FAIL_CHECK("segment " << s << " [" << l.begin[s] << ", " << l.end[s] << ") differs");
    CHECK(wrong == 0);
    // Every output word outside the segments' outputs keeps the poison.
    const auto words = test::download<uint32_t>(dev_, output_, output_.size() / 4);
    const size_t from = kOutShift * sizeof(T) / 4, to = (kOutShift + want.size()) * sizeof(T) / 4;
    size_t touched = 0;
    for (size_t w = 0; w < words.size(); ++w)
      if ((w < from || w >= to) && words[w] != test::kPoison) ++touched;
    INFO("output words written outside the segments' outputs");
    CHECK(touched == 0);
  }

  Device& dev_;
  Ops ops_;
  SegmentedReduce plan_;
  Buffer input_, output_, begin_, end_, scratch_, count_;
  std::mt19937_64 rng_{7};
};

uint32_t subgroup_size(Device& dev) { return std::max(1u, dev.context().capabilities().subgroup_size); }

SegmentedReduceDesc desc_of(DataType type, Op op, uint64_t max_segments, uint64_t max_count) {
  SegmentedReduceDesc d;
  d.type = type;
  d.op = op;
  d.max_segments = max_segments;
  d.max_count = max_count;
  return d;
}

// The thresholds of a plan for `desc` on `dev` (the test sizes follow them).
SegmentThresholds thresholds_of(Device& dev, const SegmentedReduceDesc& desc) {
  return SegmentedReduce::create(dev.context(), desc).value().thresholds();
}

// u32 add: the plan most cases use.
using U32Rig = Rig<uint32_t, BuiltIn<uint32_t>>;
const SegmentThresholds& u32_thresholds(Device& dev) {
  static const SegmentThresholds t = thresholds_of(dev, desc_of(DataType::u32, Op::add, 1, 1));
  return t;
}
U32Rig u32_rig(Device& dev, uint64_t max_segments, uint64_t max_count) {
  return U32Rig(dev, desc_of(DataType::u32, Op::add, max_segments, max_count), BuiltIn<uint32_t>{Op::add});
}

// Every length class, laid out end to end, then shuffled with gaps and overlaps.
template <class T, class Ops>
void check_edges(Device& dev, SegmentedReduceDesc desc, Ops ops, std::mt19937_64& rng) {
  const auto lengths = edge_lengths(thresholds_of(dev, desc), subgroup_size(dev), 2, rng);
  const Layout csr = lay_out(lengths, {}, rng);
  const Layout mixed = lay_out(lengths, {true, true, true}, rng);
  desc.max_segments = lengths.size();
  desc.max_count = std::max(csr.elements, mixed.elements);
  Rig<T, Ops> rig(dev, desc, ops);
  rig.check(rig.random_input(csr.elements, rng), csr);
  rig.check(rig.random_input(mixed.elements, rng), mixed);
}

template <class T>
void check_type_ops(DataType type, const std::vector<Op>& ops) {
  Device& dev = test::device();
  if (!test::type_supported(dev.context(), type)) return test::skip(std::string(to_string(type)) + " unsupported");
  VKPRIM_TEST_RNG(rng);
  for (Op op : ops) {
    INFO(to_string(type) << " " << to_string(op));
    check_edges<T>(dev, desc_of(type, op, 1, 1), BuiltIn<T>{op}, rng);
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

}  // namespace

TEST_CASE("u32 add reduces segments of every length class, in order and shuffled with gaps and overlaps",
          "[segmented_reduce][edges]") {
  check_type_ops<uint32_t>(DataType::u32, {Op::add});
}

TEST_CASE("f32 add and u64 add reduce every length class exactly", "[segmented_reduce][edges]") {
  check_type_ops<float>(DataType::f32, {Op::add});
  check_type_ops<uint64_t>(DataType::u64, {Op::add});
}

TEST_CASE("every other operator of u32 reduces every length class", "[segmented_reduce][ops]") {
  check_type_ops<uint32_t>(DataType::u32, {Op::min, Op::max, Op::bit_and, Op::bit_or, Op::bit_xor});
}

TEST_CASE("signed, float and 64-bit min, max and xor reduce every length class", "[segmented_reduce][ops]") {
  check_type_ops<int32_t>(DataType::i32, {Op::min, Op::max});
  check_type_ops<float>(DataType::f32, {Op::min, Op::max});
  check_type_ops<uint64_t>(DataType::u64, {Op::bit_xor});
  check_type_ops<int64_t>(DataType::i64, {Op::min, Op::add});
  check_type_ops<double>(DataType::f64, {Op::add, Op::max});
}

namespace {

// The sample affine maps (2D integer affine composition: exact, not commutative) over every length class.
void check_affine_edges(Device& dev, std::mt19937_64& rng) {
  SegmentedReduceDesc desc;
  desc.user_operator = &vkprim_ops::affine();
  desc.max_segments = 1;
  desc.max_count = 1;
  check_edges<samples::Affine>(dev, desc, AffineOps{}, rng);
}

}  // namespace

TEST_CASE("a non-commutative user operator gets the left-to-right combination of every segment",
          "[segmented_reduce][user]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  check_affine_edges(dev, rng);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("the shared-memory emulation reduces every length class, built-in and user operators",
          "[segmented_reduce][no_subgroup_ops]") {
  Device& dev = test::device(test::no_subgroups());
  VKPRIM_TEST_RNG(rng);
  check_edges<uint32_t>(dev, desc_of(DataType::u32, Op::add, 1, 1), BuiltIn<uint32_t>{Op::add}, rng);
  check_affine_edges(dev, rng);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("zero, one and 100000 segments, one huge segment among tiny ones, and power-law lengths",
          "[segmented_reduce][counts]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  const SegmentThresholds& t = u32_thresholds(dev);
  std::vector<uint64_t> tiny(100000);
  for (auto& len : tiny) len = rng() % 4;
  std::vector<Layout> layouts = {Layout{}, lay_out({150000}, {}, rng), lay_out(tiny, {}, rng)};
  tiny[rng() % tiny.size()] = 8ull * t.medium_max + 5;  // one huge segment among them
  layouts.push_back(lay_out(tiny, {true, true, false}, rng));
  layouts.push_back(lay_out(power_law_lengths(4000, 2ull * t.medium_max, rng), {true, false, false}, rng));
  uint64_t n = 1;
  for (const Layout& l : layouts) n = std::max(n, l.elements);
  U32Rig rig = u32_rig(dev, tiny.size(), n);
  const auto x = rig.random_input(n, rng);
  for (const Layout& l : layouts) {
    INFO(l.size() << " segments over " << l.elements << " elements");
    rig.check(x, l);
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("overlapping huge segments beyond the scratch lists are reduced by the medium path",
          "[segmented_reduce][overlap]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  // max_count holds two huge segments without overlap; twelve cover nearly all of it.
  const uint64_t n = 2ull * u32_thresholds(dev).medium_max + 40;
  U32Rig rig = u32_rig(dev, 12, n);
  const auto x = rig.random_input(n, rng);
  Layout l;
  for (uint32_t s = 0; s < 12; ++s) {
    l.begin.push_back(s);
    l.end.push_back(uint32_t(n) - s);
  }
  rig.check(x, l);
  // Two workgroups of segments: the first's two huge ones fit the lists, the second's ten overlapping ones
  // do not (whichever takes its entries first, every segment is reduced).
  Layout two;
  const uint32_t half = uint32_t(n / 2);
  for (uint32_t s = 0; s < 266; ++s) {
    const bool huge = s < 2 || s >= 256;
    two.begin.push_back(huge ? (s < 2 ? s * half : s - 256) : s);
    two.end.push_back(huge ? (s < 2 ? (s + 1) * half : uint32_t(n) - (s - 256)) : s + 1);
  }
  U32Rig wide = u32_rig(dev, two.size(), n);
  wide.check(x, two);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("offsets past max_count are clamped to it: nothing past the input is read", "[segmented_reduce][bounds]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  const uint64_t n = 5000;
  U32Rig rig = u32_rig(dev, 4, n);
  const uint32_t past = uint32_t(n + U32Rig::kGuard);
  Layout l;
  l.begin = {uint32_t(n - 3), 10, uint32_t(n + 2), 0};
  l.end = {past, past, 0xFFFFFFFFu, uint32_t(n)};
  // The input range holds the guards too: only max_count bounds the offsets.
  auto x = rig.random_input(n + U32Rig::kGuard, rng);
  for (uint64_t i = n; i < x.size(); ++i) x[i] = 1000000u;
  rig.check(x, l);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("record_fixed reduces segments of one size in every length class", "[segmented_reduce][fixed]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  const SegmentThresholds& t = u32_thresholds(dev);
  const uint64_t n = 20ull * t.medium_max, max_segments = 3000;
  U32Rig rig = u32_rig(dev, max_segments, n);
  const auto x = rig.random_input(n, rng);
  for (uint64_t size : {uint64_t(0), uint64_t(1), uint64_t(t.short_max), uint64_t(t.short_max) + 1,
                        uint64_t(t.medium_max), uint64_t(t.medium_max) + 1, uint64_t(3) * t.medium_max + 5}) {
    const uint64_t segments = std::min<uint64_t>(max_segments, size ? n / size : 100);
    INFO("segment size " << size << ", " << segments << " segments");
    rig.check_fixed(std::vector<uint32_t>(x.begin(), x.begin() + std::ptrdiff_t(segments * size)), size, segments);
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("record_indirect reads the segment count on the GPU and clamps it to max_segments",
          "[segmented_reduce][indirect]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  const Layout l = lay_out(edge_lengths(u32_thresholds(dev), subgroup_size(dev), 6, rng), {true, true, false}, rng);
  U32Rig rig = u32_rig(dev, l.size(), l.elements);
  const auto x = rig.random_input(l.elements, rng);
  for (uint32_t count : {0u, 1u, uint32_t(l.size() / 3), uint32_t(l.size()), uint32_t(l.size()) + 100}) {
    INFO("GPU count " << count << " of max_segments " << l.size());
    rig.check(x, l, U32Rig::Call::indirect, count);
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("float sums repeat bit for bit and stay within the documented bound", "[segmented_reduce][float]") {
  Device& dev = test::device();
  VKPRIM_TEST_RNG(rng);
  SegmentedReduceDesc desc = desc_of(DataType::f32, Op::add, 1, 1);
  const Layout l = lay_out(edge_lengths(thresholds_of(dev, desc), subgroup_size(dev), 1, rng), {true, true, false}, rng);
  desc.max_segments = l.size();
  desc.max_count = l.elements;
  const SegmentedReduce plan = SegmentedReduce::create(dev.context(), desc).value();
  std::vector<float> x(l.elements);
  host::fill_random(x, rng);
  Buffer in = test::make_buffer(dev, x.size() * 4), out = test::make_buffer(dev, l.size() * 4);
  Buffer begin = test::make_buffer(dev, l.size() * 4), end = test::make_buffer(dev, l.size() * 4);
  Buffer scratch = test::make_buffer(dev, plan.scratch_requirements().size);
  test::upload(dev, in, x);
  test::upload(dev, begin, l.begin);
  test::upload(dev, end, l.end);
  std::vector<float> first;
  for (int run = 0; run < 3; ++run) {
    auto done = test::submit_compute(dev, [&](VkCommandBuffer cmd) {
      REQUIRE(plan.record(cmd, in.range(0, x.size() * 4), out.range(0, l.size() * 4), begin.range(0, l.size() * 4),
                          end.range(0, l.size() * 4), l.size(), scratch.range())
                  .ok());
    });
    REQUIRE(done.ok());
    const auto got = test::download<float>(dev, out, l.size());
    if (run == 0) first = got;
    CHECK(std::memcmp(got.data(), first.data(), got.size() * 4) == 0);
  }
  for (size_t s = 0; s < l.size(); ++s) {
    const uint64_t n = l.end[s] - l.begin[s];
    const auto exact = host::exact_sum(x.data() + l.begin[s], n);
    const long double bound = host::float_add_bound(exact, n, plan.sequential_run(n));
    INFO("segment " << s << " of " << n << " elements: got " << first[s] << ", exact " << double(exact.exact));
    CHECK(std::fabs((long double)first[s] - exact.exact) <= bound);
  }
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}


TEST_CASE("create refuses bad descriptions with a message naming the plan and the problem",
          "[segmented_reduce][errors][host]") {
  Device& dev = test::device();
  std::vector<test::BadDesc<SegmentedReduceDesc>> bad;
  auto add = [&](auto change, Status status, const char* says) {
    SegmentedReduceDesc d = desc_of(DataType::u32, Op::add, 10, 100);
    change(d);
    bad.push_back({d, status, says});
  };
  add([](auto& d) { d.max_segments = 0; }, Status::invalid_argument, "max_segments 0");
  add([](auto& d) { d.max_count = 0; }, Status::invalid_argument, "max_count 0");
  add([](auto& d) {
    d.type = DataType::f32;
    d.op = Op::bit_and;
  }, Status::invalid_argument, "bitwise");
  add([](auto& d) { d.type = DataType::u8; }, Status::invalid_argument, "sort-key type");
  add([](auto& d) { d.tuning.items_per_thread = 4; }, Status::invalid_argument, "items_per_thread");
  add([](auto& d) { d.tuning.vectors_per_thread = 17; }, Status::invalid_argument, "vectors_per_thread");
  add([](auto& d) { d.tuning.workgroup_size = 96; }, Status::invalid_argument, "workgroup_size");
  add([](auto& d) { d.thresholds = {64, 8, 0}; }, Status::invalid_argument, "medium_max");
  test::check_create_refused(bad, "SegmentedReduce",
                            [&](const SegmentedReduceDesc& d) { return SegmentedReduce::create(dev.context(), d); });
  // Past one storage-buffer binding (64 KiB here).
  Device& small = test::device(test::small_windows());
  const auto r = SegmentedReduce::create(small.context(), desc_of(DataType::u32, Op::add, 10, 1u << 20));
  REQUIRE(!r);
  CHECK(r.status() == Status::unsupported);
  CHECK(r.error().message.find("storage-buffer binding") != std::string::npos);
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}

TEST_CASE("records refuse bad counts, ranges and overlaps and record nothing", "[segmented_reduce][errors][host]") {
  constexpr const char* kRecord = "SegmentedReduce::record";
  Device& dev = test::device();
  const SegmentedReduce plan = SegmentedReduce::create(dev.context(), desc_of(DataType::u32, Op::add, 16, 1000)).value();
  const VkDeviceSize scratch_bytes = plan.scratch_requirements().size;
  Buffer in = test::make_buffer(dev, 4096), out = test::make_buffer(dev, 256), offsets = test::make_buffer(dev, 256);
  Buffer scratch = test::make_buffer(dev, scratch_bytes + 256), count = test::make_buffer(dev, 16);
  const BufferRange input = in.range(0, 4000), output = out.range(0, 64), begin = offsets.range(0, 64);
  const BufferRange end = offsets.range(4, 64), work = scratch.range(0, scratch_bytes);
  test::check_refused(dev, out, kRecord, "segments 17 exceeds max_segments 16",
                [&](VkCommandBuffer cmd) { return plan.record(cmd, input, out.range(0, 68), begin, end, 17, work); });
  test::check_refused(dev, out, kRecord, "output and input ranges overlap", [&](VkCommandBuffer cmd) {
    return plan.record(cmd, out.range(0, 256), output, begin, end, 16, work);
  });
  test::check_refused(dev, out, kRecord, "output and scratch ranges overlap", [&](VkCommandBuffer cmd) {
    return plan.record(cmd, input, scratch.range(scratch_bytes - 16, 64), begin, end, 16, work);
  });
  test::check_refused(dev, out, kRecord, "scratch and begin offsets ranges overlap", [&](VkCommandBuffer cmd) {
    return plan.record(cmd, input, output, scratch.range(0, 64), end, 16, work);
  });
  test::check_refused(dev, out, kRecord, "end offsets range holds 60 bytes",
                [&](VkCommandBuffer cmd) { return plan.record(cmd, input, output, begin, offsets.range(4, 60), 16, work); });
  test::check_refused(dev, out, kRecord, "input offset 2", [&](VkCommandBuffer cmd) {
    return plan.record(cmd, in.range(2, 400), output, begin, end, 16, work);
  });
  test::check_refused(dev, out, kRecord, "scratch range holds", [&](VkCommandBuffer cmd) {
    return plan.record(cmd, input, output, begin, end, 16, scratch.range(0, scratch_bytes - 16));
  });
  test::check_refused(dev, out, kRecord, "16 segments of 63 elements exceed max_count 1000", [&](VkCommandBuffer cmd) {
    return plan.record_fixed(cmd, input, output, 63, 16, work);
  });
  test::check_refused(dev, out, kRecord, "input range holds 400 bytes", [&](VkCommandBuffer cmd) {
    return plan.record_fixed(cmd, in.range(0, 400), output, 10, 16, work);
  });
  test::check_refused(dev, out, kRecord, "count buffer offset 2", [&](VkCommandBuffer cmd) {
    return plan.record_indirect(cmd, input, output, begin, end, count.range(2, 4), work);
  });
  test::check_refused(dev, out, kRecord, "segment count overlaps scratch", [&](VkCommandBuffer cmd) {
    return plan.record_indirect(cmd, input, output, begin, end, scratch.range(0, 4), work);
  });
  REQUIRE_NO_VALIDATION_MESSAGES(dev);
}
