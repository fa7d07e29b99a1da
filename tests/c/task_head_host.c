/* task_head_host.c — bl_task_head_backward (src/model/task_head.c) on hidden
 * states given in a file, for tests/heads.test.mjs (which holds torch's
 * float64 gradients of the same head on the same hidden states).
 *
 *   task_head_host BUNDLE HIDDEN_F32 T CLASS POSITION
 *
 * HIDDEN_F32: T x hidden little-endian float32. Prints
 * {"logit": x, "grad": [T * hidden numbers]}. Exit status 2 on any error.
 */
#include "bertlens.h"

#include <stdio.h>
#include <stdlib.h>

static void *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *p = len > 0 ? malloc((size_t)len) : NULL;
    if (p && fread(p, 1, (size_t)len, f) != (size_t)len) free(p), p = NULL;
    fclose(f);
    *n = (size_t)len;
    return p;
}

int main(int argc, char **argv) {
    char err[512] = "";
    if (argc != 6) {
        fprintf(stderr, "usage: task_head_host BUNDLE HIDDEN_F32 T CLASS POSITION\n");
        return 2;
    }
    size_t nb = 0, nh = 0;
    void *bytes = slurp(argv[1], &nb);
    float *hidden = slurp(argv[2], &nh);
    const int32_t T = atoi(argv[3]), cls = atoi(argv[4]), pos = atoi(argv[5]);
    bl_model *m = bytes ? bl_model_load(bytes, nb, err, sizeof err) : NULL;
    bl_task_head *h = m ? bl_task_head_new(m, err, sizeof err) : NULL;
    const int32_t H = m ? bl_model_config(m)->hidden : 0;
    if (!h || !hidden || T < 1 || nh != sizeof(float) * (size_t)T * (size_t)H) {
        fprintf(stderr, "task_head_host: %s\n", *err ? err : "cannot read the bundle or the hidden states");
        return 2;
    }
    float *grad = malloc(sizeof(float) * (size_t)T * H), logit = 0;
    if (!grad || bl_task_head_backward(h, hidden, T, cls, pos, grad, &logit, err, sizeof err)) {
        fprintf(stderr, "task_head_host: %s\n", err);
        return 2;
    }
    printf("{\"logit\":%.9g,\"grad\":[", (double)logit);
    for (int32_t i = 0; i < T * H; i++) printf(i ? ",%.9g" : "%.9g", (double)grad[i]);
    printf("]}\n");
    free(grad), free(hidden), free(bytes);
    bl_task_head_free(h);
    bl_model_free(m);
    return 0;
}
