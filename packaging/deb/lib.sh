# shellcheck shell=sh disable=SC2016
# packaging/deb/lib.sh: the arm64 Debian 12 roots of build.sh and test.sh
# (sourced, POSIX sh).
#
# A bookworm arm64 root is debootstrapped once (minbase + systemd) and kept
# as a tarball, $DEB_CACHE/bookworm-arm64-base.tar.gz. From it:
#   - the build root ($DEB_CACHE/arm64-buildroot, kept): the tarball plus
#     libopencv-dev and dpkg-dev installed by apt inside it. The arm64 binary
#     is cross-compiled against it (gcc --sysroot) and dpkg-shlibdeps runs
#     inside it. (Installing libopencv-dev:arm64 next to the amd64 one with
#     multiarch is not possible on Debian 12: apt removes the amd64 OpenCV,
#     GDAL and VTK to do it; see docs/packaging.md.)
#   - the test root of test.sh: the tarball again, fresh each run.
#
# arm64 programs in a root run under qemu-user-static through the kernel's
# binfmt_misc: a Debian host with systemd has a qemu-aarch64 handler
# registered by qemu-user-static already. Where none is (a container
# without systemd), arm64_exec registers one for as long as the script runs,
# from qemu-user-static's own /usr/lib/binfmt.d/qemu-aarch64.conf (flag F:
# the interpreter is opened at registration, so it works inside a chroot).
#
# Root or sudo is needed (debootstrap, chroot, mount, binfmt_misc).

: "${DEB_OUT:=out/deb}"
: "${DEB_CACHE:=$DEB_OUT/cache}"
: "${DEB_MIRROR:=http://deb.debian.org/debian}"
: "${DEB_SECURITY_MIRROR:=http://deb.debian.org/debian-security}"
DEB_SUITE=bookworm
# What the build root adds to the base root.
BUILDROOT_PKGS="libopencv-dev libc6-dev libstdc++-12-dev dpkg-dev"
BASE_TARBALL=$DEB_CACHE/$DEB_SUITE-arm64-base.tar.gz
BUILDROOT=$DEB_CACHE/arm64-buildroot
# PATH inside the roots (the host's may name directories they lack).
ROOT_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

as_root() {
	if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

# in_root ROOT CMD...: run CMD (arm64) in ROOT, with a clean environment.
in_root() {
	_r=$1
	shift
	as_root env -i PATH=$ROOT_PATH HOME=/root LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive chroot "$_r" "$@"
}

_mounts=""     # mounted here, unmounted by roots_cleanup (newest first)
_binfmt=""     # binfmt_misc entry registered here
_binfmt_mnt="" # binfmt_misc mounted here

roots_cleanup() {
	for _m in $_mounts; do
		as_root umount "$_m" 2>/dev/null || as_root umount -l "$_m" 2>/dev/null || true
	done
	_mounts=""
	if [ -n "$_binfmt" ]; then
		echo -1 | as_root tee "/proc/sys/fs/binfmt_misc/$_binfmt" >/dev/null 2>&1 || true
		_binfmt=""
	fi
	if [ -n "$_binfmt_mnt" ]; then
		as_root umount /proc/sys/fs/binfmt_misc 2>/dev/null || true
		_binfmt_mnt=""
	fi
}

# mount_proc ROOT: /proc inside ROOT until roots_cleanup (or umount_proc).
mount_proc() {
	as_root mount -t proc proc "$1/proc"
	_mounts="$(cd "$1" && pwd)/proc $_mounts"
}

umount_proc() {
	_p="$(cd "$1" && pwd)/proc"
	as_root umount "$_p"
	_rest=""
	for _m in $_mounts; do [ "$_m" = "$_p" ] || _rest="$_rest $_m"; done
	_mounts=$_rest
}

# arm64_exec ROOT: make `chroot ROOT` run arm64 programs (see the top).
arm64_exec() {
	# A handler without flag F looks for the interpreter inside the root.
	as_root install -m 0755 /usr/bin/qemu-aarch64-static "$1/usr/bin/qemu-aarch64-static"
	as_root chroot "$1" /bin/true 2>/dev/null && return 0
	if [ ! -e /proc/sys/fs/binfmt_misc/register ]; then
		as_root mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
		_binfmt_mnt=1
	fi
	if [ ! -e /proc/sys/fs/binfmt_misc/physd-deb-aarch64 ]; then
		sed 's/^:qemu-aarch64:/:physd-deb-aarch64:/' /usr/lib/binfmt.d/qemu-aarch64.conf |
			as_root tee /proc/sys/fs/binfmt_misc/register >/dev/null
		_binfmt=physd-deb-aarch64
		echo "registered binfmt_misc handler physd-deb-aarch64 (qemu-aarch64-static) until exit"
	fi
	as_root chroot "$1" /bin/true || {
		echo "cannot run arm64 programs in $1 (binfmt_misc, qemu-user-static)" >&2
		return 1
	}
}

# root_sources ROOT: the Debian 12 archive, updates and security.
root_sources() {
	printf 'deb %s %s main\ndeb %s %s-updates main\ndeb %s %s-security main\n' \
		"$DEB_MIRROR" $DEB_SUITE "$DEB_MIRROR" $DEB_SUITE "$DEB_SECURITY_MIRROR" $DEB_SUITE |
		as_root tee "$1/etc/apt/sources.list" >/dev/null
	as_root cp /etc/resolv.conf "$1/etc/resolv.conf"
}

# base_tarball: $BASE_TARBALL, made once (debootstrap: the first stage
# downloads and unpacks on the host, the second configures under qemu).
base_tarball() {
	[ -s "$BASE_TARBALL" ] && return 0
	_t0=$(date +%s)
	_tmp=$DEB_CACHE/base.tmp
	mkdir -p "$DEB_CACHE"
	as_root rm -rf "$_tmp"
	echo "debootstrap $DEB_SUITE arm64 (minbase + systemd) from $DEB_MIRROR (log: $DEB_CACHE/debootstrap.log)"
	as_root debootstrap --arch=arm64 --foreign --variant=minbase --include=systemd \
		$DEB_SUITE "$_tmp" "$DEB_MIRROR" >"$DEB_CACHE/debootstrap.log" 2>&1 ||
		{ tail -20 "$DEB_CACHE/debootstrap.log"; return 1; }
	# In a container debootstrap makes /proc a link to the host's; a
	# chroot needs a directory to mount on.
	if [ -L "$_tmp/proc" ]; then as_root rm "$_tmp/proc" && as_root mkdir "$_tmp/proc"; fi
	arm64_exec "$_tmp"
	in_root "$_tmp" /debootstrap/debootstrap --second-stage >>"$DEB_CACHE/debootstrap.log" 2>&1 ||
		{ tail -20 "$DEB_CACHE/debootstrap.log"; return 1; }
	root_sources "$_tmp"
	in_root "$_tmp" apt-get clean
	as_root find "$_tmp/var/lib/apt/lists" -type f -delete
	as_root rm -f "$_tmp/usr/bin/qemu-aarch64-static"
	as_root tar -C "$_tmp" --numeric-owner -czf "$BASE_TARBALL.tmp" .
	as_root mv "$BASE_TARBALL.tmp" "$BASE_TARBALL"
	as_root rm -rf "$_tmp"
	echo "arm64 base root: $(($(date +%s) - _t0)) s, $BASE_TARBALL $(du -m "$BASE_TARBALL" | cut -f1) MB"
}

# extract_root DIR: a fresh root from the tarball, ready for chroot.
extract_root() {
	as_root rm -rf "$1"
	mkdir -p "$1"
	as_root tar -C "$1" --numeric-owner -xzf "$BASE_TARBALL"
	root_sources "$1"
	arm64_exec "$1"
}

# build_root: $BUILDROOT, made once (and again when BUILDROOT_PKGS changes).
build_root() {
	_stamp=$BUILDROOT/.physd-buildroot
	if [ -f "$_stamp" ] && [ "$(cat "$_stamp")" = "$BUILDROOT_PKGS" ]; then
		arm64_exec "$BUILDROOT"
		return 0
	fi
	base_tarball
	_t0=$(date +%s)
	echo "arm64 build root: apt-get install $BUILDROOT_PKGS (log: $DEB_CACHE/buildroot.log)"
	extract_root "$BUILDROOT"
	mount_proc "$BUILDROOT"
	# shellcheck disable=SC2086
	{ in_root "$BUILDROOT" apt-get update -q &&
		in_root "$BUILDROOT" apt-get install -y -q --no-install-recommends $BUILDROOT_PKGS; } \
		>"$DEB_CACHE/buildroot.log" 2>&1 || { tail -20 "$DEB_CACHE/buildroot.log"; return 1; }
	in_root "$BUILDROOT" apt-get clean
	umount_proc "$BUILDROOT"
	# The cross linker sees the root from outside, where an absolute link
	# (liblapack.so.3 -> /etc/alternatives/...) would point into the host:
	# make such links relative.
	as_root find "$BUILDROOT/usr" "$BUILDROOT/etc/alternatives" -xdev -type l -lname '/*' |
		while read -r l; do
			as_root ln -snf "$(realpath -s -m --relative-to="$(dirname "$l")" "$BUILDROOT$(readlink "$l")")" "$l"
		done
	echo "$BUILDROOT_PKGS" | as_root tee "$_stamp" >/dev/null
	echo "arm64 build root: $(($(date +%s) - _t0)) s, $(as_root du -sm "$BUILDROOT" | cut -f1) MB, $(in_root "$BUILDROOT" dpkg-query -W -f '${Package} ${Version}' libopencv-dev)"
}
