//! `NCCL_CONFIG_INITIALIZER` in Rust: bindgen cannot translate brace-initializer macros.

use crate::bindings::{ncclConfig_t, HEADERS_VERSION_CODE, NCCL_API_MAGIC, NCCL_CONFIG_UNDEF_INT};

/// A communicator configuration with every attribute unset, as `NCCL_CONFIG_INITIALIZER` makes
/// it; set the attributes to change (e.g. `CTAPolicy`) and pass it to `ncclCommInitRankConfig`.
///
/// It declares the size and version of the bindings' header. An older library reads only the
/// attributes it knows (NCCL checks `size` and `version`), so one binary works with both.
/// Every field is listed: a regenerated header that adds one fails to compile here until the
/// new attribute is given its unset value.
pub fn comm_config() -> ncclConfig_t {
    let undef = NCCL_CONFIG_UNDEF_INT;
    ncclConfig_t {
        size: std::mem::size_of::<ncclConfig_t>(),
        magic: NCCL_API_MAGIC,
        version: HEADERS_VERSION_CODE.unsigned_abs(),
        blocking: undef,
        cgaClusterSize: undef,
        minCTAs: undef,
        maxCTAs: undef,
        netName: std::ptr::null(),
        splitShare: undef,
        trafficClass: undef,
        commName: std::ptr::null(),
        collnetEnable: undef,
        CTAPolicy: undef,
        shrinkShare: undef,
        nvlsCTAs: undef,
        nChannelsPerNetPeer: undef,
        nvlinkCentricSched: undef,
        graphUsageMode: undef,
        numRmaCtx: undef,
        maxP2pPeers: undef,
        graphStreamOrdering: undef,
        launchOrderImplicit: undef,
        numRmaSig: undef,
        rmaEagerInit: undef,
        hostCftMode: undef,
        nvlsHostMode: undef,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_is_marked_like_the_c_initializer() {
        let c = comm_config();
        assert_eq!(c.size, std::mem::size_of::<ncclConfig_t>());
        assert_eq!(c.magic, 0xcafe_beef);
        assert_eq!(i64::from(c.version), i64::from(HEADERS_VERSION_CODE));
        assert_eq!(c.blocking, i32::MIN);
        assert_eq!(c.CTAPolicy, i32::MIN);
        assert_eq!(c.nvlsHostMode, i32::MIN);
        assert!(c.netName.is_null() && c.commName.is_null());
    }
}
