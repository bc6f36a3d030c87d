#!/usr/bin/env bash
# Installs everything pdsp needs from Debian packages (run as root, or with sudo available).
set -euo pipefail
packages=(build-essential cmake ninja-build libopenmpi-dev openmpi-bin libhdf5-dev hdf5-tools
          libgtest-dev libcli11-dev libeigen3-dev libboost-mpi-dev
          libboost-serialization-dev libmetis-dev libxgboost-dev help2man python3-h5py
          python3-numpy python3-matplotlib python3-scipy python3-pil)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
