//! The memo: what earlier flushes taught about the stream of launches, in
//! one place. The pipelines ask it when a launch arrives
//! (`slots::starts_flush`, `slots::at_once`, `hold::offer`), tell it when a
//! flush ran (`flushed`) and when the mode changes (`forget`); planning asks
//! it for plans by shape and for what a flush would teach.
//!
//! Everything it keeps is read off a flush's shape (shape.rs: each
//! launch's facts, computed once, as words):
//! - plans by shape (plans.rs): a flush of a known shape replays its plan;
//! - per first kernel (slots.rs): whether a launch that arrives with
//!   nothing pending starts a learned flush of one fused region (hold.rs
//!   holds it and the launches after it, matched against that flush's
//!   words, and runs its kernel as the last arrives), runs at once (its
//!   flushes ran it alone, or recording costs more), or is recorded; with
//!   one probe policy for what runs at once.
//!
//! `PK_FUSION_DISABLE=memo` switches all of it off; the older names switch
//! off a part: `adaptive` (running at once), `tape` (learned flushes),
//! `plan_cache` (plans by shape, and with them learned flushes). Tracing
//! and `PK_FUSE_NOFUSE` switch learned flushes off too.
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
