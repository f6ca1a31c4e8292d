/*
 * md_kernels.cu - the GPU engine's step kernels: the integrator, and the
 * thin extern "C" launchers of it and of the pair forces over full
 * neighbour lists (md_force.cuh, compiled in md_force.cu and
 * md_force_tri.cu); all set-up arithmetic is done on the host
 * (src/md/gpu/*.c).
 * The cell and list builds and the single-rank rebuild are in md_lists.cu,
 * the small kernels beside the step (vote, copies, types) in md_small.cu.
 *
 * Why full lists: every pair appears in the lists of both of its atoms, so
 * each thread (group) owns the force of one atom and writes it once: no
 * atomics, no clearing of force arrays, and the closing half-kick can be
 * fused into the force kernel when no force halo is pending. The price is
 * computing each pair twice, which on this chip costs less than the
 * scattered atomic adds of a half list (see docs/md-gpu.md).
 */
#include "md_force.cuh"              /* hxg_force_box, hxg_block_acc */
#include "transport/gpu/gpu_dev.cuh" /* hxi_last_block */

/* ------------------------------------------------------------ integrator */

/* The closing kick of atom i: the halo-side force f3 (when given) added
 * into f (stored), then v += dtf f (when dtf != 0); hxg_k_kick and a
 * kick-drift that closes the step before (fclose) share it, so both do the
 * same float operations in the same order. */
__device__ __forceinline__ void hxg_close_kick(int i, float4 *__restrict__ f,
                                               const float *__restrict__ f3, float dtf, float4 &fi,
                                               float4 &vi)
{
    if (f3) {
        fi.x += f3[3 * (size_t) i];
        fi.y += f3[3 * (size_t) i + 1];
        fi.z += f3[3 * (size_t) i + 2];
        f[i] = fi;
    }
    if (dtf != 0.0f) {
        vi.x += dtf * fi.x;
        vi.y += dtf * fi.y;
        vi.z += dtf * fi.z;
    }
}

/* One thread per home atom. vscale: fix nvt's factor, read by every
 * thread (one word, cached). The step comes from the host or, for steps
 * replayed from a CUDA graph, from flags->cur (which only the closing force
 * kernel of a step changes). Block 0's first threads also clear the thermo
 * accumulators on a thermo step; every kernel that adds to them runs after
 * this one (same stream, or the non-local stream waits for its event). The
 * moved flag is a plain store of the step number: all writers store the
 * same value, and the flag never needs resetting. NaN distances count as
 * moved, so that a broken state reaches a rebuild and its checks.
 * DECIDE (one rank, a candidate step replayed from a graph): the last block
 * to finish (hxi_last_block) stores the rebuild decision of
 * hxg_rebuild_single's gate (step % every == 0, step - last_build >=
 * delay, with check the moved flag) into the graph's conditional node
 * `cond`, reading the flags past the L1 (volatile), which may still hold
 * the line read for halt. While flags->halt no block counts, and the
 * condition keeps its default, 0. */
template <bool DECIDE, bool TYPED>
__global__ void hxg_k_kickdrift(int n, float4 *__restrict__ x, float4 *__restrict__ v,
                                float4 *__restrict__ f, const float4 *__restrict__ xold,
                                float *__restrict__ x3, const float *__restrict__ fclose, float dtf,
                                float dt, const float *__restrict__ vscale, int neigh_check,
                                int every, float trig2, long long step, hxg_flags *flags,
                                double *acc_zero, int delay, cudaGraphConditionalHandle cond,
                                hxg_types ty)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    hxi_dev_launch_dependents(); /* the local forces with PDL (hxg_force_local) */
    if (flags && flags->halt)
        return; /* a list overflowed: the host finishes this step */
    if (step < 0)
        step = flags->cur;
    const bool check = neigh_check && step % every == 0;
    if (acc_zero && i < HXG_NACC)
        acc_zero[i] = 0.0;
    if (i < n) {
        float4 vi = v[i], xi = x[i];
        float4 fi = f[i];
        if (TYPED) /* the atom's type in the w of its position */
            dtf = hxg_by_type(ty.dtf, __float_as_int(xi.w));
        if (fclose) /* the step before's closing kick */
            hxg_close_kick(i, f, fclose, dtf, fi, vi);
        if (vscale) { /* fix nvt's first half step */
            const float s = *vscale;
            vi.x *= s;
            vi.y *= s;
            vi.z *= s;
        }
        vi.x += dtf * fi.x;
        vi.y += dtf * fi.y;
        vi.z += dtf * fi.z;
        xi.x += dt * vi.x;
        xi.y += dt * vi.y;
        xi.z += dt * vi.z;
        v[i] = vi;
        x[i] = xi;
        if (x3) {
            x3[3 * (size_t) i] = xi.x;
            x3[3 * (size_t) i + 1] = xi.y;
            x3[3 * (size_t) i + 2] = xi.z;
        }
        if (check) {
            const float4 o = xold[i];
            const float dx = xi.x - o.x, dy = xi.y - o.y, dz = xi.z - o.z;
            if (!(dx * dx + dy * dy + dz * dz <= trig2))
                flags->moved_step = step;
        }
    }
    if (!DECIDE || !hxi_last_block(&flags->kd_blocks) || threadIdx.x != 0)
        return;
    const volatile hxg_flags *vf = flags;
    const bool open = step % every == 0 && step - vf->last_build >= delay &&
                      (!neigh_check || vf->moved_step == step);
    cudaGraphSetConditional(cond, open ? 1u : 0u);
}

/* One thread per home atom: combines the local force with the halo-side
 * force the transport has reduced into f3, kicks, and optionally sums
 * m v^2 (block reduction, one double atomic per block and value). */
template <bool TYPED>
__global__ void hxg_k_kick(int n, float4 *__restrict__ v, float4 *__restrict__ f,
                           const float *__restrict__ f3, float dtf, float mass, double *acc,
                           const hxg_flags *flags, const float4 *__restrict__ x, hxg_types ty)
{
    if (flags && *(const volatile int32_t *) &flags->halt)
        return; /* the whole grid alike */
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    double mv2 = 0.0;
    if (i < n) {
        float4 fi = f[i], vi = v[i];
        if (TYPED) {
            const int t = __float_as_int(x[i].w);
            dtf = hxg_by_type(ty.dtf, t);
            mass = hxg_by_type(ty.mass, t);
        }
        hxg_close_kick(i, f, f3, dtf, fi, vi);
        if (dtf != 0.0f)
            v[i] = vi;
        mv2 = (double) mass * ((double) vi.x * vi.x + (double) vi.y * vi.y + (double) vi.z * vi.z);
    }
    if (acc)
        hxg_block_acc(0.0, 0.0, mv2, acc);
}

/* ------------------------------------------------------------ launchers */

/* The force kernel of the box's kind (md_force.cuh). */
static cudaError_t hxg_force(cudaStream_t s, int tpp, int xs, const hxg_force_k &k, bool pdl,
                             bool room)
{
    return k.g.tri ? hxg_force_box<true>(s, tpp, xs, k, pdl, room)
                   : hxg_force_box<false>(s, tpp, xs, k, pdl, room);
}

/* The kick-drift's kernel of DECIDE (and TYPED: several atom types). */
template <bool DECIDE, bool TYPED>
static void hxg_launch_kickdrift(cudaStream_t s, const hxg_atoms_view &a, const float *fclose,
                                 const hxg_consts &k, const hxg_decide &d, double *acc_zero,
                                 unsigned long long cond)
{
    const int block = 256;
    const int n = a.nhome;
    const int grid = hxg_blocks(n > HXG_NACC ? n : HXG_NACC, block);
    const int every = d.every > 0 ? d.every : 1;
    hxg_k_kickdrift<DECIDE, TYPED><<<grid, block, 0, s>>>(
        n, (float4 *) a.x4, (float4 *) a.v4, (float4 *) a.f4, (const float4 *) a.xold4, a.x3,
        fclose, k.dtf, k.dt, k.vscale, d.check, every, k.trig2, (long long) d.step, d.flags,
        acc_zero, d.delay, (cudaGraphConditionalHandle) cond, k.ty);
}

extern "C" int hxg_kickdrift(void *stream, hxg_atoms_view a, const float *fclose, hxg_consts k,
                             hxg_decide d, double *acc_zero, unsigned long long cond)
{
    cudaStream_t s = (cudaStream_t) stream;
    const bool typed = k.ty.n > 1;
    if (cond && typed)
        hxg_launch_kickdrift<true, true>(s, a, fclose, k, d, acc_zero, cond);
    else if (cond)
        hxg_launch_kickdrift<true, false>(s, a, fclose, k, d, acc_zero, cond);
    else if (typed)
        hxg_launch_kickdrift<false, true>(s, a, fclose, k, d, acc_zero, 0);
    else
        hxg_launch_kickdrift<false, false>(s, a, fclose, k, d, acc_zero, 0);
    return (int) cudaGetLastError();
}

extern "C" int hxg_kick(void *stream, hxg_atoms_view a, const float *f3, hxg_consts k, double *acc,
                        const hxg_flags *flags)
{
    const int n = a.nhome;
    if (n <= 0)
        return 0;
    const int block = 256;
    if (k.ty.n > 1)
        hxg_k_kick<true><<<hxg_blocks(n, block), block, 0, (cudaStream_t) stream>>>(
            n, (float4 *) a.v4, (float4 *) a.f4, f3, k.dtf, k.mass, acc, flags,
            (const float4 *) a.x4, k.ty);
    else
        hxg_k_kick<false><<<hxg_blocks(n, block), block, 0, (cudaStream_t) stream>>>(
            n, (float4 *) a.v4, (float4 *) a.f4, f3, k.dtf, k.mass, acc, flags,
            (const float4 *) a.x4, k.ty);
    return (int) cudaGetLastError();
}

extern "C" int hxg_force_local(void *stream, hxg_atoms_view a, hxg_lists_view l, hxg_consts k,
                               double *acc, hxg_flags *flags, int how)
{
    const bool kick = (how & HXG_FORCE_KICK) != 0;
    hxg_force_k f;
    f.n = a.nhome;
    f.idx = nullptr;
    f.x = a.x4;
    f.l = l.loc;
    f.lj = k.lj;
    f.g = a.geom;
    f.f = (how & HXG_FORCE_WRITE) ? a.f4 : nullptr;
    f.v = kick ? (float4 *) a.v4 : nullptr;
    f.dtf = kick ? k.dtf : 0.0f;
    f.mass = k.mass;
    f.acc = acc;
    f.flags = flags;
    f.ty = k.ty;
    return (int) hxg_force((cudaStream_t) stream, k.tpp, 4, f, (how & HXG_FORCE_PDL) && !flags,
                           k.room != 0);
}

extern "C" int hxg_force_nonlocal(void *stream, hxg_atoms_view a, hxg_lists_view l, hxg_consts k,
                                  double *acc, hxg_flags *flags, int how)
{
    hxg_force_k f;
    f.n = l.nl_n;
    f.idx = l.nl_idx;
    f.x = a.x3;
    f.l = l.nl;
    f.lj = k.lj;
    f.g = a.geom;
    f.f = (how & HXG_FORCE_WRITE) ? a.f3 : nullptr;
    f.v = nullptr;
    f.dtf = 0.0f;
    f.mass = 0.0f;
    f.acc = acc;
    f.flags = flags;
    f.ty = k.ty;
    return (int) hxg_force((cudaStream_t) stream, k.tpp_nl, 3, f, (how & HXG_FORCE_PDL) && !flags,
                           false);
}
