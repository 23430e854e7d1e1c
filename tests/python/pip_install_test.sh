#!/bin/sh
# `pip install .` into a fresh virtual environment (scikit-build-core builds libspmd, the module
# and spmdrun with the project's CMake; pyproject.toml pins the build requirements), then, from
# another directory and without PYTHONPATH: import spmd and jit a sum, and run seed 002's pmap
# example under the installed spmdrun. Usage: pip_install_test.sh SOURCE_DIR WORK_DIR
set -eu
src=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
/usr/bin/python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check "$src"
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
