//! Tests of every report format on the hand-made fixture analysis.

mod dir;
mod html;
mod json;
mod markdown;
mod text;
