//! Reading files that someone other than us can write (the config, agent settings, hook
//! managers' configurations, review output, `--plan` files): one reader that never blocks on
//! a FIFO, never reads a device, and stops one byte past its cap.

use std::fmt;
use std::io::Read as _;
use std::path::{Path, PathBuf};

/// What every input may hold at most: a plan, a report, a config, a settings file.
pub const CAP: u64 = 8 * 1024 * 1024;

/// Why a file was not read.
#[derive(Debug)]
pub enum FileError {
    /// A FIFO, a device, a socket or a directory where a file should be.
    NotRegular { path: PathBuf, kind: &'static str },
    /// More than the cap.
    TooLarge { path: PathBuf, cap: u64 },
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl FileError {
    /// What is wrong, without the path: for messages that name the file themselves.
    pub fn problem(&self) -> String {
        match self {
            FileError::NotRegular { kind, .. } => {
                format!("it is {kind}, not a regular file, and is not read")
            }
            FileError::TooLarge { cap, .. } if *cap >= 1024 * 1024 => format!(
                "it is larger than the limit of {} MiB, and is not read",
                cap / (1024 * 1024)
            ),
            FileError::TooLarge { cap, .. } => {
                format!("it is larger than the limit of {cap} bytes, and is not read")
            }
            FileError::Io { source, .. } => format!("it cannot be read: {source}"),
        }
    }

    pub fn path(&self) -> &Path {
        match self {
            FileError::NotRegular { path, .. }
            | FileError::TooLarge { path, .. }
            | FileError::Io { path, .. } => path,
        }
    }
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path().display(), self.problem())
    }
}

impl std::error::Error for FileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FileError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// The bytes of the file at `path` (a link is followed), `None` when there is none. Opened
/// without blocking, so a FIFO answers at once; judged by what was opened, so a link to
/// `/dev/zero` is refused as a device; read to at most `cap` bytes.
pub fn read_file(path: &Path, cap: u64) -> Result<Option<Vec<u8>>, FileError> {
    use rustix::fs::{Mode, OFlags};
    use std::os::unix::fs::FileTypeExt as _;
    let io = |source: std::io::Error| FileError::Io {
        path: path.to_path_buf(),
        source,
    };
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    let file = match rustix::fs::open(path, flags, Mode::empty()) {
        Ok(fd) => std::fs::File::from(fd),
        Err(e) if e == rustix::io::Errno::NOENT => return Ok(None),
        Err(e) => return Err(io(e.into())),
    };
    let meta = file.metadata().map_err(io)?;
    let kind = meta.file_type();
    let not = |kind: &'static str| FileError::NotRegular {
        path: path.to_path_buf(),
        kind,
    };
    if kind.is_dir() {
        return Err(not("a directory"));
    }
    if kind.is_fifo() {
        return Err(not("a FIFO"));
    }
    if kind.is_char_device() || kind.is_block_device() {
        return Err(not("a device"));
    }
    if kind.is_socket() {
        return Err(not("a socket"));
    }
    if !kind.is_file() {
        return Err(not("not a file"));
    }
    if meta.len() > cap {
        return Err(FileError::TooLarge {
            path: path.to_path_buf(),
            cap,
        });
    }
    let mut bytes = Vec::new();
    // The length can grow between the check and the read: the read stops past the cap too.
    file.take(cap + 1).read_to_end(&mut bytes).map_err(io)?;
    if bytes.len() as u64 > cap {
        return Err(FileError::TooLarge {
            path: path.to_path_buf(),
            cap,
        });
    }
    Ok(Some(bytes))
}

/// What a key file may hold at most: an SSH private key, even a large RSA one, is a few KiB.
pub const KEY_CAP: u64 = 64 * 1024;

/// Checks that `path` is a key file `ssh-keygen` may be handed: a regular file there, of at
/// most [`KEY_CAP`] bytes, opened as [`read_file`] opens it. `ssh-keygen -Y sign` given a FIFO
/// waits for a writer, and given `/dev/zero` reads forever; both are refused here at once.
pub fn check_key_file(path: &Path) -> Result<(), FileError> {
    match read_file(path, KEY_CAP)? {
        Some(_) => Ok(()),
        None => Err(FileError::Io {
            path: path.to_path_buf(),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_a_device_a_directory_and_a_large_file_are_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        let zero = dir.path().join("zero");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'x'; 11]).unwrap();
        let fine = dir.path().join("fine");
        std::fs::write(&fine, b"0123456789").unwrap();
        let linked = dir.path().join("linked");
        std::os::unix::fs::symlink(&fine, &linked).unwrap();
        let problem = |path: &Path| read_file(path, 10).unwrap_err().problem();
        assert_eq!(
            problem(&fifo),
            "it is a FIFO, not a regular file, and is not read"
        );
        assert_eq!(
            problem(&zero),
            "it is a device, not a regular file, and is not read"
        );
        assert_eq!(
            problem(dir.path()),
            "it is a directory, not a regular file, and is not read"
        );
        assert_eq!(
            read_file(&big, 10).unwrap_err().to_string(),
            format!(
                "{}: it is larger than the limit of 10 bytes, and is not read",
                big.display()
            )
        );
        assert_eq!(read_file(&fine, 10).unwrap().unwrap(), b"0123456789");
        assert_eq!(read_file(&linked, 10).unwrap().unwrap(), b"0123456789");
        assert!(read_file(&dir.path().join("none"), 10).unwrap().is_none());
    }

    #[test]
    fn a_key_file_is_a_regular_file_that_is_there() {
        let dir = tempfile::tempdir().unwrap();
        let key = dir.path().join("key");
        std::fs::write(&key, b"-----BEGIN OPENSSH PRIVATE KEY-----\n").unwrap();
        assert!(check_key_file(&key).is_ok());
        assert_eq!(
            check_key_file(Path::new("/dev/zero"))
                .unwrap_err()
                .problem(),
            "it is a device, not a regular file, and is not read"
        );
        assert!(check_key_file(&dir.path().join("none")).is_err());
        assert!(check_key_file(dir.path()).is_err());
    }
}
