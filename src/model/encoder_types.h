/* encoder_types.h — internal to the forward pass: the state bl_state_new
 * makes (encoder.c) and the weights it binds (encoder_weights.c). */
#ifndef BL_ENCODER_TYPES_H
#define BL_ENCODER_TYPES_H

#include "bertlens.h"
#include "format/bundle.h"
#include "kernels/kernels.h"
#include "base/threads.h"
#include "encoder_family.h"

#include <stddef.h>
#include <stdint.h>

typedef struct {
    blk_weight wq, wk, wv, wo; /* [hidden][hidden]                   */
    blk_weight w1;             /* [intermediate][hidden]             */
    blk_weight w2;             /* [hidden][intermediate]             */
    const float *bq, *bk, *bv, *bo; /* [hidden]                     */
    const float *b1;                /* [intermediate]               */
    const float *b2;                /* [hidden]                     */
    const float *ln1_g, *ln1_b;     /* [hidden] after attention     */
    const float *ln2_g, *ln2_b;     /* [hidden] after feed-forward  */
} layer_weights;

struct bl_state {
    const bl_model *model; /* the model it runs (borrowed; outlives the state) */
    bl_config c;
    bli_family fam;      /* the model's family (bundle.h): embeddings, positions, stored layers */
    const bli_family_traits *tr; /* its traits (family.h), set by bli_fam_init */
    int32_t max_tokens;  /* capacity of every buffer below                */
    unsigned flags;      /* BL_KEEP_* bits                                */
    int no_final;        /* bl_state_set_final(s, 0): skip the last layer's rows */
    int has_final;       /* the last forward made the final hidden states */
    float *tape;         /* per layer BLI_TAPE_LAYER floats, or NULL
                            (bli_state_set_tape): [5][T][hidden] q, k, v
                            (after rotary positions), a = ctx Wo + bo, the
                            feed-forward's output; then [T][intermediate]
                            u = in W1 + b1 and, gated blocks, the gate;
                            kept by bl_forward for the backward after it */
    int tape_ok;         /* the tape holds the last bl_forward's layers   */
    int32_t T;           /* tokens of the last forward (0: none yet)      */
    int32_t qk_layer;    /* layer of queries/keys                         */

    /* weights (borrowed from the model, SIMD copies owned by the blk_weight) */
    blk_weight word;                 /* [vocab][E]                        */
    const float *pos;               /* [pos_rows][E]                     */
    const float *type;              /* [type_vocab_size][E]              */
    const float *emb_ln_g, *emb_ln_b; /* [E]                             */
    blk_weight proj_w;              /* [hidden][E] if fam.project        */
    const float *proj_b;            /* [hidden] if fam.project           */
    layer_weights *layers;          /* [fam.n_stored]: layer l runs
                                       layers[bli_stored_layer(l)] (lw()) */
    double *gram;                   /* [n_layers][H][d][d] if KEEP_NORMS */
    uint8_t *head_mask;             /* [n_layers][H], 1 = masked (bl_state_set_head_mask) */
    int32_t n_masked;               /* heads masked (0: the unmasked path) */
    bli_famx *fx;                   /* relative / rotary families' extras (encoder_family.c), else NULL */
    const float *word_rows;         /* [T][E] given word-embedding rows instead of word[id]
                                       (bl_state_set_word_rows: explain.c's integrated gradients), or NULL */

    /* activations (compact: a [T][...] buffer holds T rows back to back) */
    float *x;        /* [T][hidden] residual stream                       */
    float *x2;       /* [T][hidden] sublayer output, swapped with x        */
    float *q, *k, *v;/* [T][hidden]                                        */
    float *ctx;      /* [T][hidden] attention context, heads concatenated  */
    float *ffn;      /* [T][intermediate]                                  */
    float *fnorm;    /* [H][T] ||f_h(x_j)||                                */
    float *emb;      /* [T][E] embeddings before the projection (fam.project) */
    int32_t *posid;  /* [T] position ids of the last forward (positions()) */
    /* per thread (slab w of thread w), sized by bl_state_reserve          */
    float *att;      /* [n_threads][T*T] one head's probabilities when not kept */
    float *scratch;  /* [n_threads][nscratch] kernel scratch (activation
                        quantization, packing)                            */
    size_t natt, nscratch; /* floats per thread in att, scratch           */
    bli_pool *pool;  /* NULL: one thread                                  */
    int32_t n_threads;

    /* results */
    float *attn;     /* [n_layers][H][T][T] if KEEP_ATTN                   */
    float *norms;    /* [n_layers][H][T][T] if KEEP_NORMS                  */
    float *queries;  /* [H][T][d] of qk_layer if KEEP_QK; [n_layers][H][T][d]
                        if KEEP_QK_ALL                                     */
    float *keys;     /* the same for keys                                  */
    float *hidden;   /* [n_layers + 1][T][hidden] if KEEP_HIDDEN           */
};

/* The weights layer l runs (ALBERT: the shared group's). */
static inline const layer_weights *bli_lw(const bl_state *s, int32_t l) {
    return &s->layers[bli_stored_layer(&s->c, &s->fam, l)];
}

/* The product layer l's attention makes of T tokens (q_h k_h^T, then A v):
 * blk_matmul_nt, or blk_matmul_nt_q for quantized weights from 64 tokens
 * where it is the faster (blk_nt_q_pays; encoder.c). scores.c makes q_h k_h^T with the same one. */
typedef void (*bli_nt_fn)(float *, int32_t, const float *, int32_t, int32_t, const float *, int32_t, int32_t, int32_t,
                          int32_t, float *);
bli_nt_fn bli_attn_product(const bl_state *s, int32_t l, int32_t T);

/* Rerun layers l0..n_layers-1 of the last bl_forward of s from its kept
 * input of layer l0 (bl_hidden(s, l0); the state made with BL_KEEP_HIDDEN),
 * under the state's current head mask: bit for bit what bl_forward gives
 * when nothing below layer l0 differs (explain.c's head effects switch off
 * a head of layer l0). 0, or -1 (err). */
int bli_forward_from(bl_state *s, int32_t l0, char *err, size_t errlen);

/* The buffer (bli_tape_floats(s, T) floats) the next bl_forwards of s fill
 * with what backward.c would otherwise recompute, or NULL (the caller owns
 * it). bli_forward_from leaves it stale (tape_ok = 0). One layer's part,
 * BLI_TAPE_LAYER floats (gated: the feed-forward block has a gate):
 *   [5][T][H]        q, k, v, a, o (see bl_state.tape)
 *   [1 + gated][T][I] u, and the gate */
#define BLI_TAPE_LAYER(T, H, I, gated) ((size_t)(T) * (5 * (size_t)(H) + (1 + (size_t)!!(gated)) * (size_t)(I)))
size_t bli_tape_layer(const bl_state *s, int32_t T);  /* one layer's: BLI_TAPE_LAYER for s */
size_t bli_tape_floats(const bl_state *s, int32_t T); /* the whole tape's: every layer's   */
void bli_state_set_tape(bl_state *s, float *tape);

/* encoder_weights.c: bind the bundle's tensors (bundle.h lists, per family),
 * free them, and the value norms' Gram matrices. */
int bli_enc_build_weights(bl_state *s, const bl_model *m, char *err, size_t errlen);
void bli_enc_free_weights(bl_state *s);
int bli_enc_build_gram(bl_state *s, char *err, size_t errlen);

#endif
