/* Two threads make the very first calls into libcuda.so.1 and libcudart.so.13
 * at the same moment: one interpreter must be started, once, for both. */
#include <pthread.h>
#include <stdio.h>

int cuDriverGetVersion(int *);
int cudaGetDeviceCount(int *);
static pthread_barrier_t barrier;
static int results[2][2];

static void *driver(void *arg) {
    pthread_barrier_wait(&barrier);
    results[0][0] = cuDriverGetVersion(&results[0][1]);
    return 0;
}

static void *runtime(void *arg) {
    pthread_barrier_wait(&barrier);
    results[1][0] = cudaGetDeviceCount(&results[1][1]);
    return 0;
}

int main(void) {
    pthread_t a, b;
    pthread_barrier_init(&barrier, 0, 2);
    pthread_create(&a, 0, driver, 0);
    pthread_create(&b, 0, runtime, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    printf("%d %d %d %d\n", results[0][0], results[0][1], results[1][0], results[1][1]);
    return 0;
}
