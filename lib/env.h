/* Internal: the test and tuning switches read from the environment (PKV_CUDA_JIT_PTX,
 * PKV_TEST_REQUIRE_GPU, PKV_FUZZ_MANY_WAVES, PKV_FUZZ_NO_GPU), all by one rule, so that "=0"
 * means off for every one of them. */
#ifndef PKV_ENV_H
#define PKV_ENV_H

/* Whether the variable is set to something other than "" and "0". */
int pkvi_env_on(const char *name);

#endif
