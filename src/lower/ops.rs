//! Arithmetic, comparison and unary operators with NumPy promotion (NEP 50:
//! Python literals are weak), Python semantics for `//`, `%` and `**`.
use super::values::narrow;
use super::values::{float_lit, scalar};
use super::{FnCx, Lit, VTy, Val};
use crate::errors::{type_error, KResult};
use crate::frontend::ast::{BinOp, Expr, UnOp};
use crate::types::{promote_weak, DType, STy};

impl FnCx<'_> {
    pub fn binary(
        &mut self,
        op: BinOp,
        x: &Val,
        y: &Val,
        a: &Expr,
        b: &Expr,
        e: &Expr,
    ) -> KResult<Val> {
        let what = "an arithmetic operator";
        let (xs, ys) = (self.want_scalar(x, a, what)?, self.want_scalar(y, b, what)?);
        let mut r = promote_weak(xs, ys);
        let ints = [xs.dt, ys.dt]
            .iter()
            .all(|d| !d.is_float() && !d.is_complex());
        if r.dt.is_complex() && matches!(op, BinOp::FloorDiv | BinOp::Mod) {
            return type_error(
                a.span.join(b.span),
                "// and % are not defined for complex numbers",
            );
        }
        let arith = matches!(
            op,
            BinOp::Add
                | BinOp::Sub
                | BinOp::Mul
                | BinOp::FloorDiv
                | BinOp::Mod
                | BinOp::Pow
                | BinOp::LShift
                | BinOp::RShift
        );
        if r.dt == DType::Bool && arith {
            r.dt = DType::I64;
        }
        let (mut cx, cy) = (self.coerce(x, r.dt), self.coerce(y, r.dt));
        // C++ types `1 << k` and `100000 * 100000` as int: give a literal left
        // operand the result's width so the operation happens in 64 bits.
        if matches!(x.lit, Some(Lit::I(_)))
            && r.dt.is_int()
            && r.dt.size() == 8
            && matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::LShift)
        {
            cx = format!("(({}){cx})", r.dt.cpp());
        }
        let code = match op {
            BinOp::Add | BinOp::Sub | BinOp::Mul => {
                let sym = match op {
                    BinOp::Add => "+",
                    BinOp::Sub => "-",
                    _ => "*",
                };
                narrow(format!("{cx} {sym} {cy}"), r.dt)
            }
            BinOp::Div => {
                if ints {
                    r = STy {
                        dt: DType::F64,
                        weak: r.weak,
                    };
                    format!(
                        "({} / {})",
                        self.coerce(x, DType::F64),
                        self.coerce(y, DType::F64)
                    )
                } else {
                    format!("({cx} / {cy})")
                }
            }
            // Integer versions are templates; the float ones are overloads.
            BinOp::FloorDiv | BinOp::Mod => {
                let f = if op == BinOp::Mod { "mod" } else { "floordiv" };
                if r.dt.is_float() {
                    format!("pk::{f}({cx}, {cy})")
                } else if self.numpy_division {
                    format!("pk::{f}_or_zero<{}>({cx}, {cy})", r.dt.cpp())
                } else if !matches!(y.lit, Some(Lit::I(k)) if k != 0) {
                    // C++ traps (SIGFPE) where Python raises: test the divisor,
                    // and say where (file:line and the expression).
                    let loc = self.src.locate(e.span);
                    let text = self
                        .src
                        .text
                        .get(e.span.start as usize..e.span.end as usize);
                    let at = super::values::cpp_string(&format!(
                        "{}:{}: {}",
                        loc.filename,
                        loc.line,
                        text.unwrap_or("?")
                    ));
                    self.unit.zero_div = true;
                    format!("pk::{f}_checked<{}>({cx}, {cy}, {at})", r.dt.cpp())
                } else {
                    format!("pk::{f}<{}>({cx}, {cy})", r.dt.cpp())
                }
            }
            BinOp::Pow if r.dt.is_complex() => format!("Kokkos::pow({cx}, {cy})"),
            BinOp::Pow => {
                if ints && matches!(y.lit, Some(Lit::I(k)) if k < 0) {
                    // Python: an int to a negative power is a float (2 ** -1 == 0.5).
                    r = STy {
                        dt: DType::F64,
                        weak: r.weak,
                    };
                    format!(
                        "pk::km::pow({}, {})",
                        self.coerce(x, DType::F64),
                        self.coerce(y, DType::F64)
                    )
                } else if ints && !r.dt.is_float() {
                    format!("pk::ipow<{}>({cx}, {cy})", r.dt.cpp())
                } else if let Some(Lit::I(k @ 2..=16)) = y.lit {
                    format!("pk::powi<{k}>({cx})")
                } else {
                    format!("pk::km::pow({cx}, {cy})")
                }
            }
            BinOp::LShift | BinOp::RShift | BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => {
                if !ints {
                    return type_error(
                        a.span.join(b.span),
                        "bitwise operators need integer (or bool) operands",
                    );
                }
                if r.dt.is_float() {
                    // uint64 with a signed integer: NumPy has no common integer type.
                    return type_error(
                        a.span.join(b.span),
                        format!(
                            "bitwise operators on {} and {} have no common integer type (NumPy refuses them too); convert one operand with int(...)",
                            xs.dt.name(),
                            ys.dt.name()
                        ),
                    );
                }
                let sym = match op {
                    BinOp::LShift => "<<",
                    BinOp::RShift => ">>",
                    BinOp::BitAnd => "&",
                    BinOp::BitOr => "|",
                    _ => "^",
                };
                narrow(format!("{cx} {sym} {cy}"), r.dt)
            }
        };
        Ok(scalar(code, r))
    }

    pub(super) fn unary(&mut self, op: UnOp, a: &Expr) -> KResult<Val> {
        let v = self.expr(a)?;
        let s = self.want_scalar(&v, a, "a unary operator")?;
        Ok(match op {
            UnOp::Not => scalar(
                format!("(!{})", self.coerce(&v, DType::Bool)),
                STy::strong(DType::Bool),
            ),
            UnOp::Pos => v,
            UnOp::Neg => {
                let dt = if s.dt == DType::Bool {
                    DType::I64
                } else {
                    s.dt
                };
                if let Some(Lit::I(i)) = v.lit {
                    return Ok(Val {
                        code: format!("({})", -i),
                        ty: VTy::S(STy { dt, weak: s.weak }),
                        lit: Some(Lit::I(-i)),
                    });
                }
                if let Some(Lit::F(f)) = v.lit {
                    return Ok(Val {
                        code: float_lit(-f, dt),
                        ty: VTy::S(STy { dt, weak: s.weak }),
                        lit: Some(Lit::F(-f)),
                    });
                }
                scalar(
                    narrow(format!("-{}", self.coerce(&v, dt)), dt),
                    STy { dt, weak: s.weak },
                )
            }
            UnOp::Invert => {
                if s.dt.is_float() || s.dt.is_complex() {
                    return type_error(a.span, "'~' needs an integer operand");
                }
                let dt = if s.dt == DType::Bool {
                    DType::I64
                } else {
                    s.dt
                };
                scalar(
                    narrow(format!("~{}", self.coerce(&v, dt)), dt),
                    STy { dt, weak: s.weak },
                )
            }
        })
    }
}
