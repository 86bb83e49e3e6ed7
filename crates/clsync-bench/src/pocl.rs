//! The workloads as OpenCL C kernels (`kernels.cl`) on an OpenCL CPU
//! device found through the ICD loader: PoCL's (`pocl-opencl-icd` on
//! Debian), and Intel's CPU runtime where it is installed (`scripts/bench.sh
//! --intel` installs it, from PyPI's `intel-opencl-rt`, into its own
//! virtual environment and points the loader at it). Each column takes its
//! own platform by name, never another's CPU device ([`choose`]).

use std::ptr;
use std::time::Duration;

use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::device::{Device, CL_DEVICE_TYPE_CPU};
use opencl3::kernel::{ExecuteKernel, Kernel};
use opencl3::memory::{Buffer, CL_MEM_READ_WRITE};
use opencl3::platform::get_platforms;
use opencl3::program::Program;
use opencl3::types::{cl_float, cl_int, cl_uchar, cl_uint, CL_BLOCKING};

use crate::reference::{self, compare};
use crate::{block_offsets, Run, Sizes, GROUP, HIST_PER_ITEM, SCAN_PAD, TILE};

const SOURCE: &str = include_str!("kernels.cl");

/// An OpenCL CPU device with the workloads' program built for it.
pub struct Pocl {
    /// The device's name and version, for the table's header.
    pub description: String,
    /// Its compute units: the ping-pong needs two work-groups running at
    /// once, so at least two.
    pub compute_units: u32,
    context: Context,
    queue: CommandQueue,
    program: Program,
}

/// Why the OpenCL side cannot run.
pub type Error = String;

/// PoCL's variable for the number of worker threads of its `pthread` CPU
/// device (PoCL 3.1; its compute units follow it). Without it PoCL runs one
/// thread per core, whatever the suite's `--threads`.
pub const THREADS_VAR: &str = "POCL_MAX_PTHREAD_COUNT";

/// Asks PoCL for `threads` worker threads, as clsync and the limit get,
/// unless the environment already names a count (which then wins, and the
/// device's compute units say so). PoCL reads the variable when the
/// platform is first asked for, in [`Pocl::new`].
///
/// Call it before the process starts any thread: it sets an environment
/// variable, which another thread reading the environment at the same time
/// could see half-written.
pub fn request_threads(threads: usize) {
    for var in [THREADS_VAR, INTEL_THREADS_VAR, CLSYNC_THREADS_VAR] {
        if std::env::var_os(var).is_none() {
            std::env::set_var(var, threads.to_string());
        }
    }
}

/// PoCL's platform name (`CL_PLATFORM_NAME`).
pub const PLATFORM: &str = "Portable Computing Language";

/// The platform name of Intel's CPU runtime.
pub const INTEL: &str = "Intel(R) OpenCL";

/// clsync's own platform (`crates/clsync-icd`): `kernels.cl` through the
/// OpenCL API, as a host program runs it there.
pub const CLSYNC: &str = "clsync";

/// clsync's platform's variable for its worker count.
pub const CLSYNC_THREADS_VAR: &str = "CLSYNC_THREADS";

/// Intel's CPU runtime's variable for its number of worker threads (TBB
/// workers), which [`request_threads`] sets as it sets PoCL's.
pub const INTEL_THREADS_VAR: &str = "CL_CONFIG_CPU_TBB_NUM_WORKERS";

/// How a platform that is missing is installed, for the messages.
fn install_hint(platform: &str) -> &'static str {
    if platform == INTEL {
        "scripts/bench.sh --intel installs Intel's CPU runtime"
    } else if platform == CLSYNC {
        "scripts/bench.sh registers clsync's platform (crates/clsync-icd) for the run"
    } else {
        "install pocl-opencl-icd"
    }
}

/// Which of the platforms, given as their names and numbers of CPU devices,
/// is `platform` with a CPU device; or why none is. Another platform's CPU
/// device is never taken instead: its figures would go in the wrong column.
pub fn choose(platforms: &[(&str, usize)], platform: &str) -> Result<usize, Error> {
    if let Some(i) = platforms
        .iter()
        .position(|&(name, cpus)| name == platform && cpus > 0)
    {
        return Ok(i);
    }
    let hint = install_hint(platform);
    if platforms.is_empty() {
        return Err(format!("no OpenCL platform; {hint}"));
    }
    let seen: Vec<String> = platforms
        .iter()
        .map(|(name, cpus)| format!("{name:?} ({cpus} CPU device(s))"))
        .collect();
    Err(format!(
        "no {platform:?} CPU device among the OpenCL platforms: {}; {hint}",
        seen.join(", ")
    ))
}

impl Pocl {
    /// Runs every workload but message passing at the sizes `s` (the
    /// barrier loop at each of its local sizes) and checks each against its
    /// sequential reference: the first that differs, named.
    pub fn check_workloads(&self, s: &Sizes) -> Result<(), String> {
        for local in s.barrier_locals {
            let b = s.with_barrier_local(local);
            self.barrier_loop(&b)
                .verified
                .map_err(|e| format!("barrier loop, local {local}: {e}"))?;
        }
        let runs = [
            ("reduce", self.reduce(&reference::reduce_input(s.reduce))),
            ("scan", self.scan(&reference::scan_input(s.scan))),
            (
                "sgemm",
                self.sgemm(
                    &reference::matrix(s.sgemm, 4),
                    &reference::matrix(s.sgemm, 5),
                    s.sgemm,
                ),
            ),
            (
                "histogram",
                self.histogram(&reference::histogram_input(s.histogram)),
            ),
        ];
        for (name, run) in runs {
            run.verified.map_err(|e| format!("{name}: {e}"))?;
        }
        Ok(())
    }

    /// Finds PoCL's CPU device and builds the program, or says why not.
    pub fn new() -> Result<Pocl, Error> {
        Self::on(PLATFORM)
    }

    /// Finds `platform`'s CPU device (PoCL's, [`INTEL`]) and builds the
    /// program, or says why not.
    pub fn on(platform: &str) -> Result<Pocl, Error> {
        let platforms = get_platforms()
            .map_err(|e| format!("no OpenCL platform ({e}); {}", install_hint(platform)))?;
        // Each platform's name and its CPU devices (none where it has none,
        // as a GPU driver's platform answers).
        let found: Vec<(String, Vec<_>)> = platforms
            .iter()
            .map(|p| {
                let name = p.name().unwrap_or_default();
                (name, p.get_devices(CL_DEVICE_TYPE_CPU).unwrap_or_default())
            })
            .collect();
        let names: Vec<(&str, usize)> = found
            .iter()
            .map(|(name, ids)| (name.as_str(), ids.len()))
            .collect();
        let device = Device::new(found[choose(&names, platform)?].1[0]);
        let compute_units = device.max_compute_units().unwrap_or(0);
        let description = format!(
            "{} ({}, {compute_units} compute units)",
            device.name().unwrap_or_default(),
            device.version().unwrap_or_default(),
        );
        let context = Context::from_device(&device).map_err(|e| format!("context: {e}"))?;
        #[allow(deprecated)]
        let queue = CommandQueue::create_default(&context, 0).map_err(|e| format!("queue: {e}"))?;
        let program = Program::create_and_build_from_source(&context, SOURCE, "-cl-std=CL3.0")
            .map_err(|e| format!("building kernels.cl: {e}"))?;
        Ok(Pocl {
            description,
            compute_units,
            context,
            queue,
            program,
        })
    }

    fn kernel(&self, name: &str) -> Kernel {
        Kernel::create(&self.program, name).expect("the program has every kernel")
    }

    fn buffer<T: Copy>(&self, data: &[T]) -> Buffer<T> {
        // SAFETY: a fresh buffer of `data.len()` elements, no host pointer.
        let mut b = unsafe {
            Buffer::<T>::create(
                &self.context,
                CL_MEM_READ_WRITE,
                data.len().max(1),
                ptr::null_mut(),
            )
        }
        .expect("buffer");
        if !data.is_empty() {
            // SAFETY: a blocking write of exactly the buffer's length.
            unsafe {
                self.queue
                    .enqueue_write_buffer(&mut b, CL_BLOCKING, 0, data, &[])
            }
            .expect("write");
        }
        b
    }

    fn read<T: Copy + Default>(&self, b: &Buffer<T>, len: usize) -> Vec<T> {
        let mut out = vec![T::default(); len];
        // SAFETY: a blocking read of `len` elements of a buffer that long.
        unsafe {
            self.queue
                .enqueue_read_buffer(b, CL_BLOCKING, 0, &mut out, &[])
        }
        .expect("read");
        out
    }

    fn finish(&self) {
        self.queue.finish().expect("finish");
    }

    /// The barrier loop.
    pub fn barrier_loop(&self, s: &Sizes) -> Run {
        let (n, local, barriers) = s.barrier;
        let out = self.buffer(&vec![0 as cl_uint; n]);
        let k = self.kernel("barrier_loop");
        let time = self.timed(|| {
            // SAFETY: the arguments match the kernel's parameters.
            unsafe {
                ExecuteKernel::new(&k)
                    .set_arg(&out)
                    .set_arg(&(barriers as cl_int))
                    .set_global_work_size(n)
                    .set_local_work_size(local)
                    .enqueue_nd_range(&self.queue)
            }
            .expect("enqueue");
        });
        let want: Vec<u32> = (0..n)
            .map(|g| reference::barrier_loop(g % local, barriers))
            .collect();
        Run {
            time,
            verified: compare("barrier loop", &self.read(&out, n), &want),
        }
    }

    /// Tree reduction.
    pub fn reduce(&self, input: &[f32]) -> Run {
        let n = input.len();
        let data = self.buffer(input);
        let partial = self.buffer(&vec![0 as cl_float; n / GROUP]);
        let k = self.kernel("reduce");
        let mut total = 0.0;
        let time = self.timed(|| {
            // SAFETY: the arguments match the kernel's parameters.
            unsafe {
                ExecuteKernel::new(&k)
                    .set_arg(&data)
                    .set_arg(&partial)
                    .set_arg_local_buffer(GROUP * 4)
                    .set_global_work_size(n)
                    .set_local_work_size(GROUP)
                    .enqueue_nd_range(&self.queue)
            }
            .expect("enqueue");
            total = self
                .read(&partial, n / GROUP)
                .iter()
                .map(|&v| f64::from(v))
                .sum();
        });
        Run {
            time,
            verified: reference::check_sum(total, input),
        }
    }

    /// Group scan, host scan of the totals, device-wide add.
    pub fn scan(&self, input: &[i32]) -> Run {
        let n = input.len();
        let groups = n / GROUP;
        let data = self.buffer(input);
        let sums = self.buffer(&vec![0 as cl_int; groups]);
        let (k1, k2) = (self.kernel("scan_groups"), self.kernel("scan_add"));
        let time = self.timed(|| {
            // SAFETY: the arguments match the kernel's parameters.
            unsafe {
                ExecuteKernel::new(&k1)
                    .set_arg(&data)
                    .set_arg(&sums)
                    // `PAD + GROUP` ints each (kernels.cl).
                    .set_arg_local_buffer((SCAN_PAD + GROUP) * 4)
                    .set_arg_local_buffer((SCAN_PAD + GROUP) * 4)
                    .set_global_work_size(n)
                    .set_local_work_size(GROUP)
                    .enqueue_nd_range(&self.queue)
            }
            .expect("enqueue");
            let offsets = self.buffer(&block_offsets(&self.read(&sums, groups)));
            // SAFETY: the arguments match the kernel's parameters.
            unsafe {
                ExecuteKernel::new(&k2)
                    .set_arg(&data)
                    .set_arg(&offsets)
                    .set_global_work_size(n)
                    .set_local_work_size(GROUP)
                    .enqueue_nd_range(&self.queue)
            }
            .expect("enqueue");
        });
        Run {
            time,
            verified: compare("scan", &self.read(&data, n), &reference::scan(input)),
        }
    }

    /// Tiled SGEMM.
    pub fn sgemm(&self, a: &[f32], b: &[f32], n: usize) -> Run {
        let (ab, bb) = (self.buffer(a), self.buffer(b));
        let c = self.buffer(&vec![0 as cl_float; n * n]);
        let k = self.kernel("sgemm");
        let time = self.timed(|| {
            // SAFETY: the arguments match the kernel's parameters.
            unsafe {
                ExecuteKernel::new(&k)
                    .set_arg(&ab)
                    .set_arg(&bb)
                    .set_arg(&c)
                    .set_arg(&(n as cl_int))
                    .set_global_work_sizes(&[n, n])
                    .set_local_work_sizes(&[TILE, TILE])
                    .enqueue_nd_range(&self.queue)
            }
            .expect("enqueue");
        });
        Run {
            time,
            verified: compare("sgemm", &self.read(&c, n * n), &reference::sgemm(a, b, n)),
        }
    }

    /// Histogram with local atomics.
    pub fn histogram(&self, input: &[u8]) -> Run {
        let items = input.len() / HIST_PER_ITEM;
        let data = self.buffer::<cl_uchar>(input);
        let bins = self.buffer(&[0 as cl_uint; 256]);
        let k = self.kernel("histogram");
        let time = self.timed(|| {
            // SAFETY: the arguments match the kernel's parameters.
            unsafe {
                ExecuteKernel::new(&k)
                    .set_arg(&data)
                    .set_arg(&bins)
                    .set_global_work_size(items)
                    .set_local_work_size(GROUP)
                    .enqueue_nd_range(&self.queue)
            }
            .expect("enqueue");
        });
        Run {
            time,
            verified: compare(
                "histogram",
                &self.read(&bins, 256),
                &reference::histogram(input),
            ),
        }
    }

    /// Release/acquire ping-pong between two work-groups. The device must
    /// have two compute units (see [`Pocl::compute_units`]), or the two
    /// groups may never run at once and the kernel never ends.
    pub fn message_passing(&self, rounds: usize) -> Run {
        assert!(
            self.compute_units >= 2,
            "the ping-pong needs two compute units; this device has {}",
            self.compute_units
        );
        // turn, then the two messages.
        let shared = self.buffer(&[0 as cl_uint; 3]);
        let k = self.kernel("ping_pong");
        let time = self.timed(|| {
            // SAFETY: the arguments match the kernel's parameters.
            unsafe {
                ExecuteKernel::new(&k)
                    .set_arg(&shared)
                    .set_arg(&(rounds as cl_int))
                    .set_global_work_size(2)
                    .set_local_work_size(1)
                    .enqueue_nd_range(&self.queue)
            }
            .expect("enqueue");
        });
        let want = [2 * rounds as u32 - 1, 2 * rounds as u32];
        Run {
            time,
            verified: compare("messages", &self.read(&shared, 3)[1..], &want),
        }
    }

    /// The time of `f` and of the queue's work it enqueues (the queue is
    /// drained first, so none of the setup is counted).
    fn timed(&self, f: impl FnOnce()) -> Duration {
        self.finish();
        crate::timing::timed(|| {
            f();
            self.finish();
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{choose, INTEL, PLATFORM};

    #[test]
    fn pocl_is_chosen_over_another_cpu_device() {
        let found = [("NVIDIA CUDA", 0), ("Intel(R) OpenCL", 1), (PLATFORM, 1)];
        assert_eq!(choose(&found, PLATFORM), Ok(2));
        assert_eq!(choose(&found, INTEL), Ok(1));
    }

    #[test]
    fn another_platforms_cpu_device_is_refused_by_name() {
        let why = choose(&[("NVIDIA CUDA", 0), ("Intel(R) OpenCL", 1)], PLATFORM).unwrap_err();
        assert!(
            why.contains("no \"Portable Computing Language\" CPU device"),
            "{why}"
        );
        assert!(
            why.contains("\"Intel(R) OpenCL\" (1 CPU device(s))"),
            "{why}"
        );
        assert!(why.contains("\"NVIDIA CUDA\" (0 CPU device(s))"), "{why}");
    }

    #[test]
    fn pocl_without_a_cpu_device_or_no_platform_is_refused() {
        assert!(choose(&[(PLATFORM, 0)], PLATFORM).is_err());
        assert!(choose(&[], PLATFORM)
            .unwrap_err()
            .contains("no OpenCL platform"));
        assert!(choose(&[(PLATFORM, 1)], INTEL)
            .unwrap_err()
            .contains("bench.sh --intel"));
    }
}
