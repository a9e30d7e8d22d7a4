#!/usr/bin/env bash
# ctest tools.plot: `vkprim bench` writes JSON for every primitive on the test device (small sizes), its
# stdout holds only the table (progress goes to stderr), and scripts/plot turns that JSON and a cub_bench
# sample (cub_bench_format.json: cub_bench --json's format, numbers made up) into one SVG per chart.
# Exit 77 (skipped) where matplotlib is missing.
#   plot_test.sh <vkprim executable> <vkprim source dir> <scratch dir>
set -euo pipefail
vkprim=$1 source=$2 work=$3
plot="$source/scripts/plot"
cub="$source/tests/tools/cub_bench_format.json"
rm -rf "$work" && mkdir -p "$work"

fail() { echo "FAIL: $*" >&2; exit 1; }

# Without matplotlib there is nothing to test: scripts/plot says so and exits 77.
rc=0
"$plot" --out "$work/cub-only" "$cub" > "$work/cub-only.txt" || rc=$?
[[ $rc -eq 77 ]] && exit 77
[[ $rc -eq 0 ]] || fail "scripts/plot on the CUB sample alone exited $rc"
[[ -s "$work/cub-only/reduce-u32-add.svg" ]] || fail "CUB sample alone: no reduce chart"

bench() {  # bench <name> <vkprim bench arguments...>
  local name=$1
  shift
  "$vkprim" bench "$@" --sizes 2^10,2^12 --repeat 10 --json "$work/bench-$name.json" \
    > "$work/$name.out" 2> "$work/$name.err" || fail "vkprim bench $* exited non-zero: $(cat "$work/$name.err")"
  head -1 "$work/$name.out" | grep -q '^device: ' || fail "vkprim bench $*: stdout does not start with the header"
  if grep -q '\.\.\.$' "$work/$name.out"; then fail "vkprim bench $*: progress lines on stdout"; fi
  grep -q '\.\.\.$' "$work/$name.err" || fail "vkprim bench $*: no progress lines on stderr"
}
bench reduce reduce
bench scan scan
bench select select --predicate flagged --density 50
bench sort sort
bench histogram histogram --bins 256

"$plot" --out "$work/svg" "$work"/bench-*.json "$cub" > "$work/plot.txt" || fail "scripts/plot exited $?"
for chart in reduce-u32-add scan-inclusive-u32-add select-u32-flagged-d50 sort_keys-u32-ascending \
             histogram-u32-c1-b256-even; do
  svg="$work/svg/$chart.svg"
  [[ -s "$svg" ]] || fail "$svg was not written (scripts/plot printed: $(cat "$work/plot.txt"))"
  grep -q '<svg' "$svg" || fail "$svg has no <svg element"
  grep -q 'copy ceiling' "$svg" || fail "$svg has no copy ceiling line"
  grep -q 'read ceiling' "$svg" || fail "$svg has no read ceiling line"
  grep -q 'CUB Device' "$svg" || fail "$svg has no CUB line"
done
grep -q 'grid_stride' "$work/svg/reduce-u32-add.svg" || fail "the reduce chart lacks automatic's resolved algorithm"
echo "plot test: $(wc -l < "$work/plot.txt") charts in $work/svg"
