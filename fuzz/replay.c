/* Replays the checked-in corpus of every fuzz target through the same code, without libFuzzer
 * (make check): one TAP line per target, naming the files it ran. A target that finds a bug
 * aborts, which fails the test. Arguments (TARGET FILE...) replay chosen inputs instead. */
#include "config.h"
#include "fuzz.h"
#include "../t/tap.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*target_fn)(const uint8_t *, size_t);

static const struct {
    const char *name;
    target_fn fn;
} targets[] = {
#define FZ_ENTRY_ROW(name) {#name, fz_##name},
    FZ_TARGETS(FZ_ENTRY_ROW)
#undef FZ_ENTRY_ROW
};

static int replay_file(target_fn fn, const char *path)
{
    FILE *fp = fopen(path, "rb");
    uint8_t *buf;
    long n;
    if (!fp) return -1;
    fseek(fp, 0, SEEK_END);
    n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    buf = malloc(n > 0 ? (size_t)n : 1);
    if (!buf || (n > 0 && fread(buf, 1, (size_t)n, fp) != (size_t)n)) {
        fclose(fp);
        free(buf);
        return -1;
    }
    fclose(fp);
    fn(buf, (size_t)n);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    const char *src = getenv("SRCDIR");
    char dir[4096], path[8192];
    if (argc > 2) { /* replay TARGET FILE... */
        for (size_t t = 0; t < sizeof targets / sizeof targets[0]; t++)
            if (!strcmp(argv[1], targets[t].name)) {
                for (int i = 2; i < argc; i++)
                    ok(replay_file(targets[t].fn, argv[i]) == 0, "%s %s", argv[1], argv[i]);
                return done_testing();
            }
        bail("unknown target %s", argv[1]);
    }
    diag("backends: reference%s", fz_gpu() ? " + CUDA" : "");
    for (size_t t = 0; t < sizeof targets / sizeof targets[0]; t++) {
        DIR *d;
        struct dirent *e;
        int files = 0, bad = 0;
        snprintf(dir, sizeof dir, "%s/fuzz/corpus/%s", src ? src : ".", targets[t].name);
        if (!(d = opendir(dir))) {
            ok(0, "%s: cannot open %s", targets[t].name, dir);
            continue;
        }
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.') continue;
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            bad += replay_file(targets[t].fn, path) != 0;
            files++;
        }
        closedir(d);
        ok(files > 0 && bad == 0, "%s: replayed %d corpus inputs", targets[t].name, files);
    }
    return done_testing();
}
