/* encoder_family.h — attention and position pieces of the encoder families
 * beyond BERT (internal, bli_ prefix). Each is a plain function on
 * caller-owned buffers: nothing here allocates, so the forward pass can call
 * them per layer, per head or per block of rows.
 *
 * Conventions: a [T][T] score matrix has rows = queries, columns = keys.
 * A relative table indexed by r = 0 .. 2T-2 holds relative position
 * r - (T - 1); which difference (key - query or query - key) each family
 * means is said at its function. Rows of q, k (and of projected relative
 * embeddings) have stride ld floats; a head's d columns start at its pointer.
 *
 * Files: encoder_rel.c (MPNet's bucketed bias, DeBERTa's disentangled
 * terms), encoder_rope.c (RoPE, the sliding window, GeGLU), encoder_family.c
 * (the hooks below, which the forward pass calls, switching on the
 * family's traits, family.h; and the norm and feed-forward blocks).
 */
#ifndef BL_ENCODER_FAMILY_H
#define BL_ENCODER_FAMILY_H

#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------- MPNet
 * scores_h = q_h k_h^T / sqrt(d) + bias_h, bias_h[i][j] = table[bucket(j - i)][h]
 * (the encoder's relative_attention_bias, shared by every layer). */

/* Bucket of the relative position rel = key - query: bidirectional, half the
 * buckets per direction, exact below num_buckets / 4, logarithmic up to
 * max_distance, then the last bucket (MPNet: 32 buckets, max_distance 128).
 * The logarithm is taken in float as Hugging Face does, so the boundaries
 * fall on the same positions. */
int32_t bli_mpnet_bucket(int32_t rel, int32_t num_buckets, int32_t max_distance);

/* bias [n_heads][2T-1]: bias[h][r] = table[bucket(r - (T - 1))][h] from
 * table [num_buckets][n_heads]. Once per forward; every layer reads it. */
void bli_mpnet_bias(float *bias, const float *table, int32_t n_heads, int32_t T, int32_t num_buckets,
                    int32_t max_distance);

/* a [T][T] in place: a[i][j] = a[i][j] / div + rel[j - i + T - 1]
 * (div = sqrt(d); rel = bias + h * (2T - 1)). Then blk_softmax(a, T, T, 1). */
void bli_rel_bias_add(float *a, int32_t T, float div, const float *rel);

/* -------------------------------------------------------- DeBERTa-v2/v3
 * scores_h = (q_h k_h^T + c2p + p2c) / sqrt(d * (1 + number of terms)), with
 *   c2p[i][j] = q_h[i] . pk_h[idx(i - j)]      pk = rel_emb Wk'^T + bk'
 *   p2c[i][j] = k_h[j] . pq_h[idx(i - j)]      pq = rel_emb Wq'^T + bq'
 * rel_emb = LayerNorm(rel_embeddings) when norm_rel_ebd has layer_norm;
 * Wk', Wq' = the layer's key and query projections (share_att_key) or its
 * pos_key_proj / pos_query_proj. idx(delta) = clamp(bucket(delta) + span, 0,
 * 2 span - 1), span = position_buckets > 0 ? position_buckets :
 * max_relative_positions (bucket(delta) = delta without buckets). */

enum { BLI_DEB_C2P = 1, BLI_DEB_P2C = 2 };

/* Log bucket of delta = query - key (Hugging Face make_log_bucket_position):
 * delta itself within +-buckets/2, else sign * (ceil(log(|delta| / mid) /
 * log((max_positions - 1) / mid) * (mid - 1)) + mid), mid = buckets / 2, in
 * float as Hugging Face computes it. buckets <= 0 or max_positions <= 0:
 * delta unchanged. */
int32_t bli_deberta_bucket(int32_t delta, int32_t buckets, int32_t max_positions);

/* idx [2T-1]: idx[r] = index into the 2 span relative rows of delta =
 * r - (T - 1) = i - j, minus the first row used; *r0 = that first row and
 * *nr = rows used, from the first to the last any delta reads (in [1, 2
 * span]; more than 2T - 1 where the buckets jump). The caller projects rows
 * r0 .. r0 + nr - 1 only. span: position_buckets if > 0, else
 * max_relative_positions. */
void bli_deberta_rel_index(int32_t *idx, int32_t *r0, int32_t *nr, int32_t T, int32_t buckets,
                           int32_t max_positions);
/* The *nr bli_deberta_rel_index gives for T tokens; never smaller for more
 * tokens (their deltas include those of fewer), so the value at the most
 * tokens a state takes sizes its buffers. */
int32_t bli_deberta_rel_rows(int32_t T, int32_t buckets, int32_t max_positions);

/* Floats of scratch bli_deberta_add needs. */
size_t bli_deberta_scratch_floats(int32_t T, int32_t nr, int32_t d);

/* a [T][T] += c2p + p2c (terms: BLI_DEB_* bits) for one head: q, k [T] rows
 * of stride ld (the head's d columns), pk, pq [nr] rows of stride ldp (the
 * head's columns of the projected rows r0 .. r0 + nr - 1; the one a term
 * does not use may be NULL), idx from bli_deberta_rel_index. Then
 * blk_softmax(a, T, T, 1 / sqrt(d * (1 + terms))). */
void bli_deberta_add(float *a, int32_t T, const float *q, const float *k, int32_t ld, const float *pk,
                     const float *pq, int32_t ldp, const int32_t *idx, int32_t nr, int32_t d, unsigned terms,
                     float *scratch);

/* ---------------------------------------------------------- ModernBERT */

/* inv [d/2]: inv[i] = 1 / theta^(2i / d), each step in float as Hugging
 * Face computes it (so that t * inv[i] is the same angle). */
void bli_rope_freq(float *inv, int32_t d, float theta);

/* RoPE table cs [T][d]: for i < d/2, cs[t][i] = cos(t f_i), cs[t][d/2 + i] =
 * sin(t f_i), f_i = bli_rope_freq's inv[i], t f_i in float. d even. */
void bli_rope_table(float *cs, int32_t T, int32_t d, float theta);

/* Rotate rows [t0, t1) of x ([T][ld], n_heads heads of d columns from
 * column 0) in place, rotate-half convention: with a = x[i], b = x[i + d/2],
 *   x[i] = a cos - b sin,  x[i + d/2] = b cos + a sin. */
void bli_rope_rows(float *x, int32_t ld, int32_t t0, int32_t t1, int32_t n_heads, int32_t d, const float *cs);

/* Softmax of exp(scale * a) over the window |i - j| <= half of each row of
 * a [T][T], in place; every key outside the window is an exact 0.
 * half < 0: the whole row (a global layer). */
void bli_softmax_window(float *a, int32_t T, float scale, int32_t half);

/* Keys [*j0, *j1) of query i in a window of half-width half (< 0: all T). */
void bli_window_of(int32_t i, int32_t T, int32_t half, int32_t *j0, int32_t *j1);

/* GeGLU in place: y [T][2I] (Wi's output: input half, then gate half) ->
 * its first T * I floats [T][I] = act(input) * gate; act a bl_activation. */
void bli_geglu(float *y, int32_t T, int32_t I, int32_t act);

/* --------------------------------------------------------------- Hooks
 * What encoder.c calls, at fixed points, for a model of one of these
 * families (bundle.h "Families"); each is a no-op for the others (s->fx
 * NULL), and bli_fam_softmax is then BERT's softmax of q k^T / sqrt(d). */
typedef struct bl_state bl_state;
typedef struct bl_model bl_model;
typedef struct bli_famx bli_famx; /* the family's extras (encoder_family.c) */

/* bl_state_new, after the layers are bound: the family's own tensors
 * (MPNet's bias table; DeBERTa's relative embeddings, LayerNorm'ed once). */
int bli_fam_init(bl_state *s, const bl_model *m, char *err, size_t errlen);
void bli_fam_free(bl_state *s);
/* bl_state_reserve: buffers for up to T tokens, and the per-thread scratch
 * floats the family needs beyond the kernels'. */
int bli_fam_reserve(bl_state *s, int32_t T, char *err, size_t errlen);
void bli_fam_free_buffers(bl_state *s);
size_t bli_fam_scratch_floats(const bl_state *s, int32_t T);
/* bl_forward, before the embeddings: this input's tables (MPNet's bias,
 * DeBERTa's relative rows); -1 with a reason if they would not fit the
 * buffers bli_fam_reserve made (never, when T is at most its T). */
int bli_fam_forward_begin(bl_state *s, int32_t T, char *err, size_t errlen);
/* Before layer l's heads: DeBERTa's relative rows through the layer's key
 * and query projections (on the state's pool). */
void bli_fam_layer_begin(bl_state *s, int32_t l);
/* Right after rows [t0, t1) of q, k are projected: ModernBERT's rotation. */
void bli_fam_qk_rows(bl_state *s, int32_t l, int32_t t0, int32_t t1);
/* Head h of layer l: a [T][T] holds q_h k_h^T; leaves the probabilities
 * (the family's terms, scale, window and softmax). scratch: the thread's. */
void bli_fam_softmax(bl_state *s, int32_t l, int32_t h, float *a, int32_t T, float *scratch);
/* bl_scores (scores.c), head h of layer l after a forward that kept the
 * layer's q, k ([T][d] each, rows of d floats): scores [T][T] holds
 * q_h k_h^T, made as the forward pass makes it (bli_attn_product), and is
 * left holding the logits bli_fam_softmax's softmax takes; terms (when not
 * NULL) the family's terms [n][T][T] in bli_fam_score_terms' order. Keys
 * the layer masks out are NaN in both. scratch: the first thread's (the
 * forward pass is not running). */
void bli_fam_scores(bl_state *s, int32_t l, int32_t h, const float *q, const float *k, int32_t T, float *scores,
                    float *terms, float *scratch);
/* The names of those terms, and layer l's window (bl_score_terms). */
typedef struct bl_score_info bl_score_info;
typedef struct bli_family bli_family;
typedef struct bl_config bl_config;
void bli_fam_score_terms(const bli_family *f, const bl_config *c, int32_t l, bl_score_info *out);
/* The blocks of the norm and feed-forward traits (family.h), which
 * encoder.c's layers call on rows of hidden width:
 * bli_fam_norm: x [R][hidden] = N(x + res) (res NULL: N(x)), N the family's
 *   LayerNorm (g, b) or RMSNorm (g; b unread).
 * bli_fam_final_norm: x = Nfinal(x) for the families with a final norm.
 * bli_fam_ffn: rows [t0, t1) of y [T][hidden] = the feed-forward block of
 *   layer l on rows of in (a block of R = t1 - t0 rows, may be y):
 *   act(in W1 + b1) [* (in Wg)] W2 + b2, through s->ffn's rows t0..t1;
 *   tu, tg (the tape's rows, or NULL): u = in W1 + b1 [R][I] and the gate
 *   in Wg are kept there (the same bits: the activation then runs after
 *   the product instead of inside it, as blk_matmul_act's contract allows). */
void bli_fam_norm(const bl_state *s, float *x, const float *res, int32_t R, const float *g, const float *b);
void bli_fam_final_norm(const bl_state *s, float *x, int32_t R);
void bli_fam_ffn(bl_state *s, int32_t l, float *y, const float *in, int32_t t0, int32_t t1, float *scratch,
                 float *tu, float *tg);

#endif
