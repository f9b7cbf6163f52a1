//! Loaded kernels and the in-process tables that find them again: a repeated
//! launch touches only these tables, no parsing, hashing of source text or
//! file-system access.
use super::device_entry::DeviceEntry;
use crate::compile::{loader, Loaded};
use crate::types::{ArgTy, DType, Pattern, Reducer, Space};
use dashmap::{DashMap, DashSet};
use std::sync::{Arc, LazyLock};

/// A loaded kernel (one launch, or a fused region of several) and how to fill
/// its entry point's arguments from the bodies' argument values.
pub struct Kernel {
    pub entry: Entry,
    pub source_key: String,
    /// Where it runs: CUDA kernels take device pointers.
    pub space: Space,
    /// Per view slot: the (body, argument) whose view supplies it.
    pub views: Vec<(usize, usize)>,
    /// CUDA kernels: whether each view slot may be written (its device copy
    /// then becomes the newer one). Empty: every view counts as written.
    pub view_writes: Vec<bool>,
    /// CUDA kernels over a 1-D range: whether each view slot is stored at the
    /// work index in every work item and never read (memory/fills.rs).
    /// Empty: none is.
    pub view_fills: Vec<bool>,
    /// Per scalar slot: (body, argument, the kernel's dtype).
    pub scalars: Vec<(usize, usize, DType)>,
    /// Per result slot: the reducing body and its accumulator dtype.
    pub accs: Vec<(usize, DType)>,
    /// A single reduction through a struct reducer (MinLoc, MinMax, ...):
    /// its fields fill the first result slots.
    pub record: Option<Reducer>,
}

/// How a kernel is entered: a compiled library's C entry point, or a CUDA
/// function NVRTC built (see codegen/device.rs).
pub enum Entry {
    Library {
        run: loader::EntryFn,
        error: loader::ErrorFn,
    },
    Device(DeviceEntry),
}

impl Kernel {
    pub fn new(l: Loaded, space: Space) -> Kernel {
        Kernel::with_entry(
            Entry::Library {
                run: l.run,
                error: l.error,
            },
            l.source_key,
            space,
        )
    }

    pub fn with_entry(entry: Entry, source_key: String, space: Space) -> Kernel {
        Kernel {
            entry,
            source_key,
            space,
            views: vec![],
            view_writes: vec![],
            view_fills: vec![],
            scalars: vec![],
            accs: vec![],
            record: None,
        }
    }
}

/// Identity of one compiled single-launch kernel in this process.
#[derive(Clone, PartialEq, Eq)]
pub struct KernelKey {
    /// A digest of the fields below, taken once (`new`): each launch looks
    /// its key up in several tables, which hash this instead of the fields.
    /// First, so that unequal keys usually differ at the first comparison.
    fp: u64,
    pub workunit: usize,
    pub pattern: Pattern,
    pub space: Space,
    pub rank: u8,
    pub args: Vec<ArgTy>,
    /// The values of the numbers it compiles in (module constants, closure
    /// values): rebinding one makes another kernel. None when there are none
    /// (the common case costs no comparison of an empty list).
    pub consts: Option<Box<[u64]>>,
}

/// Hashes a `KernelKey` as its digest, which already is a hash of its
/// fields (`KernelKey::hash` writes only that): launch-time tables skip a
/// second hashing.
#[derive(Default, Clone, Copy)]
pub struct DigestHasher(u64);

impl std::hash::Hasher for DigestHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        // Not reached for KernelKey; a plain mix keeps other keys usable.
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 ^= x;
    }
}

pub type ByDigest = std::hash::BuildHasherDefault<DigestHasher>;
/// A table keyed by kernel.
pub type KeyMap<V> = DashMap<KernelKey, V, ByDigest>;

/// Single-launch kernels by key.
pub static KERNELS: LazyLock<KeyMap<Arc<Kernel>>> = LazyLock::new(KeyMap::default);

/// Launch keys whose code built at least once (alone, repeated or fused):
/// a pending launch of one of these may be dropped unrun (its errors, if
/// any, are not in its code).
pub static BUILT: LazyLock<DashSet<KernelKey, ByDigest>> = LazyLock::new(DashSet::default);

/// Repeat kernels (a run of exact repeats of one launch) by the launch's key.
pub static REPEATS: LazyLock<KeyMap<Arc<Kernel>>> = LazyLock::new(KeyMap::default);

/// Fused kernels by the blake3 digest of their region's structure.
pub static FUSED: LazyLock<DashMap<[u8; 32], Arc<Kernel>>> = LazyLock::new(DashMap::new);

/// Region structures whose fused kernel failed to build (never compiled again:
/// their launches run one kernel each).
pub static FUSED_FAILED: LazyLock<DashSet<[u8; 32]>> = LazyLock::new(DashSet::new);

/// A reduction or scan total, typed as the accumulator was.
#[derive(Clone, Copy, Debug)]
pub enum Total {
    F(f64),
    I(i64),
    U(u64),
    B(bool),
    /// A complex total (real, imaginary).
    C(f64, f64),
    /// The record of a struct reducer: its fields' raw slots, in Kokkos'
    /// order (values typed `dt`, locations int64).
    Rec {
        words: [u64; 4],
        dt: DType,
        reducer: Reducer,
    },
}

impl Total {
    /// The fields of a record, each typed (empty for a plain total).
    pub fn fields(&self) -> Vec<(&'static str, Total)> {
        match self {
            Total::Rec { words, dt, reducer } => reducer
                .fields()
                .iter()
                .zip(words)
                .map(|((name, loc), w)| {
                    (
                        *name,
                        read_total(std::slice::from_ref(w), if *loc { DType::I64 } else { *dt }),
                    )
                })
                .collect(),
            _ => vec![],
        }
    }
}

/// The total in the result words `r` (one 16-byte slot: two words, or one
/// word of a record), typed as the accumulator. Read from the words' bytes:
/// any bit pattern is a value of these types.
pub fn read_total(r: &[u64], d: DType) -> Total {
    let w = r[0];
    let b = w.to_ne_bytes();
    let half = |k: usize| [b[4 * k], b[4 * k + 1], b[4 * k + 2], b[4 * k + 3]];
    match d {
        DType::F64 => Total::F(f64::from_bits(w)),
        DType::F32 => Total::F(f32::from_ne_bytes(half(0)) as f64),
        DType::Bool => Total::B(b[0] != 0),
        DType::I8 => Total::I(i8::from_ne_bytes([b[0]]) as i64),
        DType::I16 => Total::I(i16::from_ne_bytes([b[0], b[1]]) as i64),
        DType::I32 => Total::I(i32::from_ne_bytes(half(0)) as i64),
        DType::I64 => Total::I(w as i64),
        DType::U8 => Total::I(b[0] as i64),
        DType::U16 => Total::I(u16::from_ne_bytes([b[0], b[1]]) as i64),
        DType::U32 => Total::I(u32::from_ne_bytes(half(0)) as i64),
        DType::U64 => Total::U(w),
        DType::C64 => Total::C(
            f32::from_ne_bytes(half(0)) as f64,
            f32::from_ne_bytes(half(1)) as f64,
        ),
        // The imaginary part is the slot's second word.
        DType::C128 => Total::C(
            f64::from_bits(w),
            f64::from_bits(r.get(1).map_or(0, |&x| x)),
        ),
    }
}

impl std::hash::Hash for KernelKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u64(self.fp);
    }
}

impl KernelKey {
    /// The digest of its fields (equal keys have equal digests).
    pub fn digest(&self) -> u64 {
        self.fp
    }

    pub fn new(
        workunit: usize,
        (pattern, space, rank): (Pattern, Space, u8),
        args: Vec<ArgTy>,
        consts: Option<Box<[u64]>>,
    ) -> KernelKey {
        use std::hash::{Hash, Hasher};
        // In-process only (never stored): a fast hash, not a DoS-proof one.
        let mut h = rustc_hash::FxHasher::default();
        (workunit, pattern, space, rank, &args, &consts).hash(&mut h);
        KernelKey {
            fp: h.finish(),
            workunit,
            pattern,
            space,
            rank,
            args,
            consts,
        }
    }

    /// The constants' values as a list (empty when there are none).
    pub fn consts(&self) -> &[u64] {
        self.consts.as_deref().unwrap_or(&[])
    }
}
