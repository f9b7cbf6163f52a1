//! A pending launch that fails: it and everything that depends on it are
//! dropped (their lazy results then raise), and the error names the launch
//! site and what was dropped; unrelated pending work stays pending.
use super::graph::{self, Node};
use crate::errors::PkError;
use std::sync::Arc;

/// Error of a failed launch (`rest[0]`; `rest[1..]` of its region did not
/// run): drops what depended on them and names the launch site.
pub fn fail(rest: &[Arc<Node>], e: PkError) -> PkError {
    let node = &rest[0];
    let mut dropped: Vec<String> = Vec::new();
    for d in graph::drop_dependents(rest) {
        fail_slot(&d, "an earlier launch it depends on failed");
        dropped.push(format!("'{}' at {}", d.launch.label, d.origin.site()));
    }
    for d in &rest[1..] {
        fail_slot(d, "an earlier launch of its fused region failed");
        dropped.push(format!("'{}' at {}", d.launch.label, d.origin.site()));
    }
    fail_slot(node, &e.to_string());
    let site = node.origin.site();
    let mut msg = format!(
        "pending launch of workunit '{}' at {site} failed: {e}",
        node.launch.label
    );
    if !dropped.is_empty() {
        msg.push_str(&format!(
            "\nlaunches that depended on it were dropped: {}",
            dropped.join(", ")
        ));
    }
    match e {
        PkError::Kernel(mut le) => {
            le.message = format!("{} (launched at {site})", le.message);
            PkError::Kernel(le)
        }
        PkError::Compile {
            kernel,
            cpp_path,
            excerpt,
        } => PkError::Compile {
            kernel: format!("{kernel}' launched at '{site}"),
            cpp_path,
            excerpt,
        },
        // The same kind of error, now naming the launch: a MemoryError stays one.
        PkError::Memory(_) => PkError::Memory(msg),
        PkError::Index(_) => PkError::Index(msg),
        PkError::ZeroDivision(_) => PkError::ZeroDivision(msg),
        PkError::Interrupted(_) => PkError::Interrupted(msg),
        PkError::Argument(_) => PkError::Argument(msg),
        PkError::Value(_) => PkError::Value(msg),
        PkError::Environment(_) => PkError::Environment(msg),
        PkError::Runtime(_) | PkError::Python(_) => PkError::Runtime(msg),
    }
}

fn fail_slot(node: &Node, why: &str) {
    if let Some(s) = &node.result {
        s.fail(why);
    }
}
