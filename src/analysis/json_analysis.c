/* json_analysis.c — a bl_analysis as JSON, the one text both front ends
 * give out (`bertlens analyze`, blw_analyze_json); the analyses themselves
 * are computed in analyze.c. Format in json.h (bli_json_analysis).
 */
#include "text/json.h"

#include <stdio.h>
#include <string.h>

static void jfloat(bli_jbuf *b, double x) {
    char tmp[BLI_JSON_NUM_CHARS];
    bli_json_raw(b, tmp, strlen(bli_json_num(tmp, x)));
}

static void jmatrices(bli_jbuf *b, const float *x, int32_t L, int32_t T) {
    bli_json_raw(b, "[", 1);
    for (int32_t l = 0; l < L; l++) {
        bli_json_raw(b, l ? ",[" : "[", l ? 2 : 1);
        for (int32_t i = 0; i < T; i++) {
            bli_json_raw(b, i ? ",[" : "[", i ? 2 : 1);
            const float *r = x + ((size_t)l * T + i) * T;
            for (int32_t j = 0; j < T; j++) {
                if (j) bli_json_raw(b, ",", 1);
                jfloat(b, r[j]);
            }
            bli_json_raw(b, "]", 1);
        }
        bli_json_raw(b, "]", 1);
    }
    bli_json_raw(b, "]", 1);
}

void bli_json_analysis(bli_jbuf *b, const bl_tokenizer *tk, const int32_t *ids, const bl_analysis *a, int with_rollout) {
    bli_json_raw(b, "{\"tokens\":[", 11);
    for (int32_t t = 0; t < a->T; t++) {
        const char *s = tk && ids ? bl_token_str(tk, ids[t]) : NULL; /* (no model: "") */
        if (t) bli_json_raw(b, ",", 1);
        bli_json_string(b, s ? s : "", s ? strlen(s) : 0);
    }
    bli_json_raw(b, "],\"pair\":", 9);
    bli_json_raw(b, a->pair ? "true" : "false", a->pair ? 4 : 5);
    bli_json_raw(b, ",\"heads\":[", 10);
    for (int32_t l = 0; l < a->n_layers; l++)
        for (int32_t h = 0; h < a->n_heads; h++) {
            const bl_head_features *f = &a->heads[(size_t)l * a->n_heads + h];
            char tmp[64];
            int n = snprintf(tmp, sizeof tmp, "%s{\"layer\":%d,\"head\":%d", l || h ? "," : "", l, h);
            bli_json_raw(b, tmp, (size_t)n);
            const struct { const char *k; float v; } fs[] = {
                {"entropy", f->entropy}, {"cls", f->cls},   {"sep", f->sep},         {"punct", f->punct},
                {"prev", f->prev},       {"self", f->self}, {"next", f->next},       {"segment", f->segment},
                {"confidence", f->confidence}};
            for (size_t k = 0; k < sizeof fs / sizeof *fs; k++) {
                n = snprintf(tmp, sizeof tmp, ",\"%s\":", fs[k].k);
                bli_json_raw(b, tmp, (size_t)n);
                jfloat(b, fs[k].v);
            }
            n = snprintf(tmp, sizeof tmp, ",\"class\":\"%s\"}", bl_head_class_name(f->klass));
            bli_json_raw(b, tmp, (size_t)n);
        }
    bli_json_raw(b, "]", 1);
    if (with_rollout && a->rollout) {
        bli_json_raw(b, ",\"rollout\":", 11);
        jmatrices(b, a->rollout, a->n_layers, a->T);
        bli_json_raw(b, ",\"rollout_norm\":", 16);
        if (a->rollout_norm)
            jmatrices(b, a->rollout_norm, a->n_layers, a->T);
        else
            bli_json_raw(b, "null", 4);
    }
    bli_json_raw(b, "}", 1);
}
