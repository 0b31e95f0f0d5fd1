#!/bin/sh
# packaging/deb/build.sh: $DEB_OUT/physd_<version>_<arch>.deb for each arch
# of $DEB_ARCHS (amd64, arm64) for Debian 12 and Raspberry Pi OS bookworm.
# Run by `make deb` from the top of the repository (docs/packaging.md).
#
# The host's own architecture is built natively against the host's OpenCV
# (make deps). arm64 on an amd64 host is cross-compiled by Go and
# gcc-aarch64-linux-gnu against an arm64 Debian 12 root with libopencv-dev
# (lib.sh), and its Depends come from dpkg-shlibdeps run inside that root.
set -eu
umask 022

: "${GO:=go}"
: "${DEB_ARCHS:=amd64 arm64}"
: "${DEB_OUT:=out/deb}"
: "${DEB_MAINTAINER:=physd developers <dev@physd>}"
: "${DEB_LICENSE:=not stated: the repository has no licence file yet}"
mkdir -p "$DEB_OUT"
DEB_OUT=$(cd "$DEB_OUT" && pwd)
here=packaging/deb
# shellcheck source=packaging/deb/lib.sh
. $here/lib.sh
trap roots_cleanup EXIT
trap 'exit 1' INT TERM HUP

version=$(sh $here/version.sh)
SOURCE_DATE_EPOCH=$(git log -1 --format=%ct)
export SOURCE_DATE_EPOCH
host=$(dpkg --print-architecture)
ldflags="-s -w -X main.version=$version"
summary=""

for arch in $DEB_ARCHS; do
	t0=$(date +%s)
	# dpkg-shlibdeps wants debian/control and the package's tree under debian/.
	work=$DEB_OUT/work-$arch
	stage=$work/debian/physd
	rm -rf "$work"
	mkdir -p "$stage/DEBIAN" "$stage/usr/bin" "$stage/lib/systemd/system" \
		"$stage/etc/physd" "$stage/usr/share/doc/physd"
	printf 'Source: physd\n\nPackage: physd\nArchitecture: any\n' >"$work/debian/control"

	# The binary: the cgo build of `make build` (OpenCV's core and imgproc
	# linked, videoio loaded when a capture needs it: packaging/leanbuild.sh),
	# stripped and with the version.
	if [ "$arch" = "$host" ]; then
		tb=$(date +%s)
		CGO_ENABLED=1 GO=$GO GO_LDFLAGS="$ldflags" packaging/leanbuild.sh -trimpath -o "$stage/usr/bin/physd" ./cmd/physd
		build_s=$(($(date +%s) - tb))
		depends=$(cd "$work" && dpkg-shlibdeps -O debian/physd/usr/bin/physd 2>/dev/null)
	elif [ "$arch" = arm64 ] && [ "$host" = amd64 ]; then
		tr=$(date +%s)
		build_root
		root_s=$(($(date +%s) - tr))
		R=$BUILDROOT
		tb=$(date +%s)
		CGO_ENABLED=1 GOOS=linux GOARCH=arm64 \
			CC="aarch64-linux-gnu-gcc --sysroot=$R" CXX="aarch64-linux-gnu-g++ --sysroot=$R" \
			PKG_CONFIG_SYSROOT_DIR="$R" PKG_CONFIG_PATH="" \
			PKG_CONFIG_LIBDIR="$R/usr/lib/aarch64-linux-gnu/pkgconfig:$R/usr/share/pkgconfig" \
			GO=$GO GO_LDFLAGS="$ldflags" packaging/leanbuild.sh -trimpath -o "$stage/usr/bin/physd" ./cmd/physd
		build_s=$(($(date +%s) - tb))
		as_root rm -rf "$R/tmp/physd-deb"
		as_root mkdir -p "$R/tmp/physd-deb"
		as_root cp -r "$work/debian" "$R/tmp/physd-deb/"
		depends=$(in_root "$R" env DEB_HOST_ARCH=arm64 DEB_BUILD_ARCH=arm64 \
			sh -c 'cd /tmp/physd-deb && dpkg-shlibdeps -O debian/physd/usr/bin/physd' 2>/dev/null)
		as_root rm -rf "$R/tmp/physd-deb"
	else
		echo "build.sh: cannot build $arch on $host (amd64 and arm64 on amd64, or the host's own)" >&2
		exit 1
	fi
	depends=$(printf '%s\n' "$depends" | sed -n 's/^shlibs:Depends=//p')
	# videoio is opened with dlopen (stream/capture.cpp), which
	# dpkg-shlibdeps cannot see: the same OpenCV's package, by name.
	case $depends in *libopencv-core406*) depends="$depends, libopencv-videoio406" ;; esac
	case $depends in *libc6*) ;; *) depends= ;; esac
	case $depends in *libopencv-core406*) ;; *)
		echo "build.sh: $arch: dpkg-shlibdeps found no libc6 or no libopencv-core406 dependency" >&2
		exit 1
		;;
	esac

	# The unit, with ExecStart on the packaged binary.
	# shellcheck disable=SC2016 # `make install` is literal
	sed -e 's#/usr/local/bin/physd#/usr/bin/physd#g' -e 's#^\# Installed by `make install`;#\# Installed by the physd package;#' \
		systemd/physd.service >"$stage/lib/systemd/system/physd.service"
	grep -q '^ExecStart=/usr/bin/physd ' "$stage/lib/systemd/system/physd.service" ||
		{ echo "build.sh: systemd/physd.service: no ExecStart=/usr/local/bin/physd to rewrite" >&2 && exit 1; }
	cp config/physd.example.yaml "$stage/etc/physd/physd.yaml"
	cp $here/README.Debian "$stage/usr/share/doc/physd/"

	# copyright: physd's, then the Go standard library's and every Go
	# module's licence linked into the binary.
	{
		awk -v l="$DEB_LICENSE" '{ gsub(/@LICENSE@/, l); print }' $here/copyright.in
		printf '\n---- Go standard library and runtime, %s: LICENSE ----\n\n' "$($GO env GOVERSION)"
		cat "$($GO env GOROOT)/LICENSE"
		echo "$(md5sum <"$($GO env GOROOT)/LICENSE" | cut -c1-32) the Go standard library" >"$work/licences"
		GOOS=linux GOARCH=$arch CGO_ENABLED=1 $GO list -deps \
			-f '{{with .Module}}{{if .Version}}{{.Path}} {{.Version}} {{.Dir}}{{end}}{{end}}' ./cmd/physd |
			sort -u | while read -r mod ver dir; do
				for p in "$dir"/*; do
					f=${p##*/}
					case $(printf '%s' "$f" | tr '[:upper:]' '[:lower:]') in
					licen[cs]e* | copying* | notice* | unlicense*) [ -f "$p" ] || continue ;;
					*) continue ;;
					esac
					# A text met before (Apache-2.0, BSD-3-Clause of Go…) is named, not repeated.
					sum=$(md5sum <"$p" | cut -c1-32)
					first=$(sed -n "s/^$sum //p" "$work/licences")
					if [ -n "$first" ]; then
						printf '\n---- %s %s: %s: the same text as %s ----\n' "$mod" "$ver" "$f" "$first"
					else
						printf '\n---- %s %s: %s ----\n\n' "$mod" "$ver" "$f"
						cat "$p"
						echo "$sum $mod $ver $f" >>"$work/licences"
					fi
				done
			done
	} >"$stage/usr/share/doc/physd/copyright"
	{
		printf 'physd (%s) %s; urgency=medium\n\n' "$version" "$DEB_SUITE"
		printf '  * Built from git %s (commit %s).\n\n' "$(git describe --tags --always --dirty)" "$(git rev-parse HEAD)"
		printf ' -- %s  %s\n' "$DEB_MAINTAINER" "$(LC_ALL=C date -u -R -d "@$SOURCE_DATE_EPOCH")"
	} | gzip -9n >"$stage/usr/share/doc/physd/changelog.Debian.gz"

	# DEBIAN/: control, conffiles, maintainer scripts, md5sums.
	chmod 0755 "$stage/usr/bin/physd"
	size=$(cd "$stage" && find . -path ./DEBIAN -prune -o ! -name . -printf '%y %s\n' |
		awk '{ n += ($1 == "f") ? int(($2 + 1023) / 1024) : 1 } END { print n }')
	awk -v version="$version" -v arch="$arch" -v maint="$DEB_MAINTAINER" -v size="$size" -v deps="$depends" '
		{ gsub(/@VERSION@/, version); gsub(/@ARCH@/, arch); gsub(/@MAINTAINER@/, maint)
		  gsub(/@INSTALLED_SIZE@/, size); gsub(/@DEPENDS@/, deps); print }' \
		$here/control.in >"$stage/DEBIAN/control"
	cp $here/conffiles "$stage/DEBIAN/conffiles"
	for s in postinst prerm postrm; do install -m 0755 "$here/$s" "$stage/DEBIAN/$s"; done
	(cd "$stage" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z |
		xargs -0 md5sum) >"$stage/DEBIAN/md5sums"

	deb=$DEB_OUT/physd_${version}_$arch.deb
	rm -f "$DEB_OUT"/physd_*_"$arch".deb
	dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
	rm -rf "$work"
	all_s=$(($(date +%s) - t0))
	line="$(basename "$deb"): $(($(stat -c %s "$deb") / 1024)) KiB (installed $size KiB); go build ${build_s} s"
	[ "$arch" != "$host" ] && line="$line, arm64 build root ${root_s} s"
	line="$line; total ${all_s} s"
	echo "$line"
	echo "  Depends: $depends"
	summary="$summary$line
"
done
printf '\n%s' "$summary"
