"""NumPy references for the ported applications: examples/nbody.rise, md.rise, kmeans.rise,
nn.rise, mriq.rise, harris.rise, unsharp.rise and scan.rise's scans.

Each reference is written from the application's mathematics in float64 (explicit loops or
numpy operations), not from the RISE program; numpy_check.py compares the f32 results with
its RTOL/ATOL. Inputs are chosen so that f32 rounding stays within them:
- nbody: softening espSqr in [0.5, 1], so that no distance is near 0;
- md: the neighbour lists are the m nearest other particles of positions spread over a box
  (as the original's buildNeighbourList makes them), cutsq chosen so that some neighbours
  are inside the cutoff and some outside, and none within 1e-3 of it (the decision is the
  same in f32 and f64); one case lists the particle itself, which adds nothing;
- kmeans: the index of the first nearest centroid (np.argmin), exact (int32);
- mriq: the trigonometric sums accumulate f32 error in the angle 2π(kx·x + ky·y + kz·z)
  (its f32 rounding times |φ|², summed over k): coordinates and k-space samples are kept
  in [-0.5, 0.5) and k at most 16, so that the error stays below RTOL·|Q| + ATOL;
- unsharp: colour channels in [0.2, 1] (an image), so that the ratio sharpened / gray
  divides by no value near 0, and sigma in [1, 2].
"""

import numpy as np

from numpy_check import F32, f64, rand


def _uniform(rng, lo, hi, *shape):
    return rng.uniform(lo, hi, size=shape).astype(F32)


# --- nbody ---------------------------------------------------------------------


def cases_nbody(rng):
    for n in (1, 2, 7, 16):
        pos = rand(rng, n, 4)
        pos[:, 3] = _uniform(rng, 0.5, 2.0, n)  # masses
        yield f"n={n}", [pos, rand(rng, n, 4), _uniform(rng, 0.5, 1.0), _uniform(rng, 0.001, 0.1)], {}


def cases_nbody_acc(rng):
    for label, (pos, _vel, eps, _dt), nats in cases_nbody(rng):
        yield label, [pos, eps], nats


def ref_nbody_acc(pos, eps):
    """a_i = Σ_j m_j (p_j - p_i) / (|p_j - p_i|² + ε)^(3/2), as (ax, ay, az) rows."""
    p = f64(pos)
    r = p[None, :, :3] - p[:, None, :3]  # r[i, j] = p_j - p_i
    d2 = (r * r).sum(axis=-1) + f64(eps)
    return (r * (p[None, :, 3] / d2**1.5)[:, :, None]).sum(axis=1)


def ref_nbody(pos, vel, eps, dt):
    p, v, dt = f64(pos), f64(vel), f64(dt)
    a = ref_nbody_acc(pos, eps)
    out = np.empty((p.shape[0], 2, 4))
    out[:, 0, :3] = p[:, :3] + v[:, :3] * dt + 0.5 * a * dt * dt
    out[:, 0, 3] = p[:, 3]
    out[:, 1, :3] = v[:, :3] + a * dt
    out[:, 1, 3] = v[:, 3]
    return out


# --- molecular dynamics ----------------------------------------------------------


def neighbour_lists(pos, m):
    """The m nearest other particles of every particle (m.n: row j = the j-th nearest)."""
    n = pos.shape[0]
    p = f64(pos)[:, :3]
    d2 = ((p[:, None, :] - p[None, :, :]) ** 2).sum(axis=-1)
    np.fill_diagonal(d2, np.inf)
    return np.ascontiguousarray(np.argsort(d2, axis=1, kind="stable")[:, :m].T.astype(np.int32))


def cases_md(rng):
    for n, m, self_listed in ((2, 1, False), (9, 4, False), (16, 6, False), (5, 3, True)):
        pos = _uniform(rng, 0.0, 4.0, n, 4)
        pos[:, 3] = 0.0
        nbrs = neighbour_lists(pos, m)
        if self_listed:
            nbrs[0] = np.arange(n)  # the particle itself: adds nothing
        p = f64(pos)[:, :3]
        d2 = np.array([((p[i] - p[nbrs[:, i]]) ** 2).sum(axis=-1) for i in range(n)]).ravel()
        d2 = np.unique(d2[d2 > 0])
        # the cutoff halfway across the widest gap between two squared distances: some
        # neighbours inside, some outside, none near it
        if len(d2) > 1:
            k = int(np.argmax(np.diff(d2)))
            cutsq = F32((d2[k] + d2[k + 1]) / 2)
        else:
            cutsq = F32(d2[0] * 2)
        yield f"n={n} m={m}" + (" self" if self_listed else ""), [pos, nbrs, cutsq, F32(1.5), F32(2.0)], {}


def ref_md(pos, nbrs, cutsq, lj1, lj2):
    """F_i = Σ_{j in N(i), 0 < r² < cutsq} d · r⁻⁸ (lj1 r⁻⁶ - lj2), d = p_i - p_j."""
    p = f64(pos)[:, :3]
    n = p.shape[0]
    out = np.zeros((n, 4))
    for i in range(n):
        for j in nbrs[:, i]:
            d = p[i] - p[j]
            r2 = d @ d
            if 0 < r2 < float(cutsq):
                inv2 = 1.0 / r2
                inv6 = inv2**3
                out[i, :3] += d * inv2 * inv6 * (float(lj1) * inv6 - float(lj2))
    return out


# --- k-means ----------------------------------------------------------------------


def cases_kmeans(rng):
    for p, c, f in ((1, 1, 1), (7, 3, 2), (13, 5, 4), (20, 4, 34)):
        yield f"p={p} c={c} f={f}", [rand(rng, f, p), rand(rng, c, f)], {}
    # a centroid listed twice, and points at equal distance from two centroids: the
    # first nearest wins, whatever order the reduction combines them in
    clusters = np.array([[1.0, 0.0], [-1.0, 0.0], [1.0, 0.0], [0.0, 2.0]], dtype=F32)
    points = np.array([[0.0, 0.0, 1.0, 2.0, -1.0, 0.5], [0.0, 5.0, 0.0, 1.0, 0.0, 1.0]], dtype=F32)
    yield "ties", [points, clusters], {}


def ref_kmeans(features, clusters):
    x = f64(features).T  # p.f
    d = ((x[:, None, :] - f64(clusters)[None, :, :]) ** 2).sum(axis=-1)
    return np.argmin(d, axis=1).astype(np.int32)




# --- nearest neighbour ------------------------------------------------------------


def cases_nn(rng):
    for n in (1, 7, 13):
        yield f"n={n}", [rand(rng, n, 2), F32(rng.uniform(-2, 2)), F32(rng.uniform(-2, 2))], {}
    structured = np.zeros(5, dtype=[("lat", "<f4"), ("lng", "<f4")])
    structured["lat"], structured["lng"] = rand(rng, 5), rand(rng, 5)
    yield "n=5 structured", [structured, F32(0.5), F32(-0.25)], {}


def ref_nn(locations, lat, lng):
    if locations.dtype.names:
        locations = np.stack([locations[f] for f in locations.dtype.names], axis=-1)
    loc = f64(locations)
    return np.hypot(loc[:, 0] - float(lat), loc[:, 1] - float(lng))


# --- MRI-Q ---------------------------------------------------------------------------


def cases_phimag(rng):
    for k in (1, 7, 13):
        yield f"k={k}", [rand(rng, k), rand(rng, k)], {}


def cases_mriq(rng):
    for k, x in ((1, 1), (5, 7), (16, 13), (3, 20)):
        coords = [_uniform(rng, -0.5, 0.5, x) for _ in range(3)]
        kvalues = _uniform(rng, -0.5, 0.5, k, 4)
        kvalues[:, 3] = _uniform(rng, 0.0, 2.0, k)  # |phi|^2 >= 0
        yield f"k={k} x={x}", coords + [rand(rng, x), rand(rng, x), kvalues], {}


def ref_mriq(x, y, z, qr, qi, kvalues):
    """Q(v) = Q0(v) + Σ_k |φ_k|² exp(i·2π k·v), as (Qr, Qi) rows."""
    v = np.stack([f64(x), f64(y), f64(z)], axis=-1)  # x.3
    kv = f64(kvalues)
    arg = 2.0 * np.pi * (v @ kv[:, :3].T)  # x.k
    return np.stack(
        [f64(qr) + (np.cos(arg) * kv[:, 3]).sum(axis=1), f64(qi) + (np.sin(arg) * kv[:, 3]).sum(axis=1)],
        axis=-1,
    )


# --- Harris corner detection -----------------------------------------------------------


def correlate_valid(img, weights):
    """out[i, j] = Σ img[i:i+k, j:j+k] * weights (no border: the valid region)."""
    k = weights.shape[0]
    h, w = img.shape[0] - k + 1, img.shape[1] - k + 1
    out = np.zeros((h, w))
    for a in range(k):
        for b in range(k):
            out += weights[a, b] * img[a : a + h, b : b + w]
    return out


def gray(rgb):
    c = f64(rgb)
    return 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2]


def cases_harris(rng):
    for h, w in ((1, 1), (3, 5), (7, 4), (13, 13)):
        yield f"h={h} w={w}", [rand(rng, 3, h + 4, w + 4)], {}


SOBEL_X = np.array([[-1.0, 0.0, 1.0], [-2.0, 0.0, 2.0], [-1.0, 0.0, 1.0]]) / 12.0


def ref_harris(img):
    g = gray(img)
    ix, iy = correlate_valid(g, SOBEL_X), correlate_valid(g, SOBEL_X.T)
    box = np.ones((3, 3))
    sxx, sxy, syy = (correlate_valid(a, box) for a in (ix * ix, ix * iy, iy * iy))
    return sxx * syy - sxy * sxy - 0.04 * (sxx + syy) ** 2


def cases_window33(rng):
    for i in range(3):
        yield f"#{i}", [rand(rng, 3, 3)], {}


# --- unsharp mask -----------------------------------------------------------------------


def gauss_weights(sigma):
    x = np.arange(4.0)
    s = float(sigma)
    return np.exp(-x * x / (2 * s * s)) / (np.sqrt(2 * np.pi) * s)


def blur7(img, sigma):
    k = gauss_weights(sigma)
    taps = np.concatenate([k[:0:-1], k])  # distance 3, 2, 1, 0, 1, 2, 3
    return correlate_valid(np.pad(f64(img), 3, mode="edge"), np.outer(taps, taps))


def cases_sigma(rng):
    for s in (1.0, 1.5, 0.7):
        yield f"sigma={s}", [F32(s)], {}


def cases_blurtap(rng):
    for i in range(3):
        yield f"#{i}", [rand(rng, 4), rand(rng, 7)], {}


def ref_blurtap(k, nb):
    k, nb = f64(k), f64(nb)
    return k[0] * nb[3] + sum(k[d] * (nb[3 - d] + nb[3 + d]) for d in (1, 2, 3))


def cases_gray_image(rng):
    for h, w in ((1, 1), (2, 5), (7, 7), (13, 4)):
        yield f"h={h} w={w}", [_uniform(rng, 1.0, 2.0), rand(rng, h, w)], {}


def cases_unsharp_gray(rng):
    for label, (sigma, img), nats in cases_gray_image(rng):
        yield label, [sigma, _uniform(rng, 0.5, 2.0), img], nats


def ref_unsharp_gray(sigma, amount, img):
    x = f64(img)
    return x + float(amount) * (x - blur7(img, sigma))


def cases_unsharp(rng):
    for h, w in ((1, 1), (2, 5), (7, 7), (13, 4)):
        yield f"h={h} w={w}", [_uniform(rng, 1.0, 2.0), _uniform(rng, 0.2, 1.0, 3, h, w)], {}


def ref_unsharp(sigma, img):
    g = gray(img)
    sharpened = 2.0 * g - blur7(g, sigma)
    return f64(img) * (sharpened / g)[None, :, :]


# --- scan ------------------------------------------------------------------------------------


def cases_prefix(rng):
    for n in (1, 7, 13, 100):
        yield f"n={n}", [rand(rng, n)], {}


def cases_prefix_i32(rng):
    for n in (1, 7, 13, 100):
        yield f"n={n}", [rng.integers(-100, 100, size=n).astype(np.int32)], {}


def exclusive_cumsum(x):
    return np.concatenate([[0], np.cumsum(x)[:-1]])


REFERENCES = {
    "nbodyAcc": (cases_nbody_acc, ref_nbody_acc),
    "nbody": (cases_nbody, ref_nbody),
    "md": (cases_md, ref_md),
    "kmeans": (cases_kmeans, ref_kmeans),
    "nnDistance": (cases_nn, ref_nn),
    "mriqPhiMag": (cases_phimag, lambda r, i: f64(r) ** 2 + f64(i) ** 2),
    "mriqQ": (cases_mriq, ref_mriq),
    "sobelX": (cases_window33, lambda nb: (f64(nb) * SOBEL_X).sum()),
    "sobelY": (cases_window33, lambda nb: (f64(nb) * SOBEL_X.T).sum()),
    "harris": (cases_harris, ref_harris),
    "gaussWeights": (cases_sigma, gauss_weights),
    "blurTap7": (cases_blurtap, ref_blurtap),
    "gaussBlur7": (cases_gray_image, lambda sigma, img: blur7(img, sigma)),
    "unsharpGray": (cases_unsharp_gray, ref_unsharp_gray),
    "unsharp": (cases_unsharp, ref_unsharp),
    "prefixSum": (cases_prefix, lambda x: np.cumsum(f64(x))),
    "prefixSumI32": (cases_prefix_i32, lambda x: np.cumsum(x, dtype=np.int32)),
    "prefixMax": (cases_prefix, lambda x: np.maximum.accumulate(f64(x))),
    "exclusivePrefixSum": (cases_prefix, lambda x: exclusive_cumsum(f64(x))),
    "exclusivePrefixSumI32": (cases_prefix_i32, lambda x: exclusive_cumsum(x).astype(np.int32)),
}
