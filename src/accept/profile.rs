//! Acceptance profiles: what `ncclbench accept` runs (the suite) and what it expects (busbw and
//! latency thresholds, an optional healthy baseline), read from TOML.
//!
//! Builtin profiles are the files of `profiles/` at the repository root, embedded in the binary.
//! Layout (every section but `[profile]` optional; unknown keys anywhere are errors):
//!
//! ```toml
//! [profile]
//! name = "h100-nvswitch"                 # required
//! description = "8x H100 SXM in one node, NVSwitch"
//! typical = true                         # thresholds are typical ranges, not guarantees
//! ranks = 8                              # ranks the thresholds assume; omit for any
//!
//! [suite]                                # every key optional; defaults shown
//! collectives = ["all_reduce", "all_gather"]   # default: every collective
//! correctness_min_bytes = "8"            # sizes: strings as `-b/-e` take them ("1K", "8G")
//! correctness_max_bytes = "16M"          #   or integers (bytes)
//! correctness_step_factor = 4            # >= 2
//! perf_min_bytes = "8"                   # sizes of both stages: min >= 1, min <= max
//! perf_max_bytes = "8G"
//! perf_step_factor = 2                   # >= 2
//! iters = 20                             # >= 1
//! warmup_iters = 5
//! timeout_s = 300                        # >= 1, passed as -T
//!
//! [[busbw]]                              # one per judged range
//! collective = "all_reduce"              # must be in suite.collectives
//! min_bytes = "1G"                       # required
//! max_bytes = "8G"                       # optional: up to the end of the sweep
//! min_gbs = 350                          # median busbw over the range must be >= this
//! typical_gbs = [350, 480]               # optional, for the report
//!
//! [[latency]]
//! collective = "all_reduce"
//! min_bytes = "0"                        # optional, default 0
//! max_bytes = "8"                        # required
//! max_us = 20                            # median time over the range must be <= this
//! typical_us = [10, 20]                  # optional
//!
//! [baseline]                             # optional
//! paths = ["healthy/performance"]        # relative to the profile file's directory
//! threshold_pct = 5                      # default 5
//! ```
//!
//! Every problem is one [`Error::Usage`] line naming the profile source and, where the TOML
//! parser gives a position, the line and its text.

use crate::core::collective::Collective;
use crate::core::error::Error;
use crate::core::units::parse_size;
use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use std::fmt;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// An acceptance profile: the suite to run and the thresholds to judge it by.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    /// Profile name (`[profile] name`).
    pub name: String,
    /// One-line description.
    pub description: String,
    /// True when thresholds are typical ranges, not guarantees (every shipped profile says so).
    pub typical: bool,
    /// "builtin" or the file path as given.
    pub source: String,
    /// Ranks the thresholds assume (`None`: any).
    pub ranks: Option<usize>,
    /// What to run.
    pub suite: Suite,
    /// Bus bandwidth floors.
    pub busbw: Vec<BusbwCheck>,
    /// Small-message time ceilings.
    pub latency: Vec<LatencyCheck>,
    /// A healthy run to compare against.
    pub baseline: Option<Baseline>,
    /// The TOML text as read (accept copies it into its output directory).
    pub text: String,
}

/// What the suite runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Suite {
    /// Collectives, in table order unless the profile lists another order (default: all).
    pub collectives: Vec<Collective>,
    /// Smallest size of the correctness stage (default 8).
    pub correctness_min_bytes: u64,
    /// Largest size of the correctness stage (default 16 MiB).
    pub correctness_max_bytes: u64,
    /// Size factor of the correctness stage (default 4).
    pub correctness_step_factor: u64,
    /// Smallest size of the performance sweep (default 8).
    pub perf_min_bytes: u64,
    /// Largest size of the performance sweep (default 8 GiB).
    pub perf_max_bytes: u64,
    /// Size factor of the performance sweep (default 2).
    pub perf_step_factor: u64,
    /// Timed iterations per size (default 20).
    pub iters: u32,
    /// Warmup iterations per size (default 5).
    pub warmup_iters: u32,
    /// Wait timeout in seconds, passed as `-T` (default 300).
    pub timeout_s: u64,
}

impl Default for Suite {
    fn default() -> Suite {
        Suite {
            collectives: Collective::ALL.to_vec(),
            correctness_min_bytes: 8,
            correctness_max_bytes: 16 << 20,
            correctness_step_factor: 4,
            perf_min_bytes: 8,
            perf_max_bytes: 8 << 30,
            perf_step_factor: 2,
            iters: 20,
            warmup_iters: 5,
            timeout_s: 300,
        }
    }
}

/// A bus bandwidth floor over a size range.
#[derive(Debug, Clone, PartialEq)]
pub struct BusbwCheck {
    /// Collective judged.
    pub collective: Collective,
    /// Smallest size judged (inclusive).
    pub min_bytes: u64,
    /// Largest size judged (inclusive); `None`: up to the end of the sweep.
    pub max_bytes: Option<u64>,
    /// The median busbw (GB/s) over sizes in range must be >= this.
    pub min_gbs: f64,
    /// Typical range (GB/s), for the report only.
    pub typical_gbs: Option<(f64, f64)>,
}

/// A time ceiling over a small-message size range.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyCheck {
    /// Collective judged.
    pub collective: Collective,
    /// Smallest size judged (inclusive, default 0).
    pub min_bytes: u64,
    /// Largest size judged (inclusive).
    pub max_bytes: u64,
    /// The median time (us) over sizes in range must be <= this.
    pub max_us: f64,
    /// Typical range (us), for the report only.
    pub typical_us: Option<(f64, f64)>,
}

/// A healthy run to compare the performance stage against.
#[derive(Debug, Clone, PartialEq)]
pub struct Baseline {
    /// Result files/directories of a healthy run; relative paths resolved against the
    /// profile file's directory (builtin profiles have none).
    pub paths: Vec<PathBuf>,
    /// Slowdown (percent) beyond which a size counts as regressed (default 5).
    pub threshold_pct: f64,
}

/// The shipped profiles, `default` first.
const BUILTIN: &[(&str, &str)] = &[
    ("default", include_str!("../../profiles/default.toml")),
    (
        "h100-nvswitch",
        include_str!("../../profiles/h100-nvswitch.toml"),
    ),
    (
        "a100-nvswitch",
        include_str!("../../profiles/a100-nvswitch.toml"),
    ),
    ("pcie4-8gpu", include_str!("../../profiles/pcie4-8gpu.toml")),
    (
        "h100-2node-400g-per-gpu",
        include_str!("../../profiles/h100-2node-400g-per-gpu.toml"),
    ),
    (
        "h100-2node-200g-per-gpu",
        include_str!("../../profiles/h100-2node-200g-per-gpu.toml"),
    ),
    (
        "h100-2node-400g-per-node",
        include_str!("../../profiles/h100-2node-400g-per-node.toml"),
    ),
];

/// `spec`: None = the builtin "default" profile; a builtin name; or a file path (anything
/// containing '/' or ending in ".toml", or an existing file). Unknown name: Error::Usage
/// listing the builtin names.
pub fn load(spec: Option<&str>) -> Result<Profile, Error> {
    let spec = spec.unwrap_or("default");
    let path_like = spec.contains('/') || spec.ends_with(".toml");
    if !path_like {
        if let Some((_, text)) = BUILTIN.iter().find(|(name, _)| *name == spec) {
            return parse(text, "builtin", None);
        }
    }
    let path = Path::new(spec);
    if path_like || path.is_file() {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::usage(format!("profile {spec}: cannot read: {e}")))?;
        return parse(&text, spec, Some(path.parent().unwrap_or(Path::new(""))));
    }
    let names: Vec<&str> = BUILTIN.iter().map(|(name, _)| *name).collect();
    Err(Error::usage(format!(
        "unknown profile '{spec}' (builtin profiles: {}; or give a .toml file)",
        names.join(", ")
    )))
}

/// (name, description) of every shipped profile, in a stable order.
pub fn builtins() -> Vec<(&'static str, String)> {
    BUILTIN
        .iter()
        .map(|(name, text)| {
            let profile = parse(text, "builtin", None)
                .unwrap_or_else(|e| panic!("shipped profile {name} is invalid: {e}"));
            (*name, profile.description)
        })
        .collect()
}

/// Makes the error for a message at a byte offset of the profile's text ([`located`]).
type At<'a> = dyn Fn(Option<usize>, &str) -> Error + 'a;

/// Parses a profile. `source` names it in messages and in [`Profile::source`]; `base_dir`
/// is where relative baseline paths are resolved (`None`: left as written).
pub fn parse(text: &str, source: &str, base_dir: Option<&Path>) -> Result<Profile, Error> {
    let at = |offset: Option<usize>, msg: &str| located(source, text, offset, msg);
    let raw: RawFile = toml::from_str(text).map_err(|e| {
        at(
            e.span().map(|s| s.start),
            &e.message().trim().replace('\n', " "),
        )
    })?;
    let head = raw
        .profile
        .ok_or_else(|| at(None, "missing [profile] name"))?;
    let name = head
        .name
        .ok_or_else(|| at(None, "missing [profile] name"))?;
    if name.get_ref().trim().is_empty() {
        return Err(at(Some(name.span().start), "[profile] name is empty"));
    }
    let suite = suite(raw.suite.unwrap_or_default(), &at)?;
    let busbw = raw
        .busbw
        .into_iter()
        .map(|b| busbw_check(b, &suite, &at))
        .collect::<Result<Vec<_>, Error>>()?;
    let latency = raw
        .latency
        .into_iter()
        .map(|l| latency_check(l, &suite, &at))
        .collect::<Result<Vec<_>, Error>>()?;
    let baseline = raw
        .baseline
        .map(|b| baseline(b, base_dir, &at))
        .transpose()?;
    Ok(Profile {
        name: name.into_inner(),
        description: head.description,
        typical: head.typical,
        source: source.to_string(),
        ranks: head.ranks.map(|r| r.0 as usize),
        suite,
        busbw,
        latency,
        baseline,
        text: text.to_string(),
    })
}

/// One `[[busbw]]` table, checked against the suite; no `max_bytes` means up to the end of
/// the sweep.
fn busbw_check(b: RawBusbw, suite: &Suite, at: &At<'_>) -> Result<BusbwCheck, Error> {
    let collective = in_suite(&b.collective, suite, "busbw", at)?;
    let min_bytes = b.min_bytes.get_ref().0;
    let max_bytes = b.max_bytes.as_ref().map(|m| m.get_ref().0);
    let offset = b.max_bytes.as_ref().unwrap_or(&b.min_bytes).span().start;
    ordered(
        min_bytes,
        max_bytes.unwrap_or(u64::MAX),
        offset,
        "busbw",
        at,
    )?;
    in_sweep(min_bytes, max_bytes, offset, suite, "busbw", at)?;
    Ok(BusbwCheck {
        collective,
        min_bytes,
        max_bytes,
        min_gbs: b.min_gbs.0,
        typical_gbs: b.typical_gbs.map(|r| (r.0, r.1)),
    })
}

/// One `[[latency]]` table, checked against the suite; no `min_bytes` means from 0.
fn latency_check(l: RawLatency, suite: &Suite, at: &At<'_>) -> Result<LatencyCheck, Error> {
    let collective = in_suite(&l.collective, suite, "latency", at)?;
    let min_bytes = l.min_bytes.map_or(0, |m| m.get_ref().0);
    let max_bytes = l.max_bytes.get_ref().0;
    let offset = l.max_bytes.span().start;
    ordered(min_bytes, max_bytes, offset, "latency", at)?;
    in_sweep(min_bytes, Some(max_bytes), offset, suite, "latency", at)?;
    Ok(LatencyCheck {
        collective,
        min_bytes,
        max_bytes,
        max_us: l.max_us.0,
        typical_us: l.typical_us.map(|r| (r.0, r.1)),
    })
}

/// The `[baseline]` table: at least one path and none empty; relative paths are resolved
/// against `base_dir`, and the threshold defaults to 5 %.
fn baseline(b: RawBaseline, base_dir: Option<&Path>, at: &At<'_>) -> Result<Baseline, Error> {
    let offset = b.paths.span().start;
    let written = b.paths.into_inner();
    if written.is_empty() {
        return Err(at(Some(offset), "[baseline] paths is empty"));
    }
    if written.iter().any(|p| p.trim().is_empty()) {
        return Err(at(Some(offset), "[baseline] paths holds an empty path"));
    }
    let paths = written
        .iter()
        .map(|p| match base_dir {
            Some(dir) if Path::new(p).is_relative() => dir.join(p),
            _ => PathBuf::from(p),
        })
        .collect();
    Ok(Baseline {
        paths,
        threshold_pct: b.threshold_pct.map_or(5.0, |t| t.0),
    })
}

/// A check's collective, which the suite must run.
fn in_suite(
    c: &Spanned<Coll>,
    suite: &Suite,
    table: &str,
    at: &At<'_>,
) -> Result<Collective, Error> {
    if suite.collectives.contains(&c.get_ref().0) {
        Ok(c.get_ref().0)
    } else {
        Err(at(
            Some(c.span().start),
            &format!(
                "[[{table}]] names {}, which is not in suite.collectives",
                c.get_ref().0.name()
            ),
        ))
    }
}

/// Refuses a check's range that lies wholly outside the performance sweep, where no size
/// would be judged.
fn in_sweep(
    min: u64,
    max: Option<u64>,
    offset: usize,
    suite: &Suite,
    table: &str,
    at: &At<'_>,
) -> Result<(), Error> {
    if max.is_some_and(|max| max < suite.perf_min_bytes) || min > suite.perf_max_bytes {
        let max = max.map_or(String::new(), |m| m.to_string());
        Err(at(
            Some(offset),
            &format!(
                "[[{table}]] range {min}..{max} bytes lies outside the sweep {}..{} bytes",
                suite.perf_min_bytes, suite.perf_max_bytes
            ),
        ))
    } else {
        Ok(())
    }
}

/// The `[suite]` table with defaults filled in and ranges checked.
fn suite(raw: RawSuite, at: &At<'_>) -> Result<Suite, Error> {
    let d = Suite::default();
    let collectives = match &raw.collectives {
        None => d.collectives,
        Some(list) => collectives(list, at)?,
    };
    let size =
        |s: &Option<Spanned<Size>>, default: u64| s.as_ref().map_or(default, |s| s.get_ref().0);
    let suite = Suite {
        collectives,
        correctness_min_bytes: size(&raw.correctness_min_bytes, d.correctness_min_bytes),
        correctness_max_bytes: size(&raw.correctness_max_bytes, d.correctness_max_bytes),
        correctness_step_factor: raw
            .correctness_step_factor
            .as_ref()
            .map_or(d.correctness_step_factor, |f| f.0),
        perf_min_bytes: size(&raw.perf_min_bytes, d.perf_min_bytes),
        perf_max_bytes: size(&raw.perf_max_bytes, d.perf_max_bytes),
        perf_step_factor: raw
            .perf_step_factor
            .as_ref()
            .map_or(d.perf_step_factor, |f| f.0),
        iters: raw.iters.as_ref().map_or(d.iters, |n| n.0 as u32),
        warmup_iters: raw
            .warmup_iters
            .as_ref()
            .map_or(d.warmup_iters, |n| n.0 as u32),
        timeout_s: raw.timeout_s.as_ref().map_or(d.timeout_s, |n| n.0),
    };
    check_sizes(&suite, &raw, at)?;
    Ok(suite)
}

/// `suite.collectives` as listed: not empty, none twice.
fn collectives(list: &Spanned<Vec<Coll>>, at: &At<'_>) -> Result<Vec<Collective>, Error> {
    let offset = list.span().start;
    let list: Vec<Collective> = list.get_ref().iter().map(|c| c.0).collect();
    if list.is_empty() {
        return Err(at(Some(offset), "suite.collectives is empty"));
    }
    if let Some(c) = list
        .iter()
        .enumerate()
        .find_map(|(i, c)| list[..i].contains(c).then_some(c))
    {
        return Err(at(
            Some(offset),
            &format!("suite.collectives lists {} twice", c.name()),
        ));
    }
    Ok(list)
}

/// Both stages' sweeps must start above 0 and not end below their start; an error points at
/// the key that was written (the end's, when both were).
fn check_sizes(suite: &Suite, raw: &RawSuite, at: &At<'_>) -> Result<(), Error> {
    let offset = |a: &Option<Spanned<Size>>, b: &Option<Spanned<Size>>| {
        b.as_ref().or(a.as_ref()).map(|s| s.span().start)
    };
    for (value, spanned, key) in [
        (
            suite.correctness_min_bytes,
            &raw.correctness_min_bytes,
            "correctness_min_bytes",
        ),
        (suite.perf_min_bytes, &raw.perf_min_bytes, "perf_min_bytes"),
    ] {
        if value == 0 {
            return Err(at(
                spanned.as_ref().map(|s| s.span().start),
                &format!("suite.{key} is 0: a sweep that multiplies its size would never advance"),
            ));
        }
    }
    if suite.correctness_min_bytes > suite.correctness_max_bytes {
        return Err(at(
            offset(&raw.correctness_min_bytes, &raw.correctness_max_bytes),
            &format!(
                "suite.correctness_min_bytes ({}) is above suite.correctness_max_bytes ({})",
                suite.correctness_min_bytes, suite.correctness_max_bytes
            ),
        ));
    }
    if suite.perf_min_bytes > suite.perf_max_bytes {
        return Err(at(
            offset(&raw.perf_min_bytes, &raw.perf_max_bytes),
            &format!(
                "suite.perf_min_bytes ({}) is above suite.perf_max_bytes ({})",
                suite.perf_min_bytes, suite.perf_max_bytes
            ),
        ));
    }
    Ok(())
}

/// Checks a check's `min_bytes <= max_bytes`.
fn ordered(min: u64, max: u64, offset: usize, table: &str, at: &At<'_>) -> Result<(), Error> {
    if min > max {
        return Err(at(
            Some(offset),
            &format!("[[{table}]] min_bytes ({min}) is above max_bytes ({max})"),
        ));
    }
    Ok(())
}

/// `profile SOURCE: line N (`TEXT`): MSG`, or without the line part when there is no offset.
fn located(source: &str, text: &str, offset: Option<usize>, msg: &str) -> Error {
    let Some(offset) = offset else {
        return Error::usage(format!("profile {source}: {msg}"));
    };
    let offset = offset.min(text.len());
    let before = &text.as_bytes()[..offset];
    let line_no = before.iter().filter(|b| **b == b'\n').count() + 1;
    let line = text.lines().nth(line_no - 1).unwrap_or("").trim();
    let mut shown: String = line.chars().take(60).collect();
    if shown.len() < line.len() {
        shown.push_str("...");
    }
    Error::usage(format!(
        "profile {source}: line {line_no} (`{shown}`): {msg}"
    ))
}

// ---- The TOML shapes. Value checks happen while deserializing, so the parser's error carries
// ---- the value's position.

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    profile: Option<RawProfile>,
    suite: Option<RawSuite>,
    #[serde(default)]
    busbw: Vec<RawBusbw>,
    #[serde(default)]
    latency: Vec<RawLatency>,
    baseline: Option<RawBaseline>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProfile {
    name: Option<Spanned<String>>,
    #[serde(default)]
    description: String,
    #[serde(default)]
    typical: bool,
    ranks: Option<Int<1, { u32::MAX as u64 }>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawSuite {
    collectives: Option<Spanned<Vec<Coll>>>,
    correctness_min_bytes: Option<Spanned<Size>>,
    correctness_max_bytes: Option<Spanned<Size>>,
    correctness_step_factor: Option<Int<2, { u64::MAX }>>,
    perf_min_bytes: Option<Spanned<Size>>,
    perf_max_bytes: Option<Spanned<Size>>,
    perf_step_factor: Option<Int<2, { u64::MAX }>>,
    iters: Option<Int<1, { u32::MAX as u64 }>>,
    warmup_iters: Option<Int<0, { u32::MAX as u64 }>>,
    timeout_s: Option<Int<1, { u64::MAX }>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBusbw {
    collective: Spanned<Coll>,
    min_bytes: Spanned<Size>,
    max_bytes: Option<Spanned<Size>>,
    min_gbs: Positive,
    typical_gbs: Option<Range>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLatency {
    collective: Spanned<Coll>,
    min_bytes: Option<Spanned<Size>>,
    max_bytes: Spanned<Size>,
    max_us: Positive,
    typical_us: Option<Range>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBaseline {
    paths: Spanned<Vec<String>>,
    threshold_pct: Option<Positive>,
}

/// A byte size: an integer, or a string as `-b`/`-e` read it (`"8G"`).
struct Size(u64);

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
struct Positive(f64);

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
struct Range(f64, f64);

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
struct Int<const MIN: u64, const MAX: u64>(u64);

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
struct Coll(Collective);

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

#[cfg(test)]
mod tests {
    use super::*;

    /// The message of a usage error (anything else fails the test).
    fn usage(result: Result<Profile, Error>) -> String {
        match result {
            Err(Error::Usage(msg)) => msg,
            other => panic!("expected a usage error, got {other:?}"),
        }
    }

    const HEAD: &str = "[profile]\nname = \"t\"\n";

    /// Each shipped profile, loaded by name, carries exactly the numbers of its typical ranges:
    /// (name, ranks, busbw low, busbw high, 8 B time low/high).
    #[test]
    fn shipped_profiles_carry_their_typical_numbers() {
        type Row = (&'static str, usize, f64, f64, Option<(f64, f64)>);
        let table: [Row; 6] = [
            ("h100-nvswitch", 8, 350.0, 480.0, Some((10.0, 20.0))),
            ("a100-nvswitch", 8, 220.0, 280.0, Some((12.0, 25.0))),
            ("pcie4-8gpu", 8, 10.0, 25.0, Some((20.0, 40.0))),
            (
                "h100-2node-400g-per-gpu",
                16,
                40.0,
                48.0,
                Some((25.0, 45.0)),
            ),
            ("h100-2node-200g-per-gpu", 16, 20.0, 24.0, None),
            ("h100-2node-400g-per-node", 16, 5.0, 6.2, None),
        ];
        for (name, ranks, lo, hi, time) in table {
            let p = load(Some(name)).unwrap();
            assert_eq!(p.name, name);
            assert_eq!(p.source, "builtin");
            assert!(p.typical, "{name}");
            assert_eq!(p.ranks, Some(ranks), "{name}");
            assert_eq!(p.suite, Suite::default(), "{name}");
            assert_eq!(
                p.busbw,
                [BusbwCheck {
                    collective: Collective::AllReduce,
                    min_bytes: 1 << 30,
                    max_bytes: Some(8 << 30),
                    min_gbs: lo,
                    typical_gbs: Some((lo, hi)),
                }],
                "{name}"
            );
            let latency: Vec<LatencyCheck> = time
                .map(|(tlo, thi)| LatencyCheck {
                    collective: Collective::AllReduce,
                    min_bytes: 0,
                    max_bytes: 8,
                    max_us: thi,
                    typical_us: Some((tlo, thi)),
                })
                .into_iter()
                .collect();
            assert_eq!(p.latency, latency, "{name}");
            assert_eq!(p.baseline, None);
            assert!(p.text.contains("not guarantees"), "{name}");
            assert!(p.text.contains("--make-profile"), "{name}");
        }
    }

    /// `load(None)` is the thresholdless `default` profile with the default suite.
    #[test]
    fn no_spec_loads_default_without_thresholds() {
        let p = load(None).unwrap();
        assert_eq!(p, load(Some("default")).unwrap());
        assert_eq!(p.name, "default");
        assert!(!p.typical);
        assert_eq!(p.ranks, None);
        assert!(p.busbw.is_empty() && p.latency.is_empty() && p.baseline.is_none());
        assert!(p.description.contains("correctness and completion only"));
        assert_eq!(p.suite.collectives, Collective::ALL.to_vec());
        assert_eq!(
            (p.suite.correctness_max_bytes, p.suite.perf_max_bytes),
            (16 << 20, 8 << 30)
        );
    }

    /// `builtins()` lists every shipped file once, `default` first, with its description.
    #[test]
    fn builtins_list_every_shipped_profile() {
        let list = builtins();
        let names: Vec<&str> = list.iter().map(|(n, _)| *n).collect();
        assert_eq!(
            names,
            [
                "default",
                "h100-nvswitch",
                "a100-nvswitch",
                "pcie4-8gpu",
                "h100-2node-400g-per-gpu",
                "h100-2node-200g-per-gpu",
                "h100-2node-400g-per-node"
            ]
        );
        assert_eq!(list[1].1, "8x H100 SXM in one node, NVSwitch");
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("profiles");
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter_map(|f| f.strip_suffix(".toml").map(str::to_string))
            .collect();
        files.sort();
        let mut sorted: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        sorted.sort();
        assert_eq!(files, sorted, "profiles/*.toml and BUILTIN differ");
    }

    /// An unknown builtin name is a usage error listing the builtin names.
    #[test]
    fn unknown_name_lists_builtins() {
        let msg = usage(load(Some("h200")));
        assert!(
            msg.starts_with(
                "unknown profile 'h200' (builtin profiles: default, h100-nvswitch, a100-nvswitch,"
            ),
            "{msg}"
        );
        let msg = usage(load(Some("/nonexistent/p.toml")));
        assert!(
            msg.starts_with("profile /nonexistent/p.toml: cannot read:"),
            "{msg}"
        );
    }

    /// A profile file keeps its path as source and resolves relative baseline paths against
    /// its own directory; absolute ones stay as written.
    #[test]
    fn file_profiles_resolve_baseline_paths_against_their_directory() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("mine.toml");
        let text = format!(
            "{HEAD}[baseline]\npaths = [\"healthy/performance\", \"/abs/run.csv\"]\nthreshold_pct = 7.5\n"
        );
        std::fs::write(&file, &text).unwrap();
        let spec = file.display().to_string();
        let p = load(Some(&spec)).unwrap();
        assert_eq!(p.source, spec);
        assert_eq!(p.text, text);
        assert_eq!(
            p.baseline,
            Some(Baseline {
                paths: vec![
                    dir.path().join("healthy/performance"),
                    PathBuf::from("/abs/run.csv")
                ],
                threshold_pct: 7.5,
            })
        );
        // Without a base directory relative paths are left as written; default threshold 5.
        let p = parse(&format!("{HEAD}[baseline]\npaths = [\"run\"]\n"), "x", None).unwrap();
        assert_eq!(
            p.baseline,
            Some(Baseline {
                paths: vec![PathBuf::from("run")],
                threshold_pct: 5.0
            })
        );
    }

    /// Every `[suite]` key is read; sizes as strings mean what `-b`/`-e` mean, integers are
    /// bytes; collectives keep the listed order.
    #[test]
    fn suite_keys_and_sizes() {
        let text = format!(
            "{HEAD}[suite]\ncollectives = [\"all_gather\", \"all_reduce_perf\"]\n\
             correctness_min_bytes = 16\ncorrectness_max_bytes = \"0.5M\"\ncorrectness_step_factor = 8\n\
             perf_min_bytes = \"1K\"\nperf_max_bytes = \"4GB\"\nperf_step_factor = 4\n\
             iters = 50\nwarmup_iters = 0\ntimeout_s = 60\n\
             [[busbw]]\ncollective = \"all_gather\"\nmin_bytes = \"1G\"\nmin_gbs = 0.5\n"
        );
        let p = parse(&text, "s.toml", None).unwrap();
        assert_eq!(
            p.suite,
            Suite {
                collectives: vec![Collective::AllGather, Collective::AllReduce],
                correctness_min_bytes: 16,
                correctness_max_bytes: parse_size("0.5M").unwrap(),
                correctness_step_factor: 8,
                perf_min_bytes: 1024,
                perf_max_bytes: 4 << 30,
                perf_step_factor: 4,
                iters: 50,
                warmup_iters: 0,
                timeout_s: 60,
            }
        );
        assert_eq!(p.busbw[0].max_bytes, None);
        assert_eq!(p.busbw[0].typical_gbs, None);
        assert!(!p.typical);
        assert_eq!(p.description, "");
    }

    /// The example layout in `profiles/README.md` is a valid profile with the numbers it shows.
    #[test]
    fn documented_example_parses() {
        let readme = include_str!("../../profiles/README.md");
        let start = readme.find("```toml\n").unwrap() + "```toml\n".len();
        let example = &readme[start..start + readme[start..].find("```").unwrap()];
        let p = parse(example, "README", None).unwrap();
        assert_eq!(p.name, "h100-nvswitch");
        assert_eq!(
            p.suite,
            Suite {
                collectives: vec![Collective::AllReduce, Collective::AllGather],
                ..Suite::default()
            }
        );
        assert_eq!((p.busbw[0].min_gbs, p.latency[0].max_us), (350.0, 20.0));
        assert_eq!(
            p.baseline.unwrap().paths,
            [PathBuf::from("healthy/performance")]
        );
    }

    /// Each validation rule gives its one-line message, with the line where toml has one.
    #[test]
    fn validation_errors_say_what_and_where() {
        let busbw = "[[busbw]]\ncollective = \"all_reduce\"\nmin_bytes = \"1G\"\nmin_gbs = 1\n";
        let cases: Vec<(String, &str)> = vec![
            (
                format!("{HEAD}colour = 1\n"),
                "profile t.toml: line 3 (`colour = 1`): unknown field `colour`, expected one of",
            ),
            (
                format!("{HEAD}[suite]\nsize = 1\n"),
                "profile t.toml: line 4 (`size = 1`): unknown field `size`",
            ),
            (
                format!("{HEAD}[extra]\n"),
                "profile t.toml: line 3 (`[extra]`): unknown field `extra`",
            ),
            (
                format!("{HEAD}[suite]\ncollectives = [\"allreduce\"]\n"),
                "profile t.toml: line 4 (`collectives = [\"allreduce\"]`): unknown collective 'allreduce' (valid: all_reduce, all_gather, broadcast, reduce_scatter, reduce, alltoall, scatter, sendrecv, hypercube, gather)",
            ),
            (
                format!("{HEAD}[suite]\nperf_max_bytes = \"8T\"\n"),
                "profile t.toml: line 4 (`perf_max_bytes = \"8T\"`): unknown suffix 'T' in size '8T'",
            ),
            (
                format!("{HEAD}[suite]\nperf_max_bytes = -8\n"),
                "profile t.toml: line 4 (`perf_max_bytes = -8`): size -8 is negative",
            ),
            (
                format!("{HEAD}[suite]\nperf_max_bytes = 1.5\n"),
                "profile t.toml: line 4 (`perf_max_bytes = 1.5`): invalid type: floating point `1.5`, expected a size",
            ),
            (
                format!("{HEAD}[suite]\nperf_min_bytes = \"1M\"\nperf_max_bytes = \"1K\"\n"),
                "profile t.toml: line 5 (`perf_max_bytes = \"1K\"`): suite.perf_min_bytes (1048576) is above suite.perf_max_bytes (1024)",
            ),
            (
                format!("{HEAD}[suite]\ncorrectness_min_bytes = \"32M\"\n"),
                "profile t.toml: line 4 (`correctness_min_bytes = \"32M\"`): suite.correctness_min_bytes (33554432) is above suite.correctness_max_bytes (16777216)",
            ),
            (
                format!("{HEAD}[suite]\nperf_min_bytes = 0\n"),
                "profile t.toml: line 4 (`perf_min_bytes = 0`): suite.perf_min_bytes is 0: a sweep that multiplies its size would never advance",
            ),
            (
                format!("{HEAD}[suite]\ncorrectness_min_bytes = \"0\"\n"),
                "profile t.toml: line 4 (`correctness_min_bytes = \"0\"`): suite.correctness_min_bytes is 0",
            ),
            (
                format!("{HEAD}[suite]\nperf_step_factor = 1\n"),
                "profile t.toml: line 4 (`perf_step_factor = 1`): must be an integer >= 2, not 1",
            ),
            (
                format!("{HEAD}[suite]\ncorrectness_step_factor = 0\n"),
                "profile t.toml: line 4 (`correctness_step_factor = 0`): must be an integer >= 2, not 0",
            ),
            (
                format!("{HEAD}[suite]\niters = 0\n"),
                "profile t.toml: line 4 (`iters = 0`): must be an integer in 1..=4294967295, not 0",
            ),
            (
                format!("{HEAD}[suite]\ntimeout_s = 0\n"),
                "profile t.toml: line 4 (`timeout_s = 0`): must be an integer >= 1, not 0",
            ),
            (
                format!("{HEAD}[suite]\ncollectives = []\n"),
                "profile t.toml: line 4 (`collectives = []`): suite.collectives is empty",
            ),
            (
                format!("{HEAD}[suite]\ncollectives = [\"reduce\", \"reduce\"]\n"),
                "profile t.toml: line 4 (`collectives = [\"reduce\", \"reduce\"]`): suite.collectives lists reduce twice",
            ),
            (
                format!("{HEAD}[suite]\ncollectives = [\"all_gather\"]\n{busbw}"),
                "profile t.toml: line 6 (`collective = \"all_reduce\"`): [[busbw]] names all_reduce, which is not in suite.collectives",
            ),
            (
                format!("{HEAD}[[latency]]\ncollective = \"all_reduce\"\nmin_bytes = 64\nmax_bytes = 8\nmax_us = 5\n"),
                "profile t.toml: line 6 (`max_bytes = 8`): [[latency]] min_bytes (64) is above max_bytes (8)",
            ),
            (
                format!("{HEAD}[[busbw]]\ncollective = \"all_reduce\"\nmin_bytes = \"2G\"\nmax_bytes = \"1G\"\nmin_gbs = 5\n"),
                "profile t.toml: line 6 (`max_bytes = \"1G\"`): [[busbw]] min_bytes (2147483648) is above max_bytes (1073741824)",
            ),
            (
                format!("{HEAD}[[busbw]]\ncollective = \"all_reduce\"\nmin_bytes = \"16G\"\nmin_gbs = 5\n"),
                "profile t.toml: line 5 (`min_bytes = \"16G\"`): [[busbw]] range 17179869184.. bytes lies outside the sweep 8..8589934592 bytes",
            ),
            (
                format!("{HEAD}[[busbw]]\ncollective = \"all_reduce\"\nmin_bytes = 8\nmin_gbs = 0\n"),
                "profile t.toml: line 6 (`min_gbs = 0`): threshold must be a finite number > 0, not 0",
            ),
            (
                format!("{HEAD}[[busbw]]\ncollective = \"all_reduce\"\nmin_bytes = 8\nmin_gbs = nan\n"),
                "profile t.toml: line 6 (`min_gbs = nan`): threshold must be a finite number > 0, not NaN",
            ),
            (
                format!("{HEAD}[[latency]]\ncollective = \"all_reduce\"\nmax_bytes = 8\nmax_us = -inf\n"),
                "profile t.toml: line 6 (`max_us = -inf`): threshold must be a finite number > 0, not -inf",
            ),
            (
                format!("{HEAD}{busbw}typical_gbs = [480, 350]\n"),
                "profile t.toml: line 7 (`typical_gbs = [480, 350]`): typical range [480, 350] has its low end above its high end",
            ),
            (
                format!("{HEAD}{busbw}typical_gbs = [1, 2, 3]\n"),
                "profile t.toml: line 7 (`typical_gbs = [1, 2, 3]`): a typical range is [low, high], not 3 numbers",
            ),
            (
                format!("{HEAD}[[latency]]\ncollective = \"all_reduce\"\nmax_us = 5\n"),
                "profile t.toml: line 3 (`[[latency]]`): missing field `max_bytes`",
            ),
            (
                format!("{HEAD}[baseline]\npaths = []\n"),
                "profile t.toml: line 4 (`paths = []`): [baseline] paths is empty",
            ),
            (
                format!("{HEAD}[baseline]\npaths = [\"x\"]\nthreshold_pct = 0\n"),
                "profile t.toml: line 5 (`threshold_pct = 0`): threshold must be a finite number > 0, not 0",
            ),
            (
                "[profile]\ndescription = \"no name\"\n".to_string(),
                "profile t.toml: missing [profile] name",
            ),
            ("[suite]\niters = 3\n".to_string(), "profile t.toml: missing [profile] name"),
            (
                "[profile]\nname = \" \"\n".to_string(),
                "profile t.toml: line 2 (`name = \" \"`): [profile] name is empty",
            ),
            (
                format!("{HEAD}ranks = 0\n"),
                "profile t.toml: line 3 (`ranks = 0`): must be an integer in 1..=4294967295, not 0",
            ),
            (
                "[profile\nname = 1\n".to_string(),
                "profile t.toml: line 1 (`[profile`): ",
            ),
        ];
        for (text, expected) in cases {
            let msg = usage(parse(&text, "t.toml", None));
            assert!(
                msg.starts_with(expected),
                "for\n{text}\nexpected: {expected}\n     got: {msg}"
            );
            assert!(!msg.contains('\n'), "{msg}");
        }
    }
}
