//! The filesystem handle of a path-scoped grant (feature `fs`).
//!
//! [`ToolContext::fs`](crate::ToolContext::fs) opens a cap-std [`Dir`] at the
//! granted root; every path a handler passes is resolved beneath that
//! directory's file descriptor, by the kernel where it can
//! (`openat2(RESOLVE_BENEATH)` on Linux) and by cap-std's own component walk
//! elsewhere. An absolute path, a `..` that climbs above the root, or a
//! symlink (found at any step, even one swapped in after an earlier call)
//! that points outside is refused, and a write through a read-only grant is
//! refused before the filesystem is touched. Each refusal is an
//! [`OutOfScope`] error, noted for the call's receipt.
//!
//! What it does not do: code that calls `std::fs` (or any other ambient API)
//! directly is not stopped. The handle makes the contained way the easy one;
//! forbid the ambient one in tool modules with a lint (see the README's
//! governance section for a `clippy.toml`).

use std::io::{self, Read as _};
use std::path::{Component, Path, PathBuf};

use cap_std::fs::{Dir, File, OpenOptions};

use crate::ToolContext;
use crate::capability::{Access, Capability, OutOfScope, Refusal, ScopeEntry, ScopeKind};

/// A directory handle at one granted root, with the grant's access. Paths
/// given to its methods are relative to the root (`notes/a.txt`).
#[derive(Debug)]
pub struct ScopedDir {
    ctx: ToolContext,
    capability: Capability,
    root: PathBuf,
    access: Access,
    dir: Dir,
}

/// Why a filesystem operation through a [`ScopedDir`] failed: outside the
/// grant, or the operating system's error inside it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FsError {
    /// The path (or the write) is outside the grant.
    #[error(transparent)]
    OutOfScope(#[from] OutOfScope),
    /// The operation failed inside the root (not found, a directory, …).
    #[error("{path:?}: {source}")]
    Io {
        /// The path as the handler gave it.
        path: String,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
}

impl FsError {
    /// The I/O error's kind, for an error inside the root.
    pub fn io_kind(&self) -> Option<io::ErrorKind> {
        match self {
            FsError::Io { source, .. } => Some(source.kind()),
            FsError::OutOfScope(_) => None,
        }
    }
}

pub(crate) fn open_roots(
    ctx: &ToolContext,
    capability: &Capability,
) -> Result<Vec<ScopedDir>, OutOfScope> {
    let scope = ctx.scope_for(capability, |k| matches!(k, ScopeKind::Paths(_)), "")?;
    let declared = match capability.kind() {
        ScopeKind::Paths(access) => access,
        _ => Access::Read,
    };
    let mut dirs = Vec::new();
    for entry in scope.entries() {
        let ScopeEntry::Root { path, access } = entry else {
            continue;
        };
        // The declaration caps the access whatever the grant says.
        let access = if declared == Access::Read {
            Access::Read
        } else {
            *access
        };
        match Dir::open_ambient_dir(path, cap_std::ambient_authority()) {
            Ok(dir) => dirs.push(ScopedDir {
                ctx: ctx.clone(),
                capability: *capability,
                root: path.clone(),
                access,
                dir,
            }),
            // A root that went away since startup grants nothing now.
            Err(e) => {
                tracing::warn!(capability = capability.name(), root = %path.display(), error = %e, "a granted root cannot be opened");
            }
        }
    }
    if dirs.is_empty() {
        return Err(ctx.refuse(capability, "", Refusal::NoScope));
    }
    Ok(dirs)
}

impl ScopedDir {
    /// The granted root (as the host wrote it).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// What the grant allows under the root.
    pub fn access(&self) -> Access {
        self.access
    }

    /// The path, refused when it is absolute or climbs above the root. The
    /// kernel (or cap-std) checks every step again when the path is used.
    fn relative<'p>(&self, path: &'p Path) -> Result<&'p Path, OutOfScope> {
        let mut depth = 0usize;
        for component in path.components() {
            match component {
                Component::Normal(_) => depth += 1,
                Component::CurDir => {}
                Component::ParentDir if depth > 0 => depth -= 1,
                Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                    return Err(self.outside(path));
                }
            }
        }
        Ok(path)
    }

    fn outside(&self, path: &Path) -> OutOfScope {
        self.ctx
            .refuse(&self.capability, shown(path), Refusal::Outside)
    }

    fn writable(&self, path: &Path) -> Result<(), OutOfScope> {
        match self.access {
            Access::ReadWrite => Ok(()),
            Access::Read => Err(self
                .ctx
                .refuse(&self.capability, shown(path), Refusal::ReadOnly)),
        }
    }

    /// An error of an operation on `path`: an escape cap-std caught (a
    /// symlink out of the root) is a refusal, anything else the OS's error.
    fn failed(&self, path: &Path, source: io::Error) -> FsError {
        if is_escape(&source) {
            FsError::OutOfScope(self.outside(path))
        } else {
            FsError::Io {
                path: shown(path),
                source,
            }
        }
    }

    /// Opens a file for reading.
    pub fn open(&self, path: impl AsRef<Path>) -> Result<File, FsError> {
        let path = path.as_ref();
        let relative = self.relative(path)?;
        self.dir.open(relative).map_err(|e| self.failed(path, e))
    }

    /// Reads a whole file, refusing one larger than `max_bytes`.
    pub fn read(&self, path: impl AsRef<Path>, max_bytes: u64) -> Result<Vec<u8>, FsError> {
        let path = path.as_ref();
        let file = self.open(path)?;
        let mut bytes = Vec::new();
        file.take(max_bytes.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| self.failed(path, e))?;
        if bytes.len() as u64 > max_bytes {
            return Err(FsError::Io {
                path: shown(path),
                source: io::Error::new(
                    io::ErrorKind::FileTooLarge,
                    format!("the file is larger than {max_bytes} bytes"),
                ),
            });
        }
        Ok(bytes)
    }

    /// The names in a directory (`"."` for the root), sorted.
    pub fn list(&self, path: impl AsRef<Path>) -> Result<Vec<String>, FsError> {
        let path = path.as_ref();
        let relative = self.relative(path)?;
        let entries = self
            .dir
            .read_dir(relative)
            .map_err(|e| self.failed(path, e))?;
        let mut names = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| self.failed(path, e))?;
            names.push(entry.file_name().to_string_lossy().into_owned());
        }
        names.sort();
        Ok(names)
    }

    /// Writes a whole file, creating or truncating it (its directory must
    /// exist). Refused through a read-only grant.
    pub fn write(&self, path: impl AsRef<Path>, contents: impl AsRef<[u8]>) -> Result<(), FsError> {
        let path = path.as_ref();
        self.writable(path)?;
        let relative = self.relative(path)?;
        self.dir
            .write(relative, contents)
            .map_err(|e| self.failed(path, e))
    }

    /// Creates a file for writing, failing if it exists. Refused through a
    /// read-only grant.
    pub fn create_new(&self, path: impl AsRef<Path>) -> Result<File, FsError> {
        let path = path.as_ref();
        self.writable(path)?;
        let relative = self.relative(path)?;
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        self.dir
            .open_with(relative, &options)
            .map_err(|e| self.failed(path, e))
    }

    /// Creates a directory and its parents. Refused through a read-only grant.
    pub fn create_dir_all(&self, path: impl AsRef<Path>) -> Result<(), FsError> {
        let path = path.as_ref();
        self.writable(path)?;
        let relative = self.relative(path)?;
        self.dir
            .create_dir_all(relative)
            .map_err(|e| self.failed(path, e))
    }

    /// Removes a file. Refused through a read-only grant.
    pub fn remove_file(&self, path: impl AsRef<Path>) -> Result<(), FsError> {
        let path = path.as_ref();
        self.writable(path)?;
        let relative = self.relative(path)?;
        self.dir
            .remove_file(relative)
            .map_err(|e| self.failed(path, e))
    }

    /// The cap-std directory itself, for operations this handle does not
    /// wrap; only through a read-write grant (a `Dir` can write).
    pub fn dir(&self) -> Result<&Dir, OutOfScope> {
        self.writable(Path::new("."))?;
        Ok(&self.dir)
    }
}

/// A path as a refusal and the receipt show it (lossy for non-UTF-8 names).
fn shown(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// Whether cap-std refused a path for leaving the root: its own error (a
/// `PermissionDenied` carrying its message), or the kernel's `EXDEV` of
/// `RESOLVE_BENEATH` where it passes it on.
fn is_escape(e: &io::Error) -> bool {
    (e.kind() == io::ErrorKind::PermissionDenied
        && e.get_ref()
            .is_some_and(|inner| inner.to_string().contains("outside of the filesystem")))
        || e.raw_os_error() == Some(EXDEV)
}

/// `EXDEV` on Linux and the BSDs alike.
const EXDEV: i32 = 18;
