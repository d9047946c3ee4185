//! Reference figures the probe compares its measurements with, each with its
//! source: FP32 lanes per SM by compute capability, dense tensor-core
//! datasheet rates by model, PCIe per-lane bandwidth by generation, and DRAM
//! peak from clock and bus width. Pure tables, no I/O.

/// FP32 fused multiply-add lanes per SM (results per clock per multiprocessor
/// for 32-bit floating-point add/multiply/multiply-add), from the CUDA C++
/// Programming Guide, "Arithmetic Instructions" throughput table:
/// 5.x: 128; 6.0: 64; 6.1/6.2: 128; 7.x: 64; 8.0: 64; 8.6/8.7/8.9: 128;
/// 9.0: 128; 10.x/11.x/12.x (Blackwell): 128.
pub fn fp32_lanes_per_sm(cc: (u32, u32)) -> Option<u32> {
    match cc {
        (5, _) => Some(128),
        (6, 0) => Some(64),
        (6, _) => Some(128),
        (7, _) => Some(64),
        (8, 0) => Some(64),
        (8, _) => Some(128),
        (9, 0) => Some(128),
        (10..=12, _) => Some(128),
        _ => None,
    }
}

/// Theoretical FP32 FMA rate in TFLOP/s: SMs × clock × 2 × lanes.
pub fn fp32_peak_tflops(cc: (u32, u32), sms: u32, clock_khz: u32) -> Option<f64> {
    let lanes = fp32_lanes_per_sm(cc)?;
    Some(f64::from(sms) * f64::from(clock_khz) * 1e3 * 2.0 * f64::from(lanes) / 1e12)
}

/// A datasheet figure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Datasheet {
    /// Dense (no 2:4 sparsity) bf16/fp16 tensor-core TFLOP/s with FP32 accumulate.
    pub dense_bf16_tflops: f64,
    pub source: &'static str,
}

/// Dense bf16 (= fp16) tensor-core peak by device name (as `cuDeviceGetName`
/// reports it). NVIDIA datasheets print these with sparsity (2×); the dense
/// value is half. Most specific names first.
pub fn tensor_datasheet(name: &str) -> Option<Datasheet> {
    const TABLE: &[(&str, f64, &str)] = &[
        (
            "H200 NVL",
            835.5,
            "NVIDIA H200 datasheet, H200 NVL: BF16 1,671 TFLOPS with sparsity",
        ),
        (
            "H200",
            989.5,
            "NVIDIA H200 datasheet, H200 SXM: BF16 Tensor Core 1,979 TFLOPS with sparsity",
        ),
        (
            "GH200",
            989.5,
            "NVIDIA GH200 datasheet: BF16 1,979 TFLOPS with sparsity",
        ),
        (
            "H100 NVL",
            835.5,
            "NVIDIA H100 datasheet, H100 NVL: BF16 1,671 TFLOPS with sparsity",
        ),
        (
            "H100 PCIe",
            756.5,
            "NVIDIA H100 datasheet, H100 PCIe: BF16 1,513 TFLOPS with sparsity",
        ),
        (
            "H100",
            989.5,
            "NVIDIA H100 datasheet, H100 SXM: BF16 1,979 TFLOPS with sparsity",
        ),
        (
            "H800",
            989.5,
            "NVIDIA H800 SXM: same GH100 tensor rate as H100 SXM",
        ),
        (
            "A100",
            312.0,
            "NVIDIA A100 datasheet: BF16 Tensor Core 312 TFLOPS (624 with sparsity)",
        ),
        ("A800", 312.0, "NVIDIA A800: same GA100 tensor rate as A100"),
        (
            "A30",
            165.0,
            "NVIDIA A30 datasheet: BF16 165 TFLOPS (330 with sparsity)",
        ),
        (
            "A10G",
            70.0,
            "AWS/NVIDIA A10G: FP16 tensor 70 TFLOPS dense (estimate, not a public datasheet)",
        ),
        (
            "A10",
            125.0,
            "NVIDIA A10 datasheet: BF16 125 TFLOPS (250 with sparsity)",
        ),
        (
            "L40S",
            362.05,
            "NVIDIA L40S datasheet: BF16 733 TFLOPS with sparsity",
        ),
        (
            "L40",
            181.05,
            "NVIDIA L40 datasheet: BF16 362.1 TFLOPS with sparsity",
        ),
        (
            "L4",
            121.0,
            "NVIDIA L4 datasheet: BF16 242 TFLOPS with sparsity",
        ),
        (
            "RTX 4090",
            165.2,
            "Ada whitepaper, RTX 4090: FP16 tensor with FP32 accumulate 165.2 TFLOPS dense",
        ),
        (
            "B200",
            2250.0,
            "NVIDIA HGX B200: BF16 4.5 PFLOPS with sparsity per GPU",
        ),
    ];
    TABLE
        .iter()
        .find(|(k, _, _)| name.contains(k))
        .map(|&(_, t, s)| Datasheet {
            dense_bf16_tflops: t,
            source: s,
        })
}

/// Measured elsewhere on the same model, for comparison beside the datasheet:
/// `(model substring, TFLOP/s, source)`.
pub fn measured_gemm_baseline(name: &str) -> Option<(f64, &'static str)> {
    if name.contains("H200") && !name.contains("NVL") {
        // shared/fixtures/h200-live/bench.txt, torch 2.11.0+cu130, this workplace's H200.
        return Some((
            780.0,
            "torch.matmul bf16 8192^3 measured on an H200 (torch 2.11.0+cu130)",
        ));
    }
    None
}

/// Raw per-direction PCIe bandwidth in GB/s per lane for a link generation:
/// transfer rate × encoding efficiency / 8 (PCI-SIG: Gen1 2.5 GT/s and Gen2
/// 5 GT/s with 8b/10b; Gen3 8, Gen4 16, Gen5 32 GT/s with 128b/130b; Gen6 64
/// GT/s PAM4 with 242/256 FLIT efficiency).
pub fn pcie_lane_gbps(gen: u32) -> Option<f64> {
    match gen {
        1 => Some(2.5 * 0.8 / 8.0),
        2 => Some(5.0 * 0.8 / 8.0),
        3 => Some(8.0 * 128.0 / 130.0 / 8.0),
        4 => Some(16.0 * 128.0 / 130.0 / 8.0),
        5 => Some(32.0 * 128.0 / 130.0 / 8.0),
        6 => Some(64.0 * 242.0 / 256.0 / 8.0),
        _ => None,
    }
}

/// Raw per-direction PCIe bandwidth (GB/s) of a link of `gen` × `width`.
pub fn pcie_link_gbps(gen: u32, width: u32) -> Option<f64> {
    pcie_lane_gbps(gen).map(|l| l * f64::from(width))
}

/// DRAM peak (GB/s, read + write) from the driver's memory clock (kHz) and
/// bus width (bits), double data rate.
pub fn dram_peak_gbps(mem_clock_khz: u32, bus_bits: u32) -> f64 {
    2.0 * f64::from(mem_clock_khz) * 1e3 * f64::from(bus_bits) / 8.0 / 1e9
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn h200_figures() {
        // 132 SMs at 1980 MHz: 66.9 TFLOP/s (bench.txt).
        let p = fp32_peak_tflops((9, 0), 132, 1_980_000).unwrap();
        assert!((p - 66.9).abs() < 0.05, "{p}");
        assert_eq!(
            tensor_datasheet("NVIDIA H200").unwrap().dense_bf16_tflops,
            989.5
        );
        assert_eq!(
            tensor_datasheet("NVIDIA H200 NVL")
                .unwrap()
                .dense_bf16_tflops,
            835.5
        );
        assert_eq!(
            tensor_datasheet("NVIDIA L40S").unwrap().dense_bf16_tflops,
            362.05
        );
        assert_eq!(
            tensor_datasheet("NVIDIA L4").unwrap().dense_bf16_tflops,
            121.0
        );
        assert_eq!(
            tensor_datasheet("NVIDIA A10").unwrap().dense_bf16_tflops,
            125.0
        );
        assert!(tensor_datasheet("Orin").is_none());
        let g5 = pcie_link_gbps(5, 16).unwrap();
        assert!((g5 - 63.0).abs() < 0.1, "{g5}");
        assert!((pcie_link_gbps(1, 16).unwrap() - 4.0).abs() < 1e-9);
        assert_eq!(fp32_lanes_per_sm((8, 0)), Some(64));
        assert_eq!(fp32_lanes_per_sm((8, 6)), Some(128));
    }
}
