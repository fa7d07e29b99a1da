/* json.c — JSON output buffer, tokenize result writer, jsonl input reader. */
#include "json.h"
#include "base/error.h"
#include "utf8.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* ------------------------------------------------------------ writer */

void bli_jbuf_reset(bli_jbuf *b) {
    b->len = 0;
    b->oom = 0;
    if (b->data) b->data[0] = 0;
}

void bli_jbuf_free(bli_jbuf *b) {
    free(b->data);
    memset(b, 0, sizeof *b);
}

void bli_json_raw(bli_jbuf *b, const char *s, size_t n) {
    if (b->oom) return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1) cap *= 2;
        char *d = realloc(b->data, cap);
        if (!d) {
            b->oom = 1;
            return;
        }
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = 0;
}

static void raw_str(bli_jbuf *b, const char *s) { bli_json_raw(b, s, strlen(s)); }

const char *bli_json_num(char *buf, double x) {
    if (isfinite(x)) snprintf(buf, BLI_JSON_NUM_CHARS, "%.9g", x);
    else memcpy(buf, "null", 5);
    return buf;
}

void bli_json_int(bli_jbuf *b, long long v) {
    char tmp[24];
    size_t i = sizeof tmp;
    unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
    do tmp[--i] = (char)('0' + u % 10); while (u /= 10);
    if (v < 0) tmp[--i] = '-';
    bli_json_raw(b, tmp + i, sizeof tmp - i);
}

void bli_json_string(bli_jbuf *b, const char *s, size_t n) {
    const unsigned char *u = (const unsigned char *)s;
    bli_json_raw(b, "\"", 1);
    size_t run = 0; /* start of the pending run of bytes copied verbatim */
    for (size_t i = 0; i < n;) {
        unsigned c = u[i];
        const char *esc = NULL;
        char tmp[8];
        size_t len = c < 0x80 ? 1 : bli_utf8_valid_len(u + i, n - i);
        if (c == '"') esc = "\\\"";
        else if (c == '\\') esc = "\\\\";
        else if (c == '\n') esc = "\\n";
        else if (c == '\r') esc = "\\r";
        else if (c == '\t') esc = "\\t";
        else if (c < 0x20 || c == 0x7F) snprintf(tmp, sizeof tmp, "\\u%04x", c), esc = tmp;
        else if (len == 0) esc = "\\ufffd", len = 1;
        else if (c == 0xC2 && u[i + 1] < 0xA0) /* C1 control U+0080..U+009F: a terminal may act on it */
            snprintf(tmp, sizeof tmp, "\\u%04x", u[i + 1]), esc = tmp;
        if (esc) {
            bli_json_raw(b, s + run, i - run);
            raw_str(b, esc);
            i += len;
            run = i;
        } else {
            i += len;
        }
    }
    bli_json_raw(b, s + run, n - run);
    bli_json_raw(b, "\"", 1);
}

/* ---------------------------------------------------------- terminal */

void bli_term_escape(bli_jbuf *b, const char *s, size_t n) {
    const unsigned char *u = (const unsigned char *)s;
    size_t run = 0; /* start of the pending run of bytes copied verbatim */
    for (size_t i = 0; i < n;) {
        unsigned c = u[i];
        size_t len = c < 0x80 ? 1 : bli_utf8_valid_len(u + i, n - i);
        char tmp[8] = "";
        if (c < 0x20 || c == 0x7F || len == 0) snprintf(tmp, sizeof tmp, "\\x%02x", c), len = 1;
        else if (c == 0xC2 && u[i + 1] < 0xA0) snprintf(tmp, sizeof tmp, "\\u%04x", u[i + 1]);
        if (tmp[0]) {
            bli_json_raw(b, s + run, i - run);
            raw_str(b, tmp);
            run = i + len;
        }
        i += len;
    }
    bli_json_raw(b, s + run, n - run);
}

int bli_term_line(FILE *f, const char *fmt, ...) {
    char small[512], *text = small;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) return -1;
    if ((size_t)n >= sizeof small) {
        if (!(text = malloc((size_t)n + 1))) return -1;
        va_start(ap, fmt);
        vsnprintf(text, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    bli_jbuf b = {0};
    bli_term_escape(&b, text, (size_t)n);
    bli_json_raw(&b, "\n", 1);
    int rc = b.oom || fwrite(b.data, 1, b.len, f) != b.len ? -1 : 0;
    bli_jbuf_free(&b);
    if (text != small) free(text);
    return rc;
}

int bli_json_write_string(FILE *f, const char *s, size_t n) {
    bli_jbuf b = {0};
    bli_json_string(&b, s, n);
    int rc = b.oom || fwrite(b.data, 1, b.len, f) != b.len ? -1 : 0;
    bli_jbuf_free(&b);
    return rc;
}

void bli_json_tokens(bli_jbuf *b, const bl_tokenizer *t, const bl_tokens *k, int with_n_a) {
    raw_str(b, "{\"tokens\":[");
    for (int32_t i = 0; i < k->n; i++) {
        const char *s = bl_token_str(t, k->ids[i]);
        if (i) raw_str(b, ",");
        if (s) bli_json_string(b, s, strlen(s));
        else raw_str(b, "null");
    }
    raw_str(b, "],\"ids\":[");
    for (int32_t i = 0; i < k->n; i++) {
        if (i) raw_str(b, ",");
        bli_json_int(b, k->ids[i]);
    }
    raw_str(b, "],\"type_ids\":[");
    for (int32_t i = 0; i < k->n; i++) {
        if (i) raw_str(b, ",");
        bli_json_int(b, k->type_ids[i]);
    }
    raw_str(b, "],\"offsets\":[");
    for (int32_t i = 0; i < k->n; i++) {
        raw_str(b, i ? ",[" : "[");
        bli_json_int(b, k->offsets[2 * i]);
        raw_str(b, ",");
        bli_json_int(b, k->offsets[2 * i + 1]);
        raw_str(b, "]");
    }
    raw_str(b, "],\"word_ids\":[");
    for (int32_t i = 0; i < k->n; i++) {
        if (i) raw_str(b, ",");
        if (k->word_ids[i] < 0) raw_str(b, "null");
        else bli_json_int(b, k->word_ids[i]);
    }
    raw_str(b, k->truncated ? "],\"truncated\":true" : "],\"truncated\":false");
    if (with_n_a) {
        raw_str(b, ",\"n_a\":");
        bli_json_int(b, k->n_a);
    }
    raw_str(b, "}");
}

void bli_json_error(bli_jbuf *b, const char *msg) {
    raw_str(b, "{\"error\":");
    bli_json_string(b, msg, strlen(msg));
    raw_str(b, "}");
}

/* ------------------------------------------------------------ reader */

typedef struct {
    const char *s;
    size_t n, i;
    char *err;
    size_t errlen;
} reader;

static void skip_ws(reader *r) {
    while (r->i < r->n && (r->s[r->i] == ' ' || r->s[r->i] == '\t' || r->s[r->i] == '\r' || r->s[r->i] == '\n'))
        r->i++;
}

static int hex4(reader *r, unsigned *v) {
    if (r->i + 4 > r->n) return -1;
    *v = 0;
    for (int k = 0; k < 4; k++) {
        char c = r->s[r->i++];
        *v <<= 4;
        if (c >= '0' && c <= '9') *v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') *v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') *v |= (unsigned)(c - 'A' + 10);
        else return -1;
    }
    return 0;
}

/* Parse a JSON string at r->i; if out != NULL, store the malloc'ed UTF-8. */
static int read_string(reader *r, char **out, size_t *outlen) {
    skip_ws(r);
    if (r->i >= r->n || r->s[r->i] != '"') {
        bli_set_err(r->err, r->errlen, "expected a JSON string at byte %zu", r->i);
        return -1;
    }
    r->i++;
    char *buf = malloc(r->n - r->i + 1); /* decoded text is never longer than the source */
    if (!buf) {
        bli_set_err(r->err, r->errlen, "out of memory");
        return -1;
    }
    size_t m = 0;
    while (r->i < r->n) {
        unsigned char c = (unsigned char)r->s[r->i++];
        if (c == '"') {
            buf[m] = 0;
            if (out) *out = buf, *outlen = m;
            else free(buf);
            return 0;
        }
        if (c < 0x20) break;
        if (c != '\\') {
            buf[m++] = (char)c; /* raw bytes pass through; the tokenizer validates UTF-8 */
            continue;
        }
        if (r->i >= r->n) break;
        char e = r->s[r->i++];
        unsigned cp;
        switch (e) {
        case '"': buf[m++] = '"'; continue;
        case '\\': buf[m++] = '\\'; continue;
        case '/': buf[m++] = '/'; continue;
        case 'b': buf[m++] = '\b'; continue;
        case 'f': buf[m++] = '\f'; continue;
        case 'n': buf[m++] = '\n'; continue;
        case 'r': buf[m++] = '\r'; continue;
        case 't': buf[m++] = '\t'; continue;
        case 'u':
            if (hex4(r, &cp)) goto bad;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                unsigned lo;
                if (r->i + 2 > r->n || r->s[r->i] != '\\' || r->s[r->i + 1] != 'u') goto lone;
                r->i += 2;
                if (hex4(r, &lo) || lo < 0xDC00 || lo > 0xDFFF) goto lone;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                goto lone;
            }
            if (cp < 0x80) buf[m++] = (char)cp;
            else if (cp < 0x800) buf[m++] = (char)(0xC0 | (cp >> 6)), buf[m++] = (char)(0x80 | (cp & 0x3F));
            else if (cp < 0x10000)
                buf[m++] = (char)(0xE0 | (cp >> 12)), buf[m++] = (char)(0x80 | ((cp >> 6) & 0x3F)),
                buf[m++] = (char)(0x80 | (cp & 0x3F));
            else
                buf[m++] = (char)(0xF0 | (cp >> 18)), buf[m++] = (char)(0x80 | ((cp >> 12) & 0x3F)),
                buf[m++] = (char)(0x80 | ((cp >> 6) & 0x3F)), buf[m++] = (char)(0x80 | (cp & 0x3F));
            continue;
        default: goto bad;
        }
    }
bad:
    free(buf);
    bli_set_err(r->err, r->errlen, "malformed JSON string near byte %zu", r->i);
    return -1;
lone:
    free(buf);
    bli_set_err(r->err, r->errlen, "JSON string has a lone surrogate (not valid UTF-8) near byte %zu", r->i);
    return -1;
}

static int match_word(reader *r, const char *w) {
    size_t n = strlen(w);
    if (r->i + n <= r->n && memcmp(r->s + r->i, w, n) == 0) {
        r->i += n;
        return 1;
    }
    return 0;
}

static int read_int(reader *r, long long *v) {
    skip_ws(r);
    size_t start = r->i;
    int neg = 0;
    if (r->i < r->n && r->s[r->i] == '-') neg = 1, r->i++;
    long long x = 0;
    while (r->i < r->n && r->s[r->i] >= '0' && r->s[r->i] <= '9') {
        if (x > 1000000000LL) goto bad;
        x = x * 10 + (r->s[r->i++] - '0');
    }
    if (r->i == start + (size_t)neg) goto bad;
    *v = neg ? -x : x;
    return 0;
bad:
    bli_set_err(r->err, r->errlen, "expected an integer at byte %zu", start);
    return -1;
}

/* Skip any JSON value (for keys we do not use). */
static int skip_value(reader *r, int depth) {
    skip_ws(r);
    if (r->i >= r->n || depth > 64) goto bad;
    char c = r->s[r->i];
    if (c == '"') return read_string(r, NULL, NULL);
    if (c == '{' || c == '[') {
        char close = c == '{' ? '}' : ']';
        r->i++;
        skip_ws(r);
        if (r->i < r->n && r->s[r->i] == close) return r->i++, 0;
        for (;;) {
            if (c == '{') {
                if (read_string(r, NULL, NULL)) return -1;
                skip_ws(r);
                if (r->i >= r->n || r->s[r->i++] != ':') goto bad;
            }
            if (skip_value(r, depth + 1)) return -1;
            skip_ws(r);
            if (r->i >= r->n) goto bad;
            if (r->s[r->i] == ',') { r->i++; continue; }
            if (r->s[r->i] == close) return r->i++, 0;
            goto bad;
        }
    }
    if (match_word(r, "true") || match_word(r, "false") || match_word(r, "null")) return 0;
    size_t start = r->i;
    while (r->i < r->n && strchr("+-0123456789.eE", r->s[r->i])) r->i++;
    if (r->i > start) return 0;
bad:
    bli_set_err(r->err, r->errlen, "malformed JSON near byte %zu", r->i);
    return -1;
}

int bli_json_read_input(const char *line, size_t len, char **a, size_t *alen, char **b, size_t *blen,
                       int32_t *max_length, char *err, size_t errlen) {
    reader r = {line, len, 0, err, errlen};
    *a = *b = NULL;
    *alen = *blen = 0;
    *max_length = 0;
    skip_ws(&r);
    if (r.i < r.n && r.s[r.i] == '"') {
        if (read_string(&r, a, alen)) return -1;
    } else if (r.i < r.n && r.s[r.i] == '{') {
        r.i++;
        skip_ws(&r);
        if (r.i < r.n && r.s[r.i] == '}') r.i++;
        else for (;;) {
            char *key = NULL;
            size_t klen;
            if (read_string(&r, &key, &klen)) goto fail;
            skip_ws(&r);
            if (r.i >= r.n || r.s[r.i++] != ':') {
                free(key);
                bli_set_err(err, errlen, "expected ':' at byte %zu", r.i);
                goto fail;
            }
            skip_ws(&r);
            int rc;
            if (strcmp(key, "text") == 0 && !*a) {
                rc = read_string(&r, a, alen);
            } else if (strcmp(key, "text_pair") == 0 && !*b) {
                rc = match_word(&r, "null") ? 0 : read_string(&r, b, blen);
            } else if (strcmp(key, "max_length") == 0) {
                long long v = 0;
                rc = read_int(&r, &v);
                if (!rc && (v < 0 || v > 1000000)) {
                    bli_set_err(err, errlen, "max_length %lld out of range", v);
                    rc = -1;
                }
                *max_length = (int32_t)v;
            } else {
                rc = skip_value(&r, 0);
            }
            free(key);
            if (rc) goto fail;
            skip_ws(&r);
            if (r.i < r.n && r.s[r.i] == ',') { r.i++; continue; }
            if (r.i < r.n && r.s[r.i] == '}') { r.i++; break; }
            bli_set_err(err, errlen, "expected ',' or '}' at byte %zu", r.i);
            goto fail;
        }
        if (!*a) {
            bli_set_err(err, errlen, "object has no \"text\" string");
            goto fail;
        }
    } else {
        bli_set_err(err, errlen, "expected a JSON string or object");
        return -1;
    }
    skip_ws(&r);
    if (r.i != r.n) {
        bli_set_err(err, errlen, "trailing characters at byte %zu", r.i);
        goto fail;
    }
    return 0;
fail:
    free(*a);
    free(*b);
    *a = *b = NULL;
    return -1;
}
