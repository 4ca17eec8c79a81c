/* erf x: x + x p(x^2) for |x| < 0.921875 (p: a minimax fit of degree 6), else
   1 - e^{-x^2} R(1/|x|) with |x| clamped to [0.921875, 4] (R: a minimax fit of degree 9 of
   erfc(x) e^{x^2}; erf rounds to 1 from 3.92 on), with the sign of x; NaN stays NaN (through
   the small branch, which a NaN selects). */
static inline float shine_erff(float x) {
  float a = __builtin_fabsf(x);
  float x2 = x * x;
  float p = 7.99127229e-05f;
  p = p * x2 - 8.04888317e-04f;
  p = p * x2 + 5.19235898e-03f;
  p = p * x2 - 2.68557239e-02f;
  p = p * x2 + 1.12836257e-01f;
  p = p * x2 - 3.76126289e-01f;
  p = p * x2 + 1.28379166e-01f;
  float small = x + x * p;
  float ac = shine_vm_select(a > 0.921875f, a, 0.921875f);
  ac = shine_vm_select(ac < 4.0f, ac, 4.0f);
  float t = 1.0f / ac;
  float r = 2.01898366e-02f;
  r = r * t - 1.22223154e-01f;
  r = r * t + 3.02096158e-01f;
  r = r * t - 3.53776038e-01f;
  r = r * t + 8.42508897e-02f;
  r = r * t + 3.14326584e-01f;
  r = r * t - 4.05438036e-01f;
  r = r * t + 2.70319618e-02f;
  r = r * t + 5.60961127e-01f;
  r = r * t + 1.64257610e-04f;
  float big = __builtin_copysignf(1.0f - shine_expf_normal(-ac * ac) * r, x);
  return shine_vm_select(a >= 0.921875f, big, small);
}
