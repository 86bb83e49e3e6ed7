#!/usr/bin/env bash
# Runs Oclgrind's visible kernel tests (../shared/oclgrind-tests) on
# `clsync run --check` with their own runner, check.py, and compares the
# result with crates/clsync-opencl/tests/oclgrind-known-failures.txt: a
# failure not listed there fails, and so does a listed test that passes
# (the list is then out of date). Usage: scripts/oclgrind-suite.sh [CLSYNC]
set -euo pipefail
cd "$(dirname "$0")/.."
exe="${1:-target/debug/clsync}"
suite=../shared/oclgrind-tests
if [ ! -f "$suite/check.py" ]; then
  echo "oclgrind-suite: $suite/check.py not found; skipping"
  exit 0
fi
json="$(mktemp)"
trap 'rm -f "$json"' EXIT
CLSYNC="$(realpath "$exe")" python3 "$suite/check.py" --json "$json" "$suite" >/dev/null || true
python3 - "$json" crates/clsync-opencl/tests/oclgrind-known-failures.txt <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))
known = {}
for line in open(sys.argv[2]):
    line = line.strip()
    if line and not line.startswith("#"):
        name, _, why = line.partition(" ")
        known[name] = why.strip()
bad = []
for r in results:
    if not r["pass"] and r["test"] not in known:
        bad.append("%s: fails and is not a known failure: %s" % (r["test"], r["why"]))
    if r["pass"] and r["test"] in known:
        bad.append("%s: passes now; take it off the known failures" % r["test"])
names = {r["test"] for r in results}
for k in known:
    if k not in names:
        bad.append("%s: a known failure that is not in the suite" % k)
passed = sum(r["pass"] for r in results)
print("oclgrind suite: %d of %d pass, %d known failures" % (passed, len(results), len(known)))
for b in bad:
    print("  " + b)
sys.exit(1 if bad else 0)
PY
