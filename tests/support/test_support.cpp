#include "test_support.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

namespace vkprim::test {

namespace {

auto key_of(const DeviceSetup& s) {
  const ContextOptions& o = s.options;
  const detail::Testing& t = s.testing;
  return std::make_tuple(o.force_no_subgroups, o.disable_push_descriptors, o.debug_labels, o.fallback_spin_limit,
                         o.descriptor_sets_per_pool, o.collect_statistics, o.tile_order, t.skip_publication_period,
                         t.mask_features, t.max_workgroups_per_dimension, t.max_storage_buffer_range);
}
using Key = decltype(key_of(DeviceSetup{}));

std::mutex& devices_mutex() {
  static std::mutex m;
  return m;
}
std::map<Key, std::unique_ptr<Device>>& devices() {
  static std::map<Key, std::unique_ptr<Device>> d;
  return d;
}

}  // namespace

Device& device(const ContextOptions& options) { return device(DeviceSetup{options, {}}); }

Device& device(const DeviceSetup& setup) {
  std::lock_guard<std::mutex> lock(devices_mutex());
  auto& cache = devices();
  const Key key = key_of(setup);
  auto it = cache.find(key);
  if (it != cache.end()) return *it->second;
  DeviceOptions device_options;
  device_options.validation = true;
  device_options.persistent_pipeline_cache = false;
  device_options.options = setup.options;
  device_options.testing = setup.testing;
  // The unpinned-subgroup variants of the ctest suite hide features from every device they create
  // (VKPRIM_TEST_MASK_FEATURES, Feature bits), e.g. subgroup size control, as a driver without it would.
  if (const char* env = std::getenv("VKPRIM_TEST_MASK_FEATURES"); env && *env)
    device_options.testing.mask_features |= uint32_t(std::strtoul(env, nullptr, 0));
  auto created = Device::create(device_options);
  INFO("Device::create with validation: " << (created ? std::string("ok") : created.error().message));
  REQUIRE(created.ok());
  Device& dev = *created.value();
  // The subgroup-size variants of the ctest suite (lavapipe's LP_NATIVE_VECTOR_WIDTH) name the size they
  // expect, so a driver that ignores the knob fails them instead of silently repeating the default run.
  if (const char* env = std::getenv("VKPRIM_TEST_EXPECT_SUBGROUP_SIZE"); env && *env) {
    INFO("VKPRIM_TEST_EXPECT_SUBGROUP_SIZE=" << env << ", device subgroup size "
                                             << dev.context().capabilities().subgroup_size);
    REQUIRE(dev.context().capabilities().subgroup_size == std::strtoul(env, nullptr, 10));
  }
  cache.emplace(key, std::move(created).value());
  return dev;
}

Device& device_without(uint32_t features, DeviceSetup setup) {
  setup.testing.mask_features |= features;
  Device& dev = device(setup);
  REQUIRE((dev.context().capabilities().features & features) == 0);
  return dev;
}

DeviceSetup forced_fallback(uint32_t period, uint32_t spin_limit) {
  DeviceSetup s;
  s.options.fallback_spin_limit = spin_limit;
  s.testing.skip_publication_period = period;
  return s;
}

DeviceSetup launch_order(uint32_t period) {
  DeviceSetup s = forced_fallback(period, period == 0 ? 64 : 0);
  s.options.tile_order = TileOrder::launch;
  return s;
}

ContextOptions no_subgroups() {
  ContextOptions o;
  o.force_no_subgroups = true;
  return o;
}

DeviceSetup small_windows() {
  DeviceSetup s;
  s.testing.max_storage_buffer_range = 64 * 1024;
  return s;
}

namespace {
int g_skips = 0;
}  // namespace

void skip(const std::string& why) {
  ++g_skips;
  WARN(why << ": skipped");
}

int skip_count() { return g_skips; }

ChildOutcome run_in_child(const std::function<void()>& body) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  std::fflush(nullptr);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // Only the body speaks: the test framework's signal handlers and reporter stay the parent's.
    std::signal(SIGABRT, SIG_DFL);
    const int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, STDOUT_FILENO);
    close(fds[0]);
    dup2(fds[1], STDERR_FILENO);
    body();
    _exit(0);  // reached only where the body did not abort
  }
  close(fds[1]);
  ChildOutcome out;
  char buffer[512];
  for (ssize_t got; (got = read(fds[0], buffer, sizeof buffer)) > 0;) out.stderr_text.append(buffer, size_t(got));
  close(fds[0]);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  out.aborted = WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
  if (WIFEXITED(status)) out.exit_code = WEXITSTATUS(status);
  return out;
}

ChildOutcome run_case_in_new_process(const char* name) {
  return run_in_child([name] {
    execl("/proc/self/exe", "/proc/self/exe", name, static_cast<char*>(nullptr));
    std::perror("execl /proc/self/exe");
    std::_Exit(127);
  });
}

bool has_features(Device& dev, uint32_t features, const char* what) {
  if (dev.context().capabilities().has(features)) return true;
  std::ostringstream why;
  why << what << " needs features the device lacks (" << features << ")";
  skip(why.str());
  return false;
}

std::vector<Device*> cached_devices() {
  std::lock_guard<std::mutex> lock(devices_mutex());
  std::vector<Device*> out;
  for (auto& [key, dev] : devices()) out.push_back(dev.get());
  return out;
}

void release_devices() {
  std::lock_guard<std::mutex> lock(devices_mutex());
  devices().clear();
}

std::string describe_messages(const Device& dev) {
  std::string text;
  for (const auto& m : dev.validation_messages()) text += "  - " + m + "\n";
  return text.empty() ? std::string("  (none)\n") : text;
}

uint64_t fresh_seed() {
  if (const char* env = std::getenv("VKPRIM_TEST_SEED"); env && *env) return std::strtoull(env, nullptr, 0);
  std::random_device rd;
  return (uint64_t(rd()) << 32) ^ rd();
}

Buffer make_buffer(const Device& dev, VkDeviceSize bytes) {
  auto made = dev.create_buffer(bytes);
  INFO("create_buffer(" << bytes << "): " << (made ? std::string("ok") : made.error().message));
  REQUIRE(made.ok());
  return std::move(made).value();
}

Buffer make_scratch(const Device& dev, const Reduce& plan) {
  return make_buffer(dev, std::max<VkDeviceSize>(16, plan.scratch_requirements().size));
}

void poison(const Device& dev, const Buffer& buffer, uint32_t word) {
  auto done = dev.fill(buffer, word);
  INFO(done.message());
  REQUIRE(done.ok());
}

bool still_poisoned(const Device& dev, const Buffer& buffer) {
  const auto words = download<uint32_t>(dev, buffer, buffer.size() / 4);
  for (uint32_t w : words)
    if (w != kPoison) return false;
  return true;
}

Reduce make_reduce(Context& context, const ReduceDesc& desc) {
  auto plan = Reduce::create(context, desc);
  INFO("Reduce::create(" << to_string(desc.type) << ", " << to_string(desc.op) << ", max_count " << desc.max_count
                         << ", " << to_string(desc.algorithm) << (desc.deterministic ? ", deterministic" : "")
                         << "): " << (plan ? std::string("ok") : plan.error().message));
  REQUIRE(plan.ok());
  return std::move(plan).value();
}

Result<void> submit_compute(const Device& dev, const std::function<void(VkCommandBuffer)>& body) {
  auto gipa = dev.get_instance_proc_addr();
  auto gdpa = reinterpret_cast<PFN_vkGetDeviceProcAddr>(gipa(dev.instance(), "vkGetDeviceProcAddr"));
  auto barrier = reinterpret_cast<PFN_vkCmdPipelineBarrier>(gdpa(dev.device(), "vkCmdPipelineBarrier"));
  REQUIRE(barrier != nullptr);
  return dev.submit([&](VkCommandBuffer cmd) {
    VkMemoryBarrier before{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    before.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    before.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
    barrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &before, 0, nullptr, 0,
            nullptr);
    body(cmd);
    VkMemoryBarrier after{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    after.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
    after.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    barrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &after, 0, nullptr, 0,
            nullptr);
  });
}

}  // namespace vkprim::test
