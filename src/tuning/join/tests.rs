//! The join on synthetic logs: decisions and COLL lines in every format, grouped calls,
//! warm-ups, mixed decisions and lines of other ranks.
