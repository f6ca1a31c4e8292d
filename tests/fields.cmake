# Per-atom fields through the halo (hx_transport_field_add and the field
# forward and reverse) on the cpu transport, with its bad input. 3 and 8
# ranks bring grids with 2 to 4 pulses along a dimension.
hx_test(test_fields SOURCES test_fields.c fields_bad.c LIBS hxsysgen RANKS 1 2 3 4 8 LABELS cpu)
# The last rank skips a field forward: its receivers time out, none hangs.
hx_test(test_fields_stopped SOURCES test_fields.c fields_bad.c LIBS hxsysgen RANKS 2 3 LABELS cpu
        ARGS --stopped-peer TIMEOUT 60)
# The same checks on every GPU transport of the build (device arrays; the
# fused ones in graph mode too; auto through its choice), and a host array
# refused; without a CUDA device they skip (77).
if(HALOX_HAVE_CUDA AND HALOX_HAVE_MPI)
  hx_test(test_fields_gpu SOURCES test_fields.c fields_bad.c LIBS hxsysgen CUDA::cudart
          RANKS 1 2 3 4 8 LABELS gpu TIMEOUT 900)
  target_compile_definitions(test_fields_gpu PRIVATE HXT_FIELDS_GPU)
endif()
