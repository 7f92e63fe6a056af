//! NCCL Inspector output (a training job's per-collective profiler records): the plain
//! [`record`] types its readers produce and the production report consumes.

pub mod record;
