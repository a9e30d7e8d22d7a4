// Build-time host tool: packs the SPIR-V of every kernel variant of one group (src/spirv_pack.hpp describes
// the format) and writes them as a C++ source defining the group's ShaderGroup (src/shader_registry.hpp).
//   vkprim_embed_spirv <out.cpp> <group identifier> <list file>
// The list file has one line per variant: <kernel> <variant> <file.spv>. The packed stream is decoded
// again here and compared with the input, so a packing fault stops the build.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "spirv_pack.hpp"

namespace {

namespace pack = vkprim::detail::spirv_pack;

// Candidates tried per position: enough to find a kernel's previous variant among its repeated idioms.
constexpr uint32_t kMaxChain = 512;
constexpr uint32_t kHashBits = 18;

void put_varint(std::vector<uint8_t>& out, uint32_t v) {
  while (v >= 0x80u) {
    out.push_back(uint8_t(v | 0x80u));
    v >>= 7;
  }
  out.push_back(uint8_t(v));
}

uint32_t hash2(uint32_t a, uint32_t b) { return ((a * 2654435761u) ^ (b * 2246822519u)) >> (32 - kHashBits); }

struct Match {
  uint32_t length = 0, distance = 0;
};

class Packer {
 public:
  explicit Packer(const std::vector<uint32_t>& words)
      : w_(words), head_(size_t(1) << kHashBits, UINT32_MAX), prev_(words.size(), UINT32_MAX) {}

  std::vector<uint8_t> run() {
    std::vector<uint8_t> out;
    size_t literal_start = 0, i = 0;
    while (i < w_.size()) {
      Match m = longest(i);
      // Lazy step: a longer match one word later is worth one more literal.
      if (m.length && i + 1 < w_.size()) {
        insert(i);
        const Match next = longest(i + 1);
        if (next.length > m.length + 1) {
          ++i;
          m = next;
        } else {
          unlink(i);
        }
      }
      if (m.length < pack::kMinMatch) {
        insert(i++);
        continue;
      }
      sequence(out, literal_start, i, m);
      for (size_t k = 0; k < m.length; ++k) insert(i + k);
      i += m.length;
      literal_start = i;
    }
    if (literal_start < w_.size() || w_.empty()) sequence(out, literal_start, w_.size(), Match{});
    return out;
  }

 private:
  Match longest(size_t i) const {
    Match best;
    if (i + 1 >= w_.size()) return best;
    uint32_t candidate = head_[hash2(w_[i], w_[i + 1])];
    for (uint32_t tries = 0; candidate != UINT32_MAX && tries < kMaxChain; ++tries, candidate = prev_[candidate]) {
      uint32_t n = 0;
      while (i + n < w_.size() && w_[candidate + n] == w_[i + n]) ++n;
      if (n > best.length) best = {n, uint32_t(i - candidate)};
    }
    return best;
  }
  void insert(size_t i) {
    if (i + 1 >= w_.size()) return;
    uint32_t& h = head_[hash2(w_[i], w_[i + 1])];
    prev_[i] = h;
    h = uint32_t(i);
  }
  void unlink(size_t i) {
    if (i + 1 >= w_.size()) return;
    head_[hash2(w_[i], w_[i + 1])] = prev_[i];
  }
  void sequence(std::vector<uint8_t>& out, size_t from, size_t to, Match m) const {
    const uint32_t literals = uint32_t(to - from);
    const uint32_t extra = m.length ? m.length - pack::kMinMatch : 0;
    out.push_back(uint8_t((std::min(literals, pack::kNibbleMax) << 4) | std::min(extra, pack::kNibbleMax)));
    if (literals >= pack::kNibbleMax) put_varint(out, literals - pack::kNibbleMax);
    for (size_t k = from; k < to; ++k) put_varint(out, w_[k]);
    if (!m.length) return;
    put_varint(out, m.distance);
    if (extra >= pack::kNibbleMax) put_varint(out, extra - pack::kNibbleMax);
  }

  const std::vector<uint32_t>& w_;
  std::vector<uint32_t> head_, prev_;
};

bool read_words(const std::string& path, std::vector<uint32_t>& words) {
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) return false;
  if (bytes.empty() || bytes.size() % 4) return false;
  for (size_t i = 0; i < bytes.size(); i += 4) {
    uint32_t v = 0;
    for (int b = 3; b >= 0; --b) v = (v << 8) | uint8_t(bytes[i + size_t(b)]);
    words.push_back(v);
  }
  return words[words.size() - bytes.size() / 4] == 0x07230203u;  // the SPIR-V magic number
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s <out.cpp> <group identifier> <list file>\n", argv[0]);
    return 2;
  }
  const std::string out_path = argv[1], group = argv[2];
  std::ifstream list(argv[3]);
  std::vector<uint32_t> words;
  std::string rows, line;
  size_t variants = 0;
  while (std::getline(list, line)) {
    std::istringstream fields(line);
    std::string kernel, variant, path;
    if (!(fields >> kernel >> variant >> path)) continue;
    const size_t offset = words.size();
    if (!read_words(path, words)) {
      std::fprintf(stderr, "embed_spirv: %s is not a SPIR-V module\n", path.c_str());
      return 1;
    }
    rows += "    {\"" + kernel + "\", \"" + variant + "\", " + std::to_string(offset) + "u, " +
            std::to_string(words.size() - offset) + "u},\n";
    ++variants;
  }
  if (!variants) {
    std::fprintf(stderr, "embed_spirv: %s lists no variant\n", argv[3]);
    return 1;
  }

  const std::vector<uint8_t> packed = Packer(words).run();
  std::vector<uint32_t> check(words.size());
  if (!pack::unpack(packed.data(), packed.size(), check.data(), check.size()) || check != words) {
    std::fprintf(stderr, "embed_spirv: packing group %s does not round-trip\n", group.c_str());
    return 1;
  }

  std::string body = "// Generated by cmake/embed_spirv.cpp from shaders/: do not edit.\n"
                     "#include \"vkprim/detail/shader_group.hpp\"\nnamespace vkprim::detail {\nnamespace {\n"
                     "const uint8_t kPacked[" + std::to_string(packed.size()) + "] = {";
  for (size_t i = 0; i < packed.size(); ++i) {
    if (i % 24 == 0) body += "\n";
    body += std::to_string(packed[i]) + ",";
  }
  body += "\n};\nconst ShaderVariant kVariants[] = {\n" + rows + "};\n}  // namespace\n";
  body += "extern const ShaderGroup kShaderGroup_" + group + " = {kPacked, sizeof(kPacked), " +
          std::to_string(words.size()) + "u, kVariants, sizeof(kVariants) / sizeof(kVariants[0])};\n";
  body += "}  // namespace vkprim::detail\n";

  const std::string tmp = out_path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    out << body;
    if (!out) {
      std::fprintf(stderr, "embed_spirv: cannot write %s\n", tmp.c_str());
      return 1;
    }
  }
  if (std::rename(tmp.c_str(), out_path.c_str()) != 0) {
    std::fprintf(stderr, "embed_spirv: cannot rename %s\n", tmp.c_str());
    return 1;
  }
  std::printf("shader group %s: %zu variants, %zu bytes of SPIR-V packed into %zu\n", group.c_str(), variants,
              words.size() * 4, packed.size());
  return 0;
}
