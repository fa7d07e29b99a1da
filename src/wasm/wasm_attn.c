/* wasm_attn.c — the analyses of attention given without a model: a module
 * of its own (build/wasm/analyze.wasm, standalone: no Emscripten glue) that
 * the viewer page (dist/viewer.html, and so the notebook outputs of
 * python/bertlens) loads to draw the heads overview and the rollout from a
 * snapshot's attention. The numbers are analyze.c's (bl_analyze_attention,
 * bl_head_compare), the ones the engine computes on a live run.
 *
 *   blw_attn_analyze   features, classes (JSON) and the rollouts (kept)
 *   blw_attn_rollout   one layer's rollout [T][T] of the last analysis
 *   blw_attn_compare   heads compared (the overview's "heads like this one")
 *   blw_attn_error     the reason of the last failure
 *
 * Buffers are _malloc'ed by the caller; strings are NUL-terminated UTF-8.
 */
#include "bertlens.h"
#include "text/json.h"
#include "base/sizes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __EMSCRIPTEN__
#include <emscripten.h>
#else
#define EMSCRIPTEN_KEEPALIVE
#endif

static struct {
    bl_analysis an; /* the last blw_attn_analyze, for blw_attn_rollout */
    char *json;     /* its JSON (owned)                                 */
    char err[256];
} ga;

EMSCRIPTEN_KEEPALIVE const char *blw_attn_error(void) { return ga.err; }

/* Features and classes of every head of attn [L][H][T][T] as JSON
 * (bli_json_analysis's format, "tokens" empty strings); with_rollout: also
 * the rollouts, kept for blw_attn_rollout (of norms [L][H][T][T] too when
 * norms is not NULL). tokens: T NUL-terminated strings one after the other
 * (the roles: bl_token_roles_text), special [T] (or NULL), segments [T] (or
 * NULL). NULL + blw_attn_error on failure. */
EMSCRIPTEN_KEEPALIVE const char *blw_attn_analyze(const float *attn, const float *norms, int L, int H, int T,
                                                  const char *tokens, const uint8_t *special, const int32_t *segments,
                                                  int with_rollout) {
    bl_analysis_free(&ga.an);
    free(ga.json);
    ga.json = NULL;
    if (T < 1 || !tokens) {
        snprintf(ga.err, sizeof ga.err, "blw_attn_analyze: no tokens");
        return NULL;
    }
    const char **tok = malloc((size_t)T * sizeof *tok); /* [T] into tokens */
    uint8_t *roles = malloc((size_t)T);                 /* [T]             */
    if (!tok || !roles) {
        free(tok);
        free(roles);
        snprintf(ga.err, sizeof ga.err, "out of memory analysing %d tokens", T);
        return NULL;
    }
    for (int t = 0, at = 0; t < T; t++) {
        tok[t] = tokens + at;
        at += (int)strlen(tokens + at) + 1;
    }
    bl_token_roles_text(tok, special, T, roles);
    free(tok);
    const int rc = bl_analyze_attention(attn, norms, L, H, T, roles, segments,
                                        with_rollout ? BL_ANALYZE_ROLLOUT : BL_ANALYZE_HEADS, &ga.an, ga.err,
                                        sizeof ga.err);
    free(roles);
    if (rc) return NULL;
    bli_jbuf b = {0};
    bli_json_analysis(&b, NULL, NULL, &ga.an, 0);
    if (b.oom) {
        bli_jbuf_free(&b);
        snprintf(ga.err, sizeof ga.err, "out of memory building JSON");
        return NULL;
    }
    bli_json_raw(&b, "", 1); /* the NUL */
    ga.json = b.data;
    return ga.json;
}

/* Layer `layer`'s rollout [T][T] (norm = 1: the norm-based one) of the last
 * blw_attn_analyze with_rollout; NULL if none. */
EMSCRIPTEN_KEEPALIVE const float *blw_attn_rollout(int norm, int layer) {
    const float *r = norm ? ga.an.rollout_norm : ga.an.rollout;
    if (!r || layer < 0 || layer >= ga.an.n_layers) {
        snprintf(ga.err, sizeof ga.err, "no rollout for layer %d", layer);
        return NULL;
    }
    return r + (size_t)layer * ga.an.T * ga.an.T;
}

/* bl_head_compare of head a [T][T] against the n heads b [n][T][T]:
 * out[k] = the Jensen-Shannon distance (base 2, mean over rows) to head k.
 * Returns 0, or -1. */
EMSCRIPTEN_KEEPALIVE int blw_attn_compare(const float *a, const float *b, int n, int T, float *out) {
    if (!a || !b || !out || n < 1 || T < 1 ||
        !bli_size_ok(BLI_BYTES(sizeof(float), n, T, T), "the heads compared", ga.err, sizeof ga.err)) {
        if (!ga.err[0]) snprintf(ga.err, sizeof ga.err, "blw_attn_compare: no heads to compare");
        return -1;
    }
    for (int k = 0; k < n; k++) {
        bl_head_diff d;
        if (bl_head_compare(a, b + (size_t)k * T * T, T, &d)) {
            snprintf(ga.err, sizeof ga.err, "blw_attn_compare: bad head %d", k);
            return -1;
        }
        out[k] = (float)d.js;
    }
    return 0;
}
