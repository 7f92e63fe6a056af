//! The hidden test switches (`NCCLBENCH_TEST_*`: a stalled, killed or slowed rank, a hung or
//! corrupted host launch, fake host names, a slowed locate group), which let the tests drive
//! whole commands into the faults they must report. They are read only in a build with the
//! `test-hooks` cargo feature: the tests turn it on (the package's dev-dependency on itself),
//! `cargo build` and release builds do not, so a shipped binary reads none of them.

/// The value of the test switch `name`; always `None` without the `test-hooks` feature.
pub fn var(name: &str) -> Option<String> {
    if cfg!(feature = "test-hooks") {
        std::env::var(name).ok()
    } else {
        None
    }
}
