//! Printing explorations the way herd prints its results: the verdict,
//! the number of consistent executions, and each allowed final state.

use std::fmt;

use crate::enumerate::Exploration;
use crate::syntax::Quantifier;

impl Exploration {
    /// `allowed`/`forbidden` for `exists` (whether the outcome may appear),
    /// `holds`/`fails` for `~exists` and `forall`.
    pub fn verdict_word(&self) -> &'static str {
        match self.quantifier {
            Some(Quantifier::Exists) | None => {
                if self.reachable {
                    "allowed"
                } else {
                    "forbidden"
                }
            }
            _ => {
                if self.holds {
                    "holds"
                } else {
                    "fails"
                }
            }
        }
    }
}

impl fmt::Display for Exploration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{}: {} ({} consistent execution{}{})",
            self.name,
            self.verdict_word(),
            self.executions,
            if self.executions == 1 { "" } else { "s" },
            if self.bounded { ", loops bounded" } else { "" }
        )?;
        for o in &self.outcomes {
            let state: Vec<String> = self
                .observed
                .iter()
                .zip(&o.values)
                .map(|(v, x)| format!("{v}={x}"))
                .collect();
            writeln!(
                f,
                "  {} {:<40} ({} execution{})",
                if o.satisfies { "*" } else { " " },
                state.join("; "),
                o.count,
                if o.count == 1 { "" } else { "s" }
            )?;
        }
        match &self.race {
            None => writeln!(f, "  race-free"),
            Some(r) => {
                let side = |a: &crate::enumerate::Access| {
                    format!(
                        "P{} {} of {} at {}{}",
                        a.thread,
                        a.kind,
                        a.location,
                        a.span,
                        a.order
                            .as_ref()
                            .map_or(String::new(), |o| format!(" ({o})"))
                    )
                };
                writeln!(
                    f,
                    "  {}: {} and {}",
                    r.kind,
                    side(&r.first),
                    side(&r.second)
                )
            }
        }
    }
}
