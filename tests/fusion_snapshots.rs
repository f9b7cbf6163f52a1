//! Snapshots of the C++ of fused regions (the merge the fusion engine performs):
//! shared buffers as one member, dead temporaries as locals, early returns
//! confined to their body, several reductions as one multi-value reduction.
//! No Python is involved. Accept reviewed changes with
//! `INSTA_UPDATE=always cargo test --release --test fusion_snapshots`.
use _native::codegen::fused::{generate, Body};
use _native::codegen::{ArgTy, KernelSpec, Pattern, Plan, Space};
use _native::frontend::ast::FunctionDef;
use _native::frontend::parse::parse_function;
use _native::frontend::source::SourceInfo;
use _native::lower::{Global, Globals};
use _native::types::{DType, Layout, ViewTy};
use std::sync::Arc;

const VIEW: ViewTy = ViewTy {
    dtype: DType::F64,
    rank: 1,
    layout: Layout::Right,
    atomic: false,
};

fn globals() -> Globals {
    let mut g = Globals::new();
    g.insert("pk".into(), Global::PkModule);
    g
}

struct K {
    def: FunctionDef,
    src: Arc<SourceInfo>,
    pattern: Pattern,
    args: Vec<(String, ArgTy)>,
    plans: Vec<Plan>,
}

fn k(text: &str, line: u32, pattern: Pattern, args: &[(&str, ArgTy)], plans: &[Plan]) -> K {
    K {
        def: parse_function(text).expect("kernel parses"),
        src: Arc::new(SourceInfo {
            text: text.into(),
            filename: "program.py".into(),
            first_line: line,
            indent: 0,
        }),
        pattern,
        args: args
            .iter()
            .map(|(n, t)| (n.to_string(), t.clone()))
            .collect(),
        plans: plans.to_vec(),
    }
}

fn fused(ks: &[K], groups: usize, locals: &[(usize, DType)], label: &str) -> String {
    fused_cached(ks, groups, locals, &[], label)
}

fn fused_cached(
    ks: &[K],
    groups: usize,
    locals: &[(usize, DType)],
    cached: &[(usize, DType)],
    label: &str,
) -> String {
    let g = globals();
    let bodies: Vec<Body> = ks
        .iter()
        .map(|k| Body {
            spec: KernelSpec {
                def: &k.def,
                src: k.src.clone(),
                globals: &g,
                pattern: k.pattern,
                space: Space::OpenMP,
                rank: 1,
                args: k.args.clone(),
                is_method: false,
                label: k.def.name.clone(),
                repeat: false,
            },
            plans: k.plans.clone(),
        })
        .collect();
    let groups: Vec<(usize, usize, ViewTy)> = (0..groups).map(|_| (0, 0, VIEW)).collect();
    let written = vec![true; groups.len()]; // every member may be written: stored back
    generate(
        &bodies,
        &groups,
        locals,
        cached,
        &written,
        Space::OpenMP,
        label,
    )
    .expect("fused region generates")
    .0
}

fn v() -> ArgTy {
    ArgTy::View(VIEW)
}

fn member(n: &str) -> Plan {
    Plan::Member(n.into())
}

fn shared(n: &str) -> Plan {
    Plan::Shared(n.into())
}

#[test]
fn buffers_accessed_only_at_the_work_index_live_in_locals() {
    // y += a*x; x += b*y: each element of x and y loaded once, stored once.
    let cached = |g: usize, declares: bool| {
        Plan::Cached(format!("pk_b{g}"), format!("pk_c{g}"), DType::F64, declares)
    };
    let scalar = ArgTy::Scalar {
        dtype: DType::F64,
        weak: true,
    };
    let axpy = |line: u32, first: bool| {
        k(
            "def axpy(i, a, x, y):\n    y[i] = a * x[i] + y[i]\n",
            line,
            Pattern::For,
            &[("a", scalar.clone()), ("x", v()), ("y", v())],
            &[
                member(if first { "pk_s0_0" } else { "pk_s1_0" }),
                cached(if first { 0 } else { 1 }, first),
                cached(if first { 1 } else { 0 }, first),
            ],
        )
    };
    insta::assert_snapshot!(fused_cached(
        &[axpy(3, true), axpy(4, false)],
        2,
        &[],
        &[(0, DType::F64), (1, DType::F64)],
        "fused(axpy+axpy)"
    ));
}

#[test]
fn vertical_chain_with_a_dead_temporary() {
    let scale = k(
        "def scale(i, a, x, t):\n    t[i] = a * x[i]\n",
        10,
        Pattern::For,
        &[
            (
                "a",
                ArgTy::Scalar {
                    dtype: DType::F64,
                    weak: true,
                },
            ),
            ("x", v()),
            ("t", v()),
        ],
        &[
            member("pk_s0_0"),
            member("pk_b0"),
            Plan::Local("pk_t0".into(), DType::F64),
        ],
    );
    let add = k(
        "def add(i, x, t, z):\n    z[i] = x[i] + t[i]\n",
        14,
        Pattern::For,
        &[("x", v()), ("t", v()), ("z", v())],
        &[
            shared("pk_b0"),
            Plan::Local("pk_t0".into(), DType::F64),
            member("pk_b1"),
        ],
    );
    insta::assert_snapshot!(fused(
        &[scale, add],
        2,
        &[(1, DType::F64)],
        "fused(scale+add)"
    ));
}

#[test]
fn early_return_and_reduction_epilogue() {
    let odd = k(
        "def odd(i, v):\n    if i % 2 == 0:\n        return\n    v[i] = 1.0\n",
        20,
        Pattern::For,
        &[("v", v())],
        &[member("pk_b0")],
    );
    let total = k(
        "def total(i, acc, v):\n    acc += v[i]\n",
        26,
        Pattern::Reduce,
        &[("v", v())],
        &[shared("pk_b0")],
    );
    insta::assert_snapshot!(fused(&[odd, total], 1, &[], "fused(odd+total)"));
}

#[test]
fn horizontal_reductions_become_one_multi_value_reduction() {
    let s = k(
        "def s(i, acc, a):\n    acc += a[i]\n",
        30,
        Pattern::Reduce,
        &[("a", v())],
        &[member("pk_b0")],
    );
    let c = k(
        "def c(i, acc: pk.Acc[pk.int64], b):\n    if b[i] > 0:\n        acc += 1\n",
        34,
        Pattern::Reduce,
        &[("b", v())],
        &[member("pk_b1")],
    );
    insta::assert_snapshot!(fused(&[s, c], 2, &[], "fused(s+c)"));
}
