/* sha256.h — internal: SHA-256 (FIPS 180-4), fed in pieces of any size.
 *
 *     bli_sha256 s; bli_sha256_init(&s);
 *     bli_sha256_update(&s, p, n); ...      (any split of the bytes)
 *     char hex[65]; bli_sha256_hex(&s, hex); (lower-case hex; s is spent)
 */
#ifndef BL_SHA256_H
#define BL_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t h[8];
    uint64_t len;    /* bytes hashed so far */
    uint8_t buf[64]; /* a partial block    */
    size_t n;        /* bytes in buf       */
} bli_sha256;

void bli_sha256_init(bli_sha256 *s);
void bli_sha256_update(bli_sha256 *s, const void *data, size_t n);
void bli_sha256_hex(bli_sha256 *s, char out[65]);

#endif
