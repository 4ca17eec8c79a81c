//! The messages between this process and an OpenCL child process (`opencl_child`), in the
//! `wire` encoding: devices, launch sequences, the times and outputs of a run, and errors.

use crate::opencl::{Candidate, Sequence, Times};
use crate::wire::{self, Reader, Writer};
use crate::{Buffer, DeviceKind, KernelArg, OpenClLaunch, RuntimeError};

/// A device: its names, kind and where it is listed.
pub(crate) fn put_candidate(w: &mut Writer, c: &Candidate) {
    let kind = match c.kind {
        DeviceKind::Cpu => 0,
        DeviceKind::Gpu => 1,
        DeviceKind::Accelerator => 2,
        DeviceKind::Other => 3,
    };
    w.str(&c.name)
        .str(&c.platform)
        .str(&c.vendor)
        .u64(kind)
        .usize(c.platform_index)
        .usize(c.device_index);
}

/// A device written by [`put_candidate`].
pub(crate) fn get_candidate(r: &mut Reader) -> std::io::Result<Candidate> {
    Ok(Candidate {
        name: r.string()?,
        platform: r.string()?,
        vendor: r.string()?,
        kind: match r.u64()? {
            0 => DeviceKind::Cpu,
            1 => DeviceKind::Gpu,
            2 => DeviceKind::Accelerator,
            _ => DeviceKind::Other,
        },
        platform_index: r.usize()?,
        device_index: r.usize()?,
    })
}

/// The launches, temporaries, status flag and run counts of a sequence.
pub(crate) fn put_sequence(w: &mut Writer, s: &Sequence) {
    w.usize(s.launches.len());
    for launch in s.launches {
        w.str(&launch.kernel).sizes(&launch.global);
        match &launch.local {
            Some(local) => w.u64(1).sizes(local),
            None => w.u64(0),
        };
        w.usize(launch.args.len());
        for &arg in &launch.args {
            let (tag, value) = match arg {
                KernelArg::Buffer(i) => (0, i as u64),
                KernelArg::I32(v) => (1, v as i64 as u64),
                KernelArg::I64(v) => (2, v as u64),
                KernelArg::F32(v) => (3, u64::from(v.to_bits())),
                KernelArg::F64(v) => (4, v.to_bits()),
                KernelArg::LocalBytes(n) => (5, n as u64),
            };
            w.u64(tag).u64(value);
        }
    }
    w.sizes(s.temporaries)
        .u64(s.status.map_or(0, |i| i as u64 + 1))
        .usize(s.warmup)
        .usize(s.runs);
}

/// A decoded sequence: launches, temporaries, status flag, warm-up and timed runs.
pub(crate) type SequenceParts = (Vec<OpenClLaunch>, Vec<usize>, Option<usize>, usize, usize);

/// A sequence written by [`put_sequence`].
pub(crate) fn get_sequence(r: &mut Reader) -> std::io::Result<SequenceParts> {
    let count = r.count(8)?;
    let mut launches = Vec::with_capacity(count);
    for _ in 0..count {
        let mut launch = OpenClLaunch::new(r.string()?, &r.sizes()?);
        if r.u64()? != 0 {
            launch.local = Some(r.sizes()?);
        }
        let args = r.count(16)?;
        for _ in 0..args {
            let (tag, value) = (r.u64()?, r.u64()?);
            launch.args.push(match tag {
                0 => KernelArg::Buffer(usize::try_from(value).unwrap_or(usize::MAX)),
                1 => KernelArg::I32(value as i64 as i32),
                2 => KernelArg::I64(value as i64),
                3 => KernelArg::F32(f32::from_bits(value as u32)),
                4 => KernelArg::F64(f64::from_bits(value)),
                5 => KernelArg::LocalBytes(usize::try_from(value).unwrap_or(usize::MAX)),
                _ => return Err(wire::malformed("an unknown kernel argument")),
            });
        }
        launches.push(launch);
    }
    let temporaries = r.sizes()?;
    let status = r.usize()?.checked_sub(1);
    Ok((launches, temporaries, status, r.usize()?, r.usize()?))
}

/// Errors as a child answers them: those its OpenCL calls return (any other is sent as its
/// text).
pub(crate) fn put_error(w: &mut Writer, error: &RuntimeError) {
    match error {
        RuntimeError::Gpu {
            operation, message, ..
        } => w.u64(0).str(operation).str(message),
        RuntimeError::InvalidArgument(message) => w.u64(1).str(message),
        RuntimeError::KernelBuildFailed { options, log, .. } => w.u64(2).str(options).str(log),
        RuntimeError::Unavailable(message) => w.u64(3).str(message),
        other => w.u64(0).str("running OpenCL").str(&other.to_string()),
    };
}

/// An error written by [`put_error`].
pub(crate) fn get_error(r: &mut Reader) -> std::io::Result<RuntimeError> {
    Ok(match r.u64()? {
        0 => RuntimeError::Gpu {
            api: "OpenCL",
            operation: r.string()?,
            message: r.string()?,
        },
        1 => RuntimeError::InvalidArgument(r.string()?),
        2 => RuntimeError::KernelBuildFailed {
            compiler: "OpenCL",
            options: r.string()?,
            log: r.string()?,
        },
        3 => RuntimeError::Unavailable(r.string()?),
        _ => return Err(wire::malformed("an unknown error")),
    })
}

/// Reads the answer of an execution: the outputs (into `outputs`) and the times.
pub(crate) fn get_times(reader: &mut Reader, outputs: &mut [Buffer]) -> std::io::Result<Times> {
    if reader.usize()? != outputs.len() {
        return Err(wire::malformed("another number of outputs"));
    }
    for output in outputs.iter_mut() {
        let bytes = reader.bytes()?;
        if bytes.len() != output.len() {
            return Err(wire::malformed("an output of another size"));
        }
        output.as_bytes_mut().copy_from_slice(bytes);
    }
    let kernel_ms = reader.floats()?;
    let wall_ms = reader.floats()?;
    let flag = reader.i64()? as i32;
    Ok((kernel_ms, wall_ms, flag))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequences_and_errors_round_trip() {
        let launches = [
            OpenClLaunch::new("k", &[64, 2]).local(&[8, 1]).args([
                KernelArg::Buffer(3),
                KernelArg::I32(-7),
                KernelArg::I64(1 << 40),
                KernelArg::F32(0.5),
                KernelArg::F64(-2.25),
                KernelArg::LocalBytes(256),
            ]),
            OpenClLaunch::new("m", &[5]),
        ];
        let sequence = Sequence {
            launches: &launches,
            temporaries: &[16, 4],
            status: Some(5),
            warmup: 2,
            runs: 3,
        };
        let mut w = Writer::new();
        put_sequence(&mut w, &sequence);
        let bytes = w.into_bytes();
        let (got, temporaries, status, warmup, runs) =
            get_sequence(&mut Reader::new(&bytes)).unwrap();
        assert_eq!(got, launches);
        assert_eq!(
            (temporaries, status, warmup, runs),
            (vec![16, 4], Some(5), 2, 3)
        );
        let error = RuntimeError::KernelBuildFailed {
            compiler: "OpenCL",
            options: "-x".into(),
            log: "error: no".into(),
        };
        let mut w = Writer::new();
        put_error(&mut w, &error);
        let bytes = w.into_bytes();
        let back = get_error(&mut Reader::new(&bytes)).unwrap();
        assert_eq!(back.to_string(), error.to_string());
    }
}
