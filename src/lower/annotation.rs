//! Types from annotations (`pk.View1D[pk.double]`, `int`, `pk.Acc[...]`,
//! classtype names), resolved against the kernel's globals.
use super::names::{self, Global, Globals};
use crate::errors::{type_error, KResult};
use crate::frontend::ast::{Expr, ExprKind};
use crate::types::{DType, Ty, ViewTy};

/// Turns an annotation expression into a type; shared by parameters and locals.
pub fn annotation_type(ann: &Expr, globals: &Globals) -> KResult<Ty> {
    let bad = || {
        type_error(
            ann.span,
            "unsupported annotation: use int, float, bool, a pk dtype (pk.double, pk.int32, ...), pk.ViewND[dtype] or pk.Acc[dtype]",
        )
    };
    match &ann.kind {
        ExprKind::Name(n) => match n.as_str() {
            "int" => Ok(Ty::Scalar(DType::I32)),
            "float" => Ok(Ty::Scalar(DType::F64)),
            "bool" => Ok(Ty::Scalar(DType::Bool)),
            "complex" => Ok(Ty::Scalar(DType::C128)),
            other => match globals.get(other) {
                Some(Global::ClassType(c)) => Ok(Ty::Class(c.name.clone())),
                Some(Global::DTypeConst(d)) => Ok(Ty::Scalar(*d)),
                // `from pykokkos import double`: annotations are not among the
                // names the resolver sees, so accept the dtype names themselves.
                None => match names::dtype_by_pk_name(other) {
                    Some(d) => Ok(Ty::Scalar(d)),
                    None => bad(),
                },
                _ => bad(),
            },
        },
        ExprKind::Attr(..) => match ann.dotted() {
            Some((m, a)) if names::is_pk_module(globals, m) || m == "np" || m == "numpy" => {
                match names::dtype_by_pk_name(a) {
                    Some(d) => Ok(Ty::Scalar(d)),
                    None => bad(),
                }
            }
            _ => bad(),
        },
        ExprKind::Index(base, items) => {
            // `pk.View2D[pk.double, pk.LayoutLeft]`: the layout comes from the
            // argument itself, so items after the dtype are not needed.
            let inner = match items.as_slice() {
                [crate::frontend::ast::Index::At(e), ..] => annotation_type(e, globals)?,
                _ => return bad(),
            };
            let dt = match inner {
                Ty::Scalar(d) => d,
                _ => return bad(),
            };
            let head = match &base.kind {
                ExprKind::Attr(..) => base.dotted().map(|(_, a)| a.to_string()),
                ExprKind::Name(n) => Some(n.clone()),
                _ => None,
            };
            match head.as_deref() {
                Some("Acc") => Ok(Ty::Scalar(dt)),
                Some(h) if h.starts_with("ScratchView") && h.ends_with('D') => {
                    match h["ScratchView".len()..h.len() - 1].parse::<u8>() {
                        Ok(rank @ 1..=3) => Ok(Ty::View(ViewTy {
                            dtype: dt,
                            rank,
                            layout: crate::types::Layout::Stride,
                            atomic: false,
                        })),
                        _ => bad(),
                    }
                }
                Some(h) if h.starts_with("View") && h.ends_with('D') => {
                    let rank: u8 = h[4..h.len() - 1]
                        .parse()
                        .map_err(|_| ())
                        .or_else(|_| bad().map(|_: Ty| 0))?;
                    if !(1..=8).contains(&rank) {
                        return bad();
                    }
                    Ok(Ty::View(ViewTy {
                        dtype: dt,
                        rank,
                        layout: crate::types::Layout::Right,
                        atomic: false,
                    }))
                }
                _ => bad(),
            }
        }
        ExprKind::Str(_) => bad(),
        _ => bad(),
    }
}
