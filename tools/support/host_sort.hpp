// Host-side reference of RadixSort (vkprim/sort.hpp): the documented order-preserving key transform, the
// sorted bit field [begin_bit, end_bit) and std::stable_sort's order of the input. Keys are raw bits (the
// low 32 bits for 32-bit key types). Shared by the tests, `vkprim verify` and `vkprim bench sort`.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "vkprim/sort.hpp"

namespace vkprim::host {

// Unsigned integer order of the key bits: floats by value (NaNs at the ends), signed integers offset,
// and complemented for descending.
inline uint64_t ordered_bits(uint64_t bits, DataType type, SortOrder order) {
  const uint32_t width = 8 * size_of(type);
  const uint64_t mask = width == 64 ? ~uint64_t(0) : (uint64_t(1) << width) - 1;
  const uint64_t sign = uint64_t(1) << (width - 1);
  bits &= mask;
  if (type == DataType::f32 || type == DataType::f64) bits = (bits & sign) ? (~bits & mask) : (bits ^ sign);
  else if (type == DataType::i32 || type == DataType::i64) bits ^= sign;
  if (order == SortOrder::descending) bits = ~bits & mask;
  return bits;
}

// What the sort orders a key by: its ordered bits [begin_bit, end_bit) (end_bit 0: the key's width).
inline uint64_t sort_field(uint64_t bits, const SortDesc& d) {
  const uint32_t end = d.end_bit ? d.end_bit : 8 * size_of(d.key_type);
  const uint32_t w = end - d.begin_bit;
  const uint64_t ordered = ordered_bits(bits, d.key_type, d.order) >> d.begin_bit;
  return w == 64 ? ordered : ordered & ((uint64_t(1) << w) - 1);
}

// The input indices in sorted order: std::stable_sort by sort_field.
inline std::vector<uint64_t> stable_sort_order(const std::vector<uint64_t>& keys, const SortDesc& d) {
  std::vector<uint64_t> field(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) field[i] = sort_field(keys[i], d);
  std::vector<uint64_t> order(keys.size());
  std::iota(order.begin(), order.end(), uint64_t(0));
  std::stable_sort(order.begin(), order.end(), [&](uint64_t a, uint64_t b) { return field[a] < field[b]; });
  return order;
}

}  // namespace vkprim::host
