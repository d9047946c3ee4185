// gpukb probe kernels: device-memory bandwidth (a grid-stride, 16-byte-vector copy).
// Included by probe.cu.

// dst[i] = src[i] for i < n4 (n4 counts float4 elements). Each thread keeps four
// independent 16-byte loads in flight before its stores; the tail is handled
// with a plain grid-stride loop.
extern "C" __global__ void gpukb_copy_v4(const float4 *__restrict__ src, float4 *__restrict__ dst,
                                        unsigned long long n4)
{
    unsigned long long stride = (unsigned long long)blockDim.x * gridDim.x;
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + 3 * stride < n4; i += 4 * stride) {
        float4 a = src[i];
        float4 b = src[i + stride];
        float4 c = src[i + 2 * stride];
        float4 d = src[i + 3 * stride];
        dst[i] = a;
        dst[i + stride] = b;
        dst[i + 2 * stride] = c;
        dst[i + 3 * stride] = d;
    }
    for (; i < n4; i += stride) {
        dst[i] = src[i];
    }
}

// The same copy, one float4 per thread per iteration (the classic grid-stride loop).
extern "C" __global__ void gpukb_copy_v4_simple(const float4 *__restrict__ src,
                                               float4 *__restrict__ dst, unsigned long long n4)
{
    unsigned long long stride = (unsigned long long)blockDim.x * gridDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n4;
         i += stride) {
        dst[i] = src[i];
    }
}
