//! SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators",
//! OOPSLA 2014; Vigna's `splitmix64.c`): a 64-bit state advanced by a fixed odd increment and
//! scrambled on output. Small, fast, and with no dependency: the one generator of shine's
//! random programs, inputs and searches, where a seed must replay a case exactly.
//!
//! [`SplitMix64::from_state`] takes the state as it is. Each user derives the state from its
//! seed in its own way and keeps that derivation, so that the seeds it has recorded (in bug
//! reports, READMEs, regression tests) go on naming the same cases.
//!
//! ```
//! use splitmix::SplitMix64;
//! let mut rng = SplitMix64::from_state(1234567);
//! assert_eq!(rng.next_u64(), 6457827717110365317);
//! let die = rng.range(1, 6);
//! assert!((1..=6).contains(&die));
//! ```
#![deny(unsafe_code)]
#![warn(missing_docs)]

/// The increment of the state: the golden ratio times 2^64, rounded to an odd number.
const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// The SplitMix64 generator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// The generator whose state is `state` (no mixing: the caller derives it from its seed).
    pub const fn from_state(state: u64) -> SplitMix64 {
        SplitMix64 { state }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN_GAMMA);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n`; `0` when `n` is `0` (a number is drawn all the same).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// A number in `lo..=hi` (`lo <= hi`).
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next_u64() % ((hi - lo + 1) as u64)) as i64
    }

    /// A float in `[lo, hi)`, from the top 53 bits of a draw.
    pub fn float(&mut self, lo: f64, hi: f64) -> f64 {
        let unit = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        lo + (hi - lo) * unit
    }

    /// True with probability `percent` percent.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }

    /// An element of a non-empty slice.
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }

    /// The value of an element of a non-empty slice of `(value, weight)` pairs, drawn by
    /// weight; a value of weight 0 is never drawn unless every weight is 0 (then the first).
    pub fn weighted<T: Clone>(&mut self, xs: &[(T, u32)]) -> T {
        let total: u64 = xs.iter().map(|(_, w)| u64::from(*w)).sum();
        let mut r = self.next_u64() % total.max(1);
        for (x, w) in xs {
            if r < u64::from(*w) {
                return x.clone();
            }
            r -= u64::from(*w);
        }
        xs[0].0.clone()
    }

    /// Shuffles `xs` in place (Fisher–Yates).
    pub fn shuffle<T>(&mut self, xs: &mut [T]) {
        for i in (1..xs.len()).rev() {
            let j = self.below(i + 1);
            xs.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The published reference outputs of `splitmix64.c` for the state 1234567 (Rosetta
    /// Code, "Pseudo-random numbers/Splitmix64").
    #[test]
    fn matches_the_reference_implementation() {
        let mut rng = SplitMix64::from_state(1234567);
        let drawn: Vec<u64> = (0..5).map(|_| rng.next_u64()).collect();
        assert_eq!(
            drawn,
            [
                6457827717110365317,
                3203168211198807973,
                9817491932198370423,
                4593380528125082431,
                16408922859458223821
            ]
        );
    }

    #[test]
    fn draws_stay_in_their_ranges() {
        let mut rng = SplitMix64::from_state(9);
        for _ in 0..1000 {
            assert!((-3..=3).contains(&rng.range(-3, 3)));
            assert!(rng.below(7) < 7);
            let x = rng.float(-1.0, 1.0);
            assert!((-1.0..1.0).contains(&x), "{x}");
        }
        assert_eq!(rng.below(0), 0);
        assert!(!rng.chance(0));
        assert!(rng.chance(100));
    }

    #[test]
    fn every_value_of_a_range_comes_up() {
        let mut rng = SplitMix64::from_state(3);
        let mut seen = [false; 5];
        for _ in 0..200 {
            seen[rng.range(10, 14) as usize - 10] = true;
        }
        assert!(seen.iter().all(|s| *s), "{seen:?}");
    }

    #[test]
    fn weights_of_zero_are_never_drawn() {
        let mut rng = SplitMix64::from_state(1);
        for _ in 0..1000 {
            assert_eq!(rng.weighted(&[('a', 0), ('b', 5), ('c', 0)]), 'b');
        }
        assert_eq!(rng.weighted(&[('a', 0), ('b', 0)]), 'a');
    }

    #[test]
    fn a_shuffle_is_a_permutation() {
        let mut rng = SplitMix64::from_state(5);
        let mut xs: Vec<u32> = (0..20).collect();
        rng.shuffle(&mut xs);
        assert_ne!(xs, (0..20).collect::<Vec<_>>());
        xs.sort_unstable();
        assert_eq!(xs, (0..20).collect::<Vec<_>>());
    }
}
