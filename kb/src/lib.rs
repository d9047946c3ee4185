//! The gpukb knowledge base: diagnosis entries kept as reviewed data files,
//! compiled into SQLite and a tantivy index that ship inside the binary.
