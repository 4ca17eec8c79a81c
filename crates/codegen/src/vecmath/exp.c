/* e^x: n = round(x / ln 2) (by adding and subtracting 1.5 * 2^23), r = x - n ln 2 with ln 2 in
   two parts (Cody-Waite: n * ln2_hi is exact), e^r = 1 + r + r^2 q(r) on |r| <= ln 2 / 2
   (q: a minimax fit of degree 5): shine_vm_exp_reduced gives e^r and n. shine_expf scales by
   2^n as two powers of two so that a subnormal result is rounded once; x is clamped to
   [-104, 89] (0 and infinity beyond); NaN stays NaN. shine_expf_normal, for the kernels that
   call e^x only where it is a normal float (-87 <= x <= 88, no NaN), scales once. */
static inline float shine_vm_exp_reduced(float x, float *n) {
  *n = (x * 1.44269502f + 12582912.0f) - 12582912.0f;
  float r = x - *n * 0.693145752f;
  r = r - *n * 1.42860677e-06f;
  float q = 1.97402260e-04f;
  q = q * r + 1.39350770e-03f;
  q = q * r + 8.33357032e-03f;
  q = q * r + 4.16664630e-02f;
  q = q * r + 1.66666657e-01f;
  q = q * r + 0.5f;
  return 1.0f + (r + r * r * q);
}
static inline float shine_expf_normal(float x) {
  float n;
  float p = shine_vm_exp_reduced(x, &n);
  return p * shine_vm_float((uint32_t)((int32_t)n + 127) << 23);
}
static inline float shine_expf(float x) {
  float xc = shine_vm_select(x > -104.0f, x, -104.0f);
  xc = shine_vm_select(xc < 89.0f, xc, 89.0f);
  float n;
  float p = shine_vm_exp_reduced(xc, &n);
  int32_t ni = (int32_t)n;
  int32_t k = ni >> 1;
  float s1 = shine_vm_float((uint32_t)(k + 127) << 23);
  float s2 = shine_vm_float((uint32_t)(ni - k + 127) << 23);
  float y = p * s1 * s2;
  return shine_vm_select(x != x, x + x, y);
}
