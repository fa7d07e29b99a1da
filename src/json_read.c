/* json_read.c — JSON reader (see json_read.h). */
#include "json_read.h"
#include "error.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

typedef struct {
    const char *s;
    size_t n, i;
    char *err;
    size_t errlen;
    int failed;
} parser;

static int fail(parser *p, const char *what) {
    if (!p->failed) bli_set_err(p->err, p->errlen, "JSON: %s at byte %zu", what, p->i);
    p->failed = 1;
    return -1;
}

static void skip_ws(parser *p) {
    while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' || p->s[p->i] == '\r'))
        p->i++;
}

static void free_value(bli_jv *v) {
    if (v->type == BLI_JARR || v->type == BLI_JOBJ) {
        for (size_t k = 0; k < v->n; k++) free_value(&v->items[k]);
        free(v->items);
    }
    free(v->str);
    free(v->key);
    memset(v, 0, sizeof *v);
}

void bli_jfree(bli_jv *v) {
    if (!v) return;
    free_value(v);
    free(v);
}

static int hex4(parser *p, unsigned *out) {
    if (p->n - p->i < 4) return fail(p, "short \\u escape");
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        char c = p->s[p->i++];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
        else return fail(p, "bad \\u escape");
    }
    *out = v;
    return 0;
}

/* A string starting at the opening quote; result malloc'ed. */
static int parse_string(parser *p, char **out, size_t *out_len) {
    p->i++; /* '"' */
    size_t start = p->i, cap = 16, len = 0;
    /* Upper bound: escapes never expand (\uXXXX: 6 bytes -> at most 3, a pair 12 -> 4). */
    size_t end = start;
    while (end < p->n && p->s[end] != '"') end += p->s[end] == '\\' ? 2 : 1;
    if (end >= p->n) return fail(p, "unterminated string");
    cap = end - start + 1;
    char *b = malloc(cap);
    if (!b) return fail(p, "out of memory");
    while (p->i < end) {
        unsigned char c = (unsigned char)p->s[p->i];
        if (c < 0x20) {
            free(b);
            return fail(p, "control character in string");
        }
        if (c != '\\') {
            b[len++] = (char)c;
            p->i++;
            continue;
        }
        p->i++;
        char e = p->s[p->i++];
        unsigned cp;
        switch (e) {
        case '"': b[len++] = '"'; continue;
        case '\\': b[len++] = '\\'; continue;
        case '/': b[len++] = '/'; continue;
        case 'b': b[len++] = '\b'; continue;
        case 'f': b[len++] = '\f'; continue;
        case 'n': b[len++] = '\n'; continue;
        case 'r': b[len++] = '\r'; continue;
        case 't': b[len++] = '\t'; continue;
        case 'u':
            if (hex4(p, &cp)) {
                free(b);
                return -1;
            }
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                unsigned lo;
                if (p->n - p->i < 6 || p->s[p->i] != '\\' || p->s[p->i + 1] != 'u') {
                    free(b);
                    return fail(p, "lone surrogate in \\u escape");
                }
                p->i += 2;
                if (hex4(p, &lo)) {
                    free(b);
                    return -1;
                }
                if (lo < 0xDC00 || lo > 0xDFFF) {
                    free(b);
                    return fail(p, "lone surrogate in \\u escape");
                }
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                free(b);
                return fail(p, "lone surrogate in \\u escape");
            }
            if (cp < 0x80) b[len++] = (char)cp;
            else if (cp < 0x800) {
                b[len++] = (char)(0xC0 | cp >> 6);
                b[len++] = (char)(0x80 | (cp & 0x3F));
            } else if (cp < 0x10000) {
                b[len++] = (char)(0xE0 | cp >> 12);
                b[len++] = (char)(0x80 | ((cp >> 6) & 0x3F));
                b[len++] = (char)(0x80 | (cp & 0x3F));
            } else {
                b[len++] = (char)(0xF0 | cp >> 18);
                b[len++] = (char)(0x80 | ((cp >> 12) & 0x3F));
                b[len++] = (char)(0x80 | ((cp >> 6) & 0x3F));
                b[len++] = (char)(0x80 | (cp & 0x3F));
            }
            continue;
        default: free(b); return fail(p, "bad escape in string");
        }
    }
    p->i = end + 1;
    b[len] = 0;
    *out = b;
    *out_len = len;
    return 0;
}

static int parse_number(parser *p, bli_jv *v) {
    size_t st = p->i;
    int is_int = 1;
    if (p->s[p->i] == '-') p->i++;
    if (p->i >= p->n || p->s[p->i] < '0' || p->s[p->i] > '9') return fail(p, "bad number");
    if (p->s[p->i] == '0') p->i++;
    else while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9') p->i++;
    if (p->i < p->n && p->s[p->i] == '.') {
        is_int = 0;
        p->i++;
        if (p->i >= p->n || p->s[p->i] < '0' || p->s[p->i] > '9') return fail(p, "bad number");
        while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9') p->i++;
    }
    if (p->i < p->n && (p->s[p->i] == 'e' || p->s[p->i] == 'E')) {
        is_int = 0;
        p->i++;
        if (p->i < p->n && (p->s[p->i] == '+' || p->s[p->i] == '-')) p->i++;
        if (p->i >= p->n || p->s[p->i] < '0' || p->s[p->i] > '9') return fail(p, "bad number");
        while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9') p->i++;
    }
    char tmp[64];
    size_t len = p->i - st;
    if (len >= sizeof tmp) {
        /* Very long literal: only its magnitude matters here. */
        char *big = malloc(len + 1);
        if (!big) return fail(p, "out of memory");
        memcpy(big, p->s + st, len);
        big[len] = 0;
        v->num = strtod(big, NULL);
        free(big);
        is_int = 0;
    } else {
        memcpy(tmp, p->s + st, len);
        tmp[len] = 0;
        v->num = strtod(tmp, NULL); /* correctly rounded, like Python's float() */
        if (is_int) {
            errno = 0;
            long long x = strtoll(tmp, NULL, 10);
            if (errno == ERANGE) is_int = 0;
            else v->ival = x;
        }
    }
    v->type = BLI_JNUM;
    v->is_int = is_int;
    return 0;
}

static int parse_value(parser *p, bli_jv *v, int depth);

static int push(parser *p, bli_jv **items, size_t *n, size_t *cap, bli_jv *item) {
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 8;
        bli_jv *ni = realloc(*items, c * sizeof *ni);
        if (!ni) return fail(p, "out of memory");
        *items = ni;
        *cap = c;
    }
    (*items)[(*n)++] = *item;
    return 0;
}

static int parse_container(parser *p, bli_jv *v, int depth, int obj) {
    char close = obj ? '}' : ']';
    size_t cap = 0;
    v->type = obj ? BLI_JOBJ : BLI_JARR;
    p->i++;
    skip_ws(p);
    if (p->i < p->n && p->s[p->i] == close) {
        p->i++;
        return 0;
    }
    for (;;) {
        bli_jv item;
        memset(&item, 0, sizeof item);
        skip_ws(p);
        if (obj) {
            if (p->i >= p->n || p->s[p->i] != '"') return fail(p, "expected a member name");
            if (parse_string(p, &item.key, &item.key_len)) return -1;
            skip_ws(p);
            if (p->i >= p->n || p->s[p->i] != ':') {
                free(item.key);
                return fail(p, "expected ':'");
            }
            p->i++;
        }
        if (parse_value(p, &item, depth + 1) || push(p, &v->items, &v->n, &cap, &item)) {
            free_value(&item);
            return -1;
        }
        skip_ws(p);
        if (p->i < p->n && p->s[p->i] == ',') {
            p->i++;
            continue;
        }
        if (p->i < p->n && p->s[p->i] == close) {
            p->i++;
            return 0;
        }
        return fail(p, obj ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static int literal(parser *p, const char *word, int type, bli_jv *v) {
    size_t k = strlen(word);
    if (p->n - p->i < k || memcmp(p->s + p->i, word, k)) return fail(p, "unexpected character");
    p->i += k;
    v->type = type;
    return 0;
}

static int parse_value(parser *p, bli_jv *v, int depth) {
    if (depth > MAX_DEPTH) return fail(p, "nested too deeply");
    skip_ws(p);
    if (p->i >= p->n) return fail(p, "unexpected end");
    char c = p->s[p->i];
    switch (c) {
    case '{': return parse_container(p, v, depth, 1);
    case '[': return parse_container(p, v, depth, 0);
    case '"': v->type = BLI_JSTR; return parse_string(p, &v->str, &v->len);
    case 't': return literal(p, "true", BLI_JTRUE, v);
    case 'f': return literal(p, "false", BLI_JFALSE, v);
    case 'n': return literal(p, "null", BLI_JNULL, v);
    default: return parse_number(p, v);
    }
}

bli_jv *bli_jparse(const char *text, size_t len, char *err, size_t errlen) {
    parser p = {text, len, 0, err, errlen, 0};
    if (len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3)) return fail(&p, "starts with a byte-order mark"), NULL;
    bli_jv *v = calloc(1, sizeof *v);
    if (!v) {
        bli_set_err(err, errlen, "JSON: out of memory");
        return NULL;
    }
    if (parse_value(&p, v, 0) == 0) {
        skip_ws(&p);
        if (p.i == p.n) return v;
        fail(&p, "trailing characters");
    }
    bli_jfree(v);
    return NULL;
}

const bli_jv *bli_jget(const bli_jv *obj, const char *key) {
    if (!obj || obj->type != BLI_JOBJ) return NULL;
    size_t k = strlen(key);
    for (size_t i = obj->n; i-- > 0;)
        if (obj->items[i].key_len == k && !memcmp(obj->items[i].key, key, k)) return &obj->items[i];
    return NULL;
}

int bli_jtruthy(const bli_jv *v) {
    switch (v->type) {
    case BLI_JTRUE: return 1;
    case BLI_JNUM: return v->num != 0;
    case BLI_JSTR: return v->len > 0;
    case BLI_JARR:
    case BLI_JOBJ: return v->n > 0;
    default: return 0;
    }
}
