/*
 * test_gpu_scan: the GPU engine's scan (hxg_scan: one launch, blocks of
 * 4,096 counts that look back over the chunks before theirs) against a
 * prefix sum on the host: every start and the total, for counts from none
 * to 3,000,001 (one block, a block's edge, hundreds of blocks), each
 * scanned twice on the same scratch (with other counts the second time),
 * and the scratch all zeros again after each scan, as the next one needs.
 * Counts are random in [0, 7] with runs of zeros and, once, a large one.
 * The second round reads the counts and writes the starts one and three
 * ints past 16-byte boundaries, so that the scan's four-cell loads and
 * stores take their unaligned path there and their aligned one in the
 * first.
 */
#include "hxtest.h"
#include "md/gpu/md_gpu.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

static int cuda_ok(cudaError_t e, const char *what)
{
    HXT_CHECK(e == cudaSuccess, "%s: %s", what, cudaGetErrorString(e));
    return e == cudaSuccess;
}

/* n counts drawn from seed. */
static void fill_counts(int32_t *c, int n, uint64_t seed)
{
    hxt_rng r = {seed};
    for (int i = 0; i < n; i++) {
        const uint64_t v = hxt_next(&r);
        c[i] = (v >> 60) < 3 ? 0 : (int32_t) (v & 7); /* runs of empty cells */
    }
    if (n > 10)
        c[n / 2] = 1 << 20;
}

int main(int argc, char **argv)
{
    hx_comm *comm = hxt_init(&argc, &argv, "test_gpu_scan");
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        cudaGetLastError();
        return hxt_skip(comm, "no CUDA device visible here");
    }
    static const int sizes[] = {0, 1, 31, 4095, 4096, 4097, 13824, 110592, 884736, 3000001};
    const int nmax = 3000001;
    const size_t tmp_ints = 2 * (size_t) HXG_MAX_SCAN_BLOCKS;
    int32_t *h_cnt = hxt_xmalloc(sizeof(int32_t) * (size_t) nmax);
    int32_t *h_start = hxt_xmalloc(sizeof(int32_t) * ((size_t) nmax + 1));
    int32_t *h_tmp = hxt_xmalloc(sizeof(int32_t) * tmp_ints);
    int32_t *d_cnt = NULL, *d_start = NULL, *d_tmp = NULL;
    cudaStream_t s = NULL;
    int ok =
        cuda_ok(cudaMalloc((void **) &d_cnt, sizeof(int32_t) * ((size_t) nmax + 1)), "cudaMalloc");
    ok = ok && cuda_ok(cudaMalloc((void **) &d_start, sizeof(int32_t) * ((size_t) nmax + 4)),
                       "cudaMalloc");
    ok = ok && cuda_ok(cudaMalloc((void **) &d_tmp, sizeof(int32_t) * tmp_ints), "cudaMalloc");
    ok = ok && cuda_ok(cudaMemset(d_tmp, 0, sizeof(int32_t) * tmp_ints), "cudaMemset");
    ok = ok && cuda_ok(cudaStreamCreate(&s), "cudaStreamCreate");
    for (size_t k = 0; ok && k < sizeof sizes / sizeof sizes[0]; k++) {
        const int n = sizes[k];
        for (int round = 0; ok && round < 2; round++) {
            int32_t *cnt = d_cnt + round, *start = d_start + 3 * round;
            fill_counts(h_cnt, n, 1000u * (uint64_t) k + (uint64_t) round + 7u);
            ok = cuda_ok(
                cudaMemcpy(cnt, h_cnt, sizeof(int32_t) * (size_t) n, cudaMemcpyHostToDevice),
                "upload");
            ok = ok &&
                 cuda_ok(cudaMemset(start, 0xff, sizeof(int32_t) * ((size_t) n + 1)), "cudaMemset");
            ok = ok && cuda_ok((cudaError_t) hxg_scan(s, cnt, start, n, d_tmp), "hxg_scan");
            ok = ok && cuda_ok(cudaStreamSynchronize(s), "the scan");
            ok = ok && cuda_ok(cudaMemcpy(h_start, start, sizeof(int32_t) * ((size_t) n + 1),
                                          cudaMemcpyDeviceToHost),
                               "download");
            ok = ok && cuda_ok(cudaMemcpy(h_tmp, d_tmp, sizeof(int32_t) * tmp_ints,
                                          cudaMemcpyDeviceToHost),
                               "download");
            if (!ok)
                break;
            int bad = 0, dirty = 0;
            int64_t sum = 0;
            for (int c = 0; c <= n; c++) {
                if (h_start[c] != (int32_t) sum && bad++ < 3)
                    fprintf(stderr, "n %d round %d: start[%d] is %d, want %lld\n", n, round, c,
                            h_start[c], (long long) sum);
                if (c < n)
                    sum += h_cnt[c];
            }
            for (size_t i = 0; i < tmp_ints; i++)
                dirty += h_tmp[i] != 0;
            HXT_CHECK(bad == 0, "n %d, round %d: %d starts differ from the host's prefix sum", n,
                      round, bad);
            HXT_CHECK(dirty == 0, "n %d, round %d: %d words of the scratch left non-zero", n, round,
                      dirty);
            ok = bad == 0 && dirty == 0;
        }
        if (ok)
            printf("scan of %d counts: starts and total as on the host, twice (aligned, then not), "
                   "scratch clear\n",
                   n);
    }
    if (s)
        cudaStreamDestroy(s);
    cudaFree(d_cnt);
    cudaFree(d_start);
    cudaFree(d_tmp);
    free(h_cnt);
    free(h_start);
    free(h_tmp);
    return hxt_finish(comm);
}
