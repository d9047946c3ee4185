//! Checks of a Jetson: that it is one (context), and a partial L4T/JetPack upgrade.

use super::support::*;
use super::{Check, CheckId, Conclusion};
use crate::fixes;
use crate::view::View;
use crate::{Evidence, Layer, Severity};
use gpukb_facts::Observed;

/// Context: this is a Jetson (the L4T / JetPack report was found).
/// KB: `jetpack-l4t-release-mapping`.
pub(super) const ON_JETSON: Check = Check {
    id: CheckId::OnJetson,
    layer: Layer::Jetson,
    category: "jetson_jetpack_mismatch",
    explained_by: &[],
    context: true,
    meaning: "this is a Jetson (context)",
    run: on_jetson,
    fix: fixes::none,
};

fn on_jetson(v: &View) -> Conclusion {
    match &v.fp.jetson {
        Observed::Found { value, source } => found(finding(
            None,
            format!(
                "Jetson {} (L4T {})",
                value
                    .module
                    .as_ref()
                    .and_then(|m| m.name.clone())
                    .unwrap_or_else(|| value.model.clone().unwrap_or_default()),
                value
                    .l4t
                    .as_ref()
                    .map(|l| l.version.to_string())
                    .unwrap_or("?".into())
            ),
            Severity::Info,
            vec![Evidence::new("Jetson", source)],
        )),
        Observed::Absent { .. } => Conclusion::Clear("not a Jetson".into()),
        o => Conclusion::Undecided(o.why_not().unwrap_or("").to_string()),
    }
}

/// L4T, JetPack and the CUDA packages disagreeing (not benignly): a partial upgrade.
/// KB: `jetpack-l4t-release-mapping`, `jetson-container-for-other-l4t`.
pub(super) const JETSON_PARTIAL_UPGRADE: Check = Check {
    id: CheckId::JetsonPartialUpgrade,
    layer: Layer::Jetson,
    category: "jetson_jetpack_mismatch",
    explained_by: &[],
    context: false,
    meaning: "L4T/JetPack sources disagree: a partial upgrade",
    run: jetson_partial_upgrade,
    fix: fixes::none,
};

fn jetson_partial_upgrade(v: &View) -> Conclusion {
    let Observed::Found { value, source } = &v.fp.jetson else {
        return Conclusion::Clear("not a Jetson".into());
    };
    let bad: Vec<_> = value.disagreements.iter().filter(|d| !d.benign).collect();
    if bad.is_empty() {
        return Conclusion::Clear("L4T, JetPack and the CUDA packages agree".into());
    }
    let facts: Vec<&str> = bad.iter().map(|d| d.fact.as_str()).collect();
    found(
        finding(
            None,
            format!(
                "The Jetson's sources disagree on {}: a partial L4T/JetPack upgrade",
                facts.join(", ")
            ),
            Severity::Failure,
            bad.iter()
                .map(|d| Evidence::new(d.explanation.clone(), source))
                .collect(),
        )
        .confirm(&[
            "cat /etc/nv_tegra_release",
            "dpkg -l 'nvidia-l4t-*' | head",
            "apt-cache policy nvidia-jetpack",
        ]),
    )
}
