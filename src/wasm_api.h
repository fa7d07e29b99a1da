/* wasm_api.h — internal to the WebAssembly front end (wasm_api.c): what
 * its test-only companion, wasm_kernel_tests.c, shares with it. */
#ifndef BL_WASM_API_H
#define BL_WASM_API_H

/* Leave msg for blw_error() (the message of the last failing call). */
void bli_wasm_set_error(const char *msg);

#endif
