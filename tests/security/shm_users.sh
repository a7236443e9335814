#!/usr/bin/env bash
# Shared memory between users: nothing a softdoca process (or UCX under it)
# creates for shared memory may be writable, or readable, by another user
# of the host, even one in the same group.
#
#   shm_users.sh PEER INTRUDER [VARIANT...]
#     PEER      path of tests/rdma/rdma_peer
#     INTRUDER  path of tests/security/shm_intruder
#     VARIANT   sm       UCX_TLS=self,sm,cma (what the rdma suite's shm
#                        tests use) (default: all three)
#               default  UCX_TLS unset
#               nolink   UCX_TLS=self,sm,cma and UCX_POSIX_USE_PROC_LINK=n
#                        (POSIX segments stay in /dev/shm under their names)
#
# Per variant, with three uids of our own (no user is created; numbers
# picked per run, unused on this host): uid A (group G) runs an rdma_peer
# target and initiator, which connect over shared memory. The initiator
# plays the forged_pid_alive case with the target's real descriptor: once
# connected it writes initiator.ready and waits for helper.gone before its
# writes, a pause at a known point with the connection up. Meanwhile:
#  1. inventory (as root): A's processes, their descriptors and shared
#     mappings, A's SysV segments and /dev/shm files, with modes and
#     owners. There must be at least one shared-memory object (else the
#     pair did not use shared memory and the test proves nothing).
#  2. uid B, in group G, without capabilities, runs shm_intruder --scribble
#     against all of it: shmat of A's segments, open of A's /dev/shm files,
#     of /proc/PID/fd links, pidfd_getfd, /proc/PID/mem, ptrace,
#     process_vm_readv/writev, /proc/PID/map_files; anything writable is
#     overwritten, as an attacker would.
#  3. both of A's processes must still be alive; then helper.gone: the
#     initiator writes, the target checks its memory byte for byte, and
#     both must pass.
# A variant fails if anything of B's got in (a breach) or was inconclusive,
# or if A's pair failed. Everything made is removed at the end: processes
# (by pid: those running as A or B, which only we use), SysV segments and
# /dev/shm files of A and B, directories.
#
# Needs root (to act as other uids) and setpriv (util-linux); otherwise it
# prints why and exits 77 (meson's "skipped").
set -u

PEER=${1:?usage: shm_users.sh PEER INTRUDER [sm|default|nolink...]}
INTRUDER=${2:?usage: shm_users.sh PEER INTRUDER [sm|default|nolink...]}
shift 2
VARIANTS=${*:-sm default nolink}
PROC_TIMEOUT=${SHM_USERS_PROC_TIMEOUT:-60}
READY_WAIT_S=20

skip() {
	echo "SKIP shm_users: $*"
	exit 77
}

[ -x "$PEER" ] || { echo "rdma_peer not found or not executable: $PEER" >&2; exit 2; }
[ -x "$INTRUDER" ] || { echo "shm_intruder not found or not executable: $INTRUDER" >&2; exit 2; }
for v in $VARIANTS; do
	case $v in sm | default | nolink) ;; *) echo "unknown variant $v (sm, default, nolink)" >&2; exit 2 ;; esac
done
[ "$(id -u)" -eq 0 ] || skip "needs root to run processes as other uids (running as uid $(id -u))"
command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
command -v timeout >/dev/null || skip "timeout(1) is not installed"
[ -r /proc/sysvipc/shm ] || skip "no /proc/sysvipc/shm (SysV IPC not in this kernel)"

# Three numbers no account or process uses, distinct per run (several
# runs may go on at once). -> A B G
pick_ids() {
	local base tries=0 id
	while [ "$tries" -lt 50 ]; do
		base=$((1900000000 + (($$ * 7919 + tries * 104729) % 50000000) * 4))
		tries=$((tries + 1))
		for id in "$base" $((base + 1)) $((base + 2)); do
			getent passwd "$id" >/dev/null 2>&1 && continue 2
			getent group "$id" >/dev/null 2>&1 && continue 2
			[ -n "$(uid_pids "$id")" ] && continue 2
		done
		echo "$base $((base + 1)) $((base + 2))"
		return 0
	done
	return 1
}

# Pids of the live processes whose effective uid is $1.
uid_pids() {
	local d uid
	for d in /proc/[0-9]*; do
		uid=$(awk '/^Uid:/ { print $3; exit }' "$d/status" 2>/dev/null) || continue
		[ "$uid" = "$1" ] && [ "$(awk '/^State:/ { print $2; exit }' "$d/status" 2>/dev/null)" != Z ] &&
			echo "${d#/proc/}"
	done
}

# SysV segment ids whose owner or creator is $1.
sysv_ids() {
	awk -v u="$1" 'NR > 1 && ($8 == u || $10 == u) { print $2 }' /proc/sysvipc/shm
}

read -r UID_A UID_B GID_G <<<"$(pick_ids)" || true
[ -n "${GID_G:-}" ] || { echo "no free uid/gid numbers found" >&2; exit 2; }
as_a() { setpriv --reuid="$UID_A" --regid="$GID_G" --groups="$GID_G" --inh-caps=-all "$@"; }
as_b() { setpriv --reuid="$UID_B" --regid="$UID_B" --groups="$UID_B,$GID_G" --inh-caps=-all "$@"; }

as_a test -x "$PEER" || skip "uid $UID_A cannot run $PEER (a directory on its path is closed to other users)"
as_b test -x "$INTRUDER" || skip "uid $UID_B cannot run $INTRUDER (a directory on its path is closed to other users)"

work=$(mktemp -d "${TMPDIR:-/tmp}/shm_users.XXXXXX") || exit 2
chmod 0755 "$work"

# Our processes: every process of uid A or B (no one else has them, see
# pick_ids), ended by pid. A pid of ours that exited may be reused by
# someone else: so never a remembered pid, only those running as A or B.
kill_ours() {
	local p
	for p in $(uid_pids "$UID_A") $(uid_pids "$UID_B"); do kill -KILL "$p" 2>/dev/null; done
}

# Leave the host as we found it: our processes, then whatever shared
# memory uids A and B still own, then our files.
cleanup() {
	local id f
	kill_ours
	wait 2>/dev/null
	for id in $(sysv_ids "$UID_A") $(sysv_ids "$UID_B"); do ipcrm -m "$id" 2>/dev/null; done
	for f in /dev/shm/* /dev/shm/.[!.]*; do
		[ -e "$f" ] || [ -L "$f" ] || continue
		case $(stat -c %u "$f" 2>/dev/null) in "$UID_A" | "$UID_B") rm -f "$f" ;; esac
	done
	[ "${SHM_USERS_KEEP:-0}" = 1 ] || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

set_transport() {
	unset UCX_TLS UCX_POSIX_USE_PROC_LINK UCX_NET_DEVICES
	case $1 in
	sm) export UCX_TLS=self,sm,cma ;;
	default) ;;
	nolink) export UCX_TLS=self,sm,cma UCX_POSIX_USE_PROC_LINK=n ;;
	esac
	echo "# variant $1: UCX_TLS=${UCX_TLS:-(unset)} UCX_POSIX_USE_PROC_LINK=${UCX_POSIX_USE_PROC_LINK:-(unset)}"
}

# Bounded wait for file $1 while pids $2... live.
wait_ready() {
	local f=$1 i=0 p
	shift
	while [ ! -e "$f" ]; do
		i=$((i + 1))
		[ "$i" -gt $((READY_WAIT_S * 50)) ] && return 1
		for p in "$@"; do kill -0 "$p" 2>/dev/null || return 1; done
		sleep 0.02
	done
}

# The rdma_peer process whose parent is $1 (our `timeout`).
child_of() {
	local d
	for d in /proc/[0-9]*; do
		[ "$(awk '{ print $4 }' "$d/stat" 2>/dev/null)" = "$1" ] && { echo "${d#/proc/}"; return; }
	done
}

alive() { [ -e "/proc/$1" ] && [ "$(awk '/^State:/ { print $2; exit }' "/proc/$1/status")" != Z ]; }

# Inventory of uid A's shared memory, printed (the evidence) and turned
# into intruder arguments in $args; $nshm counts shared-memory objects.
inventory() {
	local p f t range perms rest path removed
	local key id mode size cpid nattch uid gid cuid cgid
	args=(--victim-uid "$UID_A" --victim-gid "$GID_G")
	nshm=0
	while read -r key id mode size cpid _ nattch uid gid cuid cgid rest; do
		removed=""
		[ $((0$mode & 01000)) -ne 0 ] && removed=" (removed, still attachable)"
		printf '  sysv  shmid %s mode %o%s owner %s:%s creator %s:%s %s bytes, %s attached (key %s, creator pid %s)\n' \
			"$id" $((0$mode & 0777)) "$removed" "$uid" "$gid" "$cuid" "$cgid" "$size" "$nattch" "$key" "$cpid"
		nshm=$((nshm + 1))
	done < <(awk -v u="$UID_A" 'NR > 1 && ($8 == u || $10 == u)' /proc/sysvipc/shm)
	for f in /dev/shm/* /dev/shm/.[!.]*; do
		if [ -e "$f" ] && [ "$(stat -c %u "$f")" = "$UID_A" ]; then
			echo "  file  $(stat -c '%n mode %a owner %u:%g %s bytes' "$f")"
			nshm=$((nshm + 1))
		fi
	done
	for p in $(uid_pids "$UID_A"); do
		echo "  pid   $p $(tr '\0' ' ' <"/proc/$p/cmdline" | cut -c1-100)"
		args+=(--pid "$p")
		for f in "/proc/$p/fd/"*; do
			t=$(readlink "$f") || continue
			args+=(--fd "$p:${f##*/}")
			case $t in
			/dev/shm/* | /memfd:* | /SYSV*)
				echo "    fd ${f##*/} -> $t ($(stat -L -c 'mode %a owner %u:%g, %s bytes' "$f" 2>/dev/null))"
				;;
			esac
		done
		while read -r range perms rest; do
			path=$(awk '{ print $4 }' <<<"$rest")
			case $perms in
			*s)
				args+=(--map "$p:$range")
				echo "    map $range $perms ${path:-(anonymous)}"
				case $path in /dev/shm/* | /SYSV* | /memfd:*) nshm=$((nshm + 1)) ;; esac
				;;
			rw-p)
				[ "$path" = "[heap]" ] && args+=(--addr "$p:${range%-*}")
				;;
			esac
		done <"/proc/$p/maps"
	done
}

run_variant() {
	local v=$1 dir log tw iw tpid ipid irc=0 trc=0 xrc why="" t0 dt
	set_transport "$v"
	log=$work/$v
	dir=$log/peer
	mkdir -p "$dir"
	chown "$UID_A:$GID_G" "$dir"
	chmod 0700 "$dir"
	t0=$(date +%s.%N)
	# Both as uid A; their rendezvous directory is A's alone.
	as_a env HOME="$dir" TMPDIR="$dir" timeout "$PROC_TIMEOUT" "$PEER" --role target --dir "$dir" \
		--case forged_pid_alive --serve progress >"$log.target.out" 2>"$log.target.err" &
	tw=$!
	as_a env HOME="$dir" TMPDIR="$dir" timeout "$PROC_TIMEOUT" "$PEER" --role initiator --dir "$dir" \
		--case forged_pid_alive >"$log.initiator.out" 2>"$log.initiator.err" &
	iw=$!
	if ! wait_ready "$dir/initiator.ready" "$tw" "$iw"; then
		why="no initiator.ready within ${READY_WAIT_S}s (the pair did not connect); "
		kill_ours # no use waiting for their own timeouts
	else
		tpid=$(child_of "$tw") ipid=$(child_of "$iw")
		[ -n "$tpid" ] && [ -n "$ipid" ] || why="rdma_peer processes not found under their timeout (pids $tw, $iw); "
		echo "# uid $UID_A (group $GID_G): target pid $tpid, initiator pid $ipid, connected; what they share:"
		inventory
		[ "$nshm" -gt 0 ] || why="the pair shares no shared-memory object: nothing to test; "
		echo "# uid $UID_B (groups $UID_B,$GID_G) tries every way in:"
		as_b timeout 30 "$INTRUDER" "${args[@]}" --scribble 2>&1 | sed 's/^/  /'
		xrc=${PIPESTATUS[0]}
		case $xrc in
		0) ;;
		1) why="${why}uid $UID_B got into uid $UID_A's memory (BREACH lines above); " ;;
		3) why="${why}an attempt was inconclusive (INCONCLUSIVE lines above): it proves nothing; " ;;
		*) why="${why}shm_intruder exited $xrc; " ;;
		esac
		alive "$tpid" || why="${why}the target (pid $tpid) died after the intrusion; "
		alive "$ipid" || why="${why}the initiator (pid $ipid) died after the intrusion; "
		echo 1 >"$dir/helper.gone.tmp" && mv "$dir/helper.gone.tmp" "$dir/helper.gone"
	fi
	wait "$iw"
	irc=$?
	wait "$tw"
	trc=$?
	dt=$(echo "$(date +%s.%N) $t0" | awk '{ printf "%.2f", $1 - $2 }')
	[ "$irc" -ne 0 ] && why="${why}initiator exit $irc; "
	[ "$trc" -ne 0 ] && why="${why}target exit $trc; "
	grep -q '^PASS' "$log.initiator.out" || why="${why}no PASS line from the initiator; "
	grep -q '^PASS' "$log.target.out" || why="${why}no PASS line from the target; "
	if [ -z "$why" ]; then
		echo "ok   $v: nothing of uid $UID_A's was open to uid $UID_B; the pair served on (${dt}s)"
		return 0
	fi
	echo "FAIL $v (${dt}s): ${why%; }"
	for f in "$log".target.out "$log".target.err "$log".initiator.out "$log".initiator.err; do
		[ -s "$f" ] || continue
		echo "    --- ${f##*/}"
		tail -n 15 "$f" | sed 's/^/    | /'
	done
	return 1
}

echo "# uids: A=$UID_A (the victim) B=$UID_B (the intruder), shared group G=$GID_G"
pass=0 fail=0
for v in $VARIANTS; do
	if run_variant "$v"; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
	# Nothing of a variant's may outlive it into the next one.
	kill_ours
	for id in $(sysv_ids "$UID_A"); do ipcrm -m "$id" 2>/dev/null; done
done
echo "shm_users: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
