/* task_head_json.c — the task head's output as JSON (task_head.h). */
#include "task_head.h"
#include "base/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void jnum(bli_jbuf *b, double x) {
    char num[BLI_JSON_NUM_CHARS];
    const char *s = bli_json_num(num, x);
    bli_json_raw(b, s, strlen(s));
}

static void jstr(bli_jbuf *b, const char *s) {
    if (s) bli_json_string(b, s, strlen(s));
    else bli_json_raw(b, "null", 4);
}

static void jtoken(bli_jbuf *b, const bl_tokenizer *tk, int32_t id) {
    jstr(b, id >= 0 && id < bl_tokenizer_vocab_size(tk) ? bl_token_str(tk, id) : NULL);
}

static void jfloats(bli_jbuf *b, const float *x, int32_t n, int32_t stride) {
    bli_json_raw(b, "[", 1);
    for (int32_t i = 0; i < n; i++) {
        if (i) bli_json_raw(b, ",", 1);
        jnum(b, x[(size_t)i * stride]);
    }
    bli_json_raw(b, "]", 1);
}

static int32_t argmax(const float *x, int32_t n) {
    int32_t k = 0;
    for (int32_t i = 1; i < n; i++)
        if (x[i] > x[k]) k = i;
    return k;
}

/* The byte offset in UTF-8 s of UTF-16 code unit u (the end of s past it). */
static size_t utf16_to_byte(const char *s, int32_t u) {
    size_t i = 0;
    const size_t n = strlen(s);
    while (i < n && u > 0) {
        const unsigned char c = (unsigned char)s[i];
        const int len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
        u -= len == 4 ? 2 : 1;
        i += (size_t)len;
    }
    return i < n ? i : n;
}

int bli_qa_best_span(const float *start, const float *end, const bl_tokens *toks, const bl_tokenizer *tk,
                     int32_t max_span, int32_t *s_out, int32_t *e_out) {
    double best = -INFINITY;
    int found = 0;
    for (int32_t s = toks->n_a; s < toks->n; s++) {
        if (bl_token_is_special(tk, toks->ids[s])) continue;
        for (int32_t e = s; e < toks->n && e - s < max_span; e++) {
            if (bl_token_is_special(tk, toks->ids[e])) continue;
            const double v = (double)start[s] + (double)end[e];
            if (v > best) best = v, *s_out = s, *e_out = e, found = 1;
        }
    }
    return found ? 0 : -1;
}

static void labels_json(bli_jbuf *b, const bl_task_head *h) {
    bli_json_raw(b, ",\"labels\":[", 11);
    for (int32_t c = 0; c < bl_task_head_classes(h); c++) {
        if (c) bli_json_raw(b, ",", 1);
        jstr(b, bl_task_head_label(h, c));
    }
    bli_json_raw(b, "]", 1);
}

int bli_task_json(bli_jbuf *b, const bl_task_head *h, const bl_tokenizer *tk, const bl_tokens *toks,
                  const char *text_b, const float *hidden, char *err, size_t errlen) {
    const int32_t T = toks->n, C = bl_task_head_classes(h), kind = bl_task_head_kind(h);
    const int32_t rows = bl_task_head_rows(h, T);
    float *logits = malloc(sizeof(float) * (size_t)rows * C), *probs = malloc(sizeof(float) * (size_t)rows * C);
    if (!logits || !probs) {
        free(logits), free(probs);
        bli_set_err(err, errlen, "out of memory");
        return -1;
    }
    if (bl_task_head_forward(h, hidden, T, logits, err, errlen)) {
        free(logits), free(probs);
        return -1;
    }
    bl_task_head_probs(h, logits, rows, probs);
    static const char *const problems[] = {"single_label_classification", "multi_label_classification", "regression"};
    const int32_t problem = bl_task_head_problem(h);
    bli_json_raw(b, "{\"head\":", 8);
    jstr(b, bl_task_kind_name(kind));
    if (kind != BL_TASK_QA) {
        bli_json_raw(b, ",\"problem_type\":", 16);
        jstr(b, problems[problem]);
    }
    bli_json_raw(b, ",\"tokens\":[", 11);
    for (int32_t t = 0; t < T; t++) {
        if (t) bli_json_raw(b, ",", 1);
        jtoken(b, tk, toks->ids[t]);
    }
    bli_json_raw(b, "],\"ids\":[", 9);
    for (int32_t t = 0; t < T; t++) {
        if (t) bli_json_raw(b, ",", 1);
        bli_json_int(b, toks->ids[t]);
    }
    bli_json_raw(b, "]", 1);
    if (kind == BL_TASK_SEQUENCE) {
        labels_json(b, h);
        bli_json_raw(b, ",\"logits\":", 10);
        jfloats(b, logits, C, 1);
        if (problem == BL_PROBLEM_REGRESSION) {
            bli_json_raw(b, ",\"value\":", 9);
            jnum(b, logits[0]);
        } else {
            bli_json_raw(b, ",\"probs\":", 9);
            jfloats(b, probs, C, 1);
            bli_json_raw(b, ",\"label\":", 9);
            jstr(b, bl_task_head_label(h, argmax(logits, C)));
        }
    } else if (kind == BL_TASK_TOKEN) {
        labels_json(b, h);
        bli_json_raw(b, ",\"positions\":[", 14);
        for (int32_t t = 0; t < T; t++) {
            bli_json_raw(b, t ? ",{\"index\":" : "{\"index\":", t ? 10 : 9);
            bli_json_int(b, t);
            bli_json_raw(b, ",\"token\":", 9);
            jtoken(b, tk, toks->ids[t]);
            bli_json_raw(b, ",\"logits\":", 10);
            jfloats(b, logits + (size_t)t * C, C, 1);
            bli_json_raw(b, ",\"probs\":", 9);
            jfloats(b, probs + (size_t)t * C, C, 1);
            bli_json_raw(b, ",\"label\":", 9);
            jstr(b, bl_task_head_label(h, argmax(logits + (size_t)t * C, C)));
            bli_json_raw(b, "}", 1);
        }
        bli_json_raw(b, "]", 1);
    } else { /* question answering: column 0 start, 1 end; softmax over the tokens */
        float *sp = malloc(sizeof(float) * 2 * (size_t)T), *ep = sp ? sp + T : NULL;
        if (!sp) {
            free(logits), free(probs);
            bli_set_err(err, errlen, "out of memory");
            return -1;
        }
        float *sl = probs, *el = probs + T; /* the logits by column, in probs' memory */
        for (int32_t t = 0; t < T; t++) sl[t] = logits[(size_t)t * 2], el[t] = logits[(size_t)t * 2 + 1];
        for (int col = 0; col < 2; col++) {
            const float *l = col ? el : sl;
            float *p = col ? ep : sp;
            double mx = -INFINITY, sum = 0;
            for (int32_t t = 0; t < T; t++) mx = l[t] > mx ? l[t] : mx;
            for (int32_t t = 0; t < T; t++) sum += exp((double)l[t] - mx);
            for (int32_t t = 0; t < T; t++) p[t] = (float)(exp((double)l[t] - mx) / sum);
        }
        bli_json_raw(b, ",\"start_logits\":", 16);
        jfloats(b, sl, T, 1);
        bli_json_raw(b, ",\"end_logits\":", 14);
        jfloats(b, el, T, 1);
        bli_json_raw(b, ",\"start_probs\":", 15);
        jfloats(b, sp, T, 1);
        bli_json_raw(b, ",\"end_probs\":", 13);
        jfloats(b, ep, T, 1);
        int32_t s = 0, e = 0;
        bli_json_raw(b, ",\"span\":", 8);
        if (bli_qa_best_span(sl, el, toks, tk, BLI_QA_MAX_SPAN, &s, &e)) {
            bli_json_raw(b, "null", 4);
        } else {
            bli_json_raw(b, "{\"start\":", 9);
            bli_json_int(b, s);
            bli_json_raw(b, ",\"end\":", 7);
            bli_json_int(b, e);
            bli_json_raw(b, ",\"text\":", 8);
            if (text_b && toks->offsets) {
                const size_t b0 = utf16_to_byte(text_b, toks->offsets[2 * s]);
                const size_t b1 = utf16_to_byte(text_b, toks->offsets[2 * e + 1]);
                bli_json_string(b, text_b + b0, b1 > b0 ? b1 - b0 : 0);
            } else {
                bli_json_raw(b, "null", 4);
            }
            bli_json_raw(b, ",\"score\":", 9);
            jnum(b, (double)sl[s] + (double)el[e]);
            bli_json_raw(b, ",\"prob\":", 8);
            jnum(b, (double)sp[s] * (double)ep[e]);
            bli_json_raw(b, "}", 1);
        }
        free(sp);
    }
    bli_json_raw(b, "}", 1);
    free(logits), free(probs);
    if (b->oom) {
        bli_set_err(err, errlen, "out of memory writing the head's output");
        return -1;
    }
    return 0;
}
