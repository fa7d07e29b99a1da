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
#include "conv_state.h"
#include "format/bundle.h"
#include "base/dtype.h"
#include "base/error.h"
#include "base/sizes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- state */


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
    c->name = bli_conv_strdup(o && o->name && *o->name ? o->name : "checkpoint");
    c->license = o && o->license ? bli_conv_strdup(o->license) : NULL;
    if (!c->name || (o && o->license && !c->license)) goto oom;
    bli_sha256_init(&c->sha);
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

/* ------------------------------------------------------------- begin */

static int add_weight(bli_conv *c, const char *path, char *err, size_t errlen) {
    for (int i = 0; i < c->n_weights; i++)
        if (!strcmp(c->weights[i], path)) return 0;
    if (c->n_weights == MAX_FILES) {
        bli_set_err(err, errlen, "more than %d weight files", MAX_FILES);
        return -1;
    }
    const cfile *f = bli_conv_file_at(c, "", path);
    if (!f) {
        bli_set_err(err, errlen, "%s is listed in model.safetensors.index.json but missing", path);
        return -1;
    }
    if (!(c->weights[c->n_weights] = bli_conv_strdup(path))) {
        bli_set_err(err, errlen, "out of memory");
        return -1;
    }
    c->weight_size[c->n_weights++] = f->size;
    return 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int stage_weights(bli_conv *c, char *err, size_t errlen) {
    const cfile *st = bli_conv_file_at(c, c->dir, "model.safetensors");
    if (st) return add_weight(c, st->name, err, errlen);
    const cfile *ix = bli_conv_file_at(c, c->dir, "model.safetensors.index.json");
    if (!ix) {
        bli_set_err(err, errlen,
                    "%spytorch_model.bin is the only weights file: bertlens reads safetensors. Get "
                    "model.safetensors from the model's Hugging Face page (many repositories have it, or a "
                    "'refs/pr' safetensors conversion), or convert it once with Python: "
                    "AutoModel.from_pretrained(DIR).save_pretrained(DIR, safe_serialization=True)",
                    c->dir);
        return -1;
    }
    bli_jv *v = bli_conv_parse_file(ix, err, errlen);
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
        if (bli_conv_file_at(c, dirs[i], "config.json") &&
            (bli_conv_file_at(c, dirs[i], "model.safetensors") || bli_conv_file_at(c, dirs[i], "model.safetensors.index.json") ||
             bli_conv_file_at(c, dirs[i], "pytorch_model.bin")))
            c->dir = dirs[i];
    if (!c->dir) {
        bli_set_err(err, errlen,
                    "no config.json with model.safetensors (or model.safetensors.index.json) found in the folder "
                    "or its 0_Transformer/");
        return -1;
    }
    bli_jv *cfg = bli_conv_parse_file(bli_conv_file_at(c, c->dir, "config.json"), err, errlen);
    if (!cfg) return -1;
    int rc = bli_conv_stage_config(c, cfg, err, errlen);
    if (!rc) rc = bli_conv_stage_head(c, cfg, err, errlen);
    bli_jfree(cfg);
    if (rc || bli_conv_stage_vocab(c, err, errlen) || stage_weights(c, err, errlen) || bli_conv_stage_sentence(c, err, errlen))
        return -1;
    return 0;
}

int bli_conv_n_weights(const bli_conv *c) { return c->n_weights; }
const char *bli_conv_weight_name(const bli_conv *c, int w) {
    return w >= 0 && w < c->n_weights ? c->weights[w] : NULL;
}

/* ------------------------------------------------------------- plan */

static uint64_t align_up(uint64_t n) { return (n + ALIGN - 1) / ALIGN * ALIGN; }

/* Provenance entries, in convert.py's order (sha: 64 hex digits). */
static int provenance(const bli_conv *c, bli_jbuf *b, const char *sha) {
    const char *lic = c->license ? c->license : "unknown";
    int n = 0;
    bli_conv_meta_str(b, "source.name", c->name), n++;
    bli_conv_meta_str(b, "source.license", lic), n++;
    bli_conv_meta_str(b, "source.sha256", sha), n++;
    bli_conv_meta_str(b, "source.file", c->sharded ? "model.safetensors.index.json" : "model.safetensors"), n++;
    bli_conv_meta_str(b, "converter.version", BLI_CONVERTER_VERSION), n++;
    bli_conv_meta_str(b, "weights.dtype", bl_dtype_name(c->dtype)), n++;
    bli_conv_meta_str(b, "weights.embed_dtype", bl_dtype_name(c->embed_dtype)), n++;
    bli_conv_meta_str(b, "weights.rounding", "nearest"), n++;
    if (c->max_seq) bli_conv_meta_str(b, "sentence.max_seq_length", c->max_seq), n++;
    return n;
}

/* A tensor name of BL_TENSORS_*: per-layer names take the layer number. */
static void layer_name(char *buf, size_t n, const char *fmt, int layer) { snprintf(buf, n, fmt, layer); }

#define PLAN_ONE(field, name, d0, d1, dts)                                                                          \
    do {                                                                                                            \
        char nm[96];                                                                                                \
        layer_name(nm, sizeof nm, name, l);                                                                         \
        int dt = BL_DTYPES_##dts == BL_DTYPES_F32 ? BL_F32 : !strcmp(#field, "word") ? c->embed_dtype : c->dtype; \
        if (bli_conv_add_tensor(c, nm, bli_fdim_size(&c->cfg, &c->fam, BL_DIM_##d0), bli_fdim_size(&c->cfg, &c->fam, BL_DIM_##d1), \
                   dt, err, errlen))                                                                                \
            return -1;                                                                                              \
    } while (0);

/* The masked-LM head (bundle.h), when the checkpoint has one (its
 * head.transform.weight, convert_head.c's names): its tensors after the
 * encoder's, then its metadata entries after the others of c->meta. */
static int plan_head(bli_conv *c, char *err, size_t errlen) {
    const stensor *tw = NULL;
    for (int i = c->n_st; i-- > 0 && !tw;)
        if (!strcmp(c->st[i].name, "head.transform.weight")) tw = &c->st[i];
    if (!tw) return 0;
    const int64_t H = c->cfg.hidden, V = c->cfg.vocab_size, E = tw->n_dims == 2 ? tw->dims[0] : 0;
    const int64_t W = bli_fdim_size(&c->cfg, &c->fam, BL_DIM_EMBED); /* the word embedding's width */
    if (E < 1 || E > BL_MAX_HIDDEN) {
        bli_set_err(err, errlen, "head.transform.weight: shape is not [E, %lld] with E in 1..%u", (long long)H,
                    BL_MAX_HIDDEN);
        return -1;
    }
    if (c->head_tied && E != W) {
        bli_set_err(err, errlen, "the masked-LM head is %lld wide but its decoder is tied to %lld-wide word "
                    "embeddings", (long long)E, (long long)W);
        return -1;
    }
    if (bli_conv_add_tensor(c, "head.transform.weight", E, H, c->dtype, err, errlen) ||
        bli_conv_add_tensor(c, "head.transform.bias", E, 0, BL_F32, err, errlen) ||
        bli_conv_add_tensor(c, "head.ln.weight", E, 0, BL_F32, err, errlen) ||
        bli_conv_add_tensor(c, "head.ln.bias", E, 0, BL_F32, err, errlen) ||
        (!c->head_tied && bli_conv_add_tensor(c, "head.decoder.weight", V, E, c->embed_dtype, err, errlen)) ||
        bli_conv_add_tensor(c, "head.decoder.bias", V, 0, BL_F32, err, errlen))
        return -1;
    bli_conv_meta_str(&c->meta, "head.kind", "mlm"), c->n_meta++;
    bli_conv_meta_u32(c, "head.tied", (uint32_t)c->head_tied);
    bli_conv_meta_str(&c->meta, "head.activation", c->head_act), c->n_meta++;
    uint32_t bits;
    memcpy(&bits, &c->ln_eps, 4);
    bli_conv_meta_key(&c->meta, "head.ln_eps", BL_META_F32);
    bli_conv_put32(&c->meta, bits);
    c->n_meta++;
    bli_conv_logf(c, "[head]   masked-LM head: width %lld, %s, decoder %s", (long long)E, c->head_act,
                  c->head_tied ? "tied to the word embeddings" : "stored");
    return 0;
}

int bli_conv_plan(bli_conv *c, char *err, size_t errlen) {
    if (!c->dir || c->headers_set < c->n_weights || c->planned) {
        bli_set_err(err, errlen, "bli_conv_plan: call after bli_conv_begin and every bli_conv_set_header");
        return -1;
    }
    /* embeddings, projection, stored layers, the masked-LM head's (at most 6),
     * the relative and rotary families' own (at most 3 + one per layer) */
    int n = 5 + 2 + 16 * c->fam.n_stored + 6 + 3 + c->cfg.n_layers + 6 /* the task head's */;
    c->ot = calloc((size_t)n, sizeof *c->ot);
    if (!c->ot) {
        bli_set_err(err, errlen, "out of memory");
        return -1;
    }
    int l = 0;
    BL_TENSORS_WORD(PLAN_ONE)
    BL_TENSORS_EMBED(PLAN_ONE)
    if (c->fam.project) {
        BL_TENSORS_PROJECT(PLAN_ONE)
    }
    for (l = 0; l < c->fam.n_stored; l++) {
        BL_TENSORS_LAYER(PLAN_ONE)
    }
    l = 0;
    /* the traits' own tensors (family.h), in bundle.h's order */
    const bli_family_traits *tr = bli_traits(c->fam.kind);
    if (tr->positions == BLI_POS_BUCKETS) {
        BL_TENSORS_MPNET(PLAN_ONE)
    }
    if (tr->positions == BLI_POS_DISENTANGLED) {
        BL_TENSORS_DEBERTA(PLAN_ONE)
        if (c->fam.rel_norm) {
            BL_TENSORS_DEBERTA_NORM(PLAN_ONE)
        }
    }
    if (tr->final_norm) {
        BL_TENSORS_MODERNBERT(PLAN_ONE)
    }
    for (l = 0; tr->ffn == BLI_FFN_GATED && l < c->cfg.n_layers; l++) {
        BL_TENSORS_MODERNBERT_LAYER(PLAN_ONE)
    }
    if (bli_conv_plan_task(c, err, errlen) || plan_head(c, err, errlen)) return -1;
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
    bli_sha256_update(&c->sha, p, n);
    c->hashed += n;
}

int bli_conv_source(const bli_conv *c, int t, int *w, uint64_t *off, uint64_t *n) {
    if (!c->planned || t < 0 || t >= c->n_ot) return -1;
    if (c->ot[t].src < 0) { /* made here: no bytes to read */
        *w = 0, *off = 0, *n = 0;
        return 0;
    }
    const stensor *s = &c->st[c->ot[t].src];
    const otensor *o = &c->ot[t];
    *w = s->w;
    *off = s->off + o->skip;
    /* a row slice (convert_rel.c) reads only its rows (of one value for a bias) */
    *n = o->skip || s->dims[0] != o->dims[0]
             ? (uint64_t)o->dims[0] * (uint64_t)(o->n_dims == 2 ? o->dims[1] : 1) * (uint64_t)bli_conv_src_size[s->src]
             : s->nbytes;
    return 0;
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
            for (int k = 0; k < c->n_ot && !used; k++) used = !strcmp(c->ot[k].name, c->st[i].name) || c->ot[k].src == i;
            for (int k = 0; k < skipped && !used; k++) used = !strcmp(names[k], c->st[i].name);
            if (!used) names[skipped++] = c->st[i].name;
        }
        qsort(names, (size_t)skipped, sizeof *names, cmp_str);
        for (int i = 0; i < skipped && i < 6; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", names[i]);
        if (skipped)
            bli_conv_logf(c, "[tensor] skipped %d tensors not used by the encoder: %s%s", skipped, list,
                  skipped > 6 ? " ..." : "");
        free(names);
    }
    if (!c->license) bli_conv_logf(c, "[write]  warning: no --license given; recording 'unknown'");

    char sha[65];
    bli_sha256_hex(&c->sha, sha);
    bli_jbuf b = {0};
    uint8_t hdr[BL_HEADER_SIZE] = {0};
    bli_json_raw(&b, c->meta.data, c->meta.len);
    int n_meta = c->n_meta + provenance(c, &b, sha);
    size_t table_at = b.len;
    for (int i = 0; i < c->n_ot; i++) {
        const otensor *t = &c->ot[i];
        bli_conv_put32(&b, (uint32_t)strlen(t->name));
        bli_json_raw(&b, t->name, strlen(t->name));
        bli_conv_put32(&b, (uint32_t)t->dtype);
        bli_conv_put32(&b, (uint32_t)t->n_dims);
        for (int d = 0; d < t->n_dims; d++) bli_conv_put64(&b, (uint64_t)t->dims[d]);
        bli_conv_put64(&b, t->off);
        bli_conv_put64(&b, t->nbytes);
        bli_conv_put32(&b, t->crc);
    }
    if (b.oom || table_at != c->meta_size || b.len - table_at != c->table_size) {
        bli_jbuf_free(&b);
        bli_set_err(err, errlen, b.oom ? "out of memory" : "internal error: metadata size changed");
        return -1;
    }
    const uint8_t *mb = (const uint8_t *)b.data;
    memcpy(hdr, BL_BUNDLE_MAGIC, 8);
    /* version 1 unless a BYTES entry or model.family (bundle.h) */
    put_at(hdr + 8, c->meta_bytes || c->meta_family ? BL_BUNDLE_VERSION : 1u, 4);
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
