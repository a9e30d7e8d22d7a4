#!/usr/bin/env bash
# ctest operators.link_collision: the link-time half of vkprim_add_operator's one-NAME-one-operator rule
# (cmake/VkprimOperators.cmake). Two static libraries configured apart (link_collision/CMakeLists.txt, so the
# configure-time check cannot see both) each declare NAME sum; a program links both. With the same definition
# it links; with another definition both operator.o are pulled in and the plain symbol
# vkprim_ops::sum_declared_twice_with_different_definitions is defined twice: the link fails.
# Only the generated C++ is compiled (operator.cpp, a caller per library, a stub for the kernels' ShaderGroup
# objects); no kernels. Usage: link_collision.sh <vkprim source dir> [C++ compiler] [ar]
set -uo pipefail
src=$1
cxx=${2:-${CXX:-c++}}
ar=${3:-${AR:-ar}}
dir=$(dirname "$0")/link_collision
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

cat > "$tmp/sum.glsl" <<'GLSL'
VALUE_T combine(VALUE_T a, VALUE_T b) { return VALUE_T(a.x + b.x); }
GLSL
cat > "$tmp/other.glsl" <<'GLSL'
VALUE_T other(VALUE_T a, VALUE_T b) { return VALUE_T(b.x + a.x); }
GLSL
cat > "$tmp/main.cpp" <<'CPP'
int use_a();
int use_b();
int main() { return use_a() + use_b() == 8 ? 0 : 1; }
CPP

fail() {  # CASE MESSAGE [OUTPUT]
  echo "case $1: $2"
  [[ $# -ge 3 ]] && echo "$3"
  failures=$((failures + 1))
}

# lib CASE LIB COMBINE [FUNCTION]: configure LIB's project, compile its operator.cpp and caller, archive them.
lib() {
  local c=$1 l=$2 b=$tmp/$1/$2 out
  mkdir -p "$b"
  out=$(cmake -S "$dir" -B "$b/cfg" -DVKPRIM_SOURCE_DIR="$src" -DCOMBINE="$3" -DFUNCTION="${4:-combine}" 2>&1) ||
    { fail "$c" "configuring library $l failed:" "$out"; return 1; }
  printf '#include "vkprim_ops/sum.hpp"\nint use_%s() { return static_cast<int>(vkprim_ops::sum().size); }\n' \
    "$l" > "$b/$l.cpp"
  out=$("$cxx" -std=c++17 -I"$src/include" -I"$b/cfg/vkprim_ops/include" -c "$b/cfg/vkprim_ops/sum/operator.cpp" \
          -o "$b/operator.o" 2>&1 &&
        "$cxx" -std=c++17 -I"$src/include" -I"$b/cfg/vkprim_ops/include" -c "$b/$l.cpp" -o "$b/$l.o" 2>&1 &&
        "$ar" rcs "$b/lib$l.a" "$b/operator.o" "$b/$l.o" 2>&1) ||
    { fail "$c" "compiling library $l failed:" "$out"; return 1; }
}

run() {  # CASE EXPECT(ok|fail) COMBINE_B [FUNCTION_B]
  local c=$1 t=$tmp/$1 out status syms s
  lib "$c" a "$tmp/sum.glsl" || return
  lib "$c" b "$3" "${4:-}" || return
  # The kernels each library would embed (kernels.cpp): empty ShaderGroups, one per signature.
  syms=$(grep -ho 'kShaderGroup_user_sum_[0-9a-f]*' "$t"/a/cfg/vkprim_ops/sum/operator.cpp \
           "$t"/b/cfg/vkprim_ops/sum/operator.cpp | sort -u)
  { echo '#include "vkprim/detail/shader_group.hpp"'
    echo 'namespace vkprim::detail {'
    for s in $syms; do echo "extern const ShaderGroup $s; const ShaderGroup $s{};"; done
    echo '}'; } > "$t/stub.cpp"
  out=$("$cxx" -std=c++17 -I"$src/include" -c "$t/stub.cpp" -o "$t/stub.o" 2>&1 &&
        "$cxx" -std=c++17 -c "$tmp/main.cpp" -o "$t/main.o" 2>&1) ||
    { fail "$c" "compiling main.cpp or the stub failed:" "$out"; return; }
  out=$("$cxx" "$t/main.o" "$t/stub.o" "$t/a/liba.a" "$t/b/libb.a" -o "$t/program" 2>&1)
  status=$?
  if [[ $2 == ok ]]; then
    if [[ $status -ne 0 ]]; then
      fail "$c" "expected the link to succeed; exit $status, output:" "$out"
    elif ! "$t/program"; then
      fail "$c" "linked, but the program did not see sum's size (4) from both libraries"
    else
      echo "case $c: linked ($(wc -l <<< "$syms") signature) as expected"
    fi
  elif [[ $status -eq 0 ]]; then
    fail "$c" "expected the link to fail (signatures: $(echo $syms)), but it succeeded; output:" "$out"
  elif ! grep -q 'sum_declared_twice_with_different_definitions' <<< "$out"; then
    fail "$c" "the link failed, but without naming sum_declared_twice_with_different_definitions; exit $status:" "$out"
  else
    echo "case $c: link refused ($(grep -m1 -o "multiple definition of \`[^']*'" <<< "$out" || echo "exit $status")) as expected"
  fi
}

run same ok "$tmp/sum.glsl"
run different fail "$tmp/other.glsl" other
[[ $failures -eq 0 ]]
