//! Which CUDA device each local rank drives: nccl-tests' rule (consecutive devices from
//! `local process rank x ranks per process`, or from `NCCL_TESTS_DEVICE`), or ncclbench's
//! explicit `--devices` list, whose repeats ask for several ranks on one device.
//!
//! NCCL does not always allow that: 2.5 to 2.29 refuse two ranks of a host on one GPU at init
//! ("Duplicate GPU detected", ncclInvalidUsage), and 2.30+ allow it only with
//! `NCCL_MULTI_RANK_GPU_ENABLE=1`, read once at the first init. [`sharing`] decides, before
//! any init, whether to set that variable or to stop with a usage error.

use crate::core::error::Error;
use nccl_sys::version::version_string;

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

/// The variable with which NCCL 2.30+ lets several ranks of a host share one GPU.
pub const MULTI_RANK_GPU_ENV: &str = "NCCL_MULTI_RANK_GPU_ENABLE";

/// The first NCCL release that can run several ranks on one GPU.
const MULTI_RANK_GPU_MIN: i32 = 23000;

/// What a run does before NCCL init so that its ranks may share GPUs.
#[derive(Debug, PartialEq, Eq)]
pub struct Sharing {
    /// Set `NCCL_MULTI_RANK_GPU_ENABLE=1` in this process's environment.
    pub set_env: bool,
    /// The header line saying so.
    pub note: Option<String>,
}

/// Whether this process's ranks may share GPUs and what that needs. `ordinals` are the local
/// ranks' devices (the first is global rank `first_rank`); `explicit` says `--devices` chose
/// them, so with `other_processes` in the job the processes of a host may share GPUs too (each
/// process reads the same list, and each sets the variable for itself); `version` is the
/// loaded NCCL's, `user` the user's own `NCCL_MULTI_RANK_GPU_ENABLE`, which is kept. Local
/// ranks on one GPU with a library that cannot share one is a usage error (exit 2).
pub fn sharing(
    ordinals: &[usize],
    first_rank: usize,
    explicit: bool,
    other_processes: bool,
    version: i32,
    user: Option<&str>,
) -> Result<Sharing, Error> {
    let nothing = Sharing {
        set_env: false,
        note: None,
    };
    let shared = ordinals.iter().enumerate().find_map(|(j, d)| {
        let i = ordinals[..j].iter().position(|e| e == d)?;
        Some((first_rank + i, first_rank + j, *d))
    });
    let what = match shared {
        Some((a, b, d)) => format!("--devices puts ranks {a} and {b} on CUDA device {d}"),
        None if explicit && other_processes => {
            "--devices in a multi-process job (its processes may share a GPU)".to_string()
        }
        None => return Ok(nothing),
    };
    if version < MULTI_RANK_GPU_MIN {
        return match shared {
            Some(_) => Err(Error::usage(format!(
                "{what}, but NCCL {} refuses two ranks on one GPU (2.5 to 2.29 do); NCCL 2.30 \
                 or newer runs them, with {MULTI_RANK_GPU_ENV}=1, which ncclbench sets",
                version_string(version)
            ))),
            // Whether processes really share one is known to NCCL only: it says so at init.
            None => Ok(nothing),
        };
    }
    Ok(match user.map(str::trim).filter(|v| !v.is_empty()) {
        Some(v) => Sharing {
            set_env: false,
            note: Some(format!(
                "# {what}: {MULTI_RANK_GPU_ENV}={v} from the environment is kept"
            )),
        },
        None => Sharing {
            set_env: true,
            note: Some(format!(
                "# {what}: {MULTI_RANK_GPU_ENV}=1 set (NCCL 2.30+ shares a GPU between ranks \
                 only with it)"
            )),
        },
    })
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

    #[test]
    fn ranks_on_one_gpu_set_the_variable_from_2_30_unless_the_user_did() {
        let s = sharing(&[1, 0, 1], 4, true, false, 23203, None).unwrap();
        assert!(s.set_env);
        assert_eq!(
            s.note.unwrap(),
            "# --devices puts ranks 4 and 6 on CUDA device 1: NCCL_MULTI_RANK_GPU_ENABLE=1 set \
             (NCCL 2.30+ shares a GPU between ranks only with it)"
        );
        let s = sharing(&[0, 0], 0, true, false, 23000, Some("0")).unwrap();
        assert!(!s.set_env);
        assert!(s
            .note
            .unwrap()
            .ends_with("NCCL_MULTI_RANK_GPU_ENABLE=0 from the environment is kept"));
        // An empty value is unset for NCCL too.
        assert!(
            sharing(&[0, 0], 0, true, false, 23000, Some(" "))
                .unwrap()
                .set_env
        );
    }

    #[test]
    fn before_2_30_ranks_on_one_gpu_are_a_usage_error() {
        let e = sharing(&[0, 0], 0, true, false, 22907, None).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        let text = e.to_string();
        assert!(text.contains("ranks 0 and 1 on CUDA device 0"), "{text}");
        assert!(text.contains("NCCL 2.29.7 refuses"), "{text}");
    }

    #[test]
    fn explicit_devices_in_a_multi_process_job_allow_sharing_across_processes() {
        let s = sharing(&[0], 1, true, true, 23203, None).unwrap();
        assert!(s.set_env, "each process sets it for itself");
        assert!(s.note.unwrap().contains("multi-process job"));
        // Old libraries: nothing to set, NCCL names a shared GPU itself.
        let none = Sharing {
            set_env: false,
            note: None,
        };
        assert_eq!(sharing(&[0], 1, true, true, 22105, None).unwrap(), none);
        // nccl-tests' rules never repeat a device; distinct explicit devices need nothing.
        assert_eq!(sharing(&[2, 3], 2, false, true, 23203, None).unwrap(), none);
        assert_eq!(sharing(&[1, 0], 0, true, false, 23203, None).unwrap(), none);
    }
}
