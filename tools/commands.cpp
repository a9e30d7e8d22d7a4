#include "commands.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

namespace vkprim::tools {

bool take_option(std::vector<std::string>& args, const char* name, std::string& value) {
  auto it = std::find(args.begin(), args.end(), name);
  if (it == args.end() || it + 1 == args.end()) return false;
  value = *(it + 1);
  args.erase(it, it + 2);
  return true;
}

bool take_flag(std::vector<std::string>& args, const char* name) {
  auto it = std::find(args.begin(), args.end(), name);
  if (it == args.end()) return false;
  args.erase(it);
  return true;
}

std::unique_ptr<Device> open_device(std::vector<std::string>& args, bool pipeline_statistics) {
  DeviceOptions options;
  options.pipeline_statistics = pipeline_statistics;
  take_option(args, "--device", options.select);
  options.validation = take_flag(args, "--validation");
  // Chained-scan knobs: not-ready polls before a fallback, and every k-th tile skipping its publication.
  std::string value;
  if (take_option(args, "--spin-limit", value)) options.options.fallback_spin_limit = uint32_t(std::stoul(value));
  options.options.collect_statistics = take_flag(args, "--lookback-stats");
  if (take_option(args, "--skip-publication", value))
    options.testing.skip_publication_period = uint32_t(std::stoul(value));  // a test hook (detail::Testing)
  if (take_option(args, "--tile-order", value)) {
    if (value == "ticket") options.options.tile_order = TileOrder::ticket;
    else if (value == "launch") options.options.tile_order = TileOrder::launch;
    else if (value != "automatic") {
      std::fprintf(stderr, "vkprim: --tile-order takes automatic, ticket or launch, not '%s'\n", value.c_str());
      return nullptr;
    }
  }
  auto device = Device::create(options);
  if (!device) {
    std::fprintf(stderr, "vkprim: cannot open a Vulkan device: %s (%s)\n", device.error().message.c_str(),
                 to_string(device.status()));
    return nullptr;
  }
  return std::move(device).value();
}

bool parse_type(const std::string& s, DataType& t) {
  for (DataType v : {DataType::u32, DataType::i32, DataType::f32, DataType::u64, DataType::i64, DataType::f64,
                     DataType::u8, DataType::u16})
    if (s == to_string(v)) {
      t = v;
      return true;
    }
  return false;
}

bool parse_op(const std::string& s, Op& o) {
  for (Op v : {Op::add, Op::min, Op::max, Op::bit_and, Op::bit_or, Op::bit_xor})
    if (s == to_string(v)) {
      o = v;
      return true;
    }
  return false;
}

std::vector<DataType> verify_types(const Capabilities& caps, int& skipped) {
  std::vector<DataType> types;
  for (DataType type : {DataType::u32, DataType::i32, DataType::f32, DataType::u64, DataType::i64, DataType::f64}) {
    const bool runs = type == DataType::f64                              ? caps.has(feature_float64)
                      : type == DataType::u64 || type == DataType::i64 ? caps.has(feature_int64)
                                                                         : true;
    if (runs) types.push_back(type);
    else ++skipped;
  }
  return types;
}

std::vector<Op> verify_ops(DataType type) {
  if (!is_integer(type)) return {Op::add, Op::min, Op::max};
  return {Op::add, Op::min, Op::max, Op::bit_and, Op::bit_or, Op::bit_xor};
}

}  // namespace vkprim::tools
