// pdl_chain.cu - what programmatic dependent launch (PDL) saves between
// dependent kernels of one stream in a CUDA graph on this GPU: a chain of
// K element-wise kernels over n float4 (the size of a kick-drift), captured
// once and replayed back to back, GPU time per kernel from events, for
//   plain     ordinary launches (each kernel starts when the one before has
//             finished and its memory is flushed)
//   pdl       launched with cudaLaunchAttributeProgrammaticStreamSerialization;
//             each kernel waits (griddepcontrol.wait) before it reads, and
//             lets the next launch when it ends (implicit trigger)
//   pdl+trig  the same, each kernel letting the next launch
//             (griddepcontrol.launch_dependents) as soon as its own wait
//             has passed, so the next one's blocks are resident and waiting
// Standalone:
//   nvcc -O2 -arch=sm_90 bench/pdl_chain.cu -o pdl_chain && ./pdl_chain
// docs/md-gpu-timeline.md ("Launches") has one machine's answers.
#include <cstdio>
#include <cuda_runtime.h>
#define CK(x)                                                                                      \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));                      \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

template <int MODE>
__global__ void step(int n, float4 *__restrict__ a, const float4 *__restrict__ b, float h)
{
    if (MODE > 0)
        asm volatile("griddepcontrol.wait;" ::: "memory");
    if (MODE > 1)
        asm volatile("griddepcontrol.launch_dependents;");
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float4 x = a[i];
        const float4 y = b[i];
        x.x += h * y.x;
        x.y += h * y.y;
        x.z += h * y.z;
        a[i] = x;
    }
}

template <int MODE>
static cudaError_t launch(cudaStream_t s, int n, float4 *a, const float4 *b, float h)
{
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute at[1];
    cfg.gridDim = dim3((n + 255) / 256);
    cfg.blockDim = dim3(256);
    cfg.stream = s;
    at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = at;
    cfg.numAttrs = MODE > 0 ? 1 : 0;
    return cudaLaunchKernelEx(&cfg, step<MODE>, n, a, b, h);
}

template <int MODE> static int run(cudaStream_t s, int n, int K, float4 *a, float4 *b, double *us)
{
    cudaGraph_t g;
    cudaGraphExec_t x;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (int k = 0; k < K; k++)
        CK(launch<MODE>(s, n, (k & 1) ? b : a, (k & 1) ? a : b, 1e-3f));
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiate(&x, g, 0));
    const int R = 2000;
    for (int r = 0; r < 50; r++)
        CK(cudaGraphLaunch(x, s));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaEventRecord(e0, s));
    for (int r = 0; r < R; r++)
        CK(cudaGraphLaunch(x, s));
    CK(cudaEventRecord(e1, s));
    CK(cudaEventSynchronize(e1));
    float ms = 0.0f;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    *us = 1e3 * ms / R / K;
    CK(cudaGraphExecDestroy(x));
    CK(cudaGraphDestroy(g));
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    return 0;
}

int main()
{
    const int K = 8, sizes[] = {4096, 16384, 131072, 1048576};
    float4 *a, *b;
    CK(cudaMalloc(&a, 16u << 20));
    CK(cudaMalloc(&b, 16u << 20));
    CK(cudaMemset(a, 0, 16u << 20));
    CK(cudaMemset(b, 0, 16u << 20));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    printf("us per kernel, chains of %d in one graph replayed back to back\n", K);
    printf("%10s %10s %10s %10s\n", "float4s", "plain", "pdl", "pdl+trig");
    for (int n : sizes) {
        double u0 = 0, u1 = 0, u2 = 0;
        for (int rep = 0; rep < 2; rep++) { /* the second round is the one printed */
            if (run<0>(s, n, K, a, b, &u0) || run<1>(s, n, K, a, b, &u1) ||
                run<2>(s, n, K, a, b, &u2))
                return 1;
        }
        printf("%10d %10.2f %10.2f %10.2f\n", n, u0, u1, u2);
    }
    printf("ok\n");
    return 0;
}
