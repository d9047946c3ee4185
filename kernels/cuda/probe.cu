// gpukb probe module: the one translation unit compiled for every architecture.
// Kernel entry names are mirrored as consts in kernels/src/lib.rs.
#include "smoke.cu"
#include "bandwidth.cu"
#include "fma.cu"
