/* log x = e ln 2 + log(1 + f) where x = 2^e (1 + f), 1 + f in [sqrt(1/2), sqrt 2) (f exact),
   log(1 + f) = f - f^2/2 + f^3 p(f) (p: a minimax fit of degree 7), ln 2 in two parts.
   A subnormal x is its bits times 2^-149. Zero, infinity, NaN and negative x are
   classified on the bits and blended in with a mask: no branch, no comparison that traps,
   so gcc keeps the loop branch-free and vectorizes it. */
static inline float shine_logf(float x) {
  uint32_t ux = shine_vm_bits(x);
  uint32_t sub = 0u - (uint32_t)(ux < 0x00800000u);
  uint32_t ub = (shine_vm_bits((float)(int32_t)ux) & sub) | (ux & ~sub);
  uint32_t u = ub - 0x3f3504f3u;
  int32_t e = ((int32_t)u >> 23) - (int32_t)(sub & 149u);
  float f = shine_vm_float((u & 0x7fffffu) + 0x3f3504f3u) - 1.0f;
  float p = -7.63690025e-02f;
  p = p * f + 1.27624676e-01f;
  p = p * f - 1.31595537e-01f;
  p = p * f + 1.42015412e-01f;
  p = p * f - 1.66234106e-01f;
  p = p * f + 2.00012431e-01f;
  p = p * f - 2.50008196e-01f;
  p = p * f + 3.33333313e-01f;
  float ef = (float)e;
  float lo = ef * 1.42860677e-06f + (f * f * f * p - 0.5f * f * f);
  uint32_t y = shine_vm_bits(ef * 0.693145752f + (f + lo));
  uint32_t special = (ux << 1) == 0u ? 0xff800000u
                     : ux == 0x7f800000u ? ux
                     : (ux & 0x7fffffffu) > 0x7f800000u ? ux | 0x00400000u : 0x7fc00000u;
  uint32_t m = 0u - (uint32_t)(ux - 1u >= 0x7f7fffffu);
  return shine_vm_float((special & m) | (y & ~m));
}
