//! The language generated code is written in: one enum for the whole compiler.

use std::fmt;
use std::str::FromStr;

/// The code a program is compiled to. C and OpenMP are lowered alike (only the
/// printer tells them apart: OpenMP pragmas on parallel loops); OpenCL and CUDA
/// are GPU kernels with a host plan ([`crate::generate_gpu`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Target {
    /// Sequential C11 (`mapPar` loops run sequentially).
    #[default]
    C,
    /// C11 with OpenMP: the outermost parallel loop of each nest is
    /// `#pragma omp parallel for` (compile with `-fopenmp`).
    OpenMp,
    /// OpenCL C 1.2 kernels.
    OpenCl,
    /// CUDA C++ kernels for NVRTC (`extern "C" __global__`).
    Cuda,
}

impl Target {
    /// Every target, in command-line order.
    pub const ALL: [Target; 4] = [Target::C, Target::OpenMp, Target::OpenCl, Target::Cuda];

    /// The target's name on the command line: `c`, `openmp`, `opencl`, `cuda`.
    pub fn name(self) -> &'static str {
        match self {
            Target::C => "c",
            Target::OpenMp => "openmp",
            Target::OpenCl => "opencl",
            Target::Cuda => "cuda",
        }
    }

    /// The target's name in prose: `C`, `OpenMP`, `OpenCL`, `CUDA`.
    pub fn title(self) -> &'static str {
        match self {
            Target::C => "C",
            Target::OpenMp => "OpenMP",
            Target::OpenCl => "OpenCL",
            Target::Cuda => "CUDA",
        }
    }

    /// The language's name, for headers of generated files.
    pub fn language(self) -> &'static str {
        match self {
            Target::C => "C11",
            Target::OpenMp => "C11 with OpenMP",
            Target::OpenCl => "OpenCL C",
            Target::Cuda => "CUDA C++ for NVRTC",
        }
    }

    /// Whether the code runs as GPU kernels (OpenCL or CUDA).
    pub fn is_gpu(self) -> bool {
        matches!(self, Target::OpenCl | Target::Cuda)
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Target {
    type Err = String;

    fn from_str(s: &str) -> Result<Target, String> {
        Target::ALL
            .into_iter()
            .find(|t| t.name() == s)
            .ok_or_else(|| format!("unknown target `{s}` (expected c, openmp, opencl or cuda)"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for t in Target::ALL {
            assert_eq!(t.name().parse::<Target>(), Ok(t));
        }
        assert!("gpu".parse::<Target>().is_err());
    }
}
