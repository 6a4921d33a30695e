/* procaddr.c: cuGetProcAddress(_v2) and cuGetExportTable of libcuda.so.1, in C.
 *
 * The one idea: the table (name, PFN version, per-thread flag) -> export,
 * generated from cudaTypedefs.h into gen_libcuda.c, is searched for the highest
 * version <= the caller's; the answer is always one of our own stubs, whether
 * or not Python implements it (calling it then returns 801). No Python here.
 * It does not answer NVIDIA's private export tables (cuGetExportTable: 801).
 */
#include <string.h>

#include "bridge.h"

extern void *const gd_fns[];
extern const gd_proc gd_procs[];
extern const int gd_nprocs;

#define CUDA_SUCCESS 0
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_NOT_FOUND 500
#define CUDA_ERROR_NOT_SUPPORTED 801
#define CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM 2
enum { SYMBOL_SUCCESS = 0, SYMBOL_NOT_FOUND = 1, VERSION_NOT_SUFFICIENT = 2 };

static int lookup(const char *symbol, int version, uint64_t flags, void **pfn, int *status) {
    int lo = 0, hi = gd_nprocs;
    while (lo < hi) {                       /* first row named `symbol` */
        int mid = (lo + hi) / 2;
        if (strcmp(gd_procs[mid].name, symbol) < 0) lo = mid + 1; else hi = mid;
    }
    const gd_proc *best = NULL, *best_pt = NULL;
    int known = 0;
    for (int i = lo; i < gd_nprocs && strcmp(gd_procs[i].name, symbol) == 0; i++) {
        const gd_proc *r = &gd_procs[i];
        known = 1;
        if (r->version > version) continue;
        if (r->per_thread) { if (!best_pt || r->version > best_pt->version) best_pt = r; }
        else if (!best || r->version > best->version) best = r;
    }
    if ((flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && best_pt) best = best_pt;
    if (!best) {
        *pfn = NULL;
        *status = known ? VERSION_NOT_SUFFICIENT : SYMBOL_NOT_FOUND;
        return CUDA_ERROR_NOT_FOUND;
    }
    *pfn = gd_fns[best->index];
    *status = SYMBOL_SUCCESS;
    return CUDA_SUCCESS;
}

GD_API int cuGetProcAddress_v2(void *symbol, void *pfn, int32_t version, uint64_t flags, void *status) {
    if (!symbol || !pfn) return CUDA_ERROR_INVALID_VALUE;
    int st;
    int rc = lookup((const char *)symbol, version, flags, (void **)pfn, &st);
    if (status) *(int *)status = st;
    return rc;
}

GD_API int cuGetProcAddress(void *symbol, void *pfn, int32_t version, uint64_t flags) {
    return cuGetProcAddress_v2(symbol, pfn, version, flags, NULL);
}

GD_API int cuGetExportTable(void *ppExportTable, void *pExportTableId) {
    (void)pExportTableId;
    if (ppExportTable) *(void **)ppExportTable = NULL;
    return CUDA_ERROR_NOT_SUPPORTED;
}
