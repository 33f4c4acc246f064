#!/usr/bin/env python3
# Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
"""Writes the seed corpora of the libFuzzer targets (tests/fuzz/) from the project's own files.

  npy/      .npy files as nmsa writes and reads them (float32, int8, uint8, empty, Fortran order)
  onnx/     the MatMul model scripts/fuzz_cli.py runs, with the variants the importer must reject
  report/   gate-sized reports, their broken variants, and the JSON files in the repository
  options/  command lines of every subcommand, arguments separated by NUL bytes

Usage: fuzz_seeds.py OUT_DIR
"""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fuzz_cli as fc  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def main():
    out = sys.argv[1]
    rng = random.Random(1)
    npy = {
        "f32": fc.npy_bytes("<f4", (2, 8), fc.f32(fc.pruned_weights(rng, 2, 8))),
        "i8": fc.npy_bytes("|i1", (2, 8), fc.i8(list(range(-8, 8)))),
        "u8": fc.npy_bytes("|u1", (4, 1), bytes([1, 2, 3, 4])),
        "f64": fc.npy_bytes("<f8", (1, 3), b"\0" * 24),
        "empty": fc.npy_bytes("<f4", (0, 8), b""),
        "fortran": fc.npy_bytes("<f4", (2, 3), fc.f32([1, 2, 3, 4, 5, 6]), fortran=True),
        "vector": fc.npy_bytes("<i4", (3,), b"\1\0\0\0\2\0\0\0\3\0\0\0"),
    }
    for i in range(12):
        npy[f"bad{i}"] = fc.bad_npy(random.Random(i), 2, 8)[0]
    for name, data in npy.items():
        write(os.path.join(out, "npy", name + ".npy"), data)

    write(os.path.join(out, "onnx", "matmul.onnx"), fc.matmul_model(rng))
    for i in range(7):
        write(os.path.join(out, "onnx", f"bad{i}.onnx"), fc.bad_onnx(random.Random(i))[0])

    write(os.path.join(out, "report", "gate.json"), fc.report_text())
    for i in range(9):
        write(os.path.join(out, "report", f"bad{i}.json"), fc.bad_report(random.Random(i))[0])
    for rel in ("rtl/configs.json", "syn/results/ecp5-default.json"):
        p = os.path.join(ROOT, rel)
        if os.path.exists(p):
            with open(p, "rb") as f:
                write(os.path.join(out, "report", os.path.basename(rel)), f.read())

    lines = [
        ["info", "--backend", "model", "--config", "small"],
        ["gemm", "--m", "4", "--k", "16", "--n", "4", "--mode", "both", "--seed", "3", "--json"],
        ["prune", "w.npy", "out.npy", "--permute", "--seed", "7", "--sparsity", "2:4"],
        ["compress", "w.npy", "v.npy", "m.npy", "--scales", "s.npy", "--sparsity", "1:4"],
        ["run", "m.onnx", "--input", "X=x.npy", "--output", "Y=y.npy", "--labels", "l.npy"],
        ["gate", "--baseline", "a.json", "--candidate", "b.json", "--min-speedup", "1.5",
         "--max-quality-drop", "0.5", "--max-p99-cycles", "12000"],
        ["triage", "--baseline", "a.json", "--candidate", "b.json", "--memo", "m.md", "--json"],
        ["sweep", "--family", "mlp", "cnn", "--bytes-per-cycle", "4", "16", "--latency", "100",
         "--axi-width", "64", "--out", "d"],
        ["gemm", "--help"],
    ]
    for i, argv in enumerate(lines):
        write(os.path.join(out, "options", f"{argv[0]}{i}"), "\0".join(argv))


if __name__ == "__main__":
    main()
