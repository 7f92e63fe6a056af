//! The device behind each rank, as the `# Using devices` lines and the JSON record show it.

/// One local rank's device, for the `# Using devices` lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceInfo {
    /// Global rank.
    pub rank: usize,
    /// Split group (color).
    pub group: usize,
    /// Process id.
    pub pid: u32,
    /// Short host name.
    pub hostname: String,
    /// Device ordinal.
    pub device: i32,
    /// PCI domain, bus, device.
    pub pci: (u32, u32, u32),
    /// Device name.
    pub name: String,
}
