# A thin wrapper over CMake, so the everyday commands stay short:
#   make demo           build and run the demo
#   make test           build and run every test (CTest)
#   make test-sanitize  the tests under AddressSanitizer + UBSan
#   make bench          benchmarks, release build (BENCH_ARGS='--quick')
BUILD    ?= build
JOBS     ?= 2
CMAKE    ?= cmake
CTEST    ?= ctest

.PHONY: all build test demo test-sanitize clean

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

clean:
	rm -rf build build-* 
