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

/// Every secret word, in a variable's name wherever it sits, hides the value in every form the
/// value reaches an output: a record's `NAME=value`, a log's `NAME set by environment to
/// value`, free text quoting either.
#[test]
fn every_secret_looking_name_hides_its_value_in_every_form() {
    let r = Redactor::for_names(["node7".to_string()], [4242]);
    for word in SECRET_WORDS {
        for name in [
            format!("NCCL_{word}"),
            format!("UCX_MY_{word}_FILE"),
            word.to_lowercase(),
        ] {
            let value = "s3cr3t-VALUE";
            for text in [
                format!("{name}={value}"),
                format!("node7:4242:4243 [0] NCCL INFO {name} set by environment to {value}"),
                format!("x {name} set to {value}."),
            ] {
                let got = r.text(&text);
                assert!(!got.contains("s3cr3t"), "{text} -> {got}");
                assert!(got.contains(&name), "{text} -> {got}");
            }
            assert_eq!(
                r.env_entry(&format!("{name}={value}")),
                format!("{name}=<redacted>")
            );
            assert_eq!(r.env_value(&name, value), "<redacted>");
            assert_eq!(Redactor::none().env_value(&name, value), value);
        }
    }
    // Names without a secret word keep their (scrubbed) values.
    assert_eq!(r.text("NCCL_IB_HCA=mlx5_0"), "NCCL_IB_HCA=mlx5_0");
}

/// Known host names and PIDs are masked inside file names (joined by `-`, `_` or before an
/// extension), and a PMIx server URI loses its launcher namespace.
#[test]
fn host_names_and_pids_inside_file_names_and_launcher_ids_are_masked() {
    let r = Redactor::for_names(["zebra-77".to_string()], [4242, 31337]);
    for (text, leak) in [
        ("# Writing CSV output to out-zebra-77.csv", "zebra"),
        ("/tmp/r_zebra-77_x.json", "zebra"),
        ("nccl.zebra-77.31337.log", "31337"),
        ("nccl-zebra-77-31337.log", "31337"),
        ("nccl-4242.log", "4242"),
    ] {
        let got = r.text(text);
        assert!(!got.contains(leak), "{text} -> {got}");
    }
    // Unknown numbers and words that merely contain a host name's letters stay.
    assert_eq!(r.text("mlx5_0 size-1024.csv"), "mlx5_0 size-1024.csv");
    assert_eq!(
        r.env_entry("PMIX_SERVER_URI2=prterun-zebra-77-999@0.0;tcp4://10.0.0.1:555"),
        "PMIX_SERVER_URI2=<nspace>;tcp4://<ip>:555"
    );
    assert_eq!(
        r.env_entry("PMIX_NAMESPACE=prterun-x-999@1"),
        "PMIX_NAMESPACE=<nspace>"
    );
}
