#!/usr/bin/env bash
# Installs spmd into a temporary prefix, then builds an outside project against it twice (CMake
# package, pkg-config) and runs both under the installed spmdrun.
set -euo pipefail
build_dir=$1
src_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

cmake --install "$build_dir" --prefix "$prefix" > "$work/install.log"
for f in bin/spmdrun bin/spmd-coordinator bin/spmd-bench include/spmd/spmd.h \
         lib/cmake/spmd/spmdConfig.cmake lib/pkgconfig/spmd.pc; do
  [ -e "$prefix/$f" ] || { echo "missing after install: $f"; exit 1; }
done

cmake -S "$src_dir/tests/install/consumer" -B "$work/consumer" -G Ninja \
  -DCMAKE_PREFIX_PATH="$prefix" > "$work/configure.log" || { cat "$work/configure.log"; exit 1; }
cmake --build "$work/consumer" > "$work/build.log" || { cat "$work/build.log"; exit 1; }

PKG_CONFIG_PATH=$prefix/lib/pkgconfig
export PKG_CONFIG_PATH
# shellcheck disable=SC2046
g++ -o "$work/consumer_pc" "$src_dir/tests/install/consumer/main.cc" $(pkg-config --cflags --libs spmd)

export LD_LIBRARY_PATH=$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
for exe in "$work/consumer/consumer" "$work/consumer_pc"; do
  out=$("$prefix/bin/spmdrun" -n 2 --cpu-devices 2 --timeout 60 -- "$exe")
  echo "$out"
  grep -q "\[0\] consumer 0/2 sees 4 devices" <<< "$out"
  grep -q "\[1\] consumer 1/2 sees 4 devices" <<< "$out"
done
echo "install test passed"
