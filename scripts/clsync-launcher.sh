#!/usr/bin/env bash
# The `clsync` command on PATH (installed as /usr/local/bin/clsync by
# scripts/setup-debian.sh): runs this checkout's release build, rebuilding it
# first when the sources changed (cargo's own freshness check, silent when
# the build is current), so that tools which call `clsync` by name, such as
# Oclgrind's test runner check.py, never run a stale binary.
set -euo pipefail
repo="@REPO@"
cargo build --release --quiet --manifest-path "$repo/Cargo.toml" -p clsync-cli -p clsync-icd >&2
exec "$repo/target/release/clsync" "$@"
