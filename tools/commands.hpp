// Sub-commands of the `vkprim` program.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "vkprim/device.hpp"

namespace vkprim::tools {

int run_info(std::vector<std::string> args);
int run_verify(std::vector<std::string> args);
int run_bench(std::vector<std::string> args);
// `vkprim bench reduce|scan --operator NAME`: a sample user operator (tools/bench_user.cpp).
int run_bench_user(bool is_scan, std::vector<std::string> args, const std::string& op_name);
int run_demo(std::vector<std::string> args);

// Takes "--name value" from args (removing both); false if absent.
bool take_option(std::vector<std::string>& args, const char* name, std::string& value);
bool take_flag(std::vector<std::string>& args, const char* name);
// Device from --device / --validation (or VKPRIM_DEVICE); prints the error and returns null on failure.
// pipeline_statistics: DeviceOptions::pipeline_statistics (bench --stats).
std::unique_ptr<Device> open_device(std::vector<std::string>& args, bool pipeline_statistics = false);
bool parse_type(const std::string& s, DataType& t);
bool parse_op(const std::string& s, Op& o);

// `vkprim verify`'s element types: those the device runs (64-bit integers need shaderInt64, f64
// shaderFloat64); each one left out adds one to `skipped`.
std::vector<DataType> verify_types(const Capabilities& caps, int& skipped);
// Every Op of `type`: the bitwise ones for integer types only.
std::vector<Op> verify_ops(DataType type);

}  // namespace vkprim::tools
