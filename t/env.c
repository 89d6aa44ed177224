/* The environment switches' one rule (lib/env.h): set to anything but "" and "0" is on. A
 * variable name of the test's own, so that nothing the library reads is touched. */
#define _POSIX_C_SOURCE 200809L
#include "config.h"
#include "tap.h"
#include "../lib/env.h"

#include <stdlib.h>

#define VAR "PKV_TEST_ENV_SWITCH"

static int with(const char *value)
{
    if (setenv(VAR, value, 1) != 0) bail("setenv failed");
    return pkvi_env_on(VAR);
}

int main(void)
{
    plan(7);
    unsetenv(VAR);
    ok(!pkvi_env_on(VAR), "unset: off");
    ok(!with(""), "empty: off");
    ok(!with("0"), "0: off");
    ok(with("1"), "1: on");
    ok(with("yes"), "yes: on");
    ok(with("00"), "00: on (only 0 itself is off)");
    ok(with(" 0"), "\" 0\": on");
    return done_testing();
}
