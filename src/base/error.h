/* error.h — how the library reports a failure: a formatted reason written
 * into the caller's (err, errlen) buffer, which may be NULL. Shared by every
 * module so each message is made the same way. */
#ifndef BL_ERROR_H
#define BL_ERROR_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static inline void bli_set_err(char *err, size_t errlen, const char *fmt, ...) {
    if (!err || errlen == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

#endif
