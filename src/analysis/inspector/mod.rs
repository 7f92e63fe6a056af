//! NCCL Inspector output (a training job's per-collective profiler records): the plain
//! [`record`] types its readers produce and the production report consumes, and the
//! [`read`]ers of its JSON record files and Prometheus textfile snapshots.

pub mod read;
pub mod record;

pub use read::{looks_like_inspector, read_paths, InspectorSet};
