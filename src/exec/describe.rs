//! A launch as a trace records it (`trace.rs`): the workunit's identity,
//! pattern, policy and space, and each argument's type, geometry, buffer
//! identity and byte range (so aliasing is kept), or its value. Serialized
//! straight from borrowed fields (serde derive, no JSON value tree: a trace
//! records every launch, and building a tree per launch cost more than the
//! launch).
use super::args::ArgVal;
use super::launch::Launch;
use crate::types::{ArgTy, Pattern, Space};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use std::borrow::Cow;

#[derive(Serialize)]
struct Event<'a> {
    workunit: Workunit<'a>,
    label: &'a str,
    pattern: Cow<'static, str>,
    space: &'static str,
    policy: Policy<'a>,
    args: Args<'a>,
    /// A workunit made at run time (a lambda kernel) has no file to come
    /// back to: its source travels with the trace.
    #[serde(skip_serializing_if = "Option::is_none")]
    source: Option<&'a str>,
    /// Files holding the contents of host buffers this launch reads first.
    #[serde(skip_serializing_if = "Reload::is_empty")]
    reload: Reload<'a>,
}

#[derive(Serialize)]
struct Workunit<'a> {
    name: &'a str,
    file: &'a str,
    line: u32,
    source_hash: &'a str,
    method: bool,
}

#[derive(Serialize)]
struct Policy<'a> {
    kind: &'static str,
    begin: &'a [i64],
    end: &'a [i64],
}

struct Args<'a>(&'a Launch);

/// One argument; `kind` says which (the struct names stay out of the JSON).
#[derive(Serialize)]
#[serde(untagged)]
enum Arg<'a> {
    View {
        name: &'a str,
        kind: &'static str,
        dtype: &'static str,
        rank: usize,
        layout: &'static str,
        atomic: bool,
        shape: &'a [i64],
        strides: &'a [i64],
        buffer: usize,
        offset: isize,
        bytes: [isize; 2],
    },
    Pool {
        name: &'a str,
        kind: &'static str,
        stream: u64,
    },
    Scalar {
        name: &'a str,
        kind: &'static str,
        dtype: &'static str,
        weak: bool,
        value: Value,
    },
    Unknown {
        name: &'a str,
        kind: &'static str,
    },
}

/// A scalar's value: a number, a complex as `[re, im]` (a non-finite float is null).
#[derive(Serialize)]
#[serde(untagged)]
enum Value {
    Int(i64),
    Float(f64),
    Complex([f64; 2]),
    None,
}

impl<'a> Arg<'a> {
    fn of(name: &'a str, v: &'a ArgVal, t: &'a ArgTy) -> Arg<'a> {
        match (v, t) {
            (ArgVal::View(x), ArgTy::View(vt)) => {
                let r = vt.rank as usize;
                // Borrowed memory is named by the block it lies in.
                let shift = x.alloc.trace_shift();
                Arg::View {
                    name,
                    kind: "view",
                    dtype: vt.dtype.name(),
                    rank: r,
                    layout: layout_name(vt.layout),
                    atomic: vt.atomic,
                    shape: &x.raw.extent[..r],
                    strides: &x.raw.stride[..r],
                    buffer: x.alloc.trace_id(),
                    offset: x.offset + shift,
                    bytes: [x.range.0 + shift, x.range.1 + shift],
                }
            }
            (ArgVal::Int(i), ArgTy::Rng) => Arg::Pool {
                name,
                kind: "random_pool",
                stream: *i as u64,
            },
            (val, ArgTy::Scalar { dtype, weak }) => Arg::Scalar {
                name,
                kind: "scalar",
                dtype: dtype.name(),
                weak: *weak,
                value: match val {
                    ArgVal::Int(i) => Value::Int(*i),
                    ArgVal::Float(f) => Value::Float(*f),
                    ArgVal::Complex(re, im) => Value::Complex([*re, *im]),
                    ArgVal::View(_) => Value::None,
                },
            },
            _ => Arg::Unknown {
                name,
                kind: "unknown",
            },
        }
    }
}

impl Serialize for Args<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let l = self.0;
        let mut seq = s.serialize_seq(Some(l.vals.len()))?;
        for ((name, v), t) in l.names.iter().zip(&l.vals).zip(&l.key.args) {
            seq.serialize_element(&Arg::of(name, v, t))?;
        }
        seq.end()
    }
}

/// `{"<buffer>": "<file>", ...}`.
struct Reload<'a>(&'a [(usize, String)]);

impl Reload<'_> {
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for Reload<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (buffer, file) in self.0 {
            m.serialize_entry(&buffer.to_string(), file)?;
        }
        m.end()
    }
}

fn layout_name(l: crate::types::Layout) -> &'static str {
    match l {
        crate::types::Layout::Right => "right",
        crate::types::Layout::Left => "left",
        crate::types::Layout::Stride => "stride",
    }
}

fn space_name(s: Space) -> &'static str {
    match s {
        Space::Serial => "Serial",
        Space::OpenMP => "OpenMP",
        Space::Cuda => "Cuda",
        Space::Debug => "Debug",
    }
}

/// The fields of a `launch` event as JSON text without the braces (the
/// caller adds `seq` and the time it took to record); `reload` names the
/// files holding host buffers' contents.
pub fn describe(l: &Launch, reload: &[(usize, String)]) -> String {
    let wu = l.workunit();
    let pattern = match l.key.pattern {
        Pattern::For => Cow::Borrowed("for"),
        Pattern::Reduce => Cow::Borrowed("reduce"),
        Pattern::Scan => Cow::Borrowed("scan"),
        Pattern::Reducer(r) => Cow::Owned(format!("reduce:{}", r.name())),
    };
    let kind = match l.key.rank {
        0 => "team",
        1 => "range",
        _ => "mdrange",
    };
    let event = Event {
        workunit: Workunit {
            name: &wu.name,
            file: &wu.src.filename,
            line: wu.src.first_line,
            source_hash: wu.source_digest(),
            method: l.is_method,
        },
        label: &l.label,
        pattern,
        space: space_name(l.key.space),
        policy: Policy {
            kind,
            begin: &l.lo,
            end: &l.hi,
        },
        args: Args(l),
        source: wu
            .src
            .filename
            .starts_with('<')
            .then_some(wu.src.text.as_str()),
        reload: Reload(reload),
    };
    fields(&event)
}

/// `value` (a struct) as JSON text without its braces, to join other fields.
pub fn fields<T: Serialize>(value: &T) -> String {
    let mut out = Vec::with_capacity(512);
    // Writing to a Vec fails only on a map key that is not a string (none here).
    if serde_json::to_writer(&mut out, value).is_err() || out.len() < 2 {
        return String::new();
    }
    out.pop();
    // serde_json writes UTF-8 only.
    String::from_utf8(out.split_off(1)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Named<'a> {
        name: &'a str,
        n: f64,
    }

    #[test]
    fn fields_are_json_without_braces_and_names_are_escaped() {
        for s in [
            "plain",
            "C:\\dir\\f.py",
            "say \"hi\"\n\tnow\r",
            "\u{1}bell\u{1f}",
            "é∑",
        ] {
            let text = format!("{{{}}}", fields(&Named { name: s, n: 0.5 }));
            let back: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(back["name"], s, "{s:?}");
            assert_eq!(back["n"], 0.5);
        }
        assert_eq!(
            fields(&Named {
                name: "a",
                n: f64::NAN
            }),
            r#""name":"a","n":null"#
        );
    }
}
