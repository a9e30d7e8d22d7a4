#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>

#include "bench_support.hpp"
#include "commands.hpp"
#include "vkprim/histogram.hpp"
#include "vkprim/reduce.hpp"
#include "vkprim/reduce_by_key.hpp"
#include "vkprim/segmented_reduce.hpp"
#include "vkprim/segmented_sort.hpp"
#include "vkprim/run_length_encode.hpp"
#include "vkprim/scan.hpp"
#include "vkprim/scan_by_key.hpp"
#include "vkprim/select.hpp"
#include "vkprim/sort.hpp"
#include "vkprim/unique.hpp"
#include "vkprim/version.hpp"

namespace vkprim::tools {

namespace {

const char* type_name(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
    default: return "other";
  }
}

// The element count the picks are shown for: 2^22, past a CPU's caches, and 64-bit sort keys within one
// binding of lavapipe's 128 MiB.
constexpr uint64_t kPickCount = uint64_t(1) << 22;

// One "automatic picks" line: what the plan resolved to and what it reports of itself, or why it was refused.
template <class Plan, class Describe>
void print_pick(const char* primitive, const std::string& workload, const Result<Plan>& plan, Describe&& describe) {
  const std::string what = plan ? std::string(to_string(plan->algorithm())) + describe(plan.value())
                                 : std::string("refused: ") + plan.error().message;
  std::printf("  %-17s %-32s %s\n", primitive, workload.c_str(), what.c_str());
}

std::string dispatches(uint32_t count) {
  return ", " + std::to_string(count) + (count == 1 ? " dispatch" : " dispatches");
}

// ", 2048 keys per tile, 4 digit passes, ballots ranking, staged scatter (1 staging round), 5 dispatches;
// one workgroup up to 2048 keys, 1024-key tiles up to 65536" (the last part for automatic plans).
std::string sort_report(const RadixSort& p, uint64_t n) {
  std::string out = ", " + std::to_string(p.keys_per_tile()) + " keys per tile, " + std::to_string(p.digit_passes()) +
                    " digit passes, " + to_string(p.ranking()) + " ranking, " + to_string(p.scatter()) + " scatter";
  if (p.algorithm() == SortAlgorithm::onesweep && p.scatter() == SortScatter::staged) {
    const uint32_t rounds = p.staging_rounds();
    out += " (" + std::to_string(rounds) + (rounds == 1 ? " staging round)" : " staging rounds)");
  }
  out += dispatches(p.dispatch_count(n));
  // Small counts: the one-workgroup sort, then smaller tiles (keys_per_tile(count)), at powers of two.
  if (p.one_workgroup_keys()) out += "; one workgroup up to " + std::to_string(p.one_workgroup_keys()) + " keys";
  uint64_t last = 0, last_count = 0;
  for (uint64_t c = 2 * std::max<uint64_t>(p.one_workgroup_keys(), 1); c <= n; c *= 2) {
    const uint64_t tile = p.keys_per_tile(c);
    if (tile == p.keys_per_tile()) break;
    if (last && tile != last) out += ", " + std::to_string(last) + "-key tiles up to " + std::to_string(last_count);
    last = tile;
    last_count = c;
  }
  if (last) out += ", " + std::to_string(last) + "-key tiles up to " + std::to_string(last_count);
  return out;
}

// The reduce and scan picks: u32 and f32 adds, a deterministic f32 scan.
void print_reduce_scan_picks(Context& context, uint64_t n) {
  for (DataType type : {DataType::u32, DataType::f32}) {
    auto reduce = Reduce::create(context, ReduceDesc{type, Op::add, n});
    print_pick("reduce", std::string(to_string(type)) + " add", reduce,
               [&](const Reduce& p) { return dispatches(p.dispatch_count(n)); });
  }
  for (bool deterministic : {false, true}) {
    ScanDesc desc;
    desc.type = deterministic ? DataType::f32 : DataType::u32;
    desc.max_count = n;
    desc.deterministic = deterministic;
    auto scan = Scan::create(context, desc);
    print_pick("scan", std::string(to_string(desc.type)) + " inclusive add" + (deterministic ? ", deterministic" : ""),
               scan, [&](const Scan& p) { return dispatches(p.dispatch_count(n)); });
  }
}

// The segmented primitives: each segment's class by its length, chosen on the GPU.
void print_segmented_picks(Context& context, uint64_t n) {
  SegmentedReduceDesc segmented;  // u32 add
  segmented.max_segments = n;
  segmented.max_count = n;
  const auto by_length = SegmentedReduce::create(context, segmented);
  const std::string classes =
      by_length ? "per segment: up to " + std::to_string(by_length->thresholds().short_max) + " one invocation, up to " +
                      std::to_string(by_length->thresholds().medium_max) + " " +
                      std::to_string(by_length->medium_lanes()) + " lanes, longer chunks of " +
                      std::to_string(by_length->thresholds().chunk) + ", 1 to 3 dispatches"
                : "refused: " + by_length.error().message;
  std::printf("  %-17s %-32s %s\n", "segmented_reduce", "u32 add", classes.c_str());
  SegmentedSortDesc segmented_sort;  // u32 keys, u32 values
  segmented_sort.value_size = 4;
  segmented_sort.max_segments = n;
  segmented_sort.max_count = n;
  const auto sort_classes = SegmentedSort::create(context, segmented_sort);
  std::string sort_pick;
  if (!sort_classes) {
    sort_pick = "refused: " + sort_classes.error().message;
  } else {
    const SegmentedSortThresholds t = sort_classes->thresholds();
    const uint64_t block = sort_classes->block_tile_keys();
    sort_pick = "per segment: up to " + std::to_string(t.small_max) + " batched, up to " +
                std::to_string(t.medium_max) + " one workgroup per digit" +
                (block > t.medium_max ? ", up to " + std::to_string(block) + " one workgroup" : std::string()) +
                ", longer tiles of " + std::to_string(sort_classes->large_tile_keys()) + " by " +
                to_string(sort_classes->large_algorithm());
  }
  std::printf("  %-17s %-32s %s\n", "segmented_sort", "u32 keys, u32 values", sort_pick.c_str());
}

// Select, Partition and the radix sorts (keys, pairs, 64-bit keys).
void print_select_sort_picks(Context& context, uint64_t n) {
  SelectDesc select_desc;
  select_desc.max_count = n;
  auto tiles = [&](const auto& p) {
    return ", " + std::to_string(p.elements_per_tile()) + " elements per tile" + dispatches(p.dispatch_count(n));
  };
  print_pick("select", "u32 flagged", Select::create(context, select_desc), tiles);
  print_pick("partition", "u32 flagged", Partition::create(context, select_desc), tiles);
  for (const auto& [key, value_size] : {std::pair{DataType::u32, 0u}, std::pair{DataType::u32, 4u},
                                        std::pair{DataType::u64, 0u}}) {
    SortDesc desc;
    desc.key_type = key;
    desc.value_size = value_size;
    desc.max_count = n;
    const std::string workload =
        std::string(to_string(key)) + " keys" + (value_size ? " + " + std::to_string(value_size) + "-byte values" : "");
    print_pick("sort", workload, RadixSort::create(context, desc),
               [&](const RadixSort& p) { return sort_report(p, n); });
  }
}

void print_keyed_picks(Context& context, uint64_t n) {
  // The keyed primitives: the single pass (chained), or three dispatches without the memory model.
  auto keyed = [&](const char* primitive, const char* workload, const auto& plan) {
    const std::string what = plan ? std::string(to_string(plan->algorithm())) + ", " +
                                        std::to_string(plan->elements_per_tile(n)) + " elements per tile" +
                                        dispatches(plan->dispatch_count(n))
                                  : std::string("refused: ") + plan.error().message;
    std::printf("  %-17s %-32s %s\n", primitive, workload, what.c_str());
  };
  keyed("reduce_by_key", "u32 keys, u32 add", ReduceByKey::create(context, ReduceByKeyDesc{DataType::u32, DataType::u32, Op::add, n}));
  keyed("scan_by_key", "u32 keys, u32 inclusive add",
        ScanByKey::create(context, ScanByKeyDesc{DataType::u32, DataType::u32, Op::add, ScanKind::inclusive, n}));
  keyed("run_length_encode", "u32 keys", RunLengthEncode::create(context, RunLengthEncodeDesc{DataType::u32, n}));
  keyed("non_trivial_runs", "u32 keys", NonTrivialRuns::create(context, RunLengthEncodeDesc{DataType::u32, n}));
  keyed("unique", "u32 keys", Unique::create(context, UniqueDesc{DataType::u32, n}));
}

void print_histogram_picks(Context& context, uint64_t n) {
  // The histogram: privatized copies where bins x channels fit shared memory, else global atomics.
  for (uint32_t bins : {256u, 65536u}) {
    HistogramDesc desc;
    desc.sample = HistogramSample::u32;
    desc.bins = bins;
    desc.upper = 4294967296.0;
    desc.max_count = n;
    print_pick("histogram", "u32, " + std::to_string(bins) + " even bins", Histogram::create(context, desc),
               [&](const Histogram& p) {
                 return ", " + std::to_string(p.replicas()) + " copies per workgroup, " +
                        std::to_string(p.samples_per_tile()) + " samples per step" + dispatches(p.dispatch_count(n));
               });
  }
}

// The memory model and the tile order of the chained kernels, as resolved here.
void print_chained_notes(Context& context) {
  std::printf("  (the chained scan, chained select, onesweep and the chained keyed primitives need the Vulkan memory "
              "model: %s here)\n",
              context.capabilities().has(feature_memory_model) ? "enabled" : "not enabled");
  // ContextOptions::tile_order as resolved here: the same for every size, or launch up to some size.
  const TileOrder small = context.tile_order(1);
  uint64_t launch_tiles = 0;
  for (uint64_t t = 1; t <= (uint64_t(1) << 32) && context.tile_order(t) == TileOrder::launch; t *= 2) launch_tiles = t;
  const bool everywhere = context.tile_order(uint64_t(1) << 32) == small;
  std::printf("  (tile order of the chained kernels that can fall back: %s%s)\n",
              small == TileOrder::launch ? "launch" : "ticket",
              everywhere ? ""
                         : (" up to " + std::to_string(launch_tiles) + " tiles per dispatch, ticket above (loop budget)")
                               .c_str());
}

// What `automatic` resolves to for each primitive on this device, from plans created here (the choice is
// the library's, made at create), with the plan's own report: tile sizes, passes, dispatches at kPickCount.
void print_automatic_picks(Context& context) {
  const uint64_t n = kPickCount;
  std::printf("automatic picks (plans for %s elements; each header's `automatic =` says the rule):\n",
              size_label(n).c_str());
  print_reduce_scan_picks(context, n);
  print_segmented_picks(context, n);
  print_select_sort_picks(context, n);
  print_keyed_picks(context, n);
  print_histogram_picks(context, n);
  print_chained_notes(context);
}

}  // namespace

int run_info(std::vector<std::string> args) {
  auto devices = Device::enumerate();
  if (!devices) {
    std::fprintf(stderr, "vkprim info: %s\n", devices.error().message.c_str());
    return 1;
  }
  std::printf("vkprim %s\n", version().string);
  std::printf("Vulkan devices:\n");
  for (const auto& d : devices.value())
    std::printf("  [%u] %s (%s, Vulkan %u.%u.%u)\n", d.index, d.name.c_str(), type_name(d.type),
                VK_API_VERSION_MAJOR(d.api_version), VK_API_VERSION_MINOR(d.api_version),
                VK_API_VERSION_PATCH(d.api_version));
  auto device = open_device(args);
  if (!device) return 1;
  const Capabilities& c = device->context().capabilities();
  auto yes = [&](uint32_t f) { return c.has(f) ? "yes" : "no"; };
  std::printf("chosen: %s (%s), driver %s %s, Vulkan %u.%u\n", c.device_name.c_str(), type_name(c.device_type),
              c.driver_name.c_str(), c.driver_info.c_str(), VK_API_VERSION_MAJOR(c.api_version),
              VK_API_VERSION_MINOR(c.api_version));
  std::printf("  subgroup size %u (min %u, max %u), arithmetic in compute: %s, size control: %s, partitioned: %s\n",
              c.subgroup_size, c.min_subgroup_size, c.max_subgroup_size, yes(feature_subgroup_arithmetic),
              yes(feature_subgroup_size_control), yes(feature_subgroup_partitioned));
  std::printf("  shared memory %u B, workgroup invocations %u, workgroup count %u x %u x %u\n", c.max_shared_memory,
              c.max_workgroup_invocations, c.max_workgroup_count[0], c.max_workgroup_count[1], c.max_workgroup_count[2]);
  std::printf("  maxStorageBufferRange %llu B, minStorageBufferOffsetAlignment %llu B, push constants %u B\n",
              (unsigned long long)c.max_storage_buffer_range, (unsigned long long)c.min_storage_buffer_offset_alignment,
              c.max_push_constants);
  std::printf("  int64 %s, float64 %s, subgroup int64 %s, int64 atomics %s, memory model %s\n", yes(feature_int64),
              yes(feature_float64), yes(feature_subgroup_extended_types), yes(feature_int64_atomics),
              yes(feature_memory_model));
  std::printf("  8-bit storage %s, 16-bit storage %s (u8 and u16 sort keys)\n", yes(feature_storage_8bit),
              yes(feature_storage_16bit));
  std::printf("  push descriptors %s, synchronization2 %s, debug labels %s, timestamps %s (%.3f ns/tick), "
              "pipeline robustness %s\n",
              yes(feature_push_descriptors), yes(feature_synchronization2), yes(feature_debug_utils),
              yes(feature_timestamps), c.timestamp_period_ns, yes(feature_pipeline_robustness));
  print_automatic_picks(device->context());
  return 0;
}

}  // namespace vkprim::tools
