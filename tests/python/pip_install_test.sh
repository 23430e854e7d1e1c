#!/bin/sh
# `pip install .` into a fresh virtual environment (scikit-build-core builds libspmd, the module
# and spmdrun with the project's CMake; pyproject.toml pins the build requirements), then, from
# another directory and without PYTHONPATH: import spmd and jit a sum, and run seed 002's pmap
# example under the installed spmdrun.
#
# Usage: pip_install_test.sh SOURCE_DIR WORK_DIR [CMAKE_BUILD_DIR]
# With CMAKE_BUILD_DIR, scikit-build-core builds there instead of in a temporary directory: the
# test passes a sibling of the project's build tree with ccache's settings in the environment
# (tests/CMakeLists.txt), so that libspmd's objects come from that tree's cache. It is made here
# with a marker file, and an existing directory without the marker is refused, never deleted.
set -eu
src=$1
work=$2
cmake_build=${3:-}
marker=.spmd-pip-install-test
rm -rf "$work"
mkdir -p "$work"
if [ -n "$cmake_build" ]; then
  if [ -e "$cmake_build" ] && [ ! -e "$cmake_build/$marker" ]; then
    echo "$cmake_build exists and was not made by this test: move it away, or delete it" >&2
    exit 1
  fi
  rm -rf "$cmake_build"
  mkdir -p "$cmake_build"
  touch "$cmake_build/$marker"
  export SKBUILD_BUILD_DIR="$cmake_build"
fi
# ccache's counts of hits and misses (when the build goes through it): name value lines.
cache_counts() {
  if [ -n "${CCACHE_DIR:-}" ]; then
    ccache --print-stats | grep -E '^(direct_cache_hit|preprocessed_cache_hit|cache_miss)\s'
  fi
}
before=$(cache_counts)
/usr/bin/python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check "$src"
if [ -n "$before" ]; then
  printf '%s\n%s\n' "$before" "$(cache_counts)" |
    awk '{if ($1 in a) printf "%s %d  ", $1, $2 - a[$1]; else a[$1] = $2} END {print ""}' |
    sed 's/^/compiles of the pip build through ccache: /'
fi
cd "$work"
"$work/venv/bin/python" - <<'PY'
import numpy as np
import spmd
import spmd.numpy as jnp
assert "site-packages" in spmd.__file__, spmd.__file__
spmd.distributed.initialize(num_processes=1, num_cpu_devices=2)
total = spmd.jit(lambda x: jnp.sum(x * 2))(spmd.device_put(np.arange(4.0), spmd.devices()[0]))
assert float(total) == 12.0, total
print("installed package: ok", spmd.__file__)
PY
"$work/venv/bin/spmdrun" -n 2 --cpu-devices 2 --timeout 60 -- "$work/venv/bin/python" \
  "$src/examples/python/pmap_psum.py" > "$work/pmap.out" 2>&1 || { cat "$work/pmap.out"; exit 1; }
cat "$work/pmap.out"
grep -q '\[1\] Process 1 result: \[4\. 4\.\]' "$work/pmap.out"
echo "installed spmdrun: ok"
rm -rf "$work"
if [ -n "$cmake_build" ]; then rm -rf "$cmake_build"; fi
