#!/usr/bin/env bash
# Installs spmd into a temporary prefix as a user without root would, then:
# - runs every installed program from the prefix with no LD_LIBRARY_PATH (they find libspmd by
#   their RPATH, relative to themselves);
# - checks spmd-bench's baseline workers are installed beside it when they were built;
# - builds an outside project against the package twice (CMake package, pkg-config) and runs
#   both under the installed spmdrun;
# - configures a project that adds spmd's source tree with add_subdirectory (as FetchContent
#   does) and builds a layer there (its include paths) and the generated protocol.
set -euo pipefail
build_dir=$1
src_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
unset LD_LIBRARY_PATH

cmake --install "$build_dir" --prefix "$prefix" > "$work/install.log"
for f in bin/spmdrun bin/spmd-coordinator bin/spmd-bench include/spmd/spmd.h \
         lib/cmake/spmd/spmdConfig.cmake lib/pkgconfig/spmd.pc; do
  [ -e "$prefix/$f" ] || { echo "missing after install: $f"; exit 1; }
done
for tool in spmdrun spmd-coordinator spmd-bench; do
  "$prefix/bin/$tool" --help > "$work/$tool.help" 2>&1 ||
    { echo "installed $tool does not start:"; cat "$work/$tool.help"; exit 1; }
done
for worker in spmd-bench-mpi spmd-bench-gloo; do
  if [ -e "$build_dir/tools/spmd-bench/$worker" ]; then
    [ -x "$prefix/bin/$worker" ] || { echo "$worker was built but not installed"; exit 1; }
    if ldd "$prefix/bin/$worker" | grep -q "not found"; then
      echo "installed $worker cannot load its libraries:"; ldd "$prefix/bin/$worker"; exit 1
    fi
  fi
done

cmake -S "$src_dir/tests/install/consumer" -B "$work/consumer" -G Ninja \
  -DCMAKE_PREFIX_PATH="$prefix" > "$work/configure.log" || { cat "$work/configure.log"; exit 1; }
cmake --build "$work/consumer" > "$work/build.log" || { cat "$work/build.log"; exit 1; }

PKG_CONFIG_PATH=$prefix/lib/pkgconfig
export PKG_CONFIG_PATH
# shellcheck disable=SC2046
g++ -o "$work/consumer_pc" "$src_dir/tests/install/consumer/main.cc" $(pkg-config --cflags --libs spmd) \
  -Wl,-rpath,"$prefix/lib"

for exe in "$work/consumer/consumer" "$work/consumer_pc"; do
  out=$("$prefix/bin/spmdrun" -n 2 --cpu-devices 2 --timeout 60 -- "$exe")
  echo "$out"
  grep -q "\[0\] consumer 0/2 sees 4 devices" <<< "$out"
  grep -q "\[1\] consumer 1/2 sees 4 devices" <<< "$out"
done

# A unity build, as spmd's own (README): one layer (its include paths), and the generated
# protocol compiled where the subproject generated it. Only the protocol's own unity object of
# spmd_coord: the whole library is four more unity compiles, 119 s of CPU alone here (26-34 s
# each, session 66), that check nothing more.
cmake -S "$src_dir/tests/install/subproject" -B "$work/subproject" -G Ninja \
  -DSPMD_SOURCE_DIR="$src_dir" -DCMAKE_UNITY_BUILD=ON > "$work/sub-configure.log" ||
  { cat "$work/sub-configure.log"; exit 1; }
protocol_unity=$(grep -l "protocol\.pb\.cc" \
  "$work/subproject"/spmd/src/coord/CMakeFiles/spmd_coord.dir/Unity/*.cxx) ||
  { echo "no unity source of spmd_coord holds the generated protocol.pb.cc"; exit 1; }
protocol_object=${protocol_unity#"$work/subproject/"}.o
cmake --build "$work/subproject" --target spmd_sharding "$protocol_object" \
  > "$work/sub-build.log" || { cat "$work/sub-build.log"; exit 1; }
[ -s "$work/subproject/$protocol_object" ] || { echo "not built: $protocol_object"; exit 1; }
echo "install test passed"
