/*
 * softdoca — which UCX transports softdoca lets UCX open, and why.
 *
 * Every transport UCX_TLS enables is opened by every worker, used or not:
 * its interface exists, with its shared objects or listening socket, for
 * the worker's whole life. So the list is where a transport is kept out.
 *
 * Left out always:
 *  - tcp: its receive path trusts every byte (one frame aborts the process
 *    or writes any address; issue 19 item 1). softdoca's own TCP link
 *    carries TCP; `tcp` says whether the user asked for it.
 *  - sysv: UCX 1.12-1.16 create every SysV segment (each worker's FIFO and
 *    receive buffers) with mode 0660 (UCT_MM_SYSV_PERM) and mark it
 *    removed at once; Linux still lets anyone the mode allows shmat a
 *    removed segment by its id, and /proc/sysvipc/shm lists the ids to
 *    every user. So a process of another user in the creator's group
 *    attaches the FIFO read-write. Seen on UCX 1.13.1
 *    (tests/security/shm_users.sh): a second uid in the group attached
 *    every segment of a connected rdma_peer pair and overwrote them; the
 *    pair's writes then failed and both processes crashed (SIGSEGV).
 *  - knem: a region is reached through /dev/knem by its cookie alone; we
 *    could neither prove a cookie out of another user's reach nor test it
 *    (no knem here). cma makes the same single copy.
 *  - xpmem: UCX exports its whole address space with permit mode 0600,
 *    which the driver checks like SysV permissions (another uid refused,
 *    on paper); not testable here (no /dev/xpmem), so not kept on trust.
 *    posix does the same FIFO work.
 * Kept:
 *  - posix: shm_open(O_CREAT|O_EXCL, 0600), unlinked at once; peers open
 *    /proc/PID/fd/FD, which needs ptrace rights over the owner (its uid)
 *    and then the file's 0600. With UCX_POSIX_USE_PROC_LINK=n the file
 *    stays in /dev/shm (sticky) under its name, 0600 and the creator's.
 *    Both tried as a second uid in the group: refused.
 *  - cma: creates nothing; process_vm_readv/writev need ptrace rights
 *    over the peer (its uid, or CAP_SYS_PTRACE).
 *  - self, and every name we do not know (IB transports and aliases such
 *    as ib, rc, dc, where the NIC enforces memory keys): passed on.
 * Where the user named sysv or xpmem, posix takes its place; for knem, cma.
 * UCX_POSIX_* and UCX_MM_* options change sizes, huge pages and how peers
 * find a segment, never its 0600: left to the user.
 *
 * How UCX reads UCX_TLS (ucs_config_sscanf_allow_list and
 * ucp_is_resource_in_transports_list, alike in 1.12.1, 1.13.1, 1.16.0):
 * a leading '^' negates the whole list; the list is split at commas
 * (strtok: empty names vanish) and cut at 128 names; "all" counts only as
 * the first name (and "all" with more names is a parse error); a name is
 * compared byte for byte with each transport's, "name:aux" enables it for
 * wireup only, "\name" names a transport but never an alias; the aliases
 * that reach a transport left out here are mm (posix, sysv, xpmem), sm and
 * shm (posix, sysv, xpmem, knem, cma); no alias names tcp. UCX warns about
 * every name that matches no transport of the host, negated or not: so
 * we name knem, xpmem and cma only where ucx_tls_host() found them.
 *
 * So, given the user's value:
 *  - unset, empty, "^" alone, "all", "^all": "^tcp,sysv" plus knem and
 *    xpmem where the host has them (UCX's default minus those; "" and "^"
 *    would fail ucp_init).
 *  - a negation "^a,b": the same four first, so no cut drops them, then
 *    a,b; a negation only takes more away. (Flags: a negated "name:aux"
 *    counts as negating the name, as in 1.12/1.13; 1.16 would still enable
 *    it for wireup. The list is safe either way.)
 *  - a list "a,b": every name that reaches a left-out transport goes (tcp,
 *    sysv, knem, xpmem, in any form); an alias becomes its members that
 *    stay (sm -> posix,cma; mm -> posix), sysv and xpmem posix, knem cma;
 *    the rest is passed on. Nothing left: "self".
 * Forgiven where UCX is strict (the result only gets safer): blanks around
 * names, letter case. Left out and counted: names UCX could never match
 * (other characters, longer than UCX_TLS_NAME_MAX, a suffix other than
 * ":aux", "\" before an alias, "all" after the first name, which would
 * become "all" if the names before it went) and names past
 * UCX_TLS_NAMES_MAX. What we write is the normalised name we checked,
 * never the user's bytes.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* process_vm_writev */
#endif

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ucx_tls.h"
#include "yama.h"

enum {
	T_SELF = 1u << 0,
	T_POSIX = 1u << 1,
	T_CMA = 1u << 2,
	T_TCP = 1u << 3,
	T_SYSV = 1u << 4,
	T_KNEM = 1u << 5,
	T_XPMEM = 1u << 6,
	T_OTHER = 1u << 7, /* a name we do not know: passed on */
};
#define T_LEFT_OUT (T_TCP | T_SYSV | T_KNEM | T_XPMEM)

struct known {
	const char *name;
	unsigned bits;
	bool alias;
};

/* The names and aliases this file decides about; left-out transports in
 * the order of the negation we write and of the message. */
static const struct known known[] = {
	{"tcp", T_TCP, false},
	{"sysv", T_SYSV, false},
	{"knem", T_KNEM, false},
	{"xpmem", T_XPMEM, false},
	{"posix", T_POSIX, false},
	{"cma", T_CMA, false},
	{"self", T_SELF, false},
	{"mm", T_POSIX | T_SYSV | T_XPMEM, true},
	{"sm", T_POSIX | T_SYSV | T_XPMEM | T_KNEM | T_CMA, true},
	{"shm", T_POSIX | T_SYSV | T_XPMEM | T_KNEM | T_CMA, true},
};
#define KNOWN_COUNT (sizeof(known) / sizeof(known[0]))

/* One name of the user's list, read. */
struct token {
	char norm[UCX_TLS_NAME_MAX + 1]; /* as we would pass it on: lower case */
	unsigned bits;                   /* T_* it reaches */
	bool aux, strict, alias, all;
};

enum token_kind { TOKEN_EMPTY, TOKEN_NAME, TOKEN_UNUSABLE };

/* What the user chose and what became of it. */
struct tally {
	unsigned host;     /* T_* of the optional transports the host has, and all others */
	unsigned named;    /* T_* of every usable name (negated ones, in a negation) */
	unsigned left_out; /* T_LEFT_OUT the user would have had UCX open */
	unsigned instead;  /* T_POSIX / T_CMA added in place of a left-out one */
	unsigned kept;     /* T_* the list enables (a list only) */
	unsigned unusable; /* names UCX could never match */
	unsigned past;     /* usable names past UCX_TLS_NAMES_MAX */
};

/* ---- reading names ---------------------------------------------------- */

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static bool is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* The next comma-separated piece of *p (possibly empty); false at the end. */
static bool next_piece(const char **p, const char **start, size_t *len)
{
	const char *s = *p, *comma;

	if (s == NULL)
		return false;
	comma = strchr(s, ',');
	*start = s;
	*len = comma != NULL ? (size_t)(comma - s) : strlen(s);
	*p = comma != NULL ? comma + 1 : NULL;
	return true;
}

static const struct known *find_known(const char *name)
{
	for (size_t i = 0; i < KNOWN_COUNT; i++)
		if (strcmp(known[i].name, name) == 0)
			return &known[i];
	return NULL;
}

/* Is s[*i..len) ":aux" (any case)? Moves *i past it. */
static bool read_aux(const char *s, size_t len, size_t *i)
{
	static const char aux[] = ":aux";

	if (len - *i != sizeof(aux) - 1)
		return false;
	for (size_t k = 0; k < sizeof(aux) - 1; k++)
		if (lower(s[*i + k]) != aux[k])
			return false;
	*i = len;
	return true;
}

/* Read [\]name[:aux] (blanks already trimmed) into t; false if it is not
 * of that form or too long. */
static bool parse_name(const char *s, size_t len, struct token *t)
{
	char name[UCX_TLS_NAME_MAX + 1];
	size_t i = 0, n = 0;
	const struct known *k;

	if (len > UCX_TLS_NAME_MAX)
		return false;
	t->strict = s[0] == '\\';
	i = t->strict;
	while (i < len && is_name_char(s[i]))
		name[n++] = lower(s[i++]);
	name[n] = '\0';
	if (n == 0 || (i < len && !(t->aux = read_aux(s, len, &i))))
		return false;
	k = find_known(name);
	t->bits = k != NULL ? k->bits : T_OTHER;
	t->alias = k != NULL && k->alias;
	t->all = strcmp(name, "all") == 0;
	for (i = 0; i < len; i++)
		t->norm[i] = lower(s[i]);
	t->norm[len] = '\0';
	return true;
}

/* Read one piece into t. A strict alias ("\sm") is unusable: UCX compares
 * "\name" with transport names only. */
static enum token_kind read_token(const char *s, size_t len, struct token *t)
{
	memset(t, 0, sizeof(*t));
	while (len > 0 && is_blank(s[0])) {
		s++;
		len--;
	}
	while (len > 0 && is_blank(s[len - 1]))
		len--;
	if (len == 0)
		return TOKEN_EMPTY;
	if (!parse_name(s, len, t) || (t->strict && t->alias))
		return TOKEN_UNUSABLE;
	return TOKEN_NAME;
}

/* The first name of the list, as UCX would see it (or TOKEN_EMPTY). */
static enum token_kind first_token(const char *list, struct token *t)
{
	const char *p = list, *s;
	size_t len;
	enum token_kind kind;

	while (next_piece(&p, &s, &len))
		if ((kind = read_token(s, len, t)) != TOKEN_EMPTY)
			return kind;
	return TOKEN_EMPTY;
}

/* ---- writing the list ------------------------------------------------- */

struct out_list {
	char *buf; /* UCX_TLS_LIST_MAX bytes */
	size_t len, names;
	size_t skip; /* bytes before the first name ("^") */
};

static bool list_has(const struct out_list *l, const char *name)
{
	size_t n = strlen(name);
	const char *p = l->buf + l->skip, *s;
	size_t len;

	if (l->names == 0)
		return false;
	while (next_piece(&p, &s, &len))
		if (len == n && memcmp(s, name, n) == 0)
			return true;
	return false;
}

/* Append name unless it is there already; false if there is no room. */
static bool list_add(struct out_list *l, const char *name)
{
	size_t n = strlen(name), sep = l->names > 0;

	if (list_has(l, name))
		return true;
	if (l->names == UCX_TLS_NAMES_MAX || l->len + sep + n + 1 > UCX_TLS_LIST_MAX)
		return false;
	if (sep)
		l->buf[l->len++] = ',';
	memcpy(l->buf + l->len, name, n + 1);
	l->len += n;
	l->names++;
	return true;
}

/* "^" and the left-out transports the host has: every negation we write
 * starts so, and no cut can drop them. */
static void start_negation(struct out_list *l, unsigned host)
{
	l->buf[0] = '^';
	l->buf[1] = '\0';
	l->len = l->skip = 1;
	for (size_t i = 0; i < KNOWN_COUNT; i++)
		if ((known[i].bits & T_LEFT_OUT & host) && !known[i].alias)
			list_add(l, known[i].name);
}

/* ---- the message -------------------------------------------------------- */

static void append(char *buf, size_t size, const char *text)
{
	size_t len = strlen(buf);

	if (len + 1 < size)
		snprintf(buf + len, size - len, "%s", text);
}

/* The names of bits, comma-separated, after what *any says came before. */
static void append_names(char *buf, size_t size, unsigned bits, bool *any)
{
	for (size_t i = 0; i < KNOWN_COUNT; i++) {
		if (known[i].alias || !(bits & known[i].bits))
			continue;
		append(buf, size, *any ? ", " : "");
		append(buf, size, known[i].name);
		*any = true;
	}
}

/* e.g. "tcp, sysv (posix instead), 2 unusable names" */
static void describe(const struct tally *t, char *buf, size_t size)
{
	char count[64];
	bool any = false, some = false;

	buf[0] = '\0';
	append_names(buf, size, t->left_out, &any);
	if (t->instead != 0) {
		append(buf, size, " (");
		append_names(buf, size, t->instead, &some);
		append(buf, size, " instead)");
	}
	if (t->unusable > 0) {
		snprintf(count, sizeof(count), "%s%u unusable name%s", any ? ", " : "", t->unusable,
			 t->unusable == 1 ? "" : "s");
		append(buf, size, count);
		any = true;
	}
	if (t->past > 0) {
		snprintf(count, sizeof(count), "%s%u name%s past the first %d", any ? ", " : "", t->past,
			 t->past == 1 ? "" : "s", UCX_TLS_NAMES_MAX);
		append(buf, size, count);
	}
}

/* ---- the three forms ---------------------------------------------------- */

/* Unset, "all": UCX's default minus what is left out. */
static void choose_all(struct tally *t, struct ucx_tls *out)
{
	struct out_list l = {.buf = out->list};

	start_negation(&l, t->host);
	t->left_out = T_LEFT_OUT & t->host;
	out->tcp = out->shm = out->posix = out->peers = true;
}

/* "^a,b": ours first, then the user's usable names. */
static void choose_negated(const char *names, struct tally *t, struct ucx_tls *out)
{
	struct out_list l = {.buf = out->list};
	struct token tok;
	const char *p = names, *s;
	size_t len;

	start_negation(&l, t->host);
	while (next_piece(&p, &s, &len)) {
		enum token_kind kind = read_token(s, len, &tok);

		if (kind == TOKEN_EMPTY)
			continue;
		if (kind == TOKEN_UNUSABLE || tok.all) {
			t->unusable++;
			continue;
		}
		t->named |= tok.bits;
		if (!list_add(&l, tok.norm))
			t->past++;
	}
	t->left_out = T_LEFT_OUT & t->host & ~t->named;
	out->tcp = !(t->named & T_TCP);
	out->posix = !(t->named & T_POSIX);
	out->shm = out->posix || ((t->host & T_CMA) && !(t->named & T_CMA));
	out->peers = true; /* whatever else the host has and is not negated */
}

/* Stand-ins for the left-out transports in bits, where the host has them:
 * posix for sysv and xpmem (FIFO transports), cma for knem (one copy). */
static unsigned stand_ins(unsigned bits, unsigned host)
{
	return (((bits & (T_SYSV | T_XPMEM)) ? T_POSIX : 0) | ((bits & T_KNEM) ? T_CMA : 0)) & host;
}

/* One usable name of a list: passed on, or left out with what stays of
 * it (an alias's other members the host has) and its stand-ins. */
static void allow_one(struct out_list *l, struct tally *t, const struct token *tok)
{
	unsigned keep = tok->bits & ~T_LEFT_OUT & t->host, add = keep | stand_ins(tok->bits, t->host);
	bool room = true;

	t->named |= tok->bits;
	if (!(tok->bits & T_LEFT_OUT)) {
		add = keep = tok->bits;
		room = list_add(l, tok->norm);
	} else {
		/* An alias names only what the host has; a name, itself. */
		t->left_out |= tok->bits & T_LEFT_OUT & (tok->alias ? t->host : ~0u);
		if (add & T_POSIX)
			room = list_add(l, tok->aux ? "posix:aux" : "posix");
		if (add & T_CMA)
			room = list_add(l, tok->aux ? "cma:aux" : "cma") && room;
	}
	if (room) {
		t->kept |= add;
		t->instead |= add & ~keep;
	} else {
		t->past++;
	}
}

/* "a,b": what may stay, with stand-ins; "self" if nothing. */
static void choose_allowed(const char *names, struct tally *t, struct ucx_tls *out)
{
	struct out_list l = {.buf = out->list};
	struct token tok;
	const char *p = names, *s;
	size_t len;

	while (next_piece(&p, &s, &len)) {
		enum token_kind kind = read_token(s, len, &tok);

		if (kind == TOKEN_EMPTY)
			continue;
		if (kind == TOKEN_UNUSABLE || tok.all)
			t->unusable++;
		else
			allow_one(&l, t, &tok);
	}
	/* A stand-in the user named as well is no stand-in. */
	t->instead &= ~(t->named & (T_POSIX | T_CMA));
	if (l.names == 0)
		list_add(&l, "self");
	out->tcp = (t->named & T_TCP) != 0;
	out->posix = (t->kept & T_POSIX) != 0;
	out->shm = (t->kept & (T_POSIX | T_CMA)) != 0;
	out->peers = (t->kept & ~T_SELF) != 0;
}

void ucx_tls_choose(const char *user, unsigned host, struct ucx_tls *out)
{
	struct tally t = {.host = ~(T_CMA | T_KNEM | T_XPMEM)};
	struct token first;
	const char *names;
	enum token_kind kind;

	t.host |= ((host & UCX_TLS_HOST_CMA) ? T_CMA : 0) | ((host & UCX_TLS_HOST_KNEM) ? T_KNEM : 0) |
		  ((host & UCX_TLS_HOST_XPMEM) ? T_XPMEM : 0);
	memset(out, 0, sizeof(*out));
	names = user != NULL && user[0] == '^' ? user + 1 : user;
	kind = names != NULL ? first_token(names, &first) : TOKEN_EMPTY;
	if (kind == TOKEN_EMPTY || (kind == TOKEN_NAME && first.all && !first.strict && !first.aux))
		choose_all(&t, out);
	else if (names != user)
		choose_negated(names, &t, out);
	else
		choose_allowed(names, &t, out);
	describe(&t, out->dropped, sizeof(out->dropped));
}

/* ---- what the host has -------------------------------------------------- */

/* Could UCX open this device? Only "no such file" says no. */
static bool device_there(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 || (errno != ENOENT && errno != ENOTDIR);
}

/* UCX's CMA test: Yama allows same-uid ptrace (no Yama, 0, or 1, where
 * UCX calls prctl(PR_SET_PTRACER_ANY)), and a process_vm_writev into
 * ourselves works (seccomp may forbid it). Scope 2 with CAP_SYS_PTRACE is
 * taken as no: cma is then left out of "sm", never added in error. */
static bool cma_there(void)
{
	uint64_t src = 1, dst = 0;
	struct iovec local = {.iov_base = &src, .iov_len = sizeof(src)};
	struct iovec remote = {.iov_base = &dst, .iov_len = sizeof(dst)};
	int scope = softdoca_yama_scope();

	if (scope > 1)
		return false;
	return process_vm_writev(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)sizeof(dst) && dst == src;
}

unsigned ucx_tls_host(void)
{
	return (cma_there() ? UCX_TLS_HOST_CMA : 0) | (device_there("/dev/knem") ? UCX_TLS_HOST_KNEM : 0) |
	       (device_there("/dev/xpmem") ? UCX_TLS_HOST_XPMEM : 0);
}
