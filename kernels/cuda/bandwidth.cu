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

// Block-contiguous tiles: in each step a block copies U * blockDim.x adjacent
// float4 (U loads in flight per thread, coalesced, one DRAM region per block),
// then the whole grid strides on. CS = streaming cache hints (ld/st .cs:
// evict-first, the data is touched once).
#define GPUKB_COPY_TILE(NAME, U, LOAD, STORE)                                                        \
    extern "C" __global__ void NAME(const float4 *__restrict__ src, float4 *__restrict__ dst,        \
                                    unsigned long long n4)                                           \
    {                                                                                                \
        unsigned long long tile = (unsigned long long)blockDim.x * (U);                              \
        unsigned long long step = tile * gridDim.x;                                                  \
        unsigned long long base = (unsigned long long)blockIdx.x * tile + threadIdx.x;               \
        for (; base + (U - 1) * blockDim.x < n4; base += step) {                                     \
            float4 v[U];                                                                             \
            _Pragma("unroll") for (int u = 0; u < (U); ++u) v[u] = LOAD(src + base + u * blockDim.x); \
            _Pragma("unroll") for (int u = 0; u < (U); ++u) STORE(dst + base + u * blockDim.x, v[u]); \
        }                                                                                            \
        for (int u = 0; u < (U); ++u) {                                                              \
            unsigned long long i = base + u * blockDim.x;                                            \
            if (i < n4) dst[i] = src[i];                                                             \
        }                                                                                            \
    }

__device__ __forceinline__ float4 gpukb_ld(const float4 *p) { return *p; }
__device__ __forceinline__ void gpukb_st(float4 *p, float4 v) { *p = v; }
__device__ __forceinline__ float4 gpukb_ldcs(const float4 *p) { return __ldcs(p); }
__device__ __forceinline__ void gpukb_stcs(float4 *p, float4 v) { __stcs(p, v); }

GPUKB_COPY_TILE(gpukb_copy_v4_tile4, 4, gpukb_ld, gpukb_st)
GPUKB_COPY_TILE(gpukb_copy_v4_tile8, 8, gpukb_ld, gpukb_st)
GPUKB_COPY_TILE(gpukb_copy_v4_tile4_cs, 4, gpukb_ldcs, gpukb_stcs)
GPUKB_COPY_TILE(gpukb_copy_v4_tile8_cs, 8, gpukb_ldcs, gpukb_stcs)

// Grid-spread copies like gpukb_copy_v4 (the U loads of a thread lie a whole
// grid apart) with other load flavours: plain `ld.global` (not the read-only
// .nc path), and on sm_80+ `ld.global.L2::256B` (asks L2 to fetch 256-byte
// sectors, fewer DRAM row switches). Older targets fall back to plain loads,
// so the compute_53 PTX stays within its old ISA.
__device__ __forceinline__ float4 gpukb_ld_plain(const float4 *p)
{
    float4 v;
    asm("ld.global.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
    return v;
}
__device__ __forceinline__ float4 gpukb_ld_l2pf(const float4 *p)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    float4 v;
    asm("ld.global.L2::256B.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
    return v;
#else
    return gpukb_ld_plain(p);
#endif
}

#define GPUKB_COPY_SPREAD(NAME, U, LOAD)                                                             \
    extern "C" __global__ void NAME(const float4 *src, float4 *dst, unsigned long long n4)           \
    {                                                                                                \
        unsigned long long stride = (unsigned long long)blockDim.x * gridDim.x;                      \
        unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;            \
        for (; i + ((U) - 1) * stride < n4; i += (U) * stride) {                                     \
            float4 v[U];                                                                             \
            _Pragma("unroll") for (int u = 0; u < (U); ++u) v[u] = LOAD(src + i + u * stride);       \
            _Pragma("unroll") for (int u = 0; u < (U); ++u) dst[i + u * stride] = v[u];              \
        }                                                                                            \
        for (; i < n4; i += stride) dst[i] = src[i];                                                 \
    }

GPUKB_COPY_SPREAD(gpukb_copy_v4_plain, 4, gpukb_ld_plain)
GPUKB_COPY_SPREAD(gpukb_copy_v4_l2pf, 4, gpukb_ld_l2pf)
GPUKB_COPY_SPREAD(gpukb_copy_v4_u8, 8, gpukb_ld)

// Block-chunked: block b copies its own contiguous 1/gridDim share of the
// buffer, tile by tile (4 loads in flight per thread).
extern "C" __global__ void gpukb_copy_v4_chunk(const float4 *__restrict__ src, float4 *__restrict__ dst,
                                              unsigned long long n4)
{
    unsigned long long tile = (unsigned long long)blockDim.x * 4;
    unsigned long long per_block = (n4 + gridDim.x - 1) / gridDim.x;
    per_block = (per_block + tile - 1) / tile * tile;
    unsigned long long begin = (unsigned long long)blockIdx.x * per_block;
    unsigned long long end = begin + per_block < n4 ? begin + per_block : n4;
    unsigned long long i = begin + threadIdx.x;
    for (; i + 3 * blockDim.x < end; i += tile) {
        float4 a = src[i], b = src[i + blockDim.x], c = src[i + 2 * blockDim.x], d = src[i + 3 * blockDim.x];
        dst[i] = a;
        dst[i + blockDim.x] = b;
        dst[i + 2 * blockDim.x] = c;
        dst[i + 3 * blockDim.x] = d;
    }
    for (; i < end; i += blockDim.x) dst[i] = src[i];
}
