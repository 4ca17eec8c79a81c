//! Owned, 64-byte aligned byte buffers.

use bytemuck::{Pod, Zeroable};

/// The alignment of every [`Buffer`] in bytes (a cache line; enough for any vector load).
const ALIGN: usize = 64;

#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C, align(64))]
struct Chunk([u8; ALIGN]);

/// An owned byte buffer whose data starts at a 64-byte boundary.
///
/// Typed views ([`Buffer::as_slice`]) reinterpret the bytes as `f32`, `f64`, `i32`, `i64` or
/// any other plain-old-data type, in native byte order.
#[derive(Clone)]
pub struct Buffer {
    chunks: Vec<Chunk>,
    len: usize,
}

impl Buffer {
    /// A buffer of `len` zero bytes.
    pub fn zeroed(len: usize) -> Buffer {
        Buffer {
            chunks: vec![Chunk([0; ALIGN]); len.div_ceil(ALIGN)],
            len,
        }
    }

    /// A buffer holding a copy of `bytes`.
    pub fn from_bytes(bytes: &[u8]) -> Buffer {
        let mut buffer = Buffer::zeroed(bytes.len());
        buffer.as_bytes_mut().copy_from_slice(bytes);
        buffer
    }

    /// A buffer holding a copy of `values` (e.g. `&[f32]`).
    pub fn from_slice<T: Pod>(values: &[T]) -> Buffer {
        Buffer::from_bytes(bytemuck::cast_slice(values))
    }

    /// The length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &bytemuck::cast_slice(&self.chunks)[..self.len]
    }

    /// The bytes, mutably.
    pub fn as_bytes_mut(&mut self) -> &mut [u8] {
        &mut bytemuck::cast_slice_mut(&mut self.chunks)[..self.len]
    }

    /// The contents as elements of type `T`.
    ///
    /// # Panics
    /// If the length is not a multiple of `size_of::<T>()`, or `T` needs more than 64-byte
    /// alignment.
    pub fn as_slice<T: Pod>(&self) -> &[T] {
        bytemuck::try_cast_slice(self.as_bytes()).unwrap_or_else(|e| bad_view::<T>(self.len, e))
    }

    /// The contents as elements of type `T`, mutably. Panics as [`Buffer::as_slice`] does.
    pub fn as_mut_slice<T: Pod>(&mut self) -> &mut [T] {
        let len = self.len;
        bytemuck::try_cast_slice_mut(self.as_bytes_mut()).unwrap_or_else(|e| bad_view::<T>(len, e))
    }

    /// A copy of the contents as elements of type `T`. Panics as [`Buffer::as_slice`] does.
    pub fn to_vec<T: Pod>(&self) -> Vec<T> {
        self.as_slice().to_vec()
    }
}

fn bad_view<T>(len: usize, e: bytemuck::PodCastError) -> ! {
    panic!(
        "cannot view {len} bytes as {}: {e:?}",
        std::any::type_name::<T>()
    )
}

impl std::fmt::Debug for Buffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Buffer({} bytes)", self.len)
    }
}

impl PartialEq for Buffer {
    fn eq(&self, other: &Buffer) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_and_typed() {
        let mut b = Buffer::from_slice(&[1.0f32, 2.0, 3.0]);
        assert_eq!(b.len(), 12);
        assert_eq!(b.as_bytes().as_ptr() as usize % ALIGN, 0);
        assert_eq!(b.as_slice::<f32>(), &[1.0, 2.0, 3.0]);
        b.as_mut_slice::<i32>()[0] = 7;
        assert_eq!(b.to_vec::<i32>()[0], 7);
        let e = Buffer::zeroed(0);
        assert!(e.is_empty() && e.as_slice::<f64>().is_empty());
        assert_eq!(Buffer::zeroed(130).as_bytes(), &[0u8; 130][..]);
    }

    #[test]
    #[should_panic(expected = "cannot view 6 bytes as f32")]
    fn bad_view_panics() {
        Buffer::zeroed(6).as_slice::<f32>();
    }
}
