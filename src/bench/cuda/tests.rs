//! Tests that run without a GPU or a driver: loading failures, missing symbols and the text
//! of every error kind. The wrappers themselves need a GPU (scripts/gpu-check.sh).

use super::driver::open_path;
use super::*;

/// A missing library is a `NoDriver` error whose one line names every file tried.
#[test]
fn missing_library_is_no_driver_with_what_was_tried() {
    let err = open_path("/nonexistent/libcuda.so.1").unwrap_err();
    let CudaError::NoDriver { tried } = &err else {
        panic!("expected NoDriver, got {err:?}")
    };
    assert_eq!(tried.len(), 1);
    let text = err.to_string();
    assert!(text.starts_with("no CUDA driver found"), "{text}");
    assert!(text.contains("/nonexistent/libcuda.so.1"), "{text}");
    assert!(!text.contains('\n'), "{text}");
}

/// On a machine without libcuda (CI), `Driver::open` and `probe` report `NoDriver` naming
/// both sonames rather than panicking; with a driver present, probing must succeed.
#[test]
fn open_and_probe_without_a_driver_fail_cleanly() {
    match Driver::open() {
        Err(err @ CudaError::NoDriver { .. }) => {
            let text = err.to_string();
            assert!(text.contains("no CUDA driver found"), "{text}");
            assert!(
                text.contains("libcuda.so.1") && text.contains("libcuda.so:"),
                "{text}"
            );
            assert!(matches!(probe(), Err(CudaError::NoDriver { .. })));
        }
        // A driver without devices (or a stub) fails in cuInit; that is a call error.
        Err(err) => assert!(
            matches!(err, CudaError::Call { call: "cuInit", .. }),
            "{err}"
        ),
        Ok(_) => {
            probe().expect("probe with a driver present");
        }
    }
}

/// A real library that is not libcuda (libc) opens but fails on the first entry point
/// resolved, `cuInit`, and the message names it and the library.
#[test]
fn library_without_the_entry_points_names_the_missing_symbol() {
    let err = open_path("libc.so.6").unwrap_err();
    assert_eq!(
        err,
        CudaError::MissingSymbol {
            library: "libc.so.6".into(),
            symbol: "cuInit"
        }
    );
    let text = err.to_string();
    assert!(
        text.contains("cuInit") && text.contains("libc.so.6"),
        "{text}"
    );
}

/// A failed call reads `<call> failed: <NAME> (<text>)` on one line, degrading gracefully
/// when the driver does not know the code.
#[test]
fn call_errors_format_as_one_line() {
    let call = |name: Option<&str>, description: Option<&str>| CudaError::Call {
        call: "cuMemAlloc_v2",
        code: 2,
        name: name.map(String::from),
        description: description.map(String::from),
    };
    let full = call(Some("CUDA_ERROR_OUT_OF_MEMORY"), Some("out of memory"));
    assert_eq!(
        full.to_string(),
        "cuMemAlloc_v2 failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)"
    );
    assert_eq!(full.code(), Some(2));
    assert_eq!(
        call(Some("CUDA_ERROR_OUT_OF_MEMORY"), None).to_string(),
        "cuMemAlloc_v2 failed: CUDA_ERROR_OUT_OF_MEMORY (code 2)"
    );
    assert_eq!(
        call(None, Some("out of memory")).to_string(),
        "cuMemAlloc_v2 failed: CUresult 2 (out of memory)"
    );
    assert_eq!(
        call(None, None).to_string(),
        "cuMemAlloc_v2 failed: CUresult 2"
    );
}

/// The remaining kinds name what failed; a refused argument says the driver was not called.
#[test]
fn other_errors_name_what_failed() {
    let missing = CudaError::MissingSymbol {
        library: "libcuda.so.1".into(),
        symbol: "cuMemAlloc_v2",
    };
    assert_eq!(
        missing.to_string(),
        "CUDA driver libcuda.so.1 lacks the entry point cuMemAlloc_v2 (driver too old, or not libcuda)"
    );
    assert_eq!(missing.code(), None);
    let refused = CudaError::InvalidArgument {
        call: "cuMemcpyHtoD_v2",
        detail: "8 bytes at offset 4 do not fit in a 10-byte device buffer".into(),
    };
    assert_eq!(
        refused.to_string(),
        "cuMemcpyHtoD_v2 not called: 8 bytes at offset 4 do not fit in a 10-byte device buffer"
    );
}

/// Summaries print PCI ids as NCCL does and driver versions as major.minor.
#[test]
fn summaries_format_pci_ids_and_versions() {
    let summary = DeviceSummary {
        ordinal: 0,
        name: "NVIDIA H200".into(),
        pci_domain: 0,
        pci_bus: 0x3b,
        pci_device: 0,
        total_memory: 1 << 30,
        compute_capability: (9, 0),
        driver_version: 12040,
    };
    assert_eq!(summary.pci_bus_id(), "0000:3b:00.0");
    assert_eq!(format_version(12040), "12.4");
    assert_eq!(format_version(11080), "11.8");
}

/// Host<->device copies are bounds-checked before the driver is called, overflow included.
#[test]
fn copies_outside_a_buffer_are_refused() {
    use super::memory::check_range;
    assert!(check_range("cuMemcpyHtoD_v2", 0, 10, 10).is_ok());
    assert!(check_range("cuMemcpyHtoD_v2", 10, 0, 10).is_ok());
    let err = check_range("cuMemcpyDtoH_v2", 4, 8, 10).unwrap_err();
    assert_eq!(
        err.to_string(),
        "cuMemcpyDtoH_v2 not called: 8 bytes at offset 4 do not fit in a 10-byte device buffer"
    );
    assert!(check_range("cuMemcpyHtoD_v2", usize::MAX, 2, 10).is_err());
}

/// Ranks run on threads: the handles they share or move must be `Send`/`Sync`.
#[test]
fn handles_can_cross_threads() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<Driver>();
    send_sync::<Device>();
    send_sync::<Context>();
    send_sync::<Stream>();
    send_sync::<DeviceBuffer>();
    send_sync::<Event>();
    send::<Graph>();
    send::<GraphExec>();
    send_sync::<CudaError>();
}
