//! The streaming parse of a JSON result document: a serde visitor over `serde_json`'s reader
//! takes `results` one element at a time (each turned into rows at once) and keeps only the
//! small top-level members that describe every result (`config`, `ncclbench`, `args`). Those
//! may follow `results` in the document, so what they supply is filled in at the end.

use super::super::common::{assign_cycles, fail};
use super::{base_row, file_info, measurement, placement_tuning, small, FileInfo};
use crate::analysis::input::{InputRow, ReadSet, Skipped, SourceRef};
use crate::core::bounded::Mark;
use crate::core::error::Error;
use crate::result::Placement;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// The state of one document while its `results` stream by.
struct Doc<'a> {
    name: &'a str,
    /// Told of each result, so a document that stops holding results is not read forever.
    mark: &'a Mark,
    set: ReadSet,
    /// `config`, `ncclbench` and `args`, kept (they are small) for [`file_info`].
    top: Map<String, Value>,
    /// Per row of `set.rows`: (collective, rank count) still to come from the file's info,
    /// which may follow `results` in the document.
    late: Vec<(bool, bool)>,
    /// Results seen so far; `None` before a `results` list.
    results: Option<usize>,
    /// The document is an object.
    object: bool,
    all_cycles: bool,
}

/// Reads a JSON result file from a stream: each element of `results` is parsed and turned
/// into rows as it arrives, so memory holds the rows kept, never the document.
pub(in crate::analysis::read) fn read(
    name: &str,
    input: impl std::io::BufRead,
    mark: &Mark,
) -> Result<ReadSet, Error> {
    let mut doc = Doc {
        name,
        mark,
        set: ReadSet::default(),
        top: Map::new(),
        late: Vec::new(),
        results: None,
        object: false,
        all_cycles: true,
    };
    let mut de = serde_json::Deserializer::from_reader(input);
    let parsed = (&mut doc).deserialize(&mut de).and_then(|()| de.end());
    if let Err(e) = parsed {
        return Err(if e.is_io() {
            fail(name, e.line(), format!("cannot read: {e}"))
        } else if e.is_data() && !doc.object {
            fail(name, 1, "the JSON document is not an object")
        } else if e.is_data() {
            fail(name, 1, "the JSON document has no `results` list")
        } else {
            let msg = e.to_string();
            let msg = msg.split(" at line ").next().unwrap_or(&msg).to_string();
            fail(name, e.line(), format!("invalid JSON: {msg}"))
        });
    }
    if doc.results.is_none() {
        return Err(fail(name, 1, "the JSON document has no `results` list"));
    }
    let info = file_info(&doc.top);
    for (row, (collective, nranks)) in doc.set.rows.iter_mut().zip(&doc.late) {
        if *collective {
            row.collective = info.collective.clone();
        }
        if *nranks {
            row.nranks = info.nranks;
        }
    }
    let mut set = doc.set;
    if !doc.all_cycles {
        let groups = vec![0; set.rows.len()];
        assign_cycles(&mut set.rows, &groups);
    }
    Ok(set)
}

impl Doc<'_> {
    /// Turns the `index`-th (0-based) element of `results` into its rows or skips.
    fn result(&mut self, index: usize, result: &Value) {
        let source = SourceRef {
            file: self.name.to_string(),
            line: index + 1,
        };
        let set = &mut self.set;
        let skip = |set: &mut ReadSet, reason: String| {
            set.skipped.push(Skipped {
                source: source.clone(),
                reason,
            })
        };
        let unknown = FileInfo {
            collective: None,
            nranks: None,
        };
        let base = match base_row(result, &unknown, &source) {
            Ok(row) => row,
            Err(why) => return skip(set, why),
        };
        let late = (
            result.get("collective").and_then(Value::as_str).is_none(),
            result.get("nranks").and_then(small).is_none(),
        );
        self.all_cycles &= result.get("cycle").is_some();
        for (placement, key) in [
            (Placement::OutOfPlace, "out_of_place"),
            (Placement::InPlace, "in_place"),
        ] {
            match measurement(result.get(key)) {
                Ok((time_us, algbw_gbs, busbw_gbs, wrong)) => {
                    set.rows.push(InputRow {
                        placement,
                        time_us,
                        algbw_gbs,
                        busbw_gbs,
                        wrong,
                        tuning: placement_tuning(result.get(key)).or_else(|| base.tuning.clone()),
                        ..base.clone()
                    });
                    self.late.push(late);
                }
                Err(why) => skip(set, format!("{key}: {why}")),
            }
        }
    }
}

/// The top level: an object whose `results` list streams and whose few small members are kept.
impl<'de> DeserializeSeed<'de> for &mut Doc<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for &mut Doc<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        self.object = true;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "results" => map.next_value_seed(Results(&mut *self))?,
                "config" | "ncclbench" | "args" => {
                    let v: Value = map.next_value()?;
                    self.top.insert(key, v);
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// The `results` list, one element at a time.
struct Results<'d, 'a>(&'d mut Doc<'a>);

impl<'de> DeserializeSeed<'de> for Results<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Results<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut index = 0;
        self.0.results = Some(0);
        while let Some(result) = seq.next_element::<Value>()? {
            self.0.result(index, &result);
            self.0.mark.record();
            index += 1;
            self.0.results = Some(index);
        }
        Ok(())
    }
}
