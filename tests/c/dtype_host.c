/* dtype_host.c — src/base/dtype.h's binary16 codec as a program, for
 * tests/test_dtype.py (which holds it against numpy):
 *
 *   dtype_host h2f IN OUT   IN: uint16 halves  -> OUT: float32 (bli_f16_to_f32)
 *   dtype_host f2h IN OUT   IN: float32        -> OUT: uint16  (bli_f32_to_f16)
 *   dtype_host d2h IN OUT   IN: float64        -> OUT: uint16  (bli_f64_to_f16)
 *
 * Raw little-endian arrays; exit status 1 with a message on any error. */
#include "../../src/base/dtype.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc != 4 || (strcmp(argv[1], "h2f") && strcmp(argv[1], "f2h") && strcmp(argv[1], "d2h"))) {
        fprintf(stderr, "usage: dtype_host h2f|f2h|d2h IN OUT\n");
        return 1;
    }
    const char mode = argv[1][0];
    const size_t in_size = mode == 'h' ? 2 : mode == 'f' ? 4 : 8;
    FILE *in = fopen(argv[2], "rb"), *out = fopen(argv[3], "wb");
    if (!in || !out) {
        fprintf(stderr, "dtype_host: cannot open %s or %s\n", argv[2], argv[3]);
        return 1;
    }
    unsigned char buf[8];
    while (fread(buf, 1, in_size, in) == in_size) {
        if (mode == 'h') {
            uint16_t h;
            memcpy(&h, buf, 2);
            float f = bli_f16_to_f32(h);
            fwrite(&f, 4, 1, out);
        } else {
            uint16_t h;
            if (mode == 'f') {
                float f;
                memcpy(&f, buf, 4);
                h = bli_f32_to_f16(f);
            } else {
                double d;
                memcpy(&d, buf, 8);
                h = bli_f64_to_f16(d);
            }
            fwrite(&h, 2, 1, out);
        }
    }
    int bad = ferror(in) || ferror(out);
    fclose(in);
    if (fclose(out) || bad) {
        fprintf(stderr, "dtype_host: read or write error\n");
        return 1;
    }
    return 0;
}
