//! Redaction of free text and environment entries.

use super::*;

#[test]
fn redaction_hides_names_addresses_and_numbers_but_keeps_shape() {
    let mut r = Redactor {
        on: true,
        hosts: vec!["gpu-node-17".into()],
        pids: [(48213u64, 1usize)].into_iter().collect(),
        comm_ids: [0xabcdefu64].into_iter().collect(),
    };
    let got = r.text("gpu-node-17:48213:48299 [0] NCCL INFO Bootstrap : Using eth0:10.1.2.3<0> comm 0x55b6aa64a990 commId 0xabcdef pid 48213 RAS ::1<28028> fe80::1 busId 1b000 /home/alice/x GPU 18000 / HCA 1b000 pciPath=/sys/devices/pci0000:4a/0000:4a:02.0/x");
    for leak in [
        "gpu-node-17",
        "48213",
        "48299",
        "10.1.2.3",
        "55b6aa64a990",
        "abcdef",
        "alice",
        "::1",
        "fe80",
        "1b000",
        "0000:4a:02.0",
    ] {
        assert!(!got.contains(leak), "{leak} in {got}");
    }
    assert!(
        got.starts_with(&format!("{}:p1:<tid> [0] NCCL INFO", r.host("gpu-node-17"))),
        "{got}"
    );
    assert_eq!(r.host("gpu-node-17"), r.host("gpu-node-17"));
    assert_ne!(r.host("gpu-node-17"), r.host("gpu-node-18"));
    assert!(got.contains("Bootstrap : Using eth0:<ip><0>"), "{got}");
    r.on = false;
    assert_eq!(r.text("gpu-node-17 10.1.2.3"), "gpu-node-17 10.1.2.3");
}

#[test]
fn launcher_session_paths_lose_their_pid_and_the_transport_key_is_a_secret() {
    let r = Redactor::for_names(Vec::<String>::new(), [777u32]);
    let got = r.env_entry("OMPI_FILE_LOCATION=/tmp/ompi.n1.0/pid.19991/0/0");
    assert_eq!(got, "OMPI_FILE_LOCATION=/tmp/ompi.n1.0/pid.p0/0/0");
    let got = r.env_entry("PMIX_DSTORE_ESH_BASE_PATH=/tmp/ompi.n1.0/pid.777");
    assert_eq!(got, "PMIX_DSTORE_ESH_BASE_PATH=/tmp/ompi.n1.0/pid.p1");
    // A word that only starts like one is left alone.
    assert_eq!(r.text("pid.3abc rapid.12"), "pid.3abc rapid.12");
    let got =
        r.env_entry("OMPI_MCA_orte_precondition_transports=6c3a0b1f2e4d5c6b-7a8f9e0d1c2b3a49");
    assert_eq!(got, "OMPI_MCA_orte_precondition_transports=<redacted>");
}
