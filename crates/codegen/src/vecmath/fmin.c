/* fmin x y as C's: the smaller operand, the other one where one is NaN (NaN where both are). */
static inline float shine_fminf(float x, float y) { return y != y ? x : (x < y ? x : y); }
