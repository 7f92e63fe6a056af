//! The shipped profiles, embedded in the binary, and how a profile spec picks one of them or a
//! file.

use super::{parse, Profile};
use crate::core::error::Error;
use std::path::Path;

/// The shipped profiles, `default` first.
const BUILTIN: &[(&str, &str)] = &[
    ("default", include_str!("../../../profiles/default.toml")),
    (
        "h100-nvswitch",
        include_str!("../../../profiles/h100-nvswitch.toml"),
    ),
    (
        "h200-nvswitch",
        include_str!("../../../profiles/h200-nvswitch.toml"),
    ),
    (
        "a100-nvswitch",
        include_str!("../../../profiles/a100-nvswitch.toml"),
    ),
    (
        "pcie4-8gpu",
        include_str!("../../../profiles/pcie4-8gpu.toml"),
    ),
    (
        "h100-2node-400g-per-gpu",
        include_str!("../../../profiles/h100-2node-400g-per-gpu.toml"),
    ),
    (
        "h100-2node-200g-per-gpu",
        include_str!("../../../profiles/h100-2node-200g-per-gpu.toml"),
    ),
    (
        "h100-2node-400g-per-node",
        include_str!("../../../profiles/h100-2node-400g-per-node.toml"),
    ),
];

/// `spec`: None = the builtin "default" profile; a builtin name; or a file path (anything
/// containing '/' or ending in ".toml", or an existing file). Unknown name: Error::Usage
/// listing the builtin names.
pub fn load(spec: Option<&str>) -> Result<Profile, Error> {
    let spec = spec.unwrap_or("default");
    let path_like = spec.contains('/') || spec.ends_with(".toml");
    if !path_like {
        if let Some((_, text)) = BUILTIN.iter().find(|(name, _)| *name == spec) {
            return parse(text, "builtin", None);
        }
    }
    let path = Path::new(spec);
    if path_like || path.is_file() {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::usage(format!("profile {spec}: cannot read: {e}")))?;
        return parse(&text, spec, Some(path.parent().unwrap_or(Path::new(""))));
    }
    let names: Vec<&str> = BUILTIN.iter().map(|(name, _)| *name).collect();
    Err(Error::usage(format!(
        "unknown profile '{spec}' (builtin profiles: {}; or give a .toml file)",
        names.join(", ")
    )))
}

/// (name, description) of every shipped profile, in a stable order.
pub fn builtins() -> Vec<(&'static str, String)> {
    BUILTIN
        .iter()
        .map(|(name, text)| {
            let profile = parse(text, "builtin", None)
                .unwrap_or_else(|e| panic!("shipped profile {name} is invalid: {e}"));
            (*name, profile.description)
        })
        .collect()
}
