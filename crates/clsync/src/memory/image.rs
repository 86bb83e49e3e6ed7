//! Image memory: [`Image2d`], a 2D `read_write` image.
//!
//! `000_96da91f170ff246f.txt`: "For images declared with the read_write
//! qualifier, the atomic_work_item_fence must be called to make sure that
//! writes to the image by a work-item become visible to that work-item on
//! subsequent reads to that image by that work-item." A work-item is
//! therefore only *guaranteed* to see its own write after
//! `atomic_work_item_fence(CLK_IMAGE_MEM_FENCE, order, scope)` with an order
//! other than relaxed (or a barrier whose flags include IMAGE).
//!
//! By default a write is visible at once, as on most CPUs. With
//! [`Launch::strict_images`](crate::Launch::strict_images) the runtime acts
//! like a GPU's texture cache: until the fence, a work-item reading a pixel
//! it wrote gets the value from before its write, so a kernel that forgot the
//! fence shows it.

use std::fmt;
use std::marker::PhantomData;
use std::panic::Location;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::checker::{self, Space};
use crate::scheduler::hooks;
use crate::sync::Site;
use crate::WorkItem;

/// A pixel type of an image: four channels of 32 bits
/// (`CL_RGBA` with `CL_FLOAT`, `CL_UNSIGNED_INT32` or `CL_SIGNED_INT32`).
pub trait Pixel: Copy + PartialEq + fmt::Debug + Send + Sync + 'static {
    /// The image channel type, as OpenCL names it.
    const FORMAT: &'static str;
    /// To raw channel bits.
    fn to_raw(self) -> [u32; 4];
    /// From raw channel bits.
    fn from_raw(raw: [u32; 4]) -> Self;
}

impl Pixel for [f32; 4] {
    const FORMAT: &'static str = "CL_RGBA/CL_FLOAT (read_imagef, write_imagef)";
    fn to_raw(self) -> [u32; 4] {
        self.map(f32::to_bits)
    }
    fn from_raw(raw: [u32; 4]) -> Self {
        raw.map(f32::from_bits)
    }
}

impl Pixel for [u32; 4] {
    const FORMAT: &'static str = "CL_RGBA/CL_UNSIGNED_INT32 (read_imageui, write_imageui)";
    fn to_raw(self) -> [u32; 4] {
        self
    }
    fn from_raw(raw: [u32; 4]) -> Self {
        raw
    }
}

impl Pixel for [i32; 4] {
    const FORMAT: &'static str = "CL_RGBA/CL_SIGNED_INT32 (read_imagei, write_imagei)";
    fn to_raw(self) -> [u32; 4] {
        self.map(|c| c as u32)
    }
    fn from_raw(raw: [u32; 4]) -> Self {
        raw.map(|c| c as i32)
    }
}

/// A 2D `read_write` image in global memory, addressed by integer
/// coordinates without a sampler.
///
/// ```
/// use clsync::{Image2d, Launch, NdRange, Runtime};
/// use clsync::sync::{AcqRel, WorkItemScope, IMAGE};
///
/// let img = Image2d::<[f32; 4]>::new(4, 2);
/// let rt = Runtime::with_threads(1);
/// rt.launch(&Launch::new("blit", NdRange::new([4, 2]).local([4, 1])), |wi| {
///     let (x, y) = (wi.get_global_id(0) as i32, wi.get_global_id(1) as i32);
///     img.write(wi, [x, y], [x as f32, y as f32, 0.0, 1.0]);
///     wi.atomic_work_item_fence(IMAGE, AcqRel, WorkItemScope);
///     assert_eq!(img.read(wi, [x, y])[0], x as f32);
/// }).unwrap();
/// assert_eq!(img.get([3, 1]), [3.0, 1.0, 0.0, 1.0]);
/// ```
pub struct Image2d<P: Pixel> {
    width: usize,
    height: usize,
    pixels: Box<[[AtomicU32; 4]]>,
    name: String,
    id: u64,
    _p: PhantomData<P>,
}

/// The largest side of an [`Image2d`], in pixels
/// (`CL_DEVICE_IMAGE2D_MAX_WIDTH` and `_HEIGHT`): the OpenCL minimum for a
/// full-profile device with images, and what PoCL's CPU device reports.
pub const MAX_IMAGE2D_SIZE: usize = 16384;

/// An image size OpenCL would refuse with `CL_INVALID_IMAGE_SIZE`: a side
/// of zero, or longer than [`MAX_IMAGE2D_SIZE`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "image size {width}x{height} is invalid: each side must be 1 to {max} pixels \
     (CL_INVALID_IMAGE_SIZE)",
    max = MAX_IMAGE2D_SIZE
)]
pub struct ImageSizeError {
    /// The width asked for.
    pub width: usize,
    /// The height asked for.
    pub height: usize,
}

impl<P: Pixel> Image2d<P> {
    /// A zero-filled image.
    ///
    /// # Panics
    ///
    /// If a side is zero or longer than [`MAX_IMAGE2D_SIZE`], with the
    /// message of [`ImageSizeError`]; [`try_new`](Self::try_new) returns
    /// the error instead.
    #[track_caller]
    pub fn new(width: usize, height: usize) -> Self {
        Self::try_new(width, height).unwrap_or_else(|e| panic!("{e}"))
    }

    /// A zero-filled image, or the error OpenCL would give for its size.
    ///
    /// ```
    /// use clsync::{Image2d, ImageSizeError};
    /// assert!(Image2d::<[f32; 4]>::try_new(64, 64).is_ok());
    /// assert_eq!(
    ///     Image2d::<[f32; 4]>::try_new(0, 64).unwrap_err(),
    ///     ImageSizeError { width: 0, height: 64 },
    /// );
    /// ```
    pub fn try_new(width: usize, height: usize) -> Result<Self, ImageSizeError> {
        let side = 1..=MAX_IMAGE2D_SIZE;
        if !side.contains(&width) || !side.contains(&height) {
            return Err(ImageSizeError { width, height });
        }
        let id = super::next_object_id();
        let img = Image2d {
            width,
            height,
            // One more than the image has: the scratch pixel that a checked
            // launch's out-of-bounds accesses go to.
            pixels: (0..=width * height).map(|_| Default::default()).collect(),
            name: format!("image#{id}"),
            id,
            _p: PhantomData,
        };
        img.register();
        Ok(img)
    }
    /// Gives the image a name for reports and errors.
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self.register();
        self
    }

    fn register(&self) {
        let stride = std::mem::size_of::<[AtomicU32; 4]>();
        let len = self.width * self.height;
        checker::register(self.addr(0), len, stride, Space::Image, &self.name);
    }

    fn addr(&self, index: usize) -> usize {
        self.pixels.as_ptr() as usize + index * std::mem::size_of::<[AtomicU32; 4]>()
    }
    /// The image's name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// Width in pixels.
    pub fn width(&self) -> usize {
        self.width
    }
    /// Height in pixels.
    pub fn height(&self) -> usize {
        self.height
    }

    fn index(&self, coord: [i32; 2], write: bool, at: &'static Location<'static>) -> usize {
        let [x, y] = coord;
        if x < 0 || y < 0 || x as usize >= self.width || y as usize >= self.height {
            let what = format!("({x}, {y})");
            let len = self.width * self.height;
            if checker::out_of_bounds(Space::Image, &self.name, &what, len, write, at) {
                return len;
            }
            hooks::panic_at(
                at,
                format!(
                    "out-of-bounds access to image `{}`: coordinate ({x}, {y}), size {}x{}, at {}",
                    self.name,
                    self.width,
                    self.height,
                    Site::from_location(at)
                ),
            );
        }
        y as usize * self.width + x as usize
    }

    fn load(&self, index: usize) -> [u32; 4] {
        // Relaxed: a plain image access (see the `memory` module docs).
        self.pixels[index]
            .each_ref()
            .map(|c| c.load(Ordering::Relaxed))
    }

    fn store(&self, index: usize, raw: [u32; 4]) {
        for (c, v) in self.pixels[index].iter().zip(raw) {
            // Relaxed: a plain image access.
            c.store(v, Ordering::Relaxed);
        }
    }

    /// `read_image{f,ui,i}(image, (int2)(x, y))` by a work-item.
    #[track_caller]
    pub fn read(&self, wi: &WorkItem<'_>, coord: [i32; 2]) -> P {
        let at = Location::caller();
        let index = self.index(coord, false, at);
        let addr = self.addr(index);
        checker::plain(addr, Space::Image, false, at);
        if let Some(old) = wi.unfenced_image_write(self.id, index, addr, at.into()) {
            return P::from_raw(old);
        }
        P::from_raw(self.load(index))
    }

    /// `write_image{f,ui,i}(image, (int2)(x, y), pixel)` by a work-item.
    #[track_caller]
    pub fn write(&self, wi: &WorkItem<'_>, coord: [i32; 2], pixel: P) {
        let at = Location::caller();
        let index = self.index(coord, true, at);
        checker::plain(self.addr(index), Space::Image, true, at);
        wi.note_image_write(self.id, index, at.into(), || self.load(index));
        self.store(index, pixel.to_raw());
    }

    /// Host read of one pixel.
    #[track_caller]
    pub fn get(&self, coord: [i32; 2]) -> P {
        P::from_raw(self.load(self.index(coord, false, Location::caller())))
    }

    /// Host write of one pixel.
    #[track_caller]
    pub fn set(&self, coord: [i32; 2], pixel: P) {
        self.store(self.index(coord, true, Location::caller()), pixel.to_raw())
    }

    /// All pixels, row by row.
    pub fn to_vec(&self) -> Vec<P> {
        (0..self.width * self.height)
            .map(|i| P::from_raw(self.load(i)))
            .collect()
    }
}

impl<P: Pixel> Drop for Image2d<P> {
    fn drop(&mut self) {
        checker::unregister(self.addr(0));
    }
}

impl<P: Pixel> fmt::Debug for Image2d<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Image2d")
            .field("name", &self.name)
            .field("format", &P::FORMAT)
            .field("width", &self.width)
            .field("height", &self.height)
            .finish()
    }
}
