/*
 * hxtest.h - the small test harness of halox.
 *
 * A test is one executable: it returns 0 when every check passed, 1 when
 * one failed, and 77 (shown by CTest as skipped) when it cannot run here,
 * after printing why. MPI tests reduce the verdict over all ranks, so every
 * rank exits with the same code.
 */
#ifndef HALOX_HXTEST_H
#define HALOX_HXTEST_H

#include "halox.h"

#include <stdio.h>
#include <stdlib.h>

#define HXT_SKIP 77

extern int hxt_failures;
extern int hxt_checks;
extern int hxt_rank;

/* A check that counts and, on failure, says where and what. */
#define HXT_CHECK(cond, ...)                                                                       \
    do {                                                                                           \
        hxt_checks++;                                                                              \
        if (!(cond)) {                                                                             \
            hxt_failures++;                                                                        \
            if (hxt_failures <= 20) {                                                              \
                fprintf(stderr, "[rank %d] FAIL %s:%d: %s: ", hxt_rank, __FILE__, __LINE__,        \
                        #cond);                                                                    \
                fprintf(stderr, __VA_ARGS__);                                                      \
                fputc('\n', stderr);                                                               \
            }                                                                                      \
        }                                                                                          \
    } while (0)

/* A call that must return HX_OK: counts as a check; evaluates to 1 when it
 * did, so a test can stop: `if (!HXT_OK(hx_plan_create(...))) goto done;`. */
#define HXT_OK(call) hxt_ok((call), #call, __FILE__, __LINE__)
int hxt_ok(hx_status s, const char *what, const char *file, int line);
/* A call that must fail with `want`, and leave a message that contains
 * `needle` (NULL: any non-empty message). */
#define HXT_FAILS(call, want, needle) hxt_fails((call), (want), (needle), #call, __FILE__, __LINE__)
int hxt_fails(hx_status s, hx_status want, const char *needle, const char *what, const char *file,
              int line);

/* Starts MPI (if built) and the harness; returns the world communicator. */
hx_comm *hxt_init(int *argc, char ***argv, const char *name);

/* malloc and calloc that end the test with a message when memory runs out
 * (a zero size gets one byte, so the result is never NULL). */
void *hxt_xmalloc(size_t bytes);
void *hxt_xcalloc(size_t n, size_t size);
/* Reduces the verdict over all ranks, prints one line on rank 0, finalises,
 * and returns the exit code. */
int hxt_finish(hx_comm *comm);
/* Skips the whole test on every rank with a reason (exit code 77). */
int hxt_skip(hx_comm *comm, const char *why);

/* Seeded generator (splitmix64) shared by tests so systems are reproducible. */
typedef struct hxt_rng {
    uint64_t s;
} hxt_rng;
static inline uint64_t hxt_next(hxt_rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
/* Uniform in [0, 1). */
static inline double hxt_uniform(hxt_rng *r)
{
    return (hxt_next(r) >> 11) * 0x1.0p-53;
}

#endif /* HALOX_HXTEST_H */
