/*
 * test_knobs.c - the HALOX_* variables through the library (src/core/knobs.c).
 *
 *  - a bad value in the environment (HALOX_TIMEOUT_S=0, set before the
 *    library starts) leaves that knob at its default and makes
 *    hx_transport_create fail with HX_ERR_INVALID on every rank, the
 *    message naming the variable, its value and what it allows; and again
 *    at the next call (the environment is read once);
 *  - a good value from the environment (HALOX_AUTO_STEPS=7) is read;
 *  - hxi_knobs_set: a good value is taken, a bad one refused with the
 *    knob unchanged, NULL goes back to the environment's value, "" to the
 *    default, and an unknown name is refused.
 */
#define _POSIX_C_SOURCE 200809L

#include "hxtest.h"

#include "core/hxi.h"

#include <stdlib.h>
#include <string.h>

static void check_set(void)
{
    const struct hxi_knobs *k = hxi_knobs();
    HXT_OK(hxi_knobs_set("HALOX_MD_LANES", "1,2,8"));
    HXT_CHECK(k->md_lanes[0] == 1 && k->md_lanes[1] == 2 && k->md_lanes[2] == 8,
              "HALOX_MD_LANES=1,2,8 gave %d,%d,%d", k->md_lanes[0], k->md_lanes[1], k->md_lanes[2]);
    HXT_FAILS(hxi_knobs_set("HALOX_MD_LANES", "1,3,8"), HX_ERR_INVALID, "HALOX_MD_LANES='1,3,8'");
    HXT_CHECK(k->md_lanes[1] == 2, "a refused value changed the knob (%d)", k->md_lanes[1]);
    HXT_OK(hxi_knobs_set("HALOX_MD_LANES", NULL));
    HXT_CHECK(k->md_lanes[0] == 0 && k->md_lanes[2] == 0, "NULL did not go back to unset");

    HXT_OK(hxi_knobs_set("HALOX_AUTO_STEPS", "40"));
    HXT_CHECK(k->auto_steps == 40, "HALOX_AUTO_STEPS=40 gave %d", k->auto_steps);
    HXT_OK(hxi_knobs_set("HALOX_AUTO_STEPS", ""));
    HXT_CHECK(k->auto_steps == 20, "\"\" gave %d, not the default 20", k->auto_steps);
    HXT_OK(hxi_knobs_set("HALOX_AUTO_STEPS", NULL));
    HXT_CHECK(k->auto_steps == 7, "NULL gave %d, not the environment's 7", k->auto_steps);

    HXT_OK(hxi_knobs_set("HALOX_MPI_MODE", "staged"));
    HXT_CHECK(k->mpi_mode == HXK_MPI_STAGED, "HALOX_MPI_MODE=staged gave %d", k->mpi_mode);
    HXT_FAILS(hxi_knobs_set("HALOX_MPI_MODE", "fastest"), HX_ERR_INVALID,
              "auto, cuda-aware, ipc or staged");
    HXT_OK(hxi_knobs_set("HALOX_MPI_MODE", NULL));
    HXT_FAILS(hxi_knobs_set("HALOX_TRACE_MAX", "1e300"), HX_ERR_INVALID, "HALOX_TRACE_MAX");
    HXT_FAILS(hxi_knobs_set("HALOX_LOG", "-5"), HX_ERR_INVALID, "from 0 to 2");
    HXT_FAILS(hxi_knobs_set("HALOX_MD_CELLS_X", "2"), HX_ERR_INVALID,
              "HALOX_MD_CELLS_X"); /* gone */
}

int main(int argc, char **argv)
{
    /* Before anything of the library runs: the environment is read once. */
    setenv("HALOX_TIMEOUT_S", "0", 1);
    setenv("HALOX_AUTO_STEPS", "7", 1);
    hx_comm *comm = hxt_init(&argc, &argv, "test_knobs");

    const struct hxi_knobs *k = hxi_knobs();
    HXT_CHECK(k->timeout_s == 5.0, "a bad HALOX_TIMEOUT_S left %g, not the default 5",
              k->timeout_s);
    HXT_CHECK(k->auto_steps == 7, "HALOX_AUTO_STEPS=7 read as %d", k->auto_steps);
    for (int round = 0; round < 2; round++) {
        hx_transport_opts o;
        hx_transport *t = NULL;
        hx_transport_opts_init(&o);
        o.name = "cpu";
        o.dtype = HX_DOUBLE;
        HXT_FAILS(hx_transport_create(&t, comm, &o), HX_ERR_INVALID,
                  "HALOX_TIMEOUT_S='0' is out of range; give a number above 0");
        HXT_CHECK(t == NULL, "a transport was made");
    }
    check_set();
    return hxt_finish(comm);
}
