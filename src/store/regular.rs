//! Reading the repository's files without waiting on what is no file: a FIFO, a socket or a
//! device where git keeps a file (made there by hand, or by an agent with a shell) is an
//! error at once, never an `open` that waits for a writer or a read that runs on for ever
//! (`/dev/zero`).

use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;

use super::StoreError;

/// The file at `path` (a link followed), opened without waiting, if it is a regular file.
fn open_regular(
    path: &Path,
    options: &mut std::fs::OpenOptions,
) -> std::io::Result<(std::fs::File, std::fs::Metadata)> {
    let refused = |what: &str| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{} is not a regular file ({what})", path.display()),
        )
    };
    const WAITS: &str = "a FIFO, socket or device: using it would wait for ever";
    let file = match options.custom_flags(libc::O_NONBLOCK).open(path) {
        Ok(file) => file,
        // A FIFO opened to write, with no reader.
        Err(e) if e.raw_os_error() == Some(libc::ENXIO) => return Err(refused(WAITS)),
        Err(e) => return Err(e),
    };
    let meta = file.metadata()?;
    if meta.is_dir() {
        return Err(refused("a directory"));
    }
    if !meta.is_file() && !is_dev_null(&meta) {
        return Err(refused(WAITS));
    }
    Ok((file, meta))
}

/// `/dev/null`, which reads as empty at once: `GIT_CONFIG_GLOBAL=/dev/null` is how scripts
/// and CI keep a user's configuration out.
pub(crate) fn is_dev_null(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::{FileTypeExt as _, MetadataExt as _};
    meta.file_type().is_char_device() && meta.rdev() == rustix::fs::makedev(1, 3)
}

/// The regular file at `path` whole; not found is `NotFound`, as `std::fs::read` says it.
pub(crate) fn read(path: &Path) -> std::io::Result<Vec<u8>> {
    read_within(path, u64::MAX)
}

/// [`read`] of a file of at most `cap` bytes; a longer one is `InvalidData`.
pub(crate) fn read_within(path: &Path, cap: u64) -> std::io::Result<Vec<u8>> {
    let (file, meta) = open_regular(path, std::fs::OpenOptions::new().read(true))?;
    if meta.len() > cap {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("{} is longer than {cap} bytes", path.display()),
        ));
    }
    // Sized from the one `fstat` taken (`File::read_to_end` would take another, and seek),
    // and read into the spare capacity: zeroing it first cost a status 30,000 instructions.
    // One byte more, so that the read that finds the end needs no growth.
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0) + 1);
    loop {
        if bytes.len() == bytes.capacity() {
            // Written to since the `fstat`.
            bytes.reserve(4096);
        }
        match rustix::io::read(&file, rustix::buffer::spare_capacity(&mut bytes)) {
            Ok(0) => return Ok(bytes),
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
}

/// [`read`], as text.
pub(crate) fn read_to_string(path: &Path) -> std::io::Result<String> {
    String::from_utf8(read(path)?)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

/// The regular file at `path` opened with `options` (to append, say), never waiting on a
/// FIFO with no reader.
pub(crate) fn open(
    path: &Path,
    options: &mut std::fs::OpenOptions,
) -> std::io::Result<std::fs::File> {
    open_regular(path, options).map(|(file, _)| file)
}

/// Refuses a FIFO, socket or device at `path` (a link followed), where git and gix read a
/// file with a plain `open`: they would wait on it for ever.
pub(crate) fn refuse_waiting(path: &Path) -> Result<(), StoreError> {
    use std::os::unix::fs::FileTypeExt as _;
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(());
    };
    let kind = meta.file_type();
    if !is_dev_null(&meta)
        && (kind.is_fifo() || kind.is_socket() || kind.is_char_device() || kind.is_block_device())
    {
        return Err(StoreError::WouldHang(format!(
            "{} is not a regular file (a FIFO, socket or device) where git keeps one: reading it \
             would wait for ever; remove it",
            path.display()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_or_a_device_is_refused_at_once_and_a_file_is_read() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let fifo = dir.path().join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .expect("mkfifo");
        let zero = dir.path().join("zero");
        std::os::unix::fs::symlink("/dev/zero", &zero).expect("a link");
        for path in [&fifo, &zero] {
            let e = read(path).expect_err("refused");
            assert!(e.to_string().contains("is not a regular file"), "{e}");
            assert!(refuse_waiting(path).is_err());
            let e = open(path, std::fs::OpenOptions::new().append(true)).expect_err("refused");
            assert!(e.to_string().contains("is not a regular file"), "{e}");
        }
        let e = read(dir.path()).expect_err("a directory");
        assert_eq!(
            e.to_string(),
            format!(
                "{} is not a regular file (a directory)",
                dir.path().display()
            )
        );
        // Read as empty at once, as git reads it.
        let null = Path::new("/dev/null");
        assert_eq!(read(null).expect("read"), b"");
        assert!(refuse_waiting(null).is_ok());
        let file = dir.path().join("file");
        std::fs::write(&file, "x\n").expect("write");
        assert_eq!(read(&file).expect("read"), b"x\n");
        assert!(refuse_waiting(&file).is_ok());
        assert_eq!(
            read(&dir.path().join("none")).expect_err("absent").kind(),
            std::io::ErrorKind::NotFound
        );
    }
}
