// The keyed primitives: ReduceByKey, ScanByKey, RunLengthEncode, NonTrivialRuns and Unique. One plan type and
// one kernel (shaders/by_key/chained.comp) serve them all; the primitive is the kernel's specialization
// constant MODE. chained: the tiles chain run summaries (shaders/common/run_state.glsl) in one pass with Merrill &
// Garland's decoupled look-back (2016) and Smith, Levien & Owens' decoupled fallback (SPAA 2025).
// reduce_then_scan: the kernel's portable build (no memory model) in three phases (specialization constant PHASE):
// store the tiles' summaries, scan them in one workgroup, replay each tile from its prefix.
#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "context_impl.hpp"
#include "dispatch.hpp"
#include "errors.hpp"
#include "indirect.hpp"
#include "plan_common.hpp"
#include "shader_groups.hpp"
#include "vkprim/reduce_by_key.hpp"
#include "vkprim/run_length_encode.hpp"
#include "vkprim/scan_by_key.hpp"
#include "vkprim/unique.hpp"

namespace vkprim {

namespace detail {

namespace {

// The kernel's MODE (specialization constant) and push-constant flag bits.
enum class Mode : uint32_t { reduce = 0, scan_inclusive = 1, scan_exclusive = 2, encode = 3, non_trivial = 4, unique = 5 };
enum : uint32_t { kKeyVectors = 1u, kValueVectors = 2u, kOutVectors = 4u, kIndirect = 8u, kIndices = 16u };
// The portable kernel's phases (specialization constant PHASE), in recording order.
enum Phase : uint32_t { kSummarize = 0, kScan = 1, kReplay = 2, kPhases = 3 };

// Counts up to this take 256 x 12 tiles of 32-bit keys and values (kKeyedShapes).
constexpr uint64_t kSmallCount = uint64_t(1) << 22;

// What a keyed plan's default tile shape follows.
enum class KeyedClass {
  user_narrow,       // an engine's values of up to 16 bytes
  user_wide,         // an engine's values of 17..64 bytes
  wide,              // 64-bit keys or values
  scan_large,        // ScanByKey of 32-bit keys and values, max_count above kSmallCount
  keys_only_large,   // RunLengthEncode, NonTrivialRuns, Unique of 32-bit keys, max_count above kSmallCount
  narrow,            // the rest: 32-bit keys and values
};
// Default tiles (workgroup x items per invocation), measured on an H100 (docs/PERFORMANCE.md, "Keyed
// primitives"). Plans of the two `_large` classes keep the `narrow` shape too, for records of counts up to
// kSmallCount. User values: the workgroup is then halved until its shared memory fits (resolve_keyed_tile).
struct KeyedShapeRow {
  KeyedClass cls;
  uint32_t wg, items;
};
constexpr KeyedShapeRow kKeyedShapes[] = {
    {KeyedClass::user_narrow, 256, 8}, {KeyedClass::user_wide, 256, 4},        {KeyedClass::wide, 256, 8},
    {KeyedClass::scan_large, 512, 12}, {KeyedClass::keys_only_large, 128, 24}, {KeyedClass::narrow, 256, 12},
};
constexpr KeyedShapeRow keyed_shape(KeyedClass cls) {
  for (const KeyedShapeRow& row : kKeyedShapes)
    if (row.cls == cls) return row;
  return {KeyedClass::narrow, 256, 12};
}

}  // namespace

// A tile shape and its kernels.
struct ByKeyShape {
  uint32_t wg = 256, items = 12;
  const Kernel* kernel = nullptr;               // chained
  std::array<const Kernel*, kPhases> phases{};  // reduce_then_scan
  uint64_t tile_elements() const { return uint64_t(wg) * items; }
  uint64_t tiles_for(uint64_t n) const { return std::max<uint64_t>(1, ceil_div(n, tile_elements())); }
};

struct ByKeyPlan {
  ContextLease context;  // counted: ~Context aborts while a plan lives
  const char* name = "ReduceByKey";
  Mode mode = Mode::reduce;
  DataType key_type = DataType::u32;
  DataType value_type = DataType::u32;  // u32 for the primitives without input values
  Op op = Op::add;
  const UserOperator* user = nullptr;   // ReduceByKey / ScanByKey with an engine's operator: value_type unused
  bool indices = false;                 // Unique with SelectOutput::indices
  uint64_t max_count = 0;
  KeyedAlgorithm algorithm = KeyedAlgorithm::chained;  // resolved
  uint32_t key_bytes = 4, value_bytes = 4;
  ByKeyShape shape;                 // max_count's tiles: record_indirect, and record of larger counts
  std::optional<ByKeyShape> small;  // record of counts up to kSmallCount, where its tiles differ
  uint64_t max_tiles = 1;
  VkDeviceSize state_per_tile = 8, state_bytes = 0, indirect_offset = 0, scratch_bytes = 0, scratch_align = 16;
  const Kernel* args = nullptr;
  std::unique_ptr<DescriptorSets> descriptors;
  // The public desc of the owning class (one of them is used).
  ReduceByKeyDesc reduce_desc;
  ScanByKeyDesc scan_desc;
  RunLengthEncodeDesc rle_desc;
  UniqueDesc unique_desc;

  bool reads_values() const { return mode == Mode::reduce || mode == Mode::scan_inclusive || mode == Mode::scan_exclusive; }
  bool scan() const { return mode == Mode::scan_inclusive || mode == Mode::scan_exclusive; }
  bool chained() const { return algorithm == KeyedAlgorithm::chained; }
  const ByKeyShape& shape_for(uint64_t count, bool indirect) const {
    return small && !indirect && count <= kSmallCount ? *small : shape;
  }
};

namespace {

KeyedClass classify(const ByKeyPlan& p) {
  if (p.user) return p.value_bytes <= 16 ? KeyedClass::user_narrow : KeyedClass::user_wide;
  if (p.key_bytes == 8 || (p.reads_values() && p.value_bytes == 8)) return KeyedClass::wide;
  if (p.max_count <= kSmallCount) return KeyedClass::narrow;
  if (p.scan()) return KeyedClass::scan_large;
  return p.reads_values() ? KeyedClass::narrow : KeyedClass::keys_only_large;
}

// What a description chooses beyond its types and count.
struct Choices {
  Tuning tuning;
  const UserOperator* user = nullptr;  // the values' operator (ReduceByKey, ScanByKey), or nullptr
  KeyedAlgorithm algorithm = KeyedAlgorithm::automatic;
};

// Every check of a keyed description before any choice is made: the types and operator, max_count, the
// algorithm and tuning fields, then the algorithm against the device's features.
Result<void> check_keyed_desc(const ContextImpl& c, const char* name, DataType key_type, DataType value_type, Op op,
                              uint64_t max_count, const Choices& choices) {
  if (!known_type(key_type))
    return make_error(Status::invalid_argument, name, ": unknown key type ", int(key_type));
  if (!known_type(value_type))
    return make_error(Status::invalid_argument, name, ": unknown value type ", int(value_type));
  if (int(op) < 0 || int(op) > int(Op::bit_xor)) return make_error(Status::invalid_argument, name, ": unknown operator ", int(op));
  if (auto ok = check_type_op(c, key_type, Op::add, name); !ok) return ok;
  if (const UserOperator* user = choices.user) {
    if (auto ok = check_user_operator(*user, name); !ok) return ok;
  } else if (auto ok = check_type_op(c, value_type, op, name); !ok) {
    return ok;
  }
  if (max_count == 0 || max_count > 0xFFFFFFFFull)
    return make_error(Status::invalid_argument, name, ": max_count ", max_count,
                      " must be in 1..2^32-1 (counts are u32 on the GPU)");
  if (int(choices.algorithm) < 0 || int(choices.algorithm) > int(KeyedAlgorithm::reduce_then_scan))
    return make_error(Status::invalid_argument, name, ": unknown algorithm ", int(choices.algorithm));
  if (auto ok = check_tuning(name, choices.tuning, tune_workgroup_size | tune_items_per_thread); !ok) return ok;
  if (choices.algorithm == KeyedAlgorithm::chained && !c.caps.has(feature_memory_model))
    return make_error(Status::unsupported, name, ": chained needs the vulkanMemoryModel and ",
                      "vulkanMemoryModelDeviceScope features, which the device lacks or the caller did not enable ",
                      "(device_requirements() lists them); reduce_then_scan (or automatic) runs without them");
  return {};
}

// automatic: chained where the memory model is enabled, else reduce_then_scan.
KeyedAlgorithm resolve_keyed_algorithm(const ContextImpl& c, KeyedAlgorithm asked) {
  if (asked != KeyedAlgorithm::automatic) return asked;
  return c.caps.has(feature_memory_model) ? KeyedAlgorithm::chained : KeyedAlgorithm::reduce_then_scan;
}

// Shared memory of a workgroup of `wg_size`: a count word and a value per invocation (the workgroup scan),
// the look-back words, and the staging of compacted outputs (shaders/by_key/chained.comp STAGE: 4 per
// invocation, at most 2048, of A (keys, indices or offsets) and B (values or lengths)).
uint64_t shared_bytes_for(const ByKeyPlan& p, uint64_t wg_size) {
  const uint64_t stage = p.scan() ? 0 : std::min<uint64_t>(wg_size * 4, 2048);
  const uint64_t stage_bytes = stage * (p.mode == Mode::non_trivial ? 4 : p.key_bytes) +
                               (p.mode == Mode::unique ? 0 : stage * p.value_bytes);
  return wg_size * (4 + p.value_bytes) + 32 + (p.user ? 4 * p.user->words : 0) + stage_bytes;
}

// The tiles: the tuning's, else the class's row (a user operator's workgroup halved until its shared
// memory fits), plus the narrow tiles for small counts where the class keeps them and they fit.
Result<void> resolve_keyed_tile(const ContextImpl& c, const Tuning& tuning, ByKeyPlan& plan) {
  const char* name = plan.name;
  const KeyedClass cls = classify(plan);
  const KeyedShapeRow row = keyed_shape(cls);
  const bool defaults = !tuning.workgroup_size && !tuning.items_per_thread;
  if (defaults && (cls == KeyedClass::scan_large || cls == KeyedClass::keys_only_large)) {
    const KeyedShapeRow narrow = keyed_shape(KeyedClass::narrow);
    plan.small = ByKeyShape{narrow.wg, narrow.items};
  }
  ByKeyShape& shape = plan.shape;
  shape.wg = tuning.workgroup_size ? tuning.workgroup_size : row.wg;
  shape.items = tuning.items_per_thread ? tuning.items_per_thread : row.items;
  if (shape.wg < 64 || shape.wg > 1024 || (shape.wg & (shape.wg - 1)) != 0)
    return make_error(Status::invalid_argument, name, ": tuning.workgroup_size ", shape.wg, " must be a power of two from 64 to 1024");
  if (shape.items < 4 || shape.items > 32 || shape.items % 4 != 0)
    return make_error(Status::invalid_argument, name, ": tuning.items_per_thread ", shape.items,
                      " must be a multiple of 4 from 4 to 32");
  if (plan.user && !tuning.workgroup_size)
    while (shape.wg > 64 && shared_bytes_for(plan, shape.wg) > c.caps.max_shared_memory) shape.wg /= 2;
  const uint64_t shared_bytes = shared_bytes_for(plan, shape.wg);
  if (shared_bytes > c.caps.max_shared_memory)
    return make_error(Status::unsupported, name, ": a workgroup of ", shape.wg, " needs ", shared_bytes,
                      " bytes of shared memory; the device allows ", c.caps.max_shared_memory,
                      " (lower workgroup_size)");
  if (plan.small && shared_bytes_for(plan, plan.small->wg) > c.caps.max_shared_memory) plan.small.reset();
  return {};
}

// Checks that max_count fits one binding, then lays out scratch: the tile state of the most tiles any
// record takes, then record_indirect's args region.
Result<void> lay_out_keyed_scratch(const ContextImpl& c, ByKeyPlan& plan) {
  const char* name = plan.name;
  const uint64_t max_count = plan.max_count;
  const uint32_t widest = std::max(plan.key_bytes, plan.reads_values() ? plan.value_bytes : 4u);
  const uint64_t window = window_elements(c, widest, plan.shape.tile_elements());
  if (max_count > window)
    return make_error(Status::unsupported, name, ": max_count ", max_count, " elements of ", widest,
                      " bytes exceed one storage-buffer binding (", window,
                      " elements, from maxStorageBufferRange); the keyed primitives do not split into windows");
  plan.max_tiles = plan.shape.tiles_for(max_count);
  if (plan.small) plan.max_tiles = std::max(plan.max_tiles, plan.small->tiles_for(kSmallCount));
  // chained tile state: two 16-bit-part words for the count, two or four for the value (two per word of a
  // user value; none for Unique), or in the same bytes one 64-bit word per 32 bits (state64 in
  // build_keyed_kernels). reduce_then_scan summaries: the count word and the value's words.
  const uint32_t value_words = plan.mode == Mode::unique ? 0 : (plan.user ? plan.user->words : plan.value_bytes / 4);
  plan.state_per_tile = VkDeviceSize(plan.chained() ? 2 + 2 * value_words : 1 + value_words) * 4;
  plan.scratch_align = binding_alignment(c);
  plan.state_bytes = align_up(kStateHeaderBytes + plan.max_tiles * plan.state_per_tile, plan.scratch_align);
  plan.indirect_offset = plan.state_bytes;
  plan.scratch_bytes = plan.indirect_offset + align_up(kIndirectRegionBytes, plan.scratch_align);
  if (plan.state_bytes > c.caps.max_storage_buffer_range)
    return make_error(Status::unsupported, name, ": the tile state of ", max_count, " elements needs ", plan.state_bytes,
                      " bytes, past maxStorageBufferRange ", c.caps.max_storage_buffer_range);
  return {};
}

// The kernels by tile state (chained in 16-bit parts, chained in 64-bit words, portable) and key width.
enum KeyedKernel { kChained = 0, kChained64 = 1, kPortable = 2 };
constexpr KernelName kKeyedKernels[3][2] = {{kernel_name("by_key/chained_k32"), kernel_name("by_key/chained_k64")},
                                            {kernel_name("by_key/chained64_k32"), kernel_name("by_key/chained64_k64")},
                                            {kernel_name("by_key/portable_k32"), kernel_name("by_key/portable_k64")}};

// The kernel of a plan's tiles: chained (in 64-bit state words where `state64`, but for the exclusive
// scan's tiles of large counts) or portable, by key width.
KernelName keyed_kernel(const ByKeyPlan& p, bool state64, bool large_counts) {
  const bool words = state64 && !(large_counts && p.mode == Mode::scan_exclusive);
  return kKeyedKernels[p.chained() ? (words ? kChained64 : kChained) : kPortable][p.key_bytes == 8];
}

// One shape's kernels: one chained pass, or reduce_then_scan's phases (PHASE).
Result<void> build_shape_kernels(ContextImpl& c, const ByKeyPlan& plan, KernelDesc kd, KernelName kernel,
                                 ByKeyShape& sh) {
  kd.kernel = kernel;
  kd.workgroup_size = sh.wg;
  kd.items = sh.items;
  for (uint32_t phase = 0; phase < (plan.chained() ? 1u : kPhases); ++phase) {
    kd.spec.phase = plan.chained() ? 0u : phase;
    auto built = get_kernel(c, kd);
    if (!built) return make_error(built.status(), plan.name, ": ", built.error().message);
    (plan.chained() ? sh.kernel : sh.phases[phase]) = built.value();
  }
  return {};
}

// The kernels of the plan's shapes (max_count's, then the small counts'), then record_indirect's args kernel.
Result<void> build_keyed_kernels(ContextImpl& c, ByKeyPlan& plan) {
  const UserOperator* user = plan.user;
  auto variant = value_variant(c, plan.value_type, std::nullopt, user, true, plan.shape.wg);
  if (!variant) return variant.error();
  std::string v = variant.value();
  // The look-back's ballots (chained) and the shuffles of neighbouring keys (user_variant already asks for both).
  const VkSubgroupFeatureFlags needed =
      VkSubgroupFeatureFlags(VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT) |
      (plan.chained() ? VkSubgroupFeatureFlags(VK_SUBGROUP_FEATURE_BALLOT_BIT) : 0u);
  if (v.find(".nosg") == std::string::npos && (c.caps.subgroup_operations & needed) != needed) v += ".nosg";
  const bool subgroups = v.find(".nosg") == std::string::npos;
  // The chained tile state in 64-bit words (half the atomics per publish and per look-back read) where
  // 64-bit atomics are enabled; built for the built-in types with subgroups (shaders/kernels.cmake). The
  // exclusive scan's tiles for counts above kSmallCount keep the 16-bit parts, measured faster there
  // (docs/PERFORMANCE.md, Keyed primitives).
  const bool state64 = plan.chained() && !user && subgroups && state64_enabled(c);
  const KernelName kernel = keyed_kernel(plan, state64, plan.max_count > kSmallCount);
  KernelDesc kd{kernel};
  kd.group = user ? user->kernels : &kShaderGroup_by_key;
  kd.variant = v;
  if (!user) kd.op = plan.op;
  kd.spec.mode = uint32_t(plan.mode);
  kd.uses_subgroups = subgroups;
  if (auto ok = build_shape_kernels(c, plan, kd, kernel, plan.shape); !ok) return ok;
  if (plan.small)
    if (auto ok = build_shape_kernels(c, plan, kd, keyed_kernel(plan, state64, false), *plan.small); !ok) return ok;
  auto args = indirect_args_kernel(c, plan.name);
  if (!args) return args.error();
  plan.args = args.value();
  return {};
}

Result<std::unique_ptr<ByKeyPlan>> create_plan(Context& context, const char* name, Mode mode, DataType key_type,
                                               DataType value_type, Op op, uint64_t max_count, Choices choices) {
  ContextImpl& c = context.impl();
  if (auto ok = check_keyed_desc(c, name, key_type, value_type, op, max_count, choices); !ok) return ok.error();
  auto plan = std::make_unique<ByKeyPlan>();
  plan->context = &c;
  plan->name = name;
  plan->mode = mode;
  plan->key_type = key_type;
  plan->value_type = value_type;
  plan->op = op;
  plan->max_count = max_count;
  plan->algorithm = resolve_keyed_algorithm(c, choices.algorithm);
  plan->key_bytes = size_of(key_type);
  plan->user = choices.user;
  plan->value_bytes = choices.user ? choices.user->size : size_of(value_type);
  if (auto ok = resolve_keyed_tile(c, choices.tuning, *plan); !ok) return ok.error();
  if (auto ok = lay_out_keyed_scratch(c, *plan); !ok) return ok.error();
  if (auto ok = build_keyed_kernels(c, *plan); !ok) return ok.error();
  plan->descriptors = std::make_unique<DescriptorSets>(c, c.options.descriptor_sets_per_pool);
  return plan;
}

// A range a record reads or writes: its name for messages, the element size and the bytes used.
struct Operand {
  const char* what;
  BufferRange range;
  uint32_t elem;
  VkDeviceSize bytes;
  bool output;
  bool always = false;  // checked even when no bytes are used (the count the GPU writes)
};

// The plan's operands for `n` elements (max_count for record_indirect): inputs, outputs A and B, the count.
struct Operands {
  Operand keys, values, a, b, count;
};

Result<void> check_operands(const ByKeyPlan& p, const char* call, const Operands& o, const BufferRange* count_buffer,
                            const BufferRange& scratch) {
  std::vector<Operand> ranges;
  for (const Operand* op : {&o.keys, &o.values, &o.a, &o.b, &o.count})
    if (op->what) ranges.push_back(*op);
  for (const Operand& r : ranges)
    if (auto ok = check_range(r.range, r.bytes, r.elem, r.what, r.bytes > 0 || r.always); !ok)
      return with_context(ok, p.name, call);
  const ScratchRequirements need{p.scratch_bytes, p.scratch_align, 0};
  if (auto ok = check_scratch(scratch, need, p.name, call); !ok) return ok;
  ranges.push_back({"scratch", scratch, 1, p.scratch_bytes, true});
  if (count_buffer) ranges.push_back({"count_buffer", *count_buffer, 4, 4, false});
  for (size_t i = 0; i < ranges.size(); ++i)
    for (size_t j = i + 1; j < ranges.size(); ++j) {
      const Operand& a = ranges[i];
      const Operand& b = ranges[j];
      if (!a.range.buffer || !b.range.buffer || a.bytes == 0 || b.bytes == 0) continue;
      if (!a.output && !b.output) continue;  // two inputs may share memory
      if (overlaps(a.range, a.bytes, b.range, b.bytes))
        return make_error(Status::invalid_argument, p.name, "::", call, ": ", a.what, " and ", b.what,
                          " ranges overlap (the keyed primitives do not work in place)");
    }
  return {};
}

// The checks of a record before anything is bound: record_indirect's limits and count buffer, or the
// count against max_count; then the operands and scratch.
Result<void> check_record(const ByKeyPlan& p, const char* call, const Operands& o, uint64_t count,
                          const BufferRange* count_buffer, const BufferRange& scratch) {
  if (count_buffer) {
    const uint64_t window = window_elements(*p.context, std::max(p.key_bytes, p.value_bytes), p.shape.tile_elements());
    if (auto ok = check_indirect_limits(*p.context, p.max_count, window, p.max_tiles, p.name); !ok) return ok;
    const std::string full_call = std::string(p.name) + "::" + call;
    if (auto ok = check_count_buffer(*count_buffer, full_call.c_str()); !ok) return ok;
  } else if (count > p.max_count) {
    return make_error(Status::invalid_argument, p.name, "::", call, ": count ", count, " exceeds max_count ", p.max_count);
  }
  return check_operands(p, call, o, count_buffer, scratch);
}

// A record's operands bound for `n` elements; an absent or empty operand binds the args region instead.
struct OperandBindings {
  ElementBinding keys, values, a, b, cnt;
};
OperandBindings bind_operands(const ContextImpl& c, const Operands& o, uint64_t n, const BoundBuffer& region) {
  auto bind = [&](const Operand& op, uint64_t elements) {
    if (!op.what || !op.range.buffer || elements == 0) return ElementBinding{region, 0};
    return bind_elements(c, op.range, 0, elements, op.elem);
  };
  return {bind(o.keys, n), bind(o.values, n), bind(o.a, o.a.bytes / std::max<uint32_t>(1, o.a.elem)),
          bind(o.b, o.b.bytes / std::max<uint32_t>(1, o.b.elem)), bind(o.count, 1)};
}

// The kernel pass over `tiles` tiles with its bindings, push constants, dispatch (record_indirect: entry 0
// of the args region) and fill; its kernel, label and fill range are the algorithm's.
Pass keyed_pass(const ByKeyPlan& p, const OperandBindings& bound, const BufferRange& scratch, const BoundBuffer& region,
                uint64_t count, uint64_t tiles, bool indirect) {
  const uint32_t key_vec = 16 / p.key_bytes, value_vec = p.user ? 1 : 16 / p.value_bytes;
  Pass pass;
  const BoundBuffer state{scratch.buffer, scratch.offset, p.state_bytes};
  pass.buffers = {bound.keys.bound, bound.values.bound, state, bound.a.bound, bound.b.bound, bound.cnt.bound, region};
  pass.push[0] = uint32_t(count);
  pass.push[1] = bound.keys.shift;
  pass.push[2] = bound.values.shift;
  pass.push[3] = bound.a.shift;
  pass.push[4] = bound.b.shift;
  pass.push[5] = bound.cnt.shift;
  pass.push[7] = (bound.keys.shift % key_vec == 0 ? kKeyVectors : 0u) |
                 (bound.values.shift % value_vec == 0 ? kValueVectors : 0u) |
                 (p.scan() && bound.b.shift % value_vec == 0 ? kOutVectors : 0u) | (p.indices ? kIndices : 0u) |
                 (indirect ? kIndirect : 0u);
  pass.groups = tiles;
  pass.push[6] = packed_knobs(*p.context, tiles);
  if (indirect) {
    pass.indirect_entry = 0;
    pass.indirect_region = region;
  }
  pass.fill_before = true;
  return pass;
}

// Appends `pass` as the plan's algorithm runs it: the one chained pass, or reduce_then_scan's three phases.
void add_kernel_passes(const ByKeyPlan& p, const ByKeyShape& shape, Pass pass, uint64_t tiles, bool indirect,
                       const BufferRange& scratch, std::vector<Pass>& passes) {
  const std::string label = std::string("vkprim ") + p.name + (indirect ? " (indirect)" : "");
  if (p.chained()) {
    pass.kernel = shape.kernel;
    pass.fill = {scratch.buffer, scratch.offset, state_clear_bytes(tiles, p.state_per_tile, p.state_bytes)};
    pass.label = label;
    passes.push_back(std::move(pass));
    return;
  }
  // reduce_then_scan: every summary the scan reads is stored first, so only the statistics header is cleared.
  static constexpr const char* kPhaseNames[kPhases] = {" summarize", " scan", " replay"};
  for (uint32_t phase = 0; phase < kPhases; ++phase) {
    Pass step = pass;
    step.kernel = shape.phases[phase];
    step.label = label + kPhaseNames[phase];
    step.fill_before = phase == kSummarize;
    step.fill = {scratch.buffer, scratch.offset, kStateHeaderBytes};
    // Unused bindings alias the args region as writable descriptors, so the barriers up to the replay's
    // indirect dispatch must cover indirect-command reads, as the one after the args pass does.
    step.writes_indirect_args = indirect && phase != kReplay;
    if (phase == kScan) {
      step.groups = 1;
      step.indirect_entry = -1;
      step.indirect_region = {};
    }
    passes.push_back(std::move(step));
  }
}

Result<void> record_plan(const ByKeyPlan& p, const char* call, VkCommandBuffer cmd, const Operands& o,
                         uint64_t count, const BufferRange* count_buffer, const BufferRange& scratch) {
  if (auto ok = check_record(p, call, o, count, count_buffer, scratch); !ok) return ok;
  const bool indirect = count_buffer != nullptr;
  const uint64_t n = indirect ? p.max_count : count;
  ContextImpl& c = *p.context;
  const BoundBuffer region{scratch.buffer, scratch.offset + p.indirect_offset, kIndirectRegionBytes};
  const OperandBindings bound = bind_operands(c, o, n, region);
  std::vector<Pass> passes;
  if (indirect)
    passes.push_back(make_indirect_args_pass(c, p.args, *count_buffer, region, p.max_count,
                                             {{uint32_t(p.shape.tile_elements()), 1, 0, 0}}));
  const ByKeyShape& shape = p.shape_for(n, indirect);
  const uint64_t tiles = shape.tiles_for(n);
  add_kernel_passes(p, shape, keyed_pass(p, bound, scratch, region, count, tiles, indirect), tiles, indirect, scratch,
                    passes);
  return record_passes(c, *p.descriptors, cmd, passes, p.name, call);
}

ScratchRequirements scratch_of(const ByKeyPlan& p) {
  return {p.scratch_bytes, p.scratch_align,
          VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT};
}

// Operands of each primitive for `n` elements.
Operand input(const char* what, const BufferRange& r, uint32_t elem, uint64_t n) { return {what, r, elem, n * elem, false}; }
Operand output(const char* what, const BufferRange& r, uint32_t elem, uint64_t n) { return {what, r, elem, n * elem, true}; }
Operand count_out(const char* what, const BufferRange& r) { return {what, r, 4, 4, true, true}; }

}  // namespace

}  // namespace detail

const char* to_string(KeyedAlgorithm a) {
  switch (a) {
    case KeyedAlgorithm::automatic: return "automatic";
    case KeyedAlgorithm::chained: return "chained";
    case KeyedAlgorithm::reduce_then_scan: return "reduce_then_scan";
  }
  return "unknown";
}

bool parse(const char* name, KeyedAlgorithm& out) {
  return detail::parse_enum(name, KeyedAlgorithm::reduce_then_scan, out);
}

using detail::ByKeyPlan;
using detail::make_error;
using detail::Operands;

// Each public class: a thin shell over ByKeyPlan.
#define VKPRIM_BY_KEY_SHELL(Class, Desc, desc_member)                                                         \
  Class::Class(std::unique_ptr<ByKeyPlan> plan) : plan_(std::move(plan)) {}                                  \
  Class::Class(Class&&) noexcept = default;                                                                  \
  Class& Class::operator=(Class&&) noexcept = default;                                                       \
  Class::~Class() = default;                                                                                 \
  const Desc& Class::desc() const { return plan_->desc_member; }                                             \
  ScratchRequirements Class::scratch_requirements() const { return detail::scratch_of(*plan_); }             \
  uint64_t Class::elements_per_tile() const { return plan_->shape.tile_elements(); }                          \
  uint64_t Class::elements_per_tile(uint64_t count) const { return plan_->shape_for(count, false).tile_elements(); } \
  KeyedAlgorithm Class::algorithm() const { return plan_->algorithm; }                                       \
  uint32_t Class::dispatch_count(uint64_t) const { return plan_->chained() ? 1u : uint32_t(detail::kPhases); } \
  VkDeviceSize Class::statistics_offset() const { return 0; }                                                \
  void Class::release_descriptor_sets() const { plan_->descriptors->release(); }

VKPRIM_BY_KEY_SHELL(ReduceByKey, ReduceByKeyDesc, reduce_desc)
VKPRIM_BY_KEY_SHELL(ScanByKey, ScanByKeyDesc, scan_desc)
VKPRIM_BY_KEY_SHELL(RunLengthEncode, RunLengthEncodeDesc, rle_desc)
VKPRIM_BY_KEY_SHELL(NonTrivialRuns, RunLengthEncodeDesc, rle_desc)
VKPRIM_BY_KEY_SHELL(Unique, UniqueDesc, unique_desc)
#undef VKPRIM_BY_KEY_SHELL

// ---- ReduceByKey ----

Result<ReduceByKey> ReduceByKey::create(Context& context, const ReduceByKeyDesc& desc) {
  auto plan = detail::create_plan(context, "ReduceByKey", detail::Mode::reduce, desc.key_type, desc.value_type, desc.op,
                                  desc.max_count, detail::Choices{desc.tuning, desc.user_operator, desc.algorithm});
  if (!plan) return std::move(plan).error();
  plan.value()->reduce_desc = desc;
  return ReduceByKey(std::move(plan).value());
}

namespace {
Operands reduce_operands(const ByKeyPlan& p, const ReduceByKeyOperands& o, uint64_t n) {
  return {detail::input("keys", o.keys, p.key_bytes, n), detail::input("values", o.values, p.value_bytes, n),
          detail::output("unique_keys", o.unique_keys, p.key_bytes, n),
          detail::output("aggregates", o.aggregates, p.value_bytes, n), detail::count_out("run_count", o.run_count)};
}
}  // namespace

Result<void> ReduceByKey::record(VkCommandBuffer cmd, const ReduceByKeyOperands& operands, uint64_t count) const {
  return detail::record_plan(*plan_, "record", cmd, reduce_operands(*plan_, operands, count), count, nullptr,
                             operands.scratch);
}
Result<void> ReduceByKey::record_indirect(VkCommandBuffer cmd, const ReduceByKeyOperands& operands,
                                          const BufferRange& count_buffer) const {
  return detail::record_plan(*plan_, "record_indirect", cmd, reduce_operands(*plan_, operands, plan_->max_count), 0,
                             &count_buffer, operands.scratch);
}

// ---- ScanByKey ----

Result<ScanByKey> ScanByKey::create(Context& context, const ScanByKeyDesc& desc) {
  if (desc.kind != ScanKind::inclusive && desc.kind != ScanKind::exclusive)
    return make_error(Status::invalid_argument, "ScanByKey: unknown kind ", int(desc.kind));
  const auto mode = desc.kind == ScanKind::inclusive ? detail::Mode::scan_inclusive : detail::Mode::scan_exclusive;
  auto plan = detail::create_plan(context, "ScanByKey", mode, desc.key_type, desc.value_type, desc.op, desc.max_count,
                                  detail::Choices{desc.tuning, desc.user_operator, desc.algorithm});
  if (!plan) return std::move(plan).error();
  plan.value()->scan_desc = desc;
  return ScanByKey(std::move(plan).value());
}

namespace {
Operands scan_operands(const ByKeyPlan& p, const ScanByKeyOperands& o, uint64_t n) {
  return {detail::input("keys", o.keys, p.key_bytes, n), detail::input("values", o.values, p.value_bytes, n), {},
          detail::output("output", o.output, p.value_bytes, n), {}};
}
}  // namespace

Result<void> ScanByKey::record(VkCommandBuffer cmd, const ScanByKeyOperands& operands, uint64_t count) const {
  return detail::record_plan(*plan_, "record", cmd, scan_operands(*plan_, operands, count), count, nullptr,
                             operands.scratch);
}
Result<void> ScanByKey::record_indirect(VkCommandBuffer cmd, const ScanByKeyOperands& operands,
                                        const BufferRange& count_buffer) const {
  return detail::record_plan(*plan_, "record_indirect", cmd, scan_operands(*plan_, operands, plan_->max_count), 0,
                             &count_buffer, operands.scratch);
}

// ---- RunLengthEncode and NonTrivialRuns ----

Result<RunLengthEncode> RunLengthEncode::create(Context& context, const RunLengthEncodeDesc& desc) {
  auto plan = detail::create_plan(context, "RunLengthEncode", detail::Mode::encode, desc.key_type, DataType::u32, Op::add,
                                  desc.max_count, detail::Choices{desc.tuning, nullptr, desc.algorithm});
  if (!plan) return std::move(plan).error();
  plan.value()->rle_desc = desc;
  return RunLengthEncode(std::move(plan).value());
}

namespace {
Operands encode_operands(const ByKeyPlan& p, const RunLengthEncodeOperands& o, uint64_t n) {
  return {detail::input("keys", o.keys, p.key_bytes, n), {}, detail::output("unique_keys", o.unique_keys, p.key_bytes, n),
          detail::output("lengths", o.lengths, 4, n), detail::count_out("run_count", o.run_count)};
}
Operands non_trivial_operands(const ByKeyPlan& p, const NonTrivialRunsOperands& o, uint64_t n) {
  return {detail::input("keys", o.keys, p.key_bytes, n), {}, detail::output("offsets", o.offsets, 4, n / 2),
          detail::output("lengths", o.lengths, 4, n / 2), detail::count_out("run_count", o.run_count)};
}
}  // namespace

Result<void> RunLengthEncode::record(VkCommandBuffer cmd, const RunLengthEncodeOperands& operands, uint64_t count) const {
  return detail::record_plan(*plan_, "record", cmd, encode_operands(*plan_, operands, count), count, nullptr,
                             operands.scratch);
}
Result<void> RunLengthEncode::record_indirect(VkCommandBuffer cmd, const RunLengthEncodeOperands& operands,
                                              const BufferRange& count_buffer) const {
  return detail::record_plan(*plan_, "record_indirect", cmd, encode_operands(*plan_, operands, plan_->max_count), 0,
                             &count_buffer, operands.scratch);
}

Result<NonTrivialRuns> NonTrivialRuns::create(Context& context, const RunLengthEncodeDesc& desc) {
  auto plan = detail::create_plan(context, "NonTrivialRuns", detail::Mode::non_trivial, desc.key_type, DataType::u32,
                                  Op::add, desc.max_count, detail::Choices{desc.tuning, nullptr, desc.algorithm});
  if (!plan) return std::move(plan).error();
  plan.value()->rle_desc = desc;
  return NonTrivialRuns(std::move(plan).value());
}
Result<void> NonTrivialRuns::record(VkCommandBuffer cmd, const NonTrivialRunsOperands& operands, uint64_t count) const {
  return detail::record_plan(*plan_, "record", cmd, non_trivial_operands(*plan_, operands, count), count, nullptr,
                             operands.scratch);
}
Result<void> NonTrivialRuns::record_indirect(VkCommandBuffer cmd, const NonTrivialRunsOperands& operands,
                                             const BufferRange& count_buffer) const {
  return detail::record_plan(*plan_, "record_indirect", cmd, non_trivial_operands(*plan_, operands, plan_->max_count),
                             0, &count_buffer, operands.scratch);
}

// ---- Unique ----

Result<Unique> Unique::create(Context& context, const UniqueDesc& desc) {
  if (desc.output != SelectOutput::elements && desc.output != SelectOutput::indices)
    return make_error(Status::invalid_argument, "Unique: unknown output ", int(desc.output));
  auto plan = detail::create_plan(context, "Unique", detail::Mode::unique, desc.key_type, DataType::u32, Op::add,
                                  desc.max_count, detail::Choices{desc.tuning, nullptr, desc.algorithm});
  if (!plan) return std::move(plan).error();
  plan.value()->unique_desc = desc;
  plan.value()->indices = desc.output == SelectOutput::indices;
  return Unique(std::move(plan).value());
}

namespace {
Operands unique_operands(const ByKeyPlan& p, const UniqueOperands& o, uint64_t n) {
  return {detail::input("keys", o.keys, p.key_bytes, n), {},
          detail::output("output", o.output, p.indices ? 4 : p.key_bytes, n), {},
          detail::count_out("unique_count", o.unique_count)};
}
}  // namespace

Result<void> Unique::record(VkCommandBuffer cmd, const UniqueOperands& operands, uint64_t count) const {
  return detail::record_plan(*plan_, "record", cmd, unique_operands(*plan_, operands, count), count, nullptr,
                             operands.scratch);
}
Result<void> Unique::record_indirect(VkCommandBuffer cmd, const UniqueOperands& operands,
                                     const BufferRange& count_buffer) const {
  return detail::record_plan(*plan_, "record_indirect", cmd, unique_operands(*plan_, operands, plan_->max_count), 0,
                             &count_buffer, operands.scratch);
}

}  // namespace vkprim
