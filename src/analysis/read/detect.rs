//! Recognising a result file by its content (never its name): a JSON object, a CSV whose
//! first line names our columns, or text holding nccl-tests header lines.

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
}

/// Decides the format of `text`.
pub(super) fn detect(text: &str) -> Detected {
    let body = text.trim_start_matches('\u{feff}').trim_start();
    if body.is_empty() {
        return Detected::Empty;
    }
    if body.starts_with('{') {
        return Detected::Format(Format::Json);
    }
    let first = body.lines().next().unwrap_or("");
    if let Ok(fields) = csv::split_record(first.trim_end_matches('\r')) {
        if fields.len() > 1 && csv::is_header(&fields) {
            return Detected::Format(Format::Csv);
        }
    }
    if body.lines().any(is_nccl_tests_line) {
        return Detected::Format(Format::Text);
    }
    Detected::Unrecognised
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
        assert_eq!(detect(" \r\n\n"), Detected::Empty);
        assert_eq!(
            detect("\u{feff}{\"results\":[]}"),
            Detected::Format(Format::Json)
        );
        let csv = "cycle,collective,dtype,op,root,nranks,placement,bytes,count,time_us,algbw_gbs,busbw_gbs,wrong\r\n";
        assert_eq!(detect(csv), Detected::Format(Format::Csv));
        let tagged = "junk\n[1,0]<stdout>:# nThread 1 nGpus 1 minBytes 8\n";
        assert_eq!(detect(tagged), Detected::Format(Format::Text));
        let legacy = "#       size         count    type     time   algbw\n";
        assert_eq!(detect(legacy), Detected::Format(Format::Text));
        // An NCCL debug log without any table is not a result file.
        let log = "host:1:1 [0] NCCL INFO NCCL version 2.29.7\n# comment\n";
        assert_eq!(detect(log), Detected::Unrecognised);
        assert_eq!(detect("a,b,c\n1,2,3\n"), Detected::Unrecognised);
    }
}
