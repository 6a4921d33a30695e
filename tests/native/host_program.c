/* A native host program with no Python in it, linked against gpudbg's
 * libcuda.so.1 and libcudart.so.13 (tests/native/test_native_host.py).
 * Like an nvcc program it registers a fatbin from a static constructor; it
 * then calls both libraries from main and from a second thread, and once more
 * from a thread_local destructor, an atexit handler and an ELF destructor. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef struct { unsigned x, y, z; } dim3;
struct cudaChannelFormatDesc { int x, y, z, w; int f; };

CUresult cuInit(unsigned);
CUresult cuDriverGetVersion(int *);
CUresult cuDeviceGetName(char *, int, int);
CUresult cuStreamCreate(void **, unsigned);
CUresult cuCtxSynchronize(void);
CUresult cuGetProcAddress_v2(const char *, void **, int, uint64_t, int *);
void **__cudaRegisterFatBinary(void *);
void __cudaRegisterFatBinaryEnd(void **);
void __cudaUnregisterFatBinary(void **);
void __cudaRegisterFunction(void **, const char *, char *, const char *, int, void *, void *, void *, void *, int *);
void __cudaRegisterVar(void **, char *, char *, const char *, int, size_t, int, int);
unsigned __cudaPushCallConfiguration(dim3, dim3, size_t, void *);
int __cudaLaunchKernel(const void *, dim3, dim3, void **, size_t, void *);
int cudaGetDeviceCount(int *);
struct cudaChannelFormatDesc cudaCreateChannelDesc(int, int, int, int, int);
const char *cudaGetErrorString(int);
int __cxa_thread_atexit_impl(void (*)(void *), void *, void *);
extern void *__dso_handle;

static struct { unsigned magic, version; const void *data; void *unused; } wrapper = {0x466243B1, 1, 0, 0};
static void **handle;
static int gvar;
static void kern_stub(void) {}

static void unregister(void) { __cudaUnregisterFatBinary(handle); }

__attribute__((constructor)) static void register_module(void) {
    handle = __cudaRegisterFatBinary(&wrapper);
    __cudaRegisterFunction(handle, (const char *)kern_stub, "kern", "kern", -1, 0, 0, 0, 0, 0);
    __cudaRegisterVar(handle, (char *)&gvar, "gvar", "gvar", 0, sizeof gvar, 0, 0);
    __cudaRegisterFatBinaryEnd(handle);
    atexit(unregister);
    printf("constructor: handle %s, python %s\n", handle ? "set" : "NULL",
           dlsym(RTLD_DEFAULT, "Py_IsInitialized") ? "present" : "absent");
}

static void at_exit(void) {
    int v = -1;
    printf("atexit: cuDriverGetVersion %d, cudaGetDeviceCount %d\n", cuDriverGetVersion(&v), cudaGetDeviceCount(&v));
    fflush(stdout);
}

__attribute__((destructor)) static void late(void) {
    int v = -1;
    printf("destructor: cuDriverGetVersion %d, cuInit %d\n", cuDriverGetVersion(&v), cuInit(0));
    fflush(stdout);
}

static void tls_dtor(void *arg) {
    int v = -1;
    CUresult r = cuDriverGetVersion(&v);
    printf("thread_local destructor: cuDriverGetVersion %d (%d)\n", r, r == 0 ? v : -1);
    fflush(stdout);
}

static void *second_thread(void *arg) {
    char name[64] = "";
    int n = -1;
    CUresult r = cuDeviceGetName(name, sizeof name, 1);
    int rr = cudaGetDeviceCount(&n);
    printf("thread: cuDeviceGetName %d '%s', cudaGetDeviceCount %d %d\n", r, name, rr, n);
    return 0;
}

int main(void) {
    atexit(at_exit);
    __cxa_thread_atexit_impl(tls_dtor, 0, &__dso_handle);
    printf("main: python before first call %s\n", dlsym(RTLD_DEFAULT, "Py_IsInitialized") ? "present" : "absent");
    int v = -1;
    printf("cuInit %d\n", cuInit(0));
    CUresult r = cuDriverGetVersion(&v);
    printf("cuDriverGetVersion %d %d\n", r, v);
    printf("main: python after first call %s\n", dlsym(RTLD_DEFAULT, "Py_IsInitialized") ? "present" : "absent");
    int n = -1;
    r = cudaGetDeviceCount(&n);
    printf("cudaGetDeviceCount %d %d\n", r, n);
    void *s = 0;
    printf("cuStreamCreate %d\n", cuStreamCreate(&s, 0));
    printf("cuCtxSynchronize %d\n", cuCtxSynchronize());
    dim3 grid = {1, 2, 3}, block = {4, 5, 6};
    printf("__cudaPushCallConfiguration %u\n", __cudaPushCallConfiguration(grid, block, 7, 0));
    int arg = 42;
    void *args[1] = {&arg};
    printf("__cudaLaunchKernel %d\n", __cudaLaunchKernel((const void *)kern_stub, grid, block, args, 128, 0));
    struct cudaChannelFormatDesc d = cudaCreateChannelDesc(8, 16, 0, 0, 2);
    printf("cudaCreateChannelDesc %d %d %d %d %d\n", d.x, d.y, d.z, d.w, d.f);
    printf("cudaGetErrorString '%s'\n", cudaGetErrorString(3));
    void *fn = 0;
    int status = -1;
    r = cuGetProcAddress_v2("cuDriverGetVersion", &fn, 13000, 0, &status);
    v = -1;
    CUresult (*getver)(int *) = (CUresult (*)(int *))fn;
    printf("cuGetProcAddress_v2 %d %d %s %d\n", r, status, fn == (void *)cuDriverGetVersion ? "same" : "other",
           fn ? getver(&v) * 0 + v : -1);
    pthread_t t;
    pthread_create(&t, 0, second_thread, 0);
    pthread_join(t, 0);
    fflush(stdout);
    return 0;
}
