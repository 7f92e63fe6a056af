//! Fuzz target: arbitrary bytes through the NCCL log parser (line by line, as `parse_reader`
//! does), the findings and both reports, plain and redacted; any panic is a bug.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ncclbench::logs::findings::findings;
use ncclbench::logs::redact::Redactor;
use ncclbench::logs::report::{json, text, Report};
use ncclbench::logs::{parse_reader, ParseOptions};

fuzz_target!(|data: &[u8]| {
    let opts = ParseOptions {
        keep_decisions: true,
    };
    let Ok(summary) = parse_reader(data, "fuzz", &opts) else {
        return;
    };
    let found = findings(&summary);
    for redact in [Redactor::none(), summary.redactor()] {
        let rep = Report {
            summary: &summary,
            findings: &found,
            redact: &redact,
        };
        let _ = text::render(&rep);
        let _ = json::render(&rep);
    }
});
