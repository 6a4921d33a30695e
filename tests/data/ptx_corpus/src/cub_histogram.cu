// CUB device histogram with evenly spaced bins.
#include <cub/device/device_histogram.cuh>
void hist(void *t, size_t &b, const float *samples, int *bins, int n) {
  cub::DeviceHistogram::HistogramEven(t, b, samples, bins, 65, 0.0f, 1.0f, n);
}
