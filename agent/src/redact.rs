//! Redaction: replaces the private values of a machine (hostnames, machine
//! and boot ids, container and cloud instance ids, Kubernetes pod and node
//! names, user names and the paths under their homes, GPU UUIDs and serials,
//! Jetson serials and ECIDs, MAC and IP addresses, secret-looking env values,
//! credentials in URLs) by stable tokens of the same shape and byte length.
//!
//! Pure: [`Learner`] is shown texts, files, env variables and JSON and learns
//! which values are private; [`Redaction`] then rewrites bytes, text, JSON and
//! whole captures. A token is derived from a truncated SHA-256 of the value
//! (no salt), so two reports from one machine compare, and a capture rewritten
//! consistently (paths, journal keys, file contents, same length inside binary
//! files such as `ld.so.cache`) replays to the same diagnosis. This is
//! pseudonymisation, not anonymity: a guessable value (a hostname from a short
//! list) can be confirmed by hashing the guess. A hostname of one or two bytes
//! (`vm`) is replaced only where it is written as a hostname, never as a bare
//! word (`/proc/sys/vm`, `nvidia-uvm` stay): see `ShortHosts`.

use crate::host::{CaptureData, Journal, Recorded};
use regex::bytes::Regex;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

/// What kind of private value a token stands for (its tag).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum PrivateKind {
    /// A hostname, pod or node name.
    Host,
    /// A user name (the first component under `/home`, `$USER`).
    User,
    /// A path component under a home directory.
    Path,
    /// An id or serial (machine id, boot id, instance id, serial number).
    Id,
    /// An IP address.
    Ip,
    /// A secret (token, key, password, URL credentials).
    Secret,
}

impl PrivateKind {
    fn tag(self) -> &'static str {
        match self {
            PrivateKind::Host => "host",
            PrivateKind::User => "user",
            PrivateKind::Path => "path",
            PrivateKind::Id => "id",
            PrivateKind::Ip => "ip",
            PrivateKind::Secret => "secret",
        }
    }
}

/// Hex digits derived from `value`, as many as asked for.
fn hash_hex(kind: PrivateKind, value: &[u8], n: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(n + 64);
    let mut h: [u8; 32] = Sha256::new()
        .chain_update(kind.tag().as_bytes())
        .chain_update(b":")
        .chain_update(value)
        .finalize()
        .into();
    while out.len() < n {
        for b in h {
            out.push(b"0123456789abcdef"[(b >> 4) as usize]);
            out.push(b"0123456789abcdef"[(b & 15) as usize]);
        }
        h = Sha256::digest(h).into();
    }
    out.truncate(n);
    out
}

/// Whether `v` is made of hex digits and the separators of UUIDs and MACs
/// (with at least 8 hex digits), optionally after a `GPU-`/`MIG-`/`i-` prefix.
fn hex_shaped(v: &[u8]) -> bool {
    let body = ["GPU-", "MIG-", "i-"]
        .iter()
        .find_map(|p| v.strip_prefix(p.as_bytes()))
        .unwrap_or(v);
    body.iter().filter(|c| c.is_ascii_hexdigit()).count() >= 8
        && body
            .iter()
            .all(|c| c.is_ascii_hexdigit() || *c == b'-' || *c == b':')
}

/// The token standing for `value`: the same byte length; hex-shaped values
/// keep their separators, prefix and case (`GPU-` + hex), other values become
/// `<tag-hex>` (or hex alone when too short for a tag).
pub fn token(kind: PrivateKind, value: &[u8]) -> Vec<u8> {
    let n = value.len();
    if hex_shaped(value) {
        let prefix = ["GPU-", "MIG-", "i-"]
            .iter()
            .find(|p| value.starts_with(p.as_bytes()))
            .map_or(0, |p| p.len());
        let hex = hash_hex(kind, value, n);
        return value
            .iter()
            .enumerate()
            .map(|(i, &c)| {
                if i < prefix || !c.is_ascii_hexdigit() {
                    c
                } else if c.is_ascii_uppercase() {
                    hex[i].to_ascii_uppercase()
                } else {
                    hex[i]
                }
            })
            .collect();
    }
    if n < 4 {
        return hash_hex(kind, value, n);
    }
    let tag = kind.tag();
    // "<" tag "-" hex ">" with at least 2 hex digits; shorter: "<" hex ">".
    let room = n.saturating_sub(5);
    let mut out = Vec::with_capacity(n);
    out.push(b'<');
    if room >= 1 {
        let t = &tag.as_bytes()[..tag.len().min(room)];
        out.extend_from_slice(t);
        out.push(b'-');
        out.extend(hash_hex(kind, value, n - t.len() - 3));
    } else {
        out.extend(hash_hex(kind, value, n - 2));
    }
    out.push(b'>');
    out
}

/// Host and user names that are distribution or image defaults, not private,
/// and would clobber facts (`ID=ubuntu` in os-release, `/root`) if replaced
/// everywhere. Paths under `/home/ubuntu` are still rewritten.
const GENERIC_NAMES: &[&str] = &[
    "root",
    "admin",
    "user",
    "ec2-user",
    "localhost",
    "localhost.localdomain",
    "ubuntu",
    "debian",
    "fedora",
    "centos",
    "rhel",
    "rocky",
    "almalinux",
    "linux",
    "nvidia",
    "tegra",
    "jetson",
    "none",
    "(none)",
];

/// UUIDs that name a standard, not a machine (the EFI global variable GUID
/// in `/sys/firmware/efi/efivars/SecureBoot-…`, read by the system collector).
const PUBLIC_UUIDS: &[&str] = &["8be4df61-93ca-11d2-aa0d-e98c0130e1e1"];

/// Path components under a home directory that gpukb's collectors look for
/// (or that name a layout, not a person): kept, so a redacted capture is
/// still searched the same way.
const KEEP_COMPONENTS: &[&str] = &[
    ".cache",
    "pypoetry",
    "virtualenvs",
    ".virtualenvs",
    ".conda",
    "conda",
    "envs",
    "pkgs",
    "conda-meta",
    ".local",
    "share",
    "pipx",
    "venvs",
    ".pyenv",
    "versions",
    "anaconda3",
    "mambaforge",
    "miniconda3",
    "miniforge3",
    "micromamba",
    "lib",
    "lib64",
    "bin",
    "include",
    "site-packages",
    "dist-packages",
    ".venv",
    "venv",
    "env",
    "pyvenv.cfg",
    "python",
    "python3",
];

fn keep_component(c: &[u8]) -> bool {
    let Ok(c) = std::str::from_utf8(c) else {
        return false;
    };
    KEEP_COMPONENTS.contains(&c)
        || (c.starts_with("python3.")
            && c["python3.".len()..]
                .trim_end_matches('t')
                .bytes()
                .all(|b| b.is_ascii_digit()))
        || (c.starts_with("lib") && c.contains(".so"))
}

/// Files whose whole (trimmed) contents are a private value.
fn private_file(path: &str) -> Option<PrivateKind> {
    const HOST: &[&str] = &[
        "/etc/hostname",
        "/proc/sys/kernel/hostname",
        "/etc/mailname",
    ];
    const ID: &[&str] = &[
        "/etc/machine-id",
        "/var/lib/dbus/machine-id",
        "/proc/sys/kernel/random/boot_id",
        "/proc/device-tree/serial-number",
        "/sys/firmware/devicetree/base/serial-number",
    ];
    const DMI: &[&str] = &[
        "product_uuid",
        "product_serial",
        "board_serial",
        "chassis_serial",
        "board_asset_tag",
        "chassis_asset_tag",
    ];
    if HOST.contains(&path) {
        return Some(PrivateKind::Host);
    }
    let file = path.rsplit('/').next().unwrap_or(path);
    let dmi = (path.starts_with("/sys/class/dmi/id/")
        || path.starts_with("/sys/devices/virtual/dmi/id/"))
        && DMI.contains(&file);
    let tegra = file == "ecid" || file.contains("chip_uid") || file == "serial-number";
    (ID.contains(&path) || dmi || tegra).then_some(PrivateKind::Id)
}

/// What an environment variable's value is, when it is private.
fn private_env(name: &str) -> Option<PrivateKind> {
    let n = name.to_ascii_uppercase();
    if matches!(n.as_str(), "USER" | "LOGNAME" | "USERNAME" | "SUDO_USER") {
        return Some(PrivateKind::User);
    }
    if n == "HOSTNAME" || n.ends_with("POD_NAME") || n.ends_with("NODE_NAME") || n == "HOST" {
        return Some(PrivateKind::Host);
    }
    if n.ends_with("_TOKEN")
        || n.ends_with("_KEY")
        || n.ends_with("_SECRET")
        || n.contains("PASSWORD")
        || n.contains("PASSWD")
        || n == "TOKEN"
    {
        return Some(PrivateKind::Secret);
    }
    None
}

/// Keys of JSON objects whose string values are private.
fn private_key(key: &str) -> Option<PrivateKind> {
    match key {
        "uuid" | "serial" | "serial_number" | "board_serial" | "ecid" | "machine_id"
        | "boot_id" | "instance_id" => Some(PrivateKind::Id),
        "hostname" | "node_name" | "pod_name" => Some(PrivateKind::Host),
        _ => None,
    }
}

struct Patterns {
    /// GPU/MIG UUIDs, UUIDs, 64-hex container ids, MACs, AWS instance ids.
    hex: Regex,
    /// `scheme://user:password@`: the credentials (group 1).
    url_credentials: Regex,
    /// `Serial Number : X` lines (nvidia-smi -q, lshw, dmidecode).
    serial_line: Regex,
    /// `uname -a`: `Linux NODENAME RELEASE` (group 1), not `/proc/version`'s `Linux version`.
    uname: Regex,
    /// IPv4 addresses, only looked for in env values that hold addresses.
    ipv4: Regex,
    /// A path under `/home/USER` or `/root`, component by component.
    home_path: Regex,
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| {
        let r = |s: &str| Regex::new(s).unwrap_or_else(|e| panic!("redaction pattern {s}: {e}"));
        Patterns {
            hex: r(r"(?i)(?:\b(?:GPU|MIG)-)?\b(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{64}|(?:[0-9a-f]{2}:){5}[0-9a-f]{2}|i-[0-9a-f]{8}(?:[0-9a-f]{9})?)\b"),
            url_credentials: r(r"[A-Za-z][A-Za-z0-9+.-]*://([^/\s:@\x22']+:[^/\s@\x22']+)@"),
            serial_line: r(r"(?m)(?:Serial Number|Board Serial|Serial)\s*:\s*([A-Za-z0-9][A-Za-z0-9-]{3,})"),
            uname: r(r"(?m-u)^(?:GNU/)?Linux ([A-Za-z0-9][A-Za-z0-9.-]*) \d+\.\d+"),
            ipv4: r(r"\b(?:\d{1,3}\.){3}\d{1,3}\b"),
            home_path: r(r#"(?:/home|/root)(?:/[^/\x00-\x20"'<>:;,=\\|*?]+)+"#),
        }
    })
}

/// Collects the private values of one machine.
#[derive(Debug, Default, Clone)]
pub struct Learner {
    values: BTreeMap<Vec<u8>, PrivateKind>,
    /// Hostnames of 1–2 bytes (`vm`): too short to replace wherever they occur as a
    /// word, so they are replaced only where the text says it is a hostname
    /// ([`ShortHosts`]).
    short_hosts: BTreeSet<Vec<u8>>,
}

/// Whether `v` can be a hostname label or name (RFC 1123 letters, digits, `-`, `.`).
fn host_shaped(v: &[u8]) -> bool {
    !v.is_empty()
        && v.iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'-' || *b == b'.')
        && v[0].is_ascii_alphanumeric()
}

impl Learner {
    /// A learner that knows nothing yet.
    pub fn new() -> Learner {
        Learner::default()
    }

    fn add(&mut self, kind: PrivateKind, v: &[u8]) {
        let v = v.trim_ascii();
        if kind == PrivateKind::Host && v.len() < 3 {
            self.add_short_host(v);
            return;
        }
        if v.len() < 3 || v.contains(&0) {
            return;
        }
        if matches!(kind, PrivateKind::Host | PrivateKind::User) {
            if let Ok(s) = std::str::from_utf8(v) {
                if GENERIC_NAMES.contains(&s.to_ascii_lowercase().as_str()) {
                    return;
                }
            }
        }
        if kind == PrivateKind::Host {
            if let Ok(s) = std::str::from_utf8(v) {
                // The short name of an FQDN is private too.
                if let Some((short, _)) = s.split_once('.') {
                    if short.len() < 3 {
                        self.add_short_host(short.as_bytes());
                    } else if !GENERIC_NAMES.contains(&short) {
                        self.values.insert(short.as_bytes().to_vec(), kind);
                    }
                }
            }
        }
        if PUBLIC_UUIDS
            .iter()
            .any(|u| v.eq_ignore_ascii_case(u.as_bytes()))
        {
            return;
        }
        self.values.entry(v.to_vec()).or_insert(kind);
    }

    /// A hostname of 1–2 bytes, seen where a hostname is written.
    fn add_short_host(&mut self, v: &[u8]) {
        if host_shaped(v) {
            self.short_hosts.insert(v.to_vec());
        }
    }

    /// Learns the values the patterns recognise anywhere (UUIDs, container
    /// ids, MACs, instance ids, URL credentials, serial-number lines).
    pub fn text(&mut self, bytes: &[u8]) {
        let p = patterns();
        for m in p.hex.find_iter(bytes) {
            self.add(PrivateKind::Id, m.as_bytes());
        }
        for c in p.url_credentials.captures_iter(bytes) {
            if let Some(m) = c.get(1) {
                self.add(PrivateKind::Secret, m.as_bytes());
            }
        }
        for c in p.uname.captures_iter(bytes) {
            if let Some(m) = c.get(1).filter(|m| m.as_bytes() != b"version") {
                self.add(PrivateKind::Host, m.as_bytes());
            }
        }
        for c in p.serial_line.captures_iter(bytes) {
            if let Some(m) = c.get(1) {
                if !m.as_bytes().eq_ignore_ascii_case(b"N/A") {
                    self.add(PrivateKind::Id, m.as_bytes());
                }
            }
        }
    }

    /// Learns from a file read at `path` on the machine.
    pub fn file(&mut self, path: &str, bytes: &[u8]) {
        if let Some(kind) = private_file(path) {
            let v = bytes.split(|b| *b == b'\n').next().unwrap_or(bytes);
            let v: Vec<u8> = v.iter().copied().filter(|b| *b != 0).collect();
            self.add(kind, &v);
        }
        self.text(path.as_bytes());
        self.text(bytes);
    }

    /// Learns from one environment variable.
    pub fn env(&mut self, name: &str, value: &str) {
        let n = name.to_ascii_uppercase();
        if matches!(
            n.as_str(),
            "SSH_CONNECTION" | "SSH_CLIENT" | "KUBERNETES_SERVICE_HOST" | "KUBERNETES_PORT"
        ) || n.ends_with("_ADDR")
            || n.ends_with("_IP")
        {
            for m in patterns().ipv4.find_iter(value.as_bytes()) {
                self.add(PrivateKind::Ip, m.as_bytes());
            }
        }
        if let Some(kind) = private_env(name) {
            self.add(kind, value.as_bytes());
        }
        if n == "HOME" {
            if let Some(user) = value.strip_prefix("/home/") {
                self.add(
                    PrivateKind::User,
                    user.split('/').next().unwrap_or("").as_bytes(),
                );
            }
        }
        self.text(value.as_bytes());
    }

    /// Learns from a JSON document (keys such as `uuid` and `serial`, and
    /// every string, as text).
    pub fn json(&mut self, v: &serde_json::Value) {
        use serde_json::Value;
        match v {
            Value::String(s) => self.text(s.as_bytes()),
            Value::Array(a) => a.iter().for_each(|x| self.json(x)),
            Value::Object(o) => {
                for (k, x) in o {
                    self.text(k.as_bytes());
                    if let (Some(kind), Value::String(s)) = (private_key(k), x) {
                        self.add(kind, s.as_bytes());
                    }
                    self.json(x);
                }
                // `{"name": "HF_TOKEN", "value": "..."}` (the fingerprint's env list).
                if let (Some(Value::String(n)), Some(Value::String(val))) =
                    (o.get("name"), o.get("value"))
                {
                    self.env(n, val);
                }
            }
            _ => {}
        }
    }

    /// Learns from a whole capture: env, files, and the journal's answers.
    pub fn capture(&mut self, c: &CaptureData) {
        for (k, v) in &c.journal.env {
            self.env(k, v);
        }
        for (path, bytes) in &c.files {
            self.file(path, bytes);
        }
        if let Ok(v) = serde_json::to_value(&c.journal) {
            self.json(&v);
        }
    }

    /// How many private values are known.
    pub fn len(&self) -> usize {
        self.values.len() + self.short_hosts.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The rewriter for what was learnt.
    pub fn finish(self) -> Redaction {
        let mut needles = Vec::new();
        let mut tokens = Vec::new();
        for (v, kind) in &self.values {
            needles.push(v.clone());
            tokens.push(token(*kind, v));
        }
        let matcher = aho_corasick::AhoCorasick::builder()
            .match_kind(aho_corasick::MatchKind::LeftmostLongest)
            .build(&needles)
            .ok();
        Redaction {
            matcher,
            needles,
            tokens,
            short_hosts: ShortHosts::new(&self.short_hosts),
        }
    }
}

/// Rewrites bytes, text, JSON and captures, replacing every learnt value and
/// every path component under a home directory by its token.
#[derive(Debug, Clone)]
pub struct Redaction {
    matcher: Option<aho_corasick::AhoCorasick>,
    needles: Vec<Vec<u8>>,
    tokens: Vec<Vec<u8>>,
    short_hosts: Option<ShortHosts>,
}

/// Hostnames of 1–2 bytes and where they are replaced: never as a bare word (`vm` is
/// also `/proc/sys/vm`, `vm.swappiness`, and inside `nvidia-uvm` or `kvm`), only
///
/// - as a whole value where a hostname is written: the hostname files
///   (`/etc/hostname`, `/proc/sys/kernel/hostname`), env variables naming a host
///   (`HOSTNAME`, `*_NODE_NAME`), JSON keys `hostname`/`node_name`/`pod_name`;
/// - in text that says it is one ([`SHORT_HOST_CONTEXTS`]): `/etc/hosts` lines, `uname -a`'s
///   node name, a syslog line's host field, `user@host`, `host:port` (NCCL's
///   `host:pid:tid` prefix too), `hostname: host`, `HOSTNAME=host`.
#[derive(Debug, Clone)]
struct ShortHosts {
    /// (hostname, token).
    names: Vec<(Vec<u8>, Vec<u8>)>,
    /// The contexts with the hostnames in group `h`.
    contexts: Regex,
}

/// Text that names a host, with `{H}` where the hostname stands (group `h`, followed by a
/// byte that cannot continue a name, or the end of the line). ASCII, multi-line.
const SHORT_HOST_CONTEXTS: &[&str] = &[
    // /etc/hosts: an address, optional other names, the host.
    r"^[ \t]*(?:\d{1,3}(?:\.\d{1,3}){3}|[0-9A-Fa-f]*:[0-9A-Fa-f:.]*)(?:[ \t]+[A-Za-z0-9._-]+)*?[ \t]+(?P<h>{H})",
    // uname -a after the kernel name.
    r"^(?:GNU/)?Linux[ \t]+(?P<h>{H})",
    // A syslog or journalctl short line: timestamp, host.
    r"^(?:[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?)[ \t]+(?P<h>{H})",
    // user@host (prompts, ssh, scp).
    r"[A-Za-z0-9._-]@(?P<h>{H})",
    // host:port, and NCCL's host:pid:tid prefix.
    r#"(?:^|[\s="'(,\[])(?P<h>{H}):\d{2,6}"#,
    // hostname: host, HOSTNAME=host, "node_name": "host".
    r#"(?i:\b(?:hostname|host_name|host|nodename|node_name|pod_name)["']?[ \t]*[:=][ \t]*["']?)(?P<h>{H})"#,
];

impl ShortHosts {
    fn new(hosts: &BTreeSet<Vec<u8>>) -> Option<ShortHosts> {
        if hosts.is_empty() {
            return None;
        }
        let alts: Vec<String> = hosts
            .iter()
            .map(|h| regex::escape(&String::from_utf8_lossy(h)))
            .collect();
        let h = alts.join("|");
        let joined: Vec<String> = SHORT_HOST_CONTEXTS
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let c = c
                    .replace("{H}", &format!("(?:{h})"))
                    .replace("(?P<h>", &format!("(?P<h{i}>"));
                format!("(?:{c}(?:[^A-Za-z0-9_-]|$))")
            })
            .collect();
        let contexts = Regex::new(&format!("(?m-u){}", joined.join("|"))).ok()?;
        let names = hosts
            .iter()
            .map(|v| (v.clone(), token(PrivateKind::Host, v)))
            .collect();
        Some(ShortHosts { names, contexts })
    }

    /// The token of `v` when it is one of the hostnames.
    fn token_of(&self, v: &[u8]) -> Option<&[u8]> {
        self.names
            .iter()
            .find(|(n, _)| n.as_slice() == v)
            .map(|(_, t)| t.as_slice())
    }

    /// `v` with its trimmed whole replaced when that is one of the hostnames.
    fn whole(&self, v: &[u8]) -> Option<Vec<u8>> {
        let t = v.trim_ascii();
        let tok = self.token_of(t)?;
        let at = v.len() - v.trim_ascii_start().len();
        let mut out = v.to_vec();
        out[at..at + t.len()].copy_from_slice(tok);
        Some(out)
    }

    /// Replaces the hostnames in `b` where the text says they are one.
    fn in_context(&self, b: &mut [u8]) {
        let mut spans = Vec::new();
        let mut at = 0;
        while at < b.len() {
            let Some(c) = self.contexts.captures_at(b, at) else {
                break;
            };
            let Some(h) = (0..SHORT_HOST_CONTEXTS.len()).find_map(|i| c.name(&format!("h{i}")))
            else {
                break;
            };
            spans.push(h.range());
            // Resume after the host: the byte that ended it may begin the next context.
            at = h.end();
        }
        for r in spans {
            let v = b[r.clone()].to_vec();
            if let Some(tok) = self.token_of(&v) {
                b[r].copy_from_slice(tok);
            }
        }
    }
}

fn word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'_'
}

/// A byte that can be part of a path (the home-path pattern's component class, and `/`).
fn path_byte(b: u8) -> bool {
    b > 0x20 && !b"\"'<>:;,=\\|*?".contains(&b)
}

impl Redaction {
    /// How many private values this redaction replaces (besides home paths).
    pub fn len(&self) -> usize {
        self.needles.len() + self.short_hosts.as_ref().map_or(0, |s| s.names.len())
    }

    /// Whether it knows no private value (home paths are still rewritten).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Rewrites `b`; the result has the same length.
    pub fn bytes(&self, b: &[u8]) -> Vec<u8> {
        // Paths under homes first (a learnt user name inside them would stop
        // the path pattern at its token), then the learnt values.
        let mut paths = b.to_vec();
        for m in patterns().home_path.find_iter(b) {
            // Only a path that starts there (not `/srv/home/x`).
            if m.start() > 0 && path_byte(b[m.start() - 1]) {
                continue;
            }
            let rewritten = home_path(m.as_bytes());
            paths[m.start()..m.end()].copy_from_slice(&rewritten);
        }
        let mut out = paths.clone();
        if let Some(m) = &self.matcher {
            for hit in m.find_iter(&paths) {
                let (s, e) = (hit.start(), hit.end());
                let bounded = (s == 0 || !word_byte(paths[s - 1]))
                    && (e == paths.len() || !word_byte(paths[e]));
                if bounded {
                    out[s..e].copy_from_slice(&self.tokens[hit.pattern().as_usize()]);
                }
            }
        }
        if let Some(sh) = &self.short_hosts {
            sh.in_context(&mut out);
        }
        debug_assert_eq!(out.len(), b.len());
        out
    }

    /// Rewrites the contents of the machine file `path` (the same length): as
    /// [`Redaction::bytes`], and a hostname file whose first line is a short hostname.
    pub fn file(&self, path: &str, b: &[u8]) -> Vec<u8> {
        let mut out = self.bytes(b);
        if let (Some(sh), Some(PrivateKind::Host)) = (&self.short_hosts, private_file(path)) {
            let first = out.split(|c| *c == b'\n').next().unwrap_or(&[]).len();
            if let Some(line) = sh.whole(&out[..first]) {
                out[..first].copy_from_slice(&line);
            }
        }
        out
    }

    /// Rewrites a string (the same byte length).
    pub fn text(&self, s: &str) -> String {
        match String::from_utf8(self.bytes(s.as_bytes())) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        }
    }

    /// Rewrites every key and string of a JSON document.
    pub fn json(&self, v: &serde_json::Value) -> serde_json::Value {
        use serde_json::Value;
        match v {
            Value::String(s) => Value::String(self.text(s)),
            Value::Array(a) => Value::Array(a.iter().map(|x| self.json(x)).collect()),
            Value::Object(o) => {
                // `{"name": "HOSTNAME", "value": "vm"}` (the fingerprint's env list).
                let named_host = matches!(o.get("name"), Some(Value::String(n)) if private_env(n) == Some(PrivateKind::Host));
                Value::Object(
                    o.iter()
                        .map(|(k, x)| {
                            let host_key = private_key(k) == Some(PrivateKind::Host)
                                || private_env(k) == Some(PrivateKind::Host)
                                || (named_host && k == "value");
                            let short = match (host_key, x) {
                                (true, Value::String(s)) => self.short_host_value(s),
                                _ => None,
                            };
                            (self.text(k), short.unwrap_or_else(|| self.json(x)))
                        })
                        .collect(),
                )
            }
            other => other.clone(),
        }
    }

    /// A string that is, whole, a short hostname, replaced by its token.
    fn short_host_value(&self, s: &str) -> Option<serde_json::Value> {
        let red = self.short_hosts.as_ref()?.whole(s.as_bytes())?;
        Some(serde_json::Value::String(
            String::from_utf8_lossy(&red).into_owned(),
        ))
    }

    /// Rewrites a whole capture consistently: file paths and contents, the
    /// journal's keys and values, and the names in directory listings.
    pub fn capture(&self, c: &CaptureData) -> Result<CaptureData, serde_json::Error> {
        let mut journal = c.journal.clone();
        // A listing names entries relative to its directory: redact them as paths.
        for (dir, rec) in journal.lists.iter_mut() {
            if let Recorded::Ok(entries) = rec {
                for e in entries.iter_mut() {
                    let full = format!("{}/{}", dir.trim_end_matches('/'), e.name);
                    let red = self.text(&full);
                    if let Some(name) = red.rsplit('/').next() {
                        e.name = name.to_string();
                    }
                }
            }
        }
        let journal: Journal = serde_json::from_value(self.json(&serde_json::to_value(&journal)?))?;
        let files = c
            .files
            .iter()
            .map(|(p, b)| (self.text(p), self.file(p, b)))
            .collect();
        let mut journal = journal;
        journal.redacted = Some(format!(
            "{} private values and the paths under home directories, by gpukb {}",
            self.len(),
            env!("CARGO_PKG_VERSION")
        ));
        Ok(CaptureData { journal, files })
    }
}

/// `/home/alice/proj/.venv/lib/python3.12/site-packages/x` with every
/// component under the home replaced (the user by a user token), except the
/// layout names gpukb looks for and everything inside site-packages.
fn home_path(p: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(p.len());
    let mut parts = p.split(|b| *b == b'/');
    parts.next(); // "" before the leading '/'
    let Some(top) = parts.next() else {
        return p.to_vec();
    };
    out.push(b'/');
    out.extend_from_slice(top);
    let mut first = top == b"home";
    let mut inside_packages = false;
    for c in parts {
        out.push(b'/');
        if first {
            out.extend(token(PrivateKind::User, c));
            first = false;
        } else if inside_packages || keep_component(c) || c == b"." || c == b".." {
            out.extend_from_slice(c);
        } else {
            out.extend(token(PrivateKind::Path, c));
        }
        if c == b"site-packages" || c == b"dist-packages" {
            inside_packages = true;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_keep_length_and_shape_and_are_stable() {
        let uuid = b"GPU-e3344502-c9fc-0416-7091-4a6968e9d3e8";
        let t = token(PrivateKind::Id, uuid);
        assert_eq!(t.len(), uuid.len());
        assert!(t.starts_with(b"GPU-") && t != uuid.to_vec());
        assert_eq!(t[12], b'-');
        assert_eq!(t, token(PrivateKind::Id, uuid));
        let host = b"dgx-node-07.corp.example.com";
        let t = String::from_utf8(token(PrivateKind::Host, host)).unwrap();
        assert_eq!(t.len(), host.len());
        assert!(t.starts_with("<host-") && t.ends_with('>'), "{t}");
        for n in 1..12 {
            let v = vec![b'x'; n];
            assert_eq!(token(PrivateKind::User, &v).len(), n);
        }
        assert_ne!(
            token(PrivateKind::User, b"alice"),
            token(PrivateKind::User, b"alicf")
        );
    }

    #[test]
    fn home_paths_keep_the_layout_gpukb_searches() {
        let r = Learner::new().finish();
        let p =
            "/home/alice/work/llm/.venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so";
        let red = r.text(p);
        assert_eq!(red.len(), p.len());
        assert!(
            !red.contains("alice") && !red.contains("/work/") && !red.contains("/llm/"),
            "{red}"
        );
        assert!(
            red.contains("/.venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so"),
            "{red}"
        );
        assert!(red.starts_with("/home/<"), "{red}");
        // Stable: the same path twice, the same result; inside PATH lists too.
        assert_eq!(r.text(&format!("{p}:{p}")), format!("{red}:{red}"));
        // Already redacted text is left as it is.
        assert_eq!(r.text(&red), red);
        // Not a home: untouched.
        assert_eq!(r.text("/usr/local/cuda/lib64"), "/usr/local/cuda/lib64");
    }

    #[test]
    fn learnt_values_are_replaced_at_word_boundaries_only() {
        let mut l = Learner::new();
        l.file("/etc/hostname", b"gpu-box-7\n");
        l.env("HF_TOKEN", "hf_abcdefghijklmnop");
        l.env("SSH_CONNECTION", "203.0.113.9 50022 10.1.2.3 22");
        l.env(
            "PIP_INDEX_URL",
            "https://bob:s3cretpass@pypi.corp.example/simple",
        );
        l.text(b"0::/docker/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
        l.file(
            "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-e98c0130e1e1",
            b"",
        );
        let r = l.finish();
        let s = "gpu-box-7 gpu-box-70 hf_abcdefghijklmnop 203.0.113.9 bob:s3cretpass@ /docker/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef SecureBoot-8be4df61-93ca-11d2-aa0d-e98c0130e1e1 ID=ubuntu cuDNN 9.1.0.70";
        let red = r.text(s);
        assert_eq!(red.len(), s.len());
        for private in [
            "gpu-box-7 ",
            "hf_abcdef",
            "203.0.113.9",
            "s3cretpass",
            "0123456789abcdef0123",
        ] {
            assert!(!red.contains(private), "{private} in {red}");
        }
        // A longer word containing the hostname, the EFI GUID and versions stay.
        for public in [
            "gpu-box-70",
            "8be4df61-93ca-11d2-aa0d-e98c0130e1e1",
            "ID=ubuntu",
            "9.1.0.70",
        ] {
            assert!(red.contains(public), "{public} lost: {red}");
        }
        // The container id is still 64 hex digits (container detection reads its shape).
        let id = red
            .split("/docker/")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap();
        assert!(
            id.len() == 64 && id.bytes().all(|b| b.is_ascii_hexdigit()),
            "{id}"
        );
    }

    #[test]
    fn short_hostnames_are_replaced_only_where_they_are_hostnames() {
        let mut l = Learner::new();
        l.file("/etc/hostname", b"vm\n");
        let r = l.finish();
        assert_eq!(r.len(), 1);
        let tok = String::from_utf8(token(PrivateKind::Host, b"vm")).unwrap();
        for (text, want) in [
            ("127.0.1.1\tvm\n", format!("127.0.1.1\t{tok}\n")),
            (
                "127.0.0.1 localhost vm vm2\n",
                format!("127.0.0.1 localhost {tok} vm2\n"),
            ),
            (
                "Linux vm 6.8.0-45-generic #45 SMP x86_64 GNU/Linux",
                format!("Linux {tok} 6.8.0-45-generic #45 SMP x86_64 GNU/Linux"),
            ),
            (
                "Dec  1 10:00:00 vm kernel: nvidia-uvm: Loaded the UVM driver",
                format!("Dec  1 10:00:00 {tok} kernel: nvidia-uvm: Loaded the UVM driver"),
            ),
            ("alice@vm:~$ kvm-ok", format!("alice@{tok}:~$ kvm-ok")),
            (
                "vm:1234:1234 [0] NCCL INFO Bootstrap",
                format!("{tok}:1234:1234 [0] NCCL INFO Bootstrap"),
            ),
            ("NCCL_COMM_ID=vm:52000", format!("NCCL_COMM_ID={tok}:52000")),
            ("HOSTNAME=vm", format!("HOSTNAME={tok}")),
            ("\"hostname\": \"vm\",", format!("\"hostname\": \"{tok}\",")),
        ] {
            assert_eq!(r.text(text), want, "{text}");
        }
        // Not hostnames: a bare word, inside names, paths and sysctl keys.
        let other =
            "nvidia-uvm kvm /proc/sys/vm/swappiness vm.overcommit_memory = 1 --vm vmx VM vm\nvm\n";
        assert_eq!(r.text(other), other);
        // Whole values where a hostname is written.
        let j = serde_json::json!({"hostname": "vm", "other": "vm",
            "env": {"HOSTNAME": "vm", "TERM": "vm"},
            "list": [{"name": "HOSTNAME", "value": "vm"}, {"name": "MODE", "value": "vm"}]});
        let red = r.json(&j);
        assert_eq!(red["hostname"], tok.as_str());
        assert_eq!(red["env"]["HOSTNAME"], tok.as_str());
        assert_eq!(red["list"][0]["value"], tok.as_str());
        for kept in [&red["other"], &red["env"]["TERM"], &red["list"][1]["value"]] {
            assert_eq!(kept, "vm");
        }
        assert_eq!(
            r.file("/etc/hostname", b"vm\n"),
            format!("{tok}\n").into_bytes()
        );
        assert_eq!(
            r.file("/etc/modules-load.d/x.conf", b"vm\n"),
            b"vm\n".to_vec()
        );
        // uname -a teaches the node name; /proc/version's "Linux version" does not.
        let mut l = Learner::new();
        l.text(b"Linux version 6.8.0-45-generic (buildd@lcy02-amd64-080) (gcc 13)\n");
        assert!(l.is_empty());
        l.text(b"Linux q7 6.8.0-45-generic #45-Ubuntu SMP x86_64 GNU/Linux\n");
        assert_eq!(l.len(), 1);
        assert!(!l.finish().text("q7:29500").contains("q7"));
    }

    #[test]
    fn binary_contents_keep_their_length() {
        let mut l = Learner::new();
        l.env("HOME", "/home/carol");
        let r = l.finish();
        let mut cache = b"ld.so-1.7.0\0\0\0\x01\0\0\0".to_vec();
        cache.extend_from_slice(b"libfoo.so.1\0/home/carol/opt/lib/libfoo.so.1\0\xff\xfe");
        let red = r.bytes(&cache);
        assert_eq!(red.len(), cache.len());
        assert!(!red.windows(5).any(|w| w == b"carol"));
        assert!(red.ends_with(b"/lib/libfoo.so.1\0\xff\xfe"));
    }
}
