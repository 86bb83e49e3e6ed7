#!/usr/bin/env bash
# pyopencl (the pip package) on clsync's OpenCL platform: its README demo
# (crates/clsync-icd/tests/python/demo.py) and its own test suite, from the
# release's source distribution, with PYOPENCL_TEST=clsync. Installs
# pyopencl, pytest and mako into target/pyopencl-venv the first time (needs
# the network); points the ICD loader at this checkout's release build of
# the driver. Not part of scripts/test.sh: it downloads, and takes minutes.
# Extra arguments go to pytest (`-k name`, `-x`).
set -euo pipefail
cd "$(dirname "$0")/.."
version=2026.1.4
venv="$(pwd)/target/pyopencl-venv"
if [ ! -x "$venv/bin/pytest" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "pyopencl==$version" pytest mako
fi
src="$(pwd)/target/pyopencl-src/pyopencl-$version"
if [ ! -d "$src/test" ]; then
  mkdir -p "$(dirname "$src")"
  # The sdist's address from the package index's simple page (where pip
  # looks too).
  url=$("$venv/bin/python" - "$version" <<'PY'
import re, sys, urllib.request
page = urllib.request.urlopen("https://pypi.org/simple/pyopencl/").read().decode()
name = re.escape(f"pyopencl-{sys.argv[1]}.tar.gz")
print(re.search(r'href="([^"#]*' + name + ')', page).group(1))
PY
)
  "$venv/bin/python" -c "import sys, urllib.request; urllib.request.urlretrieve(sys.argv[1], sys.argv[2])" \
    "$url" "$(dirname "$src")/sdist.tar.gz"
  tar xzf "$(dirname "$src")/sdist.tar.gz" -C "$(dirname "$src")"
fi
cargo build --release --quiet -p clsync-icd
vendors="$(pwd)/target/pyopencl-icd"
mkdir -p "$vendors"
echo "$(pwd)/target/release/libclsync_icd.so" > "$vendors/clsync.icd"
export OCL_ICD_VENDORS="$vendors" PYOPENCL_TEST=clsync
"$venv/bin/python" crates/clsync-icd/tests/python/demo.py
cd "$src/test"
exec "$venv/bin/python" -m pytest -q -p no:cacheprovider -rfEs \
  test_wrapper.py test_enqueue_copy.py test_arrays_in_structs.py test_clrandom.py \
  test_clmath.py test_algorithm.py test_array.py "$@"
