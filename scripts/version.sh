#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# version.sh: print Kite's version, the one place that decides it (the DKMS
# package's version, dkms.conf's PACKAGE_VERSION, /usr/src/kite-<version>).
# It is the top-level VERSION file, and in a git checkout
# VERSION+git<commit date>.<short commit>, e.g. 0.1+git20261202.19da36e, so
# that every commit gives a distinct, increasing Debian version.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
base=$(cat "$top/VERSION")
[[ $base =~ ^[0-9][0-9.]*$ ]] || { echo "version.sh: VERSION '$base' is not N[.N...]" >&2; exit 1; }
if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
	git -C "$top" log -1 --date=format:%Y%m%d --format="$base+git%cd.%h" --abbrev=7
else
	echo "$base"
fi
