//! Links the doctor's findings to the knowledge base's entries: the doctor
//! (`gpukb_doctor`) judges a machine without the KB, then [`Kb::link_entries`]
//! fills each finding's `kb_entries`, ordered by how well each entry fits the
//! machine (a KB search, its GPU generations, the placement of its fixes).

use crate::Kb;
use gpukb_doctor::fixes::Platform;
use gpukb_doctor::{Diagnosis, Finding, Layer, Severity, View};
use gpukb_facts::Fingerprint;

impl Kb {
    /// Fills the `kb_entries` of every finding of `d`, a diagnosis of `fp`
    /// (`gpukb_doctor::diagnose`): entries whose `[[conditions]] when` names the
    /// finding's check, then those of its category, best fit first, at most six.
    pub fn link_entries(&self, fp: &Fingerprint, d: &mut Diagnosis) {
        link_findings(self, &mut d.findings, &View::new(fp));
    }
}

/// Links each finding to the KB entries about it: entries whose conditions
/// name its check, then those of its category, ordered by how well each fits
/// this machine: a search of the KB with the finding's title, the GPUs and
/// the platform (so a V100 is not sent to the Blackwell entry, nor a bare-metal
/// machine to a Docker one), and an entry whose every fix the platform forbids
/// after the rest.
fn link_findings(kb: &Kb, findings: &mut [Finding], view: &View) {
    let Ok(index) = kb.entries_by_condition() else {
        return;
    };
    let platform = Platform::of(view);
    let where_ = match platform {
        Platform::Wsl2 => "WSL2 (the Windows driver through /usr/lib/wsl/lib)",
        Platform::Container => "inside a container",
        Platform::Jetson => "Jetson L4T",
        _ => "bare-metal host",
    };
    let generations: Vec<&'static str> = view
        .gpus()
        .iter()
        .filter_map(|g| gpukb_facts::driver_choice::Generation::from_cc(g.cc?))
        .map(|g| g.word().split_whitespace().next().unwrap_or(""))
        .collect();
    let gpus: Vec<String> = view
        .gpus()
        .iter()
        .map(|g| match g.cc {
            Some(cc) => format!(
                "{} ({} sm_{})",
                g.name,
                gpukb_facts::driver_choice::Generation::from_cc(cc).map_or("", |x| x.word()),
                cc.sm()
            ),
            None => g.name.clone(),
        })
        .collect();
    for f in findings.iter_mut() {
        // Entries whose conditions name this check, then those of its category.
        let mut ids: Vec<String> = Vec::new();
        for id in index.get(f.check.name()).cloned().unwrap_or_default() {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        if let Ok(same) = kb.list(Some(&f.category)) {
            for e in same {
                if !ids.contains(&e.id) {
                    ids.push(e.id);
                }
            }
        }
        // Ordered for what the doctor shows (`read:` of failures and warnings).
        if ids.len() > 1 && f.severity != Severity::Info {
            // The title and the machine, not the evidence: evidence lists (a
            // wheel's arch list) name GPUs this machine does not have.
            let text = format!("error: {}\n{where_}; GPU: {}", f.title, gpus.join(", "));
            let about_containers = f.layer == Layer::ContainerWsl;
            order_by_fit(
                kb,
                &mut ids,
                &text,
                (platform, about_containers),
                &generations,
            );
        }
        ids.truncate(6);
        f.kb_entries = ids;
    }
}

/// GPU generation names an entry's title may be about.
pub const GENERATIONS: &[&str] = &[
    "Kepler",
    "Maxwell",
    "Pascal",
    "Volta",
    "Turing",
    "Ampere",
    "Ada",
    "Hopper",
    "Blackwell",
];

/// Orders candidate entry ids: an entry whose every fix `platform` forbids,
/// or a container entry for a finding off containers, last; an entry whose title names a GPU generation this machine has first
/// and one that names only others after the rest; then by a KB search of
/// `text` (ids the search does not return keep their order after those it
/// does).
fn order_by_fit(
    kb: &Kb,
    ids: &mut [String],
    text: &str,
    (platform, about_containers): (Platform, bool),
    generations: &[&str],
) {
    let Ok(r) = kb.search(text, None, 100) else {
        return;
    };
    let pos = |id: &str| r.iter().position(|h| h.id == id).unwrap_or(usize::MAX);
    let fit = |id: &str| -> (bool, u8) {
        let Ok(Some(e)) = kb.entry(id) else {
            return (false, 1);
        };
        let named: Vec<&str> = GENERATIONS
            .iter()
            .copied()
            .filter(|g| e.title.to_lowercase().contains(&g.to_lowercase()))
            .collect();
        let generation = match named.is_empty() {
            true => 1,
            false if named.iter().any(|g| generations.contains(g)) => 0,
            false if generations.is_empty() => 1,
            false => 2,
        };
        let title = e.title.to_lowercase();
        // A container entry fits a finding off containers only when the
        // finding is about the container layer itself.
        let wrong_place = platform != Platform::Container
            && !about_containers
            && (title.contains("container") || title.contains("docker"));
        let unfit =
            wrong_place || crate::placement::place(Some(platform), id, e.fixes).nothing_left_to_do;
        (unfit, generation)
    };
    let keys: std::collections::HashMap<String, (bool, u8, usize)> = ids
        .iter()
        .map(|id| {
            let (unfit, g) = fit(id);
            (id.clone(), (unfit, g, pos(id)))
        })
        .collect();
    ids.sort_by_key(|id| keys[id]);
}
