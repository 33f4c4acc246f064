#!/usr/bin/python3
"""Every .npy file the nmsa CLI writes, read back with NumPy: dtypes, shapes and contents.

The compressed metadata is decoded here from docs/format.md alone (section 8.3's packing), and for
2:4 it is compared with the metadata PyTorch computes, evaluated from PyTorch's Boolean functions
in NumPy (no PyTorch needed): the same nibbles, and the same bytes as PyTorch's int32 meta words
before their CUTLASS reordering.

Usage: test_numpy_roundtrip.py PATH/TO/nmsa
"""
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

NMSA = sys.argv[1]
PATTERNS = [(1, 4), (2, 4), (2, 8)]
SOFTMAX = "/usr/share/libonnx-testdata/data/node/test_softmax_example/model.onnx"
results = {"passed": 0, "failed": 0}


def check(name, condition, detail=""):
    if condition:
        results["passed"] += 1
    else:
        results["failed"] += 1
        print(f"FAIL {name}{': ' + detail if detail else ''}")


def nmsa(*args):
    run = subprocess.run([NMSA, *map(str, args)], capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"nmsa {' '.join(map(str, args))}: exit {run.returncode}\n{run.stderr}")
    return run.stdout


def unpack_meta(packed, groups, n, m):
    """docs/format.md 8.3: fields of n*log2(m) bits, each in a power-of-two slot, LSB-first."""
    bits = n * (m.bit_length() - 1)
    slot = 1 << (bits - 1).bit_length()
    fields = np.zeros((packed.shape[0], groups), dtype=np.uint8)
    for g in range(groups):
        byte, shift = divmod(g * slot, 8)
        fields[:, g] = (packed[:, byte] >> shift) & ((1 << bits) - 1)
    return fields


def decompress(values, fields, n, m):
    idx_bits = m.bit_length() - 1
    rows, groups = fields.shape
    dense = np.zeros((rows, groups * m), dtype=values.dtype)
    for g in range(groups):
        for j in range(n):
            pos = (fields[:, g] >> (j * idx_bits)) & (m - 1)
            dense[np.arange(rows), g * m + pos] = values[:, g * n + j]
    return dense


def pytorch_nibbles(w):
    """PyTorch's 2:4 metadata of every group of w, from its Boolean functions."""
    nz = (w.reshape(w.shape[0], -1, 4) != 0)
    m0, m1, m2 = nz[..., 0], nz[..., 1], nz[..., 2]
    bit0 = ~m0 & m1
    bit1 = ~m0 & ~m1
    bit2 = bit1 | ~m2
    bit3 = bit0 | ~m1 | m2
    return (bit0 | bit1 << 1 | bit2 << 2 | bit3 << 3).astype(np.uint8)


def main():
    rng = np.random.default_rng(5)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        inputs = {
            "f32": rng.standard_normal((16, 32)).astype(np.float32),
            "f64": rng.standard_normal((8, 16)),
            "i8": rng.integers(-128, 128, (8, 24), dtype=np.int8),
        }
        for kind, w in inputs.items():
            np.save(tmp / f"{kind}.npy", w)
            for n, m in PATTERNS:
                if w.shape[1] % m:
                    continue
                tag = f"{kind} {n}:{m}"
                pruned_path = tmp / f"{kind}_{n}{m}.npy"
                nmsa("prune", tmp / f"{kind}.npy", pruned_path, "--sparsity", f"{n}:{m}")
                pruned = np.load(pruned_path)
                # float64 weights are pruned and written as float32, int8 stays int8.
                want_dtype = np.int8 if kind == "i8" else np.float32
                check(f"prune {tag}: dtype", pruned.dtype == want_dtype, str(pruned.dtype))
                check(f"prune {tag}: shape", pruned.shape == w.shape, str(pruned.shape))
                groups = (pruned.reshape(w.shape[0], -1, m) != 0).sum(axis=2)
                check(f"prune {tag}: N:M", groups.max() <= n)
                kept = pruned != 0
                check(f"prune {tag}: kept values unchanged",
                      np.array_equal(pruned[kept], w.astype(want_dtype)[kept]))

                values_path, meta_path = tmp / "v.npy", tmp / "meta.npy"
                scales_path = tmp / "s.npy"
                nmsa("compress", pruned_path, values_path, meta_path, "--sparsity", f"{n}:{m}",
                     "--scales", scales_path)
                values, packed = np.load(values_path), np.load(meta_path)
                rows, k = w.shape
                check(f"compress {tag}: values", values.dtype == np.int8
                      and values.shape == (rows, k * n // m), f"{values.dtype} {values.shape}")
                slot = 1 << ((n * (m.bit_length() - 1)) - 1).bit_length()
                want_bytes = (k // m * slot + 7) // 8
                check(f"compress {tag}: metadata", packed.dtype == np.uint8
                      and packed.shape == (rows, want_bytes), f"{packed.dtype} {packed.shape}")
                fields = unpack_meta(packed, k // m, n, m)
                dense = decompress(values, fields, n, m)
                if kind == "i8":
                    check(f"compress {tag}: decompresses to the pruned matrix",
                          np.array_equal(dense, pruned))
                else:
                    scales = np.load(scales_path)
                    check(f"compress {tag}: scales", scales.dtype == np.float32
                          and scales.shape == (1, rows) and (scales > 0).all())
                    check(f"compress {tag}: same nonzero positions as the pruned matrix",
                          not ((dense != 0) & (pruned == 0)).any())
                if (n, m) == (2, 4):
                    want = pytorch_nibbles(dense if kind != "i8" else pruned)
                    check(f"compress {tag}: PyTorch's nibbles", np.array_equal(fields, want))
                    if (k // 4) % 8 == 0:
                        words = np.zeros((rows, k // 32), dtype=np.int64)
                        for i in range(8):
                            words |= want[:, i::8].astype(np.int64) << (4 * i)
                        check(f"compress {tag}: the bytes of PyTorch's int32 meta words",
                              packed.tobytes() == words.astype("<u4").tobytes())

        nmsa("prune", tmp / "f32.npy", tmp / "p.npy", "--permute")
        perm = np.load(tmp / "p.perm.npy")
        check("prune --permute: permutation", perm.dtype == np.int32 and perm.shape == (1, 32)
              and np.array_equal(np.sort(perm[0]), np.arange(32)), f"{perm.dtype} {perm.shape}")

        x = np.array([[1.0, 2.0, 3.0]], dtype=np.float32)
        np.save(tmp / "x.npy", x)
        nmsa("run", SOFTMAX, "--input", tmp / "x.npy", "--output", tmp / "y.npy",
             "--backend", "model")
        y = np.load(tmp / "y.npy")
        check("run --output", y.dtype == np.float32 and y.shape == (1, 3)
              and np.allclose(y, np.exp(x) / np.exp(x).sum(), atol=1e-6), f"{y.dtype} {y}")

    print(f"{results['passed']} passed, {results['failed']} failed")
    return 0 if results["failed"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
