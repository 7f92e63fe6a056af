//! A criterion measurement of CPU time (this process's threads plus the children it waited
//! for), so that a figure measured on a loaded machine is the work done, not the share of the
//! CPU the scheduler gave: wall time there mostly measures the other jobs. `grep -c` runs as a
//! child, so its CPU time is counted the same way.

use criterion::measurement::{Measurement, ValueFormatter};
use criterion::Throughput;

/// CPU time in nanoseconds.
pub struct CpuTime;

fn now_ns() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out-pointer for the call.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    // SAFETY: all-zero is a valid `rusage`, and it is a valid out-pointer.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 * 1e9 + t.tv_usec as f64 * 1e3;
    ts.tv_sec as f64 * 1e9 + ts.tv_nsec as f64 + tv(ru.ru_utime) + tv(ru.ru_stime)
}

impl Measurement for CpuTime {
    type Intermediate = f64;
    type Value = f64;
    fn start(&self) -> f64 {
        now_ns()
    }
    fn end(&self, start: f64) -> f64 {
        now_ns() - start
    }
    fn add(&self, a: &f64, b: &f64) -> f64 {
        a + b
    }
    fn zero(&self) -> f64 {
        0.0
    }
    fn to_f64(&self, v: &f64) -> f64 {
        *v
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        &CpuFormatter
    }
}

/// Formats nanoseconds of CPU and bytes per CPU-second.
struct CpuFormatter;

impl ValueFormatter for CpuFormatter {
    fn scale_values(&self, ns: f64, values: &mut [f64]) -> &'static str {
        let (factor, unit) = if ns < 1e6 {
            (1e-3, "µs cpu")
        } else if ns < 1e9 {
            (1e-6, "ms cpu")
        } else {
            (1e-9, "s cpu")
        };
        values.iter_mut().for_each(|v| *v *= factor);
        unit
    }

    fn scale_throughputs(&self, typical: f64, t: &Throughput, values: &mut [f64]) -> &'static str {
        let bytes = match *t {
            Throughput::Bytes(b) | Throughput::BytesDecimal(b) => b as f64,
            Throughput::Elements(e) => e as f64,
        };
        let (div, unit) = if bytes * 1e9 / typical >= f64::from(1u32 << 30) {
            (f64::from(1u32 << 30), "GiB/s cpu")
        } else {
            (f64::from(1u32 << 20), "MiB/s cpu")
        };
        values.iter_mut().for_each(|v| *v = bytes * 1e9 / *v / div);
        unit
    }

    fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
        "ns"
    }
}
