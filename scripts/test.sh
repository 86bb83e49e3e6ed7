#!/usr/bin/env bash
# The test command: every test, doctest (including the compile_fail proofs),
# the loom models of the scheduler, clippy, rustfmt and the API docs.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo test (workspace, with doctests)"
cargo test --workspace

echo "== Oclgrind's visible kernel tests on clsync run --check, against the known failures"
bash scripts/oclgrind-suite.sh target/debug/clsync

echo "== the benchmark kernels on PoCL too (correctness only, small sizes)"
if [ -e /etc/OpenCL/vendors/pocl.icd ]; then
  cargo test -p clsync-bench --features pocl
else
  echo "PoCL is not installed (scripts/setup-debian.sh installs it); skipping its side"
fi

echo "== the CTS ports again, every launch checked (CLSYNC_CHECK=1): no reports"
CLSYNC_CHECK=1 cargo test -p clsync --test cts_sync --test cts_atomics --test cts_legacy_atomics

echo "== loom models of the scheduler (cfg(loom), own target dir)"
RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test -p clsync --lib --release loom

echo "== clippy and rustfmt"
cargo clippy --workspace --all-targets -- -D warnings
cargo fmt --all --check

echo "== API docs without warnings (broken or private links)"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --workspace --quiet
echo "== all checks passed"
