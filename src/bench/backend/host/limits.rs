//! How many rank threads this machine allows, checked before the first one starts: a thread
//! that cannot map its stack or its signal stack aborts the whole process from inside the
//! runtime (no error reaches the caller), so `-g 20000` must be refused up front, with one
//! line naming the limit it would pass.

use crate::core::error::Error;

/// Memory mappings one thread costs: its stack and guard page, and the runtime's signal
/// stack and its guard page.
const MAPS_PER_THREAD: u64 = 4;

/// Mappings and threads kept free for the rest of the process (libraries, allocator arenas,
/// the verifier's helper threads).
const HEADROOM: u64 = 1024;

/// Memory one idle rank thread really uses: the touched top of its stack, its thread-local
/// data and the kernel's task structures (its 2 MiB stack is reserved, not resident).
const RESIDENT_PER_THREAD: u64 = 64 << 10;

/// A number from a one-line `/proc` file.
fn proc_number(path: &str) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// The mappings this process has now.
fn mappings_now() -> u64 {
    std::fs::read_to_string("/proc/self/maps").map_or(0, |m| m.lines().count() as u64)
}

/// This process's soft limit on processes plus threads of its user, when there is one.
fn nproc_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max processes"))?;
    line.split_whitespace().nth(2)?.parse().ok()
}

/// The machine's limits, read once: (max map count, threads-max, per-user process limit).
pub(super) struct Limits {
    pub max_map_count: Option<u64>,
    pub threads_max: Option<u64>,
    pub nproc: Option<u64>,
    pub maps_now: u64,
}

impl Limits {
    /// This machine's.
    pub fn current() -> Limits {
        Limits {
            max_map_count: proc_number("/proc/sys/vm/max_map_count"),
            threads_max: proc_number("/proc/sys/kernel/threads-max"),
            nproc: nproc_limit(),
            maps_now: mappings_now(),
        }
    }

    /// The most rank threads these limits allow, and which limit says so.
    pub fn max_ranks(&self) -> (u64, String) {
        let mut best = (u64::MAX, String::new());
        let mut consider = |n: u64, why: String| {
            if n < best.0 {
                best = (n, why);
            }
        };
        if let Some(m) = self.max_map_count {
            let free = m.saturating_sub(self.maps_now + HEADROOM);
            consider(
                free / MAPS_PER_THREAD,
                format!(
                    "vm.max_map_count is {m} and each rank thread needs {MAPS_PER_THREAD} mappings"
                ),
            );
        }
        if let Some(t) = self.threads_max {
            consider(
                t.saturating_sub(HEADROOM),
                format!("kernel.threads-max is {t}"),
            );
        }
        if let Some(p) = self.nproc {
            consider(
                p.saturating_sub(HEADROOM.min(p / 2)),
                format!("the process limit (ulimit -u) is {p}"),
            );
        }
        best
    }
}

/// Refuses `nranks` rank threads where the machine cannot start them (`mem_available`: the
/// memory they would need), as a usage error of one line.
pub(super) fn check_rank_threads(
    nranks: usize,
    limits: &Limits,
    mem_available: Option<u64>,
) -> Result<(), Error> {
    let n = nranks as u64;
    let (max, why) = limits.max_ranks();
    if n > max {
        return Err(Error::usage(format!(
            "the host backend runs one thread per rank and this machine allows about {max} \
             ({why}): {nranks} ranks (-t x -g) cannot start; use fewer"
        )));
    }
    if let Some(avail) = mem_available {
        if n.saturating_mul(RESIDENT_PER_THREAD) > avail {
            return Err(Error::usage(format!(
                "the host backend runs one thread per rank, {} KiB each: {nranks} ranks \
                 (-t x -g) need {} MiB, more than the {} MiB available; use fewer",
                RESIDENT_PER_THREAD >> 10,
                (n * RESIDENT_PER_THREAD) >> 20,
                avail >> 20
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(maps: u64, threads: u64, nproc: u64) -> Limits {
        Limits {
            max_map_count: Some(maps),
            threads_max: Some(threads),
            nproc: Some(nproc),
            maps_now: 100,
        }
    }

    #[test]
    fn the_tightest_limit_refuses_with_its_name() {
        let l = limits(65530, 192_726, 96_363);
        let e = check_rank_threads(20_000, &l, None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("vm.max_map_count is 65530"), "{e}");
        assert!(check_rank_threads(1000, &l, None).is_ok());
        let e = check_rank_threads(5000, &limits(1 << 30, 1 << 30, 4096), None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("ulimit -u"), "{e}");
    }

    #[test]
    fn stacks_beyond_available_memory_are_refused() {
        let l = limits(1 << 30, 1 << 30, 1 << 30);
        let e = check_rank_threads(10_000, &l, Some(512 << 20))
            .unwrap_err()
            .to_string();
        assert!(e.contains("more than the 512 MiB available"), "{e}");
        assert!(check_rank_threads(1000, &l, Some(512 << 20)).is_ok());
    }
}
