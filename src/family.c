/* family.c — the table of family.h: the model_types bertlens converts and
 * runs, each with its layout, and the ones it refuses, each with the reason
 * a user reads ("model_type 'gpt2' is a decoder: bertlens shows encoders"). */
#include "family.h"
#include "bundle.h"

#include <string.h>

#define DECODER "is a decoder: bertlens shows encoders (bidirectional attention over the whole input)"
#define ENC_DEC "is an encoder-decoder: bertlens shows encoder-only models"
#define VISION "is a vision model: bertlens shows text encoders"
#define LATER "is an encoder bertlens does not run yet"

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
    /* encoders still out of reach */
    {"deberta", -1, LATER " (DeBERTa v1's disentangled attention; DeBERTa-v2/v3 run)"},
    {"nomic_bert", -1, LATER " (rotary positions, SwiGLU)"},
    {"new", -1, LATER " (this gte variant uses rotary positions)"},
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
    return "bert, distilbert, electra, roberta, xlm-roberta, camembert, albert, mpnet, deberta-v2, modernbert";
}
