// gpukb probe kernels: FP32 FMA throughput, and a random fill for the GEMM inputs.
// Included by probe.cu.

// Each thread runs 8 independent chains of `iters` x 4 fused multiply-adds
// (x = x * b + c), i.e. 64 FLOP per loop trip, then writes one sum so the
// compiler cannot drop the work. FLOPs = threads * iters * 64.
extern "C" __global__ void gpukb_fma(float *out, unsigned int iters, float b, float c)
{
    float seed = (float)(blockIdx.x * blockDim.x + threadIdx.x) * 1.0e-9f;
    float x0 = seed, x1 = seed + 1.0f, x2 = seed + 2.0f, x3 = seed + 3.0f;
    float x4 = seed + 4.0f, x5 = seed + 5.0f, x6 = seed + 6.0f, x7 = seed + 7.0f;
    for (unsigned int k = 0; k < iters; ++k) {
#pragma unroll
        for (int r = 0; r < 4; ++r) {
            x0 = fmaf(x0, b, c);
            x1 = fmaf(x1, b, c);
            x2 = fmaf(x2, b, c);
            x3 = fmaf(x3, b, c);
            x4 = fmaf(x4, b, c);
            x5 = fmaf(x5, b, c);
            x6 = fmaf(x6, b, c);
            x7 = fmaf(x7, b, c);
        }
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));
}

// Fills p[0..n) with pseudo-random 16-bit floats in [-1, 1): bf16 (truncated
// float) when fp16 == 0, IEEE half otherwise. Never zeros: GEMM timings on
// zeros are optimistic.
extern "C" __global__ void gpukb_fill_b16(unsigned short *p, unsigned long long n, unsigned int seed,
                                         int fp16)
{
    unsigned long long stride = (unsigned long long)blockDim.x * gridDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += stride) {
        unsigned int h = (unsigned int)i * 2654435761u ^ seed ^ (unsigned int)(i >> 32);
        h ^= h >> 16;
        h *= 0x7feb352du;
        h ^= h >> 15;
        h *= 0x846ca68bu;
        h ^= h >> 16;
        float v = (float)(h >> 8) * (1.0f / 8388608.0f) - 1.0f;
        unsigned short r;
        if (fp16) {
            asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r) : "f"(v));
        } else {
            r = (unsigned short)(__float_as_uint(v) >> 16);
        }
        p[i] = r;
    }
}
