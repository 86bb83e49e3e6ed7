//! Small ids for source sites and operation names, so that the checker's
//! record of an access ([`Rec`](super::shadow::Rec)) is 32 bytes.
//!
//! A program has few distinct sites and operation names; each is stored
//! once in a global table. A per-thread direct-mapped cache makes the common
//! lookup a compare, without touching the table's lock.

use std::cell::Cell;
use std::collections::HashMap;
use std::num::NonZeroU32;
use std::panic::Location;
use std::sync::Mutex;

use crate::sync::Site;

#[derive(Default)]
struct Table {
    sites: Vec<Site>,
    site_ids: HashMap<Site, NonZeroU32>,
    names: Vec<&'static str>,
}

// `std`'s mutex: a static needs a `const` constructor (see `objects`).
static TABLE: Mutex<Option<Table>> = Mutex::new(None);

fn with_table<R>(f: impl FnOnce(&mut Table) -> R) -> R {
    let mut t = TABLE.lock().unwrap_or_else(|e| e.into_inner());
    f(t.get_or_insert_with(Table::default))
}

const CACHE: usize = 256;

thread_local! {
    static SITE_CACHE: [Cell<Option<(Site, NonZeroU32)>>; CACHE] =
        const { [const { Cell::new(None) }; CACHE] };
}

/// The id of `site`: a compare in this thread's cache (every access asks,
/// so this part is inlined), else the table.
#[inline]
pub(crate) fn site(site: Site) -> NonZeroU32 {
    let slot = (site.line as usize)
        .wrapping_mul(31)
        .wrapping_add(site.column as usize)
        % CACHE;
    let hit = SITE_CACHE.with(|c| match c[slot].get() {
        Some((s, id)) if s == site => Some(id),
        _ => None,
    });
    hit.unwrap_or_else(|| site_missed(site, slot))
}

#[cold]
#[inline(never)]
fn site_missed(site: Site, slot: usize) -> NonZeroU32 {
    let id = with_table(|t| {
        if let Some(&id) = t.site_ids.get(&site) {
            return id;
        }
        t.sites.push(site);
        let id = NonZeroU32::new(t.sites.len() as u32).expect("one-based");
        t.site_ids.insert(site, id);
        id
    });
    SITE_CACHE.with(|c| c[slot].set(Some((site, id))));
    id
}

const LOCATIONS: usize = 64;

thread_local! {
    static LOCATION_CACHE: [Cell<(usize, Option<NonZeroU32>)>; LOCATIONS] =
        const { [const { Cell::new((0, None)) }; LOCATIONS] };
}

/// The id of the site of a Rust call at `at`: a compare of its address in
/// this thread's cache (a call site has one `Location`), else [`site`].
#[inline(always)]
pub(crate) fn location(at: &'static Location<'static>) -> NonZeroU32 {
    let key = at as *const Location<'static> as usize;
    let slot = (key >> 3) % LOCATIONS;
    let hit = LOCATION_CACHE.with(|c| match c[slot].get() {
        (k, Some(id)) if k == key => Some(id),
        _ => None,
    });
    hit.unwrap_or_else(|| location_missed(at, key, slot))
}

#[cold]
#[inline(never)]
fn location_missed(at: &'static Location<'static>, key: usize, slot: usize) -> NonZeroU32 {
    let id = site(Site::from_location(at));
    LOCATION_CACHE.with(|c| c[slot].set((key, Some(id))));
    id
}

/// The site with id `id`.
pub(crate) fn site_of(id: NonZeroU32) -> Site {
    with_table(|t| t.sites[id.get() as usize - 1])
}

/// The id of an operation name (at most 2^16 of them).
#[inline]
pub(crate) fn name(name: &'static str) -> u16 {
    let key = name.as_ptr() as usize;
    let slot = (key >> 3) % NAME_CACHE;
    // A string's address is never 0: an empty slot matches nothing.
    let hit = NAME_CACHE_SLOTS.with(|c| match c[slot].get() {
        (k, len, id) if k == key && len == name.len() => Some(id),
        _ => None,
    });
    hit.unwrap_or_else(|| name_missed(name, slot))
}

#[cold]
#[inline(never)]
fn name_missed(name: &'static str, slot: usize) -> u16 {
    let id = with_table(|t| match t.names.iter().position(|n| *n == name) {
        Some(i) => i as u16,
        None => {
            t.names.push(name);
            (t.names.len() - 1) as u16
        }
    });
    let key = name.as_ptr() as usize;
    NAME_CACHE_SLOTS.with(|c| c[slot].set((key, name.len(), id)));
    id
}

const NAME_CACHE: usize = 64;

thread_local! {
    static NAME_CACHE_SLOTS: [Cell<(usize, usize, u16)>; NAME_CACHE] =
        const { [const { Cell::new((0, 0, 0)) }; NAME_CACHE] };
}

/// The operation name with id `id`.
pub(crate) fn name_of(id: u16) -> &'static str {
    with_table(|t| t.names[id as usize])
}
