//! A minimal JSON tree that keeps object keys in insertion order and prints numbers the way
//! nccl-tests does (`%lf`: six decimals; NaN as the string `"nan"`). Strings are escaped by
//! serde_json, so the output is always valid JSON.

/// A JSON value whose objects keep their keys in the order they were added.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum J {
    /// `null`.
    Null,
    /// A real JSON boolean (our own keys only; nccl-tests' booleans are strings).
    Bool(bool),
    /// A string.
    Str(String),
    /// An integer.
    Int(i64),
    /// A double, printed with six decimals.
    Num(f64),
    /// A list.
    Arr(Vec<J>),
    /// An object, keys in order.
    Obj(Vec<(&'static str, J)>),
    /// Text already written by [`J::write`], inserted as is.
    Raw(String),
}

impl J {
    /// A string value.
    pub fn str(s: impl Into<String>) -> J {
        J::Str(s.into())
    }

    /// nccl-tests' boolean: the string `"true"` or `"false"`.
    pub fn bool_str(b: bool) -> J {
        J::str(if b { "true" } else { "false" })
    }

    /// An unsigned integer (saturating at `i64::MAX`, far beyond any size we measure).
    pub fn uint(v: u64) -> J {
        J::Int(i64::try_from(v).unwrap_or(i64::MAX))
    }

    /// The compact text of this value.
    pub fn text(&self) -> String {
        let mut s = String::new();
        self.write(&mut s);
        s
    }

    /// Appends the compact text of this value to `out`.
    pub fn write(&self, out: &mut String) {
        match self {
            J::Null => out.push_str("null"),
            J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            J::Str(s) => out.push_str(&escape(s)),
            J::Int(i) => out.push_str(&i.to_string()),
            J::Num(v) => out.push_str(&number(*v)),
            J::Raw(text) => out.push_str(text),
            J::Arr(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write(out);
                }
                out.push(']');
            }
            J::Obj(fields) => {
                out.push('{');
                for (i, (key, value)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&escape(key));
                    out.push(':');
                    value.write(out);
                }
                out.push('}');
            }
        }
    }
}

/// A quoted, escaped JSON string.
fn escape(s: &str) -> String {
    // Serialising a &str cannot fail; the fallback is never reached.
    serde_json::to_string(s).unwrap_or_else(|_| String::from("\"\""))
}

/// `%lf` for finite values; non-finite values become strings (`"nan"` as nccl-tests writes,
/// `"inf"`/`"-inf"` where nccl-tests would write invalid JSON).
fn number(v: f64) -> String {
    if v.is_nan() {
        "\"nan\"".to_string()
    } else if v.is_infinite() {
        if v > 0.0 { "\"inf\"" } else { "\"-inf\"" }.to_string()
    } else {
        format!("{v:.6}")
    }
}

#[cfg(test)]
mod tests {
    use super::J;

    fn text(j: &J) -> String {
        j.text()
    }

    #[test]
    fn objects_keep_insertion_order_and_numbers_have_six_decimals() {
        let j = J::Obj(vec![
            ("z", J::Num(12.345)),
            ("a", J::Arr(vec![J::Int(-1), J::Null, J::Bool(true)])),
            ("m", J::bool_str(false)),
        ]);
        assert_eq!(
            text(&j),
            r#"{"z":12.345000,"a":[-1,null,true],"m":"false"}"#
        );
    }

    #[test]
    fn non_finite_numbers_become_strings_so_the_document_stays_valid() {
        let j = J::Arr(vec![
            J::Num(f64::NAN),
            J::Num(f64::INFINITY),
            J::Num(f64::NEG_INFINITY),
        ]);
        assert_eq!(text(&j), r#"["nan","inf","-inf"]"#);
    }

    #[test]
    fn strings_are_escaped_as_valid_json() {
        let s = text(&J::str("a\"b\\c\n\u{1}é/"));
        assert_eq!(
            serde_json::from_str::<String>(&s).unwrap(),
            "a\"b\\c\n\u{1}é/"
        );
    }
}
