# shellcheck shell=bash
# Sourced by scripts/compare-cub and scripts/ab: the tools they carry to the GPU machine in .devbin/.

# vkprim_tool_of REV|. OUT: the Release `vkprim` tool of commit REV (`.`: the working tree), built in
# build/ab/<short hash or "work"> (tests, examples and cub_bench off) and written stripped to OUT.
vkprim_tool_of() {
  local rev=$1 out=$2 label src
  if [ "$rev" = . ]; then
    label=work src=.
  else
    label=$(git rev-parse --short "$rev") src=build/ab-src/$label
    rm -rf "$src" && mkdir -p "$src"
    git archive "$rev" | tar -x -C "$src"
  fi
  cmake -S "$src" -B "build/ab/$label" -DCMAKE_BUILD_TYPE=Release -DVKPRIM_BUILD_TESTS=OFF \
    -DVKPRIM_BUILD_EXAMPLES=OFF -DVKPRIM_BUILD_CUB_BENCH=OFF -DVKPRIM_SORT_OPTION_KERNELS=ON >/dev/null
  cmake --build "build/ab/$label" --target vkprim_cli -j"$(nproc)"
  strip -o "$out" "build/ab/$label/tools/vkprim"
}

# unpack_devbin DIR: on the GPU machine the carried binaries arrive gzipped and lose their mode bits.
unpack_devbin() {
  gunzip -f "$1"/*.gz 2>/dev/null || true
  chmod +x "$1"/*
}
