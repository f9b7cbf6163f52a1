//! A launch as a trace records it (`trace.rs`): the workunit's identity,
//! pattern, policy and space, and each argument's type, geometry, buffer
//! identity and byte range (so aliasing is kept), or its value.
use super::args::ArgVal;
use super::launch::Launch;
use crate::types::{ArgTy, Pattern};
use serde_json::{json, Value};

pub fn describe(l: &Launch) -> Value {
    let wu = l.workunit();
    let hash = blake3::hash(wu.src.text.as_bytes()).to_hex()[..16].to_string();
    let pattern = match l.key.pattern {
        Pattern::For => "for".to_string(),
        Pattern::Reduce => "reduce".to_string(),
        Pattern::Scan => "scan".to_string(),
        Pattern::Reducer(r) => format!("reduce:{}", r.name()),
    };
    let args: Vec<Value> = l
        .names
        .iter()
        .zip(&l.vals)
        .zip(&l.key.args)
        .map(|((name, v), t)| match (v, t) {
            (ArgVal::View(x), ArgTy::View(vt)) => {
                let r = vt.rank as usize;
                json!({
                    "name": name, "kind": "view", "dtype": vt.dtype.name(), "rank": r,
                    "layout": format!("{:?}", vt.layout).to_lowercase(), "atomic": vt.atomic,
                    "shape": &x.raw.extent[..r], "strides": &x.raw.stride[..r],
                    "buffer": x.alloc.id(), "offset": x.offset, "bytes": [x.range.0, x.range.1],
                })
            }
            (ArgVal::Int(i), ArgTy::Rng) => json!({"name": name, "kind": "random_pool", "stream": *i as u64}),
            (ArgVal::Int(i), ArgTy::Scalar { dtype, weak }) => {
                json!({"name": name, "kind": "scalar", "dtype": dtype.name(), "weak": weak, "value": i})
            }
            (ArgVal::Float(f), ArgTy::Scalar { dtype, weak }) => {
                json!({"name": name, "kind": "scalar", "dtype": dtype.name(), "weak": weak, "value": f})
            }
            (ArgVal::Complex(re, im), ArgTy::Scalar { dtype, weak }) => {
                json!({"name": name, "kind": "scalar", "dtype": dtype.name(), "weak": weak, "value": [re, im]})
            }
            _ => json!({"name": name, "kind": "unknown"}),
        })
        .collect();
    json!({
        "workunit": {
            "name": wu.name, "file": wu.src.filename, "line": wu.src.first_line,
            "source_hash": hash, "method": l.is_method,
        },
        "label": &*l.label,
        "pattern": pattern,
        "space": format!("{:?}", l.key.space),
        "policy": {"kind": match l.key.rank { 0 => "team", 1 => "range", _ => "mdrange" }, "begin": l.lo, "end": l.hi},
        "args": args,
    })
}
