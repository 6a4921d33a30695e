/* A shared library a Python host loads after gpudbg's libcuda.so.1 (like
 * cuda.core's C++ thread-local contexts): it calls the driver from a
 * thread_local destructor, an atexit handler and an ELF destructor, all of
 * which run after the interpreter has finalized. */
#include <stdio.h>
#include <stdlib.h>

typedef int CUresult;
CUresult cuDriverGetVersion(int *);
int __cxa_thread_atexit_impl(void (*)(void *), void *, void *);
extern void *__dso_handle;

static void report(const char *who) {
    int v = -1;
    CUresult r = cuDriverGetVersion(&v);
    printf("%s: cuDriverGetVersion %d\n", who, r);
    fflush(stdout);
}

static void tls_dtor(void *arg) { report("thread_local destructor"); }
static void at_exit(void) { report("atexit"); }
__attribute__((destructor)) static void late(void) { report("destructor"); }

void arm(void) {
    __cxa_thread_atexit_impl(tls_dtor, 0, &__dso_handle);
    atexit(at_exit);
}
