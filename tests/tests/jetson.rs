//! `gpukb fingerprint --root` on the Jetson board fixtures: every fact the
//! fixture's EXPECT file names appears in the fingerprint's Jetson section.
#![allow(clippy::disallowed_methods)] // tests read fixtures

use gpukb_agent::host::Host;
use gpukb_agent::{fingerprint, Settings};
use gpukb_tests::fixture;
use std::sync::Arc;

#[test]
fn every_jetson_fixture_names_its_module_l4t_and_jetpack() {
    let dir = fixture("");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.starts_with("jetson-") {
            continue;
        }
        seen += 1;
        let fp = fingerprint(Arc::new(Host::root_dir(&path)), &Settings::default());
        let jetson = fp
            .jetson
            .value()
            .unwrap_or_else(|| panic!("{name}: no Jetson section: {:?}", fp.jetson));
        let json = serde_json::to_string(jetson).unwrap();
        let expect = std::fs::read_to_string(path.join("EXPECT")).unwrap();
        for line in expect
            .lines()
            .filter(|l| !l.starts_with('#') && l.contains('='))
        {
            let (key, value) = line.split_once('=').unwrap();
            assert!(
                json.contains(&format!("\"{value}\"")),
                "{name}: expected {key}={value} in the Jetson section: {json}"
            );
        }
        // Jetson GPUs have no NVML on JetPack <= 6; under --root nothing is called.
        assert!(!fp.nvml.is_found());
    }
    assert!(seen >= 5, "only {seen} Jetson fixtures");
}
