# The two commands: `make run` and `make test`. Both install what is missing first.
BUILD ?= build
JOBS ?= $(shell nproc)
# Tests at a time: one more than the cores. Many tests spend part of their time waiting on the
# processes they start (daemons, workers, sleeping stages), and at -j2 a fresh machine's test run
# left the two cores a quarter idle (docs/BENCHMARKS.md "A fresh machine's make test").
TEST_JOBS ?= $(shell echo $$(( $$(nproc) + 1 )))
LISTEN ?= 127.0.0.1:8080

# ccache, when installed (CMakeLists.txt finds it; a machine without it builds without it). Every
# clone of a user shares ccache's one cache (~/.cache/ccache, or cache_dir in ccache.conf).
# base_dir = the folder holding this clone, so paths under it are hashed relative and a clone or
# worktree beside this one hits on what another compiled; hash_dir off keeps the build folder's own
# path out of the hash (the price: a hit's debug info names the other clone's build folder). A
# setting already in the environment wins.
export CCACHE_BASEDIR ?= $(abspath $(CURDIR)/..)
export CCACHE_NOHASHDIR ?= 1

.PHONY: all deps build run test bench clean

all: build

deps:
	@bash scripts/install-deps.sh

$(BUILD)/build.ninja: CMakeLists.txt CMakePresets.json cmake/BuildSpeed.cmake
	cmake --preset default

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

run: build
	@mkdir -p var
	$(BUILD)/bin/gauntlet serve --db var/gauntlet.db --listen $(LISTEN) --local-worker

test: build
	@bash scripts/install-test-deps.sh
	cd $(BUILD) && ctest --output-on-failure --timeout 900 -j $(TEST_JOBS)

bench: build
	@bash bench/run_all.sh

clean:
	rm -rf $(BUILD) build-fuzz
