//! (being written)
#![allow(missing_docs)]
/// Entry point.
pub fn main() -> std::process::ExitCode {
    std::process::ExitCode::SUCCESS
}
