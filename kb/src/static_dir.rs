//! A read-only tantivy [`Directory`] over index files embedded in the binary: tantivy
//! reads them in place (a `RamDirectory` would copy every file into the heap on each
//! start, a tenth of a one-line search's page faults).

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tantivy::directory::error::{DeleteError, LockError, OpenReadError, OpenWriteError};
use tantivy::directory::{
    Directory, DirectoryLock, FileHandle, Lock, WatchCallback, WatchHandle, WritePtr,
};

/// Files by name, borrowed from the binary.
#[derive(Debug, Clone)]
pub(crate) struct StaticDirectory {
    pub files: &'static [(&'static str, &'static [u8])],
}

impl StaticDirectory {
    fn file(&self, path: &Path) -> Option<&'static [u8]> {
        let name = path.to_str()?;
        self.files.iter().find(|(n, _)| *n == name).map(|(_, b)| *b)
    }
}

fn read_only() -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        "the embedded index is read-only",
    )
}

impl Directory for StaticDirectory {
    fn get_file_handle(&self, path: &Path) -> Result<Arc<dyn FileHandle>, OpenReadError> {
        match self.file(path) {
            Some(bytes) => Ok(Arc::new(bytes)),
            None => Err(OpenReadError::FileDoesNotExist(PathBuf::from(path))),
        }
    }

    fn delete(&self, path: &Path) -> Result<(), DeleteError> {
        Err(DeleteError::IoError {
            io_error: Arc::new(read_only()),
            filepath: PathBuf::from(path),
        })
    }

    fn exists(&self, path: &Path) -> Result<bool, OpenReadError> {
        Ok(self.file(path).is_some())
    }

    fn open_write(&self, path: &Path) -> Result<WritePtr, OpenWriteError> {
        Err(OpenWriteError::IoError {
            io_error: Arc::new(read_only()),
            filepath: PathBuf::from(path),
        })
    }

    fn atomic_read(&self, path: &Path) -> Result<Vec<u8>, OpenReadError> {
        match self.file(path) {
            Some(bytes) => Ok(bytes.to_vec()),
            None => Err(OpenReadError::FileDoesNotExist(PathBuf::from(path))),
        }
    }

    fn atomic_write(&self, _path: &Path, _data: &[u8]) -> io::Result<()> {
        Err(read_only())
    }

    fn sync_directory(&self) -> io::Result<()> {
        Ok(())
    }

    /// Nothing writes the embedded index, so readers need no lock file.
    fn acquire_lock(&self, _lock: &Lock) -> Result<DirectoryLock, LockError> {
        Ok(DirectoryLock::from(Box::new(())))
    }

    fn watch(&self, _callback: WatchCallback) -> tantivy::Result<WatchHandle> {
        Ok(WatchHandle::empty())
    }
}
