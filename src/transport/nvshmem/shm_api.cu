/*
 * shm_api.cu - C-callable wrappers of the NVSHMEM host API (see shm_api.h).
 */
#include "transport/nvshmem/shm_api.h"

#include <nvshmem.h>
#include <nvshmemx.h>

#include <string.h>

static_assert(sizeof(nvshmemx_uniqueid_t) <= HXI_SHM_UID_BYTES, "unique ID larger than expected");

extern "C" int hxi_shm_api_uid_bytes(void)
{
    return (int) sizeof(nvshmemx_uniqueid_t);
}

extern "C" int hxi_shm_api_get_uid(void *uid)
{
    nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
    int st = nvshmemx_get_uniqueid(&id);
    memcpy(uid, &id, sizeof id);
    return st;
}

extern "C" int hxi_shm_api_init(int rank, int nranks, const void *uid)
{
    nvshmemx_uniqueid_t id;
    memcpy(&id, uid, sizeof id);
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    int st = nvshmemx_set_attr_uniqueid_args(rank, nranks, &id, &attr);
    if (st != 0)
        return st;
    /* nvshmemx_init_attr() exits the process on failure; its body without
     * the exit, so that the library can report the error instead. */
    int provided = 0;
    nvshmemi_version_t v = {NVSHMEM_VENDOR_MAJOR_VERSION, NVSHMEM_VENDOR_MINOR_VERSION,
                            NVSHMEM_VENDOR_PATCH_VERSION};
    nvshmemx_init_init_attr_ver_only(attr);
    return nvshmemi_init_thread(NVSHMEM_THREAD_SERIALIZED, &provided, NVSHMEMX_INIT_WITH_UNIQUEID,
                                &attr, v);
}

extern "C" int hxi_shm_api_status(void)
{
    return nvshmemx_init_status();
}
extern "C" void hxi_shm_api_finalize(void)
{
    nvshmem_finalize();
}
extern "C" int hxi_shm_api_my_pe(void)
{
    return nvshmem_my_pe();
}
extern "C" int hxi_shm_api_n_pes(void)
{
    return nvshmem_n_pes();
}
extern "C" void *hxi_shm_api_malloc(size_t bytes)
{
    return nvshmem_malloc(bytes);
}
extern "C" void hxi_shm_api_free(void *p)
{
    nvshmem_free(p);
}
extern "C" void *hxi_shm_api_ptr(const void *p, int pe)
{
    return nvshmem_ptr(p, pe);
}
extern "C" void hxi_shm_api_barrier_all(void)
{
    nvshmem_barrier_all();
}

extern "C" void hxi_shm_api_put_signal_on_stream(float *dest, const float *src, size_t nelems,
                                                 uint64_t *sig, uint64_t value, int pe,
                                                 cudaStream_t s)
{
    nvshmemx_float_put_signal_nbi_on_stream(dest, src, nelems, sig, value, NVSHMEM_SIGNAL_SET, pe,
                                            s);
}

extern "C" void hxi_shm_api_quiet_on_stream(cudaStream_t s)
{
    nvshmemx_quiet_on_stream(s);
}

extern "C" void hxi_shm_api_putmem_signal_on_stream(void *dest, const void *src, size_t bytes,
                                                    uint64_t *sig, uint64_t value, int pe,
                                                    cudaStream_t s)
{
    nvshmemx_putmem_signal_on_stream(dest, src, bytes, sig, value, NVSHMEM_SIGNAL_SET, pe, s);
}

extern "C" void hxi_shm_api_signal_on_stream(uint64_t *sig, uint64_t value, int pe, cudaStream_t s)
{
    nvshmemx_signal_op_on_stream(sig, value, NVSHMEM_SIGNAL_SET, pe, s);
}

extern "C" void hxi_shm_api_versions(int *major, int *minor, int *patch)
{
    *major = NVSHMEM_VENDOR_MAJOR_VERSION;
    *minor = NVSHMEM_VENDOR_MINOR_VERSION;
    *patch = NVSHMEM_VENDOR_PATCH_VERSION;
}
