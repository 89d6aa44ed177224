/* The environment switches' one rule (env.h). */
#include "config.h"
#include "env.h"

#include <stdlib.h>
#include <string.h>

int pkvi_env_on(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}
