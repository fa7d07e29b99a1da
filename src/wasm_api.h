/* wasm_api.h — internal to the WebAssembly front end (wasm_api.c): what
 * its companions share with it: wasm_convert.c (blw_conv_*) and the
 * test-only wasm_kernel_tests.c. */
#ifndef BL_WASM_API_H
#define BL_WASM_API_H

/* Leave msg for blw_error() (the message of the last failing call). */
void bli_wasm_set_error(const char *msg);

/* The buffer behind blw_error(), BLI_WASM_ERRLEN bytes, for calls that
 * take (err, errlen). */
enum { BLI_WASM_ERRLEN = 512 };
char *bli_wasm_err(void);

#endif
