//! Tests of the readers (added with the samples).
