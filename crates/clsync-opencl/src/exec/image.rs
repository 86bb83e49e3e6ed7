//! Images and samplers of OpenCL C kernels: 1D, 2D and 3D images, 1D and
//! 2D image arrays and 1D images over buffers, in the channel orders and types of the OpenCL C
//! specification's image functions, read with and without a sampler and
//! written; what `read_image*`, `write_image*` and `get_image_*` do.
//!
//! A texel is stored as its channels in memory order, each of the channel
//! type's width. Reading converts to `float4`, `int4` or `uint4` as the
//! specification's conversion rules say (normalized types to `[0, 1]` or
//! `[-1, 1]`, integer types extended, half and float as they are) and maps
//! the channel order onto `(r, g, b, a)` (missing channels 0, alpha 1);
//! writing converts back with rounding to nearest even and saturation.
//! A sampler's addressing mode and filter follow the specification's
//! addressing and filtering rules: nearest takes the texel whose
//! coordinates are the floor of the (unnormalized) coordinate, linear
//! weighs the 2, 4 or 8 texels around `coordinate - 0.5`; out-of-range
//! coordinates clamp to the edge, to the border colour, repeat or mirror.
//!
//! In a checked launch each texel a work-item reads or writes is shown to
//! the runtime's checker as image memory at the call's line, so unordered
//! writes and reads of a pixel by different work-items are races; a write
//! or an unsampled read outside the image is reported (`Invalid write to
//! image`, `Invalid read from image`) and skipped. Unchecked, a write
//! outside the image is skipped and such a read gives the border colour
//! (`CLK_ADDRESS_CLAMP`'s): the
//! specification leaves both undefined, and neither touches memory beyond
//! the image.

use super::ctx::ItemCtx;
use super::math::{clsync_float_to_half, clsync_half_to_float};

/// How an image's texels are laid out (`cl_image_format`'s channel
/// order), with the values of SPIR-V's `ImageChannelOrder` (OpenCL's
/// `CL_R` is `0x10B0` plus the value).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChannelOrder {
    /// `CL_R`.
    R = 0,
    /// `CL_A`.
    A = 1,
    /// `CL_RG`.
    Rg = 2,
    /// `CL_RA`.
    Ra = 3,
    /// `CL_RGB`: with a packed channel type only.
    Rgb = 4,
    /// `CL_RGBA`.
    Rgba = 5,
    /// `CL_BGRA`.
    Bgra = 6,
    /// `CL_ARGB`.
    Argb = 7,
    /// `CL_INTENSITY`.
    Intensity = 8,
    /// `CL_LUMINANCE`.
    Luminance = 9,
    /// `CL_RGBx`: red, green, blue and an unused channel; with a packed
    /// channel type only.
    Rgbx = 12,
    /// `CL_DEPTH` (`cl_khr_depth_images`): one channel, a depth read as
    /// `image2d_depth_t`'s `float`.
    Depth = 13,
    /// `CL_sRGBx`: sRGB-encoded red, green, blue and an unused channel.
    Srgbx = 16,
    /// `CL_sRGBA`: sRGB-encoded red, green and blue, and linear alpha.
    Srgba = 17,
    /// `CL_sBGRA`.
    Sbgra = 18,
    /// `CL_ABGR`.
    Abgr = 19,
}

impl ChannelOrder {
    /// Whether the red, green and blue channels are sRGB-encoded: a read
    /// converts them to linear values, a write from linear values.
    pub fn is_srgb(self) -> bool {
        matches!(
            self,
            ChannelOrder::Srgbx | ChannelOrder::Srgba | ChannelOrder::Sbgra
        )
    }
}

/// The type of each channel (`cl_image_format`'s channel data type), with
/// the values of SPIR-V's `ImageChannelDataType` (OpenCL's `CL_SNORM_INT8`
/// is `0x10D0` plus the value).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChannelType {
    /// `CL_SNORM_INT8`.
    SnormInt8 = 0,
    /// `CL_SNORM_INT16`.
    SnormInt16 = 1,
    /// `CL_UNORM_INT8`.
    UnormInt8 = 2,
    /// `CL_UNORM_INT16`.
    UnormInt16 = 3,
    /// `CL_UNORM_SHORT_565`: red in bits 15-11, green 10-5, blue 4-0.
    UnormShort565 = 4,
    /// `CL_UNORM_SHORT_555`: red in bits 14-10, green 9-5, blue 4-0.
    UnormShort555 = 5,
    /// `CL_UNORM_INT_101010`: red in bits 29-20, green 19-10, blue 9-0.
    UnormInt101010 = 6,
    /// `CL_SIGNED_INT8`.
    SignedInt8 = 7,
    /// `CL_SIGNED_INT16`.
    SignedInt16 = 8,
    /// `CL_SIGNED_INT32`.
    SignedInt32 = 9,
    /// `CL_UNSIGNED_INT8`.
    UnsignedInt8 = 10,
    /// `CL_UNSIGNED_INT16`.
    UnsignedInt16 = 11,
    /// `CL_UNSIGNED_INT32`.
    UnsignedInt32 = 12,
    /// `CL_HALF_FLOAT`.
    HalfFloat = 13,
    /// `CL_FLOAT`.
    Float = 14,
    /// `CL_UNORM_INT_101010_2`: red in bits 31-22, green 21-12, blue 11-2,
    /// alpha 1-0.
    UnormInt101010_2 = 16,
}

impl ChannelType {
    /// Bytes of one channel; of a packed type's whole texel.
    pub fn bytes(self) -> usize {
        use ChannelType::*;
        match self {
            SnormInt8 | UnormInt8 | SignedInt8 | UnsignedInt8 => 1,
            SnormInt16 | UnormInt16 | SignedInt16 | UnsignedInt16 | HalfFloat => 2,
            UnormShort565 | UnormShort555 => 2,
            SignedInt32 | UnsignedInt32 | Float => 4,
            UnormInt101010 | UnormInt101010_2 => 4,
        }
    }

    /// Whether `read_imagef`/`write_imagef` take it (normalized, half and
    /// float types), rather than `read_imagei`/`read_imageui`.
    pub fn is_float(self) -> bool {
        use ChannelType::*;
        !matches!(
            self,
            SignedInt8 | SignedInt16 | SignedInt32 | UnsignedInt8 | UnsignedInt16 | UnsignedInt32
        )
    }

    /// A packed type's fields for red, green, blue and alpha: the lowest
    /// bit and the width of each (`None` for a type of whole channels).
    pub fn packed(self) -> Option<&'static [(u32, u32)]> {
        use ChannelType::*;
        Some(match self {
            UnormShort565 => &[(11, 5), (5, 6), (0, 5)],
            UnormShort555 => &[(10, 5), (5, 5), (0, 5)],
            UnormInt101010 => &[(20, 10), (10, 10), (0, 10)],
            UnormInt101010_2 => &[(22, 10), (12, 10), (2, 10), (0, 2)],
            _ => return None,
        })
    }
}

/// An image format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageFormat {
    /// The channel order.
    pub order: ChannelOrder,
    /// The channel type.
    pub ty: ChannelType,
}

impl ImageFormat {
    /// The channels a texel stores, in memory order, as indexes of
    /// `(r, g, b, a)`; intensity and luminance store one (kept as `r`), an
    /// unused channel is [`UNUSED`]. A packed type's fields are its own.
    fn channels(self) -> &'static [usize] {
        match self.order {
            ChannelOrder::R
            | ChannelOrder::Intensity
            | ChannelOrder::Luminance
            | ChannelOrder::Depth => &[0],
            ChannelOrder::A => &[3],
            ChannelOrder::Rg => &[0, 1],
            ChannelOrder::Ra => &[0, 3],
            ChannelOrder::Rgb => &[0, 1, 2],
            ChannelOrder::Rgba | ChannelOrder::Srgba => &[0, 1, 2, 3],
            ChannelOrder::Rgbx | ChannelOrder::Srgbx => &[0, 1, 2, UNUSED],
            ChannelOrder::Bgra | ChannelOrder::Sbgra => &[2, 1, 0, 3],
            ChannelOrder::Argb => &[3, 0, 1, 2],
            ChannelOrder::Abgr => &[3, 2, 1, 0],
        }
    }

    /// Bytes of one texel.
    pub fn texel_bytes(self) -> usize {
        if self.ty.packed().is_some() {
            return self.ty.bytes();
        }
        self.channels().len() * self.ty.bytes()
    }
}

/// A channel a texel stores and no read returns (`CL_RGBx`'s `x`).
const UNUSED: usize = 4;

/// An image's geometry, with the values of SPIR-V's `Dim` for the
/// dimensionality.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageShape {
    /// `image1d_t`.
    D1 {
        /// Texels.
        width: usize,
    },
    /// `image2d_t`.
    D2 {
        /// Texels per row.
        width: usize,
        /// Rows.
        height: usize,
    },
    /// `image3d_t`.
    D3 {
        /// Texels per row.
        width: usize,
        /// Rows per slice.
        height: usize,
        /// Slices.
        depth: usize,
    },
    /// `image1d_array_t`.
    D1Array {
        /// Texels per image.
        width: usize,
        /// Images.
        layers: usize,
    },
    /// `image2d_array_t`.
    D2Array {
        /// Texels per row.
        width: usize,
        /// Rows per image.
        height: usize,
        /// Images.
        layers: usize,
    },
}

impl ImageShape {
    /// `[width, height, depth or layers]`, 1 where the shape has none (a
    /// 1D array's layers are its third, as its texels are laid out).
    pub fn extent(self) -> [usize; 3] {
        match self {
            ImageShape::D1 { width } => [width, 1, 1],
            ImageShape::D2 { width, height } => [width, height, 1],
            ImageShape::D3 {
                width,
                height,
                depth,
            } => [width, height, depth],
            ImageShape::D1Array { width, layers } => [width, 1, layers],
            ImageShape::D2Array {
                width,
                height,
                layers,
            } => [width, height, layers],
        }
    }

    /// How many of the coordinates are filtered (the others select a
    /// layer of an array).
    fn filtered(self) -> usize {
        match self {
            ImageShape::D1 { .. } | ImageShape::D1Array { .. } => 1,
            ImageShape::D2 { .. } | ImageShape::D2Array { .. } => 2,
            ImageShape::D3 { .. } => 3,
        }
    }

    /// The index of the coordinate that selects the layer, for arrays.
    fn layer_coordinate(self) -> Option<usize> {
        match self {
            ImageShape::D1Array { .. } => Some(1),
            ImageShape::D2Array { .. } => Some(2),
            _ => None,
        }
    }
}

/// An image a kernel reads or writes: its shape, format and texels.
///
/// ```
/// use clsync_opencl::{ChannelOrder, ChannelType, Image, ImageFormat, ImageShape};
/// let f = ImageFormat { order: ChannelOrder::Rgba, ty: ChannelType::UnormInt8 };
/// let img = Image::new(ImageShape::D2 { width: 4, height: 2 }, f).named("img");
/// img.write_bytes(&[255u8; 32]);
/// assert_eq!(img.read_f32([3, 1, 0]), [1.0; 4]);
/// ```
pub struct Image {
    shape: ImageShape,
    format: ImageFormat,
    data: Texels,
}

/// Where an image's texels are.
enum Texels {
    /// Its own bytes.
    Own(clsync::Buffer<u8>),
    /// A buffer's (`image1d_buffer_t`, [`Image::over`]).
    Over(Borrowed),
}

/// Another object's bytes, and what keeps them alive.
struct Borrowed {
    base: *mut u8,
    len: usize,
    name: String,
    _keep: std::sync::Arc<dyn std::any::Any + Send + Sync>,
}

// SAFETY: the bytes are plain memory that kernels and the host access
// through raw pointers under the OpenCL memory model's rules, as a buffer's
// (`clsync::Buffer<u8>`, which the owned case holds, is `Send` and `Sync`);
// `Image::over`'s caller guarantees them alive while `_keep` is.
unsafe impl Send for Borrowed {}
// SAFETY: as above.
unsafe impl Sync for Borrowed {}

impl Texels {
    fn raw_bytes(&self) -> (*mut u8, usize) {
        match self {
            Texels::Own(b) => b.raw_bytes(),
            Texels::Over(o) => (o.base, o.len),
        }
    }
    fn name(&self) -> &str {
        match self {
            Texels::Own(b) => b.name(),
            Texels::Over(o) => &o.name,
        }
    }
}

impl Image {
    /// A zeroed image.
    pub fn new(shape: ImageShape, format: ImageFormat) -> Self {
        let [w, h, d] = shape.extent();
        let data = clsync::Buffer::<u8>::new((w * h * d * format.texel_bytes()).max(1));
        Image {
            shape,
            format,
            data: Texels::Own(data),
        }
        .registered()
    }

    /// A 1D image over `len` bytes at `base`, another object's
    /// (`image1d_buffer_t`: an image made from a buffer, whose texels are
    /// the buffer's bytes, so that each sees the other's writes). `keep`
    /// keeps the bytes alive; the image's width is as many texels as fit.
    /// The bytes keep the name their own object gives them in reports.
    ///
    /// # Safety
    ///
    /// `base` is valid for reads and writes of `len` bytes while `keep`
    /// lives, accessed by others only as the OpenCL memory model allows.
    pub unsafe fn over(
        base: *mut u8,
        len: usize,
        format: ImageFormat,
        name: impl Into<String>,
        keep: std::sync::Arc<dyn std::any::Any + Send + Sync>,
    ) -> Self {
        Image {
            shape: ImageShape::D1 {
                width: len / format.texel_bytes(),
            },
            format,
            data: Texels::Over(Borrowed {
                base,
                len,
                name: name.into(),
                _keep: keep,
            }),
        }
    }

    /// An `image1d_buffer_t` over `buffer`'s bytes: as many texels of
    /// `format` as fit; the kernel's image writes are the buffer's contents.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use clsync_opencl::{ChannelOrder, ChannelType, Image, ImageFormat};
    /// let bytes = Arc::new(clsync::Buffer::<u8>::from_slice(&[0, 64, 128, 255]));
    /// let f = ImageFormat { order: ChannelOrder::R, ty: ChannelType::UnormInt8 };
    /// let img = Image::from_buffer(bytes.clone(), f);
    /// assert_eq!(img.read_f32([3, 0, 0]), [1.0, 0.0, 0.0, 1.0]);
    /// assert!(img.is_from_buffer());
    /// ```
    pub fn from_buffer(buffer: std::sync::Arc<clsync::Buffer<u8>>, format: ImageFormat) -> Self {
        let (base, len) = buffer.raw_bytes();
        let name = buffer.name().to_string();
        // SAFETY: a buffer's `len` bytes at `base` live as long as the
        // buffer, which the image keeps; they are accessed as the buffer's
        // own are.
        unsafe { Image::over(base, len, format, name, buffer) }
    }

    /// Whether its texels are another object's bytes (an `image1d_buffer_t`,
    /// [`Image::from_buffer`], [`Image::over`]).
    pub fn is_from_buffer(&self) -> bool {
        matches!(self.data, Texels::Over(_))
    }

    /// Names the image for reports.
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.data = match self.data {
            Texels::Own(b) => Texels::Own(b.named(name)),
            Texels::Over(mut o) => {
                o.name = name.into();
                Texels::Over(o)
            }
        };
        self.registered()
    }

    /// Tells the checker that the bytes are this image's texels (an image
    /// over a buffer's bytes leaves them the buffer's).
    fn registered(self) -> Self {
        if matches!(self.data, Texels::Over(_)) {
            return self;
        }
        let [w, h, d] = self.shape.extent();
        clsync::checker::engine::name_memory(
            self.data.raw_bytes().0 as usize,
            w * h * d,
            self.format.texel_bytes(),
            clsync::checker::Space::Image,
            self.data.name(),
        );
        self
    }

    /// Its name.
    pub fn name(&self) -> &str {
        self.data.name()
    }

    /// Its shape.
    pub fn shape(&self) -> ImageShape {
        self.shape
    }

    /// Its format.
    pub fn format(&self) -> ImageFormat {
        self.format
    }

    /// The texels' bytes, row by row, slice by slice.
    pub fn to_bytes(&self) -> Vec<u8> {
        let [w, h, d] = self.shape.extent();
        let (p, len) = self.data.raw_bytes();
        let n = (w * h * d * self.format.texel_bytes()).min(len);
        // SAFETY: `p` has `len` bytes; no kernel writes the image while the
        // host reads it (the host's side of the launch contract).
        unsafe { std::slice::from_raw_parts(p, n) }.to_vec()
    }

    /// Sets the texels from bytes laid out as [`to_bytes`](Self::to_bytes)
    /// gives them (as many as given).
    pub fn write_bytes(&self, bytes: &[u8]) {
        let (p, len) = self.data.raw_bytes();
        let n = bytes.len().min(len);
        // SAFETY: `p` has `len` bytes; no kernel runs on this image while
        // the host writes it (the host's side of the launch contract).
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, n) };
    }

    /// Its texels' bytes: tightly packed rows of `width` texels, `height`
    /// rows a slice or layer. The host may access them while no kernel
    /// runs on the image.
    pub fn raw_bytes(&self) -> (*mut u8, usize) {
        self.data.raw_bytes()
    }

    /// The bytes of one texel of this image's format holding `color`, as
    /// `write_image{f,i,ui}` store it (`clEnqueueFillImage`): each channel
    /// as its bits, a float's for the float and normalized types.
    pub fn texel_of(&self, color: [u32; 4]) -> Vec<u8> {
        let one = Image::new(ImageShape::D1 { width: 1 }, self.format);
        one.bind().store([0, 0, 0], color);
        one.to_bytes()
    }

    /// The texel at integer coordinates as `read_imagef` without a sampler
    /// gives it (host side).
    pub fn read_f32(&self, at: [usize; 3]) -> [f32; 4] {
        self.bind().texel(at.map(|c| c as i64)).map(f32::from_bits)
    }

    /// Where its texels are and what they are, as a launch binds it.
    pub(crate) fn bind(&self) -> ImageRef {
        ImageRef {
            base: self.data.raw_bytes().0,
            shape: self.shape,
            format: self.format,
        }
    }
}

/// A sampler: normalized coordinates or not, the addressing mode and the
/// filter, as `sampler_t`'s `CLK_*` bits combine them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sampler(pub u32);

impl Sampler {
    /// `CLK_NORMALIZED_COORDS_TRUE`.
    pub const NORMALIZED: u32 = 1;
    /// `CLK_ADDRESS_CLAMP_TO_EDGE`.
    pub const CLAMP_TO_EDGE: u32 = 2;
    /// `CLK_ADDRESS_CLAMP`.
    pub const CLAMP: u32 = 4;
    /// `CLK_ADDRESS_REPEAT`.
    pub const REPEAT: u32 = 6;
    /// `CLK_ADDRESS_MIRRORED_REPEAT`.
    pub const MIRRORED_REPEAT: u32 = 8;
    /// `CLK_FILTER_NEAREST`.
    pub const NEAREST: u32 = 0x10;
    /// `CLK_FILTER_LINEAR`.
    pub const LINEAR: u32 = 0x20;

    fn normalized(self) -> bool {
        self.0 & 1 != 0
    }
    fn addressing(self) -> u32 {
        self.0 & 0xe
    }
    fn linear(self) -> bool {
        self.0 & 0x30 == Self::LINEAR
    }
}

/// An image as a launch binds it: where its texels are, and what they are
/// (made by the launch from an [`Image`] argument).
#[derive(Clone, Copy)]
pub struct ImageRef {
    base: *mut u8,
    shape: ImageShape,
    format: ImageFormat,
}

// SAFETY: the texels live in a `clsync::Buffer` (atomic bytes) that
// outlives the launch; work-items reach them only through the helpers.
unsafe impl Send for ImageRef {}
// SAFETY: as above.
unsafe impl Sync for ImageRef {}

impl ImageRef {
    /// The byte offset of the texel at `at`, if inside the image.
    fn offset(&self, at: [i64; 3]) -> Option<usize> {
        let e = self.shape.extent();
        if (0..3).any(|k| at[k] < 0 || at[k] as usize >= e[k]) {
            return None;
        }
        let [x, y, z] = at.map(|c| c as usize);
        Some(((z * e[1] + y) * e[0] + x) * self.format.texel_bytes())
    }

    /// The texel at `at` as `(r, g, b, a)` bits: floats for float and
    /// normalized types, sign- or zero-extended integers otherwise; the
    /// border colour outside the image.
    fn texel(&self, at: [i64; 3]) -> [u32; 4] {
        let float = self.format.ty.is_float();
        let one = if float { 1f32.to_bits() } else { 1 };
        let Some(off) = self.offset(at) else {
            // CLK_ADDRESS_CLAMP's border: transparent black, with alpha 1
            // where the order has no alpha.
            let alpha = matches!(
                self.format.order,
                ChannelOrder::R | ChannelOrder::Rg | ChannelOrder::Rgb | ChannelOrder::Luminance
            );
            return [0, 0, 0, if alpha { one } else { 0 }];
        };
        let size = self.format.ty.bytes();
        let read = |at: usize| {
            let mut raw = [0u8; 4];
            // SAFETY: `offset` found the texel inside the image's bytes,
            // `size` of them from `at` (a channel, or a packed texel).
            unsafe { std::ptr::copy_nonoverlapping(self.base.add(at), raw.as_mut_ptr(), size) };
            u32::from_le_bytes(raw)
        };
        let mut out = [0, 0, 0, one];
        if let Some(fields) = self.format.ty.packed() {
            let word = read(off);
            for (c, (low, bits)) in fields.iter().enumerate() {
                let max = (1u32 << bits) - 1;
                out[c] = ((word >> low & max) as f32 / max as f32).to_bits();
            }
        } else {
            for (k, &c) in self.format.channels().iter().enumerate() {
                if c != UNUSED {
                    out[c] = decode(self.format.ty, read(off + k * size));
                }
            }
        }
        if self.format.order.is_srgb() {
            for v in &mut out[..3] {
                *v = srgb_to_linear(f32::from_bits(*v)).to_bits();
            }
        }
        match self.format.order {
            ChannelOrder::Intensity => [out[0]; 4],
            ChannelOrder::Luminance => [out[0], out[0], out[0], one],
            _ => out,
        }
    }

    /// Writes `(r, g, b, a)` (floats' or integers' bits) at `at`, if inside.
    fn store(&self, at: [i64; 3], v: [u32; 4]) -> bool {
        let Some(off) = self.offset(at) else {
            return false;
        };
        let size = self.format.ty.bytes();
        let mut v = v;
        if self.format.order.is_srgb() {
            for c in &mut v[..3] {
                *c = linear_to_srgb(f32::from_bits(*c)).to_bits();
            }
        }
        let write = |at: usize, raw: u32| {
            // SAFETY: `offset` found the texel inside the image's bytes,
            // `size` of them from `at` (a channel, or a packed texel).
            unsafe {
                std::ptr::copy_nonoverlapping(raw.to_le_bytes().as_ptr(), self.base.add(at), size)
            };
        };
        if let Some(fields) = self.format.ty.packed() {
            let word = fields.iter().enumerate().fold(0, |w, (c, (low, bits))| {
                w | unorm(f32::from_bits(v[c]), (1u32 << bits) - 1) << low
            });
            write(off, word);
            return true;
        }
        for (k, &c) in self.format.channels().iter().enumerate() {
            let raw = if c == UNUSED {
                0
            } else {
                encode(self.format.ty, v[c])
            };
            write(off + k * size, raw);
        }
        true
    }

    /// The texel's address, for the checker.
    fn address(&self, at: [i64; 3]) -> Option<usize> {
        self.offset(at).map(|o| self.base as usize + o)
    }
}

/// `x` as a normalized unsigned integer of at most `max`: rounded to
/// nearest even and saturated, NaN to 0 (`convert_*_sat_rte`).
fn unorm(x: f32, max: u32) -> u32 {
    let y = (x * max as f32).round_ties_even();
    if y.is_nan() {
        0
    } else {
        y.clamp(0.0, max as f32) as u32
    }
}

/// An sRGB-encoded value in `[0, 1]` to its linear value (the OpenCL C
/// specification's conversion rules for sRGB images), computed in double.
fn srgb_to_linear(c: f32) -> f32 {
    let c = f64::from(c);
    let l = if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    };
    l as f32
}

/// A linear value to its sRGB encoding, clamped to `[0, 1]` first (NaN
/// to 0).
fn linear_to_srgb(l: f32) -> f32 {
    let l = if l.is_nan() {
        0.0
    } else {
        f64::from(l).clamp(0.0, 1.0)
    };
    let c = if l <= 0.003_130_8 {
        l * 12.92
    } else {
        1.055 * l.powf(1.0 / 2.4) - 0.055
    };
    c as f32
}

/// A stored channel to the bits of its `float` or 32-bit integer value.
fn decode(ty: ChannelType, raw: u32) -> u32 {
    use ChannelType::*;
    let f = |x: f32| x.to_bits();
    match ty {
        UnormInt8 => f((raw & 0xff) as f32 / 255.0),
        UnormInt16 => f((raw & 0xffff) as f32 / 65535.0),
        SnormInt8 => f((raw as u8 as i8 as f32 / 127.0).max(-1.0)),
        SnormInt16 => f((raw as u16 as i16 as f32 / 32767.0).max(-1.0)),
        SignedInt8 => raw as u8 as i8 as i32 as u32,
        SignedInt16 => raw as u16 as i16 as i32 as u32,
        UnsignedInt8 => raw & 0xff,
        UnsignedInt16 => raw & 0xffff,
        SignedInt32 | UnsignedInt32 | Float => raw,
        HalfFloat => f(clsync_half_to_float(raw)),
        // Packed types are read whole (`ImageRef::texel`).
        UnormShort565 | UnormShort555 | UnormInt101010 | UnormInt101010_2 => raw,
    }
}

/// A `float` or 32-bit integer value's bits to the stored channel, rounded
/// to nearest even and saturated as `write_image*` converts.
fn encode(ty: ChannelType, v: u32) -> u32 {
    use ChannelType::*;
    let x = f32::from_bits(v);
    // NaN converts to 0 (`convert_*_sat_rte`).
    let norm = |scale: f32, lo: f32, hi: f32| {
        let y = (x * scale).round_ties_even();
        if y.is_nan() {
            0
        } else {
            y.clamp(lo, hi) as i32 as u32
        }
    };
    let int = v as i32;
    match ty {
        UnormInt8 => norm(255.0, 0.0, 255.0),
        UnormInt16 => norm(65535.0, 0.0, 65535.0),
        SnormInt8 => norm(127.0, -128.0, 127.0) & 0xff,
        SnormInt16 => norm(32767.0, -32768.0, 32767.0) & 0xffff,
        SignedInt8 => int.clamp(-128, 127) as u32 & 0xff,
        SignedInt16 => int.clamp(-32768, 32767) as u32 & 0xffff,
        UnsignedInt8 => v.min(0xff),
        UnsignedInt16 => v.min(0xffff),
        SignedInt32 | UnsignedInt32 | Float => v,
        HalfFloat => clsync_float_to_half(x as f64, 0),
        // Packed types are written whole (`ImageRef::store`).
        UnormShort565 | UnormShort555 | UnormInt101010 | UnormInt101010_2 => v,
    }
}

/// The texel coordinates a sampler picks for `u` (unnormalized) along an
/// axis of `n` texels: the nearest one, or the two of a linear filter and
/// the second's weight.
fn address(s: Sampler, coord: f32, n: usize) -> ([i64; 2], f32) {
    let n_f = n as f32;
    let mode = s.addressing();
    let repeat = s.normalized() && (mode == Sampler::REPEAT || mode == Sampler::MIRRORED_REPEAT);
    let u = if repeat {
        let s_ = if mode == Sampler::REPEAT {
            coord - coord.floor()
        } else {
            // Mirrored: s' = |s - 2 rint(0.5 s)|.
            (coord - 2.0 * (0.5 * coord).round_ties_even()).abs()
        };
        s_ * n_f
    } else if s.normalized() {
        coord * n_f
    } else {
        coord
    };
    let wrap = |i: i64| -> i64 {
        let n = n as i64;
        match mode {
            _ if repeat && mode == Sampler::REPEAT => i.rem_euclid(n),
            _ if repeat => i.clamp(0, n - 1),
            Sampler::CLAMP_TO_EDGE => i.clamp(0, n - 1),
            Sampler::CLAMP => i.clamp(-1, n),
            _ => i,
        }
    };
    if !s.linear() {
        let i = u.floor();
        let i = if i.is_finite() { i as i64 } else { 0 };
        let i = if repeat && mode == Sampler::REPEAT && i >= n as i64 {
            i - n as i64
        } else {
            i
        };
        return ([wrap(i), wrap(i)], 0.0);
    }
    let t = u - 0.5;
    let i0 = t.floor();
    let frac = t - i0;
    let i0 = if i0.is_finite() { i0 as i64 } else { 0 };
    ([wrap(i0), wrap(i0 + 1)], frac)
}

/// `read_image{f,i,ui}`: the value at `coords` (float coordinates when
/// `float_coords`), through sampler `s` or, without one (`None`), at
/// integer coordinates as they are.
fn read(
    img: &ImageRef,
    s: Option<Sampler>,
    coords: [u32; 3],
    float_coords: bool,
) -> ([u32; 4], Vec<[i64; 3]>) {
    let e = img.shape.extent();
    let dims = img.shape.filtered();
    let as_f = |c: u32| {
        if float_coords {
            f32::from_bits(c)
        } else {
            c as i32 as f32
        }
    };
    let mut at = [0i64; 3];
    // An array's layer: rounded to nearest and clamped (float coordinates),
    // or as given.
    if let Some(l) = img.shape.layer_coordinate() {
        let layer = if float_coords {
            as_f(coords[l])
                .round_ties_even()
                .clamp(0.0, (e[l] - 1) as f32) as i64
        } else {
            (coords[l] as i32 as i64).clamp(0, e[l] as i64 - 1)
        };
        at[l] = layer;
    }
    let Some(s) = s else {
        for k in 0..dims {
            at[k] = coords[k] as i32 as i64;
        }
        return (img.texel(at), vec![at]);
    };
    let picks: Vec<([i64; 2], f32)> = (0..dims)
        .map(|k| address(s, as_f(coords[k]), e[k]))
        .collect();
    if !s.linear() || !img.format.ty.is_float() {
        for (k, p) in picks.iter().enumerate() {
            at[k] = p.0[0];
        }
        return (img.texel(at), vec![at]);
    }
    // Linear: the weighted sum of the 2^dims corners.
    let mut sum = [0f32; 4];
    let mut touched = Vec::new();
    for corner in 0..(1usize << dims) {
        let mut w = 1f32;
        let mut c = at;
        for (k, p) in picks.iter().enumerate() {
            let hi = corner >> k & 1 == 1;
            c[k] = p.0[hi as usize];
            w *= if hi { p.1 } else { 1.0 - p.1 };
        }
        let t = img.texel(c).map(f32::from_bits);
        for (acc, v) in sum.iter_mut().zip(t) {
            *acc += w * v;
        }
        touched.push(c);
    }
    (sum.map(f32::to_bits), touched)
}

/// `OpImageRead`, `OpImageSampleExplicitLod`: reads into the context's
/// scratch area as four 32-bit words. `handle` is the image's number in
/// the launch (from 1) and, in its high half, the sampler's bits (0: none);
/// `flags` bit 0: float coordinates.
///
/// # Safety
///
/// `ctx` is the context of the work-item that is running the call (as
/// compiled code passes it), alive for the call.
pub(crate) unsafe extern "C" fn clsync_image_read(
    ctx: *mut ItemCtx,
    handle: u64,
    c0: u64,
    c1: u64,
    c2: u64,
    flags: u32,
    site: u32,
) {
    // SAFETY: compiled code passes its own context, alive for the call.
    let c = unsafe { &mut *ctx };
    let out = c.scratch.as_mut_ptr() as *mut u32;
    let Some(img) = image_of(c, handle) else {
        // SAFETY: the scratch area holds at least four words.
        unsafe { std::ptr::write_bytes(out, 0, 4) };
        return;
    };
    let sampler = (handle >> 32) as u32;
    let s = (sampler != 0).then_some(Sampler(sampler));
    let coords = [c0 as u32, c1 as u32, c2 as u32];
    let (v, touched) = read(&img, s, coords, flags & 1 != 0);
    // SAFETY: as in `report`.
    let host = unsafe { &*c.host };
    if host.checked {
        if s.is_none() && img.offset(touched[0]).is_none() {
            outside(c, &img, touched[0], false, site);
        }
        let at = super::helpers::site_at(c, site);
        for t in &touched {
            if let Some(a) = img.address(*t) {
                clsync::checker::engine::plain(a, clsync::checker::Space::Image, false, at);
            }
        }
    }
    for (k, w) in v.iter().enumerate() {
        // SAFETY: the scratch area holds at least four words.
        unsafe { out.add(k).write(*w) };
    }
}

/// `OpImageWrite`: writes the texel `(v0, v1, v2, v3)` (floats' or
/// integers' bits) at integer coordinates.
///
/// # Safety
///
/// As [`clsync_image_read`].
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe extern "C" fn clsync_image_write(
    ctx: *mut ItemCtx,
    handle: u64,
    c0: u64,
    c1: u64,
    c2: u64,
    lo: u64,
    hi: u64,
    site: u32,
) {
    // SAFETY: compiled code passes its own context, alive for the call.
    let c = unsafe { &mut *ctx };
    let Some(img) = image_of(c, handle) else {
        return;
    };
    let at = [
        c0 as u32 as i32 as i64,
        c1 as u32 as i32 as i64,
        c2 as u32 as i32 as i64,
    ];
    let dims = img.shape.filtered() + img.shape.layer_coordinate().map_or(0, |_| 1);
    let mut at3 = [0i64; 3];
    at3[..dims].copy_from_slice(&at[..dims]);
    let v = [lo as u32, (lo >> 32) as u32, hi as u32, (hi >> 32) as u32];
    // SAFETY: as in `report`.
    let host = unsafe { &*c.host };
    if host.checked {
        match img.address(at3) {
            Some(a) => clsync::checker::engine::plain(
                a,
                clsync::checker::Space::Image,
                true,
                super::helpers::site_at(c, site),
            ),
            None => {
                outside(c, &img, at3, true, site);
                return;
            }
        }
    }
    img.store(at3, v);
}

/// `OpImageQuerySize(Lod)`, `OpImageQueryOrder`, `OpImageQueryFormat`:
/// `what` 0..=2 the extent along that axis (an array's layers last), 3 the
/// channel order, 4 the channel type, as SPIR-V numbers them.
///
/// # Safety
///
/// As [`clsync_image_read`].
pub(crate) unsafe extern "C" fn clsync_image_query(
    ctx: *mut ItemCtx,
    handle: u64,
    what: u32,
) -> u32 {
    // SAFETY: compiled code passes its own context, alive for the call.
    let c = unsafe { &mut *ctx };
    let Some(img) = image_of(c, handle) else {
        return 0;
    };
    let e = img.shape.extent();
    match (what, img.shape) {
        (1, ImageShape::D1Array { layers, .. }) => layers as u32,
        (0..=2, _) => e[what as usize] as u32,
        (3, _) => img.format.order as u32,
        _ => img.format.ty as u32,
    }
}

/// The launch's image with this handle.
fn image_of(c: &ItemCtx, handle: u64) -> Option<ImageRef> {
    // SAFETY: as in `report`.
    let host = unsafe { &*c.host };
    let i = (handle as u32 as usize).checked_sub(1)?;
    host.images.get(i).copied()
}

/// Reports an unsampled read or a write outside the image (checked).
fn outside(c: &ItemCtx, img: &ImageRef, at: [i64; 3], write: bool, site: u32) {
    let e = img.shape.extent();
    let headline = if write {
        "Invalid write to image"
    } else {
        "Invalid read from image"
    };
    super::report::add(
        c,
        headline.to_string(),
        format!(
            "coordinate ({}, {}, {}) of an image of {} x {} x {} texels",
            at[0], at[1], at[2], e[0], e[1], e[2]
        ),
        Some(super::helpers::site_at(c, site)),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_round_to_nearest_even_and_saturate() {
        assert_eq!(encode(ChannelType::UnormInt8, 0.5f32.to_bits()), 128);
        assert_eq!(encode(ChannelType::UnormInt8, 2.0f32.to_bits()), 255);
        assert_eq!(encode(ChannelType::UnormInt8, f32::NAN.to_bits()), 0);
        assert_eq!(encode(ChannelType::SnormInt8, (-2.0f32).to_bits()), 0x80);
        assert_eq!(encode(ChannelType::SignedInt8, 300), 127);
        assert_eq!(encode(ChannelType::SignedInt16, (-40000i32) as u32), 0x8000);
        assert_eq!(encode(ChannelType::UnsignedInt8, 300), 255);
        assert_eq!(f32::from_bits(decode(ChannelType::SnormInt8, 0x80)), -1.0);
        assert_eq!(decode(ChannelType::SignedInt8, 0xff), u32::MAX);
        assert_eq!(f32::from_bits(decode(ChannelType::UnormInt16, 0xffff)), 1.0);
    }

    #[test]
    fn addressing_modes_pick_the_texels_of_the_specification() {
        let n = Sampler::NEAREST;
        // Unnormalized, clamp to edge: floor, then into [0, n-1].
        assert_eq!(
            address(Sampler(Sampler::CLAMP_TO_EDGE | n), 5.7, 4).0,
            [3, 3]
        );
        assert_eq!(
            address(Sampler(Sampler::CLAMP_TO_EDGE | n), -0.2, 4).0,
            [0, 0]
        );
        // Clamp: one texel of border either side.
        assert_eq!(address(Sampler(Sampler::CLAMP | n), -3.0, 4).0, [-1, -1]);
        // Normalized repeat: 1.25 is a quarter in.
        assert_eq!(address(Sampler(1 | Sampler::REPEAT | n), 1.25, 4).0, [1, 1]);
        // Mirrored: 1.25 mirrors to 0.75.
        assert_eq!(
            address(Sampler(1 | Sampler::MIRRORED_REPEAT | n), 1.25, 4).0,
            [3, 3]
        );
        // Linear: the texels either side of u - 0.5 and the weight.
        let (i, w) = address(Sampler(Sampler::CLAMP_TO_EDGE | Sampler::LINEAR), 1.75, 4);
        assert_eq!(i, [1, 2]);
        assert!((w - 0.25).abs() < 1e-6);
        // Repeat wraps the right neighbour of the last texel to the first.
        assert_eq!(
            address(Sampler(1 | Sampler::REPEAT | Sampler::LINEAR), 0.99, 4).0,
            [3, 0]
        );
    }
}
