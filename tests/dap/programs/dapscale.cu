// A -G kernel for the DAP tests: the breakpoint goes on the line with the
// marker comment (before w is computed), where v differs per thread.
extern "C" __global__ void dapscale(int *out, int factor) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int v = t * factor;
    int w = v + 1;  // BREAK
    out[t] = w;  // AFTER
}
