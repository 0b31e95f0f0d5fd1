#!/bin/sh
# shellcheck disable=SC2016,SC2015 # dpkg-query's ${Field} are literal; A && B || fail is meant
# packaging/deb/test.sh: proves out/deb/physd_<version>_arm64.deb on arm64
# Debian 12, on any amd64 (or arm64) machine. Run by `make deb-test`
# (docs/packaging.md); root or sudo.
#
# A fresh arm64 bookworm root (lib.sh: debootstrap once, then the cached
# tarball) gets the package with `apt install ./physd_…_arm64.deb`, which
# resolves its Depends from the Debian mirror; then, as arm64 programs under
# qemu: physd version, sim, estimate (certified, exit 0), config check of
# the installed /etc/physd/physd.yaml; the conffile and the unit are checked,
# the service must not be enabled; an edited conffile must survive a
# reinstall without a prompt; and the maintainer scripts' systemd calls are
# checked with systemd "running" (a recording systemctl): install, upgrade,
# remove and purge.
set -eu
umask 022

: "${DEB_OUT:=out/deb}"
mkdir -p "$DEB_OUT"
DEB_OUT=$(cd "$DEB_OUT" && pwd)
here=packaging/deb
# shellcheck source=packaging/deb/lib.sh
. $here/lib.sh

version=$(sh $here/version.sh)
deb=$DEB_OUT/physd_${version}_arm64.deb
[ -s "$deb" ] || { echo "test.sh: no $deb (make deb)" >&2 && exit 1; }
T=$DEB_OUT/test-root

fail() {
	echo "deb-test: FAIL: $*" >&2
	echo "deb-test: the root is left in $T" >&2
	exit 1
}
ok() {
	echo "  ok: $*"
	passed=$((passed + 1))
}
cleanup() { roots_cleanup; }
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
t_all=$(date +%s)
passed=0

# The root.
t0=$(date +%s)
had_tarball=yes
[ -s "$BASE_TARBALL" ] || had_tarball=no
base_tarball
root_made_s=$(($(date +%s) - t0))
t0=$(date +%s)
extract_root "$T"
mount_proc "$T"
root_s=$(($(date +%s) - t0))
echo "test root: $T ($([ $had_tarball = yes ] && echo "from the cached tarball" || echo "debootstrapped in $root_made_s s"), extracted in $root_s s)"

# Install as a user would: apt resolves Depends (and Recommends: ffmpeg).
# (--force-unsafe-io: no fsync per file, the root is thrown away.)
t0=$(date +%s)
as_root cp "$deb" "$T/tmp/"
in_root "$T" apt-get update -q >"$DEB_OUT/test-apt.log" 2>&1 || { tail "$DEB_OUT/test-apt.log"; fail "apt-get update"; }
in_root "$T" apt-get install -y -q -o Dpkg::Options::=--force-unsafe-io "/tmp/$(basename "$deb")" >>"$DEB_OUT/test-apt.log" 2>&1 ||
	{ tail -30 "$DEB_OUT/test-apt.log"; fail "apt install ./$(basename "$deb")"; }
install_s=$(($(date +%s) - t0))
npkgs=$(grep -c '^Unpacking ' "$DEB_OUT/test-apt.log" || true)
ok "apt install ./$(basename "$deb"): $npkgs packages unpacked in $install_s s (log: $DEB_OUT/test-apt.log)"
grep -q 'physd: installed, not started' "$DEB_OUT/test-apt.log" || fail "postinst did not print its first-install notice"
[ "$(in_root "$T" dpkg-query -W -f '${Status} ${Version}' physd)" = "install ok installed $version" ] || fail "dpkg-query physd"
ok "dpkg: physd $version installed"

# Files, conffile, unit, not enabled.
[ -x "$T/usr/bin/physd" ] || fail "/usr/bin/physd"
in_root "$T" dpkg-query -W -f '${Conffiles}\n' physd | grep -q '^ /etc/physd/physd.yaml [0-9a-f]\{32\}$' ||
	fail "/etc/physd/physd.yaml is not a conffile"
cmp -s "$T/etc/physd/physd.yaml" config/physd.example.yaml || fail "/etc/physd/physd.yaml is not config/physd.example.yaml"
ok "/etc/physd/physd.yaml: a conffile, config/physd.example.yaml"
grep -q '^ExecStart=/usr/bin/physd run --config /etc/physd/physd.yaml$' "$T/lib/systemd/system/physd.service" ||
	fail "unit ExecStart"
enabled=$(in_root "$T" systemctl is-enabled physd.service 2>&1 || true)
[ "$enabled" = disabled ] || fail "systemctl is-enabled physd: '$enabled' (want disabled)"
[ ! -e "$T/etc/systemd/system/multi-user.target.wants/physd.service" ] || fail "physd.service is enabled"
ok "/lib/systemd/system/physd.service: ExecStart=/usr/bin/physd; systemctl is-enabled: disabled"
in_root "$T" sh -c 'id physd' >/dev/null 2>&1 && fail "a static physd user exists (the unit has DynamicUser=yes)"
verify=$(in_root "$T" systemd-analyze verify /lib/systemd/system/physd.service 2>&1 || true)
if [ -n "$verify" ]; then echo "$verify"; fail "systemd-analyze verify physd.service (in the root)"; fi
ok "systemd-analyze verify physd.service (arm64, in the root): clean"
reload_line=$(sed -n 's/^ExecReload=//p' "$T/lib/systemd/system/physd.service")
[ "$reload_line" = '/usr/bin/physd reload --config /etc/physd/physd.yaml $MAINPID' ] ||
	fail "unit ExecReload: '$reload_line' (want the packaged physd, no kill(1))"
ok "ExecReload=$reload_line: no command the package does not bring"

# The arm64 binary, under qemu.
t0=$(date +%s)
out=$(in_root "$T" physd version) || fail "physd version"
[ "$out" = "physd $version" ] || fail "physd version: '$out'"
ok "physd version: $out"
in_root "$T" physd sim /tmp/c.mp4 || fail "physd sim /tmp/c.mp4"
ok "physd sim /tmp/c.mp4 (through ffmpeg, arm64)"
te=$(date +%s)
in_root "$T" physd estimate -json /tmp/c.mp4 >"$DEB_OUT/test-estimate.json" || fail "physd estimate exit status $?"
est_s=$(($(date +%s) - te))
grep -q '^  "certified": true,$' "$DEB_OUT/test-estimate.json" || fail "physd estimate -json: not \"certified\": true"
g=$(sed -n 's/^  "gamma\([01]\)": \([0-9.]*\),$/γ\1=\2/p' "$DEB_OUT/test-estimate.json" | tr '\n' ' ')
ok "physd estimate -json /tmp/c.mp4: exit 0, certified, $g(${est_s} s under qemu)"
out=$(in_root "$T" physd config check /etc/physd/physd.yaml) || fail "physd config check: $out"
ok "physd config check /etc/physd/physd.yaml: $out"
run_s=$(($(date +%s) - t0))

# `systemctl reload physd` without a running systemd: the daemon as the
# unit starts it, then the unit's ExecReload line with $MAINPID and the
# configuration's path substituted (loopback ports chosen by the kernel,
# so nothing on the host is in the way). It must reach the daemon as
# SIGHUP (the daemon logs the reload), and an invalid configuration must
# fail the reload with nothing sent (the daemon keeps running).
t0=$(date +%s)
printf 'log: {level: info, format: text}\nhttp: {listen: "127.0.0.1:0"}\nnats: {embedded: {listen: "127.0.0.1:0", jetstream: false}}\n' |
	as_root tee "$T/tmp/reload.yaml" >/dev/null
mainpid=$(in_root "$T" sh -c 'physd run --config /tmp/reload.yaml --state-dir /tmp/reload-state >/tmp/reload.log 2>&1 & echo $!')
up=no
for _ in $(seq 1 120); do
	grep -q 'msg="physd running"' "$T/tmp/reload.log" 2>/dev/null && up=yes && break
	sleep 0.5
done
[ $up = yes ] || { cat "$T/tmp/reload.log"; as_root kill "$mainpid" 2>/dev/null || true; fail "physd run did not come up in 60 s (for the reload check)"; }
# shellcheck disable=SC2086 # the unit's line, split into words as systemd does
set -- $(printf '%s\n' "$reload_line" | sed -e "s#\$MAINPID#$mainpid#" -e 's#/etc/physd/physd.yaml#/tmp/reload.yaml#')
in_root "$T" "$@" >"$DEB_OUT/test-reload.log" 2>&1 || { cat "$DEB_OUT/test-reload.log"; as_root kill "$mainpid" 2>/dev/null || true; fail "ExecReload: $*"; }
got=no
for _ in $(seq 1 40); do
	grep -q 'msg="configuration reloaded"' "$T/tmp/reload.log" && got=yes && break
	sleep 0.25
done
[ $got = yes ] || { cat "$T/tmp/reload.log"; as_root kill "$mainpid" 2>/dev/null || true; fail "the daemon did not log a reload after ExecReload"; }
ok "ExecReload ($*): SIGHUP reached physd (pid $mainpid), which logged 'configuration reloaded'"
echo 'http: {listen: 7}' | as_root tee -a "$T/tmp/reload.yaml" >/dev/null
if in_root "$T" "$@" >"$DEB_OUT/test-reload.log" 2>&1; then
	as_root kill "$mainpid" 2>/dev/null || true
	fail "ExecReload succeeded with an invalid configuration"
fi
grep -q 'not signalled' "$DEB_OUT/test-reload.log" || { cat "$DEB_OUT/test-reload.log"; fail "ExecReload on an invalid configuration: no reason"; }
sleep 1
as_root kill -0 "$mainpid" 2>/dev/null || fail "physd exited after a refused reload"
[ "$(grep -c 'msg="configuration reloaded"' "$T/tmp/reload.log")" = 1 ] || fail "a refused reload reached the daemon"
ok "ExecReload with an invalid configuration: fails ($(head -c 160 "$DEB_OUT/test-reload.log" | tr '\n' ' ')), nothing sent, physd still running"
as_root kill -TERM "$mainpid"
for _ in $(seq 1 60); do as_root kill -0 "$mainpid" 2>/dev/null || break; sleep 0.5; done
! as_root kill -0 "$mainpid" 2>/dev/null || { as_root kill -KILL "$mainpid" 2>/dev/null || true; fail "physd did not stop on SIGTERM in 30 s"; }
reload_s=$(($(date +%s) - t0))

# An edited conffile survives a reinstall, with no prompt (stdin closed:
# a prompt would fail dpkg).
echo "# edited by deb-test" | as_root tee -a "$T/etc/physd/physd.yaml" >/dev/null
in_root "$T" dpkg -i "/tmp/$(basename "$deb")" </dev/null >"$DEB_OUT/test-dpkg.log" 2>&1 ||
	{ cat "$DEB_OUT/test-dpkg.log"; fail "dpkg -i again"; }
tail -1 "$T/etc/physd/physd.yaml" | grep -qx '# edited by deb-test' || fail "the edited /etc/physd/physd.yaml was replaced"
ok "dpkg -i again: the edited /etc/physd/physd.yaml kept, no prompt"

# The maintainer scripts with systemd "running": /run/systemd/system exists
# and systemctl (first on PATH) records its arguments and succeeds.
as_root mkdir -p "$T/run/systemd/system"
printf '#!/bin/sh\necho "$*" >>/tmp/systemctl.log\n' | as_root tee "$T/usr/local/sbin/systemctl" >/dev/null
as_root chmod 0755 "$T/usr/local/sbin/systemctl"
calls() { # STEP CMD...: run CMD, print the systemctl calls it made
	as_root rm -f "$T/tmp/systemctl.log"
	shift
	in_root "$T" "$@" </dev/null >>"$DEB_OUT/test-dpkg.log" 2>&1 || fail "$*"
	as_root cat "$T/tmp/systemctl.log" 2>/dev/null | awk '{ printf "%s%s", (NR > 1 ? "; " : ""), $0 }' || true
}
c=$(calls upgrade dpkg -i "/tmp/$(basename "$deb")")
[ "$c" = "--system daemon-reload; try-restart physd.service" ] || fail "upgrade: systemctl calls '$c'"
ok "upgrade/reinstall with systemd: systemctl $c (restarts only if running)"
c=$(calls remove dpkg -r physd)
[ "$c" = "stop physd.service; --system daemon-reload" ] || fail "remove: systemctl calls '$c'"
[ -f "$T/etc/physd/physd.yaml" ] && [ ! -e "$T/usr/bin/physd" ] || fail "remove: conffile gone or binary left"
ok "remove with systemd: systemctl $c; /etc/physd/physd.yaml kept"
as_root mkdir -p "$T/var/lib/private/physd" "$T/etc/systemd/system/multi-user.target.wants"
as_root touch "$T/var/lib/private/physd/checkpoint"
as_root ln -s private/physd "$T/var/lib/physd"
as_root ln -s /lib/systemd/system/physd.service "$T/etc/systemd/system/multi-user.target.wants/physd.service"
c=$(calls purge dpkg -P physd)
[ "$c" = "--system daemon-reload" ] || fail "purge: systemctl calls '$c'"
for p in /etc/physd /var/lib/physd /var/lib/private/physd /etc/systemd/system/multi-user.target.wants/physd.service; do
	[ ! -e "$T$p" ] && [ ! -L "$T$p" ] || fail "purge left $p"
done
ok "purge with systemd: systemctl $c; /etc/physd, /var/lib/physd (and private/), the enable link removed"
c=$(calls install dpkg -i "/tmp/$(basename "$deb")")
[ "$c" = "--system daemon-reload" ] || fail "install: systemctl calls '$c'"
ok "first install with systemd: systemctl $c (not enabled, not started)"
as_root rm -rf "$T/run/systemd/system" "$T/usr/local/sbin/systemctl"

roots_cleanup
as_root rm -rf "$T"
all_s=$(($(date +%s) - t_all))
echo
echo "deb-test: $passed checks passed: $(basename "$deb") ($(($(stat -c %s "$deb") / 1024)) KiB) on arm64 Debian 12 under qemu"
echo "  root: $([ $had_tarball = yes ] && echo "cached tarball" || echo "debootstrap $root_made_s s"), extract $root_s s;" \
	"apt install $install_s s; physd commands $run_s s (estimate $est_s s); reload $reload_s s; total $all_s s"
