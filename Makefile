# The two commands: `make run` and `make test`. Both install what is missing first.
BUILD ?= build
JOBS ?= $(shell nproc)
LISTEN ?= 127.0.0.1:8080

.PHONY: all deps build run test bench clean

all: build

deps:
	@bash scripts/install-deps.sh

$(BUILD)/build.ninja: CMakeLists.txt CMakePresets.json
	cmake --preset default

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

run: build
	@mkdir -p var
	$(BUILD)/bin/gauntlet serve --db var/gauntlet.db --listen $(LISTEN) --local-worker

test: build
	@bash scripts/install-test-deps.sh
	cd $(BUILD) && ctest --output-on-failure --timeout 900 -j 2

bench: build
	@bash bench/run_all.sh

clean:
	rm -rf $(BUILD) build-fuzz
