/* tanh x: x + x^3 p(x^2) for |x| < 0.625 (p: a minimax fit of degree 5), else
   1 - 2 / (e^{2|x|} + 1) with |x| clamped to 10 (tanh rounds to 1 from 9.01 on), with the
   sign of x; NaN stays NaN (through the small branch, which a NaN selects). */
static inline float shine_tanhf(float x) {
  float a = __builtin_fabsf(x);
  float a2 = a * a;
  float p = 2.15311395e-03f;
  p = p * a2 - 8.19036458e-03f;
  p = p * a2 + 2.17069853e-02f;
  p = p * a2 - 5.39481863e-02f;
  p = p * a2 + 1.33332208e-01f;
  p = p * a2 - 3.33333313e-01f;
  float small = a + a * a2 * p;
  float ac = shine_vm_select(a < 10.0f, a, 10.0f);
  float big = 1.0f - 2.0f / (shine_expf_normal(ac + ac) + 1.0f);
  return __builtin_copysignf(shine_vm_select(a >= 0.625f, big, small), x);
}
