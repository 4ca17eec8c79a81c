//! The exchange file between the runtime and a module's driver (`driver.c`): the sizes, the
//! buffers and room for the times, which the driver maps into its memory and runs on in place.
//!
//! Layout (native-endian 64-bit words, then data): `MAGIC, n, m, warmup, runs, times_offset,
//! done, status` (the driver writes `status` and then [`DONE`] in `done` when it finishes),
//! `sizes[n]`, `m` pairs `(offset, len)` (the outputs first, then the inputs: a result that is a
//! tuple of arrays has one output buffer per array), then each buffer at a 64-byte aligned
//! offset, then `runs` doubles at `times_offset`.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::{Buffer, RuntimeError};

/// The first word of an exchange file (`driver.c`, `MAGIC`).
const MAGIC: u64 = 0x5348_494e_4558_3031;

/// What the driver writes in the header's `done` word once it has finished (`driver.c`, DONE).
const DONE: u64 = 0x5348_4e45_444f_4e45;

/// The number of header words before the sizes.
const HEADER: usize = 8;

/// Where the `done` word is (the `status` word follows it).
const DONE_WORD: u64 = 6;

/// Buffers start at multiples of this (a cache line; enough for any vector load).
const ALIGN: u64 = 64;

/// A written exchange file, removed when dropped.
pub(crate) struct Exchange {
    file: tempfile::NamedTempFile,
    /// Where each output buffer starts.
    output_offsets: Vec<u64>,
    times_offset: u64,
}

impl Exchange {
    /// Writes a request for `warmup + runs` runs in a fresh file in `dir`.
    pub(crate) fn write(
        dir: &Path,
        outputs: &[&Buffer],
        inputs: &[&Buffer],
        sizes: &[i64],
        warmup: usize,
        runs: usize,
    ) -> Result<Exchange, RuntimeError> {
        let buffers: Vec<&Buffer> = outputs.iter().chain(inputs).copied().collect();
        let words = HEADER + sizes.len() + 2 * buffers.len();
        let mut offset = align(8 * words as u64);
        let mut spans = Vec::with_capacity(buffers.len());
        for buffer in &buffers {
            spans.push((offset, buffer.len() as u64));
            offset = align(offset + buffer.len() as u64);
        }
        let times_offset = offset;
        let total = times_offset + 8 * runs as u64;
        let mut header: Vec<u64> = vec![
            MAGIC,
            sizes.len() as u64,
            buffers.len() as u64,
            warmup as u64,
            runs as u64,
            times_offset,
            0,
            0,
        ];
        header.extend(sizes.iter().map(|&s| s as u64));
        header.extend(spans.iter().flat_map(|&(o, l)| [o, l]));
        let context = format!("writing a request in {}", dir.display());
        let io = RuntimeError::io;
        let file = tempfile::Builder::new()
            .prefix("exchange-")
            .tempfile_in(dir)
            .map_err(io(context.clone()))?;
        let f: &File = file.as_file();
        f.set_len(total).map_err(io(context.clone()))?;
        let bytes: Vec<u8> = header.iter().flat_map(|w| w.to_ne_bytes()).collect();
        f.write_all_at(&bytes, 0).map_err(io(context.clone()))?;
        for (buffer, &(offset, _)) in buffers.iter().zip(&spans) {
            f.write_all_at(buffer.as_bytes(), offset)
                .map_err(io(context.clone()))?;
        }
        Ok(Exchange {
            file,
            output_offsets: spans[..outputs.len()].iter().map(|s| s.0).collect(),
            times_offset,
        })
    }

    /// The file's path, for the driver.
    pub(crate) fn path(&self) -> &Path {
        self.file.path()
    }

    /// Reads the outputs the driver left, and the `runs` times in milliseconds.
    pub(crate) fn read(
        &self,
        outputs: &mut [Buffer],
        runs: usize,
    ) -> Result<Vec<f64>, RuntimeError> {
        let context = format!("reading the result in {}", self.path().display());
        let f = self.file.as_file();
        for (output, &offset) in outputs.iter_mut().zip(&self.output_offsets) {
            f.read_exact_at(output.as_bytes_mut(), offset)
                .map_err(RuntimeError::io(context.clone()))?;
        }
        let mut times = vec![0u8; 8 * runs];
        f.read_exact_at(&mut times, self.times_offset)
            .map_err(RuntimeError::io(context))?;
        let time = |t: &[u8]| f64::from_ne_bytes(t.try_into().expect("8 bytes"));
        Ok(times.chunks_exact(8).map(time).collect())
    }

    /// The status the driver reported on finishing (0, or the entry point's non-zero
    /// status), or `None` when it never finished (the process ended early).
    pub(crate) fn finished(&self) -> Result<Option<i64>, RuntimeError> {
        let context = format!("reading the result in {}", self.path().display());
        let mut words = [0u8; 16];
        self.file
            .as_file()
            .read_exact_at(&mut words, 8 * DONE_WORD)
            .map_err(RuntimeError::io(context))?;
        let (done, status) = words.split_at(8);
        let word = |w: &[u8]| u64::from_ne_bytes(w.try_into().expect("8 bytes"));
        Ok((word(done) == DONE).then(|| word(status) as i64))
    }
}

/// `offset` rounded up to a multiple of [`ALIGN`].
fn align(offset: u64) -> u64 {
    offset.div_ceil(ALIGN) * ALIGN
}
