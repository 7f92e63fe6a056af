//! From TOML text to a checked [`Profile`]: the raw tables read, defaults filled in, and the
//! rules no single value can check (a name given, sizes ordered, checks inside the suite and
//! its sweep) applied, each problem one line placed at its key.

use super::raw::{Coll, RawBaseline, RawBusbw, RawFile, RawLatency, RawLocate, RawSuite, Size};
use super::{Baseline, BusbwCheck, LatencyCheck, LocateStage, Profile, Suite};
use crate::core::collective::Collective;
use crate::core::error::Error;
use std::path::{Path, PathBuf};
use toml::Spanned;

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
    let locate = raw.locate.map(|l| locate(l, &at)).transpose()?;
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
        locate,
        text: text.to_string(),
    })
}

/// The `[locate]` table: all_reduce or sendrecv, a size of at least one byte.
fn locate(l: RawLocate, at: &At<'_>) -> Result<LocateStage, Error> {
    let collective = match &l.collective {
        None => Collective::AllReduce,
        Some(c) if matches!(c.get_ref().0, Collective::AllReduce | Collective::SendRecv) => {
            c.get_ref().0
        }
        Some(c) => {
            return Err(at(
                Some(c.span().start),
                "[locate] collective is all_reduce or sendrecv",
            ))
        }
    };
    if let Some(b) = l.bytes.as_ref().filter(|b| b.get_ref().0 == 0) {
        return Err(at(
            Some(b.span().start),
            "[locate] bytes must be at least 1",
        ));
    }
    Ok(LocateStage {
        collective,
        bytes: l.bytes.map(|b| b.get_ref().0),
        rounds: l.rounds.map_or(3, |r| r.0 as usize),
        intra_node_min_gbs: l.intra_node_min_gbs.map(|p| p.0),
        inter_node_min_gbs: l.inter_node_min_gbs.map(|p| p.0),
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
