# What the GPU transports share, and the device rebuild (included by
# src/CMakeLists.txt when CUDA is found). Host logic in C (.c, compiled as
# C, calling the CUDA runtime API); kernels and thin extern "C" launchers
# in .cu.
list(APPEND HALOX_GPU_SOURCES
  transport/gpu/gpu.c
  transport/gpu/kernels.cu
  transport/gpu/fields_dev.c
  transport/gpu/fields_kernels.cu
  rebuild/rebuild.c
  rebuild/plan_device.c
  rebuild/kernels.cu
)
# The transports' own files come from transports.def (transports.cmake).
