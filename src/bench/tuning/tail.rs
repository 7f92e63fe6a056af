//! Reads a growing NCCL debug log incrementally: each [`LogTail::read`] parses the complete
//! lines written since the last call and keeps a partial last line (NCCL may be in the middle
//! of writing it, or buffer it) for the next call. One [`LineParser`] lives across calls, so
//! context (versions, communicators, recent COLL lines) carries over.

use crate::logs::{LineParser, Record};
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// Longest partial line kept between reads; beyond it the rest of the line is dropped (NCCL
/// cuts its lines at 1 KiB up to 2.28).
const MAX_PARTIAL: usize = 1 << 20;

/// A log file read from where the last read stopped.
pub struct LogTail {
    path: PathBuf,
    offset: u64,
    partial: Vec<u8>,
    parser: LineParser,
    seen: bool,
}

impl LogTail {
    /// A reader of `path` (which may not exist yet).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        LogTail {
            path: path.into(),
            offset: 0,
            partial: Vec::new(),
            parser: LineParser::new(),
            seen: false,
        }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the file has existed at some read.
    pub fn seen(&self) -> bool {
        self.seen
    }

    /// Parses the complete lines added since the last call, in order. A missing file reads as
    /// empty. A file that shrank (truncated and rewritten) is read again from its start.
    pub fn read(&mut self, f: &mut dyn FnMut(Record)) -> io::Result<()> {
        let mut file = match File::open(&self.path) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        self.seen = true;
        let len = file.metadata()?.len();
        if len < self.offset {
            self.offset = 0;
            self.partial.clear();
        }
        file.seek(SeekFrom::Start(self.offset))?;
        let mut buf = Vec::new();
        file.take(len - self.offset).read_to_end(&mut buf)?;
        self.offset += buf.len() as u64;
        self.feed(&buf, f);
        Ok(())
    }

    /// Splits `bytes` (following the partial line) into lines and parses the complete ones.
    fn feed(&mut self, bytes: &[u8], f: &mut dyn FnMut(Record)) {
        let mut start = 0;
        for nl in memchr::memchr_iter(b'\n', bytes) {
            if self.partial.is_empty() {
                self.parser.line(&bytes[start..nl], f);
            } else {
                let room = MAX_PARTIAL.saturating_sub(self.partial.len());
                let piece = &bytes[start..nl];
                self.partial
                    .extend_from_slice(&piece[..piece.len().min(room)]);
                let line = std::mem::take(&mut self.partial);
                self.parser.line(&line, f);
            }
            start = nl + 1;
        }
        let rest = &bytes[start..];
        let room = MAX_PARTIAL.saturating_sub(self.partial.len());
        self.partial
            .extend_from_slice(&rest[..rest.len().min(room)]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logs::Event;
    use std::io::Write;

    const COLL: &str = "h:7:7 [0] NCCL INFO AllReduce: opCount 3 sendbuff 0x1 recvbuff 0x2 \
                        count 256 datatype 7 op 0 root 0 comm 0xa [nranks=2] stream 0x3\n";

    fn colls(t: &mut LogTail) -> Vec<u64> {
        let mut v = Vec::new();
        t.read(&mut |r| {
            if let Event::Coll(c) = r.event {
                v.push(c.op_count);
            }
        })
        .unwrap();
        v
    }

    #[test]
    fn a_line_written_in_pieces_is_parsed_once_when_complete() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        let mut t = LogTail::new(&path);
        assert!(colls(&mut t).is_empty() && !t.seen());
        let mut f = File::create(&path).unwrap();
        let (a, b) = COLL.split_at(40);
        f.write_all(a.as_bytes()).unwrap();
        assert!(colls(&mut t).is_empty() && t.seen());
        f.write_all(b.as_bytes()).unwrap();
        assert_eq!(colls(&mut t), vec![3]);
        assert!(colls(&mut t).is_empty());
        f.write_all(COLL.replace("opCount 3", "opCount 4").as_bytes())
            .unwrap();
        assert_eq!(colls(&mut t), vec![4]);
    }
}
