#!/usr/bin/env bash
# Installs what jobmon needs to build and test, from Debian 12's packages.
# Run as root. Package services (munge, slurmctld, slurmd) are not started:
# the dev cluster runs its own daemons on its own state dir.
set -euo pipefail

PACKAGES=(
  # build
  build-essential cmake pkg-config clang-format shellcheck git clang-14 libclang-rt-14-dev
  libgtest-dev libgmock-dev libcli11-dev libfmt-dev protobuf-compiler libprotobuf-dev
  libhyperscan-dev libre2-dev nlohmann-json3-dev libtomlplusplus-dev prometheus-cpp-dev
  libutfcpp-dev libarchive-dev libssl-dev libsqlite3-dev libcurl4-openssl-dev libspdlog-dev
  # promtool (lints the exporter's scrape), and node_exporter as the exporter
  # benchmark's baseline; their services are never started here
  prometheus prometheus-node-exporter
  # the alerts test delivers to a real Alertmanager (on loopback)
  prometheus-alertmanager
  # the SPANK plugin's header, and the real Slurm the integration tests run
  libslurm-dev slurmctld slurmd slurm-client munge
  # dev cluster plumbing
  iproute2 util-linux procps
  # the independent TensorBoard event decoder, tests and benchmarks
  python3 python3-protobuf python3-crc32c time
  # unpacks tsdb.tar.zst independently of libarchive in the tests
  zstd tar
)

if [[ $EUID -ne 0 ]]; then
  echo "install-deps: run as root (apt-get install)" >&2
  exit 1
fi

missing=()
for package in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

# Keep package maintainer scripts from starting system munge/slurm daemons
# (they would hold Slurm's ports); only a policy we created is removed again.
created_policy=0
if [[ ! -e /usr/sbin/policy-rc.d ]]; then
  printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
  chmod 0755 /usr/sbin/policy-rc.d
  created_policy=1
fi
cleanup() { [[ $created_policy -eq 1 ]] && rm -f /usr/sbin/policy-rc.d; }
trap cleanup EXIT

echo "install-deps: apt-get update"
apt-get update -q
echo "install-deps: installing ${missing[*]}"
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
