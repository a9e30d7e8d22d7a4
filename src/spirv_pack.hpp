// The packed form of a kernel's embedded SPIR-V: the words of all its variants, one after another, coded
// by a word-wise LZ77 (Ziv & Lempel, "A universal algorithm for sequential data compression", IEEE Trans.
// Inf. Theory 23(3), 1977). A kernel's variants differ in a few types and instructions, so a match reaches
// back into the previous variant for most of each module; the window is the whole stream.
//
// Stream: sequences until the word count is reached, each
//   token byte           high nibble: literal words (15: plus a varint), low nibble: match words - 2
//                        (15: plus a varint)
//   [varint]             literal words beyond 15
//   literal words        each a varint (LEB128)
//   varint distance      only when words remain: how far back, in words (>= 1), the match starts
//   [varint]             match words beyond 17
// Written by cmake/embed_spirv.cpp at build time; decoded when a plan creates a pipeline.
#pragma once

#include <cstddef>
#include <cstdint>

namespace vkprim::detail::spirv_pack {

constexpr uint32_t kMinMatch = 2;
constexpr uint32_t kNibbleMax = 15;

// Decodes `packed` (`packed_bytes` long) into out[0, word_count). Returns false on a malformed stream
// (a build-system fault: the stream is generated, never read from outside).
bool unpack(const uint8_t* packed, size_t packed_bytes, uint32_t* out, size_t word_count);

}  // namespace vkprim::detail::spirv_pack
