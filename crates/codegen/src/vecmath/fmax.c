/* fmax x y as C's: the larger operand, the other one where one is NaN (NaN where both are).
   x > y ? x : y is one maxss; the NaN test of y is off the chain of a running maximum x. */
static inline float shine_fmaxf(float x, float y) { return y != y ? x : (x > y ? x : y); }
