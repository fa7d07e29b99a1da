/* analyze.h — internal: the JSON form of a bl_analysis, shared by the CLI
 * (`bertlens analyze`) and the wasm boundary (blw_analyze_json).
 *
 * {"tokens":[...],"pair":bool,
 *  "heads":[{"layer","head","entropy","cls","sep","punct","prev","self",
 *            "next","segment","confidence","class"}...],   (undefined: null)
 *  "rollout":[L][T][T],"rollout_norm":[L][T][T] | null}   (with_rollout only)
 */
#ifndef BERTLENS_ANALYZE_H
#define BERTLENS_ANALYZE_H

#include "bertlens.h"
#include "json.h"

void bli_json_analysis(bli_jbuf *b, const bl_tokenizer *tk, const int32_t *ids, const bl_analysis *a, int with_rollout);

#endif
