//! The integration tests as one test binary, so the library and its dependencies link once
//! instead of once per test file. Each module is one test file, its tests named under its path
//! (`accept_cli::...`): `cargo test --test integration -- accept_cli::` runs one file's tests.
//! The `mpi_*` modules (`mpi_accept`, `mpi_alltoallv`, `mpi_groups`, `mpi_guard`,
//! `mpi_json_format`, `mpi_locate`, `mpi_nccl`, `mpi_plan`, `mpi_register`, `mpi_run`,
//! `mpi_view`) exist only with the `mpi` feature (`#![cfg]` inside each).

mod support;

mod accept_cli;
mod accept_locate;
mod alltoallv;
mod alltoallv_faults;
mod analysis_fit;
mod analyze_cli;
mod auto_backend;
mod cli_errors;
mod compare_cli;
mod crates_csv;
mod cycles;
mod device_kernels;
mod device_timer_support;
mod device_verify;
mod docs_in_step;
mod end_to_end;
mod fake_nccl_loads;
mod fault_injection;
mod fill_race;
mod gpu_check_script;
mod inputs_bounded;
mod inputs_non_utf8;
mod json_format;
mod launcher_refusal;
mod layering;
mod lifecycle;
mod locate_cli;
mod logs_cli;
mod memory_report;
mod mpi_accept;
mod mpi_alltoallv;
mod mpi_groups;
mod mpi_guard;
mod mpi_json_format;
mod mpi_locate;
mod mpi_nccl;
mod mpi_plan;
mod mpi_register;
mod mpi_run;
mod mpi_view;
mod nccl_fake;
mod nccl_lib_search;
mod nccl_p2p_devices;
mod nccl_real_lib;
mod nccl_setup;
mod nccl_tuning;
mod output_rules;
mod per_group;
mod production_cli;
mod profile_floors;
mod prom_output;
mod reader_stream;
mod readers_real_world;
mod redact_hostname;
mod redact_outputs;
mod redact_secrets;
mod reliability_accept_dir;
mod reliability_accept_ranks;
mod reliability_full_disk;
mod reliability_inputs;
mod reliability_report_dirs;
mod runner_faults;
mod teardown_order;
mod timed_loop;
mod timing_modes;
mod topology_env;
mod verification_matrix;
