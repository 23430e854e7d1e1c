#!/usr/bin/env bash
# Stops the daemons start_slurm.sh started under DIR, by the pids they wrote there: SIGTERM to
# all at once, SIGKILL to any still running 10 s later.
#   stop_slurm.sh DIR
dir=$(realpath -m "$1")
rm -f "$dir/ready"
pids=()
for pidfile in "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munge/munged.pid"; do
  [ -f "$pidfile" ] || continue
  pid=$(cat "$pidfile")
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    pids+=("$pid")
  fi
  rm -f "$pidfile"
done
for _ in $(seq 1 100); do
  alive=0
  for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
  [ $alive = 0 ] && exit 0
  sleep 0.1
done
for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null; done
exit 0
