/* cli_heads.c — the CLI's head lists: --ablate / --keep L:H[,L:H...]
 * (L:* a whole layer) parsed strictly into a bl_state_set_head_mask mask. */
#include "cli.h"
#include "base/error.h"
#include "text/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------- head masks */

/* A head list "L:H[,L:H...]" (L:* = every head of layer L) into sel
 * [L][NH] (1 = listed). Strict: decimal numbers only, no empty items, every
 * layer and head in range. Returns 0, or -1 with a reason in err. */
static int parse_heads(const char *spec, int L, int NH, uint8_t *sel, char *err, size_t errlen) {
    memset(sel, 0, (size_t)L * NH);
    const char *p = spec;
    if (!*p) {
        bli_set_err(err, errlen, "empty head list (expected L:H[,L:H...], L:* for a whole layer)");
        return -1;
    }
    for (;;) {
        const char *item = p;
        long v[2] = {0, -1};
        for (int part = 0; part < 2; part++) {
            if (part == 1 && *p == '*') {
                p++;
                break;
            }
            if (*p < '0' || *p > '9') goto bad;
            long x = 0;
            while (*p >= '0' && *p <= '9') {
                x = x * 10 + (*p++ - '0');
                if (x > 1000000) goto bad;
            }
            v[part] = x;
            if (part == 0) {
                if (*p != ':') goto bad;
                p++;
            }
        }
        if (*p && *p != ',') goto bad;
        if (v[0] >= L) {
            bli_set_err(err, errlen, "'%.*s': layer %ld out of range 0..%d", (int)(p - item), item, v[0], L - 1);
            return -1;
        }
        if (v[1] >= NH) {
            bli_set_err(err, errlen, "'%.*s': head %ld out of range 0..%d", (int)(p - item), item, v[1], NH - 1);
            return -1;
        }
        for (int h = 0; h < NH; h++)
            if (v[1] < 0 || h == v[1]) sel[(size_t)v[0] * NH + h] = 1;
        if (!*p) return 0;
        p++; /* ',' */
        continue;
    bad:
        while (*p && *p != ',') p++;
        bli_set_err(err, errlen, "'%.*s' is not a head (expected L:H or L:*, e.g. 2:5 or 3:*)", (int)(p - item),
                    item);
        return -1;
    }
}

/* Apply --ablate / --keep (at most one given) to s. Prints why not. */
int bli_cli_apply_heads(bl_state *s, const char *ablate, const char *keep) {
    if (!ablate && !keep) return 0;
    const bl_config *c = bl_model_config(bl_state_model(s));
    const int L = c->n_layers, NH = c->n_heads;
    uint8_t *sel = malloc((size_t)L * NH);
    char err[256];
    if (!sel) {
        fprintf(stderr, "bertlens: out of memory\n");
        return -1;
    }
    if (parse_heads(ablate ? ablate : keep, L, NH, sel, err, sizeof err)) {
        bli_term_line(stderr, "bertlens: %s: %s", ablate ? "--ablate" : "--keep", err);
        free(sel);
        return -1;
    }
    if (keep)
        for (int i = 0; i < L * NH; i++) sel[i] = !sel[i];
    bl_state_set_head_mask(s, sel);
    free(sel);
    return 0;
}

/* --ablate or --keep at argv[*i] (value in argv[*i + 1]) into *ablate or *keep.
 * Returns 1 if it was one of them, 0 if not, -1 on a bad use. */
int bli_cli_heads_opt(int argc, char **argv, int *i, const char **ablate, const char **keep) {
    const char *a = argv[*i];
    int is_ablate = !strcmp(a, "--ablate"), is_keep = !strcmp(a, "--keep");
    if (!is_ablate && !is_keep) return 0;
    if (*i + 1 >= argc) {
        bli_term_line(stderr, "bertlens: %s needs a head list L:H[,L:H...]", a);
        return -1;
    }
    if (*ablate || *keep) {
        fprintf(stderr, "bertlens: give --ablate or --keep once, not both or twice\n");
        return -1;
    }
    *(is_ablate ? ablate : keep) = argv[++*i];
    return 1;
}

