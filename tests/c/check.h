/* check.h — the check harness of the C test programs in tests/c/: each
 * CHECK(x) counts a check and prints a failed one with its file and line;
 * check_done() prints "NAME: N checks, M failed (NOTE)" and gives the exit
 * status (1 if any failed). Programs that only drive the library for a JS
 * test (kernel_host, hf_tok_host, dtype_host, state_limits) print results
 * instead and need none of this. Header only. */
#ifndef BL_TESTS_CHECK_H
#define BL_TESTS_CHECK_H

#include <stdio.h>

static int check_count, check_failed;

static int check_at(int ok, const char *what, const char *file, int line) {
    check_count++;
    if (!ok) {
        check_failed++;
        printf("FAIL %s:%d: %s\n", file, line, what);
    }
    return ok;
}
#define CHECK(x) check_at(!!(x), #x, __FILE__, __LINE__)

/* The summary line; the exit status for main(). */
static int check_done(const char *name, const char *note) {
    printf("%s: %d checks, %d failed%s%s%s\n", name, check_count, check_failed, note ? " (" : "", note ? note : "",
           note ? ")" : "");
    return check_failed ? 1 : 0;
}

#endif
