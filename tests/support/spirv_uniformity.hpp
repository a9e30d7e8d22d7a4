// Reads a SPIR-V module and finds the conditional branches of its look-back functions (functions named
// look_back) whose condition may differ between the lanes of a subgroup. The look-backs run in subgroup 0
// alone, where the core specification does not promise that lanes which branch apart meet again before the
// next subgroup operation (docs/ALGORITHMS.md, "Reconvergence"), so the kernels keep such branches out.
//
// A value varies by lane when it derives from a lane's index (the LocalInvocationId, LocalInvocationIndex,
// GlobalInvocationId or SubgroupLocalInvocationId built-ins), through any operand, a variable stored with
// such a value, an access chain indexed by one, or a call that takes one or reads those built-ins itself.
// Subgroup operations that give every lane the same result (ballots, broadcasts, reductions, votes) end
// it. The analysis ignores which path a value took, so it may flag a branch that is in fact uniform, never
// the reverse for the instructions it knows.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "shader_registry.hpp"  // src/: the embedded groups' unpacker

namespace vkprim::test {

struct DivergentBranch {
  std::string function;  // the OpName of the function holding it
  uint32_t condition;    // the id of the condition
};

namespace spirv_detail {

enum : uint32_t {
  kOpName = 5, kOpExtInst = 12, kOpFunction = 54, kOpFunctionParameter = 55, kOpFunctionEnd = 56,
  kOpFunctionCall = 57, kOpVariable = 59, kOpLoad = 61, kOpStore = 62, kOpCopyMemory = 63,
  kOpAccessChain = 65, kOpInBoundsAccessChain = 66, kOpPtrAccessChain = 67, kOpDecorate = 71,
  kOpVectorShuffle = 79, kOpCompositeExtract = 81, kOpCompositeInsert = 82, kOpAtomicLoad = 227,
  kOpAtomicStore = 228, kOpLoopMerge = 246, kOpSelectionMerge = 247, kOpLabel = 248, kOpBranch = 249,
  kOpBranchConditional = 250, kOpSwitch = 251, kOpReturn = 253, kOpReturnValue = 254, kOpUnreachable = 255,
  kOpControlBarrier = 224, kOpMemoryBarrier = 225, kOpLine = 8, kOpNoLine = 317,
  kDecorationBuiltIn = 11,
};

// Instructions inside a function that define no result.
inline bool no_result(uint32_t op) {
  switch (op) {
    case kOpStore: case kOpCopyMemory: case kOpAtomicStore: case kOpLoopMerge: case kOpSelectionMerge:
    case kOpBranch: case kOpBranchConditional: case kOpSwitch: case kOpReturn: case kOpReturnValue:
    case kOpUnreachable: case kOpControlBarrier: case kOpMemoryBarrier: case kOpLine: case kOpNoLine:
    case kOpFunctionEnd:
      return true;
    default:
      return false;
  }
}

// Group operations whose result is the same in every lane that takes part (given the group operation
// Reduce where they have one): All, Any, AllEqual, Broadcast, BroadcastFirst, Ballot, BallotBitCount,
// BallotFindLSB/MSB, and the arithmetic and logical reductions.
inline bool uniform_group_result(uint32_t op, const uint32_t* w, uint32_t n) {
  if (op >= 334 && op <= 339) return true;                         // All .. Ballot
  if (op == 342) return n > 4 && w[4] == 0u;                       // BallotBitCount, Reduce
  if (op == 343 || op == 344) return true;                         // BallotFindLSB / MSB
  if (op >= 349 && op <= 364) return n > 4 && w[4] == 0u;          // IAdd .. LogicalXor, Reduce
  return false;
}

inline std::string literal_string(const uint32_t* w, uint32_t n) {
  std::string s;
  for (uint32_t i = 0; i < n; ++i)
    for (int b = 0; b < 4; ++b) {
      const char c = char((w[i] >> (8 * b)) & 0xFFu);
      if (c == 0) return s;
      s += c;
    }
  return s;
}

}  // namespace spirv_detail

// The number of functions named look_back in the module.
inline uint32_t look_back_functions(const std::vector<uint32_t>& module) {
  uint32_t count = 0;
  for (size_t at = 5; at < module.size();) {
    const uint32_t op = module[at] & 0xFFFFu, n = module[at] >> 16;
    if (n == 0) break;
    if (op == spirv_detail::kOpName && n > 2 && at + n <= module.size() &&
        spirv_detail::literal_string(&module[at + 2], n - 2).rfind("look_back(", 0) == 0)
      ++count;
    at += n;
  }
  return count;
}

inline std::vector<DivergentBranch> divergent_look_back_branches(const std::vector<uint32_t>& module) {
  using namespace spirv_detail;
  struct Inst {
    uint32_t op, at, n, function;  // opcode, word offset, word count, enclosing function id (0: none)
  };
  std::vector<Inst> insts;
  std::unordered_map<uint32_t, std::string> names;
  std::unordered_set<uint32_t> lane_builtins;  // variables decorated with a per-lane built-in
  uint32_t function = 0;
  for (size_t at = 5; at < module.size();) {
    const uint32_t op = module[at] & 0xFFFFu, n = module[at] >> 16;
    if (n == 0 || at + n > module.size()) return {{"(malformed module)", 0}};
    const uint32_t* w = &module[at];
    if (op == kOpName && n > 2) names[w[1]] = literal_string(w + 2, n - 2);
    if (op == kOpDecorate && n > 3 && w[2] == kDecorationBuiltIn &&
        (w[3] == 27 || w[3] == 28 || w[3] == 29 || w[3] == 41))
      lane_builtins.insert(w[1]);
    if (op == kOpFunction) function = w[2];
    insts.push_back({op, uint32_t(at), n, function});
    if (op == kOpFunctionEnd) function = 0;
    at += n;
  }

  std::unordered_set<uint32_t> varying;                   // ids of values (or pointers) that vary by lane
  std::unordered_map<uint32_t, uint32_t> root;            // pointer id -> the variable or parameter it is in
  std::unordered_set<uint32_t> reads_lanes;               // functions that read a lane built-in, transitively
  auto root_of = [&](uint32_t p) {
    const auto it = root.find(p);
    return it == root.end() ? p : it->second;
  };
  auto is_varying = [&](uint32_t id) { return varying.count(id) != 0 || lane_builtins.count(root_of(id)) != 0; };
  auto mark = [&](uint32_t id, bool& changed) {
    if (varying.insert(id).second) changed = true;
  };
  for (const Inst& i : insts) {
    const uint32_t* w = &module[i.at];
    if ((i.op == kOpAccessChain || i.op == kOpInBoundsAccessChain || i.op == kOpPtrAccessChain) && i.n > 3)
      root[w[2]] = root_of(w[3]);
  }

  for (bool changed = true; changed;) {
    changed = false;
    for (const Inst& i : insts) {
      if (i.function == 0) continue;
      const uint32_t* w = &module[i.at];
      const uint32_t op = i.op, n = i.n;
      if (op == kOpLabel || op == kOpFunction || op == kOpFunctionParameter || op == kOpVariable) continue;
      if (op == kOpStore || op == kOpAtomicStore) {
        const uint32_t ptr = w[1], value = op == kOpStore ? w[2] : w[4];
        if (is_varying(value) || is_varying(ptr)) mark(root_of(ptr), changed);
        continue;
      }
      if (no_result(op) || n < 3) continue;
      const uint32_t result = w[2];
      if (op >= 333 && op <= 366 && uniform_group_result(op, w, n)) continue;
      bool v = false;
      switch (op) {
        case kOpLoad:
          v = is_varying(w[3]) || is_varying(root_of(w[3]));
          if (lane_builtins.count(root_of(w[3])) && reads_lanes.insert(i.function).second) changed = true;
          break;
        case kOpAtomicLoad:
          v = is_varying(w[3]) || is_varying(root_of(w[3]));
          break;
        case kOpExtInst:  // set and instruction number are literals
          for (uint32_t k = 5; k < n; ++k) v = v || is_varying(w[k]);
          break;
        case kOpCompositeExtract:
          v = is_varying(w[3]);
          break;
        case kOpCompositeInsert:
          v = is_varying(w[3]) || is_varying(w[4]);
          break;
        case kOpVectorShuffle:
          v = is_varying(w[3]) || is_varying(w[4]);
          break;
        case kOpFunctionCall: {
          v = reads_lanes.count(w[3]) != 0;
          for (uint32_t k = 4; k < n; ++k) v = v || is_varying(w[k]) || is_varying(root_of(w[k]));
          if (v)  // the callee may write what varies through its pointer arguments
            for (uint32_t k = 4; k < n; ++k) mark(root_of(w[k]), changed);
          if (reads_lanes.count(w[3]) && reads_lanes.insert(i.function).second) changed = true;
          break;
        }
        default:
          if (op >= 333 && op <= 366) {  // other group operations: scope, (group operation), ids
            v = true;
            break;
          }
          for (uint32_t k = 3; k < n; ++k) v = v || is_varying(w[k]);
      }
      if (v) mark(result, changed);
    }
  }

  std::vector<DivergentBranch> found;
  for (const Inst& i : insts) {
    if (i.op != kOpBranchConditional && i.op != kOpSwitch) continue;
    const auto name = names.find(i.function);
    if (name == names.end() || name->second.rfind("look_back(", 0) != 0) continue;
    const uint32_t condition = module[i.at + 1];
    if (is_varying(condition)) found.push_back({name->second, condition});
  }
  return found;
}

// Every variant of an embedded group, checked: what each divergent branch is (kernel, variant, function,
// condition), how many modules hold a look_back, and whether every variant unpacked.
struct LookBackReport {
  std::vector<std::string> divergent;
  uint32_t modules_with_look_back = 0;
  bool unpacked = true;
};
inline void check_look_backs(const vkprim::detail::ShaderGroup& group, const std::string& label,
                             LookBackReport& report) {
  for (uint32_t v = 0; v < group.count; ++v) {
    const vkprim::detail::ShaderVariant& shader = group.variants[v];
    std::vector<uint32_t> words;
    if (!vkprim::detail::unpack_shader(group, shader, words)) {
      report.unpacked = false;
      continue;
    }
    for (const DivergentBranch& branch : divergent_look_back_branches(words))
      report.divergent.push_back(label + " " + shader.kernel + " [" + shader.variant + "]: " + branch.function +
                                 " branches on %" + std::to_string(branch.condition));
    if (look_back_functions(words) > 0) ++report.modules_with_look_back;
  }
}

}  // namespace vkprim::test
