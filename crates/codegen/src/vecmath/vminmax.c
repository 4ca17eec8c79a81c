/* fmax and fmin of two vectors of one GCC vector type (float or double lanes), lane by lane as
   C's fmax and fmin: a comparison mask (lanes -1 or 0, `__typeof__` of a comparison) selects
   the bits of x where it is set, of y elsewhere; no call per lane, IEEE without -ffast-math. */
#define shine_vselect(m, x, y) \
  ((__typeof__(x))(((m) & (__typeof__(m))(x)) | (~(m) & (__typeof__(m))(y))))
#define shine_vfmax(x, y) __extension__ ({ __typeof__(x) shine_vx = (x), shine_vy = (y); \
  shine_vselect((shine_vx > shine_vy) | (shine_vy != shine_vy), shine_vx, shine_vy); })
#define shine_vfmin(x, y) __extension__ ({ __typeof__(x) shine_vx = (x), shine_vy = (y); \
  shine_vselect((shine_vx < shine_vy) | (shine_vy != shine_vy), shine_vx, shine_vy); })
