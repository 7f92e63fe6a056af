//! The code map as docs/architecture.md states it, read from its tables so the page and this
//! test cannot drift: the layers of `src/` and what each may import, then the same for the
//! folders inside the engines that have a table of their own (`bench`, `analysis`).

use std::collections::BTreeMap;

/// What a row may import: everything (the binary's top), or the rows named.
#[derive(Debug, Clone, PartialEq)]
pub enum Imports {
    Everything,
    Only(Vec<String>),
}

/// One table: row name to (the `src/` entries it covers, what it may import).
pub type Table = BTreeMap<String, (Vec<String>, Imports)>;

/// The code map: the top table, and the tables of the layers that have folders of their own.
#[derive(Debug)]
pub struct Map {
    pub layers: Table,
    pub inside: BTreeMap<String, Table>,
}

/// The backticked words of a table cell.
fn quoted(cell: &str) -> Vec<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// The rows of the first table under the heading `heading` (the heading line's text exactly).
fn table_under(doc: &str, heading: &str) -> Result<Table, String> {
    let mut lines = doc
        .lines()
        .skip_while(|l| l.trim_start_matches('#').trim() != heading);
    lines.next().ok_or(format!("no heading `{heading}`"))?;
    let mut table = Table::new();
    for line in lines {
        if line.starts_with('#') {
            break; // the table ends with its section
        }
        if !line.starts_with('|') || line.starts_with("|---") || line.starts_with("| row") {
            continue;
        }
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let [_, name, covers, imports, ..] = cells.as_slice() else {
            return Err(format!("`{heading}`: a row without 3 cells: {line}"));
        };
        let name = quoted(name)
            .pop()
            .ok_or(format!("`{heading}`: unnamed row: {line}"))?;
        let imports = match *imports {
            "everything" => Imports::Everything,
            "nothing" => Imports::Only(Vec::new()),
            cell => Imports::Only(quoted(cell)),
        };
        table.insert(name, (quoted(covers), imports));
    }
    if table.is_empty() {
        return Err(format!("no table rows under `{heading}`"));
    }
    Ok(table)
}

/// Reads the map from the text of docs/architecture.md.
pub fn read(doc: &str) -> Result<Map, String> {
    let layers = table_under(doc, "The code map")?;
    let mut inside = BTreeMap::new();
    for layer in ["bench", "analysis"] {
        inside.insert(
            layer.to_string(),
            table_under(doc, &format!("Inside `{layer}`"))?,
        );
    }
    Ok(Map { layers, inside })
}

/// The row of `table` whose covered entries hold `entry` (`runner/` or `environment.rs`).
fn row_of<'a>(table: &'a Table, entry: &str) -> Option<&'a String> {
    let names = [
        format!("{entry}/"),
        format!("{entry}.rs"),
        format!("src/{entry}/"),
        format!("src/{entry}.rs"),
    ];
    table
        .iter()
        .find(|(_, (covers, _))| covers.iter().any(|c| names.contains(c)))
        .map(|(n, _)| n)
}

/// The rows that `table` says each row reaches, following its imports: used to refuse a table
/// whose rows could import each other round (the map itself must be one way).
pub fn circle_in(table: &Table) -> Option<String> {
    fn visit(t: &Table, row: &str, path: &mut Vec<String>) -> Option<String> {
        if path.iter().any(|p| p == row) {
            return Some(format!("{} -> {row}", path.join(" -> ")));
        }
        path.push(row.to_string());
        if let Some((_, Imports::Only(next))) = t.get(row) {
            for n in next {
                if let Some(c) = visit(t, n, path) {
                    return Some(c);
                }
            }
        }
        path.pop();
        None
    }
    table
        .keys()
        .find_map(|row| visit(table, row, &mut Vec::new()))
}

impl Map {
    /// Top-level row and, inside a layer with a table, the folder row of a module path.
    fn place(&self, path: &[String]) -> Result<(String, Option<String>), String> {
        let top = path.first().map_or("lib", String::as_str);
        let layer =
            row_of(&self.layers, top).ok_or(format!("`{top}` is in no row of the code map"))?;
        let Some(table) = self.inside.get(layer) else {
            return Ok((layer.clone(), None));
        };
        let entry = path.get(1).map_or("mod", String::as_str);
        let row = row_of(table, entry).ok_or(format!(
            "`{layer}::{entry}` is in no row of {layer}'s table"
        ))?;
        Ok((layer.clone(), Some(row.clone())))
    }

    /// Why module `from` may not name `to`, if it may not; an error when either is unmapped.
    pub fn violation(&self, from: &[String], to: &[String]) -> Result<Option<String>, String> {
        let (fl, fs) = self.place(from)?;
        let (tl, ts) = self.place(to)?;
        let allowed = |table: &Table, f: &str, t: &str| match &table[f].1 {
            Imports::Everything => true,
            Imports::Only(rows) => rows.iter().any(|r| r == t),
        };
        if fl != tl {
            return Ok(
                (!allowed(&self.layers, &fl, &tl)).then(|| format!("{fl} may not import {tl}"))
            );
        }
        match (fs, ts) {
            (Some(f), Some(t)) if f != t && !allowed(&self.inside[&fl], &f, &t) => {
                Ok(Some(format!("{fl}::{f} may not import {fl}::{t}")))
            }
            _ => Ok(None),
        }
    }

    /// Entries of `src/` (top level, or inside a layer with a table) that no row covers, rows
    /// covering entries that do not exist, and imports of rows that do not exist: the map must
    /// describe the tree exactly.
    pub fn drift(&self, top: &[String], inside: &BTreeMap<String, Vec<String>>) -> Vec<String> {
        let mut out = Vec::new();
        let mut compare = |what: &str, table: &Table, entries: &[String], prefix: &str| {
            for e in entries {
                if row_of(table, e.trim_end_matches(".rs")).is_none() {
                    out.push(format!("{what}: `{prefix}{e}` is in no row"));
                }
            }
            for (row, (covers, imports)) in table {
                if let Imports::Only(names) = imports {
                    for n in names.iter().filter(|n| !table.contains_key(*n)) {
                        out.push(format!(
                            "{what}: row `{row}` may import `{n}`, which is no row"
                        ));
                    }
                }
                for c in covers {
                    let bare = c.strip_prefix("src/").unwrap_or(c).trim_end_matches('/');
                    if !entries.iter().any(|e| e == bare) {
                        out.push(format!(
                            "{what}: row `{row}` names `{c}`, which does not exist"
                        ));
                    }
                }
            }
        };
        compare("the code map", &self.layers, top, "src/");
        for (layer, table) in &self.inside {
            compare(
                &format!("{layer}'s table"),
                table,
                &inside[layer],
                &format!("src/{layer}/"),
            );
        }
        out
    }
}
