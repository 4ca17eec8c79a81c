static inline float shine_vm_float(uint32_t u) { union { uint32_t u; float f; } v; v.u = u; return v.f; }
static inline uint32_t shine_vm_bits(float f) { union { uint32_t u; float f; } v; v.f = f; return v.u; }
