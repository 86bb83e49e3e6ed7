#!/usr/bin/env bash
# Installs what building and testing clsync needs on a fresh Debian machine
# that already has a Rust toolchain (cargo). Idempotent: it installs only
# what is missing. Run as root.
set -euo pipefail

need=()
command -v cc >/dev/null 2>&1 || need+=(build-essential)
command -v git >/dev/null 2>&1 || need+=(git)
# The PoCL side of the benchmark suite (crates/clsync-bench, feature `pocl`):
# the OpenCL ICD loader to link against, PoCL as the CPU device, clinfo.
[ -e /usr/lib/x86_64-linux-gnu/libOpenCL.so ] || [ -e /usr/lib/aarch64-linux-gnu/libOpenCL.so ] \
  || need+=(ocl-icd-opencl-dev)
[ -e /etc/OpenCL/vendors/pocl.icd ] || need+=(pocl-opencl-icd)
command -v clinfo >/dev/null 2>&1 || need+=(clinfo)
# The OpenCL C front end (crates/clsync-opencl): clang-15 compiles OpenCL C
# to LLVM IR, llvm-as-15 (package llvm-15) assembles it, llvm-spirv-15
# translates it to SPIR-V.
command -v clang-15 >/dev/null 2>&1 || need+=(clang-15)
command -v llvm-as-15 >/dev/null 2>&1 || need+=(llvm-15)
command -v llvm-spirv-15 >/dev/null 2>&1 || need+=(llvm-spirv-15)
# The checker's peer (scripts/oclgrind-compare.sh): Oclgrind's
# `oclgrind-kernel` runs the same .sim files.
command -v oclgrind-kernel >/dev/null 2>&1 || need+=(oclgrind)

if ((${#need[@]})); then
  echo "setup: installing ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo is missing; install a Rust toolchain (1.85 or newer) first" >&2
  exit 1
fi
# The `clsync` command on PATH: a launcher that runs this checkout's release
# build, rebuilt when stale. Built here once, so that its first use (say, by
# Oclgrind's check.py, which runs each test from the test's folder and finds
# `clsync` by name) does not wait for the build.
repo="$(cd "$(dirname "$0")/.." && pwd)"
sed -e "s|@REPO@|$repo|" -e "s|@CARGO@|$(command -v cargo)|" \
  "$repo/scripts/clsync-launcher.sh" >/usr/local/bin/clsync
chmod +x /usr/local/bin/clsync
cargo build --release --quiet --manifest-path "$repo/Cargo.toml" -p clsync-cli -p clsync-icd
# clsync's OpenCL platform, for every OpenCL program on the machine (clinfo
# lists it beside PoCL): the ICD loader reads the driver's path from this
# vendors file. A per-user install names it in a folder of its own instead,
# with OCL_ICD_VENDORS pointing there; `clsync run -- ./app` does that for
# one program.
mkdir -p /etc/OpenCL/vendors
echo "$repo/target/release/libclsync_icd.so" >/etc/OpenCL/vendors/clsync.icd
echo "setup: ready ($(cargo --version)); clsync is $(command -v clsync); OpenCL platform registered in /etc/OpenCL/vendors/clsync.icd"
