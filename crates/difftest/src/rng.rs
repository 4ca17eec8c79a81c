//! A small seeded generator (SplitMix64): every case is reproducible from its seed.

/// SplitMix64.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// The generator for `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x5DEE_CE66_D1CE_4E5B)
    }

    /// The generator of case `index` of a run with `seed`.
    pub fn for_case(seed: u64, index: u64) -> Rng {
        let mut r = Rng::new(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ index);
        r.bits();
        r
    }

    /// The next 64 random bits.
    pub fn bits(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.bits() % ((hi - lo + 1) as u64)) as i64
    }

    /// True with probability `p` percent.
    pub fn chance(&mut self, p: u64) -> bool {
        self.bits() % 100 < p
    }

    /// An element of a non-empty slice.
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[(self.bits() % xs.len() as u64) as usize]
    }

    /// An element of a non-empty slice of `(value, weight)` pairs, by weight.
    pub fn weighted<T: Clone>(&mut self, xs: &[(T, u32)]) -> T {
        let total: u64 = xs.iter().map(|(_, w)| *w as u64).sum();
        let mut r = self.bits() % total.max(1);
        for (x, w) in xs {
            if r < *w as u64 {
                return x.clone();
            }
            r -= *w as u64;
        }
        xs[0].0.clone()
    }

    /// A float in `[-1, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.bits() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Recorded seeds replay: these outputs were computed with difftest's own copy of the
    /// generator, before it moved to the shared `splitmix` crate.
    #[test]
    fn recorded_seeds_replay() {
        let mut r = Rng::for_case(42, 7);
        let drawn = [
            r.bits(),
            r.bits(),
            r.range(-5, 5) as u64,
            u64::from(r.chance(30)),
            *r.pick(&[10, 20, 30]),
            r.weighted(&[(1, 1), (2, 3), (3, 0)]),
        ];
        let mut r = Rng::new(3);
        let units = [r.unit().to_bits(), r.unit().to_bits()];
        assert_eq!(
            drawn,
            [9382624333137987691, 17593992302577291324, 5, 1, 20, 2]
        );
        assert_eq!(units, [13825529097477539056, 4599003361546637796]);
    }
}
