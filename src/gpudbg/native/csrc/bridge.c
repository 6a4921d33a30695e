/* bridge.c: how a C call into libcuda.so.1 / libcudart.so.13 reaches Python.
 *
 * The one idea: never link libpython. Every Python C-API function is found
 * with dlsym, either in the process (a Python host: numba, cuda-python, whose
 * interpreter exports Py_IsInitialized) or in the libpython recorded at build
 * time, which we dlopen and initialize ourselves (a native host: an nvcc
 * program). Each generated stub calls gd_call(lib, index, signature, args...);
 * gd_call converts the arguments to Python objects as the signature says, calls
 * gpudbg.native.bridge.entry(lib, name) (looked up once per export, cached),
 * and converts the result back.
 *
 * Rules it keeps:
 * - nvcc's registration calls (__cudaRegisterFatBinary & co.) run in static
 *   constructors before main: with no interpreter in the process they are
 *   recorded here and replayed at the first real call. The fatbin handle the
 *   program holds is a cell of ours; Python's own handle is stored in it and
 *   substituted whenever the program passes the cell back.
 * - The embedded interpreter is started (once per process, whichever library
 *   asks first: gpudbg_native_start_python) with PyConfig (argv[0] = the build-time
 *   python executable, so a virtualenv's site-packages are found; GPUDBG_PYTHON
 *   overrides it), then the GIL is released; every call takes it with
 *   PyGILState_Ensure.
 * - Once the interpreter is going away (Py_AtExit hook, Py_IsFinalizing, or our
 *   atexit hook for an embedded interpreter) every entry point answers 4
 *   (CUDA_ERROR_DEINITIALIZED / cudaErrorCudartUnloading) without touching
 *   Python.
 * - Unimplemented: 801; an exception: its traceback once per export, then 999;
 *   no interpreter could be started: 3. Functions not returning an error code
 *   return 0 / NULL in all of these cases.
 * Environment: GPUDBG_PYTHON (python executable), GPUDBG_LIBPYTHON (its
 * shared library), GPUDBG_NATIVE_TRACE=1 (print each call's name on stderr),
 * GPUDBG_NATIVE_IMPL_CUDA / _CUDART (read by bridge.py).
 * It does not: finalize an embedded interpreter, or know anything about CUDA.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "bridge.h"

#ifndef GD_LIBPYTHON
#define GD_LIBPYTHON ""
#endif
#ifndef GD_PYTHON_EXE
#define GD_PYTHON_EXE ""
#endif

#define GD_MAXARGS 32
#define ERR_DEINITIALIZED 4
#define ERR_NOT_INITIALIZED 3
#define ERR_NOT_SUPPORTED 801
#define ERR_UNKNOWN 999

typedef struct _object PyObject;
typedef struct { int type; const char *func; const char *err_msg; int exitcode; } PyStatus;

static struct {
    int (*Py_IsInitialized)(void);
    int (*Py_IsFinalizing)(void);               /* may be NULL */
    int (*Py_AtExit)(void (*)(void));
    int (*PyGILState_Ensure)(void);
    void (*PyGILState_Release)(int);
    void *(*PyEval_SaveThread)(void);
    void (*PyEval_RestoreThread)(void *);
    PyObject *(*PyImport_ImportModule)(const char *);
    PyObject *(*PyObject_GetAttrString)(PyObject *, const char *);
    PyObject *(*PyObject_CallObject)(PyObject *, PyObject *);
    PyObject *(*PyTuple_New)(ssize_t);
    int (*PyTuple_SetItem)(PyObject *, ssize_t, PyObject *);
    PyObject *(*PyLong_FromLongLong)(long long);
    PyObject *(*PyLong_FromUnsignedLongLong)(unsigned long long);
    unsigned long long (*PyLong_AsUnsignedLongLongMask)(PyObject *);
    PyObject *(*PyFloat_FromDouble)(double);
    PyObject *(*PyBytes_FromStringAndSize)(const char *, ssize_t);
    int (*PyBytes_AsStringAndSize)(PyObject *, char **, ssize_t *);
    PyObject *(*PyUnicode_FromString)(const char *);
    PyObject *(*PyErr_Occurred)(void);
    void (*PyErr_Fetch)(PyObject **, PyObject **, PyObject **);
    void (*PyErr_NormalizeException)(PyObject **, PyObject **, PyObject **);
    void (*PyErr_Clear)(void);
    void (*PyErr_Print)(void);
    void (*Py_IncRef)(PyObject *);
    void (*Py_DecRef)(PyObject *);
    PyObject *Py_None;
    void (*PyConfig_InitPythonConfig)(void *);
    PyStatus (*PyConfig_SetBytesArgv)(void *, ssize_t, char *const *);
    PyStatus (*Py_InitializeFromConfig)(const void *);
    void (*PyConfig_Clear)(void *);
    int (*PyStatus_Exception)(PyStatus);
} py;

enum { NOT_STARTED, READY, FAILED };
static int state = NOT_STARTED;             /* atomic: the interpreter */
static int going_away;                      /* atomic */
static int bridge_state;                    /* under the GIL: 0 untried, 1 ok, 2 failed, 3 importing */
static int embedded;
static int trace = -1;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static PyObject *entry_fn, *report_fn, *exit_fn;
#define MISSING ((void *)1)

typedef union { int64_t i; uint64_t u; double d; struct { const void *p; size_t n; } s; } gd_val;

/* ---- registration records and fatbin handle cells ---------------------------------- */
typedef struct gd_cell { void *value; struct gd_cell *next; } gd_cell;   /* value first: cell == &value */
typedef struct gd_rec {
    gd_lib *L; int idx; const char *sig; int n; gd_val v[GD_MAXARGS]; gd_cell *cell; struct gd_rec *next;
} gd_rec;
static gd_cell *cells;
static gd_rec *pending, **pending_tail = &pending;

static gd_cell *new_cell(void) {
    gd_cell *c = calloc(1, sizeof *c);
    pthread_mutex_lock(&lock);
    c->next = cells;
    cells = c;
    pthread_mutex_unlock(&lock);
    return c;
}

static uint64_t translate_handle(uint64_t h) {
    for (gd_cell *c = __atomic_load_n(&cells, __ATOMIC_ACQUIRE); c; c = c->next)
        if ((uint64_t)(uintptr_t)c == h) return (uint64_t)(uintptr_t)c->value;
    return h;
}

int gd_going_away(void) {
    if (__atomic_load_n(&going_away, __ATOMIC_ACQUIRE)) return 1;
    return py.Py_IsFinalizing && __atomic_load_n(&state, __ATOMIC_ACQUIRE) == READY && py.Py_IsFinalizing();
}

static void on_py_exit(void) { __atomic_store_n(&going_away, 1, __ATOMIC_RELEASE); }

/* ---- finding / starting the interpreter ---------------------------------------------- */
#define SYM(name) (*(void **)&py.name = dlsym(h, #name))
static int resolve(void *h) {
    SYM(Py_IsInitialized); SYM(Py_AtExit); SYM(PyGILState_Ensure); SYM(PyGILState_Release);
    SYM(PyEval_SaveThread); SYM(PyEval_RestoreThread); SYM(PyImport_ImportModule); SYM(PyObject_GetAttrString); SYM(PyObject_CallObject);
    SYM(PyTuple_New); SYM(PyTuple_SetItem); SYM(PyLong_FromLongLong); SYM(PyLong_FromUnsignedLongLong);
    SYM(PyLong_AsUnsignedLongLongMask); SYM(PyFloat_FromDouble); SYM(PyBytes_FromStringAndSize);
    SYM(PyBytes_AsStringAndSize); SYM(PyUnicode_FromString); SYM(PyErr_Occurred); SYM(PyErr_Fetch);
    SYM(PyErr_NormalizeException); SYM(PyErr_Clear); SYM(PyErr_Print); SYM(Py_IncRef); SYM(Py_DecRef);
    SYM(PyConfig_InitPythonConfig); SYM(PyConfig_SetBytesArgv); SYM(Py_InitializeFromConfig);
    SYM(PyConfig_Clear); SYM(PyStatus_Exception);
    py.Py_None = dlsym(h, "_Py_NoneStruct");
    if (!(*(void **)&py.Py_IsFinalizing = dlsym(h, "Py_IsFinalizing")))
        *(void **)&py.Py_IsFinalizing = dlsym(h, "_Py_IsFinalizing");
    void **p = (void **)&py;
    for (size_t i = 0; i < sizeof py / sizeof(void *); i++)
        if (!p[i] && &p[i] != (void **)&py.Py_IsFinalizing) {
            fprintf(stderr, "gpudbg: the Python library lacks a function the bridge needs (#%zu)\n", i);
            return 0;
        }
    return 1;
}

static int setup_bridge(void);
static int import_bridge(void);

static void exit_hook(void) {
    /* The process is exiting. An embedded interpreter is never finalized: from
     * here on every entry point answers 4; Python's own atexit functions still
     * run once (by the library that started it). */
    static int ran;
    __atomic_store_n(&going_away, 1, __ATOMIC_RELEASE);
    if (embedded && !__atomic_exchange_n(&ran, 1, __ATOMIC_ACQ_REL)) {
        int g = py.PyGILState_Ensure();
        PyObject *m = py.PyImport_ImportModule("gpudbg.native.bridge");
        PyObject *f = m ? py.PyObject_GetAttrString(m, "at_exit") : NULL;
        PyObject *r = f ? py.PyObject_CallObject(f, NULL) : NULL;
        if (!r) py.PyErr_Clear();
        if (r) py.Py_DecRef(r);
        if (f) py.Py_DecRef(f);
        if (m) py.Py_DecRef(m);
        py.PyGILState_Release(g);
    }
}

/* Loads (unless h is given) and initializes libpython; returns with the GIL released. */
static int start_embedded(void *h) {
    const char *lib = getenv("GPUDBG_LIBPYTHON");
    if (!h) {
        if (!lib || !*lib) lib = GD_LIBPYTHON;
        if (!*lib || !(h = dlopen(lib, RTLD_NOW | RTLD_GLOBAL))) {
            fprintf(stderr, "gpudbg: cannot load the Python library '%s'%s%s\n", lib,
                    *lib ? ": " : " (none recorded at build time)", *lib ? dlerror() : "");
            return 0;
        }
    }
    if (!resolve(h)) return 0;
    if (py.Py_IsInitialized()) return 1;
    const char *exe = getenv("GPUDBG_PYTHON");
    if (!exe || !*exe) exe = GD_PYTHON_EXE;
    static _Alignas(64) unsigned char config[16384];     /* larger than any PyConfig */
    memset(config, 0, sizeof config);
    py.PyConfig_InitPythonConfig(config);
    char *argv[1] = {(char *)exe};                      /* argv[0] -> program name -> venv */
    PyStatus st = {0};
    if (*exe) st = py.PyConfig_SetBytesArgv(config, 1, argv);
    struct sigaction old[3];
    const int sigs[3] = {SIGINT, SIGPIPE, SIGXFSZ};
    for (int i = 0; i < 3; i++) sigaction(sigs[i], NULL, &old[i]);
    if (!py.PyStatus_Exception(st)) st = py.Py_InitializeFromConfig(config);
    py.PyConfig_Clear(config);
    for (int i = 0; i < 3; i++) sigaction(sigs[i], &old[i], NULL);   /* the host keeps its signals */
    if (py.PyStatus_Exception(st)) {
        fprintf(stderr, "gpudbg: cannot start Python (%s): %s\n", exe, st.err_msg ? st.err_msg : "?");
        return 0;
    }
    embedded = 1;
    py.PyEval_SaveThread();
    atexit(exit_hook);
    return 1;
}

/* Makes sure an interpreter runs in the process, starting one if needed. One
 * lock for the whole process: each gpudbg library calls the copy of this
 * function that dlsym finds first, so libcuda and libcudart never both start one. */
GD_API int gpudbg_native_start_python(void) {
    static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&start_lock);
    int (*isinit)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "Py_IsInitialized");
    int ok = (isinit && isinit()) || start_embedded(isinit ? RTLD_DEFAULT : NULL);
    pthread_mutex_unlock(&start_lock);
    return ok;
}

static int ensure_python(void) {
    int s = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
    if (s != NOT_STARTED) return s == READY;
    pthread_mutex_lock(&lock);
    if (state == NOT_STARTED) {
        int (*start)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "gpudbg_native_start_python");
        int ok = (start ? start : gpudbg_native_start_python)();
        if (ok && !embedded) ok = resolve(RTLD_DEFAULT);
        if (ok) atexit(exit_hook);  /* also when another library (or python) started it */
        __atomic_store_n(&state, ok ? READY : FAILED, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&lock);
    return state == READY;
}

/* A Python interpreter is (or may be started) in the process now. */
static int interpreter_present(void) {
    if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) == READY) return 1;
    int (*isinit)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "Py_IsInitialized");
    return isinit && isinit();
}

/* ---- under the GIL ------------------------------------------------------------------- */
static int setup_bridge(void) {
    /* The import may release the GIL: other threads wait for it (the importing
     * thread itself, if the import calls back into us, sees "unimplemented"). */
    static pthread_t importer;
    while (bridge_state == 3) {
        if (pthread_equal(importer, pthread_self())) return 0;
        void *ts = py.PyEval_SaveThread();
        sched_yield();
        py.PyEval_RestoreThread(ts);
    }
    if (bridge_state) return bridge_state == 1;
    bridge_state = 3;
    importer = pthread_self();
    int ok = import_bridge();
    bridge_state = ok ? 1 : 2;
    return ok;
}

static int import_bridge(void) {
    PyObject *m = py.PyImport_ImportModule("gpudbg.native.bridge");
    if (!m) {
        fprintf(stderr, "gpudbg: cannot import gpudbg.native.bridge; every call is unimplemented:\n");
        py.PyErr_Print();
        return 0;
    }
    entry_fn = py.PyObject_GetAttrString(m, "entry");
    report_fn = py.PyObject_GetAttrString(m, "report_exception");
    exit_fn = py.PyObject_GetAttrString(m, "at_exit");
    py.Py_DecRef(m);
    if (!entry_fn || !report_fn || !exit_fn) { py.PyErr_Clear(); return 0; }
    if (!embedded) py.Py_AtExit(on_py_exit);
    return 1;
}

static void report(gd_lib *L, int idx) {
    PyObject *t = NULL, *v = NULL, *tb = NULL;
    py.PyErr_Fetch(&t, &v, &tb);
    py.PyErr_NormalizeException(&t, &v, &tb);
    PyObject *args = py.PyTuple_New(5);
    PyObject *none = py.Py_None;
    PyObject *items[5] = {py.PyUnicode_FromString(L->lib), py.PyUnicode_FromString(L->names[idx]),
                          t ? t : none, v ? v : none, tb ? tb : none};
    for (int i = 2; i < 5; i++) if (items[i] == none) py.Py_IncRef(none);
    for (int i = 0; i < 5; i++) py.PyTuple_SetItem(args, i, items[i]);
    PyObject *r = report_fn ? py.PyObject_CallObject(report_fn, args) : NULL;
    if (r) py.Py_DecRef(r); else py.PyErr_Clear();
    py.Py_DecRef(args);
}

static PyObject *lookup(gd_lib *L, int idx) {
    void *c = L->cache[idx];
    if (c) return c == MISSING ? NULL : c;
    PyObject *fn = NULL;
    if (entry_fn) {
        PyObject *args = py.PyTuple_New(2);
        py.PyTuple_SetItem(args, 0, py.PyUnicode_FromString(L->lib));
        py.PyTuple_SetItem(args, 1, py.PyUnicode_FromString(L->names[idx]));
        fn = py.PyObject_CallObject(entry_fn, args);
        py.Py_DecRef(args);
        if (!fn) report(L, idx);
        else if (fn == py.Py_None) { py.Py_DecRef(fn); fn = NULL; }
    }
    if (L->cache[idx]) {            /* another thread got there while the GIL was released */
        if (fn) py.Py_DecRef(fn);
        return L->cache[idx] == MISSING ? NULL : L->cache[idx];
    }
    L->cache[idx] = fn ? (void *)fn : MISSING;
    return fn;
}

static PyObject *to_python(char c, gd_val v, int translate) {
    switch (c) {
    case 'b': case 'h': case 'i': case 'q': return py.PyLong_FromLongLong(v.i);
    case 'f': case 'd': return py.PyFloat_FromDouble(v.d);
    case 's': return py.PyBytes_FromStringAndSize(v.s.p, (ssize_t)v.s.n);
    case 'p': return py.PyLong_FromUnsignedLongLong(translate ? translate_handle(v.u) : v.u);
    default: return py.PyLong_FromUnsignedLongLong(v.u);
    }
}

static long long failure(char rk, long long code) { return rk == 'e' ? code : 0; }

/* Calls export idx with converted values; GIL held. */
static long long invoke(gd_lib *L, int idx, const char *sig, int n, gd_val *v, void *sret, size_t sret_size) {
    char rk = sig[0], mode = sig[1];
    if (trace) fprintf(stderr, "[gpudbg.native] %s\n", L->names[idx]);
    PyObject *fn = lookup(L, idx);
    if (!fn) { L->missing[idx]++; return failure(rk, ERR_NOT_SUPPORTED); }
    PyObject *args = py.PyTuple_New(n);
    for (int k = 0; k < n; k++)
        py.PyTuple_SetItem(args, k, to_python(sig[2 + k], v[k], k == 0 && mode != '-' && mode != 'F'));
    PyObject *res = py.PyErr_Occurred() ? NULL : py.PyObject_CallObject(fn, args);
    py.Py_DecRef(args);
    if (!res) { report(L, idx); return failure(rk, ERR_UNKNOWN); }
    long long out = 0;
    if (rk == 'S') {
        char *buf; ssize_t len;
        if (py.PyBytes_AsStringAndSize(res, &buf, &len) == 0)
            memcpy(sret, buf, (size_t)len < sret_size ? (size_t)len : sret_size);
        else { report(L, idx); out = 0; }
    } else if (res != py.Py_None && rk != 'v') {
        out = (long long)py.PyLong_AsUnsignedLongLongMask(res);
        if (py.PyErr_Occurred()) { report(L, idx); out = failure(rk, ERR_UNKNOWN); }
    }
    py.Py_DecRef(res);
    return out;
}

static void replay_pending(void) {
    pthread_mutex_lock(&lock);
    gd_rec *r = pending;
    pending = NULL;
    pending_tail = &pending;
    pthread_mutex_unlock(&lock);
    while (r) {
        long long out = invoke(r->L, r->idx, r->sig, r->n, r->v, NULL, 0);
        if (r->cell) r->cell->value = (void *)(uintptr_t)out;
        gd_rec *next = r->next;
        free(r);
        r = next;
    }
}

long long gd_call(gd_lib *L, int idx, const char *sig, ...) {
    char rk = sig[0], mode = sig[1];
    void *sret = NULL;
    size_t sret_size = 0;
    gd_val v[GD_MAXARGS];
    int n = 0;
    va_list ap;
    va_start(ap, sig);
    if (rk == 'S') {
        sret = va_arg(ap, void *);
        sret_size = va_arg(ap, size_t);
        memset(sret, 0, sret_size);
    }
    for (const char *c = sig + 2; *c && n < GD_MAXARGS; c++, n++) {
        switch (*c) {
        case 'b': case 'h': case 'i': v[n].i = va_arg(ap, int); break;
        case 'B': case 'H': case 'I': v[n].u = va_arg(ap, unsigned int); break;
        case 'q': v[n].i = va_arg(ap, long long); break;
        case 'Q': v[n].u = va_arg(ap, unsigned long long); break;
        case 'p': v[n].u = (uintptr_t)va_arg(ap, void *); break;
        case 'f': case 'd': v[n].d = va_arg(ap, double); break;
        case 's': v[n].s.p = va_arg(ap, const void *); v[n].s.n = va_arg(ap, size_t); break;
        }
    }
    va_end(ap);
    if (trace < 0) { const char *t = getenv("GPUDBG_NATIVE_TRACE"); trace = t && *t && *t != '0'; }
    if (gd_going_away()) return failure(rk, ERR_DEINITIALIZED);

    if ((mode == 'F' || mode == 'R' || mode == 'U') && !interpreter_present()) {
        if (mode == 'U') return 0;                  /* never started: nothing to unregister */
        gd_rec *r = calloc(1, sizeof *r);           /* a static constructor: record, replay later */
        r->L = L; r->idx = idx; r->sig = sig; r->n = n;
        memcpy(r->v, v, sizeof(gd_val) * (size_t)n);
        if (mode == 'F') r->cell = new_cell();
        pthread_mutex_lock(&lock);
        *pending_tail = r;
        pending_tail = &r->next;
        pthread_mutex_unlock(&lock);
        return (long long)(uintptr_t)r->cell;
    }
    if (!ensure_python()) return failure(rk, ERR_NOT_INITIALIZED);
    if (gd_going_away()) return failure(rk, ERR_DEINITIALIZED);
    int g = py.PyGILState_Ensure();
    long long out;
    if (!setup_bridge()) {
        L->missing[idx]++;
        out = failure(rk, ERR_NOT_SUPPORTED);
    } else {
        if (pending) replay_pending();
        out = invoke(L, idx, sig, n, v, sret, sret_size);
        if (mode == 'F') {
            gd_cell *c = new_cell();
            c->value = (void *)(uintptr_t)out;
            out = (long long)(uintptr_t)c;
        }
    }
    py.PyGILState_Release(g);
    return out;
}

/* Called-but-unimplemented exports of this library, "name count" lines; returns how many. */
extern gd_lib *const gd_this_lib;
GD_API int gpudbg_native_missing(char *buf, size_t len) {
    int count = 0;
    size_t used = 0;
    if (buf && len) buf[0] = 0;
    for (int i = 0; i < gd_this_lib->n; i++) {
        if (!gd_this_lib->missing[i]) continue;
        count++;
        if (buf && used < len) {
            int w = snprintf(buf + used, len - used, "%s %u\n", gd_this_lib->names[i], gd_this_lib->missing[i]);
            if (w > 0) used += (size_t)w;
        }
    }
    return count;
}
