/* embed_example.c — bertlens embedded in a third-party program.
 *
 * Built by `make build/embed_example` against only the public header
 * (build/include/bertlens.h, a copy of src/bertlens.h) and
 * build/libbertlens.a. Reads an uncompressed bundle (.blb) into memory, runs
 * one text and prints, for each layer, head 0's attention row 0 (the [CLS]
 * query), and the text's sentence embedding (bl_embed), as JSON:
 * {"tokens":[...],"rows":[[...] per layer],"embedding":[hidden]}.
 *
 *   build/embed_example MODEL.blb "some text"
 */
#include <bertlens.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    void *buf = NULL;
    long n;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = malloc((size_t)n)) && fread(buf, 1, (size_t)n, f) == (size_t)n) {
        *size = (size_t)n;
    } else {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    return buf;
}

/* A token as a JSON string (tokens are valid UTF-8; escape quotes, backslashes, controls). */
static void print_json_string(const char *s) {
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c < 0x20) printf("\\u%04x", c);
        else putchar(c);
    }
    putchar('"');
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: embed_example MODEL.blb TEXT\n");
        return 1;
    }
    char err[256];
    size_t size = 0;
    void *bytes = read_file(argv[1], &size);
    if (!bytes) {
        fprintf(stderr, "embed_example: cannot read %s\n", argv[1]);
        return 1;
    }
    int rc = 1;
    float *emb = NULL;
    bl_tokens tk;
    memset(&tk, 0, sizeof tk);
    bl_state *s = NULL;
    bl_model *m = bl_model_load(bytes, size, err, sizeof err); /* borrows bytes */
    if (!m) goto fail;
    const bl_config *c = bl_model_config(m);
    const int32_t max_tokens = bl_embed_max_tokens(m, NULL, err, sizeof err); /* <= max_positions */
    if (max_tokens < 0) goto fail;
    if (bl_tokenize(bl_model_tokenizer(m), argv[2], strlen(argv[2]), NULL, 0, max_tokens, &tk, err, sizeof err))
        goto fail;
    if (!(s = bl_state_new(m, tk.n, BL_KEEP_ATTN, err, sizeof err))) goto fail;
    if (bl_forward(s, tk.ids, tk.type_ids, tk.n, 0, err, sizeof err)) goto fail;
    printf("{\"tokens\":[");
    for (int32_t t = 0; t < tk.n; t++) {
        if (t) putchar(',');
        print_json_string(bl_token_str(bl_model_tokenizer(m), tk.ids[t]));
    }
    printf("],\"rows\":[");
    for (int32_t l = 0; l < c->n_layers; l++) {
        const float *a = bl_attention(s, l); /* [heads][T][T]: head 0, row 0 first */
        printf(l ? ",[" : "[");
        for (int32_t j = 0; j < tk.n; j++) printf(j ? ",%.9g" : "%.9g", (double)a[j]);
        printf("]");
    }
    if (!(emb = malloc((size_t)c->hidden * sizeof *emb))) { /* [hidden] */
        snprintf(err, sizeof err, "out of memory");
        goto fail;
    }
    if (bl_embed(s, emb, err, sizeof err)) goto fail;
    printf("],\"embedding\":[");
    for (int32_t i = 0; i < c->hidden; i++) printf(i ? ",%.9g" : "%.9g", (double)emb[i]);
    printf("]}\n");
    rc = 0;
fail:
    if (rc) fprintf(stderr, "embed_example: %s\n", err);
    free(emb);
    bl_state_free(s);
    bl_tokens_free(&tk);
    bl_model_free(m);
    free(bytes);
    return rc;
}
