#!/usr/bin/env bash
# The `clsync` command on PATH (installed as /usr/local/bin/clsync by
# scripts/setup-debian.sh): runs a checkout's release build, rebuilding it
# first when the sources changed (cargo's own freshness check, silent when
# the build is current), so that tools which call `clsync` by name, such as
# Oclgrind's test runner check.py, never run a stale binary.
#
# The checkout is $CLSYNC_REPO if set, else the one the launcher was
# installed from, else (that one moved or removed: a CI clone deleted after
# its run) the nearest checkout beside a folder above the working
# directory: check.py runs each test from ../shared/oclgrind-tests/GROUP,
# and the checkout sits beside ../shared.
set -euo pipefail
installed="@REPO@"
checkout() {
  if [ -n "${CLSYNC_REPO:-}" ]; then
    echo "$CLSYNC_REPO"
    return
  fi
  if [ -f "$installed/crates/clsync-cli/Cargo.toml" ]; then
    echo "$installed"
    return
  fi
  local d="$PWD" c
  while [ "$d" != "/" ]; do
    for c in "$d"/*/crates/clsync-cli/Cargo.toml; do
      if [ -f "$c" ]; then
        echo "${c%/crates/clsync-cli/Cargo.toml}"
        return
      fi
    done
    d="$(dirname "$d")"
  done
}
repo="$(checkout)"
if [ -z "$repo" ]; then
  echo "clsync: no checkout found (installed from $installed, which is gone; set CLSYNC_REPO)" >&2
  exit 127
fi
# cargo as setup found it, for environments whose PATH lacks ~/.cargo/bin.
cargo="@CARGO@"
command -v "$cargo" >/dev/null 2>&1 || cargo=cargo
if command -v "$cargo" >/dev/null 2>&1; then
  "$cargo" build --release --quiet --manifest-path "$repo/Cargo.toml" -p clsync-cli -p clsync-icd >&2
elif [ ! -x "$repo/target/release/clsync" ]; then
  echo "clsync: $repo has no release build and cargo is not on PATH" >&2
  exit 127
fi
exec "$repo/target/release/clsync" "$@"
