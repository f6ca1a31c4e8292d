/*
 * test_init.c - hx_init and CUDA's module loading: built with CUDA, hx_init
 * sets CUDA_MODULE_LOADING=EAGER where the environment does not set it, and
 * leaves a value the user set (halox.h says why). Without CUDA it leaves
 * the environment alone. No GPU needed: only the environment is read.
 */
#define _POSIX_C_SOURCE 200809L
#include "hxtest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *loading(void)
{
    const char *v = getenv("CUDA_MODULE_LOADING");
    return v ? v : "(unset)";
}

int main(int argc, char **argv)
{
    int bad = 0;
    /* A value the user set stays (the first hx_init also starts MPI). */
    setenv("CUDA_MODULE_LOADING", "LAZY", 1);
    if (hx_init(&argc, &argv) != HX_OK) {
        fprintf(stderr, "FAIL: hx_init: %s\n", hx_last_error());
        return 1;
    }
    if (strcmp(loading(), "LAZY") != 0) {
        fprintf(stderr, "FAIL: hx_init replaced the user's CUDA_MODULE_LOADING=LAZY by %s\n",
                loading());
        bad = 1;
    }
    /* Unset: hx_init (again, with MPI up) asks for eager loading. */
    unsetenv("CUDA_MODULE_LOADING");
    if (hx_init(&argc, &argv) != HX_OK) {
        fprintf(stderr, "FAIL: a second hx_init: %s\n", hx_last_error());
        bad = 1;
    }
#ifdef HALOX_HAVE_CUDA
    const char *want = "EAGER";
#else
    const char *want = "(unset)";
#endif
    if (strcmp(loading(), want) != 0) {
        fprintf(stderr, "FAIL: after hx_init with it unset, CUDA_MODULE_LOADING is %s, not %s\n",
                loading(), want);
        bad = 1;
    }
    printf("test_init: CUDA_MODULE_LOADING %s after hx_init: %s\n", loading(),
           bad ? "FAILED" : "passed");
    hx_finalize();
    return bad;
}
