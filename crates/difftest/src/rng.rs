//! The seeds of difftest: a case is reproducible from the run's seed and its index, and its
//! inputs from the case's input seed. The generator is the shared [`SplitMix64`]; how a seed
//! becomes its state is difftest's own and must stay as it is, so that recorded seeds go on
//! naming the same cases.

use splitmix::SplitMix64;

/// Mixed into every seed.
const SALT: u64 = 0x5DEE_CE66_D1CE_4E5B;

/// The generator for `seed` (the input seed of a case).
pub fn seeded(seed: u64) -> SplitMix64 {
    SplitMix64::from_state(seed ^ SALT)
}

/// The generator of case `index` of a run with `seed`.
pub fn for_case(seed: u64, index: u64) -> SplitMix64 {
    let mut r = seeded(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ index);
    r.next_u64();
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Recorded seeds replay: these outputs were computed with difftest's own copy of the
    /// generator, before it moved to the shared `splitmix` crate.
    #[test]
    fn recorded_seeds_replay() {
        let mut r = for_case(42, 7);
        let drawn = [
            r.next_u64(),
            r.next_u64(),
            r.range(-5, 5) as u64,
            u64::from(r.chance(30)),
            *r.pick(&[10, 20, 30]),
            r.weighted(&[(1, 1), (2, 3), (3, 0)]),
        ];
        let mut r = seeded(3);
        let units = [r.float(-1.0, 1.0).to_bits(), r.float(-1.0, 1.0).to_bits()];
        assert_eq!(
            drawn,
            [9382624333137987691, 17593992302577291324, 5, 1, 20, 2]
        );
        assert_eq!(units, [13825529097477539056, 4599003361546637796]);
    }
}
