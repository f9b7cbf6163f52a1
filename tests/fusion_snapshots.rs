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
    generate(&bodies, &groups, locals, Space::OpenMP, label)
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
