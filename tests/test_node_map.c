/*
 * test_node_map: the communicator's node map (hxi_comm_node_map), which the
 * GPU engine and the GPU transports read to count local ranks and so pick
 * the same device. Every rank of a test runs on one host, so: one node,
 * every rank on it, numbered 0; the local rank is the rank (in rank order,
 * as the launcher numbers one host's processes); a second call gives the
 * same map without communicating; a communicator of its own (a duplicate)
 * gets a map of its own with the same answers, worked out this time from
 * the host names alone (the launchers' local-rank variables removed).
 * Also hxi_count_alike, with which the GPU engine and the transports count
 * the ranks sharing their GPU (by its UUID): keys shared by pairs of ranks,
 * by every rank, and by none. And the tally of calls with other ranks
 * (hxi_comm_tally): one for a barrier with several ranks, none alone.
 */
#define _POSIX_C_SOURCE 200809L /* unsetenv */

#include "hxtest.h"

#include "core/hxi.h"

#include <stdlib.h>

static void check_map(const hxi_node_map *m, int rank, int size, const char *which)
{
    HXT_CHECK(m->nnodes == 1, "%s: %d nodes, want 1 (all ranks on one host)", which, m->nnodes);
    HXT_CHECK(m->node == 0, "%s: node %d, want 0", which, m->node);
    HXT_CHECK(m->local_size == size, "%s: %d ranks on the node, want %d", which, m->local_size,
              size);
    HXT_CHECK(m->local_rank == rank, "%s: local rank %d, want %d", which, m->local_rank, rank);
    int bad = 0;
    for (int r = 0; r < size; r++)
        bad += m->node_of[r] != 0;
    HXT_CHECK(bad == 0, "%s: %d ranks placed on another node than 0", which, bad);
}

int main(int argc, char **argv)
{
    hx_comm *comm = hxt_init(&argc, &argv, "test_node_map");
    const int rank = hx_comm_rank(comm), size = hx_comm_size(comm);
    const hxi_node_map *m = NULL, *again = NULL;
    if (HXT_OK(hxi_comm_node_map(comm, &m)))
        check_map(m, rank, size, "world");
    /* Kept: the same map, and no collective (rank 0 alone asks again). */
    if (rank == 0 && HXT_OK(hxi_comm_node_map(comm, &again)))
        HXT_CHECK(again == m, "a second call returns the map already made");

    /* Ranks 2k and 2k+1 share a key (the last alone where the count is odd). */
    const int pair = rank / 2, everyone = 7, own = rank;
    int n = -1;
    if (HXT_OK(hxi_count_alike(comm, &pair, sizeof pair, &n))) {
        const int want = 2 * pair + 1 < size ? 2 : 1;
        HXT_CHECK(n == want, "rank %d: %d ranks hold its pair's key, want %d", rank, n, want);
    }
    if (HXT_OK(hxi_count_alike(comm, &everyone, sizeof everyone, &n)))
        HXT_CHECK(n == size, "%d ranks hold the common key, want %d", n, size);
    if (HXT_OK(hxi_count_alike(comm, &own, sizeof own, &n)))
        HXT_CHECK(n == 1, "rank %d: %d ranks hold its own key, want 1", rank, n);

    /* The tally of calls with other ranks (HALOX_LOG's count per rebuild):
     * a barrier is one more call with several ranks, none with one. */
    long long c0 = -1, c1 = -1;
    double s0 = -1.0, s1 = -1.0;
    hxi_comm_tally(&c0, &s0);
    HXT_OK(hxi_barrier(comm));
    hxi_comm_tally(&c1, &s1);
    HXT_CHECK(c1 - c0 == (size > 1 ? 1 : 0) && s1 >= s0 && s0 >= 0.0,
              "rank %d: a barrier counted %lld calls with other ranks (%g s to %g s), want %d",
              rank, c1 - c0, s0, s1, size > 1 ? 1 : 0);

    /* The other way to a local rank: the ranks' host names in rank order. */
    unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
    unsetenv("MPI_LOCALRANKID");
    unsetenv("SLURM_LOCALID");
    hx_comm *dup = NULL;
    if (HXT_OK(hx_comm_create(&dup, hxi_comm_mpi(comm)))) {
        const hxi_node_map *d = NULL;
        if (HXT_OK(hxi_comm_node_map(dup, &d))) {
            HXT_CHECK(d != m, "another communicator has a map of its own");
            check_map(d, rank, size, "duplicate");
        }
        hx_comm_destroy(dup);
    }
    return hxt_finish(comm);
}
