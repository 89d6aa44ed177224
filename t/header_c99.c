/* pagedkv.h compiles alone as strict C99 (-std=c99 -pedantic-errors) and is usable. */
#include "pagedkv.h"
#include "tap.h"

int main(void)
{
    pkv_cache_layout c = {1, 64, 16, 4, 0};
    ok(c.head_dim == 64 && pkv_strerror(PKV_OK) != NULL, "pagedkv.h is C99 on its own");
    return done_testing();
}
