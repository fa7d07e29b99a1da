#!/bin/sh
# Print the -sEXPORTED_FUNCTIONS list for emcc: _malloc, _free and every
# function defined on a line starting with EMSCRIPTEN_KEEPALIVE in the given
# sources (default src/wasm/wasm_api.c, src/wasm/wasm_convert.c, src/wasm/wasm_predict.c and src/wasm/wasm_corpus.c, the page's build; the test build adds
# src/wasm/wasm_kernel_tests.c and its blw_k_* entry points).
[ $# -gt 0 ] || set -- src/wasm/wasm_api.c src/wasm/wasm_convert.c src/wasm/wasm_predict.c src/wasm/wasm_corpus.c
sed -n 's/^EMSCRIPTEN_KEEPALIVE[^(]*[ *]\(blw_[a-z0-9_]*\)(.*/_\1/p' "$@" |
  { printf '_malloc,_free'; while read -r f; do printf ',%s' "$f"; done; echo; }
