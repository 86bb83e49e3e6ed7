//! herd's `scopeTree`: which device and work-group each thread runs in.

use std::collections::HashMap;

use super::super::ast::*;
use super::super::ParseError;
use super::{thread_number, PResult, Parser};

impl Parser {
    pub(crate) fn scope_tree_pub(&mut self, threads: &mut [Thread]) -> PResult<()> {
        let mut place: HashMap<usize, (usize, usize)> = HashMap::new();
        let (mut dev, mut wg) = (0usize, 0usize);
        // One or more top-level nodes: `(device …) (device …)`.
        self.tree_node(&mut place, &mut dev, &mut wg, 0, None)?;
        while self.at("(") {
            self.tree_node(&mut place, &mut dev, &mut wg, 0, None)?;
        }
        Self::apply_places(&place, threads)
    }
    fn apply_places(place: &HashMap<usize, (usize, usize)>, threads: &mut [Thread]) -> PResult<()> {
        for t in threads.iter_mut() {
            match place.get(&t.id) {
                Some(&(d, g)) => {
                    t.device = d;
                    t.work_group = g;
                }
                None => {
                    return Err(ParseError::new(
                        t.span,
                        format!("thread P{} is not placed in the scopeTree", t.id),
                    ))
                }
            }
        }
        Ok(())
    }
    pub(super) fn scope_tree(&mut self, threads: &mut [Thread]) -> PResult<()> {
        if !self.at_word("scopeTree") {
            return Err(self.unexpected("`scopeTree` (herd tests place their threads there)"));
        }
        self.bump();
        self.scope_tree_pub(threads)
    }

    /// One `(level child…)` node; `level` 0 is outside any device.
    fn tree_node(
        &mut self,
        place: &mut HashMap<usize, (usize, usize)>,
        dev: &mut usize,
        wg: &mut usize,
        _depth: usize,
        current: Option<(usize, usize)>,
    ) -> PResult<()> {
        self.expect("(")?;
        // A bare list of nodes: `((device …) (device …))`.
        if self.at("(") {
            while self.at("(") {
                self.tree_node(place, dev, wg, _depth + 1, current)?;
            }
            self.expect(")")?;
            return Ok(());
        }
        let (kind, sp) = self.ident("`device`, `work_group` or `sub_group`")?;
        let here = match kind.as_str() {
            "device" => {
                let d = *dev;
                *dev += 1;
                Some((d, usize::MAX))
            }
            "work_group" => {
                let (d, _) = current
                    .ok_or_else(|| ParseError::new(sp, "a work_group must be inside a device"))?;
                let g = *wg;
                *wg += 1;
                Some((d, g))
            }
            "sub_group" => current,
            other => {
                return Err(ParseError::new(
                    sp,
                    format!(
                        "`{other}` is not an OpenCL scope level (device, work_group, sub_group)"
                    ),
                ))
            }
        };
        loop {
            if self.eat(")") {
                return Ok(());
            }
            if self.at("(") {
                self.tree_node(place, dev, wg, _depth + 1, here)?;
                continue;
            }
            let (t, tsp) = self.ident("a thread name or `(`")?;
            let id = thread_number(&t)
                .ok_or_else(|| ParseError::new(tsp, format!("`{t}` is not a thread name")))?;
            let (d, g) = here.expect("a level was matched");
            if g == usize::MAX {
                return Err(ParseError::new(
                    tsp,
                    format!("thread {t} must be inside a work_group"),
                ));
            }
            if place.insert(id, (d, g)).is_some() {
                return Err(ParseError::new(tsp, format!("thread {t} is placed twice")));
            }
        }
    }
}
