#!/bin/bash
# NumPy writes a .npy of 23 records (i, -i) as int64; the loader reads it on 2 processes.
# usage: numpy_file_test.sh SPMDRUN PROBE WORKDIR   (exit 77 when NumPy is missing)
set -eu
mkdir -p "$3"
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "skipped: no python3-numpy"; exit 77; }
/usr/bin/python3 -c "
import numpy as np
i = np.arange(23, dtype=np.int64)
np.save('$3/numpy.npy', np.stack([i, -i], axis=1))"
exec "$1" -n 2 --timeout 60 -- "$2" 23 4 "$3/numpy.npy"
