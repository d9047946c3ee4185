//! A machine described in words rather than observed (`gpukb plan --gpu
//! "RTX 4060 Ti" --driver 535 --python 3.12 --jetpack 6.2`): the one reading
//! of those descriptions into the planner's [`PlannerFacts`], either a
//! machine of its own ([`Described::machine`]) or overrides of an observed
//! one ([`Described::apply_to`]), with what a Jetson implies (aarch64, a
//! JetPack fact) filled in. Each error names the flag as the user wrote it.

use crate::builds::{parse_python, Arch, PyVersion};
use crate::gpus::{self, GpuClass};
use crate::plan::{DriverFact, GpuFact, JetsonFact, PlannerFacts};
use crate::version::{DriverVersion, ParseVersionError};
use gpukb_jetson::L4tVersion;

/// What the user said of a machine, each as given (`None`/empty: not said).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Described {
    /// GPUs by product name (`RTX 4060 Ti`), compute capability (`8.9`) or PCI id (`10de:2684`).
    pub gpus: Vec<String>,
    /// The driver: a release (`535.129.03`) or a bare branch (`535`).
    pub driver: Option<String>,
    /// The CPU architecture (`x86_64`, `aarch64`).
    pub arch: Option<String>,
    /// The Python version (`3.12`).
    pub python: Option<String>,
    /// The JetPack release (`6.2`).
    pub jetpack: Option<String>,
    /// The Jetson Linux (L4T) release (`36.4.3`).
    pub l4t: Option<String>,
}

/// Why a description could not be read; every message names the flag.
#[derive(Debug, thiserror::Error)]
pub enum DescribeError {
    /// A GPU that does not resolve.
    #[error("--gpu: {0}")]
    Gpu(gpus::UnknownGpu),
    /// `--jetpack`/`--l4t` for a machine with a GPU that is no Jetson.
    #[error("{flag}: {gpu} (compute capability {cc}) is not a Jetson GPU; JetPack and L4T exist only on Jetson modules (drop {flag}, or name the Jetson: --gpu \"Jetson Orin NX\")")]
    NotJetson {
        /// The flag as given (`--jetpack 6.2`).
        flag: String,
        /// The GPU's name.
        gpu: String,
        /// Its compute capability.
        cc: crate::ComputeCapability,
    },
    /// A driver release that does not parse.
    #[error("--driver {given:?}")]
    DriverRelease {
        /// The flag's value.
        given: String,
        /// Why it does not parse.
        #[source]
        source: ParseVersionError,
    },
    /// Neither a release nor a branch.
    #[error("--driver {0:?}: expected a release like 580.95.05 or a branch like 580")]
    DriverBranch(String),
    /// A driver version from the tables (or the bare branch) that does not parse.
    #[error(transparent)]
    Version(#[from] ParseVersionError),
    /// Neither x86_64 nor aarch64.
    #[error("--arch {0:?}: expected x86_64 or aarch64")]
    Arch(String),
    /// Not a Python 3 version.
    #[error("--python {0:?}: expected a version like 3.12")]
    Python(String),
    /// An L4T release that does not parse.
    #[error("--l4t {given:?}: {why}")]
    L4t {
        /// The flag's value.
        given: String,
        /// Why it does not parse.
        why: gpukb_jetson::error::JetsonError,
    },
    /// Not a JetPack release number.
    #[error("--jetpack {0:?}: expected a release like 6.2")]
    JetpackSyntax(String),
    /// A JetPack release the table does not have (and not newer than it).
    #[error("--jetpack {0:?}: not a JetPack release in my table (give --l4t instead)")]
    JetpackUnknown(String),
}

impl PlannerFacts {
    /// A machine nothing is known of yet, to be described (`described machine`).
    fn undescribed() -> PlannerFacts {
        PlannerFacts {
            label: "described machine".into(),
            gpus: Vec::new(),
            gpus_unknown: None,
            driver: DriverFact::Unknown("not given: --driver".into()),
            driver_cuda: None,
            arch: None,
            python: None,
            jetson: None,
        }
    }
}

impl Described {
    /// The machine this description alone names (no machine observed).
    pub fn machine(&self) -> Result<PlannerFacts, DescribeError> {
        self.apply(PlannerFacts::undescribed(), true)
    }

    /// `m`, an observed machine, with what the description says in place of
    /// what was observed, and what a Jetson implies filled in.
    pub fn apply_to(&self, m: PlannerFacts) -> Result<PlannerFacts, DescribeError> {
        self.apply(m, false)
    }

    /// Overrides the facts of `m` with the description, then fills in what a
    /// Jetson implies (aarch64, a JetPack fact); `described`: `m` is
    /// [`Described::machine`]'s, whose architecture follows its GPUs.
    fn apply(&self, mut m: PlannerFacts, described: bool) -> Result<PlannerFacts, DescribeError> {
        if !self.gpus.is_empty() {
            m.gpus = gpus_of(&self.gpus)?;
            m.gpus_unknown = None;
        }
        self.reject_jetson_without_jetson(&m)?;
        if let Some(d) = &self.driver {
            m.driver = driver_of(d)?;
            m.driver_cuda = None;
        }
        if let Some(a) = &self.arch {
            m.arch = Some(arch_of(a)?);
        }
        if let Some(p) = &self.python {
            m.python = Some(python_of(p)?);
        }
        if let Some(l) = &self.l4t {
            m.jetson = Some(jetson_of_l4t(l)?);
        }
        if let Some(jp) = &self.jetpack {
            m.jetson = Some(jetson_of_jetpack(jp)?);
        }
        infer_platform(&mut m, described);
        Ok(m)
    }

    /// Refuses `--jetpack`/`--l4t` when one of the machine's GPUs is not a Jetson.
    fn reject_jetson_without_jetson(&self, m: &PlannerFacts) -> Result<(), DescribeError> {
        let flag = self
            .jetpack
            .as_ref()
            .map(|j| format!("--jetpack {j}"))
            .or(self.l4t.as_ref().map(|l| format!("--l4t {l}")));
        let not_jetson = m
            .gpus
            .iter()
            .find(|g| g.class != GpuClass::Jetson && !crate::compat::is_tegra(g.cc.pair()));
        match (flag, not_jetson) {
            (Some(flag), Some(g)) => Err(DescribeError::NotJetson {
                flag,
                gpu: g.name.clone(),
                cc: g.cc,
            }),
            _ => Ok(()),
        }
    }
}

/// Reads GPUs given by product name, compute capability or PCI id.
fn gpus_of(given: &[String]) -> Result<Vec<GpuFact>, DescribeError> {
    given
        .iter()
        .map(|g| {
            let r = gpus::resolve(g).map_err(DescribeError::Gpu)?;
            Ok(GpuFact {
                name: r.name,
                cc: r.cc,
                class: r.class,
                in_table: r.in_table,
                source: format!("--gpu {g:?} ({})", r.source),
            })
        })
        .collect()
}

/// Reads a driver: a release as given, or a bare branch as its first release in the tables.
fn driver_of(d: &str) -> Result<DriverFact, DescribeError> {
    if d.trim().contains('.') {
        let version =
            d.parse::<DriverVersion>()
                .map_err(|source| DescribeError::DriverRelease {
                    given: d.to_string(),
                    source,
                })?;
        return Ok(DriverFact::Known {
            version,
            note: None,
        });
    }
    let branch: u32 = d
        .trim()
        .parse()
        .ok()
        .filter(|b| (100..=9999).contains(b))
        .ok_or_else(|| DescribeError::DriverBranch(d.to_string()))?;
    let (version, note) = match crate::compat::first_release_of_branch(branch) {
        Some(r) => (r.parse()?, format!("driver {branch} read as {r}, the first R{branch} release in the CUDA release notes (Table 3)")),
        None => (d.trim().parse()?, format!("driver {branch}: no R{branch} release is in my tables; compared as {branch}")),
    };
    Ok(DriverFact::Known {
        version,
        note: Some(note),
    })
}

/// Reads a CPU architecture (x86_64 or aarch64).
pub fn arch_of(a: &str) -> Result<Arch, DescribeError> {
    Arch::parse(a).ok_or_else(|| DescribeError::Arch(a.to_string()))
}

/// Reads a Python version (3.X).
fn python_of(p: &str) -> Result<PyVersion, DescribeError> {
    parse_python(p)
        .filter(|v| v.0 == 3 && v.1 < 100)
        .ok_or_else(|| DescribeError::Python(p.to_string()))
}

/// Reads an L4T release into a Jetson fact, with the JetPack the table pairs it with.
fn jetson_of_l4t(l: &str) -> Result<JetsonFact, DescribeError> {
    let l4t =
        L4tVersion::parse(l.trim_start_matches(['R', 'r'])).map_err(|why| DescribeError::L4t {
            given: l.to_string(),
            why,
        })?;
    let jetpack = match gpukb_jetson::tables::lookup_l4t(l4t) {
        gpukb_jetson::tables::L4tLookup::Known(r) => Some(r.jetpack),
        gpukb_jetson::tables::L4tLookup::Unknown {
            inferred_jetpack_major,
            ..
        } => inferred_jetpack_major.map(|j| format!("{j}.x")),
    };
    Ok(JetsonFact {
        jetpack,
        l4t: Some(l4t),
    })
}

/// The newest L4T release the table pairs with JetPack `jp`.
fn jetpack_to_l4t(jp: &str) -> Option<L4tVersion> {
    let want = jp.trim();
    gpukb_jetson::tables::jetpack_table()
        .iter()
        .filter(|r| r.jetpack.split_whitespace().next().unwrap_or("") == want)
        .map(|r| r.l4t)
        .max()
}

/// Reads a JetPack release into a Jetson fact, with the newest L4T the table pairs it with.
fn jetson_of_jetpack(jp: &str) -> Result<JetsonFact, DescribeError> {
    jp.split('.')
        .next()
        .and_then(|s| s.parse::<u32>().ok())
        .filter(|j| (4..=20).contains(j))
        .ok_or_else(|| DescribeError::JetpackSyntax(jp.to_string()))?;
    let l4t = jetpack_to_l4t(jp);
    let newest = gpukb_jetson::tables::jetpack_table()
        .last()
        .map(|r| r.jetpack.clone())
        .unwrap_or_default();
    let newer_than_table =
        gpukb_jetson::version::major_minor(jp) > gpukb_jetson::version::major_minor(&newest);
    if l4t.is_none() && !newer_than_table {
        return Err(DescribeError::JetpackUnknown(jp.to_string()));
    }
    Ok(JetsonFact {
        jetpack: Some(jp.trim().to_string()),
        l4t,
    })
}

/// Fills in the architecture (a described machine's from its GPUs; every
/// Jetson is aarch64) and the Jetson fact a Jetson GPU implies.
fn infer_platform(m: &mut PlannerFacts, described: bool) {
    if described && m.arch.is_none() {
        let aarch64 = m.jetson.is_some()
            || m.gpus.iter().any(|g| {
                g.class == GpuClass::Jetson
                    || g.name.starts_with("GH")
                    || g.name.starts_with("GB")
                    || g.name.contains("DGX Spark")
            });
        m.arch = Some(if aarch64 { Arch::Aarch64 } else { Arch::X86_64 });
    }
    if m.arch.is_none()
        && (m.jetson.is_some() || m.gpus.iter().any(|g| g.class == GpuClass::Jetson))
    {
        // Every Jetson is aarch64.
        m.arch = Some(Arch::Aarch64);
    }
    if m.jetson.is_none() && m.gpus.iter().any(|g| g.class == GpuClass::Jetson) {
        m.jetson = Some(JetsonFact {
            jetpack: None,
            l4t: None,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn described(gpus: &[&str]) -> Described {
        Described {
            gpus: gpus.iter().map(|g| g.to_string()).collect(),
            ..Described::default()
        }
    }

    #[test]
    fn a_described_jetson_is_aarch64_with_a_jetpack_fact() {
        let m = described(&["Jetson Orin NX"]).machine().unwrap();
        assert_eq!(m.label, "described machine");
        assert_eq!(m.arch, Some(Arch::Aarch64));
        assert!(m.jetson.is_some());
        let m = described(&["8.9"]).machine().unwrap();
        assert_eq!(m.arch, Some(Arch::X86_64));
        assert!(m.jetson.is_none());
    }

    #[test]
    fn a_bare_branch_reads_as_its_first_release() {
        let d = Described {
            driver: Some("535".into()),
            ..described(&["8.9"])
        };
        let DriverFact::Known { version, note } = d.machine().unwrap().driver else {
            panic!("driver not known");
        };
        assert!(version.to_string().starts_with("535."), "{version}");
        assert!(note.unwrap().starts_with("driver 535 read as 535."));
    }

    #[test]
    fn errors_name_the_flag() {
        let bad = |d: Described| d.machine().unwrap_err().to_string();
        let with = |f: fn(&mut Described)| {
            let mut d = described(&["8.9"]);
            f(&mut d);
            d
        };
        assert_eq!(
            bad(with(|d| d.driver = Some("5".into()))),
            "--driver \"5\": expected a release like 580.95.05 or a branch like 580"
        );
        assert_eq!(
            bad(with(|d| d.arch = Some("mips".into()))),
            "--arch \"mips\": expected x86_64 or aarch64"
        );
        assert_eq!(
            bad(with(|d| d.python = Some("2.7".into()))),
            "--python \"2.7\": expected a version like 3.12"
        );
        let not_jetson = bad(with(|d| d.jetpack = Some("x".into())));
        assert!(
            not_jetson.starts_with("--jetpack x: ")
                && not_jetson.contains("(compute capability 8.9) is not a Jetson GPU"),
            "{not_jetson}"
        );
        let jetson = |jp: &str| Described {
            jetpack: Some(jp.into()),
            ..described(&["Jetson Orin NX"])
        };
        assert_eq!(
            bad(jetson("x")),
            "--jetpack \"x\": expected a release like 6.2"
        );
        assert_eq!(
            bad(jetson("5.9")),
            "--jetpack \"5.9\": not a JetPack release in my table (give --l4t instead)"
        );
    }
}
