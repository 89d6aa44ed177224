/* Status codes, their messages, and the per-thread detail of the last failure. */
#include "config.h"
#include "status.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char last_error[512];

const char *pkv_strerror(pkv_status status)
{
    switch (status) {
    case PKV_OK: return "success";
    case PKV_EINVAL: return "invalid argument";
    case PKV_ERANGE: return "size out of range";
    case PKV_ENOMEM: return "out of memory";
    case PKV_ENODEV: return "no CUDA driver or device";
    case PKV_ECUDA: return "CUDA driver error";
    case PKV_ENOTSUP: return "not supported";
    case PKV_EINTERNAL: return "internal error";
    }
    return "unknown status";
}

const char *pkv_last_error(void) { return last_error; }

const char *pkv_version(void) { return PACKAGE_VERSION; }

pkv_status pkvi_fail(pkv_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return status;
}

void pkvi_clear_error(void) { last_error[0] = '\0'; }
