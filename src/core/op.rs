//! Reduction operators, as nccl-tests names them, and the one place that defines the
//! per-rank scalar of `mulsum` (NCCL's PreMulSum).

use std::fmt;

/// A reduction operator selectable with `-o`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RedOp {
    /// `sum`
    Sum,
    /// `prod`
    Prod,
    /// `max`
    Max,
    /// `min`
    Min,
    /// `avg`: for floats NCCL pre-multiplies every input by 1/n and sums; for integers it sums
    /// (wrapping) and divides by n at the end.
    Avg,
    /// `mulsum`: NCCL's PreMulSum, each rank's input multiplied by [`mulsum_scalar`] before summing.
    MulSum,
}

impl RedOp {
    /// Every operator in nccl-tests' `-o all` order.
    pub const ALL: [RedOp; 6] = [
        RedOp::Sum,
        RedOp::Prod,
        RedOp::Max,
        RedOp::Min,
        RedOp::Avg,
        RedOp::MulSum,
    ];

    /// The name nccl-tests prints and accepts with `-o`.
    pub fn name(self) -> &'static str {
        match self {
            RedOp::Sum => "sum",
            RedOp::Prod => "prod",
            RedOp::Max => "max",
            RedOp::Min => "min",
            RedOp::Avg => "avg",
            RedOp::MulSum => "mulsum",
        }
    }

    /// Parses an `-o` name (exact, case-sensitive, as nccl-tests).
    pub fn parse(name: &str) -> Option<RedOp> {
        RedOp::ALL.into_iter().find(|o| o.name() == name)
    }
}

impl fmt::Display for RedOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The PreMulSum scalar of `rank`: 1 for even ranks, 2 for odd ranks (the nccl-tests choice;
/// powers of two keep the products exact).
pub fn mulsum_scalar(rank: usize) -> u32 {
    if rank % 2 == 0 {
        1
    } else {
        2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_case_matters() {
        for o in RedOp::ALL {
            assert_eq!(RedOp::parse(o.name()), Some(o));
        }
        assert_eq!(RedOp::parse("SUM"), None);
        assert_eq!(RedOp::parse("all"), None);
    }
}
