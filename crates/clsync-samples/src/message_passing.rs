//! Host ↔ kernel message passing through fine-grained-SVM-style atomics
//! (`001_b96d5603ef61627c.txt`): a host thread and a running work-item take
//! turns. Each side writes a plain value, then publishes it with a release
//! store at `memory_scope_all_svm_devices`; the other side spins on an
//! acquire load of the same scope, then reads the value.

use std::hint::spin_loop;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use clsync::sync::{Acquire, AllSvmDevicesScope, Release};
use clsync::{AtomicUint, Buffer, Launch, LaunchError, NdRange, Runtime};

use crate::{compare, Report, Sample, Size};

/// Host ↔ kernel ping-pong.
pub struct MessagePassing;

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
                while turns.at(1).load_explicit_scope(Acquire, AllSvmDevicesScope) != r {
                    // Relaxed: a stop signal only; no data is read through it.
                    if launch_over.load(Ordering::Relaxed) {
                        return (replies, start.elapsed());
                    }
                    spin_loop();
                }
                replies.push(reply.get(0));
            }
            (replies, start.elapsed())
        });
        let result = rt.launch(&Launch::new("svm_ping_pong", NdRange::new([1])), |_wi| {
            for r in 1..=rounds {
                // Acquire: pairs with the host's release store of turns[0].
                while turns.at(0).load_explicit_scope(Acquire, AllSvmDevicesScope) != r {
                    spin_loop();
                }
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
            Size::Small => 2_000,
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
