# GPU transports (included by src/CMakeLists.txt when CUDA is found).
# Host logic in C (.c, compiled as C, calling the CUDA runtime API); kernels
# and thin extern "C" launchers in .cu.
list(APPEND HALOX_GPU_SOURCES
  transport/gpu/gpu.c
  transport/gpu/kernels.cu
  rebuild/rebuild.c
  rebuild/plan_device.c
  rebuild/kernels.cu
)
if(HALOX_HAVE_MPI)
  list(APPEND HALOX_GPU_SOURCES transport/mpi/mpi.c transport/mpi/mpi_ipc.c)
endif()
if(HALOX_HAVE_NCCL)
  list(APPEND HALOX_GPU_SOURCES transport/nccl/nccl.c)
endif()
if(HALOX_HAVE_NVSHMEM)
  list(APPEND HALOX_GPU_SOURCES
    transport/nvshmem/shm.c
    transport/nvshmem/shm_api.cu
    transport/nvshmem/stream.c
    transport/nvshmem/pulse.c
    transport/nvshmem/kernels.cu
  )
  list(APPEND HALOX_GPU_SOURCES
    transport/nvshmem_fused/fused.c
    transport/nvshmem_fused/fused_kernels.cu
  )
endif()
