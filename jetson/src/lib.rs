//! JetPack/L4T knowledge and pure parsers; this crate reads nothing itself.
