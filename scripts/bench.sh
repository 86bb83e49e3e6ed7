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
# clsync's own OpenCL platform (crates/clsync-icd) is a column too: built
# here with the suite and given to the ICD loader with the system's other
# platforms, so that kernels.cl runs through the OpenCL API on it.
set -euo pipefail
cd "$(dirname "$0")/.."
args=()
intel=0
for a in "$@"; do
  if [ "$a" = "--intel" ]; then intel=1; else args+=("$a"); fi
done
export RUSTFLAGS="-C target-cpu=native" CARGO_TARGET_DIR=target/native
cargo build --release --quiet -p clsync-icd
vendors="$(pwd)/target/bench-icd"
rm -rf "$vendors" && mkdir -p "$vendors"
for icd in /etc/OpenCL/vendors/*.icd; do
  if [ -e "$icd" ] && [ "$(basename "$icd")" != clsync.icd ]; then cp "$icd" "$vendors"/; fi
done
echo "$(pwd)/target/native/release/libclsync_icd.so" > "$vendors/clsync.icd"
export OCL_ICD_VENDORS="$vendors"
if [ "$intel" = 1 ]; then
  venv="$(pwd)/target/intel-venv"
  if [ ! -e "$venv/lib/libintelocl.so" ]; then
    echo "bench: installing Intel's CPU OpenCL runtime into $venv (pip)"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q intel-opencl-rt intel-cmplr-lib-rt
  fi
  echo "$venv/lib/libintelocl.so" > "$vendors/intel.icd"
  export LD_LIBRARY_PATH="$venv/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
features=()
if [ -e /etc/OpenCL/vendors/pocl.icd ]; then
  features=(--features pocl)
else
  echo "bench: PoCL is not installed (scripts/setup-debian.sh installs it)"
fi
cargo run --release -p clsync-bench "${features[@]}" -- "${args[@]}"
