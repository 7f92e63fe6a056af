//! nccl-tests' JSON document (`-J`, file version 3) as its reference documents it, written down
//! here as the tests' own copy: every key in file order with its type and nesting, and the
//! keys ncclbench adds after nccl-tests' own (docs/reference.md). [`Doc`] reads a document with
//! its key order and the lexical kind of every number kept, which `serde_json::Value` loses.

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// A JSON value with object keys in file order and integers told apart from decimals.
#[derive(Debug, Clone, PartialEq)]
pub enum Doc {
    Obj(Vec<(String, Doc)>),
    Arr(Vec<Doc>),
    /// A number written without a fraction or exponent.
    Int(i128),
    /// A number written with a fraction.
    Num(f64),
    Str(String),
    Bool(bool),
    Null,
}

impl Doc {
    /// Parses `text` (panics with the parser's message when it is not one JSON document).
    pub fn parse(text: &str) -> Doc {
        serde_json::from_str(text).unwrap_or_else(|e| panic!("not a JSON document: {e}\n{text}"))
    }
    /// An object's keys in file order.
    pub fn keys(&self) -> Vec<&str> {
        match self {
            Doc::Obj(fields) => fields.iter().map(|(k, _)| k.as_str()).collect(),
            _ => panic!("not an object: {self:?}"),
        }
    }
    /// An object's value for `key`.
    pub fn get(&self, key: &str) -> &Doc {
        match self {
            Doc::Obj(fields) => match fields.iter().find(|(k, _)| k == key) {
                Some((_, v)) => v,
                None => panic!("no key {key:?} in {:?}", self.keys()),
            },
            _ => panic!("not an object, looking for {key:?}: {self:?}"),
        }
    }
    /// A list's items.
    pub fn items(&self) -> &[Doc] {
        match self {
            Doc::Arr(items) => items,
            _ => panic!("not a list: {self:?}"),
        }
    }
    /// An integer's value.
    pub fn int(&self) -> i128 {
        match self {
            Doc::Int(v) => *v,
            _ => panic!("not an integer: {self:?}"),
        }
    }
    /// A decimal's value.
    pub fn num(&self) -> f64 {
        match self {
            Doc::Num(v) => *v,
            _ => panic!("not a decimal number: {self:?}"),
        }
    }
    /// A string's text.
    pub fn str(&self) -> &str {
        match self {
            Doc::Str(s) => s,
            _ => panic!("not a string: {self:?}"),
        }
    }
    /// A list of decimals.
    pub fn nums(&self) -> Vec<f64> {
        self.items().iter().map(Doc::num).collect()
    }
}

impl<'de> Deserialize<'de> for Doc {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Doc, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Doc;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Doc, A::Error> {
                let mut fields = Vec::new();
                while let Some(k) = map.next_key::<String>()? {
                    fields.push((k, map.next_value::<Doc>()?));
                }
                Ok(Doc::Obj(fields))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Doc, A::Error> {
                let mut items = Vec::new();
                while let Some(t) = seq.next_element::<Doc>()? {
                    items.push(t);
                }
                Ok(Doc::Arr(items))
            }
            fn visit_bool<E>(self, v: bool) -> Result<Doc, E> {
                Ok(Doc::Bool(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Doc, E> {
                Ok(Doc::Int(v.into()))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Doc, E> {
                Ok(Doc::Int(v.into()))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Doc, E> {
                Ok(Doc::Num(v))
            }
            fn visit_str<E>(self, v: &str) -> Result<Doc, E> {
                Ok(Doc::Str(v.to_string()))
            }
            fn visit_unit<E>(self) -> Result<Doc, E> {
                Ok(Doc::Null)
            }
        }
        d.deserialize_any(V)
    }
}

/// Every number token outside strings in `text`, as written.
pub fn number_tokens(text: &str) -> Vec<&str> {
    let (mut out, mut in_str, mut escaped, mut start) = (Vec::new(), false, false, None);
    for (i, c) in text.char_indices() {
        if in_str {
            (in_str, escaped) = (escaped || c != '"', !escaped && c == '\\');
            continue;
        }
        let numeric = c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E');
        match (start, numeric) {
            // `true` and `false` hold an `e`: a number starts with a digit or a minus.
            (None, true) if c.is_ascii_digit() || c == '-' => start = Some(i),
            (Some(s), false) => {
                out.push(&text[s..i]);
                start = None;
            }
            _ => {}
        }
        in_str = c == '"';
    }
    out
}
