//! Test helper: a JSON document's shape with object keys in file order, for checking key
//! order (serde_json's `Value` sorts keys without the `preserve_order` feature).

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// A JSON value reduced to its structure: objects (keys in file order), lists, and leaves.
#[derive(Debug)]
pub(crate) enum Tree {
    /// An object's keys and values, in file order.
    Obj(Vec<(String, Tree)>),
    /// A list.
    Arr(Vec<Tree>),
    /// Any scalar.
    Leaf,
}

impl Tree {
    /// An object's keys in file order.
    pub fn keys(&self) -> Vec<&str> {
        match self {
            Tree::Obj(fields) => fields.iter().map(|(k, _)| k.as_str()).collect(),
            _ => panic!("not an object: {self:?}"),
        }
    }
    /// An object's value for `key`.
    pub fn get(&self, key: &str) -> &Tree {
        match self {
            Tree::Obj(fields) => &fields.iter().find(|(k, _)| k == key).unwrap().1,
            _ => panic!("not an object"),
        }
    }
    /// A list's `i`th item.
    pub fn at(&self, i: usize) -> &Tree {
        match self {
            Tree::Arr(items) => &items[i],
            _ => panic!("not a list"),
        }
    }
}

impl<'de> Deserialize<'de> for Tree {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Tree, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Tree;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Tree, A::Error> {
                let mut fields = Vec::new();
                while let Some(k) = map.next_key::<String>()? {
                    fields.push((k, map.next_value::<Tree>()?));
                }
                Ok(Tree::Obj(fields))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Tree, A::Error> {
                let mut items = Vec::new();
                while let Some(t) = seq.next_element::<Tree>()? {
                    items.push(t);
                }
                Ok(Tree::Arr(items))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Tree, E> {
                Ok(Tree::Leaf)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Tree, E> {
                Ok(Tree::Leaf)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Tree, E> {
                Ok(Tree::Leaf)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Tree, E> {
                Ok(Tree::Leaf)
            }
            fn visit_str<E>(self, _: &str) -> Result<Tree, E> {
                Ok(Tree::Leaf)
            }
            fn visit_unit<E>(self) -> Result<Tree, E> {
                Ok(Tree::Leaf)
            }
        }
        d.deserialize_any(V)
    }
}
