//! Fuzz target: arbitrary bytes (lossy UTF-8) through the json reader, directly and through
//! format detection; any panic is a bug.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ncclbench::analysis::read::{read_str, read_str_as, Format};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = read_str_as("fuzz", &text, Format::Json);
    let _ = read_str("fuzz", &text);
});
