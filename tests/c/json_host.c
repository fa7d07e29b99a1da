/* json_host.c — the JSON reader (src/text/json_read.h) as a program, for
 * tests/json_read.test.mjs:
 *
 *   json_host FILE           one line: {"ok":true|false,"bytes":N,"values":V,
 *                            "rss_before_kb":A,"rss_peak_kb":B,"cpu_s":T[,"error":"..."]}
 *   json_host --dump FILE    the parsed tree written back as JSON (members in
 *                            file order, numbers as the reader holds them), or
 *                            {"error": "..."}
 *
 * rss_* are the process's peak resident size (VmHWM, see peak_kb) after the
 * file is read and after bli_jparse: their difference is the most the reader
 * held at once. cpu_s is the CPU time of bli_jparse alone. */
#include "text/json.h"
#include "text/json_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/* Peak resident size in KB: Linux's VmHWM, this program's own (getrusage's
 * ru_maxrss carries the parent's peak across exec: a Node parent's 100 MB
 * would hide the reader's); elsewhere ru_maxrss. */
static long peak_kb(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmHWM:", 6)) kb = strtol(line + 6, NULL, 10);
    if (f) fclose(f);
    if (kb >= 0) return kb;
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

static double cpu_s(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + (double)u.ru_stime.tv_sec + u.ru_stime.tv_usec / 1e6;
}

static size_t count(const bli_jv *v) {
    size_t n = 1;
    if (v->type == BLI_JARR || v->type == BLI_JOBJ)
        for (size_t i = 0; i < v->n; i++) n += count(&v->items[i]);
    return n;
}

static void dump(bli_jbuf *b, const bli_jv *v) {
    char tmp[40];
    switch (v->type) {
    case BLI_JNULL: bli_json_raw(b, "null", 4); break;
    case BLI_JFALSE: bli_json_raw(b, "false", 5); break;
    case BLI_JTRUE: bli_json_raw(b, "true", 4); break;
    case BLI_JNUM:
        if (v->is_int) bli_json_int(b, v->ival);
        else bli_json_raw(b, tmp, (size_t)snprintf(tmp, sizeof tmp, "%.17g", v->num));
        break;
    case BLI_JSTR: bli_json_string(b, v->str, v->len); break;
    default: {
        const int obj = v->type == BLI_JOBJ;
        bli_json_raw(b, obj ? "{" : "[", 1);
        for (size_t i = 0; i < v->n; i++) {
            if (i) bli_json_raw(b, ",", 1);
            if (obj) {
                bli_json_string(b, v->items[i].key, v->items[i].key_len);
                bli_json_raw(b, ":", 1);
            }
            dump(b, &v->items[i]);
        }
        bli_json_raw(b, obj ? "}" : "]", 1);
    }
    }
}

int main(int argc, char **argv) {
    const int dumping = argc == 3 && !strcmp(argv[1], "--dump");
    if (argc != 2 && !dumping) {
        fprintf(stderr, "usage: json_host [--dump] FILE\n");
        return 2;
    }
    FILE *f = fopen(argv[argc - 1], "rb");
    if (!f) return perror(argv[argc - 1]), 2;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    rewind(f);
    char *text = malloc(size > 0 ? (size_t)size : 1);
    if (!text || fread(text, 1, (size_t)size, f) != (size_t)size) return fprintf(stderr, "cannot read\n"), 2;
    fclose(f);
    char err[256] = "";
    const long before = peak_kb();
    const double t0 = cpu_s();
    bli_jv *v = bli_jparse(text, (size_t)size, err, sizeof err);
    const double t = cpu_s() - t0;
    const long peak = peak_kb();
    bli_jbuf b = {0};
    if (dumping) {
        if (v) dump(&b, v);
        else {
            bli_json_raw(&b, "{\"error\":", 9);
            bli_json_string(&b, err, strlen(err));
            bli_json_raw(&b, "}", 1);
        }
    } else {
        char line[200];
        bli_json_raw(&b, line, (size_t)snprintf(line, sizeof line, "{\"ok\":%s,\"bytes\":%ld,\"values\":%zu,"
                     "\"rss_before_kb\":%ld,\"rss_peak_kb\":%ld,\"cpu_s\":%.4f", v ? "true" : "false", size,
                     v ? count(v) : 0, before, peak, t));
        if (!v) {
            bli_json_raw(&b, ",\"error\":", 9);
            bli_json_string(&b, err, strlen(err));
        }
        bli_json_raw(&b, "}", 1);
    }
    fwrite(b.data, 1, b.len, stdout);
    putchar('\n');
    bli_jbuf_free(&b);
    bli_jfree(v);
    free(text);
    return 0;
}
