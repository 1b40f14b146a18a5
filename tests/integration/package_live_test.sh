#!/usr/bin/env bash
# The Debian package end to end: cpack it from the build the
# tests use, check its contents and control files, lintian it, dpkg -i it,
# run the dev cluster from the installed files (the plugin in Slurm's plugin
# dir, its default /usr/bin tools, the packaged rules), then dpkg -r and
# dpkg -P. Root. Refuses to run when a jobmon package is already on the
# machine (it would be someone else's install). The package, and the jobmon
# user and group when this test made them, are removed on every path.
set -uo pipefail

DEVCLUSTER="" BUILD="" PROMQ=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --devcluster) DEVCLUSTER=$2; shift 2 ;;
    --build-dir) BUILD=$2; shift 2 ;;
    --promq) PROMQ=$2; shift 2 ;;
    *) echo "usage: $0 --devcluster PATH --build-dir DIR --promq PATH" >&2; exit 2 ;;
  esac
done
[[ -x "$DEVCLUSTER" && -f "$BUILD/CPackConfig.cmake" && -x "$PROMQ" ]] || { echo "missing arguments" >&2; exit 2; }
[[ $EUID -eq 0 ]] || { echo "needs root (dpkg -i, Slurm daemons)" >&2; exit 2; }
DEVCLUSTER=$(realpath "$DEVCLUSTER") BUILD=$(realpath "$BUILD") PROMQ=$(realpath "$PROMQ")
# shellcheck source=tests/integration/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# shellcheck disable=SC2016 # ${Status} is dpkg-query's field
pkg_status() { dpkg-query -W -f='${Status}' jobmon 2>/dev/null; }
if [[ -n "$(pkg_status)" && "$(pkg_status)" != "unknown ok not-installed" ]]; then
  echo "package_live: a jobmon package is already on this machine ($(pkg_status)); not touching" \
    "someone else's install. Remove it (dpkg -P jobmon) and run again." >&2
  exit 1
fi
made_user=0 made_group=0
getent passwd jobmon >/dev/null || made_user=1
getent group jobmon >/dev/null || made_group=1

STATE=$(mktemp -d /tmp/jobmon-it-XXXXXX)
SUBNET=10.210.$((RANDOM % 200 + 20))
SCRATCH=$(mktemp -d /tmp/jobmon-it-logs-XXXXXX)
PLUGIN_SO=/usr/lib/x86_64-linux-gnu/slurm-wlm/spank_diag.so
RULES=/usr/share/jobmon/jobmon-rules.yml

cleanup() {
  "$DEVCLUSTER" down --state "$STATE" >/dev/null 2>&1
  # Whatever state the test left it in: gone, conffiles included.
  if [[ -n "$(pkg_status)" && "$(pkg_status)" != "unknown ok not-installed" ]]; then
    dpkg -P jobmon >/dev/null 2>&1 || echo "# cleanup: dpkg -P jobmon failed" >&2
  fi
  # The package keeps its user on purge; this test removes what it made.
  [[ $made_user -eq 1 ]] && getent passwd jobmon >/dev/null && userdel jobmon
  [[ $made_group -eq 1 ]] && getent group jobmon >/dev/null && groupdel jobmon
  teardown_cluster jobmon-pkg
}
trap cleanup EXIT

echo "# cpack -G DEB in $BUILD"
(cd "$BUILD" && cpack -G DEB -B "$SCRATCH/pkg" >"$SCRATCH/cpack.log" 2>&1)
DEB=$(find "$SCRATCH/pkg" -maxdepth 1 -name 'jobmon_*_amd64.deb' | head -1)
check "cpack made a .deb" test -s "$DEB"
[[ -s "$DEB" ]] || { cat "$SCRATCH/cpack.log"; finish; exit 1; }

dpkg-deb -c "$DEB" | awk '{print $6}' | sed 's|^\./|/|' >"$SCRATCH/contents"
for path in /usr/bin/jobmon /usr/bin/jobmon-exporter /usr/bin/jobmon-supervise /usr/bin/jobmon-archive \
  /usr/sbin/slurm_job_monitor "$PLUGIN_SO" /etc/jobmon/jobmon.toml /etc/slurm/plugstack.conf.d/diag.conf \
  /lib/systemd/system/slurm_job_monitor.service "$RULES" /usr/share/jobmon/jobmon-job.json \
  /usr/share/doc/jobmon/copyright /usr/share/doc/jobmon/changelog.Debian.gz \
  /usr/share/man/man1/jobmon.1.gz /usr/share/man/man1/jobmon-exporter.1.gz \
  /usr/share/man/man1/jobmon-supervise.1.gz /usr/share/man/man1/jobmon-archive.1.gz \
  /usr/share/man/man8/slurm_job_monitor.8.gz; do
  check "the package holds $path" grep -qx -- "$path" "$SCRATCH/contents"
done
check "the fake trainer is not in it" bash -c "! grep -q fake-trainer '$SCRATCH/contents'"
# Unreadable by the job's user: non-dumpable from exec, so the kernel log's
# descriptor they hold cannot be taken (spank/lifecycle/kmsg_handoff.h).
for program in jobmon-exporter jobmon-supervise; do
  check "$program is packaged -rwx--x--x (0711)" bash -c \
    "dpkg-deb -c '$DEB' | grep -E '^-rwx--x--x .* \./usr/bin/$program\$'"
done
dpkg-deb --ctrl-tarfile "$DEB" | tar -xO ./conffiles >"$SCRATCH/conffiles"
check "conffiles: jobmon.toml and diag.conf" test "$(sort "$SCRATCH/conffiles" | tr '\n' ' ')" == \
  "/etc/jobmon/jobmon.toml /etc/slurm/plugstack.conf.d/diag.conf "
depends=$(dpkg-deb -f "$DEB" Depends)
series=$(dpkg-query -W -f='${Version}' slurm-wlm-basic-plugins | cut -d. -f1-2)
check "Depends pins the Slurm series the plugin was built for ($series)" \
  grep -q "slurm-wlm-basic-plugins (>= $series)" <<<"$depends"
check "Depends has the shared libraries (shlibdeps)" grep -q "libsqlite3-0" <<<"$depends"
check "the version is the project's" test "$(dpkg-deb -f "$DEB" Version)" == \
  "$(sed -n 's/^project(jobmon VERSION \([0-9.]*\).*/\1/p' "$(dirname "$DEVCLUSTER")/../../CMakeLists.txt")-1"
lintian --fail-on error,warning "$DEB" >"$SCRATCH/lintian.out" 2>&1
check "lintian: no error or warning (overrides explained in contrib/debian)" test $? -eq 0
grep -E '^[EW]:' "$SCRATCH/lintian.out"

echo "# dpkg -i"
dpkg -i "$DEB" >"$SCRATCH/dpkg-i.log" 2>&1
check "dpkg -i installs it" test "$(pkg_status)" == "install ok installed"
check "the jobmon system user and group exist" bash -c \
  "uid=\$(id -u jobmon) && test \"\$uid\" -lt 1000 && getent group jobmon >/dev/null"
check "its manual pages are the installed commands' own (name and version)" bash -c \
  "v=\$(dpkg-query -W -f='\${Version}' jobmon | cut -d- -f1) && \
   zcat /usr/share/man/man8/slurm_job_monitor.8.gz | grep -qF \"slurm_job_monitor \$v\" && \
   zcat /usr/share/man/man1/jobmon.1.gz | grep -q '^jobmon \\\\- '"
check "postinst made no home for it (/var/lib/jobmon stays root's for the plugin)" bash -c \
  "test ! -e /var/lib/jobmon || test \"\$(stat -c %U /var/lib/jobmon)\" == root"
check "slurm_job_monitor --version is the package's" bash -c \
  "/usr/sbin/slurm_job_monitor --version | grep -qF \"\$(dpkg-query -W -f='\${Version}' jobmon | cut -d- -f1)\""
check "slurm_job_monitor --help runs from /usr/sbin" bash -c "/usr/sbin/slurm_job_monitor --help | grep -q -- --config"
check "jobmon --version is the package's" bash -c \
  "/usr/bin/jobmon --version | grep -qF \"\$(dpkg-query -W -f='\${Version}' jobmon | cut -d- -f1)\""
check "the packaged plugstack line loads the installed plugin with the packaged rules" \
  grep -qx "optional $PLUGIN_SO rule_file=$RULES" /etc/slurm/plugstack.conf.d/diag.conf
check "the packaged rules pass promtool" promtool check rules "$RULES"

echo "# dev cluster from the installed files: 1 node on $SUBNET.0/24"
if ! "$DEVCLUSTER" up --nodes 1 --state "$STATE" --subnet "$SUBNET" --plugin "$PLUGIN_SO" \
  --plugin-args "rule_file=$RULES" --timeout 90 >"$SCRATCH/up.log" 2>&1; then
  cat "$SCRATCH/up.log"
  echo "FAIL - devcluster up"
  failed=$((failed + 1))
  finish
  exit 1
fi
devcluster_env "$DEVCLUSTER" "$STATE"
# No exporter=/supervisor=/archiver= on the line: the tools below are the
# plugin's compiled-in defaults, the package's /usr/bin paths.
check "slurmd's plugstack line names only the installed plugin, no tool path" bash -c \
  "grep -q '^optional $PLUGIN_SO ' '$STATE/etc/plugstack.conf' && ! grep -qE 'build/|exporter=|supervisor=|archiver=' '$STATE/etc/plugstack.conf'"
job=$(cd "$DEVCLUSTER_JOBS" && sbatch --parsable --diag=on -N1 -o "$DEVCLUSTER_JOBS/pkg-%j.log" --wrap "sleep 20")
DIAG=$DEVCLUSTER_JOBS/jobmon-diag-$job
check "a --diag=on job's manifest appears" wait_for 30 test -s "$DIAG/manifest.json"
port=$(checks field "$DIAG/manifest.json" prometheus.port 2>/dev/null || echo 0)
check "the job's exporter is /usr/bin/jobmon-exporter under /usr/bin/jobmon-supervise" bash -c \
  "pgrep -af '^/usr/bin/jobmon-exporter ' | grep -q -- '$DIAG' && pgrep -af '^/usr/bin/jobmon-supervise ' | grep -q -- '$DIAG'"
in_node1() { ip netns exec "$DEVCLUSTER_TAG-node1" "$@"; }
scraped() { [[ "$(in_node1 "$PROMQ" "http://127.0.0.1:$port" 'up{job="jobmon-exporter"}' 2>/dev/null)" == *" 1" ]]; }
check "its Prometheus scrapes the installed exporter" wait_for 30 scraped
rule_count() {
  in_node1 /usr/bin/python3 -c 'import json,sys,urllib.request
r = json.load(urllib.request.urlopen(sys.argv[1] + "/api/v1/rules", timeout=5))
print(sum(len(g["rules"]) for g in r["data"]["groups"]))' "http://127.0.0.1:$port"
}
packaged=$(grep -cE '^ *- alert:' "$RULES")
check "its Prometheus evaluates the $packaged packaged rules (rule_file=)" test "$(rule_count)" == "$packaged"
archived() { [[ "$(checks field "$DIAG/manifest.json" state 2>/dev/null)" == archived ]]; }
check "the installed jobmon-archive archives the TSDB after the job" wait_for 90 archived
/usr/bin/jobmon diagnose "$DIAG/tsdb.tar.zst" --json >"$SCRATCH/diagnose.json" 2>"$SCRATCH/diagnose.err"
diagnose_rc=$?
check "jobmon diagnose (installed) serves and reads the archive (exit 0 or 3: diagnosed)" \
  test "$diagnose_rc" -eq 0 -o "$diagnose_rc" -eq 3
"$DEVCLUSTER" down --state "$STATE" >/dev/null 2>&1

echo "# dpkg -r, then dpkg -P"
dpkg -r jobmon >"$SCRATCH/dpkg-r.log" 2>&1
check "dpkg -r removes it, config files stay" test "$(pkg_status)" == "deinstall ok config-files"
check "the binaries and the plugin are gone" bash -c \
  "! ls /usr/bin/jobmon /usr/bin/jobmon-exporter /usr/sbin/slurm_job_monitor $PLUGIN_SO $RULES 2>/dev/null | grep -q ."
check "the conffiles are kept" test -s /etc/jobmon/jobmon.toml -a -s /etc/slurm/plugstack.conf.d/diag.conf
check "the jobmon user is kept" bash -c "getent passwd jobmon >/dev/null"
dpkg -P jobmon >"$SCRATCH/dpkg-p.log" 2>&1
check "dpkg -P purges it" bash -c "test -z \"\$(dpkg-query -W -f='\${Status}' jobmon 2>/dev/null | grep -v not-installed)\""
check "the conffiles are gone" test ! -e /etc/jobmon/jobmon.toml -a ! -e /etc/slurm/plugstack.conf.d/diag.conf
check "the jobmon user stays on purge (its files may remain)" bash -c "getent passwd jobmon >/dev/null"
finish
