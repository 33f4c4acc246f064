#!/usr/bin/python3
"""Every .npy file the nmsa CLI writes, read back with NumPy: dtypes, shapes and contents.

`nmsa run` on a model with several inputs and outputs of several ranks and dtypes (written here as
ONNX protobuf bytes by hand, so no ONNX Python package is needed): every output with its real
shape and dtype, and every wrong --input/--output an error that writes nothing.

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


# --- a minimal ONNX writer: protobuf wire format, the ModelProto fields a graph needs ---------------

def varint(n):
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(number, value):
    """A protobuf field: an int as a varint, bytes/str length-delimited."""
    if isinstance(value, int):
        return varint(number << 3) + varint(value)
    data = value.encode() if isinstance(value, str) else value
    return varint(number << 3 | 2) + varint(len(data)) + data


ONNX_FLOAT, ONNX_INT32 = 1, 6


def value_info(name, elem_type, shape):
    dims = b"".join(field(1, field(1, d)) for d in shape)           # Dimension.dim_value
    tensor_type = field(1, elem_type) + field(2, dims)               # elem_type, shape
    return field(1, name) + field(2, field(1, tensor_type))         # name, type.tensor_type


def initializer(name, array):
    """A float32 TensorProto: dims, data_type, name, raw_data."""
    dims = b"".join(field(1, d) for d in array.shape)
    return dims + field(2, ONNX_FLOAT) + field(8, name) + field(9, array.astype("<f4").tobytes())


def node(op, inputs, output, perm=None):
    proto = b"".join(field(1, i) for i in inputs) + field(2, output) + field(4, op)
    if perm is not None:  # AttributeProto: name, ints, type INTS (7)
        proto += field(5, field(1, "perm") + b"".join(field(8, p) for p in perm) + field(20, 7))
    return proto


def onnx_model(nodes, inputs, outputs, initializers=()):
    graph = b"".join(field(1, node(op, [a, b], out)) for op, a, b, out in nodes)
    return onnx_graph_model(graph, inputs, outputs, initializers)


def onnx_graph_model(graph, inputs, outputs, initializers=()):
    graph += b"".join(field(5, initializer(name, a)) for name, a in initializers)
    graph += field(2, "multi_io")
    graph += b"".join(field(11, value_info(*v)) for v in inputs)
    graph += b"".join(field(12, value_info(*v)) for v in outputs)
    opset = field(1, "") + field(2, 13)
    return field(1, 8) + field(7, graph) + field(8, opset)          # ir_version, graph, opset


def nmsa_fails(args, message):
    run = subprocess.run([NMSA, *map(str, args)], capture_output=True, text=True)
    return run.returncode == 2 and message in run.stderr, f"exit {run.returncode}: {run.stderr}"


def check_multi_io(tmp):
    """Two float inputs of rank 3 and two int32 inputs; outputs float sum and product, int32 sum."""
    model = tmp / "multi_io.onnx"
    model.write_bytes(onnx_model(
        [("Add", "x", "y", "sum"), ("Mul", "x", "y", "prod"), ("Add", "i", "j", "isum")],
        [("x", ONNX_FLOAT, (2, 3, 4)), ("y", ONNX_FLOAT, (2, 3, 4)),
         ("i", ONNX_INT32, (2, 2)), ("j", ONNX_INT32, (2, 2))],
        [("sum", ONNX_FLOAT, (2, 3, 4)), ("prod", ONNX_FLOAT, (2, 3, 4)),
         ("isum", ONNX_INT32, (2, 2))]))
    rng = np.random.default_rng(9)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    y = rng.standard_normal((2, 3, 4))  # float64: read as float32
    i = rng.integers(-1000, 1000, (2, 2)).astype(np.int32)
    j = rng.integers(-1000, 1000, (2, 2)).astype(np.int32)
    for name, value in {"x": x, "y": y, "i": i, "j": j}.items():
        np.save(tmp / f"{name}.npy", value)
    inputs = [f"--input={n}={tmp / n}.npy" for n in "xyij"]
    out_dir = tmp / "outs"
    nmsa("run", model, *inputs, "--output", out_dir, "--backend", "model")
    want = {"sum": x + y.astype(np.float32), "prod": x * y.astype(np.float32), "isum": i + j}
    for name, value in want.items():
        got = np.load(out_dir / f"{name}.npy")
        check(f"run: output {name}", got.dtype == value.dtype and got.shape == value.shape
              and np.allclose(got, value, atol=1e-6), f"{got.dtype} {got.shape}")
    nmsa("run", model, *inputs, "--output", f"isum={tmp / 'only.npy'}", "--backend", "model")
    only = np.load(tmp / "only.npy")
    check("run: NAME=FILE output", only.dtype == np.int32 and np.array_equal(only, i + j))

    bad = tmp / "bad"
    cases = [
        ("unknown input", [f"--input=z={tmp / 'x.npy'}", *inputs], "the model has no input 'z'"),
        ("repeated input", [*inputs, f"--input=x={tmp / 'x.npy'}"], "'x' is given twice"),
        ("missing input", inputs[:3], "the model's input 'j' is not given"),
        ("bare input", [f"--input={tmp / 'x.npy'}"], "names no input, and the model has 4"),
        ("float for int", [*inputs[:2], f"--input=i={tmp / 'x.npy'}", inputs[3]],
         "the model takes int32 here, the file holds float32"),
        ("int for float", [f"--input=x={tmp / 'i.npy'}", *inputs[1:]],
         "the model takes float here, the file holds int32"),
        ("one file, three outputs", [*inputs, "--output", bad / "y.npy"],
         "the model has 3 outputs"),
        ("unknown output", [*inputs, "--output", f"q={bad / 'q.npy'}"],
         "the model has no output 'q'"),
        ("repeated output", [*inputs, "--output", f"sum={bad / 'a.npy'}", "--output",
                             f"sum={bad / 'b.npy'}"], "'sum' is given twice"),
    ]
    for name, args, message in cases:
        ok, detail = nmsa_fails(["run", model, *args, "--backend", "model"], message)
        check(f"run error: {name}", ok, detail)
    check("run errors write nothing", not bad.exists())


def check_linear_without_bias(tmp):
    """MatMul(x, Transpose(W)), as older PyTorch exports a Linear without bias: the Transpose of
    the initializer is folded, the MatMul runs sparse on the device, and the functional model
    prints its predicted cycles."""
    rng = np.random.default_rng(3)
    w = rng.standard_normal((8, 16)).astype(np.float32)
    groups = w.reshape(8, 4, 4)
    smallest = np.argsort(np.abs(groups), axis=2)[:, :, :2]
    np.put_along_axis(groups, smallest, 0.0, axis=2)  # 2:4 along K
    w = groups.reshape(8, 16)
    x = rng.standard_normal((4, 16)).astype(np.float32)
    model = tmp / "linear.onnx"
    graph = field(1, node("Transpose", ["w"], "wt", perm=[1, 0]))
    graph += field(1, node("MatMul", ["x", "wt"], "y"))
    model.write_bytes(onnx_graph_model(graph, [("x", ONNX_FLOAT, (4, 16))],
                                       [("y", ONNX_FLOAT, (4, 8))], [("w", w)]))
    np.save(tmp / "lx.npy", x)
    out = nmsa("run", model, "--input", tmp / "lx.npy", "--output", tmp / "ly.npy",
               "--backend", "model")
    rows = {line.split()[1]: line for line in out.splitlines() if len(line.split()) > 2}
    check("linear: Transpose folded", "folded" in rows.get("Transpose", ""), out)
    check("linear: MatMul sparse on the device", "sparse" in rows.get("MatMul", ""), out)
    predicted = [line for line in out.splitlines() if "predicted by the cycle model" in line]
    check("linear: predicted cycles", predicted and int(predicted[0].split()[-1]) > 0, out)
    y = np.load(tmp / "ly.npy")
    want = x @ w.T
    check("linear: output", y.shape == (4, 8) and np.allclose(y, want, atol=0.05 * np.abs(want).max()),
          f"{y.shape} max error {np.abs(y - want).max()}")


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

        check_multi_io(tmp)
        check_linear_without_bias(tmp)

    print(f"{results['passed']} passed, {results['failed']} failed")
    return 0 if results["failed"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
