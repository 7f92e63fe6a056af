//! Which CUDA device each local rank drives: nccl-tests' rule (consecutive devices from
//! `local process rank x ranks per process`, or from `NCCL_TESTS_DEVICE`), or ncclbench's
//! explicit `--devices` list, where repeats put several ranks on one device.

use crate::core::error::Error;

/// The environment variable nccl-tests reads for the first device of this process.
pub const FIRST_DEVICE_ENV: &str = "NCCL_TESTS_DEVICE";

/// Where the device choice comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceChoice {
    /// `--devices`: one ordinal per local rank.
    Explicit(Vec<usize>),
    /// Consecutive devices from `NCCL_TESTS_DEVICE`, when set.
    From(usize),
    /// nccl-tests' default: consecutive devices from `local_process * local_ranks`.
    ByLocalRank,
}

impl DeviceChoice {
    /// The choice for a run: `--devices` wins, then `NCCL_TESTS_DEVICE` (`env`), then the
    /// local-rank rule. A malformed `NCCL_TESTS_DEVICE` is an error (nccl-tests' `atoi` would
    /// silently read it as 0).
    pub fn new(explicit: Option<&[usize]>, env: Option<&str>) -> Result<Self, Error> {
        if let Some(list) = explicit {
            return Ok(Self::Explicit(list.to_vec()));
        }
        match env.map(str::trim).filter(|v| !v.is_empty()) {
            None => Ok(Self::ByLocalRank),
            Some(v) => v.parse().map(Self::From).map_err(|_| {
                Error::usage(format!(
                    "{FIRST_DEVICE_ENV}={v:?} is not a CUDA device number (expected e.g. 0)"
                ))
            }),
        }
    }

    /// The ordinal of every local rank, given this process's rank among the processes on its
    /// host, the ranks it drives and how many devices it can see. Too few devices is
    /// [`Error::NotEnoughDevices`] with nccl-tests' wording (exit status 5).
    pub fn resolve(
        &self,
        local_process: usize,
        local_ranks: usize,
        visible: usize,
    ) -> Result<Vec<usize>, Error> {
        let devices: Vec<usize> = match self {
            Self::Explicit(list) => list.clone(),
            Self::From(first) => (0..local_ranks).map(|i| first + i).collect(),
            Self::ByLocalRank => (0..local_ranks)
                .map(|i| local_process * local_ranks + i)
                .collect(),
        };
        match devices.iter().find(|&&d| d >= visible) {
            None => Ok(devices),
            Some(&bad) => Err(Error::NotEnoughDevices(match self {
                Self::Explicit(_) => format!(
                    "--devices names CUDA device {bad}, but only {visible} device(s) are visible \
                     (CUDA_VISIBLE_DEVICES limits what a process sees)"
                ),
                _ => format!(
                    "Invalid number of GPUs: {} requested but only {visible} were found. \
                     Please check the number of processes and GPUs per process{}.",
                    devices.iter().max().map_or(bad, |m| m + 1),
                    if matches!(self, Self::From(_)) {
                        format!(
                            " ({FIRST_DEVICE_ENV} starts this process at device {})",
                            devices[0]
                        )
                    } else {
                        String::new()
                    }
                ),
            })),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_default_process_p_takes_the_p_th_block_of_devices() {
        let choice = DeviceChoice::new(None, None).unwrap();
        assert_eq!(choice.resolve(0, 4, 8).unwrap(), vec![0, 1, 2, 3]);
        assert_eq!(choice.resolve(1, 4, 8).unwrap(), vec![4, 5, 6, 7]);
        assert_eq!(choice.resolve(1, 1, 8).unwrap(), vec![1]);
    }

    #[test]
    fn nccl_tests_device_shifts_the_block_whatever_the_local_rank() {
        let choice = DeviceChoice::new(None, Some("2")).unwrap();
        assert_eq!(choice, DeviceChoice::From(2));
        assert_eq!(choice.resolve(3, 2, 4).unwrap(), vec![2, 3]);
        assert!(DeviceChoice::new(None, Some("x")).is_err());
        assert_eq!(
            DeviceChoice::new(None, Some(" ")).unwrap(),
            DeviceChoice::ByLocalRank
        );
    }

    #[test]
    fn explicit_lists_win_and_may_repeat_a_device() {
        let choice = DeviceChoice::new(Some(&[0, 0]), Some("5")).unwrap();
        assert_eq!(choice.resolve(7, 2, 1).unwrap(), vec![0, 0]);
    }

    #[test]
    fn too_few_devices_is_exit_5_with_nccl_tests_words() {
        let e = DeviceChoice::ByLocalRank.resolve(1, 2, 2).unwrap_err();
        assert_eq!(e.exit_code(), 5);
        assert!(e
            .to_string()
            .starts_with("Invalid number of GPUs: 4 requested but only 2 were found."));
        let e = DeviceChoice::Explicit(vec![0, 3])
            .resolve(0, 2, 2)
            .unwrap_err();
        assert!(e.to_string().contains("CUDA device 3"), "{e}");
    }
}
