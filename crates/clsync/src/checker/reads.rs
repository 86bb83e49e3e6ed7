//! The reads a location has had since its last write, and how a new read
//! replaces those it makes redundant.

use super::pool;
use super::shadow::Rec;

/// Reads of a location since its last write, at most one per work-item;
/// one read is kept inline, since most locations have one.
#[derive(Debug, Default)]
pub(crate) enum Reads {
    #[default]
    None,
    One(Rec),
    Many(ReadSet),
}

/// Several reads, and what they have in common: enough to tell, without
/// looking at each, that a new read makes none of them redundant but its
/// own work-item's (a location read by a whole group in one barrier
/// interval, as a group's total is, would otherwise cost a pass over every
/// earlier reader per read).
#[derive(Debug)]
pub(crate) struct ReadSet {
    reads: Vec<Rec>,
    /// The work-group of every read, if they share one.
    group: Option<u32>,
    /// The fewest work-group barriers any read had passed.
    min_wg: u32,
    /// A bit per local id (modulo 256) of the readers: a clear bit means
    /// that work-item has no read here.
    lids: [u64; 4],
}

impl ReadSet {
    /// The set of `reads` (not empty), keeping their storage.
    fn new(reads: Vec<Rec>) -> Self {
        let mut set = ReadSet {
            reads: Vec::new(),
            group: reads.first().map(|r| r.who.group),
            min_wg: u32::MAX,
            lids: [0; 4],
        };
        for r in &reads {
            set.note(r);
        }
        set.reads = reads;
        set
    }

    fn push(&mut self, r: Rec) {
        self.note(&r);
        self.reads.push(r);
    }

    /// Folds `r` into the summary.
    fn note(&mut self, r: &Rec) {
        self.group = self.group.filter(|&g| g == r.who.group);
        self.min_wg = self.min_wg.min(r.wg);
        let lid = usize::from(r.who.lid) % 256;
        self.lids[lid / 64] |= 1 << (lid % 64);
    }

    /// Whether a read by `lid` may be among these.
    fn may_hold(&self, lid: u16) -> bool {
        let lid = usize::from(lid) % 256;
        self.lids[lid / 64] & 1 << (lid % 64) != 0
    }
}

/// What a reader knows of the reads before it, for [`Reads::add`]: its
/// work-group, the work-group barriers it has passed, and whether its clock
/// is empty (`blind`). A blind reader has learned nothing from another
/// work-item, nor passed a sub-group barrier (which puts the sub-group's
/// work-items in the clock), so a read of its group with at least `wg`
/// barriers passed is ordered before it only if its own work-item made it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Reader {
    pub(crate) group: u32,
    pub(crate) wg: u32,
    pub(crate) blind: bool,
}

impl Reads {
    /// Forgets every read (a write came), keeping the storage of many for
    /// the next location read by many on this thread.
    pub(crate) fn clear(&mut self) {
        if let Reads::Many(set) = std::mem::take(self) {
            pool::give_back_reads(set.reads);
        }
    }

    pub(crate) fn as_slice(&self) -> &[Rec] {
        match self {
            Reads::None => &[],
            Reads::One(r) => std::slice::from_ref(r),
            Reads::Many(set) => &set.reads,
        }
    }

    /// Adds `rec`, dropping the reads `redundant` says it makes redundant
    /// (its own work-item's reads and those ordered before it). `reader`
    /// lets a read skip the test of each earlier one where their summary
    /// shows that none but its own work-item's can be.
    pub(crate) fn add(&mut self, rec: Rec, reader: Reader, redundant: impl Fn(&Rec) -> bool) {
        match self {
            Reads::None => *self = Reads::One(rec),
            Reads::One(r) if redundant(r) => *self = Reads::One(rec),
            Reads::One(r) => {
                let mut v = pool::reads();
                v.extend([*r, rec]);
                *self = Reads::Many(ReadSet::new(v));
            }
            Reads::Many(set) => {
                // Within the readers' group and barrier interval, with
                // nothing learned from elsewhere, an earlier read is
                // ordered before this one only if its work-item made it.
                let unordered =
                    reader.blind && set.group == Some(reader.group) && set.min_wg >= reader.wg;
                if unordered && !set.may_hold(rec.who.lid) {
                    set.push(rec);
                    return;
                }
                let me = rec.who.item;
                let mut kept = std::mem::take(&mut set.reads);
                if unordered {
                    kept.retain(|r| r.who.item != me);
                } else {
                    kept.retain(|r| !redundant(r));
                }
                kept.push(rec);
                *set = ReadSet::new(kept);
            }
        }
    }
}
