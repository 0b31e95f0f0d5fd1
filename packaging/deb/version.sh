#!/bin/sh
# Prints the Debian version of the checkout, from
# `git describe --tags --always --dirty`:
#   no tag            4a5d49c        -> 0.0~git20261126091219.4a5d49c
#   on tag v1.2.0     v1.2.0         -> 1.2.0
#   after a tag       v1.2.0-3-gabc  -> 1.2.0+git20261126091219.3.abc
#   a -rc tag         v1.2.0-rc1     -> 1.2.0~rc1 (sorts before 1.2.0)
#   uncommitted edits ...-dirty      -> ...+dirty
# The timestamp is HEAD's commit time (UTC), so versions built from later
# commits sort higher (dpkg --compare-versions).
set -eu
desc=$(git describe --tags --always --dirty)
when=$(TZ=UTC git log -1 --date=format-local:%Y%m%d%H%M%S --format=%cd)
dirty=
case $desc in *-dirty) dirty=+dirty; desc=${desc%-dirty} ;; esac
if tag=$(git describe --tags --abbrev=0 2>/dev/null); then
	v=$(printf '%s' "${tag#v}" | sed 's/-/~/g')
	if [ "$desc" != "$tag" ]; then
		rest=${desc#"$tag"-} # N-gHASH
		v="$v+git$when.${rest%%-g*}.${rest##*-g}"
	fi
else
	v="0.0~git$when.$desc"
fi
v="$v$dirty"
dpkg --validate-version "$v" || { echo "version.sh: '$v' (from git describe '$desc') is not a Debian version" >&2; exit 1; }
echo "$v"
