# spmd's two commands: `make demo` and `make test`. Each works on a fresh Debian machine by
# itself: it installs what is missing from Debian's packages, configures, builds and runs.

BUILD_DIR ?= build
BUILD_TYPE ?= RelWithDebInfo
# A unity build (CMake's CMAKE_UNITY_BUILD, batches of 8 files) compiles the tree in about half the
# time. UNITY=OFF configures one translation unit per file, as an editor's or clang-tidy's
# compile_commands.json wants; `make tidy` makes such a database of its own.
UNITY ?= ON
JOBS ?= $(shell nproc)

# Everything the build and the tests need, from Debian's packages only (see DESIGN.md). The
# launchers are real peers in the tests: Slurm (with munge), Open MPI and MPICH side by side.
# libopenmpi-dev and libgloo-dev build the baselines spmd-bench collectives measures against.
# Chromium (headless) and Pillow check the status page as a browser renders it; iproute2 and
# iptables make the network-namespace hosts of tests/faults/ and cut them off. libucx-dev builds
# the UCX transport (the build works without it; the transport is then absent). Random123 is the
# counter-based generator behind spmd::random; python3-venv makes the build tree's Python
# environment, where JAX (tests/requirements.txt, pinned) serves as the tests' reference, and
# python3-dev's headers build the spmd Python package (python/) into it. libssl-dev carries the
# one HTTPS request a Kubernetes pod makes to its API server (src/cluster/k8s_api.cc); openssl
# makes the certificate of the API server its test plays. libdnnl2 (oneDNN) computes float32
# matrix products where it loads (src/kernels/sgemm.h; OpenBLAS otherwise). ccache keeps the C++
# compiles in the build tree (CMakeLists.txt's SPMD_CCACHE) for the `pip install .` test's build.
# libxbyak-dev (Xbyak, header-only) assembles the chains' register runs at run time
# (src/kernels/register_run.h). libhwy-dev (Highway) sorts: its vqsort (src/kernels/ordering.h).
PACKAGES := g++ cmake ninja-build pkg-config \
	libasio-dev libprotobuf-dev protobuf-compiler libfmt-dev libspdlog-dev libcli11-dev \
	libpmix-dev libxxhash-dev libzstd-dev nlohmann-json3-dev libopenblas-pthread-dev libeigen3-dev \
	libucx-dev librandom123-dev python3-venv python3-dev \
	libgtest-dev libgmock-dev librapidcheck-dev \
	slurm-wlm munge openmpi-bin libopenmpi-dev mpich libgloo-dev \
	python3-zarr python3-numpy python3-pil chromium iptables iproute2 clang-format \
	libssl-dev openssl libdnnl2 ccache libxbyak-dev libhwy-dev

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps venv configure build demo test fuzz bench format format-check tidy clean

all: build

deps:
	@missing=""; \
	for p in $(PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing from Debian:$$missing"; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi

# The build tree's Python environment, with the pinned PyPI packages the tests use.
VENV := $(BUILD_DIR)/venv
$(VENV)/.installed: tests/requirements.txt | deps
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -r tests/requirements.txt
	touch $@

venv: $(VENV)/.installed

# Configured after the venv exists: the Python package builds against its nanobind.
$(BUILD_DIR)/build.ninja: | deps $(VENV)/.installed
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DCMAKE_UNITY_BUILD=$(UNITY)

configure: deps $(BUILD_DIR)/build.ninja

build: configure venv
	cmake --build $(BUILD_DIR) -j $(JOBS)

# The main job: a 4-process cluster of 8 CPU devices on this machine. It meets and reports its
# devices, then runs seed 002's training loop on jit (examples/train_mlp.cc): an MLP trained with
# grad and Adam on batches from the distributed loader, checkpointed every 50 steps; every
# process checks it ends with the same parameters. Each demo starts a fresh run. Then the same
# seed's training example in Python, as written (examples/python/train.py, `import spmd as jax`).
demo: build
	$(BUILD_DIR)/tools/spmdrun/spmdrun -n 4 --cpu-devices 2 --timeout 120 -- \
	  $(BUILD_DIR)/examples/hello_cluster
	rm -rf $(BUILD_DIR)/train_mlp_run
	$(BUILD_DIR)/tools/spmdrun/spmdrun -n 4 --cpu-devices 2 --timeout 120 -- \
	  $(BUILD_DIR)/examples/train_mlp --dir $(BUILD_DIR)/train_mlp_run
	PYTHONPATH=$(BUILD_DIR)/python $(BUILD_DIR)/tools/spmdrun/spmdrun -n 4 --cpu-devices 2 \
	  --timeout 120 -- $(VENV)/bin/python examples/python/train.py

test: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS) --timeout 300

# The Python API fuzzer (tests/python/api_fuzz.py) for longer than `make test` runs it: from a
# fresh seed (printed; rerun one with FUZZ_SEED=n), FUZZ_EXAMPLES calls.
FUZZ_EXAMPLES ?= 50000
fuzz: build
	seed=$${FUZZ_SEED:-$$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}; echo "fuzz seed $$seed"; \
	  PYTHONPATH=$(BUILD_DIR)/python $(VENV)/bin/python tests/python/api_fuzz.py \
	  --examples $(FUZZ_EXAMPLES) --seed $$seed --log $(BUILD_DIR)/fuzz-calls.log

bench: build
	$(BUILD_DIR)/tools/spmd-bench/spmd-bench coordinator --processes 16384
	$(BUILD_DIR)/tools/spmd-bench/spmd-bench collectives -n 2 --ops all_reduce --sizes 8,1M,64M \
	  --impls spmd,mpi,jax --interleave --rounds 5 --plot $(BUILD_DIR)/collectives.png
	$(BUILD_DIR)/tools/spmd-bench/spmd-bench jit -n 2 --rounds 3
	$(BUILD_DIR)/tools/spmd-bench/spmd-bench train -n 2 --rounds 3
	$(BUILD_DIR)/tools/spmd-bench/spmd-bench reshard -n 2 --rounds 3
	$(BUILD_DIR)/tools/spmd-bench/spmd-bench cores --rounds 3
	$(BUILD_DIR)/tools/spmd-bench/spmd-bench collectives -n 2 --ops all_reduce --sizes 8,1M,64M \
	  --transport tcp --impls spmd,gloo
	$(BUILD_DIR)/tools/spmd-bench/spmd-bench checkpoint -n 2 --iterations 6
	$(BUILD_DIR)/tools/spmd-bench/spmd-bench data -n 2

format:
	git ls-files '*.cc' '*.h' | xargs clang-format -i

# Fails, naming the files and lines, when any source differs from clang-format's layout.
format-check: deps
	git ls-files '*.cc' '*.h' | xargs clang-format --dry-run --Werror

# clang-tidy reads one compile command per file: a configuration of its own, without the unity
# build, in $(BUILD_DIR)/tidy (only the generated protocol is built there).
TIDY_DIR := $(BUILD_DIR)/tidy
tidy: configure
	cmake -S . -B $(TIDY_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DCMAKE_UNITY_BUILD=OFF \
	  -DSPMD_BUILD_PYTHON=OFF > /dev/null
	cmake --build $(TIDY_DIR) --target spmd_protocol_headers
	git ls-files 'src/*.cc' 'tools/*.cc' | xargs clang-tidy -p $(TIDY_DIR) --quiet

clean:
	rm -rf $(BUILD_DIR)
