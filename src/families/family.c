/* family.c — the table of family.h: every family's traits (FAMILY_TRAITS,
 * one row per layout), the model_types bertlens converts and runs, and the
 * ones it refuses, each with the reason a user reads ("model_type 'gpt2' is
 * a decoder: bertlens shows encoders"). Adding a family is adding a row
 * here (docs/adding-a-family.md). */
#include "family.h"

#include <stddef.h>
#include <string.h>

#define DECODER "is a decoder: bertlens shows encoders (bidirectional attention over the whole input)"
#define ENC_DEC "is an encoder-decoder: bertlens shows encoder-only models"
#define VISION "is a vision model: bertlens shows text encoders"
#define LATER "is an encoder bertlens does not run yet"

/* A field left out is BERT's trait (every enum's 0, family.h): absolute
 * positions, token types, normed embeddings, post-norm LayerNorm layers
 * with biases, a plain feed-forward block; every row says what differs. */

/* Task heads (bli_head_recipe): the sequence-classification heads of the
 * transformers classes. Token classification and question answering are
 * classifier / qa_outputs per token unless a row says otherwise. */
/* BertForSequenceClassification: the pooler (first token) + tanh */
static const bli_head_recipe BERT_SEQ = {"pooler.dense.weight", "pooler.dense.bias", "tanh", .out_w = "classifier.weight",
                                         .out_b = "classifier.bias"};
/* DistilBertForSequenceClassification: pre_classifier + ReLU */
static const bli_head_recipe DISTIL_SEQ = {"pre_classifier.weight", "pre_classifier.bias", "relu",
                                           .out_w = "classifier.weight", .out_b = "classifier.bias"};
/* AlbertForSequenceClassification: its pooler is a Linear */
static const bli_head_recipe ALBERT_SEQ = {"pooler.weight", "pooler.bias", "tanh", .out_w = "classifier.weight",
                                           .out_b = "classifier.bias"};
/* RobertaClassificationHead (and MPNet's): classifier.dense + tanh, out_proj */
static const bli_head_recipe ROBERTA_SEQ = {"classifier.dense.weight", "classifier.dense.bias", "tanh",
                                            .out_w = "classifier.out_proj.weight", .out_b = "classifier.out_proj.bias"};
/* ElectraClassificationHead: the same with GELU (erf) */
static const bli_head_recipe ELECTRA_SEQ = {"classifier.dense.weight", "classifier.dense.bias", "gelu",
                                            .out_w = "classifier.out_proj.weight", .out_b = "classifier.out_proj.bias"};
/* DeBERTa-v2's ContextPooler: pooler.dense + pooler_hidden_act */
static const bli_head_recipe DEBERTA_SEQ = {"pooler.dense.weight", "pooler.dense.bias", .act_key = "pooler_hidden_act",
                                            .out_w = "classifier.weight", .out_b = "classifier.bias"};
/* ModernBertPredictionHead (head.dense, head.norm: the masked-LM map names
 * them head.transform, head.ln) with classifier_activation, pooled by
 * classifier_pooling ("cls", the default, or "mean"); token classification
 * and question answering run the same head on every token, then classifier */
static const bli_head_recipe MODERNBERT_SEQ = {
    "head.transform.weight", "head.transform.bias", .act_key = "classifier_activation", .norm_w = "head.ln.weight",
    .norm_b = "head.ln.bias", .pool_key = "classifier_pooling",
    .pools = (const bli_name_map[]){{"cls", "first"}, {"mean", "mean"}, {0}}, .out_w = "classifier.weight",
    .out_b = "classifier.bias"};
static const bli_head_recipe MODERNBERT_TOKEN = {"head.transform.weight", "head.transform.bias",
                                                 .act_key = "classifier_activation", .norm_w = "head.ln.weight",
                                                 .norm_b = "head.ln.bias", .out_w = "classifier.weight",
                                                 .out_b = "classifier.bias"};
/* EuroBertForSequenceClassification: dense + nn.GELU (erf), classifier, by
 * classifier_pooling: "late" (the default: the head on every token, its
 * logits averaged), "bos" (the first token) or "mean" (the tokens averaged
 * first). Token classification: classifier per token. */
static const bli_head_recipe EUROBERT_SEQ = {
    "dense.weight", "dense.bias", "gelu", .pool_key = "classifier_pooling",
    .pools = (const bli_name_map[]){{"late", "late"}, {"bos", "first"}, {"mean", "mean"}, {0}},
    .out_w = "classifier.weight", .out_b = "classifier.bias"};

static const bli_family_traits FAMILY_TRAITS[BLI_FAM_N] = {
    [BLI_FAM_BERT] = {.kind = BLI_FAM_BERT, .seq_head = &BERT_SEQ, .distil_seq_head = &DISTIL_SEQ},
    [BLI_FAM_ROBERTA] = {.kind = BLI_FAM_ROBERTA, .pad_positions = BLI_PAD_CONFIG, .head_gelu = 1,
                         .seq_head = &ROBERTA_SEQ},
    [BLI_FAM_ELECTRA] = {.kind = BLI_FAM_ELECTRA, .project = BLI_PROJ_IF_NARROW, .head_gelu = 1,
                         .seq_head = &ELECTRA_SEQ},
    [BLI_FAM_ALBERT] = {
        .kind = BLI_FAM_ALBERT, .project = BLI_PROJ_ALWAYS, .embed_default = 128, .layer_groups = 1,
        .names = (const bli_name_map[]){{"encoder.embedding_hidden_mapping_in.", "embeddings_project."}, {0}},
        /* group g's one layer (inner_group_num 1) is stored layer g */
        .layer_src = "encoder.albert_layer_groups.",
        .layer_names = (const bli_name_map[]){
            {"albert_layers.0.attention.query.", "attention.self.query."},
            {"albert_layers.0.attention.key.", "attention.self.key."},
            {"albert_layers.0.attention.value.", "attention.self.value."},
            {"albert_layers.0.attention.dense.", "attention.output.dense."},
            {"albert_layers.0.attention.LayerNorm.", "attention.output.LayerNorm."},
            {"albert_layers.0.ffn_output.", "output.dense."},
            {"albert_layers.0.ffn.", "intermediate.dense."},
            {"albert_layers.0.full_layer_layer_norm.", "output.LayerNorm."},
            {0}},
        .seq_head = &ALBERT_SEQ,
    },
    [BLI_FAM_MPNET] = {
        .kind = BLI_FAM_MPNET, .positions = BLI_POS_BUCKETS, .pad_positions = BLI_PAD_ONE,
        .types = BLI_TYPES_NONE,
        .prefixes = (const char *const[]){"mpnet.", NULL},
        .layer_src = "encoder.layer.",
        .layer_names = (const bli_name_map[]){
            {"attention.attn.q.", "attention.self.query."},   {"attention.attn.k.", "attention.self.key."},
            {"attention.attn.v.", "attention.self.value."},   {"attention.attn.o.", "attention.output.dense."},
            {"attention.LayerNorm.", "attention.output.LayerNorm."}, {0}},
        .about = "relative position bias (32 buckets, shared)",
        .head_gelu = 1, .seq_head = &ROBERTA_SEQ,
    },
    [BLI_FAM_DEBERTA] = {
        .kind = BLI_FAM_DEBERTA, .positions = BLI_POS_DISENTANGLED, .types = BLI_TYPES_CONFIG_OR_NONE,
        .prefixes = (const char *const[]){"deberta.", NULL},
        .names = (const bli_name_map[]){{"encoder.LayerNorm.", "encoder.rel_embeddings.LayerNorm."}, {0}},
        .layer_src = "encoder.layer.",
        .layer_names = (const bli_name_map[]){
            {"attention.self.query_proj.", "attention.self.query."},
            {"attention.self.key_proj.", "attention.self.key."},
            {"attention.self.value_proj.", "attention.self.value."}, {0}},
        .head_tied_legacy = 1, .seq_head = &DEBERTA_SEQ,
    },
    [BLI_FAM_MODERNBERT] = {
        .kind = BLI_FAM_MODERNBERT, .positions = BLI_POS_ROTARY, .sliding = 1, .types = BLI_TYPES_NONE,
        .layer = BLI_LAYER_PRE_NORM, .first_norm = 0, .final_norm = 1, .ffn = BLI_FFN_GATED, .absent_biases = 1,
        .act_key = "hidden_activation", .eps_key = "norm_eps", .eps_default = 1e-5,
        .must_be_false = (const char *const[]){"norm_bias", "attention_bias", "mlp_bias", NULL},
        .names = (const bli_name_map[]){{"embeddings.tok_embeddings.", "embeddings.word_embeddings."},
                                        {"embeddings.norm.", "embeddings.LayerNorm."},
                                        {"final_norm.", "encoder.final_norm."}, {0}},
        .layer_src = "layers.",
        .layer_names = (const bli_name_map[]){
            {"attn.Wo.", "attention.output.dense."}, {"attn_norm.", "attention.output.LayerNorm."},
            {"mlp_norm.", "output.LayerNorm."}, {"mlp.Wo.", "output.dense."}, {0}},
        .fused_qkv = "layers.%d.attn.Wqkv.", .fused_ffn = "layers.%d.mlp.Wi.", .fused_ffn_gate_first = 0,
        .head_act_key = "classifier_activation", .head_no_biases = 1, .seq_head = &MODERNBERT_SEQ,
        .token_head = &MODERNBERT_TOKEN, .qa_head = &MODERNBERT_TOKEN,
    },
    /* nomic-embed-text: BERT's post-norm layers with rotary positions, a fused
     * Wqkv, SwiGLU (fc12 activated, times fc11) and no biases in the linear
     * layers; token types */
    [BLI_FAM_NOMIC] = {
        .kind = BLI_FAM_NOMIC, .positions = BLI_POS_ROTARY, .ffn = BLI_FFN_GATED, .absent_biases = 1,
        .names = (const bli_name_map[]){{"emb_ln.", "embeddings.LayerNorm."}, {0}},
        .layer_src = "encoder.layers.",
        .layer_names = (const bli_name_map[]){
            {"attn.out_proj.", "attention.output.dense."}, {"norm1.", "attention.output.LayerNorm."},
            {"mlp.fc12.", "intermediate.dense."},           {"mlp.fc11.", "intermediate.gate."},
            {"mlp.fc2.", "output.dense."},                  {"norm2.", "output.LayerNorm."}, {0}},
        .fused_qkv = "encoder.layers.%d.attn.Wqkv.",
        /* NomicBertFor*Classification: nomic_bert.*; BERT's pooler + tanh */
        .prefixes = (const char *const[]){"nomic_bert.", NULL}, .seq_head = &BERT_SEQ,
    },
    /* GTE v1.5 (gte-base-en-v1.5, model_type "new" on the Hub with remote
     * code): post-norm layers, rotary positions, a fused q|k|v with biases,
     * a gated feed-forward (up_gate_proj: the up half, then the activated
     * gate half) without bias, token types when type_vocab_size > 0 */
    [BLI_FAM_GTE] = {
        .kind = BLI_FAM_GTE, .positions = BLI_POS_ROTARY, .types = BLI_TYPES_CONFIG_OR_NONE,
        .ffn = BLI_FFN_GATED, .absent_biases = 1,
        .prefixes = (const char *const[]){"new.", "gte.", NULL}, /* task models of both */
        .layer_src = "encoder.layer.",
        .layer_names = (const bli_name_map[]){
            {"attention.o_proj.", "attention.output.dense."}, {"attn_ln.", "attention.output.LayerNorm."},
            {"mlp.down_proj.", "output.dense."},              {"mlp_ln.", "output.LayerNorm."}, {0}},
        .fused_qkv = "encoder.layer.%d.attention.qkv_proj.",
        .fused_ffn = "encoder.layer.%d.mlp.up_gate_proj.", .fused_ffn_gate_first = 1,
        .seq_head = &BERT_SEQ, /* GtePooler: BERT's pooler + tanh */
    },
    /* EuroBERT: Llama's layer as an encoder. Pre-norm RMSNorm layers (layer
     * 0's too; the embeddings are not normed), rotary positions, SwiGLU
     * (gate_proj activated, times up_proj), no biases, a final RMSNorm */
    [BLI_FAM_EUROBERT] = {
        .kind = BLI_FAM_EUROBERT, .positions = BLI_POS_ROTARY, .types = BLI_TYPES_NONE, .no_emb_norm = 1,
        .layer = BLI_LAYER_PRE_NORM, .norm = BLI_NORM_RMS, .first_norm = 1, .final_norm = 1,
        .ffn = BLI_FFN_GATED, .absent_biases = 1, .eps_key = "rms_norm_eps", .eps_default = 1e-5,
        .must_be_false = (const char *const[]){"attention_bias", "mlp_bias", NULL},
        .names = (const bli_name_map[]){{"embed_tokens.", "embeddings.word_embeddings."},
                                        {"norm.", "encoder.final_norm."}, {0}},
        .layer_src = "layers.",
        .layer_names = (const bli_name_map[]){
            {"self_attn.q_proj.", "attention.self.query."},  {"self_attn.k_proj.", "attention.self.key."},
            {"self_attn.v_proj.", "attention.self.value."},  {"self_attn.o_proj.", "attention.output.dense."},
            {"input_layernorm.", "attention.output.LayerNorm."}, {"post_attention_layernorm.", "output.LayerNorm."},
            {"mlp.gate_proj.", "intermediate.dense."},       {"mlp.up_proj.", "intermediate.gate."},
            {"mlp.down_proj.", "output.dense."}, {0}},
        .about = "Llama-style layers", .seq_head = &EUROBERT_SEQ,
    },
};

const bli_family_traits *bli_traits(int kind) {
    return &FAMILY_TRAITS[kind >= 0 && kind < BLI_FAM_N ? kind : BLI_FAM_BERT];
}

static const bli_family_info FAMILIES[] = {
    {"bert", BLI_FAM_BERT, "BERT"},
    {"distilbert", BLI_FAM_BERT, "DistilBERT"},
    {"electra", BLI_FAM_ELECTRA, "ELECTRA"},
    {"roberta", BLI_FAM_ROBERTA, "RoBERTa"},
    {"xlm-roberta", BLI_FAM_ROBERTA, "XLM-RoBERTa"},
    {"camembert", BLI_FAM_ROBERTA, "CamemBERT"},
    {"albert", BLI_FAM_ALBERT, "ALBERT"},
    {"mpnet", BLI_FAM_MPNET, "MPNet"},
    {"deberta-v2", BLI_FAM_DEBERTA, "DeBERTa-v2/v3"},
    {"modernbert", BLI_FAM_MODERNBERT, "ModernBERT"},
    {"nomic_bert", BLI_FAM_NOMIC, "NomicBERT"},
    {"gte", BLI_FAM_GTE, "GTE v1.5"},
    {"eurobert", BLI_FAM_EUROBERT, "EuroBERT"},
    /* encoders still out of reach */
    {"new", -1, LATER " (the Hub's remote-code GTE config; transformers' own gte runs)"},
    {"deberta", -1, LATER " (DeBERTa v1's disentangled attention; DeBERTa-v2/v3 run)"},
    {"xlm-roberta-xl", -1, LATER " (pre-norm layers)"},
    {"roberta-prelayernorm", -1, LATER " (pre-norm layers)"},
    {"longformer", -1, LATER " (sliding-window and global attention)"},
    {"bigbird", -1, LATER " (block-sparse attention)"},
    {"big_bird", -1, LATER " (block-sparse attention)"},
    {"funnel", -1, LATER " (pooled sequence)"},
    {"xlnet", -1, "is a permutation language model with two-stream attention: bertlens shows BERT-style encoders"},
    /* decoders */
    {"gpt2", -1, DECODER},
    {"gpt_neo", -1, DECODER},
    {"gpt_neox", -1, DECODER},
    {"gptj", -1, DECODER},
    {"llama", -1, DECODER},
    {"mistral", -1, DECODER},
    {"mixtral", -1, DECODER},
    {"qwen2", -1, DECODER},
    {"qwen3", -1, DECODER},
    {"gemma", -1, DECODER},
    {"gemma2", -1, DECODER},
    {"phi", -1, DECODER},
    {"phi3", -1, DECODER},
    {"falcon", -1, DECODER},
    {"opt", -1, DECODER},
    {"bloom", -1, DECODER},
    {"olmo", -1, DECODER},
    /* encoder-decoders */
    {"t5", -1, ENC_DEC},
    {"mt5", -1, ENC_DEC},
    {"umt5", -1, ENC_DEC},
    {"bart", -1, ENC_DEC},
    {"mbart", -1, ENC_DEC},
    {"marian", -1, ENC_DEC},
    {"pegasus", -1, ENC_DEC},
    {"led", -1, ENC_DEC},
    {"whisper", -1, ENC_DEC " (speech)"},
    /* vision */
    {"vit", -1, VISION},
    {"deit", -1, VISION},
    {"beit", -1, VISION},
    {"swin", -1, VISION},
    {"convnext", -1, VISION},
    {"dinov2", -1, VISION},
    {"clip", -1, "is a text and vision model pair: bertlens shows text encoders"},
    {"siglip", -1, "is a text and vision model pair: bertlens shows text encoders"},
};

const bli_family_info *bli_family_find(const char *type) {
    if (!type) return NULL;
    for (size_t i = 0; i < sizeof FAMILIES / sizeof *FAMILIES; i++)
        if (!strcmp(FAMILIES[i].type, type)) return &FAMILIES[i];
    return NULL;
}

const char *bli_family_list(void) {
    return "bert, distilbert, electra, roberta, xlm-roberta, camembert, albert, mpnet, deberta-v2, modernbert, nomic_bert, gte, eurobert";
}

const char *bli_family_type(int i) {
    for (size_t k = 0; k < sizeof FAMILIES / sizeof *FAMILIES; k++)
        if (FAMILIES[k].kind >= 0 && i-- == 0) return FAMILIES[k].type;
    return NULL;
}
