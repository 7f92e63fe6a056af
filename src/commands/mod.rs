//! One module per subcommand: each takes its validated configuration, drives the engines, and
//! returns the exit status (the binary's [`crate::app`] maps errors to statuses and one line).
//!
//! A benchmark run ([`mod@bench`]) is also what `accept` runs for every stage, inside the job it
//! joined once.

pub mod accept;
pub mod analyze;
pub mod bench;
pub mod compare;
pub mod env;
pub mod locate;
pub mod logs;
