/*
 * test_gpu_mpi_modes: the `mpi` transport in each of its modes (staged,
 * ipc, and cuda-aware where the MPI library has CUDA support) against the
 * cpu transport (float), and how a mode is chosen.
 *
 * Exchange: per plan, ten steps with home coordinates moving a little each
 * step; halo coordinates must be bitwise equal to the cpu transport's
 * (unwritten halo entries are poisoned with NaN first), and home forces
 * after the reverse of random forces equal to 1e-6 relative. Grids: 2
 * ranks 1x1x2 and 2x1x1, 4 ranks 2x2x1 and 1x1x4 (2 pulses), 8 ranks 2x2x2
 * and 2x1x4 (2 pulses), or --grid AxBxC; each grid with a system and then
 * one of three times the atoms, so the arrays grow and move: the ipc mode
 * must then map the peers' new buffers (a stale mapping would write into
 * freed memory and leave the poison). The test checks that the arrays did
 * move at least once.
 *
 * Selection: opts.mpi_mode and HALOX_MPI_MODE force each mode (an explicit
 * opts.mpi_mode wins over the variable); auto takes ipc when all ranks
 * share a node and MPI reports no CUDA support; a bad HALOX_MPI_MODE is
 * HX_ERR_INVALID naming it, and different modes on different ranks
 * HX_ERR_INVALID on every rank;
 * cuda-aware on an MPI without CUDA support is HX_ERR_UNSUPPORTED with a
 * message that says why.
 */
#define _POSIX_C_SOURCE 200809L
#include "gpucases.h"

#include "core/hxi.h"
#include "transport/probes.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NMODES 3

static hx_status create_mpi(hx_comm *comm, hx_mpi_mode mode, hx_transport **t)
{
    hx_transport_opts o;
    hx_transport_opts_init(&o);
    o.name = "mpi";
    o.dtype = HX_FLOAT;
    o.mpi_mode = mode;
    *t = NULL;
    return hx_transport_create(t, comm, &o);
}

/* Creates with mode (and HALOX_MPI_MODE = env, NULL: unset) and checks the
 * outcome: the mode run, or -1 with the status and message when refused
 * (a bad HALOX_MPI_MODE is refused as it is set). */
static int try_mode(hx_comm *comm, hx_mpi_mode mode, const char *env, hx_status *st_out, char *msg,
                    size_t msglen)
{
    hx_transport *t = NULL;
    hx_status st = hxi_knobs_set("HALOX_MPI_MODE", env ? env : "");
    if (st == HX_OK)
        st = create_mpi(comm, mode, &t);
    snprintf(msg, msglen, "%s", st == HX_OK ? "" : hx_last_error());
    int ran = st == HX_OK ? hxi_mpi_mode_of(t) : -1;
    if (t)
        hx_transport_destroy(t);
    hxi_knobs_set("HALOX_MPI_MODE", "");
    *st_out = st;
    return ran;
}

/* How modes are chosen. *cuda_aware says whether MPI reports CUDA support
 * (auto then takes the cuda-aware mode, and the exchange runs it too). */
static void check_selection(hx_comm *comm, int one_node, int *cuda_aware)
{
    int rank = hx_comm_rank(comm), nranks = hx_comm_size(comm);
    hx_status st;
    char msg[1024];
    int ran;

    ran = try_mode(comm, HX_MPI_AUTO, NULL, &st, msg, sizeof msg);
    *cuda_aware = hxt_agree(comm, ran == HX_MPI_CUDA_AWARE);
    if (rank == 0)
        printf("auto runs the %s mode\n", hxi_mpi_mode_name(ran));
    if (!*cuda_aware && one_node)
        HXT_CHECK(ran == HX_MPI_IPC, "auto on one node without CUDA-aware MPI ran %s, not ipc (%s)",
                  hxi_mpi_mode_name(ran), msg);
    else if (!*cuda_aware)
        HXT_CHECK(ran == HX_MPI_STAGED, "auto on several nodes ran %s, not staged (%s)",
                  hxi_mpi_mode_name(ran), msg);

    ran = try_mode(comm, HX_MPI_STAGED, NULL, &st, msg, sizeof msg);
    HXT_CHECK(hxt_agree(comm, ran == HX_MPI_STAGED), "opts staged ran %d (%s)", ran, msg);

    /* Forced: runs where MPI has (or cannot deny) CUDA support; else a
     * refusal that says why, never a crash. */
    ran = try_mode(comm, HX_MPI_CUDA_AWARE, NULL, &st, msg, sizeof msg);
    HXT_CHECK(ran == HX_MPI_CUDA_AWARE ||
                  (st == HX_ERR_UNSUPPORTED && strstr(msg, "no CUDA support")),
              "cuda-aware: want it to run, or HX_ERR_UNSUPPORTED saying that MPI has no CUDA "
              "support; got %s: '%s'",
              hx_status_string(st), msg);
    if (*cuda_aware)
        HXT_CHECK(ran == HX_MPI_CUDA_AWARE, "cuda-aware refused although auto takes it: %s", msg);
    if (rank == 0 && ran < 0)
        printf("mpi (cuda-aware): not run: %s\n", msg);

    ran = try_mode(comm, HX_MPI_IPC, NULL, &st, msg, sizeof msg);
    if (one_node)
        HXT_CHECK(hxt_agree(comm, ran == HX_MPI_IPC),
                  "all ranks share a node, but the ipc mode did not run: %s: %s",
                  hx_status_string(st), msg);
    else
        HXT_CHECK(ran == HX_MPI_IPC || st == HX_ERR_UNSUPPORTED, "ipc on several nodes: %s: %s",
                  hx_status_string(st), msg);

    /* The variable chooses when opts leaves it to auto. */
    ran = try_mode(comm, HX_MPI_AUTO, "staged", &st, msg, sizeof msg);
    HXT_CHECK(ran == HX_MPI_STAGED, "HALOX_MPI_MODE=staged ran %s", hxi_mpi_mode_name(ran));
    if (one_node) {
        ran = try_mode(comm, HX_MPI_AUTO, "ipc", &st, msg, sizeof msg);
        HXT_CHECK(ran == HX_MPI_IPC, "HALOX_MPI_MODE=ipc ran %s (%s)", hxi_mpi_mode_name(ran), msg);
    }
    ran = try_mode(comm, HX_MPI_STAGED, "ipc", &st, msg, sizeof msg);
    HXT_CHECK(ran == HX_MPI_STAGED, "opts staged with HALOX_MPI_MODE=ipc ran %s",
              hxi_mpi_mode_name(ran));
    ran = try_mode(comm, HX_MPI_AUTO, "cuda-aware", &st, msg, sizeof msg);
    HXT_CHECK(ran == HX_MPI_CUDA_AWARE || (!*cuda_aware && st == HX_ERR_UNSUPPORTED),
              "HALOX_MPI_MODE=cuda-aware: %s: %s", hx_status_string(st), msg);
    ran = try_mode(comm, HX_MPI_AUTO, "fastest", &st, msg, sizeof msg);
    HXT_CHECK(ran < 0 && st == HX_ERR_INVALID && strstr(msg, "HALOX_MPI_MODE"),
              "HALOX_MPI_MODE=fastest: want HX_ERR_INVALID naming the variable, got %s: '%s'",
              hx_status_string(st), msg);
    if (nranks > 1) {
        ran = try_mode(comm, HX_MPI_AUTO, rank == 0 ? "staged" : "ipc", &st, msg, sizeof msg);
        HXT_CHECK(ran < 0 && st == HX_ERR_INVALID && strstr(msg, "different modes"),
                  "modes differing between ranks: want HX_ERR_INVALID on every rank, got %s: "
                  "'%s'",
                  hx_status_string(st), msg);
    }
}

int main(int argc, char **argv)
{
    hx_comm *comm = hxt_init(&argc, &argv, "test_gpu_mpi_modes");
    int nranks = hx_comm_size(comm), rank = hx_comm_rank(comm);
    int grids[8][3], ngrids = 0;
    int skip = hxt_gpu_setup(comm, argc, argv, grids, &ngrids);
    if (skip)
        return skip;

    /* One node: the ipc mode must run (and auto must pick it). */
    MPI_Comm node;
    int nnode = 0;
    MPI_Comm_split_type(*(MPI_Comm *) hxi_comm_mpi(comm), MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL,
                        &node);
    MPI_Comm_size(node, &nnode);
    MPI_Comm_free(&node);
    int one_node = hxt_agree(comm, nnode == nranks);

    int cuda_aware = 0;
    check_selection(comm, one_node, &cuda_aware);

    static const hx_mpi_mode modes[NMODES] = {HX_MPI_STAGED, HX_MPI_IPC, HX_MPI_CUDA_AWARE};
    static const char *const labels[NMODES] = {"mpi (staged)", "mpi (ipc)", "mpi (cuda-aware)"};
    hxt_gpu_entry mr[NMODES];
    memset(mr, 0, sizeof mr);
    for (int k = 0; k < NMODES; k++)
        snprintf(mr[k].label, sizeof mr[k].label, "%s", labels[k]);
    int nm = cuda_aware ? 3 : 2;
    for (int k = 0; k < nm; k++) {
        hx_status st = create_mpi(comm, modes[k], &mr[k].t);
        mr[k].alive = hxt_agree(comm, st == HX_OK);
        if (!mr[k].alive) {
            HXT_CHECK(k == 1 && !one_node && st == HX_ERR_UNSUPPORTED, "%s: create: %s: %s",
                      mr[k].label, hx_status_string(st), hx_last_error());
            if (mr[k].t)
                hx_transport_destroy(mr[k].t);
            mr[k].t = NULL;
            continue;
        }
        const char *how = hx_transport_describe(mr[k].t);
        if (rank == 0)
            printf("%s: %s\n", mr[k].label, how);
        HXT_CHECK(hxi_mpi_mode_of(mr[k].t) == (int) modes[k], "%s runs mode %s", mr[k].label,
                  hxi_mpi_mode_name(hxi_mpi_mode_of(mr[k].t)));
        if (modes[k] == HX_MPI_IPC)
            HXT_CHECK(strstr(how, "CUDA IPC") != NULL, "ipc description: '%s'", how);
    }

    hx_plan *previous = NULL;
    hxt_gpu_set set = {mr, nm};
    hxt_walk w = hxt_gpu_walk((const int(*)[3]) grids, ngrids, 777u);
    hxt_walk_plans(comm, &w, hxt_gpu_check_plan, &set, &previous);
    for (int k = 0; k < nm; k++) {
        if (!mr[k].t)
            continue;
        if (rank == 0)
            printf("%s: %s; arrays moved at %d re-plan(s)\n", mr[k].label,
                   mr[k].alive ? "ran every case" : "FAILED a case", mr[k].moved);
        HXT_CHECK(mr[k].alive, "%s failed a case (see above)", mr[k].label);
        HXT_CHECK(mr[k].moved > 0,
                  "%s: no re-plan moved the arrays, so refreshing peer handles went untested",
                  mr[k].label);
    }
    for (int k = nm - 1; k >= 0; k--)
        if (mr[k].t)
            hx_transport_destroy(mr[k].t);
    if (previous)
        hx_plan_destroy(previous);
    return hxt_finish(comm);
}
