#!/usr/bin/env bash
# The side-by-side benchmark: six workloads as clsync kernels, as OpenCL C on
# PoCL, and as plain Rust with rayon; interleaved runs, medians, ratios.
# Built for this CPU (PoCL compiles its kernels for it too) in its own target
# directory. Extra arguments go to the suite: --reps N, --threads N,
# --only NAME, --small, --warm-caches, --spread, --ceiling, --scaling 1,2,4,8,16.
# Without PoCL the suite says so and runs the rest.
set -euo pipefail
cd "$(dirname "$0")/.."
features=()
if [ -e /etc/OpenCL/vendors/pocl.icd ]; then
  features=(--features pocl)
else
  echo "bench: PoCL is not installed (scripts/setup-debian.sh installs it)"
fi
RUSTFLAGS="-C target-cpu=native" CARGO_TARGET_DIR=target/native \
  cargo run --release -p clsync-bench "${features[@]}" -- "$@"
