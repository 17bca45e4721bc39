# Entry points for people and CI: `make demo` trains on real Fashion-MNIST across 2 MPI ranks,
# `make test` builds and runs the whole suite through ctest. Both install what is missing first.
FUSETRAIN_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/fusetrain
export FUSETRAIN_CACHE
export CCACHE_DIR ?= $(FUSETRAIN_CACHE)/ccache
# cmake and ninja from PyPI, where tools/setup.sh had to put them there (no root, none on the system or too old).
export PATH := $(FUSETRAIN_CACHE)/bin:$(PATH)
# Options for the configure step, which tools/setup.sh's probe is given too (-DCMAKE_PREFIX_PATH=... for
# dependencies from modules or Spack, -DTorch_DIR=... for one's own LibTorch).
CMAKE_ARGS ?=
export CMAKE_ARGS
SETUP_FOR ?= all
BUILD ?= build
JOBS ?= $(shell nproc)
# ctest runs two tests more than there are cores: most of the suite's time is spent waiting (mpirun and LibTorch
# starting, ranks polling, stall and Slurm timeouts running out, the GPU tools' budgets; on 2 cores the failure
# label used 41% of one core). Each test claims the cores it keeps busy (PROCESSORS), and the ones that must not
# overlap share a RESOURCE_LOCK.
TEST_JOBS ?= $(shell echo $$(( $$(nproc) + 2 )))
COST_DATA = $(BUILD)/Testing/Temporary/CTestCostData.txt
NP ?= 2
MPIRUN ?= mpirun
MPIRUN_FLAGS ?= --oversubscribe --bind-to none $(if $(filter 0,$(shell id -u)),--allow-run-as-root)
FASHION_MNIST ?= /usr/share/datasets/fashion-mnist

.PHONY: setup configure build programs demo test mutants clean

setup:
	@bash tools/setup.sh --for $(SETUP_FOR)

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS)

configure: setup $(BUILD)/build.ninja

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# The two programs alone: what the demo runs (the test binaries are `make test`'s), and the library that keeps
# a local mpirun's listeners on loopback.
programs: configure
	cmake --build $(BUILD) -j $(JOBS) --target fusetrain fusetrain-prep ft_loopback_only

data/fashion-mnist/train-00000-of-00002.h5: | programs
	$(BUILD)/bin/fusetrain-prep --format idx --input $(FASHION_MNIST) --output data/fashion-mnist --shards 2 --name fashion-mnist

# Through the workstation script: all ranks are local, so nothing listens beyond loopback. The data must be
# there (setup stops without it where it cannot install it).
demo: SETUP_FOR = demo
demo: programs data/fashion-mnist/train-00000-of-00002.h5
	CONFIG=configs/quickstart.yaml NP=$(NP) FUSETRAIN_BIN=$(BUILD)/bin/fusetrain MPIRUN="$(MPIRUN) $(MPIRUN_FLAGS)" \
	  bash jobs/workstation/run.sh

# A new build tree has no test times yet: tests/ctest_costs.txt gives ctest the measured ones, so the longest
# tests start first (ctest keeps its own figures from then on).
test: build
	@[ -f $(COST_DATA) ] || { mkdir -p $(dir $(COST_DATA)) && { grep -v '^#' tests/ctest_costs.txt; echo ---; } > $(COST_DATA); }
	cd $(BUILD) && ctest --output-on-failure -j $(TEST_JOBS)

# Generated mutants, judged by the tests (tools/mutants, tests/README.md). MODE=change (default): the lines changed
# since BASE (default main). MODE=baseline: a sample from every source file, judged by the tests that reach each
# line, resumed from its cache (nice'd; a sitting may stop at any time). MODE=table: the baseline's per-folder
# table from its cache, running nothing.
BASE ?= main
MODE ?= change
MUTANT_ARGS ?=
MUTANT_PYTHON = $(FUSETRAIN_CACHE)/venv/bin/python
mutants: setup
ifeq ($(MODE),change)
	$(MUTANT_PYTHON) tools/mutants/mutate_changes.py --base $(BASE) --jobs $(JOBS) $(MUTANT_ARGS)
else ifeq ($(MODE),baseline)
	nice -n 15 $(MUTANT_PYTHON) tools/mutants/baseline.py --jobs $(JOBS) $(MUTANT_ARGS)
else ifeq ($(MODE),table)
	$(MUTANT_PYTHON) tools/mutants/baseline.py --table $(MUTANT_ARGS)
else
	$(error MODE=$(MODE): use change, baseline or table)
endif

clean:
	rm -rf $(BUILD)
