//! The tables of NCCL entry points the loader resolves: required ones ([`Api`]) and ones only
//! newer releases export ([`OptionalApi`]), each typed by its bindgen signature.
//!
//! One macro turns each list into a struct of function pointers, the list of C names and the
//! resolution code, so a name, its type and its lookup cannot drift apart.

use std::ffi::c_void;

use libloading::Library;

use crate::bindings;
use crate::loader::Nccl;
use crate::LoadError;

/// The address of `name` in `lib`, or `None` when it is absent (or resolves to NULL).
pub(crate) fn lookup(lib: &Library, name: &str) -> Option<*mut c_void> {
    // SAFETY: the symbol is read as a plain address; nothing is assumed about its type yet.
    let symbol = unsafe { lib.get::<*mut c_void>(name.as_bytes()) }.ok()?;
    let address = *symbol;
    (!address.is_null()).then_some(address)
}

macro_rules! entry_points {
    (
        required { $($req:ident: $req_ty:ident,)* }
        optional { $($opt:ident: $opt_ty:ident => $getter:ident,)* }
    ) => {
        /// Entry points every NCCL ncclbench supports (2.7 and newer) exports: [`Nccl::open`]
        /// fails when one is missing. They are raw C functions, called through [`Nccl::api`]
        /// (`unsafe { (nccl.api().ncclGroupStart)() }`) under `nccl.h`'s rules: valid
        /// communicators, device buffers and streams, matching calls on every rank.
        #[allow(non_snake_case)]
        #[derive(Clone, Copy, Debug)]
        pub struct Api {
            $(
                #[doc = concat!("`", stringify!($req), "`")]
                pub $req: bindings::$req_ty,
            )*
        }

        impl Api {
            /// The C names, in the order they are resolved.
            pub const SYMBOLS: &'static [&'static str] = &[$(stringify!($req)),*];

            pub(crate) fn resolve(
                lib: &Library,
                library: &str,
                version: i32,
            ) -> Result<Self, LoadError> {
                Ok(Self {
                    $(
                        $req: {
                            let address = lookup(lib, stringify!($req)).ok_or_else(|| {
                                LoadError::MissingSymbol {
                                    library: library.to_owned(),
                                    symbol: stringify!($req),
                                    version: Some(version),
                                }
                            })?;
                            // SAFETY: a non-NULL address of NCCL's exported function of this
                            // name, whose C signature is the one bindgen read from nccl.h.
                            unsafe {
                                std::mem::transmute::<*mut c_void, bindings::$req_ty>(address)
                            }
                        },
                    )*
                })
            }
        }

        /// Entry points only newer NCCL releases export; `None` where the loaded library lacks
        /// one, so callers disable the feature or fall back (grouped send/recv for alltoall,
        /// gather and scatter, as nccl-tests does). The same calling rules as [`Api`] apply.
        #[allow(non_snake_case)]
        #[derive(Clone, Copy, Debug, Default)]
        pub struct OptionalApi {
            $(
                #[doc = concat!("`", stringify!($opt), "`")]
                pub $opt: Option<bindings::$opt_ty>,
            )*
        }

        impl OptionalApi {
            /// The C names, in declaration order.
            pub const SYMBOLS: &'static [&'static str] = &[$(stringify!($opt)),*];

            pub(crate) fn resolve(lib: &Library) -> Self {
                Self {
                    $(
                        $opt: lookup(lib, stringify!($opt)).map(|address| {
                            // SAFETY: as for `Api::resolve`.
                            unsafe {
                                std::mem::transmute::<*mut c_void, bindings::$opt_ty>(address)
                            }
                        }),
                    )*
                }
            }

            /// The C names of the entry points this library exports.
            pub fn present(&self) -> Vec<&'static str> {
                let mut names = Vec::new();
                $(
                    if self.$opt.is_some() {
                        names.push(stringify!($opt));
                    }
                )*
                names
            }

            /// The C names of the entry points this library lacks.
            pub fn missing(&self) -> Vec<&'static str> {
                let present = self.present();
                Self::SYMBOLS.iter().copied().filter(|n| !present.contains(n)).collect()
            }
        }

        impl Nccl {
            $(
                #[doc = concat!("`", stringify!($opt), "`, or `None` when this library lacks it.")]
                pub fn $getter(&self) -> Option<bindings::$opt_ty> {
                    self.optional().$opt
                }
            )*
        }
    };
}

entry_points! {
    required {
        ncclGetVersion: PFN_ncclGetVersion,
        ncclGetUniqueId: PFN_ncclGetUniqueId,
        ncclCommInitRank: PFN_ncclCommInitRank,
        ncclCommDestroy: PFN_ncclCommDestroy,
        ncclCommAbort: PFN_ncclCommAbort,
        ncclCommGetAsyncError: PFN_ncclCommGetAsyncError,
        ncclGetErrorString: PFN_ncclGetErrorString,
        ncclGroupStart: PFN_ncclGroupStart,
        ncclGroupEnd: PFN_ncclGroupEnd,
        ncclAllReduce: PFN_ncclAllReduce,
        ncclBroadcast: PFN_ncclBroadcast,
        ncclReduce: PFN_ncclReduce,
        ncclAllGather: PFN_ncclAllGather,
        ncclReduceScatter: PFN_ncclReduceScatter,
        ncclSend: PFN_ncclSend,
        ncclRecv: PFN_ncclRecv,
        ncclCommCount: PFN_ncclCommCount,
        ncclCommCuDevice: PFN_ncclCommCuDevice,
        ncclCommUserRank: PFN_ncclCommUserRank,
    }
    optional {
        ncclCommInitRankConfig: PFN_ncclCommInitRankConfig => comm_init_rank_config,
        ncclCommFinalize: PFN_ncclCommFinalize => comm_finalize,
        ncclGetLastError: PFN_ncclGetLastError => get_last_error,
        ncclAlltoAll: PFN_ncclAlltoAll => alltoall,
        ncclGather: PFN_ncclGather => gather,
        ncclScatter: PFN_ncclScatter => scatter,
        ncclRedOpCreatePreMulSum: PFN_ncclRedOpCreatePreMulSum => red_op_create_pre_mul_sum,
        ncclRedOpDestroy: PFN_ncclRedOpDestroy => red_op_destroy,
        ncclCommRegister: PFN_ncclCommRegister => comm_register,
        ncclCommDeregister: PFN_ncclCommDeregister => comm_deregister,
        ncclCommWindowRegister: PFN_ncclCommWindowRegister => comm_window_register,
        ncclCommWindowDeregister: PFN_ncclCommWindowDeregister => comm_window_deregister,
        ncclMemAlloc: PFN_ncclMemAlloc => mem_alloc,
        ncclMemFree: PFN_ncclMemFree => mem_free,
        ncclCommInitAll: PFN_ncclCommInitAll => comm_init_all,
        ncclCommSplit: PFN_ncclCommSplit => comm_split,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn get_version_is_resolved_first_so_a_foreign_library_is_named_by_it() {
        assert_eq!(Api::SYMBOLS.first(), Some(&"ncclGetVersion"));
        assert_eq!(Api::SYMBOLS.len(), 19);
        assert_eq!(OptionalApi::SYMBOLS.len(), 16);
    }

    #[test]
    fn an_empty_optional_table_reports_everything_missing() {
        let none = OptionalApi::default();
        assert!(none.present().is_empty());
        assert_eq!(none.missing(), OptionalApi::SYMBOLS);
    }
}
