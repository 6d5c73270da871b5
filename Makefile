# Entry point. `make run` and `make test` install what is missing, build and run.
BUILD := build
JOBS  := $(shell nproc)
# No "Entering directory" lines from the makes CMake runs below us.
MAKEFLAGS += --no-print-directory

.PHONY: all deps build run test unit integration clean bench fuzz linux profile
all: build

deps:
	@bash scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(BUILD) -j$(JOBS)

# Boots the hypervisor with dom0 = the reference guest kernel and prints what both report,
# then the fork benchmarks per mode, then traces of them (build/run/) and their analysis. The build's
# own output goes to build/build.log (shown only when it fails), so the output starts at the
# hypervisor's first line. It ends with the toolstack as an administrator drives it: pvhvd, two
# domUs from examples/*.cfg through xl, xl list, a console, shutdown, destroy, the daemon down.
run:
	@mkdir -p $(BUILD) && $(MAKE) build > $(BUILD)/build.log 2>&1 || { tail -n 40 $(BUILD)/build.log; echo "make run: the build failed (all of it: $(BUILD)/build.log)"; exit 1; }
	@python3 tests/integration/lib/boot.py --show
	@python3 bench/run_bench.py --build $(BUILD)
	@python3 bench/capture_traces.py --build $(BUILD)
	@python3 tests/integration/lib/toolstack_scenario.py --build $(BUILD)

# Fork benchmarks in every page-table mode, deterministic (-icount shift=0): the table goes to
# the terminal and to build/bench/results.{json,md}. Fails when any mode or benchmark fails.
# The untraced modes run build/xen/xen-untraced: the "tracing off" table compares them. The
# xen417 modes run real Xen 4.17 with the same guest (with and without XPTI, and the guest's
# hypercall and batched modes): the ratio table puts each of our modes over its Xen columns.
BENCH_MODES := writable,emulate,adaptive,hypercall,batched,xen417,xen417-nopti,xen417-hypercall,xen417-batched,writable-untraced,emulate-untraced,adaptive-untraced
# The cost model's events for the Xen columns (no counters there) come from a profile of them.
BENCH_BENCHMARKS := fork_exit,fork_execve,fork_sh,dirty1_fork_exit,dirty16_fork_exit,dirty64_fork_exit,pte_write,mixed_fork
# Seconds of host time per boot: the figures are virtual time (-icount), but a machine that runs
# past this is stopped as hung; a loaded host (nice, other jobs) needs more than run_bench's 300.
BENCH_TIMEOUT ?= 1800
bench: build
	@python3 bench/run_profile.py --build $(BUILD) --timeout $(BENCH_TIMEOUT) --modes xen417,xen417-nopti --benchmarks $(BENCH_BENCHMARKS) \
		--iterations 5 --top 15 --output $(BUILD)/bench/events/profile.json > $(BUILD)/bench/events.log
	@python3 bench/run_bench.py --deterministic --strict --jobs 2 --timeout $(BENCH_TIMEOUT) --modes $(BENCH_MODES) --build $(BUILD) \
		--events-profile $(BUILD)/bench/events/profile.json
	@python3 bench/run_lifecycle_bench.py --build $(BUILD)
	@python3 bench/run_toolstack_bench.py --build $(BUILD)
	@python3 bench/run_linux_bench.py --build $(BUILD) --baseline --traces $(BUILD)/bench/linux-traces

# Where the instructions go (bench/run_profile.py): instructions per function and events per
# operation inside the timed window, ours and Xen 4.17, through the project's QEMU plugin.
PROFILE_MODES      ?= writable,emulate,hypercall,xen417,xen417-hypercall
PROFILE_BENCHMARKS ?= fork_exit,pte_write
profile: build
	@python3 bench/run_profile.py --build $(BUILD) --modes $(PROFILE_MODES) --benchmarks $(PROFILE_BENCHMARKS)

# The fuzzing domain (tests/fuzz/campaign.py): FUZZ_OPS operations per ptwr= mode as dom0 and
# as a domU beside a working dom0, and FUZZ_OPS/50 as dom0 racing domain destruction (the
# destroy class alone), each under ptwr=emulate and writable, and FUZZ_OPS per vCPU as dom0 on
# FUZZ_VCPUS vCPUs at -smp FUZZ_VCPUS (role smp: ptwr=emulate, writable, adaptive; sched_smp=1,
# -icount shift=0): nine campaigns,
# in chunks of FUZZ_CHUNK (one boot each). FUZZ_ROLES=smp runs some roles only.
# Resumable: chunks already done (build/fuzz/state.json) are not run again; FUZZ_FRESH=1 starts
# over. FUZZ_SKIP=nt+iret_selectors leaves kinds of operation out (nothing by default). Fails
# on any hypervisor fault, hang, audit mismatch or failed check of the fuzzer.
FUZZ_SEED  ?= 0x2026
FUZZ_OPS   ?= 1000000
FUZZ_CHUNK ?= 100000
FUZZ_SKIP  ?=
FUZZ_VCPUS ?= 4
FUZZ_ROLES ?= dom0,domU,destroy,smp
fuzz: build
	@python3 tests/fuzz/campaign.py --build $(BUILD) --seed $(FUZZ_SEED) --ops $(FUZZ_OPS) --chunk $(FUZZ_CHUNK) \
		--vcpus $(FUZZ_VCPUS) --roles $(FUZZ_ROLES) $(if $(FUZZ_SKIP),--skip $(FUZZ_SKIP)) $(if $(FUZZ_FRESH),--fresh)

# Debian's Linux PV kernel with a busybox initramfs as a domU: on Xen 4.17 through pvhvd and xl
# (its x86 builds no boot domU), on ours a boot-module domU in each PTE-write mode: the fork
# loop's figures, or where the boot stopped (linux/README.md).
LINUX_ITERATIONS ?= 1000
linux: build
	@python3 linux/run.py --build $(BUILD) --iterations $(LINUX_ITERATIONS) --ptwr emulate,writable

# Every test: host unit tests and QEMU integration tests, through CTest.
test: build
	@cd $(BUILD) && ctest --output-on-failure -j2

unit: build
	@cd $(BUILD) && ctest --output-on-failure -L unit

integration: build
	@cd $(BUILD) && ctest --output-on-failure -L integration

clean:
	rm -rf $(BUILD)/CMakeFiles $(BUILD)/CMakeCache.txt $(BUILD)/xen $(BUILD)/guest $(BUILD)/tests $(BUILD)/bin
