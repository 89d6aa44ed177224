/* Internal: recording the detailed message of a failure for pkv_last_error(). */
#ifndef PKV_STATUS_H
#define PKV_STATUS_H

#include "pagedkv.h"

/* Record a failure message for this thread and return status, so that validation code reads
 * "return pkvi_fail(PKV_EINVAL, "...", ...);". */
pkv_status pkvi_fail(pkv_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Clear this thread's message at the start of a public call. */
void pkvi_clear_error(void);

#endif
