/* json_read.c — JSON reader (see json_read.h).
 *
 * One grammar, walked twice over the text (json_read.h, Memory):
 *   COUNT  checks the text (every error is found here, with its byte),
 *          counts values and string bytes, and writes each container's
 *          member count, in the order containers open, into a temporary
 *          array; the tree's size is then checked against the cap before
 *          it is allocated (the array itself is held within the cap as it
 *          grows: each container is a value too);
 *   BUILD  fills the one block [values][string pool]: a container's members
 *          are the next n values of the block, its strings the next bytes.
 * Each walk is linear in the text. */
#include "json_read.h"
#include "base/error.h"
#include "base/sizes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

enum { COUNT, BUILD };

typedef struct {
    const char *s;
    size_t n, i;
    char *err;
    size_t errlen;
    int failed;
    int mode;
    uint64_t values, bytes, containers; /* COUNT: the tree's size                       */
    uint32_t *members;                  /* [containers]: COUNT writes, BUILD reads      */
    uint64_t members_cap;
    uint64_t next_container;            /* index of the next container to open          */
    bli_jv *nodes;                      /* BUILD: [values], then the string pool        */
    uint64_t next_node;
    char *pool;
    uint64_t next_byte;
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

void bli_jfree(bli_jv *v) { free(v); /* the block of bli_jparse: values and strings */ }

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

/* One \u escape (after the 'u'), a surrogate pair taken whole -> its code point. */
static int unicode_escape(parser *p, unsigned *cp) {
    if (hex4(p, cp)) return -1;
    if (*cp >= 0xD800 && *cp <= 0xDBFF) {
        unsigned lo;
        if (p->n - p->i < 6 || p->s[p->i] != '\\' || p->s[p->i + 1] != 'u') return fail(p, "lone surrogate in \\u escape");
        p->i += 2;
        if (hex4(p, &lo)) return -1;
        if (lo < 0xDC00 || lo > 0xDFFF) return fail(p, "lone surrogate in \\u escape");
        *cp = 0x10000 + ((*cp - 0xD800) << 10) + (lo - 0xDC00);
    } else if (*cp >= 0xDC00 && *cp <= 0xDFFF) {
        return fail(p, "lone surrogate in \\u escape");
    }
    return 0;
}

/* cp as UTF-8 into b (when not NULL); its length. */
static size_t put_utf8(char *b, unsigned cp) {
    if (cp < 0x80) {
        if (b) b[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        if (b) b[0] = (char)(0xC0 | cp >> 6), b[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        if (b) b[0] = (char)(0xE0 | cp >> 12), b[1] = (char)(0x80 | ((cp >> 6) & 0x3F)), b[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    if (b)
        b[0] = (char)(0xF0 | cp >> 18), b[1] = (char)(0x80 | ((cp >> 12) & 0x3F)), b[2] = (char)(0x80 | ((cp >> 6) & 0x3F)),
        b[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* A string starting at its opening quote, decoded into b (NULL: only its
 * length); *out_len its decoded bytes (b gets a NUL after them). */
static int parse_string(parser *p, char *b, size_t *out_len) {
    const size_t start = ++p->i; /* past '"' */
    size_t len = 0;
    for (;;) {
        if (p->i >= p->n) return p->i = start, fail(p, "unterminated string");
        unsigned char c = (unsigned char)p->s[p->i];
        if (c == '"') break;
        if (c < 0x20) return fail(p, "control character in string");
        if (c != '\\') { /* a run of plain bytes at once */
            size_t j = p->i + 1;
            while (j < p->n && p->s[j] != '"' && p->s[j] != '\\' && (unsigned char)p->s[j] >= 0x20) j++;
            if (b) memcpy(b + len, p->s + p->i, j - p->i);
            len += j - p->i;
            p->i = j;
            continue;
        }
        if (++p->i >= p->n) return p->i = start, fail(p, "unterminated string");
        char e = p->s[p->i++], one = 0;
        switch (e) {
        case '"': one = '"'; break;
        case '\\': one = '\\'; break;
        case '/': one = '/'; break;
        case 'b': one = '\b'; break;
        case 'f': one = '\f'; break;
        case 'n': one = '\n'; break;
        case 'r': one = '\r'; break;
        case 't': one = '\t'; break;
        case 'u': {
            unsigned cp;
            if (unicode_escape(p, &cp)) return -1;
            len += put_utf8(b ? b + len : NULL, cp);
            continue;
        }
        default: return fail(p, "bad escape in string");
        }
        if (b) b[len] = one;
        len++;
    }
    p->i++; /* closing quote */
    if (b) b[len] = 0;
    *out_len = len;
    return 0;
}

/* A string value or key: counted (COUNT) or put in the pool (BUILD: *out,
 * *out_len). */
static int string_at(parser *p, char **out, size_t *out_len) {
    size_t len;
    char *b = p->mode == BUILD ? p->pool + p->next_byte : NULL;
    if (parse_string(p, b, &len)) return -1;
    if (p->mode == COUNT) p->bytes += (uint64_t)len + 1;
    if (p->mode == BUILD) {
        p->next_byte += (uint64_t)len + 1;
        *out = b;
        *out_len = len;
    }
    return 0;
}

static int digits(parser *p) {
    if (p->i >= p->n || p->s[p->i] < '0' || p->s[p->i] > '9') return fail(p, "bad number");
    while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9') p->i++;
    return 0;
}

/* A number: its grammar always, its value in BUILD (v). */
static int parse_number(parser *p, bli_jv *v) {
    size_t st = p->i;
    int is_int = 1;
    if (p->s[p->i] == '-') p->i++;
    if (p->i >= p->n || p->s[p->i] < '0' || p->s[p->i] > '9') return fail(p, "bad number");
    if (p->s[p->i] == '0') p->i++;
    else if (digits(p)) return -1;
    if (p->i < p->n && p->s[p->i] == '.') {
        is_int = 0;
        p->i++;
        if (digits(p)) return -1;
    }
    if (p->i < p->n && (p->s[p->i] == 'e' || p->s[p->i] == 'E')) {
        is_int = 0;
        p->i++;
        if (p->i < p->n && (p->s[p->i] == '+' || p->s[p->i] == '-')) p->i++;
        if (digits(p)) return -1;
    }
    if (!v) return 0;
    size_t len = p->i - st;
    v->type = BLI_JNUM;
    if (is_int && len <= 18) { /* exact in int64; (double) rounds to nearest as strtod does */
        int64_t x = 0;
        for (size_t k = st + (p->s[st] == '-'); k < p->i; k++) x = x * 10 + (p->s[k] - '0');
        v->ival = p->s[st] == '-' ? -x : x;
        v->num = (double)v->ival;
        v->is_int = 1;
        return 0;
    }
    char tmp[64];
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
    v->is_int = (uint8_t)is_int;
    return 0;
}

static int parse_value(parser *p, bli_jv *v, int depth);

/* The tree's bytes against the cap (json_read.h): 0, or -1 with the message
 * (partial: counting stopped at the cap, the values are those so far). */
static int within_cap(parser *p, uint64_t need, int partial) {
    const uint64_t cap = (uint64_t)BLI_JSON_MEM_FACTOR * p->n + BLI_JSON_MEM_SLACK;
    if (need <= cap) return bli_size_ok(need, "JSON", p->err, p->errlen) ? 0 : (p->failed = 1, -1);
    char want[32];
    bli_format_bytes(want, sizeof want, need);
    bli_set_err(p->err, p->errlen, "JSON: %llu values need %s in memory%s, more than %u times the text's %zu bytes "
                "(+%u): a file denser in values than any tokenizer or config",
                (unsigned long long)p->values, want, partial ? " (or more: counting stopped there)" : "",
                BLI_JSON_MEM_FACTOR, p->n, BLI_JSON_MEM_SLACK);
    p->failed = 1;
    return -1;
}

/* COUNT: a slot in the member counts for one more container. The counts
 * array stays within the cap as it grows: every container is a value of
 * the tree too, so containers x (value + count) bytes may not pass it. */
static int room_for_container(parser *p) {
    p->containers++;
    const uint64_t need = p->containers * (sizeof(bli_jv) + sizeof(uint32_t));
    if (need > (uint64_t)BLI_JSON_MEM_FACTOR * p->n + BLI_JSON_MEM_SLACK) {
        if (p->values < p->containers) p->values = p->containers;
        return within_cap(p, need, 1);
    }
    if (p->containers > p->members_cap) {
        uint64_t cap = p->members_cap ? 2 * p->members_cap : 64;
        uint32_t *m = realloc(p->members, (size_t)cap * sizeof *m);
        if (!m) return fail(p, "out of memory");
        p->members = m;
        p->members_cap = cap;
    }
    return 0;
}

/* An array or object from its opening bracket. In BUILD its members are the
 * next values of the block, as many as COUNT counted. */
static int parse_container(parser *p, bli_jv *v, int depth, int obj) {
    const char close = obj ? '}' : ']';
    const uint64_t c = p->next_container++;
    bli_jv *items = NULL;
    size_t have = 0;
    if (p->mode == COUNT && room_for_container(p)) return -1;
    if (p->mode == BUILD) {
        have = p->members[c];
        items = p->nodes + p->next_node;
        p->next_node += have;
        v->type = obj ? BLI_JOBJ : BLI_JARR;
        v->items = have ? items : NULL;
        v->n = have;
    }
    uint64_t count = 0;
    p->i++;
    skip_ws(p);
    if (p->i < p->n && p->s[p->i] == close) {
        p->i++;
    } else {
        for (;;) {
            if (p->mode == BUILD && count >= have) return fail(p, "more members than counted");
            bli_jv *item = p->mode == BUILD ? &items[count] : NULL;
            skip_ws(p);
            if (obj) {
                if (p->i >= p->n || p->s[p->i] != '"') return fail(p, "expected a member name");
                size_t klen = 0;
                if (string_at(p, item ? &item->key : NULL, &klen)) return -1;
                if (item) item->key_len = (uint32_t)klen; /* < BLI_JSON_MAX_TEXT */
                skip_ws(p);
                if (p->i >= p->n || p->s[p->i] != ':') return fail(p, "expected ':'");
                p->i++;
            }
            if (parse_value(p, item, depth + 1)) return -1;
            count++;
            skip_ws(p);
            if (p->i < p->n && p->s[p->i] == ',') {
                p->i++;
                continue;
            }
            if (p->i < p->n && p->s[p->i] == close) {
                p->i++;
                break;
            }
            return fail(p, obj ? "expected ',' or '}'" : "expected ',' or ']'");
        }
    }
    if (p->mode == COUNT) p->values += count, p->members[c] = (uint32_t)count; /* < BLI_JSON_MAX_TEXT */
    if (p->mode == BUILD && count != have) return fail(p, "fewer members than counted");
    return 0;
}

static int literal(parser *p, const char *word, int type, bli_jv *v) {
    size_t k = strlen(word);
    if (p->n - p->i < k || memcmp(p->s + p->i, word, k)) return fail(p, "unexpected character");
    p->i += k;
    if (v) v->type = (uint8_t)type;
    return 0;
}

/* One value into v (BUILD; NULL in the other walks). */
static int parse_value(parser *p, bli_jv *v, int depth) {
    if (depth > MAX_DEPTH) return fail(p, "nested too deeply");
    skip_ws(p);
    if (p->i >= p->n) return fail(p, "unexpected end");
    switch (p->s[p->i]) {
    case '{': return parse_container(p, v, depth, 1);
    case '[': return parse_container(p, v, depth, 0);
    case '"': {
        char *s = NULL;
        size_t len = 0;
        if (string_at(p, &s, &len)) return -1;
        if (v) v->type = BLI_JSTR, v->str = s, v->len = len;
        return 0;
    }
    case 't': return literal(p, "true", BLI_JTRUE, v);
    case 'f': return literal(p, "false", BLI_JFALSE, v);
    case 'n': return literal(p, "null", BLI_JNULL, v);
    default: return parse_number(p, v);
    }
}

/* One walk of the whole text in `mode`. */
static int walk(parser *p, int mode, bli_jv *root) {
    p->mode = mode;
    p->i = 0;
    p->next_container = 0;
    if (parse_value(p, root, 0)) return -1;
    skip_ws(p);
    return p->i == p->n ? 0 : fail(p, "trailing characters");
}

bli_jv *bli_jparse(const char *text, size_t len, char *err, size_t errlen) {
    parser p = {text, len, 0, err, errlen, 0, COUNT, 1, 0, 0, NULL, 0, 0, NULL, 1, NULL, 0};
    if (len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3)) return fail(&p, "starts with a byte-order mark"), NULL;
    if (len > BLI_JSON_MAX_TEXT) {
        bli_set_err(err, errlen, "JSON: a text of %zu bytes is more than the reader takes (%u)", len, BLI_JSON_MAX_TEXT);
        return NULL;
    }
    bli_jv *root = NULL;
    /* the block, and the member counts beside it while it is built */
    const int counted = walk(&p, COUNT, NULL) == 0;
    const uint64_t tree = BLI_BYTES(sizeof(bli_jv), p.values) + p.bytes;
    if (counted && !within_cap(&p, tree + BLI_BYTES(sizeof(uint32_t), p.containers), 0)) {
        if (!(root = malloc((size_t)tree))) {
            bli_set_err(err, errlen, "JSON: out of memory for %llu values", (unsigned long long)p.values);
        } else {
            memset(root, 0, (size_t)(p.values * sizeof(bli_jv))); /* null, true, false and keyless values: zeros */
            p.nodes = root;
            p.pool = (char *)(root + p.values);
            if (walk(&p, BUILD, root) || p.next_node != p.values || p.next_byte != p.bytes) {
                if (!p.failed) bli_set_err(err, errlen, "JSON: internal error (the walks disagree)");
                free(root);
                root = NULL;
            }
        }
    }
    free(p.members);
    return root;
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
