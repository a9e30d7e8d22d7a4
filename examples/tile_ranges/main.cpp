// tile_ranges: the per-tile splat ranges a tile-based splat renderer (3D Gaussian splatting) builds every
// frame, with every count on the GPU.
//
// Each splat has a key tile << 16 | depth16. Sorted, the keys list every tile's splats front to back, and
// the renderer needs each tile's range [begin, end) of that list. The program records the whole chain in
// ONE command buffer on vkprim's standalone Device (validation and synchronization validation where the
// layer is installed):
//   1. Select           the visible splats' keys, and their indices (flagged) -> visible count on the GPU
//   2. RadixSort        (key, splat index) pairs, record_indirect on that count -> by tile, then by depth
//   3. tile_ids.comp    the engine's own shader: sorted key >> 16             -> a tile id per sorted splat
//   4. RunLengthEncode  the tile ids, record_indirect                         -> tiles, lengths, run count
//   5. Scan             exclusive and inclusive sums of the lengths, record_indirect on the run count
//                                                                             -> each tile's begin and end
// Nothing is read back between stages: each one takes its count from the GPU buffer the previous wrote.
// One submit, one wait; then every stage is checked against the CPU (std::sort and a walk over the tiles).
// Exit status 0 only if everything matches and validation said nothing.
#include <vkprim/vkprim.hpp>

#include "example_support.hpp"
#include "tile_ids_comp.h"  // tile_ranges_tile_ids_spv[]: tile_ids.comp compiled at build time

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace vkprim;
using namespace vkprim_example;

// A 1920x1088 frame in tiles of 16x16 pixels.
constexpr uint32_t kTileSize = 16, kTilesX = 120, kTilesY = 68, kTiles = kTilesX * kTilesY;
constexpr uint32_t kKeyBits = 16 + 13;  // tile ids < 2^13: the sort looks at 29 bits (4 digit passes)
static_assert(kTiles <= (1u << (kKeyBits - 16)));
constexpr uint32_t kWorkgroup = 256;    // tile_ids.comp's local_size_x

void vk_check(VkResult r, const char* what) {
  if (r != VK_SUCCESS) throw Failure(std::string(what) + " failed: VkResult " + std::to_string(int(r)));
}

// The frame's splats: key[i] = tile << 16 | depth16 and visible[i] (a u32 flag). Most splats gather in
// objects of very different sizes, the rest scatter below the horizon: some tiles hold thousands, many a
// few, and the sky's are empty. Splats off screen, and a tenth of the rest (too faint), are not visible.
struct Splats {
  std::vector<uint32_t> key, visible;
};
Splats make_splats(uint32_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const float width = float(kTilesX * kTileSize), height = float(kTilesY * kTileSize);
  struct Object {
    float x, y, spread;
  };
  std::vector<Object> objects(16);
  for (Object& o : objects)
    o = {width * unit(rng), height * (0.3f + 0.7f * unit(rng)), 4.0f + 200.0f * unit(rng) * unit(rng)};
  Splats s{std::vector<uint32_t>(n), std::vector<uint32_t>(n)};
  for (uint32_t i = 0; i < n; ++i) {
    float x, y;
    if (unit(rng) < 0.8f) {
      const Object& o = objects[rng() % objects.size()];
      x = o.x + o.spread * normal(rng), y = o.y + o.spread * normal(rng);
    } else {
      x = width * unit(rng), y = height * (0.25f + 0.75f * unit(rng));
    }
    const bool on_screen = x >= 0.0f && x < width && y >= 0.0f && y < height;
    const uint32_t tx = uint32_t(std::clamp(x, 0.0f, width - 1.0f)) / kTileSize;
    const uint32_t ty = uint32_t(std::clamp(y, 0.0f, height - 1.0f)) / kTileSize;
    s.key[i] = (ty * kTilesX + tx) << 16 | rng() >> 16;
    s.visible[i] = on_screen && unit(rng) >= 0.1f;
  }
  return s;
}

// The engine's own device functions, loaded like vkprim's through the Device's vkGetInstanceProcAddr
// (the program is built with VK_NO_PROTOTYPES, as the library is).
#define TILE_RANGES_VK_FUNCTIONS(X)                                                                       \
  X(vkCreateShaderModule) X(vkDestroyShaderModule) X(vkCreateDescriptorSetLayout)                        \
  X(vkDestroyDescriptorSetLayout) X(vkCreatePipelineLayout) X(vkDestroyPipelineLayout)                   \
  X(vkCreateComputePipelines) X(vkDestroyPipeline) X(vkCreateDescriptorPool) X(vkDestroyDescriptorPool)  \
  X(vkAllocateDescriptorSets) X(vkUpdateDescriptorSets) X(vkCmdBindPipeline) X(vkCmdBindDescriptorSets) \
  X(vkCmdDispatch) X(vkCmdPipelineBarrier)

struct Vk {
#define TILE_RANGES_DECLARE(name) PFN_##name name = nullptr;
  TILE_RANGES_VK_FUNCTIONS(TILE_RANGES_DECLARE)
#undef TILE_RANGES_DECLARE
  explicit Vk(const Device& dev) {
    auto gdpa = reinterpret_cast<PFN_vkGetDeviceProcAddr>(
        dev.get_instance_proc_addr()(dev.instance(), "vkGetDeviceProcAddr"));
    if (!gdpa) throw Failure("no vkGetDeviceProcAddr");
#define TILE_RANGES_LOAD(name) \
  if (!(name = reinterpret_cast<PFN_##name>(gdpa(dev.device(), #name)))) throw Failure("no " #name);
    TILE_RANGES_VK_FUNCTIONS(TILE_RANGES_LOAD)
#undef TILE_RANGES_LOAD
  }

  // A global memory barrier: all this chain needs, since every stage consumes whole buffers.
  void barrier(VkCommandBuffer cmd, VkPipelineStageFlags src_stage, VkAccessFlags src_access,
               VkPipelineStageFlags dst_stage, VkAccessFlags dst_access) const {
    VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr, src_access, dst_access};
    vkCmdPipelineBarrier(cmd, src_stage, dst_stage, 0, 1, &b, 0, nullptr, 0, nullptr);
  }
};
constexpr VkPipelineStageFlags kCompute = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
constexpr VkPipelineStageFlags kTransfer = VK_PIPELINE_STAGE_TRANSFER_BIT;

// tile_ids.comp with its three storage buffers (sorted keys, visible count, tile ids) bound once.
class TileIdPass {
 public:
  // Delegates to the plain constructor first, so that the destructor frees whatever a failed step left.
  TileIdPass(const Vk& vk, VkDevice device, const Buffer* const (&buffers)[3]) : TileIdPass(vk, device) {
    VkDescriptorSetLayoutBinding bindings[3];
    for (uint32_t b = 0; b < 3; ++b)
      bindings[b] = {b, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
    const VkDescriptorSetLayoutCreateInfo set_info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO, nullptr, 0,
                                                   3, bindings};
    vk_check(vk_.vkCreateDescriptorSetLayout(device_, &set_info, nullptr, &set_layout_), "vkCreateDescriptorSetLayout");
    const VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, nullptr, 0, 1,
                                                 &set_layout_, 0, nullptr};
    vk_check(vk_.vkCreatePipelineLayout(device_, &layout_info, nullptr, &layout_), "vkCreatePipelineLayout");

    const VkShaderModuleCreateInfo module_info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, nullptr, 0,
                                               sizeof(tile_ranges_tile_ids_spv), tile_ranges_tile_ids_spv};
    VkShaderModule module = VK_NULL_HANDLE;
    vk_check(vk_.vkCreateShaderModule(device_, &module_info, nullptr, &module), "vkCreateShaderModule");
    VkComputePipelineCreateInfo pipeline_info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    pipeline_info.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, nullptr, 0,
                           VK_SHADER_STAGE_COMPUTE_BIT, module, "main", nullptr};
    pipeline_info.layout = layout_;
    const VkResult created = vk_.vkCreateComputePipelines(device_, VK_NULL_HANDLE, 1, &pipeline_info, nullptr, &pipeline_);
    vk_.vkDestroyShaderModule(device_, module, nullptr);
    vk_check(created, "vkCreateComputePipelines");

    const VkDescriptorPoolSize pool_size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 3};
    const VkDescriptorPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, nullptr, 0, 1, 1, &pool_size};
    vk_check(vk_.vkCreateDescriptorPool(device_, &pool_info, nullptr, &pool_), "vkCreateDescriptorPool");
    const VkDescriptorSetAllocateInfo alloc{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO, nullptr, pool_, 1, &set_layout_};
    vk_check(vk_.vkAllocateDescriptorSets(device_, &alloc, &set_), "vkAllocateDescriptorSets");
    VkDescriptorBufferInfo infos[3];
    VkWriteDescriptorSet writes[3];
    for (uint32_t b = 0; b < 3; ++b) {
      infos[b] = {buffers[b]->handle(), 0, VK_WHOLE_SIZE};
      writes[b] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, nullptr, set_, b, 0, 1, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                   nullptr, &infos[b], nullptr};
    }
    vk_.vkUpdateDescriptorSets(device_, 3, writes, 0, nullptr);
  }
  ~TileIdPass() {
    vk_.vkDestroyDescriptorPool(device_, pool_, nullptr);
    vk_.vkDestroyPipeline(device_, pipeline_, nullptr);
    vk_.vkDestroyPipelineLayout(device_, layout_, nullptr);
    vk_.vkDestroyDescriptorSetLayout(device_, set_layout_, nullptr);
  }
  TileIdPass(const TileIdPass&) = delete;
  TileIdPass& operator=(const TileIdPass&) = delete;

  // One invocation per splat the frame may hold; the shader stops at the visible count it reads.
  void record(VkCommandBuffer cmd, uint32_t max_count) const {
    vk_.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline_);
    vk_.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, layout_, 0, 1, &set_, 0, nullptr);
    vk_.vkCmdDispatch(cmd, (max_count + kWorkgroup - 1) / kWorkgroup, 1, 1);
  }

 private:
  TileIdPass(const Vk& vk, VkDevice device) : vk_(vk), device_(device) {}
  const Vk& vk_;
  VkDevice device_;
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  VkPipeline pipeline_ = VK_NULL_HANDLE;
  VkDescriptorPool pool_ = VK_NULL_HANDLE;
  VkDescriptorSet set_ = VK_NULL_HANDLE;
};

struct Options {
  uint32_t count = 1u << 20;
  uint32_t seed = 7;
};
// At most 2^23 splats: tile_ids.comp's one-dimensional grid stays within the 65535 workgroups every
// device allows.
Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; i += 2) {
    const std::string arg = argv[i];
    const unsigned long long v = i + 1 < argc ? std::strtoull(argv[i + 1], nullptr, 0) : 0;
    if (arg == "--count" && v >= 1 && v <= (1u << 23))
      o.count = uint32_t(v);
    else if (arg == "--seed" && i + 1 < argc && v <= UINT32_MAX)
      o.seed = uint32_t(v);
    else
      throw Failure("usage: tile_ranges [--count N (1..2^23, default 2^20 splats)] [--seed S]");
  }
  return o;
}

// A mismatch is printed with where it is; the run goes on to check the other stages.
int g_mismatches = 0;
void expect_equal(const char* stage, const std::vector<uint32_t>& got, const std::vector<uint32_t>& want) {
  const auto at = std::mismatch(got.begin(), got.end(), want.begin(), want.end());
  if (at.first == got.end() && at.second == want.end()) return;
  std::fprintf(stderr, "MISMATCH in %s at %zu of %zu\n", stage, size_t(at.first - got.begin()), want.size());
  ++g_mismatches;
}

int run(const Options& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  const uint32_t n = opt.count;
  bool validation = false;
  const std::unique_ptr<Device> device = open_device(validation);
  const Device& dev = *device;
  Context& ctx = device->context();
  // Plans: created once (they build their pipelines now), recorded every frame.
  SelectDesc select_desc;  // u32, flagged
  select_desc.max_count = n;
  Select select_keys = take(Select::create(ctx, select_desc), "Select::create(keys)");
  select_desc.output = SelectOutput::indices;  // the splat indices, without an index buffer to read
  Select select_ids = take(Select::create(ctx, select_desc), "Select::create(indices)");
  SortDesc sort_desc;
  sort_desc.value_size = 4;  // the splat index rides along
  sort_desc.max_count = n;
  sort_desc.end_bit = kKeyBits;
  RadixSort sort = take(RadixSort::create(ctx, sort_desc), "RadixSort::create");
  RunLengthEncode rle = take(RunLengthEncode::create(ctx, {DataType::u32, n}), "RunLengthEncode::create");
  const uint32_t max_runs = std::min(n, kTiles);  // a run per occupied tile
  ScanDesc scan_desc;
  scan_desc.kind = ScanKind::exclusive;
  scan_desc.max_count = max_runs;
  Scan scan_begin = take(Scan::create(ctx, scan_desc), "Scan::create(exclusive)");
  scan_desc.kind = ScanKind::inclusive;
  Scan scan_end = take(Scan::create(ctx, scan_desc), "Scan::create(inclusive)");

  auto buffer = [&](VkDeviceSize bytes) { return take(dev.create_buffer(bytes), "Device::create_buffer"); };
  const VkDeviceSize n4 = VkDeviceSize(n) * 4;
  const Buffer key = buffer(n4), visible = buffer(n4);
  const Buffer sorted_key = buffer(n4), sorted_id = buffer(n4);  // Select's outputs, sorted in place
  const Buffer tile_id = buffer(n4), tile = buffer(n4), length = buffer(n4);
  const Buffer begin = buffer(VkDeviceSize(max_runs) * 4), end = buffer(VkDeviceSize(max_runs) * 4);
  const Buffer visible_count = buffer(4), visible_count_ids = buffer(4), run_count = buffer(4);
  // Every record its own scratch: records that share no data then need no barrier between them.
  auto scratch = [&](const ScratchRequirements& s) { return buffer(std::max<VkDeviceSize>(s.size, 16)); };
  const Buffer scratch_keys = scratch(select_keys.scratch_requirements());
  const Buffer scratch_ids = scratch(select_ids.scratch_requirements());
  const Buffer scratch_sort = scratch(sort.scratch_requirements()), scratch_rle = scratch(rle.scratch_requirements());
  const Buffer scratch_begin = scratch(scan_begin.scratch_requirements());
  const Buffer scratch_end = scratch(scan_end.scratch_requirements());

  const Splats splats = make_splats(n, opt.seed);
  check(dev.upload(key, splats.key.data(), n4), "upload keys");
  check(dev.upload(visible, splats.visible.data(), n4), "upload flags");

  const Vk vk(dev);
  const TileIdPass tile_ids(vk, dev.device(), {&sorted_key, &visible_count, &tile_id});

  // ---- The frame: one command buffer, one submit, one wait -------------------------------------------
  std::string record_error;  // a record that fails records nothing; the first failure is reported
  auto recorded = [&](const Result<void>& r, const char* what) {
    if (!r && record_error.empty()) record_error = std::string(what) + ": " + r.message();
  };
  const VkAccessFlags read = VK_ACCESS_SHADER_READ_BIT, write = VK_ACCESS_SHADER_WRITE_BIT;
  const auto t_submit = std::chrono::steady_clock::now();
  check(dev.submit([&](VkCommandBuffer cmd) {
    // The uploads were transfers in earlier submits; every stage below reads in compute shaders.
    vk.barrier(cmd, kTransfer, VK_ACCESS_TRANSFER_WRITE_BIT, kCompute, read);

    // 1. Visible splats: the keys and, with the same flags, their indices, so both lists line up.
    //    Operands by name, one member at a time (this example is C++17: no designated initializers).
    SelectOperands visible_keys;
    visible_keys.input = key.range();
    visible_keys.flags = visible.range();
    visible_keys.output = sorted_key.range();
    visible_keys.selected_count = visible_count.range();
    visible_keys.scratch = scratch_keys.range();
    recorded(select_keys.record(cmd, visible_keys, n), "Select keys");
    SelectOperands visible_ids;  // input stays BufferRange{}: indices of the flagged predicate read no input
    visible_ids.flags = visible.range();
    visible_ids.output = sorted_id.range();
    visible_ids.selected_count = visible_count_ids.range();
    visible_ids.scratch = scratch_ids.range();
    recorded(select_ids.record(cmd, visible_ids, n), "Select indices");
    // Each stage reads what the one before wrote (data and count) in compute shaders.
    vk.barrier(cmd, kCompute, write, kCompute, read);

    // 2. By tile, then front to back within a tile (stable: equal keys keep splat order).
    recorded(sort.record_indirect(cmd, sorted_key.range(), sorted_id.range(), visible_count.range(),
                                  scratch_sort.range()), "RadixSort::record_indirect");
    vk.barrier(cmd, kCompute, write, kCompute, read);

    // 3. The engine's pass; it binds its own pipeline and set, which vkprim's records clobber.
    tile_ids.record(cmd, n);
    vk.barrier(cmd, kCompute, write, kCompute, read);

    // 4. One run per occupied tile: its id and its number of splats.
    RunLengthEncodeOperands tile_runs;
    tile_runs.keys = tile_id.range();
    tile_runs.unique_keys = tile.range();
    tile_runs.lengths = length.range();
    tile_runs.run_count = run_count.range();
    tile_runs.scratch = scratch_rle.range();
    recorded(rle.record_indirect(cmd, tile_runs, visible_count.range()), "RunLengthEncode::record_indirect");
    vk.barrier(cmd, kCompute, write, kCompute, read);

    // 5. begin = exclusive sum of the lengths, end = inclusive sum; the two only read the same lengths.
    recorded(scan_begin.record_indirect(cmd, length.range(), begin.range(), run_count.range(), scratch_begin.range()),
             "Scan::record_indirect(exclusive)");
    recorded(scan_end.record_indirect(cmd, length.range(), end.range(), run_count.range(), scratch_end.range()),
             "Scan::record_indirect(inclusive)");
    vk.barrier(cmd, kCompute, write, kTransfer, VK_ACCESS_TRANSFER_READ_BIT);  // the downloads below
  }), "Device::submit");
  const double frame_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_submit).count();
  if (!record_error.empty()) throw Failure(record_error);

  // ---- The CPU's answer -----------------------------------------------------------------------------
  std::vector<uint64_t> pairs;  // key << 32 | splat index: one std::sort orders as the stable sort does
  for (uint32_t i = 0; i < n; ++i)
    if (splats.visible[i]) pairs.push_back(uint64_t(splats.key[i]) << 32 | i);
  std::sort(pairs.begin(), pairs.end());
  const uint32_t m = uint32_t(pairs.size());
  std::vector<uint32_t> want_key(m), want_id(m), want_tile_id(m), want_tile, want_length, want_begin, want_end;
  for (uint32_t j = 0; j < m; ++j)
    want_key[j] = uint32_t(pairs[j] >> 32), want_id[j] = uint32_t(pairs[j]), want_tile_id[j] = want_key[j] >> 16;
  for (uint32_t j = 0, e = 0; j < m; j = e) {
    while (e < m && want_tile_id[e] == want_tile_id[j]) ++e;
    want_tile.push_back(want_tile_id[j]), want_begin.push_back(j), want_end.push_back(e), want_length.push_back(e - j);
  }
  const uint32_t runs = uint32_t(want_tile.size());

  // ---- Check every stage ----------------------------------------------------------------------------
  auto download = [&](const Buffer& b, uint32_t count) {
    std::vector<uint32_t> v(count);
    if (count) check(dev.download(b, v.data(), VkDeviceSize(count) * 4), "download");
    return v;
  };
  expect_equal("select: visible counts", {download(visible_count, 1)[0], download(visible_count_ids, 1)[0]}, {m, m});
  const std::vector<uint32_t> got_key = download(sorted_key, m);
  expect_equal("sort: keys", got_key, want_key);
  expect_equal("sort: splat indices", download(sorted_id, m), want_id);
  expect_equal("tile_ids.comp: tile ids", download(tile_id, m), want_tile_id);
  expect_equal("run-length encode: run count", download(run_count, 1), {runs});
  const std::vector<uint32_t> got_tile = download(tile, runs), got_begin = download(begin, runs),
                              got_end = download(end, runs);
  expect_equal("run-length encode: tiles", got_tile, want_tile);
  expect_equal("run-length encode: lengths", download(length, runs), want_length);
  expect_equal("scan: begin", got_begin, want_begin);
  expect_equal("scan: end", got_end, want_end);
  // What the renderer uses them for: tile got_tile[r] blends sorted splats [begin, end), and only those.
  bool ranges_ok = got_tile.size() == got_begin.size() && got_end.size() == got_begin.size();
  for (uint32_t r = 0; r < runs && ranges_ok; ++r) {
    ranges_ok = got_begin[r] == (r ? got_end[r - 1] : 0) && got_begin[r] < got_end[r] && got_end[r] <= m &&
                (r == 0 || got_tile[r - 1] < got_tile[r]);
    for (uint32_t j = got_begin[r]; j < got_end[r] && ranges_ok; ++j) ranges_ok = got_key[j] >> 16 == got_tile[r];
  }
  if (!ranges_ok || (runs && got_end.back() != m)) {
    std::fprintf(stderr, "MISMATCH: the tile ranges do not partition the sorted keys by tile\n");
    ++g_mismatches;
  }

  const uint32_t largest = runs ? *std::max_element(want_length.begin(), want_length.end()) : 0;
  const Capabilities& caps = ctx.capabilities();
  std::printf("device:  %s (Vulkan %u.%u, %s)\n", caps.device_name.c_str(), VK_API_VERSION_MAJOR(caps.api_version),
              VK_API_VERSION_MINOR(caps.api_version),
              validation ? "validation + synchronization validation" : "no validation layer");
  std::printf("splats:  %u, visible %u (keys of %u bits: %u digit passes)\n", n, m, kKeyBits, sort.digit_passes());
  std::printf("tiles:   %ux%u = %u, %u occupied, %u empty, the most crowded holds %u splats\n", kTilesX, kTilesY,
              kTiles, runs, kTiles - runs, largest);
  std::printf("vkprim:  select %s, sort %s, run-length encode, scan %s; every count read on the GPU\n",
              to_string(select_keys.algorithm()), to_string(sort.algorithm()), to_string(scan_begin.algorithm()));
  const double total_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("time:    one submit %.1f ms, whole run %.0f ms\n", frame_ms, total_ms);
  std::printf("%s\n", g_mismatches ? "MISMATCHES: see stderr" : "every tile's range matches the CPU");
  return finish("tile_ranges", dev, uint64_t(g_mismatches));
}

}  // namespace

int main(int argc, char** argv) {
  return run_main("tile_ranges", [&] { return run(parse_options(argc, argv)); });
}
