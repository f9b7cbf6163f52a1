//! Per allocation, the pending accesses a new launch may depend on: the
//! writes and the reads since (the DAG's frontier on that memory).
//!
//! Reads are kept apart because they pile up: a view only read (inputs,
//! index tables) gathers one read per launch until a flush, and a new read
//! depends on no read, only on writes. Scanning every read on each record,
//! and on each removal, made a long unread stream quadratic (3,600 pending
//! launches of six read-only views: 27 us a launch instead of 2.5).
use super::hazards::BufAccess;
use petgraph::stable_graph::NodeIndex;
use smallvec::SmallVec;
use std::collections::VecDeque;

#[derive(Default)]
pub(super) struct Frontier {
    writes: SmallVec<[(NodeIndex, BufAccess); 2]>,
    /// With the launch's sequence number, in program order: a flush takes
    /// launches oldest first, so a removed launch's reads are at the front
    /// (and any other is a binary search away).
    reads: VecDeque<(NodeIndex, BufAccess, u64)>,
}

impl Frontier {
    /// The pending launches `a` conflicts with (a read only with writes).
    pub(super) fn conflicts<'a>(
        &'a self,
        a: &'a BufAccess,
    ) -> impl Iterator<Item = NodeIndex> + 'a {
        let reads = a.write.then_some(&self.reads).into_iter().flatten();
        let writes = self
            .writes
            .iter()
            .filter(|(_, b)| b.conflicts(a))
            .map(|(n, _)| *n);
        writes.chain(reads.filter(|(_, b, _)| b.conflicts(a)).map(|(n, _, _)| *n))
    }

    /// Adds `n`'s access `a`. An access inside the range of a newer write is
    /// reachable through that write, so later launches need no edge to it:
    /// it leaves (this keeps long chains linear instead of quadratic).
    pub(super) fn push(&mut self, n: NodeIndex, a: BufAccess, seq: u64) {
        let covered = |b: &BufAccess| a.start <= b.start && b.end <= a.end;
        if a.write {
            self.writes.retain(|(_, b)| !covered(b));
            self.reads.retain(|(_, b, _)| !covered(b));
            self.writes.push((n, a));
        } else {
            self.reads.push_back((n, a, seq));
        }
    }

    /// Forgets the accesses of launch `n` (sequence number `seq`); whether
    /// nothing is left.
    pub(super) fn remove(&mut self, n: NodeIndex, seq: u64) -> bool {
        self.writes.retain(|(x, _)| *x != n);
        while self.reads.front().is_some_and(|(x, _, _)| *x == n) {
            self.reads.pop_front();
        }
        // Out of program order (a flush of what one allocation needs).
        let at = self.reads.partition_point(|(_, _, s)| *s < seq);
        while self.reads.get(at).is_some_and(|(x, _, _)| *x == n) {
            self.reads.remove(at);
        }
        self.writes.is_empty() && self.reads.is_empty()
    }

    /// Every pending launch with an access here.
    pub(super) fn launches(&self) -> impl Iterator<Item = NodeIndex> + '_ {
        let reads = self.reads.iter().map(|(n, _, _)| *n);
        self.writes.iter().map(|(n, _)| *n).chain(reads)
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
