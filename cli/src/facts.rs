//! Turns a machine's fingerprint into the facts the knowledge base's rules read.
//! (Filled in by the fingerprint work; until then no facts are available.)

/// Where `search` gets machine facts from.
#[derive(Debug, Clone)]
pub enum FactsSource {
    /// Detect on this machine.
    Detect,
    /// A fingerprint JSON written by `gpukb fingerprint --json`.
    FingerprintFile(std::path::PathBuf),
    /// A capture directory written by `gpukb capture`.
    Replay(std::path::PathBuf),
    /// Do not use machine facts.
    None,
}

/// Loads machine facts for the knowledge base's rules.
pub fn load_facts(source: &FactsSource) -> anyhow::Result<Option<gpukb_kb::MachineFacts>> {
    let _ = source;
    Ok(None)
}
