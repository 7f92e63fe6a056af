//! `ncclbench locate`: find the slow node, GPU or link of a job from inside the job.
//!
//! The run measures disjoint groups of ranks concurrently, round by round ([`schedule`]): each
//! node's ranks together, then GPU i of one node with GPU i of another over round-robin node
//! pairings, then GPU pairs inside the nodes that were slow. Every process measures its groups
//! on sub-communicators of the job's backend ([`measure`]) and sends its [`sample`]s to rank 0,
//! which judges every group against the job's own reference for its kind ([`groups`]), names
//! the suspects ([`suspects`], [`verdict`]). [`run`] is the protocol every process follows,
//! [`layout`] places ranks on nodes, [`hostlist`] writes Slurm host lists, and [`inject`]
//! holds the test-only fault switches.

pub mod groups;
pub mod hostlist;
pub mod inject;
pub mod layout;
pub mod measure;
pub mod nics;
pub mod render;
pub mod run;
pub mod sample;
pub mod schedule;
pub mod suspects;
pub mod verdict;

#[cfg(test)]
mod tests;
