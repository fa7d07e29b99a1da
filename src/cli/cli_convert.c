/* cli_convert.c — `bertlens convert`: the native front end of convert.c.
 *
 *   bertlens convert CHECKPOINT_DIR OUT.blb[.gz] [--dtype f32|f16|q8|q4|q8h|q9|q10|q11|q12]
 *                    [--embed-dtype DTYPE] [--name NAME] [--license SPDX] [--cased]
 *
 * Reads the folder's small files whole, the weights one tensor at a time
 * (pread), and writes the bundle with random access into OUT.tmp, sized up
 * front so that padding is zero; a .gz output is then deflated (zlib, level 9,
 * as tools/convert.py) from that file. Peak memory: one tensor and its
 * encoded copy, not the checkpoint. Linked into build/bertlens only (zlib).
 */
#include "convert/convert.h"
#include "base/error.h"
#include "text/json.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

int bli_cmd_convert(int argc, char **argv);

/* Log lines carry names from the checkpoint (tensor names, file names):
 * escaped for the terminal like everything else printed from it. */
static void log_line(void *ctx, const char *line) {
    (void)ctx;
    bli_term_line(stderr, "%s", line);
}

static int sink_fd(void *ctx, uint64_t off, const void *p, size_t n) {
    int fd = *(int *)ctx;
    const char *b = p;
    while (n) {
        ssize_t k = pwrite(fd, b, n, (off_t)off);
        if (k <= 0) return -1;
        b += k, off += (uint64_t)k, n -= (size_t)k;
    }
    return 0;
}

static int read_at(int fd, void *dst, size_t n, uint64_t off) {
    char *b = dst;
    while (n) {
        ssize_t k = pread(fd, b, n, (off_t)off);
        if (k <= 0) return -1;
        b += k, off += (uint64_t)k, n -= (size_t)k;
    }
    return 0;
}

#define ROW_CHUNK (4u << 20) /* source bytes per chunk of rows */

/* Tensor t ([n / row] rows of `row` source bytes at `off` of weight file wfd)
 * by chunks of rows (bli_conv_tensor_rows), writing through sink_fd; map: the
 * output file, mapped, for the tensor's CRC. 0 or -1 (err set). */
static int convert_rows(bli_conv *c, int t, int wfd, uint64_t off, uint64_t n, uint64_t row, const uint8_t *map,
                        uint64_t map_size, int *fd, char *err, size_t errlen) {
    const uint64_t rows = n / row, per = row >= ROW_CHUNK ? 1 : ROW_CHUNK / row;
    if (rows * row != n) {
        bli_set_err(err, errlen, "tensor %d: %llu source bytes are not whole rows of %llu", t, (unsigned long long)n,
                    (unsigned long long)row);
        return -1;
    }
    uint8_t *chunk = malloc((size_t)(per * row));
    if (!chunk) {
        bli_set_err(err, errlen, "out of memory (%llu bytes)", (unsigned long long)(per * row));
        return -1;
    }
    bli_conv_rows acc = {0};
    int rc = 0;
    for (uint64_t r = 0; r < rows && !rc; r += per) {
        const uint64_t k = rows - r < per ? rows - r : per;
        if (wfd < 0 || read_at(wfd, chunk, (size_t)(k * row), off + r * row)) {
            bli_set_err(err, errlen, "cannot read tensor %d's source", t);
            rc = -1;
        } else {
            rc = bli_conv_tensor_rows(c, &acc, t, (int64_t)r, (int64_t)k, chunk, sink_fd, fd, map, map_size, err, errlen);
        }
    }
    free(chunk);
    return rc;
}

static int read_whole(const char *path, char **out, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    size_t cap = 1 << 16, len = 0;
    char *b = malloc(cap);
    while (b) {
        len += fread(b + len, 1, cap - len, f);
        if (len < cap) break;
        char *nb = cap < ((size_t)1 << 30) ? realloc(b, cap * 2) : NULL;
        if (!nb) free(b);
        b = nb;
        cap *= 2;
    }
    int bad = ferror(f);
    fclose(f);
    if (!b || bad) {
        free(b);
        return -1;
    }
    *out = b;
    *n = len;
    return 0;
}

/* Offer every file of DIR (and DIR/0_Transformer) the converter wants. */
static int add_folder(bli_conv *c, const char *root, const char *sub, char *err, size_t errlen) {
    char dpath[PATH_MAX];
    snprintf(dpath, sizeof dpath, "%s%s%s", root, *sub ? "/" : "", sub);
    DIR *d = opendir(dpath);
    if (!d) {
        if (*sub) return 0;
        bli_set_err(err, errlen, "cannot open folder %s: %s", root, strerror(errno));
        return -1;
    }
    struct dirent *e;
    int rc = 0;
    while (!rc && (e = readdir(d))) {
        char rel[512], path[PATH_MAX + 512];
        snprintf(rel, sizeof rel, "%s%s%s", sub, *sub ? "/" : "", e->d_name);
        int want = bli_conv_wants(rel);
        if (!want) continue;
        snprintf(path, sizeof path, "%s/%s", root, rel);
        struct stat st;
        if (stat(path, &st) || !S_ISREG(st.st_mode)) continue;
        if (want == BLI_CONV_WANT_SIZE) {
            rc = bli_conv_add_file(c, rel, NULL, (uint64_t)st.st_size, err, errlen);
            continue;
        }
        char *bytes;
        size_t n;
        if (read_whole(path, &bytes, &n)) {
            bli_set_err(err, errlen, "cannot read %s: %s", path, strerror(errno));
            rc = -1;
            break;
        }
        rc = bli_conv_add_file(c, rel, bytes, n, err, errlen);
        free(bytes);
    }
    closedir(d);
    return rc;
}

/* The folder's name, as os.path.basename(os.path.abspath(dir)). */
static void folder_name(const char *dir, char *out, size_t n) {
    char abs[PATH_MAX * 2] = "";
    if (dir[0] != '/' && getcwd(abs, PATH_MAX)) strcat(abs, "/");
    strncat(abs, dir, sizeof abs - strlen(abs) - 1);
    /* Lexical normalisation: drop "." and empty parts, ".." removes one. */
    char *parts[512];
    int np = 0;
    for (char *t = strtok(abs, "/"); t && np < 512; t = strtok(NULL, "/")) {
        if (!strcmp(t, ".")) continue;
        if (!strcmp(t, "..")) {
            if (np) np--;
            continue;
        }
        parts[np++] = t;
    }
    snprintf(out, n, "%s", np ? parts[np - 1] : "");
}

/* Deflate the finished bundle file into OUT (level 9, as convert.py). */
static int gzip_file(const char *raw, const char *out, char *err, size_t errlen) {
    FILE *in = fopen(raw, "rb");
    gzFile g = gzopen(out, "wb9");
    int rc = -1;
    char *buf = malloc(1 << 20);
    if (!in || !g || !buf) {
        bli_set_err(err, errlen, "cannot write %s", out);
        goto done;
    }
    size_t k;
    while ((k = fread(buf, 1, 1 << 20, in)) > 0)
        if (gzwrite(g, buf, (unsigned)k) != (int)k) {
            bli_set_err(err, errlen, "cannot write %s", out);
            goto done;
        }
    rc = ferror(in) ? -1 : 0;
done:
    free(buf);
    if (in) fclose(in);
    if (g && gzclose(g) != Z_OK && rc == 0) {
        bli_set_err(err, errlen, "cannot write %s", out);
        rc = -1;
    }
    return rc;
}

static int usage(void) {
    fprintf(stderr, "usage: bertlens convert CHECKPOINT_DIR OUT.blb[.gz] [--dtype f32|f16|q8|q4|q8h|q9|q10|q11|q12]\n"
                    "                        [--embed-dtype DTYPE] [--name NAME] [--license SPDX] [--cased]\n");
    return 1;
}

static int convert(const char *src, const char *out, bli_conv_opts *o, char *err, size_t errlen) {
    char name[256];
    if (!o->name || !*o->name) {
        folder_name(src, name, sizeof name);
        o->name = name;
    }
    int gz = strlen(out) > 3 && !strcmp(out + strlen(out) - 3, ".gz");
    char tmp[PATH_MAX], raw[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s.tmp", out);
    snprintf(raw, sizeof raw, "%s.raw.tmp", out);
    const char *bundle_path = gz ? raw : tmp;
    int rc = -1, fd = -1, wfd = -1;
    char *buf = NULL;
    bli_conv *c = bli_conv_new(o, log_line, NULL, err, errlen);
    if (!c || add_folder(c, src, "", err, errlen) || add_folder(c, src, "0_Transformer", err, errlen) ||
        bli_conv_begin(c, err, errlen))
        goto done;
    /* Safetensors headers. */
    for (int w = 0; w < bli_conv_n_weights(c); w++) {
        char path[PATH_MAX + 512];
        snprintf(path, sizeof path, "%s/%s", src, bli_conv_weight_name(c, w));
        struct stat st;
        uint8_t first[8];
        uint64_t head;
        if ((wfd = open(path, O_RDONLY)) < 0 || fstat(wfd, &st)) {
            bli_set_err(err, errlen, "cannot open %s: %s", path, strerror(errno));
            goto done;
        }
        if (read_at(wfd, first, 8, 0)) {
            bli_set_err(err, errlen, "%s: shorter than a safetensors header", path);
            goto done;
        }
        if (bli_conv_header_size(first, (uint64_t)st.st_size, &head, err, errlen)) goto done;
        free(buf);
        if (!(buf = malloc((size_t)head)) || read_at(wfd, buf, (size_t)head, 0)) {
            bli_set_err(err, errlen, "cannot read %s", path);
            goto done;
        }
        if (bli_conv_set_header(c, w, (uint64_t)st.st_size, buf, (size_t)head, err, errlen)) goto done;
        close(wfd);
        wfd = -1;
    }
    if (bli_conv_plan(c, err, errlen)) goto done;
    fd = open(bundle_path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || ftruncate(fd, (off_t)bli_conv_size(c))) {
        bli_set_err(err, errlen, "cannot write %s: %s", bundle_path, strerror(errno));
        goto done;
    }
    /* source.sha256: every weight file, in order. */
    free(buf);
    if (!(buf = malloc(1 << 22))) goto oom;
    int *wfds = calloc((size_t)bli_conv_n_weights(c), sizeof *wfds);
    if (!wfds) goto oom;
    for (int w = 0; w < bli_conv_n_weights(c); w++) {
        char path[PATH_MAX + 512];
        snprintf(path, sizeof path, "%s/%s", src, bli_conv_weight_name(c, w));
        wfds[w] = open(path, O_RDONLY);
        ssize_t k;
        while (wfds[w] >= 0 && (k = read(wfds[w], buf, 1 << 22)) > 0) bli_conv_hash(c, buf, (size_t)k);
    }
    free(buf);
    buf = NULL;
    /* Tensors, one at a time; a matrix by chunks of rows (about ROW_CHUNK
     * source bytes), so no tensor is held whole: the tensor's CRC is then
     * read back from the output, mapped (pwrite and a shared mapping of the
     * same file see the same bytes). */
    const uint8_t *map = MAP_FAILED;
    const uint64_t out_size = bli_conv_size(c);
    if (out_size > 0 && out_size <= SIZE_MAX) map = mmap(NULL, (size_t)out_size, PROT_READ, MAP_SHARED, fd, 0);
    for (int t = 0; t < bli_conv_n_tensors(c); t++) {
        int w;
        uint64_t off, n, row = map != MAP_FAILED ? bli_conv_row_bytes(c, t) : 0;
        bli_conv_source(c, t, &w, &off, &n);
        if (row && n) {
            if (convert_rows(c, t, wfds[w], off, n, row, map, out_size, &fd, err, errlen)) break;
            /* the CRC's read brought the tensor's pages into this process: let them go (the
             * file holds them; nothing is written through the mapping), map it afresh */
            munmap((void *)map, (size_t)out_size);
            map = mmap(NULL, (size_t)out_size, PROT_READ, MAP_SHARED, fd, 0);
            if (t == bli_conv_n_tensors(c) - 1) rc = 0;
            continue;
        }
        if (!(buf = malloc((size_t)n ? (size_t)n : 1))) {
            bli_set_err(err, errlen, "out of memory (%llu bytes)", (unsigned long long)n);
            break;
        }
        if (wfds[w] < 0 || read_at(wfds[w], buf, (size_t)n, off)) {
            bli_set_err(err, errlen, "cannot read %s/%s", src, bli_conv_weight_name(c, w));
            break;
        }
        if (bli_conv_tensor(c, t, buf, sink_fd, &fd, err, errlen)) break;
        free(buf);
        buf = NULL;
        if (t == bli_conv_n_tensors(c) - 1) rc = 0;
    }
    if (map != MAP_FAILED) munmap((void *)map, (size_t)out_size);
    for (int w = 0; w < bli_conv_n_weights(c); w++)
        if (wfds[w] >= 0) close(wfds[w]);
    free(wfds);
    if (rc || bli_conv_finish(c, sink_fd, &fd, err, errlen)) {
        rc = -1;
        goto done;
    }
    rc = -1;
    if (fsync(fd) && errno != EINVAL) {
        bli_set_err(err, errlen, "cannot write %s: %s", bundle_path, strerror(errno));
        goto done;
    }
    close(fd);
    fd = -1;
    if (gz && gzip_file(raw, tmp, err, errlen)) goto done;
    if (rename(tmp, out)) {
        bli_set_err(err, errlen, "cannot rename %s to %s: %s", tmp, out, strerror(errno));
        goto done;
    }
    struct stat st;
    stat(out, &st);
    bli_term_line(stderr, "[write]  %s: %llu bytes bundle, %llu bytes on disk (%d tensors, dtype %s, embeddings %s)",
            out, (unsigned long long)bli_conv_size(c), (unsigned long long)st.st_size, bli_conv_n_tensors(c),
            o->dtype ? o->dtype : "q8", o->embed_dtype ? o->embed_dtype : o->dtype ? o->dtype : "q8");
    rc = 0;
    goto done;
oom:
    bli_set_err(err, errlen, "out of memory");
done:
    free(buf);
    if (wfd >= 0) close(wfd);
    if (fd >= 0) close(fd);
    if (gz) unlink(raw);
    if (rc) unlink(tmp);
    bli_conv_free(c);
    return rc;
}

int bli_cmd_convert(int argc, char **argv) {
    bli_conv_opts o = {0};
    const char *pos[2];
    int np = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char **val = !strcmp(a, "--dtype")         ? &o.dtype
                           : !strcmp(a, "--embed-dtype") ? &o.embed_dtype
                           : !strcmp(a, "--name")        ? &o.name
                           : !strcmp(a, "--license")     ? &o.license
                                                         : NULL;
        if (val) {
            if (i + 1 >= argc) {
                bli_term_line(stderr, "bertlens convert: %s needs a value", a);
                return usage();
            }
            *val = argv[++i];
        } else if (!strcmp(a, "--cased")) {
            o.cased = 1;
        } else if (!strcmp(a, "--calib") || !strcmp(a, "--heldout")) {
            fprintf(stderr,
                    "bertlens convert: %s needs a float64 forward pass of the source model; it is only in the "
                    "Python reference: python3 tools/convert.py ... %s FILE\n",
                    a, a);
            return 1;
        } else if (a[0] == '-' && a[1]) {
            bli_term_line(stderr, "bertlens convert: unknown option %s", a);
            return usage();
        } else if (np < 2) {
            pos[np++] = a;
        } else {
            return usage();
        }
    }
    if (np != 2) return usage();
    char err[1024] = "";
    if (convert(pos[0], pos[1], &o, err, sizeof err)) {
        bli_term_line(stderr, "convert: error: %s", err);
        return 1;
    }
    return 0;
}
