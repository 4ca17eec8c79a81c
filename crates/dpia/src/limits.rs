//! The limits on how much code a program may expand into, in one place.
//!
//! Unrolling copies a loop body once per iteration and `iterate` copies its step
//! once per iteration, so a small program can ask for more code than memory holds
//! (`reduceSeqUnroll` over `1000000000.f32`). Each expansion is checked against
//! these limits *before* it is made: the iteration count as soon as it is a
//! constant (in the DPIA translation, and again in code generation after sizes are
//! substituted), the code an unrolled loop would generate from its first iteration,
//! and the size of the whole generated C program. Crossing one is an error naming
//! the primitive and saying what to write instead.
//!
//! The limit on the size of a definition once the definitions it uses are inlined
//! (`rise::infer::MAX_INLINED_NODES`) sits with the inliner, which runs first.

/// The most iterations one unrolled loop (`mapSeqUnroll`, `reduceSeqUnroll`) may have.
pub const MAX_UNROLLED_ITERATIONS: i64 = 4096;

/// The most elements the window of `slideSeq` may hold; the loops that copy an element
/// into the window are unrolled where they have at most this many iterations too.
pub const MAX_SLIDE_WINDOW: i64 = 64;

/// The most iterations `iterate k f` may expand into (its `k`) when its step
/// changes the size (a tree reduction halves it).
pub const MAX_ITERATE_STEPS: i64 = 64;

/// The most iterations `iterate k f` whose step keeps the size is expanded into;
/// a larger `k` (any constant) is a run-time loop over two buffers.
pub const MAX_EXPANDED_SAME_SIZE_STEPS: i64 = 8;

/// The most nodes (statements and expressions) of the C syntax tree the code
/// generator builds for one program, unrolled loops included.
pub const MAX_GENERATED_NODES: usize = 250_000;

/// What to do instead of unrolling a loop of `count` iterations over the
/// limit: the sentence that ends the errors of both the translation and the code
/// generator.
pub fn unroll_advice(count: i64) -> String {
    format!(
        "{count} iterations are more than the {MAX_UNROLLED_ITERATIONS} a loop may be unrolled \
         into; use the non-unrolled primitive (mapSeq, reduceSeq), or split the array first \
         (`split` by at most {MAX_UNROLLED_ITERATIONS}) and unroll only the inner loop"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_advice_names_the_count_the_limit_and_the_alternatives() {
        let advice = unroll_advice(1_000_000_000);
        assert!(advice.contains("1000000000 iterations"), "{advice}");
        assert!(advice.contains("4096"), "{advice}");
        assert!(
            advice.contains("reduceSeq") && advice.contains("split"),
            "{advice}"
        );
    }
}
