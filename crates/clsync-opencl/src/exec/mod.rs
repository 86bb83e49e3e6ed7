//! Running compiled kernels on clsync's runtime.
//!
//! A launch runs on one of two of the runtime's engines (`launch`):
//!
//! * **work-item loops** (`loops`), for kernels whose barriers are
//!   work-group barriers in their own body, checked or not: each work-group
//!   is a [`clsync::Group`] whose barrier intervals are loops over its
//!   work-items, each calling the kernel's continuation function (see
//!   [`crate::translate::continuation`]), and a barrier is the group's (a
//!   checked build names each work-item to the checker as it runs it, and
//!   keeps its private memory apart: `loops::Privates`);
//! * **coroutines**, for every other kernel: each
//!   work-item is a resumable task whose body calls the kernel's compiled
//!   entry with its own [`ctx::ItemCtx`]; a barrier is a runtime call that
//!   suspends the task ([`clsync::WorkItem::barrier_dyn_at`]).
//!
//! Both share the runtime's scheduler, watchdog and divergence reports
//! with Rust kernels.

mod bits;
pub mod checked;
pub mod collectives;
pub mod copies;
pub mod ctx;
pub mod helpers;
pub mod image;
mod launch;
pub(crate) mod loops;
pub mod math;
pub mod printf;
pub mod report;
mod scratch;
pub mod svm;

use clsync::{Launch, LaunchError, Runtime};

use crate::program::{ArgKind, KernelInfo, Program};
use crate::translate::EntryFn;
use ctx::{Slot, SlotInfo, OFFSET_BITS};

/// A kernel argument.
pub enum Arg<'a> {
    /// A buffer for a `global` or `constant` pointer: any clsync buffer.
    Buffer(&'a dyn MemObject),
    /// A null pointer.
    Null,
    /// `local` memory of this many bytes for a `local` pointer.
    Local(usize),
    /// A value passed by value (a scalar, vector or struct), as its bytes
    /// in the kernel's layout.
    Value(Vec<u8>),
    /// An image for an `image*_t` parameter.
    Image(&'a image::Image),
    /// A sampler for a `sampler_t` parameter.
    Sampler(image::Sampler),
    /// A host address in shared virtual memory ([`svm::register`]) for a
    /// `global` or `constant` pointer (`clSetKernelArgSVMPointer`).
    Svm(u64),
}

impl Arg<'_> {
    /// A scalar or vector passed by value, from its components.
    ///
    /// ```
    /// use clsync_opencl::Arg;
    /// let Arg::Value(bytes) = Arg::of(&[1.0f32, 2.0]) else { unreachable!() };
    /// assert_eq!(bytes.len(), 8);
    /// ```
    pub fn of<T: ArgScalar>(v: &[T]) -> Arg<'static> {
        Arg::Value(v.iter().flat_map(|x| x.le_bytes()).collect())
    }
}

/// A number that can be a kernel argument's component.
pub trait ArgScalar: Copy {
    /// Its little-endian bytes.
    fn le_bytes(self) -> Vec<u8>;
}
macro_rules! arg_scalar {
    ($($t:ty)*) => {$( impl ArgScalar for $t { fn le_bytes(self) -> Vec<u8> { self.to_le_bytes().to_vec() } } )*};
}
arg_scalar!(i8 u8 i16 u16 i32 u32 i64 u64 f32 f64);

/// The alignment compiled code's memory objects start at: enough for every
/// atomic and the machine's vector loads (the allocator's own, in practice, so
/// that an object's first byte is its buffer's).
pub const ALIGN: usize = 16;

/// `p` rounded up to [`ALIGN`]; objects are allocated `ALIGN` bytes larger
/// than they are, so that their memory starts there.
pub fn aligned(p: *mut u8) -> *mut u8 {
    p.wrapping_add(p.align_offset(ALIGN))
}

/// How the host allowed a kernel to use a buffer (`CL_MEM_READ_ONLY`,
/// `CL_MEM_WRITE_ONLY`): a checked launch reports a write to a read-only
/// buffer and a read of a write-only one, except a compiler's read of a
/// vector whose value only goes back, some components replaced (`p[i].z =
/// 7` on a `float4`), as Oclgrind does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Access {
    /// Both.
    #[default]
    ReadWrite,
    /// Reads only.
    ReadOnly,
    /// Writes only.
    WriteOnly,
}

/// Memory a kernel can reach through a pointer argument.
pub trait MemObject: Sync {
    /// The first byte and the length in bytes.
    fn bytes(&self) -> (*mut u8, usize);
    /// The name reports give it.
    fn name(&self) -> &str;
    /// How kernels may use it.
    fn access(&self) -> Access {
        Access::ReadWrite
    }
    /// Whether the host wrote its contents: a checked launch treats the
    /// bytes of a buffer that is not as uninitialized until a kernel
    /// writes them (Oclgrind's `noinit` buffers).
    fn initialized(&self) -> bool {
        true
    }
}

impl<T: clsync::memory::Element> MemObject for clsync::Buffer<T> {
    fn bytes(&self) -> (*mut u8, usize) {
        self.raw_bytes()
    }
    fn name(&self) -> &str {
        clsync::Buffer::name(self)
    }
}

/// Why a kernel could not run.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The arguments do not fit the kernel.
    #[error("kernel `{kernel}`: {message}")]
    Arguments {
        /// The kernel.
        kernel: String,
        /// What is wrong, naming the argument.
        message: String,
    },
    /// The checked build of the program failed (the fast one built).
    #[error("kernel `{kernel}`: the checked build failed: {error}")]
    CheckedBuild {
        /// The kernel.
        kernel: String,
        /// Why.
        error: crate::CompileError,
    },
    /// A checked launch that [`Kernel::run`](crate::Kernel::run) made
    /// found something.
    #[error("{} finding(s) of the checked launch; the first: {}", .0.diagnostics.len() + .0.checker.len(), first_finding(.0))]
    Found(Box<Findings>),
    /// The launch failed: divergence, a fault, a stall, an invalid range.
    /// A checked launch's own findings up to then are kept.
    #[error("{error}")]
    Launch {
        /// Why.
        error: LaunchError,
        /// What a checked launch found before.
        diagnostics: Vec<report::Diagnostic>,
    },
}

fn first_finding(f: &Findings) -> String {
    match (f.diagnostics.first(), f.checker.first()) {
        (Some(d), _) => d.headline.clone(),
        (None, Some(r)) => report::headline(r),
        (None, None) => "none".into(),
    }
}

/// What a checked run found: invalid accesses and the async-copy rules
/// (`diagnostics`), and the runtime checker's races, divergence and scope
/// findings (`checker`). Both are empty for a clean run.
#[derive(Debug, Default)]
pub struct Findings {
    /// Found by the compiled code's runtime calls.
    pub diagnostics: Vec<report::Diagnostic>,
    /// Found by clsync's checker.
    pub checker: Vec<clsync::checker::Report>,
}

impl Findings {
    /// Whether nothing was found.
    pub fn is_empty(&self) -> bool {
        self.diagnostics.is_empty() && self.checker.is_empty()
    }
}

/// The words and slots one launch's arguments make.
struct Bound {
    /// Flattened argument words, one per leaf.
    words: Vec<u64>,
    /// The slot table's part that is the same for every work-item (null,
    /// program variables, argument buffers); the group's and work-item's
    /// parts are filled per work-item.
    table: Vec<Slot>,
    infos: Vec<SlotInfo>,
    /// Local arguments: (slot, bytes, index into the launch's local args).
    locals: Vec<(usize, usize, usize)>,
    /// By-value struct arguments: (slot, offset in the private block,
    /// bytes).
    byval: Vec<(usize, usize, Vec<u8>)>,
    private_bytes: usize,
    /// Buffers whose contents the host did not write: (slot, bytes).
    uninitialized: Vec<(usize, usize)>,
    /// The images, by handle minus one.
    images: Vec<image::ImageRef>,
}

struct SendPtr(*mut u8);
// SAFETY: the pointers point into buffers that are `Sync` (their elements
// are atomics) and outlive the launch.
unsafe impl Send for SendPtr {}
// SAFETY: as above.
unsafe impl Sync for SendPtr {}

fn bind(p: &Program, k: &KernelInfo, args: &[Arg<'_>]) -> Result<Bound, RunError> {
    let err = |message: String| RunError::Arguments {
        kernel: k.name.clone(),
        message,
    };
    if args.len() != k.params.len() {
        return Err(err(format!(
            "takes {} arguments, {} given",
            k.params.len(),
            args.len()
        )));
    }
    let plan = &p.plan;
    let mut table = vec![Slot::NULL; plan.infos.len()];
    for (id, slot) in &plan.program {
        let (base, len) = p.program_memory(*id);
        table[*slot as usize] = Slot {
            base,
            len: len as u64,
        };
    }
    let mut infos = plan.infos.clone();
    let mut words = Vec::new();
    let mut locals = Vec::new();
    let mut byval = Vec::new();
    let mut private_bytes = plan.private_bytes as usize;
    let mut uninitialized = Vec::new();
    let mut images = Vec::new();
    // The buffer arguments' bytes: (slot, start, end, written through,
    // proven).
    let mut buffers: Vec<(
        usize,
        usize,
        usize,
        bool,
        Option<crate::translate::BufferUse>,
    )> = Vec::new();
    for (i, (param, arg)) in k.params.iter().zip(args).enumerate() {
        let which = || format!("argument {i} (`{}`, {})", param.name, param.type_name);
        let slot = table.len();
        match (&param.kind, arg) {
            (ArgKind::Global | ArgKind::Constant, Arg::Buffer(b)) => {
                let (base, len) = b.bytes();
                if !b.initialized() {
                    uninitialized.push((slot, len));
                }
                buffers.push((
                    slot,
                    base as usize,
                    base as usize + len,
                    param.written,
                    param.owned,
                ));
                table.push(Slot {
                    base,
                    len: len as u64,
                });
                infos.push(SlotInfo {
                    space: if param.kind == ArgKind::Global {
                        "global"
                    } else {
                        "constant"
                    },
                    name: param.name.clone(),
                    access: b.access(),
                    unwritten: false,
                    owned: false,
                });
                words.push((slot as u64) << OFFSET_BITS);
            }
            (ArgKind::Global | ArgKind::Constant | ArgKind::Local, Arg::Null) => words.push(0),
            (ArgKind::Global | ArgKind::Constant, Arg::Svm(p)) => words.push(*p),
            (ArgKind::Local, Arg::Local(bytes)) => {
                table.push(Slot::NULL);
                infos.push(SlotInfo {
                    space: "local",
                    name: param.name.clone(),
                    access: Access::ReadWrite,
                    unwritten: false,
                    owned: false,
                });
                locals.push((slot, *bytes, locals.len()));
                words.push((slot as u64) << OFFSET_BITS);
            }
            (ArgKind::ByVal { size }, Arg::Value(v)) => {
                if v.len() != *size {
                    return Err(err(format!(
                        "{}: {} bytes given, the type has {size}",
                        which(),
                        v.len()
                    )));
                }
                table.push(Slot::NULL);
                infos.push(SlotInfo {
                    space: "private",
                    name: param.name.clone(),
                    access: Access::ReadWrite,
                    unwritten: false,
                    owned: false,
                });
                let off = private_bytes.next_multiple_of(16);
                private_bytes = off + size;
                byval.push((slot, off, v.clone()));
                words.push((slot as u64) << OFFSET_BITS);
            }
            (ArgKind::Value { size, leaves }, Arg::Value(v)) => {
                if v.len() != *size {
                    return Err(err(format!(
                        "{}: {} bytes given, the type has {size}",
                        which(),
                        v.len()
                    )));
                }
                for (off, bytes) in leaves {
                    let mut w = [0u8; 8];
                    w[..*bytes].copy_from_slice(&v[*off..*off + *bytes]);
                    words.push(u64::from_le_bytes(w));
                }
            }
            (ArgKind::Image { dim, arrayed }, Arg::Image(img)) => {
                let (d, a) = match img.shape() {
                    image::ImageShape::D1 { .. } if img.is_from_buffer() => (5, false),
                    image::ImageShape::D1 { .. } => (0, false),
                    image::ImageShape::D2 { .. } => (1, false),
                    image::ImageShape::D3 { .. } => (2, false),
                    image::ImageShape::D1Array { .. } => (0, true),
                    image::ImageShape::D2Array { .. } => (1, true),
                };
                if (d, a) != (*dim, *arrayed) {
                    return Err(err(format!(
                        "{}: an image of shape {:?} given, the kernel takes {}",
                        which(),
                        img.shape(),
                        param.kind.describe()
                    )));
                }
                images.push(img.bind());
                words.push(images.len() as u64);
            }
            (ArgKind::Sampler, Arg::Sampler(s)) => words.push(u64::from(s.0)),
            (kind, _) => {
                let given = match arg {
                    Arg::Buffer(_) => "a buffer",
                    Arg::Null => "a null pointer",
                    Arg::Local(_) => "local memory",
                    Arg::Value(_) => "a value",
                    Arg::Image(_) => "an image",
                    Arg::Sampler(_) => "a sampler",
                    Arg::Svm(_) => "a shared virtual memory pointer",
                };
                return Err(err(format!(
                    "{}: {given} given, the kernel takes {}",
                    which(),
                    kind.describe()
                )));
            }
        }
    }
    if table.len() as u64 >= 1 << (64 - OFFSET_BITS) {
        return Err(err("too many memory objects".into()));
    }
    // A buffer is unwritten when its parameter is never written through and
    // no written one shares a byte with it (the same buffer twice, or
    // overlapping sub-buffers); an image made from a buffer may share its
    // bytes too, and writes by pixel.
    let image_on_buffer = args
        .iter()
        .any(|a| matches!(a, Arg::Image(img) if img.is_from_buffer()));
    let svm = args.iter().any(|a| matches!(a, Arg::Svm(_)));
    for &(slot, start, end, written, owned) in &buffers {
        infos[slot].unwritten = !written
            && !image_on_buffer
            && !buffers
                .iter()
                .any(|&(_, s, e, w, _)| w && s < end && start < e);
        // A proven buffer shares no byte with another argument (which the
        // proof does not see), and is used as the host allowed (so that
        // no access of it is a report).
        let alone = !image_on_buffer
            && !svm
            && !buffers
                .iter()
                .any(|&(o, s, e, _, _)| o != slot && s < end && start < e);
        let allowed = owned.is_some_and(|u| match infos[slot].access {
            Access::ReadOnly => !u.writes,
            Access::WriteOnly => !u.reads,
            Access::ReadWrite => true,
        });
        infos[slot].owned = alone && allowed;
    }
    Ok(Bound {
        words,
        table,
        infos,
        locals,
        byval,
        private_bytes,
        uninitialized,
        images,
    })
}

/// Runs kernel `k` of `p` over `range` with `args`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run(
    p: &Program,
    build: &crate::translate::Compiled,
    k: &KernelInfo,
    entry: EntryFn,
    rt: &Runtime,
    launch: Launch,
    args: &[Arg<'_>],
    checked: bool,
    engine: Engine,
) -> Result<Findings, RunError> {
    let bound = bind(p, k, args)?;
    launch::run(p, build, k, entry, rt, launch, bound, checked, engine)
}

/// What a launch may run on, beyond what its kernel's shape allows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Engine {
    /// The coroutine engine, whatever the kernel's shape.
    pub coroutines: bool,
    /// Work-item loops of one work-item per iteration only: no lane
    /// batches (`translate::continuation::batch`).
    pub no_lanes: bool,
}
