//! The fake-nccl test double stands in for libnccl and libcuda: nccl-sys's loader opens it
//! and finds every entry point it resolves, and ncclbench's driver wrapper resolves its whole
//! table from it (so the fake's symbol set is complete) and works through it.

use crate::support::fake_nccl::fake_lib_dir;
use ncclbench::bench::cuda::{Context, DeviceBuffer, Driver, Event, Stream};

fn driver() -> Driver {
    let path = fake_lib_dir().join("libcuda.so.1");
    let driver = Driver::load_from(path.to_str().unwrap()).expect("every driver entry point");
    driver.init().unwrap();
    driver
}

#[test]
fn nccl_sys_opens_the_fake_with_every_entry_point() {
    let nccl = nccl_sys::Nccl::open(Some(&fake_lib_dir().join("libnccl.so.2"))).unwrap();
    assert_eq!(nccl.version(), 23203);
    assert_eq!(nccl.version_string(), "2.32.3");
    assert!(
        nccl.optional().missing().is_empty(),
        "{:?}",
        nccl.optional().missing()
    );
    assert!(
        nccl.path().ends_with("libfake_nccl.so"),
        "{}",
        nccl.path().display()
    );
    let a = nccl.get_unique_id().unwrap();
    let b = nccl.get_unique_id().unwrap();
    assert_eq!(&a.as_bytes()[..8], b"FAKENCCL");
    assert_ne!(a, b);
    assert!(nccl.supports_premulsum() && nccl.supports_dtype(11));
}

#[test]
fn the_driver_wrapper_resolves_and_uses_the_fake() {
    let driver = driver();
    assert!(matches!(
        driver.api().graph_instantiate,
        ncclbench::bench::cuda::api::GraphInstantiate::WithFlags(_)
    ));
    assert!(driver.api().stream_wait_value32.is_some());
    assert_eq!(driver.version().unwrap(), 12040);
    assert_eq!(driver.device_count().unwrap(), 4);
    let device = driver.device(1).unwrap();
    assert_eq!(device.name().unwrap(), "Fake GPU 1");
    assert_eq!(device.pci().unwrap(), (0, 0x19, 0));
    assert_eq!(device.compute_capability().unwrap(), (9, 0));

    let context = Context::primary(&device).unwrap();
    let buffer = DeviceBuffer::alloc(&context, 1024).unwrap();
    buffer.copy_from_host(8, &[1, 2, 3, 4]).unwrap();
    let mut back = [0u8; 4];
    buffer.copy_to_host(8, &mut back).unwrap();
    assert_eq!(back, [1, 2, 3, 4]);
    assert!(
        buffer.copy_from_host(1022, &[0; 4]).is_err(),
        "out of bounds"
    );

    let stream = Stream::new(&context, true).unwrap();
    let (start, end) = (
        Event::new(&context, true).unwrap(),
        Event::new(&context, true).unwrap(),
    );
    start.record(&stream).unwrap();
    end.record(&stream).unwrap();
    stream.synchronize().unwrap();
    assert!(Event::elapsed_ms(&start, &end).unwrap() >= 0.0);
    stream.begin_capture().unwrap();
    end.record(&stream).unwrap();
    let exec = stream.end_capture().unwrap().instantiate().unwrap();
    exec.launch(&stream).unwrap();
    stream.synchronize().unwrap();
    assert!(end.is_complete().unwrap());
}
