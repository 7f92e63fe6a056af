//! Stream memory operations (`cuStreamWaitValue32`), which `--timer device` gates every stream
//! on: which entry point this driver offers and whether the devices allow it.
//!
//! Drivers from CUDA 11.7 export `cuStreamWaitValue32_v2`, which every device supports. Older
//! ones have only the v1 `cuStreamWaitValue32`, which works only where the device reports
//! CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS (the nvidia module loaded with
//! NVreg_EnableStreamMemOPs=1); elsewhere it fails with CUDA_ERROR_NOT_SUPPORTED.

use super::api::{
    StreamWaitValue32Fn, CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1, STREAM_MEM_OPS_V2_DRIVER,
};
use super::{format_version, CudaError, Device, Driver, Stream};

/// A usable `cuStreamWaitValue32` entry point.
#[derive(Clone, Copy, Debug)]
pub struct WaitValue32 {
    wait: StreamWaitValue32Fn,
    name: &'static str,
}

impl WaitValue32 {
    /// The C name of the entry point in use.
    pub fn name(&self) -> &'static str {
        self.name
    }
}

/// The wait entry point `driver` offers on all of `devices`: `Ok(Err(why))`, one sentence,
/// where it offers none; `Err` when a query itself fails.
pub fn wait_value32(
    driver: &Driver,
    devices: &[Device],
) -> Result<Result<WaitValue32, String>, CudaError> {
    let version = driver.version()?;
    if let (true, Some(wait)) = (
        version >= STREAM_MEM_OPS_V2_DRIVER,
        driver.api().stream_wait_value32,
    ) {
        let name = "cuStreamWaitValue32_v2";
        return Ok(Ok(WaitValue32 { wait, name }));
    }
    let cuda = format_version(version);
    let Some(wait) = driver.api().stream_wait_value32_v1 else {
        return Ok(Err(format!(
            "the CUDA {cuda} driver exports no cuStreamWaitValue32"
        )));
    };
    for device in devices {
        if device.attribute(CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1)? == 0 {
            return Ok(Err(format!(
                "device {} does not allow stream memory operations \
                 (CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS is 0 with the CUDA {cuda} driver); \
                 load the nvidia kernel module with NVreg_EnableStreamMemOPs=1 or use a driver \
                 for CUDA {} or newer",
                device.ordinal(),
                format_version(STREAM_MEM_OPS_V2_DRIVER)
            )));
        }
    }
    let name = "cuStreamWaitValue32";
    Ok(Ok(WaitValue32 { wait, name }))
}

impl Stream {
    /// Queues a wait until the 32-bit word at device address `address` satisfies `flags`
    /// (`CU_STREAM_WAIT_VALUE_GEQ`, `_EQ`, ...) against `value`, through `wait` (from
    /// [`wait_value32`]).
    pub fn wait_value32(
        &self,
        wait: WaitValue32,
        address: u64,
        value: u32,
        flags: u32,
    ) -> Result<(), CudaError> {
        self.context().set_current()?;
        // SAFETY: a live stream and an entry point of this driver with the declared signature;
        // the driver validates the address.
        let code = unsafe { (wait.wait)(self.raw(), address, value, flags) };
        self.context().driver().check(wait.name, code)
    }
}
