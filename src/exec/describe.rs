//! A launch as a trace records it (`trace.rs`): the workunit's identity,
//! pattern, policy and space, and each argument's type, geometry, buffer
//! identity and byte range (so aliasing is kept), or its value. Written as
//! JSON text directly: a trace records every launch, and building a JSON
//! value tree per launch cost more than the launch.
use super::args::ArgVal;
use super::launch::Launch;
use crate::types::{ArgTy, Pattern};
use std::fmt::Write;

/// `s` as a JSON string, written in place (serde_json's escaper writes only
/// to an `io::Write`: through it, each name cost a String of its own).
pub(crate) struct Quoted<'a>(&'a str);

impl std::fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("\"")?;
        let mut plain = 0; // start of the run of characters written as they are
        for (at, c) in self.0.char_indices() {
            let escaped = match c {
                '"' => "\\\"",
                '\\' => "\\\\",
                '\n' => "\\n",
                '\t' => "\\t",
                '\r' => "\\r",
                c if c < ' ' => "",
                _ => continue,
            };
            f.write_str(&self.0[plain..at])?;
            match escaped {
                "" => write!(f, "\\u{:04x}", c as u32)?,
                e => f.write_str(e)?,
            }
            plain = at + c.len_utf8();
        }
        f.write_str(&self.0[plain..])?;
        f.write_str("\"")
    }
}

pub(crate) fn quoted(s: &str) -> Quoted<'_> {
    Quoted(s)
}

/// `[a,b,...]`, written in place.
struct List<'a>(&'a [i64]);

impl std::fmt::Display for List<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[")?;
        for (k, x) in self.0.iter().enumerate() {
            if k > 0 {
                f.write_str(",")?;
            }
            write!(f, "{x}")?;
        }
        f.write_str("]")
    }
}

fn list(xs: &[i64]) -> List<'_> {
    List(xs)
}

/// The fields of a `launch` event (without braces; the caller adds `seq`).
pub fn describe(l: &Launch) -> String {
    let wu = l.workunit();
    let pattern = match l.key.pattern {
        Pattern::For => "for".to_string(),
        Pattern::Reduce => "reduce".to_string(),
        Pattern::Scan => "scan".to_string(),
        Pattern::Reducer(r) => format!("reduce:{}", r.name()),
    };
    let kind = match l.key.rank {
        0 => "team",
        1 => "range",
        _ => "mdrange",
    };
    let mut s = String::with_capacity(512);
    let _ = write!(
        s,
        r#""workunit":{{"name":{},"file":{},"line":{},"source_hash":"{}","method":{}}},"label":{},"pattern":"{pattern}","space":"{:?}","policy":{{"kind":"{kind}","begin":{},"end":{}}},"args":["#,
        quoted(&wu.name),
        quoted(&wu.src.filename),
        wu.src.first_line,
        wu.source_digest(),
        l.is_method,
        quoted(&l.label),
        l.key.space,
        list(&l.lo),
        list(&l.hi),
    );
    for (k, ((name, v), t)) in l.names.iter().zip(&l.vals).zip(&l.key.args).enumerate() {
        if k > 0 {
            s.push(',');
        }
        let name = quoted(name);
        let _ = match (v, t) {
            (ArgVal::View(x), ArgTy::View(vt)) => {
                let r = vt.rank as usize;
                // Borrowed memory is named by the block it lies in.
                let shift = x.alloc.trace_shift();
                write!(
                    s,
                    r#"{{"name":{name},"kind":"view","dtype":"{}","rank":{r},"layout":"{}","atomic":{},"shape":{},"strides":{},"buffer":{},"offset":{},"bytes":[{},{}]}}"#,
                    vt.dtype.name(),
                    format!("{:?}", vt.layout).to_lowercase(),
                    vt.atomic,
                    list(&x.raw.extent[..r]),
                    list(&x.raw.stride[..r]),
                    x.alloc.trace_id(),
                    x.offset + shift,
                    x.range.0 + shift,
                    x.range.1 + shift
                )
            }
            (ArgVal::Int(i), ArgTy::Rng) => {
                write!(
                    s,
                    r#"{{"name":{name},"kind":"random_pool","stream":{}}}"#,
                    *i as u64
                )
            }
            (val, ArgTy::Scalar { dtype, weak }) => {
                let value = match val {
                    ArgVal::Int(i) => i.to_string(),
                    ArgVal::Float(f) => serde_json::json!(f).to_string(),
                    ArgVal::Complex(re, im) => serde_json::json!([re, im]).to_string(),
                    ArgVal::View(_) => "null".to_string(),
                };
                write!(
                    s,
                    r#"{{"name":{name},"kind":"scalar","dtype":"{}","weak":{weak},"value":{value}}}"#,
                    dtype.name()
                )
            }
            _ => write!(s, r#"{{"name":{name},"kind":"unknown"}}"#),
        };
    }
    s.push(']');
    // A workunit made at run time (a lambda kernel) has no file to come back
    // to: its source travels with the trace.
    if wu.src.filename.starts_with('<') {
        let _ = write!(s, r#","source":{}"#, quoted(&wu.src.text));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_paths_are_json_strings() {
        for s in [
            "plain",
            "C:\\dir\\f.py",
            "say \"hi\"\n\tnow\r",
            "\u{1}bell\u{1f}",
            "é∑",
        ] {
            let ours = quoted(s).to_string();
            assert_eq!(
                ours,
                serde_json::Value::String(s.into()).to_string(),
                "{s:?}"
            );
            assert_eq!(serde_json::from_str::<String>(&ours).unwrap(), s);
        }
        assert_eq!(list(&[3, -1, 0]).to_string(), "[3,-1,0]");
        assert_eq!(list(&[]).to_string(), "[]");
    }
}
