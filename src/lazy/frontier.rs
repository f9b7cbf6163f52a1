//! Per allocation, the pending accesses a new launch may depend on: the
//! writes and the reads since (the DAG's frontier on that memory).
//!
//! Reads are kept apart because they pile up: a view only read (inputs,
//! index tables) gathers one read per launch until a flush, and a new read
//! depends on no read, only on writes. Scanning every read on each record,
//! and on each removal, made a long unread stream quadratic (3,600 pending
//! launches of six read-only views: 27 us a launch instead of 2.5). A new
//! write still scans what it may overlap (writes to disjoint rows of one
//! table pile up too), so that case stays proportional to the writes
//! pending, which `MOST_PENDING` (pipeline/submit.rs) bounds.
use super::hazards::BufAccess;
use petgraph::stable_graph::NodeIndex;
use std::collections::VecDeque;

/// Accesses with their launch and its sequence number, in program order: a
/// flush takes launches oldest first, so a removed launch's are at the front
/// (and any other's are a binary search away).
type Ordered = VecDeque<(NodeIndex, BufAccess, u64)>;

#[derive(Default)]
pub(super) struct Frontier {
    writes: Ordered,
    reads: Ordered,
}

impl Frontier {
    /// The pending launches `a` conflicts with (a read only with writes).
    pub(super) fn conflicts<'a>(
        &'a self,
        a: &'a BufAccess,
    ) -> impl Iterator<Item = NodeIndex> + 'a {
        let reads = a.write.then_some(&self.reads).into_iter().flatten();
        self.writes
            .iter()
            .chain(reads)
            .filter(|(_, b, _)| b.conflicts(a))
            .map(|(n, _, _)| *n)
    }

    /// Adds the access `a` of launch `n` (sequence number `seq`, the newest).
    /// An access inside the range of a newer write is reachable through that
    /// write, so later launches need no edge to it: it leaves (this keeps
    /// long chains linear instead of quadratic).
    pub(super) fn push(&mut self, n: NodeIndex, a: BufAccess, seq: u64) {
        if a.write {
            let covered =
                |(_, b, _): &(NodeIndex, BufAccess, u64)| a.start <= b.start && b.end <= a.end;
            self.writes.retain(|x| !covered(x));
            self.reads.retain(|x| !covered(x));
            self.writes.push_back((n, a, seq));
        } else {
            self.reads.push_back((n, a, seq));
        }
    }

    /// Forgets the accesses of launch `n` (sequence number `seq`); whether
    /// nothing is left.
    pub(super) fn remove(&mut self, n: NodeIndex, seq: u64) -> bool {
        for list in [&mut self.writes, &mut self.reads] {
            while list.front().is_some_and(|(x, _, _)| *x == n) {
                list.pop_front();
            }
            // Out of program order (a flush of what one allocation needs).
            let at = list.partition_point(|(_, _, s)| *s < seq);
            while list.get(at).is_some_and(|(x, _, _)| *x == n) {
                list.remove(at);
            }
        }
        self.writes.is_empty() && self.reads.is_empty()
    }

    /// Every pending launch with an access here.
    pub(super) fn launches(&self) -> impl Iterator<Item = NodeIndex> + '_ {
        self.writes.iter().chain(&self.reads).map(|(n, _, _)| *n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acc(start: isize, end: isize, write: bool) -> BufAccess {
        BufAccess {
            alloc: 1,
            start,
            end,
            read: !write,
            write,
        }
    }

    fn conflicts(f: &Frontier, a: BufAccess) -> Vec<usize> {
        let mut v: Vec<usize> = f.conflicts(&a).map(|n| n.index()).collect();
        v.sort_unstable();
        v
    }

    #[test]
    fn reads_wait_for_writes_and_writes_for_everything_they_overlap() {
        let mut f = Frontier::default();
        f.push(NodeIndex::new(0), acc(0, 80, true), 0);
        for k in 1..=3 {
            f.push(NodeIndex::new(k), acc(0, 40, false), k as u64);
        }
        // A read depends on the write only, never on other reads.
        assert_eq!(conflicts(&f, acc(0, 8, false)), vec![0]);
        assert_eq!(conflicts(&f, acc(40, 48, false)), vec![0]);
        // A write depends on every access it overlaps.
        assert_eq!(conflicts(&f, acc(32, 48, true)), vec![0, 1, 2, 3]);
        assert_eq!(conflicts(&f, acc(48, 56, true)), vec![0]);
        // A write covering older accesses stands for them.
        f.push(NodeIndex::new(4), acc(0, 80, true), 4);
        assert_eq!(f.launches().map(|n| n.index()).collect::<Vec<_>>(), vec![4]);
    }

    #[test]
    fn removal_in_and_out_of_program_order_forgets_exactly_that_launch() {
        let mut f = Frontier::default();
        for k in 0..6 {
            f.push(NodeIndex::new(k), acc(0, 8, false), k as u64);
            if k == 2 {
                // A launch with two reads of the allocation.
                f.push(NodeIndex::new(k), acc(8, 16, false), k as u64);
            }
        }
        f.push(NodeIndex::new(6), acc(100, 108, true), 6);
        let left = |f: &Frontier| f.launches().map(|n| n.index()).collect::<Vec<_>>();
        assert!(!f.remove(NodeIndex::new(0), 0));
        assert!(!f.remove(NodeIndex::new(2), 2)); // not at the front: both its reads go
        assert!(!f.remove(NodeIndex::new(5), 5));
        assert_eq!(left(&f), vec![6, 1, 3, 4]);
        assert!(!f.remove(NodeIndex::new(6), 6));
        for k in [1, 3] {
            assert!(!f.remove(NodeIndex::new(k), k as u64));
        }
        assert!(f.remove(NodeIndex::new(4), 4));
    }
}
