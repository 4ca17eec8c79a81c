//! A small seeded generator (SplitMix64): every case is reproducible from the run's seed
//! and its index.

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
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.bits() % (hi - lo + 1)
    }

    /// An index below `n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.bits() % n as u64) as usize
    }

    /// True with probability `p` percent.
    pub fn chance(&mut self, p: u64) -> bool {
        self.bits() % 100 < p
    }

    /// An element of a non-empty slice.
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }

    /// An element of a non-empty slice of `(value, weight)` pairs, by weight.
    pub fn weighted<T: Copy>(&mut self, xs: &[(T, u32)]) -> T {
        let total: u64 = xs.iter().map(|(_, w)| u64::from(*w)).sum();
        let mut r = self.bits() % total.max(1);
        for (x, w) in xs {
            if r < u64::from(*w) {
                return *x;
            }
            r -= u64::from(*w);
        }
        xs[0].0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_case_generator_depends_on_seed_and_index_only() {
        let a: Vec<u64> = (0..4).map(|_| Rng::for_case(7, 3).bits()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        assert_ne!(Rng::for_case(7, 3).bits(), Rng::for_case(7, 4).bits());
        assert_ne!(Rng::for_case(7, 3).bits(), Rng::for_case(8, 3).bits());
    }

    #[test]
    fn weights_of_zero_are_never_picked() {
        let mut r = Rng::new(1);
        for _ in 0..1000 {
            assert_eq!(r.weighted(&[('a', 0), ('b', 5), ('c', 0)]), 'b');
        }
    }
}
