static inline float shine_vm_float(uint32_t u) { union { uint32_t u; float f; } v; v.u = u; return v.f; }
static inline uint32_t shine_vm_bits(float f) { union { uint32_t u; float f; } v; v.f = f; return v.u; }
/* c ? a : b on the bits, both computed: no branch for gcc to sink a computation into (and then
   mask, as floating-point operations may trap), one blend when vectorized */
static inline float shine_vm_select(int c, float a, float b) {
  uint32_t m = 0u - (uint32_t)c;
  return shine_vm_float((shine_vm_bits(a) & m) | (shine_vm_bits(b) & ~m));
}
