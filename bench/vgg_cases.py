#!/usr/bin/env python3
"""VGG-16's 13 convolution layers as cases of bench/gpu_anchors.py, and their total.

  python3 bench/vgg_cases.py cases BEST.elv [--targets cuda,opencl] > cases.json
  python3 bench/vgg_cases.py merge OUT.elv RUN.json... > cases.json
  python3 bench/vgg_cases.py total RESULTS.json

`cases` reads the strategy file `shine explore --param ... -o BEST.elv` wrote for
examples/vgg.rise (one `best_K` per size set, each after a comment line with its
`shine run ... --nat ...` command) and writes one case per layer (batch 1, f32, 3x3,
padding 1): the padded input with a zero border and the HWIO kernels as inputs, the
strategy explore found for the layer's sizes, and cuDNN (`cudnn_conv`) as the anchor.
BEST.elv must lie inside the repository (the cases name it relative to its root).

`merge` takes the summaries (stdout) of several such explore runs of
`mmSplitK(tm, tn, rm, rn, kb, wm, wn)` on vggGemmSplitK, keeps the fastest per layer
size over all of them, writes the strategy file OUT.elv in BEST.elv's form (each
layer's comment names the run and method that found it) and the cases for it.

`total` sums the layers' medians (gpu_anchors.py --json) per target and for cuDNN, as
one Markdown table: the figure of issue 16 (the 13 layers together against cuDNN).
"""

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# (input channels, output channels, height = width) of the 13 layers
VGG16 = [(3, 64, 224), (64, 64, 224), (64, 128, 112), (128, 128, 112), (128, 256, 56),
         (256, 256, 56), (256, 256, 56), (256, 512, 28), (512, 512, 28), (512, 512, 28),
         (512, 512, 14), (512, 512, 14), (512, 512, 14)]


def sets_of(best):
    """{(h, w, c, o): (def, strategy, {size: value} beyond h w c o)} from explore's file."""
    out = {}
    pat = re.compile(r"^// set \d+ .*--def (\S+) --strategy THIS --apply (\S+)((?: --nat \w+=\d+)+)")
    for line in best.read_text().splitlines():
        m = pat.match(line)
        if not m:
            continue
        nats = dict(re.findall(r"--nat (\w+)=(\d+)", m.group(3)))
        key = tuple(int(nats.pop(k)) for k in ("h", "w", "c", "o"))
        out[key] = (m.group(1), m.group(2), {k: int(v) for k, v in nats.items()})
    return out


def cases(best, targets):
    sets = sets_of(best)
    rel = str(best.resolve().relative_to(ROOT))
    out = []
    for i, (c, o, s) in enumerate(VGG16, 1):
        found = sets.get((s, s, c, o))
        if found is None:
            sys.exit(f"{best}: no strategy for layer {i} (h=w={s}, c={c}, o={o})")
        d, strategy, nats = found
        out.append({
            "name": f"vgg_l{i}",
            "title": f"VGG-16 conv layer {i}: {s}x{s}, {c} -> {o} channels",
            "inputs": [[s + 2, s + 2, c], [9 * c, o]],
            "zero_border": [0],
            "flops": 2 * 9 * c * o * s * s,
            "reference": "vgg_conv",
            "variants": [{
                "label": f"{strategy} " + " ".join(f"{k}={v}" for k, v in nats.items()),
                "program": "examples/vgg.rise",
                "def": d,
                "strategy_file": rel,
                "strategy": strategy,
                "nats": nats,
            }],
            "targets": targets,
            "anchors": ["cudnn_conv"],
        })
    return {"about": [f"VGG-16's conv layers with the strategies of {rel} (bench/vgg_cases.py)"],
            "cases": out}


def merge(out, runs):
    best = {}
    for run in runs:
        for entry in json.loads(Path(run).read_text())["per_set"]:
            if entry["best_ms"] is None:
                continue
            key = tuple(int(kv.split("=")[1]) for kv in entry["sizes"].split(","))
            if key not in best or entry["best_ms"] < best[key][0]:
                best[key] = (entry["best_ms"], dict(kv.split("=") for kv in entry["params"].split(",")),
                             f"{run}, {entry['method']}")
    lines = ["// VGG-16's conv layers on the H100 (CUDA): per layer size, the fastest candidate of",
             "// the `shine explore --param` runs " + ", ".join(str(r) for r in runs),
             "// (bench/vgg_cases.py merge); include examples/gpu.elv before this file.", ""]
    for k, ((h, w, c, o), (ms, p, where)) in enumerate(sorted(best.items(), key=lambda kv: -kv[0][0]), 1):
        lines.append(f"// set {k} ({ms:.4f} ms, {where}): shine run examples/vgg.rise --def vggGemmSplitK"
                     f" --strategy THIS --apply best_{k} --nat h={h} --nat w={w} --nat c={c} --nat o={o}"
                     f" --nat s={p['s']}")
        args = ", ".join(p[n] for n in ("tm", "tn", "rm", "rn", "kb", "wm", "wn"))
        lines.append(f"def best_{k} = mmSplitK({args})")
    Path(out).write_text(Path(ROOT / "examples" / "gpu.elv").read_text() + "\n" + "\n".join(lines) + "\n")


def total(results):
    rows = json.loads(Path(results).read_text())["results"]
    sums = {}
    for r in rows:
        if not r["case"].startswith("vgg_l"):
            continue
        key = f"shine {r['target']}" if r["kind"] == "shine" else r["label"]
        ms = r["median_ms"]
        layers, acc, ok = sums.get(key, (0, 0.0, True))
        sums[key] = (layers + 1, acc + (ms or 0.0), ok and ms is not None and r["verified"] is not False)
    flops = sum(2 * 9 * c * o * s * s for c, o, s in VGG16)
    anchor = sums.get("cudnn_conv", (0, None, False))[1]
    lines = ["| what | layers | total ms | TFLOP/s | cuDNN / this |", "| --- | ---: | ---: | ---: | ---: |"]
    for key, (n, ms, ok) in sums.items():
        note = "" if ok and n == len(VGG16) else " (incomplete)"
        ratio = f"{anchor / ms:.2f}" if anchor and ms else "—"
        lines.append(f"| {key}{note} | {n} | {ms:.3f} | {flops / ms / 1e9:.2f} | {ratio} |")
    return "\n".join(lines)


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "cases":
        targets = ["cuda", "opencl"]
        if "--targets" in sys.argv:
            targets = sys.argv[sys.argv.index("--targets") + 1].split(",")
        print(json.dumps(cases(Path(sys.argv[2]), targets), indent=1))
    elif len(sys.argv) >= 4 and sys.argv[1] == "merge":
        merge(sys.argv[2], sys.argv[3:])
        print(json.dumps(cases(Path(sys.argv[2]), ["cuda", "opencl"]), indent=1))
    elif len(sys.argv) == 3 and sys.argv[1] == "total":
        print(total(sys.argv[2]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
