//! `ncclbench accept`: the new-cluster acceptance suite with a PASS/FAIL verdict.

pub mod model;
