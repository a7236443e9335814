#!/usr/bin/env bash
# Build the Debian package build/softdoca_<version>_<arch>.deb: configure
# softdoca with DOCA's install layout (/opt/mellanox/doca, libraries and
# .pc files in lib/<triplet>, headers in include, tools in tools) in a
# private build dir, install it into a staging root, add the Debian files
# from packaging/debian, and print the package's path as the last line.
set -euo pipefail
cd "$(dirname "$0")/.."

prefix=/opt/mellanox/doca
bdir=build/pkg-build
work=build/pkg        # dpkg-shlibdeps wants debian/control and debian/<package>/
root=$work/debian/softdoca

die() { echo "package: $*" >&2; exit 1; }
for tool in dpkg dpkg-deb dpkg-shlibdeps meson ninja; do
	command -v "$tool" >/dev/null || die "needs $tool (dpkg-dev, meson, ninja-build)"
done

version=$(sed -n 's/^#define SOFTDOCA_VERSION_STRING "\(.*\)"$/\1/p' include/doca_version.h)
[ -n "$version" ] || die "no SOFTDOCA_VERSION_STRING in include/doca_version.h"
changelog_version=$(sed -n '1s/^softdoca (\([^)]*\)).*/\1/p' packaging/debian/changelog)
[ "$changelog_version" = "$version" ] ||
	die "packaging/debian/changelog's latest entry is $changelog_version, softdoca is $version: add an entry"
arch=$(dpkg --print-architecture)
triplet=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
[ -n "$triplet" ] || die "cannot tell the multiarch triplet"
libdir=$prefix/lib/$triplet
deb=build/softdoca_${version}_${arch}.deb

# Debian's build flags with every hardening feature, as lintian checks.
if command -v dpkg-buildflags >/dev/null; then
	export DEB_BUILD_MAINT_OPTIONS=hardening=+all
	CFLAGS="$(dpkg-buildflags --get CPPFLAGS) $(dpkg-buildflags --get CFLAGS)"
	LDFLAGS=$(dpkg-buildflags --get LDFLAGS)
	export CFLAGS LDFLAGS
fi

rm -rf "$bdir" "$work"
mkdir -p build
log=build/package.log
# Quiet unless a step fails: then its output says why.
quiet() { "$@" >"$log" 2>&1 || die "$* failed:$(printf '\n'; tail -n 30 "$log")"; }
quiet meson setup "$bdir" --werror --buildtype=release -Dtests=false -Dldconfig=false \
	--prefix="$prefix" --libdir="lib/$triplet" --includedir=include --bindir=tools
quiet ninja -C "$bdir"
umask 022
quiet env DESTDIR='' meson install -C "$bdir" --destdir "$PWD/$root" --quiet
[ -f "$root$libdir/pkgconfig/doca.pc" ] || die "meson install put no doca.pc in $libdir/pkgconfig"

# Strip as Debian's dh_strip does: no debug symbols, no .comment/.note.
is_elf() { [ "$(head -c 4 "$1" | tr -d '\0')" = $'\x7fELF' ]; }
while IFS= read -r -d '' f; do
	is_elf "$f" || continue
	case ${f##*/} in
	lib*.so.*)
		strip --remove-section=.comment --remove-section=.note --strip-unneeded "$f"
		chmod 0644 "$f"
		;;
	*) strip --remove-section=.comment --remove-section=.note "$f" ;;
	esac
done < <(find "$root" -type f -print0)

# The dynamic linker's entry for the libraries. Shipped as a plain file, not
# a conffile: nothing in it is the user's to edit, and `dpkg -r` must take
# it away with the libraries (a conffile stays until purge). With no
# maintainer scripts, `dpkg -r` leaves nothing behind, not even an "rc"
# entry; the ldconfig trigger refreshes the cache after install and removal.
mkdir -p "$root/etc/ld.so.conf.d"
echo "$libdir" >"$root/etc/ld.so.conf.d/softdoca.conf"
chmod 0644 "$root/etc/ld.so.conf.d/softdoca.conf"

# pkg-config's default search path has /usr/lib/<triplet>/pkgconfig: link
# the modules there, so that they resolve with no PKG_CONFIG_PATH (the .pc
# files keep prefix=/opt/mellanox/doca).
mkdir -p "$root/usr/lib/$triplet/pkgconfig"
for pc in "$root$libdir"/pkgconfig/*.pc; do
	ln -s "$libdir/pkgconfig/${pc##*/}" "$root/usr/lib/$triplet/pkgconfig/${pc##*/}"
done

doc=$root/usr/share/doc/softdoca
mkdir -p "$doc"
install -m 0644 packaging/debian/copyright "$doc/copyright"
mkdir -p "$root/usr/share/lintian/overrides"
install -m 0644 packaging/debian/lintian-overrides "$root/usr/share/lintian/overrides/softdoca"
gzip -9n <packaging/debian/changelog >"$doc/changelog.gz"
chmod 0644 "$doc/changelog.gz"

mkdir -p "$root/DEBIAN" # dpkg-shlibdeps finds the package root by it

# Depends: what the ELF files need at run time, as dpkg-shlibdeps finds it;
# our own libraries are named in shlibs.local and left out (-x).
printf 'Source: softdoca\n\nPackage: softdoca\nArchitecture: any\n' >"$work/debian/control"
for lib in "$root$libdir"/libdoca_*.so.*.*.*; do
	soname=$(objdump -p "$lib" | awk '$1 == "SONAME" {print $2}')
	echo "${soname%%.so.*} ${soname##*.so.} softdoca"
done >"$work/debian/shlibs.local"
elves=()
while IFS= read -r -d '' f; do
	is_elf "$f" && elves+=("debian/softdoca/${f#"$root"/}")
done < <(find "$root" -type f -print0)
[ ${#elves[@]} -gt 0 ] || die "no ELF file in the package"
depends=$(cd "$work" && dpkg-shlibdeps -O -xsoftdoca -l"debian/softdoca$libdir" "${elves[@]}" |
	sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || die "dpkg-shlibdeps found no dependencies"
# Debian's libucx0 shlibs name the UCX we built against (1.13.1 on Debian
# 12), which would keep the package off Ubuntu 22.04 (UCX 1.12.1). What we
# need of UCX is narrower: the calls of its 1.12 API (the sources build
# against 1.12.1's headers), a worker address format that
# src/engine/ucx_addr.c has reviewed, and a UCX the suite passes on: both
# are 1.12, 1.13 and 1.16 (Ubuntu 24.04's), so 1.14, 1.15 and 1.17 on are
# left out (the engine refuses every peer address of a UCX whose format it
# does not know).
ucx_range='libucx0 (>= 1.12.1~), libucx0 (<< 1.14~) | libucx0 (>= 1.16~), libucx0 (<< 1.17~)'
grep -qE '(^|, )libucx0( |,|$)' <<<"$depends" || die "dpkg-shlibdeps did not name libucx0: $depends"
depends=$(sed -E "s/(^|, )libucx0( \([^)]*\))?/\1$ucx_range/" <<<"$depends")

size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
sed -e "s|@VERSION@|$version|" -e "s|@ARCH@|$arch|" -e "s|@SIZE@|$size|" \
	-e "s#@DEPENDS@#$depends#" -e "s|@TRIPLET@|$triplet|" \
	packaging/debian/control.in >"$root/DEBIAN/control"
# libc-bin runs ldconfig once dpkg is done (after postinst, after postrm).
echo "activate-noawait ldconfig" >"$root/DEBIAN/triggers"
chmod 0644 "$root/DEBIAN/triggers"
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z | xargs -0 md5sum) \
	>"$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/md5sums" "$root/DEBIAN/control"

quiet dpkg-deb --root-owner-group -Zxz --build "$root" "$deb"
echo "$deb"
