//! Regenerates `nccl-sys/src/bindings.rs` from an NCCL `nccl.h` (feature `bindgen`, needs libclang).
//!
//! ```text
//! NCCL_HOME=/opt/nccl cargo run -p nccl-sys --features bindgen --bin regen
//! NCCL_INCLUDE_DIR=/x/nvidia/nccl/include cargo run -p nccl-sys --features bindgen --bin regen -- --check
//! ```
//!
//! bindgen reads `nccl.h` with our CUDA stand-in headers (`bindgen/cuda-stub`), so no CUDA toolkit
//! is needed. Its function declarations are rewritten into `PFN_<name>` function-pointer types:
//! the checked-in file declares no `extern` symbols, so nothing links against NCCL and the loader
//! resolves every entry point at run time. `--check` compares instead of writing and fails when
//! the checked-in file is stale; `--out PATH` writes elsewhere.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use quote::{format_ident, quote};

const MANIFEST_DIR: &str = env!("CARGO_MANIFEST_DIR");

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("regen: {msg}");
            ExitCode::FAILURE
        }
    }
}

struct Args {
    check: bool,
    out: PathBuf,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        check: false,
        out: Path::new(MANIFEST_DIR).join("src/bindings.rs"),
    };
    let mut it = std::env::args_os().skip(1);
    while let Some(arg) = it.next() {
        match arg.to_str() {
            Some("--check") => args.check = true,
            Some("--out") => {
                args.out = it.next().map(PathBuf::from).ok_or("--out needs a path")?;
            }
            _ => {
                return Err(format!(
                    "unknown argument {arg:?} (usage: regen [--check] [--out PATH])"
                ))
            }
        }
    }
    Ok(args)
}

/// `NCCL_INCLUDE_DIR` if set, else `$NCCL_HOME/include`.
fn include_dir() -> Result<PathBuf, String> {
    let non_empty = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dir) = non_empty("NCCL_INCLUDE_DIR") {
        return Ok(PathBuf::from(dir));
    }
    if let Some(home) = non_empty("NCCL_HOME") {
        return Ok(PathBuf::from(home).join("include"));
    }
    Err("set NCCL_HOME (an NCCL install with include/nccl.h) or NCCL_INCLUDE_DIR".into())
}

fn run() -> Result<(), String> {
    let args = parse_args()?;
    let include = include_dir()?;
    let header = include.join("nccl.h");
    if !header.is_file() {
        return Err(format!("{} does not exist", header.display()));
    }
    let raw = generate(&include, &header)?;
    let text = rustfmt(&convert(&raw)?)?;
    if args.check {
        let current = std::fs::read_to_string(&args.out)
            .map_err(|e| format!("cannot read {}: {e}", args.out.display()))?;
        if current != text {
            return Err(format!(
                "{} is stale: regenerate it (see nccl-sys/README.md)",
                args.out.display()
            ));
        }
        eprintln!("regen: {} is up to date", args.out.display());
    } else {
        std::fs::write(&args.out, text)
            .map_err(|e| format!("cannot write {}: {e}", args.out.display()))?;
        eprintln!("regen: wrote {}", args.out.display());
    }
    Ok(())
}

/// Runs bindgen over `nccl.h`: the `nccl*` functions, `nccl*` types and `NCCL_*` macros.
fn generate(include: &Path, header: &Path) -> Result<String, String> {
    let stub = Path::new(MANIFEST_DIR).join("bindgen/cuda-stub");
    let target = bindgen::RustTarget::stable(85, 0).map_err(|e| e.to_string())?;
    let bindings = bindgen::Builder::default()
        .header(header.to_string_lossy())
        .clang_arg(format!("-I{}", stub.display()))
        .clang_arg(format!("-I{}", include.display()))
        .rust_target(target)
        .allowlist_function("nccl.*")
        .allowlist_type("nccl.*")
        .allowlist_var("NCCL_.*")
        // Brace initializers are not constants; clang's fallback would evaluate them to nonsense.
        .blocklist_item(".*_INITIALIZER")
        // C enum values as plain constants named as in nccl.h (`ncclFloat32`), since NCCL's
        // enums are open sets (ncclRedOp_t values are created at run time).
        .default_enum_style(bindgen::EnumVariation::Consts)
        .prepend_enum_name(false)
        .derive_default(true)
        .layout_tests(true)
        // Lets clang evaluate macros built on others, e.g. NCCL_CONFIG_UNDEF_INT (INT_MIN).
        .clang_macro_fallback()
        .formatter(bindgen::Formatter::None)
        .generate()
        .map_err(|e| format!("bindgen failed on {}: {e}", header.display()))?;
    Ok(bindings.to_string())
}

/// Turns bindgen's output into the checked-in module: every `extern "C"` function becomes a
/// `PFN_<name>` type, and a module header records the NCCL version the header declares.
fn convert(raw: &str) -> Result<String, String> {
    let file = syn::parse_file(raw).map_err(|e| format!("cannot parse bindgen output: {e}"))?;
    let mut items = Vec::new();
    let mut version = HeaderVersion::default();
    for item in file.items {
        match item {
            syn::Item::ForeignMod(block) => {
                for foreign in block.items {
                    match foreign {
                        syn::ForeignItem::Fn(f) => items.push(fn_type(&f)?),
                        other => {
                            return Err(format!(
                                "nccl.h declares a non-function extern item: {}",
                                quote!(#other)
                            ))
                        }
                    }
                }
            }
            syn::Item::Const(c) => {
                version.note(&c);
                items.push(syn::Item::Const(c));
            }
            other => items.push(other),
        }
    }
    let (code, text) = version.finish()?;
    let body = prettyplease::unparse(&syn::File {
        shebang: None,
        attrs: Vec::new(),
        items,
    });
    let mut out = String::new();
    // bindgen's own first line names its version ("automatically generated by rust-bindgen X").
    let generator = raw
        .lines()
        .next()
        .and_then(|l| l.split("rust-bindgen ").nth(1))
        .map(|rest| format!("bindgen {}", rest.trim_end_matches("*/").trim()))
        .unwrap_or_else(|| "bindgen".into());
    let header = [
        format!("Types, constants and function types of `nccl.h` from NCCL {text} (NCCL_VERSION_CODE {code})."),
        String::new(),
        format!("Generated by {generator} (`cargo run -p nccl-sys --features bindgen --bin regen`);"),
        "do not edit, see nccl-sys/README.md. Each C function `ncclX` appears as the function-pointer".into(),
        "type `PFN_ncclX`, never as an `extern` declaration: nothing links against NCCL, the loader".into(),
        "(`crate::Nccl`) resolves the entry points at run time.".into(),
    ];
    for line in header {
        let sep = if line.is_empty() { "" } else { " " };
        let _ = writeln!(out, "//!{sep}{line}");
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "/// `NCCL_VERSION_CODE` of the `nccl.h` these bindings were generated from."
    );
    let _ = writeln!(out, "pub const HEADERS_VERSION_CODE: i32 = {code};");
    let _ = writeln!(
        out,
        "/// The NCCL version (`major.minor.patch`) of the `nccl.h` these bindings were generated from."
    );
    let _ = writeln!(out, "pub const HEADERS_VERSION: &str = {text:?};");
    out.push_str(&body);
    Ok(out)
}

/// `unsafe extern "C" fn ncclX(args) -> R;` into `pub type PFN_ncclX = unsafe extern "C" fn(args) -> R;`
/// keeping nccl.h's comment and the parameter names.
fn fn_type(f: &syn::ForeignItemFn) -> Result<syn::Item, String> {
    let sig = &f.sig;
    let c_name = sig.ident.to_string();
    if sig.variadic.is_some() {
        return Err(format!("{c_name} is variadic; add support for it to regen"));
    }
    let mut params = Vec::new();
    for input in &sig.inputs {
        match input {
            syn::FnArg::Typed(p) => {
                let (pat, ty) = (&p.pat, &p.ty);
                params.push(quote!(#pat: #ty));
            }
            syn::FnArg::Receiver(_) => return Err(format!("{c_name} has a receiver")),
        }
    }
    let docs: Vec<_> = f
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .collect();
    let lead = format!(" Signature of `{c_name}`.");
    let gap = if docs.is_empty() {
        quote!()
    } else {
        quote!(#[doc = ""])
    };
    let name = format_ident!("PFN_{}", sig.ident);
    let output = &sig.output;
    let tokens = quote! {
        #[doc = #lead]
        #gap
        #(#docs)*
        pub type #name = unsafe extern "C" fn(#(#params),*) #output;
    };
    syn::parse2(tokens).map_err(|e| format!("cannot build the type of {c_name}: {e}"))
}

/// The `NCCL_MAJOR`/`NCCL_MINOR`/`NCCL_PATCH`/`NCCL_VERSION_CODE` macros as bindgen emitted them.
#[derive(Default)]
struct HeaderVersion {
    major: Option<u64>,
    minor: Option<u64>,
    patch: Option<u64>,
    code: Option<u64>,
}

impl HeaderVersion {
    fn note(&mut self, c: &syn::ItemConst) {
        let slot = match c.ident.to_string().as_str() {
            "NCCL_MAJOR" => &mut self.major,
            "NCCL_MINOR" => &mut self.minor,
            "NCCL_PATCH" => &mut self.patch,
            "NCCL_VERSION_CODE" => &mut self.code,
            _ => return,
        };
        if let syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(n),
            ..
        }) = c.expr.as_ref()
        {
            *slot = n.base10_parse().ok();
        }
    }

    fn finish(self) -> Result<(u64, String), String> {
        match (self.major, self.minor, self.patch, self.code) {
            (Some(major), Some(minor), Some(patch), Some(code)) => {
                Ok((code, format!("{major}.{minor}.{patch}")))
            }
            _ => Err("nccl.h lacks NCCL_MAJOR/NCCL_MINOR/NCCL_PATCH/NCCL_VERSION_CODE".into()),
        }
    }
}

/// Formats with the toolchain's rustfmt, as `cargo fmt` will, so a regenerated file is stable.
fn rustfmt(text: &str) -> Result<String, String> {
    let mut child = Command::new("rustfmt")
        .args(["--edition", "2021", "--emit", "stdout"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run rustfmt: {e}"))?;
    let mut stdin = child.stdin.take().ok_or("rustfmt has no stdin")?;
    let input = text.to_owned();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child
        .wait_with_output()
        .map_err(|e| format!("rustfmt failed: {e}"))?;
    match writer.join() {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(format!("cannot feed rustfmt: {e}")),
        Err(_) => return Err("the thread feeding rustfmt failed".into()),
    }
    if !out.status.success() {
        return Err(format!(
            "rustfmt failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    String::from_utf8(out.stdout).map_err(|e| format!("rustfmt wrote non-UTF-8: {e}"))
}
