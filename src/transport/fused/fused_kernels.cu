/*
 * fused_kernels.cu - the kernels of nvshmem-fused, nvshmem-fused-tma and
 * nccl-dev: one launch moves the coordinates of every pulse, one moves the
 * forces back, and a ping-pong probe measures the floor they are compared
 * with. The kernels see only pointers (fused.h): where they point, a peer's
 * NVSHMEM heap or its NCCL window, is the host side's business.
 *
 * Ordering vocabulary used below:
 * - A row's blocks (or warps) arrive on a per-pulse counter with
 *   atom.acq_rel.gpu.inc: release publishes the arriving block's stores at
 *   GPU scope, acquire lets the last arrival observe every other block's;
 *   its later system-scope release (st.release.sys) then carries all of them
 *   to the peer (cumulativity). atom.inc wraps at the bound, so each counter
 *   is back at zero after every complete launch and nothing is reset.
 * - Waits spin with relaxed system-scope loads and acquire once the value
 *   matches (hxi_dev_wait_eq), bounded by the transport's timeout; a barrier
 *   (__syncwarp / __syncthreads) then extends the acquire to the other
 *   threads before they read the guarded data.
 * - A timed-out wait records itself (hxi_gpu timeout record, d_hit); the
 *   last arrival checks d_hit and then does not publish, so a lost step
 *   cascades into timeouts on the peers instead of wrong data.
 */
#include "transport/fused/fused.h"
#include "transport/gpu/gpu_dev.cuh"
#include "transport/gpu/pack_dev.cuh"

#ifdef HALOX_HAVE_NVSHMEM
#include "transport/nvshmem/put_dev.cuh"
#else
/* Built without NVSHMEM (nccl-dev alone): only the load/store modes exist,
 * and the host never chooses a put mode (HXI_FZ_X_PUT_*, HXI_FZ_FS_PUT_*).
 * Reaching one anyway is a bug: the kernel traps, and the host reports the
 * launch's error rather than a wrong halo. */
static __device__ __forceinline__ void hxi_put_slice(int n, int unit, int b, int nb, int *lo,
                                                     int *hi)
{
    (void) unit, (void) b, (void) nb;
    *lo = 0;
    *hi = n;
}
static __device__ void hxi_put_complete(float *, const float *, size_t, int, bool)
{
    __trap();
}
static __device__ void hxi_put_signal(uint64_t *, uint64_t, int)
{
    __trap();
}
#endif

/* --------------------------------------------------------------- helpers */

static __device__ __forceinline__ int fz_hit(const hxi_fz_args &a)
{
    return *(volatile const int *) a.d_hit != 0;
}

/* One thread waits, bounded, for *slot == step. kind 0: coordinates, 1: forces. */
static __device__ int fz_wait(const hxi_fz_args &a, const uint64_t *slot, uint64_t step, int pulse,
                              int dim, int kind, int peer)
{
    hxi_gpu_wait_info w;
    w.step = step;
    w.timeout_ns = a.timeout_ns;
    w.rank = a.rank;
    w.peer = peer;
    w.pulse = pulse;
    w.dim = dim;
    w.kind = kind;
    w.pad_ = 0;
    return hxi_dev_wait_eq(slot, &w, a.d_hit, a.rec);
}

/* Warp-collective: lane 0 waits for the signals of the pulses that
 * delivered the map entries [lo, hi) (dependent entries only), skipping
 * those this warp has already seen arrive (*seen, lane 0's mask). The
 * __syncwarp after the acquire orders it before the other lanes' loads. */
static __device__ int fz_wait_deps(const hxi_fz_args &a, const hxi_fz_pulse *P, uint64_t step,
                                   int lo, int hi, uint32_t *seen)
{
    int ok = 1;
    if ((threadIdx.x & 31) == 0) {
        for (int s = P->seg_begin; s < P->seg_end && ok; s++) {
            const hxi_fz_seg g = a.segs[s];
            if (g.end <= lo || g.begin >= hi || (*seen >> g.src & 1u))
                continue;
            const hxi_fz_pulse *Q = a.pulses + g.src;
            ok = fz_wait(a, a.sig + g.src, step, g.src, Q->g.dim, 0, Q->g.recv_rank);
            if (ok)
                *seen |= 1u << g.src;
        }
    }
    __syncwarp();
    return __shfl_sync(0xffffffffu, ok, 0);
}

#include "transport/fused/fields_dev.cuh"

/* ------------------------------------------------------------ coordinates */

/* One row (pulse) of the coordinate kernel, plain stores. Direct path:
 * warps take chunks of 32 map entries round-robin over the row; home
 * entries come first in every map, so a warp packs what is independent
 * before it meets a chunk that needs an earlier pulse. Put path: each block
 * takes its own slice of whole chunks (put_dev.cuh), its warps round-robin
 * within it, and puts the slice once it is staged. Each chunk is gathered
 * into shared memory and written out as 96 consecutive floats, so that each
 * store instruction covers one contiguous 128-byte line of the destination
 * (the peer's array over NVLink, or our staging slot). Then the row's
 * blocks arrive on the pulse counter; the last one publishes: the release
 * of the direct path, or the put path's signal. */
static __device__ void fz_row_plain(const hxi_fz_args &a, const hxi_fz_pulse *P, int p,
                                    uint64_t step, float *wbuf, int *s_last)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int n = P->g.nsend, nh = P->g.nsend_home;
    const hxi_fshift shift = P->g.shift;
    const int *map = a.maps + P->g.map_offset;
    float *dst = P->xdst;
    const bool put = P->xmode != HXI_FZ_X_DIRECT;
    int lo = 0, hi = n, k0 = blockIdx.x * HXI_FZ_WARPS + warp, dk = gridDim.x * HXI_FZ_WARPS;
    if (put) {
        hxi_put_slice(n, 32, blockIdx.x, gridDim.x, &lo, &hi);
        k0 = lo / 32 + warp;
        dk = HXI_FZ_WARPS;
    }
    const int nchunks = hi > lo ? (hi + 31) / 32 : 0; /* a block past the end: none */
    uint32_t seen = 0;
    for (int k = k0; k < nchunks; k += dk) {
        const int c0 = 32 * k, c1 = min(hi, c0 + 32);
        if (c1 > nh && !fz_wait_deps(a, P, step, max(c0, nh), c1, &seen))
            break;
        const int i = c0 + lane;
        if (i < c1) {
            float v0, v1, v2;
            hxi_dev_load_shifted(a.x, map[i], shift, v0, v1, v2);
            wbuf[3 * lane + 0] = v0;
            wbuf[3 * lane + 1] = v1;
            wbuf[3 * lane + 2] = v2;
        }
        __syncwarp();
        float *d = dst + 3 * (size_t) c0;
        const int m = 3 * (c1 - c0);
        for (int j = lane; j < m; j += 32)
            d[j] = wbuf[j];
        __syncwarp();
    }
    if (put) {
        /* A timed-out wait left the slice incomplete: nothing is put, and
         * the last block below does not signal. The block decides as one
         * (the put is block-collective). */
        __syncthreads();
        if (threadIdx.x == 0)
            *s_last = fz_hit(a);
        __syncthreads();
        const size_t m = *s_last ? 0 : 3 * (size_t) (hi - lo);
        hxi_put_complete(P->xput_dst + 3 * (size_t) lo, dst + 3 * (size_t) lo, m, P->g.send_rank,
                         P->xmode == HXI_FZ_X_PUT_BLOCK);
    }
    __syncthreads();
    if (threadIdx.x == 0)
        *s_last =
            hxi_dev_inc_acq_rel_gpu(a.cnt + HXI_FZ_CNT_FWD + p, gridDim.x - 1) == gridDim.x - 1 &&
            !fz_hit(a);
    __syncthreads();
    if (!*s_last || threadIdx.x != 0)
        return;
    if (put)
        hxi_put_signal(P->xsig, step, P->g.send_rank);
    else
        hxi_dev_st_release_sys(P->xsig, step);
}

/* One row of the coordinate kernel with bulk copies (direct path only).
 * Chunk boundaries follow the destination: chunk 0 holds the xhead entries
 * before the first 16-byte aligned destination atom (plain stores), every
 * later chunk starts aligned. A warp gathers its chunk into one of its two
 * shared buffers, fences the writes for the async proxy, and lane 0 issues
 * one cp.async.bulk of the chunk's largest multiple of 4 atoms (48 bytes,
 * a multiple of 16) to the peer; the 1 to 3 atoms left over are stored by
 * their lanes. No barrier between warps. Lane 0 waits for its copies to
 * complete (wait_group 0) before the warp arrives on the pulse counter
 * (counted in warps); the last warp publishes. */
static __device__ void fz_row_tma(const hxi_fz_args &a, const hxi_fz_pulse *P, int p, uint64_t step,
                                  float (*bufs)[96])
{
    const int lane = threadIdx.x & 31;
    const int n = P->g.nsend, nh = P->g.nsend_home, head = P->xhead;
    const hxi_fshift shift = P->g.shift;
    const int *map = a.maps + P->g.map_offset;
    float *dst = P->xdst;
    const int nwarps = gridDim.x * HXI_FZ_WARPS;
    const int base = head > 0 ? head - 32 : 0;
    const int nchunks = (n - base + 31) / 32;
    uint32_t seen = 0;
    int b = 0;
    for (int k = blockIdx.x * HXI_FZ_WARPS + (threadIdx.x >> 5); k < nchunks; k += nwarps) {
        const int c0 = max(0, base + 32 * k), c1 = min(n, base + 32 * (k + 1));
        if (c1 > nh && !fz_wait_deps(a, P, step, max(c0, nh), c1, &seen))
            break;
        const int i = c0 + lane;
        float v0 = 0.f, v1 = 0.f, v2 = 0.f;
        if (i < c1)
            hxi_dev_load_shifted(a.x, map[i], shift, v0, v1, v2);
        const int nb = c0 >= head ? ((c1 - c0) & ~3) : 0;
        if (nb > 0) {
            float *buf = bufs[b];
            /* The copy issued from this buffer two chunks ago must have
             * finished reading it. */
            if (lane == 0)
                asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
            __syncwarp();
            if (lane < nb) {
                buf[3 * lane + 0] = v0;
                buf[3 * lane + 1] = v1;
                buf[3 * lane + 2] = v2;
            }
            asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
            __syncwarp();
            if (lane == 0) {
                unsigned src = (unsigned) __cvta_generic_to_shared(buf);
                asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(
                                 dst + 3 * (size_t) c0),
                             "r"(src), "r"(nb * 12)
                             : "memory");
                asm volatile("cp.async.bulk.commit_group;" ::: "memory");
            }
            b ^= 1;
        }
        if (i >= c0 + nb && i < c1) {
            float *d = dst + 3 * (size_t) i;
            d[0] = v0;
            d[1] = v1;
            d[2] = v2;
        }
    }
    if (lane == 0) {
        asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
        /* The copies wrote through the async proxy; order them before the
         * generic-proxy release below. */
        asm volatile("fence.proxy.async.global;" ::: "memory");
    }
    __syncwarp();
    if (lane == 0) {
        const unsigned total = gridDim.x * HXI_FZ_WARPS;
        if (hxi_dev_inc_acq_rel_gpu(a.cnt + HXI_FZ_CNT_FWD + p, total - 1) == total - 1 &&
            !fz_hit(a))
            hxi_dev_st_release_sys(P->xsig, step);
    }
}

/* The coordinate exchange of one step, all pulses.
 * Grid: (bx, npulses); blockIdx.y is the pulse in plan order, so a pulse
 * waits only on rows of lower index (dispatched first) and on peers. Block
 * size HXI_FZ_THREADS.
 * Step: every block reads the device step counter at entry and uses it + 1;
 * the last block of the grid to finish (exit counter) stores it, so a
 * replayed graph runs the next step each time and the reverse kernel,
 * next on the stream, reads this step's value.
 * Per row: home entries are packed at once; dependent entries wait for the
 * signals of the pulses that delivered them (warp granularity); the last
 * block (plain) or warp (TMA) publishes to send_rank: one st.release.sys
 * of the step into its slot after direct stores, or a put with signal from
 * the staging slot. Thread 0 of block 0 of each row then waits for our own
 * incoming pulse, so the kernel's completion means the halo is complete.
 * a.order (a full-shell plan, where no reverse exchange tells a rank that
 * its peer has read the last halo): at entry each row that receives tells
 * its sender that the halo is free (whatever read it ran before this
 * kernel on the stream), and each row that sends waits for that word from
 * its receiver before its first store: a pairwise vote inside the kernel
 * (hxi_shm_order's vote is a kernel of its own before this one). */
template <bool TMA>
__global__ void __launch_bounds__(HXI_FZ_THREADS) hxi_k_fz_forward(const hxi_fz_args a)
{
    __shared__ uint64_t s_step;
    __shared__ int s_last, s_free;
    __shared__ __align__(128) float s_buf[HXI_FZ_WARPS][TMA ? 2 : 1][96];
    const int p = blockIdx.y;
    const hxi_fz_pulse *P = a.pulses + p;
    hxi_dev_launch_dependents(); /* every block resident: the next kernel may start */
    if (a.gate && *(const volatile int32_t *) a.gate)
        return; /* gated: every block alike, the step not counted */
    if (threadIdx.x == 0) {
        s_step = hxi_dev_ld_relaxed_gpu(a.step) + 1;
        s_free = 1;
        if (a.order && P->g.nrecv > 0 && blockIdx.x == 0)
            hxi_dev_st_release_sys(P->free_peer, s_step);
        if (a.order && P->g.nsend > 0)
            s_free = fz_wait(a, a.ack + p, s_step, p, P->g.dim, 0, P->g.send_rank);
    }
    __syncthreads();
    const uint64_t step = s_step;
    if (P->g.nsend > 0 && step != a.withhold_step && s_free) {
        if (a.fld.n > 0)
            fz_fields_row(a, P, p, step);
        if (TMA && P->xmode == HXI_FZ_X_DIRECT && P->xhead >= 0)
            fz_row_tma(a, P, p, step, s_buf[threadIdx.x >> 5]);
        else
            fz_row_plain(a, P, p, step, s_buf[threadIdx.x >> 5][0], &s_last);
    }
    if (P->g.nrecv > 0 && blockIdx.x == 0 && threadIdx.x == 0)
        fz_wait(a, a.sig + p, step, p, P->g.dim, 0, P->g.recv_rank);
    __syncthreads();
    if (a.fld.n > 0 && P->g.nrecv > 0)
        fz_fields_land(a, P, p, step);
    if (threadIdx.x == 0) {
        const unsigned total = gridDim.x * gridDim.y;
        if (hxi_dev_inc_acq_rel_gpu(a.cnt + HXI_FZ_CNT_EXIT, total - 1) == total - 1)
            hxi_dev_st_relaxed_gpu(a.step, step);
    }
}

/* ----------------------------------------------------------------- forces */

/* Block arrival on a counter; the last block's thread 0 publishes `step`
 * into the peer's slot: a system-scope release into its memory (pe < 0),
 * or the put path's signal to pe. */
static __device__ void fz_arrive_publish(const hxi_fz_args &a, unsigned *cnt, uint64_t *sig,
                                         uint64_t step, int pe)
{
    __syncthreads();
    if (threadIdx.x != 0 || hxi_dev_inc_acq_rel_gpu(cnt, gridDim.x - 1) != gridDim.x - 1 ||
        fz_hit(a))
        return;
    if (pe < 0)
        hxi_dev_st_release_sys(sig, step);
    else
        hxi_put_signal(sig, step, pe);
}

/* The reverse kernel's sending side of pulse p (we hold its halo forces,
 * f[recv_offset, +nrecv), for recv_rank): thread 0 waits for the later
 * pulses that add into that range (done flags, or a peer's completed
 * remote atomics) and, atomic, for the peer's "ready"; then the mode's
 * transfer (see hxi_k_fz_reverse). With fields (a.fld.n > 0; direct
 * push or pull only), the blocks first copy the pulse's halo values into
 * our landing buffer (fz_fields_stage), and in pull mode, too, every
 * block arrives on the send counter, so that the last one's release of
 * the force signal publishes every block's stores. s_ok: the block's
 * shared flag. */
template <bool FLD>
static __device__ __forceinline__ void fz_send_forces(const hxi_fz_args &a, const hxi_fz_pulse *P,
                                                      int p, uint64_t step, int tid, int nthr,
                                                      int fsig, int *s_ok)
{
    if (threadIdx.x == 0) {
        int ok = 1;
        for (uint64_t m = P->send_after_done; m && ok; m &= m - 1) {
            const int q = __ffsll((long long) m) - 1;
            ok = fz_wait(a, a.done + q, step, q, a.pulses[q].g.dim, 1, a.pulses[q].g.send_rank);
        }
        for (uint64_t m = P->send_after_fsig; m && ok; m &= m - 1) {
            const int q = __ffsll((long long) m) - 1;
            ok = fz_wait(a, a.sig + fsig + q, step, q, a.pulses[q].g.dim, 1,
                         a.pulses[q].g.send_rank);
        }
        if (ok && P->fsend == HXI_FZ_FS_ATOMIC)
            ok = fz_wait(a, a.ack + p, step, p, P->g.dim, 1, P->g.recv_rank);
        *s_ok = ok && !fz_hit(a);
    }
    __syncthreads();
    const int ok = *s_ok;
    const float *src = a.f + 3 * (size_t) P->g.recv_offset;
    const int m3 = 3 * P->g.nrecv;
    if (FLD && ok && a.fld.n > 0) /* only with direct or pull (fused_fields.c) */
        fz_fields_stage(a, P, tid, nthr);
    switch (P->fsend) {
    case HXI_FZ_FS_DIRECT:
        if (ok)
            for (int j = tid; j < m3; j += nthr)
                P->fdst[j] = src[j];
        fz_arrive_publish(a, a.cnt + HXI_FZ_CNT_SEND + p, P->fsig, step, -1);
        break;
    case HXI_FZ_FS_PUT_BLOCK:
    case HXI_FZ_FS_PUT_THREAD: {
        int lo, hi;
        hxi_put_slice(P->g.nrecv, 1, blockIdx.x, gridDim.x, &lo, &hi);
        hxi_put_complete(P->fdst + 3 * (size_t) lo, src + 3 * (size_t) lo,
                         ok ? 3 * (size_t) (hi - lo) : 0, P->g.recv_rank,
                         P->fsend == HXI_FZ_FS_PUT_BLOCK);
        fz_arrive_publish(a, a.cnt + HXI_FZ_CNT_SEND + p, P->fsig, step, P->g.recv_rank);
        break;
    }
    case HXI_FZ_FS_PULL:
        if (FLD && a.fld.n > 0) /* every block staged fields: the last one publishes */
            fz_arrive_publish(a, a.cnt + HXI_FZ_CNT_SEND + p, P->fsig, step, -1);
        else if (ok && blockIdx.x == 0 && threadIdx.x == 0)
            hxi_dev_st_release_sys(P->fsig, step);
        break;
    case HXI_FZ_FS_ATOMIC:
        if (ok)
            for (int i = tid; i < P->g.nrecv; i += nthr) {
                float *d = P->fdst + 3 * (size_t) P->pmap[i];
                atomicAdd(d + 0, src[3 * i + 0]);
                atomicAdd(d + 1, src[3 * i + 1]);
                atomicAdd(d + 2, src[3 * i + 2]);
            }
        fz_arrive_publish(a, a.cnt + HXI_FZ_CNT_SEND + p, P->fsig, step, -1);
        break;
    }
    __syncthreads(); /* s_ok is written again below */
}

/* The reverse kernel's receiving side of pulse p in push and pull mode
 * (forces on our map entries, from send_rank): thread 0 waits for the
 * pulse's signal and for the unpacks of later pulses that share atoms,
 * the block adds (the fields too, from send_rank's landing buffer), and
 * the last block raises the done flag (GPU-scope release) and, pull or
 * with fields, acks to the owner. s_ok: the block's shared flag. */
template <bool FLD>
static __device__ __forceinline__ void fz_unpack_forces(const hxi_fz_args &a, const hxi_fz_pulse *P,
                                                        int p, uint64_t step, int tid, int nthr,
                                                        int fsig, int *s_ok)
{
    if (threadIdx.x == 0) {
        int ok = fz_wait(a, a.sig + fsig + p, step, p, P->g.dim, 1, P->g.send_rank);
        for (uint64_t m = P->unpack_after; m && ok; m &= m - 1) {
            const int q = __ffsll((long long) m) - 1;
            ok = fz_wait(a, a.done + q, step, q, a.pulses[q].g.dim, 1, a.pulses[q].g.send_rank);
        }
        *s_ok = ok;
    }
    __syncthreads();
    if (*s_ok) {
        const int *map = a.maps + P->g.map_offset;
        const float *in = P->fsrc;
        for (int i = tid; i < P->g.nsend; i += nthr) {
            float *d = a.f + 3 * (size_t) map[i];
            const float v0 = in[3 * i + 0], v1 = in[3 * i + 1], v2 = in[3 * i + 2];
            if (a.unpack_atomic) {
                atomicAdd(d + 0, v0);
                atomicAdd(d + 1, v1);
                atomicAdd(d + 2, v2);
            } else {
                d[0] += v0;
                d[1] += v1;
                d[2] += v2;
            }
        }
        if (FLD && a.fld.n > 0)
            fz_fields_add(a, P, p, tid, nthr);
    }
    __syncthreads();
    if (threadIdx.x == 0 &&
        hxi_dev_inc_acq_rel_gpu(a.cnt + HXI_FZ_CNT_UNPACK + p, gridDim.x - 1) == gridDim.x - 1 &&
        !fz_hit(a)) {
        hxi_dev_st_release_gpu(a.done + p, step);
        if (P->frecv == HXI_FZ_F_PULL || (FLD && a.fld.n > 0)) /* done reading its memory */
            hxi_dev_st_release_sys(P->ack_peer, step);
    }
}

/* The force exchange of one step, all pulses in reverse.
 * Grid: (bx, npulses); row r serves pulse npulses - 1 - r, so a pulse
 * waits only on rows of lower index (later pulses) and on peers. Block
 * size HXI_FZ_THREADS. The step is the one the forward kernel stored.
 * Sending pulse p's halo forces (f[recv_offset, +nrecv) to recv_rank):
 * thread 0 of each block first waits until every later pulse that adds
 * into that range has done so (their local done flags, or the signal that a
 * peer's remote atomics into it are complete), then the mode's transfer:
 * direct push (stores into the peer's staging slot; last block publishes),
 * put with signal from f, pull (publish "ready", the peer reads and acks),
 * or atomic (wait for the peer's "ready", remote atomic adds through the
 * peer's map; last block publishes). Receiving (our map entries, from
 * send_rank): push and pull wait for the pulse's signal and for the
 * unpacks of later pulses that share atoms, then add; the last block
 * raises the pulse's done flag (GPU-scope release) and, for pull, acks to
 * the owner. Atomic: our array is announced ready at entry, and thread 0 of
 * the row's block 0 waits at the end for the peer's completion signal.
 * Pull senders wait at the end for the ack, so the kernel's completion
 * means our forces are final and no peer still reads our array.
 * Fields (a.fld.n > 0, only where every pulse is direct push or pull):
 * they ride each pulse's forces, staged by the sender into its own
 * landing buffer before the force signal and added by the receiver with
 * the forces, after the same waits, so in the same order
 * (fields_dev.cuh); the receiver then acks in push mode too, and every
 * sender waits for it at the end, so that no peer still reads our
 * landing buffer either once the kernel is complete. FLD: the kernel
 * has the field code, launched only with fields, so that the forces alone
 * run the kernel they ran before fields rode the reverse. */
template <bool FLD>
__global__ void __launch_bounds__(HXI_FZ_THREADS) hxi_k_fz_reverse(const hxi_fz_args a)
{
    __shared__ uint64_t s_step;
    __shared__ int s_ok;
    const int p = a.npulses - 1 - (int) blockIdx.y;
    const hxi_fz_pulse *P = a.pulses + p;
    /* Launched with PDL (hxi_fz_reverse): its blocks may be resident
     * before the kernel that writes the forces (the GPU engine's non-local
     * forces with HALOX_MD_PDL) has ended; nothing is read before. */
    hxi_dev_grid_wait();
    if (a.gate && *(const volatile int32_t *) a.gate)
        return; /* gated */
    if (threadIdx.x == 0)
        s_step = hxi_dev_ld_relaxed_gpu(a.step);
    __syncthreads();
    const uint64_t step = s_step;
    if (step == 0)
        return; /* no forward yet: nothing was sent */
    const int tid = blockIdx.x * blockDim.x + threadIdx.x;
    const int nthr = gridDim.x * blockDim.x;
    const int fsig = a.fsig_base;

    if (P->g.nsend > 0 && P->frecv == HXI_FZ_F_ATOMIC && blockIdx.x == 0 && threadIdx.x == 0)
        hxi_dev_st_release_sys(P->ack_peer, step);

    if (P->g.nrecv > 0)
        fz_send_forces<FLD>(a, P, p, step, tid, nthr, fsig, &s_ok);

    if (P->g.nsend > 0 && P->frecv != HXI_FZ_F_ATOMIC)
        fz_unpack_forces<FLD>(a, P, p, step, tid, nthr, fsig, &s_ok);

    if (blockIdx.x == 0 && threadIdx.x == 0) {
        if (P->g.nsend > 0 && P->frecv == HXI_FZ_F_ATOMIC)
            fz_wait(a, a.sig + fsig + p, step, p, P->g.dim, 1, P->g.send_rank);
        if (P->g.nrecv > 0 && (P->fsend == HXI_FZ_FS_PULL || (FLD && a.fld.n > 0)))
            fz_wait(a, a.ack + p, step, p, P->g.dim, 1, P->g.recv_rank);
    }
}

/* ------------------------------------------------------------- ping-pong */

/* The floor probe: the same publish pattern as one pulse of the fused
 * kernel, repeated. Grid: bx blocks; every block stores its share of
 * `nfloat` floats into the peer's buffer, arrives on `cnt`; the last block
 * publishes the round's value with st.release.sys; then thread 0 of every
 * block waits (acquire) for the peer's answer before the next round. Role
 * 1 waits first, then answers. Role 0's thread 0 of block 0 times the
 * rounds after the warm-up with %globaltimer. Waits give up after 10 s. */
__global__ void __launch_bounds__(HXI_FZ_THREADS)
    hxi_k_fz_pingpong(int role, float *peer_buf, uint64_t *peer_flag, const uint64_t *my_flag,
                      const float *src, long nfloat, int iters, int warm, uint64_t base,
                      unsigned *cnt, uint64_t *ns)
{
    __shared__ int s_ok;
    const long tid = (long) blockIdx.x * blockDim.x + threadIdx.x;
    const long nthr = (long) gridDim.x * blockDim.x;
    uint64_t t0 = 0;
    int ok = 1;
    for (int r = 1; r <= warm + iters && ok; r++) {
        const uint64_t v = base + (uint64_t) r;
        if (role == 0 && r == warm + 1 && tid == 0)
            t0 = hxi_dev_clock_ns();
        for (int turn = 0; turn < 2; turn++) {
            if (turn == role) {
                for (long j = tid; j < nfloat; j += nthr)
                    peer_buf[j] = src[j];
                __syncthreads();
                if (threadIdx.x == 0 &&
                    hxi_dev_inc_acq_rel_gpu(cnt, gridDim.x - 1) == gridDim.x - 1)
                    hxi_dev_st_release_sys(peer_flag, v);
            } else {
                if (threadIdx.x == 0) {
                    const uint64_t start = hxi_dev_clock_ns();
                    int got = 0;
                    while (!(got = hxi_dev_ld_acquire_sys(my_flag) == v) &&
                           hxi_dev_clock_ns() - start < 10000000000ull)
                        ;
                    s_ok = got;
                }
                __syncthreads();
                ok = s_ok;
            }
        }
    }
    if (role == 0 && tid == 0)
        *ns = ok ? hxi_dev_clock_ns() - t0 : 0;
}

/* -------------------------------------------------------------- launchers */

extern "C" cudaError_t hxi_fz_forward(cudaStream_t s, const hxi_fz_args *a, int bx, int tma)
{
    dim3 grid(bx < 1 ? 1 : bx, a->npulses);
    if (tma)
        hxi_k_fz_forward<true><<<grid, HXI_FZ_THREADS, 0, s>>>(*a);
    else
        hxi_k_fz_forward<false><<<grid, HXI_FZ_THREADS, 0, s>>>(*a);
    return cudaGetLastError();
}

/* With programmatic stream serialisation: a kernel before it that lets
 * its dependents start early (griddepcontrol.launch_dependents) saves it
 * the launch; the kernel waits at entry for that one's end, so it starts
 * as a plain launch would after any other. */
extern "C" cudaError_t hxi_fz_reverse(cudaStream_t s, const hxi_fz_args *a, int bx)
{
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.gridDim = dim3(bx < 1 ? 1 : bx, a->npulses);
    cfg.blockDim = dim3(HXI_FZ_THREADS);
    cfg.stream = s;
    cfg.attrs = at;
    cfg.numAttrs = 1;
    return a->fld.n > 0 ? cudaLaunchKernelEx(&cfg, hxi_k_fz_reverse<true>, *a)
                        : cudaLaunchKernelEx(&cfg, hxi_k_fz_reverse<false>, *a);
}

extern "C" int hxi_fz_blocks_per_sm(int tma)
{
    int f = 0, r = 0, r0 = 0;
    cudaError_t e1 = tma ? cudaOccupancyMaxActiveBlocksPerMultiprocessor(&f, hxi_k_fz_forward<true>,
                                                                         HXI_FZ_THREADS, 0)
                         : cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                               &f, hxi_k_fz_forward<false>, HXI_FZ_THREADS, 0);
    /* Both reverse kernels: the grid is sized once, fields or not. */
    cudaError_t e2 = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&r, hxi_k_fz_reverse<true>,
                                                                   HXI_FZ_THREADS, 0);
    cudaError_t e3 = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&r0, hxi_k_fz_reverse<false>,
                                                                   HXI_FZ_THREADS, 0);
    if (e1 != cudaSuccess || e2 != cudaSuccess || e3 != cudaSuccess) {
        (void) cudaGetLastError();
        return 1;
    }
    r = r0 < r ? r0 : r;
    int m = f < r ? f : r;
    return m < 1 ? 1 : m;
}

extern "C" cudaError_t hxi_fz_pingpong(cudaStream_t s, int role, float *peer_buf,
                                       uint64_t *peer_flag, const uint64_t *my_flag,
                                       const float *src, long nfloat, int bx, int iters, int warm,
                                       uint64_t base, unsigned *cnt, uint64_t *ns)
{
    const dim3 grid(bx < 1 ? 1 : bx);
    hxi_k_fz_pingpong<<<grid, HXI_FZ_THREADS, 0, s>>>(role, peer_buf, peer_flag, my_flag, src,
                                                      nfloat, iters, warm, base, cnt, ns);
    return cudaGetLastError();
}
