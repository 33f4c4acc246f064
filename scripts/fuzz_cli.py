#!/usr/bin/env python3
# Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
"""A structured mutator that runs the nmsa CLI as a process across every subcommand.

Each case is one command line built from a valid template of one subcommand, with one or more
mutations: a corrupted or hostile input file (.npy, ONNX, report), a path that is not a regular
file, colliding output paths, existing outputs, unknown or stray arguments, bad option values.
Every case runs with a timeout and an address-space limit and is classified:

  crash    killed by a signal, or an exit code other than 0, 1 or 2 (1 only where the command
           documents it: a failed gate, a GEMM mismatch)
  hang     the timeout ended it
  oom      it ran out of memory (std::bad_alloc, or killed at the address-space limit)
  silent   exit 0 on an input the case made invalid, or 'nan' in its output
  partial  a failure that left a new output file, changed an existing one, or left a temporary
  unclear  a failure whose message names none of the offending file, argument or value
  clear    a failure with a message that names what is wrong (the good outcome on bad input)
  ok       exit 0 on valid input

Case N of seed S is the same on every run: `--seed S --only N` reproduces it, and each finding is
printed with that command. `--json FILE` merges the figures into a benchmark file.
"""
import argparse
import json
import math
import os
import random
import re
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

CLASSES = ["crash", "hang", "oom", "silent", "partial", "unclear", "clear", "ok"]
COMMANDS = ["info", "gemm", "prune", "compress", "run", "gate", "triage", "sweep"]

# --- .npy --------------------------------------------------------------------------------------


def npy_bytes(descr, shape, payload, fortran=False, header_extra=""):
    shape_text = "(" + "".join(f"{d}, " for d in shape).rstrip(" ") + ")"
    if len(shape) > 1:
        shape_text = "(" + ", ".join(str(d) for d in shape) + ")"
    header = ("{'descr': '%s', 'fortran_order': %s, 'shape': %s, %s}"
              % (descr, "True" if fortran else "False", shape_text, header_extra))
    total = 10 + len(header) + 1
    header += " " * ((64 - total % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1") + payload


def pruned_weights(rng, rows, cols):
    """A 2:4 sparse float32 matrix (two of every four kept)."""
    vals = []
    for _ in range(rows):
        for _g in range(cols // 4):
            keep = rng.sample(range(4), 2)
            vals += [round(rng.uniform(-1, 1), 3) if i in keep else 0.0 for i in range(4)]
    return vals


def f32(vals):
    return struct.pack("<%df" % len(vals), *vals)


def i8(vals):
    return struct.pack("<%db" % len(vals), *vals)


def mutate_bytes(rng, data):
    data = bytearray(data.encode() if isinstance(data, str) else data)
    for _ in range(rng.randint(1, 8)):
        op = rng.randrange(5)
        if op == 0 and data:
            data[rng.randrange(len(data))] = rng.randrange(256)
        elif op == 1 and data:
            del data[rng.randrange(len(data)):]
        elif op == 2:
            pos = rng.randint(0, len(data))
            data[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
        elif op == 3 and len(data) > 2:
            a = rng.randrange(len(data))
            b = min(len(data), a + rng.randint(1, 32))
            data[a:b] = b"\xff" * (b - a)
        elif op == 4 and data:
            a = rng.randrange(len(data))
            data[a:a] = data[a:a + rng.randint(1, 64)]
    return bytes(data)


def bad_npy(rng, rows, cols):
    """(bytes, what) of an .npy that every reader must reject."""
    vals = pruned_weights(rng, rows, cols)
    kind = rng.randrange(12)
    if kind == 0:
        return npy_bytes("<f4", (rows, cols), f32(vals)[:-rng.randint(1, 8)]), "truncated data"
    if kind == 1:
        return npy_bytes("<f4", (rows, cols * 1000), f32(vals)), "shape larger than the data"
    if kind == 2:
        return npy_bytes("<f4", (0, 2**62, 2**62), b""), "zero dimension with huge others"
    if kind == 3:
        return npy_bytes("<f4", (2**40, 2**40), b""), "element count beyond memory"
    if kind == 4:
        return npy_bytes("<c8", (rows, cols), f32(vals) * 2), "complex dtype"
    if kind == 5:
        vals[rng.randrange(len(vals))] = float("nan")
        return npy_bytes("<f4", (rows, cols), f32(vals)), "a NaN value"
    if kind == 6:
        vals[rng.randrange(len(vals))] = float("inf")
        return npy_bytes("<f4", (rows, cols), f32(vals)), "an infinite value"
    if kind == 7:
        return b"\x93NUMPY\x01\x00\xff\xff" + b"{" * 20, "header length beyond the file"
    if kind == 8:
        return npy_bytes("<f4", (rows, cols), f32(vals) + b"\0" * 4), "trailing bytes"
    if kind == 9:
        return npy_bytes("<f4", (-1, cols), f32(vals)), "negative dimension"
    if kind == 10:
        return b"", "empty file"
    return npy_bytes("<f4", (rows, cols), f32(vals), header_extra="'x': 1, "), "unknown header key"


# --- ONNX (a minimal protobuf writer) ---------------------------------------------------------


def varint(n):
    if n < 0:
        n += 1 << 64
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field_varint(num, n):
    return varint(num << 3) + varint(n)


def field_bytes(num, data):
    if isinstance(data, str):
        data = data.encode()
    return varint((num << 3) | 2) + varint(len(data)) + data


def value_info(name, dims):
    shape = b"".join(field_bytes(1, field_varint(1, d)) for d in dims)
    tensor_type = field_varint(1, 1) + field_bytes(2, shape)
    return field_bytes(1, name) + field_bytes(2, field_bytes(1, tensor_type))


def matmul_model(rng, k=16, n=8, ir_version=8, opsets=((b"", 13),), weights=None, in_dims=None):
    """Y = X * W with X [1 x k] and W [k x n] as an initializer."""
    weights = weights if weights is not None else [round(rng.uniform(-1, 1), 3) for _ in range(k * n)]
    tensor = (field_varint(1, k) + field_varint(1, n) + field_varint(2, 1) + field_bytes(8, "W")
              + field_bytes(9, f32(weights)))
    node = field_bytes(1, "X") + field_bytes(1, "W") + field_bytes(2, "Y") + field_bytes(3, "mm") \
        + field_bytes(4, "MatMul")
    graph = (field_bytes(1, node) + field_bytes(2, "g") + field_bytes(5, tensor)
             + field_bytes(11, value_info("X", in_dims or [1, k]))
             + field_bytes(12, value_info("Y", [1, n])))
    model = field_varint(1, ir_version) + field_bytes(2, "fuzz_cli")
    model += field_bytes(7, graph)
    for domain, version in opsets:
        model += field_bytes(8, field_bytes(1, domain) + field_varint(2, version))
    return model


def bad_onnx(rng):
    """(bytes, what, tokens) of a model the importer must reject."""
    kind = rng.randrange(7)
    if kind == 0:
        return matmul_model(rng, opsets=((b"", 99),)), "opset 99", ["opset"]
    if kind == 1:
        return matmul_model(rng, opsets=()), "no opset_import", ["opset"]
    if kind == 2:
        v = rng.choice([0, -3, 99])
        return matmul_model(rng, ir_version=v), f"IR version {v}", ["IR version", "ir_version"]
    if kind == 3:
        w = [0.5] * (16 * 8)
        w[rng.randrange(len(w))] = rng.choice([float("nan"), float("inf"), float("-inf")])
        return matmul_model(rng, weights=w), "non-finite initializer", ["'W'", "W"]
    if kind == 4:
        return matmul_model(rng, in_dims=[-1, 16]), "input dimension -1", ["'X'", "X"]
    if kind == 5:
        return b"not an onnx model", "not protobuf", []
    return matmul_model(rng, k=16, n=8, weights=[0.5] * 7), "initializer shorter than its dims", ["W"]


# --- reports -----------------------------------------------------------------------------------


def report_text(acc=0.89, speedup=1.6, p99=12000):
    return json.dumps({"sparse_int8_accuracy": acc, "effective_speedup": speedup,
                       "latency_cycles_p99": p99}) + "\n"


def bad_report(rng):
    kind = rng.randrange(9)
    good = report_text()
    if kind == 0:
        return good + rng.choice(["garbage", "}", "{}", "[1]", "\0"]), "trailing garbage"
    if kind == 1:
        return good.replace("12000", "1" + "0" * 400), "number overflow"
    if kind == 2:
        return good.replace("1.6", "NaN"), "NaN literal"
    if kind == 3:
        return good[:rng.randrange(len(good) - 2)], "truncated"
    if kind == 4:
        return good.replace("0.89", "89.0"), "accuracy in percent"
    if kind == 5:
        return good.replace("12000", "-5"), "negative latency"
    if kind == 6:
        return "[1, 2, 3]\n", "not an object"
    if kind == 7:
        return good.replace("1.6", "\"fast\""), "wrong type"
    return good.replace("12000", "1e999"), "infinite number"


# --- cases -------------------------------------------------------------------------------------


class Case:
    def __init__(self, index, rng, workdir):
        self.index = index
        self.rng = rng
        self.dir = workdir
        self.argv = []
        self.invalid = []      # what makes the case invalid (empty: a valid case)
        self.tokens = []       # any of these in stderr makes a failure message clear
        self.outputs = []      # paths the command may write
        self.known_valid = True  # False once a blind byte mutation makes validity unknown
        self.gate_like = False   # exit 1 is a documented verdict (gate FAIL, triage verdict)

    def path(self, name):
        return os.path.join(self.dir, name)

    def write(self, name, data):
        p = self.path(name)
        with open(p, "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode())
        return p

    def bad(self, what, *tokens):
        self.invalid.append(what)
        self.tokens += [t for t in tokens if t]


def hostile_path(case, role):
    """A path that is not a regular file."""
    choice = case.rng.randrange(4)
    if choice == 0:
        p = case.path(role + "_dir")
        os.mkdir(p)
        return p, "a directory"
    if choice == 1:
        return "/dev/zero", "a device"
    if choice == 2:
        p = case.path(role + ".fifo")
        os.mkfifo(p)
        return p, "a FIFO"
    return case.path("missing_" + role), "no such file"


def input_file(case, role, good_bytes, bad_maker):
    """Writes the input `role`: valid, invalid by construction, blindly mutated, or hostile."""
    r = case.rng.random()
    if r < 0.55:
        return case.write(role, good_bytes)
    if r < 0.75:
        data, what = bad_maker()[:2]
        p = case.write(role, data)
        case.bad(f"{role}: {what}", p, os.path.basename(p))
        return p
    if r < 0.9:
        p = case.write(role, mutate_bytes(case.rng, good_bytes))
        case.known_valid = False
        case.tokens += [p, os.path.basename(p)]
        return p
    p, what = hostile_path(case, role)
    case.bad(f"{role}: {what}", p, os.path.basename(p))
    return p


def output_path(case, role, inputs, makes_dirs=False):
    """An output path: fresh, existing (must stay unchanged on failure), colliding, or bad.
    `makes_dirs`: the command creates missing directories (nmsa run), so one is not an error."""
    r = case.rng.random()
    p = case.path(role)
    if r < 0.6:
        pass
    elif r < 0.75:
        with open(p, "wb") as f:
            f.write(b"existing output " + role.encode())
    elif r < 0.85 and inputs:
        p = case.rng.choice(inputs)
        case.bad(f"{role} is also an input", p, os.path.basename(p))
        return p
    elif r < 0.92:
        p = case.path("nodir/" + role)
        if not makes_dirs:
            case.bad(f"{role} in a missing directory", p, os.path.basename(p), "nodir")
    else:
        os.mkdir(p)
        case.bad(f"{role} is a directory", p, os.path.basename(p))
        return p
    case.outputs.append(p)
    return p


def bad_option(case, options):
    """Appends an unknown option, a stray positional or a bad value of one of `options`."""
    r = case.rng.randrange(4)
    if r == 0:
        opt = case.rng.choice(["-x", "--bogus", "--seed=", "-"])
        case.argv.append(opt)
        case.bad(f"unknown argument {opt}", opt, "not expected", "--seed")
    elif r == 1:
        # Right after the command name: at the end it could be one more value of an option that
        # takes several (sweep --latency 100 1), which is valid.
        stray = case.rng.choice(["1", "extra", "a.npy"])
        case.argv.insert(1, stray)
        # CLI11 names the positional it has no place for: the last one, whichever was added.
        case.bad(f"stray positional {stray}", stray,
                 *[a for a in case.argv[1:] if not a.startswith("-")])
    elif options:
        opt, bads = case.rng.choice(options)
        val = case.rng.choice(bads)
        case.argv += [opt, val]
        case.bad(f"{opt} {val!r}", opt, val if val else None)
    else:
        case.argv.append("--bogus")
        case.bad("unknown option --bogus", "--bogus")


BAD_INT = ["abc", "-1", "1.5", "99999999999999999999", "", "4x", "0x10", "nan"]


def build_info(case):
    case.argv = ["info", "--backend", "model"]
    if case.rng.random() < 0.3:
        case.argv += ["--config", case.rng.choice(["small", "default"])]
    if case.rng.random() < 0.6:
        bad_option(case, [("--config", ["nosuch", "", "../x"]), ("--backend", ["nosuch", "", "uart:"])])


def build_gemm(case):
    m, k, n = case.rng.randint(1, 8), case.rng.choice([4, 8, 16]), case.rng.randint(1, 8)
    case.argv = ["gemm", "--m", str(m), "--k", str(k), "--n", str(n), "--backend", "model"]
    if case.rng.random() < 0.3:
        case.argv += ["--mode", case.rng.choice(["sparse", "dense", "both"])]
    if case.rng.random() < 0.2:
        case.argv += ["--json"]
    if case.rng.random() < 0.7:
        bad_option(case, [("--m", BAD_INT + ["0", "70000"]), ("--k", BAD_INT + ["0"]),
                          ("--n", BAD_INT), ("--seed", BAD_INT), ("--mode", ["fast", ""]),
                          ("--sparsity", ["3:4", "x", "2:0", "0:4", "4:2", ""])])


def weights(case):
    rows, cols = case.rng.randint(1, 6), 4 * case.rng.randint(1, 6)
    if case.rng.random() < 0.3:
        vals = [int(v * 100) for v in pruned_weights(case.rng, rows, cols)]
        good = npy_bytes("|i1", (rows, cols), i8(vals))
    else:
        good = npy_bytes("<f4", (rows, cols), f32(pruned_weights(case.rng, rows, cols)))
    return input_file(case, "w.npy", good, lambda: bad_npy(case.rng, rows, cols))


def build_prune(case):
    w = weights(case)
    out = output_path(case, "out.npy", [w])
    case.argv = ["prune", w, out]
    if case.rng.random() < 0.4:
        case.argv.append("--permute")
        case.outputs.append(out[:-4] + ".perm.npy" if out.endswith(".npy") else out + ".perm.npy")
        if case.rng.random() < 0.5:
            case.argv += ["--seed", str(case.rng.randint(0, 100))]
    if case.rng.random() < 0.4:
        bad_option(case, [("--seed", BAD_INT), ("--sparsity", ["3:4", "x", "2:0", ""])])


def build_compress(case):
    w = weights(case)
    values = output_path(case, "values.npy", [w])
    meta = output_path(case, "meta.npy", [w, values])
    case.argv = ["compress", w, values, meta]
    if case.rng.random() < 0.8:
        scales = output_path(case, "scales.npy", [w, values, meta])
        case.argv += ["--scales", scales]
    if case.rng.random() < 0.4:
        bad_option(case, [("--sparsity", ["3:4", "x", "2:0", ""]), ("--scales", [""])])


def build_run(case):
    model = input_file(case, "model.onnx", matmul_model(case.rng), lambda: bad_onnx(case.rng))
    if case.invalid and case.invalid[-1].startswith("model.onnx"):
        case.tokens += ["opset", "IR version", "'W'", "'X'"]
    x = [round(case.rng.uniform(-1, 1), 3) for _ in range(16)]
    xin = input_file(case, "x.npy", npy_bytes("<f4", (1, 16), f32(x)),
                     lambda: bad_npy(case.rng, 1, 16))
    out = output_path(case, "y.npy", [model, xin], makes_dirs=True)
    case.argv = ["run", model, "--input", xin, "--output", out, "--backend", "model"]
    if case.rng.random() < 0.3:
        bad_option(case, [("--input", ["nosuch=" + xin, "", "=x"]), ("--output", ["Q=" + out]),
                          ("--labels", [case.path("missing_labels.npy")])])


def build_gate(case):
    case.gate_like = True
    base = input_file(case, "base.json", report_text(), lambda: bad_report(case.rng))
    cand = input_file(case, "cand.json", report_text(0.889, 1.7, 11500), lambda: bad_report(case.rng))
    case.argv = ["gate", "--baseline", base, "--candidate", cand, "--min-speedup", "1"]
    if case.rng.random() < 0.4:
        bad_option(case, [("--min-speedup", ["abc", "nan", "inf", "-1", ""]),
                          ("--max-quality-drop", ["abc", "nan", "inf"]),
                          ("--max-p99-cycles", BAD_INT)])


def build_triage(case):
    case.gate_like = True
    base = input_file(case, "base.json", report_text(), lambda: bad_report(case.rng))
    cand = input_file(case, "cand.json", report_text(0.85, 1.2, 15000), lambda: bad_report(case.rng))
    case.argv = ["triage", "--baseline", base, "--candidate", cand]
    # A gate-sized report lacks the keys triage reads: triage rejects it, naming the key.
    case.known_valid = False
    case.tokens += [base, cand, os.path.basename(base), os.path.basename(cand)]
    if case.rng.random() < 0.5:
        memo = output_path(case, "memo.md", [base, cand])
        case.argv += ["--memo", memo]
    if case.rng.random() < 0.2:
        case.argv.append("--json")
    if case.rng.random() < 0.4:
        bad_option(case, [("--quality-tolerance", ["abc", "nan", "-1"]),
                          ("--cycles-tolerance", ["abc", "nan", "-1"])])


def build_sweep(case):
    out = case.path("sweep")
    r = case.rng.random()
    if r < 0.1:
        with open(out, "w") as f:
            f.write("a file, not a directory")
        case.bad("--out is a file", out, "sweep")
    else:
        case.outputs += [os.path.join(out, "sweep.json"), os.path.join(out, "sweep.html")]
    case.argv = ["sweep", "--out", out, "--family", case.rng.choice(["mlp", "cnn"]),
                 "--bytes-per-cycle", "8", "--latency", "100"]
    if case.rng.random() < 0.5:
        bad_option(case, [("--family", ["nosuch", ""]), ("--bytes-per-cycle", ["abc", "0", "nan"]),
                          ("--latency", BAD_INT), ("--axi-width", ["48", "abc"]),
                          ("--config", ["nosuch"])])


BUILDERS = {"info": build_info, "gemm": build_gemm, "prune": build_prune,
            "compress": build_compress, "run": build_run, "gate": build_gate,
            "triage": build_triage, "sweep": build_sweep}


def make_case(seed, index, root):
    rng = random.Random(seed * 1_000_003 + index)
    d = os.path.join(root, f"case{index}")
    os.makedirs(d)
    case = Case(index, rng, d)
    case.command = COMMANDS[index % len(COMMANDS)]
    BUILDERS[case.command](case)
    return case


def snapshot(paths):
    state = {}
    for p in paths:
        try:
            with open(p, "rb") as f:
                state[p] = f.read()
        except OSError:
            state[p] = None
    return state


def temporaries(case):
    found = []
    for base, _dirs, files in os.walk(case.dir):
        found += [os.path.join(base, f) for f in files if ".tmp-" in f]
    return found


def classify(case, rc, stdout, stderr, before, timed_out):
    if timed_out:
        return "hang", "timeout"
    if "bad_alloc" in stderr or "out of memory" in stderr.lower():
        return "oom", "out of memory"
    if rc < 0:
        return "crash", f"signal {-rc}"
    if rc not in (0, 1, 2) or (rc == 1 and not case.gate_like and case.command != "gemm"):
        return "crash", f"exit {rc} (an internal failure) on this input"
    if rc == 1 and case.invalid:
        return "crash", "exit 1 on invalid input (2 expected)"
    after = snapshot(case.outputs)
    out_text = stdout
    for p, data in after.items():
        if data is not None and (p.endswith(".json") or p.endswith(".md")):
            out_text += data.decode("latin1")
    if rc == 0:
        if case.invalid:
            return "silent", "exit 0 on invalid input: " + "; ".join(case.invalid)
        if re.search(r"\bnan\b", out_text, re.IGNORECASE):
            return "silent", "'nan' in the output"
        return "ok", ""
    changed = [p for p in case.outputs if after.get(p) != before.get(p)]
    left = temporaries(case)
    if changed or left:
        return "partial", "left behind: " + ", ".join(changed + left)
    if rc == 1 and case.gate_like:
        return ("clear", "") if case.known_valid and not case.invalid else ("clear", "")
    first = stderr.strip()
    if not first:
        return "unclear", "no message"
    if "terminate called" in stderr or "what():" in stderr:
        return "crash", "uncaught exception"
    if case.invalid or not case.known_valid:
        if not any(t and t in stderr for t in case.tokens):
            return "unclear", "the message names none of: " + ", ".join(
                sorted({repr(t) for t in case.tokens if t}))
    return "clear", ""


def limit(mem_bytes):
    def apply():
        resource.setrlimit(resource.RLIMIT_AS, (mem_bytes, mem_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        os.setsid()
    return apply


def run_case(args, case):
    before = snapshot(case.outputs)
    timed_out = False
    proc = subprocess.Popen([args.nmsa] + case.argv, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, cwd=case.dir,
                            preexec_fn=limit(args.mem_mb << 20))
    try:
        out, err = proc.communicate(timeout=args.timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
    stdout = out.decode("utf-8", "replace")
    stderr = err.decode("utf-8", "replace")
    return classify(case, proc.returncode, stdout, stderr, before, timed_out), stderr


def merge_json(path, fields):
    data = {}
    if os.path.exists(path):
        with open(path) as f:
            data = json.load(f)
    data.update(fields)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=2, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nmsa", required=True, help="the nmsa binary")
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--seed", type=int, default=int(os.environ.get("NMSA_SEED", "1")),
                    help="seed of the cases (default: $NMSA_SEED, else 1)")
    ap.add_argument("--only", type=int, help="run case N alone (reproduces a finding)")
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds per case")
    ap.add_argument("--mem-mb", type=int, default=2048, help="address-space limit per case")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json", help="merge the host_fuzz_* figures into this file")
    ap.add_argument("--keep", action="store_true", help="keep every case's directory")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    args.nmsa = os.path.abspath(args.nmsa)
    if args.cases <= 0:
        ap.error("--cases must be positive")

    root = tempfile.mkdtemp(prefix="nmsa-fuzz-cli-")
    indices = [args.only] if args.only is not None else list(range(args.cases))
    counts = {c: 0 for c in CLASSES}
    findings = []
    start = time.monotonic()

    from concurrent.futures import ThreadPoolExecutor

    def one(i):
        case = make_case(args.seed, i, root)
        (cls, why), stderr = run_case(args, case)
        if cls in ("clear", "ok") and not args.keep and args.only is None:
            shutil.rmtree(case.dir, ignore_errors=True)
        return case, cls, why, stderr

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for case, cls, why, stderr in pool.map(one, indices):
            counts[cls] += 1
            if args.verbose or args.only is not None:
                print(f"case {case.index} [{cls}] nmsa {' '.join(case.argv)}\n  {stderr.strip()[:300]}")
            if cls not in ("clear", "ok"):
                findings.append((case, cls, why, stderr))
    elapsed = time.monotonic() - start

    for case, cls, why, stderr in findings:
        print(f"FINDING {cls}: case {case.index} ({case.command}): {why}")
        print(f"  nmsa {' '.join(case.argv)}")
        print(f"  stderr: {stderr.strip()[:400]}")
        print(f"  reproduce: python3 scripts/fuzz_cli.py --nmsa {args.nmsa} --seed {args.seed} "
              f"--only {case.index}   (inputs kept in {case.dir})")
    total = len(indices)
    rate = total / elapsed if elapsed > 0 else 0.0
    print(f"fuzz_cli: {total} cases, seed {args.seed}, {elapsed:.1f} s ({rate:.1f} cases/s): "
          + ", ".join(f"{c} {counts[c]}" for c in CLASSES))
    if args.json:
        merge_json(args.json, {
            "host_fuzz_cases": total,
            "host_fuzz_execs_per_s": round(rate, 2),
            "host_fuzz_crashes": counts["crash"],
            "host_fuzz_oom": counts["oom"],
            "host_fuzz_hangs": counts["hang"],
            "host_fuzz_silent": counts["silent"],
            "host_fuzz_partial": counts["partial"],
            "host_fuzz_unclear": counts["unclear"],
            "host_fuzz_seed": args.seed,
        })
    if not findings and not args.keep:
        shutil.rmtree(root, ignore_errors=True)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
