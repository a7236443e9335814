#!/bin/sh
# meson install hook (see meson.build): after a real install, refresh the
# dynamic linker's cache so that libdoca_*.so.N are found without
# LD_LIBRARY_PATH. meson skips it under DESTDIR (packages run ldconfig in
# their maintainer scripts). $1 is the absolute libdir.
libdir=$1

if [ "$(id -u)" -ne 0 ]; then
	echo "softdoca: not root, so ldconfig was not run; if programs cannot find libdoca_*.so," \
		"run 'sudo ldconfig' or set LD_LIBRARY_PATH=$libdir"
	exit 0
fi
ldconfig_bin=$(command -v ldconfig || echo /sbin/ldconfig)
if ! "$ldconfig_bin"; then
	echo "softdoca: ldconfig failed; run it by hand" >&2
	exit 0
fi
# A libdir outside the linker's search path (e.g. --prefix=/opt/...) needs
# an entry in /etc/ld.so.conf.d; say so rather than edit /etc behind the
# user's back (meson uninstall would not remove it).
if ! "$ldconfig_bin" -p | grep -q "libdoca_common\.so\.[0-9]* .*=> $libdir/"; then
	echo "softdoca: $libdir is not in the dynamic linker's search path; add it with" \
		"'echo $libdir > /etc/ld.so.conf.d/softdoca.conf && ldconfig', or set LD_LIBRARY_PATH"
fi
exit 0
