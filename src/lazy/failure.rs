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
    // Each call site once, with its count (a loop's launches are many).
    let mut dropped: Vec<(String, usize)> = Vec::new();
    let mut note = |d: &Node| {
        let what = format!("'{}' at {}", d.launch.label, d.origin.site());
        match dropped.iter_mut().find(|(w, _)| *w == what) {
            Some((_, n)) => *n += d.count(),
            None => dropped.push((what, d.count())),
        }
    };
    for d in graph::drop_dependents(rest) {
        fail_slot(&d, "an earlier launch it depends on failed");
        note(&d);
    }
    for d in &rest[1..] {
        fail_slot(d, "an earlier launch of its fused region failed");
        note(d);
    }
    let dropped: Vec<String> = dropped
        .into_iter()
        .map(|(w, n)| if n > 1 { format!("{w} (x{n})") } else { w })
        .collect();
    fail_slot(node, &e.to_string());
    let site = node.origin.site();
    // Ctrl-C that stopped a kernel part way is no failure of the launch.
    let stopped = matches!(e, PkError::Interrupted(_));
    let mut msg = format!(
        "pending launch of workunit '{}' at {site} {}: {e}",
        node.launch.label,
        if stopped { "was interrupted" } else { "failed" }
    );
    if !dropped.is_empty() {
        msg.push_str(&format!(
            "\nlaunches that depended on it{} were dropped: {}",
            if stopped {
                " or ran in part with it"
            } else {
                ""
            },
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
        PkError::Interrupted(_) => {
            // Ctrl-C stopped this launch part way: say what else is left.
            let left = graph::pending_count();
            if left > 0 {
                msg.push_str(&format!(
                    "\n{left} launch(es) that do not depend on it did not run and are still pending"
                ));
            }
            PkError::Interrupted(msg)
        }
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
