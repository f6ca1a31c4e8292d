/*
 * halox-md - the Lennard-Jones MD program of halox (see src/md/run.c).
 *
 * Before anything starts (MPI, the GPU), the HALOX_* environment variables
 * are read and checked: a bad value is one ERROR line and exit status 2.
 * --help-env prints them as docs/environment.md has them (a markdown table;
 * --help-env=tsv: one tab-separated line each, for tests). Output that
 * could not be written to stdout is an error (exit status 1 or the run's).
 */
#include "md/md.h"

#include "core/hxi.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Output that never reached stdout (a full disk, a closed pipe) is an
 * error, not a run that looks fine: 1 where rc is 0 (a run that failed
 * has said why already). */
static int stdout_checked(int rc)
{
    errno = 0;
    if ((fflush(stdout) != 0 || ferror(stdout)) && rc == 0) {
        fprintf(stderr, "halox-md: ERROR: cannot write the output to stdout: %s\n",
                errno ? strerror(errno) : "a write error");
        return 1;
    }
    return rc;
}

int main(int argc, char **argv)
{
    int version = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help-env") == 0 || strcmp(argv[i], "--help-env=tsv") == 0) {
            if (strcmp(argv[i], "--help-env") == 0)
                hxi_knobs_markdown(stdout);
            else
                hxi_knobs_tsv(stdout);
            return stdout_checked(0);
        }
        version |= strcmp(argv[i], "--version") == 0;
    }
    if (!version && hxi_knobs_load() != HX_OK) {
        fprintf(stderr, "halox-md: ERROR: %s\n", hx_last_error());
        return 2;
    }
    return stdout_checked(hx_md_main(argc, argv));
}
