#!/usr/bin/env bash
# A new user's machine: debootstrap a minimal Debian 12 root under build/,
# and in it `apt-get install ./softdoca_*.deb` (Recommends included), DOCA's
# first-run steps verbatim and `dpkg -r softdoca`, by running
# check_package.sh's install mode there on the package scripts/package.sh
# builds (or SOFTDOCA_DEB, a path under the repository). Needs root,
# debootstrap and the Debian mirror this machine's apt uses (about 50 s
# here); skips, exit 77, when one is missing or the base system cannot be
# downloaded.
set -euo pipefail
cd "$(dirname "$0")/../.."
suite=${SUITE:-bookworm}
# The Debian mirror this machine's own apt uses (deb822 .sources or
# sources.list), unless MIRROR names one.
apt_mirror() {
	local f m
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		m=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }' "$f")
		[ -n "$m" ] && { echo "$m"; return 0; }
	done
	[ -f /etc/apt/sources.list ] &&
		awk '$1 == "deb" && $2 !~ /security/ { print ($2 ~ /^\[/ ? $3 : $2); exit }' /etc/apt/sources.list
	return 0
}
mirror=${MIRROR:-$(apt_mirror)}
root=$PWD/build/fresh-$suite

[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (debootstrap, chroot)"; exit 77; }
command -v debootstrap >/dev/null || { echo "SKIP: no debootstrap (apt-get install debootstrap)"; exit 77; }
[ -n "$mirror" ] || { echo "SKIP: no Debian mirror in this machine's apt sources (set MIRROR)"; exit 77; }

deb=${SOFTDOCA_DEB:-$(bash scripts/package.sh | tail -n1)}
umount_all() {
	for m in src dev sys proc; do
		mountpoint -q "$root/$m" && umount -R "$root/$m"
	done
	return 0
}
# The root is a few hundred MB: drop it when done (its debootstrap log stays).
trap 'umount_all && rm -rf "$root"' EXIT
umount_all
rm -rf "$root"
echo "+ debootstrap --variant=minbase $suite $root $mirror"
debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$root.debootstrap.log" 2>&1 ||
	{ echo "SKIP: debootstrap failed (mirror unreachable?): $(tail -n 3 "$root.debootstrap.log")"; exit 77; }
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --rbind /dev "$root/dev"
mkdir -p "$root/src"
mount --bind "$PWD" "$root/src"
mount -o remount,bind,ro "$root/src"

chroot "$root" apt-get update -qq
chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin \
	SOFTDOCA_DEB="/src/$deb" SOFTDOCA_APT_RECOMMENDS=1 \
	bash /src/tests/install/check_package.sh install
