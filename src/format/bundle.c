/* bundle.c — parse and validate a bertlens bundle (format: bundle.h).
 *
 * Every count, length, offset, shape, dtype and checksum is checked before
 * anything is used; any problem returns NULL with a reason. The model borrows
 * the caller's bytes: tensors point straight into them (no copy of weights).
 * This file reads the format: header, metadata, config, tensor table and
 * data (bli_bundle_parse). bl_model_load (bundle_load.c) then runs the
 * stages that give them meaning: the family (model.family, every tensor of
 * the family's lists) in bundle_family.c, the tokenizer in
 * bundle_tokenizer.c, the masked-LM head in bundle_head.c; what they share
 * is bundle_impl.h.
 */
#include "bundle_impl.h"
#include "base/sizes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_META 4096u
#define MAX_TENSORS 4096u
#define MAX_KEY 255u
#define MAX_STR (1u << 24)
#define MAX_STRARR (1u << 22)
#define MAX_ITEM (1u << 16)
#define MAX_DIM (1ll << 31)

/* ----------------------------------------------------------- helpers */


/* CRC-32 (zlib's), slicing by 8: eight table lookups per 8 input bytes. */
static uint32_t crc_table[8][256];
static int crc_ready;

static void crc_init(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++) crc_table[t][i] = crc_table[0][crc_table[t - 1][i] & 0xff] ^ (crc_table[t - 1][i] >> 8);
    crc_ready = 1;
}

uint32_t bli_crc32(uint32_t crc, const void *data, size_t n) {
    if (!crc_ready) crc_init();
    const uint8_t *p = data;
    crc = ~crc;
    while (n >= 8) {
        uint32_t a = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
        uint32_t b = (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 | (uint32_t)p[7] << 24;
        crc = crc_table[7][a & 0xff] ^ crc_table[6][(a >> 8) & 0xff] ^ crc_table[5][(a >> 16) & 0xff] ^
              crc_table[4][a >> 24] ^ crc_table[3][b & 0xff] ^ crc_table[2][(b >> 8) & 0xff] ^
              crc_table[1][(b >> 16) & 0xff] ^ crc_table[0][b >> 24];
        p += 8;
        n -= 8;
    }
    while (n--) crc = crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return ~crc;
}

/* Under a fuzzing build a checksum mismatch is not fatal, so the fuzzer can
 * explore the parsing behind it (see fuzz_bundle.c). */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define CRC_MISMATCH(got, want) ((void)(got), (void)(want), 0)
#else
#define CRC_MISMATCH(got, want) ((got) != (want))
#endif

#define le32 bli_le32
static inline uint64_t le64(const uint8_t *p) { return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32; }

uint64_t bli_dtype_nbytes(int dtype, int n_dims, const int64_t *dims) {
    if (n_dims < 1 || n_dims > BL_MAX_DIMS) return 0;
    uint64_t n = 1;
    for (int i = 0; i < n_dims; i++) {
        if (dims[i] < 1 || dims[i] > MAX_DIM) return 0;
        n *= (uint64_t)dims[i];
        if (n > (1ull << 40)) return 0;
    }
    uint64_t k = (uint64_t)dims[n_dims - 1];
    switch (dtype) {
    case BL_F32: return 4 * n;
    case BL_F16: return 2 * n;
    case BL_Q8: return k % BL_QBLOCK ? 0 : n + 4 * (n / BL_QBLOCK);
    case BL_Q4: return k % BL_QBLOCK ? 0 : n / 2 + 4 * (n / BL_QBLOCK);
    case BL_Q8H: case BL_Q9: case BL_Q10: case BL_Q11: case BL_Q12:
        /* high plane, low bits, two planes of float16 scales (bundle.h, QN); K % 32 keeps the low plane whole bytes */
        return k % BL_QBLOCK ? 0 : n + n * (uint64_t)(bli_qn_bits(dtype) - 8) / 8 + 2 * (n / BL_QBLOCK);
    default: return 0;
    }
}

const char *bl_dtype_name(int dtype) {
    switch (dtype) {
    case BL_F32: return "f32";
    case BL_F16: return "f16";
    case BL_Q8: return "q8";
    case BL_Q4: return "q4";
    case BL_Q8H: return "q8h";
    case BL_Q9: return "q9";
    case BL_Q10: return "q10";
    case BL_Q11: return "q11";
    case BL_Q12: return "q12";
    default: return "?";
    }
}

/* A bounds-checked reader over one section. */
typedef struct {
    const uint8_t *p, *end;
    const char *what; /* section name for messages */
    char *err;
    size_t errlen;
    int failed;
} reader;

static int need(reader *r, uint64_t n) {
    if (r->failed) return 0;
    if ((uint64_t)(r->end - r->p) < n) {
        bli_set_err(r->err, r->errlen, "%s ends in the middle of an entry (needs %llu more bytes)", r->what,
                   (unsigned long long)n);
        r->failed = 1;
        return 0;
    }
    return 1;
}
static uint32_t rd32(reader *r) {
    if (!need(r, 4)) return 0;
    uint32_t v = le32(r->p);
    r->p += 4;
    return v;
}
static uint64_t rd64(reader *r) {
    if (!need(r, 8)) return 0;
    uint64_t v = le64(r->p);
    r->p += 8;
    return v;
}
static const uint8_t *rdbytes(reader *r, uint64_t n) {
    if (!need(r, n)) return NULL;
    const uint8_t *p = r->p;
    r->p += n;
    return p;
}

static char *dup_n(const uint8_t *p, size_t n) {
    char *s = malloc(n + 1);
    if (!s) return NULL;
    memcpy(s, p, n);
    s[n] = 0;
    return s;
}

/* Printable copy of a key/name for messages (control bytes shown as '?'). */
void bli_bundle_safe_name(char *dst, size_t cap, const uint8_t *p, size_t n) {
    size_t i = 0;
    for (; i < n && i + 1 < cap; i++) dst[i] = (p[i] < 0x20 || p[i] == 0x7f) ? '?' : (char)p[i];
    dst[i] = 0;
}

/* -------------------------------------------------------------- model */

void bl_model_free(bl_model *m) {
    if (!m) return;
    for (uint32_t i = 0; i < m->n_meta; i++) {
        free(m->meta[i].key);
        free(m->meta[i].str);
    }
    free(m->meta);
    for (uint32_t i = 0; i < m->n_tensors; i++) free((char *)m->tensors[i].name);
    free(m->tensors);
    bl_tokenizer_free(m->tok);
    free(m);
}

const meta_entry *bli_bundle_meta(const bl_model *m, const char *key) {
    for (uint32_t i = 0; i < m->n_meta; i++)
        if (strcmp(m->meta[i].key, key) == 0) return &m->meta[i];
    return NULL;
}

const bl_config *bl_model_config(const bl_model *m) { return &m->cfg; }
int bl_model_n_tensors(const bl_model *m) { return (int)m->n_tensors; }
const bl_tensor *bl_model_tensor(const bl_model *m, int i) {
    return (i >= 0 && (uint32_t)i < m->n_tensors) ? &m->tensors[i] : NULL;
}
const bl_tensor *bl_model_find_tensor(const bl_model *m, const char *name) {
    for (uint32_t i = 0; i < m->n_tensors; i++)
        if (strcmp(m->tensors[i].name, name) == 0) return &m->tensors[i];
    return NULL;
}
const bl_tokenizer *bl_model_tokenizer(const bl_model *m) { return m->tok; }
const bli_family *bli_model_family(const bl_model *m) { return &m->fam; }
int bl_model_format_version(const bl_model *m) { return m ? (int)m->version : 0; }

const char *bl_model_meta_str(const bl_model *m, const char *key) {
    const meta_entry *e = bli_bundle_meta(m, key);
    return (e && e->type == BL_META_STR) ? e->str : NULL;
}

int bl_model_n_meta(const bl_model *m) { return (int)m->n_meta; }
const char *bl_model_meta_key(const bl_model *m, int i) {
    return (i >= 0 && (uint32_t)i < m->n_meta) ? m->meta[i].key : NULL;
}
void bl_model_meta_format(const bl_model *m, int i, char *buf, size_t buflen) {
    if (!buf || !buflen) return;
    buf[0] = 0;
    if (i < 0 || (uint32_t)i >= m->n_meta) return;
    const meta_entry *e = &m->meta[i];
    float f;
    switch (e->type) {
    case BL_META_U32: snprintf(buf, buflen, "%u", e->u32); break;
    case BL_META_I32: snprintf(buf, buflen, "%d", (int32_t)e->u32); break;
    case BL_META_F32: memcpy(&f, &e->u32, 4); snprintf(buf, buflen, "%g", (double)f); break;
    case BL_META_STR: snprintf(buf, buflen, "%s", e->str); break;
    case BL_META_STRARR: snprintf(buf, buflen, "[%u strings]", e->count); break;
    case BL_META_BYTES: snprintf(buf, buflen, "[%llu bytes]", (unsigned long long)e->nbytes); break;
    }
}

static int parse_meta(bl_model *m, reader *r) {
    m->meta = bli_alloc(BLI_BYTES(sizeof *m->meta, m->n_meta), 1, "the metadata", r->err, r->errlen);
    if (!m->meta) return 0;
    for (uint32_t i = 0; i < m->n_meta; i++) {
        uint32_t klen = rd32(r);
        if (r->failed) return 0;
        if (klen < 1 || klen > MAX_KEY) {
            bli_set_err(r->err, r->errlen, "metadata entry %u: key length %u out of range 1..%u", i, klen, MAX_KEY);
            return 0;
        }
        const uint8_t *kp = rdbytes(r, klen);
        if (!kp) return 0;
        if (memchr(kp, 0, klen)) {
            bli_set_err(r->err, r->errlen, "metadata entry %u: key contains a NUL byte", i);
            return 0;
        }
        meta_entry *e = &m->meta[i];
        e->key = dup_n(kp, klen);
        if (!e->key) {
            bli_set_err(r->err, r->errlen, "out of memory reading metadata");
            return 0;
        }
        for (uint32_t j = 0; j < i; j++)
            if (strcmp(m->meta[j].key, e->key) == 0) {
                bli_set_err(r->err, r->errlen, "metadata key '%s' appears twice", e->key);
                return 0;
            }
        e->type = rd32(r);
        switch (e->type) {
        case BL_META_U32: case BL_META_I32:
            e->u32 = rd32(r);
            break;
        case BL_META_F32: /* any key, read or not: a bundle's floats are finite (issue 31) */
            e->u32 = rd32(r);
            if (!r->failed && (e->u32 & 0x7f800000u) == 0x7f800000u) {
                bli_set_err(r->err, r->errlen, "metadata '%s': the f32 is infinite or NaN (a bundle's floats must be "
                            "finite)", e->key);
                return 0;
            }
            break;
        case BL_META_STR: {
            uint32_t n = rd32(r);
            if (r->failed) return 0;
            if (n >= MAX_STR) {
                bli_set_err(r->err, r->errlen, "metadata '%s': string length %u too large", e->key, n);
                return 0;
            }
            const uint8_t *p = rdbytes(r, n);
            if (!p) return 0;
            if (memchr(p, 0, n)) {
                bli_set_err(r->err, r->errlen, "metadata '%s': string contains a NUL byte", e->key);
                return 0;
            }
            e->str = dup_n(p, n);
            if (!e->str) {
                bli_set_err(r->err, r->errlen, "out of memory reading metadata");
                return 0;
            }
            break;
        }
        case BL_META_STRARR: {
            uint32_t n = rd32(r);
            if (r->failed) return 0;
            if (n >= MAX_STRARR) {
                bli_set_err(r->err, r->errlen, "metadata '%s': array of %u strings is too large", e->key, n);
                return 0;
            }
            e->count = n;
            e->arr = r->p;
            for (uint32_t k = 0; k < n; k++) {
                uint32_t len = rd32(r);
                if (r->failed) return 0;
                if (len >= MAX_ITEM) {
                    bli_set_err(r->err, r->errlen, "metadata '%s': item %u has length %u (max %u)", e->key, k, len,
                               MAX_ITEM - 1);
                    return 0;
                }
                if (!rdbytes(r, len)) return 0;
            }
            break;
        }
        case BL_META_BYTES: { /* version 2: u64 length, then the bytes */
            if (m->version < 2) {
                bli_set_err(r->err, r->errlen, "metadata '%s': type 5 (bytes) needs format version 2, the header "
                            "says %u", e->key, m->version);
                return 0;
            }
            uint64_t n = rd64(r);
            if (r->failed) return 0;
            if (n > BL_MAX_META_BYTES || n > (uint64_t)(r->end - r->p)) {
                bli_set_err(r->err, r->errlen, "metadata '%s': %llu bytes claimed, %llu left in the metadata section "
                            "(at most %u)", e->key, (unsigned long long)n, (unsigned long long)(r->end - r->p),
                            BL_MAX_META_BYTES);
                return 0;
            }
            e->nbytes = n;
            e->bytes = rdbytes(r, n);
            break;
        }
        default:
            bli_set_err(r->err, r->errlen, "metadata '%s': unknown type %u", e->key, e->type);
            return 0;
        }
        if (r->failed) return 0;
    }
    if (r->p != r->end) {
        bli_set_err(r->err, r->errlen, "metadata section has %lld unexpected trailing bytes", (long long)(r->end - r->p));
        return 0;
    }
    return 1;
}

int bli_bundle_u32(const bl_model *m, const char *key, uint32_t lo, uint32_t hi, int32_t *out, char *err,
                    size_t errlen) {
    const meta_entry *e = bli_bundle_meta(m, key);
    if (!e) {
        bli_set_err(err, errlen, "required metadata '%s' is missing", key);
        return 0;
    }
    if (e->type != BL_META_U32) {
        bli_set_err(err, errlen, "metadata '%s' must be a u32 (type %u found)", key, e->type);
        return 0;
    }
    if (e->u32 < lo || e->u32 > hi) {
        bli_set_err(err, errlen, "metadata '%s' = %u is out of range %u..%u", key, e->u32, lo, hi);
        return 0;
    }
    *out = (int32_t)e->u32;
    return 1;
}

static int parse_config(bl_model *m, char *err, size_t errlen) {
    bl_config *c = &m->cfg;
    if (!bli_bundle_u32(m, "bert.n_layers", 1, BL_MAX_LAYERS, &c->n_layers, err, errlen) ||
        !bli_bundle_u32(m, "bert.n_heads", 1, BL_MAX_HEADS, &c->n_heads, err, errlen) ||
        !bli_bundle_u32(m, "bert.hidden", 1, BL_MAX_HIDDEN, &c->hidden, err, errlen) ||
        !bli_bundle_u32(m, "bert.intermediate", 1, BL_MAX_INTERMEDIATE, &c->intermediate, err, errlen) ||
        !bli_bundle_u32(m, "bert.max_positions", 1, BL_MAX_POSITIONS, &c->max_positions, err, errlen) ||
        !bli_bundle_u32(m, "bert.type_vocab_size", 1, BL_MAX_TYPE_VOCAB, &c->type_vocab_size, err, errlen) ||
        !bli_bundle_u32(m, "bert.vocab_size", BL_MIN_VOCAB, BL_MAX_VOCAB, &c->vocab_size, err, errlen))
        return 0;
    if (c->hidden % c->n_heads) {
        bli_set_err(err, errlen, "bert.hidden (%d) is not a multiple of bert.n_heads (%d)", c->hidden, c->n_heads);
        return 0;
    }
    const meta_entry *e = bli_bundle_meta(m, "bert.ln_eps");
    if (!e || e->type != BL_META_F32) {
        bli_set_err(err, errlen, "required metadata 'bert.ln_eps' (f32) is missing");
        return 0;
    }
    memcpy(&c->ln_eps, &e->u32, 4);
    if (!(c->ln_eps > 0.0f && c->ln_eps < 1.0f)) {
        bli_set_err(err, errlen, "bert.ln_eps = %g is not in (0, 1)", (double)c->ln_eps);
        return 0;
    }
    const char *act = bl_model_meta_str(m, "bert.activation");
    if (!act) {
        bli_set_err(err, errlen, "required metadata 'bert.activation' (string) is missing");
        return 0;
    }
    if (!strcmp(act, "gelu")) c->activation = BL_ACT_GELU;
    else if (!strcmp(act, "gelu_tanh")) c->activation = BL_ACT_GELU_TANH;
    else if (!strcmp(act, "relu")) c->activation = BL_ACT_RELU;
    else if (!strcmp(act, "silu")) c->activation = BL_ACT_SILU;
    else {
        bli_set_err(err, errlen, "unsupported activation '%s' (gelu, gelu_tanh, relu, silu)", act);
        return 0;
    }
    static const char *strs[] = {"source.name", "source.license", "source.sha256", "converter.version", "weights.dtype"};
    for (size_t i = 0; i < sizeof strs / sizeof *strs; i++)
        if (!bl_model_meta_str(m, strs[i])) {
            bli_set_err(err, errlen, "required metadata '%s' (string) is missing", strs[i]);
            return 0;
        }
    return 1;
}

/* ------------------------------------------------------ finite floats
 * Every float a bundle holds is checked finite at load (issue 31): an inf
 * or NaN weight, scale, norm or bias has no meaning, and the kernels would
 * only turn it into NaN attention. The check reads the bits (exponent all
 * ones: inf or NaN), no float operation, and only where floats lie: f32 and
 * f16 values, q8 and q4 scales (f32), and of a QN tensor's float16 scales
 * their high bytes, where the exponent is. */

/* Where a tensor's floats lie in its bytes: [off, off + count * size),
 * words of `size` bytes (little-endian) that are inf or NaN when the bits
 * under mask are all set. */
typedef struct {
    uint64_t off, count;
    int size;
    uint32_t mask;
    const char *what;
} float_region;

static float_region floats_of(const bl_tensor *t) {
    uint64_t n = 1;
    for (int d = 0; d < t->n_dims; d++) n *= (uint64_t)t->dims[d]; /* bli_dtype_nbytes bounded the product */
    switch (t->dtype) {
    case BL_F32: return (float_region){0, n, 4, 0x7f800000u, "value"};
    case BL_F16: return (float_region){0, n, 2, 0x7c00u, "value"};
    case BL_Q8: return (float_region){n, n / BL_QBLOCK, 4, 0x7f800000u, "block scale"};
    case BL_Q4: return (float_region){n / 2, n / BL_QBLOCK, 4, 0x7f800000u, "block scale"};
    default: /* QN: hi[n], lo[n*E/8], slo[n/32], shi[n/32] (bundle.h); a half's exponent is bits 2..6 of shi */
        return (float_region){n + n * (uint64_t)(bli_qn_bits(t->dtype) - 8) / 8 + n / BL_QBLOCK, n / BL_QBLOCK, 1,
                              0x7cu, "block scale"};
    }
}

static uint32_t word_at(const uint8_t *p, int size) {
    return size == 4 ? le32(p) : size == 2 ? (uint32_t)(p[0] | p[1] << 8) : p[0];
}

/* Index of the first of n words at p (as in float_region) whose bits under
 * mask are all set, or n. Eight bytes at a time, every word of them at
 * once, SWAR: with t = (x & M) ^ M, a word of t is 0 exactly when its
 * float is not finite, and a word w of t (whose top bit is clear: every
 * mask is) is 0 exactly when (w - 1) & ~w sets its top bit. A borrow that
 * crosses into the next word happens only after a 0 word, so "any" is
 * exact; the index is then found word by word. */
#if defined(__GNUC__)
__attribute__((noinline)) /* its own registers: inlined into bl_model_load, gcc spilled the loop's to the stack (2x slower) */
#endif
static uint64_t first_nonfinite(const uint8_t *p, uint64_t n, int size, uint32_t mask) {
    uint64_t m = 0, one = 0, top = 0;
    for (int b = 0; b < 8; b += size) {
        m |= (uint64_t)mask << 8 * b;
        one |= (uint64_t)1 << 8 * b;
        top |= (uint64_t)1 << (8 * (b + size) - 1);
    }
    const uint64_t per = 8 / (uint64_t)size, whole = n / per * per;
    uint64_t acc = 0;
    for (uint64_t i = 0; i < whole; i += per) {
        const uint64_t t = (le64(p + i * (uint64_t)size) & m) ^ m;
        acc |= (t - one) & ~t & top;
    }
    if (!acc) {
        for (uint64_t i = whole; i < n; i++)
            if ((word_at(p + i * (uint64_t)size, size) & mask) == mask) return i;
        return n;
    }
    uint64_t i = 0;
    while ((word_at(p + i * (uint64_t)size, size) & mask) != mask) i++;
    return i;
}

/* CRC-32 of t's bytes and the index of its first float that is not finite
 * (*bad, or the region's count when all are), in one pass of 64 KB chunks:
 * each chunk is checked while the CRC has just brought it into the cache,
 * so the check adds little to a load (docs/security.md). */
static uint32_t tensor_crc_finite(const bl_tensor *t, const float_region *f, uint64_t *bad) {
    enum { CHUNK = 1 << 16 }; /* a multiple of every word size */
    const uint64_t fend = f->off + f->count * (uint64_t)f->size;
    uint32_t crc = 0;
    *bad = f->count;
    for (uint64_t at = 0; at < t->nbytes; at += CHUNK) {
        const uint64_t end = t->nbytes - at < CHUNK ? t->nbytes : at + CHUNK;
        crc = bli_crc32(crc, t->data + at, (size_t)(end - at));
        const uint64_t lo = at > f->off ? at : f->off, hi = end < fend ? end : fend;
        if (*bad == f->count && lo < hi) { /* lo - f->off is a multiple of the word size: CHUNK is */
            const uint64_t k = first_nonfinite(t->data + lo, (hi - lo) / (uint64_t)f->size, f->size, f->mask);
            if (k < (hi - lo) / (uint64_t)f->size) *bad = (lo - f->off) / (uint64_t)f->size + k;
        }
    }
    return crc;
}

static int parse_table(bl_model *m, reader *r, uint64_t data_size, uint32_t alignment, const uint8_t *data) {
    m->tensors = bli_alloc(BLI_BYTES(sizeof *m->tensors, m->n_tensors), 1, "the tensor table", r->err, r->errlen);
    if (!m->tensors) return 0;
    uint64_t prev_end = 0;
    for (uint32_t i = 0; i < m->n_tensors; i++) {
        bl_tensor *t = &m->tensors[i];
        uint32_t nlen = rd32(r);
        if (r->failed) return 0;
        if (nlen < 1 || nlen > MAX_KEY) {
            bli_set_err(r->err, r->errlen, "tensor %u: name length %u out of range 1..%u", i, nlen, MAX_KEY);
            return 0;
        }
        const uint8_t *np = rdbytes(r, nlen);
        if (!np) return 0;
        char name[MAX_KEY + 1];
        bli_bundle_safe_name(name, sizeof name, np, nlen);
        if (memchr(np, 0, nlen)) {
            bli_set_err(r->err, r->errlen, "tensor %u: name contains a NUL byte", i);
            return 0;
        }
        t->name = dup_n(np, nlen);
        if (!t->name) {
            bli_set_err(r->err, r->errlen, "out of memory reading the tensor table");
            return 0;
        }
        uint32_t dtype = rd32(r), nd = rd32(r);
        if (r->failed) return 0;
        if (dtype >= BL_N_DTYPES) {
            bli_set_err(r->err, r->errlen, "tensor '%s': unknown dtype %u (0..%d: f32 f16 q8 q4 q8h q9 q10 q11 q12)",
                       name, dtype, BL_N_DTYPES - 1);
            return 0;
        }
        if (nd < 1 || nd > BL_MAX_DIMS) {
            bli_set_err(r->err, r->errlen, "tensor '%s': %u dimensions (1..%d allowed)", name, nd, BL_MAX_DIMS);
            return 0;
        }
        t->dtype = (int32_t)dtype;
        t->n_dims = (int32_t)nd;
        for (uint32_t d = 0; d < nd; d++) {
            uint64_t v = rd64(r);
            if (r->failed) return 0;
            if (v < 1 || v > (uint64_t)MAX_DIM) {
                bli_set_err(r->err, r->errlen, "tensor '%s': dimension %u = %llu is absurd", name, d,
                           (unsigned long long)v);
                return 0;
            }
            t->dims[d] = (int64_t)v;
        }
        uint64_t off = rd64(r), nbytes = rd64(r);
        uint32_t crc = rd32(r);
        if (r->failed) return 0;
        uint64_t want = bli_dtype_nbytes(t->dtype, t->n_dims, t->dims);
        if (want == 0) {
            bli_set_err(r->err, r->errlen, "tensor '%s': shape is invalid for dtype %s", name, bl_dtype_name(t->dtype));
            return 0;
        }
        if (nbytes != want) {
            bli_set_err(r->err, r->errlen, "tensor '%s': %llu bytes recorded, %llu expected for its shape and dtype", name,
                       (unsigned long long)nbytes, (unsigned long long)want);
            return 0;
        }
        if (off % alignment) {
            bli_set_err(r->err, r->errlen, "tensor '%s': offset %llu is not a multiple of the alignment %u", name,
                       (unsigned long long)off, alignment);
            return 0;
        }
        if (off < prev_end) {
            bli_set_err(r->err, r->errlen, "tensor '%s': overlaps the previous tensor or is out of order", name);
            return 0;
        }
        if (off > data_size || nbytes > data_size - off) {
            bli_set_err(r->err, r->errlen, "tensor '%s': data [%llu, +%llu) lies outside the data section (%llu bytes)",
                       name, (unsigned long long)off, (unsigned long long)nbytes, (unsigned long long)data_size);
            return 0;
        }
        /* The bytes between the previous tensor and this one must be zero. */
        for (uint64_t k = prev_end; k < off; k++)
            if (data[k]) {
                bli_set_err(r->err, r->errlen, "nonzero padding byte in the data section at data offset %llu",
                           (unsigned long long)k);
                return 0;
            }
        t->data = data + off;
        t->nbytes = nbytes;
        const float_region f = floats_of(t);
        uint64_t bad;
        if (CRC_MISMATCH(tensor_crc_finite(t, &f, &bad), crc)) {
            bli_set_err(r->err, r->errlen, "tensor '%s': checksum mismatch (data damaged)", name);
            return 0;
        }
        if (bad < f.count) {
            bli_set_err(r->err, r->errlen, "tensor '%s': %s %llu of %llu is infinite or NaN (a bundle's floats must "
                        "be finite)", name, f.what, (unsigned long long)bad, (unsigned long long)f.count);
            return 0;
        }
        for (uint32_t j = 0; j < i; j++)
            if (strcmp(m->tensors[j].name, t->name) == 0) {
                bli_set_err(r->err, r->errlen, "tensor '%s' appears twice", name);
                return 0;
            }
        prev_end = off + nbytes;
    }
    if (r->p != r->end) {
        bli_set_err(r->err, r->errlen, "tensor table has %lld unexpected trailing bytes", (long long)(r->end - r->p));
        return 0;
    }
    for (uint64_t k = prev_end; k < data_size; k++)
        if (data[k]) {
            bli_set_err(r->err, r->errlen, "nonzero byte after the last tensor at data offset %llu", (unsigned long long)k);
            return 0;
        }
    return 1;
}

/* Check one required tensor: present, the given shape, and (if f32_only) f32. */
int bli_bundle_check_tensor(const bl_model *m, const char *name, int64_t d0, int64_t d1, int f32_only, char *err,
                            size_t errlen) {
    const bl_tensor *t = bl_model_find_tensor(m, name);
    if (!t) {
        bli_set_err(err, errlen, "required tensor '%s' is missing", name);
        return 0;
    }
    int nd = d1 ? 2 : 1;
    if (t->n_dims != nd || t->dims[0] != d0 || (nd == 2 && t->dims[1] != d1)) {
        if (nd == 2)
            bli_set_err(err, errlen, "tensor '%s' has the wrong shape (expected [%lld, %lld])", name, (long long)d0,
                       (long long)d1);
        else
            bli_set_err(err, errlen, "tensor '%s' has the wrong shape (expected [%lld])", name, (long long)d0);
        return 0;
    }
    if (f32_only && t->dtype != BL_F32) {
        bli_set_err(err, errlen, "tensor '%s' must be f32 (found %s)", name, bl_dtype_name(t->dtype));
        return 0;
    }
    return 1;
}

bl_model *bli_bundle_parse(const void *data, size_t size, char *err, size_t errlen) {
    const uint8_t *b = data;
    if (!data) {
        bli_set_err(err, errlen, "no bundle data");
        return NULL;
    }
    if (size < BL_HEADER_SIZE) {
        if (size >= 2 && b[0] == 0x1f && b[1] == 0x8b)
            bli_set_err(err, errlen, "this is a gzip file: decompress the bundle before loading it");
        else
            bli_set_err(err, errlen, "file too small to be a bundle (%zu bytes, header is %u)", size, BL_HEADER_SIZE);
        return NULL;
    }
    if (memcmp(b, BL_BUNDLE_MAGIC, 8) != 0) {
        if (b[0] == 0x1f && b[1] == 0x8b)
            bli_set_err(err, errlen, "this is a gzip file: decompress the bundle before loading it");
        else
            bli_set_err(err, errlen, "not a bertlens bundle (bad magic)");
        return NULL;
    }
    uint32_t version = le32(b + 8);
    if (version < BL_BUNDLE_MIN_VERSION || version > BL_BUNDLE_VERSION) {
        bli_set_err(err, errlen, "unsupported bundle format version %u (this build reads versions %u to %u)", version,
                   BL_BUNDLE_MIN_VERSION, BL_BUNDLE_VERSION);
        return NULL;
    }
    if (CRC_MISMATCH(bli_crc32(0, b, 92), le32(b + 92))) {
        bli_set_err(err, errlen, "header checksum mismatch (header damaged)");
        return NULL;
    }
    uint32_t alignment = le32(b + 12);
    uint64_t file_size = le64(b + 16), meta_off = le64(b + 24), meta_size = le64(b + 32);
    uint64_t table_off = le64(b + 40), table_size = le64(b + 48), data_off = le64(b + 56), data_size = le64(b + 64);
    uint32_t n_meta = le32(b + 72), n_tensors = le32(b + 76), meta_crc = le32(b + 80), table_crc = le32(b + 84);
    if (file_size != size) {
        bli_set_err(err, errlen, "file is %zu bytes but the header says %llu (%s)", size, (unsigned long long)file_size,
                   size < file_size ? "truncated" : "trailing garbage");
        return NULL;
    }
    if (alignment < 16 || alignment > 4096 || (alignment & (alignment - 1))) {
        bli_set_err(err, errlen, "alignment %u is not a power of two in 16..4096", alignment);
        return NULL;
    }
    if (le32(b + 88) != 0) {
        bli_set_err(err, errlen, "reserved header field is not zero");
        return NULL;
    }
    if (n_meta > MAX_META || n_tensors > MAX_TENSORS) {
        bli_set_err(err, errlen, "absurd counts: %u metadata entries, %u tensors (max %u each)", n_meta, n_tensors,
                   MAX_META);
        return NULL;
    }
    uint64_t table_end = table_off + table_size;
    if (meta_off != BL_HEADER_SIZE || meta_size > size || table_off != meta_off + meta_size || table_size > size ||
        table_end > size || data_off < table_end || data_off - table_end >= alignment || data_off % alignment ||
        data_off > size || data_size != size - data_off) {
        bli_set_err(err, errlen, "section offsets are inconsistent (meta %llu+%llu, table %llu+%llu, data %llu+%llu)",
                   (unsigned long long)meta_off, (unsigned long long)meta_size, (unsigned long long)table_off,
                   (unsigned long long)table_size, (unsigned long long)data_off, (unsigned long long)data_size);
        return NULL;
    }
    if (CRC_MISMATCH(bli_crc32(0, b + meta_off, meta_size), meta_crc)) {
        bli_set_err(err, errlen, "metadata checksum mismatch (metadata damaged)");
        return NULL;
    }
    if (CRC_MISMATCH(bli_crc32(0, b + table_off, table_size), table_crc)) {
        bli_set_err(err, errlen, "tensor table checksum mismatch (table damaged)");
        return NULL;
    }
    for (uint64_t k = table_end; k < data_off; k++)
        if (b[k]) {
            bli_set_err(err, errlen, "nonzero padding byte at file offset %llu", (unsigned long long)k);
            return NULL;
        }

    bl_model *m = calloc(1, sizeof *m);
    if (!m) {
        bli_set_err(err, errlen, "out of memory");
        return NULL;
    }
    m->bytes = b;
    m->size = size;
    m->n_meta = n_meta;
    m->version = version;
    reader r = {b + meta_off, b + meta_off + meta_size, "metadata section", err, errlen, 0};
    if (!parse_meta(m, &r)) goto fail;
    if (!parse_config(m, err, errlen)) goto fail;
    m->n_tensors = n_tensors;
    reader t = {b + table_off, b + table_end, "tensor table", err, errlen, 0};
    if (!parse_table(m, &t, data_size, alignment, b + data_off)) goto fail;
    return m;
fail:
    m->n_meta = m->meta ? n_meta : 0;
    m->n_tensors = m->tensors ? n_tensors : 0;
    bl_model_free(m);
    return NULL;
}
