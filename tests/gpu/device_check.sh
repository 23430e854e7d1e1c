#!/usr/bin/env bash
# Issue 45's GPU checks in one call on a lent GPU machine, from programs built here.
#
#   tests/gpu/device_check.sh pack    # here, after `make build`: .device.tar.xz (about 16 MB)
#   # the device tool: command "tests/gpu/device_check.sh run", carry [".device.tar.xz"],
#   #                  timeout_s 590; then give_back
#   tests/gpu/device_check.sh run runtime train   # there: only the steps named
#
# pack bundles the gpu-labelled test programs, spmdrun, train_mlp and spmd-bench with their
# libraries (../shared/tools/device-bundle; the CUDA plugin libspmd_cuda.so lands beside
# libspmd, where initialize() looks for it) and compresses them under the carry limit. run
# unpacks them and runs, each under its own timeout, writing every log to $OUT (packed into
# $OUT/logs.tar.gz at the end):
#   kernels, runtime, nccl: gpu_kernels_test, gpu_runtime_test, gpu_nccl_test;
#   staged: two processes sharing GPU 0 through staging (staged_probe under spmdrun);
#   route: jit's collectives of two processes on GPU blocks through the device communicators
#     (device_route_probe gpu: staged on one GPU, NCCL on two);
#   sanitizer: gpu_runtime_test under compute-sanitizer's memcheck;
#   train: train_mlp on the GPU against its CPU run (train_mlp_gpu_test.py);
#   bench: spmd-bench gpu (the matmul beside cuBLAS, `a * b + c` beside a copy), and spmd-bench
#     train -n 1 --platform gpu beside JAX on the same GPU (the device's python3);
#   profile: that train step under SPMD_JIT_PROFILE=1 (each operation's host time; the GPU
#     machine has no nsys).
# It prints one line per step with its exit status and the log's tail, and exits nonzero when
# any step failed.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
cd "$here"

pack() {
  local build=${BUILD:-build}
  local bundle=${DEVICE_BUNDLE:-../shared/tools/device-bundle}
  rm -rf .device .device.tar.xz
  "$bundle" .device "$build"/tests/gpu_kernels_test "$build"/tests/gpu_runtime_test \
    "$build"/tests/gpu_nccl_test "$build"/tests/staged_probe "$build"/tests/device_route_probe \
    "$build"/tools/spmdrun/spmdrun \
    "$build"/examples/train_mlp "$build"/tools/spmd-bench/spmd-bench || exit 1
  cp tools/spmd-bench/*.py .device/bin/  # the JAX workers spmd-bench starts beside itself
  { git rev-parse --short HEAD; git status --porcelain | grep -q . && echo "(with changes)"; } \
    >.device/COMMIT
  tar -cJf .device.tar.xz .device && rm -rf .device
  ls -la .device.tar.xz
}

failed=0
step() {  # step NAME SECONDS COMMAND...: runs it, logs to $OUT/NAME.log, prints its tail
  local name=$1 seconds=$2
  shift 2
  local log="$OUT/$name.log" start=$SECONDS
  timeout --kill-after=10 "$seconds" "$@" >"$log" 2>&1
  local rc=$?
  echo "== $name: rc $rc in $((SECONDS - start)) s"
  tail -n 6 "$log"
  [ "$rc" -eq 0 ] || failed=1
}

want() {  # want NAME: whether this run includes step NAME (all when none were named)
  [ ${#only[@]} -eq 0 ] && return 0
  local n
  for n in "${only[@]}"; do [ "$n" = "$1" ] && return 0; done
  return 1
}

run() {
  : "${OUT:=/tmp/device_check}"
  mkdir -p "$OUT"
  tar -xJf .device.tar.xz || exit 1
  local r=.device/run b=.device/bin
  echo "commit $(tr '\n' ' ' <.device/COMMIT)"
  nvidia-smi -L | tee "$OUT/gpus.txt"
  # The timeouts add up to 560 s, and 620 s with the profile: name the steps of a call that
  # must fit one device call's 600.
  want kernels && step gpu_kernels_test 90 $r $b/gpu_kernels_test --gtest_brief=1
  want runtime && step gpu_runtime_test 45 $r $b/gpu_runtime_test
  want nccl && step gpu_nccl_test 40 $r $b/gpu_nccl_test --gtest_brief=1
  want staged && step staged_probe 35 $r $b/spmdrun -n 2 --timeout 30 -- $b/staged_probe
  want route && SPMD_PLATFORMS=gpu step device_route 35 $r $b/spmdrun -n 2 --timeout 30 -- \
    $b/device_route_probe gpu
  local sanitizer
  sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  # NCCL, which the runtime loads, probes its own kernels with calls that fail on purpose: API
  # errors are not reported, memory errors are.
  want sanitizer && step sanitizer_runtime 45 $r "$sanitizer" --tool memcheck \
    --report-api-errors no --error-exitcode 1 $b/gpu_runtime_test
  want train && step train_mlp_gpu 90 $r python3 tests/gpu/train_mlp_gpu_test.py $b/spmdrun \
    $b/train_mlp /tmp/train_mlp_gpu
  want bench && step bench_gpu 60 $r $b/spmd-bench gpu
  want bench && SPMD_BENCH_PYTHON=$(command -v python3) step bench_train 120 $r $b/spmd-bench \
    train -n 1 --platform gpu --rounds 3
  # spmd's own profile of the train step: each operation's and each phase's host time.
  want profile && SPMD_JIT_PROFILE=1 step profile_train 60 $r $b/spmd-bench train -n 1 \
    --platform gpu --impls spmd --rounds 1
  # The device tool brings back 8 files at most: every log in one archive.
  (cd "$OUT" && tar -czf logs.tar.gz ./*.log gpus.txt && rm -f ./*.log)
  exit $failed
}

case "${1:-}" in
  pack) pack ;;
  run)
    shift
    only=("$@")
    run
    ;;
  *) sed -n '2,20p' "$0"; exit 2 ;;
esac
