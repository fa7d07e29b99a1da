/* convert_head.c — the converter's heads: what config.json says of the
 * masked-LM head (tied decoder, activation; bundle.h, "masked-LM head") and
 * the task head (its family's recipe, family.h; its metadata and tensors).
 * The head tensors' names are convert_head_names.c's; planning the
 * masked-LM head's tensors is convert.c's plan_head.
 */
#include "conv_state.h"
#include "base/error.h"
#include "families/family.h"

#include <string.h>

int bli_conv_stage_task(bli_conv *c, const bli_jv *cfg, char *err, size_t errlen);

/* The traits of config.json's model_type (the table's row: ELECTRA
 * base/large run as BERT's layout, their heads stay ELECTRA's). */
static const bli_family_traits *head_traits(const bli_conv *c, const bli_jv *cfg) {
    const bli_jv *mt = bli_jget(cfg, "model_type");
    const bli_family_info *fi = bli_family_find(mt && mt->type == BLI_JSTR ? mt->str : NULL);
    return bli_traits(fi && fi->kind >= 0 ? fi->kind : c->fam.kind);
}

int bli_conv_stage_head(bli_conv *c, const bli_jv *cfg, char *err, size_t errlen) {
    const bli_family_traits *tr = head_traits(c, cfg);
    /* ELECTRA's generator and RoBERTa's and MPNet's lm_head apply erf GELU
     * whatever hidden_act says (head_gelu); BERT's, DistilBERT's and
     * ALBERT's head the encoder's. */
    c->head_act = tr->head_gelu ? "gelu" : c->activation;
    c->head_no_biases = tr->head_no_biases;
    const bli_jv *tie = bli_jget(cfg, "tie_word_embeddings"); /* transformers' default: tied */
    c->head_tied = tie ? bli_jtruthy(tie) : 1;
    if (tr->head_act_key) { /* its own activation key (ModernBERT's classifier_activation) */
        const bli_jv *ca = bli_jget(cfg, tr->head_act_key);
        const char *a = ca && ca->type == BLI_JSTR ? ca->str : "gelu";
        static const char *const acts[][2] = {
            {"gelu", "gelu"}, {"gelu_new", "gelu_tanh"}, {"gelu_pytorch_tanh", "gelu_tanh"}, {"relu", "relu"}};
        c->head_act = NULL;
        for (int i = 0; i < 4; i++)
            if (!strcmp(a, acts[i][0])) c->head_act = acts[i][1];
        if (!c->head_act) {
            bli_set_err(err, errlen, "config.json: %s '%s' of the masked-LM head is not supported "
                        "(gelu, gelu_new, gelu_pytorch_tanh, relu)", tr->head_act_key, a);
            return -1;
        }
    }
    /* DeBERTa-v2/v3's lm_predictions head multiplies by the word embedding
     * whatever tie_word_embeddings says (legacy false, transformers' default
     * for new configs is true: then cls.predictions.* as BERT's) */
    const bli_jv *legacy = bli_jget(cfg, "legacy");
    if (tr->head_tied_legacy && legacy && !bli_jtruthy(legacy)) c->head_tied = 1;
    return bli_conv_stage_task(c, cfg, err, errlen);
}

/* ------------------------------------------------------------ task heads
 * *ForSequenceClassification, *ForTokenClassification and
 * *ForQuestionAnswering (docs/bundle-format.md, "Task heads"): which source
 * tensors are the head's dense layer (pooler), norm and output is each
 * family's recipe (family.c: seq_head, token_head, qa_head; DistilBERT's
 * distil_seq_head). Token classification and question answering without a
 * recipe: classifier / qa_outputs per token. Names are after the
 * converter's normalization (prefixes stripped). */
static const bli_head_recipe TOKEN_RECIPE = {.out_w = "classifier.weight", .out_b = "classifier.bias"};
static const bli_head_recipe QA_RECIPE = {.out_w = "qa_outputs.weight", .out_b = "qa_outputs.bias"};

/* transformers' ACT2FN name -> the bundle's task.activation, or NULL. */
static const char *task_act(const char *a) {
    static const char *const acts[][2] = {{"gelu", "gelu"},           {"gelu_new", "gelu_tanh"},
                                          {"gelu_pytorch_tanh", "gelu_tanh"}, {"gelu_fast", "gelu_tanh"},
                                          {"relu", "relu"},           {"tanh", "tanh"},
                                          {"silu", "silu"},           {"swish", "silu"},
                                          {"linear", "identity"},     {"identity", "identity"}};
    for (size_t i = 0; a && i < sizeof acts / sizeof *acts; i++)
        if (!strcmp(a, acts[i][0])) return acts[i][1];
    return NULL;
}

static int ends_with(const char *s, const char *tail) {
    size_t n = strlen(s), k = strlen(tail);
    return n >= k && !strcmp(s + n - k, tail);
}

static void meta_f32(bli_conv *c, const char *key, float f) {
    uint32_t bits;
    memcpy(&bits, &f, 4);
    bli_conv_meta_key(&c->meta, key, BL_META_F32);
    bli_conv_put32(&c->meta, bits);
    c->n_meta++;
}

/* config.json's task head: c->task_* set and its metadata (task.*) written,
 * or nothing when architectures names no task class bertlens runs. */
int bli_conv_stage_task(bli_conv *c, const bli_jv *cfg, char *err, size_t errlen) {
    const bli_jv *archs = bli_jget(cfg, "architectures");
    const bli_jv *mt = bli_jget(cfg, "model_type");
    const char *type = mt && mt->type == BLI_JSTR ? mt->str : "";
    const bli_family_traits *tr = head_traits(c, cfg);
    const char *arch = archs && archs->type == BLI_JARR && archs->n && archs->items[0].type == BLI_JSTR
                           ? archs->items[0].str : "";
    c->task_kind = ends_with(arch, "ForSequenceClassification") ? BL_TASK_SEQUENCE
                   : ends_with(arch, "ForTokenClassification")  ? BL_TASK_TOKEN
                   : ends_with(arch, "ForQuestionAnswering")    ? BL_TASK_QA
                                                                : BL_TASK_NONE;
    if (!c->task_kind) return 0;
    const bli_head_recipe *r = c->distil && tr->distil_seq_head ? tr->distil_seq_head : tr->seq_head;
    if (!r) { /* a family whose heads bertlens does not know: the encoder alone, as before */
        bli_conv_logf(c, "[head]   %s: the task heads of model_type '%s' are not known: its head is left out", arch,
                      type);
        c->task_kind = BL_TASK_NONE;
        return 0;
    }
    if (c->task_kind == BL_TASK_TOKEN) r = tr->token_head ? tr->token_head : &TOKEN_RECIPE;
    if (c->task_kind == BL_TASK_QA) r = tr->qa_head ? tr->qa_head : &QA_RECIPE;
    c->task_recipe = r;
    /* the dense layer's activation */
    const char *act_key = r->act_key;
    c->task_act = r->act;
    if (act_key) {
        const bli_jv *a = bli_jget(cfg, act_key);
        const char *name = a && a->type == BLI_JSTR ? a->str : "gelu"; /* both classes' default */
        if (!(c->task_act = task_act(name))) {
            bli_set_err(err, errlen, "config.json: %s '%s' of the task head is not supported (gelu, gelu_new, "
                        "gelu_pytorch_tanh, relu, tanh, silu, linear)", act_key, name);
            return -1;
        }
    }
    /* pooling: the recipe's pool_key, its values mapped onto task.pooling
     * (ModernBERT cls|mean, EuroBERT late|bos|mean; the first is the default) */
    const char *pool = c->task_kind != BL_TASK_SEQUENCE ? "token" : "first";
    if (r->pool_key && r->pools) {
        const bli_jv *p = bli_jget(cfg, r->pool_key);
        const char *v = p && p->type == BLI_JSTR ? p->str : r->pools[0].from;
        const bli_name_map *m = r->pools;
        while (m->from && strcmp(m->from, v)) m++;
        if (!m->from) {
            char known[128] = "";
            for (m = r->pools; m->from; m++)
                snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", m == r->pools ? "" : ", ",
                         m->from);
            bli_set_err(err, errlen, "config.json: %s '%s' is not supported (%s)", r->pool_key, v, known);
            return -1;
        }
        pool = m->to;
    }
    /* labels: id2label by id (QA: none); problem_type */
    const bli_jv *id2 = bli_jget(cfg, "id2label");
    int32_t n_labels = 0;
    if (c->task_kind != BL_TASK_QA) {
        if (!id2 || id2->type != BLI_JOBJ || !id2->n || id2->n > 100000) {
            /* not a config save_pretrained wrote (it always writes id2label): the
             * encoder alone, as before task heads */
            bli_conv_logf(c, "[head]   %s without id2label in config.json: its head is left out", arch);
            c->task_kind = BL_TASK_NONE;
            return 0;
        }
        n_labels = (int32_t)id2->n;
        for (int32_t i = 0; i < n_labels; i++) {
            char key[16];
            snprintf(key, sizeof key, "%d", i);
            const bli_jv *l = bli_jget(id2, key);
            if (!l || l->type != BLI_JSTR || l->len >= 65536) {
                bli_set_err(err, errlen, "config.json: id2label has no name for class %d of %d", i, n_labels);
                return -1;
            }
        }
    }
    const bli_jv *pt = bli_jget(cfg, "problem_type");
    const char *problem = pt && pt->type == BLI_JSTR ? pt->str : n_labels == 1 ? "regression"
                                                                                : "single_label_classification";
    if (c->task_kind != BL_TASK_SEQUENCE) problem = "single_label_classification";
    if (strcmp(problem, "regression") && strcmp(problem, "single_label_classification") &&
        strcmp(problem, "multi_label_classification")) {
        bli_set_err(err, errlen, "config.json: problem_type '%s' is not regression, single_label_classification or "
                    "multi_label_classification", problem);
        return -1;
    }
    bli_conv_meta_str(&c->meta, "task.kind", bl_task_kind_name(c->task_kind)), c->n_meta++;
    bli_conv_meta_str(&c->meta, "task.problem_type", problem), c->n_meta++;
    bli_conv_meta_str(&c->meta, "task.pooling", pool), c->n_meta++;
    if (r->dense_w) bli_conv_meta_str(&c->meta, "task.activation", c->task_act), c->n_meta++;
    if (r->norm_w) meta_f32(c, "task.norm_eps", c->ln_eps); /* the encoder's norms' (eps_key) */
    if (n_labels) {
        bli_conv_meta_key(&c->meta, "task.labels", BL_META_STRARR);
        bli_conv_put32(&c->meta, (uint32_t)n_labels);
        for (int32_t i = 0; i < n_labels; i++) {
            char key[16];
            snprintf(key, sizeof key, "%d", i);
            const bli_jv *l = bli_jget(id2, key);
            bli_conv_put32(&c->meta, (uint32_t)l->len);
            bli_json_raw(&c->meta, l->str, l->len);
        }
        c->n_meta++;
    }
    return 0;
}

/* Source tensor `from` renamed `to` (the later one when a name repeats): 1, 0 absent, -1 out of memory. */
static int rename_source(bli_conv *c, const char *from, const char *to) {
    for (int i = c->n_st; i-- > 0;)
        if (!strcmp(c->st[i].name, from)) {
            char *n = bli_conv_strdup(to);
            if (!n) return -1;
            free(c->st[i].name);
            c->st[i].name = n;
            return 1;
        }
    return 0;
}

int bli_conv_plan_task(bli_conv *c, char *err, size_t errlen) {
    if (!c->task_kind) return 0;
    const bli_head_recipe *r = c->task_recipe;
    const char *const map[][2] = {{r->dense_w, "task.dense.weight"}, {r->dense_b, "task.dense.bias"},
                                  {r->norm_w, "task.norm.weight"},   {r->norm_b, "task.norm.bias"},
                                  {r->out_w, "task.out.weight"},     {r->out_b, "task.out.bias"}};
    for (int i = 0; i < 6; i++) {
        if (!map[i][0]) continue;
        const int got = rename_source(c, map[i][0], map[i][1]);
        if (got < 0) {
            bli_set_err(err, errlen, "out of memory");
            return -1;
        }
        if (!got && !bli_conv_head_zeros(c, map[i][1])) {
            bli_set_err(err, errlen, "the %s head needs the checkpoint's tensor '%s', which it does not have",
                        bl_task_kind_name(c->task_kind), map[i][0]);
            return -1;
        }
    }
    const int64_t H = c->cfg.hidden;
    int64_t C = 0;
    for (int i = c->n_st; i-- > 0 && !C;)
        if (!strcmp(c->st[i].name, "task.out.weight")) C = c->st[i].n_dims == 2 ? c->st[i].dims[0] : -1;
    if (C < 1 || C > 100000) {
        bli_set_err(err, errlen, "%s: not a [classes, %lld] matrix", r->out_w, (long long)H);
        return -1;
    }
    if ((r->dense_w && (bli_conv_add_tensor(c, "task.dense.weight", H, H, c->dtype, err, errlen) ||
                        bli_conv_add_tensor(c, "task.dense.bias", H, 0, BL_F32, err, errlen))) ||
        (r->norm_w && (bli_conv_add_tensor(c, "task.norm.weight", H, 0, BL_F32, err, errlen) ||
                    bli_conv_add_tensor(c, "task.norm.bias", H, 0, BL_F32, err, errlen))) ||
        bli_conv_add_tensor(c, "task.out.weight", C, H, c->dtype, err, errlen) ||
        bli_conv_add_tensor(c, "task.out.bias", C, 0, BL_F32, err, errlen))
        return -1;
    bli_conv_logf(c, "[head]   %s head: %lld outputs%s%s", bl_task_kind_name(c->task_kind), (long long)C,
                  r->dense_w ? ", dense + " : "", r->dense_w ? c->task_act : "");
    return 0;
}
