/* backward.h — the reverse-mode pass through the encoder (backward.c,
 * backward_attn.c, backward_dy.c), as the analyses above it call it:
 * explain.c's methods, the task heads' backward (internal).
 */
#ifndef BL_BACKWARD_H
#define BL_BACKWARD_H

#include "bertlens.h"

/* act(u) and its derivative act'(u) for bl_activation act (ReLU, erf GELU,
 * tanh GELU, SiLU), in double inside (backward.c): the encoder's feed-forward and
 * the heads' dense layers differentiate with the same two. */
float bli_act_f(float u, int32_t act);
float bli_act_d(float u, int32_t act);

/* bl_backward for G runs of the same tokens (a batch of IG's steps;
 * backward.c): run g's kept hidden states hid[g] ([L + 1][T][hidden]),
 * word rows word_rows[g] ([T][E]; word_rows or an entry NULL: those of ids),
 * d_final[g] [T][hidden] -> d_word[g] [T][E]; tape[g] (tape or an entry
 * NULL: none): run g's tape (bli_state_set_tape, encoder_types.h), so that
 * no layer's products are redone but W1's. s: its last forward of T
 * tokens (the mask, positions and tables of the runs). */
int bli_backward_steps(bl_state *s, int32_t G, const int32_t *ids, const int32_t *type_ids, const float *const *hid,
                       const float *const *word_rows, const float *const *tape, const float *const *d_final,
                       float *const *d_word, char *err, size_t errlen);

/* NULL when bl_backward differentiates every trait of s's family (family.h),
 * else the first trait it does not, in words ("RMSNorm"): explain refuses
 * such a family by that name rather than give wrong numbers (backward.c). */
const char *bli_backward_refuses(const bl_state *s);

#endif
