/*
 * md_force_tri.cu - the force kernels of a triclinic box (the minimum image z, then y, then x, with
 * the tilts): hxg_force_box<true> and every kernel it launches (md_force.cuh).
 */
#include "md_force.cuh"

template cudaError_t hxg_force_box<true>(cudaStream_t, int, int, const hxg_force_k &, bool, bool);
