#!/usr/bin/env bash
# Stops the daemons start_slurm.sh started under DIR, by the pids they wrote there.
#   stop_slurm.sh DIR
dir=$(realpath -m "$1")
for pidfile in "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munge/munged.pid"; do
  [ -f "$pidfile" ] || continue
  pid=$(cat "$pidfile")
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile"
done
exit 0
