#!/usr/bin/env bash
# PoCL for a machine that cannot install it (no network, or another
# distribution), so that the benchmark suite runs side by side there too.
#
#   bash scripts/pocl-bundle.sh pack FILE.tar.xz [VARIANT...]
#       On Debian 12: downloads PoCL 3.1 and the libraries it loads that a
#       machine may lack (LLVM 15, libclang-cpp 15, the ICD loader, hwloc,
#       z3, ICU, libxml2, ...) as Debian packages and packs them unpacked
#       into FILE. VARIANTs keep only those kernel libraries of PoCL's
#       (avx512, avx2, GENERIC, ...; default all), to make FILE smaller.
#   bash scripts/pocl-bundle.sh run FILE.tar.xz PROGRAM [ARGS...]
#       On the other machine: unpacks FILE into a temporary directory and
#       runs PROGRAM (a build of clsync-bench with the `pocl` feature, say)
#       with that PoCL as its only OpenCL platform.
#
# The bundle leaves out the C and C++ runtime libraries, which the machine's
# own loader must provide: the target needs glibc 2.36 or newer, a
# libstdc++ with GLIBCXX_3.4.30 (GCC 12 or newer), and a system linker
# (`ld`), which PoCL runs for every kernel it builds. (Running the program
# with the bundle's own glibc and loader instead crashed on Ubuntu 24.04.)
set -euo pipefail

packages=(libpocl2 libpocl2-common pocl-opencl-icd ocl-icd-libopencl1 libllvm15
  libclang-cpp15 libz3-4 libicu72 libxml2 libhwloc15 libedit2 libffi8 libbsd0
  libmd0 libtinfo6)

die() {
  echo "pocl-bundle: $*" >&2
  exit 1
}

pack() {
  local out=$1
  shift
  command -v apt-get >/dev/null && command -v dpkg >/dev/null ||
    die "pack needs apt-get and dpkg (Debian 12)"
  # Global, so that the exit trap still sees it.
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  mkdir "$work/debs" "$work/tree"
  (cd "$work/debs" && apt-get download "${packages[@]}" >/dev/null) ||
    die "apt-get download failed (run apt-get update first?)"
  for deb in "$work"/debs/*.deb; do dpkg -x "$deb" "$work/tree"; done
  rm -rf "$work"/tree/usr/share/{doc,doc-base,man,lintian}
  if (($#)); then
    local kept=0 f v keep
    for f in "$work"/tree/usr/share/pocl/kernel-*.bc; do
      keep=
      for v in "$@"; do [[ $f == *-"$v".bc ]] && keep=1; done
      if [ -n "$keep" ]; then kept=$((kept + 1)); else rm "$f"; fi
    done
    ((kept)) || die "no kernel library matches ${*} (see usr/share/pocl in libpocl2)"
  fi
  tar -C "$work/tree" -cf - . | xz -T0 -6 >"$out"
  echo "pocl-bundle: wrote $out ($(du -h "$out" | cut -f1))"
}

run() {
  local bundle=$1
  shift
  (($#)) || die "run needs a program to run"
  [ -f "$bundle" ] || die "no bundle at $bundle"
  command -v ld >/dev/null || die "no system linker (ld): PoCL links each kernel with it"
  local glibc
  glibc=$(ldd --version 2>/dev/null | head -1 | grep -o '[0-9]*\.[0-9]*$' || true)
  if [ -n "$glibc" ] && [ "$(printf '%s\n2.36\n' "$glibc" | sort -V | head -1)" != 2.36 ]; then
    die "glibc $glibc is older than the 2.36 that Debian 12's LLVM needs"
  fi
  root=$(mktemp -d)
  trap 'rm -rf "$root"' EXIT
  tar -C "$root" -xJf "$bundle"
  # Debian's multiarch directory for this machine (x86_64-linux-gnu, ...).
  local triple
  triple=$(uname -m)-linux-gnu
  [ -d "$root/usr/lib/$triple" ] || die "the bundle holds no libraries for $triple"
  # The ICD loader finds PoCL through this directory alone; PoCL finds its
  # kernel libraries beside itself (a relocatable build).
  OCL_ICD_VENDORS="$root/etc/OpenCL/vendors" \
    LD_LIBRARY_PATH="$root/usr/lib/$triple:$root/lib/$triple${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    "$@"
}

case "${1:-}" in
pack)
  (($# >= 2)) || die "usage: pocl-bundle.sh pack FILE.tar.xz [VARIANT...]"
  shift
  pack "$@"
  ;;
run)
  (($# >= 3)) || die "usage: pocl-bundle.sh run FILE.tar.xz PROGRAM [ARGS...]"
  shift
  run "$@"
  ;;
*) die "usage: pocl-bundle.sh pack FILE.tar.xz [VARIANT...] | run FILE.tar.xz PROGRAM [ARGS...]" ;;
esac
