# nmsa front door. Every target installs what it needs (scripts/setup.sh) and builds with CMake.
# make demo  — the main job (docs/demo.md)        make test  — the whole regression (CTest)

BUILD_DIR ?= build
JOBS      ?= $(shell nproc)
CMAKE_GEN := $(shell command -v ninja >/dev/null 2>&1 && echo "-G Ninja")

.PHONY: all deps configure build test sim sim-long lint synth-check formal synth synth-modules pnr fpga-report fpga-bench board \
        bench demo waves coverage fuzz clean

all: build

deps:
	@bash scripts/setup.sh

$(BUILD_DIR)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD_DIR) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=Release

configure: $(BUILD_DIR)/CMakeCache.txt

build: deps configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

# The whole regression: software and RTL unit tests, formal proof, lint, synthesis check, and a
# slice of the soak (label soak_slice); the long soak (label soak) is make sim-long.
test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) -LE '^soak$$'

# The RTL simulation regression alone.
sim: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) -L rtl

# The fault-injection soak (docs/verification.md, "Soak"): nmsa_soak's seeds sharded over CTest
# (label soak: every configuration of top_configs, and the random GEMMs under three power-up
# seeds) on $(JOBS) cores; then one summary of the shard files, merged into
# $(BUILD_DIR)/bench/robustness.json. Fails on any failure or lost result, printing the command
# that re-runs the seed. SLURM=1 runs the same tests as a Slurm job array instead
# (scripts/soak_slurm.py, on the cluster sbatch reaches; the build directory must be shared).
SOAK_MIN_SEEDS ?= 1000
SLURM ?=
SOAK_RUN = $(if $(SLURM),python3 scripts/soak_slurm.py --ctest $(BUILD_DIR) --label '^soak$$' \
	--work-dir $(BUILD_DIR)/soak/slurm,cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) -L '^soak$$')
sim-long: build
	rm -rf $(BUILD_DIR)/soak
	@mkdir -p $(BUILD_DIR)/soak $(BUILD_DIR)/bench
	@start=$$(date +%s); \
	($(SOAK_RUN)); rc=$$?; \
	python3 scripts/soak_merge.py $(BUILD_DIR)/soak/*.json --min-seeds $(SOAK_MIN_SEEDS) \
		--wall-seconds $$(( $$(date +%s) - start )) --robustness $(BUILD_DIR)/bench/robustness.json; \
	mrc=$$?; test $$rc -eq 0 -a $$mrc -eq 0

# Code and functional coverage of the RTL regression (docs/verification.md, "Coverage"): models
# with coverage points in their own build directory, the CTest label rtl on them, the report in
# $(COVERAGE_DIR)/report and the figures in $(BUILD_DIR)/bench/robustness.json.
COVERAGE_DIR ?= $(BUILD_DIR)/coverage
coverage: deps
	cmake -S . -B $(COVERAGE_DIR) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=Release -DNMSA_COVERAGE=ON
	cmake --build $(COVERAGE_DIR) -j $(JOBS) --target nmsa_rtl_tests nmsa_dma_tests
	bash scripts/coverage.sh $(COVERAGE_DIR) $(BUILD_DIR)/bench/robustness.json $(JOBS)

# The fuzzers, long (docs/fuzzing.md): each host-side libFuzzer target of tests/fuzz/ for
# FUZZ_SECONDS, then FUZZ_CASES cases of the CLI mutator, then the RTL fuzzer for
# FUZZ_RTL_SECONDS; the figures go to $(BUILD_DIR)/bench/robustness.json beside the coverage
# ones. `make test` runs a short slice.
FUZZ_CASES       ?= 10000
FUZZ_SECONDS     ?= 300
FUZZ_RTL_SECONDS ?= 120
fuzz: deps configure
	cmake --build $(BUILD_DIR) -j $(JOBS) --target nmsa_cli
	mkdir -p $(BUILD_DIR)/bench
	bash scripts/fuzz.sh all $(BUILD_DIR)/fuzz $(BUILD_DIR)/nmsa $(FUZZ_CASES) $(FUZZ_SECONDS) \
		$(BUILD_DIR)/bench/robustness.json $(FUZZ_RTL_SECONDS)

lint: deps
	bash scripts/lint.sh

synth-check: deps
	bash scripts/synth_check.sh $(BUILD_DIR)/synth

# The formal checks and their self-tests (docs/verification.md): the decoder, the FIFO, the CSR
# block's AXI4-Lite slave, the DMA engines' AXI4 master.
formal: deps
	bash scripts/formal.sh $(BUILD_DIR)/formal && bash scripts/formal.sh --selftest $(BUILD_DIR)/formal
	bash scripts/formal_fifo.sh $(BUILD_DIR)/formal && bash scripts/formal_fifo.sh --selftest $(BUILD_DIR)/formal
	bash scripts/formal_axil.sh $(BUILD_DIR)/formal && bash scripts/formal_axil.sh --selftest $(BUILD_DIR)/formal
	bash scripts/formal_dma.sh $(BUILD_DIR)/formal && bash scripts/formal_dma.sh --selftest $(BUILD_DIR)/formal

# FPGA flow (docs/fpga.md): TARGET=ecp5|ice40|generic, CONFIG=<name in rtl/configs.json>,
# TOP=<module> (default nmsa_top), SEEDS=1,2,3 for place and route. Results go to
# $(BUILD_DIR)/fpga/<target>-<config>[-<module>].json (ice40-hx8k-... with DEVICE=hx8k);
# fpga-report renders them all.
TARGET ?= ecp5
CONFIG ?= default
TOP    ?= nmsa_top
SEEDS  ?= 1,2,3
# iCE40 part: empty for the UP5K, hx8k for the HX8K (no multipliers: synthesis maps them to logic).
DEVICE ?=
DEVICE_ARG = $(if $(DEVICE),--device $(DEVICE))
# ROUTE_MINUTES=M stops a seed still routing after M minutes (the result is over the others).
ROUTE_MINUTES ?=
ROUTE_LIMIT = $(if $(ROUTE_MINUTES),--route-minutes $(ROUTE_MINUTES))
# fpga-bench: the iCEBreaker's configuration (empty: syn/board.sh picks the smallest one).
ICE40_CONFIG ?=
synth: deps
	python3 syn/fpga.py synth --target $(TARGET) --config $(CONFIG) --top $(TOP) $(DEVICE_ARG) \
		--dir $(BUILD_DIR)/fpga

# Synthesis without flattening: the cells of every instance, largest first, and
# $(BUILD_DIR)/fpga/<target>-<config>-modules.json.
synth-modules: deps
	python3 syn/fpga.py modules --target $(TARGET) --config $(CONFIG) --top $(TOP) $(DEVICE_ARG) \
		--dir $(BUILD_DIR)/fpga

pnr: deps
	python3 syn/fpga.py pnr --target $(TARGET) --config $(CONFIG) --top $(TOP) --seeds $(SEEDS) \
		$(DEVICE_ARG) $(ROUTE_LIMIT) --dir $(BUILD_DIR)/fpga

fpga-report:
	python3 syn/fpga.py report --dir $(BUILD_DIR)/fpga

# The FPGA benchmark (hours on 2 cores: each seed of the whole accelerator takes about 50
# minutes): the whole accelerator and the bare array of `default` and of `dense_only` placed and
# routed on the LFE5U-85F, the iCEBreaker build, and $(BUILD_DIR)/bench/fpga.json with the
# figures of docs/fpga.md. The iCEBreaker step may report
# that the design does not fit; the benchmark file says so.
fpga-bench: deps
	python3 syn/fpga.py pnr --target ecp5 --config default --seeds $(SEEDS) --no-bitstream $(ROUTE_LIMIT) --dir $(BUILD_DIR)/fpga
	python3 syn/fpga.py pnr --target ecp5 --config dense_only --seeds $(SEEDS) --no-bitstream $(ROUTE_LIMIT) --dir $(BUILD_DIR)/fpga
	python3 syn/fpga.py pnr --target ecp5 --config default --top nmsa_array --seeds 1 --no-bitstream --dir $(BUILD_DIR)/fpga
	python3 syn/fpga.py pnr --target ecp5 --config dense_only --top nmsa_array --seeds 1 --no-bitstream --dir $(BUILD_DIR)/fpga
	-bash syn/board.sh icebreaker $(ICE40_CONFIG)
	python3 syn/fpga.py report --dir $(BUILD_DIR)/fpga
	python3 syn/fpga.py bench --dir $(BUILD_DIR)/fpga --out $(BUILD_DIR)/bench/fpga.json

# A board's bitstream (docs/fpga.md): BOARD=ulx3s or icebreaker; CONFIG= a configuration of
# rtl/configs.json (default: small on ULX3S, the smallest one on iCEBreaker). Output and the
# summary (resources, Fmax) in build/board/$(BOARD).
board: deps
	@test -n "$(BOARD)" || { echo "usage: make board BOARD=ulx3s|icebreaker [CONFIG=name]"; exit 2; }
	ALLOW_TIMING_FAIL=$(ALLOW_TIMING_FAIL) bash syn/board.sh $(BOARD) \
		$(if $(filter command line,$(origin CONFIG)),$(CONFIG),)

# The benchmarks (docs/verification.md): each exits non-zero when a deterministic figure misses its
# target; `ctest -L bench` runs the same checks without the model build times.
# The build gets the top models of rtl/configs.json's bench_configs as well (NMSA_BENCH_CONFIGS,
# which stays on in $(BUILD_DIR): later builds there keep those models; -DNMSA_BENCH_CONFIGS=OFF
# drops them).
bench: deps configure
	cmake -S . -B $(BUILD_DIR) -DNMSA_BENCH_CONFIGS=ON
	cmake --build $(BUILD_DIR) -j $(JOBS)
	@mkdir -p $(BUILD_DIR)/bench
	bash scripts/model_build_times.sh $(BUILD_DIR)/bench/build_times.txt
	$(BUILD_DIR)/nmsa_bench_array --config default --out $(BUILD_DIR)/bench/array.json \
		--build-times $(BUILD_DIR)/bench/build_times.txt
	$(BUILD_DIR)/nmsa_bench_top --config default --out $(BUILD_DIR)/bench/top.json
	$(BUILD_DIR)/nmsa_bench_prune --out $(BUILD_DIR)/bench/prune.json
	$(BUILD_DIR)/nmsa_bench_runtime --out $(BUILD_DIR)/bench/runtime.json \
		--prune-json $(BUILD_DIR)/bench/prune.json
	$(BUILD_DIR)/nmsa_bench_workloads --config large --out $(BUILD_DIR)/bench/workloads.json \
		--demo-report $(BUILD_DIR)/report/report.json
	$(BUILD_DIR)/nmsa_bench_workloads --config xlarge --out $(BUILD_DIR)/bench/workloads_xlarge.json
	$(BUILD_DIR)/nmsa_bench_lens --config default --out $(BUILD_DIR)/bench/lens.json
	$(BUILD_DIR)/nmsa_bench_contention --config default --out $(BUILD_DIR)/bench/lens.json
	$(BUILD_DIR)/nmsa_bench_triage --out $(BUILD_DIR)/bench/lens.json

# Re-runs the tests matching TEST (a GoogleTest filter) with FST tracing; traces and GTKWave save
# files land in build/waves. Open one with: gtkwave build/waves/<test>.gtkw
waves: build
	@test -n "$(TEST)" || { echo "usage: make waves TEST=<test name or filter>"; exit 2; }
	@mkdir -p $(BUILD_DIR)/waves
	NMSA_TRACE=1 NMSA_WAVES_DIR=$(CURDIR)/$(BUILD_DIR)/waves $(BUILD_DIR)/nmsa_rtl_tests \
		--gtest_filter='$(TEST)'
	@ls -1 $(BUILD_DIR)/waves/*.gtkw 2>/dev/null || echo "no nmsa_top trace: TEST matched no test of the accelerator top"

# The main job (docs/demo.md): Fashion-MNIST from dense training to 2:4 sparse INT8 on the RTL,
# and the sparsity deployment report in build/report. Trained models are cached in
# build/demo-cache, so a second run skips training. DEMO_ARGS passes options (e.g. --quick).
demo: deps configure
	cmake --build $(BUILD_DIR) -j $(JOBS) --target nmsa_demo nmsa_cli
	$(BUILD_DIR)/nmsa_demo --out $(BUILD_DIR)/report --cache $(BUILD_DIR)/demo-cache $(DEMO_ARGS)

clean:
	rm -rf $(BUILD_DIR)
