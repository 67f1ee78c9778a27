# A thin wrapper over CMake, so the everyday commands stay short:
#   make demo           build and run the demo
#   make test           build and run every test (CTest)
#   make test-sanitize  the tests under AddressSanitizer + UBSan
#   make bench          benchmarks, release build, warm heap (BENCH_ARGS='--quick')
#   make bench-cold     the same with glibc's default heap (pages paid on first touch)
BUILD    ?= build
JOBS     ?= 2
CMAKE    ?= cmake
CTEST    ?= ctest

.PHONY: all build test demo test-sanitize bench bench-cold bench-build clean

# Benchmarks: their own release build, plain -O3 (no -march=native).
BENCH_BUILD ?= build-release
BENCH_ARGS  ?=
BENCH_WARM  := GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=18446744073709551615

all: build

build:
	@$(CMAKE) -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@$(CMAKE) --build $(BUILD) -j$(JOBS)

test: build
	cd $(BUILD) && $(CTEST) --output-on-failure -j$(JOBS)

demo: build
	@for ex in $(BUILD)/examples/ex_*; do echo "== $$ex"; $$ex || exit 1; done

test-sanitize:
	@$(CMAKE) -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Debug -DTECS_SANITIZE=ON \
		-DTECS_BUILD_BENCH=OFF >/dev/null
	@$(CMAKE) --build build-sanitize -j$(JOBS)
	cd build-sanitize && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
		UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 $(CTEST) --output-on-failure -j$(JOBS)

bench-build:
	@$(CMAKE) -S . -B $(BENCH_BUILD) -DCMAKE_BUILD_TYPE=Release \
		-DCMAKE_C_FLAGS_RELEASE="-O3 -DNDEBUG" -DTECS_BUILD_TESTS=OFF \
		-DTECS_BUILD_EXAMPLES=OFF >/dev/null
	@$(CMAKE) --build $(BENCH_BUILD) -j$(JOBS) --target tinyecs_bench

bench: bench-build
	$(BENCH_WARM) $(BENCH_BUILD)/bench/tinyecs_bench $(BENCH_ARGS)

bench-cold: bench-build
	env -u GLIBC_TUNABLES $(BENCH_BUILD)/bench/tinyecs_bench $(BENCH_ARGS)

clean:
	rm -rf build build-* 
