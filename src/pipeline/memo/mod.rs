//! The memo: what earlier flushes taught about the stream of launches, in
//! one place. The pipelines ask it when a launch arrives
//! (`slots::starts_flush`, `slots::at_once`, `hold::offer`), tell it when a
//! flush ran (`flushed`) and when the mode changes (`forget`); planning asks
//! it for plans by shape (plans.rs) and for what a flush teaches (program.rs).
//! All it keeps is read off a flush's shape (shape.rs: each launch's facts,
//! computed once, as words).
//!
//! `PK_FUSION_DISABLE=memo` switches all of it off; the older names switch
//! off a part (switches.rs).
pub mod hold;
pub mod plans;
pub mod program;
pub mod shape;
pub mod slots;

use super::planning::Planned;
use crate::lazy::graph::Node;
use std::sync::Arc;

/// A flush ran `planned` over `nodes`: what it teaches is kept.
pub fn flushed(nodes: &[Arc<Node>], planned: Planned) {
    slots::flushed(nodes, &planned);
    if let Some(lesson) = planned.lesson {
        hold::learn(lesson, nodes);
    }
}

/// Forgets what was learned: all of it (lazy mode switched), or only the
/// learned flushes (fusion switched; plans are keyed by what planning reads).
pub fn forget(all: bool) {
    hold::forget();
    if all {
        slots::forget(false);
    }
}
