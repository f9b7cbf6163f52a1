//! Small value builders shared by the lowering files: literals, scalar values,
//! C++ string literals, classtype fields.
use super::{cpp_ident, VTy, Val};
use crate::types::{promote, DType, STy, Ty};

pub fn float_lit(x: f64, dt: DType) -> String {
    let body = if x.is_nan() {
        "NAN".to_string()
    } else if x.is_infinite() {
        if x > 0.0 {
            "INFINITY".into()
        } else {
            "(-INFINITY)".into()
        }
    } else {
        let s = format!("{x:?}");
        if s.contains('.') || s.contains('e') {
            s
        } else {
            format!("{s}.0")
        }
    };
    if dt == DType::F32 && !x.is_nan() && !x.is_infinite() {
        format!("{body}f")
    } else if x.is_nan() || x.is_infinite() {
        format!("(({})({}))", dt.cpp(), body)
    } else {
        body
    }
}

pub fn scalar(code: String, s: STy) -> Val {
    Val {
        code,
        ty: VTy::S(s),
        lit: None,
    }
}

/// A classtype field read: `p.x`.
pub fn field_val(base: &Val, attr: &str, ty: Ty) -> Val {
    let code = format!("{}.{}", base.code, cpp_ident(attr));
    match ty {
        Ty::Scalar(d) => Val {
            code,
            ty: VTy::S(STy::strong(d)),
            lit: None,
        },
        Ty::Class(k) => Val {
            code,
            ty: VTy::Class(k),
            lit: None,
        },
        _ => Val {
            code,
            ty: VTy::S(STy::strong(DType::F64)),
            lit: None,
        },
    }
}

pub fn cpp_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A weak Python int literal becomes int64 and a weak float double, as in NumPy.
pub fn default_dtype(s: STy) -> DType {
    s.dt
}

/// Python rebinding an int local to a float makes it a float; keep the wider kind.
pub fn widen(a: DType, b: DType) -> DType {
    if a == b {
        return a;
    }
    if a.is_complex() || b.is_complex() {
        return promote(a, b);
    }
    match (a.is_float(), b.is_float()) {
        (false, true) => promote(a, b),
        (true, false) => a,
        (true, true) => promote(a, b),
        // Python ints do not overflow; keep the wider integer.
        (false, false) => {
            if a.size() >= b.size() {
                a
            } else {
                b
            }
        }
    }
}

/// C++ promotes narrow integers to int; cast back so wrap-around matches NumPy.
pub fn narrow(code: String, dt: DType) -> String {
    if dt.size() < 4 && dt != DType::F32 {
        format!("({})({code})", dt.cpp())
    } else {
        format!("({code})")
    }
}
