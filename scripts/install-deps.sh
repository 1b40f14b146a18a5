#!/usr/bin/env bash
# Installs what jobmon needs to build and test, from Debian 12's packages;
# with --demo, only what scripts/demo.sh builds and runs (no test tools,
# PyTorch, Chromium, VictoriaMetrics, ...). Run as root. Package services (munge, slurmctld, slurmd) are not started:
# the dev cluster runs its own daemons on its own state dir.
# Exit status: 0 once every package is installed (whatever was there
# before), non-zero with a message when apt-get fails.
# Tests replace the package tools and the policy file through
# JOBMON_APT_GET, JOBMON_DPKG_QUERY and JOBMON_POLICY_RC.
set -euo pipefail

DEMO_PACKAGES=(
  # build
  build-essential cmake ninja-build pkg-config
  libcli11-dev libfmt-dev protobuf-compiler libprotobuf-dev
  libhyperscan-dev libre2-dev nlohmann-json3-dev libsimdjson-dev libtomlplusplus-dev prometheus-cpp-dev libmicrohttpd-dev
  libutfcpp-dev libarchive-dev libssl-dev libsqlite3-dev libcurl4-openssl-dev libspdlog-dev
  # the per-job Prometheus (and promtool); its service is never started here
  prometheus
  # the SPANK plugin's header, and the real Slurm the dev cluster runs
  libslurm-dev slurmctld slurmd slurm-client munge
  # dev cluster plumbing
  iproute2 util-linux procps
  # the webhook receiver, the archive listing, an incident's chart (chart/:
  # gnuplot's pngcairo terminal and its font)
  python3 zstd tar gnuplot-nox fonts-dejavu-core
)
TEST_PACKAGES=(
  # build and lint: the sanitizer tree, formatting, shell checks
  lld clang-format shellcheck git clang-14 libclang-rt-14-dev libgtest-dev libgmock-dev
  # node_exporter as the exporter benchmark's baseline; its service is never started here
  prometheus-node-exporter
  # the alerts test delivers to a real Alertmanager (on loopback)
  prometheus-alertmanager
  # the central store: the plugin's remote_write target, the monitor's
  # evidence in store mode and `jobmon diagnose --store`; tests run it on
  # their own loopback/bridge port, never the package's service
  victoria-metrics
  # checks the Debian package (package_live); dpkg-shlibdeps comes with build-essential
  lintian
  # the package's manual pages, made from each command's --help and --version
  help2man
  # systemd-analyze checks the packaged unit (tests/unit/scripts/systemd_unit_test.sh)
  systemd
  # HTTP checks in the integration tests (kmsg_restrict, ray_metrics_live)
  curl
  # the independent TensorBoard event decoder, tests and benchmarks
  python3-protobuf python3-crc32c time
  # real PyTorch (CPU, gloo) jobs on the dev cluster make the real-program log fixtures
  python3-torch
  # real tqdm progress bars (tests/fixtures/real/tqdm/make_fixtures.sh)
  python3-tqdm
  # the HTML report looked at in headless Chromium, its screenshot and the
  # chart's pixels read with Pillow (tests/unit/cli/html_report_check.py)
  chromium python3-pil
)
PACKAGES=("${DEMO_PACKAGES[@]}" "${TEST_PACKAGES[@]}")
case ${1:-} in
  --demo) PACKAGES=("${DEMO_PACKAGES[@]}") ;;
  "") ;;
  *) echo "usage: $0 [--demo]" >&2; exit 2 ;;
esac

APT_GET=${JOBMON_APT_GET:-apt-get}
DPKG_QUERY=${JOBMON_DPKG_QUERY:-dpkg-query}
POLICY_RC=${JOBMON_POLICY_RC:-/usr/sbin/policy-rc.d}

if [[ $EUID -ne 0 && -z ${JOBMON_APT_GET:-} ]]; then
  echo "install-deps: run as root (apt-get install)" >&2
  exit 1
fi

missing=()
for package in "${PACKAGES[@]}"; do
  # shellcheck disable=SC2016 # ${Status} is dpkg-query's format field, not ours
  "$DPKG_QUERY" -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

# Keep package maintainer scripts from starting system munge/slurm daemons
# (they would hold Slurm's ports). A policy file that was already there
# (Debian's container images ship one) is the image's: left as it is.
created_policy=0
cleanup() {
  local status=$?
  if [[ $created_policy -eq 1 ]]; then
    rm -f "$POLICY_RC"
  fi
  # The trap's own last test must not become the script's exit status.
  exit "$status"
}
trap cleanup EXIT
if [[ ! -e $POLICY_RC ]]; then
  printf '#!/bin/sh\nexit 101\n' >"$POLICY_RC"
  chmod 0755 "$POLICY_RC"
  created_policy=1
fi

echo "install-deps: apt-get update"
status=0
"$APT_GET" update -q || status=$?
if [[ $status -ne 0 ]]; then
  echo "install-deps: error: 'apt-get update' failed (exit $status); check the package sources and the network" >&2
  exit "$status"
fi
echo "install-deps: installing ${missing[*]}"
DEBIAN_FRONTEND=noninteractive "$APT_GET" install -y -q --no-install-recommends "${missing[@]}" ||
  status=$?
if [[ $status -ne 0 ]]; then
  echo "install-deps: error: 'apt-get install' failed (exit $status) for: ${missing[*]}" >&2
  exit "$status"
fi
echo "install-deps: installed ${#missing[@]} packages"
