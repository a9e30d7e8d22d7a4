#include "spirv_pack.hpp"

#include <algorithm>
#include <cstring>

namespace vkprim::detail::spirv_pack {

namespace {

struct Reader {
  const uint8_t* at;
  const uint8_t* end;
  bool ok = true;

  uint8_t byte() {
    if (at == end) {
      ok = false;
      return 0;
    }
    return *at++;
  }
  uint32_t varint() {
    if (at != end && *at < 0x80u) return *at++;  // most literals and distances fit one byte
    uint32_t v = 0;
    for (uint32_t shift = 0; shift < 35; shift += 7) {
      const uint8_t b = byte();
      v |= uint32_t(b & 0x7Fu) << shift;
      if (!(b & 0x80u)) return v;
    }
    ok = false;
    return 0;
  }
  uint32_t count(uint32_t nibble) { return nibble == kNibbleMax ? nibble + varint() : nibble; }
};

}  // namespace

// Stops as soon as word_count words are out, so a caller decodes only up to the end of the variant it needs.
bool unpack(const uint8_t* packed, size_t packed_bytes, uint32_t* out, size_t word_count) {
  Reader r{packed, packed + packed_bytes};
  size_t n = 0;
  while (n < word_count && r.ok) {
    const uint8_t token = r.byte();
    uint32_t literals = r.count(token >> 4);
    while (literals-- && n < word_count && r.ok) out[n++] = r.varint();
    if (n == word_count) break;
    const uint32_t distance = r.varint();
    const uint32_t length = r.count(token & 0xFu) + kMinMatch;
    if (!r.ok || distance == 0 || distance > n) return false;
    const size_t copy = std::min<size_t>(length, word_count - n);
    const uint32_t* from = out + (n - distance);
    if (distance >= copy) {
      std::memcpy(out + n, from, copy * 4);  // the source ends before the copy starts
    } else {
      for (size_t i = 0; i < copy; ++i) out[n + i] = from[i];  // a run that repeats its own output
    }
    n += copy;
  }
  return r.ok && n == word_count;
}

}  // namespace vkprim::detail::spirv_pack
