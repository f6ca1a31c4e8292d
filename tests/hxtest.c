#include "hxtest.h"

#include "core/hxi.h"

#include <string.h>

int hxt_failures = 0;
int hxt_checks = 0;
int hxt_rank = 0;
static const char *hxt_name = "test";

void *hxt_xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "[rank %d] test out of memory (%zu bytes)\n", hxt_rank, bytes);
        exit(1);
    }
    return p;
}

void *hxt_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) {
        fprintf(stderr, "[rank %d] test out of memory\n", hxt_rank);
        exit(1);
    }
    return p;
}

hx_comm *hxt_init(int *argc, char ***argv, const char *name)
{
    hx_comm *comm = NULL;
    hxt_name = name;
    if (hx_init(argc, argv) != HX_OK || hx_comm_create(&comm, NULL) != HX_OK) {
        fprintf(stderr, "%s: cannot start: %s\n", name, hx_last_error());
        exit(1);
    }
    hxt_rank = hx_comm_rank(comm);
    return comm;
}

int hxt_finish(hx_comm *comm)
{
    int v[2] = {hxt_failures, hxt_checks};
    if (comm)
        hxi_allreduce_int(comm, v, 2, 0);
    if (hxt_rank == 0) {
        if (v[0] == 0)
            printf("%s: %d checks passed on %d rank(s)\n", hxt_name, v[1],
                   comm ? hx_comm_size(comm) : 1);
        else
            printf("%s: %d of %d checks FAILED on %d rank(s)\n", hxt_name, v[0], v[1],
                   comm ? hx_comm_size(comm) : 1);
    }
    fflush(stdout);
    hx_comm_destroy(comm);
    hx_finalize();
    if (v[1] == 0 && v[0] == 0) {
        /* A test that checked nothing must not pass. */
        if (hxt_rank == 0)
            printf("%s: no checks ran\n", hxt_name);
        return 1;
    }
    return v[0] == 0 ? 0 : 1;
}

int hxt_skip(hx_comm *comm, const char *why)
{
    if (hxt_rank == 0)
        printf("%s: SKIPPED: %s\n", hxt_name, why);
    fflush(stdout);
    hx_comm_destroy(comm);
    hx_finalize();
    return HXT_SKIP;
}

int hxt_ok(hx_status s, const char *what, const char *file, int line)
{
    hxt_checks++;
    if (s == HX_OK)
        return 1;
    hxt_failures++;
    fprintf(stderr, "[rank %d] FAIL %s:%d: %s -> %s: %s\n", hxt_rank, file, line, what,
            hx_status_string(s), hx_last_error());
    return 0;
}

int hxt_fails(hx_status s, hx_status want, const char *needle, const char *what, const char *file,
              int line)
{
    const char *msg = hx_last_error();
    hxt_checks++;
    if (s == want && msg[0] != '\0' && (!needle || strstr(msg, needle)))
        return 1;
    hxt_failures++;
    fprintf(stderr, "[rank %d] FAIL %s:%d: %s -> %s (want %s), message \"%s\"%s%s\n", hxt_rank,
            file, line, what, hx_status_string(s), hx_status_string(want), msg,
            needle ? " should contain " : "", needle ? needle : "");
    return 0;
}
