//! Builds kernels/verify.cuh for the host (through host.c) with the system C compiler. No
//! floating-point contraction, so float avg rounds each product and sum as the device's
//! explicitly rounded operations do.

fn main() {
    println!("cargo:rerun-if-changed=verify.cuh");
    println!("cargo:rerun-if-changed=host.c");
    cc::Build::new()
        .file("host.c")
        .std("c11")
        .flag_if_supported("-ffp-contract=off")
        .flag_if_supported("-fno-fast-math")
        .warnings(true)
        .extra_warnings(true)
        .warnings_into_errors(true)
        .compile("ncclbench_verify_host");
}
