#!/usr/bin/env bash
# Times README's first command (./scripts/demo.sh) the way a new user meets
# it: on a Debian 12 that has only what a new machine of ours comes with
# (the compiler, CMake, GoogleTest, git, Python; .library/env), none of
# jobmon's packages and no build. The new machine is a debootstrap of
# bookworm in DIR, entered with chroot on this machine's kernel and cores;
# the checkout's HEAD is cloned into it. The demo runs twice: the first run
# installs and builds (the figure README's promise is about: at most 6
# minutes), the second finds both done (at most 90 s).
#
# Prints each run's wall time and the lines of its output that look like
# errors from the demo's own waits (there should be none); keeps each run's
# output beside DIR, in DIR.demo-run-N.log. Root only; needs network access to Debian's
# mirror (the machine's apt sources) and about 3 GiB in DIR.
#
# Usage: tests/bench/demo_on_new_debian.sh [--keep] DIR
#   --keep  leave DIR's tree for another look (the mounts are always undone)
# A bench, run by hand: nothing in the test command calls it.
set -euo pipefail

keep=false
if [[ ${1:-} == --keep ]]; then
  keep=true
  shift
fi
if [[ $# -ne 1 || ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
if [[ $(id -u) -ne 0 ]]; then
  echo "demo_on_new_debian: needs root (debootstrap, chroot, mounts)" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(realpath -m "$1")
if [[ -e $dir && -n $(ls -A "$dir" 2>/dev/null) ]]; then
  echo "demo_on_new_debian: $dir exists and is not empty; give a new directory" >&2
  exit 2
fi
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
# What a new machine of this kind has before anything of jobmon's
# (.library/env/machines/cpp.md, "On a new machine").
BASELINE=(g++ gcc make cmake git python3 ca-certificates libgtest-dev libgmock-dev
  libbenchmark-dev clang-format clang-tidy cppcheck gdb valgrind procps iproute2)

mounted=()
cleanup() {
  set +e
  local i
  # The dev cluster's daemons run inside; the demo's own trap stops them,
  # and anything the chroot still runs is found by its root and ended.
  local proc
  for proc in /proc/[0-9]*; do
    if [[ $(readlink "$proc/root" 2>/dev/null) == "$dir" ]]; then kill "${proc#/proc/}" 2>/dev/null; fi
  done
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[i]}" 2>/dev/null; done
  if ! $keep && [[ -d $dir ]] && ! grep -qE " ${dir}[/ ]" /proc/mounts; then rm -rf "$dir"; fi
}
trap cleanup EXIT
bind() {  # bind SRC TARGET-INSIDE
  mkdir -p "$dir$2"
  mount --rbind "$1" "$dir$2"
  mount --make-rslave "$dir$2"
  mounted+=("$dir$2")
}

if ! command -v debootstrap >/dev/null; then
  echo "== installing debootstrap here"
  apt-get install -y -q debootstrap >/dev/null
fi
echo "== a new Debian 12 in $dir (debootstrap, minbase)"
start=$(date +%s)
debootstrap --variant=minbase bookworm "$dir" "$mirror" >"$dir.debootstrap.log" 2>&1 ||
  { tail -20 "$dir.debootstrap.log" >&2; exit 1; }
echo "   $(($(date +%s) - start)) s"
# The new root a mount point of its own, as / is on a machine: `ip netns`
# (the dev cluster's nodes) makes / a slave mount, which a plain directory
# cannot be.
mount --bind "$dir" "$dir"
mounted+=("$dir")
bind /proc /proc
bind /sys /sys
bind /dev /dev
mkdir -p "$dir/run"
mount -t tmpfs tmpfs "$dir/run"
mounted+=("$dir/run")
cp /etc/resolv.conf "$dir/etc/resolv.conf"
cp /etc/apt/sources.list.d/debian.sources "$dir/etc/apt/sources.list.d/" 2>/dev/null &&
  rm -f "$dir/etc/apt/sources.list"
in_new() { chroot "$dir" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@"; }

echo "== what a new machine comes with (not timed): ${BASELINE[*]}"
start=$(date +%s)
in_new bash -c "apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q ${BASELINE[*]} >/dev/null"
echo "   $(($(date +%s) - start)) s"
git clone -q "$root" "$dir/root/jobmon"

for run in 1 2; do
  echo "== ./scripts/demo.sh, run $run"
  start=$(date +%s.%N)
  status=0
  in_new bash -c 'cd /root/jobmon && ./scripts/demo.sh' >"$dir.demo-run-$run.log" 2>&1 || status=$?
  wall=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.0f}')" "$start" "$(date +%s.%N)")
  echo "   run $run: $wall s, exit status $status (output: $dir.demo-run-$run.log)"
  awk 'tolower($0) ~ /no such file|error|warning/ { n++; if (n <= 5) shown = shown "     " $0 "\n" }
       END { printf "   lines that look like errors or warnings: %d\n%s", n, shown }' "$dir.demo-run-$run.log"
  [[ $status -eq 0 ]] || exit 1
done
