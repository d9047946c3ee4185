//! Typed errors of the knowledge base.

/// Errors from opening or querying the embedded knowledge base.
#[derive(Debug, thiserror::Error)]
pub enum KbError {
    /// The embedded SQLite database could not be read.
    #[error("knowledge-base database: {0}")]
    Db(#[from] rusqlite::Error),
    /// The embedded tantivy index could not be opened or queried.
    #[error("knowledge-base index: {0}")]
    Index(String),
    /// Stored JSON did not parse (a build bug).
    #[error("knowledge-base record: {0}")]
    Json(#[from] serde_json::Error),
    /// A labelled eval file has a bad line.
    #[error("line {line}: {message}")]
    EvalLine { line: usize, message: String },
    /// A labelled eval case names a category we do not know.
    #[error("{id}: label \"{label}\" is neither a category in kb/categories.tsv nor named by any category's same_as")]
    EvalLabel { id: String, label: String },
    /// A knowledge-base directory could not be compiled (`Kb::compile_dir`).
    #[error(transparent)]
    Compile(#[from] gpukb_kb_compile::CompileError),
    /// A code argument that could not be understood.
    #[error("cannot read \"{0}\" as an error code (try 209, CUDA_ERROR_NO_BINARY_FOR_GPU, cudaErrorNoKernelImageForDevice, \"xid 79\", \"nccl 2\")")]
    BadCode(String),
}

impl From<tantivy::TantivyError> for KbError {
    fn from(e: tantivy::TantivyError) -> Self {
        KbError::Index(e.to_string())
    }
}

impl From<tantivy::directory::error::OpenReadError> for KbError {
    fn from(e: tantivy::directory::error::OpenReadError) -> Self {
        KbError::Index(e.to_string())
    }
}
