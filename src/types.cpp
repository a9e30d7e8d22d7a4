#include <cstring>

#include "vkprim/result.hpp"
#include "vkprim/types.hpp"

namespace vkprim {

const char* to_string(Status status) {
  switch (status) {
    case Status::success: return "success";
    case Status::invalid_argument: return "invalid_argument";
    case Status::unsupported: return "unsupported";
    case Status::out_of_memory: return "out_of_memory";
    case Status::device_lost: return "device_lost";
    case Status::vulkan_error: return "vulkan_error";
  }
  return "unknown";
}

const char* to_string(DataType type) {
  switch (type) {
    case DataType::u32: return "u32";
    case DataType::i32: return "i32";
    case DataType::f32: return "f32";
    case DataType::u64: return "u64";
    case DataType::i64: return "i64";
    case DataType::f64: return "f64";
    case DataType::u8: return "u8";
    case DataType::u16: return "u16";
  }
  return "unknown";
}

const char* to_string(Op op) {
  switch (op) {
    case Op::add: return "add";
    case Op::min: return "min";
    case Op::max: return "max";
    case Op::bit_and: return "bit_and";
    case Op::bit_or: return "bit_or";
    case Op::bit_xor: return "bit_xor";
  }
  return "unknown";
}

uint32_t size_of(DataType type) {
  if (type == DataType::u8) return 1;
  if (type == DataType::u16) return 2;
  return is_64bit(type) ? 8u : 4u;
}
bool is_integer(DataType type) { return type != DataType::f32 && type != DataType::f64; }
bool is_64bit(DataType type) { return type == DataType::u64 || type == DataType::i64 || type == DataType::f64; }

}  // namespace vkprim
