// The `vkprim` command-line program: info, bench, verify, demo, version.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "commands.hpp"
#include "vkprim/version.hpp"

namespace {

void usage() {
  std::fprintf(stderr,
               "usage: vkprim <command> [options]\n"
               "  info                       vkprim's version, the Vulkan devices, the chosen one, its capabilities\n"
               "                             and what each primitive's automatic algorithm picks there\n"
               "  bench reduce [--type T] [--op O] [--algorithm all|NAME] [--sizes LIST] [--repeat N] [--json FILE]\n"
               "  bench scan [--kind inclusive|exclusive] [--type T] [--op O] [--algorithm all|NAME|NAME@WGxV[xK]]\n"
               "             [--sizes LIST] [--repeat N] [--json FILE]   (K: chained look-back windows per step)\n"
               "  bench reduce|scan --operator aabb_union|affine|argmin|mat4_product|welford|sum4 [--kind K]\n"
               "             [--algorithm NAME|all] [--sizes LIST] [--repeat N] [--json FILE]   (sample user operators)\n"
               "  bench select [--partition [--rejected-order input|reversed|both]] [--type T] [--predicate flagged|less|...]\n"
               "             [--density PERCENT] [--output indices]\n"
               "             [--algorithm automatic|chained|count_scan_scatter|all|NAME@WGxV] [--sizes LIST] [--repeat N]\n"
               "             [--json FILE]\n"
               "  bench sort [--key-type u32|i32|f32|u64|i64|f64|u16|u8] [--pairs [--value-size 4..64]] [--order ascending|descending]\n"
               "             [--bits BEGIN..END] [--algorithm automatic|onesweep|reduce_then_scan|all|NAME@WGxITEMS]\n"
               "             [--ranking ballots|partitioned] [--scatter staged|direct]\n"
               "             [--keys uniform|splat[:TILES]] [--indirect] [--sizes LIST] [--repeat N] [--json FILE]\n"
               "             (splat: positive f32 depths, 64-bit keys tile << 32 | depth, TILES default 8160;\n"
               "             --indirect: record_indirect, the count in a GPU buffer)\n"
               "  bench scatter [--digits LIST] [--tile WGxITEMS,...] [--pairs] [--sizes LIST] [--repeat N] [--json FILE]\n"
               "             (the scatter ceiling of a radix digit pass: keys grouped by digit in each tile written\n"
               "             to their stable positions; default digits 256,2048, tiles 384x18,1024x16,1024x32)\n"
               "  bench reduce_by_key|scan_by_key [--kind inclusive|exclusive]|rle|non_trivial_runs|unique [--run-length L]\n"
               "             [--algorithm automatic|chained|reduce_then_scan|all|NAME@WGxITEMS,...] [--sizes LIST]\n"
               "             [--repeat N] [--json FILE]\n"
               "             (u32 keys and values; run lengths uniform on 1..2L-1, default L 4)\n"
               "  bench histogram [--sample u8|u16|u32|i32|f32] [--bins LIST] [--channels 1..4] [--binning even|levels]\n"
               "             [--lower X --upper Y] [--skew [P]] [--algorithm automatic|privatized|global|all|NAME@WGxVxG]\n"
               "             [--sizes LIST] [--repeat N] [--json FILE]   (sizes in pixels; --skew: P%% (90) of the\n"
               "             samples in one bin; G: workgroups in the grid)\n"
               "  bench topk [--type u32|i32|f32] [--order ascending|descending] [--k LIST] [--value-size 0|4]\n"
               "             [--sorted yes|no] [--segment-size LIST] [--sizes LIST] [--repeat N] [--json FILE]\n"
               "             (uniform random keys; default k 1024, descending, sorted; --segment-size: the k of\n"
               "             every segment of that many keys, record_segmented)\n"
               "  bench segmented_reduce [--type T] [--op O] [--segment-size LIST | --segments power-law] [--sizes LIST]\n"
               "             [--algorithm automatic@WGxV[xG],...] [--thresholds T:H:C,...] [--repeat N] [--json FILE]\n"
               "             (segments end to end: one size each, default 1,32,1024,2^20, or power-law lengths up to\n"
               "             2^16; rows: offsets (record), fixed (record_fixed); G the ranges grid, T:H:C short_max,\n"
               "             medium_max, chunk in elements, 0 keeping the plan's)\n"
               "  bench segmented_sort [--key-type T] [--value-size 0|4|8] [--segment-size LIST | --segments splat]\n"
               "             [--indirect] [--sizes LIST] [--algorithm automatic@WGxITEMS] [--thresholds S:M]\n"
               "             [--block-tile WGxITEMS] [--medium-tile WGxITEMS] [--large-algorithm A] [--repeat N]\n"
               "             [--json FILE]   (segments end to end: one size each, default 16,256,4096,2^20, or power-law\n"
               "             lengths up to 2^14; rows: offsets (record), fixed (record_fixed), indirect\n"
               "             (record_indirect); WGxITEMS the large segments' tile (--algorithm), the batch tile, the\n"
               "             medium tile; S:M small_max, medium_max in keys, 0 keeping the plan's; A the large segments'\n"
               "             digit passes: automatic, onesweep or reduce_then_scan)\n"
               "  verify                     quick self-check of every primitive on the chosen device\n"
               "  demo [--size N] [--repeat N]  each primitive's automatic plan at one size (2^24 on a GPU, 2^18 on a\n"
               "                             CPU driver): GB/s, ratio to the read/copy ceilings measured in the same\n"
               "                             process, verified against the CPU\n"
               "  version                    vkprim's version\n"
               "common options: --device INDEX|NAME (else env VKPRIM_DEVICE), --validation,\n"
               "  --spin-limit N (chained scans: polls before a fallback), --skip-publication K (every K-th tile\n"
               "  skips publishing its aggregate: forces waits or fallbacks), --lookback-stats (chained kernels\n"
               "  also count look-back steps and depth, two atomics per tile more; bench notes show them),\n"
               "  --tile-order automatic|ticket|launch (chained kernels with a fallback: tile index from an\n"
               "  atomic ticket or from the workgroup index; automatic: launch on NVIDIA)\n"
               "bench options: --profile also prints the median GPU time of each pass of every plan timed;\n"
               "  --stats prints, after the tables, the driver's statistics of every pipeline (registers, shared\n"
               "  memory, ... where the device has VK_KHR_pipeline_executable_properties)\n"
               "sizes: 2^10..2^28 (powers of two), 2^20+1, 1000, comma-separated\n");
}

}  // namespace

int main(int argc, char** argv) {
  // Each line as it completes, also into a pipe (verify and bench run for minutes on a GPU).
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "-h" || args[0] == "--help") {
    usage();
    return args.empty() ? 2 : 0;
  }
  const std::string command = args[0];
  args.erase(args.begin());
  if (command == "info") return vkprim::tools::run_info(args);
  if (command == "verify") return vkprim::tools::run_verify(args);
  if (command == "bench") return vkprim::tools::run_bench(args);
  if (command == "demo") return vkprim::tools::run_demo(args);
  if (command == "version" || command == "--version") {
    std::printf("vkprim %s\n", vkprim::version().string);
    return 0;
  }
  usage();
  return 2;
}
