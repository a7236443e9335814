/*
 * Unit tests of the transport list softdoca hands UCX
 * (src/engine/ucx_tls.c):
 *  - each form of UCX_TLS gives the expected list, flags and message;
 *  - random and hostile values (garbage bytes, 1 MiB of names, blanks,
 *    '^' and "all" in odd places, case, "\" and ":aux") never give a list
 *    that UCX 1.12/1.13 or 1.16 would read as enabling tcp or sysv (nor
 *    knem or xpmem where the host has them), by a model of UCX's own
 *    matching (written here from UCX's rules, see ucx_tls.c); the list is
 *    always well-formed and the message holds only our words;
 *  - live UCX: a worker made with the chosen list starts without a UCX
 *    warning and creates no SysV segment, while one made with UCX_TLS's
 *    own "self,sm" does (the control), and keeps its POSIX FIFO when the
 *    list says posix.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <ucp/api/ucp.h>

#include "engine/ucx_tls.h"

#define HOST_ALL (UCX_TLS_HOST_CMA | UCX_TLS_HOST_KNEM | UCX_TLS_HOST_XPMEM)

/* ---- the forms ---------------------------------------------------------- */

struct form {
	const char *user; /* NULL: unset */
	unsigned host;
	const char *list, *dropped;
	bool tcp, shm, posix, peers;
};

static const struct form forms[] = {
	/* unset and its spellings */
	{NULL, UCX_TLS_HOST_CMA, "^tcp,sysv", "tcp, sysv", true, true, true, true},
	{NULL, HOST_ALL, "^tcp,sysv,knem,xpmem", "tcp, sysv, knem, xpmem", true, true, true, true},
	{"", UCX_TLS_HOST_CMA, "^tcp,sysv", "tcp, sysv", true, true, true, true},
	{"^", UCX_TLS_HOST_CMA, "^tcp,sysv", "tcp, sysv", true, true, true, true},
	{" , ,", UCX_TLS_HOST_CMA, "^tcp,sysv", "tcp, sysv", true, true, true, true},
	{"all", UCX_TLS_HOST_CMA, "^tcp,sysv", "tcp, sysv", true, true, true, true},
	{"^all", UCX_TLS_HOST_CMA, "^tcp,sysv", "tcp, sysv", true, true, true, true},
	{"ALL", UCX_TLS_HOST_CMA, "^tcp,sysv", "tcp, sysv", true, true, true, true},
	/* what the test suites use */
	{"self,sm,cma", UCX_TLS_HOST_CMA, "self,posix,cma", "sysv", false, true, true, true},
	{"self,sm", UCX_TLS_HOST_CMA, "self,posix,cma", "sysv", false, true, true, true},
	{"self,sm", HOST_ALL, "self,posix,cma", "sysv, knem, xpmem", false, true, true, true},
	{"self,sm", 0, "self,posix", "sysv", false, true, true, true},
	{"tcp", UCX_TLS_HOST_CMA, "self", "tcp", true, false, false, false},
	{"self,tcp", UCX_TLS_HOST_CMA, "self", "tcp", true, false, false, false},
	/* left-out transports in every spelling, stand-ins */
	{"sysv", UCX_TLS_HOST_CMA, "posix", "sysv (posix instead)", false, true, true, true},
	{"sysv:aux,self", UCX_TLS_HOST_CMA, "posix:aux,self", "sysv (posix instead)", false, true, true, true},
	{"\\sysv,\\tcp", UCX_TLS_HOST_CMA, "posix", "tcp, sysv (posix instead)", true, true, true, true},
	{"TCP:AUX, SysV", UCX_TLS_HOST_CMA, "posix", "tcp, sysv (posix instead)", true, true, true, true},
	{"knem,xpmem", HOST_ALL, "cma,posix", "knem, xpmem (posix, cma instead)", false, true, true, true},
	{"knem", 0, "self", "knem", false, false, false, false},
	{"sysv,posix", UCX_TLS_HOST_CMA, "posix", "sysv", false, true, true, true},
	{"mm", HOST_ALL, "posix", "sysv, xpmem", false, true, true, true},
	{"sm:aux,self", UCX_TLS_HOST_CMA, "posix:aux,cma:aux,self", "sysv", false, true, true, true},
	{"shm", UCX_TLS_HOST_CMA, "posix,cma", "sysv", false, true, true, true},
	{"\\sm,self", UCX_TLS_HOST_CMA, "self", "1 unusable name", false, false, false, false},
	/* names we do not know pass, normalised */
	{"rc,ud,self", UCX_TLS_HOST_CMA, "rc,ud,self", "", false, false, false, true},
	{" RC_X , ib:aux ,\\posix", UCX_TLS_HOST_CMA, "rc_x,ib:aux,\\posix", "", false, true, true, true},
	{"posix,posix,POSIX", UCX_TLS_HOST_CMA, "posix", "", false, true, true, true},
	/* "all" not first, '^' not first, garbage */
	{"tcp,all", UCX_TLS_HOST_CMA, "self", "tcp, 1 unusable name", true, false, false, false},
	{"self,all", UCX_TLS_HOST_CMA, "self", "1 unusable name", false, false, false, false},
	{"ib,^posix", UCX_TLS_HOST_CMA, "ib", "1 unusable name", false, false, false, true},
	{"x y,z;,posix:foo,\\", UCX_TLS_HOST_CMA, "self", "4 unusable names", false, false, false, false},
	/* negations */
	{"^tcp", UCX_TLS_HOST_CMA, "^tcp,sysv", "sysv", false, true, true, true},
	{"^ib", UCX_TLS_HOST_CMA, "^tcp,sysv,ib", "tcp, sysv", true, true, true, true},
	{"^sm", UCX_TLS_HOST_CMA, "^tcp,sysv,sm", "tcp", true, false, false, true},
	{"^posix", UCX_TLS_HOST_CMA, "^tcp,sysv,posix", "tcp, sysv", true, true, false, true},
	{"^posix", 0, "^tcp,sysv,posix", "tcp, sysv", true, false, false, true},
	{"^posix:aux,TCP", UCX_TLS_HOST_CMA, "^tcp,sysv,posix:aux", "sysv", false, true, false, true},
	{"^mm", HOST_ALL, "^tcp,sysv,knem,xpmem,mm", "tcp, knem", true, true, false, true},
	{"^self,all", UCX_TLS_HOST_CMA, "^tcp,sysv,self", "tcp, sysv, 1 unusable name", true, true, true, true},
};

static void test_forms(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		const struct form *f = &forms[i];
		struct ucx_tls t;

		ucx_tls_choose(f->user, f->host, &t);
		if (strcmp(t.list, f->list) != 0 || strcmp(t.dropped, f->dropped) != 0 || t.tcp != f->tcp ||
		    t.shm != f->shm || t.posix != f->posix || t.peers != f->peers)
			fail_msg("UCX_TLS=%s host %#x: got \"%s\" [%s] tcp %d shm %d posix %d peers %d, expected "
				 "\"%s\" [%s] tcp %d shm %d posix %d peers %d",
				 f->user ? f->user : "(unset)", f->host, t.list, t.dropped, t.tcp, t.shm, t.posix,
				 t.peers, f->list, f->dropped, f->tcp, f->shm, f->posix, f->peers);
	}
}

/* ---- a model of how UCX reads the list ----------------------------------- */

#define UCX_ARRAY_MAX 128 /* UCS_CONFIG_ARRAY_MAX: names past it are cut */

enum ucx_mode { UCX_ALLOW, UCX_NEGATE, UCX_ALLOW_ALL };

struct ucx_list {
	enum ucx_mode mode;
	char names[UCX_ARRAY_MAX][UCX_TLS_LIST_MAX];
	unsigned n;
};

/* ucs_config_sscanf_allow_list: '^', strtok at commas, the cut, "all". */
static bool ucx_parse(const char *value, struct ucx_list *l)
{
	char copy[UCX_TLS_LIST_MAX], *save = NULL, *tok;

	assert_true(strlen(value) < sizeof(copy));
	l->mode = value[0] == '^' ? UCX_NEGATE : UCX_ALLOW;
	strcpy(copy, value + (value[0] == '^'));
	l->n = 0;
	for (tok = strtok_r(copy, ",", &save); tok != NULL && l->n < UCX_ARRAY_MAX; tok = strtok_r(NULL, ",", &save))
		strcpy(l->names[l->n++], tok);
	if (l->n >= 1 && strcmp(l->names[0], "all") == 0) {
		l->mode = UCX_ALLOW_ALL;
		return l->n == 1; /* "all" with more is a parse error */
	}
	return true;
}

/* Does a name of the list equal prefix+name(+":"+suffix)? */
static bool ucx_has(const struct ucx_list *l, const char *prefix, const char *name, const char *suffix)
{
	char want[96];

	snprintf(want, sizeof(want), "%s%s%s%s", prefix, name, suffix ? ":" : "", suffix ? suffix : "");
	for (unsigned i = 0; i < l->n; i++)
		if (strcmp(l->names[i], want) == 0)
			return true;
	return false;
}

struct ucx_alias {
	const char *alias;
	const char *members[6]; /* "name" or "name:aux" */
};

/* The aliases of 1.12-1.16 that reach tcp, sysv, knem, xpmem or posix. */
static const struct ucx_alias ucx_aliases[] = {
	{"mm", {"posix", "sysv", "xpmem", NULL}},
	{"sm", {"posix", "sysv", "xpmem", "knem", "cma", NULL}},
	{"shm", {"posix", "sysv", "xpmem", "knem", "cma", NULL}},
};

static bool alias_has(const struct ucx_alias *a, const char *tl, bool aux)
{
	char want[32];

	snprintf(want, sizeof(want), "%s%s", tl, aux ? ":aux" : "");
	for (int i = 0; a->members[i] != NULL; i++)
		if (strcmp(a->members[i], want) == 0)
			return true;
	return false;
}

/* ucp_is_resource_in_transports_list of 1.12.1/1.13.1. */
static bool ucx113_enabled(const struct ucx_list *l, const char *tl)
{
	if (l->mode == UCX_ALLOW_ALL)
		return true;
	if (ucx_has(l, "\\", tl, NULL) || ucx_has(l, "\\", tl, "aux") || ucx_has(l, "", tl, NULL) ||
	    ucx_has(l, "", tl, "aux"))
		return l->mode == UCX_ALLOW;
	for (size_t i = 0; i < sizeof(ucx_aliases) / sizeof(ucx_aliases[0]); i++) {
		const struct ucx_alias *a = &ucx_aliases[i];

		if ((alias_has(a, tl, false) || alias_has(a, tl, true)) &&
		    (ucx_has(l, "", a->alias, NULL) || ucx_has(l, "", a->alias, "aux")))
			return l->mode == UCX_ALLOW;
	}
	return l->mode == UCX_NEGATE;
}

/* ucp_is_resource_in_transports_list of 1.16.0, for a transport that is
 * no alias's auxiliary (none of ours is). */
static bool ucx116_enabled(const struct ucx_list *l, const char *tl)
{
	bool primary, aux_main = false, aux_alias = false;

	if (l->mode == UCX_ALLOW_ALL)
		return true;
	primary = ucx_has(l, "\\", tl, NULL) || ucx_has(l, "", tl, NULL);
	aux_main = ucx_has(l, "\\", tl, "aux") || ucx_has(l, "", tl, "aux");
	for (size_t i = 0; i < sizeof(ucx_aliases) / sizeof(ucx_aliases[0]); i++) {
		const struct ucx_alias *a = &ucx_aliases[i];

		primary |= alias_has(a, tl, false) && ucx_has(l, "", a->alias, NULL);
		aux_alias |= alias_has(a, tl, true) && ucx_has(l, "", a->alias, NULL);
		aux_main |= alias_has(a, tl, false) && ucx_has(l, "", a->alias, "aux");
	}
	if (l->mode == UCX_ALLOW)
		return primary || aux_main || aux_alias;
	return !primary;
}

/* ---- checking one result -------------------------------------------------- */

static void check_shape(const char *user, const struct ucx_tls *t)
{
	size_t n = strlen(t->list), names = 1;

	if (n == 0 || n >= UCX_TLS_LIST_MAX)
		fail_msg("UCX_TLS=%.80s: list of %zu bytes", user, n);
	for (size_t i = 0; i < n; i++) {
		char c = t->list[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == ':' || c == '\\' ||
		      c == ',' || (c == '^' && i == 0)))
			fail_msg("UCX_TLS=%.80s: byte %#x at %zu of \"%s\"", user, (unsigned)(unsigned char)c, i, t->list);
		names += c == ',';
	}
	if (strstr(t->list, ",,") != NULL || t->list[n - 1] == ',' || t->list[t->list[0] == '^'] == ',' ||
	    t->list[t->list[0] == '^'] == '\0' || names > UCX_TLS_NAMES_MAX)
		fail_msg("UCX_TLS=%.80s: malformed list \"%s\"", user, t->list);
	for (const char *d = t->dropped; *d != '\0'; d++)
		if (!((*d >= 'a' && *d <= 'z') || (*d >= '0' && *d <= '9') || *d == ' ' || *d == ',' || *d == '(' ||
		      *d == ')'))
			fail_msg("UCX_TLS=%.80s: byte %#x in the message \"%s\"", user, (unsigned)(unsigned char)*d,
				 t->dropped);
}

/* What UCX would make of t->list: never a left-out transport the host
 * has, in either version; and the posix flag is what 1.13 does. */
static void check_with_model(const char *user, unsigned host, const struct ucx_tls *t)
{
	static struct ucx_list l;
	static const char *const left_out[] = {"tcp", "sysv", "knem", "xpmem"};
	const unsigned need[] = {0, 0, UCX_TLS_HOST_KNEM, UCX_TLS_HOST_XPMEM};

	if (!ucx_parse(t->list, &l))
		fail_msg("UCX_TLS=%.80s: UCX would not parse \"%s\"", user, t->list);
	if (l.mode == UCX_ALLOW_ALL)
		fail_msg("UCX_TLS=%.80s: \"%s\" is all", user, t->list);
	for (int i = 0; i < 4; i++) {
		if (need[i] != 0 && !(host & need[i]))
			continue; /* UCX cannot open it here */
		if (ucx113_enabled(&l, left_out[i]) || ucx116_enabled(&l, left_out[i]))
			fail_msg("UCX_TLS=%.80s host %#x: \"%s\" enables %s", user, host, t->list, left_out[i]);
	}
	if (t->posix != ucx113_enabled(&l, "posix"))
		fail_msg("UCX_TLS=%.80s: posix flag %d, but UCX 1.13 reads \"%s\" as %s", user, t->posix, t->list,
			 t->posix ? "no posix" : "posix");
}

static void check_value(const char *user, unsigned host)
{
	struct ucx_tls t;

	memset(&t, 0xA5, sizeof(t)); /* nothing left over from a previous call may count */
	ucx_tls_choose(user, host, &t);
	check_shape(user, &t);
	check_with_model(user, host, &t);
}

/* The model itself, on values whose reading we know: it must be able to
 * say "enabled" (or this test could not fail). */
static void test_model_sees_left_out(void **state)
{
	static struct ucx_list l;

	(void)state;
	assert_true(ucx_parse("self,sm", &l) && ucx113_enabled(&l, "sysv") && ucx116_enabled(&l, "sysv"));
	assert_true(ucx_parse("^ib", &l) && ucx113_enabled(&l, "tcp") && ucx116_enabled(&l, "tcp"));
	assert_true(ucx_parse("tcp:aux", &l) && ucx113_enabled(&l, "tcp") && ucx116_enabled(&l, "tcp"));
	assert_true(ucx_parse("\\sysv", &l) && ucx113_enabled(&l, "sysv") && ucx116_enabled(&l, "sysv"));
	assert_true(ucx_parse("mm:aux", &l) && ucx113_enabled(&l, "xpmem") && ucx116_enabled(&l, "xpmem"));
	assert_true(ucx_parse("all", &l) && ucx113_enabled(&l, "tcp"));
	assert_true(ucx_parse("^tcp", &l) && !ucx113_enabled(&l, "tcp") && ucx113_enabled(&l, "sysv"));
	assert_false(ucx_parse("all,tcp", &l));
}

/* ---- random and hostile values ---------------------------------------------- */

static uint64_t rng = 0x5eed1e55c0ffee01ull;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

/* Pieces a hostile or careless UCX_TLS is made of. */
static const char *const pieces[] = {
	"tcp", "TCP", "\\tcp", "tcp:aux", "Tcp:AUX", " tcp ", "\ttcp", "sysv", "SYSV", "\\sysv", "sysv:aux",
	"knem", "knem:aux", "\\knem", "xpmem", "xpmem:aux", "mm", "mm:aux", "sm", "SM", "sm:aux", "\\sm", "shm",
	"shm:aux", "posix", "\\posix", "posix:aux", "cma", "cma:aux", "self", "ib", "rc", "rc_x", "dc:aux",
	"ud_verbs", "all", "ALL", "^tcp", "^", "", " ", "x y", "posix:foo", "tcp:", ":aux", "\\", "\\\\tcp",
	"a_name_that_is_far_too_long_for_ucx", "tcp\n", "sysv\r", "\xff", "t\xe9p", "tc\x01p", ",", ",,",
};

static void random_value(char *buf, size_t size)
{
	size_t len = 0;
	unsigned n = rnd(40);

	buf[0] = '\0';
	if (rnd(3) == 0)
		buf[len++] = '^';
	for (unsigned i = 0; i < n; i++) {
		const char *p = pieces[rnd(sizeof(pieces) / sizeof(pieces[0]))];
		size_t pl = strlen(p);

		if (len + pl + 2 >= size)
			break;
		if (i > 0)
			buf[len++] = ',';
		memcpy(buf + len, p, pl);
		len += pl;
	}
	buf[len] = '\0';
}

static void test_random_values(void **state)
{
	char value[2048];

	(void)state;
	for (int i = 0; i < 20000; i++) {
		random_value(value, sizeof(value));
		check_value(value, (unsigned)i & HOST_ALL);
	}
	for (int i = 0; i < 5000; i++) { /* bytes, commas often */
		size_t n = rnd(200);

		for (size_t k = 0; k < n; k++)
			value[k] = rnd(4) == 0 ? ',' : (char)(1 + rnd(255));
		value[n] = '\0';
		check_value(value, (unsigned)i & HOST_ALL);
	}
}

/* Huge values: nothing may overflow (the ASan build checks), and the cut
 * at UCX_TLS_NAMES_MAX names is counted. */
static void test_hostile_lengths(void **state)
{
	const size_t big = 1u << 20;
	char *v = malloc(big + 1), *p;
	struct ucx_tls t;

	(void)state;
	assert_non_null(v);
	memset(v, ',', big);
	v[big] = '\0';
	check_value(v, HOST_ALL);
	memset(v, 'x', big);
	check_value(v, HOST_ALL);
	ucx_tls_choose(v, HOST_ALL, &t);
	assert_string_equal(t.list, "self");
	assert_string_equal(t.dropped, "1 unusable name");
	/* 100000 distinct names, then tcp and sysv at the end */
	p = v;
	for (int i = 0; i < 100000; i++)
		p += sprintf(p, "n%d,", i);
	strcpy(p, "tcp,sysv");
	check_value(v, HOST_ALL);
	ucx_tls_choose(v, HOST_ALL, &t);
	assert_int_equal(strncmp(t.list, "n0,n1,n2,", 9), 0);
	assert_string_equal(t.dropped, "tcp, sysv, 99969 names past the first 32");
	assert_true(t.tcp);
	/* the same as a negation: ours stay first */
	v[0] = '^';
	check_value(v, HOST_ALL);
	ucx_tls_choose(v, HOST_ALL, &t);
	assert_int_equal(strncmp(t.list, "^tcp,sysv,knem,xpmem,", 21), 0);
	assert_false(t.tcp);
	/* names of exactly UCX_TLS_NAME_MAX characters pass, one more does not */
	memset(v, 'q', UCX_TLS_NAME_MAX);
	v[UCX_TLS_NAME_MAX] = '\0';
	ucx_tls_choose(v, HOST_ALL, &t);
	assert_string_equal(t.list, v);
	strcat(v, "q");
	ucx_tls_choose(v, HOST_ALL, &t);
	assert_string_equal(t.list, "self");
	free(v);
}

/* The message never carries the user's bytes. */
static void test_message_has_no_user_bytes(void **state)
{
	struct ucx_tls t;

	(void)state;
	ucx_tls_choose("tcp\n[ERROR] forged,sysv,%s%n,\x1b[31m", UCX_TLS_HOST_CMA, &t);
	assert_string_equal(t.dropped, "sysv (posix instead), 3 unusable names");
	assert_string_equal(t.list, "posix");
}

/* ---- live UCX ------------------------------------------------------------- */

/* SysV segments this process created (/proc/sysvipc/shm: cpid is the 5th
 * field); -1 if the kernel has no SysV IPC. */
static int own_sysv_segments(void)
{
	char line[512];
	FILE *f = fopen("/proc/sysvipc/shm", "r");
	int n = 0;
	long long key, size, cpid;
	int id;
	unsigned perms;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "%lld %d %o %lld %lld", &key, &id, &perms, &size, &cpid) == 5 && cpid == getpid())
			n++;
	fclose(f);
	return n;
}

/* Our descriptors that are POSIX shared memory of UCX's. */
static int own_posix_segments(void)
{
	char path[64], target[256];
	int n = 0;

	for (int fd = 0; fd < 1024; fd++) {
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		len = readlink(path, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = '\0';
		n += strstr(target, "/ucx_shm_posix_") != NULL;
	}
	return n;
}

struct live_result {
	int sysv, posix;
	char output[4096]; /* what UCX printed meanwhile */
};

/* A UCX context and worker with TLS=tls; what they created and printed. */
static void live_worker(const char *tls, struct live_result *r)
{
	ucp_params_t params = {.field_mask = UCP_PARAM_FIELD_FEATURES, .features = UCP_FEATURE_AM};
	ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
				  .thread_mode = UCS_THREAD_MODE_SINGLE};
	char path[] = "/tmp/test_ucx_tls.XXXXXX";
	int fd = mkstemp(path), saved_out = dup(1), saved_err = dup(2);
	ucp_config_t *config;
	ucp_context_h ctx;
	ucp_worker_h worker;
	ssize_t n;

	assert_true(fd >= 0 && saved_out >= 0 && saved_err >= 0);
	unlink(path);
	fflush(stdout);
	fflush(stderr);
	dup2(fd, 1);
	dup2(fd, 2);
	assert_int_equal(ucp_config_read(NULL, NULL, &config), UCS_OK);
	assert_int_equal(ucp_config_modify(config, "TLS", tls), UCS_OK);
	assert_int_equal(ucp_init(&params, config, &ctx), UCS_OK);
	ucp_config_release(config);
	assert_int_equal(ucp_worker_create(ctx, &wp, &worker), UCS_OK);
	r->sysv = own_sysv_segments();
	r->posix = own_posix_segments();
	ucp_worker_destroy(worker);
	ucp_cleanup(ctx);
	fflush(stdout);
	fflush(stderr);
	dup2(saved_out, 1);
	dup2(saved_err, 2);
	close(saved_out);
	close(saved_err);
	n = pread(fd, r->output, sizeof(r->output) - 1, 0);
	r->output[n > 0 ? n : 0] = '\0';
	close(fd);
}

static void test_live_ucx(void **state)
{
	static const char *const users[] = {NULL, "self,sm,cma", "self,sm", "sysv", "^self", "tcp", "knem"};
	unsigned host = ucx_tls_host();
	struct live_result r;
	struct ucx_tls t;

	(void)state;
	unsetenv("UCX_TLS");
	live_worker("self,sm", &r); /* the control: UCX's own reading */
	if (r.sysv < 0)
		skip();
	if (r.sysv == 0)
		fail_msg("the control (TLS=self,sm) created no SysV segment: this test could not fail");
	for (size_t i = 0; i < sizeof(users) / sizeof(users[0]); i++) {
		ucx_tls_choose(users[i], host, &t);
		live_worker(t.list, &r);
		if (r.sysv != 0 || strstr(r.output, "WARN") != NULL || strstr(r.output, "ERROR") != NULL)
			fail_msg("UCX_TLS=%s -> \"%s\": %d SysV segments; UCX said: %s", users[i] ? users[i] : "(unset)",
				 t.list, r.sysv, r.output);
		if ((r.posix > 0) != t.posix)
			fail_msg("UCX_TLS=%s -> \"%s\": posix flag %d but %d POSIX segments",
				 users[i] ? users[i] : "(unset)", t.list, t.posix, r.posix);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forms),
		cmocka_unit_test(test_model_sees_left_out),
		cmocka_unit_test(test_random_values),
		cmocka_unit_test(test_hostile_lengths),
		cmocka_unit_test(test_message_has_no_user_bytes),
		cmocka_unit_test(test_live_ucx),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
