#!/usr/bin/env bash
# Checked runs side by side with Oclgrind: `clsync run --check` against
# `oclgrind-kernel --data-races --uninitialized` on the same .sim files (the
# benchmark's kernels.cl, built as OpenCL C 2.0 by both), at sizes where
# Oclgrind takes seconds. Interleaved runs, medians, the ratio, and whether
# both dumped the same buffer and reported the same kinds of diagnostics.
# Usage: scripts/oclgrind-compare.sh [REPS] (default 3). Needs oclgrind
# (scripts/setup-debian.sh installs it); says so and stops when it is absent.
set -euo pipefail
cd "$(dirname "$0")/.."
reps="${1:-3}"
if ! command -v oclgrind-kernel >/dev/null; then
  echo "oclgrind-compare: oclgrind-kernel is not installed (scripts/setup-debian.sh, or apt-get install oclgrind)"
  exit 0
fi
cargo build --release -q -p clsync-cli
clsync="$(pwd)/target/release/clsync"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
cp crates/clsync-bench/src/kernels.cl "$dir/kernels.cl"
# Oclgrind runs no C11 atomics: the histogram with OpenCL 1.x atomics.
cat >> "$dir/kernels.cl" <<'CL'

kernel void histogram_1x(global const uchar* in, global uint* bins) {
    local uint lb[256];
    size_t l = get_local_id(0);
    lb[l] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    size_t base = get_global_id(0) * HIST_PER_ITEM;
    for (int k = 0; k < HIST_PER_ITEM; k++) atomic_inc(&lb[in[base + k]]);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lb[l] != 0) atomic_add(&bins[l], lb[l]);
}
CL
sim() { # name kernel global local args...
  local name=$1 kernel=$2 global=$3 local=$4
  shift 4
  { printf 'kernels.cl\n%s\n%s 1 1\n%s 1 1\n\n' "$kernel" "$global" "$local"
    printf '%s\n' "$@"; } > "$dir/$name.sim"
}
sim "barrier loop" barrier_loop 65536 256 '<size=262144 uint fill=0 dump>' '<size=4 int>' 32
sim reduce reduce 262144 256 '<size=1048576 float range=0:1:262143>' '<size=4096 float fill=0 dump>' '<size=1024>'
sim scan scan_groups 262144 256 '<size=1048576 int range=0:1:262143 dump>' '<size=4096 int fill=0>' '<size=1792>' '<size=1792>'
sim histogram histogram_1x 4096 256 '<size=1048576 uchar fill=7>' '<size=1024 uint fill=0 dump>'
{ printf 'kernels.cl\nsgemm\n128 128 1\n16 16 1\n\n'
  printf '%s\n' '<size=65536 float range=0:1:16383>' '<size=65536 float range=0:1:16383>' \
    '<size=65536 float fill=0 dump>' '<size=4 int>' 128; } > "$dir/sgemm.sim"
cd "$dir"
python3 - "$clsync" "$reps" "barrier loop" reduce scan sgemm histogram <<'PY'
import re, statistics, subprocess, sys, time
clsync, reps, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
heads = ["Read-write data race", "Write-write data race", "Work-group divergence",
         "Uninitialized value", "Uninitialized address", "Invalid read", "Invalid write"]
sides = {
    "clsync": [clsync, "run", "--check", "--build-options", "-cl-std=CL2.0"],
    "oclgrind": ["oclgrind-kernel", "--build-options", "-cl-std=CL2.0",
                 "--data-races", "--uninitialized"],
}
def run(cmd, sim):
    t = time.perf_counter()
    p = subprocess.run(cmd + [sim + ".sim"], capture_output=True, text=True)
    dt = time.perf_counter() - t
    out = p.stdout + p.stderr
    dump = [l for l in out.splitlines() if re.match(r"^  \S+\[\d+\] = ", l)]
    kinds = sorted({h for h in heads for l in out.splitlines() if h in l})
    return dt, dump, kinds, p.returncode
print("workload        clsync --check   oclgrind   oclgrind/clsync   same dump   same diagnostics")
for name in names:
    times = {s: [] for s in sides}
    seen = {}
    for _ in range(reps):
        for s, cmd in sides.items():
            dt, dump, kinds, rc = run(cmd, name)
            times[s].append(dt)
            seen[s] = (dump, kinds, rc)
    c, o = (statistics.median(times[s]) for s in ("clsync", "oclgrind"))
    same_dump = seen["clsync"][0] == seen["oclgrind"][0] and len(seen["clsync"][0]) > 0
    same_kinds = seen["clsync"][1] == seen["oclgrind"][1]
    print("%-15s %12.3f s %9.3f s %14.1fx   %-9s   %s%s" % (
        name, c, o, o / c, "yes" if same_dump else "NO", "yes" if same_kinds else "NO",
        "" if same_kinds else " (clsync %s, oclgrind %s)" % (seen["clsync"][1], seen["oclgrind"][1])))
PY
