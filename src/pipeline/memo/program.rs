//! A learned flush (hold.rs): what it keeps of the flush that taught it,
//! and whether launches arriving are that flush's again. It replays as one
//! fused kernel (small host launches), or as one CUDA graph of the launches'
//! own kernels (Cuda launches fusion left apart: exec/graph.rs).
use super::plans::Memo;
use super::shape::{launch_words, Shape, Sink};
use crate::exec::args::ArgVal;
use crate::exec::facts::Life;
use crate::exec::graph::Graph;
use crate::exec::kernel::{Entry, Kernel, KernelKey, KERNELS};
use crate::exec::launch::{Launch, Origin};
use crate::lazy::graph::{self, Node};
use crate::memory::alloc::Alloc;
use crate::types::{Pattern, Space};
use parking_lot::Mutex;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Most launches a program has (one replayed fused: fewer), and allocations
/// it binds.
pub(super) const MAX_STEPS: usize = 16;
const MAX_FUSED: usize = 8;
const MAX_ALLOCS: usize = 16;

/// A learned flush (facts only: a program keeps no memory alive).
pub(super) struct Program {
    /// Its launches' own words, and where each launch's end.
    words: Vec<u64>,
    pub(super) ends: Vec<usize>,
    pub(super) keys: Vec<KernelKey>,
    /// Per allocation number: its life when the flush was planned.
    lives: Vec<u8>,
    /// What a spilled launch is recorded with.
    pub(super) origins: Vec<Arc<dyn Origin>>,
    pub(super) replay: Replay,
    labels: Vec<Arc<str>>,
}

/// How a program runs once its last launch arrives.
pub(super) enum Replay {
    /// One fused kernel over every launch, labelled as its region.
    Fused { kernel: Arc<Kernel>, label: String },
    /// Each launch's own Cuda kernel, launched as one CUDA graph (kept).
    Graph {
        kernels: Vec<Arc<Kernel>>,
        graph: Mutex<Option<Graph>>,
    },
}

/// Whether learned flushes are on: switched off by `set_on` (tests that
/// count flushes), tracing (a trace records each launch as it came),
/// `PK_FUSE_NOFUSE` and `PK_FUSION_DISABLE=tape`.
pub(super) fn on() -> bool {
    let switches = super::super::switches::on();
    !switches.tape_paused.load(Ordering::Relaxed)
        && !crate::trace::on()
        && !switches.no_fuse.load(Ordering::Relaxed)
        && switches.tape
}

/// Allocations by number, as bound while a program's launches arrive, each
/// with where it was first met (launch, argument).
#[derive(Default)]
pub(super) struct Ids {
    ids: [usize; MAX_ALLOCS],
    first: [(u8, u8); MAX_ALLOCS],
    len: usize,
}

impl Ids {
    fn position(&self, id: usize) -> Option<usize> {
        self.ids[..self.len].iter().position(|&b| b == id)
    }
}

impl Program {
    /// Whether `l` is the program's launch `k`, binding allocations met for the
    /// first time (one number stands for one allocation, different numbers for
    /// different ones; memory Python can reach unseen is never bound).
    pub(super) fn matches(
        &self,
        k: usize,
        l: &Launch,
        ids: &mut Ids,
        scratch: &mut Scratch,
    ) -> bool {
        let p = self;
        let want = &p.words[if k == 0 { 0 } else { p.ends[k - 1] }..p.ends[k]];
        if l.is_method || want.first() != Some(&l.key.digest()) {
            return false;
        }
        let number = |arg: usize, a: &Arc<Alloc>| {
            let id = a.id();
            match ids.position(id) {
                Some(m) => Some(m),
                None if ids.len < MAX_ALLOCS && !a.is_foreign() && arg < 256 => {
                    ids.ids[ids.len] = id;
                    ids.first[ids.len] = (k as u8, arg as u8);
                    ids.len += 1;
                    Some(ids.len - 1)
                }
                None => None,
            }
        };
        let mut got = Buffer {
            words: scratch,
            len: 0,
        };
        let numbered = launch_words(l, number, &mut got);
        let label = &p.labels[k];
        numbered
            && got.words.get(..got.len) == Some(want)
            && (Arc::ptr_eq(&l.label, label) || l.label == *label)
            && l.key == p.keys[k]
    }

    /// Whether every allocation of the held launches and `last` is as alive as
    /// when the program was learned.
    pub(super) fn alive_as_learned(&self, held: &[Launch], last: &Launch, ids: &Ids) -> bool {
        let firsts = ids.first[..ids.len].iter().zip(&self.lives);
        ids.len == self.lives.len()
            && firsts.into_iter().all(|(&(k, arg), &life)| {
                let l = held.get(usize::from(k)).unwrap_or(last);
                match l.vals.get(usize::from(arg)) {
                    Some(ArgVal::View(v)) => Life::of(&v.alloc).bits() == life,
                    _ => false,
                }
            })
    }
}

/// Most words a launch of a program has (six views of rank 8).
const MAX_WORDS: usize = 160;

/// Where an arriving launch's words are written, to be compared with the
/// learned launch's at once (cheaper than word by word as they come). Kept
/// beside the programs, not on the stack: zeroing it each launch cost more.
pub(super) type Scratch = [u64; MAX_WORDS];

struct Buffer<'s> {
    words: &'s mut Scratch,
    len: usize,
}

impl Sink for Buffer<'_> {
    #[inline(always)]
    fn word(&mut self, w: u64) {
        if let Some(slot) = self.words.get_mut(self.len) {
            *slot = w;
        }
        self.len += 1;
    }
    #[inline(always)]
    fn words(&mut self, ws: &[i64]) {
        for &w in ws {
            self.word(w as u64);
        }
    }
}

/// What a flush about to run would teach: its shape's words of its launches
/// and lives, if every pending launch is in it, and it is one plain fused
/// region (`memo` keeps its kernel), each launch a small host `for` but the
/// last, or (`memo` None) Cuda `for` launches each in a region of its own.
pub struct Lesson {
    words: Vec<u64>,
    ends: Vec<usize>,
    lives: Vec<u8>,
    memo: Option<Memo>,
}

/// The lesson of a flush of all of `nodes` planned as one fused region whose
/// kernel `memo` keeps, or (None) as one region per launch (None unless it
/// qualifies).
pub fn lesson(shape: &Shape<'_>, nodes: &[Arc<Node>], memo: Option<&Memo>) -> Option<Lesson> {
    let n = nodes.len();
    let most = if memo.is_some() { MAX_FUSED } else { MAX_STEPS };
    if !on() || !(2..=most).contains(&n) || n != graph::pending_count() {
        return None;
    }
    let plain = |k: usize, node: &Arc<Node>| {
        let l = &node.launch;
        let kind = match memo {
            // Small host launches (cost.rs' size): recording one costs
            // more than running it, so a learned pair beats recording a long
            // chain between rare reads; larger kernels gain more from the
            // longer fusion recording finds.
            Some(_) => {
                super::super::cost::small(l)
                    && match l.key.pattern {
                        Pattern::For => true,
                        Pattern::Reduce | Pattern::Reducer(_) => k + 1 == n,
                        _ => false,
                    }
            }
            // A kernel launch on the GPU costs more than recording one.
            None => l.key.space == Space::Cuda && l.key.pattern == Pattern::For,
        };
        node.count() == 1
            && !node.effects
            && !l.is_method
            && kind
            && (k == 0 || !l.repeats(&nodes[k - 1].launch))
            && l.view_facts().all(|(_, a)| !a.is_foreign())
    };
    let num = |(f, _): (crate::exec::facts::ViewFact, _)| shape.number(f.alloc);
    // An allocation the last launch takes is alive when it comes (the call
    // holds its view): one learned dead could never match.
    let referenced = |m: usize| Life::of(shape.allocs[m]).referenced;
    let last_alive = nodes[n - 1]
        .launch
        .view_facts()
        .map(num)
        .all(|m| m.is_some_and(referenced));
    // (A launch of more words than `Scratch` holds could never match.)
    let short = shape
        .ends
        .iter()
        .zip(std::iter::once(&0).chain(&shape.ends))
        .all(|(e, b)| e - b <= MAX_WORDS);
    let fits = shape.allocs.len() <= MAX_ALLOCS && last_alive && short;
    (fits && nodes.iter().enumerate().all(|(k, node)| plain(k, node))).then(|| Lesson {
        words: shape.words.0[..shape.ends[n - 1]].to_vec(),
        ends: shape.ends.clone(),
        lives: shape.lives.clone(),
        memo: memo.cloned(),
    })
}

impl Lesson {
    /// The program, once the flush ran over `nodes`: if its region ran
    /// fused, the memo's kernel, made for these labels; else if each
    /// launch's own kernel is an NVRTC one, those.
    pub(super) fn program(self, nodes: &[Arc<Node>]) -> Option<Program> {
        let labels = nodes.iter().map(|n| n.launch.label.clone());
        let (replay, labels) = match self.memo {
            Some(memo) => {
                let fused = memo.get().filter(|f| f.fits(labels))?;
                let (kernel, label) = (fused.kernel.clone(), fused.label.clone());
                (Replay::Fused { kernel, label }, fused.labels.clone())
            }
            None => {
                let kernel = |n: &Arc<Node>| KERNELS.get(&n.launch.key).map(|k| k.clone());
                let kernels: Option<Vec<_>> = nodes.iter().map(kernel).collect();
                let kernels =
                    kernels.filter(|ks| ks.iter().all(|k| matches!(k.entry, Entry::Device(_))))?;
                let graph = Mutex::new(None);
                (Replay::Graph { kernels, graph }, labels.collect())
            }
        };
        Some(Program {
            words: self.words,
            ends: self.ends,
            keys: nodes.iter().map(|n| n.launch.key.clone()).collect(),
            lives: self.lives,
            origins: nodes.iter().map(|n| n.origin.clone()).collect(),
            replay,
            labels,
        })
    }
}
