/* task_head.h — the task head's output as JSON (task_head_json.c), shared
 * by `bertlens predict` (cli_predict.c) and the wasm export
 * blw_task_json (wasm_predict.c). docs/predictions.md describes it. */
#ifndef BERTLENS_TASK_HEAD_H
#define BERTLENS_TASK_HEAD_H

#include "bertlens.h"
#include "text/json.h"

/* Longest answer span of question answering, in tokens. */
#define BLI_QA_MAX_SPAN 30

/* The head's output for the run that tokenized `toks` and computed the
 * final hidden states `hidden` [toks->n][hidden], appended to b:
 *   sequence-classification {"head","problem_type","tokens","ids","labels",
 *       "logits","probs","label"}  (regression: "value", no probs/label)
 *   token-classification {"head","problem_type","tokens","ids","labels",
 *       "positions":[{"index","token","logits","probs","label"}]}
 *   question-answering {"head","tokens","ids","start_logits","end_logits",
 *       "start_probs","end_probs","span":{"start","end","text","score",
 *       "prob"} | null}
 * text_b: the context (question answering), whose offsets give the span's
 * text. 0, or -1 with a reason. */
int bli_task_json(bli_jbuf *b, const bl_task_head *h, const bl_tokenizer *tk, const bl_tokens *toks,
                  const char *text_b, const float *hidden, char *err, size_t errlen);

/* The best answer span of question answering: s <= e, e - s < max_span,
 * both tokens of the context (index >= n_a, not special), maximizing
 * start[s] + end[e] (ties: the first found, s then e ascending). 0, or -1
 * when the context has no token. */
int bli_qa_best_span(const float *start, const float *end, const bl_tokens *toks, const bl_tokenizer *tk,
                     int32_t max_span, int32_t *s_out, int32_t *e_out);

#endif
