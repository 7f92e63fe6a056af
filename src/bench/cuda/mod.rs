//! The CUDA driver API, loaded from libcuda at run time, for the NCCL backend.
//!
//! Nothing is linked at build time and no toolkit is needed: [`Driver::open`] finds
//! `libcuda.so.1` (then `libcuda.so`) with the dynamic loader and resolves the entry points
//! declared in [`api`]. A machine without a driver gets [`CudaError::NoDriver`], never a panic.
//!
//! The wrappers are RAII: a [`Context`] retains a device's primary context, and the
//! [`Stream`]s, [`DeviceBuffer`]s, [`Event`]s and graphs made in it release what they hold when
//! dropped, each making its context current first. Every driver call is checked; a failure is a
//! [`CudaError`] naming the call and the driver's name and text for the code.
//! [`memops`] says which `cuStreamWaitValue32` the driver and devices allow; [`Module`] loads
//! PTX and launches its kernels.

pub mod api;
mod context;
mod driver;
mod error;
mod event;
pub mod memops;
mod memory;
mod module;
#[cfg(test)]
mod tests;

pub use crate::result::environment::DeviceSummary;
pub use context::{Context, Stream};
pub use driver::{Device, Driver, SONAMES};
pub use error::{init_failure, CudaError};
pub use event::{Event, Graph, GraphExec};
pub use memops::WaitValue32;
pub use memory::DeviceBuffer;
pub use module::{module_api, Function, Module};

/// Opens and initialises the driver and describes every visible device. No context is
/// created, so this is cheap and leaves the devices untouched.
pub fn probe() -> Result<Vec<DeviceSummary>, CudaError> {
    let driver = Driver::open()?;
    let driver_version = driver.version()?;
    (0..driver.device_count()?)
        .map(|ordinal| {
            let device = driver.device(ordinal)?;
            let (pci_domain, pci_bus, pci_device) = device.pci()?;
            Ok(DeviceSummary {
                ordinal,
                name: device.name()?,
                pci_domain,
                pci_bus,
                pci_device,
                total_memory: device.total_memory()?,
                compute_capability: device.compute_capability()?,
                driver_version,
            })
        })
        .collect()
}

/// A driver version as `major.minor` (12040 is `12.4`).
pub fn format_version(version: i32) -> String {
    format!("{}.{}", version / 1000, (version % 1000) / 10)
}
