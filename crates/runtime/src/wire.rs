//! The byte encoding of the messages between this process and an OpenCL child process
//! (`opencl_child`): native-endian 64-bit words, length-prefixed byte strings, and frames
//! (one message each) that start with their length.

use std::io::{Read, Write};

/// A message being written.
#[derive(Default)]
pub(crate) struct Writer(Vec<u8>);

impl Writer {
    /// An empty message.
    pub(crate) fn new() -> Writer {
        Writer::default()
    }

    /// Appends a 64-bit word.
    pub(crate) fn u64(&mut self, value: u64) -> &mut Writer {
        self.0.extend_from_slice(&value.to_ne_bytes());
        self
    }

    /// Appends a size or an index.
    pub(crate) fn usize(&mut self, value: usize) -> &mut Writer {
        self.u64(value as u64)
    }

    /// Appends a signed 64-bit integer.
    pub(crate) fn i64(&mut self, value: i64) -> &mut Writer {
        self.u64(value as u64)
    }

    /// Appends a 64-bit float.
    pub(crate) fn f64(&mut self, value: f64) -> &mut Writer {
        self.u64(value.to_bits())
    }

    /// Appends bytes, after their length.
    pub(crate) fn bytes(&mut self, bytes: &[u8]) -> &mut Writer {
        self.usize(bytes.len());
        self.0.extend_from_slice(bytes);
        self
    }

    /// Appends a string, as its UTF-8 bytes.
    pub(crate) fn str(&mut self, text: &str) -> &mut Writer {
        self.bytes(text.as_bytes())
    }

    /// Appends a list of sizes, after its length.
    pub(crate) fn sizes(&mut self, values: &[usize]) -> &mut Writer {
        self.usize(values.len());
        for &v in values {
            self.usize(v);
        }
        self
    }

    /// Appends a list of floats, after its length.
    pub(crate) fn floats(&mut self, values: &[f64]) -> &mut Writer {
        self.usize(values.len());
        for &v in values {
            self.f64(v);
        }
        self
    }

    /// Appends the bytes of `other`.
    pub(crate) fn append(&mut self, other: &Writer) -> &mut Writer {
        self.0.extend_from_slice(&other.0);
        self
    }

    /// The bytes written.
    #[cfg(test)]
    pub(crate) fn into_bytes(self) -> Vec<u8> {
        self.0
    }

    /// Sends the message as one frame: its length, then its bytes.
    pub(crate) fn send(&self, to: &mut impl Write) -> std::io::Result<()> {
        to.write_all(&(self.0.len() as u64).to_ne_bytes())?;
        to.write_all(&self.0)?;
        to.flush()
    }
}

/// Reads one frame; `None` when the stream ends before a frame starts.
pub(crate) fn receive(from: &mut impl Read) -> std::io::Result<Option<Vec<u8>>> {
    let mut length = [0u8; 8];
    match from.read_exact(&mut length) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let length = usize::try_from(u64::from_ne_bytes(length))
        .map_err(|_| malformed("a frame longer than memory"))?;
    let mut frame = Vec::new();
    frame
        .try_reserve_exact(length)
        .map_err(|_| malformed("a frame longer than memory"))?;
    frame.resize(length, 0);
    from.read_exact(&mut frame)?;
    Ok(Some(frame))
}

/// The error of a message that does not decode.
pub(crate) fn malformed(what: &str) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        format!("malformed message: {what}"),
    )
}

/// A message being read, borrowed or owned.
pub(crate) struct Reader<'a> {
    message: std::borrow::Cow<'a, [u8]>,
    at: usize,
}

impl<'a> Reader<'a> {
    /// A reader of `message` from its start.
    pub(crate) fn new(message: &'a [u8]) -> Reader<'a> {
        Reader {
            message: std::borrow::Cow::Borrowed(message),
            at: 0,
        }
    }

    /// A reader that owns `message`.
    pub(crate) fn owned(message: Vec<u8>) -> Reader<'static> {
        Reader {
            message: std::borrow::Cow::Owned(message),
            at: 0,
        }
    }

    fn left(&self) -> usize {
        self.message.len() - self.at
    }

    fn take(&mut self, n: usize) -> std::io::Result<&[u8]> {
        if self.left() < n {
            return Err(malformed("it ends early"));
        }
        self.at += n;
        Ok(&self.message[self.at - n..self.at])
    }

    /// Reads a 64-bit word.
    pub(crate) fn u64(&mut self) -> std::io::Result<u64> {
        let bytes = self.take(8)?;
        Ok(u64::from_ne_bytes(bytes.try_into().expect("8 bytes")))
    }

    /// Reads a size or an index.
    pub(crate) fn usize(&mut self) -> std::io::Result<usize> {
        usize::try_from(self.u64()?).map_err(|_| malformed("a size past usize"))
    }

    /// Reads a signed 64-bit integer.
    pub(crate) fn i64(&mut self) -> std::io::Result<i64> {
        Ok(self.u64()? as i64)
    }

    /// Reads a 64-bit float.
    pub(crate) fn f64(&mut self) -> std::io::Result<f64> {
        Ok(f64::from_bits(self.u64()?))
    }

    /// Reads bytes written with [`Writer::bytes`].
    pub(crate) fn bytes(&mut self) -> std::io::Result<&[u8]> {
        let n = self.usize()?;
        self.take(n)
    }

    /// Reads a string written with [`Writer::str`].
    pub(crate) fn string(&mut self) -> std::io::Result<String> {
        let bytes = self.bytes()?;
        String::from_utf8(bytes.to_vec()).map_err(|_| malformed("a string that is not UTF-8"))
    }

    /// Reads a list written with [`Writer::sizes`].
    pub(crate) fn sizes(&mut self) -> std::io::Result<Vec<usize>> {
        let n = self.count(8)?;
        (0..n).map(|_| self.usize()).collect()
    }

    /// Reads a list written with [`Writer::floats`].
    pub(crate) fn floats(&mut self) -> std::io::Result<Vec<f64>> {
        let n = self.count(8)?;
        (0..n).map(|_| self.f64()).collect()
    }

    /// Reads the length of a list of items of at least `item_bytes` bytes each, checked
    /// against what is left (so that a bad length allocates nothing).
    pub(crate) fn count(&mut self, item_bytes: usize) -> std::io::Result<usize> {
        let n = self.usize()?;
        if n.saturating_mul(item_bytes.max(1)) > self.left() {
            return Err(malformed("a list longer than the message"));
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let mut w = Writer::new();
        w.u64(7)
            .i64(-3)
            .f64(1.5)
            .str("kernel")
            .bytes(&[1, 2, 3])
            .sizes(&[4, 5])
            .floats(&[0.25]);
        let mut stream = Vec::new();
        w.send(&mut stream).unwrap();
        let mut input = stream.as_slice();
        let frame = receive(&mut input).unwrap().unwrap();
        assert!(receive(&mut input).unwrap().is_none());
        let mut r = Reader::new(&frame);
        assert_eq!(r.u64().unwrap(), 7);
        assert_eq!(r.i64().unwrap(), -3);
        assert_eq!(r.f64().unwrap(), 1.5);
        assert_eq!(r.string().unwrap(), "kernel");
        assert_eq!(r.bytes().unwrap(), &[1, 2, 3]);
        assert_eq!(r.sizes().unwrap(), vec![4, 5]);
        assert_eq!(r.floats().unwrap(), vec![0.25]);
        assert!(r.u64().is_err());
    }

    #[test]
    fn bad_lengths_are_errors() {
        let mut w = Writer::new();
        w.usize(1 << 40);
        let frame = w.0.clone();
        assert!(Reader::new(&frame).bytes().is_err());
        assert!(Reader::new(&frame).sizes().is_err());
        let stream = (u64::MAX).to_ne_bytes();
        assert!(receive(&mut stream.as_slice()).is_err());
    }
}
