/* wasm_api.c — the WebAssembly boundary (EMSCRIPTEN_KEEPALIVE exports).
 *
 * One loaded model, one encoder state, the tokens of the last run. Strings go
 * in as NUL-terminated UTF-8 in wasm memory; results come back as pointers
 * into wasm memory (valid until the next call that runs or loads) that JS
 * views through HEAPF32. Every failing call returns -1 / NULL and leaves a
 * message for blw_error().
 *
 *   blw_simd blw_load blw_error blw_info_json blw_tokenize_json blw_run
 *   blw_forward_ids blw_tokens_json blw_attention blw_norms blw_queries
 *   blw_keys blw_layer_queries blw_layer_keys blw_hidden   (the API in docs/engine.md)
 *   blw_analyze_json blw_rollout blw_head_analyze   analyses (analyze.c)
 *   blw_scores blw_score_terms_json          one head's scores and terms (scores.c)
 *   blw_head_compare                          two runs' heads compared (analyze.c)
 *   blw_set_head_mask blw_embedding          head ablation, sentence embedding
 *   blw_set_threads blw_threads blw_threaded threads of the forward pass
 *   (blw_k_*: the kernels' test entry points, only in the test build:
 *   wasm_kernel_tests.c)
 *   (blw_conv_*: Hugging Face checkpoint -> bundle, wasm_convert.c)
 */
#include "bertlens.h"
#include "text/json.h"
#include "kernels/kernels.h"
#include "base/sizes.h"
#include "base/threads.h"
#include "wasm_api.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __EMSCRIPTEN__
#include <emscripten.h>
#else
#define EMSCRIPTEN_KEEPALIVE
#endif

/* -------------------------------------------------------------- state */

static struct {
    uint8_t *bytes;     /* the bundle (owned; the model borrows it) */
    bl_model *model;
    bl_state *state;    /* reused while flags match and T fits      */
    int32_t capacity;   /* max_tokens of state                      */
    unsigned flags;     /* flags of state                           */
    bl_tokens toks;     /* tokens of the last blw_run               */
    int has_toks;
    int packed_in_place; /* tensors bl_model_pack_in_place re-laid out (-1: it ran out of memory) */
    int toks_ran;       /* the state holds the run of toks (not of a
                           later blw_forward_ids on other ids)      */
    bl_analysis an;     /* kept by blw_analyze_json for blw_rollout */
    uint8_t *mask;      /* [n_layers][n_heads] head mask (1 = masked),
                           applied to every state; NULL: none set   */
    float *emb;         /* [hidden] last blw_embedding              */
    float *scores;      /* [1 + n_terms][T][T] last blw_scores      */
    int no_final;       /* blw_set_final(0): every state skips the
                           final hidden states                      */
    int32_t threads;    /* blw_set_threads (0/1: one thread), given
                           to every state                           */
    char *json;         /* last returned JSON string (owned)        */
    unsigned loads;     /* models loaded so far (wasm_predict.c)    */
    char err[BLI_WASM_ERRLEN];
} g;

static void set_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g.err, sizeof g.err, fmt, ap);
    va_end(ap);
}

/* For wasm_kernel_tests.c (the test build): a fixed message for blw_error. */
void bli_wasm_set_error(const char *msg) { set_error("%s", msg); }

/* For wasm_convert.c: the buffer blw_error() returns, for calls that take (err, errlen). */
char *bli_wasm_err(void) { return g.err; }

/* For wasm_predict.c (wasm_api.h). */
const bl_model *bli_wasm_model(unsigned *loads) {
    if (loads) *loads = g.loads;
    return g.model;
}
bl_state *bli_wasm_state(void) { return g.state; }
const bl_tokens *bli_wasm_run_tokens(void) { return g.has_toks && g.toks_ran ? &g.toks : NULL; }

static void drop_tokens(void) {
    bl_analysis_free(&g.an); /* describes the tokens' run */
    if (g.has_toks) bl_tokens_free(&g.toks);
    memset(&g.toks, 0, sizeof g.toks);
    g.has_toks = 0;
}

static void unload(void) {
    drop_tokens();
    bl_state_free(g.state);
    bl_model_free(g.model);
    free(g.bytes);
    free(g.mask);
    free(g.emb);
    free(g.scores);
    g.scores = NULL;
    g.state = NULL;
    g.model = NULL;
    g.bytes = NULL;
    g.mask = NULL;
    g.emb = NULL;
    g.capacity = 0;
}

/* --------------------------------------------------------------- JSON */
/* JSON text comes from json.h (shared with the CLI); the last result is kept
 * in g.json until the next call. */

static void jb_printf(bli_jbuf *b, const char *fmt, ...) {
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n >= 0) bli_json_raw(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static void jb_str(bli_jbuf *b, const char *s) { bli_json_string(b, s ? s : "", s ? strlen(s) : 0); }

/* Hand the buffer out as the current JSON result (freed on the next one). */
static const char *jb_finish(bli_jbuf *b) {
    if (b->oom) {
        bli_jbuf_free(b);
        set_error("out of memory building JSON");
        return NULL;
    }
    free(g.json);
    g.json = b->data;
    return g.json;
}

/* For wasm_predict.c (wasm_api.h). */
void bli_wasm_json(bli_jbuf *b, const char **out) { *out = jb_finish(b); }


/* ---------------------------------------------------------------- API */

EMSCRIPTEN_KEEPALIVE int blw_simd(void) { return BLK_SIMD; }

EMSCRIPTEN_KEEPALIVE const char *blw_error(void) { return g.err; }

/* Takes ownership of a _malloc'ed bundle. The new bundle is validated before
 * it replaces anything: on failure (-1, reason in blw_error) the model loaded
 * before, if any, stays loaded and usable. */
EMSCRIPTEN_KEEPALIVE int blw_load(uint8_t *bytes, int size) {
    if (!bytes || size <= 0) {
        free(bytes);
        set_error("blw_load: no bundle bytes");
        return -1;
    }
    bl_model *m = bl_model_load(bytes, (size_t)size, g.err, sizeof g.err);
    if (!m) {
        free(bytes);
        return -1;
    }
    /* The engine owns bytes: its q8 matrices become the kernels' panels in
     * place, so a q8 model is held once (bertlens.h). Out of memory there
     * leaves the rest as they were, still usable. */
    g.packed_in_place = bl_model_pack_in_place(m, bytes);
    unload();
    g.model = m;
    g.bytes = bytes;
    g.loads++;
    return 0;
}

EMSCRIPTEN_KEEPALIVE const char *blw_info_json(void) {
    if (!g.model) {
        set_error("no model loaded");
        return NULL;
    }
    static const char *acts[] = {"gelu", "gelu_tanh", "relu", "silu"};
    const bl_config *c = bl_model_config(g.model);
    bli_jbuf b = {0};
    jb_printf(&b, "{\"config\":{\"n_layers\":%d,\"n_heads\":%d,\"hidden\":%d,\"intermediate\":%d,", c->n_layers,
              c->n_heads, c->hidden, c->intermediate);
    jb_printf(&b, "\"max_positions\":%d,\"type_vocab_size\":%d,\"vocab_size\":%d,", c->max_positions,
              c->type_vocab_size, c->vocab_size);
    jb_printf(&b, "\"ln_eps\":%.9g,\"activation\":\"%s\"},\"meta\":{", (double)c->ln_eps,
              c->activation >= 0 && c->activation <= 3 ? acts[c->activation] : "?");
    char val[512];
    for (int i = 0; i < bl_model_n_meta(g.model); i++) {
        if (i) bli_json_raw(&b, ",", 1);
        jb_str(&b, bl_model_meta_key(g.model, i));
        bli_json_raw(&b, ":", 1);
        bl_model_meta_format(g.model, i, val, sizeof val);
        jb_str(&b, val);
    }
    bli_json_raw(&b, "},\"dtype\":", 10);
    jb_str(&b, bl_model_meta_str(g.model, "weights.dtype"));
    uint64_t params = 0, bytes = 0;
    for (int i = 0; i < bl_model_n_tensors(g.model); i++) {
        const bl_tensor *t = bl_model_tensor(g.model, i);
        uint64_t e = 1;
        for (int d = 0; d < t->n_dims; d++) e *= (uint64_t)t->dims[d];
        params += e;
        bytes += t->nbytes;
    }
    jb_printf(&b, ",\"n_tensors\":%d,\"params\":%llu,\"weight_bytes\":%llu,\"simd\":%s,\"packed_in_place\":%d}",
              bl_model_n_tensors(g.model), (unsigned long long)params, (unsigned long long)bytes,
              blw_simd() ? "true" : "false", g.packed_in_place);
    return jb_finish(&b);
}

static int tokenize(const char *a, const char *b, int max_tokens, bl_tokens *out) {
    if (!g.model) {
        set_error("no model loaded");
        return -1;
    }
    if (!a) {
        set_error("no text");
        return -1;
    }
    const bl_config *c = bl_model_config(g.model);
    if (max_tokens <= 0 || max_tokens > c->max_positions) max_tokens = c->max_positions;
    memset(out, 0, sizeof *out);
    return bl_tokenize(bl_model_tokenizer(g.model), a, strlen(a), b, b ? strlen(b) : 0, max_tokens, out, g.err,
                       sizeof g.err);
}

EMSCRIPTEN_KEEPALIVE const char *blw_tokenize_json(const char *a, const char *b, int max_tokens) {
    bl_tokens t;
    bli_jbuf j = {0};
    if (tokenize(a, b, max_tokens, &t)) {
        bli_json_error(&j, g.err);
        return jb_finish(&j);
    }
    bli_json_tokens(&j, bl_model_tokenizer(g.model), &t, 0);
    bl_tokens_free(&t);
    return jb_finish(&j);
}

/* A state for T tokens with these flags: reuse the current one if it fits,
 * else re-size it for the next power of two >= T (min 64, max max_positions).
 * The weights are laid out once per model; a re-size keeps them. */
static int ensure_state(int32_t T, unsigned flags) {
    const bl_config *c = bl_model_config(g.model);
    if (g.state && g.flags == flags && T <= g.capacity) return 0;
    if (T > c->max_positions) { /* before doubling: cap stays <= 2 * 8192 */
        set_error("%d tokens: the model takes at most %d", T, c->max_positions);
        return -1;
    }
    int32_t cap = 64;
    while (cap < T) cap *= 2;
    if (cap > c->max_positions) cap = c->max_positions;
    g.capacity = 0;
    if (!g.state) {
        if (!(g.state = bl_state_new(g.model, cap, flags, g.err, sizeof g.err))) return -1;
        bl_state_set_head_mask(g.state, g.mask);
        bl_state_set_final(g.state, !g.no_final);
        /* threads that cannot start leave the state on one (blw_threads says so) */
        if (g.threads > 1 && bl_state_set_threads(g.state, g.threads, NULL, 0) < 0) g.threads = 1;
    } else if (bl_state_reserve(g.state, cap, flags, g.err, sizeof g.err)) {
        return -1;
    }
    g.capacity = cap;
    g.flags = flags;
    return 0;
}

/* Threads of the forward pass from now on (this state and the next ones;
 * see bl_state_set_threads). In the single-threaded build every n gives 1.
 * In the pthreads build the threads come from the Workers Emscripten
 * starts with the module (PTHREAD_POOL_SIZE, Makefile): ask for at most
 * that many + 1. Returns the threads now used, or -1 (blw_error). */
EMSCRIPTEN_KEEPALIVE int blw_set_threads(int n) {
    if (n < 1) n = 1;
    if (g.state) {
        int got = bl_state_set_threads(g.state, n, g.err, sizeof g.err);
        if (got < 0) return -1;
        n = got;
    } else if (!bli_threads_supported()) {
        n = 1;
    }
    g.threads = n;
    return n;
}

/* Threads the next forward pass runs on. */
EMSCRIPTEN_KEEPALIVE int blw_threads(void) {
    if (g.state) return bl_state_threads(g.state);
    return g.threads > 1 ? g.threads : 1;
}

/* 1 in the pthreads build (bertlens-mt), 0 in the single-threaded one. */
EMSCRIPTEN_KEEPALIVE int blw_threaded(void) { return bli_threads_supported(); }

EMSCRIPTEN_KEEPALIVE int blw_forward_ids(const int32_t *ids, const int32_t *type_ids, int T, int flags,
                                         int qk_layer) {
    g.toks_ran = 0; /* whatever ran before, the state will not hold it */
    bl_analysis_free(&g.an);
    if (!g.model) {
        set_error("no model loaded");
        return -1;
    }
    if (!ids || T <= 0) {
        set_error("no token ids");
        return -1;
    }
    unsigned f = (unsigned)flags & (BL_KEEP_ATTN | BL_KEEP_NORMS | BL_KEEP_QK | BL_KEEP_HIDDEN | BL_KEEP_QK_ALL);
    if (ensure_state(T, f)) return -1;
    if (bl_forward(g.state, ids, type_ids, T, qk_layer, g.err, sizeof g.err)) return -1;
    return T;
}

EMSCRIPTEN_KEEPALIVE int blw_run(const char *a, const char *b, int flags, int qk_layer) {
    drop_tokens();
    if (tokenize(a, b, 0, &g.toks)) return -1;
    g.has_toks = 1;
    int T = blw_forward_ids(g.toks.ids, g.toks.type_ids, g.toks.n, flags, qk_layer);
    g.toks_ran = T > 0;
    return T;
}

EMSCRIPTEN_KEEPALIVE const char *blw_tokens_json(void) {
    if (!g.has_toks) {
        set_error("no tokens: call blw_run first");
        return NULL;
    }
    bli_jbuf j = {0};
    const bl_tokenizer *tk = bl_model_tokenizer(g.model);
    bli_json_tokens(&j, tk, &g.toks, 1);
    /* for the page's labels: how pieces spell words, and which tokens are
     * the model's own specials (<s>, [CLS], <mask>, ... also typed ones) */
    if (!j.oom && j.len) j.len--; /* the closing brace */
    jb_printf(&j, ",\"pieces\":\"%s\",\"special\":[", bl_tokenizer_pieces(tk));
    for (int32_t i = 0; i < g.toks.n; i++) jb_printf(&j, i ? ",%d" : "%d", bl_token_is_special(tk, g.toks.ids[i]));
    bli_json_raw(&j, "]}", 2);
    return jb_finish(&j);
}

EMSCRIPTEN_KEEPALIVE const float *blw_attention(int layer) { return bl_attention(g.state, layer); }
EMSCRIPTEN_KEEPALIVE const float *blw_norms(int layer) { return bl_norms(g.state, layer); }
EMSCRIPTEN_KEEPALIVE const float *blw_queries(void) { return bl_queries(g.state); }
EMSCRIPTEN_KEEPALIVE const float *blw_keys(void) { return bl_keys(g.state); }
EMSCRIPTEN_KEEPALIVE const float *blw_layer_queries(int layer) { return bl_layer_queries(g.state, layer); }
EMSCRIPTEN_KEEPALIVE const float *blw_layer_keys(int layer) { return bl_layer_keys(g.state, layer); }
EMSCRIPTEN_KEEPALIVE const float *blw_hidden(int layer) { return bl_hidden(g.state, layer); }

/* ------------------------------------------------------------ ablation */

/* Head ablation (bl_state_set_head_mask's meaning): mask is [n_layers]
 * [n_heads] bytes, non-zero = that head's attention probabilities times 0;
 * NULL unmasks every head. It applies to every later run until set again or
 * another model is loaded (a load starts unmasked). Returns the number of
 * masked heads, or -1 (no model, out of memory). */
EMSCRIPTEN_KEEPALIVE int blw_set_head_mask(const uint8_t *mask) {
    if (!g.model) {
        set_error("no model loaded");
        return -1;
    }
    const bl_config *c = bl_model_config(g.model);
    const size_t n = (size_t)c->n_layers * c->n_heads; /* <= 64 x 128 (bundle.h) */
    if (!g.mask && !(g.mask = bli_alloc(n, 0, "the head mask", g.err, sizeof g.err))) return -1;
    int count = 0;
    for (size_t i = 0; i < n; i++) count += (g.mask[i] = mask && mask[i] ? 1 : 0);
    if (g.state) bl_state_set_head_mask(g.state, g.mask);
    return count;
}

/* Whether runs compute the final hidden states (bl_state_set_final): 0 when
 * only attention, norms or q/k are wanted (12.5 % less work at 6 layers;
 * blw_embedding and blw_hidden(n_layers) then fail / return NULL), 1 (the
 * default) otherwise. Applies to the current state and every later one. */
EMSCRIPTEN_KEEPALIVE void blw_set_final(int final) {
    g.no_final = !final;
    if (g.state) bl_state_set_final(g.state, final);
}

/* bl_embed of the last run: the sentence-transformers embedding (mean of the
 * final hidden states over all its tokens, L2-normalized); [hidden] floats,
 * valid until the next call that runs or loads. It embeds the tokens as
 * run: to match sentence-transformers, run the text alone, truncated at the
 * model's max_seq_length (bundle metadata sentence.max_seq_length, when
 * present). NULL if nothing has run. */
EMSCRIPTEN_KEEPALIVE const float *blw_embedding(void) {
    if (!g.state || !bl_state_tokens(g.state)) {
        set_error("no run: call blw_run first");
        return NULL;
    }
    const int32_t H = bl_model_config(g.model)->hidden;
    if (!g.emb && !(g.emb = bli_alloc(BLI_BYTES(sizeof(float), H), 0, "the embedding", g.err, sizeof g.err)))
        return NULL;
    return bl_embed(g.state, g.emb, g.err, sizeof g.err) ? NULL : g.emb;
}

/* ------------------------------------------------------------- scores */

/* Head `head` of layer `layer` of the state's last run (which kept that
 * layer's q/k: the page's runs keep every layer's): [1 + n][T][T] floats,
 * the scores its softmax takes, then its n terms in blw_score_terms_json's
 * order (bl_scores), NaN at the keys the model masks out. Valid until the
 * next blw_scores, run or load. NULL + blw_error. */
EMSCRIPTEN_KEEPALIVE const float *blw_scores(int layer, int head) {
    bl_score_info info;
    const int32_t T = g.state ? bl_state_tokens(g.state) : 0;
    if (!T) {
        set_error("no run: call blw_run first");
        return NULL;
    }
    if (bl_score_terms(g.model, layer, &info, g.err, sizeof g.err)) return NULL;
    free(g.scores);
    g.scores = bli_alloc(BLI_BYTES(sizeof(float), 1 + info.n_terms, T, T), 0, "the scores", g.err, sizeof g.err);
    if (!g.scores) return NULL;
    return bl_scores(g.state, layer, head, g.scores, g.scores + (size_t)T * T, g.err, sizeof g.err) ? NULL : g.scores;
}

/* The terms of layer `layer`'s scores (bl_score_terms) as JSON:
 * {"terms": [{"name", "abbr", "about"}], "window": the half width of the
 * layer's window (keys farther from the query are masked), or -1}. */
EMSCRIPTEN_KEEPALIVE const char *blw_score_terms_json(int layer) {
    bl_score_info info;
    if (!g.model) {
        set_error("no model loaded");
        return NULL;
    }
    if (bl_score_terms(g.model, layer, &info, g.err, sizeof g.err)) return NULL;
    bli_jbuf b = {0};
    jb_printf(&b, "{\"terms\":[");
    for (int i = 0; i < info.n_terms; i++) {
        jb_printf(&b, i ? ",{\"name\":" : "{\"name\":");
        jb_str(&b, info.name[i]);
        jb_printf(&b, ",\"abbr\":");
        jb_str(&b, info.abbr[i]);
        jb_printf(&b, ",\"about\":");
        jb_str(&b, info.about[i]);
        jb_printf(&b, "}");
    }
    jb_printf(&b, "],\"window\":%d}", info.window);
    return jb_finish(&b);
}

/* ----------------------------------------------------------- analyses */

/* bl_analyze of the last blw_run as JSON (format in json.h): head
 * features and classes. with_rollout: 0 computes no rollout (the costly
 * part); 1 computes the rollouts (rollout_norm when that run kept norms:
 * flags BL_KEEP_ATTN | BL_KEEP_NORMS) and writes them into the JSON; 2
 * computes them for blw_rollout only (the page reads them as floats: at 512
 * tokens the JSON would be ~45 MB). The analysis is kept until the next run
 * or load. NULL + blw_error on failure. */
EMSCRIPTEN_KEEPALIVE const char *blw_analyze_json(int with_rollout) {
    bl_analysis_free(&g.an);
    if (!g.has_toks || !g.toks_ran || !g.state || bl_state_tokens(g.state) != g.toks.n) {
        set_error("no text run: call blw_run first");
        return NULL;
    }
    if (bl_analyze(g.state, g.toks.ids, g.toks.type_ids, with_rollout ? BL_ANALYZE_ROLLOUT : BL_ANALYZE_HEADS, &g.an,
                   g.err, sizeof g.err))
        return NULL;
    bli_jbuf b = {0};
    bli_json_analysis(&b, bl_model_tokenizer(g.model), g.toks.ids, &g.an, with_rollout == 1);
    return jb_finish(&b);
}

/* Layer `layer`'s rollout [T][T] (norm = 1: the norm-based one) of the
 * analysis kept by blw_analyze_json, as floats in wasm memory; NULL if none. */
EMSCRIPTEN_KEEPALIVE const float *blw_rollout(int norm, int layer) {
    const float *r = norm ? g.an.rollout_norm : g.an.rollout;
    if (!r || layer < 0 || layer >= g.an.n_layers) {
        set_error("no rollout for layer %d: call blw_analyze_json after a blw_run", layer);
        return NULL;
    }
    return r + (size_t)layer * g.an.T * g.an.T;
}

/* Features of one head's attention a [T][T] with token roles [T] (BL_ROLE_*
 * bits) and segments [T] (or NULL): out[0..8] = entropy, cls, sep, punct,
 * prev, self, next, segment, confidence (NaN: undefined), out[9] = the
 * class. For any attention-like matrix, e.g. synthetic ones in tests. */
EMSCRIPTEN_KEEPALIVE int blw_head_analyze(const float *a, int T, const uint8_t *roles, const int32_t *segments,
                                          float *out) {
    bl_head_features f;
    if (!out || bl_head_analyze(a, T, roles, segments, &f)) {
        set_error("blw_head_analyze: no matrix");
        return -1;
    }
    const float v[10] = {f.entropy, f.cls, f.sep, f.punct, f.prev, f.self, f.next, f.segment, f.confidence,
                         (float)f.klass};
    memcpy(out, v, sizeof v);
    return 0;
}

/* bl_head_compare for n heads: head k of a (at a + k * a_stride floats;
 * a_stride 0: the same head a for every k) against head k of b (at
 * b + k * T * T), each [T][T]. out[2k] = Jensen-Shannon distance (base 2,
 * mean over rows), out[2k + 1] = max |b - a|. The pointers may be into the
 * state's attention (blw_attention) or into _malloc'ed copies of another
 * run's. Returns 0, or -1. */
EMSCRIPTEN_KEEPALIVE int blw_head_compare(const float *a, int a_stride, const float *b, int n, int T, float *out) {
    if (!a || !b || !out || n < 1 || T < 1 || a_stride < 0) {
        set_error("blw_head_compare: no heads to compare");
        return -1;
    }
    /* the heads b points at: n x T x T floats, so every offset below fits size_t */
    if (!bli_size_ok(BLI_BYTES(sizeof(float), n, T, T), "blw_head_compare's heads", g.err, sizeof g.err) ||
        !bli_size_ok(BLI_BYTES(sizeof(float), n, a_stride), "blw_head_compare's heads", g.err, sizeof g.err))
        return -1;
    const size_t TT = (size_t)T * T;
    for (int k = 0; k < n; k++) {
        bl_head_diff d;
        if (bl_head_compare(a + (size_t)k * a_stride, b + (size_t)k * TT, T, &d)) {
            set_error("blw_head_compare: bad head %d", k);
            return -1;
        }
        out[2 * k] = (float)d.js;
        out[2 * k + 1] = (float)d.max_abs;
    }
    return 0;
}

