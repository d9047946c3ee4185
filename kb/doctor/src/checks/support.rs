//! What the checks share: the finding builder, id finalisation, and the
//! helpers more than one layer's checks use (per-GPU NVML walks, cuInit's
//! result, the probe's results, the severity of an env's fault).

use super::{CheckId, Conclusion};
use crate::view::View;
use crate::{Affects, Evidence, Finding, Layer, Severity};
use gpukb_facts::{Observed, Source};

/// A finding of the running check: `suffix` tells it from the check's other
/// findings (`gpu1`, an env path). The check, layer and category are
/// placeholders the doctor fills in from the registry.
pub(super) fn finding(
    suffix: Option<String>,
    title: String,
    severity: Severity,
    evidence: Vec<Evidence>,
) -> Finding {
    Finding {
        id: suffix.unwrap_or_default(),
        check: CheckId::NoNvidiaGpuVisible,
        title,
        severity,
        layer: Layer::Hardware,
        root_cause: true,
        explained_by: None,
        category: String::new(),
        kb_entries: Vec::new(),
        affects: vec![Affects::host()],
        evidence,
        confirm: Vec::new(),
        fixes: Vec::new(),
    }
}

/// Builder sugar.
pub(super) trait Also {
    fn confirm(self, c: &[&str]) -> Self;
    fn affects(self, a: Vec<Affects>) -> Self;
}

impl Also for Finding {
    fn confirm(mut self, c: &[&str]) -> Self {
        self.confirm = c.iter().map(|s| s.to_string()).collect();
        self
    }
    fn affects(mut self, a: Vec<Affects>) -> Self {
        self.affects = a;
        self
    }
}

pub(super) fn found(f: Finding) -> Conclusion {
    Conclusion::Found(vec![f])
}

/// Fills in finding ids: `check` or `check:suffix`.
pub(crate) fn finalize_id(check: CheckId, f: &mut Finding) {
    f.id = if f.id.is_empty() {
        check.to_string()
    } else {
        format!("{check}:{}", f.id)
    };
}

pub(super) fn per_gpu<F>(v: &View, what: &str, mut f: F) -> Conclusion
where
    F: FnMut(&gpukb_facts::fingerprint::NvmlGpu, &Source) -> Option<(String, Severity)>,
{
    let nvml = match &v.fp.nvml {
        Observed::Found { value, source } => (value, source),
        o => return Conclusion::Undecided(format!("{what}: NVML {}", o.why_not().unwrap_or(""))),
    };
    let mut out = Vec::new();
    for g in &nvml.0.gpus {
        if let Some((title, sev)) = f(g, nvml.1) {
            out.push(
                finding(
                    Some(format!("gpu{}", g.index)),
                    title.clone(),
                    sev,
                    vec![Evidence::new(title, nvml.1)],
                )
                .affects(vec![Affects::gpu(g.index, &g.uuid)]),
            );
        }
    }
    if out.is_empty() {
        Conclusion::Clear(format!("{what}: none of {} GPU(s)", nvml.0.gpus.len()))
    } else {
        Conclusion::Found(out)
    }
}

pub(super) trait WithConfirm {
    fn with_confirm(self, c: &[&str]) -> Self;
}

impl WithConfirm for Conclusion {
    fn with_confirm(self, c: &[&str]) -> Self {
        match self {
            Conclusion::Found(v) => {
                Conclusion::Found(v.into_iter().map(|f| f.confirm(c)).collect())
            }
            o => o,
        }
    }
}

/// `cuInit`'s result as the user's process sees it: the child's answer in the
/// process's own libcuda when that is not gpukb's copy, else gpukb's.
pub(super) fn init_result(v: &View) -> Result<(String, Source), String> {
    match &v.fp.cuda {
        Observed::Found { value, .. } if value.process.value().is_some_and(|p| p.in_child) => {
            let p = value.process.value().expect("checked");
            Ok((p.init.clone(), value.process.source().clone()))
        }
        Observed::Found { value, .. } => match &value.init {
            Observed::Found { value, source } => Ok((value.clone(), source.clone())),
            o => Err(format!("cuInit: {}", o.why_not().unwrap_or(""))),
        },
        o => Err(format!("CUDA driver API: {}", o.why_not().unwrap_or(""))),
    }
}

pub(super) fn env_severity(v: &View, e: &gpukb_facts::fingerprint::PythonEnv) -> Severity {
    if v.is_active(e) {
        Severity::Failure
    } else {
        Severity::Warning
    }
}

pub(super) fn probed<F>(v: &View, what: &str, headline: &str, f: F) -> Conclusion
where
    F: Fn(&gpukb_facts::measured::ProbedGpu) -> Vec<String>,
{
    let Some(p) = v.probe else {
        return Conclusion::Undecided(format!(
            "{what}: the probe did not run (gpukb doctor --probe)"
        ));
    };
    let mut out = Vec::new();
    for g in &p.gpus {
        let items = f(g);
        if !items.is_empty() {
            out.push(
                finding(
                    Some(format!("gpu{}", g.ordinal)),
                    format!("GPU {} ({}) {headline}", g.ordinal, g.name),
                    Severity::Failure,
                    items
                        .iter()
                        .map(|i| Evidence::new(i.clone(), &p.source))
                        .collect(),
                )
                .affects(vec![Affects::gpu(g.ordinal as u32, "")]),
            );
        }
    }
    if out.is_empty() {
        Conclusion::Clear(format!("{what}: nothing on {} probed GPU(s)", p.gpus.len()))
    } else {
        Conclusion::Found(out)
    }
}
