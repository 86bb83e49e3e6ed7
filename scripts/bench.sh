#!/usr/bin/env bash
# The side-by-side benchmark: six workloads as clsync kernels, as OpenCL C on
# PoCL, and as plain Rust with rayon; interleaved runs, medians, ratios.
# Built for this CPU (PoCL compiles its kernels for it too) in its own target
# directory. Extra arguments go to the suite: --reps N, --threads N,
# --only NAME, --small, --warm-caches, --spread, --ceiling, --scaling 1,2,4,8,16.
# Without PoCL the suite says so and runs the rest.
# --intel adds Intel's CPU OpenCL runtime as a column: installed the first
# time from PyPI (intel-opencl-rt, intel-cmplr-lib-rt) into its own virtual
# environment, target/intel-venv, and given to the ICD loader beside the
# system's platforms (OCL_ICD_VENDORS, LD_LIBRARY_PATH). Without it the
# suite says that Intel's runtime was not run.
set -euo pipefail
cd "$(dirname "$0")/.."
args=()
intel=0
for a in "$@"; do
  if [ "$a" = "--intel" ]; then intel=1; else args+=("$a"); fi
done
if [ "$intel" = 1 ]; then
  venv="$(pwd)/target/intel-venv"
  if [ ! -e "$venv/lib/libintelocl.so" ]; then
    echo "bench: installing Intel's CPU OpenCL runtime into $venv (pip)"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q intel-opencl-rt intel-cmplr-lib-rt
  fi
  vendors="$(pwd)/target/intel-icd"
  mkdir -p "$vendors"
  cp /etc/OpenCL/vendors/*.icd "$vendors"/ 2>/dev/null || true
  echo "$venv/lib/libintelocl.so" > "$vendors/intel.icd"
  export OCL_ICD_VENDORS="$vendors"
  export LD_LIBRARY_PATH="$venv/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
features=()
if [ -e /etc/OpenCL/vendors/pocl.icd ]; then
  features=(--features pocl)
else
  echo "bench: PoCL is not installed (scripts/setup-debian.sh installs it)"
fi
RUSTFLAGS="-C target-cpu=native" CARGO_TARGET_DIR=target/native \
  cargo run --release -p clsync-bench "${features[@]}" -- "${args[@]}"
