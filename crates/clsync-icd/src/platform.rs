//! The platform and its one device: what they are, and the queries that say
//! so (`clGetPlatformInfo`, `clGetDeviceInfo`).
//!
//! Every answer is what clsync does: an optional feature it lacks is
//! reported absent (no SVM, no pipes, no device-side enqueue, no device
//! partitioning), and what it has is reported with the limits the runtime
//! enforces (`clsync::geometry`).

use std::ffi::c_void;
use std::sync::OnceLock;
use std::time::Instant;

use clsync::geometry::{DEFAULT_SUB_GROUP_SIZE, MAX_WORK_GROUP_SIZE};
use clsync::Runtime;
use opencl_sys::*;

use crate::api::{self, ClResult};
use crate::handle::{self, Ref};
use crate::info::{name_version, version, Value};
use crate::{image, image_buffer};

/// The clsync platform.
pub struct Platform;

/// The clsync CPU device.
pub struct Device;

/// The version clsync reports for itself.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

struct Globals {
    platform: (Ref<Platform>, usize),
    device: (Ref<Device>, usize),
    epoch: Instant,
}

/// The worker count: `CLSYNC_THREADS` (as `--threads` for `clsync run`),
/// else one per core.
fn threads() -> usize {
    std::env::var("CLSYNC_THREADS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

fn globals() -> &'static Globals {
    static G: OnceLock<Globals> = OnceLock::new();
    G.get_or_init(|| {
        let (p, ph) = handle::create(Platform);
        let (d, dh) = handle::create(Device);
        Globals {
            platform: (p, ph as usize),
            device: (d, dh as usize),
            epoch: Instant::now(),
        }
    })
}

/// The platform's handle.
pub fn platform_id() -> cl_platform_id {
    globals().platform.1 as cl_platform_id
}

/// The device's handle.
pub fn device_id() -> cl_device_id {
    globals().device.1 as cl_device_id
}

/// The runtime every kernel of the platform runs on, started on the first
/// launch (the ICD loader opens every driver in every OpenCL process: one
/// that never uses clsync starts no threads of it).
pub fn runtime() -> &'static Runtime {
    static RT: OnceLock<Runtime> = OnceLock::new();
    RT.get_or_init(|| Runtime::with_threads(threads()))
}

/// Nanoseconds on the device's (and host's) timer: profiling times and
/// `clGetDeviceAndHostTimer`.
pub fn now_ns() -> u64 {
    globals().epoch.elapsed().as_nanos() as u64
}

/// Whether `h` is the device (`CL_INVALID_DEVICE` otherwise).
pub fn check_device(h: cl_device_id) -> ClResult<()> {
    if h.is_null() || h != device_id() {
        return Err(CL_INVALID_DEVICE);
    }
    Ok(())
}

/// Whether `h` is the platform; null means it too (the only platform).
fn check_platform(h: cl_platform_id) -> ClResult<()> {
    if !h.is_null() && h != platform_id() {
        return Err(CL_INVALID_PLATFORM);
    }
    Ok(())
}

/// The device's extensions: what the compiler translates and the runtime
/// runs. The sub-group extensions' non-uniform forms are not listed: in
/// divergent code they are a reported divergence (docs/limits.md).
const EXTENSIONS: &[(&str, u32, u32)] = &[
    ("cl_khr_icd", 1, 0),
    ("cl_khr_il_program", 1, 0),
    ("cl_khr_byte_addressable_store", 1, 0),
    ("cl_khr_global_int32_base_atomics", 1, 0),
    ("cl_khr_global_int32_extended_atomics", 1, 0),
    ("cl_khr_local_int32_base_atomics", 1, 0),
    ("cl_khr_local_int32_extended_atomics", 1, 0),
    ("cl_khr_int64_base_atomics", 1, 0),
    ("cl_khr_int64_extended_atomics", 1, 0),
    ("cl_khr_fp64", 1, 0),
    ("cl_khr_fp16", 1, 0),
    ("cl_khr_3d_image_writes", 1, 0),
    ("cl_khr_srgb_image_writes", 1, 0),
    ("cl_khr_depth_images", 1, 0),
    ("cl_khr_subgroups", 1, 0),
    ("cl_khr_subgroup_extended_types", 1, 0),
    ("cl_khr_subgroup_shuffle", 1, 0),
    ("cl_khr_subgroup_shuffle_relative", 1, 0),
    ("cl_khr_subgroup_ballot", 1, 0),
    ("cl_khr_subgroup_clustered_reduce", 1, 0),
    ("cl_khr_subgroup_non_uniform_vote", 1, 0),
    ("cl_khr_subgroup_non_uniform_arithmetic", 1, 0),
];

/// The OpenCL C 3.0 optional features the device has (`__opencl_c_*`).
const C_FEATURES: &[&str] = &[
    "__opencl_c_int64",
    "__opencl_c_fp64",
    "__opencl_c_atomic_order_acq_rel",
    "__opencl_c_atomic_order_seq_cst",
    "__opencl_c_atomic_scope_device",
    "__opencl_c_atomic_scope_all_devices",
    "__opencl_c_generic_address_space",
    "__opencl_c_program_scope_global_variables",
    "__opencl_c_subgroups",
    "__opencl_c_work_group_collective_functions",
    "__opencl_c_images",
    "__opencl_c_read_write_images",
    "__opencl_c_3d_image_writes",
];

fn extensions() -> String {
    EXTENSIONS.iter().map(|e| e.0).collect::<Vec<_>>().join(" ")
}

fn extensions_with_version() -> Value {
    let v: Vec<cl_name_version> = EXTENSIONS
        .iter()
        .map(|&(n, a, b)| name_version(a, b, n))
        .collect();
    Value::slice(&v)
}

/// The host's memory in bytes (`/proc/meminfo`), or 4 GiB where unknown.
fn host_memory() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("MemTotal:"))?;
            let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kb * 1024)
        })
        .unwrap_or(4 << 30)
}

/// The largest buffer: a quarter of the host's memory (at least the
/// specification's 128 MiB), below compiled code's 48-bit offsets.
pub fn max_alloc() -> u64 {
    (host_memory() / 4).clamp(128 << 20, 1 << 47)
}

/// The first CPU's `key` in `/proc/cpuinfo`.
fn cpuinfo(key: &str) -> Option<String> {
    let s = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    let line = s.lines().find(|l| l.starts_with(key))?;
    Some(line.split(':').nth(1)?.trim().to_string())
}

/// The CPU's name.
fn cpu_name() -> String {
    cpuinfo("model name").unwrap_or_else(|| "CPU".into())
}

/// The CPU's clock in MHz, 0 where unknown.
fn cpu_mhz() -> u32 {
    cpuinfo("cpu MHz")
        .and_then(|v| v.parse::<f64>().ok())
        .map_or(0, |mhz| mhz.round() as u32)
}

/// The last-level cache's size in bytes (sysfs), 0 where unknown.
fn cache_size() -> u64 {
    (0..8)
        .rev()
        .find_map(|i| {
            let s = std::fs::read_to_string(format!(
                "/sys/devices/system/cpu/cpu0/cache/index{i}/size"
            ))
            .ok()?;
            let s = s.trim();
            let (n, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit())?);
            let n: u64 = n.parse().ok()?;
            Some(match unit {
                "K" => n << 10,
                "M" => n << 20,
                _ => n,
            })
        })
        .unwrap_or(0)
}

/// Largest local memory per work-group: compiled code addresses local
/// memory like any object; this is the figure the runtime's tests use.
pub const LOCAL_MEM_SIZE: u64 = 1 << 20;

/// How many sub-groups a work-group has at most.
pub const MAX_SUB_GROUPS: usize = MAX_WORK_GROUP_SIZE.div_ceil(DEFAULT_SUB_GROUP_SIZE);

fn platform_info(name: cl_platform_info) -> ClResult<Value> {
    Ok(match name {
        CL_PLATFORM_PROFILE => Value::str("FULL_PROFILE"),
        CL_PLATFORM_VERSION => Value::str(&format!("OpenCL 3.0 clsync {VERSION}")),
        CL_PLATFORM_NUMERIC_VERSION => Value::of(version(3, 0)),
        CL_PLATFORM_NAME => Value::str("clsync"),
        CL_PLATFORM_VENDOR => Value::str("clsync"),
        CL_PLATFORM_EXTENSIONS => Value::str(&extensions()),
        CL_PLATFORM_EXTENSIONS_WITH_VERSION => extensions_with_version(),
        CL_PLATFORM_HOST_TIMER_RESOLUTION => Value::of(1u64),
        CL_PLATFORM_ICD_SUFFIX_KHR => Value::str("clsync"),
        _ => return Err(CL_INVALID_VALUE),
    })
}

fn device_info(name: cl_device_info) -> ClResult<Value> {
    let all_fp = CL_FP_DENORM | CL_FP_INF_NAN | CL_FP_ROUND_TO_NEAREST | CL_FP_FMA;
    let atomics = CL_DEVICE_ATOMIC_ORDER_RELAXED
        | CL_DEVICE_ATOMIC_ORDER_ACQ_REL
        | CL_DEVICE_ATOMIC_ORDER_SEQ_CST
        | CL_DEVICE_ATOMIC_SCOPE_WORK_ITEM
        | CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP
        | CL_DEVICE_ATOMIC_SCOPE_DEVICE
        | CL_DEVICE_ATOMIC_SCOPE_ALL_DEVICES;
    Ok(match name {
        CL_DEVICE_TYPE => Value::of(CL_DEVICE_TYPE_CPU),
        CL_DEVICE_VENDOR_ID => Value::of(0u32),
        CL_DEVICE_MAX_COMPUTE_UNITS => Value::of(threads() as u32),
        CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS => Value::of(3u32),
        CL_DEVICE_MAX_WORK_ITEM_SIZES => Value::slice(&[MAX_WORK_GROUP_SIZE; 3]),
        CL_DEVICE_MAX_WORK_GROUP_SIZE => Value::of(MAX_WORK_GROUP_SIZE),
        // Each work-item runs scalar code: no width is better than one.
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR
        | CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT
        | CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT
        | CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG
        | CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT
        | CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE
        | CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF
        | CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR
        | CL_DEVICE_NATIVE_VECTOR_WIDTH_SHORT
        | CL_DEVICE_NATIVE_VECTOR_WIDTH_INT
        | CL_DEVICE_NATIVE_VECTOR_WIDTH_LONG
        | CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT
        | CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE
        | CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF => Value::of(1u32),
        CL_DEVICE_MAX_CLOCK_FREQUENCY => Value::of(cpu_mhz()),
        CL_DEVICE_ADDRESS_BITS => Value::of(64u32),
        CL_DEVICE_MAX_MEM_ALLOC_SIZE => Value::of(max_alloc()),
        CL_DEVICE_GLOBAL_MEM_SIZE => Value::of(host_memory()),
        CL_DEVICE_IMAGE_SUPPORT => Value::bool(true),
        // No limit of clsync's own below these: the specification's
        // minimums for a full profile device.
        CL_DEVICE_MAX_READ_IMAGE_ARGS => Value::of(128u32),
        CL_DEVICE_MAX_WRITE_IMAGE_ARGS | CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS => Value::of(64u32),
        CL_DEVICE_MAX_SAMPLERS => Value::of(16u32),
        // Images from buffers are not offered (cl_khr_image2d_from_buffer).
        CL_DEVICE_IMAGE_PITCH_ALIGNMENT | CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT => Value::of(0u32),
        CL_DEVICE_IMAGE2D_MAX_WIDTH | CL_DEVICE_IMAGE2D_MAX_HEIGHT => Value::of(image::MAX_2D),
        CL_DEVICE_IMAGE3D_MAX_WIDTH
        | CL_DEVICE_IMAGE3D_MAX_HEIGHT
        | CL_DEVICE_IMAGE3D_MAX_DEPTH => Value::of(image::MAX_3D),
        CL_DEVICE_IMAGE_MAX_ARRAY_SIZE => Value::of(image::MAX_LAYERS),
        // image1d_buffer_t's texels (the specification's minimum is 65536).
        CL_DEVICE_IMAGE_MAX_BUFFER_SIZE => Value::of(image_buffer::MAX_TEXELS),
        CL_DEVICE_MAX_PARAMETER_SIZE => Value::of(1024usize),
        CL_DEVICE_MEM_BASE_ADDR_ALIGN => Value::of(1024u32),
        CL_DEVICE_MIN_DATA_TYPE_ALIGN_SIZE => Value::of(128u32),
        CL_DEVICE_SINGLE_FP_CONFIG => Value::of(all_fp | CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT),
        CL_DEVICE_DOUBLE_FP_CONFIG => Value::of(all_fp),
        CL_DEVICE_HALF_FP_CONFIG => {
            Value::of(CL_FP_DENORM | CL_FP_INF_NAN | CL_FP_ROUND_TO_NEAREST)
        }
        CL_DEVICE_GLOBAL_MEM_CACHE_TYPE => Value::of(CL_READ_WRITE_CACHE),
        CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE => Value::of(64u32),
        CL_DEVICE_GLOBAL_MEM_CACHE_SIZE => Value::of(cache_size()),
        CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE => Value::of(max_alloc()),
        CL_DEVICE_MAX_CONSTANT_ARGS => Value::of(64u32),
        CL_DEVICE_LOCAL_MEM_TYPE => Value::of(CL_GLOBAL),
        CL_DEVICE_LOCAL_MEM_SIZE => Value::of(LOCAL_MEM_SIZE),
        CL_DEVICE_ERROR_CORRECTION_SUPPORT => Value::bool(false),
        CL_DEVICE_HOST_UNIFIED_MEMORY => Value::bool(true),
        CL_DEVICE_PROFILING_TIMER_RESOLUTION => Value::of(1usize),
        CL_DEVICE_ENDIAN_LITTLE => Value::bool(cfg!(target_endian = "little")),
        CL_DEVICE_AVAILABLE | CL_DEVICE_COMPILER_AVAILABLE | CL_DEVICE_LINKER_AVAILABLE => {
            Value::bool(true)
        }
        CL_DEVICE_EXECUTION_CAPABILITIES => Value::of(CL_EXEC_KERNEL),
        CL_DEVICE_QUEUE_ON_HOST_PROPERTIES => {
            Value::of(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_PROFILING_ENABLE)
        }
        CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES => Value::of(0u64),
        CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE
        | CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE
        | CL_DEVICE_MAX_ON_DEVICE_QUEUES
        | CL_DEVICE_MAX_ON_DEVICE_EVENTS
        | CL_DEVICE_MAX_PIPE_ARGS
        | CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS
        | CL_DEVICE_PIPE_MAX_PACKET_SIZE => Value::of(0u32),
        CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES => Value::of(0u64),
        CL_DEVICE_PIPE_SUPPORT => Value::bool(false),
        CL_DEVICE_BUILT_IN_KERNELS => Value::str(""),
        CL_DEVICE_BUILT_IN_KERNELS_WITH_VERSION => Value(Vec::new()),
        CL_DEVICE_PLATFORM => Value::of(platform_id()),
        CL_DEVICE_NAME => Value::str(&format!("clsync: {}", cpu_name())),
        CL_DEVICE_VENDOR => Value::str("clsync"),
        CL_DRIVER_VERSION => Value::str(VERSION),
        CL_DEVICE_PROFILE => Value::str("FULL_PROFILE"),
        CL_DEVICE_VERSION => Value::str(&format!("OpenCL 3.0 clsync {VERSION}")),
        CL_DEVICE_NUMERIC_VERSION => Value::of(version(3, 0)),
        // OpenCL 3.0: the highest OpenCL C version that is backwards
        // compatible; without pipes and device enqueue that is 1.2, and
        // 3.0 is in the list of all versions.
        CL_DEVICE_OPENCL_C_VERSION => Value::str("OpenCL C 1.2 clsync"),
        CL_DEVICE_OPENCL_C_ALL_VERSIONS => Value::slice(&[
            name_version(1, 0, "OpenCL C"),
            name_version(1, 1, "OpenCL C"),
            name_version(1, 2, "OpenCL C"),
            name_version(3, 0, "OpenCL C"),
        ]),
        CL_DEVICE_OPENCL_C_FEATURES => {
            let v: Vec<cl_name_version> =
                C_FEATURES.iter().map(|f| name_version(3, 0, f)).collect();
            Value::slice(&v)
        }
        CL_DEVICE_EXTENSIONS => Value::str(&extensions()),
        CL_DEVICE_EXTENSIONS_WITH_VERSION => extensions_with_version(),
        CL_DEVICE_IL_VERSION => {
            Value::str("SPIR-V_1.0 SPIR-V_1.1 SPIR-V_1.2 SPIR-V_1.3 SPIR-V_1.4")
        }
        CL_DEVICE_ILS_WITH_VERSION => Value::slice(&[
            name_version(1, 0, "SPIR-V"),
            name_version(1, 1, "SPIR-V"),
            name_version(1, 2, "SPIR-V"),
            name_version(1, 3, "SPIR-V"),
            name_version(1, 4, "SPIR-V"),
        ]),
        CL_DEVICE_PRINTF_BUFFER_SIZE => Value::of(1usize << 20),
        CL_DEVICE_PREFERRED_INTEROP_USER_SYNC => Value::bool(true),
        CL_DEVICE_PARENT_DEVICE => Value::of(std::ptr::null_mut::<c_void>()),
        CL_DEVICE_PARTITION_MAX_SUB_DEVICES => Value::of(0u32),
        CL_DEVICE_PARTITION_PROPERTIES | CL_DEVICE_PARTITION_TYPE => Value::of(0isize),
        CL_DEVICE_PARTITION_AFFINITY_DOMAIN => Value::of(0u64),
        CL_DEVICE_REFERENCE_COUNT => Value::of(1u32),
        CL_DEVICE_SVM_CAPABILITIES => Value::of(
            CL_DEVICE_SVM_COARSE_GRAIN_BUFFER
                | CL_DEVICE_SVM_FINE_GRAIN_BUFFER
                | CL_DEVICE_SVM_ATOMICS,
        ),
        CL_DEVICE_PREFERRED_PLATFORM_ATOMIC_ALIGNMENT
        | CL_DEVICE_PREFERRED_GLOBAL_ATOMIC_ALIGNMENT
        | CL_DEVICE_PREFERRED_LOCAL_ATOMIC_ALIGNMENT => Value::of(0u32),
        CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE | CL_DEVICE_GLOBAL_VARIABLE_PREFERRED_TOTAL_SIZE => {
            Value::of(max_alloc() as usize)
        }
        CL_DEVICE_MAX_NUM_SUB_GROUPS => Value::of(MAX_SUB_GROUPS as u32),
        // Sub-groups of one work-group take turns on one worker thread.
        CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS => Value::bool(false),
        CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES | CL_DEVICE_ATOMIC_FENCE_CAPABILITIES => {
            Value::of(atomics)
        }
        CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT
        | CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT
        | CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT => Value::bool(true),
        CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE => Value::of(DEFAULT_SUB_GROUP_SIZE),
        CL_DEVICE_LATEST_CONFORMANCE_VERSION_PASSED => Value::str("v0000-01-01-00"),
        _ => return Err(CL_INVALID_VALUE),
    })
}

/// `clIcdGetPlatformIDsKHR` and `clGetPlatformIDs`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clGetPlatformIDs(
    num_entries: cl_uint,
    platforms: *mut cl_platform_id,
    num_platforms: *mut cl_uint,
) -> cl_int {
    api::status(|| {
        if (num_entries == 0 && !platforms.is_null())
            || (platforms.is_null() && num_platforms.is_null())
        {
            return Err(CL_INVALID_VALUE);
        }
        // SAFETY: the caller's pointers: `platforms` has room for
        // `num_entries` >= 1 handles, `num_platforms` is null or writable.
        unsafe {
            api::write(platforms, platform_id());
            api::write(num_platforms, 1);
        }
        Ok(())
    })
}

/// `clGetPlatformInfo`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clGetPlatformInfo(
    platform: cl_platform_id,
    param_name: cl_platform_info,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    api::status(|| {
        check_platform(platform)?;
        // SAFETY: the caller's buffers, as the C API defines them.
        match unsafe { platform_info(param_name)?.write(size, value, size_ret) } {
            CL_SUCCESS => Ok(()),
            e => Err(e),
        }
    })
}

/// `clGetDeviceIDs`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clGetDeviceIDs(
    platform: cl_platform_id,
    device_type: cl_device_type,
    num_entries: cl_uint,
    devices: *mut cl_device_id,
    num_devices: *mut cl_uint,
) -> cl_int {
    api::status(|| {
        check_platform(platform)?;
        let known = CL_DEVICE_TYPE_CPU
            | CL_DEVICE_TYPE_GPU
            | CL_DEVICE_TYPE_ACCELERATOR
            | CL_DEVICE_TYPE_CUSTOM
            | CL_DEVICE_TYPE_DEFAULT;
        if device_type != CL_DEVICE_TYPE_ALL && (device_type == 0 || device_type & !known != 0) {
            return Err(CL_INVALID_DEVICE_TYPE);
        }
        if (num_entries == 0 && !devices.is_null()) || (devices.is_null() && num_devices.is_null())
        {
            return Err(CL_INVALID_VALUE);
        }
        if device_type & (CL_DEVICE_TYPE_CPU | CL_DEVICE_TYPE_DEFAULT) == 0 {
            // SAFETY: the caller's pointer, null or writable.
            unsafe { api::write(num_devices, 0) };
            return Err(CL_DEVICE_NOT_FOUND);
        }
        // SAFETY: the caller's pointers, as above.
        unsafe {
            api::write(devices, device_id());
            api::write(num_devices, 1);
        }
        Ok(())
    })
}

/// `clGetDeviceInfo`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clGetDeviceInfo(
    device: cl_device_id,
    param_name: cl_device_info,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    api::status(|| {
        check_device(device)?;
        // SAFETY: the caller's buffers, as the C API defines them.
        match unsafe { device_info(param_name)?.write(size, value, size_ret) } {
            CL_SUCCESS => Ok(()),
            e => Err(e),
        }
    })
}

/// `clRetainDevice`: the root device is not counted.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clRetainDevice(device: cl_device_id) -> cl_int {
    api::status(|| check_device(device))
}

/// `clReleaseDevice`: the root device is not counted.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clReleaseDevice(device: cl_device_id) -> cl_int {
    api::status(|| check_device(device))
}

/// `clCreateSubDevices`: the device cannot be partitioned
/// (`CL_DEVICE_PARTITION_MAX_SUB_DEVICES` is 0).
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clCreateSubDevices(
    device: cl_device_id,
    _properties: *const cl_device_partition_property,
    _num_devices: cl_uint,
    _out_devices: *mut cl_device_id,
    _num_devices_ret: *mut cl_uint,
) -> cl_int {
    api::status(|| {
        check_device(device)?;
        Err(CL_INVALID_VALUE)
    })
}

/// `clGetDeviceAndHostTimer`: one timer serves both.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clGetDeviceAndHostTimer(
    device: cl_device_id,
    device_timestamp: *mut cl_ulong,
    host_timestamp: *mut cl_ulong,
) -> cl_int {
    api::status(|| {
        check_device(device)?;
        if device_timestamp.is_null() || host_timestamp.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        let t = now_ns();
        // SAFETY: both non-null, writable by the caller's contract.
        unsafe {
            api::write(device_timestamp, t);
            api::write(host_timestamp, t);
        }
        Ok(())
    })
}

/// `clGetHostTimer`.
///
/// # Safety
///
/// The C API's contract.
pub unsafe extern "C" fn clGetHostTimer(
    device: cl_device_id,
    host_timestamp: *mut cl_ulong,
) -> cl_int {
    api::status(|| {
        check_device(device)?;
        if host_timestamp.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { api::write(host_timestamp, now_ns()) };
        Ok(())
    })
}

/// Writes a query's answer, turning its status into a result.
///
/// # Safety
///
/// `value` is null or has `size` writable bytes; `size_ret` is null or
/// writable.
pub unsafe fn answer(
    v: ClResult<Value>,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> ClResult<()> {
    // SAFETY: the caller's contract.
    match unsafe { v?.write(size, value, size_ret) } {
        CL_SUCCESS => Ok(()),
        e => Err(e),
    }
}
