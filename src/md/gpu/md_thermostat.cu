/*
 * md_thermostat.cu - the GPU engine's thermostat kernels (md_thermostat.h):
 * fix nvt's chain, run by one thread from device memory with the CPU
 * engine's arithmetic (md/thermostat_math.h), the sum and the scale of
 * the velocities around it, and fix langevin's force term with the CPU
 * engine's noise. Thin extern "C" launchers; the host code is in
 * thermostat.c.
 */
#include "md/gpu/md_thermostat.h"
#include "md/thermostat_math.h"
#include "md_dev.cuh"
#include "transport/gpu/gpu_dev.cuh" /* hxi_last_block */

static __device__ __forceinline__ bool hxg_halted(const hxg_flags *flags)
{
    return flags && *(const volatile int32_t *) &flags->halt;
}

/* The second half of the chain from the kinetic sum mv2 (FixNH's
 * final_integrate: t_current from compute temp, then nhc_temp_integrate). */
static __device__ void hxg_nh_second_half(hxg_nh_dev *nh, double mv2)
{
    nh->nh.t_current = nh->nh.tdof > 0.0 ? mv2 / nh->nh.tdof : 0.0;
    nh->scale = (float) hxi_md_nh_half_factor(&nh->nh);
    nh->mv2 = 0.0;
}

/* One thread. */
__global__ void hxg_k_nh_begin(hxg_nh_dev *nh, const hxg_flags *flags, long long done)
{
    if (hxg_halted(flags))
        return;
    if (done < 0)
        done = flags->cur;
    hxi_md_nh_target_at(&nh->nh, done, nh->steps);
    nh->scale = (float) hxi_md_nh_half_factor(&nh->nh);
}

/* One thread per home atom; each block adds its sum with one double
 * atomic. CHAIN: the last block to finish (hxi_last_block, which orders
 * the other blocks' atomics before its read) runs the second half.
 * ty.n > 1: each atom's mass by its type (the w of its position). */
template <bool CHAIN>
__global__ void hxg_k_nh_ke(int n, const float4 *__restrict__ v, float mass, hxg_nh_dev *nh,
                            const hxg_flags *flags, const float4 *__restrict__ x, hxg_types ty)
{
    __shared__ double part[32];
    if (hxg_halted(flags))
        return; /* the whole grid alike */
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    double s = 0.0;
    if (i < n) {
        const float4 vi = v[i];
        if (ty.n > 1)
            mass = hxg_by_type(ty.mass, __float_as_int(x[i].w));
        s = (double) mass * ((double) vi.x * vi.x + (double) vi.y * vi.y + (double) vi.z * vi.z);
    }
    for (int o = 16; o > 0; o >>= 1)
        s += __shfl_down_sync(HXG_FULL, s, o);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0)
        part[warp] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        double b = 0.0;
        for (int w = 0; w < (int) (blockDim.x + 31) / 32; w++)
            b += part[w];
        if (b != 0.0)
            atomicAdd(&nh->mv2, b);
    }
    if (!CHAIN || !hxi_last_block(&nh->blocks) || threadIdx.x != 0)
        return;
    hxg_nh_second_half(nh, *(volatile double *) &nh->mv2);
}

/* One thread. */
__global__ void hxg_k_nh_end(hxg_nh_dev *nh, const hxg_flags *flags)
{
    if (hxg_halted(flags))
        return;
    hxg_nh_second_half(nh, nh->mv2_all);
}

/* One thread per home atom. */
__global__ void hxg_k_nh_scale(int n, float4 *__restrict__ v, const hxg_nh_dev *nh, double *acc,
                               const hxg_flags *flags)
{
    if (hxg_halted(flags))
        return;
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const float s = nh->scale;
    if (i < n) {
        float4 vi = v[i];
        vi.x *= s;
        vi.y *= s;
        vi.z *= s;
        v[i] = vi;
    }
    if (acc && i == 0)
        acc[HXG_ACC_MV2] *= (double) s * (double) s;
}

/* One thread per home atom: the CPU engine's hxi_md_langevin_forces, in
 * double, added to the float force; p.ntypes > 1: the mass of the atom's
 * type (the w of its position). */
__global__ void hxg_k_langevin(int n, const float4 *__restrict__ v, float4 *__restrict__ f,
                               const int64_t *__restrict__ id, hxg_langevin p,
                               const hxg_flags *flags, long long done, const float4 *__restrict__ x)
{
    if (hxg_halted(flags))
        return;
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    if (done < 0)
        done = flags->cur - 1;
    const double t = hxi_md_langevin_target_at(p.t_start, p.t_stop, done, p.steps);
    const double mass = p.ntypes > 1 ? hxg_by_type(p.masses, __float_as_int(x[i].w)) : p.mass;
    const double gamma1 = -mass / p.damp;
    const double gamma2 = sqrt(mass) * sqrt(24.0 / p.damp / p.dt) * sqrt(t);
    const long long step = p.first_step + done;
    const float4 vi = v[i];
    float4 fi = f[i];
    const int64_t ai = id[i];
    fi.x = (float) ((double) fi.x + gamma1 * vi.x +
                    gamma2 * (hxi_md_langevin_u(p.seed, ai, step, 0) - 0.5));
    fi.y = (float) ((double) fi.y + gamma1 * vi.y +
                    gamma2 * (hxi_md_langevin_u(p.seed, ai, step, 1) - 0.5));
    fi.z = (float) ((double) fi.z + gamma1 * vi.z +
                    gamma2 * (hxi_md_langevin_u(p.seed, ai, step, 2) - 0.5));
    f[i] = fi;
}

/* ------------------------------------------------------------ launchers */

extern "C" int hxg_nh_begin(void *stream, hxg_nh_dev *nh, const hxg_flags *flags, int64_t done)
{
    hxg_k_nh_begin<<<1, 1, 0, (cudaStream_t) stream>>>(nh, flags, (long long) done);
    return (int) cudaGetLastError();
}

extern "C" int hxg_nh_ke(void *stream, hxg_atoms_view a, float mass, hxg_types ty, hxg_nh_dev *nh,
                         int chain, const hxg_flags *flags)
{
    const int block = 256;
    /* One block at least, so that the chain runs with no home atoms too. */
    const int grid = a.nhome > 0 ? hxg_blocks(a.nhome, block) : 1;
    const float4 *x = (const float4 *) a.x4;
    if (chain)
        hxg_k_nh_ke<true><<<grid, block, 0, (cudaStream_t) stream>>>(a.nhome, (const float4 *) a.v4,
                                                                     mass, nh, flags, x, ty);
    else
        hxg_k_nh_ke<false><<<grid, block, 0, (cudaStream_t) stream>>>(
            a.nhome, (const float4 *) a.v4, mass, nh, flags, x, ty);
    return (int) cudaGetLastError();
}

extern "C" int hxg_nh_end(void *stream, hxg_nh_dev *nh, const hxg_flags *flags)
{
    hxg_k_nh_end<<<1, 1, 0, (cudaStream_t) stream>>>(nh, flags);
    return (int) cudaGetLastError();
}

extern "C" int hxg_nh_scale(void *stream, hxg_atoms_view a, const hxg_nh_dev *nh, double *acc,
                            const hxg_flags *flags)
{
    const int block = 256;
    const int grid = a.nhome > 0 ? hxg_blocks(a.nhome, block) : 1;
    hxg_k_nh_scale<<<grid, block, 0, (cudaStream_t) stream>>>(a.nhome, (float4 *) a.v4, nh, acc,
                                                              flags);
    return (int) cudaGetLastError();
}

extern "C" int hxg_langevin_forces(void *stream, hxg_atoms_view a, hxg_langevin p,
                                   const hxg_flags *flags, int64_t done)
{
    if (a.nhome <= 0)
        return 0;
    const int block = 256;
    hxg_k_langevin<<<hxg_blocks(a.nhome, block), block, 0, (cudaStream_t) stream>>>(
        a.nhome, (const float4 *) a.v4, (float4 *) a.f4, a.id, p, flags, (long long) done,
        (const float4 *) a.x4);
    return (int) cudaGetLastError();
}
