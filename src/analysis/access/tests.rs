use super::*;
use crate::frontend::parse::parse_function;
use crate::types::{DType, Layout, ViewTy};

fn v(n: &str, rank: u8) -> (String, ArgTy) {
    (
        n.into(),
        ArgTy::View(ViewTy {
            dtype: DType::F64,
            rank,
            layout: Layout::Right,
            atomic: false,
        }),
    )
}

#[test]
fn read_then_store_same_element_is_a_write() {
    let f = parse_function("def k(i, a):\n    x = a[i]\n    a[i] = x + 1\n").unwrap();
    let acc = view_access(&f, &[v("a", 1)], Some("i"), None);
    assert_eq!(
        acc["a"],
        Access {
            read: true,
            write: true,
            at_work_index: true,
            off_index: None,
            always_written: true,
            direct: true,
        }
    );
}

#[test]
fn copy_reads_src_writes_dst_and_ignores_unused() {
    let f = parse_function("def k(i, dst, src, unused):\n    dst[i] = src[i]\n").unwrap();
    let acc = view_access(
        &f,
        &[v("dst", 1), v("src", 1), v("unused", 1)],
        Some("i"),
        None,
    );
    assert_eq!(
        acc["dst"],
        Access {
            read: false,
            write: true,
            at_work_index: true,
            off_index: None,
            always_written: true,
            direct: true,
        }
    );
    assert_eq!(
        acc["src"],
        Access {
            read: true,
            write: false,
            at_work_index: true,
            off_index: None,
            always_written: false,
            direct: true,
        }
    );
    assert!(!acc.contains_key("unused"));
}

#[test]
fn views_given_to_functions_and_atomics_are_read_and_written() {
    let f = parse_function(
        "def k(i, a, b, c):\n    f(a)\n    pk.atomic_add(b, [0], 1)\n    r = c[i]\n",
    )
    .unwrap();
    let acc = view_access(&f, &[v("a", 1), v("b", 1), v("c", 2)], Some("i"), None);
    assert!(acc["a"].write && acc["b"].write && acc["c"].write);
}

#[test]
fn only_plain_work_index_accesses_qualify() {
    let src = "def k(i, a, b, c, d, e):\n    a[i] = b[i + 1]\n    c[0] = 1\n    for j in range(i):\n        d[j] = 0\n    e[i] = e[i] * 2\n";
    let f = parse_function(src).unwrap();
    let acc = view_access(
        &f,
        &[v("a", 1), v("b", 1), v("c", 1), v("d", 1), v("e", 1)],
        Some("i"),
        None,
    );
    assert!(acc["a"].at_work_index && acc["e"].at_work_index);
    assert!(!acc["b"].at_work_index && !acc["c"].at_work_index && !acc["d"].at_work_index);
}

#[test]
fn a_method_that_cannot_be_followed_touches_every_member() {
    // `self.put(i, 1.0)` may write `self.a` inside the method.
    let f = parse_function("def init(self, i):\n    self.put(i, 1.0)\n").unwrap();
    let acc = view_access(&f, &[v("a", 1), v("b", 2)], Some("i"), None);
    for n in ["a", "b"] {
        assert!(acc[n].read && acc[n].write && !acc[n].at_work_index, "{n}");
    }
}

/// Functions by name, each resolving its own calls through the same table.
struct Table(BTreeMap<String, FunctionDef>);

impl Callees for Table {
    fn callee(&self, name: &str) -> Option<(&FunctionDef, &dyn Callees)> {
        self.0.get(name).map(|d| (d, self as &dyn Callees))
    }
}

fn table(fs: &[(&str, &str)]) -> Table {
    Table(
        fs.iter()
            .map(|(n, s)| (n.to_string(), parse_function(s).unwrap()))
            .collect(),
    )
}

#[test]
fn method_bodies_are_followed_at_any_depth() {
    let t = table(&[
        (
            "self.put",
            "def put(self, j, x):\n    self.a[j] = x\n    self.deeper(j)\n",
        ),
        ("self.deeper", "def deeper(self, k):\n    y = self.c[k]\n"),
    ]);
    let f = parse_function("def init(self, i):\n    self.put(i, self.b[i])\n").unwrap();
    let acc = view_access(
        &f,
        &[v("a", 1), v("b", 1), v("c", 1), v("d", 1)],
        Some("i"),
        Some(&t),
    );
    assert!(acc["a"].write && !acc["a"].read && acc["a"].at_work_index);
    assert!(acc["b"].read && !acc["b"].write && acc["b"].at_work_index);
    assert!(acc["c"].read && !acc["c"].write && acc["c"].at_work_index);
    assert!(
        !acc.contains_key("d"),
        "a member no body touches is not accessed"
    );
}

#[test]
fn helper_parameters_bound_to_views_carry_their_accesses() {
    let t = table(&[("scale", "def scale(v, w, j, s):\n    v[j] = w[j + 1] * s\n")]);
    let f = parse_function("def k(i, x, y):\n    scale(x, y, i, 2.0)\n").unwrap();
    let acc = view_access(&f, &[v("x", 1), v("y", 1)], Some("i"), Some(&t));
    assert!(acc["x"].write && !acc["x"].read && acc["x"].at_work_index);
    assert!(acc["y"].read && !acc["y"].write && !acc["y"].at_work_index);
    // Reports point at the call in the kernel's own source.
    assert_eq!(acc["y"].off_index.unwrap().start, 20);
}

#[test]
fn a_rebound_index_or_recursion_is_conservative() {
    let t = table(&[
        ("f", "def f(v, j):\n    j = j + 1\n    v[j] = 0\n"),
        ("g", "def g(v, j):\n    g(v, j)\n"),
    ]);
    let f = parse_function("def k(i, x, y):\n    f(x, i)\n    g(y, i)\n").unwrap();
    let acc = view_access(&f, &[v("x", 1), v("y", 1)], Some("i"), Some(&t));
    assert!(acc["x"].write && !acc["x"].at_work_index);
    assert!(acc["y"].read && acc["y"].write && !acc["y"].at_work_index);
    let f = parse_function("def k(i, x):\n    i = i + 1\n    x[i] = 0\n").unwrap();
    let acc = view_access(&f, &[v("x", 1)], Some("i"), None);
    assert!(!acc["x"].at_work_index);
}

#[test]
fn a_store_under_a_condition_or_after_a_return_is_not_always_written() {
    let f =
        parse_function("def k(i, n, x, y):\n    if i + 1 < n:\n        y[i] = x[i + 1]\n").unwrap();
    let acc = view_access(&f, &[v("x", 1), v("y", 1)], Some("i"), None);
    assert!(acc["y"].write && !acc["y"].always_written);
    let f =
        parse_function("def k(i, n, y):\n    if i > n:\n        return\n    y[i] = 1.0\n").unwrap();
    let acc = view_access(&f, &[v("y", 1)], Some("i"), None);
    assert!(acc["y"].write && !acc["y"].always_written);
    let f = parse_function("def k(i, y):\n    y[i] = 1.0\n").unwrap();
    let acc = view_access(&f, &[v("y", 1)], Some("i"), None);
    assert!(acc["y"].always_written);
}

#[test]
fn accesses_inside_called_functions_are_not_direct() {
    let t = table(&[("put", "def put(v, j, x):\n    v[j] = x\n")]);
    let f = parse_function("def k(i, a, b):\n    put(a, i, 1.0)\n    b[i] = 2.0\n").unwrap();
    let acc = view_access(&f, &[v("a", 1), v("b", 1)], Some("i"), Some(&t));
    assert!(acc["a"].write && acc["a"].at_work_index && !acc["a"].direct);
    assert!(acc["b"].write && acc["b"].direct);
}
