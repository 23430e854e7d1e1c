#!/bin/sh
# spmdrun removes the shared-memory names (/dev/shm/spmd-<pid>-…) that a process it started left
# behind when it was killed: the process makes such a name, then SIGKILLs itself.
# Usage: spmdrun_shm_cleanup.sh SPMDRUN
set -u
spmdrun=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
timeout 60 "$spmdrun" -n 1 --timeout 30 -- /bin/sh -c \
  'echo $$ > "$0/pid"; : > /dev/shm/spmd-$$-00000000000000aa; kill -9 $$' "$dir"
rc=$?
if [ "$rc" -eq 0 ]; then
  echo "spmdrun exited 0 although its process was killed"
  exit 1
fi
pid=$(cat "$dir/pid")
name=/dev/shm/spmd-$pid-00000000000000aa
if [ -e "$name" ]; then
  rm -f "$name"
  echo "spmdrun left $name behind"
  exit 1
fi
echo "ok: spmdrun (exit $rc) removed $name"
