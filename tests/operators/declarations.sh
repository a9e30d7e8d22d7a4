#!/usr/bin/env bash
# ctest operators.declarations: vkprim_add_operator's configure-time checks (declarations/CMakeLists.txt):
# a NAME declared twice alike is accepted, with another definition refused, an INTERFACE target refused.
set -uo pipefail
src=$1
dir=$(dirname "$0")/declarations
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
run() {  # CASE EXPECT(ok|fail) PATTERN
  local out status
  out=$(cmake -S "$dir" -B "$tmp/$1" -DVKPRIM_SOURCE_DIR="$src" -DCASE="$1" 2>&1)
  status=$?
  if [[ $2 == ok && $status -ne 0 ]] || [[ $2 == fail && $status -eq 0 ]] || ! grep -q -- "$3" <<< "$out"; then
    echo "case $1: expected $2 with '$3'; exit $status, output:"
    echo "$out"
    failures=$((failures + 1))
  else
    echo "case $1: $2 as expected"
  fi
}
run same ok "Generating done"
run different fail "NAME sum is already declared (.*TARGET first"
run interface fail "TARGET headers is an INTERFACE library"
[[ $failures -eq 0 ]]
