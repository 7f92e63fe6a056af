//! The acceptance engine behind `ncclbench accept`: [`profile`]s (TOML, the shipped typical
//! ranges, or one made from a healthy run by [`make_profile`]), the [`suite`] of stage
//! command lines, the [`checks`] judged from each stage's results read back, the verdict
//! [`model`] with its exit statuses, and the [`report`] renderers (table, JSON, JUnit XML).
//! The command that runs the stages is `crate::commands::accept`.

pub mod checks;
pub mod make_profile;
pub mod model;
pub mod profile;
pub mod report;
pub mod suite;
