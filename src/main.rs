//! The `ncclbench` binary (also runs as `<collective>_perf`): all logic lives in the library.

fn main() -> std::process::ExitCode {
    ncclbench::app::main()
}
