//! nvpmodel power modes: `/etc/nvpmodel.conf` (a symlink to
//! `/etc/nvpmodel/nvpmodel_<board>.conf`) and `/var/lib/nvpmodel/status`.
//!
//! The configuration declares modes with `< POWER_MODEL ID=<n> NAME=<name> >`
//! headers and the boot default with `< PM_CONFIG DEFAULT=<n> >`. The status
//! file holds the mode that is active now, written by `nvpmodel -m`:
//! `pmode:0002 fmode:quiet` (the fan-mode part is absent on older releases).
//! Without a status file the active mode is the configuration's default.

use serde::{Deserialize, Serialize};

/// One `< POWER_MODEL ID=.. NAME=.. >` block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PowerModeDef {
    /// Mode id (what `nvpmodel -m` takes).
    pub id: u32,
    /// Mode name (`MAXN`, `15W`, `MAXN_SUPER`, `MODE_15W_6CORE`).
    pub name: String,
}

/// What an nvpmodel configuration declares.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NvpModelConf {
    /// Modes in file order.
    pub modes: Vec<PowerModeDef>,
    /// `< PM_CONFIG DEFAULT=n >`.
    pub default_mode: Option<u32>,
}

impl NvpModelConf {
    /// The name of mode `id`.
    pub fn name_of(&self, id: u32) -> Option<&str> {
        self.modes
            .iter()
            .find(|m| m.id == id)
            .map(|m| m.name.as_str())
    }
}

fn header_attrs(line: &str) -> Option<(&str, Vec<(&str, &str)>)> {
    let inner = line
        .trim()
        .strip_prefix('<')?
        .trim_end()
        .strip_suffix('>')?;
    let mut words = inner.split_whitespace();
    let kind = words.next()?;
    let attrs = words.filter_map(|w| w.split_once('=')).collect();
    Some((kind, attrs))
}

/// Parse an nvpmodel configuration. Lines that are not headers are ignored;
/// never fails.
pub fn parse_nvpmodel_conf(text: &str) -> NvpModelConf {
    let mut conf = NvpModelConf::default();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("");
        let Some((kind, attrs)) = header_attrs(line) else {
            continue;
        };
        let get = |k: &str| attrs.iter().find(|(a, _)| *a == k).map(|(_, v)| *v);
        match kind {
            "POWER_MODEL" => {
                if let (Some(id), Some(name)) =
                    (get("ID").and_then(|v| v.parse().ok()), get("NAME"))
                {
                    conf.modes.push(PowerModeDef {
                        id,
                        name: name.to_string(),
                    });
                }
            }
            "PM_CONFIG" => {
                if let Some(d) = get("DEFAULT").and_then(|v| v.parse().ok()) {
                    conf.default_mode = Some(d);
                }
            }
            _ => {}
        }
    }
    conf
}

/// `/var/lib/nvpmodel/status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NvpModelStatus {
    /// Active power mode id.
    pub pmode: u32,
    /// Fan mode, when recorded (`quiet`, `cool`, `fan_mode_quiet`).
    pub fmode: Option<String>,
}

/// Parse `pmode:0002 fmode:quiet`. `None` when there is no `pmode:`.
pub fn parse_nvpmodel_status(text: &str) -> Option<NvpModelStatus> {
    let mut pmode = None;
    let mut fmode = None;
    for word in text.split_whitespace() {
        if let Some(v) = word.strip_prefix("pmode:") {
            if v.len() <= 9 {
                pmode = v.parse().ok();
            }
        } else if let Some(v) = word.strip_prefix("fmode:") {
            fmode = Some(v.to_string());
        }
    }
    Some(NvpModelStatus {
        pmode: pmode?,
        fmode,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nano_conf() {
        let text = "# MAXN is the NONE power model to release all constraints\n< POWER_MODEL ID=0 NAME=MAXN >\nCPU_ONLINE CORE_0 1\nGPU MAX_FREQ -1\n\n< POWER_MODEL ID=1 NAME=5W >\nCPU_ONLINE CORE_2 0\n\n# mandatory section to configure the default mode\n< PM_CONFIG DEFAULT=0 >\n";
        let c = parse_nvpmodel_conf(text);
        assert_eq!(c.modes.len(), 2);
        assert_eq!(c.name_of(1), Some("5W"));
        assert_eq!(c.default_mode, Some(0));
    }

    #[test]
    fn status() {
        assert_eq!(
            parse_nvpmodel_status("pmode:0002 fmode:quiet\n"),
            Some(NvpModelStatus {
                pmode: 2,
                fmode: Some("quiet".into())
            })
        );
        assert_eq!(parse_nvpmodel_status("pmode:0000").unwrap().pmode, 0);
        assert_eq!(parse_nvpmodel_status(""), None);
        assert_eq!(parse_nvpmodel_status("pmode:xyz"), None);
        assert_eq!(parse_nvpmodel_status("pmode:99999999999999"), None);
    }

    #[test]
    fn garbage() {
        assert_eq!(
            parse_nvpmodel_conf("<<>>\n< >\n<POWER_MODEL ID=x>"),
            NvpModelConf::default()
        );
    }
}
