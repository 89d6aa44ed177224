/* The kernels' fatbin is embedded in the library when nvcc was present at build time: it is
 * non-empty, 8-byte aligned and starts with the fatbin magic. */
#include "config.h"
#include "tap.h"
#include "fatbin.h"

#include <stdint.h>
#include <string.h>

int main(void)
{
#if PKV_HAVE_KERNELS
    uint32_t magic;
    ok(pkvi_fatbin_size > 64, "the embedded fatbin has %zu bytes", pkvi_fatbin_size);
    ok(((uintptr_t)pkvi_fatbin & 7u) == 0, "it is 8-byte aligned");
    memcpy(&magic, pkvi_fatbin, 4);
    is_hex(magic, 0xba55ed50u, "it starts with the fatbin magic");
    return done_testing();
#else
    ok(pkvi_fatbin_size == 0, "a build without nvcc embeds no fatbin");
    return done_testing();
#endif
}
