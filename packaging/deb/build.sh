#!/bin/bash
# Builds the Debian package of quasim from this repository with dpkg-deb:
# binaries, the Python package for the system python3, the systemd unit and its drop-in example, sysusers.d and
# tmpfiles.d entries for the quasim user and its directories, the kernels
# directory, manual pages, shell completions and the docs.
#
#   packaging/deb/build.sh [OUT_DIR]     (make deb)
#
# env: VERSION (default from git: 0.1.0~gitYYYYMMDD.HASH), GO (go).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-bin}
GO=${GO:-go}
commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
VERSION=${VERSION:-0.1.0~git$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y%m%d).$(git rev-parse --short=12 HEAD 2>/dev/null || echo 0)}
arch=$(dpkg --print-architecture)
maintainer="quasim developers <dev@quasim.invalid>"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root=$stage/root
mkdir -p "$root/DEBIAN"

echo "quasim $VERSION ($arch): building" >&2
ldflags="-s -w -X github.com/quasim/quasim/internal/version.Version=$VERSION -X github.com/quasim/quasim/internal/version.Commit=$commit"
$GO build -buildmode=pie -trimpath -buildvcs=false -ldflags "$ldflags" -o "$stage/bin/" ./cmd/quasimd ./cmd/quasimctl
install -D -m 0755 "$stage/bin/quasimd" "$root/usr/bin/quasimd"
install -D -m 0755 "$stage/bin/quasimctl" "$root/usr/bin/quasimctl"

# The unit: Debian 12 keeps units in /lib/systemd/system.
install -D -m 0644 quasimd.service "$root/lib/systemd/system/quasimd.service"
install -D -m 0644 packaging/deb/sysusers.conf "$root/usr/lib/sysusers.d/quasim.conf"
install -D -m 0644 packaging/deb/tmpfiles.conf "$root/usr/lib/tmpfiles.d/quasim.conf"
install -d -m 0755 "$root/etc/quasim/kernels.d"

# The Python package (quasim: the socket client, Kernel Tuner's
# tune_kernel, build_kernel) and the client's old module name, for the
# system python3, with its dist-info so pip and importlib.metadata see it.
py=$root/usr/lib/python3/dist-packages
for f in runtime/python/quasim/*.py; do
	install -D -m 0644 "$f" "$py/quasim/$(basename "$f")"
done
install -D -m 0644 runtime/python/quasim_client.py "$py/quasim_client.py"
pyversion=$(sed -n 's/^version = "\(.*\)"$/\1/p' runtime/python/pyproject.toml)
install -d "$py/quasim-$pyversion.dist-info"
printf 'Metadata-Version: 2.1\nName: quasim\nVersion: %s\n' "$pyversion" >"$py/quasim-$pyversion.dist-info/METADATA"
printf 'quasim\nquasim_client\n' >"$py/quasim-$pyversion.dist-info/top_level.txt"
printf 'dpkg\n' >"$py/quasim-$pyversion.dist-info/INSTALLER"
chmod 0644 "$py/quasim-$pyversion.dist-info"/*

# Manual pages and completions, generated from the commands.
$GO run ./internal/cmd/gendocs -quasimd "$stage/bin/quasimd" -version "$VERSION" -out "$stage/share"
for f in "$stage"/share/man/man*/*; do
	s=$(basename "$(dirname "$f")")
	install -D -m 0644 "$f" "$root/usr/share/man/$s/$(basename "$f")"
	gzip -9n "$root/usr/share/man/$s/$(basename "$f")"
done
install -D -m 0644 "$stage/share/completions/quasimctl.bash" "$root/usr/share/bash-completion/completions/quasimctl"
install -D -m 0644 "$stage/share/completions/_quasimctl" "$root/usr/share/zsh/vendor-completions/_quasimctl"
install -D -m 0644 "$stage/share/completions/quasimctl.fish" "$root/usr/share/fish/vendor_completions.d/quasimctl.fish"

# Docs: the README, docs/ by audience, the drop-in example, copyright and
# the changelog Debian wants.
doc=$root/usr/share/doc/quasim
install -D -m 0644 README.md "$doc/README.md"
(cd docs && find . -type f \( -name '*.md' -o -name '*.png' \) -print0) | while IFS= read -r -d '' f; do
	install -D -m 0644 "docs/$f" "$doc/docs/$f"
done
install -D -m 0644 docs/quasimd.service.d/devices.conf "$doc/quasimd.service.d/devices.conf"
install -D -m 0644 packaging/deb/copyright "$doc/copyright"
{
	echo "quasim ($VERSION) unstable; urgency=medium"
	echo
	echo "  * Built from the quasim repository at commit ${commit:0:12}."
	echo
	echo " -- $maintainer  $(date -u -R -d "@$SOURCE_DATE_EPOCH")"
} | gzip -9n > "$doc/changelog.gz" # a native package: no Debian revision
chmod 0644 "$doc/changelog.gz"

install -m 0755 packaging/deb/postinst packaging/deb/prerm packaging/deb/postrm "$root/DEBIAN/"
depends="libc6"
if ldd "$root/usr/bin/quasimd" 2>/dev/null | grep -q 'libc.so.6'; then
	v=$(dpkg-query -W -f='${Version}' libc6 2>/dev/null | sed 's/-.*//' | cut -d. -f1,2)
	depends="libc6 (>= ${v:-2.34})"
fi
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
sed -e "s|@VERSION@|$VERSION|" -e "s|@ARCH@|$arch|" -e "s|@MAINTAINER@|$maintainer|" \
	-e "s|@SIZE@|$size|" -e "s|@DEPENDS@|$depends|" -e "s|@HOMEPAGE@|https://github.com/quasim/quasim|" \
	packaging/deb/control.in > "$root/DEBIAN/control"
# The directories of the package are root's and 0755, whatever the umask.
find "$root" -type d -exec chmod 0755 {} +
find "$root" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +

mkdir -p "$out"
deb="$out/quasim_${VERSION}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >&2
echo "$deb"
