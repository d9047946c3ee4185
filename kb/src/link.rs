//! Links the doctor's findings to the knowledge base's entries: the doctor
//! (`gpukb_doctor`) judges a machine without the KB, then [`Kb::link_entries`]
//! fills each finding's `kb_entries`, ordered by how well each entry fits the
//! machine (a KB search, its GPU generations, the placement of its fixes);
//! [`Kb::linked_for_paste`] orders the same entries for one paste.

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
    let machine = MachineFit::of(view);
    let where_ = match machine.platform {
        Platform::Wsl2 => "WSL2 (the Windows driver through /usr/lib/wsl/lib)",
        Platform::Container => "inside a container",
        Platform::Jetson => "Jetson L4T",
        _ => "bare-metal host",
    };
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
            if let Ok(r) = kb.search(&text, None, 100) {
                let pos = |id: &str| r.iter().position(|h| h.id == id).unwrap_or(usize::MAX);
                machine.order(kb, &mut ids, f, pos);
            }
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

/// What about a machine decides whether an entry fits it: where it runs and the
/// generations of its GPUs.
struct MachineFit {
    platform: Platform,
    generations: Vec<&'static str>,
}

impl MachineFit {
    fn of(view: &View) -> MachineFit {
        MachineFit {
            platform: Platform::of(view),
            generations: view
                .gpus()
                .iter()
                .filter_map(|g| gpukb_facts::driver_choice::Generation::from_cc(g.cc?))
                .map(|g| g.word().split_whitespace().next().unwrap_or(""))
                .collect(),
        }
    }

    /// How `id` fits this machine for finding `f`, best first: (unfit, generation).
    /// Unfit: every fix the platform forbids, a container entry for a finding off
    /// containers on a machine that is not a container, or a Jetson entry off a Jetson. Generation: 0 when the title
    /// names a generation this machine has, 2 when it names only others, else 1.
    fn key(&self, kb: &Kb, id: &str, f: &Finding) -> (bool, u8) {
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
            false if named.iter().any(|g| self.generations.contains(g)) => 0,
            false if self.generations.is_empty() => 1,
            false => 2,
        };
        let title = e.title.to_lowercase();
        // A container entry fits a finding off containers only when the
        // finding is about the container layer itself.
        let wrong_place = (self.platform != Platform::Container
            && f.layer != Layer::ContainerWsl
            && (title.contains("container") || title.contains("docker")))
            // A Jetson entry fits only a Jetson.
            || (self.platform != Platform::Jetson && title.contains("jetson"));
        let unfit = wrong_place
            || crate::placement::place(Some(self.platform), id, e.fixes).nothing_left_to_do;
        (unfit, generation)
    }

    /// Orders `ids` by fit for this machine, then by `rank` (lower first; ids
    /// `rank` does not know keep their order after those it does).
    fn order(&self, kb: &Kb, ids: &mut [String], f: &Finding, rank: impl Fn(&str) -> usize) {
        let keys: std::collections::HashMap<String, (bool, u8, usize)> = ids
            .iter()
            .map(|id| {
                let (unfit, g) = self.key(kb, id, f);
                (id.clone(), (unfit, g, rank(id)))
            })
            .collect();
        ids.sort_by_key(|id| keys[id]);
    }
}

impl Kb {
    /// Orders confirmed hits by how each fits the machine for the finding that confirms
    /// it ([`MachineFit`]), keeping their order otherwise (a stable sort). Hits no finding
    /// confirms keep their place relative to each other.
    pub(crate) fn order_confirmed_by_fit(
        &self,
        facts: &crate::MachineFacts,
        hits: &mut [crate::Hit],
    ) {
        if hits.len() < 2 {
            return;
        }
        let fit = MachineFit::of(&View::new(facts.fingerprint()));
        let findings = &facts.diagnosis.findings;
        let key = |h: &crate::Hit| {
            let check = h.machine.as_ref().and_then(|m| m.check());
            match findings.iter().find(|f| Some(f.check.name()) == check) {
                Some(f) => fit.key(self, &h.id, f),
                None => (false, 1),
            }
        };
        let keys: Vec<(bool, u8)> = hits.iter().map(key).collect();
        let mut order: Vec<usize> = (0..hits.len()).collect();
        order.sort_by_key(|i| keys[*i]);
        let sorted: Vec<crate::Hit> = order.iter().map(|i| hits[*i].clone()).collect();
        hits.clone_from_slice(&sorted);
    }

    /// The entries linked to finding `f` (`f.kb_entries`) that a paste supports,
    /// ordered by fit for the machine of `fp`, then by the paste: `seen` holds the
    /// ids the paste's search returned, best first. The doctor's own order ranks
    /// by the finding's title; a paste is about one symptom, so among entries that
    /// fit the machine equally the one the paste names first comes first.
    pub fn linked_for_paste(&self, fp: &Fingerprint, f: &Finding, seen: &[String]) -> Vec<String> {
        let mut ids: Vec<String> = (f.kb_entries.iter())
            .filter(|id| seen.contains(id))
            .cloned()
            .collect();
        let pos = |id: &str| seen.iter().position(|s| s == id).unwrap_or(usize::MAX);
        MachineFit::of(&View::new(fp)).order(self, &mut ids, f, pos);
        ids
    }
}
