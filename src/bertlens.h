/* bertlens.h — public C API of bertlens.
 *
 * One prefix (bl_) for every public name. Everything starts from bytes in
 * memory: in the browser a bundle arrives from fetch(), natively from a file.
 * The library never aborts and never exits: every function that can fail
 * returns NULL or a negative code and writes a human-readable reason into a
 * caller-provided buffer (err, errlen; err may be NULL).
 *
 * Pieces, each in one file (or a family of files):
 *   bundle.c     bundle format (spec in bundle.h) -> bl_model; dtypes and
 *                the f16 codec in dtype.h
 *   tokenizer.c  BERT WordPiece, identical to Hugging Face      -> bl_tokens
 *                (utf8.c: the one strict UTF-8 decoder)
 *   encoder.c    the forward pass of every encoder family (family.c lists
 *                them) exposing attention, q/k, norms; encoder_state.c,
 *                encoder_weights.c, encoder_family.c
 *   kernels*.c   matmul / layernorm / softmax / gelu, scalar + SIMD
 *   scores.c     one head's pre-softmax scores and the terms they add up
 *                from (content, relative positions: per family)
 *   analyze.c    head features + pattern class, attention rollout
 *   embed.c      sentence embeddings (mean pooling, L2 norm)
 *   convert*.c   Hugging Face checkpoint -> bundle (internal API: convert.h)
 *   json*.c      the JSON the two front ends print (json.h)
 *   wasm_api.c   thin EMSCRIPTEN_KEEPALIVE boundary for the web worker
 *   cli*.c       build/bertlens: info | tokenize | attend | analyze | embed | bench | convert | corpus
 *
 * Embedding: `make lib` builds build/libbertlens.a; include only this header
 * and link with -lbertlens -lm (tests/c/embed_example.c is a complete program):
 *
 *     bl_model *m = bl_model_load(bytes, size, err, sizeof err); // borrows bytes
 *     bl_tokens tk;                                              // max: the model's positions
 *     bl_tokenize(bl_model_tokenizer(m), "The cat sat.", 12, NULL, 0,
 *                 bl_model_config(m)->max_positions, &tk, err, sizeof err);
 *     bl_state *s = bl_state_new(m, tk.n, BL_KEEP_ATTN, err, sizeof err);
 *     bl_forward(s, tk.ids, tk.type_ids, tk.n, 0, err, sizeof err);
 *     const float *a = bl_attention(s, 0);  // layer 0: [heads][T][T]
 *     ...
 *     bl_state_free(s); bl_tokens_free(&tk); bl_model_free(m); free(bytes);
 *   (every call above can fail: check for NULL / non-zero and print err.)
 *
 * Lifetimes: the bundle bytes outlive the model, the model outlives every
 * state made from it (a state holds its model; bl_forward takes only the
 * state), and result pointers (bl_attention, ...) are valid until the next
 * bl_forward / bl_state_reserve / bl_state_free on that state. Tokens and
 * analyses (bl_tokens, bl_analysis) are the caller's, freed by their _free.
 *
 * Threads: the only global state is the CRC table, filled by the first
 * bl_model_load: load one model before starting threads.
 * A bl_model and its tokenizer are read-only after loading and may be shared
 * by any number of threads. A bl_state is not: give each thread its own
 * (bl_state_new on the shared model), or serialise the calls on one state.
 * A state can itself run its forward pass on several threads
 * (bl_state_set_threads; the library then starts and joins those threads
 * itself): that changes none of the rules above and none of the results.
 */
#ifndef BERTLENS_H
#define BERTLENS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BL_VERSION "0.1.0"

/* ---------------------------------------------------------------- model */

typedef enum { BL_ACT_GELU = 0 /* exact erf GELU */, BL_ACT_GELU_TANH = 1, BL_ACT_RELU = 2,
               BL_ACT_SILU = 3 /* x sigmoid(x): the encoder's feed-forward only */ } bl_activation;

typedef struct bl_config {
    int32_t n_layers;          /* transformer blocks                      */
    int32_t n_heads;           /* attention heads per block               */
    int32_t hidden;            /* model width; hidden % n_heads == 0      */
    int32_t intermediate;      /* feed-forward width                      */
    int32_t max_positions;     /* position embeddings (512 for BERT)      */
    int32_t type_vocab_size;   /* token type embeddings (2)               */
    int32_t vocab_size;        /* rows of the word embedding              */
    float ln_eps;              /* LayerNorm epsilon (1e-12)               */
    int32_t activation;        /* bl_activation                           */
} bl_config;

typedef struct bl_model bl_model; /* opaque: config + tokenizer + weights */

/* Parse and fully validate a bundle (see bundle.h for the byte layout).
 * The model BORROWS `data`: keep it alive and unchanged until bl_model_free.
 * Every count, shape, dtype, offset and checksum is checked before use.
 * Returns NULL and a reason in err on any problem. */
bl_model *bl_model_load(const void *data, size_t size, char *err, size_t errlen);
void bl_model_free(bl_model *m);

const bl_config *bl_model_config(const bl_model *m);
/* The bundle format version of the file (bundle.h: 1 or 2). */
int bl_model_format_version(const bl_model *m);

/* Metadata lookup (strings from the bundle's typed metadata, e.g.
 * "source.name", "source.license", "converter.version", "weights.dtype").
 * Returns NULL if absent. The pointer is valid for the model's lifetime. */
const char *bl_model_meta_str(const bl_model *m, const char *key);

/* All metadata entries, for listings: key i and its value formatted as text
 * (string arrays are summarised as "[N strings]"). Returns NULL past the end. */
int bl_model_n_meta(const bl_model *m);
const char *bl_model_meta_key(const bl_model *m, int i);
void bl_model_meta_format(const bl_model *m, int i, char *buf, size_t buflen);

/* Tensor table access, for `bertlens info` and the encoder. */
/* Q8H, Q9..Q12: 8..12-bit integers, one float16 scale per block (src/format/bundle.h). */
typedef enum {
    BL_F32 = 0, BL_F16 = 1, BL_Q8 = 2, BL_Q4 = 3, BL_Q8H = 4, BL_Q9 = 5, BL_Q10 = 6, BL_Q11 = 7, BL_Q12 = 8,
    BL_N_DTYPES = 9
} bl_dtype;
#define BL_MAX_DIMS 4
#define BL_QBLOCK 32 /* q8/q4/QN block length along the input (last) dimension */

typedef struct bl_tensor {
    const char *name;       /* NUL-terminated copy owned by the model      */
    int32_t dtype;          /* bl_dtype                                    */
    int32_t n_dims;
    int64_t dims[BL_MAX_DIMS]; /* dims[n_dims-1] is the input (fastest) dim */
    const uint8_t *data;    /* points into the bundle bytes                */
    uint64_t nbytes;
    int32_t layout;         /* BL_LAYOUT_*: how data is laid out now       */
} bl_tensor;

/* A tensor's bytes as src/format/bundle.h stores them, or (q8 matrices after
 * bl_model_pack_in_place) re-laid out into the SIMD kernels' panels. */
enum { BL_LAYOUT_BUNDLE = 0, BL_LAYOUT_Q8_PANELS = 1 };

int bl_model_n_tensors(const bl_model *m);
const bl_tensor *bl_model_tensor(const bl_model *m, int i);
/* For a caller that owns the bundle bytes given to bl_model_load, writable
 * and used by nothing else (the page's engine): every q8 matrix whose rows
 * are a multiple of 8 is re-laid out in place into the kernels' panels, so
 * the engine keeps no second, widened copy of it (a q8 model then needs
 * about its bundle's size in memory, not three times it). Call once, right
 * after bl_model_load and before bl_state_new; the bytes are no longer a
 * bundle file afterwards (their CRCs were checked by the load). Returns the
 * number of tensors re-laid out, or -1 (out of memory; the tensors done so
 * far are marked, the rest are as they were: still usable). */
int bl_model_pack_in_place(bl_model *m, void *bytes);
const bl_tensor *bl_model_find_tensor(const bl_model *m, const char *name);
const char *bl_dtype_name(int dtype);

/* ------------------------------------------------------------ tokenizer */

typedef struct bl_tokenizer bl_tokenizer; /* opaque, owned by a bl_model or standalone */

typedef struct bl_tokenizer_opts {
    int32_t lowercase;          /* 1: lower-case (uncased models)          */
    int32_t strip_accents;      /* 1: NFD + drop Mn marks                  */
    int32_t chinese_chars;      /* 1: CJK ideographs become single words   */
    int32_t max_chars_per_word; /* 100 in Hugging Face                     */
    int32_t unk_id, cls_id, sep_id, pad_id, mask_id;
} bl_tokenizer_opts;

/* Build a tokenizer from a vocabulary: vocab[i] is the UTF-8 string of token
 * id i (vocab_len[i] bytes, not necessarily NUL-terminated). Copies what it
 * needs. */
bl_tokenizer *bl_tokenizer_new(const char *const *vocab, const uint32_t *vocab_len, int32_t n_vocab,
                               const bl_tokenizer_opts *opts, char *err, size_t errlen);
void bl_tokenizer_free(bl_tokenizer *t);
const bl_tokenizer *bl_model_tokenizer(const bl_model *m);
int32_t bl_tokenizer_vocab_size(const bl_tokenizer *t);
/* String of a token id (NUL-terminated, owned by the tokenizer), or NULL. */
const char *bl_token_str(const bl_tokenizer *t, int32_t id);
/* The special tokens' ids (bl_tokenizer_opts'; for a bundle's tokenizer its
 * tokenizer.*_id metadata, checked against the vocabulary at load). A NULL
 * tokenizer gives -1 for each. */
typedef struct bl_special_ids {
    int32_t unk, cls, sep, pad, mask;
} bl_special_ids;
void bl_tokenizer_special(const bl_tokenizer *t, bl_special_ids *out);
/* "WordPiece" (a bundle's vocabulary, tokenizer.c) or, for a bundle that
 * carries its checkpoint's tokenizer.json (hf_tokenizer.h), that file's model:
 * "BPE", "Unigram" or "WordPiece". */
const char *bl_tokenizer_kind(const bl_tokenizer *t);
/* The tokenizer's own limit (tokenizer.model_max_length; bl_tokenize never
 * returns more tokens), or 0 when it has none. */
int32_t bl_tokenizer_max_tokens(const bl_tokenizer *t);
/* 1 if id is one of the special ids above or a token the tokenizer.json marks
 * special (<s>, </s>, [CLS], <mask>, ...): what the page hides. */
int bl_token_is_special(const bl_tokenizer *t, int32_t id);
/* How its token strings spell words, for display: "wordpiece" ("##" goes on
 * a continuing piece), "byte-level" (GPT-2's byte alphabet: "\u0120" is a
 * space, a token may hold part of a character's UTF-8 bytes) or "metaspace"
 * ("\u2581" starts a word, as SentencePiece writes it). */
const char *bl_tokenizer_pieces(const bl_tokenizer *t);

typedef struct bl_tokens {
    int32_t n;          /* number of tokens, specials included             */
    int32_t *ids;       /* [n] vocabulary ids                              */
    int32_t *type_ids;  /* [n] 0 for [CLS] A [SEP], 1 for B [SEP]          */
    int32_t *offsets;   /* [2n] [start, end) in UTF-16 code units of the
                           original text (A or B); specials get [0, 0]      */
    int32_t *word_ids;  /* [n] index of the pre-tokenized word in its text,
                           -1 for special tokens                            */
    int32_t n_a;        /* tokens belonging to text A incl. [CLS] and first [SEP] */
    int32_t truncated;  /* 1 if tokens were dropped to fit max_tokens       */
} bl_tokens;

/* Tokenize text (and text_b if not NULL) as [CLS] A [SEP] (B [SEP]), or with
 * the post-processor of the bundle's tokenizer.json (RoBERTa: <s> A </s></s>
 * B </s>; type ids and n_a as its template gives them).
 * Input must be UTF-8; invalid UTF-8 is an error (returns -1, reason in err).
 * max_tokens (specials included) truncates longest-first like Hugging Face;
 * pass 0 for no limit (a tokenizer with a model_max_length, above, never
 * goes past it). On success returns 0 and fills *out (free it with
 * bl_tokens_free). */
int bl_tokenize(const bl_tokenizer *t, const char *text, size_t len, const char *text_b, size_t len_b,
                int32_t max_tokens, bl_tokens *out, char *err, size_t errlen);
void bl_tokens_free(bl_tokens *toks);

/* -------------------------------------------------------------- encoder */

typedef struct bl_state bl_state; /* RunState: buffers for one model and up to max_tokens */

enum {
    BL_KEEP_ATTN   = 1 << 0, /* keep attention probabilities of every layer  */
    BL_KEEP_NORMS  = 1 << 1, /* keep value-weighted norms ||a_ij f(x_j)||   */
    BL_KEEP_QK     = 1 << 2, /* keep queries/keys of the layer qk_layer     */
    BL_KEEP_HIDDEN = 1 << 3, /* keep every layer's hidden states            */
    BL_KEEP_QK_ALL = 1 << 4  /* keep queries/keys of every layer            */
};
/* q/k memory: BL_KEEP_QK keeps 2 x T x hidden floats, BL_KEEP_QK_ALL
 * n_layers times that (all-MiniLM-L6-v2 at 512 tokens: 6 x 512 x 384 x 2 x
 * 4 B = 9.4 MB; a 12-layer, 768-wide BERT: 37.7 MB), next to the attention's
 * n_layers x heads x T x T floats (75 MB, 151 MB). With BL_KEEP_QK_ALL the
 * qk_layer of bl_forward is not needed (BL_KEEP_QK then adds nothing). */

/* Lay out the model's weights for the kernels (once) and allocate every
 * buffer for sequences of up to max_tokens tokens. */
bl_state *bl_state_new(const bl_model *m, int32_t max_tokens, unsigned flags, char *err, size_t errlen);
/* Re-size the buffers of s for another max_tokens / flags, keeping its
 * laid-out weights (no repacking). On failure (-1) s holds no buffers and
 * bl_forward refuses to run until a successful reserve. */
int bl_state_reserve(bl_state *s, int32_t max_tokens, unsigned flags, char *err, size_t errlen);
void bl_state_free(bl_state *s);

/* Run the encoder on T tokens. No allocation happens inside.
 * qk_layer: layer whose q/k vectors are kept when BL_KEEP_QK is set (and
 * BL_KEEP_QK_ALL is not; any value then, e.g. -1).
 * Returns 0, or -1 with a reason (bad id, T out of range, ...). */
int bl_forward(bl_state *s, const int32_t *ids, const int32_t *type_ids, int32_t T, int32_t qk_layer, char *err,
               size_t errlen);
/* Threads of the forward pass of s. A state starts with 1 (no thread is
 * started). n > 1 starts n - 1 threads now, kept (asleep between calls)
 * until the next bl_state_set_threads or bl_state_free, which joins them;
 * bl_forward then splits each layer over the n threads by token rows and by
 * heads, still allocating and starting nothing, and its results are bit for
 * bit those of 1 thread. n = 0: one per logical core. n = 1 joins them.
 * In a build without threads (the single-threaded wasm build) every n gives
 * 1. Call it between bl_forward calls, from the thread that owns s; it
 * keeps the results of the last bl_forward. Returns the number of threads
 * now used, or -1 with a reason (n > 64, a thread could not be started, out
 * of memory); the state then runs on its previous number of threads (on 1
 * if those could not be started again). */
int bl_state_set_threads(bl_state *s, int32_t n, char *err, size_t errlen);
int32_t bl_state_threads(const bl_state *s); /* threads of s (1 by default) */
/* Head ablation, with Hugging Face's head_mask meaning: the attention
 * probabilities of a masked head are multiplied by 0, so its context vector
 * (its share of the input to the output projection) is zero; the output
 * projection's bias, the residual and everything else run as usual. The
 * attention (and norms) returned for a masked head are then all zeros.
 * mask: [n_layers][n_heads] bytes, non-zero = masked (a whole layer: every
 * head of it; "all but these": every other byte set); NULL unmasks all.
 * The state copies the mask (its buffer is allocated by bl_state_new, so
 * bl_forward still allocates nothing); it stays in force for every later
 * bl_forward, across bl_state_reserve, until set again. A state starts
 * unmasked; with nothing masked the forward pass does no extra work.
 * Returns the number of masked heads, or -1 for a NULL state. */
int bl_state_set_head_mask(bl_state *s, const uint8_t *mask);
/* Whether bl_forward computes the final hidden states. With final = 0 the
 * last layer stops after its attention (its output projection and
 * feed-forward only make the final hidden states): every layer's attention,
 * norms and q/k are the same, bl_hidden(s, n_layers) is NULL (and with
 * BL_KEEP_HIDDEN so is that layer's slot), and the forward pass does 3/4 of
 * a layer's projections less (all-MiniLM-L6-v2: 12.5 %). A state starts with
 * final = 1; the setting stays until set again and allocates nothing. */
void bl_state_set_final(bl_state *s, int final);
/* The state's current mask, [n_layers][n_heads], 1 = masked. */
const uint8_t *bl_state_head_mask(const bl_state *s);
/* The model a state was made for (given to bl_state_new). */
const bl_model *bl_state_model(const bl_state *s);

/* Results of the last bl_forward (NULL if not kept). Shapes: */
const float *bl_attention(const bl_state *s, int32_t layer); /* [H][T][T], rows = queries, sum to 1 */
const float *bl_norms(const bl_state *s, int32_t layer);     /* [H][T][T] ||a_ij * f_h(x_j)||        */
const float *bl_queries(const bl_state *s);                  /* [H][T][d_head] of qk_layer, after bias, before 1/sqrt(d) */
const float *bl_keys(const bl_state *s);                     /* [H][T][d_head]                        */
/* q/k of one layer: any layer with BL_KEEP_QK_ALL, qk_layer with BL_KEEP_QK. */
const float *bl_layer_queries(const bl_state *s, int32_t layer); /* [H][T][d_head], as bl_queries */
const float *bl_layer_keys(const bl_state *s, int32_t layer);    /* [H][T][d_head]                */
const float *bl_hidden(const bl_state *s, int32_t layer);    /* [T][hidden]; layer = n_layers: final; 0: embeddings */
int32_t bl_state_tokens(const bl_state *s);                  /* T of the last forward                 */

/* ----------------------------------------------------- attention scores
 * What a head's softmax takes (scores.c): the logits s_ij of query i and
 * key j, as the model computes them, and the terms they are the sum of,
 * one per piece of the family's attention (named as its paper names them):
 *   BERT, DistilBERT, ELECTRA, RoBERTa/XLM-R, ALBERT   q·k/√d
 *   ModernBERT   q·k/√d of the rotated q, k (RoPE); a sliding-window layer
 *                masks the keys farther than its half window from the query
 *   MPNet        q·k/√d + relative position bias (one learned number per
 *                head and bucket of j - i, every layer's)
 *   DeBERTa      content-to-content + content-to-position +
 *                position-to-content (those the config enables), each over
 *                √(d · (1 + relative terms)) as the model scales them
 * softmax over j of s_ij is the head's attention row i, except where the
 * head is switched off (bl_state_set_head_mask: its probabilities are
 * multiplied by 0 after the softmax; the scores are those it computes).
 * Keys the model masks out are NaN in the scores and in every term. */
#define BL_MAX_SCORE_TERMS 3

typedef struct bl_score_info {
    int32_t n_terms;                      /* 1..BL_MAX_SCORE_TERMS             */
    char name[BL_MAX_SCORE_TERMS][32];    /* UTF-8, e.g. "content-to-position" */
    char abbr[BL_MAX_SCORE_TERMS][16];    /* short form, e.g. "c2p"            */
    char about[BL_MAX_SCORE_TERMS][192];  /* one sentence: what the term adds  */
    int32_t window; /* this layer masks keys j with |i - j| > window; -1: none */
} bl_score_info;

/* The terms of layer `layer`'s scores under model m. Returns 0, or -1 with
 * a reason (layer out of range). */
int bl_score_terms(const bl_model *m, int32_t layer, bl_score_info *out, char *err, size_t errlen);
/* Head `head` of layer `layer` of the last bl_forward of s, which kept that
 * layer's queries and keys (BL_KEEP_QK with qk_layer = layer, or
 * BL_KEEP_QK_ALL): scores [T][T] (rows = queries) and, when terms is not
 * NULL, terms [n_terms][T][T], in bl_score_terms' order; they add up to the
 * scores within float rounding. DeBERTa's relative rows are projected
 * again for the layer (the state's buffers, on its threads): call it as
 * bl_forward is called, from the thread that owns s. Allocates nothing.
 * Returns 0, or -1 with a reason (nothing run, q/k of that layer not kept,
 * layer or head out of range). */
int bl_scores(bl_state *s, int32_t layer, int32_t head, float *scores, float *terms, char *err, size_t errlen);

/* --------------------------------------------------- sentence embeddings
 * The sentence-transformers embedding of a text (embed.c), as the models
 * bertlens converts define it (their 1_Pooling: mean tokens, then
 * Normalize): the mean of the final hidden states over all T tokens of the
 * last bl_forward ([CLS] and [SEP] included), divided by its L2 norm (at
 * least 1e-12); sums in double, rounded to float once. To match
 * sentence-transformers, run the text alone, truncated at
 * bl_embed_max_tokens. Cosine similarity of two texts is then the dot
 * product of their embeddings. */

/* out: [hidden] floats. Returns 0, or -1 with a reason (nothing run, or the
 * run skipped the final hidden states: bl_state_set_final(s, 0)). */
int bl_embed(const bl_state *s, float *out, char *err, size_t errlen);
/* The token limit of an embedding: the bundle's sentence.max_seq_length
 * (bundle.h) when present and smaller than the model's max_positions, else
 * max_positions; *from_meta (may be NULL) = 1 when the key is present.
 * Returns -1 with a reason for a malformed key. */
int32_t bl_embed_max_tokens(const bl_model *m, int *from_meta, char *err, size_t errlen);

/* ------------------------------------------------------------- analyses
 * What the attention of one input says about each head, and how information
 * mixes across layers (analyze.c). a is one head's [T][T] attention, rows =
 * queries; every mean below is over query rows, over the full sequence with
 * [CLS] and [SEP].
 *
 *   entropy     -sum_j a_ij ln a_ij, in nats (0 ln 0 = 0)
 *   cls, sep    mass on the [CLS] key, on the [SEP] keys
 *   punct       mass on punctuation keys: tokens every character of which is
 *               punctuation by BERT's rule (Unicode P*, ASCII 33-47, 58-64,
 *               91-96, 123-126), the rule the tokenizer splits words on
 *   prev, self, next   a_i,i-1, a_ii, a_i,i+1 (rows without that neighbour
 *               are left out; NaN when no row has it)
 *   segment     pairs only (else NaN): mass on keys of the query's own
 *               segment, A = [CLS] A [SEP], B = B [SEP] (the type ids)
 *   confidence  the row's largest weight (how peaked the head is)
 *   klass       bl_head_class, Kovaleva et al. (2019)'s five patterns, by this
 *               rule on V = max(cls, sep, punct) (a vertical stripe on the
 *               tokens vertical heads pick) and D = max(prev, self, next) (a
 *               diagonal at offset -1, 0 or +1), each less 1/T (what a
 *               uniform row gives one key), NaN counted as 0:
 *                 V - 1/T >= 0.2 and D - 1/T >= 0.08  -> vertical+diagonal
 *                 V - 1/T >= 0.2                      -> vertical
 *                 D - 1/T >= 0.08                     -> diagonal
 *                 pair and segment >= 0.8             -> block
 *                 else                                -> heterogeneous
 *               The thresholds were chosen on 144 maps of all-MiniLM-L6-v2
 *               labelled by eye and checked on 72 other maps
 *               (tests/fixtures/analyze/labels.json, docs/analyses.md).
 *
 * Rollout (Abnar & Zuidema 2020): with M_l the mean over heads of layer l's
 * attention, A~_l = 0.5 M_l + 0.5 I, R_0 = A~_0, R_l = A~_l R_(l-1).
 * Norm-based rollout: the same with M_l = N_l, N_l[i][j] = sum_h
 * ||a_ij f_h(x_j)|| (bl_norms summed over heads), each row divided by its sum.
 */
typedef enum {
    BL_CLASS_VERTICAL = 0,
    BL_CLASS_DIAGONAL = 1,
    BL_CLASS_VERTICAL_DIAGONAL = 2,
    BL_CLASS_BLOCK = 3,
    BL_CLASS_HETEROGENEOUS = 4
} bl_head_class;

#define BL_CLASS_VERTICAL_MIN 0.2f  /* V - 1/T at least this: a vertical stripe    */
#define BL_CLASS_DIAGONAL_MIN 0.08f /* D - 1/T at least this: a diagonal          */
#define BL_CLASS_BLOCK_MIN 0.8f     /* own-segment mass for block (pairs only)     */

/* Token roles for the features (bits of one byte per token). */
enum { BL_ROLE_CLS = 1, BL_ROLE_SEP = 2, BL_ROLE_PUNCT = 4 };

typedef struct bl_head_features {
    float entropy, cls, sep, punct, prev, self, next, segment, confidence;
    int32_t klass; /* bl_head_class */
} bl_head_features;

/* Roles of token ids under model m ([CLS]/[SEP] by the bundle's ids,
 * punctuation by the token's string). roles: [T]. Returns 0 or -1. */
int bl_token_roles(const bl_model *m, const int32_t *ids, int32_t T, uint8_t *roles, char *err, size_t errlen);
/* Features and class of one head's attention a [T][T]; segments [T] (type
 * ids; NULL or all equal: no pair). Returns 0, or -1 for T < 1 / NULL a. */
int bl_head_analyze(const float *a, int32_t T, const uint8_t *roles, const int32_t *segments,
                    bl_head_features *out);
/* The class of a feature set of a T-token map by the rule above
 * (out->klass of bl_head_analyze). */
int bl_head_classify(const bl_head_features *f, int32_t T, int pair);
const char *bl_head_class_name(int klass); /* "vertical", ..., "heterogeneous" */

/* Rollout of L row-stochastic mixing matrices mix [L][T][T]: out [L][T][T]
 * (R_0 .. R_(L-1)). normalize: divide each row of mix by its sum first (for
 * the norm-based rollout). Returns 0, or -1 (out of memory, bad sizes). */
int bl_rollout(const float *mix, int32_t L, int32_t T, int normalize, float *out, char *err, size_t errlen);

typedef struct bl_analysis {
    int32_t n_layers, n_heads, T, pair;
    bl_head_features *heads; /* [n_layers][n_heads]                            */
    float *rollout;          /* [n_layers][T][T]                               */
    float *rollout_norm;     /* [n_layers][T][T], NULL without BL_KEEP_NORMS   */
} bl_analysis;

/* What bl_analyze computes: the per-head features and classes always;
 * the rollouts (L matrix products of T x T, the costly part: ~1 s at 512
 * tokens in wasm) only when asked. */
enum { BL_ANALYZE_HEADS = 0, BL_ANALYZE_ROLLOUT = 1 };

/* Everything above for the last bl_forward of s (which must have kept
 * BL_KEEP_ATTN; with BL_KEEP_NORMS also rollout_norm). ids / type_ids are the
 * ones given to that bl_forward (type_ids may be NULL). what: BL_ANALYZE_HEADS
 * (rollout and rollout_norm stay NULL) or BL_ANALYZE_ROLLOUT. Fills *out (free
 * with bl_analysis_free); returns 0, or -1 with a reason. */
int bl_analyze(const bl_state *s, const int32_t *ids, const int32_t *type_ids, int what, bl_analysis *out,
               char *err, size_t errlen);
void bl_analysis_free(bl_analysis *a);
/* bl_analyze without a model (a notebook's attention, the viewer page):
 * the same features, classes and rollouts of attention attn [L][NH][T][T]
 * (norms [L][NH][T][T] or NULL: then no rollout_norm) with token roles
 * roles [T] (bl_token_roles_text) and segments [T] (or NULL). One thread;
 * the numbers are bl_analyze's for the same matrices, bit for bit. */
int bl_analyze_attention(const float *attn, const float *norms, int32_t L, int32_t NH, int32_t T,
                         const uint8_t *roles, const int32_t *segments, int what, bl_analysis *out, char *err,
                         size_t errlen);
/* Token roles from the token strings alone, when no model is at hand:
 * [CLS] = a special token in the first place, [SEP] = a special token
 * spelled as the last token (the template's closing [SEP] / </s> and its
 * copies: not [MASK] or [UNK]), punctuation by bl_token_roles's rule.
 * tokens: T NUL-terminated UTF-8 strings; special [T]: 1 for the model's
 * special tokens (NULL: none). */
void bl_token_roles_text(const char *const *tokens, const uint8_t *special, int32_t T, uint8_t *roles);

/* Comparing two runs head by head (the page's ablation, minimal-pair and
 * two-model comparisons; the heads overview's "heads like this one"). For
 * two [T][T] maps a and b of one head (rows = queries):
 *   js       Jensen-Shannon distance per row, mean over rows: with
 *            m = (p + q) / 2, sqrt(0.5 KL(p||m) + 0.5 KL(q||m)) in bits
 *            (base 2, so each row's distance is in [0, 1]; 0 ln 0 = 0).
 *            A masked head's all-zero row against a distribution gives
 *            sqrt(1/2): it is not a distribution, compare such heads apart.
 *   max_abs  the largest |b_ij - a_ij|
 * Sums in double. Returns 0, or -1 for T < 1 or a NULL pointer. */
typedef struct bl_head_diff {
    double js, max_abs;
} bl_head_diff;
int bl_head_compare(const float *a, const float *b, int32_t T, bl_head_diff *out);

/* ------------------------------------------------ masked-word predictions
 * A bundle may carry its checkpoint's masked-language-model head (bundle.h,
 * "masked-LM head"); mlm.c runs it on the final hidden states of a
 * bl_forward. */
typedef struct bl_head_info {
    int32_t present;    /* 0: the bundle has no head (the rest is 0)         */
    int32_t size;       /* E, the head's width (hidden, or ALBERT's embedding) */
    int32_t tied;       /* 1: the decoder is the word embedding               */
    int32_t activation; /* bl_activation of the transform                     */
    float ln_eps;       /* the head LayerNorm's epsilon                       */
} bl_head_info;
void bl_model_head_info(const bl_model *m, bl_head_info *out);

typedef struct bl_mlm bl_mlm; /* a model's head laid out for the kernels */
/* The head of m (which must have one: bl_head_info.present), its weights
 * packed for the kernels once (the decoder is vocab x E: for BERT-base in q8
 * about 47 MB of int16 panels beside the bundle's 24 MB). m outlives it. */
bl_mlm *bl_mlm_new(const bl_model *m, char *err, size_t errlen);
void bl_mlm_free(bl_mlm *h);
/* The head's predictions at n_pos token positions of the last bl_forward of
 * s (a state of the head's model that computed the final hidden states):
 * probabilities are the softmax of the logits over the whole vocabulary
 * (every row of the decoder, ids past the tokenizer's vocabulary included).
 * The vocabulary-sized product runs only for those positions, on s's
 * threads. ids: the ids given to that bl_forward. Fills, per position i:
 *   top_ids[i*k .. i*k+k), top_probs[...]  the k most probable ids, most
 *                 probable first (k <= vocab_size)
 *   token_prob[i] the probability of ids[positions[i]]
 *   token_rank[i] its rank, 1 = most probable (1 + ids more probable)
 * Returns 0, or -1 with a reason (no run, a position out of range, ...). */
int bl_predict(const bl_mlm *h, bl_state *s, const int32_t *ids, const int32_t *positions, int32_t n_pos, int32_t k,
               int32_t *top_ids, float *top_probs, float *token_prob, int32_t *token_rank, char *err, size_t errlen);

/* The head's predictions from hidden states x [T][hidden] that the caller
 * gives (positions index rows of x; T = bl_state_tokens(s), whose threads
 * run the product): bl_predict on x instead of the final hidden states. */
int bl_predict_hidden(const bl_mlm *h, bl_state *s, const float *x, const int32_t *ids, const int32_t *positions,
                      int32_t n_pos, int32_t k, int32_t *top_ids, float *top_probs, float *token_prob,
                      int32_t *token_rank, char *err, size_t errlen);
/* A logit lens (mlm.c): what the head predicts from the output of layer
 * `layer` (1..n_layers) of the last bl_forward of s, which must have kept
 * every layer's hidden states (BL_KEEP_HIDDEN). ModernBERT: the output of a
 * layer below the last goes through the encoder's final norm first (what
 * the last layer's output already went through). Outputs as bl_predict. */
int bl_predict_layer(const bl_mlm *h, bl_state *s, int32_t layer, const int32_t *ids, const int32_t *positions,
                     int32_t n_pos, int32_t k, int32_t *top_ids, float *top_probs, float *token_prob,
                     int32_t *token_rank, char *err, size_t errlen);

/* ------------------------------------------------------------ task heads
 * A bundle may carry a fine-tuned task head instead (docs/bundle-format.md,
 * "Task heads"): the head of a *ForSequenceClassification,
 * *ForTokenClassification or *ForQuestionAnswering checkpoint, run by
 * task_head.c on the encoder's final hidden states x [T][hidden] (what
 * bl_hidden(s, n_layers) returns; ModernBERT's after its final norm):
 *   u = x[0] (pooling "first"), mean_t x[t] ("mean"), or each x[t] ("token",
 *       "late")
 *   u = act(W_d u + b_d)     when the head has a dense layer (a pooler)
 *   u = LN(u) * g + b        when it has a norm (ModernBERT)
 *   logits = W_o u + b_o     [C]; "late" (EuroBERT): the mean over t of the
 *                            logits of each x[t], one row
 * Sequence classification: one row of C logits; token classification: T
 * rows of C; question answering: T rows of 2 (start, end). */
enum { BL_TASK_NONE = 0, BL_TASK_SEQUENCE = 1, BL_TASK_TOKEN = 2, BL_TASK_QA = 3 };
/* How logits become probabilities: softmax (single-label), sigmoid per
 * class (multi-label), none (regression: C = 1, the logit is the value). */
enum { BL_PROBLEM_SINGLE = 0, BL_PROBLEM_MULTI = 1, BL_PROBLEM_REGRESSION = 2 };
typedef struct bl_task_head bl_task_head;
/* The task kind a bundle's metadata names (BL_TASK_NONE: it has none). */
int32_t bl_model_task_kind(const bl_model *m);
/* "sequence-classification", "token-classification", "question-answering"
 * ("none" for BL_TASK_NONE or anything else). */
const char *bl_task_kind_name(int32_t kind);
/* The head of m, its metadata and tensors checked, its weights dequantized
 * to f32 (f32 or quantized bundles alike); m outlives it. NULL with a reason
 * (none, or malformed). */
bl_task_head *bl_task_head_new(const bl_model *m, char *err, size_t errlen);
void bl_task_head_free(bl_task_head *h);
int32_t bl_task_head_kind(const bl_task_head *h);    /* BL_TASK_*                  */
int32_t bl_task_head_problem(const bl_task_head *h); /* BL_PROBLEM_*               */
int32_t bl_task_head_classes(const bl_task_head *h); /* C (question answering: 2)  */
const char *bl_task_head_label(const bl_task_head *h, int32_t c); /* id2label[c]  */
/* Rows of logits the head gives for T tokens: 1 (sequence) or T. */
int32_t bl_task_head_rows(const bl_task_head *h, int32_t T);
/* logits [rows][C] (bl_task_head_rows) from hidden [T][hidden]. 0 or -1. */
int bl_task_head_forward(const bl_task_head *h, const float *hidden, int32_t T, float *logits, char *err,
                         size_t errlen);
/* probs [rows][C] from logits [rows][C] by the head's problem type
 * (regression: a copy of the logits). */
void bl_task_head_probs(const bl_task_head *h, const float *logits, int32_t rows, float *probs);
/* The gradient of one logit with respect to the hidden states, exactly
 * (in double, then stored as float): with hidden [T][hidden],
 *   sequence classification   logit = logits[target_class] (position ignored)
 *   token classification      logit = logits[position][target_class]
 *   question answering        logit = the start (target_class 0) or the end
 *                             (target_class 1) logit of token `position`
 * d_hidden [T][hidden] receives d logit / d hidden (every row written: rows
 * the logit does not read are 0), logit_out (may be NULL) the logit itself.
 * 0, or -1 with a reason (a class or position out of range). */
int bl_task_head_backward(const bl_task_head *h, const float *hidden, int32_t T, int32_t target_class,
                          int32_t position, float *d_hidden, float *logit_out, char *err, size_t errlen);
/* ------------------------------------------------ gradients (backward.c)
 * A reverse-mode pass through the encoder of every family, for token
 * attributions (explain.c). */

/* Word-embedding rows to run the next bl_forward from instead of the rows
 * of ids: rows [T][E] (E: the embedding width, bl_word_width), borrowed
 * until reset with NULL. Positions, token types and the embedding
 * LayerNorm are applied to them as to the rows of ids (which bl_forward
 * still takes: RoBERTa's position ids count its pad tokens). */
void bl_state_set_word_rows(bl_state *s, const float *rows);
/* E, the word embedding's width (hidden, or ALBERT's / ELECTRA's embedding size). */
int32_t bl_word_width(const bl_state *s);
/* out [T][E] = the word-embedding rows of ids (dequantized). */
void bl_word_rows(const bl_state *s, const int32_t *ids, int32_t T, float *out);
/* After a bl_forward of s (made with BL_KEEP_HIDDEN, with the final hidden
 * states) on ids / type_ids (the same as given to it; its word rows those of
 * bl_state_set_word_rows when set): d_word [T][E] = dF/d(word-embedding row
 * of each token), from d_final [T][hidden] = dF/d(final hidden states), for
 * any function F of the final hidden states. Each layer is recomputed from
 * its input (bl_hidden) with the dequantized weights, so memory is one
 * layer's; the head mask of s is respected. 0, or -1 with a reason. */
int bl_backward(bl_state *s, const int32_t *ids, const int32_t *type_ids, const float *d_final, float *d_word,
                char *err, size_t errlen);

/* ------------------------------------------------ explanations (explain.c)
 * Which tokens drove one logit of a head, and which heads it leans on. */
typedef enum { BL_EXPLAIN_GRAD_INPUT = 0, BL_EXPLAIN_IG = 1 } bl_explain_method;
typedef struct bl_explain_opts {
    int32_t method;   /* bl_explain_method                                       */
    int32_t steps;    /* IG: M (alpha = k/M, k = 0..M, trapezoid); 0: 32          */
    int32_t position; /* the token whose prediction is explained; -1: the first mask
                         (masked-LM), else the first token that is not special   */
    int32_t target;   /* the class / word id; -1: the head's top one              */
    int32_t heads;    /* 1: head effects too                                      */
    void (*progress)(void *arg, int32_t done, int32_t total); /* head effects, or NULL */
    void *progress_arg;
} bl_explain_opts;
typedef struct bl_explain {
    int32_t T, position, target;
    float *scores;     /* [T] the attribution of each token                           */
    double logit;      /* the target's logit on the text                             */
    double baseline;   /* its logit on the baseline rows (pad rows, specials kept)   */
    double delta;      /* logit - baseline                                           */
    double sum;        /* sum of scores (IG: completeness, sum ~ delta)              */
    double prob;       /* the target's probability on the text                       */
    float *heads;      /* [n_layers][n_heads] prob - prob with that head off, or NULL */
} bl_explain;
/* Explain the masked-LM head's logit of word target at position (opts) on
 * ids / type_ids [T] of s's model (s: a state of at least T tokens made with
 * BL_KEEP_HIDDEN; its head mask is replaced for head effects and cleared).
 * 0, or -1 with a reason. */
int bl_explain_mlm(bl_state *s, const int32_t *ids, const int32_t *type_ids, int32_t T, const bl_explain_opts *opts,
                   bl_explain *out, char *err, size_t errlen);
void bl_explain_free(bl_explain *e);

#ifdef __cplusplus
}
#endif
#endif
