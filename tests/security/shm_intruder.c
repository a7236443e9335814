/*
 * shm_intruder — another user of the host tries every way into the
 * memory of a softdoca process: what shm_users.sh runs as the stranger.
 *
 *   shm_intruder --victim-uid UID --victim-gid GID [--pid PID]...
 *                [--fd PID:FD]... [--map PID:START-END]... [--addr PID:ADDR]...
 *                [--dir DIR]... [--scribble]
 *
 * The victim is every process of uid UID; we run as another uid that is
 * in group GID (the victim's group), without capabilities. The ways in:
 *   sysv       every SysV segment whose owner or creator is UID (from
 *              /proc/sysvipc/shm, which anyone may read): shmat read-write
 *              and read-only
 *   files      every file UID owns in /dev/shm (and each --dir): open
 *              read-write and read-only, not following symlinks
 *   fd links   /proc/PID/fd/FD for each --fd (and every fd of a --pid we
 *              can list): open read-write and read-only; pidfd_getfd
 *   memory     /proc/PID/mem read-write; ptrace(PTRACE_SEIZE);
 *              process_vm_readv and process_vm_writev at each --addr and
 *              at the start of each --map; /proc/PID/map_files/START-END
 * Each attempt ends one of three ways: refused (EACCES or EPERM: the
 * kernel said no because we are not the owner), breach (it worked), or
 * inconclusive (any other error: the object vanished, or a wrong
 * argument; that proves nothing either way). With --scribble a breach is
 * used as an attacker would: a writable segment or file is overwritten
 * with 0xA5 bytes (the victim's FIFOs live there); without it nothing is
 * written there. process_vm_writev always writes 8 bytes: those
 * process_vm_readv read at that address, or 0xA5 bytes if it could not
 * read (it needs the same right, so the kernel refuses both or neither).
 *
 * Prints one line per breach and per inconclusive attempt, then one count
 * line per way in. Exit: 0 every attempt refused; 1 a breach; 2 usage,
 * or we are not a stranger (the victim's uid, root, capabilities, or not
 * in GID: a "refused" would then prove nothing); 3 an inconclusive
 * attempt, or no attempt at all.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#define MAX_ITEMS 1024        /* of each option */
#define SCRIBBLE_BYTE 0xA5
#define SCRIBBLE_FILE_MAX (64u << 20) /* bytes overwritten in one file */
#define PROBE_LEN 8

enum way { W_SYSV, W_FILES, W_FD, W_MEMORY, W_COUNT };

static const char *const way_name[W_COUNT] = {"sysv", "files", "fd links", "memory"};

struct tally {
	unsigned attempts, refused, breaches, inconclusive;
};

struct target_fd {
	pid_t pid;
	int fd;
};

struct target_range {
	pid_t pid;
	uintptr_t start, end; /* end 0: an address (--addr), not a mapping */
};

struct opts {
	uid_t victim_uid;
	gid_t victim_gid;
	bool have_uid, have_gid, scribble;
	pid_t pids[MAX_ITEMS];
	unsigned npids;
	struct target_fd fds[MAX_ITEMS];
	unsigned nfds;
	struct target_range ranges[MAX_ITEMS];
	unsigned nranges;
	const char *dirs[MAX_ITEMS];
	unsigned ndirs;
};

static struct tally tally[W_COUNT];

/* ---- outcomes -------------------------------------------------------- */

/* Record one attempt: ok is whether it worked; err its errno if not. */
static void outcome(enum way w, bool ok, int err, const char *what)
{
	struct tally *t = &tally[w];

	t->attempts++;
	if (ok) {
		t->breaches++;
		printf("BREACH %s: %s\n", way_name[w], what);
	} else if (err == EACCES || err == EPERM) {
		t->refused++;
	} else {
		t->inconclusive++;
		printf("INCONCLUSIVE %s: %s: %s\n", way_name[w], what, strerror(err));
	}
	fflush(stdout);
}

/* ---- argument parsing ------------------------------------------------- */

static bool parse_ulong(const char *s, int base, unsigned long long max, unsigned long long *out)
{
	char *end;
	unsigned long long v;

	if (s == NULL || *s == '\0' || *s == '-' || *s == '+' || *s == ' ')
		return false;
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno != 0 || *end != '\0' || v > max)
		return false;
	*out = v;
	return true;
}

/* "PID:REST": the pid, and where REST starts. */
static bool split_pid(const char *arg, pid_t *pid, const char **rest)
{
	const char *colon = strchr(arg, ':');
	char buf[32];
	unsigned long long v;
	size_t n;

	if (colon == NULL || (n = (size_t)(colon - arg)) == 0 || n >= sizeof(buf))
		return false;
	memcpy(buf, arg, n);
	buf[n] = '\0';
	if (!parse_ulong(buf, 10, INT_MAX, &v) || v == 0)
		return false;
	*pid = (pid_t)v;
	*rest = colon + 1;
	return true;
}

static bool parse_fd(const char *arg, struct target_fd *t)
{
	const char *rest;
	unsigned long long v;

	if (!split_pid(arg, &t->pid, &rest) || !parse_ulong(rest, 10, INT_MAX, &v))
		return false;
	t->fd = (int)v;
	return true;
}

/* --map PID:START-END (hex, as in /proc/PID/maps) or --addr PID:ADDR. */
static bool parse_range(const char *arg, bool is_map, struct target_range *t)
{
	const char *rest, *dash;
	char buf[32];
	unsigned long long a, b = 0;
	size_t n;

	if (!split_pid(arg, &t->pid, &rest))
		return false;
	if (strncmp(rest, "0x", 2) == 0)
		rest += 2;
	dash = strchr(rest, '-');
	if (is_map != (dash != NULL))
		return false;
	n = dash != NULL ? (size_t)(dash - rest) : strlen(rest);
	if (n == 0 || n >= sizeof(buf))
		return false;
	memcpy(buf, rest, n);
	buf[n] = '\0';
	if (!parse_ulong(buf, 16, UINTPTR_MAX, &a))
		return false;
	if (is_map && (!parse_ulong(dash + 1, 16, UINTPTR_MAX, &b) || b <= a))
		return false;
	t->start = (uintptr_t)a;
	t->end = (uintptr_t)b;
	return true;
}

static int usage(const char *why)
{
	fprintf(stderr, "shm_intruder: %s\n"
			"usage: shm_intruder --victim-uid UID --victim-gid GID [--pid PID]... [--fd PID:FD]...\n"
			"                    [--map PID:START-END]... [--addr PID:ADDR]... [--dir DIR]... [--scribble]\n",
		why);
	return 2;
}

/* Record one option; false if its value does not parse or there are too many. */
static bool add_option(struct opts *o, int c, const char *arg)
{
	unsigned long long v;

	switch (c) {
	case 'u':
		o->have_uid = parse_ulong(arg, 10, UINT32_MAX - 1, &v);
		o->victim_uid = (uid_t)v;
		return o->have_uid;
	case 'g':
		o->have_gid = parse_ulong(arg, 10, UINT32_MAX - 1, &v);
		o->victim_gid = (gid_t)v;
		return o->have_gid;
	case 'p':
		if (o->npids == MAX_ITEMS || !parse_ulong(arg, 10, INT_MAX, &v) || v == 0)
			return false;
		o->pids[o->npids++] = (pid_t)v;
		return true;
	case 'f':
		return o->nfds < MAX_ITEMS && parse_fd(arg, &o->fds[o->nfds++]);
	case 'm':
	case 'a':
		return o->nranges < MAX_ITEMS && parse_range(arg, c == 'm', &o->ranges[o->nranges++]);
	case 'd':
		if (o->ndirs == MAX_ITEMS)
			return false;
		o->dirs[o->ndirs++] = arg;
		return true;
	case 's':
		o->scribble = true;
		return true;
	default:
		return false;
	}
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{"victim-uid", required_argument, NULL, 'u'}, {"victim-gid", required_argument, NULL, 'g'},
		{"pid", required_argument, NULL, 'p'},        {"fd", required_argument, NULL, 'f'},
		{"map", required_argument, NULL, 'm'},        {"addr", required_argument, NULL, 'a'},
		{"dir", required_argument, NULL, 'd'},        {"scribble", no_argument, NULL, 's'},
		{NULL, 0, NULL, 0},
	};
	int c;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (!add_option(o, c, optarg)) {
			char why[160];

			snprintf(why, sizeof(why), "bad option or value (or too many of it): %s",
				 optarg != NULL ? optarg : argv[optind - 1]);
			return usage(why);
		}
	}
	if (optind != argc)
		return usage("unexpected argument");
	if (!o->have_uid || !o->have_gid)
		return usage("--victim-uid and --victim-gid are required");
	return 0;
}

/* ---- are we a stranger? ---------------------------------------------- */

/* CapEff from /proc/self/status; false if it cannot be read. */
static bool effective_caps(unsigned long long *caps)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");
	bool found = false;

	if (f == NULL)
		return false;
	while (!found && fgets(line, sizeof(line), f) != NULL)
		found = sscanf(line, "CapEff: %llx", caps) == 1;
	fclose(f);
	return found;
}

static bool in_group(gid_t gid)
{
	gid_t groups[NGROUPS_MAX];
	int n = getgroups(NGROUPS_MAX, groups);

	if (getegid() == gid)
		return true;
	for (int i = 0; i < n; i++)
		if (groups[i] == gid)
			return true;
	return false;
}

/* The premise of every "refused": another uid, no privilege, same group. */
static bool check_stranger(const struct opts *o)
{
	unsigned long long caps = ~0ull;

	if (geteuid() == 0 || getuid() == 0 || geteuid() == o->victim_uid || getuid() == o->victim_uid) {
		fprintf(stderr, "shm_intruder: running as uid %u (euid %u): not a stranger to uid %u\n",
			(unsigned)getuid(), (unsigned)geteuid(), (unsigned)o->victim_uid);
		return false;
	}
	if (!effective_caps(&caps) || caps != 0) {
		fprintf(stderr, "shm_intruder: effective capabilities %#llx, expected none\n", caps);
		return false;
	}
	if (!in_group(o->victim_gid)) {
		fprintf(stderr, "shm_intruder: not in group %u, the victim's: group permissions would not be tried\n",
			(unsigned)o->victim_gid);
		return false;
	}
	printf("intruder: uid %u gid %u, in group %u, no capabilities; victim uid %u\n", (unsigned)getuid(),
	       (unsigned)getgid(), (unsigned)o->victim_gid, (unsigned)o->victim_uid);
	return true;
}

/* ---- SysV segments ---------------------------------------------------- */

/* One attach of segment id; scribbles over it if asked and writable. */
static void sysv_attach(const struct opts *o, int id, size_t size, unsigned perms, bool rdonly)
{
	char what[160];
	void *p;
	int err;

	errno = 0;
	p = shmat(id, NULL, rdonly ? SHM_RDONLY : 0);
	err = errno;
	snprintf(what, sizeof(what), "shmat(shmid %d, mode %o%s, %zu bytes, %s)", id, perms & 0777,
		 (perms & SHM_DEST) ? " removed" : "", size, rdonly ? "read-only" : "read-write");
	if (p != (void *)-1 && !rdonly && o->scribble) {
		memset(p, SCRIBBLE_BYTE, size);
		snprintf(what + strlen(what), sizeof(what) - strlen(what), ", overwrote it");
	}
	outcome(W_SYSV, p != (void *)-1, err, what);
	if (p != (void *)-1)
		shmdt(p);
}

/* Every segment the victim owns or created, as /proc/sysvipc/shm lists
 * them: key shmid perms size cpid lpid nattch uid gid cuid cgid ... */
static void try_sysv(const struct opts *o)
{
	char line[512];
	FILE *f = fopen("/proc/sysvipc/shm", "r");

	if (f == NULL) {
		outcome(W_SYSV, false, errno, "read /proc/sysvipc/shm");
		return;
	}
	if (fgets(line, sizeof(line), f) == NULL) { /* the header */
		fclose(f);
		return;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		long long key;
		int id;
		unsigned perms, uid, gid, cuid, cgid;
		unsigned long long size, cpid, lpid, nattch;

		if (sscanf(line, "%lld %d %o %llu %llu %llu %llu %u %u %u %u", &key, &id, &perms, &size, &cpid, &lpid,
			   &nattch, &uid, &gid, &cuid, &cgid) != 11)
			continue;
		if (uid != o->victim_uid && cuid != o->victim_uid)
			continue;
		sysv_attach(o, id, (size_t)size, perms, false);
		sysv_attach(o, id, (size_t)size, perms, true);
	}
	fclose(f);
}

/* ---- files in shared-memory directories ------------------------------- */

/* Overwrite up to SCRIBBLE_FILE_MAX bytes of an open file with the pattern. */
static void scribble_fd(int fd, off_t size)
{
	static unsigned char block[65536];
	off_t done = 0, limit = size < (off_t)SCRIBBLE_FILE_MAX ? size : (off_t)SCRIBBLE_FILE_MAX;

	memset(block, SCRIBBLE_BYTE, sizeof(block));
	while (done < limit) {
		size_t n = (size_t)(limit - done) < sizeof(block) ? (size_t)(limit - done) : sizeof(block);
		ssize_t w = pwrite(fd, block, n, done);

		if (w <= 0)
			break;
		done += w;
	}
}

/* Open path with flags (O_NOFOLLOW and O_NONBLOCK added); counts under way. */
static void try_open(const struct opts *o, enum way w, const char *path, int flags, const char *label)
{
	char what[PATH_MAX + 96];
	int fd, err;
	struct stat st;

	errno = 0;
	fd = open(path, flags | O_NONBLOCK | O_CLOEXEC | (w == W_FILES ? O_NOFOLLOW : 0));
	err = errno;
	snprintf(what, sizeof(what), "open(%s, %s)%s", path, (flags & O_ACCMODE) == O_RDWR ? "O_RDWR" : "O_RDONLY",
		 label);
	if (fd >= 0 && (flags & O_ACCMODE) == O_RDWR && o->scribble && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		scribble_fd(fd, st.st_size);
		snprintf(what + strlen(what), sizeof(what) - strlen(what), ", overwrote it");
	}
	outcome(w, fd >= 0, err, what);
	if (fd >= 0)
		close(fd);
}

static void try_dir(const struct opts *o, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[PATH_MAX];
	struct stat st;

	if (d == NULL) {
		/* A directory of the victim's we may not list: a refusal. */
		outcome(W_FILES, false, errno, dir);
		return;
	}
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= (int)sizeof(path))
			continue;
		if (lstat(path, &st) != 0 || st.st_uid != o->victim_uid)
			continue;
		try_open(o, W_FILES, path, O_RDWR, "");
		try_open(o, W_FILES, path, O_RDONLY, "");
	}
	closedir(d);
}

/* ---- the victim's processes ------------------------------------------- */

static int pidfd_open_(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	errno = ENOSYS;
	return -1;
#endif
}

static int pidfd_getfd_(int pidfd, int fd)
{
#ifdef SYS_pidfd_getfd
	return (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
#else
	(void)pidfd;
	(void)fd;
	errno = ENOSYS;
	return -1;
#endif
}

/* Every way to one of the victim's descriptors. */
static void try_fd(const struct opts *o, pid_t pid, int fd)
{
	char path[64], what[96];
	int pidfd, got, err;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
	try_open(o, W_FD, path, O_RDWR, "");
	try_open(o, W_FD, path, O_RDONLY, "");
	pidfd = pidfd_open_(pid);
	if (pidfd < 0) {
		if (errno != ENOSYS)
			outcome(W_FD, false, errno, "pidfd_open");
		return;
	}
	errno = 0;
	got = pidfd_getfd_(pidfd, fd);
	err = errno;
	snprintf(what, sizeof(what), "pidfd_getfd(pid %d, fd %d)", (int)pid, fd);
	if (!(got < 0 && err == ENOSYS))
		outcome(W_FD, got >= 0, err, what);
	if (got >= 0)
		close(got);
	close(pidfd);
}

/* The fds we can list ourselves (a breach of its own if we can). */
static void try_fd_dir(const struct opts *o, pid_t pid)
{
	char path[64];
	DIR *d;
	struct dirent *e;
	unsigned long long v;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (d == NULL) {
		outcome(W_FD, false, errno, "list /proc/PID/fd");
		return;
	}
	outcome(W_FD, true, 0, path);
	while ((e = readdir(d)) != NULL)
		if (parse_ulong(e->d_name, 10, INT_MAX, &v))
			try_fd(o, pid, (int)v);
	closedir(d);
}

static void try_proc_mem(pid_t pid)
{
	char path[64], what[96];
	int fd, err;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	for (int rw = 1; rw >= 0; rw--) {
		errno = 0;
		fd = open(path, (rw ? O_RDWR : O_RDONLY) | O_CLOEXEC);
		err = errno;
		snprintf(what, sizeof(what), "open(%s, %s)", path, rw ? "O_RDWR" : "O_RDONLY");
		outcome(W_MEMORY, fd >= 0, err, what);
		if (fd >= 0)
			close(fd);
	}
}

static void try_ptrace(pid_t pid)
{
	char what[64];
	long r;
	int err;

	errno = 0;
	r = ptrace(PTRACE_SEIZE, pid, NULL, NULL);
	err = errno;
	snprintf(what, sizeof(what), "ptrace(PTRACE_SEIZE, %d)", (int)pid);
	outcome(W_MEMORY, r == 0, err, what);
	/* A seized tracee is released when we exit (it never stopped). */
}

/* process_vm_readv, then process_vm_writev of what it read (of the
 * pattern if it could not read: the kernel checks the same right for both,
 * so that write is refused too unless something is very wrong). */
static void try_vm(pid_t pid, uintptr_t addr, const char *kind)
{
	unsigned char buf[PROBE_LEN];
	struct iovec local = {.iov_base = buf, .iov_len = sizeof(buf)};
	struct iovec remote = {.iov_base = (void *)addr, .iov_len = sizeof(buf)};
	char what[128];
	ssize_t r, w;
	int err;

	errno = 0;
	r = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	err = errno;
	snprintf(what, sizeof(what), "process_vm_readv(pid %d, %s %#" PRIxPTR ")", (int)pid, kind, addr);
	outcome(W_MEMORY, r >= 0, err, what);
	if (r != (ssize_t)sizeof(buf))
		memset(buf, SCRIBBLE_BYTE, sizeof(buf));
	errno = 0;
	w = process_vm_writev(pid, &local, 1, &remote, 1, 0);
	err = errno;
	snprintf(what, sizeof(what), "process_vm_writev(pid %d, %s %#" PRIxPTR ")", (int)pid, kind, addr);
	outcome(W_MEMORY, w >= 0, err, what);
}

static void try_map_file(pid_t pid, uintptr_t start, uintptr_t end)
{
	char path[96], what[160];
	int fd, err;

	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIxPTR "-%" PRIxPTR, (int)pid, start, end);
	errno = 0;
	fd = open(path, O_RDWR | O_CLOEXEC);
	err = errno;
	snprintf(what, sizeof(what), "open(%s, O_RDWR)", path);
	outcome(W_MEMORY, fd >= 0, err, what);
	if (fd >= 0)
		close(fd);
}

/* Is pid a live process of the victim's? (A wrong pid proves nothing.) */
static bool victim_pid(const struct opts *o, pid_t pid)
{
	char path[64], line[256];
	unsigned ruid, euid;
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (f == NULL)
		return false;
	while (!found && fgets(line, sizeof(line), f) != NULL)
		found = sscanf(line, "Uid: %u %u", &ruid, &euid) == 2;
	fclose(f);
	return found && euid == o->victim_uid;
}

static void try_process(const struct opts *o, pid_t pid)
{
	char what[64];

	if (!victim_pid(o, pid)) {
		snprintf(what, sizeof(what), "pid %d is not a live process of the victim", (int)pid);
		outcome(W_MEMORY, false, ESRCH, what);
		return;
	}
	try_fd_dir(o, pid);
	try_proc_mem(pid);
	try_ptrace(pid);
}

/* ---- main ------------------------------------------------------------- */

static int report(void)
{
	unsigned attempts = 0, breaches = 0, inconclusive = 0;

	for (int w = 0; w < W_COUNT; w++) {
		printf("intruder: %-8s %u attempts: %u refused, %u breaches, %u inconclusive\n", way_name[w],
		       tally[w].attempts, tally[w].refused, tally[w].breaches, tally[w].inconclusive);
		attempts += tally[w].attempts;
		breaches += tally[w].breaches;
		inconclusive += tally[w].inconclusive;
	}
	if (breaches > 0)
		return 1;
	if (inconclusive > 0 || attempts == 0)
		return 3;
	return 0;
}

int main(int argc, char **argv)
{
	static struct opts o;
	int rc = parse_args(argc, argv, &o);

	if (rc != 0)
		return rc;
	if (!check_stranger(&o))
		return 2;
	try_sysv(&o);
	try_dir(&o, "/dev/shm");
	for (unsigned i = 0; i < o.ndirs; i++)
		try_dir(&o, o.dirs[i]);
	for (unsigned i = 0; i < o.npids; i++)
		try_process(&o, o.pids[i]);
	for (unsigned i = 0; i < o.nfds; i++)
		try_fd(&o, o.fds[i].pid, o.fds[i].fd);
	for (unsigned i = 0; i < o.nranges; i++) {
		const struct target_range *r = &o.ranges[i];

		try_vm(r->pid, r->start, r->end != 0 ? "mapping" : "address");
		if (r->end != 0)
			try_map_file(r->pid, r->start, r->end);
	}
	return report();
}
