# A thin wrapper over CMake, so the everyday commands stay short:
#   make, make lib      the library only: build/libtinyecs.a and libtinyecs.so
#   make build          everything: library, tests, examples, demo, benchmarks
#   make demo           build and run the boids demo (DEMO_ARGS='--compare')
#   make test           build and run every test (CTest)
#   make test-minimal   the core alone, every add-on off (build-minimal), and
#                       the tests that need no add-on
#   make test-sanitize  the tests under AddressSanitizer + UBSan
#   make test-tsan      the threaded tests (CTest label `threads`) under
#                       ThreadSanitizer; any report fails
#   make test-valgrind  the tests under valgrind memcheck (any error fails)
#   make test-cross     the tests built for Windows (wine), 32-bit x86 and
#                       big-endian s390x (qemu-user); CROSS_TARGETS='i686' for one
#   make fuzz           each libFuzzer target for FUZZ_SECONDS (default 60): the model,
#                       the snapshot loader, the JSON import, the inspector's API
#   make model-run      the model test for MODEL_SECONDS (default 60)
#   make bench          benchmarks, release build, warm heap (BENCH_ARGS='--quick');
#                       the figures also go to build-release/bench.csv
#                       BENCH_NATIVE=1: built with -march=native (build-release-native)
#   make bench-cold     the same with glibc's default heap (pages paid on first touch)
#   make bench-plot     run --scaling and draw it as an SVG chart (build/scaling.svg)
#   make bench-table    run the benchmark BENCH_RUNS times (default 5), keep the
#                       median of each row in docs/bench/ and put the table it
#                       gives into docs/BENCHMARKS.md
#   make docs           the documentation site: the manual and the API reference
#                       (Doxygen), with navigation and search, into build/docs/html
#   make dist           write the two-file build, dist/tinyecs.c and dist/tinyecs.h,
#                       from src/ and include/ (tools/amalgamate.sh)
#   make package        a .deb and a .tar.gz (CPack) of a release build with the
#                       prefix /usr, into build-package/
#   make test-dist      the whole test suite against the library built from
#                       dist/tinyecs.c (build-dist; BUILD_DIST=... for another)
BUILD    ?= build

# cmake --build runs make again; keep its output to the build lines.
MAKEFLAGS += --no-print-directory
DEMO_ARGS ?=
JOBS     ?= 2
CMAKE    ?= cmake
CTEST    ?= ctest
DOXYGEN  ?= doxygen

FUZZ_SECONDS  ?= 60
MODEL_SECONDS ?= 60
FUZZ_TARGETS  ?= fuzz_model fuzz_json fuzz_snapshot fuzz_delta fuzz_inspect
# The long model test runs 1,000,000 operations; fewer under the slow tools.
SANITIZE_MODEL_OPS ?= 250000
VALGRIND_MODEL_OPS ?= 20000

.PHONY: all build lib test test-minimal test-dist dist package demo test-sanitize test-tsan test-valgrind test-cross fuzz model-run bench bench-cold \
	bench-build bench-table bench-plot docs clean

# Benchmarks: their own release build, plain -O3 (no -march=native), so the
# binary and its figures are portable. BENCH_NATIVE=1 builds them with
# -march=native instead, as other libraries are often measured, in a
# directory of its own so the two builds never mix.
BENCH_NATIVE ?=
ifeq ($(BENCH_NATIVE),1)
BENCH_BUILD ?= build-release-native
BENCH_CFLAGS := -O3 -march=native -DNDEBUG -DBENCH_NATIVE
else
BENCH_BUILD ?= build-release
BENCH_CFLAGS := -O3 -DNDEBUG
endif
BENCH_ARGS  ?=
BENCH_CSV   := $(BENCH_BUILD)/bench.csv
BENCH_PLOT  := $(BUILD)/scaling.svg
BENCH_WARM  := GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=18446744073709551615

# `make` alone builds the library; `make build` builds everything (the
# tests, examples, demo and benchmarks too).
all: lib

lib:
	@$(CMAKE) -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@$(CMAKE) --build $(BUILD) -j$(JOBS) --target tinyecs tinyecs_shared

build:
	@$(CMAKE) -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@$(CMAKE) --build $(BUILD) -j$(JOBS)

test: build
	cd $(BUILD) && $(CTEST) --output-on-failure -j$(JOBS)

# Every add-on off (CMakeLists.txt's TECS_INDEX ... TECS_JSON): the core
# builds alone and passes the tests that need nothing more.
MINIMAL_FLAGS := -DTECS_INDEX=OFF -DTECS_OBSERVER=OFF -DTECS_SYSTEM=OFF -DTECS_SNAPSHOT=OFF \
	-DTECS_RESOURCE=OFF -DTECS_RELATION=OFF -DTECS_JSON=OFF
test-minimal:
	@$(CMAKE) -S . -B build-minimal -DCMAKE_BUILD_TYPE=RelWithDebInfo $(MINIMAL_FLAGS) >/dev/null
	@$(CMAKE) --build build-minimal -j$(JOBS)
	cd build-minimal && $(CTEST) --output-on-failure -j$(JOBS)

# Only the library and the demo are built, so a fresh clone runs it quickly.
# The picture goes into the build directory; a --png in DEMO_ARGS comes
# later on the command line and wins.
demo:
	@$(CMAKE) -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@$(CMAKE) --build $(BUILD) -j$(JOBS) --target boids
	$(BUILD)/demo/boids --png $(BUILD)/boids.png $(DEMO_ARGS)

test-sanitize:
	@$(CMAKE) -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Debug -DTECS_SANITIZE=ON \
		-DTECS_BUILD_BENCH=OFF >/dev/null
	@$(CMAKE) --build build-sanitize -j$(JOBS)
	cd build-sanitize && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
		UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 TECS_MODEL_OPS=$(SANITIZE_MODEL_OPS) \
		$(CTEST) --output-on-failure -j$(JOBS)

# ThreadSanitizer (gcc's libtsan, or clang's with CC=clang) on the tests
# labelled `threads`: the first report stops the test with a non-zero code.
TSAN_FLAGS := -fsanitize=thread -fno-omit-frame-pointer
test-tsan:
	@$(CMAKE) -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DCMAKE_C_FLAGS="$(TSAN_FLAGS)" -DCMAKE_EXE_LINKER_FLAGS="$(TSAN_FLAGS)" \
		-DCMAKE_SHARED_LINKER_FLAGS="$(TSAN_FLAGS)" -DTECS_BUILD_BENCH=OFF \
		-DTECS_BUILD_EXAMPLES=OFF -DTECS_BUILD_DEMO=OFF >/dev/null
	@$(CMAKE) --build build-tsan -j$(JOBS)
	cd build-tsan && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
		$(CTEST) --output-on-failure -j$(JOBS) -L threads

# Every test case in its own valgrind process, JOBS at a time; a memcheck
# error or a leak makes the case (and the target) fail.
test-valgrind: build
	@command -v valgrind >/dev/null || { echo "valgrind is not installed"; exit 1; }
	@cd $(BUILD) && ./tests/tinyecs_tests --list | TECS_MODEL_OPS=$(VALGRIND_MODEL_OPS) \
		xargs -P$(JOBS) -I{} sh -c 'valgrind -q --error-exitcode=99 --leak-check=full \
		--errors-for-leak-kinds=definite,indirect,possible ./tests/tinyecs_tests {} >/dev/null \
		|| { echo "FAILED under valgrind: {}"; exit 1; }' \
		&& { [ ! -x tests/inspect_serve ] || ! command -v curl >/dev/null || \
		valgrind -q --error-exitcode=99 --leak-check=full \
		--errors-for-leak-kinds=definite,indirect,possible ./tests/inspect_serve --check \
		--seconds 120 >/dev/null || { echo "FAILED under valgrind: inspect_serve --check"; \
		exit 1; }; } \
		&& echo "test-valgrind: every case clean"

# The two-file build: written from the sources by tools/amalgamate.sh, in
# the order CMakeLists.txt compiles them; test-dist builds the library
# from it (TECS_AMALGAMATION) and runs every test against that.
BUILD_DIST ?= build-dist
dist:
	@$(CMAKE) -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@$(CMAKE) --build $(BUILD) --target dist

test-dist:
	@$(CMAKE) -S . -B $(BUILD_DIST) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTECS_AMALGAMATION=ON \
		-DTECS_BUILD_BENCH=OFF >/dev/null
	@$(CMAKE) --build $(BUILD_DIST) -j$(JOBS)
	cd $(BUILD_DIST) && $(CTEST) --output-on-failure -j$(JOBS)

# The packages: the libraries, headers, tecs-dump, CMake and pkg-config
# files of a release build installed under /usr (CMakeLists.txt, CPack).
package:
	@sh tools/make_package.sh . build-package $${CC:-cc} $(CMAKE) $(JOBS)

# Cross toolchains and emulators from Debian, installed when missing (as
# root); see tools/test_cross.sh and cmake/toolchains/.
CROSS_TARGETS ?=
test-cross:
	JOBS=$(JOBS) sh tools/test_cross.sh $(CROSS_TARGETS)

# libFuzzer needs clang's runtime (Debian: libclang-rt-14-dev). Each target
# starts from the committed seeds in fuzz/corpus/, keeps what it learns in
# build-fuzz/, and stops the run on the first crash or model mismatch (the
# input lands in build-fuzz/crashes/; keep it under fuzz/regress/).
fuzz:
	@printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n){(void)d;(void)n;return 0;}' \
		> /tmp/tecs-fuzz-probe.c && clang -fsanitize=fuzzer /tmp/tecs-fuzz-probe.c \
		-o /tmp/tecs-fuzz-probe 2>/dev/null || { echo "clang's libFuzzer runtime is missing:" \
		"apt-get install clang libclang-rt-14-dev"; exit 1; }
	@CC=clang $(CMAKE) -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTECS_FUZZ=ON \
		-DTECS_BUILD_TESTS=OFF -DTECS_BUILD_EXAMPLES=OFF -DTECS_BUILD_BENCH=OFF >/dev/null
	@$(CMAKE) --build build-fuzz -j$(JOBS)
	@for t in $(FUZZ_TARGETS); do \
		if [ ! -x build-fuzz/fuzz/$$t ]; then \
			echo "== $$t: not built (fuzz_json needs jansson: apt-get install libjansson-dev;" \
				"fuzz_inspect also libmicrohttpd: libmicrohttpd-dev)"; \
			continue; \
		fi; \
		mkdir -p build-fuzz/corpus-$$t build-fuzz/crashes; \
		echo "== $$t for $(FUZZ_SECONDS) s"; \
		ASAN_OPTIONS=detect_leaks=1 build-fuzz/fuzz/$$t -max_total_time=$(FUZZ_SECONDS) \
			-max_len=$$(case $$t in (fuzz_json|fuzz_delta|fuzz_inspect) echo 8192;; (*) echo 2052;; esac) -timeout=20 \
			-print_final_stats=1 -artifact_prefix=build-fuzz/crashes/ \
			build-fuzz/corpus-$$t fuzz/corpus/$${t#fuzz_} \
			|| exit 1; \
	done

model-run: build
	$(BUILD)/tests/model_run --seconds $(MODEL_SECONDS)

bench-build:
	@$(CMAKE) -S . -B $(BENCH_BUILD) -DCMAKE_BUILD_TYPE=Release \
		-DCMAKE_C_FLAGS_RELEASE="$(BENCH_CFLAGS)" -DTECS_BUILD_TESTS=OFF \
		-DTECS_BUILD_EXAMPLES=OFF >/dev/null
	@$(CMAKE) --build $(BENCH_BUILD) -j$(JOBS) --target tinyecs_bench

# The figures go to the screen and to $(BENCH_CSV), the machine beside them.
bench: bench-build
	$(BENCH_WARM) $(BENCH_BUILD)/bench/tinyecs_bench --csv $(BENCH_CSV) $(BENCH_ARGS)
	@sh tools/bench_machine.sh $(BENCH_BUILD) "make bench$(if $(BENCH_NATIVE), BENCH_NATIVE=$(BENCH_NATIVE))$(if $(BENCH_ARGS), BENCH_ARGS='$(BENCH_ARGS)')" \
		> $(BENCH_BUILD)/bench-machine.txt

# The --scaling figures as a chart: ns per entity against N (1e3..1e7, log
# scale), one line per scenario, drawn by tools/bench_plot.sh (awk) into
# build/scaling.svg. BENCH_CSV_IN=FILE draws an existing CSV instead of running.
BENCH_CSV_IN ?=
bench-plot:
	@if [ -z "$(BENCH_CSV_IN)" ]; then $(MAKE) bench BENCH_ARGS='--scaling $(BENCH_ARGS)'; fi
	@mkdir -p $(BUILD)
	sh tools/bench_plot.sh $(if $(BENCH_CSV_IN),$(BENCH_CSV_IN),$(BENCH_CSV)) $(BENCH_BUILD)/bench-machine.txt > $(BENCH_PLOT)
	@echo "bench-plot: $(BENCH_PLOT)"

# The table of docs/BENCHMARKS.md comes from docs/bench/results.csv (and
# machine.txt) through tools/bench_table.sh; a test checks they agree.
# Each figure is the median of BENCH_RUNS full runs (tools/bench_median.sh):
# one run of the iterate rows moves with the machine's load.
BENCH_RUNS ?= 5
bench-table: bench-build
	@mkdir -p docs/bench
	@rm -f $(BENCH_BUILD)/bench-run-*.csv
	@k=1; while [ $$k -le $(BENCH_RUNS) ]; do \
		echo "bench-table: run $$k of $(BENCH_RUNS)"; \
		$(BENCH_WARM) $(BENCH_BUILD)/bench/tinyecs_bench \
			--csv $(BENCH_BUILD)/bench-run-$$k.csv $(BENCH_ARGS) || exit 1; \
		k=$$((k + 1)); \
	done
	sh tools/bench_median.sh $$(k=1; while [ $$k -le $(BENCH_RUNS) ]; do \
		echo $(BENCH_BUILD)/bench-run-$$k.csv; k=$$((k + 1)); done) > $(BENCH_BUILD)/bench-median.csv
	cp $(BENCH_BUILD)/bench-median.csv docs/bench/results.csv
	sh tools/bench_machine.sh $(BENCH_BUILD) "make bench-table$(if $(BENCH_NATIVE), BENCH_NATIVE=$(BENCH_NATIVE))$(if $(BENCH_ARGS), BENCH_ARGS='$(BENCH_ARGS)')" \
		$(BENCH_RUNS) > docs/bench/machine.txt
	sh tools/bench_table.sh --update docs/BENCHMARKS.md docs/bench/results.csv docs/bench/machine.txt
	@sh tools/bench_summary.sh README.md docs/BENCHMARKS.md || \
		echo "bench-table: copy the README's summary rows again from docs/BENCHMARKS.md"

bench-cold: bench-build
	env -u GLIBC_TUNABLES $(BENCH_BUILD)/bench/tinyecs_bench $(BENCH_ARGS)

# Without doxygen this fails (exit 1) rather than pass quietly: "make docs"
# that succeeds should mean the HTML is there. Warnings are errors (Doxyfile).
docs:
	@DOXYGEN=$(DOXYGEN) sh tools/make_docs.sh . $(BUILD)/docs --check

clean:
	rm -rf build build-* 
