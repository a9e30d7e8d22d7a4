// Host references of the keyed primitives (ReduceByKey, ScanByKey, RunLengthEncode, NonTrivialRuns,
// Unique) and the run-structured inputs their tests and benchmarks use. Runs are maximal stretches of
// adjacent keys with equal bits, as the GPU compares them.
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "host_reference.hpp"

namespace vkprim::host {

// Index of the first element of every run of keys[0..n).
template <class K>
std::vector<uint32_t> run_starts(const std::vector<K>& keys) {
  std::vector<uint32_t> starts;
  for (size_t i = 0; i < keys.size(); ++i)
    if (i == 0 || !same_bits(keys[i], keys[i - 1])) starts.push_back(uint32_t(i));
  return starts;
}

// Run lengths: 0 = uniform on 1 .. 2 * mean - 1 (mean `mean`), otherwise every run `fixed` long.
// Keys: run r gets a random key whose bits differ from run r - 1's, or, with `sorted`, the key r.
template <class K>
std::vector<K> keys_with_runs(size_t n, uint32_t mean, uint32_t fixed, bool sorted, std::mt19937_64& rng) {
  std::vector<K> keys(n);
  std::uniform_int_distribution<uint32_t> length(1, std::max<uint32_t>(1, 2 * mean - 1));
  K previous{};
  uint64_t run = 0;
  for (size_t i = 0; i < n;) {
    const size_t len = fixed ? fixed : length(rng);
    K key{};
    if (sorted) {
      key = K(run);
    } else {
      do {
        const uint64_t bits = rng();
        std::memcpy(&key, &bits, sizeof(K));
      } while (run > 0 && same_bits(key, previous));
    }
    for (size_t j = 0; j < len && i < n; ++j) keys[i++] = key;
    previous = key;
    ++run;
  }
  return keys;
}

// ReduceByKey: the key and the in-order reduction of every run.
template <class K, class V>
void reduce_by_key(const std::vector<K>& keys, const std::vector<V>& values, Op op, std::vector<K>& unique_keys,
                   std::vector<V>& aggregates) {
  unique_keys.clear();
  aggregates.clear();
  const auto starts = run_starts(keys);
  for (size_t r = 0; r < starts.size(); ++r) {
    const size_t end = r + 1 < starts.size() ? starts[r + 1] : keys.size();
    V acc = values[starts[r]];
    for (size_t i = starts[r] + 1; i < end; ++i) acc = apply(op, acc, values[i]);
    unique_keys.push_back(keys[starts[r]]);
    aggregates.push_back(acc);
  }
}

// ScanByKey: the scan of values restarting at every run (exclusive: the identity at a run's first element).
template <class K, class V>
std::vector<V> scan_by_key(const std::vector<K>& keys, const std::vector<V>& values, Op op, bool inclusive) {
  std::vector<V> out(keys.size());
  V acc = identity<V>(op);
  for (size_t i = 0; i < keys.size(); ++i) {
    const bool head = i == 0 || !same_bits(keys[i], keys[i - 1]);
    if (head) acc = identity<V>(op);
    const V next = head ? values[i] : apply(op, acc, values[i]);
    out[i] = inclusive ? next : acc;
    acc = next;
  }
  return out;
}

// RunLengthEncode (non_trivial false: every run's key and length) and NonTrivialRuns (non_trivial true: the
// offset and length of every run longer than one; `first` holds offsets).
template <class K>
void run_lengths(const std::vector<K>& keys, bool non_trivial, std::vector<K>& unique_keys,
                 std::vector<uint32_t>& offsets, std::vector<uint32_t>& lengths) {
  unique_keys.clear();
  offsets.clear();
  lengths.clear();
  const auto starts = run_starts(keys);
  for (size_t r = 0; r < starts.size(); ++r) {
    const uint32_t end = r + 1 < starts.size() ? starts[r + 1] : uint32_t(keys.size());
    const uint32_t len = end - starts[r];
    if (non_trivial && len < 2) continue;
    unique_keys.push_back(keys[starts[r]]);
    offsets.push_back(starts[r]);
    lengths.push_back(len);
  }
}

}  // namespace vkprim::host
