// CUB stream compaction: select flagged items.
#include <cub/device/device_select.cuh>
void flagged(void *t, size_t &b, const int *in, const char *flags, int *out, int *nsel, int n) {
  cub::DeviceSelect::Flagged(t, b, in, flags, out, nsel, n);
}
