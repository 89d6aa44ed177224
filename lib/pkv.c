/* pkv: the command-line face of pagedkv. "pkv info" prints the build configuration. */
#include "config.h"
#include "pagedkv.h"
#include "fatbin.h"
#include "check.h"
#include "../bench/bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: pkv COMMAND [OPTION...]\n"
    "\n"
    "pagedkv " PACKAGE_VERSION ": the bit-exact specification of paged KV-cache writes.\n"
    "\n"
    "commands:\n"
    "  check      sweep shapes and hostile inputs through every backend, comparing whole\n"
    "             poisoned cache pools; exit status 1 on any mismatch (--quick: fewer\n"
    "             cases; --gpu: exit status 3 if the CUDA backend cannot be opened)\n"
    "  bench      time every op on GPU 0 against the copy bandwidth, an empty kernel, a\n"
    "             floor kernel (the loads every launch waits for) and a baseline\n"
    "             (--quick: fewer rows; --graph: time CUDA-graph replays;\n"
    "             --rope-table: fused ops read cos/sin from a table; --vision:\n"
    "             MRoPE's tokens are an image's patches, not text; --op NAME,\n"
    "             --heads N: those rows only; --tokens N: N tokens only, any N;\n"
    "             --runs N: time each row in N rounds, medians over all;\n"
    "             --read-back: each launch followed by a copy of the rows it wrote,\n"
    "             timed with it; --cold-l2: single launches, L2 cleared before each;\n"
    "             --csv FILE: also write CSV)\n"
    "  info       print the build configuration and the GPUs found\n"
    "  --help     print this help (also after a command: pkv bench --help)\n"
    "  --version  print the version\n";

/* s as a number in 1 .. max, digits only (strtoul would take a sign, spaces and a tail) */
static int whole(const char *s, unsigned long max, unsigned *out)
{
    unsigned long n = 0;
    if (!*s) return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return -1;
        n = n * 10 + (unsigned long)(*s - '0');
        if (n > max) return -1;
    }
    if (n < 1) return -1;
    *out = (unsigned)n;
    return 0;
}

static int info(void)
{
    printf("pagedkv %s\n", pkv_version());
#if PKV_HAVE_KERNELS
    printf("CUDA kernels:  embedded (fatbin of %zu bytes)\n", pkvi_fatbin_size);
#else
    printf("CUDA kernels:  not built (no nvcc at configure time)\n");
#endif
#if PKV_HAVE_MPFR
    printf("MPFR tests:    yes\n");
#else
    printf("MPFR tests:    no\n");
#endif
    {
        int n = 0;
        if (pkv_cuda_device_count(&n) != PKV_OK) {
            printf("GPUs:          none (%s)\n", pkv_last_error());
        } else {
            printf("GPUs:          %d\n", n);
            for (int i = 0; i < n; i++) {
                pkv_cuda *h = NULL;
                if (pkv_cuda_open(i, &h) == PKV_OK) {
                    printf("  %d: %s, programmatic dependent launch %s\n", i, pkv_cuda_describe(h),
                           pkv_cuda_set_pdl(h, 1) == PKV_OK ? "available" : "not available");
                    pkv_cuda_close(h);
                } else {
                    printf("  %d: cannot open: %s\n", i, pkv_last_error());
                }
            }
        }
    }
    printf("ops:          ");
    for (int op = 0; op < PKV_OP_COUNT; op++)
        printf(" %s", pkv_op_name((pkv_op)op));
    printf("\n");
    return 0;
}

/* "pkv COMMAND ... --help": the one help text covers every command's options, so a command
 * asked for help prints it and does nothing else (bench would otherwise open the GPU first). */
static int asks_help(int argc, char **argv)
{
    static const char *const commands[] = {"check", "bench", "info"};
    int known = 0;
    for (size_t c = 0; c < sizeof commands / sizeof *commands; c++)
        known |= strcmp(argv[1], commands[c]) == 0;
    for (int i = 2; known && i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return 1;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        asks_help(argc, argv)) {
        fputs(usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if ((strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "info") == 0) && argc > 2) {
        fprintf(stderr, "pkv %s: unexpected argument '%s'\n", argv[1], argv[2]);
        return 2;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("pkv (pagedkv) %s\n", pkv_version());
        return 0;
    }
    if (strcmp(argv[1], "info") == 0) return info();
    if (strcmp(argv[1], "bench") == 0) {
        pkvi_bench_opts o = {0, 0, NULL, NULL, 0, 0, 0, 0, 1, 0, 0};
        for (int i = 2; i < argc; i++) {
            if (strcmp(argv[i], "--quick") == 0)
                o.quick = 1;
            else if (strcmp(argv[i], "--graph") == 0)
                o.graph = 1;
            else if (strcmp(argv[i], "--rope-table") == 0)
                o.rope_table = 1;
            else if (strcmp(argv[i], "--vision") == 0)
                o.vision = 1;
            else if (strcmp(argv[i], "--read-back") == 0)
                o.read_back = 1;
            else if (strcmp(argv[i], "--cold-l2") == 0)
                o.cold_l2 = 1;
            else if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc)
                o.csv_path = argv[++i];
            else if (strcmp(argv[i], "--op") == 0 && i + 1 < argc)
                o.only_op = argv[++i];
            else if (strcmp(argv[i], "--tokens") == 0 && i + 1 < argc) {
                if (whole(argv[++i], PKV_MAX_TOKENS, &o.only_tokens)) {
                    fprintf(stderr, "pkv bench: --tokens takes 1 to %u\n", PKV_MAX_TOKENS);
                    return 2;
                }
            } else if (strcmp(argv[i], "--heads") == 0 && i + 1 < argc) {
                if (whole(argv[++i], UINT32_MAX, &o.only_heads)) {
                    fprintf(stderr, "pkv bench: --heads takes a number of KV heads\n");
                    return 2;
                }
            } else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
                if (whole(argv[++i], PKVI_BENCH_MAX_RUNS, &o.runs)) {
                    fprintf(stderr, "pkv bench: --runs takes 1 to %d\n", PKVI_BENCH_MAX_RUNS);
                    return 2;
                }
            } else {
                fprintf(stderr, "pkv bench: unknown argument '%s'\n", argv[i]);
                return 2;
            }
        }
        return pkvi_bench_main(&o);
    }
    if (strcmp(argv[1], "check") == 0) {
        int quick = 0, gpu = 0;
        for (int i = 2; i < argc; i++) {
            if (strcmp(argv[i], "--quick") == 0)
                quick = 1;
            else if (strcmp(argv[i], "--gpu") == 0)
                gpu = 1;
            else {
                fprintf(stderr, "pkv check: unknown argument '%s'\n", argv[i]);
                return 2;
            }
        }
        return pkvi_check_main(quick, gpu);
    }
    fprintf(stderr, "pkv: unknown command '%s'\n%s", argv[1], usage);
    return 2;
}
