/* convert.c — Hugging Face BERT checkpoint -> bertlens bundle (convert.h).
 *
 * Stages, as tools/convert.py: config -> vocabulary -> tensors -> write.
 * Byte-identity with convert.py rests on doing numpy's float32 arithmetic
 * one IEEE operation at a time (no fused or wider intermediate):
 *   q8  scale = fl(max|w| / 127), inv = fl(1 / scale), q = clip(rint(fl(w * inv)), -127, 127)
 *   q4  scale = fl(w[argmax|w|] / -8), inv = fl(1 / scale), q = clip(rint(fl(w * inv)), -8, 7)
 *   f16 round to nearest even, overflow to infinity (numpy's astype)
 *   QN  (q8h, q9..q12, fidelity.qn_rtn) in float64: scale = f16(max|w| / qmax)
 *       rounded from the double directly, q = clip(rint(w / scale), -qmax, qmax)
 *       (0 where the scale is 0), qmax = 2^(B-1) - 1
 * rint is round-half-to-even (the default rounding mode, as np.rint).
 * Source tensors of dtype F16, BF16 and F64 become float32 first (F64 rounds
 * to nearest), as np.asarray(..., dtype=float32) does.
 */
#include "convert.h"
#include "bertlens.h"
#include "bundle.h"
#include "dtype.h"
#include "error.h"
#include "json.h"
#include "json_read.h"
#include "sizes.h"
#include "utf8.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALIGN 64u
#define MAX_FILES 64

/* ------------------------------------------------------------ sha256 */

typedef struct {
    uint32_t h[8];
    uint64_t len;
    uint8_t buf[64];
    size_t n;
} sha256;

static const uint32_t K256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
    0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
    0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
    0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha256_block(sha256 *s, const uint8_t *p) {
    uint32_t w[64], a, b, c, d, e, f, g, h;
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3], e = s->h[4], f = s->h[5], g = s->h[6], h = s->h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = h + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) + K256[i] + w[i];
        uint32_t t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
    }
    s->h[0] += a, s->h[1] += b, s->h[2] += c, s->h[3] += d, s->h[4] += e, s->h[5] += f, s->h[6] += g, s->h[7] += h;
}

static void sha256_init(sha256 *s) {
    static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, h0, sizeof h0);
    s->len = 0;
    s->n = 0;
}

static void sha256_update(sha256 *s, const void *data, size_t n) {
    const uint8_t *p = data;
    s->len += n;
    if (s->n) {
        size_t k = 64 - s->n < n ? 64 - s->n : n;
        memcpy(s->buf + s->n, p, k);
        s->n += k, p += k, n -= k;
        if (s->n < 64) return;
        sha256_block(s, s->buf);
        s->n = 0;
    }
    for (; n >= 64; p += 64, n -= 64) sha256_block(s, p);
    memcpy(s->buf, p, n);
    s->n = n;
}

static void sha256_hex(sha256 *s, char out[65]) {
    uint64_t bits = s->len * 8;
    uint8_t pad[72] = {0x80};
    size_t padn = (s->n < 56 ? 56 : 120) - s->n;
    for (int i = 0; i < 8; i++) pad[padn + i] = (uint8_t)(bits >> (56 - 8 * i));
    sha256_update(s, pad, padn + 8);
    for (int i = 0; i < 8; i++) snprintf(out + 8 * i, 9, "%08x", (unsigned)s->h[i]);
}

/* ------------------------------------------------------------- state */

enum { SRC_F32, SRC_F16, SRC_BF16, SRC_F64, SRC_I64, SRC_OTHER };
static const char *const SRC_NAMES[] = {"F32", "F16", "BF16", "F64", "I64"};
static const int SRC_SIZE[] = {4, 2, 2, 8, 8, 0};


/* DistilBERT names -> BERT names, replaced in this order (convert.py
 * DISTIL_NAMES); its missing token-type embeddings become DISTIL_TYPES rows
 * of zeros. */
static const char *const DISTIL_NAMES[][2] = {
    {"transformer.layer.", "encoder.layer."},          {".attention.q_lin.", ".attention.self.query."},
    {".attention.k_lin.", ".attention.self.key."},     {".attention.v_lin.", ".attention.self.value."},
    {".attention.out_lin.", ".attention.output.dense."}, {".sa_layer_norm.", ".attention.output.LayerNorm."},
    {".ffn.lin1.", ".intermediate.dense."},            {".ffn.lin2.", ".output.dense."},
    {".output_layer_norm.", ".output.LayerNorm."}};
#define DISTIL_TYPES 2
#define DISTIL_TOKEN_TYPES "embeddings.token_type_embeddings.weight"

typedef struct {
    char *name; /* relative to the checkpoint folder */
    char *bytes; /* NULL: only the size is known */
    uint64_t size;
} cfile;

typedef struct {
    char *name;   /* normalized (no "bert." / "model.", LayerNorm.weight/bias) */
    int src;      /* SRC_* */
    int n_dims;
    int64_t dims[4];
    int w;        /* weight file */
    uint64_t off, nbytes; /* absolute offset in the weight file */
} stensor;

typedef struct {
    char name[96];
    int n_dims;
    int64_t dims[2];
    int dtype;      /* bundle dtype */
    int src;        /* stensors index */
    uint64_t off, nbytes; /* in the data section */
    uint32_t crc;
    int done;
} otensor;

struct bli_conv {
    int dtype, embed_dtype, cased;
    int distil; /* a DistilBERT checkpoint */
    char *name, *license;
    bli_conv_log log;
    void *log_ctx;

    cfile files[MAX_FILES];
    int n_files;
    const char *dir; /* "" or "0_Transformer/" */

    bl_config cfg;
    float ln_eps;
    const char *activation;
    bli_jbuf meta; /* config + tokenizer entries */
    int n_meta;
    char *max_seq; /* sentence.max_seq_length text, or NULL */

    char *weights[MAX_FILES];
    uint64_t weight_size[MAX_FILES];
    int n_weights, sharded, headers_set;

    stensor *st;
    int n_st, cap_st;

    otensor *ot;
    int n_ot;
    uint64_t meta_size, table_size, data_offset, data_size, file_size;
    int planned;

    sha256 sha;
    uint64_t hashed;
};

static void logf_(bli_conv *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(bli_conv *c, const char *fmt, ...) {
    if (!c->log) return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    c->log(c->log_ctx, line);
}

static char *dup_s(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

bli_conv *bli_conv_new(const bli_conv_opts *o, bli_conv_log log, void *log_ctx, char *err, size_t errlen) {
    const char *dt = o && o->dtype ? o->dtype : "q8";
    const char *et = o && o->embed_dtype ? o->embed_dtype : dt;
    if (bli_dtype_parse(dt) < 0) {
        bli_set_err(err, errlen, "unknown dtype '%s' (" BLI_DTYPE_LIST ")", dt);
        return NULL;
    }
    if (bli_dtype_parse(et) < 0) {
        bli_set_err(err, errlen, "unknown embedding dtype '%s' (" BLI_DTYPE_LIST ")", et);
        return NULL;
    }
    bli_conv *c = calloc(1, sizeof *c);
    if (!c) goto oom;
    c->dtype = bli_dtype_parse(dt);
    c->embed_dtype = bli_dtype_parse(et);
    c->cased = o && o->cased;
    c->log = log;
    c->log_ctx = log_ctx;
    c->name = dup_s(o && o->name && *o->name ? o->name : "checkpoint");
    c->license = o && o->license ? dup_s(o->license) : NULL;
    if (!c->name || (o && o->license && !c->license)) goto oom;
    sha256_init(&c->sha);
    return c;
oom:
    bli_conv_free(c);
    bli_set_err(err, errlen, "out of memory");
    return NULL;
}

void bli_conv_free(bli_conv *c) {
    if (!c) return;
    for (int i = 0; i < c->n_files; i++) {
        free(c->files[i].name);
        free(c->files[i].bytes);
    }
    for (int i = 0; i < c->n_weights; i++) free(c->weights[i]);
    for (int i = 0; i < c->n_st; i++) free(c->st[i].name);
    free(c->st);
    free(c->ot);
    bli_jbuf_free(&c->meta);
    free(c->max_seq);
    free(c->name);
    free(c->license);
    free(c);
}

/* ------------------------------------------------------------- files */

static const char *const TEXT_FILES[] = {"config.json",           "vocab.txt",
                                         "tokenizer.json",        "tokenizer_config.json",
                                         "sentence_bert_config.json", "model.safetensors.index.json"};
static const char *const SIZE_FILES[] = {"model.safetensors", "pytorch_model.bin"};

static int base_match(const char *name, const char *const *list, int n) {
    const char *b = name;
    if (!strncmp(b, "0_Transformer/", 14)) b += 14;
    if (strchr(b, '/')) return 0;
    for (int i = 0; i < n; i++)
        if (!strcmp(b, list[i])) return 1;
    return 0;
}

static int is_shard_name(const char *name) {
    const char *b = !strncmp(name, "0_Transformer/", 14) ? name + 14 : name;
    size_t n = strlen(b);
    return !strchr(b, '/') && n > 12 && !strcmp(b + n - 12, ".safetensors");
}

int bli_conv_wants(const char *name) {
    if (base_match(name, TEXT_FILES, (int)(sizeof TEXT_FILES / sizeof *TEXT_FILES))) return BLI_CONV_WANT_TEXT;
    if (base_match(name, SIZE_FILES, 2) || is_shard_name(name)) return BLI_CONV_WANT_SIZE;
    return BLI_CONV_WANT_NONE;
}

int bli_conv_add_file(bli_conv *c, const char *name, const void *bytes, uint64_t size, char *err, size_t errlen) {
    if (!bli_conv_wants(name)) return 0;
    if (c->n_files == MAX_FILES) {
        bli_set_err(err, errlen, "too many checkpoint files (more than %d)", MAX_FILES);
        return -1;
    }
    cfile *f = &c->files[c->n_files];
    f->name = dup_s(name);
    f->size = size;
    if (bytes) {
        f->bytes = malloc((size_t)size + 1);
        if (f->bytes) {
            memcpy(f->bytes, bytes, (size_t)size);
            f->bytes[size] = 0;
        }
    }
    if (!f->name || (bytes && !f->bytes)) {
        free(f->name);
        free(f->bytes);
        bli_set_err(err, errlen, "out of memory reading %s", name);
        return -1;
    }
    c->n_files++;
    return 0;
}

static const cfile *file_at(const bli_conv *c, const char *dir, const char *base) {
    char path[256];
    snprintf(path, sizeof path, "%s%s", dir, base);
    for (int i = c->n_files; i-- > 0;)
        if (!strcmp(c->files[i].name, path)) return &c->files[i];
    return NULL;
}

/* In the model folder, else in the checkpoint root (convert.py find_file). */
static const cfile *find_file(const bli_conv *c, const char *base) {
    const cfile *f = file_at(c, c->dir, base);
    return f ? f : file_at(c, "", base);
}

static bli_jv *parse_file(const cfile *f, char *err, size_t errlen) {
    char e[256];
    bli_jv *v = bli_jparse(f->bytes, (size_t)f->size, e, sizeof e);
    if (!v) bli_set_err(err, errlen, "%s: %s", f->name, e);
    return v;
}

/* ------------------------------------------------------------ config */

/* Other architectures, named so that the refusal says why. */
static const struct {
    const char *type, *why;
} OTHER_ARCHS[] = {
    {"roberta", "RoBERTa uses a byte-level BPE tokenizer and offset positions, not BERT's WordPiece"},
    {"xlm-roberta", "XLM-RoBERTa uses a SentencePiece tokenizer and offset positions, not BERT's WordPiece"},
    {"camembert", "CamemBERT is RoBERTa-based (SentencePiece tokenizer)"},
    {"albert", "ALBERT shares one layer's weights across layers and uses SentencePiece"},
    {"deberta", "DeBERTa uses disentangled relative-position attention"},
    {"deberta-v2", "DeBERTa uses disentangled relative-position attention"},
    {"mpnet", "MPNet uses relative-position attention"},
    {"nomic_bert", "nomic-bert uses rotary positions and SwiGLU"},
    {"new", "this gte variant uses rotary positions"},
    {"modernbert", "ModernBERT uses rotary positions and GeGLU"},
    {"gpt2", "GPT-2 is a decoder with byte-level BPE"},
    {"t5", "T5 is an encoder-decoder with SentencePiece"},
};

/* An integer of config.json within [lo, hi]: the loader's range for the
 * bundle key it becomes (bundle.h BL_MAX_*), refused in the loader's words
 * ("<key> = <v> is out of range <lo>..<hi>") before anything is written. */
static int cfg_int(const bli_jv *cfg, const char *key, int64_t dflt, int64_t lo, int64_t hi, const char *bkey,
                   int32_t *out, char *err, size_t errlen) {
    const bli_jv *v = bli_jget(cfg, key);
    int64_t x = dflt;
    if (!v && dflt < 0) {
        bli_set_err(err, errlen, "config.json has no %s", key);
        return -1;
    }
    if (v) {
        if (v->type != BLI_JNUM || !v->is_int) {
            bli_set_err(err, errlen, "config.json: %s must be an integer", key);
            return -1;
        }
        x = v->ival;
    }
    if (x < lo || x > hi) {
        bli_set_err(err, errlen, "config.json: %s = %lld is out of range %lld..%lld (the bundle's %s)", key,
                    (long long)x, (long long)lo, (long long)hi, bkey);
        return -1;
    }
    *out = (int32_t)x;
    return 0;
}

static int stage_config(bli_conv *c, const bli_jv *cfg, char *err, size_t errlen) {
    if (!cfg || cfg->type != BLI_JOBJ) {
        bli_set_err(err, errlen, "config.json is not a JSON object");
        return -1;
    }
    const bli_jv *mt = bli_jget(cfg, "model_type");
    const char *type = mt && mt->type == BLI_JSTR ? mt->str : "(none)";
    const bli_jv *archs = bli_jget(cfg, "architectures");
    const char *arch = archs && archs->type == BLI_JARR && archs->n && archs->items[0].type == BLI_JSTR
                           ? archs->items[0].str
                           : "?";
    c->distil = !strcmp(type, "distilbert");
    if (strcmp(type, "bert") != 0 && strcmp(type, "electra") != 0 && !c->distil) {
        const char *why = "bertlens converts BERT-architecture encoders with a WordPiece vocabulary";
        for (size_t i = 0; i < sizeof OTHER_ARCHS / sizeof *OTHER_ARCHS; i++)
            if (!strcmp(type, OTHER_ARCHS[i].type)) why = OTHER_ARCHS[i].why;
        bli_set_err(err, errlen,
                    "model_type is '%s' (%s): only BERT checkpoints (model_type 'bert': BERT, MiniLM, bge, e5, "
                    "gte), ELECTRA discriminators and DistilBERT are supported; %s",
                    type, arch, why);
        return -1;
    }
    /* An ELECTRA encoder is BERT's (names under "electra."), unless its
     * embeddings are narrower than the encoder and pass a projection first. */
    const bli_jv *es = bli_jget(cfg, "embedding_size"), *hs = bli_jget(cfg, "hidden_size");
    if (!strcmp(type, "electra") && es && hs &&
        (es->type != BLI_JNUM || hs->type != BLI_JNUM || es->num != hs->num)) {
        bli_set_err(err, errlen,
                    "ELECTRA with embedding_size %g != hidden_size %g needs its embeddings_project layer, which "
                    "bertlens does not run (ELECTRA checkpoints whose embedding_size equals hidden_size, such as "
                    "the base and large discriminators, convert)",
                    es->num, hs->num);
        return -1;
    }
    static const char *const acts[][2] = {
        {"gelu", "gelu"}, {"gelu_new", "gelu_tanh"}, {"gelu_pytorch_tanh", "gelu_tanh"}, {"relu", "relu"}};
    /* DistilBERT: BERT's encoder under other names (DISTIL_NAMES), LayerNorm eps
     * 1e-12, no token types (DISTIL_TYPES rows of zeros). */
    const char *const *key = c->distil ? (const char *const[]){"n_layers", "n_heads", "dim", "hidden_dim", "activation"}
                                       : (const char *const[]){"num_hidden_layers", "num_attention_heads", "hidden_size",
                                                               "intermediate_size", "hidden_act"};
    const bli_jv *act = bli_jget(cfg, key[4]);
    const char *a = act ? (act->type == BLI_JSTR ? act->str : "(not a string)") : "gelu";
    c->activation = NULL;
    for (int i = 0; i < 4; i++)
        if (!strcmp(a, acts[i][0])) c->activation = acts[i][1];
    if (!c->activation) {
        bli_set_err(err, errlen, "unsupported hidden_act '%s' (supported: gelu, gelu_new, gelu_pytorch_tanh, relu)",
                    a);
        return -1;
    }
    const bli_jv *pet = c->distil ? NULL : bli_jget(cfg, "position_embedding_type");
    if (pet && (pet->type != BLI_JSTR || strcmp(pet->str, "absolute"))) {
        bli_set_err(err, errlen, "position_embedding_type '%s' is not supported (only 'absolute')",
                    pet->type == BLI_JSTR ? pet->str : "?");
        return -1;
    }
    bl_config *k = &c->cfg;
    if (cfg_int(cfg, key[0], -1, 1, BL_MAX_LAYERS, "bert.n_layers", &k->n_layers, err, errlen) ||
        cfg_int(cfg, key[1], -1, 1, BL_MAX_HEADS, "bert.n_heads", &k->n_heads, err, errlen) ||
        cfg_int(cfg, key[2], -1, 1, BL_MAX_HIDDEN, "bert.hidden", &k->hidden, err, errlen) ||
        cfg_int(cfg, key[3], -1, 1, BL_MAX_INTERMEDIATE, "bert.intermediate", &k->intermediate, err, errlen) ||
        cfg_int(cfg, "max_position_embeddings", -1, 1, BL_MAX_POSITIONS, "bert.max_positions", &k->max_positions,
                err, errlen) ||
        cfg_int(cfg, "vocab_size", -1, BL_MIN_VOCAB, BL_MAX_VOCAB, "bert.vocab_size", &k->vocab_size, err, errlen))
        return -1;
    if (c->distil) k->type_vocab_size = DISTIL_TYPES;
    else if (cfg_int(cfg, "type_vocab_size", 2, 1, BL_MAX_TYPE_VOCAB, "bert.type_vocab_size", &k->type_vocab_size,
                     err, errlen))
        return -1;
    const bli_jv *eps = c->distil ? NULL : bli_jget(cfg, "layer_norm_eps");
    double e = 1e-12;
    if (eps) {
        if (eps->type != BLI_JNUM) {
            bli_set_err(err, errlen, "config.json: layer_norm_eps must be a number");
            return -1;
        }
        e = eps->num;
    }
    /* struct.pack('<f'): round to nearest; the loader wants the float32 in (0, 1) */
    c->ln_eps = e > 0 && e < 1 ? (float)e : 0.0f;
    if (!(c->ln_eps > 0.0f && c->ln_eps < 1.0f)) {
        bli_set_err(err, errlen, "config.json: layer_norm_eps = %g (float32 %g) is not in (0, 1) (the bundle's bert.ln_eps)",
                    e, e > 0 && e < 1 ? (double)(float)e : e);
        return -1;
    }
    if (k->hidden % k->n_heads) {
        bli_set_err(err, errlen, "%s %d is not a multiple of %s %d", key[2], k->hidden, key[1],
                    k->n_heads);
        return -1;
    }
    logf_(c,
          "[config] bert: %d layers x %d heads, hidden %d, intermediate %d, positions %d, vocab %d, eps %g, %s",
          k->n_layers, k->n_heads, k->hidden, k->intermediate, k->max_positions, k->vocab_size, e, c->activation);
    return 0;
}

/* ----------------------------------------------------------- metadata */

static void put32(bli_jbuf *b, uint32_t v) {
    uint8_t p[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    bli_json_raw(b, (const char *)p, 4);
}

static void put64(bli_jbuf *b, uint64_t v) {
    put32(b, (uint32_t)v);
    put32(b, (uint32_t)(v >> 32));
}

static void meta_key(bli_jbuf *b, const char *key, uint32_t type) {
    put32(b, (uint32_t)strlen(key));
    bli_json_raw(b, key, strlen(key));
    put32(b, type);
}

static void meta_u32(bli_conv *c, const char *key, uint32_t v) {
    meta_key(&c->meta, key, BL_META_U32);
    put32(&c->meta, v);
    c->n_meta++;
}

static void meta_str(bli_jbuf *b, const char *key, const char *s) {
    meta_key(b, key, BL_META_STR);
    put32(b, (uint32_t)strlen(s));
    bli_json_raw(b, s, strlen(s));
}

/* ---------------------------------------------------------- vocabulary */

typedef struct {
    const char *s;
    uint32_t len;
} tok;

/* The id of a special token: tokenizer_config.json's entry (a string or an
 * {"content": ...} object) else the default; the last id holding it. */
static int special(const bli_jv *tc, const char *key, const char *dflt, const tok *toks, int n, uint32_t *id,
                   char *err, size_t errlen) {
    const bli_jv *v = bli_jget(tc, key);
    const char *s = dflt;
    size_t len = strlen(dflt);
    if (v && v->type == BLI_JOBJ) v = bli_jget(v, "content");
    if (v) {
        if (v->type != BLI_JSTR) {
            bli_set_err(err, errlen, "special token %s in tokenizer_config.json is not a string", key);
            return -1;
        }
        s = v->str;
        len = v->len;
    }
    for (int i = n; i-- > 0;)
        if (toks[i].len == len && !memcmp(toks[i].s, s, len)) {
            *id = (uint32_t)i;
            return 0;
        }
    bli_set_err(err, errlen, "special token '%.*s' (%s) is not in the vocabulary", (int)(len > 64 ? 64 : len), s,
                key);
    return -1;
}

/* A boolean setting: tokenizer_config.json's key, else the normalizer's, else dflt (-1: None). */
static int setting(const bli_jv *tc, const char *key, const bli_jv *norm, const char *nkey, int dflt) {
    const bli_jv *v = bli_jget(tc, key);
    if (!v) v = bli_jget(norm, nkey);
    if (!v) return dflt;
    if (v->type == BLI_JNULL) return -1;
    return bli_jtruthy(v);
}

static int stage_vocab(bli_conv *c, char *err, size_t errlen) {
    int rc = -1;
    bli_jv *tj = NULL, *tcv = NULL;
    tok *toks = NULL;
    int n = 0;
    const cfile *tjf = find_file(c, "tokenizer.json"), *vf = find_file(c, "vocab.txt");
    const cfile *tcf = find_file(c, "tokenizer_config.json");
    const char *from;
    if (tjf && !(tj = parse_file(tjf, err, errlen))) goto out;
    if (tcf && !(tcv = parse_file(tcf, err, errlen))) goto out;
    if (vf) {
        from = vf->name;
        if (bli_utf8_check(vf->bytes, (size_t)vf->size, NULL)) {
            bli_set_err(err, errlen, "%s is not valid UTF-8", vf->name);
            goto out;
        }
        size_t lines = 1;
        for (uint64_t i = 0; i < vf->size; i++) lines += vf->bytes[i] == '\n';
        toks = calloc(lines, sizeof *toks);
        if (!toks) goto oom;
        const char *p = vf->bytes, *end = vf->bytes + vf->size;
        for (;;) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            const char *e = nl ? nl : end;
            if (!nl && p == end) break; /* a final newline ends the last token */
            size_t len = (size_t)(e - p);
            while (len && p[len - 1] == '\r') len--;
            toks[n].s = p;
            toks[n].len = (uint32_t)len;
            n++;
            if (!nl) break;
            p = nl + 1;
        }
    } else if (tj) {
        from = tjf->name;
        const bli_jv *model = bli_jget(tj, "model"), *type = bli_jget(model, "type");
        if (!type || type->type != BLI_JSTR || strcmp(type->str, "WordPiece")) {
            bli_set_err(err, errlen, "%s: tokenizer model is '%s', not WordPiece%s", tjf->name,
                        type && type->type == BLI_JSTR ? type->str : "(none)",
                        type && type->type == BLI_JSTR && !strcmp(type->str, "BPE")
                            ? " (a byte-level BPE tokenizer, as RoBERTa's: not a BERT vocabulary)"
                            : "");
            goto out;
        }
        const bli_jv *vocab = bli_jget(model, "vocab");
        if (!vocab || vocab->type != BLI_JOBJ) {
            bli_set_err(err, errlen, "%s: model.vocab is not an object", tjf->name);
            goto out;
        }
        toks = calloc(vocab->n ? vocab->n : 1, sizeof *toks);
        if (!toks) goto oom;
        n = (int)vocab->n;
        for (size_t i = 0; i < vocab->n; i++) {
            const bli_jv *it = &vocab->items[i];
            if (it->type != BLI_JNUM || !it->is_int || it->ival < 0 || it->ival >= n || toks[it->ival].s) {
                bli_set_err(err, errlen, "%s: vocabulary ids are not 0..%d", tjf->name, n - 1);
                goto out;
            }
            toks[it->ival].s = it->key;
            toks[it->ival].len = (uint32_t)it->key_len;
        }
    } else {
        bli_set_err(err, errlen, "%s: no vocab.txt or tokenizer.json found", *c->dir ? c->dir : "checkpoint folder");
        goto out;
    }
    if (n != c->cfg.vocab_size) {
        bli_set_err(err, errlen, "%s has %d tokens but config.json says vocab_size %d", from, n, c->cfg.vocab_size);
        goto out;
    }
    const bli_jv *norm = bli_jget(tj, "normalizer");
    if (norm && norm->type != BLI_JOBJ) norm = NULL;
    int lower = setting(tcv, "do_lower_case", norm, "lowercase", 1);
    int strip = setting(tcv, "strip_accents", norm, "strip_accents", -1);
    int chinese = setting(tcv, "tokenize_chinese_chars", norm, "handle_chinese_chars", 1);
    if (lower < 0) lower = 0; /* None */
    if (chinese < 0) chinese = 0;
    if (c->cased) lower = 0, strip = 0;
    if (strip < 0) strip = lower; /* Hugging Face: follows lowercase when unset */
    /* Words longer than this are one [UNK]. Hugging Face ships 100; the
     * loader accepts 1..BL_MAX_CHARS_PER_WORD (the WordPiece search is
     * bounded by it): 0 is refused in the loader's words, a larger value is
     * capped at the limit with a note (only a word longer than the cap,
     * never seen in real text, tokenizes differently: [UNK]). */
    const bli_jv *mc = bli_jget(bli_jget(tj, "model"), "max_input_chars_per_word");
    int64_t max_chars = 100;
    if (mc) {
        if (mc->type != BLI_JNUM || !(mc->num > -1e18 && mc->num < 1e18)) {
            bli_set_err(err, errlen, "%s: max_input_chars_per_word must be a number", tjf->name);
            goto out;
        }
        max_chars = (int64_t)mc->num;
        if (max_chars < 1) {
            bli_set_err(err, errlen,
                        "%s: max_input_chars_per_word = %lld is out of range 1..%u (the bundle's "
                        "tokenizer.max_chars_per_word)",
                        tjf->name, (long long)max_chars, BL_MAX_CHARS_PER_WORD);
            goto out;
        }
        if (max_chars > (int64_t)BL_MAX_CHARS_PER_WORD) {
            logf_(c, "[vocab]  max_input_chars_per_word %lld capped at %u (the bundle's limit; a longer word is [UNK])",
                  (long long)max_chars, BL_MAX_CHARS_PER_WORD);
            max_chars = BL_MAX_CHARS_PER_WORD;
        }
    }
    for (int i = 0; i < n; i++)
        if (toks[i].len > BL_MAX_TOKEN_BYTES) {
            bli_set_err(err, errlen, "%s: vocabulary entry %d is %u bytes long (at most %u)", from, i, toks[i].len,
                        BL_MAX_TOKEN_BYTES);
            goto out;
        }
    uint32_t ids[5];
    static const char *const sp[5][2] = {{"unk_token", "[UNK]"}, {"cls_token", "[CLS]"}, {"sep_token", "[SEP]"},
                                         {"pad_token", "[PAD]"}, {"mask_token", "[MASK]"}};
    for (int i = 0; i < 5; i++)
        if (special(tcv, sp[i][0], sp[i][1], toks, n, &ids[i], err, errlen)) goto out;

    /* Metadata up to the provenance, in convert.py's order. */
    const bl_config *k = &c->cfg;
    meta_u32(c, "bert.n_layers", (uint32_t)k->n_layers);
    meta_u32(c, "bert.n_heads", (uint32_t)k->n_heads);
    meta_u32(c, "bert.hidden", (uint32_t)k->hidden);
    meta_u32(c, "bert.intermediate", (uint32_t)k->intermediate);
    meta_u32(c, "bert.max_positions", (uint32_t)k->max_positions);
    meta_u32(c, "bert.type_vocab_size", (uint32_t)k->type_vocab_size);
    meta_u32(c, "bert.vocab_size", (uint32_t)k->vocab_size);
    meta_key(&c->meta, "bert.ln_eps", BL_META_F32);
    {
        uint32_t bits;
        memcpy(&bits, &c->ln_eps, 4);
        put32(&c->meta, bits);
    }
    meta_str(&c->meta, "bert.activation", c->activation);
    meta_key(&c->meta, "tokenizer.vocab", BL_META_STRARR);
    put32(&c->meta, (uint32_t)n);
    for (int i = 0; i < n; i++) {
        put32(&c->meta, toks[i].len);
        bli_json_raw(&c->meta, toks[i].s, toks[i].len);
    }
    c->n_meta += 3;
    meta_u32(c, "tokenizer.lowercase", (uint32_t)lower);
    meta_u32(c, "tokenizer.strip_accents", (uint32_t)strip);
    meta_u32(c, "tokenizer.chinese_chars", (uint32_t)chinese);
    meta_u32(c, "tokenizer.max_chars_per_word", (uint32_t)max_chars);
    static const char *const keys[5] = {"tokenizer.unk_id", "tokenizer.cls_id", "tokenizer.sep_id",
                                        "tokenizer.pad_id", "tokenizer.mask_id"};
    for (int i = 0; i < 5; i++) meta_u32(c, keys[i], ids[i]);
    if (c->meta.oom) goto oom;
    {
        const char *base = strrchr(from, '/');
        logf_(c,
              "[vocab]  %d tokens from %s; lowercase=%d strip_accents=%d chinese_chars=%d max_chars=%lld; "
              "[UNK]=%u [CLS]=%u [SEP]=%u [PAD]=%u [MASK]=%u",
              n, base ? base + 1 : from, lower, strip, chinese, (long long)max_chars, ids[0], ids[1], ids[2], ids[3],
              ids[4]);
    }
    rc = 0;
    goto out;
oom:
    bli_set_err(err, errlen, "out of memory");
out:
    free(toks);
    bli_jfree(tj);
    bli_jfree(tcv);
    return rc;
}

/* sentence_bert_config.json max_seq_length, when the file is there. */
static int stage_sentence(bli_conv *c, char *err, size_t errlen) {
    const cfile *f = find_file(c, "sentence_bert_config.json");
    if (!f) return 0;
    bli_jv *v = parse_file(f, err, errlen);
    if (!v) return -1;
    const bli_jv *m = bli_jget(v, "max_seq_length");
    int ok = m && m->type == BLI_JNUM && m->is_int && m->ival > 0;
    if (ok) {
        char tmp[32];
        snprintf(tmp, sizeof tmp, "%lld", (long long)m->ival);
        c->max_seq = dup_s(tmp);
    } else {
        bli_set_err(err, errlen, "%s: max_seq_length must be a positive integer", f->name);
    }
    bli_jfree(v);
    if (ok && !c->max_seq) bli_set_err(err, errlen, "out of memory");
    return ok && c->max_seq ? 0 : -1;
}

/* ------------------------------------------------------------- begin */

static int add_weight(bli_conv *c, const char *path, char *err, size_t errlen) {
    for (int i = 0; i < c->n_weights; i++)
        if (!strcmp(c->weights[i], path)) return 0;
    if (c->n_weights == MAX_FILES) {
        bli_set_err(err, errlen, "more than %d weight files", MAX_FILES);
        return -1;
    }
    const cfile *f = file_at(c, "", path);
    if (!f) {
        bli_set_err(err, errlen, "%s is listed in model.safetensors.index.json but missing", path);
        return -1;
    }
    if (!(c->weights[c->n_weights] = dup_s(path))) {
        bli_set_err(err, errlen, "out of memory");
        return -1;
    }
    c->weight_size[c->n_weights++] = f->size;
    return 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int stage_weights(bli_conv *c, char *err, size_t errlen) {
    const cfile *st = file_at(c, c->dir, "model.safetensors");
    if (st) return add_weight(c, st->name, err, errlen);
    const cfile *ix = file_at(c, c->dir, "model.safetensors.index.json");
    if (!ix) {
        bli_set_err(err, errlen,
                    "%spytorch_model.bin is the only weights file: bertlens reads safetensors. Get "
                    "model.safetensors from the model's Hugging Face page (many repositories have it, or a "
                    "'refs/pr' safetensors conversion), or convert it once with Python: "
                    "AutoModel.from_pretrained(DIR).save_pretrained(DIR, safe_serialization=True)",
                    c->dir);
        return -1;
    }
    bli_jv *v = parse_file(ix, err, errlen);
    if (!v) return -1;
    const bli_jv *map = bli_jget(v, "weight_map");
    int rc = -1;
    char **names = NULL;
    if (!map || map->type != BLI_JOBJ || !map->n) {
        bli_set_err(err, errlen, "%s: no weight_map", ix->name);
        goto out;
    }
    names = calloc(map->n, sizeof *names);
    if (!names) goto out;
    for (size_t i = 0; i < map->n; i++) {
        const bli_jv *f = &map->items[i];
        if (f->type != BLI_JSTR || !f->len || strchr(f->str, '/') || f->len > 200) {
            bli_set_err(err, errlen, "%s: weight_map entries must be file names", ix->name);
            goto out;
        }
        names[i] = f->str;
    }
    qsort(names, map->n, sizeof *names, cmp_str);
    c->sharded = 1;
    for (size_t i = 0; i < map->n; i++) {
        char path[256];
        snprintf(path, sizeof path, "%s%s", c->dir, names[i]);
        if (add_weight(c, path, err, errlen)) goto out;
    }
    rc = 0;
out:
    free(names);
    bli_jfree(v);
    return rc;
}

int bli_conv_begin(bli_conv *c, char *err, size_t errlen) {
    static const char *const dirs[] = {"", "0_Transformer/"};
    c->dir = NULL;
    for (int i = 0; i < 2 && !c->dir; i++)
        if (file_at(c, dirs[i], "config.json") &&
            (file_at(c, dirs[i], "model.safetensors") || file_at(c, dirs[i], "model.safetensors.index.json") ||
             file_at(c, dirs[i], "pytorch_model.bin")))
            c->dir = dirs[i];
    if (!c->dir) {
        bli_set_err(err, errlen,
                    "no config.json with model.safetensors (or model.safetensors.index.json) found in the folder "
                    "or its 0_Transformer/");
        return -1;
    }
    bli_jv *cfg = parse_file(file_at(c, c->dir, "config.json"), err, errlen);
    if (!cfg) return -1;
    int rc = stage_config(c, cfg, err, errlen);
    bli_jfree(cfg);
    if (rc || stage_vocab(c, err, errlen) || stage_weights(c, err, errlen) || stage_sentence(c, err, errlen))
        return -1;
    return 0;
}

int bli_conv_n_weights(const bli_conv *c) { return c->n_weights; }
const char *bli_conv_weight_name(const bli_conv *c, int w) {
    return w >= 0 && w < c->n_weights ? c->weights[w] : NULL;
}

/* ------------------------------------------------------- safetensors */

int bli_conv_header_size(const void *first8, uint64_t file_size, uint64_t *head, char *err, size_t errlen) {
    const uint8_t *p = first8;
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--) n = n << 8 | p[i];
    if (file_size < 8 || n > file_size - 8 || n > (100u << 20)) {
        bli_set_err(err, errlen, "corrupt safetensors header (length %llu in a file of %llu bytes)",
                    (unsigned long long)n, (unsigned long long)file_size);
        return -1;
    }
    *head = 8 + n;
    return 0;
}

/* Replace every from in n by to; n has room for the growth (see set_header). */
static void replace_all(char *n, const char *from, const char *to) {
    char *s;
    size_t fl = strlen(from), tl = strlen(to);
    for (char *q = n; (s = strstr(q, from));) {
        memmove(s + tl, s + fl, strlen(s + fl) + 1);
        memcpy(s, to, tl);
        q = s + tl;
    }
}

/* convert.py normalize_names: prefixes, old LayerNorm names, DistilBERT's names. */
static void normalize(char *n, int distil) {
    static const char *const pre[] = {"bert.", "model.", "electra.", "distilbert."};
    for (int i = 0; i < 4; i++) {
        size_t k = strlen(pre[i]);
        if (!strncmp(n, pre[i], k)) memmove(n, n + k, strlen(n + k) + 1);
    }
    replace_all(n, "LayerNorm.gamma", "LayerNorm.weight");
    replace_all(n, "LayerNorm.beta", "LayerNorm.bias");
    for (int i = 0; distil && i < (int)(sizeof DISTIL_NAMES / sizeof *DISTIL_NAMES); i++)
        replace_all(n, DISTIL_NAMES[i][0], DISTIL_NAMES[i][1]);
}

int bli_conv_set_header(bli_conv *c, int w, uint64_t file_size, const void *head, size_t n, char *err,
                        size_t errlen) {
    const char *wn = bli_conv_weight_name(c, w);
    uint64_t hn;
    if (!wn) {
        bli_set_err(err, errlen, "no weight file %d", w);
        return -1;
    }
    if (n < 8) {
        bli_set_err(err, errlen, "%s: shorter than a safetensors header", wn);
        return -1;
    }
    if (bli_conv_header_size(head, file_size, &hn, err, errlen)) return -1;
    if (hn != n) {
        bli_set_err(err, errlen, "%s: header is %llu bytes, got %zu", wn, (unsigned long long)hn, n);
        return -1;
    }
    c->weight_size[w] = file_size;
    char e[256];
    bli_jv *v = bli_jparse((const char *)head + 8, n - 8, e, sizeof e);
    if (!v || v->type != BLI_JOBJ) {
        bli_set_err(err, errlen, "%s: corrupt safetensors header (%s)", wn, v ? "not an object" : e);
        bli_jfree(v);
        return -1;
    }
    int rc = -1;
    for (size_t i = 0; i < v->n; i++) {
        const bli_jv *t = &v->items[i];
        if (!strcmp(t->key, "__metadata__")) continue;
        const bli_jv *dt = bli_jget(t, "dtype"), *shape = bli_jget(t, "shape"), *offs = bli_jget(t, "data_offsets");
        if (!dt || dt->type != BLI_JSTR || !shape || shape->type != BLI_JARR || shape->n > 4 || !offs ||
            offs->type != BLI_JARR || offs->n != 2) {
            bli_set_err(err, errlen, "%s: tensor '%.80s' has no dtype, shape (at most 4 dims) or data_offsets", wn,
                        t->key);
            goto out;
        }
        int src = SRC_OTHER;
        for (int k = 0; k < SRC_OTHER; k++)
            if (!strcmp(dt->str, SRC_NAMES[k])) src = k;
        if (src == SRC_OTHER) continue; /* convert.py reads only these */
        stensor s = {0};
        s.src = src;
        s.w = w;
        s.n_dims = (int)shape->n;
        uint64_t count = 1;
        for (size_t d = 0; d < shape->n; d++) {
            const bli_jv *x = &shape->items[d];
            if (x->type != BLI_JNUM || !x->is_int || x->ival < 0 || x->ival > (1ll << 40)) {
                bli_set_err(err, errlen, "%s: tensor '%.80s' has a bad shape", wn, t->key);
                goto out;
            }
            s.dims[d] = x->ival;
            count *= (uint64_t)x->ival;
            if (count > (1ull << 40)) {
                bli_set_err(err, errlen, "%s: tensor '%.80s' is too large", wn, t->key);
                goto out;
            }
        }
        const bli_jv *o0 = &offs->items[0], *o1 = &offs->items[1];
        if (o0->type != BLI_JNUM || !o0->is_int || o1->type != BLI_JNUM || !o1->is_int || o0->ival < 0 ||
            o1->ival < o0->ival) {
            bli_set_err(err, errlen, "%s: tensor '%.80s' has bad data_offsets", wn, t->key);
            goto out;
        }
        s.off = n + (uint64_t)o0->ival;
        s.nbytes = (uint64_t)(o1->ival - o0->ival);
        if (s.nbytes != count * (uint64_t)SRC_SIZE[src]) {
            bli_set_err(err, errlen, "%s: tensor '%.80s' holds %llu bytes, its shape and dtype %s need %llu", wn,
                        t->key, (unsigned long long)s.nbytes, dt->str, (unsigned long long)(count * SRC_SIZE[src]));
            goto out;
        }
        if (s.off + s.nbytes > file_size) {
            bli_set_err(err, errlen,
                        "%s is truncated: tensor '%.80s' ends at byte %llu of a %llu-byte file (download it again)",
                        wn, t->key, (unsigned long long)(s.off + s.nbytes), (unsigned long long)file_size);
            goto out;
        }
        /* Room for the renames: each adds at most 13 bytes, and a name holds few of them. */
        if (!(s.name = malloc(2 * t->key_len + 64))) goto oom;
        memcpy(s.name, t->key, t->key_len + 1);
        normalize(s.name, c->distil);
        if (c->n_st == c->cap_st) {
            int cap = c->cap_st ? 2 * c->cap_st : 256;
            stensor *ns = realloc(c->st, (size_t)cap * sizeof *ns);
            if (!ns) {
                free(s.name);
                goto oom;
            }
            c->st = ns;
            c->cap_st = cap;
        }
        c->st[c->n_st++] = s;
    }
    c->headers_set++;
    rc = 0;
    goto out;
oom:
    bli_set_err(err, errlen, "out of memory");
out:
    bli_jfree(v);
    return rc;
}

/* ------------------------------------------------------------- plan */

static uint64_t align_up(uint64_t n) { return (n + ALIGN - 1) / ALIGN * ALIGN; }

/* Provenance entries, in convert.py's order (sha: 64 hex digits). */
static int provenance(const bli_conv *c, bli_jbuf *b, const char *sha) {
    const char *lic = c->license ? c->license : "unknown";
    int n = 0;
    meta_str(b, "source.name", c->name), n++;
    meta_str(b, "source.license", lic), n++;
    meta_str(b, "source.sha256", sha), n++;
    meta_str(b, "source.file", c->sharded ? "model.safetensors.index.json" : "model.safetensors"), n++;
    meta_str(b, "converter.version", BLI_CONVERTER_VERSION), n++;
    meta_str(b, "weights.dtype", bl_dtype_name(c->dtype)), n++;
    meta_str(b, "weights.embed_dtype", bl_dtype_name(c->embed_dtype)), n++;
    meta_str(b, "weights.rounding", "nearest"), n++;
    if (c->max_seq) meta_str(b, "sentence.max_seq_length", c->max_seq), n++;
    return n;
}

static int add_ot(bli_conv *c, const char *name, int64_t d0, int64_t d1, int dtype, char *err, size_t errlen) {
    otensor *t = &c->ot[c->n_ot];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->n_dims = d1 ? 2 : 1;
    t->dims[0] = d0;
    t->dims[1] = d1;
    t->dtype = dtype;
    t->src = -1;
    for (int i = c->n_st; i-- > 0;)
        if (!strcmp(c->st[i].name, name)) {
            t->src = i;
            break;
        }
    if (t->src < 0 && c->distil && !strcmp(name, DISTIL_TOKEN_TYPES)) { /* zeros, made here */
        t->nbytes = bli_dtype_nbytes(dtype, t->n_dims, t->dims);
        c->n_ot++;
        return 0;
    }
    if (t->src < 0) {
        bli_set_err(err, errlen, "checkpoint has no tensor '%s' (is this a BERT encoder?)", name);
        return -1;
    }
    const stensor *s = &c->st[t->src];
    if (s->n_dims != t->n_dims || s->dims[0] != d0 || (d1 && s->dims[1] != d1)) {
        char got[96] = "", want[64];
        for (int d = 0; d < s->n_dims; d++)
            snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", d ? ", " : "", (long long)s->dims[d]);
        if (d1) snprintf(want, sizeof want, "%lld, %lld", (long long)d0, (long long)d1);
        else snprintf(want, sizeof want, "%lld,", (long long)d0);
        bli_set_err(err, errlen, "%s: shape (%s%s), expected (%s)", name, got, s->n_dims == 1 ? "," : "", want);
        return -1;
    }
    if (s->src == SRC_I64) {
        bli_set_err(err, errlen, "%s: dtype I64, expected floating point", name);
        return -1;
    }
    t->nbytes = bli_dtype_nbytes(dtype, t->n_dims, t->dims);
    if (!t->nbytes) {
        bli_set_err(err, errlen, "last dimension %lld is not a multiple of %d: cannot use %s",
                    (long long)t->dims[t->n_dims - 1], BL_QBLOCK, bl_dtype_name(dtype));
        return -1;
    }
    c->n_ot++;
    return 0;
}

/* A tensor name of BL_TENSORS_*: per-layer names take the layer number. */
static void layer_name(char *buf, size_t n, const char *fmt, int layer) { snprintf(buf, n, fmt, layer); }

#define PLAN_ONE(field, name, d0, d1, dts)                                                                          \
    do {                                                                                                            \
        char nm[96];                                                                                                \
        layer_name(nm, sizeof nm, name, l);                                                                         \
        int dt = BL_DTYPES_##dts == BL_DTYPES_F32 ? BL_F32 : !strcmp(#field, "word") ? c->embed_dtype : c->dtype; \
        if (add_ot(c, nm, bli_dim_size(&c->cfg, BL_DIM_##d0), bli_dim_size(&c->cfg, BL_DIM_##d1), dt, err,       \
                   errlen))                                                                                         \
            return -1;                                                                                              \
    } while (0);

int bli_conv_plan(bli_conv *c, char *err, size_t errlen) {
    if (!c->dir || c->headers_set < c->n_weights || c->planned) {
        bli_set_err(err, errlen, "bli_conv_plan: call after bli_conv_begin and every bli_conv_set_header");
        return -1;
    }
    int n = 5 + 16 * c->cfg.n_layers;
    c->ot = calloc((size_t)n, sizeof *c->ot);
    if (!c->ot) {
        bli_set_err(err, errlen, "out of memory");
        return -1;
    }
    int l = 0;
    BL_TENSORS_WORD(PLAN_ONE)
    BL_TENSORS_EMBED(PLAN_ONE)
    for (l = 0; l < c->cfg.n_layers; l++) {
        BL_TENSORS_LAYER(PLAN_ONE)
    }
    /* Layout: header, metadata, table, data. */
    bli_jbuf prov = {0};
    provenance(c, &prov, "0000000000000000000000000000000000000000000000000000000000000000");
    if (prov.oom) {
        bli_jbuf_free(&prov);
        bli_set_err(err, errlen, "out of memory");
        return -1;
    }
    c->meta_size = c->meta.len + prov.len;
    bli_jbuf_free(&prov);
    uint64_t off = 0;
    c->table_size = 0;
    for (int i = 0; i < c->n_ot; i++) {
        otensor *t = &c->ot[i];
        off = align_up(off);
        t->off = off;
        off += t->nbytes;
        c->table_size += 4 + strlen(t->name) + 8 + 8 * (uint64_t)t->n_dims + 20;
    }
    c->data_size = align_up(off);
    c->data_offset = align_up(BL_HEADER_SIZE + c->meta_size + c->table_size);
    c->file_size = c->data_offset + c->data_size;
    c->planned = 1;
    return 0;
}

uint64_t bli_conv_size(const bli_conv *c) { return c->planned ? c->file_size : 0; }
int bli_conv_n_tensors(const bli_conv *c) { return c->planned ? c->n_ot : 0; }

void bli_conv_hash(bli_conv *c, const void *p, size_t n) {
    sha256_update(&c->sha, p, n);
    c->hashed += n;
}

int bli_conv_source(const bli_conv *c, int t, int *w, uint64_t *off, uint64_t *n) {
    if (!c->planned || t < 0 || t >= c->n_ot) return -1;
    if (c->ot[t].src < 0) { /* made here: no bytes to read */
        *w = 0, *off = 0, *n = 0;
        return 0;
    }
    const stensor *s = &c->st[c->ot[t].src];
    *w = s->w;
    *off = s->off;
    *n = s->nbytes;
    return 0;
}

/* --------------------------------------------------------- quantize */

/* Quantization error of a tensor, for its log line: max |w - w'|, and the
 * sums for RMS(w - w') / RMS(w), in double as convert.py's float64. */
typedef struct {
    double emax, e2, w2;
} qerr;

static void qerr_add(qerr *q, float w, float deq) {
    double e = fabs((double)deq - (double)w);
    if (e > q->emax) q->emax = e;
    q->e2 += e * e;
    q->w2 += (double)w * (double)w;
}

/* q8: blocks of 32, scale = max|w| / 127 (convert.py quant_q8). */
static void quant_q8(const float *w, size_t n, uint8_t *out, qerr *qe) {
    int8_t *q = (int8_t *)out;
    uint8_t *scales = out + n;
    for (size_t b = 0; b < n / BL_QBLOCK; b++) {
        const float *r = w + b * BL_QBLOCK;
        float amax = 0;
        for (int k = 0; k < BL_QBLOCK; k++) {
            float a = fabsf(r[k]);
            if (a > amax) amax = a;
        }
        volatile float scale = amax / 127.0f; /* volatile: one float32 operation, never widened or fused */
        volatile float inv = scale > 0 ? 1.0f / scale : 0.0f;
        for (int k = 0; k < BL_QBLOCK; k++) {
            volatile float x = r[k] * inv;
            float v = rintf(x);
            if (!(v >= -127)) v = v != v ? 0 : -127; /* NaN only from a subnormal scale */
            if (v > 127) v = 127;
            q[b * BL_QBLOCK + k] = (int8_t)v;
            qerr_add(qe, r[k], (float)q[b * BL_QBLOCK + k] * scale);
        }
        float s = scale;
        memcpy(scales + 4 * b, &s, 4);
    }
}

/* q4: the element of largest magnitude maps to -8; nibble = q + 8 (convert.py quant_q4). */
static void quant_q4(const float *w, size_t n, uint8_t *out, qerr *qe) {
    uint8_t *scales = out + n / 2;
    for (size_t b = 0; b < n / BL_QBLOCK; b++) {
        const float *r = w + b * BL_QBLOCK;
        int idx = 0;
        float amax = fabsf(r[0]);
        for (int k = 1; k < BL_QBLOCK; k++)
            if (fabsf(r[k]) > amax) amax = fabsf(r[k]), idx = k;
        volatile float scale = r[idx] / -8.0f;
        volatile float inv = scale != 0 ? 1.0f / scale : 0.0f;
        int8_t q[BL_QBLOCK];
        for (int k = 0; k < BL_QBLOCK; k++) {
            volatile float x = r[k] * inv;
            float v = rintf(x);
            if (!(v >= -8)) v = v != v ? 0 : -8;
            if (v > 7) v = 7;
            q[k] = (int8_t)v;
            qerr_add(qe, r[k], (float)q[k] * scale);
        }
        for (int i = 0; i < 16; i++)
            out[b * 16 + i] = (uint8_t)((uint8_t)(q[i] + 8) | (uint8_t)(q[16 + i] + 8) << 4);
        float s = scale;
        memcpy(scales + 4 * b, &s, 4);
    }
}

/* QN (bundle.h Data layouts): round to nearest with float16 block scales,
 * in float64 (fidelity.qn_rtn), packed as fidelity.qn_pack. Returns -1 when
 * a block scale overflows float16 (convert.py refuses those weights too). */
static int quant_qn(const float *w, size_t n, int bits, uint8_t *out, qerr *qe) {
    const int e = bits - 8, qmax = (1 << (bits - 1)) - 1;
    const size_t nb = n / BL_QBLOCK;
    int8_t *hi = (int8_t *)out;
    uint8_t *lo = out + n, *slo = lo + n * (size_t)e / 8, *shi = slo + nb;
    memset(lo, 0, n * (size_t)e / 8);
    for (size_t b = 0; b < nb; b++) {
        const float *r = w + b * BL_QBLOCK;
        double amax = 0;
        for (int k = 0; k < BL_QBLOCK; k++) {
            double a = fabs((double)r[k]);
            if (a > amax) amax = a;
        }
        volatile double sd = amax / (double)qmax;
        uint16_t h = bli_f64_to_f16(sd);
        if ((h & 0x7c00) == 0x7c00) return -1;
        const float sf = bli_f16_to_f32(h);
        const double s = sf; /* exact */
        slo[b] = (uint8_t)h;
        shi[b] = (uint8_t)(h >> 8);
        for (int k = 0; k < BL_QBLOCK; k++) {
            int q = 0;
            if (s > 0) {
                volatile double x = (double)r[k] / s;
                double v = rint(x);
                q = v < -qmax ? -qmax : v > qmax ? qmax : (int)v;
            }
            size_t i = b * BL_QBLOCK + (size_t)k;
            /* q + 2048 >= 0 and 2^e divides 2048: floor(q / 2^e) and q's low bits without shifting a negative */
            unsigned u = (unsigned)(q + 2048);
            hi[i] = (int8_t)((int)(u >> e) - (2048 >> e));
            unsigned low = u & ((1u << e) - 1);
            for (int j = 0; j < e; j++)
                if (low >> j & 1) {
                    size_t bit = i * (size_t)e + (size_t)j;
                    lo[bit / 8] |= (uint8_t)(1u << (bit % 8));
                }
            volatile float deq = (float)q * sf;
            qerr_add(qe, r[k], deq);
        }
    }
    return 0;
}

static int check_finite(const float *w, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!isfinite(w[i])) return -1;
    return 0;
}

static int to_f32(const stensor *s, const uint8_t *p, float *w, size_t n) {
    for (size_t i = 0; i < n; i++) {
        const uint8_t *e = p + i * (size_t)SRC_SIZE[s->src];
        switch (s->src) {
        case SRC_F32: {
            uint32_t x = (uint32_t)e[0] | (uint32_t)e[1] << 8 | (uint32_t)e[2] << 16 | (uint32_t)e[3] << 24;
            memcpy(&w[i], &x, 4);
            break;
        }
        case SRC_F16: w[i] = bli_f16_to_f32((uint16_t)(e[0] | e[1] << 8)); break;
        case SRC_BF16: {
            uint32_t x = (uint32_t)e[0] << 16 | (uint32_t)e[1] << 24;
            memcpy(&w[i], &x, 4);
            break;
        }
        case SRC_F64: {
            uint64_t x = 0;
            for (int k = 7; k >= 0; k--) x = x << 8 | e[k];
            double d;
            memcpy(&d, &x, 8);
            w[i] = (float)d;
            break;
        }
        default: return -1;
        }
        if (!isfinite(w[i])) return -1;
    }
    return 0;
}

int bli_conv_tensor(bli_conv *c, int t, const void *src, bli_conv_sink sink, void *sink_ctx, char *err,
                    size_t errlen) {
    if (!c->planned || t < 0 || t >= c->n_ot) {
        bli_set_err(err, errlen, "bli_conv_tensor: no tensor %d", t);
        return -1;
    }
    otensor *o = &c->ot[t];
    static const stensor zeros = {NULL, SRC_OTHER, 0, {0}, 0, 0, 0};
    const stensor *s = o->src >= 0 ? &c->st[o->src] : &zeros;
    /* [dims[0]][dims[1]] floats, sized in 64 bits (sizes.h): a 2^30-element
     * tensor is 4 GB, which wraps in a 32-bit size_t (wasm) */
    const uint64_t nbytes32 = BLI_BYTES(sizeof(float), o->dims[0], o->n_dims == 2 ? o->dims[1] : 1);
    if (!bli_size_ok(nbytes32, o->name, err, errlen) || !bli_size_ok(o->nbytes, o->name, err, errlen)) return -1;
    size_t n = (size_t)(nbytes32 / sizeof(float));
    /* float32 sources are used in place (little-endian hosts: x86, arm, wasm;
     * the driver's buffer is malloc'ed, so aligned): one tensor in memory,
     * plus its encoded copy unless it stays f32. */
    static const uint16_t one = 1;
    int in_place = s->src == SRC_F32 && *(const uint8_t *)&one == 1 && (uintptr_t)src % sizeof(float) == 0;
    float *wbuf = in_place ? NULL : bli_alloc(nbytes32, o->src < 0, o->name, err, errlen);
    const float *w = in_place ? (const float *)src : wbuf;
    uint8_t *data = !w || o->dtype == BL_F32 ? (uint8_t *)w : bli_alloc(o->nbytes, 0, o->name, err, errlen);
    int rc = -1;
    qerr qe = {0, 0, 0};
    if (!w || !data) goto out; /* the message is bli_alloc's */
    if (o->src >= 0 && (in_place ? check_finite(w, n) : to_f32(s, src, wbuf, n))) {
        bli_set_err(err, errlen, "%s: contains NaN or infinity", o->name);
        goto out;
    }
    switch (o->dtype) {
    case BL_F16:
        for (size_t i = 0; i < n; i++) {
            uint16_t h = bli_f32_to_f16(w[i]);
            data[2 * i] = (uint8_t)h;
            data[2 * i + 1] = (uint8_t)(h >> 8);
            qerr_add(&qe, w[i], bli_f16_to_f32(h));
        }
        break;
    case BL_Q8: quant_q8(w, n, data, &qe); break;
    case BL_Q4: quant_q4(w, n, data, &qe); break;
    case BL_Q8H: case BL_Q9: case BL_Q10: case BL_Q11: case BL_Q12:
        if (quant_qn(w, n, bli_qn_bits(o->dtype), data, &qe)) {
            float amax = 0;
            for (size_t i = 0; i < n; i++) amax = fmaxf(amax, fabsf(w[i]));
            bli_set_err(err, errlen, "%s: weights up to %g overflow a float16 block scale", o->name, (double)amax);
            goto out;
        }
        break;
    default: /* f32: the bytes are w's */
        for (size_t i = 0; i < n; i++) qerr_add(&qe, w[i], w[i]);
    }
    double emax = qe.emax, e2 = qe.e2, w2 = qe.w2;
    double rms = sqrt(w2 / (double)n), rel = rms > 0 ? sqrt(e2 / (double)n) / rms : 0;
    char shape[48];
    if (o->n_dims == 2) snprintf(shape, sizeof shape, "[%lld, %lld]", (long long)o->dims[0], (long long)o->dims[1]);
    else snprintf(shape, sizeof shape, "[%lld]", (long long)o->dims[0]);
    logf_(c, "[tensor] %-52s %-14s %-4s max|err| %.3e  rel.rms %.3e", o->name, shape, bl_dtype_name(o->dtype), emax,
          rel);
    o->crc = bli_crc32(0, data, (size_t)o->nbytes);
    if (sink(sink_ctx, c->data_offset + o->off, data, (size_t)o->nbytes)) {
        bli_set_err(err, errlen, "%s: cannot write the bundle", o->name);
        goto out;
    }
    o->done = 1;
    rc = 0;
out:
    if (data != (const uint8_t *)w) free(data);
    free(wbuf);
    return rc;
}

/* ------------------------------------------------------------ finish */

static void put_at(uint8_t *p, uint64_t v, int n) {
    for (int i = 0; i < n; i++) p[i] = (uint8_t)(v >> (8 * i));
}

int bli_conv_finish(bli_conv *c, bli_conv_sink sink, void *sink_ctx, char *err, size_t errlen) {
    if (!c->planned) {
        bli_set_err(err, errlen, "bli_conv_finish: nothing planned");
        return -1;
    }
    for (int i = 0; i < c->n_ot; i++)
        if (!c->ot[i].done) {
            bli_set_err(err, errlen, "tensor %s was not converted", c->ot[i].name);
            return -1;
        }
    uint64_t total = 0;
    for (int i = 0; i < c->n_weights; i++) total += c->weight_size[i];
    if (c->hashed != total) {
        bli_set_err(err, errlen, "source.sha256: %llu of %llu weight bytes were hashed", (unsigned long long)c->hashed,
                    (unsigned long long)total);
        return -1;
    }
    /* The log line of convert.py: tensors the encoder does not use. */
    int skipped = 0;
    char list[512] = "";
    char **names = malloc((size_t)(c->n_st ? c->n_st : 1) * sizeof *names);
    if (names) {
        for (int i = 0; i < c->n_st; i++) {
            int used = 0;
            for (int k = 0; k < c->n_ot && !used; k++) used = !strcmp(c->ot[k].name, c->st[i].name);
            for (int k = 0; k < skipped && !used; k++) used = !strcmp(names[k], c->st[i].name);
            if (!used) names[skipped++] = c->st[i].name;
        }
        qsort(names, (size_t)skipped, sizeof *names, cmp_str);
        for (int i = 0; i < skipped && i < 6; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", names[i]);
        if (skipped)
            logf_(c, "[tensor] skipped %d tensors not used by the encoder: %s%s", skipped, list,
                  skipped > 6 ? " ..." : "");
        free(names);
    }
    if (!c->license) logf_(c, "[write]  warning: no --license given; recording 'unknown'");

    char sha[65];
    sha256_hex(&c->sha, sha);
    bli_jbuf b = {0};
    uint8_t hdr[BL_HEADER_SIZE] = {0};
    bli_json_raw(&b, c->meta.data, c->meta.len);
    int n_meta = c->n_meta + provenance(c, &b, sha);
    size_t table_at = b.len;
    for (int i = 0; i < c->n_ot; i++) {
        const otensor *t = &c->ot[i];
        put32(&b, (uint32_t)strlen(t->name));
        bli_json_raw(&b, t->name, strlen(t->name));
        put32(&b, (uint32_t)t->dtype);
        put32(&b, (uint32_t)t->n_dims);
        for (int d = 0; d < t->n_dims; d++) put64(&b, (uint64_t)t->dims[d]);
        put64(&b, t->off);
        put64(&b, t->nbytes);
        put32(&b, t->crc);
    }
    if (b.oom || table_at != c->meta_size || b.len - table_at != c->table_size) {
        bli_jbuf_free(&b);
        bli_set_err(err, errlen, b.oom ? "out of memory" : "internal error: metadata size changed");
        return -1;
    }
    const uint8_t *mb = (const uint8_t *)b.data;
    memcpy(hdr, BL_BUNDLE_MAGIC, 8);
    put_at(hdr + 8, BL_BUNDLE_VERSION, 4);
    put_at(hdr + 12, ALIGN, 4);
    put_at(hdr + 16, c->file_size, 8);
    put_at(hdr + 24, BL_HEADER_SIZE, 8);
    put_at(hdr + 32, c->meta_size, 8);
    put_at(hdr + 40, BL_HEADER_SIZE + c->meta_size, 8);
    put_at(hdr + 48, c->table_size, 8);
    put_at(hdr + 56, c->data_offset, 8);
    put_at(hdr + 64, c->data_size, 8);
    put_at(hdr + 72, (uint64_t)n_meta, 4);
    put_at(hdr + 76, (uint64_t)c->n_ot, 4);
    put_at(hdr + 80, bli_crc32(0, mb, (size_t)c->meta_size), 4);
    put_at(hdr + 84, bli_crc32(0, mb + c->meta_size, (size_t)c->table_size), 4);
    put_at(hdr + 92, bli_crc32(0, hdr, 92), 4);
    int rc = sink(sink_ctx, 0, hdr, sizeof hdr) || sink(sink_ctx, BL_HEADER_SIZE, mb, b.len) ? -1 : 0;
    bli_jbuf_free(&b);
    if (rc) bli_set_err(err, errlen, "cannot write the bundle");
    return rc;
}
