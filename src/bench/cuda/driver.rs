//! Opening libcuda ([`Driver`]) and asking it about devices ([`Device`]).
//!
//! A library, once opened successfully, is never unloaded: the driver keeps threads and state
//! that outlive any one call, and it keeps every resolved function pointer valid for the life
//! of the process, so a [`Driver`] is a cheap `Copy` handle.

use std::ffi::{c_char, c_int, CStr};
use std::mem::ManuallyDrop;

use libloading::Library;

use super::api::{self, Api, CUdevice};
use super::error::check;
use super::CudaError;

/// What [`Driver::open`] asks the dynamic loader for, in order.
pub const SONAMES: [&str; 2] = ["libcuda.so.1", "libcuda.so"];

/// A loaded CUDA driver (libcuda) with its entry points resolved.
#[derive(Clone, Copy, Debug)]
pub struct Driver {
    api: Api,
}

impl Driver {
    /// Opens the first of [`SONAMES`] the loader finds and initialises it (`cuInit(0)`).
    /// A machine without a driver gives [`CudaError::NoDriver`]; never panics.
    pub fn open() -> Result<Self, CudaError> {
        let driver = Self::load()?;
        driver.init()?;
        Ok(driver)
    }

    /// Opens libcuda without initialising it: enough for [`Driver::version`], which works
    /// even where `cuInit` fails (no device, or the toolkit's stub library).
    pub fn load() -> Result<Self, CudaError> {
        open_first(&SONAMES)
    }

    /// Opens exactly `name` (a path, or a soname for the loader to search) without
    /// initialising it: for a test double of libcuda, or a driver outside the search path.
    pub fn load_from(name: &str) -> Result<Self, CudaError> {
        open_path(name)
    }

    /// `cuInit(0)`; repeating it is harmless.
    pub fn init(&self) -> Result<(), CudaError> {
        // SAFETY: cuInit takes a flags word, which must be 0.
        self.check("cuInit", unsafe { (self.api.init)(0) })
    }

    /// The raw entry points, for callers (the NCCL backend) that need one not wrapped here.
    pub fn api(&self) -> &Api {
        &self.api
    }

    /// Checks the result of `call`, naming it and the driver's text for the code on failure.
    pub(crate) fn check(&self, call: &'static str, code: api::CUresult) -> Result<(), CudaError> {
        check(&self.api, call, code)
    }

    /// The CUDA version the driver supports, as `cuDriverGetVersion` reports it (12040 is 12.4).
    pub fn version(&self) -> Result<i32, CudaError> {
        let mut version: c_int = 0;
        // SAFETY: a valid out-pointer.
        let code = unsafe { (self.api.driver_get_version)(&mut version) };
        self.check("cuDriverGetVersion", code)?;
        Ok(version)
    }

    /// How many CUDA devices this process can see (after `CUDA_VISIBLE_DEVICES`).
    pub fn device_count(&self) -> Result<usize, CudaError> {
        let mut count: c_int = 0;
        // SAFETY: a valid out-pointer.
        self.check("cuDeviceGetCount", unsafe {
            (self.api.device_get_count)(&mut count)
        })?;
        Ok(usize::try_from(count).unwrap_or(0))
    }

    /// The device of ordinal `ordinal`; fails (`CUDA_ERROR_INVALID_DEVICE`) past the count.
    pub fn device(&self, ordinal: usize) -> Result<Device, CudaError> {
        let index = c_int::try_from(ordinal).map_err(|_| CudaError::InvalidArgument {
            call: "cuDeviceGet",
            detail: format!("device ordinal {ordinal} is out of range"),
        })?;
        let mut raw: CUdevice = 0;
        // SAFETY: a valid out-pointer; the driver validates the ordinal.
        self.check("cuDeviceGet", unsafe {
            (self.api.device_get)(&mut raw, index)
        })?;
        Ok(Device {
            driver: *self,
            raw,
            ordinal,
        })
    }
}

/// Opens `path` (a file or a soname) as a driver without initialising it. Tests use it to
/// load libraries that are not libcuda.
pub(crate) fn open_path(path: &str) -> Result<Driver, CudaError> {
    open_first(&[path])
}

/// Tries each name in order; the first that loads must export every required entry point.
fn open_first(names: &[&str]) -> Result<Driver, CudaError> {
    let mut tried = Vec::new();
    for name in names {
        // SAFETY: loading runs the library's initialisers; libcuda's are those of the system
        // driver, which every CUDA program runs.
        match unsafe { Library::new(name) } {
            Ok(lib) => {
                // On failure `lib` is dropped: no pointer into it has escaped.
                let api = Api::resolve(&lib, name)?;
                // Never unloaded (see the module documentation).
                let _ = ManuallyDrop::new(lib);
                return Ok(Driver { api });
            }
            Err(err) => tried.push(format!("{name}: {}", one_line(&err.to_string()))),
        }
    }
    Err(CudaError::NoDriver { tried })
}

/// Collapses whitespace and newlines so an error stays one line.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// One CUDA device: its identity and properties.
#[derive(Clone, Copy, Debug)]
pub struct Device {
    driver: Driver,
    raw: CUdevice,
    ordinal: usize,
}

impl Device {
    /// The driver that opened it.
    pub fn driver(&self) -> &Driver {
        &self.driver
    }

    /// The `CUdevice` handle.
    pub fn raw(&self) -> CUdevice {
        self.raw
    }

    /// The ordinal it was opened with.
    pub fn ordinal(&self) -> usize {
        self.ordinal
    }

    /// The marketing name, e.g. `NVIDIA H100 80GB HBM3`.
    pub fn name(&self) -> Result<String, CudaError> {
        let mut buf = [0 as c_char; 256];
        let len = buf.len() as c_int;
        // SAFETY: `buf` holds `len` chars; the driver writes a NUL-terminated name into it.
        let code = unsafe { (self.driver.api.device_get_name)(buf.as_mut_ptr(), len, self.raw) };
        self.driver.check("cuDeviceGetName", code)?;
        buf[buf.len() - 1] = 0;
        // SAFETY: `buf` is NUL-terminated (forced above).
        Ok(unsafe { CStr::from_ptr(buf.as_ptr()) }
            .to_string_lossy()
            .into_owned())
    }

    /// One `cuDeviceGetAttribute` value.
    pub fn attribute(&self, attribute: c_int) -> Result<i32, CudaError> {
        let mut value: c_int = 0;
        // SAFETY: a valid out-pointer; the driver validates the attribute number.
        let code =
            unsafe { (self.driver.api.device_get_attribute)(&mut value, attribute, self.raw) };
        self.driver.check("cuDeviceGetAttribute", code)?;
        Ok(value)
    }

    /// The PCI location as `(domain, bus, device)`.
    pub fn pci(&self) -> Result<(i32, i32, i32), CudaError> {
        Ok((
            self.attribute(api::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID)?,
            self.attribute(api::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID)?,
            self.attribute(api::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID)?,
        ))
    }

    /// The compute capability as `(major, minor)`, e.g. `(9, 0)` for Hopper.
    pub fn compute_capability(&self) -> Result<(i32, i32), CudaError> {
        Ok((
            self.attribute(api::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
            self.attribute(api::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
        ))
    }

    /// Total device memory in bytes.
    pub fn total_memory(&self) -> Result<usize, CudaError> {
        let mut bytes = 0usize;
        // SAFETY: a valid out-pointer.
        let code = unsafe { (self.driver.api.device_total_mem)(&mut bytes, self.raw) };
        self.driver.check("cuDeviceTotalMem_v2", code)?;
        Ok(bytes)
    }
}
