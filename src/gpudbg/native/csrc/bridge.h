/* The bridge between the drop-in libraries' C stubs and gpudbg's Python
 * implementations (see bridge.c). Shared by libcuda.so.1 and libcudart.so.13;
 * each library links its own copy. */
#ifndef GPUDBG_BRIDGE_H
#define GPUDBG_BRIDGE_H

#include <stddef.h>
#include <stdint.h>

#define GD_API __attribute__((visibility("default")))
#define GD_HIDDEN __attribute__((visibility("hidden")))

/* One library's exports: names, the Python callable cached per export
 * (NULL: not looked up yet), and how often an unimplemented one was called. */
typedef struct gd_lib {
    const char *lib;            /* "cuda" or "cudart" (bridge.entry's first argument) */
    int n;
    const char *const *names;
    void **cache;
    unsigned *missing;
} gd_lib;

/* A row of the cuGetProcAddress table (libcuda only). */
typedef struct gd_proc {
    const char *name;
    int version;
    int per_thread;             /* 1: the _ptds/_ptsz variant */
    int index;                  /* into gd_fns / the export table */
} gd_proc;

/* Calls export `idx` of library `L` in Python. `sig` is described in
 * gpudbg/native/cgen.py. Returns the C result as a 64-bit pattern. */
GD_HIDDEN long long gd_call(gd_lib *L, int idx, const char *sig, ...);

/* True once the interpreter is going away (every entry point answers 4). */
GD_HIDDEN int gd_going_away(void);

#endif
