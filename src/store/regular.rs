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
    checked(path, options.custom_flags(libc::O_NONBLOCK).open(path))
}

const WAITS: &str = "a FIFO, socket or device: using it would wait for ever";

/// `opened` (`path`, opened without waiting) if it is a regular file, with its metadata.
fn checked(
    path: &Path,
    opened: std::io::Result<std::fs::File>,
) -> std::io::Result<(std::fs::File, std::fs::Metadata)> {
    let refused = |what: &str| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{} is not a regular file ({what})", path.display()),
        )
    };
    let file = match opened {
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
    read_opened(
        path,
        open_regular(path, std::fs::OpenOptions::new().read(true)),
        cap,
    )
}

/// [`read`] of the file at `relative` under directory `dir` into `bytes` (`path` gives its
/// path, for errors): the kernel walks `relative` alone, not every directory above it (a
/// loose object's path from the objects directory: two names, not eight).
pub(crate) fn read_at(
    dir: rustix::fd::BorrowedFd<'_>,
    relative: impl rustix::path::Arg,
    path: impl Fn() -> std::path::PathBuf,
    bytes: &mut Vec<u8>,
) -> std::io::Result<()> {
    use rustix::fs::{Mode, OFlags};
    let opened = rustix::fs::openat(
        dir,
        relative,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map(std::fs::File::from)
    .map_err(std::io::Error::from);
    // A first read into the buffer (a page at least), before any `fstat`: a regular file
    // that fits is then read whole (a read of one stops short only at its end), one syscall
    // fewer for each of the hundreds of objects the board reads. It is a `pread`, which a
    // FIFO, a pipe or a terminal refuses (`ESPIPE`) without giving up what it holds: those
    // are refused by their `fstat` as before, and so is whatever does not fit (a device
    // that reads on), reads as nothing (`/dev/null`, an empty file) or fails to read.
    bytes.clear();
    if let Ok(file) = &opened {
        bytes.reserve(4096);
        let room = bytes.capacity();
        let read = loop {
            match rustix::io::pread(file, rustix::buffer::spare_capacity(&mut *bytes), 0) {
                Err(rustix::io::Errno::INTR) => {}
                other => break other,
            }
        };
        if matches!(read, Ok(n) if n > 0 && n < room) {
            return Ok(());
        }
        // Read again from its start once judged: `pread` left the offset where it was.
        bytes.clear();
    }
    let path = path();
    *bytes = read_opened(&path, checked(&path, opened), u64::MAX)?;
    Ok(())
}

/// The regular file opened as `opened`, whole, if it is at most `cap` bytes long.
fn read_opened(
    path: &Path,
    opened: std::io::Result<(std::fs::File, std::fs::Metadata)>,
    cap: u64,
) -> std::io::Result<Vec<u8>> {
    let (file, meta) = opened?;
    if meta.len() > cap {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("{} is longer than {cap} bytes", path.display()),
        ));
    }
    // Sized from the one `fstat` taken (`File::read_to_end` would take another, and seek),
    // and read into the spare capacity: zeroing it first cost a status 30,000 instructions.
    // One byte more, so that a file whose size says 0 and which holds bytes all the same (a
    // file of /proc) is read without growth for its first.
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0) + 1);
    loop {
        // Read to the size the `fstat` gave, as git reads its files (`read_in_full` of
        // `st_size`): no read more to find the end, one syscall in five of a loose object's
        // (the board reads hundreds). What is appended after the `fstat` (to a reflog, say)
        // is the next reader's; a size of 0 (`/dev/null`, a file of /proc) is read to its end.
        if meta.len() > 0 && bytes.len() as u64 >= meta.len() {
            return Ok(bytes);
        }
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
        crate::test_git::mkfifo(&fifo);
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

    /// Read from a directory's descriptor: what fits a page without an `fstat`, the rest
    /// judged by one, and a FIFO or a device refused at once as by path.
    #[test]
    fn a_file_read_from_its_directory_is_read_whole_and_a_fifo_or_device_refused() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let fd = rustix::fs::open(
            dir.path(),
            rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::DIRECTORY,
            rustix::fs::Mode::empty(),
        )
        .expect("open the directory");
        use rustix::fd::AsFd as _;
        // One buffer for every read, as the loose objects' reader keeps one.
        let mut bytes = Vec::new();
        let mut at = |name: &str| {
            read_at(fd.as_fd(), name, || dir.path().join(name), &mut bytes).map(|()| bytes.clone())
        };
        for size in [0, 1, 4095, 4096, 4097, 100_000, 5, 4096, 70_000] {
            let name = format!("f{size}");
            let bytes: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
            std::fs::write(dir.path().join(&name), &bytes).expect("write");
            assert_eq!(at(&name).expect("read"), bytes, "{size} bytes");
        }
        let fifo = dir.path().join("fifo");
        crate::test_git::mkfifo(&fifo);
        std::os::unix::fs::symlink("/dev/zero", dir.path().join("zero")).expect("a link");
        // A FIFO with a writer that has said something: refused too, and what it holds left.
        let held = dir.path().join("held");
        crate::test_git::mkfifo(&held);
        let mut writer = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&held)
            .expect("hold the FIFO open");
        std::io::Write::write_all(&mut writer, b"x\x01\x01 what a writer said").expect("write");
        for name in ["fifo", "zero", "held"] {
            let e = at(name).expect_err("refused");
            assert_eq!(
                e.to_string(),
                format!(
                    "{} is not a regular file (a FIFO, socket or device: using it would wait for ever)",
                    dir.path().join(name).display()
                )
            );
        }
        let mut left = [0u8; 4];
        std::io::Read::read_exact(&mut writer, &mut left).expect("still there");
        assert_eq!(&left, b"x\x01\x01 ");
        assert_eq!(
            at("none").expect_err("absent").kind(),
            std::io::ErrorKind::NotFound
        );
        std::fs::create_dir(dir.path().join("sub")).expect("a directory");
        let e = at("sub").expect_err("a directory");
        assert!(
            e.to_string()
                .ends_with("is not a regular file (a directory)"),
            "{e}"
        );
    }
}
