//! Buffers and sub-buffers: `clCreateBuffer*`, `clCreateSubBuffer`, their
//! queries and destructor callbacks.
//!
//! A buffer's bytes are one allocation aligned to
//! `CL_DEVICE_MEM_BASE_ADDR_ALIGN` (128 bytes), or the application's own
//! memory for `CL_MEM_USE_HOST_PTR`; kernels and the host share them (the
//! device is the host: `CL_DEVICE_HOST_UNIFIED_MEMORY`), so a map hands out
//! the buffer's own bytes. The commands that move bytes are in
//! [`crate::transfer`].

use std::alloc::Layout;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use clsync_opencl::{Access, MemObject};
use opencl_sys::*;

use crate::api::{self, ClResult};
use crate::context::{self, Context, Destructor, Destructors};
use crate::handle::{self, Ref};
use crate::image::ImageMem;
use crate::info::Value;
use crate::platform::{self, answer};

/// The alignment of every buffer (`CL_DEVICE_MEM_BASE_ADDR_ALIGN`, in bytes).
pub const ALIGN: usize = 128;

/// A buffer's bytes.
struct Storage {
    ptr: *mut u8,
    /// The allocation's layout; `None` for the application's memory.
    layout: Option<Layout>,
}

// SAFETY: the storage is plain bytes that kernels and the host access
// through raw pointers with the OpenCL memory model's rules; the pointer
// itself is never changed.
unsafe impl Send for Storage {}
// SAFETY: as above.
unsafe impl Sync for Storage {}

impl Drop for Storage {
    fn drop(&mut self) {
        if let Some(layout) = self.layout {
            // SAFETY: allocated with this layout in `Storage::new`, freed
            // once (the storage is dropped once, after every user).
            unsafe { std::alloc::dealloc(self.ptr, layout) };
        }
    }
}

/// A memory object (a buffer or sub-buffer).
pub struct Mem {
    /// Its context.
    pub context: Ref<Context>,
    /// The flags it was made with (a sub-buffer's include what it
    /// inherited).
    pub flags: cl_mem_flags,
    /// Bytes.
    pub size: usize,
    storage: Arc<Storage>,
    /// Where it starts in the storage (a sub-buffer's origin).
    offset: usize,
    parent: Option<Ref<Mem>>,
    /// `CL_MEM_HOST_PTR`.
    host_ptr: usize,
    properties: Vec<cl_mem_properties>,
    /// Outstanding maps (`CL_MEM_MAP_COUNT`).
    pub maps: AtomicU32,
    destructors: Destructors,
    /// The name reports give it: `buffer N`.
    name: String,
    /// An image's texels and description.
    pub image: Option<ImageMem>,
    /// Outstanding maps of an image: pointer, origin, region, flags.
    mapped: Mutex<Vec<MapRecord>>,
}

/// A map of an image: the pointer handed out, the origin and region in the
/// texels' layout, the map flags.
type MapRecord = (usize, [usize; 3], [usize; 3], cl_map_flags);

impl handle::Object for Mem {
    fn destroyed(&mut self, h: usize) {
        self.destructors.run(h);
    }
}

impl Mem {
    /// The first byte.
    pub fn ptr(&self) -> *mut u8 {
        // SAFETY: `offset` is within the storage (checked when the
        // sub-buffer was made).
        unsafe { self.storage.ptr.add(self.offset) }
    }

    /// The name reports give it (`buffer N`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The object it was made from: a sub-buffer's buffer, an
    /// image1d_buffer_t's buffer.
    pub fn parent(&self) -> Option<&Ref<Mem>> {
        self.parent.as_ref()
    }

    /// Whether `[offset, offset + len)` lies within the object.
    pub fn holds(&self, offset: usize, len: usize) -> bool {
        offset.checked_add(len).is_some_and(|end| end <= self.size)
    }

    /// Whether two objects' byte ranges overlap (sub-buffers of one
    /// buffer can).
    pub fn overlaps(&self, a: usize, other: &Mem, b: usize, len: usize) -> bool {
        if !Arc::ptr_eq(&self.storage, &other.storage) {
            return false;
        }
        let (x, y) = (self.offset + a, other.offset + b);
        x < y + len && y < x + len
    }

    /// Whether the host may read it (`CL_MEM_HOST_*` flags).
    pub fn host_reads(&self) -> ClResult<()> {
        if self.flags & (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS) != 0 {
            return Err(CL_INVALID_OPERATION);
        }
        Ok(())
    }

    /// Whether the host may read it (`to_host`) or write it.
    pub fn host_access(&self, to_host: bool) -> ClResult<()> {
        if to_host {
            self.host_reads()
        } else {
            self.host_writes()
        }
    }

    /// Whether the host may write it.
    pub fn host_writes(&self) -> ClResult<()> {
        if self.flags & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS) != 0 {
            return Err(CL_INVALID_OPERATION);
        }
        Ok(())
    }

    /// Records a map of an image, for its unmap.
    pub fn note_map(
        &self,
        ptr: usize,
        origin: [usize; 3],
        region: [usize; 3],
        flags: cl_map_flags,
    ) {
        self.mapped
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((ptr, origin, region, flags));
    }

    /// Whether an image has a map at `ptr`.
    pub fn is_mapped(&self, ptr: usize) -> bool {
        self.mapped
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .any(|r| r.0 == ptr)
    }

    /// The map of an image at `ptr`, forgotten: its origin, region, flags.
    pub fn take_map(&self, ptr: usize) -> Option<([usize; 3], [usize; 3], cl_map_flags)> {
        let mut m = self.mapped.lock().unwrap_or_else(|e| e.into_inner());
        let i = m.iter().position(|r| r.0 == ptr)?;
        let (_, o, r, f) = m.remove(i);
        Some((o, r, f))
    }

    /// The pointer a map of `offset` hands out: into the application's
    /// memory for `CL_MEM_USE_HOST_PTR` (the specification requires it),
    /// else into the buffer.
    pub fn map_ptr(&self, offset: usize) -> *mut c_void {
        // SAFETY: `offset` was checked to be within the object.
        unsafe { self.ptr().add(offset).cast() }
    }
}

/// A memory object as a kernel argument.
pub struct View(pub Ref<Mem>);

impl MemObject for View {
    fn bytes(&self) -> (*mut u8, usize) {
        (self.0.ptr(), self.0.size)
    }
    fn name(&self) -> &str {
        &self.0.name
    }
    fn access(&self) -> Access {
        if self.0.flags & CL_MEM_READ_ONLY != 0 {
            Access::ReadOnly
        } else if self.0.flags & CL_MEM_WRITE_ONLY != 0 {
            Access::WriteOnly
        } else {
            Access::ReadWrite
        }
    }
}

/// The memory object behind a handle (`CL_INVALID_MEM_OBJECT` otherwise).
pub fn get(h: cl_mem) -> ClResult<Ref<Mem>> {
    handle::get::<Mem>(h).ok_or(CL_INVALID_MEM_OBJECT)
}

pub(crate) const ACCESS: cl_mem_flags = CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY;
pub(crate) const HOST_ACCESS: cl_mem_flags =
    CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS;
pub(crate) const HOST_PTR: cl_mem_flags =
    CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR;

/// Checks a memory object's flags; returns them with the default access
/// (`CL_MEM_READ_WRITE`) filled in.
pub fn check_flags(flags: cl_mem_flags) -> ClResult<cl_mem_flags> {
    if flags & !(ACCESS | HOST_ACCESS | HOST_PTR | CL_MEM_KERNEL_READ_AND_WRITE) != 0
        || (flags & ACCESS).count_ones() > 1
        || (flags & HOST_ACCESS).count_ones() > 1
        || (flags & CL_MEM_USE_HOST_PTR != 0
            && flags & (CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR) != 0)
    {
        return Err(CL_INVALID_VALUE);
    }
    Ok(if flags & ACCESS == 0 {
        flags | CL_MEM_READ_WRITE
    } else {
        flags
    })
}

static NEXT_ID: AtomicUsize = AtomicUsize::new(1);

fn create(
    context: cl_context,
    properties: Vec<cl_mem_properties>,
    flags: cl_mem_flags,
    size: usize,
    host_ptr: *mut c_void,
) -> ClResult<*mut c_void> {
    let c = context::get(context)?;
    let flags = check_flags(flags)?;
    if size == 0 || size as u64 > platform::max_alloc() {
        return Err(CL_INVALID_BUFFER_SIZE);
    }
    let wants_ptr = flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR) != 0;
    if wants_ptr == host_ptr.is_null() {
        return Err(CL_INVALID_HOST_PTR);
    }
    let storage = if flags & CL_MEM_USE_HOST_PTR != 0 {
        Storage {
            ptr: host_ptr.cast(),
            layout: None,
        }
    } else {
        let layout = Layout::from_size_align(size, ALIGN).map_err(|_| CL_INVALID_BUFFER_SIZE)?;
        // SAFETY: `layout` has a non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            return Err(CL_MEM_OBJECT_ALLOCATION_FAILURE);
        }
        if flags & CL_MEM_COPY_HOST_PTR != 0 {
            // SAFETY: the application's `host_ptr` has `size` readable bytes
            // (clCreateBuffer's contract); `ptr` is a new allocation of
            // `size` bytes.
            unsafe { std::ptr::copy_nonoverlapping(host_ptr.cast::<u8>(), ptr, size) };
        }
        Storage {
            ptr,
            layout: Some(layout),
        }
    };
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let (_, h) = handle::create(Mem {
        context: c,
        flags,
        size,
        storage: Arc::new(storage),
        offset: 0,
        parent: None,
        host_ptr: if flags & CL_MEM_USE_HOST_PTR != 0 {
            host_ptr as usize
        } else {
            0
        },
        properties,
        maps: AtomicU32::new(0),
        destructors: Destructors::default(),
        name: format!("buffer {id}"),
        image: None,
        mapped: Mutex::new(Vec::new()),
    });
    Ok(h)
}

/// Makes an image's memory object over its texels.
pub fn create_image(
    context: Ref<Context>,
    flags: cl_mem_flags,
    properties: Vec<cl_mem_properties>,
    image: ImageMem,
    host_ptr: *mut c_void,
    buffer: Option<Ref<Mem>>,
) -> *mut c_void {
    let (ptr, size) = image.image.raw_bytes();
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let (_, h) = handle::create(Mem {
        context,
        flags,
        size,
        // The texels are the image's (kept alive by `image`), not freed
        // with the storage.
        storage: Arc::new(Storage { ptr, layout: None }),
        offset: 0,
        // The buffer an image1d_buffer_t's texels are
        // (`CL_MEM_ASSOCIATED_MEMOBJECT`, `CL_IMAGE_BUFFER`).
        parent: buffer,
        host_ptr: if flags & CL_MEM_USE_HOST_PTR != 0 {
            host_ptr as usize
        } else {
            0
        },
        properties,
        maps: AtomicU32::new(0),
        destructors: Destructors::default(),
        name: format!("image {id}"),
        image: Some(image),
        mapped: Mutex::new(Vec::new()),
    });
    h
}

/// Checks map flags against the object's host access.
pub fn check_map_flags(m: &Mem, map_flags: cl_map_flags) -> ClResult<()> {
    let known = CL_MAP_READ | CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION;
    if map_flags & !known != 0
        || (map_flags & CL_MAP_WRITE_INVALIDATE_REGION != 0
            && map_flags & (CL_MAP_READ | CL_MAP_WRITE) != 0)
    {
        return Err(CL_INVALID_VALUE);
    }
    if map_flags & CL_MAP_READ != 0 {
        m.host_reads()?;
    }
    if map_flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION) != 0 {
        m.host_writes()?;
    }
    Ok(())
}

/// `clCreateBuffer`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clCreateBuffer(
    context: cl_context,
    flags: cl_mem_flags,
    size: usize,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    // SAFETY: the caller's contract.
    unsafe {
        api::object(errcode_ret, || {
            create(context, Vec::new(), flags, size, host_ptr)
        })
    }
}

/// `clCreateBufferWithProperties`: no buffer property is supported, so the
/// list must be empty.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clCreateBufferWithProperties(
    context: cl_context,
    props: *const cl_mem_properties,
    flags: cl_mem_flags,
    size: usize,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    // SAFETY: the caller's contract.
    unsafe {
        api::object(errcode_ret, || {
            let pairs = api::properties(props)?;
            if !pairs.is_empty() {
                return Err(CL_INVALID_PROPERTY);
            }
            create(
                context,
                api::property_list(&pairs, !props.is_null()),
                flags,
                size,
                host_ptr,
            )
        })
    }
}

/// `clCreateSubBuffer`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clCreateSubBuffer(
    buffer: cl_mem,
    flags: cl_mem_flags,
    create_type: cl_buffer_create_type,
    create_info: *const c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    // SAFETY: the caller's contract.
    unsafe {
        api::object(errcode_ret, || {
            let parent = get(buffer)?;
            if parent.parent.is_some() || parent.image.is_some() {
                return Err(CL_INVALID_MEM_OBJECT);
            }
            if create_type != CL_BUFFER_CREATE_TYPE_REGION || create_info.is_null() {
                return Err(CL_INVALID_VALUE);
            }
            // A non-null `cl_buffer_region` for this create type.
            let region = create_info.cast::<cl_buffer_region>().read_unaligned();
            if flags & HOST_PTR != 0 {
                return Err(CL_INVALID_VALUE);
            }
            let inherited = if flags & ACCESS == 0 {
                parent.flags & ACCESS
            } else {
                0
            };
            let mut f = check_flags(flags | inherited)?;
            // Access the parent forbids cannot be asked for.
            let p = parent.flags;
            if (p & CL_MEM_WRITE_ONLY != 0 && f & (CL_MEM_READ_WRITE | CL_MEM_READ_ONLY) != 0)
                || (p & CL_MEM_READ_ONLY != 0 && f & (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY) != 0)
                || (p & CL_MEM_HOST_WRITE_ONLY != 0 && f & CL_MEM_HOST_READ_ONLY != 0)
                || (p & CL_MEM_HOST_READ_ONLY != 0 && f & CL_MEM_HOST_WRITE_ONLY != 0)
                || (p & CL_MEM_HOST_NO_ACCESS != 0
                    && f & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_WRITE_ONLY) != 0)
            {
                return Err(CL_INVALID_VALUE);
            }
            if f & HOST_ACCESS == 0 {
                f |= p & HOST_ACCESS;
            }
            f |= p & HOST_PTR;
            if region.size == 0 {
                return Err(CL_INVALID_BUFFER_SIZE);
            }
            if !parent.holds(region.origin, region.size) {
                return Err(CL_INVALID_VALUE);
            }
            if region.origin % ALIGN != 0 {
                return Err(CL_MISALIGNED_SUB_BUFFER_OFFSET);
            }
            let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
            let (_, h) = handle::create(Mem {
                context: parent.context.clone(),
                flags: f,
                size: region.size,
                storage: parent.storage.clone(),
                offset: parent.offset + region.origin,
                host_ptr: if parent.host_ptr != 0 {
                    parent.host_ptr + region.origin
                } else {
                    0
                },
                parent: Some(parent),
                properties: Vec::new(),
                maps: AtomicU32::new(0),
                destructors: Destructors::default(),
                name: format!("buffer {id}"),
                image: None,
                mapped: Mutex::new(Vec::new()),
            });
            Ok(h)
        })
    }
}

/// `clRetainMemObject`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clRetainMemObject(mem: cl_mem) -> cl_int {
    api::status(|| {
        handle::retain::<Mem>(mem)
            .then_some(())
            .ok_or(CL_INVALID_MEM_OBJECT)
    })
}

/// `clReleaseMemObject`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clReleaseMemObject(mem: cl_mem) -> cl_int {
    api::status(|| {
        handle::release::<Mem>(mem)
            .then_some(())
            .ok_or(CL_INVALID_MEM_OBJECT)
    })
}

/// `clGetMemObjectInfo`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clGetMemObjectInfo(
    mem: cl_mem,
    param_name: cl_mem_info,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    api::status(|| {
        let m = get(mem)?;
        let v = match param_name {
            CL_MEM_TYPE => Ok(Value::of(
                m.image.as_ref().map_or(CL_MEM_OBJECT_BUFFER, |i| i.ty),
            )),
            CL_MEM_FLAGS => Ok(Value::of(m.flags)),
            CL_MEM_SIZE => Ok(Value::of(m.size)),
            CL_MEM_HOST_PTR => Ok(Value::of(m.host_ptr as *mut c_void)),
            CL_MEM_MAP_COUNT => Ok(Value::of(m.maps.load(Ordering::Relaxed))),
            CL_MEM_REFERENCE_COUNT => Ok(Value::of(handle::ref_count(&m))),
            CL_MEM_CONTEXT => Ok(Value::of(handle::handle(&m.context))),
            CL_MEM_ASSOCIATED_MEMOBJECT => Ok(Value::of(
                m.parent
                    .as_ref()
                    .map_or(std::ptr::null_mut(), handle::handle),
            )),
            CL_MEM_OFFSET => Ok(Value::of(if m.parent.is_some() && m.image.is_none() {
                m.offset
            } else {
                0
            })),
            CL_MEM_USES_SVM_POINTER => Ok(Value::bool(
                m.host_ptr != 0 && crate::svm::is_svm(m.host_ptr as *const c_void, m.size),
            )),
            CL_MEM_PROPERTIES => Ok(Value::slice(&m.properties)),
            _ => Err(CL_INVALID_VALUE),
        };
        // SAFETY: the caller's buffers.
        unsafe { answer(v, size, value, size_ret) }
    })
}

/// `clSetMemObjectDestructorCallback`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clSetMemObjectDestructorCallback(
    mem: cl_mem,
    pfn_notify: Option<Destructor>,
    user_data: *mut c_void,
) -> cl_int {
    api::status(|| get(mem)?.destructors.add(pfn_notify, user_data))
}
