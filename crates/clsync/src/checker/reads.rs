//! The reads a location has had since its last write, and how a new read
//! replaces those it makes redundant.

use super::pool;
use super::shadow::Rec;

/// Reads of a location since its last write, at most one per work-item;
/// one read is kept inline, since most locations have one.
#[derive(Clone, Debug, Default)]
pub(crate) enum Reads {
    #[default]
    None,
    One(Rec),
    Many(ReadSet),
}

/// Several reads, and what they have in common: enough to tell, without
/// looking at each, that a new read makes none of them redundant but its
/// own work-item's (a location read by a whole group in one barrier
/// interval, as a group's total is, or by a work-item of each of several
/// groups, as a matrix element is, would otherwise cost a pass over every
/// earlier reader per read).
#[derive(Clone, Debug)]
pub(crate) struct ReadSet {
    reads: Vec<Rec>,
    /// At most the fewest work-group barriers any read had passed (a read
    /// removed in place leaves it as it was).
    min_wg: u32,
    /// A bit per reader, by a hash of its global linear id into 256 (see
    /// [`bucket`]): a clear bit means that work-item has no read here.
    items: [u64; 4],
}

impl ReadSet {
    /// The set of `reads` (not empty), keeping their storage.
    fn new(reads: Vec<Rec>) -> Self {
        let mut set = ReadSet {
            reads: Vec::new(),
            min_wg: u32::MAX,
            items: [0; 4],
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
        self.min_wg = self.min_wg.min(r.wg);
        let k = bucket(r.who.item);
        self.items[k / 64] |= 1 << (k % 64);
    }

    /// Whether a read by work-item `item` may be among these.
    fn may_hold(&self, item: u32) -> bool {
        let k = bucket(item);
        self.items[k / 64] & 1 << (k % 64) != 0
    }
}

/// Work-item `item`'s bit among 256: the top byte of a multiplicative hash
/// (Fibonacci hashing), so that the readers of a location, whose ids often
/// differ by a multiple of a row's length (a tile's column), spread over
/// the bits where the id modulo 256 would put them on a few.
fn bucket(item: u32) -> usize {
    (item.wrapping_mul(0x9E37_79B1) >> 24) as usize
}

/// What a reader knows of the reads before it, for [`Reads::add`]: the
/// work-group barriers it has passed, and whether its clock is empty
/// (`blind`). A blind reader has learned nothing from another work-item,
/// nor passed a sub-group barrier (which puts the sub-group's work-items in
/// the clock), so a read of its group with at least `wg` barriers passed,
/// or of another group, is ordered before it only if its own work-item
/// made it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Reader {
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
    #[inline(always)]
    pub(crate) fn add(&mut self, rec: Rec, reader: Reader, redundant: impl Fn(&Rec) -> bool) {
        match self {
            Reads::None => *self = Reads::One(rec),
            Reads::One(r) if redundant(r) => *self = Reads::One(rec),
            _ => self.add_many(rec, reader, redundant),
        }
    }

    /// [`add`](Self::add) where the reads become or are many: out of line.
    #[inline(never)]
    fn add_many(&mut self, rec: Rec, reader: Reader, redundant: impl Fn(&Rec) -> bool) {
        match self {
            Reads::None => *self = Reads::One(rec),
            Reads::One(r) if redundant(r) => *self = Reads::One(rec),
            Reads::One(r) => {
                let mut v = pool::reads();
                v.extend([*r, rec]);
                *self = Reads::Many(ReadSet::new(v));
            }
            Reads::Many(set) => {
                // With nothing learned from elsewhere, an earlier read is
                // ordered before this one only if its work-item made it, or
                // it is of the reader's group before a barrier the reader
                // has passed since: none is, when every read had passed
                // as many work-group barriers (another group's reads are
                // never ordered before a blind reader, whatever their
                // count: only what the reader learned could order them).
                let unordered = reader.blind && set.min_wg >= reader.wg;
                let me = rec.who.item;
                if unordered {
                    // Only the reader's own earlier read (at most one) is
                    // redundant: removed in place, the others kept in
                    // order. The summary may keep its bit and its count:
                    // a superset, which only sends later reads here.
                    if set.may_hold(me) {
                        if let Some(p) = set.reads.iter().position(|r| r.who.item == me) {
                            set.reads.remove(p);
                        }
                    }
                    set.push(rec);
                    return;
                }
                let mut kept = std::mem::take(&mut set.reads);
                kept.retain(|r| !redundant(r));
                kept.push(rec);
                *set = ReadSet::new(kept);
            }
        }
    }
}
