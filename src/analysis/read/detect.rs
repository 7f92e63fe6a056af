//! Recognising a result file by its content (never its name): a JSON object, a CSV whose
//! first line names our columns, or text holding nccl-tests header lines. Only the head of a
//! file is looked at ([`SNIFF`](super::source::SNIFF) bytes): a longer file whose head holds
//! no nccl-tests line may still be a log with a table further down ([`Detected::Unseen`]).

use super::csv;
use super::Format;

/// What a file's content looks like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Detected {
    /// Nothing but white space.
    Empty,
    /// No format we read.
    Unrecognised,
    /// One of ours.
    Format(Format),
    /// Not recognised from the head of a longer file: only reading it as text can tell.
    Unseen,
}

/// Decides the format of a file from its `head`; `complete` when the head is the whole file.
pub(super) fn detect(head: &str, complete: bool) -> Detected {
    let body = head.trim_start_matches('\u{feff}').trim_start();
    if body.is_empty() {
        return if complete {
            Detected::Empty
        } else {
            Detected::Unseen
        };
    }
    if body.starts_with('{') {
        return Detected::Format(Format::Json);
    }
    if let Some(fields) = csv::first_record(body) {
        if fields.len() > 1 && csv::is_header(&fields) {
            return Detected::Format(Format::Csv);
        }
    }
    if body.lines().any(is_nccl_tests_line) {
        return Detected::Format(Format::Text);
    }
    if complete {
        Detected::Unrecognised
    } else {
        Detected::Unseen
    }
}

/// A header line only nccl-tests output (or ours, in its layout) has. Prefixes such as MPI
/// tags may precede the `#`.
fn is_nccl_tests_line(line: &str) -> bool {
    let Some(at) = line.find('#') else {
        return false;
    };
    let rest = line[at + 1..].trim_start();
    rest.starts_with("nThread ")
        || rest.starts_with("Collective test starting:")
        || rest.starts_with("nccl-tests version")
        || rest
            .split_whitespace()
            .take(3)
            .eq(["size", "count", "type"])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_decides() {
        assert_eq!(detect(" \r\n\n", true), Detected::Empty);
        assert_eq!(
            detect("\u{feff}{\"results\":[]}", true),
            Detected::Format(Format::Json)
        );
        let csv = "cycle,collective,dtype,op,root,nranks,placement,bytes,count,time_us,algbw_gbs,busbw_gbs,wrong\r\n";
        assert_eq!(detect(csv, true), Detected::Format(Format::Csv));
        let tagged = "junk\n[1,0]<stdout>:# nThread 1 nGpus 1 minBytes 8\n";
        assert_eq!(detect(tagged, true), Detected::Format(Format::Text));
        let legacy = "#       size         count    type     time   algbw\n";
        assert_eq!(detect(legacy, true), Detected::Format(Format::Text));
        // An NCCL debug log without any table is not a result file.
        let log = "host:1:1 [0] NCCL INFO NCCL version 2.29.7\n# comment\n";
        assert_eq!(detect(log, true), Detected::Unrecognised);
        assert_eq!(detect("a,b,c\n1,2,3\n", true), Detected::Unrecognised);
        // The same head of a longer file leaves the question open.
        assert_eq!(detect("a,b,c\n1,2,3\n", false), Detected::Unseen);
        assert_eq!(detect("   \n", false), Detected::Unseen);
    }
}
