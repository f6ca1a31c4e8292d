/*
 * md_force.cuh - the GPU engine's pair forces over full neighbour lists:
 * the force kernel, its launch for each setting, and the block sums the
 * thermo steps share with the integrator (md_kernels.cu). A box's kind is
 * a template parameter: md_force.cu instantiates the orthorhombic kernels,
 * md_force_tri.cu the triclinic ones (the minimum image along tilted
 * edges), so that the two compile side by side and an orthorhombic box
 * pays nothing for tilts. md_kernels.cu includes this file for
 * hxg_force_box and instantiates nothing of it.
 */
#ifndef HALOX_MD_FORCE_CUH
#define HALOX_MD_FORCE_CUH

#include "md_dev.cuh"
#include "transport/gpu/gpu_dev.cuh" /* PDL */

/* ------------------------------------------------------------ helpers */

/* Adds the block's three partial sums to acc[0..2] in double. Every thread
 * of the block must call it (it has barriers). */
static __device__ void hxg_block_acc(double a0, double a1, double a2, double *acc)
{
    __shared__ double part[32][3];
    for (int o = 16; o > 0; o >>= 1) {
        a0 += __shfl_down_sync(HXG_FULL, a0, o);
        a1 += __shfl_down_sync(HXG_FULL, a1, o);
        a2 += __shfl_down_sync(HXG_FULL, a2, o);
    }
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) {
        part[warp][0] = a0;
        part[warp][1] = a1;
        part[warp][2] = a2;
    }
    __syncthreads();
    if (warp == 0) {
        const int nw = (blockDim.x + 31) >> 5;
        a0 = lane < nw ? part[lane][0] : 0.0;
        a1 = lane < nw ? part[lane][1] : 0.0;
        a2 = lane < nw ? part[lane][2] : 0.0;
        for (int o = 16; o > 0; o >>= 1) {
            a0 += __shfl_down_sync(HXG_FULL, a0, o);
            a1 += __shfl_down_sync(HXG_FULL, a1, o);
            a2 += __shfl_down_sync(HXG_FULL, a2, o);
        }
        if (lane == 0) {
            if (a0 != 0.0)
                atomicAdd(&acc[HXG_ACC_E], a0);
            if (a1 != 0.0)
                atomicAdd(&acc[HXG_ACC_W], a1);
            if (a2 != 0.0)
                atomicAdd(&acc[HXG_ACC_MV2], a2);
        }
    }
}

/* The arguments of hxg_k_force, in its order, as the launchers pass them
 * on (md_kernels.cu). */
struct hxg_force_k {
    int n;
    const int32_t *idx;
    const float *x;
    hxg_list l;
    hxg_lj lj;
    hxg_geom g;
    float *f;
    float4 *v;
    float dtf, mass;
    double *acc;
    hxg_flags *flags;
    hxg_types ty;
};

/* ---------------------------------------------------------------- forces */

/* 1/r2 in the pair loop: the hardware approximation (rcp.approx, one
 * instruction, within 1 ulp). The correctly rounded __frcp_rn is a
 * sequence with a slow path, which made the whole step much slower
 * (docs/md-gpu.md, "Why full lists and no atomics";
 * docs/results/force-2026-12-02.txt). */
__device__ __forceinline__ float hxg_rcp(float r2)
{
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(r2));
    return r;
}

/* F(r)/r and E(r) of style STYLE (pair_eval.h's float formulas): one
 * instantiation a style, so that no thread tests a style. */
template <int STYLE>
__device__ __forceinline__ float hxg_formula(const float *c, float r2, float &e)
{
#define HXG_FORMULA(ID, name)                                                                      \
    if (STYLE == HX_PAIR_##ID)                                                                     \
        return hxp_##name##_f(c, r2, &e);
    HX_PAIR_STYLES(HXG_FORMULA)
#undef HXG_FORMULA
    e = 0.0f;
    return 0.0f;
}

/* Adds the pair force on atom i from an atom at xj (minimum image along
 * the periodic dimensions) to f, and with THERMO half the pair's energy
 * and virial to e and w. lj/cut written out (the reciprocal without a
 * division), any other STYLE by its formula. Without branches: a pair
 * beyond the cutoff, or one that is not there (!ok, xj == xi), adds
 * zeros, so that the loads of the next pairs need not wait for this one's
 * test, and the sums are those without it, bit for bit. TYPED: the pair's
 * coefficients, cutoff and offset from pij (the types' entry of the
 * table), else from lj. */
template <bool THERMO, int STYLE, bool TYPED = false, bool TRI = false>
__device__ __forceinline__ void hxg_pair(float3 xi, float3 xj, const hxg_lj &lj, const hxg_geom &g,
                                         float3 &f, float &e, float &w, bool ok = true,
                                         const hxg_pair_ij *pij = nullptr)
{
    float dx = xi.x - xj.x, dy = xi.y - xj.y, dz = xi.z - xj.z;
    if (TRI) {
        /* z, then y, then x (LAMMPS's Domain::minimum_image): an image
         * along z moves y and x by its tilts, one along y moves x. With
         * tilts 0 this is the orthorhombic image below, bit for bit (the
         * images are whole numbers, so m * 0 adds an exact zero), at three
         * more operations a pair and a chain between the dimensions. */
        const float mz = rintf(dz * g.per_inv[2]);
        dz -= g.per_len[2] * mz;
        dy -= g.per_tilt[2] * mz;
        dx -= g.per_tilt[1] * mz;
        const float my = rintf(dy * g.per_inv[1]);
        dy -= g.per_len[1] * my;
        dx -= g.per_tilt[0] * my;
    } else {
        dz -= g.per_len[2] * rintf(dz * g.per_inv[2]);
        dy -= g.per_len[1] * rintf(dy * g.per_inv[1]);
    }
    dx -= g.per_len[0] * rintf(dx * g.per_inv[0]);
    const float r2 = dx * dx + dy * dy + dz * dz;
    const float *c = TYPED ? pij->c : lj.c;
    const bool in = ok && r2 < (TYPED ? pij->rc2 : lj.rc2);
    float fp, en = 0.0f, r6i = 0.0f;
    if (STYLE == HX_PAIR_LJ_CUT) {
        const float r2i = in ? hxg_rcp(r2) : 0.0f;
        r6i = r2i * r2i * r2i;
        fp = r6i * (c[0] * r6i - c[1]) * r2i;
    } else {
        /* r^2 1 for a pair that is out, so that no formula meets r = 0. */
        const float f1 = hxg_formula<STYLE>(c, in ? r2 : 1.0f, en);
        fp = in ? f1 : 0.0f;
    }
    f.x += dx * fp;
    f.y += dy * fp;
    f.z += dz * fp;
    if (THERMO) {
        if (STYLE == HX_PAIR_LJ_CUT)
            en = r6i * (c[2] * r6i - c[3]);
        e += in ? en - (TYPED ? pij->eoff : lj.eoff) : 0.0f;
        w += r2 * fp;
    }
}

/* The position of atom j and, TYPED, its type: from the w of a position
 * array of stride 4 (the same load), else from type[] (the local atoms'
 * types, several ranks). Without TYPED, t is left alone. */
template <int XS, bool CG, bool TYPED>
__device__ __forceinline__ float3 hxg_xtload(const float *__restrict__ x,
                                             const int32_t *__restrict__ type, int j, int &t)
{
    if (!TYPED)
        return hxg_xload<XS, CG>(x, j);
    if (XS == 4) {
        const float4 *p = reinterpret_cast<const float4 *>(x) + j;
        const float4 q = CG ? __ldcg(p) : __ldg(p);
        t = __float_as_int(q.w);
        return make_float3(q.x, q.y, q.z);
    }
    t = __ldg(type + j); /* made at the rebuild: read-only while the step runs */
    return hxg_xload<XS, CG>(x, j);
}

/* The typed kernels' table of pairs, copied into shared memory by the
 * block (every thread loads its share and waits for the rest): a row's
 * pairs are read by type, by threads of different types at once, which
 * the constant cache would serialise and shared memory serves in one
 * pass. The launch gives it ntypes^2 entries of dynamic shared memory
 * (hxg_tab_bytes: 192 bytes for two types), so that the L1 cache the
 * position loads go through keeps its size. Without TYPED: no table, no
 * shared memory. */
template <bool TYPED> struct hxg_tab {
    __device__ static __forceinline__ const hxg_pair_ij *load(const hxg_types &) { return nullptr; }
};

template <> struct hxg_tab<true> {
    __device__ static __forceinline__ const hxg_pair_ij *load(const hxg_types &ty)
    {
        extern __shared__ float4 hxg_tab_dyn[];
        hxg_pair_ij *tab = reinterpret_cast<hxg_pair_ij *>(hxg_tab_dyn);
        const int words = ty.n * ty.n * (int) (sizeof(hxg_pair_ij) / sizeof(float));
        const float *__restrict__ src = reinterpret_cast<const float *>(ty.pairs);
        float *dst = reinterpret_cast<float *>(tab);
        for (int k = threadIdx.x; k < words; k += blockDim.x)
            dst[k] = __ldg(src + k);
        __syncthreads();
        return tab;
    }
};

/* Dynamic shared memory a force launch gives the table. */
static inline size_t hxg_tab_bytes(bool typed, const hxg_types &ty)
{
    return typed ? sizeof(hxg_pair_ij) * (size_t) (ty.n * ty.n) : 0;
}

/* Neighbours a thread loads before it computes their pairs (its
 * neighbours k, k + TPP, ... k + (U-1) TPP): U independent chains of a list
 * load and a position load in flight per thread. 4: a shorter step than 2
 * or 8, and than the loop before, which the compiler unrolled with each
 * load after the previous pair's test (docs/md-gpu.md, "Why full lists
 * and no atomics"; docs/results/force-2026-12-02.txt). */
#define HXG_FORCE_UNROLL 4

/* Blocks an SM the force kernel is compiled for (__launch_bounds__'s
 * second argument; 0: none given). Without it ptxas keeps the kernel at 32
 * registers by issuing each neighbour's loads just before its pair, so
 * the U chains above are not in flight together; with 1 to 10 it takes 46
 * to 48 registers and issues the U list loads, then the U position loads,
 * at once (12: 40 registers). */
#ifndef HXG_FORCE_MINB
#define HXG_FORCE_MINB 0
#endif

/* 1: the last neighbours of a thread (fewer than U) are one batch of U
 * loads, those past the list masked, instead of one neighbour after the
 * other. */
#ifndef HXG_FORCE_TAIL
#define HXG_FORCE_TAIL 0
#endif

/* The same three for the non-local forces (positions of stride 3), whose
 * atoms have few neighbours each (a handful a thread at 8 threads an
 * atom): by default as the local ones'. */
#ifndef HXG_FORCE_UNROLL_NL
#define HXG_FORCE_UNROLL_NL HXG_FORCE_UNROLL
#endif
#ifndef HXG_FORCE_TAIL_NL
#define HXG_FORCE_TAIL_NL HXG_FORCE_TAIL
#endif
#ifndef HXG_FORCE_MINB_NL
#define HXG_FORCE_MINB_NL HXG_FORCE_MINB
#endif

/* TPP consecutive threads per atom i (i = thread / TPP); thread `sub` takes
 * neighbours sub, sub + TPP, ... of the column-major list, so a warp reads
 * rows of the list together, HXG_FORCE_UNROLL of them at a time. The TPP
 * partial forces meet by xor shuffles; thread sub == 0 writes the force
 * (overwrite: full list, no atomics) and, with KICK, applies the closing
 * half-kick. Energy and virial count half of each pair from each side. No
 * inter-block communication. */
/* One thread an atom (the largest systems, where the list loads set the
 * kernel's time): 8 neighbours a batch, the last ones one masked batch,
 * and room for the registers that keeps (8 blocks an SM): a shorter step
 * there than with the settings above, but a longer one at 8 threads an
 * atom, so those keep the ones above (docs/performance.md, "The force
 * kernel at one thread an atom"; docs/results/force-batch-2026-12-05.txt).
 * Thermo rows identical bit for bit (the same adds in the same order). */
#define HXG_TPP1_UNROLL 8
#define HXG_TPP1_TAIL   1
#define HXG_TPP1_MINB   8

/* Two and four threads an atom (a rank's local forces from a quarter of
 * the threads that fill the GPU to one fill, hxg_eng_choose_tpp): by
 * default the settings above. */
#ifndef HXG_TPP2_UNROLL
#define HXG_TPP2_UNROLL HXG_FORCE_UNROLL
#endif
#ifndef HXG_TPP2_TAIL
#define HXG_TPP2_TAIL HXG_FORCE_TAIL
#endif
#ifndef HXG_TPP2_MINB
#define HXG_TPP2_MINB HXG_FORCE_MINB
#endif
#ifndef HXG_TPP4_UNROLL
#define HXG_TPP4_UNROLL HXG_FORCE_UNROLL
#endif
#ifndef HXG_TPP4_TAIL
#define HXG_TPP4_TAIL HXG_FORCE_TAIL
#endif
#ifndef HXG_TPP4_MINB
#define HXG_TPP4_MINB HXG_FORCE_MINB
#endif

/* The local forces at two and four threads an atom where the rank's
 * non-local forces and exchange kernels (or another rank's, where ranks
 * share the GPU) run beside them: compiled for 12 blocks an SM (40
 * registers), which leaves a quarter of the SM's threads to those, and the
 * last neighbours as one masked batch: where ranks share a GPU this made
 * the step shorter (8 or 10 blocks an SM did as well). Alone, the kernel
 * of 32 registers (every slot of the SM taken) is faster at 2 threads an
 * atom, so one rank keeps it (docs/performance.md, "Room beside the local
 * forces"; docs/results/force-room-2026-12-05.txt). */
#define HXG_ROOM_UNROLL 4
#define HXG_ROOM_TAIL   1
#define HXG_ROOM_MINB   12

/* The settings of a kernel: by threads an atom, the non-local forces
 * (XS 3) at more than one thread an atom by their own, ROOM as above. */
#define HXG_SET(TPP, XS, ROOM, WHAT)                                                               \
    ((TPP) == 1   ? HXG_TPP1_##WHAT                                                                \
     : (XS) == 3  ? HXG_FORCE_##WHAT##_NL                                                          \
     : (ROOM)     ? HXG_ROOM_##WHAT                                                                \
     : (TPP) == 2 ? HXG_TPP2_##WHAT                                                                \
     : (TPP) == 4 ? HXG_TPP4_##WHAT                                                                \
                  : HXG_FORCE_##WHAT)

/* The TPP partial forces of an atom (and with THERMO its energy and
 * virial) summed by xor shuffles: every thread of the group ends with the
 * sums. */
template <int TPP, bool THERMO>
__device__ __forceinline__ void hxg_force_meet(float &fx, float &fy, float &fz, float &e, float &w)
{
#pragma unroll
    for (int o = TPP / 2; o > 0; o >>= 1) {
        fx += __shfl_xor_sync(HXG_FULL, fx, o);
        fy += __shfl_xor_sync(HXG_FULL, fy, o);
        fz += __shfl_xor_sync(HXG_FULL, fz, o);
        if (THERMO) {
            e += __shfl_xor_sync(HXG_FULL, e, o);
            w += __shfl_xor_sync(HXG_FULL, w, o);
        }
    }
}

/* TYPED (several atom types): each pair's coefficients, cutoff and offset
 * from the table of ty.pairs (in shared memory, hxg_pair_tab) by the two
 * atoms' types, the kick's dtf and mass by atom i's type; one type keeps
 * the kernel without it (TYPED false: no test in the loop, the loads and
 * arithmetic as before types came). */
template <int TPP, int XS, bool THERMO, bool WRITE, bool KICK, bool PDL, bool ROOM, int STYLE,
          bool TYPED, bool TRI>
__global__ void __launch_bounds__(128, HXG_SET(TPP, XS, ROOM, MINB))
    hxg_k_force(int n, const int32_t *__restrict__ idx, const float *__restrict__ x, hxg_list l,
                hxg_lj lj, hxg_geom g, float *__restrict__ f, float4 *__restrict__ v, float dtf,
                float mass, double *acc, hxg_flags *flags, hxg_types ty)
{
    constexpr int U = HXG_SET(TPP, XS, ROOM, UNROLL);
    constexpr bool TAIL = HXG_SET(TPP, XS, ROOM, TAIL);
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (PDL) /* the reverse exchange after the non-local forces waits at entry */
        hxi_dev_launch_dependents();
    if (flags) {
        if (flags->halt)
            return; /* the whole grid alike */
        if (t == 0 && XS == 4)
            flags->cur += 1; /* the local forces count steps; nothing here reads it */
    }
    /* Made at the set-up: no wait for the kernel before it (PDL). */
    const hxg_pair_ij *const tab = hxg_tab<TYPED>::load(ty);
    const int sub = t % TPP;
    const bool active = t / TPP < n;
    const int i = idx && active ? __ldg(idx + t / TPP) : t / TPP;
    float3 fi = make_float3(0.0f, 0.0f, 0.0f);
    float e = 0.0f, w = 0.0f;
    int ti = 0;                    /* TYPED: atom i's type */
    const hxg_pair_ij *row = NULL; /* TYPED: its row of the table */
    /* PDL: the kernel runs while the one before it on the stream (the
     * forward exchange, or the kick-drift) still does: the list's count and
     * row (made at the rebuild) are read first, the positions after that kernel's end, and
     * through coherent loads (the read-only path is for data that nothing
     * writes while the kernel runs). */
    int pre_cnt = 0, pre_row = 0;
    if (PDL) {
        pre_cnt = active ? __ldg(l.cnt + i) : 0;
        pre_row = l.row && active ? __ldg(l.row + i) : 0;
        /* Counts are never negative and rows never below -1 (an atom
         * without one): the test is always true, but it holds the wait
         * until both loads are in (the compiler would otherwise issue the
         * wait first). Every thread waits. */
        if ((pre_cnt | (pre_row + 1)) >= 0)
            hxi_dev_grid_wait();
    }
    if (active) {
        const float3 xi = hxg_xtload<XS, PDL, TYPED>(x, ty.type, i, ti);
        if (TYPED)
            row = tab + ti * ty.n;
        const int cnt = PDL ? pre_cnt : __ldg(l.cnt + i);
        const size_t stride = (size_t) l.stride;
        /* A compact list's row is read beside the count, not after it
         * (every local atom has one, -1 where it has no entries, and then
         * nothing is read through it): one memory round trip less before
         * the neighbours' loads. */
        const int32_t *__restrict__ nb =
            l.nb + (l.row ? (PDL ? pre_row : __ldg(l.row + i)) : i) + (size_t) sub * stride;
        int k = sub;
        for (; k + (U - 1) * TPP < cnt; k += U * TPP) {
            int j[U], tj[U];
            float3 xj[U];
#pragma unroll
            for (int u = 0; u < U; u++)
                j[u] = __ldg(nb + (size_t) u * TPP * stride);
            nb += (size_t) U * TPP * stride;
#pragma unroll
            for (int u = 0; u < U; u++)
                xj[u] = hxg_xtload<XS, PDL, TYPED>(x, ty.type, j[u], tj[u]);
#pragma unroll
            for (int u = 0; u < U; u++)
                hxg_pair<THERMO, STYLE, TYPED, TRI>(xi, xj[u], lj, g, fi, e, w, true,
                                                    TYPED ? row + tj[u] : nullptr);
        }
        if (TAIL) {
            if (k < cnt) { /* fewer than U left: entries k + u TPP < cnt */
                int j[U], tj[U];
                float3 xj[U];
#pragma unroll
                for (int u = 0; u < U; u++)
                    j[u] = k + u * TPP < cnt ? __ldg(nb + (size_t) u * TPP * stride) : -1;
#pragma unroll
                for (int u = 0; u < U; u++) {
                    tj[u] = ti;
                    xj[u] = j[u] >= 0 ? hxg_xtload<XS, PDL, TYPED>(x, ty.type, j[u], tj[u]) : xi;
                }
#pragma unroll
                for (int u = 0; u < U; u++)
                    hxg_pair<THERMO, STYLE, TYPED, TRI>(xi, xj[u], lj, g, fi, e, w, j[u] >= 0,
                                                        TYPED ? row + tj[u] : nullptr);
            }
        } else {
            for (; k < cnt; k += TPP) {
                int tj = ti;
                const float3 xj = hxg_xtload<XS, PDL, TYPED>(x, ty.type, __ldg(nb), tj);
                hxg_pair<THERMO, STYLE, TYPED, TRI>(xi, xj, lj, g, fi, e, w, true,
                                                    TYPED ? row + tj : nullptr);
                nb += (size_t) TPP * stride;
            }
        }
    }
    float fx = fi.x, fy = fi.y, fz = fi.z;
    hxg_force_meet<TPP, THERMO>(fx, fy, fz, e, w);
    double mv2 = 0.0;
    const bool lead = active && sub == 0;
    if (lead) {
        if (WRITE) {
            if (XS == 4) {
                reinterpret_cast<float4 *>(f)[i] = make_float4(fx, fy, fz, 0.0f);
            } else {
                f[3 * (size_t) i] = fx;
                f[3 * (size_t) i + 1] = fy;
                f[3 * (size_t) i + 2] = fz;
            }
        }
        if (KICK) {
            if (TYPED) {
                dtf = hxg_by_type(ty.dtf, ti);
                mass = hxg_by_type(ty.mass, ti);
            }
            float4 vi = v[i];
            vi.x += dtf * fx;
            vi.y += dtf * fy;
            vi.z += dtf * fz;
            v[i] = vi;
            if (THERMO)
                mv2 = (double) mass *
                      ((double) vi.x * vi.x + (double) vi.y * vi.y + (double) vi.z * vi.z);
        }
    }
    if (THERMO)
        hxg_block_acc(lead ? 0.5 * (double) e : 0.0, lead ? 0.5 * (double) w : 0.0, mv2, acc);
}

/* PDL: launched with programmatic stream serialisation, so that the
 * kernel's blocks may start once the kernel before it on the stream lets
 * them (griddepcontrol.launch_dependents, the fused forward exchange does
 * at entry) and wait inside for its end (hxi_dev_grid_wait). */
template <int TPP, int XS, bool THERMO, bool WRITE, bool KICK, bool PDL, bool ROOM, int STYLE,
          bool TYPED, bool TRI>
static cudaError_t hxg_launch_force_style(cudaStream_t s, const hxg_force_k &k)
{
    const int block = 128;
    const long long threads = (long long) (k.n > 0 ? k.n : 1) * TPP;
    const int grid = (int) ((threads + block - 1) / block);
    const size_t smem = hxg_tab_bytes(TYPED, k.ty);
    if (!PDL) {
        hxg_k_force<TPP, XS, THERMO, WRITE, KICK, false, ROOM, STYLE, TYPED, TRI>
            <<<grid, block, smem, s>>>(k.n, k.idx, k.x, k.l, k.lj, k.g, k.f, k.v, k.dtf, k.mass,
                                       k.acc, k.flags, k.ty);
        return cudaGetLastError();
    }
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.gridDim = dim3(grid);
    cfg.blockDim = dim3(block);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = s;
    cfg.attrs = at;
    cfg.numAttrs = 1;
    return cudaLaunchKernelEx(
        &cfg, hxg_k_force<TPP, XS, THERMO, WRITE, KICK, PDL, ROOM, STYLE, TYPED, TRI>, k.n, k.idx,
        k.x, k.l, k.lj, k.g, k.f, k.v, k.dtf, k.mass, k.acc, k.flags, k.ty);
}

/* The kernels of the run's pair style: each style its own, and each its
 * typed one for several atom types. */
template <int TPP, int XS, bool THERMO, bool WRITE, bool KICK, bool PDL, bool ROOM, bool TRI>
static cudaError_t hxg_launch_force(cudaStream_t s, const hxg_force_k &k)
{
    const bool typed = k.ty.n > 1;
    switch (k.lj.style) {
#define HXG_STYLE_CASE(ID, name)                                                                   \
    case HX_PAIR_##ID:                                                                             \
        return typed ? hxg_launch_force_style<TPP, XS, THERMO, WRITE, KICK, PDL, ROOM,             \
                                              HX_PAIR_##ID, true, TRI>(s, k)                       \
                     : hxg_launch_force_style<TPP, XS, THERMO, WRITE, KICK, PDL, ROOM,             \
                                              HX_PAIR_##ID, false, TRI>(s, k);
        HX_PAIR_STYLES(HXG_STYLE_CASE)
#undef HXG_STYLE_CASE
    }
    return cudaErrorInvalidValue;
}

/* The kernel variant for the pointers given: f == NULL computes energies
 * only, v != NULL (with xs 4) fuses the closing kick; pdl (writing forces
 * without thermo sums or a kick: the step between checks) launches with
 * PDL; room (the local forces at 2 or 4 threads an atom) takes the
 * settings that leave room beside them (HXG_ROOM_*). */
template <bool TRI, int TPP, bool ROOM = false>
static cudaError_t hxg_force_tpp(cudaStream_t s, int xs, const hxg_force_k &k, bool pdl)
{
    const bool th = k.acc != nullptr;
    const bool f = k.f != nullptr, v = k.v != nullptr;
#define HXG_F(XS_, TH_, W_, K_, P_)                                                                \
    hxg_launch_force<TPP, XS_, TH_, W_, K_, P_, ROOM && XS_ == 4, TRI>(s, k)
    if (xs == 4) {
        if (f && v)
            return th ? HXG_F(4, true, true, true, false) : HXG_F(4, false, true, true, false);
        if (f && !th)
            return pdl ? HXG_F(4, false, true, false, true) : HXG_F(4, false, true, false, false);
        if (f)
            return HXG_F(4, true, true, false, false);
        return th ? HXG_F(4, true, false, false, false) : cudaSuccess;
    }
    if (f && !th)
        return pdl ? HXG_F(3, false, true, false, true) : HXG_F(3, false, true, false, false);
    if (f)
        return HXG_F(3, true, true, false, false);
    return th ? HXG_F(3, true, false, false, false) : cudaSuccess;
#undef HXG_F
}

template <bool TRI>
cudaError_t hxg_force_box(cudaStream_t s, int tpp, int xs, const hxg_force_k &k, bool pdl,
                          bool room)
{
    room = room && xs == 4;
    switch (tpp) {
    case 1:
        return hxg_force_tpp<TRI, 1>(s, xs, k, pdl);
    case 2:
        return room ? hxg_force_tpp<TRI, 2, true>(s, xs, k, pdl)
                    : hxg_force_tpp<TRI, 2>(s, xs, k, pdl);
    case 4:
        return room ? hxg_force_tpp<TRI, 4, true>(s, xs, k, pdl)
                    : hxg_force_tpp<TRI, 4>(s, xs, k, pdl);
    case 8:
        return hxg_force_tpp<TRI, 8>(s, xs, k, pdl);
    default:
        return cudaErrorInvalidValue;
    }
}

/* Instantiated once each, in md_force.cu (orthorhombic) and md_force_tri.cu. */
extern template cudaError_t hxg_force_box<false>(cudaStream_t, int, int, const hxg_force_k &, bool,
                                                 bool);
extern template cudaError_t hxg_force_box<true>(cudaStream_t, int, int, const hxg_force_k &, bool,
                                                bool);

#endif /* HALOX_MD_FORCE_CUH */
