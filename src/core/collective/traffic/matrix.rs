//! alltoallv's traffic matrix file: a square, whitespace-separated table of bytes, cell
//! `[i][j]` what rank i sends to rank j, read as nccl-tests reads it (rows end at newlines,
//! blank lines are skipped, every row has the same number of columns, values are
//! non-negative numbers, each scaled and then floored to a multiple of 16 bytes). Every
//! problem is one line naming the row and column; nothing here panics on any input.

use crate::core::bounded::QUOTE_LIMIT;

/// The most cells a matrix may have (64 Mi: 512 MiB of counts, a 8192-rank job); a larger
/// file is refused before anything is allocated for it.
pub const MAX_CELLS: usize = 1 << 26;

/// A parsed traffic matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct Matrix {
    /// Rows (= columns).
    pub dim: usize,
    /// The scale applied (`NCCL_TESTS_ALLTOALLV_MATRIX_SCALE`).
    pub scale: f64,
    /// Row-major bytes, scaled and floored to 16.
    cells: Vec<usize>,
}

impl Matrix {
    /// Bytes rank `src` sends to rank `dst` (both below `dim`; 0 outside).
    pub fn bytes(&self, src: usize, dst: usize) -> usize {
        if src >= self.dim || dst >= self.dim {
            return 0;
        }
        self.cells[src * self.dim + dst]
    }
}

/// The longest row read (8192 columns of 16-digit numbers take 136 KiB): a longer line is
/// refused when it reaches this, so a file without line ends is never held whole.
pub const MAX_ROW: usize = 4 << 20;

/// The most a matrix file may hold in all (blank lines included), read as it streams.
pub const MAX_FILE: u64 = 2 << 30;

/// Parses the text of a matrix file named `name` (for messages) with the given scale.
pub fn parse_matrix(text: &str, name: &str, scale: f64) -> Result<Matrix, String> {
    read_matrix(text.as_bytes(), name, scale)
}

/// Reads a matrix file from a stream a row at a time: memory holds the cells and one row of
/// at most [`MAX_ROW`] bytes, and at most [`MAX_FILE`] bytes are read, whatever the input
/// (`/dev/zero`, a line that never ends). Errors quote at most a short prefix of a token.
pub fn read_matrix(input: impl std::io::BufRead, name: &str, scale: f64) -> Result<Matrix, String> {
    use std::io::BufRead;
    let bad = |row: usize, col: usize, why: &str| {
        format!("alltoallv traffic matrix {name}: row {row} column {col}: {why}")
    };
    let mut input = std::io::Read::take(input, MAX_FILE + 1);
    let mut cols = None;
    let mut rows = 0usize;
    let mut cells = Vec::new();
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = std::io::Read::take(&mut input, MAX_ROW as u64 + 1)
            .read_until(b'\n', &mut line)
            .map_err(|e| format!("cannot read the alltoallv traffic matrix file {name}: {e}"))?;
        if n == 0 {
            break;
        }
        if input.limit() == 0 {
            return Err(format!(
                "alltoallv traffic matrix {name}: stopped after reading {MAX_FILE} bytes, more \
                 than any matrix holds"
            ));
        }
        if line.len() > MAX_ROW && line.last() != Some(&b'\n') {
            return Err(format!(
                "alltoallv traffic matrix {name}: row {rows} is longer than {MAX_ROW} bytes \
                 (stopped reading there)"
            ));
        }
        let Ok(line) = std::str::from_utf8(&line) else {
            return Err(format!(
                "alltoallv traffic matrix {name}: row {rows} is not text"
            ));
        };
        let tokens: Vec<&str> = line.split_ascii_whitespace().collect();
        if tokens.is_empty() {
            continue;
        }
        match cols {
            None => {
                if tokens
                    .len()
                    .checked_mul(tokens.len())
                    .is_none_or(|c| c > MAX_CELLS)
                {
                    return Err(format!(
                        "alltoallv traffic matrix {name}: {} columns is too large (at most {} cells)",
                        tokens.len(),
                        MAX_CELLS
                    ));
                }
                cols = Some(tokens.len());
            }
            Some(c) if c != tokens.len() => {
                return Err(format!(
                    "alltoallv traffic matrix {name}: row {rows} has {} columns, row 0 has {c}",
                    tokens.len()
                ));
            }
            Some(_) => {}
        }
        if rows >= cols.unwrap_or(0) {
            return Err(format!(
                "alltoallv traffic matrix {name} must be square: more than {} rows of {} columns",
                rows,
                cols.unwrap_or(0)
            ));
        }
        for (col, t) in tokens.iter().enumerate() {
            let v: f64 = t
                .parse()
                .map_err(|_| bad(rows, col, &format!("{} is not a number", shown(t, true))))?;
            if !v.is_finite() {
                return Err(bad(
                    rows,
                    col,
                    &format!("{} is not a finite number", shown(t, true)),
                ));
            }
            if v < 0.0 {
                return Err(bad(
                    rows,
                    col,
                    &format!("{} is negative (bytes must be >= 0)", shown(t, false)),
                ));
            }
            let scaled = v * scale;
            if scaled >= usize::MAX as f64 {
                return Err(bad(
                    rows,
                    col,
                    &format!("{} x scale {scale} overflows a byte count", shown(t, false)),
                ));
            }
            cells.push((scaled as usize) & !15);
        }
        rows += 1;
    }
    let dim = cols.ok_or_else(|| format!("alltoallv traffic matrix {name} is empty"))?;
    if rows != dim {
        return Err(format!(
            "alltoallv traffic matrix {name} must be square (got {rows}x{dim})"
        ));
    }
    Ok(Matrix { dim, scale, cells })
}

/// A token as a message shows it: whole when short, else its first [`QUOTE_LIMIT`] characters
/// and its length (a file may hold a token of any size); `debug` quotes it.
fn shown(t: &str, debug: bool) -> String {
    let (head, more) = match t.char_indices().nth(QUOTE_LIMIT) {
        None => (t, String::new()),
        Some((cut, _)) => (&t[..cut], format!("... ({} bytes)", t.len())),
    };
    if debug {
        format!("{head:?}{more}")
    } else {
        format!("{head}{more}")
    }
}
