//! Host ↔ kernel message passing through fine-grained-SVM-style atomics
//! (`001_b96d5603ef61627c.txt`): a host thread and a running work-item take
//! turns. Each side writes a plain value, then publishes it with a release
//! store at `memory_scope_all_svm_devices`; the other side spins on an
//! acquire load of the same scope, then reads the value.
//!
//! Each side waits with [`wait_until`]: it checks between pauses for a
//! while, then yields its core between checks. While both sides have a
//! core the answer comes within the spinning, checked at every pause (an
//! exponential backoff, which sleeps longer between checks as it waits,
//! took the round trip from 133 to 190 ns on a 2-core VM); on a machine
//! busier than it has cores (tests running beside each other), a side that
//! only spun would hold its core for a whole time slice while the side it
//! waits for could not run.
//!
//! The kernel has no barrier, and its one work-item finishes only at the
//! end, so the watchdog sees no progress of that kind; it takes the host's
//! and the work-item's stores, atomic changes of memory, as the sign of
//! life instead (see `Launch::watchdog`), and the launch keeps the default
//! timeout.

use std::hint::spin_loop;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use clsync::sync::{Acquire, AllSvmDevicesScope, Release};
use clsync::{AtomicUint, Buffer, Launch, LaunchError, NdRange, Runtime};

use crate::{compare, Report, Sample, Size};

/// Host ↔ kernel ping-pong.
pub struct MessagePassing;

/// How many checks a wait makes with a pause between two before it yields
/// its core between checks: tens of microseconds, hundreds of round trips.
const SPINS: u32 = 1 << 12;

/// Returns once `ready` holds: checks it with a pause between two checks,
/// 4096 times (`SPINS`), then with a yield of the thread between two.
pub fn wait_until(mut ready: impl FnMut() -> bool) {
    let mut spins = 0;
    while !ready() {
        if spins < SPINS {
            spins += 1;
            spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}

/// Plays `rounds` round trips between a host thread and a kernel's single
/// work-item; returns the replies the host read and the host's time.
pub fn ping_pong(rt: &Runtime, rounds: u32) -> Result<(Vec<u64>, Duration), LaunchError> {
    let message = Buffer::<u64>::new(1).named("message");
    let reply = Buffer::<u64>::new(1).named("reply");
    // [0]: the round the host has published; [1]: the round the kernel has
    // answered.
    let turns: Buffer<AtomicUint> = Buffer::new(2);
    let launch_over = AtomicBool::new(false);
    std::thread::scope(|s| {
        let host = s.spawn(|| {
            let start = Instant::now();
            let mut replies = Vec::with_capacity(rounds as usize);
            for r in 1..=rounds {
                message.set(0, u64::from(r) * 7);
                // Release: publishes `message` to the kernel's acquire load of
                // turns[0].
                turns
                    .at(0)
                    .store_explicit_scope(r, Release, AllSvmDevicesScope);
                // Acquire: pairs with the kernel's release store of turns[1],
                // so `reply` is the kernel's answer to this round.
                let mut answered = false;
                wait_until(|| {
                    answered = turns.at(1).load_explicit_scope(Acquire, AllSvmDevicesScope) == r;
                    // Relaxed: a stop signal only; no data is read through it.
                    answered || launch_over.load(Ordering::Relaxed)
                });
                if !answered {
                    return (replies, start.elapsed());
                }
                replies.push(reply.get(0));
            }
            (replies, start.elapsed())
        });
        let launch = Launch::new("svm_ping_pong", NdRange::new([1]));
        let result = rt.launch(&launch, |_wi| {
            for r in 1..=rounds {
                // Acquire: pairs with the host's release store of turns[0].
                wait_until(|| turns.at(0).load_explicit_scope(Acquire, AllSvmDevicesScope) == r);
                reply.set(0, message.get(0) + 1);
                // Release: publishes `reply` to the host.
                turns
                    .at(1)
                    .store_explicit_scope(r, Release, AllSvmDevicesScope);
            }
        });
        // Relaxed: see the host's loop.
        launch_over.store(true, Ordering::Relaxed);
        let (replies, t) = host.join().expect("the host thread does not panic");
        result.map(|_| (replies, t))
    })
}

impl Sample for MessagePassing {
    fn name(&self) -> &'static str {
        "host message passing"
    }

    fn run(&self, rt: &Runtime, size: Size) -> Result<Report, LaunchError> {
        let rounds = match size {
            Size::Small => 500,
            Size::Full => 100_000,
        };
        let (replies, t) = ping_pong(rt, rounds)?;
        let want: Vec<u64> = (1..=u64::from(rounds)).map(|r| r * 7 + 1).collect();
        Ok(Report {
            name: self.name(),
            size: format!("{rounds} round trips, host thread <-> work-item"),
            elapsed: t,
            throughput: (t.as_nanos() as f64 / f64::from(rounds), "ns/round trip"),
            verified: compare("replies", &replies, &want),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{wait_until, SPINS};

    #[test]
    fn a_wait_checks_until_ready_past_its_spinning() {
        // Ready at the first check after the spinning ends, and at once.
        for ready_at in [SPINS + 5, 1] {
            let mut checks = 0;
            wait_until(|| {
                checks += 1;
                checks == ready_at
            });
            assert_eq!(checks, ready_at);
        }
    }
}
