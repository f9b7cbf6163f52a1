//! Snapshots of the C++ generated for representative kernels. No Python is
//! involved: kernels are parsed from source text and launched with hand-built
//! argument types. Review changes with `cargo insta review`, or accept them with
//! `INSTA_UPDATE=always cargo test --release --test codegen_snapshots`.
use _native::codegen::{generate, ArgTy, KernelSpec, Pattern, Space};
use _native::frontend::parse::parse_function;
use _native::frontend::source::SourceInfo;
use _native::lower::names::{ClassInfo, FuncInfo};
use _native::lower::{Global, Globals};
use _native::types::{DType, Layout, ViewTy};
use std::sync::Arc;

fn src(text: &str, line: u32) -> Arc<SourceInfo> {
    Arc::new(SourceInfo {
        text: text.to_string(),
        filename: "kernels.py".into(),
        first_line: line,
        indent: 0,
    })
}

fn view(dtype: DType, rank: u8) -> ArgTy {
    ArgTy::View(ViewTy {
        dtype,
        rank,
        layout: Layout::Right,
        atomic: false,
    })
}

fn weak(dtype: DType) -> ArgTy {
    ArgTy::Scalar { dtype, weak: true }
}

fn module_globals() -> Globals {
    let mut g = Globals::new();
    g.insert("pk".into(), Global::PkModule);
    g.insert("math".into(), Global::MathModule);
    g
}

fn function(id: usize, text: &str, line: u32) -> Global {
    Global::Function(Arc::new(FuncInfo {
        id,
        def: parse_function(text).expect("helper parses"),
        src: src(text, line),
        globals: module_globals(),
    }))
}

struct Case<'a> {
    text: &'a str,
    pattern: Pattern,
    rank: usize,
    args: Vec<(&'a str, ArgTy)>,
    globals: Globals,
    space: Space,
}

fn cpp(case: Case) -> String {
    let def = parse_function(case.text).expect("kernel parses");
    let spec = KernelSpec {
        def: &def,
        src: src(case.text, 10),
        globals: &case.globals,
        pattern: case.pattern,
        space: case.space,
        rank: case.rank,
        args: case
            .args
            .into_iter()
            .map(|(n, t)| (n.to_string(), t))
            .collect(),
        is_method: false,
        label: def.name.clone(),
        repeat: false,
    };
    match generate(&spec) {
        Ok(g) => g.source,
        Err(e) => panic!("kernel did not translate: {}", e.message),
    }
}

#[test]
fn saxpy_with_numpy_promotion() {
    let out = cpp(Case {
        text: "@pk.workunit\ndef saxpy(i, a, x, y, y32):\n    y[i] = a * x[i] + y[i]\n    y32[i] = y32[i] * 2.0 + 1\n",
        pattern: Pattern::For,
        rank: 1,
        args: vec![
            ("a", weak(DType::F64)),
            ("x", view(DType::F64, 1)),
            ("y", view(DType::F64, 1)),
            ("y32", view(DType::F32, 1)),
        ],
        globals: module_globals(),
        space: Space::OpenMP,
    });
    insta::assert_snapshot!("saxpy", out);
}

#[test]
fn python_semantics_operators() {
    let out = cpp(Case {
        text: r#"@pk.workunit
def semantics(i, a, out):
    x = a[i]
    out[i][0] = x // 3 + x % -4
    out[i][1] = x / 2
    out[i][2] = x ** 3
    out[i][3] = 1 if 0 <= x < 10 else -1
    out[i][4] = x and 7 or 9
    out[i][5] = int(-2.5) + (1 << 40)
    y = 1
    y = y + 0.5
    out[i][6] = y
"#,
        pattern: Pattern::For,
        rank: 1,
        args: vec![("a", view(DType::I32, 1)), ("out", view(DType::F64, 2))],
        globals: module_globals(),
        space: Space::OpenMP,
    });
    insta::assert_snapshot!("python_semantics", out);
}

#[test]
fn tutorial_reduce_with_nested_loops() {
    let out = cpp(Case {
        text: "@pk.workunit\ndef yAx(j, acc, cols, y, x, A):\n    temp2: float = 0\n    for i in range(cols):\n        temp2 += A[j][i] * x[i]\n    acc += y[j] * temp2\n",
        pattern: Pattern::Reduce,
        rank: 1,
        args: vec![
            ("cols", weak(DType::I64)),
            ("y", view(DType::F64, 1)),
            ("x", view(DType::F64, 1)),
            ("A", view(DType::F64, 2)),
        ],
        globals: module_globals(),
        space: Space::OpenMP,
    });
    insta::assert_snapshot!("yax_reduce", out);
}

#[test]
fn inclusive_scan() {
    let out = cpp(Case {
        text: "@pk.workunit\ndef prefix(i, acc, last_pass, v, out):\n    acc += v[i]\n    if last_pass:\n        out[i] = acc\n",
        pattern: Pattern::Scan,
        rank: 1,
        args: vec![("v", view(DType::I64, 1)), ("out", view(DType::I64, 1))],
        globals: module_globals(),
        space: Space::OpenMP,
    });
    insta::assert_snapshot!("inclusive_scan", out);
}

#[test]
fn mdrange_with_functions_subviews_math_and_atomics() {
    let mut globals = module_globals();
    globals.insert(
        "row_norm".into(),
        function(
            1,
            "@pk.function\ndef row_norm(r, n: int) -> float:\n    s = 0.0\n    for k in range(n):\n        s += r[k] * r[k]\n    return math.sqrt(s)\n",
            1,
        ),
    );
    let out = cpp(Case {
        text: r#"@pk.workunit
def grid(i, j, A, hist, total):
    nrm = row_norm(A[i, :], A.extent(1))
    A[i][j] = pk.fabs(A[i, j]) / nrm
    for k in range(j, -1, -2):
        if k == 0:
            break
    pk.atomic_add(hist, [j % 4], 1)
    old = pk.atomic_fetch_max(total, [0], A[i][j])
    if old < 0.0:
        pk.printf("row %d col %d: %f\n", i, j, old)
"#,
        pattern: Pattern::For,
        rank: 2,
        args: vec![
            ("A", view(DType::F64, 2)),
            ("hist", view(DType::I32, 1)),
            ("total", view(DType::F64, 1)),
        ],
        globals,
        space: Space::OpenMP,
    });
    insta::assert_snapshot!("mdrange_functions_atomics", out);
}

#[test]
fn classtype_with_methods() {
    let init = "def __init__(self, x: float, y: float):\n    self.x = x\n    self.y = y\n";
    let norm =
        "def norm(self) -> float:\n    return math.sqrt(self.x * self.x + self.y * self.y)\n";
    let info = |text: &str, id: usize, line: u32| {
        Arc::new(FuncInfo {
            id,
            def: parse_function(text).expect("method parses"),
            src: src(text, line),
            globals: module_globals(),
        })
    };
    let mut methods = std::collections::BTreeMap::new();
    methods.insert("norm".to_string(), info(norm, 2, 4));
    let mut globals = module_globals();
    globals.insert(
        "Vec2".into(),
        Global::ClassType(Arc::new(ClassInfo {
            name: "Vec2".into(),
            init: Some(info(init, 1, 1)),
            methods,
        })),
    );
    let out = cpp(Case {
        text: "@pk.workunit\ndef lengths(i, xs, out):\n    p = Vec2(xs[i], 4.0)\n    p.y += 1\n    out[i] = p.norm()\n",
        pattern: Pattern::For,
        rank: 1,
        args: vec![("xs", view(DType::F64, 1)), ("out", view(DType::F32, 1))],
        globals,
        space: Space::OpenMP,
    });
    insta::assert_snapshot!("classtype_methods", out);
}

/// The CUDA space: device views, and a 1-D parallel_for through `pk::cuda_for`
/// (fixed-size teams) instead of Kokkos' RangePolicy block sizing.
#[test]
fn cuda_space_parallel_for() {
    let text = "@pk.workunit\ndef triad(i, s, a, b, c):\n    a[i] = b[i] + s * c[i]\n";
    let args = vec![
        ("s", weak(DType::F64)),
        ("a", view(DType::F64, 1)),
        ("b", view(DType::F64, 1)),
        ("c", view(DType::F64, 1)),
    ];
    let out = cpp(Case {
        text,
        pattern: Pattern::For,
        rank: 1,
        args,
        globals: module_globals(),
        space: Space::Cuda,
    });
    insta::assert_snapshot!("cuda_triad", out);
}

/// The host dispatch's last argument: whether the range is dealt out in
/// small chunks (items that may cost unequal amounts) or split in one run
/// per thread (prelude.hpp host_chunks); a `for`, or a sum when `reduce`.
fn dealt(body: &str, helper: Option<&str>, reduce: bool) -> bool {
    let mut globals = module_globals();
    if let Some(h) = helper {
        globals.insert("helper".into(), function(7, h, 1));
    }
    let (params, pattern, call) = match reduce {
        false => ("i, n, a, m", Pattern::For, "pk::host_for<"),
        true => ("i, acc, n, a, m", Pattern::Reduce, "pk::chunked_reduce<"),
    };
    let text = format!("@pk.workunit\ndef k({params}):\n{body}");
    let out = cpp(Case {
        text: &text,
        pattern,
        rank: 1,
        args: vec![
            ("n", weak(DType::I64)),
            ("a", view(DType::F64, 1)),
            ("m", view(DType::I32, 1)),
        ],
        globals,
        space: Space::OpenMP,
    });
    let line = out
        .lines()
        .find(|l| l.contains(call))
        .expect("a host dispatch");
    let args = line.split(call).nth(1).and_then(|c| c.split(')').next());
    match args.and_then(|a| a.rsplit(", ").next()) {
        Some("true") => true,
        Some("false") => false,
        _ => panic!("unexpected dispatch: {line}"),
    }
}

#[test]
fn only_items_of_unequal_cost_are_dealt_out() {
    for reduce in [false, true] {
        let add = if reduce { "acc += 1.0" } else { "a[i] += 1.0" };
        let d = |body: &str, helper| dealt(&body.replace("ADD", add), helper, reduce);
        // Even: no loop, a fixed count, a count read from a view (neighbours).
        assert!(!d("    ADD\n", None));
        assert!(!d("    for j in range(n):\n        ADD\n", None));
        assert!(!d(
            "    c = m[i]\n    for j in range(c):\n        ADD\n",
            None
        ));
        // Uneven: a triangular loop, a while loop, an early exit, a helper
        // whose loop is bounded by its parameter.
        assert!(d("    for j in range(i + 1, n):\n        ADD\n", None));
        assert!(d(
            "    j = 0\n    while a[j] > 0.0:\n        j += 1\n    ADD\n",
            None
        ));
        assert!(d(
            "    for j in range(n):\n        if a[j] > 2.0:\n            break\n    ADD\n",
            None
        ));
        let h = "@pk.function\ndef helper(p: int) -> float:\n    s: float = 0.0\n    for j in range(p):\n        s += 1.0\n    return s\n";
        assert!(d("    x = helper(i)\n    ADD\n", Some(h)));
    }
}
