//! The workloads' OpenCL C source, `kernels.cl` — the very file the PoCL
//! side builds — compiled by `clsync-opencl` and run on clsync's runtime,
//! each result checked against the sequential reference. Run checked, a
//! launch must also find nothing.

use clsync::{Buffer, NdRange, Runtime};
use clsync_opencl::{Arg, Program};

use crate::reference::{self, compare};
use crate::{block_offsets, Run, Sizes, Workload, GROUP, HIST_PER_ITEM, SCAN_PAD, TILE};

const SOURCE: &str = include_str!("kernels.cl");

/// `kernels.cl` built by clsync.
pub struct OpenClC {
    program: Program,
    /// Whether launches run checked.
    checked: bool,
}

impl OpenClC {
    /// Builds `kernels.cl` as the PoCL side does (`-cl-std=CL3.0`);
    /// `checked`: every launch runs under the checker.
    pub fn new(checked: bool) -> Result<OpenClC, String> {
        let program = Program::build(SOURCE, "kernels.cl", "-cl-std=CL3.0")
            .map_err(|e| format!("building kernels.cl: {e}"))?;
        Ok(OpenClC { program, checked })
    }

    /// Loads `kernels.cl` as [`spirv`](Self::spirv) gave it, for a machine
    /// without the front end (clang-15 and llvm-spirv-15).
    pub fn from_spirv(bytes: &[u8], checked: bool) -> Result<OpenClC, String> {
        let program =
            Program::from_spirv(bytes).map_err(|e| format!("loading kernels.cl's SPIR-V: {e}"))?;
        Ok(OpenClC { program, checked })
    }

    /// Runs workload `w` at sizes `s` on the reference inputs.
    pub fn run(&self, rt: &Runtime, w: Workload, s: &Sizes) -> Run {
        match w {
            Workload::BarrierLoop => self.barrier_loop(rt, s),
            Workload::Reduce => self.reduce(rt, &reference::reduce_input(s.reduce)),
            Workload::Scan => self.scan(rt, &reference::scan_input(s.scan)),
            Workload::Sgemm => self.sgemm(
                rt,
                &reference::matrix(s.sgemm, 4),
                &reference::matrix(s.sgemm, 5),
                s.sgemm,
            ),
            Workload::Histogram => self.histogram(rt, &reference::histogram_input(s.histogram)),
            Workload::MessagePassing => self.message_passing(rt, s.rounds),
        }
    }

    /// The SPIR-V `kernels.cl` was built to.
    pub fn spirv(&self) -> &[u8] {
        self.program.spirv()
    }

    /// Runs kernel `name`; a failed launch, or a checked launch that found
    /// anything, is the error.
    fn launch(
        &self,
        rt: &Runtime,
        name: &str,
        range: NdRange,
        args: &[Arg<'_>],
    ) -> Result<(), String> {
        let kernel = self.program.kernel(name).map_err(|e| e.to_string())?;
        let found = kernel
            .run_with(rt, range, args, |l| l, self.checked)
            .map_err(|e| format!("{name}: {e}"))?;
        if found.is_empty() {
            Ok(())
        } else {
            Err(format!("{name}: the checker found {found:?}"))
        }
    }

    /// The barrier loop.
    pub fn barrier_loop(&self, rt: &Runtime, s: &Sizes) -> Run {
        let (n, local, barriers) = s.barrier;
        let out = Buffer::<u32>::new(n);
        let mut r = Ok(());
        let time = crate::timing::timed(|| {
            r = self.launch(
                rt,
                "barrier_loop",
                NdRange::new([n]).local([local]),
                &[Arg::Buffer(&out), Arg::of(&[barriers as i32])],
            );
        });
        let want: Vec<u32> = (0..n)
            .map(|g| reference::barrier_loop(g % local, barriers))
            .collect();
        Run {
            time,
            verified: r.and_then(|()| compare("barrier loop", &out.to_vec(), &want)),
        }
    }

    /// Tree reduction.
    pub fn reduce(&self, rt: &Runtime, input: &[f32]) -> Run {
        let n = input.len();
        let data = Buffer::from_slice(input);
        let partial = Buffer::<f32>::new(n / GROUP);
        let mut r = Ok(());
        let time = crate::timing::timed(|| {
            r = self.launch(
                rt,
                "reduce",
                NdRange::new([n]).local([GROUP]),
                &[
                    Arg::Buffer(&data),
                    Arg::Buffer(&partial),
                    Arg::Local(GROUP * 4),
                ],
            );
        });
        let total: f64 = partial.to_vec().iter().map(|&v| f64::from(v)).sum();
        Run {
            time,
            verified: r.and_then(|()| reference::check_sum(total, input)),
        }
    }

    /// Group scan, host scan of the totals, device-wide add.
    pub fn scan(&self, rt: &Runtime, input: &[i32]) -> Run {
        let n = input.len();
        let groups = n / GROUP;
        let data = Buffer::from_slice(input);
        let sums = Buffer::<i32>::new(groups);
        let mut r = Ok(());
        let time = crate::timing::timed(|| {
            let local = (SCAN_PAD + GROUP) * 4;
            r = self
                .launch(
                    rt,
                    "scan_groups",
                    NdRange::new([n]).local([GROUP]),
                    &[
                        Arg::Buffer(&data),
                        Arg::Buffer(&sums),
                        Arg::Local(local),
                        Arg::Local(local),
                    ],
                )
                .and_then(|()| {
                    let offsets = Buffer::from_slice(&block_offsets(&sums.to_vec()));
                    self.launch(
                        rt,
                        "scan_add",
                        NdRange::new([n]).local([GROUP]),
                        &[Arg::Buffer(&data), Arg::Buffer(&offsets)],
                    )
                });
        });
        Run {
            time,
            verified: r.and_then(|()| compare("scan", &data.to_vec(), &reference::scan(input))),
        }
    }

    /// Tiled SGEMM.
    pub fn sgemm(&self, rt: &Runtime, a: &[f32], b: &[f32], n: usize) -> Run {
        let (ab, bb) = (Buffer::from_slice(a), Buffer::from_slice(b));
        let c = Buffer::<f32>::new(n * n);
        let mut r = Ok(());
        let time = crate::timing::timed(|| {
            r = self.launch(
                rt,
                "sgemm",
                NdRange::new([n, n]).local([TILE, TILE]),
                &[
                    Arg::Buffer(&ab),
                    Arg::Buffer(&bb),
                    Arg::Buffer(&c),
                    Arg::of(&[n as i32]),
                ],
            );
        });
        Run {
            time,
            verified: r.and_then(|()| compare("sgemm", &c.to_vec(), &reference::sgemm(a, b, n))),
        }
    }

    /// Histogram with local atomics.
    pub fn histogram(&self, rt: &Runtime, input: &[u8]) -> Run {
        let items = input.len() / HIST_PER_ITEM;
        let data = Buffer::from_slice(input);
        let bins = Buffer::<u32>::new(256);
        let mut r = Ok(());
        let time = crate::timing::timed(|| {
            r = self.launch(
                rt,
                "histogram",
                NdRange::new([items]).local([GROUP]),
                &[Arg::Buffer(&data), Arg::Buffer(&bins)],
            );
        });
        Run {
            time,
            verified: r
                .and_then(|()| compare("histogram", &bins.to_vec(), &reference::histogram(input))),
        }
    }

    /// Release/acquire ping-pong between two work-groups: `rt` needs two
    /// worker threads, so that both groups run at once.
    pub fn message_passing(&self, rt: &Runtime, rounds: usize) -> Run {
        let shared = Buffer::<u32>::new(3);
        let mut r = Ok(());
        let time = crate::timing::timed(|| {
            r = self.launch(
                rt,
                "ping_pong",
                NdRange::new([2]).local([1]),
                &[Arg::Buffer(&shared), Arg::of(&[rounds as i32])],
            );
        });
        let want = [2 * rounds as u32 - 1, 2 * rounds as u32];
        Run {
            time,
            verified: r.and_then(|()| compare("messages", &shared.to_vec()[1..], &want)),
        }
    }
}
