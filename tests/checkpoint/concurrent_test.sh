#!/bin/bash
# Two jobs of two processes each save the same path at once (a restarted job overlapping its
# predecessor): exactly one commits, the other is refused naming the holder (or, when it came
# after, the committed checkpoint), and the checkpoint restores every value.
# usage: concurrent_test.sh SPMDRUN PROBE WORKDIR
set -u
spmdrun=$1 probe=$2 root=$3/concurrent
rm -rf "$root" && mkdir -p "$root"
for round in 1 2 3; do
  dir=$root/round$round
  "$spmdrun" -n 2 --cpu-devices 2 --timeout 60 -- "$probe" contend "$dir" > "$root/a.log" 2>&1 &
  a=$!
  "$spmdrun" -n 2 --cpu-devices 2 --timeout 60 -- "$probe" contend "$dir" > "$root/b.log" 2>&1 &
  b=$!
  wait $a; ra=$?
  wait $b; rb=$?
  cat "$root/a.log" "$root/b.log"
  if [ $ra -ne 0 ] || [ $rb -ne 0 ]; then echo "error a job failed ($ra, $rb)"; exit 1; fi
  saved=$(cat "$root/a.log" "$root/b.log" | grep -c "^\[0\] ok saved")
  refused=$(cat "$root/a.log" "$root/b.log" | grep "^\[0\] ok refused" |
    grep -c "another save of\|already holds a committed checkpoint")
  if [ "$saved" != 1 ] || [ "$refused" != 1 ]; then
    echo "error round $round: $saved jobs saved and $refused were refused; expected 1 and 1"
    exit 1
  fi
  "$spmdrun" -n 1 --cpu-devices 2 --timeout 60 -- "$probe" restore "$dir" || exit 1
  leftovers=$(ls -a "$root" | grep -c "round$round\.")
  if [ "$leftovers" != 0 ]; then echo "error round $round left: $(ls -a "$root")"; exit 1; fi
done
echo "one job of each pair committed, the other was refused"
