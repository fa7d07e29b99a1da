/* bundle.h — the bertlens model bundle (.blb), byte by byte.
 *
 * One file holds one BERT: architecture, tokenizer, provenance and weights.
 * Little-endian throughout. Offsets are from the first byte of the file.
 * On the wire the file is gzip-compressed (.blb.gz); the browser inflates it
 * with DecompressionStream('gzip'), the CLI with zlib. The loader below sees
 * the inflated bytes.
 *
 * Layout
 *
 *   +--------------------+ 0
 *   | header (96 bytes)  |
 *   +--------------------+ meta_offset = 96
 *   | metadata           |  n_meta typed key/value entries
 *   +--------------------+ table_offset = meta_offset + meta_size
 *   | tensor table       |  n_tensors entries
 *   +--------------------+
 *   | zero padding       |  up to data_offset (a multiple of alignment)
 *   +--------------------+ data_offset
 *   | tensor data        |  each tensor at data_offset + t.offset, t.offset a
 *   |  (+ zero padding)  |  multiple of alignment; bytes not covered by a
 *   +--------------------+  tensor are zero. file_size = data_offset + data_size
 *
 * Header
 *   off size field
 *     0    8 magic          "BERTLENS"
 *     8    4 version        u32, 1 or 2 (BL_BUNDLE_VERSION). Version 2 adds
 *                           the metadata type BYTES (5) and the families
 *                           (model.family, below): a bundle with neither is
 *                           written as version 1, byte for byte what older
 *                           builds wrote and read; a version 1 bundle with
 *                           a BYTES entry or model.family is refused
 *    12    4 alignment      u32, power of two in [16, 4096] (converter: 64)
 *    16    8 file_size      u64, total bytes of the (inflated) file
 *    24    8 meta_offset    u64, = 96
 *    32    8 meta_size      u64
 *    40    8 table_offset   u64, = meta_offset + meta_size
 *    48    8 table_size     u64
 *    56    8 data_offset    u64, = align_up(table_offset + table_size, alignment)
 *    64    8 data_size      u64, = file_size - data_offset
 *    72    4 n_meta         u32, <= 4096
 *    76    4 n_tensors      u32, <= 4096
 *    80    4 meta_crc       u32, CRC-32 of the metadata section
 *    84    4 table_crc      u32, CRC-32 of the tensor table section
 *    88    4 reserved       u32, 0
 *    92    4 header_crc     u32, CRC-32 of bytes 0..91
 *   CRC-32 is zlib's (polynomial 0xEDB88320, init and final xor 0xFFFFFFFF).
 *
 * Metadata entry (packed, no padding)
 *     u32 key_len (1..255), key bytes (UTF-8, no NUL)
 *     u32 type, then the value:
 *       0 U32     u32
 *       1 I32     i32
 *       2 F32     f32
 *       3 STR     u32 len (< 2^24), bytes (UTF-8, no NUL)
 *       4 STRARR  u32 count (< 2^22), then count x (u32 len (< 2^16), bytes)
 *       5 BYTES   u64 len (<= BL_MAX_META_BYTES, 64 MiB, and no more than
 *                 the bytes left in the metadata section), then len bytes
 *                 (any values; version 2 only)
 *   Keys are unique. Required keys (the loader rejects a bundle without them):
 *     bert.n_layers bert.n_heads bert.hidden bert.intermediate bert.max_positions
 *     bert.type_vocab_size bert.vocab_size                       U32
 *     bert.ln_eps                                                F32
 *     bert.activation  "gelu" | "gelu_tanh" | "relu"             STR
 *     tokenizer.vocab  token strings, index = id                 STRARR
 *     tokenizer.lowercase tokenizer.strip_accents tokenizer.chinese_chars
 *     tokenizer.max_chars_per_word tokenizer.unk_id tokenizer.cls_id
 *     tokenizer.sep_id tokenizer.pad_id tokenizer.mask_id        U32
 *   except in a bundle that carries its checkpoint's tokenizer (version 2):
 *     tokenizer.json  the checkpoint's tokenizer.json (Hugging Face
 *                     tokenizers' format), byte for byte            BYTES
 *   Then the tokenizer is that file's pipeline (src/text/hf_tokenizer.h: BPE,
 *   Unigram or WordPiece with its normalizer, pre-tokenizer and
 *   post-processor); the loader parses it with the JSON reader's caps and
 *   refuses what it cannot run, by name. tokenizer.vocab, .lowercase,
 *   .strip_accents, .chinese_chars and .max_chars_per_word are then neither
 *   required nor read, the tokenizer.*_id keys are optional (absent: the
 *   model has no such token; each present one below the tokenizer's
 *   vocabulary, which is at most bert.vocab_size), and
 *     tokenizer.model_max_length  tokenizer_config.json's model_max_length,
 *                     1..BL_MAX_POSITIONS; absent: none (a larger or
 *                     unset one, e.g. 1e30, is not written). bl_tokenize
 *                     truncates there (RoBERTa: 514 positions, 512)  U32
 *     source.name source.license source.sha256 converter.version
 *     weights.dtype                                              STR
 *   source.sha256 is the sha256 of the weights file; of a sharded checkpoint,
 *   of its shards' bytes concatenated in file-name order.
 *   Optional keys written by tools/convert.py and `bertlens convert` (the
 *   loader does not require them; `bertlens info` and the page show them):
 *     source.file  "model.safetensors", or "model.safetensors.index.json"
 *                  (sharded)                                      STR
 *     weights.embed_dtype                                        STR
 *     weights.rounding  "nearest" | "gptq" (q8 projections rounded with
 *                       error compensation from a calibration set)  STR
 *     fidelity.attn_max   worst input's max |Δ| of the attention
 *                         probabilities vs the source's fp32 weights,
 *                         2 significant digits, e.g. "0.042"     STR
 *     fidelity.attn_mean  worst input's mean |Δ|, 2 significant digits STR
 *     fidelity.argmax     worst input's share of attention rows whose
 *                         argmax key agrees, percent floored to 0.1, "98.9" STR
 *     fidelity.set        what was measured: "<file>, N inputs, M tokens" STR
 *     sentence.max_seq_length  the token limit of the sentence-transformers
 *                         checkpoint (sentence_bert_config.json's
 *                         max_seq_length, decimal, e.g. "256"): `bertlens
 *                         embed` truncates there; absent: max_positions STR
 *   The fidelity.* figures come from one numpy forward (float64) of the
 *   dequantized and of the fp32 weights on the held-out set
 *   tests/corpus/fidelity_heldout.jsonl; written as text so that rebuilding the
 *   bundle elsewhere gives the same bytes.
 *
 * Tensor table entry (packed)
 *     u32 name_len (1..255), name bytes
 *     u32 dtype      0 F32, 1 F16, 2 Q8, 3 Q4, 4 Q8H, 5 Q9, 6 Q10, 7 Q11, 8 Q12
 *     u32 n_dims     1..4
 *     u64 dims[n_dims]   outermost first; dims[n_dims-1] is the input dim K
 *     u64 offset     from data_offset, multiple of alignment
 *     u64 nbytes     must equal bli_dtype_nbytes(dtype, dims)
 *     u32 crc        CRC-32 of the tensor's nbytes bytes
 *   Tensors appear in increasing offset order and do not overlap.
 *
 * Data layouts, with R = product of the leading dims, K = dims[n_dims-1]:
 *   F32  R*K float32
 *   F16  R*K IEEE binary16
 *   Q8   K % 32 == 0. int8 q[R*K], then float32 scale[R*K/32];
 *        w[r][k] = scale[r*K/32 + k/32] * q[r*K + k]
 *   Q4   K % 32 == 0. uint8 p[R*K/2], then float32 scale[R*K/32]; in row r,
 *        block b, byte i (0..15) at r*K/2 + b*16 + i holds element b*32+i in
 *        its low nibble and element b*32+16+i in its high nibble;
 *        w = scale * (nibble - 8)
 *   QN   Q8H, Q9, Q10, Q11, Q12: B = 8, 9, 10, 11, 12-bit integers q in
 *        [-(2^(B-1) - 1), 2^(B-1) - 1], one float16 scale per block of 32
 *        elements along the row (K % 32 == 0). With N = R*K, E = B - 8:
 *          int8   hi[N]         q >> E (arithmetic shift: floor(q / 2^E))
 *          uint8  lo[N*E/8]     the E low bits of every element (q & (2^E - 1))
 *                               as one little-endian bit stream: bit j of
 *                               element n is bit (n*E + j) % 8 of byte
 *                               (n*E + j) / 8 (empty for Q8H)
 *          uint8  slo[N/32]     low byte of each float16 scale
 *          uint8  shi[N/32]     high byte of each float16 scale
 *        q[n] = hi[n] * 2^E + the low bits of n; scale[i] = slo[i] | shi[i] << 8;
 *        w[r][k] = scale[(r*K + k) / 32] * q[r*K + k].
 *        The planes are apart so that gzip sees byte symbols of one kind each:
 *        hi has the distribution of q8's bytes, the low bits are near-uniform
 *        and cost their width, the scales' high bytes (sign, exponent) repeat.
 *        Every B <= 12 fits the q8 SIMD kernels' int16 weight panels and int32
 *        block sums unchanged (kernels_pack.c), so these dtypes run at q8 speed.
 *   LayerNorm weights, biases, position and token-type embeddings are F32;
 *   embeddings.word_embeddings.weight and the projection weights may use any
 *   dtype.
 *
 * Families (version 2). A bundle names the encoder family it holds in
 * model.family; a bundle without the key is a BERT. The converter writes
 * no model.family for BERT-layout models (BERT, DistilBERT, ELECTRA with
 * embedding_size == hidden), so those stay byte for byte what
 * tools/convert.py writes (version 1 unless a BYTES entry makes it 2), and
 * writes version 2 with model.family for the others; model.family in a
 * version 1 bundle is refused.
 *   model.family      the Hugging Face model_type of the source: "bert",
 *                     "roberta", "xlm-roberta", "camembert", "electra",
 *                     "albert", "mpnet", "deberta-v2", "modernbert"
 *                     (src/families/family.c lists them)                          STR
 *   model.padding_idx roberta, xlm-roberta, camembert (required there, absent
 *                     elsewhere): position ids count from padding_idx + 1
 *                     over the tokens whose id is not padding_idx; such a
 *                     token's own position is padding_idx (Hugging Face's
 *                     create_position_ids_from_input_ids). bert.max_positions
 *                     counts the position embedding's rows, so the model takes
 *                     bert.max_positions - padding_idx - 1 tokens;
 *                     padding_idx < bert.max_positions - 1                U32
 *   model.embedding_size  electra (written only when != bert.hidden) and
 *                     albert (required there): the width E of the
 *                     embeddings: word, position and token-type embeddings
 *                     and the embedding LayerNorm are [..][E], and
 *                     embeddings_project.weight [hidden][E] (any dtype),
 *                     embeddings_project.bias [hidden] (f32) map the
 *                     normalized embeddings to the hidden width (ALBERT's
 *                     encoder.embedding_hidden_mapping_in); 1..BL_MAX_HIDDEN U32
 *   model.layer_groups  albert (required there): G in 1..n_layers dividing
 *                     n_layers; the bundle stores G layers under the BERT
 *                     layer names encoder.layer.0 .. G-1 (ALBERT's
 *                     albert_layer_groups.g.albert_layers.0, whose
 *                     attention.dense, attention.LayerNorm, ffn, ffn_output,
 *                     full_layer_layer_norm are BERT's attention.output.dense,
 *                     attention.output.LayerNorm, intermediate.dense,
 *                     output.dense, output.LayerNorm), and layer l runs stored
 *                     layer l / (n_layers / G): one group is stored once and
 *                     applied n_layers times                              U32
 *   mpnet: model.padding_idx as roberta's (1), and
 *   model.rel_rows    rows R >= 32 of encoder.relative_attention_bias.weight
 *                     [R][n_heads] (f32): head h's score of query i, key j
 *                     gains row bucket(j - i), 32 buckets, max distance 128
 *                     (encoder_family.h), shared by every layer           U32
 *                     Layer names: attention.attn.q/k/v/o ->
 *                     attention.self.query/key/value, attention.output.dense;
 *                     attention.LayerNorm -> attention.output.LayerNorm. No
 *                     token types: token_type_embeddings is one row of zeros.
 *   deberta-v2 (DeBERTa-v2/v3 as released: relative attention, shared key
 *   projections, no absolute positions; others are refused by the converter):
 *   model.rel_rows    rows of encoder.rel_embeddings.weight [rows][hidden]
 *                     (f32): 2 x the span (position_buckets, else
 *                     max_relative_positions)                            U32
 *   model.position_buckets  0 (none) or position_buckets                 U32
 *   model.max_relative_positions  max_relative_positions (-1 in the config:
 *                     max_position_embeddings)                           U32
 *   model.pos_att     1: content->position term (c2p), 2: position->content
 *                     (p2c), 3: both                                     U32
 *   model.rel_norm    1: the relative embeddings are LayerNorm'ed first,
 *                     encoder.rel_embeddings.LayerNorm.weight/bias [hidden]
 *                     (the encoder's LayerNorm) are present              U32
 *                     Layer names: attention.self.query_proj/key_proj/value_proj
 *                     -> attention.self.query/key/value. No absolute
 *                     positions: position_embeddings is one row of zeros
 *                     (every token's); with type_vocab_size 0, one zero row
 *                     of token types.
 *   modernbert (no biases, as released; others are refused):
 *   model.window      half the local window (local_attention / 2): a query
 *                     of a sliding layer sees the keys at distance <= window;
 *                     every other key's probability is exactly 0         U32
 *   model.global_every  layer l is global (whole input) when l % n == 0  U32
 *   model.rope_global, model.rope_local  rotary theta of global and
 *                     sliding layers (rope_parameters' full_attention and
 *                     sliding_attention, or global_rope_theta and
 *                     local_rope_theta)                                  F32
 *                     Layers are pre-norm (encoder.c task_rows):
 *                     attn.Wqkv's rows 0..H-1, H..2H-1, 2H..3H-1 are
 *                     attention.self.query/key/value.weight; attn.Wo is
 *                     attention.output.dense; attn_norm (layers >= 1) is
 *                     attention.output.LayerNorm, applied before the next
 *                     layer's attention; mlp_norm is output.LayerNorm,
 *                     applied before the MLP; mlp.Wi's rows 0..I-1 are
 *                     intermediate.dense.weight (GELU'd), rows I..2I-1
 *                     intermediate.gate.weight (the gate it multiplies);
 *                     mlp.Wo is output.dense; final_norm is
 *                     encoder.final_norm.weight; embeddings.tok_embeddings
 *                     and .norm are word_embeddings and LayerNorm. Every
 *                     bias, layer 0's attention LayerNorm (unused: layer 0
 *                     reads the embeddings' norm), the token types and the
 *                     one position row are zeros.
 *   nomic_bert, gte, eurobert (the traits of src/families/family.c): model.rope_global
 *                     alone (one theta, every layer global); no positions
 *                     (one row of zeros); a gated feed-forward
 *                     (encoder.layer.N.intermediate.gate.weight, the factor
 *                     the activated intermediate.dense multiplies); biases
 *                     the checkpoint lacks are zeros. eurobert: pre-norm
 *                     RMSNorm layers (attention.output.LayerNorm before the
 *                     attention, output.LayerNorm before the MLP, .weight
 *                     only), no embedding norm (its tensors zeros), a final
 *                     RMSNorm encoder.final_norm.weight; no token types.
 *   Activation "gelu_tanh" is ALBERT's gelu_new; "silu" (x sigmoid(x)) runs
 *   in the encoder's feed-forward block only. A family's keys are refused
 *   in a bundle of another family, and every tensor of the family's lists
 *   (BL_TENSORS_* below) is checked for presence, shape and dtype.
 *
 * Tensor names are Hugging Face BertModel names without the "bert." prefix
 * (embeddings.word_embeddings.weight, encoder.layer.3.attention.self.query.weight,
 * ...); bundle.c lists every required name with its shape.
 *
 * Integrity: header, metadata and table each have a CRC, every tensor has a
 * CRC, and every other byte must be zero, so a flipped byte anywhere is
 * detected by bl_model_load. Every float must be finite: f32 and f16 values,
 * q8/q4 block scales, QN float16 scales and F32 metadata values; an inf or
 * NaN is refused with the tensor (or key) and its index.
 *
 * Limits (the BL_MAX_* below; the converter, src/convert/convert.c, refuses the same)
 *   The limits the loader accepts are the limits the engine can run: every
 *   buffer a model needs is sized in 64 bits from these counts and checked
 *   against one cap per buffer, BLI_MAX_BUFFER (src/base/sizes.h: 2 GB in 32-bit
 *   builds such as wasm, 1 TB in 64-bit builds), before it is allocated.
 *   What the loader accepts always loads; what a loaded model needs for a
 *   given token count is checked when a state is made or re-sized
 *   (bl_state_new, bl_state_reserve): the largest buffer is the kept
 *   attention (and norms), n_layers x n_heads x T x T floats, so a wide
 *   model on many tokens is refused there with the size it needs, e.g.
 *   "512 tokens: attention of 33 layers x 128 heads needs 4.4 GB: more than
 *   this build allows in one buffer (2.0 GB)", never allocated short. In a
 *   32-bit build that allows 7 layer-heads at BL_MAX_POSITIONS tokens,
 *   and BERT-base (12 x 12) up to 1,863 tokens, BERT-large (24 x 16) up to
 *   1,141: their 512 positions always fit.
 *   Tokenizer: a word longer than max_chars_per_word characters is one
 *   [UNK], exactly as Hugging Face's max_input_chars_per_word (default and
 *   BERT value 100; 0: every word). WordPiece is a greedy longest match:
 *   from each position the candidates run back from the longest one that
 *   fits the longest vocabulary entry (BL_MAX_TOKEN_BYTES at most), each one
 *   hash-table lookup with a hash extended one character at a time, so a
 *   word of n characters costs at most n x min(n, longest entry) lookups.
 *   BL_MAX_CHARS_PER_WORD holds min(max_chars_per_word, longest entry in
 *   bytes) to 1,000: max_chars_per_word may pass 1,000 only when no entry
 *   does, and the whole text is linear in its length (20 words of 1,000
 *   four-byte letters against a 4,096-byte entry: 0.1 s, was 24 s;
 *   tests/limits.test.mjs).
 */
#ifndef BL_BUNDLE_H
#define BL_BUNDLE_H

#include "bertlens.h"
#include "base/dtype.h"
#include "base/error.h"
#include "families/family.h"

#define BL_BUNDLE_MAGIC "BERTLENS"
#define BL_BUNDLE_VERSION 2u     /* the newest version this build reads and writes */
#define BL_BUNDLE_MIN_VERSION 1u /* the oldest it reads                            */
#define BL_MAX_META_BYTES (64u << 20) /* one BYTES metadata value (tokenizer.json) */
#define BL_HEADER_SIZE 96u

/* What the loader accepts (inclusive ranges; see Limits above). */
#define BL_MAX_LAYERS 64u               /* bert.n_layers 1..64               */
#define BL_MAX_HEADS 128u               /* bert.n_heads 1..128               */
#define BL_MAX_HIDDEN 8192u             /* bert.hidden 1..8192, a multiple of n_heads */
#define BL_MAX_INTERMEDIATE 32768u      /* bert.intermediate 1..32768        */
#define BL_MAX_POSITIONS 8192u          /* bert.max_positions 1..8192        */
#define BL_MAX_TYPE_VOCAB 64u           /* bert.type_vocab_size 1..64        */
#define BL_MIN_VOCAB 5u                 /* bert.vocab_size 5..1,000,000      */
#define BL_MAX_VOCAB 1000000u
/* The tokenizer's own limits (bl_tokenizer_new refuses beyond them too,
 * for tokenizers made without a bundle). */
#define BL_MAX_WORD_CHARS 2147483647u   /* tokenizer.max_chars_per_word 0..2^31-1 (0: every word is [UNK]) */
#define BL_MAX_CHARS_PER_WORD 1000u     /* ... above 1000 only if no tokenizer.vocab entry is above 1000 bytes */
#define BL_MAX_TOKEN_BYTES 4096u        /* one tokenizer.vocab entry: 0..4096 bytes */

enum { BL_META_U32 = 0, BL_META_I32 = 1, BL_META_F32 = 2, BL_META_STR = 3, BL_META_STRARR = 4, BL_META_BYTES = 5 };

/* zlib-compatible CRC-32, incremental: crc = bli_crc32(crc, p, n), start at 0. */
uint32_t bli_crc32(uint32_t crc, const void *data, size_t n);

/* Bytes a tensor of this dtype and shape occupies, or 0 if the shape is
 * invalid for the dtype (e.g. K not a multiple of 32 for Q8/Q4, overflow). */
uint64_t bli_dtype_nbytes(int dtype, int n_dims, const int64_t *dims);

/* QN dtypes' bits per integer: bli_qn_bits in dtype.h. */

/* The required tensors, one list for the loader (bundle.c checks each is
 * present with its shape and dtype) and the encoder (encoder.c binds each to
 * its weights without re-checking). X(field, name, d0, d1, dtypes):
 *   field   the encoder's member it binds to
 *   name    Hugging Face BertModel name without "bert."; per-layer names
 *           take the layer number (%d)
 *   d0, d1  shape in config units (BL_DIM_*); d1 NONE: a vector
 *   dtypes  F32: must be f32; ANY: any bl_dtype (matrices the kernels read)
 * The word embedding is listed alone: the encoder reads it row by row. */
enum { BL_DIM_NONE, BL_DIM_HIDDEN, BL_DIM_INTERMEDIATE, BL_DIM_VOCAB, BL_DIM_POSITIONS, BL_DIM_TYPES,
       BL_DIM_EMBED /* the family's embedding width E */, BL_DIM_POS_ROWS /* position embedding rows */,
       BL_DIM_REL_ROWS /* model.rel_rows */, BL_DIM_HEADS /* bert.n_heads */ };
enum { BL_DTYPES_F32, BL_DTYPES_ANY };

/* Every family: the embeddings, E wide (E = hidden but in electra/albert). */
#define BL_TENSORS_WORD(X) X(word, "embeddings.word_embeddings.weight", VOCAB, EMBED, ANY)

#define BL_TENSORS_EMBED(X)                                                            \
    X(pos, "embeddings.position_embeddings.weight", POS_ROWS, EMBED, F32)              \
    X(type, "embeddings.token_type_embeddings.weight", TYPES, EMBED, F32)              \
    X(emb_ln_g, "embeddings.LayerNorm.weight", EMBED, NONE, F32)                       \
    X(emb_ln_b, "embeddings.LayerNorm.bias", EMBED, NONE, F32)

/* Families with model.embedding_size: the E -> hidden projection. */
#define BL_TENSORS_PROJECT(X)                                                          \
    X(proj_w, "embeddings_project.weight", HIDDEN, EMBED, ANY)                         \
    X(proj_b, "embeddings_project.bias", HIDDEN, NONE, F32)

#define BL_TENSORS_LAYER(X)                                                            \
    X(wq, "encoder.layer.%d.attention.self.query.weight", HIDDEN, HIDDEN, ANY)          \
    X(bq, "encoder.layer.%d.attention.self.query.bias", HIDDEN, NONE, F32)              \
    X(wk, "encoder.layer.%d.attention.self.key.weight", HIDDEN, HIDDEN, ANY)            \
    X(bk, "encoder.layer.%d.attention.self.key.bias", HIDDEN, NONE, F32)                \
    X(wv, "encoder.layer.%d.attention.self.value.weight", HIDDEN, HIDDEN, ANY)          \
    X(bv, "encoder.layer.%d.attention.self.value.bias", HIDDEN, NONE, F32)              \
    X(wo, "encoder.layer.%d.attention.output.dense.weight", HIDDEN, HIDDEN, ANY)        \
    X(bo, "encoder.layer.%d.attention.output.dense.bias", HIDDEN, NONE, F32)            \
    X(ln1_g, "encoder.layer.%d.attention.output.LayerNorm.weight", HIDDEN, NONE, F32)   \
    X(ln1_b, "encoder.layer.%d.attention.output.LayerNorm.bias", HIDDEN, NONE, F32)     \
    X(w1, "encoder.layer.%d.intermediate.dense.weight", INTERMEDIATE, HIDDEN, ANY)      \
    X(b1, "encoder.layer.%d.intermediate.dense.bias", INTERMEDIATE, NONE, F32)          \
    X(w2, "encoder.layer.%d.output.dense.weight", HIDDEN, INTERMEDIATE, ANY)            \
    X(b2, "encoder.layer.%d.output.dense.bias", HIDDEN, NONE, F32)                      \
    X(ln2_g, "encoder.layer.%d.output.LayerNorm.weight", HIDDEN, NONE, F32)             \
    X(ln2_b, "encoder.layer.%d.output.LayerNorm.bias", HIDDEN, NONE, F32)

/* The families of relative or rotary positions (bundle.h "Families"), beyond
 * the lists above, bound by encoder_family.c: */
#define BL_TENSORS_MPNET(X) X(rel_table, "encoder.relative_attention_bias.weight", REL_ROWS, HEADS, F32)
#define BL_TENSORS_DEBERTA(X) X(rel, "encoder.rel_embeddings.weight", REL_ROWS, HIDDEN, F32)
#define BL_TENSORS_DEBERTA_NORM(X)                                                     \
    X(rel_ln_g, "encoder.rel_embeddings.LayerNorm.weight", HIDDEN, NONE, F32)          \
    X(rel_ln_b, "encoder.rel_embeddings.LayerNorm.bias", HIDDEN, NONE, F32)
#define BL_TENSORS_MODERNBERT(X) X(final_g, "encoder.final_norm.weight", HIDDEN, NONE, F32)
#define BL_TENSORS_MODERNBERT_LAYER(X) X(wg, "encoder.layer.%d.intermediate.gate.weight", INTERMEDIATE, HIDDEN, ANY)

/* ------------------------------------------------------ masked-LM head
 * Optional (absent: the bundle has no head; loaders older than the head
 * ignore these entries, so the format version does not change for them).
 * A head is present when the metadata key head.kind is; then every tensor
 * below is required with its shape, E = head.transform.weight's dims[0]:
 *   head.kind        "mlm"                                          STR
 *   head.tied        1: the decoder is the word embedding
 *                    (embeddings.word_embeddings.weight, which must then be
 *                    [vocab_size, E]), stored once; 0: head.decoder.weight
 *                    [vocab_size, E] is stored                        U32
 *   head.activation  "gelu" | "gelu_tanh" | "relu"                  STR
 *   head.ln_eps      the head LayerNorm's epsilon, in (0, 1)         F32
 * What the head computes, per token, from the final hidden state x [hidden]:
 *   t = act(W_t x + b_t)  [E];  t = LN(t) * g + b;  logits = W_d t + b_d [vocab]
 * (BERT cls.predictions.*, DistilBERT vocab_transform / vocab_layer_norm /
 * vocab_projector, ELECTRA generator_predictions.* + generator_lm_head,
 * RoBERTa-style lm_head.*; the converter's name map is src/convert/convert_head.c).
 * X(field, name, d0, d1, dtypes) as the lists above, HEAD_E being E: */
#define BL_TENSORS_HEAD(X)                                                             \
    X(head_w, "head.transform.weight", HEAD_E, HIDDEN, ANY)                            \
    X(head_b, "head.transform.bias", HEAD_E, NONE, F32)                                \
    X(head_ln_g, "head.ln.weight", HEAD_E, NONE, F32)                                  \
    X(head_ln_b, "head.ln.bias", HEAD_E, NONE, F32)                                    \
    X(head_dec_b, "head.decoder.bias", VOCAB, NONE, F32)
/* Only when head.tied is 0: */
#define BL_TENSORS_HEAD_UNTIED(X) X(head_dec_w, "head.decoder.weight", VOCAB, HEAD_E, ANY)
#define BL_DIM_HEAD_E (-1) /* E: resolved by the head's own checks (bundle.c check_head) */

/* A model's family (bundle.h "Families"), read from its metadata by
 * bl_model_load; a BERT gives {BLI_FAM_BERT, "bert", E = hidden, project 0,
 * pos_rows = max_positions, pos_offset 0, pad_id -1, n_stored = n_layers}. */
typedef struct bli_family {
    int kind;           /* BLI_FAM_* (family.h): the layout, whose traits the encoder runs */
    char name[24];      /* model.family ("bert" when absent)               */
    int32_t embed;      /* E: embedding width (hidden unless project)      */
    int project;        /* embeddings_project maps E -> hidden             */
    int32_t pos_rows;   /* rows of the position embedding (bert.max_positions) */
    int32_t pos_offset; /* first position id: padding_idx + 1, or 0        */
    int32_t pad_id;     /* padding_idx (a pad token's position), or -1     */
    int32_t n_stored;   /* layers stored: n_layers, ALBERT's layer_groups  */
    /* relative and rotary positions (mpnet, deberta-v2, modernbert; 0 elsewhere) */
    int nopos;          /* no absolute positions: one row of zeros, every token's */
    int notypes;        /* token type ids ignored (mpnet, modernbert; deberta-v2 with
                           one type row: its type_vocab_size 0): bl_forward reads none */
    int32_t rel_rows;   /* mpnet: bias table rows; deberta: relative embedding rows */
    int32_t rel_buckets, rel_max, rel_terms, rel_norm; /* deberta: model.position_buckets,
                           .max_relative_positions, .pos_att, .rel_norm      */
    int32_t window, global_every;   /* modernbert: half window, global layer period */
    float rope_global, rope_local;  /* modernbert: rotary theta of global, local layers */
} bli_family;

/* The family of a loaded model (bundle.c). */
const bli_family *bli_model_family(const bl_model *m);

/* The stored layer that layer l runs. */
static inline int32_t bli_stored_layer(const bl_config *c, const bli_family *f, int32_t l) {
    return f->n_stored == c->n_layers ? l : l / (c->n_layers / f->n_stored);
}

/* Size of a BL_DIM_* unit under config c (0 for NONE). */
static inline int64_t bli_dim_size(const bl_config *c, int dim) {
    switch (dim) {
    case BL_DIM_HIDDEN: return c->hidden;
    case BL_DIM_INTERMEDIATE: return c->intermediate;
    case BL_DIM_VOCAB: return c->vocab_size;
    case BL_DIM_POSITIONS: return c->max_positions;
    case BL_DIM_TYPES: return c->type_vocab_size;
    default: return 0;
    }
}

/* The same with the family's units (EMBED, POS_ROWS). */
static inline int64_t bli_fdim_size(const bl_config *c, const bli_family *f, int dim) {
    if (dim == BL_DIM_EMBED) return f->embed;
    if (dim == BL_DIM_POS_ROWS) return f->pos_rows;
    if (dim == BL_DIM_REL_ROWS) return f->rel_rows;
    if (dim == BL_DIM_HEADS) return c->n_heads;
    return bli_dim_size(c, dim);
}

#endif
