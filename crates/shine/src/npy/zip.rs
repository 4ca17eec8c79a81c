//! The stored (uncompressed) zip format of `.npz` files (PKWARE APPNOTE 4.3.7, 4.3.12,
//! 4.3.16), without zip64.

use std::io::Write;

/// The offset of the CRC-32 in a local file header.
pub const CRC_AT: u64 = 14;
/// 1980-01-01, the earliest date a zip entry can have (MS-DOS format).
const DATE: u16 = (1 << 5) | 1;

/// The local file header of a stored member.
pub fn local_header(name: &str, crc: u32, size: u32) -> Vec<u8> {
    let mut h = Vec::new();
    h.extend(0x0403_4b50u32.to_le_bytes());
    h.extend(20u16.to_le_bytes()); // version needed: 2.0
    h.extend(0u16.to_le_bytes()); // flags
    h.extend(0u16.to_le_bytes()); // method: stored
    h.extend(0u16.to_le_bytes()); // time
    h.extend(DATE.to_le_bytes());
    h.extend(crc.to_le_bytes());
    h.extend(size.to_le_bytes()); // compressed size
    h.extend(size.to_le_bytes()); // uncompressed size
    h.extend((name.len() as u16).to_le_bytes());
    h.extend(0u16.to_le_bytes()); // extra field length
    h.extend(name.as_bytes());
    h
}

/// The central directory header of a stored member whose local header is at `offset`.
pub fn central_header(name: &str, crc: u32, size: u32, offset: u32) -> Vec<u8> {
    let mut h = Vec::new();
    h.extend(0x0201_4b50u32.to_le_bytes());
    h.extend(20u16.to_le_bytes()); // version made by
    h.extend(20u16.to_le_bytes()); // version needed
    h.extend(0u16.to_le_bytes()); // flags
    h.extend(0u16.to_le_bytes()); // method: stored
    h.extend(0u16.to_le_bytes()); // time
    h.extend(DATE.to_le_bytes());
    h.extend(crc.to_le_bytes());
    h.extend(size.to_le_bytes());
    h.extend(size.to_le_bytes());
    h.extend((name.len() as u16).to_le_bytes());
    h.extend([0u8; 12]); // extra, comment, disk, internal and external attributes
    h.extend(offset.to_le_bytes());
    h.extend(name.as_bytes());
    h
}

/// The end of central directory record.
pub fn end_record(entries: u16, size: u32, offset: u32) -> Vec<u8> {
    let mut h = Vec::new();
    h.extend(0x0605_4b50u32.to_le_bytes());
    h.extend([0u8; 4]); // this disk, the central directory's disk
    h.extend(entries.to_le_bytes());
    h.extend(entries.to_le_bytes());
    h.extend(size.to_le_bytes());
    h.extend(offset.to_le_bytes());
    h.extend(0u16.to_le_bytes()); // comment length
    h
}

/// The CRC-32 (IEEE 802.3, reflected) table.
const TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
            k += 1;
        }
        table[i] = c;
        i += 1;
    }
    table
};

/// The CRC-32 of `bytes` continued from `crc` (0 to start).
pub fn crc32(crc: u32, bytes: &[u8]) -> u32 {
    let mut c = !crc;
    for &b in bytes {
        c = TABLE[((c ^ b as u32) & 0xff) as usize] ^ (c >> 8);
    }
    !c
}

/// A writer that computes the CRC-32 of what goes through it.
pub struct CrcWriter<W: Write> {
    inner: W,
    crc: u32,
}

impl<W: Write> CrcWriter<W> {
    /// A writer to `inner`.
    pub fn new(inner: W) -> CrcWriter<W> {
        CrcWriter { inner, crc: 0 }
    }

    /// Flushes and returns the CRC-32 of everything written.
    pub fn finish(mut self) -> std::io::Result<u32> {
        self.inner.flush()?;
        Ok(self.crc)
    }
}

impl<W: Write> Write for CrcWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.crc = crc32(self.crc, &buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

#[test]
fn crc32_of_a_known_string() {
    assert_eq!(crc32(0, b"123456789"), 0xCBF4_3926);
    assert_eq!(crc32(crc32(0, b"1234"), b"56789"), 0xCBF4_3926);
}
