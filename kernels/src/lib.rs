//! CUDA probe kernels, prebuilt for each GPU architecture and embedded as data.
