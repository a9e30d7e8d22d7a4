#!/usr/bin/env bash
# ctest tools.cli: what scripts/demo shows. `vkprim version` and `vkprim info` print the CMake project
# version, info lists the automatic pick of every primitive, the keyed ones included (none refused on the
# test device), `vkprim demo` runs reduce, scan, sort and select, each verified, and bench sort sorts
# splatting-shaped keys recorded indirectly, bench topk --segment-size the top k of each segment, bench
# scatter the scatter ceiling of a digit pass.
#   cli_test.sh <vkprim executable> <CMake project version>
set -euo pipefail
vkprim=$1 version=$2
fail() { echo "FAIL: $*" >&2; exit 1; }

[[ "$("$vkprim" version)" == "vkprim $version" ]] || fail "vkprim version printed '$("$vkprim" version)', not 'vkprim $version'"

info=$("$vkprim" info) || fail "vkprim info exited non-zero"
echo "$info"
[[ "$(head -1 <<< "$info")" == "vkprim $version" ]] || fail "vkprim info does not start with 'vkprim $version'"
grep -Eq '^  8-bit storage (yes|no), 16-bit storage (yes|no) ' <<< "$info" || fail "vkprim info does not list 8- and 16-bit storage"
picks=$(sed -n '/^automatic picks/,$p' <<< "$info")
for primitive in reduce segmented_reduce segmented_sort scan select partition sort reduce_by_key scan_by_key run_length_encode \
                 non_trivial_runs unique histogram; do
  grep -q "^  $primitive " <<< "$picks" || fail "vkprim info lists no automatic pick for $primitive"
done
if grep -q 'refused' <<< "$picks"; then fail "vkprim info: a pick was refused"; fi

demo=$("$vkprim" demo --size 2^12) || fail "vkprim demo exited non-zero"
echo "$demo"
for primitive in reduce scan sort select; do
  grep -Eq "^$primitive +.* yes$" <<< "$demo" || fail "vkprim demo: no verified line for $primitive"
done

# The splatting-shaped sort of `vkprim bench sort` (compare-cub's splat_pairs_u64_48): (tile, depth) keys,
# bits [0, 48), the count read from a GPU buffer; its rows are verified against the CPU.
splat=$("$vkprim" bench sort --pairs --key-type u64 --bits 0..48 --keys splat:64 --indirect --sizes 2^12 --repeat 2) ||
  fail "vkprim bench sort --keys splat --indirect exited non-zero"
echo "$splat"
grep -Eq "^sort_pairs .* yes +.*indirect splat:64" <<< "$splat" || fail "vkprim bench sort: no verified splat row"

# Batched top-k (`vkprim bench topk --segment-size`): TopK::record_segmented over segments of 1000 keys, each
# segment's k checked against the CPU.
batched=$("$vkprim" bench topk --k 16 --segment-size 1000 --sizes 2^12 --repeat 2) ||
  fail "vkprim bench topk --segment-size exited non-zero"
echo "$batched"
grep -Eq "^topk +segments 1000 .* yes +$" <<< "$batched" || fail "vkprim bench topk --segment-size: no verified row"

# The scatter ceiling of a radix digit pass (`vkprim bench scatter`): keys and values grouped by digit in
# tiles, written to their stable positions, checked against the CPU's stable pass, for 8- and 11-bit digits.
scatter=$("$vkprim" bench scatter --pairs --digits 256,2048 --tile 256x8 --sizes 5000 --repeat 2) ||
  fail "vkprim bench scatter exited non-zero"
echo "$scatter"
[[ $(grep -Ec "^scatter +256x8 pairs +(256|2048) +2048 +5000 .* yes +$" <<< "$scatter") == 2 ]] ||
  fail "vkprim bench scatter: not two verified rows"
