/*
 * test_version.c - hx_version_string: the version of halox.h and of the
 * build (CMake's project version), and every transport built in.
 */
#include "hxtest.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    (void) argc, (void) argv;
    char want[64];
    const char *v = hx_version_string();
    snprintf(want, sizeof want, "halox %d.%d.%d (", HX_VERSION_MAJOR, HX_VERSION_MINOR,
             HX_VERSION_PATCH);
    printf("%s\n", v);
    int bad = strncmp(v, want, strlen(want)) != 0;
    if (bad)
        fprintf(stderr, "FAIL: the string does not start with \"%s\"\n", want);
    snprintf(want, sizeof want, "halox %s (", HALOX_PROJECT_VERSION);
    if (strncmp(v, want, strlen(want)) != 0) {
        fprintf(stderr, "FAIL: halox.h says %d.%d.%d, the build %s\n", HX_VERSION_MAJOR,
                HX_VERSION_MINOR, HX_VERSION_PATCH, HALOX_PROJECT_VERSION);
        bad = 1;
    }
    for (int i = 0; i < hx_transport_count(); i++) {
        snprintf(want, sizeof want, " %s", hx_transport_name_at(i));
        if (!strstr(v, want)) {
            fprintf(stderr, "FAIL: transport %s not named\n", hx_transport_name_at(i));
            bad = 1;
        }
    }
    if (strstr(v, "MPI") == NULL) {
        fprintf(stderr, "FAIL: no word on MPI\n");
        bad = 1;
    }
    printf("test_version: %s\n", bad ? "FAILED" : "passed");
    return bad;
}
