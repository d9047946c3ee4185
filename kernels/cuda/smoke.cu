// gpukb probe kernels: the verified smoke test (saxpy, then a block-sum reduction).
// Included by probe.cu; one module per architecture holds every gpukb kernel.
// Only plain PTX features are used so that the compute_53 PTX can be lowered to
// an old ISA version (see regen.py) and still assemble.

// y[i] = a * x[i] + y[i] for i < n.
extern "C" __global__ void gpukb_saxpy(float *y, const float *x, float a, unsigned int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i] + y[i];
    }
}

// Writes one partial sum per block to out[blockIdx.x] (no atomics: the host adds
// the partials, so the result is deterministic). blockDim.x must be 256.
extern "C" __global__ void gpukb_reduce_sum(const float *x, unsigned int n, float *out)
{
    __shared__ float s[256];
    unsigned int tid = threadIdx.x;
    float acc = 0.0f;
    for (unsigned int i = blockIdx.x * blockDim.x + tid; i < n; i += blockDim.x * gridDim.x) {
        acc += x[i];
    }
    s[tid] = acc;
    __syncthreads();
    for (unsigned int stride = 128; stride > 0; stride >>= 1) {
        if (tid < stride) {
            s[tid] += s[tid + stride];
        }
        __syncthreads();
    }
    if (tid == 0) {
        out[blockIdx.x] = s[0];
    }
}
