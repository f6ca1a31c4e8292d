// launch_cost.cu - what launches cost the host on this GPU machine: a run
// of 15 small kernels launched one by one, captured and instantiated each
// time, captured with the previous executable updated in place, and
// replayed, plus the small operations a rebuild makes (synchronisations,
// small copies, events). Host wall clock, 200 repetitions each. Standalone:
//   nvcc -O2 -arch=sm_90 bench/launch_cost.cu -o launch_cost && ./launch_cost
// docs/md-gpu-timeline.md ("Launches") has one machine's answers.
#include <cstdio>
#include <chrono>
#include <vector>
#include <cuda_runtime.h>
#define CK(x) do{cudaError_t e=(x); if(e!=cudaSuccess){printf("%s:%d %s\n",__FILE__,__LINE__,cudaGetErrorString(e));return 1;}}while(0)
__global__ void k(int n, float *a, float v){ int i=blockIdx.x*blockDim.x+threadIdx.x; if(i<n) a[i]=a[i]*0.5f+v; }
__global__ void kd(const int *pn, float *a, float v){ int n=*pn; for(int i=blockIdx.x*blockDim.x+threadIdx.x;i<n;i+=gridDim.x*blockDim.x) a[i]=a[i]*0.5f+v; }
static double now(){ return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
int main(){
  const int L=15, R=200; int n=100000;
  float *a; int *dn; int *hp; CK(cudaMalloc(&a, 4<<20)); CK(cudaMalloc(&dn,4)); CK(cudaHostAlloc(&hp,64,0));
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  auto chain=[&](int m){ for(int j=0;j<L;j++) k<<<(m+255)/256,256,0,s>>>(m,a,(float)j); };
  // warm
  chain(n); CK(cudaStreamSynchronize(s));
  // 0: empty sync
  double t=now(); for(int r=0;r<R;r++) CK(cudaStreamSynchronize(s)); printf("stream sync idle      %8.2f us\n",(now()-t)/R*1e6);
  t=now(); for(int r=0;r<R;r++){ k<<<1,32,0,s>>>(1,a,1.f); CK(cudaStreamSynchronize(s)); } printf("launch+sync 1 kernel  %8.2f us\n",(now()-t)/R*1e6);
  t=now(); for(int r=0;r<R;r++){ CK(cudaMemcpyAsync(hp,dn,4,cudaMemcpyDeviceToHost,s)); CK(cudaStreamSynchronize(s)); } printf("DtoH 4B + sync        %8.2f us\n",(now()-t)/R*1e6);
  t=now(); for(int r=0;r<R;r++){ CK(cudaMemcpyAsync(dn,hp,4,cudaMemcpyHostToDevice,s)); } CK(cudaStreamSynchronize(s)); printf("HtoD 4B async (host)  %8.2f us\n",(now()-t)/R*1e6);
  t=now(); for(int r=0;r<R;r++){ CK(cudaMemsetAsync(a,0,4096,s)); } CK(cudaStreamSynchronize(s)); printf("memset async (host)   %8.2f us\n",(now()-t)/R*1e6);
  cudaEvent_t ev; CK(cudaEventCreateWithFlags(&ev,cudaEventDisableTiming)); cudaStream_t s2; CK(cudaStreamCreateWithFlags(&s2,cudaStreamNonBlocking));
  t=now(); for(int r=0;r<R;r++){ CK(cudaEventRecord(ev,s)); CK(cudaStreamWaitEvent(s2,ev,0)); } CK(cudaStreamSynchronize(s2)); printf("event rec+wait (host)  %8.2f us\n",(now()-t)/R*1e6);
  // 1: direct
  t=now(); for(int r=0;r<R;r++){ chain(n+r); } double th=now(); CK(cudaStreamSynchronize(s)); double t1=now();
  printf("direct %d launches: host %8.2f us/chain, wall %8.2f us/chain\n",L,(th-t)/R*1e6,(t1-t)/R*1e6);
  t=now(); for(int r=0;r<R;r++){ chain(n+r); CK(cudaStreamSynchronize(s)); } printf("direct chain + sync   %8.2f us\n",(now()-t)/R*1e6);
  // 2: capture + instantiate + launch
  cudaGraphExec_t x=nullptr; cudaGraph_t g;
  t=now(); for(int r=0;r<R;r++){ CK(cudaStreamBeginCapture(s,cudaStreamCaptureModeThreadLocal)); chain(n+r); CK(cudaStreamEndCapture(s,&g));
    if(x) CK(cudaGraphExecDestroy(x)); CK(cudaGraphInstantiate(&x,g,0)); CK(cudaGraphDestroy(g)); CK(cudaGraphLaunch(x,s)); CK(cudaStreamSynchronize(s)); }
  printf("capture+inst+launch+sync %8.2f us\n",(now()-t)/R*1e6);
  double tc=0,tu=0,tl=0;
  for(int r=0;r<R;r++){ double a0=now(); CK(cudaStreamBeginCapture(s,cudaStreamCaptureModeThreadLocal)); chain(n+2*r); CK(cudaStreamEndCapture(s,&g)); double a1=now();
    cudaGraphExecUpdateResultInfo info; cudaError_t e=cudaGraphExecUpdate(x,g,&info); if(e!=cudaSuccess){printf("update failed\n");return 1;} CK(cudaGraphDestroy(g)); double a2=now();
    CK(cudaGraphLaunch(x,s)); CK(cudaStreamSynchronize(s)); double a3=now(); tc+=a1-a0; tu+=a2-a1; tl+=a3-a2; }
  printf("capture %8.2f  update %8.2f  launch+sync %8.2f us\n",tc/R*1e6,tu/R*1e6,tl/R*1e6);
  // 3: replay with device size
  CK(cudaMemcpy(dn,&n,4,cudaMemcpyHostToDevice));
  CK(cudaStreamBeginCapture(s,cudaStreamCaptureModeThreadLocal)); for(int j=0;j<L;j++) kd<<<528,256,0,s>>>(dn,a,(float)j); CK(cudaStreamEndCapture(s,&g));
  cudaGraphExec_t y; CK(cudaGraphInstantiate(&y,g,0)); CK(cudaGraphLaunch(y,s)); CK(cudaStreamSynchronize(s));
  t=now(); for(int r=0;r<R;r++){ CK(cudaGraphLaunch(y,s)); CK(cudaStreamSynchronize(s)); } printf("replay+sync           %8.2f us\n",(now()-t)/R*1e6);
  t=now(); for(int r=0;r<R;r++){ CK(cudaGraphLaunch(y,s)); } th=now(); CK(cudaStreamSynchronize(s)); printf("replay host           %8.2f us\n",(th-t)/R*1e6);
  t=now(); for(int r=0;r<R;r++){ for(int j=0;j<L;j++) kd<<<528,256,0,s>>>(dn,a,(float)j); CK(cudaStreamSynchronize(s)); } printf("direct devsize+sync   %8.2f us\n",(now()-t)/R*1e6);
  // 4: kernel node set params
  size_t nn=0; CK(cudaGraphGetNodes(g,nullptr,&nn)); std::vector<cudaGraphNode_t> nodes(nn); CK(cudaGraphGetNodes(g,nodes.data(),&nn));
  t=now(); for(int r=0;r<R;r++){ for(size_t j=0;j<nn;j++){ cudaKernelNodeParams p; CK(cudaGraphKernelNodeGetParams(nodes[j],&p)); p.gridDim=dim3(500+r%20); CK(cudaGraphExecKernelNodeSetParams(y,nodes[j],&p)); } CK(cudaGraphLaunch(y,s)); CK(cudaStreamSynchronize(s)); }
  printf("setparams x%zu + replay+sync %8.2f us\n",nn,(now()-t)/R*1e6);
  printf("ok\n"); return 0; }
