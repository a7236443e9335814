#!/usr/bin/env bash
# The Debian package (scripts/package.sh), in two modes:
#   files    build the .deb; check its control fields, its file list, and
#            that Depends names the package of every library its ELF files
#            need (and Recommends the tools that build the samples).
#   plain    (root, nothing of softdoca in /usr/local) `meson install` a
#            private build into /usr/local; check that doca_caps and a
#            program built with `pkg-config --libs doca` run with no
#            ldconfig by hand; uninstall. (PLAIN_MESON_ARGS=-Dldconfig=false
#            shows the failure the install script prevents.)
#   install  (root, dpkg usable, no softdoca or DOCA installed) install it
#            for real with apt-get, run DOCA's first-run steps verbatim,
#            `dpkg -r softdoca`, and check the machine is as before. A trap
#            removes the package on any failure. Exit 77 = skipped.
# It installs into the system: run it once, never in parallel with itself.
# SOFTDOCA_DEB=<file> tests that package instead of building one, and
# SOFTDOCA_APT_RECOMMENDS=1 lets apt install the Recommends, as a new user's
# `apt-get install ./softdoca_*.deb` does (tests/install/fresh_root.sh runs
# the install mode so in a fresh Debian 12 root).
set -euo pipefail
# A command that fails under set -e says so, instead of a silent exit.
trap 'echo "FAIL: line $LINENO: $BASH_COMMAND (exit $?)" >&2' ERR
cd "$(dirname "$0")/../.."
repo=$PWD
mode=${1:-files}
prefix=/opt/mellanox/doca

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }

check_plain() {
	local out
	plain_bdir=build/plain-install
	[ "$(id -u)" -eq 0 ] || skip "installing into /usr/local needs root"
	out=$(find /usr/local -name 'libdoca_*' -o -name doca_caps -o -name 'doca*.pc' 2>/dev/null)
	[ -z "$out" ] || skip "softdoca is in /usr/local already: $out"
	rm -rf "$plain_bdir"
	meson setup "$plain_bdir" --werror --prefix=/usr/local -Dtests=false ${PLAIN_MESON_ARGS:-} >/dev/null
	ninja -C "$plain_bdir" >/dev/null
	uninstall() { ninja -C "$plain_bdir" uninstall >/dev/null 2>&1; ldconfig; }
	trap 'uninstall; cleanup' EXIT
	meson install -C "$plain_bdir" >"$work/install.log" 2>&1 || fail "meson install: $(tail "$work/install.log")"
	out=$(login_sh 'doca_caps --version') || fail "installed doca_caps: $(cat "$work/login.err")"
	login_sh "cc -std=c11 -DDOCA_ALLOW_EXPERIMENTAL_API -o '$work/consumer' '$repo/tests/install/consumer.c' \$(pkg-config --cflags --libs doca) && '$work/consumer'" ||
		fail "an outside program built with pkg-config --libs doca: $(cat "$work/login.err")"
	uninstall
	out=$(ldconfig -p | grep libdoca_ || true)
	[ -z "$out" ] || fail "after ninja uninstall and ldconfig, still cached: $out"
	echo "plain meson install: ok (doca_caps and an outside program run with no ldconfig by hand)"
}

# The multiarch triplet, also in a fresh root with no dpkg-dev or gcc yet.
triplet=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch 2>/dev/null ||
	case $(dpkg --print-architecture) in
	amd64) echo x86_64-linux-gnu ;;
	arm64) echo aarch64-linux-gnu ;;
	esac)
[ -n "$triplet" ] || skip "cannot tell the multiarch triplet"
libdir=$prefix/lib/$triplet
work=$(mktemp -d)
installed_by_us=0
cleanup() {
	if [ "$installed_by_us" -eq 1 ]; then
		echo "cleanup: removing softdoca after a failure"
		dpkg -r softdoca >/dev/null 2>&1 || echo "cleanup: dpkg -r softdoca failed; remove it by hand" >&2
	fi
	rm -rf "$work"
}
trap cleanup EXIT

build_deb() {
	if [ -n "${SOFTDOCA_DEB:-}" ]; then
		deb=$SOFTDOCA_DEB
		[ -f "$deb" ] || fail "SOFTDOCA_DEB=$deb is not a file"
		return
	fi
	for tool in dpkg dpkg-deb dpkg-shlibdeps; do
		command -v "$tool" >/dev/null || skip "no $tool here (not a Debian system, or dpkg-dev missing)"
	done
	deb=$(bash scripts/package.sh | tail -n1)
	[ -f "$deb" ] || fail "scripts/package.sh's last line '$deb' is not a file"
}
field() { dpkg-deb -f "$deb" "$1"; }

# depends_allow PKG VERSION DEPENDS: would PKG at VERSION satisfy every
# clause of DEPENDS that names it? (Alternatives of one clause are |'d.)
depends_allow() {
	local pkg=$1 ver=$2 clause alt op want ok
	local -a clauses
	IFS=',' read -ra clauses <<<"$3"
	for clause in "${clauses[@]}"; do
		grep -qE "(^| )$pkg( |$)" <<<"$clause" || continue
		ok=1
		while read -r alt; do
			[[ $alt =~ ^$pkg\ \((<<|<=|=|>=|>>)\ ([^\)]+)\)$ ]] || continue
			op=${BASH_REMATCH[1]} want=${BASH_REMATCH[2]}
			case $op in '<<') op=lt ;; '<=') op=le ;; '=') op=eq ;; '>=') op=ge ;; '>>') op=gt ;; esac
			dpkg --compare-versions "$ver" "$op" "$want" && ok=0
		done < <(tr '|' '\n' <<<"$clause" | sed 's/^ *//; s/ *$//')
		[ "$ok" = 0 ] || return 1
	done
}

check_files() {
	local version list want f path needed soname lib owner depends
	version=$(sed -n 's/^#define SOFTDOCA_VERSION_STRING "\(.*\)"$/\1/p' include/doca_version.h)
	[ "$deb" = "build/softdoca_${version}_$(dpkg --print-architecture).deb" ] || fail "package path $deb"
	[ "$(field Package)" = softdoca ] || fail "Package: $(field Package)"
	[ "$(field Version)" = "$version" ] || fail "Version: $(field Version), want $version"

	# Every path, as /path (symlinks without their target).
	list=$(dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|; s|/$||' | grep -v '^$')
	want=("$prefix/VERSION" "$prefix/applications/VERSION" "$prefix/tools/doca_caps" /etc/ld.so.conf.d/softdoca.conf
		/usr/share/doc/softdoca/copyright /usr/share/doc/softdoca/changelog.gz)
	# Compress and erasure coding are the API only (a soft device has no engine).
	for h in doca_dev.h doca_rdma.h doca_argp.h doca_dma.h doca_version.h doca_comch.h doca_comch_producer.h \
		doca_comch_consumer.h doca_compress.h doca_erasure_coding.h doca_dpa.h; do want+=("$prefix/include/$h"); done
	modules=(doca doca-common doca-rdma doca-dma doca-argp doca-comch doca-compress doca-erasure-coding doca-dpa)
	for l in common rdma dma argp comch compress erasure_coding dpa; do
		want+=("$libdir/libdoca_$l.so" "$libdir/libdoca_$l.so.3")
	done
	for m in "${modules[@]}"; do
		want+=("$libdir/pkgconfig/$m.pc" "/usr/lib/$triplet/pkgconfig/$m.pc")
	done
	# The BlueField (DPU) personality, not on pkg-config's default path.
	want+=("$prefix/include/doca_build_config.h" "$prefix/include/doca-dpu/doca_build_config.h")
	for m in "${modules[@]}"; do want+=("$libdir/pkgconfig-dpu/$m.pc"); done
	for f in "${want[@]}"; do
		grep -qxF "$f" <<<"$list" || fail "the package has no $f"
	done
	# Nothing outside what the package means to add.
	while IFS= read -r path; do
		case $path in
		/ | /opt | /opt/mellanox | "$prefix" | "$prefix"/*) ;;
		/etc | /etc/ld.so.conf.d | /etc/ld.so.conf.d/softdoca.conf) ;;
		/usr | /usr/lib | "/usr/lib/$triplet" | "/usr/lib/$triplet/pkgconfig" | "/usr/lib/$triplet/pkgconfig/doca"*.pc) ;;
		/usr/share | /usr/share/doc | /usr/share/doc/softdoca | /usr/share/doc/softdoca/*) ;;
		/usr/share/lintian | /usr/share/lintian/overrides | /usr/share/lintian/overrides/softdoca) ;;
		*) fail "unexpected path in the package: $path" ;;
		esac
	done <<<"$list"
	grep -q "$prefix/lib/$triplet/.*\.a$" <<<"$list" && fail "the package ships a static library"

	# The .pc files name the DOCA prefix; the ld.so.conf.d entry the libdir.
	dpkg-deb -x "$deb" "$work/x"
	grep -qx "prefix=$prefix" "$work/x$libdir/pkgconfig/doca.pc" || fail "doca.pc: $(head -n1 "$work/x$libdir/pkgconfig/doca.pc")"
	[ "$(cat "$work/x/etc/ld.so.conf.d/softdoca.conf")" = "$libdir" ] || fail "softdoca.conf does not name $libdir"

	# Depends: for every library an ELF file needs, either it is ours or the
	# package that owns it on this machine is named in Depends.
	depends=$(field Depends)
	grep -qw libc6 <<<"$depends" || fail "Depends lacks libc6: $depends"
	grep -qw libucx0 <<<"$depends" || fail "Depends lacks libucx0: $depends"
	grep -qw softdoca <<<"$depends" && fail "Depends names the package itself: $depends"
	needed=$(find "$work/x" -type f -exec sh -c 'objdump -p "$1" 2>/dev/null' _ {} \; |
		awk '$1 == "NEEDED" {print $2}' | sort -u)
	for soname in $needed; do
		case $soname in libdoca_*) continue ;; esac
		lib=$(ldconfig -p | awk -v s="$soname" '$1 == s && !n++ {print $NF}')
		[ -n "$lib" ] || fail "no $soname on this machine to check Depends against"
		owner=$(dpkg -S "$lib" 2>/dev/null || dpkg -S "$(readlink -f "$lib")" 2>/dev/null ||
			dpkg -S "${lib#/usr}" 2>/dev/null) || fail "no package owns $lib"
		owner=${owner%%:*}
		grep -qE "(^|, )$owner( |,|$)" <<<"$depends" || fail "$soname comes from $owner, which Depends lacks: $depends"
	done
	# The UCX versions Depends lets in are the ones the suite passes on:
	# Ubuntu 22.04's 1.12.1, Debian 12's 1.13.1 and Ubuntu 24.04's 1.16.0,
	# and none whose worker address ucx_addr.c refuses (see
	# scripts/package.sh).
	for v in 1.12.1~rc2-1 1.12.1-1 1.13.1-1 1.13.1-2 1.16.0+ds-5ubuntu1 1.16.0-1; do
		depends_allow libucx0 "$v" "$depends" || fail "Depends refuses libucx0 $v: $depends"
	done
	for v in 1.11.2-1 1.14.1-1 1.15.0-1 1.15.0~rc1-1 1.17.0-1 1.18.0+ds-1; do
		depends_allow libucx0 "$v" "$depends" && fail "Depends lets in libucx0 $v: $depends"
	done
	for r in meson ninja-build pkg-config; do
		grep -qw -- "$r" <<<"$(field Recommends)" || fail "Recommends lacks $r: $(field Recommends)"
	done
	grep -qwE 'gcc|build-essential' <<<"$(field Recommends)" || fail "Recommends names no compiler"
	echo "package files: ok ($deb; Depends: $depends)"
}

# What installing and removing the package may change, as text to compare.
machine_state() {
	{
		find /opt/mellanox /etc/ld.so.conf.d -maxdepth 8 2>/dev/null | sort
		find "/usr/lib/$triplet/pkgconfig" -name 'doca*' 2>/dev/null | sort
		ldconfig -p | grep -i doca | sort
		dpkg-query -W -f='${Package} ${Status}\n' | sort
	}
}

# A fresh login shell: no inherited environment (PKG_CONFIG_PATH included).
login_sh() { env -i HOME="$HOME" TERM=dumb bash -lc "$1" 2>"$work/login.err"; }

first_run() {
	local out samples=$prefix/samples/doca_rdma
	# Step 1.
	out=$(login_sh 'test -z "${PKG_CONFIG_PATH:-}" || echo "PKG_CONFIG_PATH is set"; pkg-config --list-all | grep -i doca')
	echo "$out"
	grep -q 'PKG_CONFIG_PATH is set' <<<"$out" && fail "the login shell has PKG_CONFIG_PATH"
	for m in doca doca-common doca-rdma doca-dma doca-argp; do
		grep -q "^$m " <<<"$out" || fail "step 1: pkg-config --list-all has no $m"
	done
	out=$(login_sh 'pkg-config --variable=prefix doca')
	[ "$out" = "$prefix" ] || fail "step 1: pkg-config --variable=prefix doca printed '$out'"
	echo "step 1: ok (prefix $out)"

	# The version check of NVIDIA's guidance (doca-skills doca-version),
	# its commands as it gives them: all four say one version.
	out=$(login_sh "pkg-config --modversion doca; cat $prefix/applications/VERSION; \
		$prefix/tools/doca_caps --version | head -1; \
		awk '\$2 ~ /^DOCA_VERSION_(MAJOR|MINOR|PATCH)\$/ {printf \"%s%s\", s, \$3; s=\".\"} END {print \"\"}' \
		\"\$(pkg-config --variable=includedir doca)/doca_version.h\"") ||
		fail "version check: $out $(cat "$work/login.err")"
	[ "$(wc -l <<<"$out")" = 4 ] && [ "$(sort -u <<<"$out" | wc -l)" = 1 ] ||
		fail "version check: pkg-config, applications/VERSION, doca_caps --version, doca_version.h say: $out"
	echo "version check: ok ($(head -1 <<<"$out") four times)"

	# The tools and an outside program run without LD_LIBRARY_PATH.
	out=$(login_sh "$prefix/tools/doca_caps -d soft_lo") || fail "doca_caps -d soft_lo: $out $(cat "$work/login.err")"
	grep -qE '^ +0 +::ffff:127\.0\.0\.1 +RoCE v2 +lo ' <<<"$out" || fail "doca_caps: no RoCE v2 GID 0 on lo: $out"
	login_sh "cc -std=c11 -DDOCA_ALLOW_EXPERIMENTAL_API -o '$work/consumer' '$repo/tests/install/consumer.c' \$(pkg-config --cflags --libs doca) && '$work/consumer'" ||
		fail "an outside program built with pkg-config --libs doca: $(cat "$work/login.err")"
	echo "tools and outside program: ok"

	# Steps 2 and 3 need the shipped samples tree.
	if [ ! -f "$samples/rdma_receive/meson.build" ] || [ ! -f "$samples/rdma_send/meson.build" ]; then
		echo "SKIP: steps 2-4: the package has no $samples/rdma_{receive,send}/meson.build yet"
		return
	fi
	touch "$work/stamp"
	sleep 1 # mtime granularity: what steps 2-3 write must be newer than the stamp
	login_sh "cd $samples/rdma_receive && meson setup $work/rr && ninja -C $work/rr" >"$work/rr.log" ||
		fail "step 2 (rdma_receive): $(tail -n 20 "$work/rr.log") $(cat "$work/login.err")"
	login_sh "cd $samples/rdma_send && meson setup $work/rs && ninja -C $work/rs" >"$work/rs.log" ||
		fail "step 2 (rdma_send): $(tail -n 20 "$work/rs.log") $(cat "$work/login.err")"
	out=$(find /opt/mellanox -newer "$work/stamp")
	[ -z "$out" ] || fail "step 2 wrote under /opt: $out"
	for b in rr/doca_rdma_receive rs/doca_rdma_send; do
		out=$("$work/$b" --help 2>&1 || true)
		grep -q -- '-ld' <<<"$out" && grep -q -- '-re' <<<"$out" && grep -q -- '-g' <<<"$out" ||
			fail "step 2: $b --help shows no -ld/-re/-g: $out"
	done
	echo "step 2: ok"

	# Step 3, the documented command word for word (its sleeps are the
	# user's; timeout only bounds a hang).
	timeout 120 bash -c "( sleep 6; echo ) | $work/rr/doca_rdma_receive -d soft_lo -g 0 -ld $work/recv.desc -re $work/send.desc >$work/recv.log 2>&1 &
sleep 2; ( sleep 6; echo ) | $work/rs/doca_rdma_send -d soft_lo -g 0 -ld $work/send.desc -re $work/recv.desc >$work/send.log 2>&1; wait" ||
		true
	grep -q 'Got from sender: "' "$work/recv.log" || fail "step 3: receiver: $(cat "$work/recv.log")"
	grep -q 'Sample finished successfully' "$work/recv.log" || fail "step 3: receiver: $(cat "$work/recv.log")"
	grep -q 'Sample finished successfully' "$work/send.log" || fail "step 3: sender: $(cat "$work/send.log")"
	grep 'Got from sender' "$work/recv.log"
	echo "step 3: ok"

	# Step 4: copy the whole tree, VERSION three levels above the sample
	# directories; change only the payload and the receiver's print.
	mkdir "$work/ext"
	cp -r "$prefix/samples" "$work/ext/samples"
	cp "$prefix/VERSION" "$work/ext/VERSION"
	grep -rlF '"Hi DOCA RDMA!"' "$work/ext/samples" | xargs -r sed -i 's/"Hi DOCA RDMA!"/"Hi from an extended sample"/'
	grep -rlF 'Got from sender: ' "$work/ext/samples/doca_rdma/rdma_receive" |
		xargs -r sed -i 's/Got from sender: /Extended receiver got: /'
	login_sh "cd $work/ext/samples/doca_rdma/rdma_receive && meson setup $work/err && ninja -C $work/err" >"$work/err.log" ||
		fail "step 4 (rdma_receive): $(tail -n 20 "$work/err.log") $(cat "$work/login.err")"
	login_sh "cd $work/ext/samples/doca_rdma/rdma_send && meson setup $work/ers && ninja -C $work/ers" >"$work/ers.log" ||
		fail "step 4 (rdma_send): $(tail -n 20 "$work/ers.log") $(cat "$work/login.err")"
	rm -f "$work/recv.desc" "$work/send.desc"
	timeout 120 bash -c "( sleep 6; echo ) | $work/err/doca_rdma_receive -d soft_lo -g 0 -ld $work/recv.desc -re $work/send.desc >$work/recv.log 2>&1 &
sleep 2; ( sleep 6; echo ) | $work/ers/doca_rdma_send -d soft_lo -g 0 -ld $work/send.desc -re $work/recv.desc >$work/send.log 2>&1; wait" ||
		true
	grep -q 'Extended receiver got: "Hi from an extended sample"' "$work/recv.log" ||
		fail "step 4: receiver: $(cat "$work/recv.log")"
	grep -q 'Sample finished successfully' "$work/send.log" || fail "step 4: sender: $(cat "$work/send.log")"
	grep 'Extended receiver got' "$work/recv.log"
	echo "step 4: ok"
}

check_install() {
	local before after extra recommends pulled line pkg
	[ "$(id -u)" -eq 0 ] || skip "installing the package for real needs root"
	command -v apt-get >/dev/null || skip "no apt-get"
	dpkg-query -W -f='${Status}' softdoca 2>/dev/null | grep -q 'ok installed' &&
		skip "softdoca is installed already; this test will not replace it"
	[ -e "$prefix" ] && skip "$prefix exists (DOCA installed?); this test will not touch it"
	[ -e /etc/ld.so.conf.d/softdoca.conf ] && skip "/etc/ld.so.conf.d/softdoca.conf exists already"
	before=$(machine_state)

	installed_by_us=1
	recommends=--no-install-recommends
	[ "${SOFTDOCA_APT_RECOMMENDS:-0}" = 1 ] && recommends=--install-recommends
	(cd "$(dirname "$deb")" && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$recommends" "./${deb##*/}") \
		>"$work/apt.log" 2>&1 || fail "apt-get install ./${deb##*/}: $(tail -n 20 "$work/apt.log")"
	pulled=$(dpkg-query -W -f='${Package} ${Status}\n' | grep ' install ok installed$' | cut -d' ' -f1 |
		grep -vx softdoca | sort)
	first_run

	dpkg -r softdoca >"$work/remove.log" 2>&1 || fail "dpkg -r softdoca: $(cat "$work/remove.log")"
	installed_by_us=0
	[ -z "$(find /opt/mellanox 2>/dev/null)" ] || fail "left under /opt/mellanox: $(find /opt/mellanox)"
	[ ! -e /etc/ld.so.conf.d/softdoca.conf ] || fail "left /etc/ld.so.conf.d/softdoca.conf"
	after=$(machine_state)
	# What apt installed besides softdoca (missing Depends, Recommends)
	# stays, as apt leaves dependencies; anything else that differs is a
	# leftover.
	extra=$({ diff <(echo "$before") <(echo "$after") || true; } | { grep '^[<>]' || true; } | while IFS= read -r line; do
		pkg=${line#> }
		pkg=${pkg%% *}
		pkg=${pkg%%:*}
		case $line in
		'> /'*) # a file of a package apt pulled in (fakeroot's ld.so.conf.d entry)
			pkg=$(dpkg -S "${line#> }" 2>/dev/null | cut -d: -f1) && [ -n "$pkg" ] &&
				grep -qxF "$pkg" <<<"$pulled" && continue ;;
		'> '*' install ok installed') grep -qxF "$pkg" <<<"$pulled" && continue ;;
		esac
		echo "$line"
	done)
	[ -z "$extra" ] || fail "the machine differs after dpkg -r softdoca: $extra"
	echo "install, first run, dpkg -r: ok"
}

case $mode in
files) build_deb && check_files ;;
install) build_deb && check_install ;;
plain) check_plain ;;
*) fail "usage: $0 files|install|plain" ;;
esac
