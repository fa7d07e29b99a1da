#!/bin/sh
# Print the -sEXPORTED_FUNCTIONS list for emcc: _malloc, _free and every
# function in src/wasm_api.c defined on a line starting with EMSCRIPTEN_KEEPALIVE.
sed -n 's/^EMSCRIPTEN_KEEPALIVE[^(]*[ *]\(blw_[a-z0-9_]*\)(.*/_\1/p' "${1:-src/wasm_api.c}" |
  { printf '_malloc,_free'; while read -r f; do printf ',%s' "$f"; done; echo; }
