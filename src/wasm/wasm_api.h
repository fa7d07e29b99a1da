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

/* For wasm_predict.c (blw_predict_json): the loaded model (NULL: none) and
 * how many loads there have been (*loads, so a head made for an earlier
 * model is never reused), the state, the tokens of the last blw_run while
 * the state holds that run (else NULL), and a JSON buffer handed out as the
 * current result (*out NULL + blw_error when it ran out of memory). */
#include "bertlens.h"
#include "text/json.h"
const bl_model *bli_wasm_model(unsigned *loads);
bl_state *bli_wasm_state(void);
const bl_tokens *bli_wasm_run_tokens(void);
void bli_wasm_json(bli_jbuf *b, const char **out);

/* For wasm_convert.c (blw_conv_load): the engine takes bytes (malloc'ed,
 * size of them) as its model, freeing them if it refuses them; 0 or -1. */
int blw_load(uint8_t *bytes, int size);

#endif
