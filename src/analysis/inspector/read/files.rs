//! Inspector files on disk: which files a dump directory holds (read recursively, as the
//! plugin's dump directories nest per job or node), opening a file through gzip when its
//! first bytes are gzip's magic number (whatever its name: `.log.gz`, `.jsonl.gz` or a
//! renamed file), and telling from the first decompressed bytes which kind of output it is.

use flate2::read::MultiGzDecoder;
use std::fs::File;
use std::io::{self, BufReader, Cursor, Read};
use std::path::{Path, PathBuf};

/// How many decompressed bytes decide a file's kind.
const SNIFF: usize = 4096;

/// The kind of Inspector output a file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// JSON record objects.
    Json,
    /// A Prometheus textfile with `nccl_` metrics.
    Prometheus,
}

/// A file opened for reading, its head already read (and kept: `reader` yields it first).
pub(super) struct Opened {
    pub(super) kind: Option<Kind>,
    /// The file was gzip-compressed.
    pub(super) gzip: bool,
    /// The head was empty: an empty file (or an empty gzip stream).
    pub(super) empty: bool,
    pub(super) reader: Box<dyn Read + Send>,
}

/// Opens `path`, decompressing gzip, and reads its head to tell its kind.
pub(super) fn open(path: &Path) -> io::Result<Opened> {
    let handle = File::open(path)?;
    let mut file = BufReader::with_capacity(1 << 20, handle);
    let mut magic = Vec::with_capacity(2);
    (&mut file).take(2).read_to_end(&mut magic)?;
    let gzip = magic == [0x1f, 0x8b];
    let raw = Cursor::new(magic).chain(file);
    let mut stream: Box<dyn Read + Send> = if gzip {
        Box::new(Gunzip(MultiGzDecoder::new(raw)))
    } else {
        Box::new(raw)
    };
    let mut head = Vec::with_capacity(SNIFF);
    let rest: Box<dyn Read + Send> = match (&mut stream).take(SNIFF as u64).read_to_end(&mut head) {
        Ok(_) => stream,
        // Nothing decompressed: the file is unreadable as a whole.
        Err(e) if head.is_empty() => return Err(e),
        // A damaged member after a short first one: what came before it is still read, and
        // the error ends the file where it stands.
        Err(e) => Box::new(Failing(Some(e))),
    };
    Ok(Opened {
        kind: kind(&head),
        gzip,
        empty: head.is_empty(),
        reader: Box::new(Cursor::new(head).chain(rest)),
    })
}

/// A gzip stream whose read errors say the file is corrupt (flate2 names the part).
struct Gunzip<R>(R);

impl<R: Read> Read for Gunzip<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf).map_err(|e| match e.kind() {
            io::ErrorKind::Interrupted => e,
            kind => io::Error::new(kind, format!("corrupt gzip data: {e}")),
        })
    }
}

/// A reader that fails once with its error, then ends.
struct Failing(Option<io::Error>);

impl Read for Failing {
    fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
        self.0.take().map_or(Ok(0), Err)
    }
}

/// The kind `head` (a file's first decompressed bytes) shows, if any: an object whose first
/// key is `header`, `coll_perf` or `p2p_perf`, or a first sample line naming an `nccl_` metric.
pub(super) fn kind(head: &[u8]) -> Option<Kind> {
    let text = head.trim_ascii_start();
    if let Some(rest) = text.strip_prefix(b"{") {
        let rest = rest.trim_ascii_start().strip_prefix(b"\"")?;
        let key = &rest[..memchr::memchr(b'"', rest)?];
        return matches!(key, b"header" | b"coll_perf" | b"p2p_perf").then_some(Kind::Json);
    }
    let first = text
        .split(|&b| b == b'\n')
        .map(|l| l.trim_ascii())
        .find(|l| !l.is_empty() && !l.starts_with(b"#"))?;
    let name_end = first
        .iter()
        .position(|&b| b == b'{' || b == b' ' || b == b'\t')?;
    let name = &first[..name_end];
    let valid = name
        .iter()
        .all(|&b| b.is_ascii_alphanumeric() || b == b'_' || b == b':');
    (valid && name.starts_with(b"nccl_")).then_some(Kind::Prometheus)
}

/// Every regular file under `dir`, recursively, sorted by path; links are not followed (so a
/// link cannot loop), and entries that cannot be read are left out. An error only when `dir`
/// itself cannot be listed.
pub(super) fn walk(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    let mut first = true;
    while let Some(d) = stack.pop() {
        let entries = match std::fs::read_dir(&d) {
            Ok(e) => e,
            Err(e) if first => return Err(e),
            Err(_) => continue,
        };
        first = false;
        for entry in entries.filter_map(Result::ok) {
            match entry.file_type() {
                Ok(t) if t.is_dir() => stack.push(entry.path()),
                Ok(t) if t.is_file() => out.push(entry.path()),
                _ => {}
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Whether `dir` holds an Inspector file anywhere below it (stops at the first).
pub(super) fn dir_has_inspector(dir: &Path) -> bool {
    walk(dir).is_ok_and(|files| {
        files
            .iter()
            .any(|f| open(f).is_ok_and(|o| o.kind.is_some()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_head_tells_the_kind() {
        assert_eq!(kind(b" \n{ \"header\": {}}"), Some(Kind::Json));
        assert_eq!(kind(b"{\"p2p_perf\":"), Some(Kind::Json));
        assert_eq!(kind(b"{\"coll_perf\""), Some(Kind::Json));
        assert_eq!(kind(b"{\"results\": []}"), None);
        assert_eq!(kind(b"{\"head"), None);
        assert_eq!(
            kind(b"# HELP x\n\nnccl_bus_bandwidth_gbs{a=\"b\"} 1\n"),
            Some(Kind::Prometheus)
        );
        assert_eq!(
            kind(b"nccl_p2p_exec_time_microseconds 3"),
            Some(Kind::Prometheus)
        );
        assert_eq!(kind(b"node_load1 0.5\nnccl_x 1\n"), None);
        assert_eq!(kind(b"nccl-bad{a=\"1\"} 2"), None);
        assert_eq!(kind(b"#    nccl-tests text\n#  size count\n"), None);
        assert_eq!(kind(b""), None);
    }

    #[test]
    fn gzip_is_told_by_its_magic_not_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let text = b"{\"header\":{}}\n";
        let gz = dir.path().join("plain-name.log");
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut enc, text).unwrap();
        std::fs::write(&gz, enc.finish().unwrap()).unwrap();
        let mut o = open(&gz).unwrap();
        assert!(o.gzip && !o.empty);
        assert_eq!(o.kind, Some(Kind::Json));
        let mut back = Vec::new();
        o.reader.read_to_end(&mut back).unwrap();
        assert_eq!(back, text);

        let empty = dir.path().join("empty.log.gz");
        std::fs::write(&empty, b"").unwrap();
        let o = open(&empty).unwrap();
        assert!(o.empty && !o.gzip && o.kind.is_none());
    }

    #[test]
    fn directories_are_walked_recursively_in_path_order() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir_all(d.join("b/c")).unwrap();
        std::fs::write(d.join("b/c/z.log"), "x").unwrap();
        std::fs::write(d.join("a.log"), "x").unwrap();
        std::fs::write(d.join("b/y.txt"), "x").unwrap();
        std::os::unix::fs::symlink(d.join("b"), d.join("b/c/loop")).unwrap();
        let names: Vec<String> = walk(d)
            .unwrap()
            .iter()
            .map(|p| p.strip_prefix(d).unwrap().display().to_string())
            .collect();
        assert_eq!(names, ["a.log", "b/c/z.log", "b/y.txt"]);
        assert!(walk(&d.join("missing")).is_err());
        assert!(!dir_has_inspector(d));
        std::fs::write(d.join("b/c/r.log"), "{\"header\":{}}").unwrap();
        assert!(dir_has_inspector(d));
    }
}
