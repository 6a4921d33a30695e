// Double-precision libdevice math: the long polynomial and range-reduction sequences.
__global__ void dmath(const double *x, double *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    double v = x[i];
    y[i] = sin(v) * cos(v) + exp(v) / log1p(fabs(v)) + pow(v, 1.7) + atan2(v, 3.0) + erf(v) + lgamma(v);
  }
}
__global__ void fmath(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    y[i] = sinf(v) + tanf(v) + expf(v) + logf(v) + powf(v, 2.5f) + erfcf(v) + tgammaf(v) + cbrtf(v);
  }
}
__global__ void idiv64(const long long *a, const long long *b, long long *q, unsigned long long *r, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { q[i] = a[i] / b[i]; r[i] = (unsigned long long)a[i] % (unsigned long long)b[i]; }
}
