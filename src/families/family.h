/* family.h — the encoder families bertlens runs, and the ones it refuses
 * by name (src/families/family.c). A family is a Hugging Face model_type and a row of
 * traits: how its positions, embeddings, norms, feed-forward block and
 * attention are made, which config.json keys say so, and how its tensor
 * names map onto the bundle's (BERT's names, bundle.h). The converter, the
 * loader, the encoder and `bertlens info` read the traits; each trait is
 * implemented once, as a block (docs/adding-a-family.md lists them).
 *
 * Families of one layout share a kind (BLI_FAM_*, the row of FAMILY_TRAITS
 * in family.c): "xlm-roberta" and "camembert" run as "roberta". */
#ifndef BL_FAMILY_H
#define BL_FAMILY_H

#include <stdint.h>

/* The layouts: the index of each family's traits (family.c). */
enum { BLI_FAM_BERT, BLI_FAM_ROBERTA, BLI_FAM_ELECTRA, BLI_FAM_ALBERT, BLI_FAM_MPNET, BLI_FAM_DEBERTA,
       BLI_FAM_MODERNBERT, BLI_FAM_NOMIC, BLI_FAM_GTE, BLI_FAM_EUROBERT, BLI_FAM_N };

/* positions */
enum {
    BLI_POS_ABSOLUTE,     /* a learned row per position, added to the embeddings          */
    BLI_POS_BUCKETS,      /* MPNet: a learned bias per head and bucket of j - i, every layer */
    BLI_POS_DISENTANGLED, /* DeBERTa: c2p / p2c terms from relative embeddings             */
    BLI_POS_ROTARY        /* RoPE on q and k (rotate-half), theta per layer                */
};
/* where absolute position ids start */
enum {
    BLI_PAD_NONE,   /* 0, 1, 2, ...                                                  */
    BLI_PAD_CONFIG, /* RoBERTa: from pad_token_id + 1, pad tokens at pad_token_id     */
    BLI_PAD_ONE     /* MPNet: from 2, pad tokens at 1, whatever pad_token_id says      */
};
/* token types */
enum {
    BLI_TYPES_CONFIG,         /* type_vocab_size rows (at least 1)                      */
    BLI_TYPES_CONFIG_OR_NONE, /* type_vocab_size, which may be 0: then none             */
    BLI_TYPES_NONE            /* none: one row of zeros, the ids ignored                */
};
/* the E -> hidden embedding projection */
enum { BLI_PROJ_NONE, BLI_PROJ_IF_NARROW /* when embedding_size != hidden */, BLI_PROJ_ALWAYS };
/* where a layer's norms sit */
enum {
    BLI_LAYER_POST_NORM, /* x = N1(x + attn(x)); x = N2(x + ffn(x))                     */
    BLI_LAYER_PRE_NORM   /* x += attn(N1(x)); x += ffn(N2(x)); the last: x = Nfinal(x)   */
};
enum { BLI_NORM_LAYER /* LayerNorm */, BLI_NORM_RMS /* RMSNorm: x / rms(x) * g */ };
/* the feed-forward block */
enum {
    BLI_FFN_PLAIN, /* act(x W1 + b1) W2 + b2                                        */
    BLI_FFN_GATED  /* (act(x W1 + b1) * (x Wg)) W2 + b2: GeGLU (gelu), SwiGLU (silu) */
};

/* A name map entry: a source name starting with `from` gets `to` instead. */
typedef struct bli_name_map {
    const char *from, *to;
} bli_name_map;

/* A task head's recipe (convert_head.c, docs/bundle-format.md "Task heads"):
 * the source tensors (after the converter's name map) of its dense layer,
 * norm and output, as the transformers class computes them. */
typedef struct bli_head_recipe {
    const char *dense_w, *dense_b; /* the dense layer, or NULL: none           */
    const char *act;      /* its activation (bundle name), or NULL: act_key's   */
    const char *act_key;  /* config.json's key of it (default gelu), or NULL    */
    const char *norm_w, *norm_b; /* a norm after the activation, or NULL        */
    const char *pool_key; /* config.json's pooling key, or NULL: first token     */
    const bli_name_map *pools; /* pool_key's values -> task.pooling (first, mean,
                                  late), NULL-ended; the first is the default   */
    const char *out_w, *out_b; /* the output layer                              */
} bli_head_recipe;

typedef struct bli_family_traits {
    int kind;           /* BLI_FAM_*: this row's index                                   */
    /* positions */
    int positions;      /* BLI_POS_*                                                     */
    int pad_positions;  /* BLI_PAD_*                                                     */
    int sliding;        /* rotary: global layers every n-th, local ones windowed with
                           their own theta (ModernBERT); else one theta, every key      */
    /* embeddings */
    int types;          /* BLI_TYPES_*                                                   */
    int project;        /* BLI_PROJ_*                                                    */
    int32_t embed_default; /* embedding_size when config.json has none (0: hidden)     */
    int layer_groups;   /* ALBERT: layers run num_hidden_groups stored groups            */
    int no_emb_norm;    /* the embeddings are not normed (its tensors zeros, unread)     */
    /* layers */
    int layer;          /* BLI_LAYER_*                                                   */
    int norm;           /* BLI_NORM_* of every norm                                      */
    int first_norm;     /* pre-norm: layer 0 norms its input (ModernBERT's does not:
                           its input is the embeddings' norm)                            */
    int final_norm;     /* a norm after the last layer (encoder.final_norm.weight)       */
    int ffn;            /* BLI_FFN_*: gated = encoder.layer.N.intermediate.gate.weight  */
    int absent_biases;  /* biases (and unread norms) the checkpoint lacks are zeros      */
    /* config.json */
    const char *act_key;     /* the activation's key (NULL: hidden_act)                  */
    const char *eps_key;     /* the norms' epsilon (NULL: layer_norm_eps)                */
    double eps_default;      /* 0: 1e-12                                                 */
    const char *const *must_be_false; /* boolean keys it refuses when true (NULL-ended)  */
    /* the converter's name map, applied to the names after the common prefixes
     * (bert., model., ...) are gone: */
    const char *const *prefixes;  /* task-model prefixes stripped too (NULL-ended)      */
    const bli_name_map *names;    /* whole names by prefix (NULL-ended); first match wins */
    const char *layer_src;        /* the source's layer prefix before N. (NULL: none)    */
    const bli_name_map *layer_names; /* within layer N (NULL-ended) -> encoder.layer.N.  */
    const char *fused_qkv;   /* "...%d..." source prefix of a [3 hidden][hidden] q|k|v
                                (then "weight" / "bias"), or NULL                        */
    const char *fused_ffn;   /* the same for a [2 intermediate][hidden] W1|Wg, or NULL   */
    int fused_ffn_gate_first; /* its first half is the gate (the un-activated factor)    */
    const char *about;       /* `bertlens info`'s words for what sets it apart, or NULL  */
    /* heads (convert_head.c) */
    int head_gelu;           /* the masked-LM head applies erf GELU whatever hidden_act says */
    const char *head_act_key; /* the masked-LM head's own activation key (NULL: the encoder's) */
    int head_tied_legacy;    /* legacy false in config.json ties the decoder (DeBERTa-v2)  */
    int head_no_biases;      /* the heads' biases (and norm's) may be absent: zeros        */
    const bli_head_recipe *seq_head;   /* *ForSequenceClassification, or NULL: not known */
    const bli_head_recipe *token_head; /* *ForTokenClassification (NULL: classifier)     */
    const bli_head_recipe *qa_head;    /* *ForQuestionAnswering (NULL: qa_outputs)       */
    const bli_head_recipe *distil_seq_head; /* DistilBERT's (its layout is BERT's)       */
} bli_family_traits;

typedef struct bli_family_info {
    const char *type;  /* model_type, e.g. "roberta"                       */
    int kind;          /* BLI_FAM_*, or -1: refused                        */
    const char *what;  /* kind -1: why, in a sentence; else a short label  */
} bli_family_info;

/* The entry of model_type `type`, or NULL for a type the table does not know. */
const bli_family_info *bli_family_find(const char *type);

/* The traits of layout `kind` (BLI_FAM_*; BERT's for any other value). */
const bli_family_traits *bli_traits(int kind);

/* The supported families' model_types, comma-separated, for messages. */
const char *bli_family_list(void);

/* The supported families' model_types one by one: NULL past the last. */
const char *bli_family_type(int i);

#endif
