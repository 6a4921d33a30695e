// CUB run-length encoding.
#include <cub/device/device_run_length_encode.cuh>
void rle(void *t, size_t &b, const int *in, int *uniq, int *counts, int *nruns, int n) {
  cub::DeviceRunLengthEncode::Encode(t, b, in, uniq, counts, nruns, n);
}
