//! Tests of the log parser on synthetic and real logs.
