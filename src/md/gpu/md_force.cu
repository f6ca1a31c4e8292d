/*
 * md_force.cu - the force kernels of an orthorhombic box (per-dimension minimum image):
 * hxg_force_box<false> and every kernel it launches (md_force.cuh).
 */
#include "md_force.cuh"

template cudaError_t hxg_force_box<false>(cudaStream_t, int, int, const hxg_force_k &, bool, bool);
