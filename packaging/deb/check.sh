#!/bin/bash
# Checks the Debian package (make deb-check, in CI): lintian finds no
# error; dpkg -i installs it into a throwaway root (without chroot, as
# DPKG_ROOT installs do); the files, the quasim user and group and the
# state directory are there; python3 imports the quasim package from it;
# the installed unit verifies with
# systemd-analyze; and the installed binaries report the package's version
# and commit.
#
#   packaging/deb/check.sh DEB
set -euo pipefail
deb=$1
fail() { echo "deb-check: $*" >&2; exit 1; }

if command -v lintian >/dev/null; then
	rc=0
	out=$(lintian --fail-on error "$deb" 2>&1) || rc=$?
	# lintian's own note when run as root is not about the package
	grep -v 'running with root privileges' <<<"$out" || true
	[ "$rc" -eq 0 ] || fail "lintian found errors in $deb"
	echo "deb-check: lintian: no errors"
else
	fail "lintian is not installed (apt-get install lintian)"
fi

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/var/lib/dpkg/{info,updates,triggers} "$root/etc" "$root/var/log"
touch "$root/var/lib/dpkg/status" "$root/etc/passwd" "$root/etc/group" "$root/etc/shadow" "$root/etc/gshadow"
# libc6 is not in the throwaway root's package database: --force-depends.
DPKG_ROOT=$root dpkg --root="$root" --log="$root/var/log/dpkg.log" --force-script-chrootless --force-depends -i "$deb" >&2 ||
	fail "dpkg -i $deb into $root failed"

for f in usr/bin/quasimd usr/bin/quasimctl lib/systemd/system/quasimd.service \
	usr/lib/sysusers.d/quasim.conf usr/lib/tmpfiles.d/quasim.conf \
	usr/share/man/man8/quasimd.8.gz usr/share/man/man1/quasimctl.1.gz usr/share/man/man1/quasimctl-status.1.gz \
	usr/share/bash-completion/completions/quasimctl usr/share/zsh/vendor-completions/_quasimctl \
	usr/share/fish/vendor_completions.d/quasimctl.fish \
	usr/share/doc/quasim/README.md usr/share/doc/quasim/copyright usr/share/doc/quasim/docs/operators/install.md \
	usr/share/doc/quasim/quasimd.service.d/devices.conf; do
	[ -e "$root/$f" ] || fail "/$f is not installed"
done
[ -d "$root/etc/quasim/kernels.d" ] || fail "/etc/quasim/kernels.d is not installed"
grep -q '^quasim:x:[0-9]*:[0-9]*:.*:/var/lib/quasim:/usr/sbin/nologin$' "$root/etc/passwd" || fail "no user quasim in /etc/passwd"
grep -q '^quasim:x:' "$root/etc/group" || fail "no group quasim in /etc/group"
uid=$(grep '^quasim:' "$root/etc/passwd" | cut -d: -f3)
[ "$(stat -c '%u %a' "$root/var/lib/quasim")" = "$uid 700" ] || fail "/var/lib/quasim is not quasim's, mode 0700"
echo "deb-check: installed; user and group quasim (uid $uid); /var/lib/quasim theirs"

# The installed unit, with ExecStart at the installed binary (verify wants
# it to exist); any warning fails.
unit=$(mktemp -d)
sed "s#^ExecStart=/usr/bin/quasimd#ExecStart=$root/usr/bin/quasimd#" "$root/lib/systemd/system/quasimd.service" > "$unit/quasimd.service"
out=$(systemd-analyze verify "$unit/quasimd.service" 2>&1) || fail "systemd-analyze verify: $out"
rm -rf "$unit"
[ -z "$out" ] || fail "systemd-analyze verify: $out"
echo "deb-check: the installed unit verifies"

# The Python package, for the system python3: imported from the root
# alone (-S: no site directories), numpy not needed to import it.
py=$root/usr/lib/python3/dist-packages
got=$(PYTHONPATH=$py /usr/bin/python3 -S -c 'import quasim, quasim_client, quasim.interface, quasim.cache, quasim.build
import importlib.metadata as m
print(quasim.__file__, quasim_client.Client is quasim.Client, m.version("quasim"))') || fail "python3 cannot import quasim from $py"
case "$got" in "$py/quasim/__init__.py True "*) ;; *) fail "import quasim: $got, want it from $py" ;; esac
echo "deb-check: python3 imports quasim $(cut -d' ' -f3 <<<"$got") from /usr/lib/python3/dist-packages"

version=$(dpkg-deb -f "$deb" Version)
got=$("$root/usr/bin/quasimd" --version)
case "$got" in "quasimd $version ("*")") ;; *) fail "quasimd --version = $got, want $version and a commit" ;; esac
# sed -n 1p reads all of it: head -1 could end quasimctl by SIGPIPE (exit 141 under pipefail)
got=$("$root/usr/bin/quasimctl" version --socket /nonexistent.sock | sed -n 1p)
case "$got" in "quasimctl $version ("*")") ;; *) fail "quasimctl version = $got, want $version and a commit" ;; esac
echo "deb-check: $got"
