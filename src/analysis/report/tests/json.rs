//! The JSON report: schema tag, required keys, round trip.

use crate::analysis::curve::Analysis;
use crate::analysis::report::{render, Document, Format, SCHEMA};
use crate::analysis::testdata;
use serde_json::Value;

/// The fixture without the curve whose fit is undefined (NaN is written as `null`, which does
/// not read back into an `f64`).
fn finite_fixture() -> Analysis {
    let mut a = testdata::analysis();
    a.curves.retain(|c| !c.regimes.is_empty());
    a
}

#[test]
fn has_schema_and_the_documented_keys() {
    let json = render(&testdata::analysis(), Format::Json);
    let v: Value = serde_json::from_str(&json).expect("valid JSON");
    assert_eq!(v["schema"], SCHEMA);
    assert_eq!(v["rows_read"], 197);
    assert_eq!(v["rows_skipped"], 7);
    let curves = v["curves"].as_array().expect("curves");
    assert_eq!(curves.len(), 4);
    for c in curves {
        for key in [
            "collective",
            "dtype",
            "op",
            "nranks",
            "placement",
            "rows",
            "latency_floor_us",
            "plateau_busbw_gbs",
            "half_perf_bytes",
            "sat90_bytes",
            "regimes",
            "switch_points_bytes",
        ] {
            assert!(c.get(key).is_some(), "curve lacks {key}");
        }
        for r in c["regimes"].as_array().expect("regimes") {
            for key in ["from_bytes", "to_bytes", "alpha_us", "busbw_gbs"] {
                assert!(r.get(key).is_some(), "regime lacks {key}");
            }
        }
    }
    let ar = &curves[1];
    assert_eq!(ar["collective"], "all_reduce");
    assert_eq!(
        ar["switch_points_bytes"],
        serde_json::json!([131072, 8388608])
    );
    assert_eq!(ar["regimes"][2]["busbw_gbs"], 350.0);
    assert_eq!(ar["sat90_bytes"], 64u64 << 20);
}

#[test]
fn undefined_numbers_are_null_not_nan() {
    let json = render(&testdata::analysis(), Format::Json);
    assert!(!json.contains("NaN"));
    let v: Value = serde_json::from_str(&json).expect("valid JSON");
    assert_eq!(v["curves"][2]["half_perf_bytes"], Value::Null);
    assert_eq!(v["curves"][2]["regimes"], serde_json::json!([]));
}

#[test]
fn round_trips_to_the_analysis() {
    let a = finite_fixture();
    let json = render(&a, Format::Json);
    let plain: Analysis = serde_json::from_str(&json).expect("reads as Analysis");
    assert_eq!(plain, a);
    let doc: Document = serde_json::from_str(&json).expect("reads as Document");
    assert_eq!(doc.schema, SCHEMA);
    assert_eq!(doc.analysis, a);
}
