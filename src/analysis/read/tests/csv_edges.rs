//! CSV as RFC 4180 and real files have it: quoted fields holding commas, quotes and line
//! breaks, CRLF line ends, a UTF-8 BOM, columns in another order and columns we do not know
//! (ignored), each read to the same rows as the plain file.

use crate::analysis::read::read_str;

const HEAD: &str =
    "cycle,collective,dtype,op,root,nranks,placement,bytes,count,time_us,algbw_gbs,busbw_gbs,wrong";
const ROW: &str = "0,all_reduce,float,sum,-1,2,in_place,8,2,1.5,0.1,0.2,0";

/// Each row as `line: collective dtype placement bytes time`.
fn rows(text: &str) -> Vec<String> {
    let set = read_str("r.csv", text).unwrap_or_else(|e| panic!("{e}"));
    assert!(set.skipped.is_empty(), "{:?}", set.skipped);
    set.rows
        .iter()
        .map(|r| {
            format!(
                "{}: {:?} {} {} {} {} {}",
                r.source.line,
                r.collective,
                r.dtype,
                r.placement.name(),
                r.bytes,
                r.time_us,
                r.busbw_gbs
            )
        })
        .collect()
}

fn plain() -> Vec<String> {
    rows(&format!("{HEAD}\n{ROW}\n"))
}

#[test]
fn crlf_and_a_bom_read_as_the_plain_file() {
    assert_eq!(rows(&format!("\u{feff}{HEAD}\r\n{ROW}\r\n")), plain());
}

#[test]
fn quoted_fields_with_commas_quotes_and_line_breaks_stay_one_field() {
    // An unknown trailing column holding every character RFC 4180 quotes.
    let text =
        format!("{HEAD},note\n{ROW},\"a, \"\"quoted\"\"\nsecond line\r\nthird\"\n{ROW},plain\n");
    let got = rows(&text);
    // The second record starts on line 5: the first one spans lines 2 to 4.
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(got[0], plain()[0]);
    assert!(got[1].starts_with("5: "), "{got:?}");
    // Quoted numbers are numbers.
    let quoted = ROW.replace(",8,2,1.5,", ",\"8\",2,\"1.5\",");
    assert_eq!(rows(&format!("{HEAD}\n{quoted}\n")), plain());
}

#[test]
fn columns_are_found_by_name_in_any_order_and_unknown_ones_are_ignored() {
    let names: Vec<&str> = HEAD.split(',').collect();
    let values: Vec<&str> = ROW.split(',').collect();
    let order = [12, 3, 0, 11, 7, 1, 9, 2, 10, 4, 6, 8, 5];
    let pick = |v: &[&str]| order.map(|i| v[i]).join(",");
    let shuffled = format!(
        "extra,{},later\n\"x,y\",{},\"\"\n",
        pick(&names),
        pick(&values)
    );
    assert_eq!(rows(&shuffled), plain());
}

#[test]
fn a_record_with_a_field_count_unlike_the_header_is_skipped_with_its_line() {
    let text = format!("{HEAD}\n{ROW},surplus\n{ROW}\n");
    let set = read_str("r.csv", &text).expect("recognised");
    assert_eq!(set.rows.len(), 1);
    assert_eq!(set.skipped.len(), 1);
    let s = &set.skipped[0];
    assert_eq!(
        (s.source.file.as_str(), s.source.line, s.reason.as_str()),
        ("r.csv", 2, "14 fields, the header has 13")
    );
}
