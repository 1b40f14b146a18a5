#!/bin/bash
# Ray's own metrics reach a job's Prometheus (docs/ray.md): in a network
# namespace of its own, the Ray stand-in (contrib/fake-ray/fake_ray_node.py,
# Ray 2.32's gauges and discovery file) on a private address, the head's
# jobmon-exporter serving Ray's targets at /ray/sd, and Debian's Prometheus
# with the ray scrape job the plugin writes (http_sd). Checks the targets'
# labels, the ray_* series in the TSDB, and that a discovery file another
# user owns is refused. Root (the namespace); removes it on every way out.
set -euo pipefail

exporter="" prometheus=/usr/bin/prometheus
while [ $# -gt 0 ]; do
  case "$1" in
    --exporter) exporter=$2; shift 2 ;;
    --prometheus) prometheus=$2; shift 2 ;;
    *) echo "usage: $0 --exporter PATH [--prometheus PATH]" >&2; exit 2 ;;
  esac
done
if [ ! -x "$exporter" ]; then echo "usage: $0 --exporter PATH [--prometheus PATH]" >&2; exit 2; fi
if [ "$(id -u)" != 0 ] || [ ! -x "$prometheus" ]; then
  echo "SKIP: needs root (a network namespace) and $prometheus"
  exit 77
fi
here=$(dirname "$(realpath "$0")")
node=$here/../../contrib/fake-ray/fake_ray_node.py
ns="jm-ray-$$"
tmp=$(mktemp -d /tmp/jobmon-ray-test.XXXXXX)
chmod 755 "$tmp"
cleanup() {
  local rc=$?
  # Every process in the namespace is this test's.
  for pid in $(ip netns pids "$ns" 2>/dev/null); do kill "$pid" 2>/dev/null || true; done
  sleep 0.5
  for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null || true; done
  ip netns del "$ns" 2>/dev/null || true
  rm -rf "$tmp"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
fail() { echo "FAIL: $*" >&2; for f in "$tmp"/*.log; do echo "--- $f" >&2; tail -20 "$f" >&2; done; exit 1; }

ip netns add "$ns"
in_ns() { ip netns exec "$ns" "$@"; }
in_ns ip link set lo up
in_ns ip link add jmray0 type veth peer name jmray1
in_ns ip addr add 10.250.0.1/24 dev jmray0
in_ns ip link set jmray0 up
in_ns ip link set jmray1 up

mkdir "$tmp/ray" "$tmp/tsdb"
discovery=$tmp/ray/prom_metrics_service_discovery.json
in_ns timeout 120 /usr/bin/python3 "$node" --listen 10.250.0.1:44211 --gpus 2 \
  --discovery-file "$discovery" --targets 10.250.0.1:44211 --seconds 110 >"$tmp/node.log" 2>&1 &
in_ns timeout 120 "$exporter" --listen 10.250.0.1:9400 --host node1 --collectors host \
  --ray-discovery "$discovery" --ray-owner 0 --allow 10.0.0.0/8 >"$tmp/exporter.log" 2>&1 &
cat >"$tmp/prometheus.yml" <<YML
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: ray
    http_sd_configs:
      - url: "http://10.250.0.1:9400/ray/sd"
        refresh_interval: 5s
YML
in_ns timeout 120 "$prometheus" --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/tsdb" \
  --web.listen-address=127.0.0.1:19090 >"$tmp/prometheus.log" 2>&1 &

sd="" series=""
for _ in $(seq 60); do
  sd=$(in_ns curl -s --max-time 2 http://10.250.0.1:9400/ray/sd || true)
  series=$(in_ns curl -s --max-time 2 \
    'http://127.0.0.1:19090/api/v1/query?query=ray_node_gpus_utilization' || true)
  [[ "$series" == *'"GpuIndex":"1"'* ]] && break
  sleep 0.5
done
echo "/ray/sd: $sd"
[[ "$sd" == *'"targets":["10.250.0.1:44211"]'* ]] || fail "no Ray target in /ray/sd"
[[ "$sd" == *'"host":"10.250.0.1"'* && "$sd" == *'"jobmon_source":"ray"'* ]] ||
  fail "the target lacks host / jobmon_source"
echo "series: $series"
[[ "$series" == *'"__name__":"ray_node_gpus_utilization"'* ]] || fail "no ray_* series in Prometheus"
[[ "$series" == *'"host":"10.250.0.1"'* && "$series" == *'"GpuIndex":"0"'* &&
  "$series" == *'"GpuIndex":"1"'* ]] || fail "ray series without host or a GPU"

# Another user's Ray on a shared node is not the job's.
chown nobody "$discovery"
sleep 0.1
status=$(in_ns curl -s -o /dev/null -w '%{http_code}' --max-time 2 http://10.250.0.1:9400/ray/sd)
[ "$status" = 503 ] || fail "a discovery file another user owns answered $status"
# Nothing listens on a wildcard address.
if in_ns ss -ltnH | awk '{print $4}' | grep -Eq '^(0\.0\.0\.0|\*|\[::\]):'; then
  fail "a wildcard listener: $(in_ns ss -ltnH)"
fi
echo "PASS: Ray's series in the job's Prometheus, labelled; another user's file refused"
