//! What a group-level kernel proved of its accesses, taken at its word in
//! checked launches: local arrays' race-free accesses
//! ([`Group::trust_race_free`]), and buffers each work-item reads only
//! ([`Group::global_unwritten`]) or accesses only at its own element
//! ([`Group::global_owned`]). `#[kernel]` makes these proofs; the
//! checker's side is in `checker::race_free`.

use super::Group;
use crate::memory::{Buffer, BufferView, Claim, Element, LocalView};

impl Group<'_> {
    /// Whether the local arrays' views made after this call
    /// ([`local`](Self::local), [`local_array`](Self::local_array)) take
    /// their race-free accesses ([`LocalView::get_race_free`],
    /// [`LocalView::set_race_free`]) at their word in a checked launch;
    /// until then they do not. The caller vouches for what the claims
    /// rest on: the barriers that bound the intervals they speak of fence
    /// local memory, and an index claimed as the work-item's own element is
    /// one no other work-item of the group uses (a local id of a dimension
    /// where the group has more than one, not of the other two).
    ///
    /// A launch that runs on from a divergent barrier
    /// ([`Launch::run_on_divergence`](crate::Launch::run_on_divergence))
    /// takes no claim at its word: after a divergence, the barriers no
    /// longer bound the same intervals for every work-item. Unchecked
    /// launches are not affected.
    ///
    /// `#[kernel]` calls it first thing in a group, with the run-time side
    /// of its proofs: the flags of the barriers it relied on, and the shape
    /// of the group where it relied on `get_local_id(0)`.
    pub fn trust_race_free(&self, trust: bool) {
        self.race_free.set(trust && !self.run_on);
    }

    /// `view`, with the checker's cells its race-free accesses read where
    /// the group takes them at their word.
    #[inline]
    pub(super) fn with_race_free<'v, T: Element>(
        &self,
        view: LocalView<'v, T>,
    ) -> LocalView<'v, T> {
        match self.check {
            Some(check) if self.race_free.get() => view.with_cells(check),
            _ => view,
        }
    }

    /// [`global`](Self::global) for a buffer that each work-item accesses
    /// only at its own element: the caller vouches that every access of the
    /// launch to `buffer` through this view is at the accessing work-item's
    /// global linear id (or at `get_global_id(0)` in a launch of one
    /// dimension), and that nothing else of the kernel reaches `buffer`
    /// except through `others`, the memory of the kernel's other buffers
    /// (each as [`Buffer::raw_bytes`] gives it). Where none of `others`
    /// overlaps `buffer`, no two work-items access the same element, so no
    /// access races with another: a checked launch checks the view's reads
    /// and writes for their bounds only, and remembers none of them.
    /// Elsewhere it is [`global`](Self::global).
    ///
    /// `#[kernel]` makes the proof for a `&Buffer` parameter whose every
    /// access is at a variable bound once to `wi.get_global_id(0)` or
    /// `wi.get_global_linear_id()`. A false claim hides a race from the
    /// checker; it is no undefined behaviour. Unchecked launches are not
    /// affected.
    ///
    /// ```
    /// use clsync::{Buffer, Launch, NdRange, Runtime};
    ///
    /// let data = Buffer::from_slice(&(0..64u32).collect::<Vec<_>>());
    /// let launch = Launch::new("double", NdRange::new([64]).local([16])).checked(true);
    /// Runtime::new().launch_groups(&launch, |g| {
    ///     let d = g.global_owned(&data, &[]);
    ///     g.for_each(move |it| d.set(it.global_linear_id, 2 * d.get(it.global_linear_id)));
    /// }).unwrap();
    /// assert_eq!(data.get(63), 126);
    /// ```
    #[inline]
    pub fn global_owned<'b, T: Element>(
        &self,
        buffer: &'b Buffer<T>,
        others: &[(*mut u8, usize)],
    ) -> BufferView<'b, T> {
        let claim = if apart(buffer, others) {
            Claim::Owned
        } else {
            Claim::None
        };
        BufferView::new(buffer, self.check.is_some(), claim)
    }
}

/// Whether none of `others` (pointers and lengths in bytes) overlaps
/// `buffer`'s memory.
pub(super) fn apart<T: Element>(buffer: &Buffer<T>, others: &[(*mut u8, usize)]) -> bool {
    let (base, len) = buffer.raw_bytes();
    let (start, end) = (base as usize, base as usize + len);
    others.iter().all(|&(p, n)| {
        let p = p as usize;
        n == 0 || len == 0 || p + n <= start || end <= p
    })
}
