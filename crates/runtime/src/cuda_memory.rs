//! Device memory the runtime allocates and hands out: the results of a CUDA run that stay on
//! the device ([`CudaMemory`]), used in place by [`CudaProgram::run_on_device`] and exported
//! by the Python package through DLPack.
//!
//! [`CudaProgram::run_on_device`]: crate::CudaProgram::run_on_device

use cudarc::driver::{CudaSlice, DevicePtr};

use crate::cuda::{cuda_error, DeviceRegion};
use crate::{CudaDevice, RuntimeError};

/// A zero-initialised allocation on a CUDA device, freed when dropped (after the device's
/// context has finished every piece of work, which may still read or write it).
pub struct CudaMemory {
    device: CudaDevice,
    slice: CudaSlice<u8>,
    bytes: usize,
}

impl CudaMemory {
    /// `bytes` zeroed bytes on `device` (an empty allocation holds one byte, as the driver
    /// allocates no empty buffers, and has length 0).
    pub fn zeroed(device: &CudaDevice, bytes: usize) -> Result<CudaMemory, RuntimeError> {
        Ok(CudaMemory {
            device: device.clone(),
            slice: device.alloc_zeros(bytes, "device memory")?,
            bytes,
        })
    }

    /// `bytes` copied from the host to `device`.
    pub fn from_host(device: &CudaDevice, bytes: &[u8]) -> Result<CudaMemory, RuntimeError> {
        let mut memory = CudaMemory::zeroed(device, bytes.len())?;
        if !bytes.is_empty() {
            let stream = device.stream();
            stream
                .memcpy_htod(bytes, &mut memory.slice)
                .and_then(|()| stream.synchronize())
                .map_err(cuda_error("copying an array to the device"))?;
        }
        Ok(memory)
    }

    /// The length in bytes.
    pub fn len(&self) -> usize {
        self.bytes
    }

    /// Whether the allocation holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.bytes == 0
    }

    /// The device the memory is on.
    pub fn device(&self) -> &CudaDevice {
        &self.device
    }

    /// The memory as a region of a run on the device.
    pub fn region(&self) -> DeviceRegion {
        DeviceRegion {
            address: self.slice.device_ptr(self.device.stream()).0,
            bytes: self.bytes,
        }
    }

    /// Copies the memory to the host: `host` must have [`CudaMemory::len`] bytes. Waits for
    /// the device's context first, so that work writing the memory has finished.
    pub fn copy_to_host(&self, host: &mut [u8]) -> Result<(), RuntimeError> {
        if host.len() != self.bytes {
            return Err(RuntimeError::InvalidArgument(format!(
                "copying {} bytes of device memory into {} bytes of host memory",
                self.bytes,
                host.len()
            )));
        }
        if self.bytes == 0 {
            return Ok(());
        }
        self.device
            .synchronize("waiting for the device before a copy")?;
        let stream = self.device.stream();
        stream
            .memcpy_dtoh(&self.slice.slice(..self.bytes), host)
            .and_then(|()| stream.synchronize())
            .map_err(cuda_error("copying device memory to the host"))
    }
}

impl Drop for CudaMemory {
    fn drop(&mut self) {
        // Other libraries may have used the memory on their own streams (a PyTorch tensor
        // made from it by DLPack): wait for all of them before the slice is freed. A failure
        // cannot be reported from `drop`; the free is then ordered on the device's stream.
        let _ = self
            .device
            .synchronize("waiting for the device before a free");
    }
}

impl std::fmt::Debug for CudaMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CudaMemory({} bytes on {})", self.bytes, self.device)
    }
}
