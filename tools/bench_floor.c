/*
 * bench_floor.c - what no exchange of a step can beat: a ping-pong of two
 * ranks through the fused transports' probe (transport/probes.h), for
 * halox-bench --floor and halox-bench pingpong.
 */
#define _POSIX_C_SOURCE 200809L
#include "bench_floor.h"

#include "bench_options.h"
#include "core/hxi.h"
#include "transport/probes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void bench_floor_measure(hx_comm *comm, hx_transport *t, const hx_plan *plan, double *floor_us,
                         char *text, size_t cap)
{
#ifdef HALOX_HAVE_NVSHMEM
    if (!t || hx_comm_size(comm) < 2)
        return;
    int halo = hx_plan_nhalo(plan);
    hxi_allreduce_int(comm, &halo, 1, 1);
    long bytes = 12L * halo;
    double sig = 0.0, data = 0.0;
    hx_status st = hxi_fused_pingpong(t, 0, 2000, &sig);
    if (st == HX_OK)
        st = hxi_fused_pingpong(t, bytes, 500, &data);
    if (st != HX_OK) {
        if (hx_comm_rank(comm) == 0)
            fprintf(stderr, "halox-bench: floor not measured: %s\n", hx_last_error());
        return;
    }
    int np = hx_plan_npulses(plan);
    *floor_us = 2.0 * (data + (np > 1 ? np - 1 : 0) * sig);
    snprintf(text, cap,
             "# floor %.2f us = 2 x (one-way %ld bytes %.2f us + %d x signal %.2f us); ping-pong "
             "of ranks 0 and 1 (one kernel each, last-block st.release.sys, ld.acquire.sys)\n",
             *floor_us, bytes, data, np > 1 ? np - 1 : 0, sig);
#else
    (void) comm, (void) t, (void) plan, (void) floor_us, (void) text, (void) cap;
#endif
}

/* `halox-bench pingpong`: the floor alone, for several sizes. */
int bench_pingpong(hx_comm *comm, int argc, char **argv)
{
    int rank = hx_comm_rank(comm);
    const char *list = "0,8192,32768,131072,524288";
    int iters = 2000;
    if (parse_pingpong(argc, argv, &list, &iters, rank) != 0)
        return 2;
#ifdef HALOX_HAVE_NVSHMEM
    if (hx_comm_size(comm) < 2) {
        if (rank == 0)
            fprintf(stderr, "halox-bench pingpong: needs 2 ranks (mpirun -n 2)\n");
        return 2;
    }
    hx_transport_opts to;
    hx_transport_opts_init(&to);
    to.name = "nvshmem-fused";
    hx_transport *t = NULL;
    hx_status st = hx_transport_create(&t, comm, &to);
    if (st != HX_OK) {
        if (rank == 0)
            fprintf(stderr, "halox-bench pingpong: %s\n", hx_last_error());
        return 1;
    }
    if (rank == 0)
        printf("# halox-bench pingpong: ranks 0 and 1, %d rounds per size, half a round trip "
               "(one-way: stores by all blocks, last block st.release.sys, peer "
               "ld.acquire.sys)\n%12s %12s %10s\n",
               iters, "bytes", "oneway_us", "GB/s");
    for (const char *p = list; st == HX_OK && *p;) {
        long bytes = atol(p);
        double us = 0.0;
        st = hxi_fused_pingpong(t, bytes, bytes > (1 << 20) ? iters / 10 + 1 : iters, &us);
        if (st == HX_OK && rank == 0)
            printf("%12ld %12.3f %10.2f\n", bytes, us, us > 0 ? 1e-3 * (double) bytes / us : 0.0);
        const char *e = strchr(p, ',');
        p = e ? e + 1 : p + strlen(p);
    }
    if (st != HX_OK && rank == 0)
        fprintf(stderr, "halox-bench pingpong: %s\n", hx_last_error());
    hx_transport_destroy(t);
    return st == HX_OK ? 0 : 1;
#else
    (void) iters, (void) list;
    if (rank == 0)
        fprintf(stderr,
                "halox-bench pingpong: this build has no NVSHMEM (-DHALOX_WITH_NVSHMEM=ON)\n");
    return 1;
#endif
}
