//! Every module path a source file names, resolved to an absolute module path: `crate::`,
//! `$crate::`, `super::` (chained), `self::`, a child module declared in the file (`plan::x`
//! after `mod plan;`), `use` groups nested to any depth (`crate::{a::{b, self}, c::*}`), and
//! paths inside macro invocations, which are ordinary tokens here. Comments, string and char
//! literals are left out first, so text that merely looks like a path is never read as one.
//! Inline modules (`mod tests { use super::*; }`) shift what `super` and `self` mean.

/// One token of the code: an identifier, `::`, or another punctuation character.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    PathSep,
    Punct(char),
}

/// Advances `i` past a string literal whose opening quote is at `i`, raw (`#` count `hashes`)
/// or escaped.
fn skip_string(b: &[u8], mut i: usize, raw: Option<usize>) -> usize {
    i += 1;
    while i < b.len() {
        match (b[i], raw) {
            (b'\\', None) => i += 2,
            (b'"', None) => return i + 1,
            (b'"', Some(h)) if b[i + 1..].iter().take(h).filter(|&&c| c == b'#').count() == h => {
                return i + 1 + h
            }
            _ => i += 1,
        }
    }
    i
}

/// The tokens of `src`, without comments and literals.
fn tokens(src: &str) -> Vec<Tok> {
    let b = src.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied().unwrap_or(0);
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c == b'/' && next == b'/' {
            i = b[i..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |p| i + p);
        } else if c == b'/' && next == b'*' {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == b'"' {
            i = skip_string(b, i, None);
        } else if (c == b'r' || (c == b'b' && next == b'r')) && !out_ends_ident(b, i) && {
            let j = if c == b'b' { i + 2 } else { i + 1 };
            let h = b[j..].iter().take_while(|&&c| c == b'#').count();
            b.get(j + h) == Some(&b'"')
        } {
            let j = if c == b'b' { i + 2 } else { i + 1 };
            let h = b[j..].iter().take_while(|&&c| c == b'#').count();
            i = skip_string(b, j + h, Some(h));
        } else if c == b'b' && next == b'"' && !out_ends_ident(b, i) {
            i = skip_string(b, i + 1, None);
        } else if c == b'\'' {
            // A char literal ('x', '\n', '\u{1F600}', b'x' is handled as ident `b` + this) or a
            // lifetime ('a), which names no path and is skipped like one.
            if next == b'\\' {
                i += 2;
                while i < b.len() && b[i] != b'\'' {
                    i += 1;
                }
                i += 1;
            } else {
                let len = src[i + 1..].chars().next().map_or(1, char::len_utf8);
                if b.get(i + 1 + len) == Some(&b'\'') {
                    i += 2 + len;
                } else {
                    i += 1;
                    while i < b.len() && ident(b[i]) {
                        i += 1;
                    }
                }
            }
        } else if c == b'r' && next == b'#' && b.get(i + 2).is_some_and(|&c| ident(c)) {
            i += 2; // a raw identifier: read on as the identifier itself
        } else if ident(c) {
            let start = i;
            while i < b.len() && ident(b[i]) {
                i += 1;
            }
            out.push(Tok::Ident(src[start..i].to_string()));
        } else if c == b':' && next == b':' {
            out.push(Tok::PathSep);
            i += 2;
        } else {
            let ch = src[i..].chars().next().unwrap();
            out.push(Tok::Punct(ch));
            i += ch.len_utf8();
        }
    }
    out
}

/// Whether the byte before `i` continues an identifier (so `r"` at `i` is not a raw string).
fn out_ends_ident(b: &[u8], i: usize) -> bool {
    i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')
}

/// Reads the rest of a path after its first segment, from `base`; pushes every module path it
/// names (a group names several) and returns the index after it.
fn rest_of_path(
    t: &[Tok],
    mut i: usize,
    mut base: Vec<String>,
    found: &mut Vec<Vec<String>>,
) -> usize {
    loop {
        if t.get(i) != Some(&Tok::PathSep) {
            found.push(base);
            return i;
        }
        match t.get(i + 1) {
            Some(Tok::Ident(s)) if s == "super" => {
                base.pop();
                i += 2;
            }
            Some(Tok::Ident(s)) if s == "self" => i += 2,
            Some(Tok::Ident(s)) if s.starts_with(|c: char| c.is_ascii_lowercase()) => {
                base.push(s.clone());
                i += 2;
            }
            Some(Tok::Punct('{')) => return group(t, i + 2, &base, found),
            Some(Tok::Ident(_)) | Some(Tok::Punct('*')) => {
                found.push(base); // a type, trait, constant or glob of this module
                return i + 2;
            }
            _ => {
                found.push(base); // `::<` of a turbofish
                return i + 1;
            }
        }
    }
}

/// Reads a `{...}` group whose items start at `i`, each a path from `base`.
fn group(t: &[Tok], mut i: usize, base: &[String], found: &mut Vec<Vec<String>>) -> usize {
    while i < t.len() {
        match &t[i] {
            Tok::Punct('}') => return i + 1,
            Tok::Punct(',') => i += 1,
            Tok::Punct('{') => i = group(t, i + 1, base, found),
            Tok::Ident(s) if s == "as" => i += 2,
            Tok::Ident(s) if s == "self" => {
                found.push(base.to_vec());
                i += 1;
            }
            Tok::Ident(s) if s == "super" => {
                let mut up = base.to_vec();
                up.pop();
                i = rest_of_path(t, i + 1, up, found);
            }
            Tok::Ident(s) if s.starts_with(|c: char| c.is_ascii_lowercase()) => {
                let mut p = base.to_vec();
                p.push(s.clone());
                i = rest_of_path(t, i + 1, p, found);
            }
            Tok::Ident(_) | Tok::Punct('*') => {
                found.push(base.to_vec()); // `Type` or `*` of the group's module
                i += 1;
            }
            _ => i += 1,
        }
    }
    i
}

/// Every module path named in `src`, a file whose module path is `module` (`["bench",
/// "plan"]` for bench/plan/mod.rs, `[]` for the crate root). Each path is absolute and ends
/// at its last lower-case segment (a module, or a function or constant inside one).
pub fn module_paths(module: &[String], src: &str) -> Result<Vec<Vec<String>>, String> {
    let t = tokens(src);
    let mut found = Vec::new();
    // Inline modules open here: (name, brace depth at which their block closes).
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let children: Vec<String> = t
        .windows(2)
        .filter_map(|w| match w {
            [Tok::Ident(m), Tok::Ident(n)] if m == "mod" => Some(n.clone()),
            _ => None,
        })
        .collect();
    let mut i = 0;
    while i < t.len() {
        let here: Vec<String> = module
            .iter()
            .cloned()
            .chain(inline.iter().map(|(n, _)| n.clone()))
            .collect();
        let prev = i.checked_sub(1).map(|p| &t[p]);
        let after_sep = matches!(prev, Some(Tok::PathSep));
        match (&t[i], t.get(i + 1)) {
            (Tok::Ident(m), Some(Tok::Ident(n)))
                if m == "mod" && t.get(i + 2) == Some(&Tok::Punct('{')) =>
            {
                depth += 1;
                inline.push((n.clone(), depth));
                i += 3;
            }
            (Tok::Punct('{'), _) => {
                depth += 1;
                i += 1;
            }
            (Tok::Punct('}'), _) => {
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
                i += 1;
            }
            (Tok::Ident(s), Some(Tok::PathSep)) if !after_sep => {
                let base = match s.as_str() {
                    "crate" => Some(Vec::new()),
                    "self" => Some(here.clone()),
                    "super" => {
                        let mut up = here.clone();
                        up.pop().ok_or("`super` at the crate root")?;
                        Some(up)
                    }
                    child if children.iter().any(|c| c == child) => {
                        let mut p = here.clone();
                        p.push(child.to_string());
                        Some(p)
                    }
                    _ => None,
                };
                match base {
                    Some(base) => i = rest_of_path(&t, i + 1, base, &mut found),
                    None => i += 1,
                }
            }
            _ => i += 1,
        }
    }
    Ok(found)
}
