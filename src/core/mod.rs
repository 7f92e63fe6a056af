//! The vocabulary every layer shares and that knows nothing of runs: the collective specs,
//! element types and reduction operators with their exact element code, the error type and
//! exit statuses, statistics, byte units, host facts, result-file listings, and redaction
//! primitives.

pub mod bounded;
pub mod collective;
pub mod dtype;
pub mod error;
pub mod fifo;
pub mod files;
pub mod host;
pub mod interrupt;
pub mod numeric;
pub mod op;
pub mod parallel;
#[cfg(any(test, feature = "test-hooks"))]
#[doc(hidden)]
pub mod real_fixtures;
pub mod redact;
pub mod reduce;
pub mod stats;
pub mod test_hooks;
pub mod units;
