/* hf_tok_host.c — the tokenizer.json pipeline (src/text/hf_tokenizer.h) as a
 * program, for tests/hf_tokenizer.test.mjs:
 *
 *     build/hf_tok_host [--stats] TOKENIZER_JSON MAX_LENGTH < lines.jsonl
 *
 * Reads JSON lines as `bertlens tokenize --jsonl` does (a string, or
 * {"text", "text_pair", "max_length"}) and prints, per line, the same object
 * it prints: {"tokens", "ids", "type_ids", "offsets", "word_ids",
 * "truncated"}, or {"error": ...}. MAX_LENGTH is the tokenizer's
 * model_max_length (tokenizer_config.json); a line's max_length overrides it.
 *
 * --stats: prints no tokens, and at the end one JSON line on stderr with
 * this process's own resource usage (getrusage), for the time and memory
 * bounds of tests/hostile_tokenizer.test.mjs: {"file_bytes", "load_cpu_s"
 * (reading and loading the file), "load_rss_kb" (peak resident memory at
 * the end of loading minus the peak before reading the file), "encode_cpu_s"
 * (every line), "rss_kb" (the peak of the whole run), "tokens" (the last
 * line's count)}. Peaks are VmHWM (see now()).
 *
 *     build/hf_tok_host --facts
 *
 * checks the Unicode facts the normalizers' output bound rests on
 * (bli_hfnorm_facts) over every code point: exit 0, or 1 and the exception.
 */
#include "text/hf_tok_impl.h"
#include "text/hf_tokenizer.h"
#include "text/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

typedef struct { double cpu_s; long rss_kb; } usage;

/* CPU time (user + system) and peak resident memory of this process: the
 * peak is /proc/self/status's VmHWM (the high-water mark of this program's
 * own memory; getrusage's ru_maxrss can carry the parent's from before exec),
 * ru_maxrss where there is no /proc. */
static usage now(void) {
    struct rusage r;
    getrusage(RUSAGE_SELF, &r);
    usage u = {(double)r.ru_utime.tv_sec + (double)r.ru_stime.tv_sec +
                   ((double)r.ru_utime.tv_usec + (double)r.ru_stime.tv_usec) / 1e6,
               r.ru_maxrss};
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmHWM:", 6)) u.rss_kb = atol(line + 6);
    if (f) fclose(f);
    return u;
}

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap) {
            char *b = cap > ((size_t)1 << 30) ? NULL : realloc(buf, cap *= 2);
            if (!b) { free(buf); buf = NULL; }
            else buf = b;
        }
    }
    fclose(f);
    *len = n;
    return buf;
}

static void tokens_json(bli_jbuf *b, const bli_hftok *t, const bl_tokens *k) {
    bli_json_raw(b, "{\"tokens\":[", 11);
    for (int32_t i = 0; i < k->n; i++) {
        const char *s = bli_hftok_token_str(t, k->ids[i]);
        if (i) bli_json_raw(b, ",", 1);
        if (s) bli_json_string(b, s, strlen(s));
        else bli_json_raw(b, "null", 4);
    }
    bli_json_raw(b, "],\"ids\":[", 9);
    for (int32_t i = 0; i < k->n; i++) {
        if (i) bli_json_raw(b, ",", 1);
        bli_json_int(b, k->ids[i]);
    }
    bli_json_raw(b, "],\"type_ids\":[", 14);
    for (int32_t i = 0; i < k->n; i++) {
        if (i) bli_json_raw(b, ",", 1);
        bli_json_int(b, k->type_ids[i]);
    }
    bli_json_raw(b, "],\"offsets\":[", 13);
    for (int32_t i = 0; i < k->n; i++) {
        bli_json_raw(b, i ? ",[" : "[", i ? 2 : 1);
        bli_json_int(b, k->offsets[2 * i]);
        bli_json_raw(b, ",", 1);
        bli_json_int(b, k->offsets[2 * i + 1]);
        bli_json_raw(b, "]", 1);
    }
    bli_json_raw(b, "],\"word_ids\":[", 14);
    for (int32_t i = 0; i < k->n; i++) {
        if (i) bli_json_raw(b, ",", 1);
        if (k->word_ids[i] < 0) bli_json_raw(b, "null", 4);
        else bli_json_int(b, k->word_ids[i]);
    }
    const char *tr = k->truncated ? "],\"truncated\":true}" : "],\"truncated\":false}";
    bli_json_raw(b, tr, strlen(tr));
}

int main(int argc, char **argv) {
    if (argc == 2 && !strcmp(argv[1], "--facts")) {
        char why[256];
        if (bli_hfnorm_facts(why, sizeof why)) {
            fprintf(stderr, "hf_tok_host: %s\n", why);
            return 1;
        }
        return 0;
    }
    int stats = argc > 1 && !strcmp(argv[1], "--stats");
    if (stats) argc--, argv++;
    if (argc != 3) {
        fprintf(stderr, "usage: hf_tok_host [--stats] TOKENIZER_JSON MAX_LENGTH < lines.jsonl\n");
        return 2;
    }
    usage u0 = now();
    size_t len;
    char *json = read_file(argv[1], &len);
    if (!json) {
        fprintf(stderr, "hf_tok_host: cannot read %s\n", argv[1]);
        return 1;
    }
    char err[512];
    bli_hftok *t = bli_hftok_load(json, len, err, sizeof err);
    free(json);
    if (!t) {
        fprintf(stderr, "hf_tok_host: %s: %s\n", argv[1], err);
        return 1;
    }
    usage u1 = now();
    int32_t max_len = atoi(argv[2]);
    int32_t last_n = 0;
    bli_jbuf out = {0};
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    int rc = 0;
    while ((got = getline(&line, &cap, stdin)) >= 0) {
        size_t n = (size_t)got;
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r')) n--;
        char *a, *b;
        size_t alen, blen;
        int32_t ml;
        bli_jbuf_reset(&out);
        if (bli_json_read_input(line, n, &a, &alen, &b, &blen, &ml, err, sizeof err)) {
            bli_json_error(&out, err);
        } else {
            bl_tokens k;
            if (bli_hftok_encode(t, a, alen, b, blen, ml > 0 ? ml : max_len, &k, err, sizeof err)) {
                bli_json_error(&out, err);
            } else {
                if (!stats) tokens_json(&out, t, &k);
                last_n = k.n;
                bl_tokens_free(&k);
            }
            free(a);
            free(b);
        }
        if (out.oom) {
            fprintf(stderr, "hf_tok_host: out of memory\n");
            rc = 1;
            break;
        }
        if (!stats || out.len) {
            fwrite(out.data, 1, out.len, stdout);
            fputc('\n', stdout);
        }
    }
    if (stats) {
        usage u2 = now();
        fprintf(stderr, "{\"file_bytes\":%zu,\"load_cpu_s\":%.4f,\"load_rss_kb\":%ld,\"encode_cpu_s\":%.4f,"
                "\"rss_kb\":%ld,\"tokens\":%d}\n", len, u1.cpu_s - u0.cpu_s, u1.rss_kb - u0.rss_kb,
                u2.cpu_s - u1.cpu_s, u2.rss_kb, (int)last_n);
    }
    free(line);
    bli_jbuf_free(&out);
    bli_hftok_free(t);
    return rc;
}
