#!/bin/bash
# A process killed while a checkpoint is written: the run fails, the previous step restores
# bit-exactly, the half-written step is invisible, and the next save removes its leftovers.
# usage: crash_test.sh SPMDRUN PROBE WORKDIR
set -u
spmdrun=$1 probe=$2 root=$3/crash
rm -rf "$root"
if "$spmdrun" -n 3 --timeout 60 -- "$probe" crash "$root"; then
  echo "error the run whose process 1 was killed succeeded"
  exit 1
fi
ls -a "$root"
exec "$spmdrun" -n 2 --cpu-devices 2 --timeout 60 -- "$probe" after-crash "$root"
