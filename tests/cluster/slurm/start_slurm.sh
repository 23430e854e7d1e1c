#!/usr/bin/env bash
# Starts a one-node Slurm cluster (munged, slurmctld, slurmd) on loopback under DIR, using the
# Debian packages slurm-wlm and munge, and waits until the node accepts jobs. Prints nothing on
# success; exits 77 (skip) with the reason when this machine cannot run the daemons. Every daemon
# it starts writes its pid under DIR, and stop_slurm.sh kills exactly those.
#   start_slurm.sh DIR
set -euo pipefail
dir=$(realpath -m "$1")
here=$(cd "$(dirname "$0")" && pwd)
# CTest shows a skipped test's stdout with --output-on-failure and in LastTest.log.
skip() { echo "SKIP: $*"; exit 77; }

for tool in munged slurmctld slurmd sinfo srun; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (Debian: slurm-wlm, munge)"
done
[ "$(id -u)" = 0 ] || skip "the test cluster's daemons run as root; this user is $(id -un)"

"$here/stop_slurm.sh" "$dir" >/dev/null 2>&1 || true
# A fresh cluster every time: no jobs or node states recovered from an earlier run.
rm -rf "$dir/state" "$dir/spool" "$dir/ready"
mkdir -p "$dir/state" "$dir/spool" "$dir/munge"
chmod 700 "$dir/munge"

# munge: its own key and socket under DIR, so a system munged (if any) is left alone.
if [ ! -f "$dir/munge/munge.key" ]; then
  dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
fi
chmod 400 "$dir/munge/munge.key"
munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
  --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" \
  --seed-file="$dir/munge/munge.seed" \
  || skip "munged does not start here: $(tail -1 "$dir/munge/munged.log" 2>/dev/null)"

# A port nothing listens on now (bash's /dev/tcp connects only where something listens).
free_port() {
  local p
  while true; do
    p=$(shuf -i 20000-59999 -n 1)
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
  done
}
host=$(hostname -s)
sed -e "s|@HOST@|$host|g" -e "s|@DIR@|$dir|g" -e "s|@CPUS@|$(nproc)|g" \
    -e "s|@CTLD_PORT@|$(free_port)|g" -e "s|@SLURMD_PORT@|$(free_port)|g" \
    "$here/slurm.conf.in" > "$dir/slurm.conf"
# Slurm's plugins talk to munge through this socket.
cat > "$dir/env" <<ENV
export SLURM_CONF=$dir/slurm.conf
export MUNGE_SOCKET=$dir/munge/munge.socket
ENV
# shellcheck disable=SC1091
source "$dir/env"
# Slurm 22.05 reads the munge socket from AuthInfo.
sed -i "s|^AuthType=auth/munge|AuthType=auth/munge\nAuthInfo=socket=$dir/munge/munge.socket|" "$dir/slurm.conf"
sed -i "s|^CredType=cred/munge|CredType=cred/munge|" "$dir/slurm.conf"

slurmctld -f "$dir/slurm.conf" -i || skip "slurmctld does not start: $(tail -3 "$dir/slurmctld.log")"
slurmd -f "$dir/slurm.conf" || skip "slurmd does not start: $(tail -3 "$dir/slurmd.log")"

for _ in $(seq 1 300); do
  state=$(sinfo -h -o %t 2>/dev/null | head -1 || true)
  case "$state" in
    idle|mix|alloc)
      touch "$dir/ready"  # what the launcher tests look for
      exit 0 ;;
  esac
  sleep 0.2
done
skip "the node did not become idle within 60 s (state '${state:-none}'); slurmctld.log: $(tail -3 "$dir/slurmctld.log"); slurmd.log: $(tail -3 "$dir/slurmd.log")"
