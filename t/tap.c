/* TAP output for the tests; see tap.h. */
#include "tap.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int planned = -1, current, failed;

void plan(int n)
{
    planned = n;
    printf("1..%d\n", n);
    fflush(stdout);
}

static int vresult(int cond, const char *fmt, va_list ap)
{
    current++;
    printf("%sok %d - ", cond ? "" : "not ", current);
    vprintf(fmt, ap);
    printf("\n");
    fflush(stdout);
    if (!cond) failed++;
    return cond;
}

int ok(int cond, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vresult(cond, fmt, ap);
    va_end(ap);
    return cond;
}

int is_hex(uint64_t got, uint64_t want, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vresult(got == want, fmt, ap);
    va_end(ap);
    if (got != want)
        diag("got 0x%llx, want 0x%llx", (unsigned long long)got, (unsigned long long)want);
    return got == want;
}

int is_int(long long got, long long want, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vresult(got == want, fmt, ap);
    va_end(ap);
    if (got != want) diag("got %lld, want %lld", got, want);
    return got == want;
}

int is_str(const char *got, const char *want, const char *fmt, ...)
{
    int same = (got == NULL && want == NULL) || (got && want && strcmp(got, want) == 0);
    va_list ap;
    va_start(ap, fmt);
    vresult(same, fmt, ap);
    va_end(ap);
    if (!same) diag("got \"%s\", want \"%s\"", got ? got : "(null)", want ? want : "(null)");
    return same;
}

void diag(const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    printf("# ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

void skip(int n, const char *fmt, ...)
{
    va_list ap;
    for (int i = 0; i < n; i++) {
        current++;
        printf("ok %d # SKIP ", current);
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        printf("\n");
    }
    fflush(stdout);
}

void skip_all(const char *fmt, ...)
{
    va_list ap;
    printf("1..0 # SKIP ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    exit(0);
}

void bail(const char *fmt, ...)
{
    va_list ap;
    printf("Bail out! ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    exit(1);
}

int done_testing(void)
{
    if (planned < 0) printf("1..%d\n", current);
    else if (planned != current) {
        diag("planned %d tests but ran %d", planned, current);
        failed++;
    }
    fflush(stdout);
    return failed ? 1 : 0;
}

uint64_t tap_sample_stride(void)
{
    const char *s = getenv("PKV_TEST_SAMPLE");
    unsigned long long k = s ? strtoull(s, NULL, 10) : 1;
    return k ? k : 1;
}
