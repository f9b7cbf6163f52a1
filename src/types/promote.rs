//! NumPy's promotion rules (NEP 50: Python literals are "weak" and take the
//! other operand's dtype).
use super::dtype::DType;

fn int_rank(d: DType) -> u8 {
    d.size() as u8
}

/// NumPy's result dtype for two strong (array) operands.
pub fn promote(a: DType, b: DType) -> DType {
    use DType::*;
    if a == b {
        return a;
    }
    if a == Bool {
        return b;
    }
    if b == Bool {
        return a;
    }
    // Complex with anything: complex64 unless the real parts need float64.
    if a.is_complex() || b.is_complex() {
        return if promote(a.real(), b.real()) == F64 {
            C128
        } else {
            C64
        };
    }
    match (a.is_float(), b.is_float()) {
        (true, true) => {
            if a == F64 || b == F64 {
                F64
            } else {
                F32
            }
        }
        (true, false) | (false, true) => {
            let (f, i) = if a.is_float() { (a, b) } else { (b, a) };
            if f == F64 || i.size() >= 4 {
                F64
            } else {
                F32
            }
        }
        (false, false) => {
            if a.is_signed() == b.is_signed() {
                return if int_rank(a) >= int_rank(b) { a } else { b };
            }
            let (s, u) = if a.is_signed() { (a, b) } else { (b, a) };
            if s.size() > u.size() {
                s
            } else {
                match u.size() {
                    1 => I16,
                    2 => I32,
                    4 => I64,
                    _ => F64,
                }
            }
        }
    }
}

/// A scalar type during expression typing: `weak` marks Python literals and
/// Python-number arguments, which adopt the other operand's dtype (NEP 50).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct STy {
    pub dt: DType,
    pub weak: bool,
}

impl STy {
    pub fn strong(dt: DType) -> Self {
        STy { dt, weak: false }
    }
    pub fn weak(dt: DType) -> Self {
        STy { dt, weak: true }
    }
}

pub fn promote_weak(a: STy, b: STy) -> STy {
    match (a.weak, b.weak) {
        (false, false) | (true, true) => STy {
            dt: promote(a.dt, b.dt),
            weak: a.weak && b.weak,
        },
        (true, false) => STy::strong(absorb(b.dt, a.dt)),
        (false, true) => STy::strong(absorb(a.dt, b.dt)),
    }
}

/// A weak Python number `w` meeting a strong dtype `s`.
fn absorb(s: DType, w: DType) -> DType {
    if w.is_complex() {
        // A Python complex keeps float32's precision, else it is complex128.
        return if matches!(s, DType::F32 | DType::C64) {
            DType::C64
        } else {
            DType::C128
        };
    }
    if s.is_complex() {
        return s;
    }
    if w.is_float() && !s.is_float() {
        DType::F64
    } else if w.is_int() && s == DType::Bool {
        DType::I64
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use DType::*;

    #[test]
    fn numpy_promotion_table() {
        assert_eq!(promote(I32, I64), I64);
        assert_eq!(promote(I32, F32), F64);
        assert_eq!(promote(I16, F32), F32);
        assert_eq!(promote(U8, I8), I16);
        assert_eq!(promote(U32, I32), I64);
        assert_eq!(promote(U64, I64), F64);
        assert_eq!(promote(F32, F64), F64);
        assert_eq!(promote(Bool, U16), U16);
        assert_eq!(promote(C64, F32), C64);
        assert_eq!(promote(C64, F64), C128);
        assert_eq!(promote(C64, I32), C128);
        assert_eq!(promote(C64, I16), C64);
        assert_eq!(promote(C128, C64), C128);
    }

    #[test]
    fn weak_literals_take_the_array_dtype() {
        assert_eq!(promote_weak(STy::strong(F32), STy::weak(F64)).dt, F32);
        assert_eq!(promote_weak(STy::strong(I32), STy::weak(I64)).dt, I32);
        assert_eq!(promote_weak(STy::strong(I32), STy::weak(F64)).dt, F64);
        assert_eq!(promote_weak(STy::strong(F32), STy::weak(C128)).dt, C64);
        assert_eq!(promote_weak(STy::strong(I8), STy::weak(C128)).dt, C128);
        assert_eq!(promote_weak(STy::strong(C64), STy::weak(F64)).dt, C64);
    }
}
