/* Internal: the pointer rule every op applies before touching memory. */
#ifndef PKV_POINTERS_H
#define PKV_POINTERS_H

#include "status.h"

/* A pointer may be NULL only when the buffer it stands for is empty. */
#define PKVI_NEED(op, ptr, elems)                                                              \
    do {                                                                                       \
        if ((elems) != 0 && (ptr) == NULL)                                                     \
            return pkvi_fail(PKV_EINVAL, "%s: %s is NULL", (op), #ptr);                        \
    } while (0)

#endif
