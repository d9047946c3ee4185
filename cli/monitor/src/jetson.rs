//! Jetson telemetry from sysfs, without root, through the host seam (so a
//! copied root filesystem or a capture replays it): GPU load and frequency
//! (the devfreq node the stack snapshot found), thermal zones, INA3221
//! power rails (hwmon on JetPack 5+, the older `ina3221x` IIO nodes on
//! JetPack 4), and the nvpmodel mode. A file that exists but cannot be read
//! is reported `unsupported: needs root`, never as 0. Nothing is written:
//! unlike jtop, no clock, fan or power-mode control.

use crate::model::{Extra, GpuSample, Metric, Reading};
use gpukb_agent::host::{Host, HostError};
use gpukb_jetson::JetsonReport;

fn read_num(host: &Host, path: &str) -> Option<Result<f64, String>> {
    match host.read_string(path) {
        Ok(Some(s)) => Some(
            s.trim()
                .parse::<f64>()
                .map_err(|_| format!("{path}: not a number")),
        ),
        Ok(None) => None,
        Err(HostError::Io { message, .. }) if message.contains("ermission") => {
            Some(Err("unsupported: needs root".into()))
        }
        Err(e) => Some(Err(e.to_string())),
    }
}

fn reading(v: Option<Result<f64, String>>, scale: f64) -> Option<Reading> {
    v.map(|r| match r {
        Ok(x) => Reading::Value(x * scale),
        Err(e) => Reading::Unsupported(e),
    })
}

fn names(host: &Host, dir: &str) -> Vec<String> {
    let mut v: Vec<String> = host
        .list(dir)
        .ok()
        .flatten()
        .unwrap_or_default()
        .into_iter()
        .map(|e| e.name)
        .collect();
    v.sort();
    v
}

/// The integrated GPU's sample and the board's extra readings.
pub fn sample(host: &Host, report: &JetsonReport) -> (GpuSample, Vec<Extra>) {
    let mut readings = Vec::new();
    match &report.gpu {
        Some(g) => {
            if let Some(r) = g
                .load_path
                .as_deref()
                .and_then(|p| reading(read_num(host, p), 0.1))
            {
                readings.push((Metric::GpuUtil, r));
            }
            let cur = format!("{}/cur_freq", g.devfreq_path.trim_end_matches('/'));
            if let Some(r) = reading(read_num(host, &cur), 1e-6) {
                readings.push((Metric::SmClock, r));
            }
        }
        None => readings.push((
            Metric::GpuUtil,
            Reading::Unsupported("no GPU devfreq node found".into()),
        )),
    }
    // What Tegra's sysfs has no equivalent for is said so.
    for m in [Metric::FbUsed, Metric::EccDbeTotal, Metric::PcieReplay] {
        readings.push((
            m,
            Reading::Unsupported("not exposed on Jetson (integrated GPU)".into()),
        ));
    }
    let gpu = GpuSample {
        index: 0,
        uuid: String::new(),
        model: report.model.clone().unwrap_or_else(|| "Jetson".into()),
        readings,
        unresponsive: None,
    };
    let mut extra = thermal(host);
    extra.extend(rails(host));
    (gpu, extra)
}

fn thermal(host: &Host) -> Vec<Extra> {
    let mut out = Vec::new();
    for z in names(host, "/sys/class/thermal")
        .into_iter()
        .filter(|n| n.starts_with("thermal_zone"))
    {
        let base = format!("/sys/class/thermal/{z}");
        let ty = host
            .read_string(&format!("{base}/type"))
            .ok()
            .flatten()
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|| z.clone());
        if let Some(r) = reading(read_num(host, &format!("{base}/temp")), 0.001) {
            out.push(Extra {
                metric: "gpukb_thermal_zone_temp",
                help: "Jetson thermal zone temperature (C), from /sys/class/thermal.",
                labels: vec![("zone".into(), ty)],
                reading: r,
            });
        }
    }
    out
}

fn rails(host: &Host) -> Vec<Extra> {
    let mut out = Vec::new();
    let help = "Jetson INA3221 power rail (W): bus voltage x current, from sysfs.";
    // JetPack 5+: hwmon under the ina3221 driver.
    for dev in names(host, "/sys/bus/i2c/drivers/ina3221") {
        let hw_dir = format!("/sys/bus/i2c/drivers/ina3221/{dev}/hwmon");
        for hw in names(host, &hw_dir) {
            let base = format!("{hw_dir}/{hw}");
            for ch in 1..=4 {
                let Some(label) = host
                    .read_string(&format!("{base}/in{ch}_label"))
                    .ok()
                    .flatten()
                    .map(|s| s.trim().to_string())
                else {
                    continue;
                };
                let mv = read_num(host, &format!("{base}/in{ch}_input"));
                let ma = read_num(host, &format!("{base}/curr{ch}_input"));
                let r = match (mv, ma) {
                    (Some(Ok(v)), Some(Ok(i))) => Reading::Value(v * i / 1e6),
                    (Some(Err(e)), _) | (_, Some(Err(e))) => Reading::Unsupported(e),
                    _ => continue,
                };
                out.push(Extra {
                    metric: "gpukb_power_rail_watts",
                    help,
                    labels: vec![("rail".into(), label)],
                    reading: r,
                });
            }
        }
    }
    // JetPack 4: the ina3221x IIO driver reports power directly (mW).
    for dev in names(host, "/sys/bus/i2c/drivers/ina3221x") {
        let iio = format!("/sys/bus/i2c/drivers/ina3221x/{dev}");
        for d in names(host, &iio)
            .into_iter()
            .filter(|n| n.starts_with("iio:device"))
        {
            let base = format!("{iio}/{d}");
            for ch in 0..=2 {
                let Some(label) = host
                    .read_string(&format!("{base}/rail_name_{ch}"))
                    .ok()
                    .flatten()
                    .map(|s| s.trim().to_string())
                else {
                    continue;
                };
                if let Some(r) =
                    reading(read_num(host, &format!("{base}/in_power{ch}_input")), 0.001)
                {
                    out.push(Extra {
                        metric: "gpukb_power_rail_watts",
                        help,
                        labels: vec![("rail".into(), label)],
                        reading: r,
                    });
                }
            }
        }
    }
    out
}
