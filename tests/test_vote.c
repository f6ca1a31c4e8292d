/*
 * test_vote: hx_transport_vote, the yes/no agreed over the ranks on the
 * device, for every built transport that offers it (HX_CAP_VOTE), on its
 * load/store path and with the put path forced.
 *
 * - 400 votes enqueued back to back with no host wait between them (so the
 *   ranks run ahead of each other by a vote), each rank's input drawn so
 *   that some votes are all no, some one yes, some several; every 7th vote
 *   sat out by every rank (input -1: its output must stay untouched). Each
 *   output must be the OR of the inputs, computed here on the host.
 * - the same inside a CUDA graph of 5 votes, replayed 40 times with new
 *   inputs written between replays (stream-ordered).
 * - a transport without the vote refuses it (HX_ERR_UNSUPPORTED).
 * - the last rank sits out a vote the others make: their waits time out
 *   (1 s), the vote stores 1, and hx_transport_sync reports HX_ERR_TIMEOUT
 *   naming the vote and the rank it waited for; the last rank's is HX_OK.
 */
#define _POSIX_C_SOURCE 200809L
#include "sysgen.h"

#include "core/hxi.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NVOTES    400
#define GVOTES    5
#define GREPS     40
#define UNTOUCHED 7

/* The input of `rank` in vote k of series `series`: -1 (sat out, alike on
 * every rank) every 7th vote, else yes with a chance of about 1 in
 * 2 * nranks, so that all kinds of outcome occur. */
static int32_t input(int series, int k, int rank, int nranks)
{
    if (k % 7 == 3)
        return -1;
    hxt_rng r = {(uint64_t) series * 1000003u + (uint64_t) k * 7919u + (uint64_t) rank};
    return hxt_uniform(&r) < 0.5 / nranks ? 1 : 0;
}

static int32_t expected(int series, int k, int nranks)
{
    if (input(series, k, 0, nranks) < 0)
        return UNTOUCHED;
    int32_t any = 0;
    for (int q = 0; q < nranks; q++)
        any |= input(series, k, q, nranks);
    return any;
}

static int check_outs(const char *label, const char *what, int series, const int32_t *out, int n,
                      int nranks, int *kinds)
{
    int bad = 0;
    for (int k = 0; k < n; k++) {
        int32_t want = expected(series, k, nranks);
        kinds[want == UNTOUCHED ? 2 : want]++;
        if (out[k] != want && bad++ < 3)
            HXT_CHECK(out[k] == want, "%s, %s: vote %d gave %d, expected %d", label, what, k,
                      out[k], want);
    }
    HXT_CHECK(bad == 0, "%s, %s: %d of %d votes wrong", label, what, bad, n);
    return bad == 0;
}

/* Back-to-back launches, then the graph. */
static void votes(hx_comm *comm, hx_transport *t, cudaStream_t s, const char *label)
{
    const int rank = hx_comm_rank(comm), nranks = hx_comm_size(comm);
    int32_t *d_in = NULL, *d_out = NULL;
    int32_t *in = hxt_xmalloc(NVOTES * sizeof *in), *out = hxt_xmalloc(NVOTES * sizeof *out);
    int ok = cudaMalloc((void **) &d_in, NVOTES * sizeof(int32_t)) == cudaSuccess &&
             cudaMalloc((void **) &d_out, NVOTES * sizeof(int32_t)) == cudaSuccess;
    int kinds[3] = {0, 0, 0};
    for (int k = 0; k < NVOTES; k++) {
        in[k] = input(1, k, rank, nranks);
        out[k] = UNTOUCHED;
    }
    ok = ok && cudaMemcpy(d_in, in, NVOTES * sizeof *in, cudaMemcpyHostToDevice) == cudaSuccess &&
         cudaMemcpy(d_out, out, NVOTES * sizeof *out, cudaMemcpyHostToDevice) == cudaSuccess;
    HXT_CHECK(ok, "%s: device buffers", label);
    if (hxt_agree(comm, ok)) {
        for (int k = 0; k < NVOTES && ok; k++)
            ok = HXT_OK(hx_transport_vote(t, d_in + k, d_out + k));
        ok &= HXT_OK(hx_transport_sync(t));
        ok = ok &&
             cudaMemcpy(out, d_out, NVOTES * sizeof *out, cudaMemcpyDeviceToHost) == cudaSuccess;
        if (hxt_agree(comm, ok))
            check_outs(label, "launched", 1, out, NVOTES, nranks, kinds);
    }

    /* A graph of GVOTES votes, replayed with new inputs each time. */
    cudaGraph_t g = NULL;
    cudaGraphExec_t x = NULL;
    if (hxt_agree(comm, ok)) {
        cudaError_t e = cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
        for (int k = 0; k < GVOTES && e == cudaSuccess; k++)
            if (hx_transport_vote(t, d_in + k, d_out + k) != HX_OK)
                e = cudaErrorUnknown;
        cudaError_t e2 = cudaStreamEndCapture(s, &g);
        if (e == cudaSuccess)
            e = e2;
        if (e == cudaSuccess)
            e = cudaGraphInstantiate(&x, g, 0);
        HXT_CHECK(e == cudaSuccess, "%s: capturing %d votes: %s", label, GVOTES,
                  cudaGetErrorString(e));
        ok = e == cudaSuccess;
    }
    int32_t *gout = hxt_xmalloc(GREPS * GVOTES * sizeof *gout);
    if (hxt_agree(comm, ok)) {
        for (int r = 0; r < GREPS && ok; r++) {
            int32_t gin[GVOTES], init[GVOTES];
            for (int k = 0; k < GVOTES; k++) {
                gin[k] = input(2, r * GVOTES + k, rank, nranks);
                init[k] = UNTOUCHED;
            }
            /* Pageable host memory: each copy has read its source on return. */
            ok = cudaMemcpyAsync(d_in, gin, sizeof gin, cudaMemcpyHostToDevice, s) == cudaSuccess &&
                 cudaMemcpyAsync(d_out, init, sizeof init, cudaMemcpyHostToDevice, s) ==
                     cudaSuccess &&
                 cudaGraphLaunch(x, s) == cudaSuccess &&
                 cudaMemcpyAsync(gout + r * GVOTES, d_out, sizeof init, cudaMemcpyDeviceToHost,
                                 s) == cudaSuccess;
        }
        ok &= HXT_OK(hx_transport_sync(t));
        HXT_CHECK(ok, "%s: replaying the graph of votes", label);
        if (hxt_agree(comm, ok))
            check_outs(label, "graph", 2, gout, GREPS * GVOTES, nranks, kinds);
    }
    if (rank == 0)
        printf("%s: %d votes no, %d yes, %d sat out\n", label, kinds[0], kinds[1], kinds[2]);
    HXT_CHECK(kinds[0] > 0 && kinds[1] > 0 && kinds[2] > 0,
              "%s: every kind of vote occurred (%d no, %d yes, %d sat out)", label, kinds[0],
              kinds[1], kinds[2]);
    if (x)
        cudaGraphExecDestroy(x);
    if (g)
        cudaGraphDestroy(g);
    cudaFree(d_in);
    cudaFree(d_out);
    free(gout);
    free(in);
    free(out);
}

/* The last rank sits out a vote that the others make. */
static void timeout_case(hx_comm *comm, hx_transport *t, const char *label)
{
    const int rank = hx_comm_rank(comm), nranks = hx_comm_size(comm);
    int32_t *d = NULL;
    int32_t h[2] = {rank == nranks - 1 ? -1 : 0, UNTOUCHED};
    int ok = cudaMalloc((void **) &d, sizeof h) == cudaSuccess &&
             cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice) == cudaSuccess;
    if (!hxt_agree(comm, ok)) {
        HXT_CHECK(ok, "%s: device buffer", label);
        cudaFree(d);
        return;
    }
    hx_status st = hx_transport_vote(t, d, d + 1);
    if (st == HX_OK)
        st = hx_transport_sync(t);
    ok = cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost) == cudaSuccess;
    if (rank == nranks - 1) {
        HXT_CHECK(st == HX_OK, "%s: the rank that sat out: %s", label, hx_last_error());
        HXT_CHECK(ok && h[1] == UNTOUCHED, "%s: sat out, yet the outcome changed (%d)", label,
                  h[1]);
    } else {
        char want[64];
        snprintf(want, sizeof want, "of rank %d", nranks - 1);
        HXT_CHECK(st == HX_ERR_TIMEOUT && strstr(hx_last_error(), "vote") &&
                      strstr(hx_last_error(), want),
                  "%s: a vote the last rank sat out: %s: %s", label, hx_status_string(st),
                  hx_last_error());
        HXT_CHECK(ok && h[1] == 1, "%s: a timed-out vote stores 1 (%d)", label, h[1]);
    }
    cudaFree(d);
}

static hx_transport *make(hx_comm *comm, const hxt_tvariant *v, double timeout_s, cudaStream_t s)
{
    hx_transport_opts o;
    hx_transport_opts_init(&o);
    o.dtype = HX_FLOAT;
    o.timeout_s = timeout_s;
    o.stream = s;
    return hxt_transport_try(comm, &o, v);
}

int main(int argc, char **argv)
{
    hx_comm *comm = hxt_init(&argc, &argv, "test_vote");
    setvbuf(stdout, NULL, _IOLBF, 0);
    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess)
        (void) cudaGetLastError();
    if (!hxt_agree(comm, e == cudaSuccess && ndev > 0))
        return hxt_skip(comm, "no CUDA device visible here (the vote runs on the GPU)");
    if (hx_comm_size(comm) < 2)
        return hxt_skip(comm, "needs 2 ranks or more");

    /* A transport without the vote refuses it, with a reason. */
    const hxt_tvariant cpu_v = {"cpu", 0, "cpu"};
    hx_transport *cpu = make(comm, &cpu_v, 10.0, NULL);
    if (cpu) {
        HXT_CHECK(!(hx_transport_caps(cpu) & HX_CAP_VOTE), "cpu claims HX_CAP_VOTE");
        int32_t dummy[2];
        HXT_FAILS(hx_transport_vote(cpu, dummy, dummy + 1), HX_ERR_UNSUPPORTED, "vote");
        hx_transport_destroy(cpu);
    }

    cudaStream_t s = NULL;
    if (!hxt_agree(comm, cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess))
        return hxt_skip(comm, "could not create a CUDA stream");
    int ran = 0;
    hxt_tvariant v[16];
    const int nv = hxt_transport_variants(HX_CAP_VOTE, 0, 1, v, 16);
    for (int k = 0; k < nv; k++) {
        hx_transport *t = make(comm, &v[k], 10.0, s);
        if (!t)
            continue;
        ran++;
        votes(comm, t, s, v[k].label);
        hx_transport_destroy(t);
        t = make(comm, &v[k], 1.0, s);
        if (!t)
            continue;
        timeout_case(comm, t, v[k].label);
        hx_transport_destroy(t);
    }
    cudaStreamDestroy(s);
    if (ran == 0)
        return hxt_skip(comm, "no transport with HX_CAP_VOTE could run here");
    return hxt_finish(comm);
}
