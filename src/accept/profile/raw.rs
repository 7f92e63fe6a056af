//! The TOML shapes of a profile. Value checks happen while deserializing, so the parser's error
//! carries the value's position.

use crate::core::collective::Collective;
use crate::core::units::parse_size;
use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use std::fmt;
use toml::Spanned;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFile {
    pub(super) profile: Option<RawProfile>,
    pub(super) suite: Option<RawSuite>,
    #[serde(default)]
    pub(super) busbw: Vec<RawBusbw>,
    #[serde(default)]
    pub(super) latency: Vec<RawLatency>,
    pub(super) baseline: Option<RawBaseline>,
    pub(super) locate: Option<RawLocate>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawProfile {
    pub(super) name: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) description: String,
    #[serde(default)]
    pub(super) typical: bool,
    pub(super) ranks: Option<Int<1, { u32::MAX as u64 }>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSuite {
    pub(super) collectives: Option<Spanned<Vec<Coll>>>,
    pub(super) correctness_min_bytes: Option<Spanned<Size>>,
    pub(super) correctness_max_bytes: Option<Spanned<Size>>,
    pub(super) correctness_step_factor: Option<Int<2, { u64::MAX }>>,
    pub(super) perf_min_bytes: Option<Spanned<Size>>,
    pub(super) perf_max_bytes: Option<Spanned<Size>>,
    pub(super) perf_step_factor: Option<Int<2, { u64::MAX }>>,
    pub(super) iters: Option<Int<1, { u32::MAX as u64 }>>,
    pub(super) warmup_iters: Option<Int<0, { u32::MAX as u64 }>>,
    pub(super) timeout_s: Option<Int<1, { u64::MAX }>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawBusbw {
    pub(super) collective: Spanned<Coll>,
    pub(super) min_bytes: Spanned<Size>,
    pub(super) max_bytes: Option<Spanned<Size>>,
    pub(super) min_gbs: Positive,
    pub(super) typical_gbs: Option<Range>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLatency {
    pub(super) collective: Spanned<Coll>,
    pub(super) min_bytes: Option<Spanned<Size>>,
    pub(super) max_bytes: Spanned<Size>,
    pub(super) max_us: Positive,
    pub(super) typical_us: Option<Range>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawBaseline {
    pub(super) paths: Spanned<Vec<String>>,
    pub(super) threshold_pct: Option<Positive>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLocate {
    pub(super) collective: Option<Spanned<Coll>>,
    pub(super) bytes: Option<Spanned<Size>>,
    pub(super) rounds: Option<Int<1, 1000>>,
    pub(super) intra_node_min_gbs: Option<Positive>,
    pub(super) inter_node_min_gbs: Option<Positive>,
}

/// A byte size: an integer, or a string as `-b`/`-e` read it (`"8G"`).
pub(super) struct Size(pub(super) u64);

impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Size, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Size;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a size (an integer, or a string such as \"8\", \"1K\", \"8G\")")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Size, E> {
                u64::try_from(v)
                    .map(Size)
                    .map_err(|_| E::custom(format!("size {v} is negative")))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Size, E> {
                Ok(Size(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Size, E> {
                parse_size(v).map(Size).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// A finite number > 0 (integer or float).
pub(super) struct Positive(pub(super) f64);

impl<'de> Deserialize<'de> for Positive {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Positive, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Positive;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number > 0")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Positive, E> {
                self.visit_f64(v as f64)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Positive, E> {
                self.visit_f64(v as f64)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Positive, E> {
                if v.is_finite() && v > 0.0 {
                    Ok(Positive(v))
                } else {
                    Err(E::custom(format!(
                        "threshold must be a finite number > 0, not {v}"
                    )))
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// A typical range `[low, high]` of positive numbers with low <= high.
pub(super) struct Range(pub(super) f64, pub(super) f64);

impl<'de> Deserialize<'de> for Range {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Range, D::Error> {
        let values = Vec::<Positive>::deserialize(d)?;
        match values[..] {
            [Positive(lo), Positive(hi)] if lo <= hi => Ok(Range(lo, hi)),
            [Positive(lo), Positive(hi)] => Err(de::Error::custom(format!(
                "typical range [{lo}, {hi}] has its low end above its high end"
            ))),
            _ => Err(de::Error::custom(format!(
                "a typical range is [low, high], not {} numbers",
                values.len()
            ))),
        }
    }
}

/// An integer in `MIN..=MAX`.
pub(super) struct Int<const MIN: u64, const MAX: u64>(pub(super) u64);

impl<'de, const MIN: u64, const MAX: u64> Deserialize<'de> for Int<MIN, MAX> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = i64::deserialize(d)?;
        match u64::try_from(v) {
            Ok(u) if (MIN..=MAX).contains(&u) => Ok(Int(u)),
            _ if MAX == u64::MAX => Err(de::Error::custom(format!(
                "must be an integer >= {MIN}, not {v}"
            ))),
            _ => Err(de::Error::custom(format!(
                "must be an integer in {MIN}..={MAX}, not {v}"
            ))),
        }
    }
}

/// A collective by name (`all_reduce`, or the `all_reduce_perf` binary name).
pub(super) struct Coll(pub(super) Collective);

impl<'de> Deserialize<'de> for Coll {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Coll, D::Error> {
        let name = String::deserialize(d)?;
        Collective::parse(&name).map(Coll).ok_or_else(|| {
            let valid: Vec<&str> = Collective::ALL.iter().map(|c| c.name()).collect();
            de::Error::custom(format!(
                "unknown collective '{name}' (valid: {})",
                valid.join(", ")
            ))
        })
    }
}
