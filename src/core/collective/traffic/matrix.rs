//! alltoallv's traffic matrix file: a square, whitespace-separated table of bytes, cell
//! `[i][j]` what rank i sends to rank j, read as nccl-tests reads it (rows end at newlines,
//! blank lines are skipped, every row has the same number of columns, values are
//! non-negative numbers, each scaled and then floored to a multiple of 16 bytes). Every
//! problem is one line naming the row and column; nothing here panics on any input.

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

/// Parses the text of a matrix file named `name` (for messages) with the given scale.
pub fn parse_matrix(text: &str, name: &str, scale: f64) -> Result<Matrix, String> {
    let bad = |row: usize, col: usize, why: &str| {
        format!("alltoallv traffic matrix {name}: row {row} column {col}: {why}")
    };
    let mut cols = None;
    let mut rows = 0usize;
    let mut cells = Vec::new();
    for line in text.split('\n') {
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
                .map_err(|_| bad(rows, col, &format!("{t:?} is not a number")))?;
            if !v.is_finite() {
                return Err(bad(rows, col, &format!("{t:?} is not a finite number")));
            }
            if v < 0.0 {
                return Err(bad(
                    rows,
                    col,
                    &format!("{t} is negative (bytes must be >= 0)"),
                ));
            }
            let scaled = v * scale;
            if scaled >= usize::MAX as f64 {
                return Err(bad(
                    rows,
                    col,
                    &format!("{t} x scale {scale} overflows a byte count"),
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
