/*
 * softdoca — the fault-injecting engine: an ops table (engine.h) that sits
 * in front of the engine a doca_rdma context chose and makes things go
 * wrong on purpose (SOFTDOCA_FAULTS, softdoca_fault.h): tasks that fail
 * with a chosen status, operations held back for a while, DOCA_ERROR_FULL
 * at a chosen depth, connections dropped after some operations or some
 * time, receives held back in periodic storms (the peer's sends meet a
 * receiver not ready), RDMA CM requests rejected or left to time out,
 * a listener's (conn:cm_...) or our own (conn/client:cm_...), and rules
 * narrowed to some connections (/id=, /nth=). It owns the rule grammar
 * and its strict parser, the process's rule set and counters, the
 * wrapper's workers and connections, and the timer (Core's waker) that wakes a
 * sleeping PE when held work comes due.
 *
 * engine_ops_select only puts it in front when SOFTDOCA_FAULTS is set or
 * the API was used; otherwise the RDMA layer calls the inner table
 * directly and pays nothing.
 *
 * A fault worker wraps the inner worker; a fault connection wraps the
 * inner connection with the same id (both engines number connections
 * 1..max_connections), so every slot is preallocated and an inner
 * connection maps to ours by its id on any thread. Work requests reach
 * the inner engine with their connection swapped to the inner one and
 * their done() swapped to ours (the caller's kept in wr->wrap_done),
 * which counts what is in flight and swaps both back.
 *
 * Threads: the ops run on the application's thread, as engine.h says;
 * done() and connection events may come from any thread and touch only
 * atomics here. Held (delayed) work requests are posted from the
 * worker's progress when due, per connection in submission order (a
 * delay never reorders a connection's operations); they use the wr's
 * engine-private next and wr_id (due time) until then.
 *
 * Injected failures complete through done() at submit time: Core queues
 * the completion, so the task's error callback runs from doca_pe_progress,
 * never inside doca_task_submit, and the PE is woken like any completion.
 * What comes due later with nothing to announce it (held work, after_ms
 * drops, faked client requests, requests waiting for a cm_ rule) wakes
 * the PE through engine_worker_conf.wake, from its waker timer or the
 * engine's event.
 *
 * Our own request taken by a /client rule never leaves: its connection is
 * an inner slot made by export and never connected, whose inner events
 * are swallowed, and progress reports its failure when due.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <softdoca_fault.h>

#include "common.h"
#include "engine.h"
#include "log_internal.h"
#include "waker.h"

SDK_LOG_REGISTER(ENGINE::FAULT)

#define FAULT_ENV "SOFTDOCA_FAULTS"
#define FAULT_MAX_RULES 16u
#define FAULT_MAX_TEXT 4096u
#define FAULT_RULE_TEXT 64u
#define FAULT_MAX_DELAY_NS (60ULL * 1000000000ULL)
#define FAULT_NUM_OPS (ENGINE_OP_SYNC_ADD + 1)
#define FAULT_ALL_OPS (((1u << FAULT_NUM_OPS) - 1u) & ~1u)
#define FAULT_CONN_OPS (FAULT_ALL_OPS & ~(1u << ENGINE_OP_RECV))

/* ---- rules ----------------------------------------------------------------- */

enum fault_action {
	FAULT_FAIL,
	FAULT_DELAY,
	FAULT_FULL,
	FAULT_DROP,
	FAULT_RNR,
	FAULT_CM_REJECT,  /* a connection request rejected before the application sees it */
	FAULT_CM_TIMEOUT, /* ... never answered: the client's request times out */
};

enum fault_mode {
	FAULT_NTH,       /* fail: the n-th matching task only */
	FAULT_EVERY,     /* fail: every n-th */
	FAULT_FRAC,      /* fail: each with probability threshold / 2^64 */
	FAULT_FIXED,     /* delay: lo_ns */
	FAULT_JITTER,    /* delay: uniform in [lo_ns, hi_ns] */
	FAULT_DEPTH,     /* full: n in flight */
	FAULT_AFTER_OPS, /* drop: after n operations */
	FAULT_AFTER_MS,  /* drop: lo_ns after established */
	FAULT_STORM,     /* rnr: receives held for lo_ns of every hi_ns */
};

/* Which connections a rule hits (the /id= and /nth= qualifiers). */
enum fault_sel {
	FAULT_SEL_ALL,
	FAULT_SEL_ID,  /* the connection with id sel_n (doca_rdma_connection_get_id) */
	FAULT_SEL_NTH, /* the sel_n-th connection established on the context */
};

struct fault_rule {
	uint32_t ops; /* bit per engine opcode the rule applies to */
	enum fault_action action;
	enum fault_mode mode;
	enum fault_sel sel;
	uint64_t sel_n;
	bool client; /* cm_ rules: the context's own requests (/client), not a listener's */
	uint64_t n;
	uint64_t threshold;
	uint64_t lo_ns, hi_ns;
	doca_error_t error;
	char text[FAULT_RULE_TEXT]; /* for log lines */
};

struct fault_rules {
	struct fault_rule rule[FAULT_MAX_RULES];
	uint32_t num;
	uint64_t seed;
	bool seeded;
};

/* The process's rule set; workers copy it when fault_gen moves on. */
static pthread_mutex_t fault_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fault_rules fault_rules_now;
static char *fault_env_text;       /* the SOFTDOCA_FAULTS value installed; under fault_lock */
static atomic_uint fault_gen;
static atomic_bool fault_api_used; /* softdoca_fault_set succeeded once: the environment is not read */
static _Atomic uint64_t fault_counts[SOFTDOCA_FAULT_KIND_NUM];

static uint64_t fault_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* splitmix64: small, fast, and the same sequence everywhere for a seed. */
static uint64_t fault_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

static void fault_count(enum softdoca_fault_kind kind)
{
	atomic_fetch_add_explicit(&fault_counts[kind], 1, memory_order_relaxed);
}

/* ---- the parser ------------------------------------------------------------- */

/* Where parsing stopped: the rule, the token and what is wrong with it. */
struct fault_parse {
	const char *src; /* who gave the rules, for the log line */
	uint32_t index;  /* 1-based rule number */
	const char *rule;
	size_t rule_len;
	const char *bad;
	size_t bad_len;
	const char *why;
};

struct fault_tok {
	const char *p;
	size_t len;
};

static bool fault_bad(struct fault_parse *ps, struct fault_tok tok, const char *why)
{
	ps->bad = tok.p;
	ps->bad_len = tok.len;
	ps->why = why;
	return false;
}

static bool fault_tok_is(struct fault_tok tok, const char *word)
{
	return tok.len == strlen(word) && memcmp(tok.p, word, tok.len) == 0;
}

/* Split off the text up to sep (or the end); *rest moves past sep. */
static struct fault_tok fault_split(struct fault_tok *rest, char sep, bool *found)
{
	struct fault_tok head = {rest->p, 0};

	while (head.len < rest->len && rest->p[head.len] != sep)
		head.len++;
	*found = head.len < rest->len;
	rest->p += head.len + (*found ? 1 : 0);
	rest->len -= head.len + (*found ? 1 : 0);
	return head;
}

/* A decimal count: digits only, no sign, no spaces, no overflow. */
static bool fault_parse_u64(struct fault_tok tok, uint64_t *out)
{
	uint64_t v = 0;

	if (tok.len == 0 || tok.len > 20)
		return false;
	for (size_t i = 0; i < tok.len; i++) {
		unsigned d = (unsigned)(tok.p[i] - '0');

		if (d > 9 || v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

static bool fault_parse_count(struct fault_parse *ps, struct fault_tok tok, const char *what, uint64_t *out)
{
	if (!fault_parse_u64(tok, out) || *out == 0)
		return fault_bad(ps, tok, what);
	return true;
}

/* A duration: digits and a unit (ns, us, ms, s), at most 60 s. */
static bool fault_parse_duration(struct fault_tok tok, uint64_t *ns_out)
{
	static const struct {
		const char *unit;
		uint64_t ns;
	} units[] = {{"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000}};
	struct fault_tok num = {tok.p, 0};
	uint64_t v;

	while (num.len < tok.len && tok.p[num.len] >= '0' && tok.p[num.len] <= '9')
		num.len++;
	if (!fault_parse_u64(num, &v))
		return false;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		struct fault_tok unit = {tok.p + num.len, tok.len - num.len};

		if (!fault_tok_is(unit, units[i].unit))
			continue;
		if (v > FAULT_MAX_DELAY_NS / units[i].ns)
			return false;
		*ns_out = v * units[i].ns;
		return true;
	}
	return false;
}

/* A probability in (0, 1] as "0.01", "1" or "1.0": a threshold on 2^64. */
static bool fault_parse_frac(struct fault_tok tok, uint64_t *threshold)
{
	char buf[32];
	bool dot = false;
	double p;

	if (tok.len == 0 || tok.len >= sizeof(buf))
		return false;
	for (size_t i = 0; i < tok.len; i++) {
		if (tok.p[i] == '.' && !dot && i > 0 && i + 1 < tok.len)
			dot = true;
		else if (tok.p[i] < '0' || tok.p[i] > '9')
			return false;
	}
	memcpy(buf, tok.p, tok.len);
	buf[tok.len] = '\0';
	p = strtod(buf, NULL);
	if (!(p > 0.0) || p > 1.0)
		return false;
	*threshold = p >= 1.0 ? UINT64_MAX : (uint64_t)(p * 18446744073709551616.0);
	return *threshold != 0;
}

/* A DOCA error by name, with or without its DOCA_ERROR_ prefix. */
static bool fault_parse_error(struct fault_tok tok, doca_error_t *out)
{
	static const char prefix[] = "DOCA_ERROR_";
	struct fault_tok bare = tok;

	if (tok.len > sizeof(prefix) - 1 && memcmp(tok.p, prefix, sizeof(prefix) - 1) == 0) {
		bare.p += sizeof(prefix) - 1;
		bare.len -= sizeof(prefix) - 1;
	}
	for (int code = 1; code < 256; code++) {
		const char *name = doca_error_get_name((doca_error_t)code);

		if (name == NULL || strncmp(name, prefix, sizeof(prefix) - 1) != 0)
			continue;
		if (fault_tok_is(bare, name + sizeof(prefix) - 1)) {
			*out = (doca_error_t)code;
			return true;
		}
	}
	return false;
}

static const struct {
	const char *name;
	uint32_t ops;
} fault_targets[] = {
	{"any", FAULT_ALL_OPS},
	{"recv", 1u << ENGINE_OP_RECV},
	{"send", 1u << ENGINE_OP_SEND},
	{"send_imm", 1u << ENGINE_OP_SEND_IMM},
	{"write", 1u << ENGINE_OP_WRITE},
	{"write_imm", 1u << ENGINE_OP_WRITE_IMM},
	{"read", 1u << ENGINE_OP_READ},
	{"atomic_cas", 1u << ENGINE_OP_ATOMIC_CAS},
	{"atomic_fadd", 1u << ENGINE_OP_ATOMIC_FADD},
	{"sync_get", 1u << ENGINE_OP_SYNC_GET},
	{"sync_set", 1u << ENGINE_OP_SYNC_SET},
	{"sync_add", 1u << ENGINE_OP_SYNC_ADD},
	{"conn", 0}, /* drop and cm_ rules only */
};

/* The arguments after "action=", split at ':'. */
#define FAULT_MAX_ARGS 4
struct fault_args {
	struct fault_tok tok[FAULT_MAX_ARGS];
	int num;
	struct fault_tok all; /* for "missing" messages */
};

static bool fault_args_count(struct fault_parse *ps, const struct fault_args *a, int want, const char *usage)
{
	if (a->num < want)
		return fault_bad(ps, a->all, usage);
	if (a->num > want)
		return fault_bad(ps, a->tok[want], "unexpected extra argument");
	return true;
}

static bool fault_parse_fail(struct fault_parse *ps, const struct fault_args *a, struct fault_rule *r)
{
	static const char usage[] = "fail takes nth:<N>:<error>, every:<N>:<error> or frac:<P>:<error>";

	if (fault_tok_is(a->tok[0], "nth"))
		r->mode = FAULT_NTH;
	else if (fault_tok_is(a->tok[0], "every"))
		r->mode = FAULT_EVERY;
	else if (fault_tok_is(a->tok[0], "frac"))
		r->mode = FAULT_FRAC;
	else
		return fault_bad(ps, a->tok[0], usage);
	if (!fault_args_count(ps, a, 3, usage))
		return false;
	if (r->mode == FAULT_FRAC) {
		if (!fault_parse_frac(a->tok[1], &r->threshold))
			return fault_bad(ps, a->tok[1], "not a probability in (0, 1] such as 0.01");
	} else if (!fault_parse_count(ps, a->tok[1], "not a count of 1 or more", &r->n)) {
		return false;
	}
	if (!fault_parse_error(a->tok[2], &r->error))
		return fault_bad(ps, a->tok[2], "not a DOCA error name (e.g. DOCA_ERROR_IO_FAILED or IO_FAILED)");
	return true;
}

static bool fault_parse_delay(struct fault_parse *ps, const struct fault_args *a, struct fault_rule *r)
{
	static const char usage[] = "delay takes fixed:<time> or jitter:<time>..<time> (time: 200us, 2ms, 1s)";
	static const char bad_time[] = "not a time: digits and ns, us, ms or s, at most 60s";

	if (!fault_args_count(ps, a, 2, usage))
		return false;
	if (fault_tok_is(a->tok[0], "fixed")) {
		r->mode = FAULT_FIXED;
		if (!fault_parse_duration(a->tok[1], &r->lo_ns))
			return fault_bad(ps, a->tok[1], bad_time);
		if (r->lo_ns == 0)
			return fault_bad(ps, a->tok[1], "a delay of 0 delays nothing");
		r->hi_ns = r->lo_ns;
		return true;
	}
	if (!fault_tok_is(a->tok[0], "jitter"))
		return fault_bad(ps, a->tok[0], usage);
	r->mode = FAULT_JITTER;
	for (size_t i = 0; i + 1 < a->tok[1].len; i++) {
		struct fault_tok lo = {a->tok[1].p, i}, hi = {a->tok[1].p + i + 2, a->tok[1].len - i - 2};

		if (a->tok[1].p[i] != '.' || a->tok[1].p[i + 1] != '.')
			continue;
		if (!fault_parse_duration(lo, &r->lo_ns))
			return fault_bad(ps, lo, bad_time);
		if (!fault_parse_duration(hi, &r->hi_ns))
			return fault_bad(ps, hi, bad_time);
		if (r->hi_ns < r->lo_ns)
			return fault_bad(ps, a->tok[1], "the range ends before it starts");
		if (r->hi_ns == 0)
			return fault_bad(ps, a->tok[1], "a delay of 0 delays nothing");
		return true;
	}
	return fault_bad(ps, a->tok[1], "jitter takes a range <time>..<time>, e.g. 50us..2ms");
}

static bool fault_parse_full(struct fault_parse *ps, const struct fault_args *a, struct fault_rule *r)
{
	static const char usage[] = "full takes depth:<N>";

	if (!fault_tok_is(a->tok[0], "depth"))
		return fault_bad(ps, a->tok[0], usage);
	if (!fault_args_count(ps, a, 2, usage))
		return false;
	r->mode = FAULT_DEPTH;
	if (!fault_parse_count(ps, a->tok[1], "not a depth of 1 or more", &r->n))
		return false;
	if (r->n > UINT32_MAX)
		return fault_bad(ps, a->tok[1], "depth too large");
	return true;
}

static bool fault_parse_rnr(struct fault_parse *ps, const struct fault_args *a, struct fault_rule *r)
{
	static const char usage[] = "rnr takes storm:<length>:<period>, e.g. storm:20ms:100ms";
	static const char bad_time[] = "not a time: digits and ns, us, ms or s, at most 60s";

	if (!fault_tok_is(a->tok[0], "storm"))
		return fault_bad(ps, a->tok[0], usage);
	if (!fault_args_count(ps, a, 3, usage))
		return false;
	r->mode = FAULT_STORM;
	if (!fault_parse_duration(a->tok[1], &r->lo_ns))
		return fault_bad(ps, a->tok[1], bad_time);
	if (r->lo_ns == 0)
		return fault_bad(ps, a->tok[1], "a storm of 0 holds nothing");
	if (!fault_parse_duration(a->tok[2], &r->hi_ns))
		return fault_bad(ps, a->tok[2], bad_time);
	if (r->hi_ns <= r->lo_ns)
		return fault_bad(ps, a->tok[2], "the period must be longer than the storm");
	return true;
}

/* cm_reject= and cm_timeout=: which requests, nth:<N> or every:<N>. */
static bool fault_parse_cm(struct fault_parse *ps, const struct fault_args *a, struct fault_rule *r)
{
	static const char usage[] = "cm_reject and cm_timeout take nth:<N> or every:<N>";

	if (fault_tok_is(a->tok[0], "nth"))
		r->mode = FAULT_NTH;
	else if (fault_tok_is(a->tok[0], "every"))
		r->mode = FAULT_EVERY;
	else
		return fault_bad(ps, a->tok[0], usage);
	if (!fault_args_count(ps, a, 2, usage))
		return false;
	return fault_parse_count(ps, a->tok[1], "not a count of 1 or more", &r->n);
}

static bool fault_parse_drop(struct fault_parse *ps, const struct fault_args *a, struct fault_rule *r)
{
	static const char usage[] = "drop takes after_ops:<N> or after_ms:<T>";
	uint64_t ms;

	if (!fault_args_count(ps, a, 2, usage))
		return false;
	if (fault_tok_is(a->tok[0], "after_ops")) {
		r->mode = FAULT_AFTER_OPS;
		return fault_parse_count(ps, a->tok[1], "not a count of 1 or more", &r->n);
	}
	if (!fault_tok_is(a->tok[0], "after_ms"))
		return fault_bad(ps, a->tok[0], usage);
	r->mode = FAULT_AFTER_MS;
	if (!fault_parse_count(ps, a->tok[1], "not a time in ms of 1 or more", &ms))
		return false;
	if (ms > 86400000ULL)
		return fault_bad(ps, a->tok[1], "more than a day");
	r->lo_ns = ms * 1000000ULL;
	return true;
}

/* The qualifier after '/' in the target: id=<N>, nth=<N>, client or
 * server; which ones an action takes is checked here, once the action
 * is known. qual.p is NULL when there is none. */
static bool fault_parse_qual(struct fault_parse *ps, struct fault_tok qual, struct fault_rule *r)
{
	static const char id_word[] = "id=", nth_word[] = "nth=";
	bool cm = r->action == FAULT_CM_REJECT || r->action == FAULT_CM_TIMEOUT;
	struct fault_tok num;

	if (qual.p == NULL)
		return true;
	if (fault_tok_is(qual, "client") || fault_tok_is(qual, "server")) {
		if (!cm)
			return fault_bad(ps, qual, "/client and /server choose whose connection requests a cm_ rule "
						   "takes; other rules take /id=<N> or /nth=<N>");
		r->client = fault_tok_is(qual, "client");
		return true;
	}
	if (qual.len > sizeof(id_word) - 1 && memcmp(qual.p, id_word, sizeof(id_word) - 1) == 0) {
		r->sel = FAULT_SEL_ID;
		num = (struct fault_tok){qual.p + sizeof(id_word) - 1, qual.len - (sizeof(id_word) - 1)};
	} else if (qual.len > sizeof(nth_word) - 1 && memcmp(qual.p, nth_word, sizeof(nth_word) - 1) == 0) {
		r->sel = FAULT_SEL_NTH;
		num = (struct fault_tok){qual.p + sizeof(nth_word) - 1, qual.len - (sizeof(nth_word) - 1)};
	} else {
		return fault_bad(ps, qual, "unknown qualifier (id=<N>, nth=<N>, client or server)");
	}
	if (cm)
		return fault_bad(ps, qual, "a connection request has no connection yet: cm_ rules take /client or /server");
	if (r->ops == (1u << ENGINE_OP_RECV))
		return fault_bad(ps, qual, "receives belong to no connection: recv rules take no /id= or /nth=");
	if (!fault_parse_count(ps, num, "not a connection number of 1 or more", &r->sel_n))
		return false;
	if (r->sel == FAULT_SEL_ID && r->sel_n > UINT16_MAX)
		return fault_bad(ps, num, "no connection has an id above 65535");
	return true;
}

/* The rule's action and arguments, after the target. */
static bool fault_parse_action(struct fault_parse *ps, struct fault_tok target, struct fault_tok action,
			       const struct fault_args *a, struct fault_rule *r)
{
	if (fault_tok_is(action, "cm_reject") || fault_tok_is(action, "cm_timeout")) {
		if (r->ops != 0)
			return fault_bad(ps, target, "connection requests are a connection's: write it conn:cm_...=");
		r->action = fault_tok_is(action, "cm_reject") ? FAULT_CM_REJECT : FAULT_CM_TIMEOUT;
		return fault_parse_cm(ps, a, r);
	}
	if (fault_tok_is(action, "drop")) {
		if (r->ops != 0)
			return fault_bad(ps, target, "drop applies to a connection: write it conn:drop=...");
		r->action = FAULT_DROP;
		r->ops = FAULT_CONN_OPS;
		return fault_parse_drop(ps, a, r);
	}
	if (r->ops == 0)
		return fault_bad(ps, target,
				 "conn takes only drop=, cm_reject= or cm_timeout=; use a task type or any");
	if (fault_tok_is(action, "rnr")) {
		if (r->ops != (1u << ENGINE_OP_RECV))
			return fault_bad(ps, target, "rnr holds receives: write it recv:rnr=...");
		r->action = FAULT_RNR;
		return fault_parse_rnr(ps, a, r);
	}
	if (fault_tok_is(action, "fail")) {
		r->action = FAULT_FAIL;
		return fault_parse_fail(ps, a, r);
	}
	if (fault_tok_is(action, "delay")) {
		r->action = FAULT_DELAY;
		return fault_parse_delay(ps, a, r);
	}
	if (fault_tok_is(action, "full")) {
		r->action = FAULT_FULL;
		return fault_parse_full(ps, a, r);
	}
	return fault_bad(ps, action, "unknown action (fail, delay, full, drop, rnr, cm_reject, cm_timeout)");
}

/* One rule "<target>[/<qualifier>]:<action>=<arg>[:<arg>...]". */
static bool fault_parse_rule(struct fault_parse *ps, struct fault_tok text, struct fault_rule *r)
{
	struct fault_tok rest = text, target, type, tail, qual = {NULL, 0}, action;
	struct fault_args a = {.num = 0};
	bool found, has_qual;
	size_t t;

	target = fault_split(&rest, ':', &found);
	if (!found)
		return fault_bad(ps, text, "a rule is <task type>:<action>=<arguments> or seed=<N>");
	tail = target;
	type = fault_split(&tail, '/', &has_qual);
	if (has_qual) {
		qual = tail;
		if (qual.len == 0)
			return fault_bad(ps, target, "a '/' takes a qualifier (id=<N>, nth=<N>, client or server)");
		if (memchr(qual.p, '/', qual.len) != NULL)
			return fault_bad(ps, qual, "one qualifier per rule");
	}
	for (t = 0; t < sizeof(fault_targets) / sizeof(fault_targets[0]); t++)
		if (fault_tok_is(type, fault_targets[t].name))
			break;
	if (t == sizeof(fault_targets) / sizeof(fault_targets[0]))
		return fault_bad(ps, type,
				 "unknown task type (any, recv, send, send_imm, write, write_imm, read, atomic_cas, "
				 "atomic_fadd, sync_get, sync_set, sync_add, or conn for drop)");
	action = fault_split(&rest, '=', &found);
	if (!found)
		return fault_bad(ps, action,
				 "an action is fail=, delay=, full=, drop=, rnr=, cm_reject= or cm_timeout=");
	a.all = rest;
	while (a.num < FAULT_MAX_ARGS) {
		a.tok[a.num] = fault_split(&rest, ':', &found);
		if (a.tok[a.num].len == 0)
			return fault_bad(ps, text, "an argument is empty");
		a.num++;
		if (!found)
			break;
	}
	if (found)
		return fault_bad(ps, rest, "unexpected extra argument");
	r->ops = fault_targets[t].ops;
	if (!fault_parse_action(ps, type, action, &a, r))
		return false;
	return fault_parse_qual(ps, qual, r);
}

static bool fault_parse_one(struct fault_parse *ps, struct fault_tok text, struct fault_rules *out)
{
	static const char seed_word[] = "seed=";
	struct fault_rule *r;

	if (text.len == 0)
		return fault_bad(ps, text, "empty rule (two ';' in a row)");
	if (text.len >= sizeof(seed_word) - 1 && memcmp(text.p, seed_word, sizeof(seed_word) - 1) == 0) {
		struct fault_tok num = {text.p + sizeof(seed_word) - 1, text.len - (sizeof(seed_word) - 1)};

		if (out->seeded)
			return fault_bad(ps, text, "the seed is given twice");
		if (!fault_parse_u64(num, &out->seed))
			return fault_bad(ps, num, "not a seed (a decimal number)");
		out->seeded = true;
		return true;
	}
	if (out->num == FAULT_MAX_RULES)
		return fault_bad(ps, text, "too many rules (at most 16)");
	r = &out->rule[out->num];
	memset(r, 0, sizeof(*r));
	if (!fault_parse_rule(ps, text, r))
		return false;
	snprintf(r->text, sizeof(r->text), "%.*s", (int)text.len, text.p);
	out->num++;
	return true;
}

/* Parse text into out; on a bad token, one log line and INVALID_VALUE. */
static doca_error_t fault_parse_all(const char *src, const char *text, struct fault_rules *out)
{
	struct fault_parse ps = {.src = src};
	struct fault_tok rest = {text, strlen(text)};
	bool found = true;

	memset(out, 0, sizeof(*out));
	if (rest.len > FAULT_MAX_TEXT) {
		SDK_LOG_ERR("%s: the rules are %zu bytes long, at most %u", src, rest.len, FAULT_MAX_TEXT);
		return DOCA_ERROR_INVALID_VALUE;
	}
	/* One ';' may end the list; "" is no rules at all. */
	while (rest.len > 0) {
		struct fault_tok rule = fault_split(&rest, ';', &found);

		ps.index++;
		ps.rule = rule.p;
		ps.rule_len = rule.len;
		if (!fault_parse_one(&ps, rule, out)) {
			SDK_LOG_ERR("%s: rule %u \"%.*s\": bad token \"%.*s\": %s", src, ps.index,
				    (int)(ps.rule_len > 80 ? 80 : ps.rule_len), ps.rule,
				    (int)(ps.bad_len > 64 ? 64 : ps.bad_len), ps.bad, ps.why);
			return DOCA_ERROR_INVALID_VALUE;
		}
	}
	return DOCA_SUCCESS;
}

/* Under fault_lock: make rules the process's and zero the counters. */
static void fault_install_locked(const struct fault_rules *rules)
{
	fault_rules_now = *rules;
	for (int k = 0; k < SOFTDOCA_FAULT_KIND_NUM; k++)
		atomic_store(&fault_counts[k], 0);
	atomic_fetch_add_explicit(&fault_gen, 1, memory_order_release);
}

/* SOFTDOCA_FAULTS, parsed again only when its value changed. */
static doca_error_t fault_env_install(const char *env)
{
	struct fault_rules rules;
	doca_error_t status = DOCA_SUCCESS;

	pthread_mutex_lock(&fault_lock);
	if (fault_env_text != NULL && strcmp(fault_env_text, env) == 0)
		goto out;
	status = fault_parse_all(FAULT_ENV, env, &rules);
	if (status != DOCA_SUCCESS)
		goto out;
	free(fault_env_text);
	fault_env_text = strdup(env);
	if (fault_env_text == NULL) {
		SDK_LOG_ERR("%s: out of memory", FAULT_ENV);
		status = DOCA_ERROR_NO_MEMORY;
		goto out;
	}
	fault_install_locked(&rules);
out:
	pthread_mutex_unlock(&fault_lock);
	return status;
}

/* ---- the public API ------------------------------------------------------------ */

SOFTDOCA_EXPORT doca_error_t softdoca_fault_set(const char *rules)
{
	struct fault_rules parsed;
	doca_error_t status;

	if (rules == NULL) {
		SDK_LOG_ERR("softdoca_fault_set: rules is NULL (\"\" clears them)");
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = fault_parse_all("softdoca_fault_set", rules, &parsed);
	if (status != DOCA_SUCCESS)
		return status;
	pthread_mutex_lock(&fault_lock);
	fault_install_locked(&parsed);
	atomic_store(&fault_api_used, true);
	pthread_mutex_unlock(&fault_lock);
	return DOCA_SUCCESS;
}

SOFTDOCA_EXPORT void softdoca_fault_clear(void)
{
	(void)softdoca_fault_set("");
}

SOFTDOCA_EXPORT doca_error_t softdoca_fault_get_count(enum softdoca_fault_kind kind, uint64_t *count)
{
	if (count == NULL) {
		SDK_LOG_ERR("softdoca_fault_get_count: count is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if ((unsigned)kind >= SOFTDOCA_FAULT_KIND_NUM) {
		SDK_LOG_ERR("softdoca_fault_get_count: unknown kind %d", (int)kind);
		return DOCA_ERROR_INVALID_VALUE;
	}
	*count = atomic_load(&fault_counts[kind]);
	return DOCA_SUCCESS;
}

/* ---- workers and connections --------------------------------------------------- */

struct fault_worker;

struct fault_conn {
	struct fault_worker *w;
	_Atomic(struct engine_conn *) inner; /* set on export, connect_addr, or its first event */
	void *user;
	uint64_t ops;			       /* operations submitted since the connection was made */
	_Atomic uint64_t established_ns;       /* 0 until the inner engine said so */
	bool dropped;
	atomic_bool request_pending;	       /* a CM request waits for the cm_ rules (progress) */
	atomic_uint inflight[FAULT_NUM_OPS];   /* accepted, done() not yet run */
	struct engine_wr *held_head, *held_tail;
	atomic_uint ordinal;		       /* n-th established on the worker; 0 until then */
	/* A request of ours a /client cm_ rule took: the inner connection
	 * is only a slot (exported, never connected), its events are not
	 * the application's, and progress fails it at fake_due. */
	atomic_bool faked;
	uint64_t fake_due;		       /* 0: its failure was reported (or it was closed) */
	struct sockaddr_storage fake_addr;     /* the address asked for (doca_rdma_connection_get_addr) */
	socklen_t fake_addr_len;
};

struct fault_worker {
	const struct engine_ops *inner_ops;
	struct engine_worker *inner;
	struct engine_worker_conf conf; /* the caller's: its conn_event and arg */
	unsigned int gen;		/* of the rules copied below */
	struct fault_rules rules;
	uint64_t since_ns;		/* when they were copied */
	uint64_t seen[FAULT_MAX_RULES]; /* matching submissions per rule */
	uint64_t rng[FAULT_MAX_RULES];
	bool told_full[FAULT_MAX_RULES];
	bool timers;			/* a drop rule counts time */
	atomic_bool cm;			/* cm_ rules for a listener: requests wait for progress to decide */
	uint64_t requests;		/* connection requests decided */
	uint64_t connects;		/* our own requests (conn_connect_addr) since the rules were set */
	uint32_t fakes;			/* faked requests whose failure is still to come */
	atomic_uint established;	/* connections established so far (their ordinals) */
	uint64_t timer_due;		/* the wake last asked of the timer (application thread) */
	struct softdoca_waker_timer timer; /* wakes our PE (waker.h) */
	struct fault_conn *conns;	/* one per inner connection id */
	uint32_t num_conns;
	atomic_uint recv_inflight;
	struct engine_wr *rheld_head, *rheld_tail;
	uint32_t held; /* held work requests, receives included */
	void (*bind)(void *arg, struct engine_conn *conn);
	void *bind_arg;
};

/* What a submission changed, to put back if the engine refuses it. */
struct fault_marks {
	uint64_t seen[FAULT_MAX_RULES];
	uint64_t rng[FAULT_MAX_RULES];
};

static struct fault_worker *fault_worker_of(struct engine_worker *worker)
{
	return (struct fault_worker *)worker;
}

static struct fault_conn *fault_conn_of(const struct engine_conn *conn)
{
	return (struct fault_conn *)conn;
}

static struct engine_conn *fault_inner(const struct fault_conn *fc)
{
	return atomic_load_explicit(&fc->inner, memory_order_acquire);
}

/* Our connection of an inner one (any thread: the id is a plain read). */
static struct fault_conn *fault_conn_by_inner(struct fault_worker *w, struct engine_conn *inner)
{
	uint32_t id = w->inner_ops->conn_id(inner);
	struct fault_conn *fc;

	if (id == 0 || id > w->num_conns) {
		SDK_LOG_CRIT("fault engine: inner connection id %u outside 1..%u", id, w->num_conns);
		return NULL;
	}
	fc = &w->conns[id - 1];
	atomic_store_explicit(&fc->inner, inner, memory_order_release);
	return fc;
}

/* Copy the process's rules when they changed; every count starts over. */
static void fault_refresh(struct fault_worker *w)
{
	unsigned int gen = atomic_load_explicit(&fault_gen, memory_order_acquire);

	if (likely(gen == w->gen))
		return;
	pthread_mutex_lock(&fault_lock);
	w->rules = fault_rules_now;
	w->gen = atomic_load(&fault_gen);
	pthread_mutex_unlock(&fault_lock);
	w->since_ns = fault_now_ns();
	w->timers = false;
	w->requests = 0;
	w->connects = 0;
	atomic_store(&w->cm, false);
	for (uint32_t i = 0; i < FAULT_MAX_RULES; i++) {
		w->seen[i] = 0;
		/* Each rule its own stream: one rule's draws never shift another's. */
		w->rng[i] = w->rules.seed ^ (0xD1B54A32D192ED03ULL * (i + 1));
		w->told_full[i] = false;
		if (i < w->rules.num && w->rules.rule[i].action == FAULT_DROP &&
		    w->rules.rule[i].mode == FAULT_AFTER_MS)
			w->timers = true;
		if (i < w->rules.num && !w->rules.rule[i].client &&
		    (w->rules.rule[i].action == FAULT_CM_REJECT || w->rules.rule[i].action == FAULT_CM_TIMEOUT))
			atomic_store(&w->cm, true);
	}
	for (uint32_t i = 0; i < w->num_conns; i++)
		w->conns[i].ops = 0;
}

/* ---- the wake timer ------------------------------------------------------------------ */

/*
 * Held work, drop deadlines and faked requests come due with nothing to
 * announce them: no completion, no event. A program that sleeps on its
 * PE's notification handle would never progress to release them. Each
 * worker has a timer of Core's waker (waker.h) that calls its wake
 * (engine_worker_conf.wake); cancelling it waits for a running call, so a
 * worker taken off is never woken again.
 */
static uint64_t fault_timer_fired(void *arg, uint64_t now)
{
	struct fault_worker *w = arg;

	(void)now;
	w->conf.wake(w->conf.arg);
	return 0;
}

/* Wake w's PE at due (0: never). */
static void fault_timer_set(struct fault_worker *w, uint64_t due)
{
	static atomic_bool told;

	if (w->conf.wake == NULL)
		return;
	/* Exactly due: a pending wake (even one already past, not yet run)
	 * is replaced, as fault_wake_at expects. */
	softdoca_waker_timer_cancel(&w->timer);
	if (due == 0)
		return;
	if (softdoca_waker_timer_arm(&w->timer, due) != DOCA_SUCCESS && !atomic_exchange(&told, true))
		SDK_LOG_ERR("fault engine: no timer: delayed work and drop deadlines go out only when the "
			    "application progresses its PE");
}

static void fault_timer_remove(struct fault_worker *w)
{
	softdoca_waker_timer_cancel(&w->timer);
}

/* Application thread: a wake at due, unless one no later is pending;
 * due 0 takes back a wake still to come. */
static void fault_wake_at(struct fault_worker *w, uint64_t due, uint64_t now)
{
	if (due == 0) {
		if (w->timer_due > now)
			fault_timer_set(w, 0);
		w->timer_due = 0;
		return;
	}
	if (w->timer_due > now && w->timer_due <= due)
		return;
	w->timer_due = due;
	fault_timer_set(w, due);
}

/* ---- completion of work requests -------------------------------------------------- */

/* The inner engine's done() (any thread), or ours for held requests. */
static void fault_wr_done(struct engine_wr *wr)
{
	if (wr->opcode == ENGINE_OP_RECV) {
		struct fault_worker *w = wr->wrap_arg;

		if (wr->result_conn != NULL)
			wr->result_conn = (struct engine_conn *)fault_conn_by_inner(w, wr->result_conn);
		atomic_fetch_sub(&w->recv_inflight, 1);
	} else {
		struct fault_conn *fc = wr->wrap_arg;

		wr->conn = (struct engine_conn *)fc;
		atomic_fetch_sub(&fc->inflight[wr->opcode], 1);
	}
	wr->done = wr->wrap_done;
	wr->done(wr);
}

/* Complete wr with status without the inner engine (it never saw it). */
static void fault_wr_complete(struct engine_wr *wr, doca_error_t status)
{
	wr->status = status;
	wr->result_len = 0;
	wr->refusal.kind = ENGINE_REFUSAL_NONE;
	wr->result_kind = 0;
	wr->result_imm = 0;
	wr->result_conn = NULL;
	wr->next = NULL;
	wr->done(wr);
}

static void fault_hold(struct engine_wr **head, struct engine_wr **tail, struct engine_wr *wr, uint64_t due)
{
	/* Due times only grow along a queue, so the queue keeps the order. */
	if (*tail != NULL && (uint64_t)(*tail)->wr_id > due)
		due = (*tail)->wr_id;
	wr->wr_id = due;
	wr->next = NULL;
	if (*tail == NULL)
		*head = wr;
	else
		(*tail)->next = wr;
	*tail = wr;
}

static struct engine_wr *fault_unhold(struct engine_wr **head, struct engine_wr **tail)
{
	struct engine_wr *wr = *head;

	*head = wr->next;
	if (*head == NULL)
		*tail = NULL;
	wr->next = NULL;
	wr->wr_id = 0;
	return wr;
}

static void fault_fail_held(struct fault_worker *w, struct engine_wr **head, struct engine_wr **tail,
			    doca_error_t status)
{
	while (*head != NULL) {
		w->held--;
		fault_wr_complete(fault_unhold(head, tail), status);
	}
}

static void fault_fail_conn_held(struct fault_conn *fc, doca_error_t status)
{
	fault_fail_held(fc->w, &fc->held_head, &fc->held_tail, status);
}

/* Hand wr to the inner engine with its inner connection. */
static doca_error_t fault_inner_post(struct fault_worker *w, struct engine_wr *wr)
{
	doca_error_t status;

	if (wr->opcode == ENGINE_OP_RECV)
		return w->inner_ops->post_recv(w->inner, wr);
	wr->conn = fault_inner(fault_conn_of(wr->conn));
	status = w->inner_ops->post(wr);
	if (status != DOCA_SUCCESS)
		wr->conn = (struct engine_conn *)wr->wrap_arg;
	return status;
}

/* Post what is due from one queue; a queue the engine finds full waits. */
static unsigned int fault_release(struct fault_worker *w, struct engine_wr **head, struct engine_wr **tail,
				  uint64_t now)
{
	unsigned int n = 0;

	while (*head != NULL && (uint64_t)(*head)->wr_id <= now) {
		struct engine_wr *wr = *head;
		uint64_t due = wr->wr_id;
		doca_error_t status;

		(void)fault_unhold(head, tail);
		status = fault_inner_post(w, wr);
		if (status == DOCA_ERROR_FULL) {
			/* Back to the head, as it was. */
			wr->wr_id = due;
			wr->next = *head;
			*head = wr;
			if (*tail == NULL)
				*tail = wr;
			break;
		}
		w->held--;
		n++;
		if (status != DOCA_SUCCESS) {
			wr->status = status;
			wr->done(wr); /* ours: counts it and hands it back */
		}
	}
	return n;
}

/* ---- the rules at work -------------------------------------------------------------- */

/* Does r's /id= or /nth= choose fc (NULL: a receive, no connection)? */
static bool fault_selects(const struct fault_rule *r, const struct fault_conn *fc)
{
	if (r->sel == FAULT_SEL_ALL)
		return true;
	if (fc == NULL)
		return false;
	if (r->sel == FAULT_SEL_ID)
		return fc->w->inner_ops->conn_id(fault_inner(fc)) == r->sel_n;
	return atomic_load_explicit(&fc->ordinal, memory_order_relaxed) == r->sel_n;
}

static bool fault_matches(const struct fault_rule *r, enum fault_action action, uint8_t opcode,
			  const struct fault_conn *fc)
{
	return r->action == action && (r->ops & (1u << opcode)) != 0 && fault_selects(r, fc);
}

/* DOCA_ERROR_FULL when a full rule's depth is reached. */
static doca_error_t fault_admit(struct fault_worker *w, const struct fault_conn *fc, uint8_t opcode,
			       unsigned int inflight, uint32_t conn_id)
{
	for (uint32_t i = 0; i < w->rules.num; i++) {
		const struct fault_rule *r = &w->rules.rule[i];

		if (!fault_matches(r, FAULT_FULL, opcode, fc) || inflight < r->n)
			continue;
		if (!w->told_full[i]) {
			w->told_full[i] = true;
			SDK_LOG_INFO("fault injection (rule \"%s\"): submissions refused with DOCA_ERROR_FULL "
				     "while %llu are in flight (connection %u)",
				     r->text, (unsigned long long)r->n, conn_id);
		}
		fault_count(SOFTDOCA_FAULT_FULL);
		return DOCA_ERROR_FULL;
	}
	return DOCA_SUCCESS;
}

/* The error a fail rule picks for this submission, or DOCA_SUCCESS. Every
 * matching rule counts it, so each rule's N-th is the N-th it saw. */
static doca_error_t fault_pick_fail(struct fault_worker *w, const struct fault_conn *fc, uint8_t opcode)
{
	doca_error_t picked = DOCA_SUCCESS;

	for (uint32_t i = 0; i < w->rules.num; i++) {
		const struct fault_rule *r = &w->rules.rule[i];
		bool fire;

		if (!fault_matches(r, FAULT_FAIL, opcode, fc))
			continue;
		w->seen[i]++;
		if (r->mode == FAULT_NTH)
			fire = w->seen[i] == r->n;
		else if (r->mode == FAULT_EVERY)
			fire = w->seen[i] % r->n == 0;
		else
			fire = fault_rand(&w->rng[i]) < r->threshold || r->threshold == UINT64_MAX;
		if (fire && picked == DOCA_SUCCESS)
			picked = r->error;
	}
	return picked;
}

/* The delay matching rules add up to, in ns. */
static uint64_t fault_pick_delay(struct fault_worker *w, const struct fault_conn *fc, uint8_t opcode)
{
	uint64_t total = 0;

	for (uint32_t i = 0; i < w->rules.num; i++) {
		const struct fault_rule *r = &w->rules.rule[i];

		if (!fault_matches(r, FAULT_DELAY, opcode, fc))
			continue;
		if (r->mode == FAULT_FIXED)
			total += r->lo_ns;
		else
			total += r->lo_ns + fault_rand(&w->rng[i]) % (r->hi_ns - r->lo_ns + 1);
	}
	return total;
}

/* Receiver not ready: a receive posted inside a storm waits for its end. */
static uint64_t fault_pick_storm(struct fault_worker *w, uint8_t opcode, uint64_t now)
{
	uint64_t hold = 0;

	for (uint32_t i = 0; i < w->rules.num; i++) {
		const struct fault_rule *r = &w->rules.rule[i];
		uint64_t phase;

		if (!fault_matches(r, FAULT_RNR, opcode, NULL))
			continue;
		phase = (now - w->since_ns) % r->hi_ns;
		if (phase < r->lo_ns && r->lo_ns - phase > hold)
			hold = r->lo_ns - phase;
	}
	return hold;
}

/* As a dead peer looks: what is held fails, the inner engine closes the
 * connection (its in-flight operations fail, the peer sees a
 * disconnection), and our context hears of a failure. */
static void fault_conn_drop(struct fault_conn *fc, const struct fault_rule *r)
{
	struct fault_worker *w = fc->w;
	struct engine_conn *inner = fault_inner(fc);

	if (fc->dropped || !w->inner_ops->conn_is_usable(inner))
		return;
	fc->dropped = true;
	SDK_LOG_INFO("fault injection (rule \"%s\"): connection %u dropped after %llu operations", r->text,
		     w->inner_ops->conn_id(inner), (unsigned long long)fc->ops);
	fault_fail_conn_held(fc, DOCA_ERROR_CONNECTION_RESET);
	(void)w->inner_ops->conn_disconnect(inner);
	fault_count(SOFTDOCA_FAULT_DROPPED);
	if (w->conf.conn_event != NULL)
		w->conf.conn_event(w->conf.arg, (struct engine_conn *)fc, ENGINE_CONN_FAILED);
}

static void fault_drop_after_ops(struct fault_conn *fc)
{
	struct fault_worker *w = fc->w;

	for (uint32_t i = 0; i < w->rules.num; i++) {
		const struct fault_rule *r = &w->rules.rule[i];

		if (r->action == FAULT_DROP && r->mode == FAULT_AFTER_OPS && fc->ops == r->n && fault_selects(r, fc)) {
			fault_conn_drop(fc, r);
			return;
		}
	}
}

static unsigned int fault_drop_timers(struct fault_worker *w, uint64_t now)
{
	unsigned int n = 0;

	for (uint32_t c = 0; c < w->num_conns; c++) {
		struct fault_conn *fc = &w->conns[c];
		uint64_t since = atomic_load(&fc->established_ns);

		if (since == 0 || fc->dropped)
			continue;
		if (since < w->since_ns)
			since = w->since_ns;
		for (uint32_t i = 0; i < w->rules.num; i++) {
			const struct fault_rule *r = &w->rules.rule[i];

			if (r->action == FAULT_DROP && r->mode == FAULT_AFTER_MS && now >= since + r->lo_ns &&
			    fault_selects(r, fc)) {
				fault_conn_drop(fc, r);
				n++;
				break;
			}
		}
	}
	return n;
}

/* When the earliest after_ms rule drops fc (0: none will). */
static uint64_t fault_drop_due(const struct fault_worker *w, struct fault_conn *fc)
{
	uint64_t since = atomic_load(&fc->established_ns), due = 0;

	if (since == 0 || fc->dropped)
		return 0;
	if (since < w->since_ns)
		since = w->since_ns;
	for (uint32_t i = 0; i < w->rules.num; i++) {
		const struct fault_rule *r = &w->rules.rule[i];

		if (r->action == FAULT_DROP && r->mode == FAULT_AFTER_MS && fault_selects(r, fc) &&
		    (due == 0 || since + r->lo_ns < due))
			due = since + r->lo_ns;
	}
	return due;
}

static uint64_t fault_earliest(uint64_t a, uint64_t b)
{
	return a == 0 || (b != 0 && b < a) ? b : a;
}

/* The next time after now that progress has something to do without
 * being told (0: none). A held queue whose head is past due waits for a
 * completion (the inner engine found it full): that completion wakes. */
static uint64_t fault_next_due(struct fault_worker *w, uint64_t now)
{
	uint64_t next = 0;

	if (w->rheld_head != NULL && (uint64_t)w->rheld_head->wr_id > now)
		next = w->rheld_head->wr_id;
	for (uint32_t c = 0; c < w->num_conns; c++) {
		struct fault_conn *fc = &w->conns[c];

		if (fc->held_head != NULL && (uint64_t)fc->held_head->wr_id > now)
			next = fault_earliest(next, fc->held_head->wr_id);
		if (fc->fake_due > now)
			next = fault_earliest(next, fc->fake_due);
		if (w->timers)
			next = fault_earliest(next, fault_drop_due(w, fc));
	}
	return next;
}

/* A faked request of ours stops being one: nothing more will be said. */
static void fault_fake_cancel(struct fault_conn *fc)
{
	if (fc->fake_due != 0)
		fc->w->fakes--;
	fc->fake_due = 0;
}

/* Faked requests whose time came: the inner slot closes (its own events
 * are not the application's) and the context hears a failure, as after
 * a rejection or a request timeout. */
static unsigned int fault_fail_fakes(struct fault_worker *w, uint64_t now)
{
	unsigned int n = 0;

	for (uint32_t c = 0; c < w->num_conns && w->fakes > 0; c++) {
		struct fault_conn *fc = &w->conns[c];

		if (fc->fake_due == 0 || fc->fake_due > now)
			continue;
		fault_fake_cancel(fc);
		(void)w->inner_ops->conn_disconnect(fault_inner(fc));
		if (w->conf.conn_event != NULL)
			w->conf.conn_event(w->conf.arg, (struct engine_conn *)fc, ENGINE_CONN_FAILED);
		n++;
	}
	return n;
}

/* The cm_ rule that takes the next connection request of one side, or
 * NULL: our own requests (client, counted in *count = connects) or a
 * listener's (counted in requests). The first rule that fires wins. */
static const struct fault_rule *fault_pick_cm_rule(struct fault_worker *w, bool client, uint64_t *count)
{
	const struct fault_rule *picked = NULL;

	(*count)++;
	for (uint32_t i = 0; i < w->rules.num && picked == NULL; i++) {
		const struct fault_rule *r = &w->rules.rule[i];
		bool fire;

		if ((r->action != FAULT_CM_REJECT && r->action != FAULT_CM_TIMEOUT) || r->client != client)
			continue;
		fire = r->mode == FAULT_NTH ? *count == r->n : *count % r->n == 0;
		if (fire)
			picked = r;
	}
	return picked;
}

static const struct fault_rule *fault_pick_connect(struct fault_worker *w)
{
	return fault_pick_cm_rule(w, true, &w->connects);
}

static const struct fault_rule *fault_pick_cm(struct fault_worker *w)
{
	return fault_pick_cm_rule(w, false, &w->requests);
}

/* Requests held for the cm_ rules: rejected (the client hears a
 * rejection), left unanswered (the client times out; the inner engine
 * drops the request at its own timeout), or handed to the application. */
static unsigned int fault_decide_requests(struct fault_worker *w)
{
	unsigned int n = 0;

	for (uint32_t i = 0; i < w->num_conns; i++) {
		struct fault_conn *fc = &w->conns[i];
		const struct fault_rule *r;

		if (!atomic_exchange(&fc->request_pending, false))
			continue;
		n++;
		r = fault_pick_cm(w);
		if (r == NULL) {
			if (w->conf.conn_event != NULL)
				w->conf.conn_event(w->conf.arg, (struct engine_conn *)fc, ENGINE_CONN_REQUEST);
			continue;
		}
		fault_count(SOFTDOCA_FAULT_CM);
		SDK_LOG_INFO("fault injection (rule \"%s\"): connection request %u %s", r->text, i + 1,
			     r->action == FAULT_CM_REJECT ? "rejected" : "left unanswered");
		if (r->action == FAULT_CM_REJECT)
			(void)w->inner_ops->conn_reject(fault_inner(fc));
	}
	return n;
}

/* ---- the ops ------------------------------------------------------------------------ */

static void fault_on_conn_event(void *arg, struct engine_conn *inner, enum engine_conn_event event)
{
	struct fault_worker *w = arg;
	struct fault_conn *fc = fault_conn_by_inner(w, inner);

	if (fc == NULL)
		return;
	if (event == ENGINE_CONN_REQUEST) {
		atomic_store(&fc->faked, false); /* a slot once faked, freed, serving a new request */
	} else if (atomic_load(&fc->faked)) {
		SDK_LOG_DBG("fault engine: event %d of faked connection %u not passed on", (int)event,
			    w->inner_ops->conn_id(inner));
		return;
	}
	if (event == ENGINE_CONN_ESTABLISHED) {
		atomic_store(&fc->established_ns, fault_now_ns());
		atomic_store(&fc->ordinal, atomic_fetch_add(&w->established, 1) + 1);
	}
	if (event == ENGINE_CONN_REQUEST && atomic_load(&w->cm)) {
		/* A new request on this slot: nobody holds it yet. Progress
		 * decides (the rules are the application thread's), so it
		 * must run even for a program asleep on its PE. */
		fc->user = NULL;
		atomic_store(&fc->request_pending, true);
		if (w->conf.wake != NULL)
			w->conf.wake(w->conf.arg);
		return;
	}
	if (w->conf.conn_event != NULL)
		w->conf.conn_event(w->conf.arg, (struct engine_conn *)fc, event);
}

/* The inner engine's wake, if it ever asks: the caller's, with its arg. */
static void fault_on_wake(void *arg)
{
	struct fault_worker *w = arg;

	if (w->conf.wake != NULL)
		w->conf.wake(w->conf.arg);
}

static doca_error_t fault_worker_create(const struct engine_ops *inner_ops, struct doca_dev *dev,
					const struct engine_worker_conf *conf, struct engine_worker **worker_out)
{
	struct engine_worker_conf inner_conf = *conf;
	struct fault_worker *w;
	doca_error_t status;

	w = calloc(1, sizeof(*w));
	if (w == NULL)
		goto no_memory;
	w->conns = calloc(conf->max_connections == 0 ? 1 : conf->max_connections, sizeof(*w->conns));
	if (w->conns == NULL)
		goto free_worker;
	w->num_conns = conf->max_connections;
	for (uint32_t i = 0; i < w->num_conns; i++)
		w->conns[i].w = w;
	w->inner_ops = inner_ops;
	w->conf = *conf;
	softdoca_waker_timer_init(&w->timer, fault_timer_fired, w);
	w->gen = atomic_load(&fault_gen) - 1; /* so that the first refresh copies */
	fault_refresh(w);
	inner_conf.conn_event = fault_on_conn_event;
	inner_conf.wake = fault_on_wake;
	inner_conf.arg = w;
	status = inner_ops->worker_create(dev, &inner_conf, &w->inner);
	if (status != DOCA_SUCCESS) {
		free(w->conns);
		free(w);
		return status;
	}
	SDK_LOG_INFO("fault injection on: %u rules, seed %llu (%s or softdoca_fault_set)", w->rules.num,
		     (unsigned long long)w->rules.seed, FAULT_ENV);
	*worker_out = (struct engine_worker *)w;
	return DOCA_SUCCESS;

free_worker:
	free(w);
no_memory:
	SDK_LOG_ERR("fault engine: no memory for a worker of %u connections", conf->max_connections);
	return DOCA_ERROR_NO_MEMORY;
}

static void fault_fail_all_held(struct fault_worker *w, doca_error_t status)
{
	fault_fail_held(w, &w->rheld_head, &w->rheld_tail, status);
	for (uint32_t i = 0; i < w->num_conns; i++)
		fault_fail_conn_held(&w->conns[i], status);
}

static void fault_worker_destroy(struct engine_worker *worker)
{
	struct fault_worker *w = fault_worker_of(worker);

	if (w == NULL)
		return;
	fault_timer_remove(w);
	fault_fail_all_held(w, DOCA_ERROR_IO_FAILED);
	w->inner_ops->worker_destroy(w->inner);
	free(w->conns);
	free(w);
}

static unsigned int fault_worker_progress(struct engine_worker *worker)
{
	struct fault_worker *w = fault_worker_of(worker);
	unsigned int n = 0;
	uint64_t now;

	fault_refresh(w);
	if (atomic_load_explicit(&w->cm, memory_order_relaxed))
		n += fault_decide_requests(w);
	if (w->held > 0 || w->timers || w->fakes > 0) {
		now = fault_now_ns();
		n += fault_release(w, &w->rheld_head, &w->rheld_tail, now);
		for (uint32_t i = 0; i < w->num_conns && w->held > 0; i++)
			n += fault_release(w, &w->conns[i].held_head, &w->conns[i].held_tail, now);
		if (w->timers)
			n += fault_drop_timers(w, now);
		if (w->fakes > 0)
			n += fault_fail_fakes(w, now);
		fault_wake_at(w, fault_next_due(w, now), now);
	} else if (w->timer_due != 0) {
		fault_wake_at(w, 0, fault_now_ns());
	}
	return n + w->inner_ops->worker_progress(w->inner);
}

static void fault_worker_flush(struct engine_worker *worker)
{
	struct fault_worker *w = fault_worker_of(worker);

	fault_fail_all_held(w, DOCA_ERROR_IO_FAILED);
	w->inner_ops->worker_flush(w->inner);
}

/* Held-back posts (ENGINE_POST_DEFER) are the inner engine's to send. */
static void fault_flush_posts(struct engine_worker *worker)
{
	struct fault_worker *w = fault_worker_of(worker);

	w->inner_ops->flush_posts(w->inner);
}

static uint32_t fault_worker_outstanding(struct engine_worker *worker)
{
	struct fault_worker *w = fault_worker_of(worker);

	return w->held + w->inner_ops->worker_outstanding(w->inner);
}

/* A connection slot starts a new life: nothing held, counts at zero. */
static void fault_conn_reset(struct fault_conn *fc)
{
	fault_fail_conn_held(fc, DOCA_ERROR_CONNECTION_RESET);
	fc->ops = 0;
	fc->dropped = false;
	atomic_store(&fc->established_ns, 0);
	atomic_store(&fc->ordinal, 0);
	fault_fake_cancel(fc);
	atomic_store(&fc->faked, false);
}

static doca_error_t fault_conn_export(struct engine_worker *worker, struct engine_conn **conn_out,
				      const void **desc, size_t *desc_len)
{
	struct fault_worker *w = fault_worker_of(worker);
	struct engine_conn *inner;
	struct fault_conn *fc;
	doca_error_t status;

	status = w->inner_ops->conn_export(w->inner, &inner, desc, desc_len);
	if (status != DOCA_SUCCESS)
		return status;
	fc = fault_conn_by_inner(w, inner);
	if (fc == NULL)
		return DOCA_ERROR_UNEXPECTED;
	fault_conn_reset(fc);
	*conn_out = (struct engine_conn *)fc;
	return DOCA_SUCCESS;
}

static doca_error_t fault_conn_connect(struct engine_conn *conn, const void *desc, size_t desc_len)
{
	struct fault_conn *fc = fault_conn_of(conn);

	return fc->w->inner_ops->conn_connect(fault_inner(fc), desc, desc_len);
}

static doca_error_t fault_conn_disconnect(struct engine_conn *conn)
{
	struct fault_conn *fc = fault_conn_of(conn);

	fault_fail_conn_held(fc, DOCA_ERROR_CONNECTION_RESET);
	fault_fake_cancel(fc); /* closed by the application: no failure to come */
	return fc->w->inner_ops->conn_disconnect(fault_inner(fc));
}

static void fault_conn_release(struct engine_conn *conn)
{
	struct fault_conn *fc = fault_conn_of(conn);

	fault_fail_conn_held(fc, DOCA_ERROR_CONNECTION_RESET);
	fc->w->inner_ops->conn_release(fault_inner(fc));
}

static doca_error_t fault_listen(struct engine_worker *worker, uint16_t port)
{
	struct fault_worker *w = fault_worker_of(worker);

	return w->inner_ops->listen(w->inner, port);
}

static doca_error_t fault_listen_stop(struct engine_worker *worker, uint16_t port)
{
	struct fault_worker *w = fault_worker_of(worker);

	return w->inner_ops->listen_stop(w->inner, port);
}

/* The inner engine's bind: the caller gets our connection. */
static void fault_bind(void *arg, struct engine_conn *inner)
{
	struct fault_worker *w = arg;
	struct fault_conn *fc = fault_conn_by_inner(w, inner);

	if (fc == NULL)
		return;
	fault_conn_reset(fc);
	if (w->bind != NULL)
		w->bind(w->bind_arg, (struct engine_conn *)fc);
}

/*
 * A /client cm_ rule took this request: it never leaves. The connection
 * is an inner slot taken by export (never connected), bound for the
 * caller like a real request, and fails from progress: at once for a
 * rejection, at the request timeout for an unanswered one, as a client
 * sees either.
 */
static doca_error_t fault_connect_faked(struct fault_worker *w, const struct fault_rule *r, const struct sockaddr *addr,
					socklen_t addr_len, void (*bind)(void *arg, struct engine_conn *conn),
					void *arg, struct engine_conn **conn_out)
{
	uint32_t timeout_ms = w->conf.request_timeout_ms != 0 ? w->conf.request_timeout_ms : 5000;
	uint64_t now = fault_now_ns();
	struct engine_conn *inner;
	struct fault_conn *fc;
	const void *desc;
	size_t desc_len;
	doca_error_t status;

	if (addr == NULL || addr_len == 0 || addr_len > sizeof(fc->fake_addr)) {
		SDK_LOG_ERR("fault engine: connection request to an address of %u bytes", (unsigned)addr_len);
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = w->inner_ops->conn_export(w->inner, &inner, &desc, &desc_len);
	if (status != DOCA_SUCCESS)
		return status;
	fc = fault_conn_by_inner(w, inner);
	if (fc == NULL)
		return DOCA_ERROR_UNEXPECTED;
	fault_conn_reset(fc);
	atomic_store(&fc->faked, true);
	memcpy(&fc->fake_addr, addr, addr_len);
	fc->fake_addr_len = addr_len;
	fc->fake_due = r->action == FAULT_CM_REJECT ? now : now + (uint64_t)timeout_ms * 1000000ULL;
	w->fakes++;
	fault_count(SOFTDOCA_FAULT_CM);
	SDK_LOG_INFO("fault injection (rule \"%s\"): our connection request %llu (connection %u) %s", r->text,
		     (unsigned long long)w->connects, w->inner_ops->conn_id(inner),
		     r->action == FAULT_CM_REJECT ? "rejected" : "never answered: it fails at the request timeout");
	if (bind != NULL)
		bind(arg, (struct engine_conn *)fc);
	fault_wake_at(w, fc->fake_due, now);
	*conn_out = (struct engine_conn *)fc;
	return DOCA_SUCCESS;
}

static doca_error_t fault_conn_connect_addr(struct engine_worker *worker, const struct sockaddr *addr,
					    socklen_t addr_len, void (*bind)(void *arg, struct engine_conn *conn),
					    void *arg, struct engine_conn **conn_out)
{
	struct fault_worker *w = fault_worker_of(worker);
	const struct fault_rule *r;
	struct engine_conn *inner;
	struct fault_conn *fc;
	doca_error_t status;

	fault_refresh(w);
	r = fault_pick_connect(w);
	if (r != NULL)
		return fault_connect_faked(w, r, addr, addr_len, bind, arg, conn_out);
	w->bind = bind;
	w->bind_arg = arg;
	status = w->inner_ops->conn_connect_addr(w->inner, addr, addr_len, fault_bind, w, &inner);
	w->bind = NULL;
	w->bind_arg = NULL;
	if (status != DOCA_SUCCESS)
		return status;
	fc = fault_conn_by_inner(w, inner);
	if (fc == NULL)
		return DOCA_ERROR_UNEXPECTED;
	*conn_out = (struct engine_conn *)fc;
	return DOCA_SUCCESS;
}

static doca_error_t fault_conn_accept(struct engine_conn *conn, const void *private_data, uint8_t private_data_len)
{
	struct fault_conn *fc = fault_conn_of(conn);

	return fc->w->inner_ops->conn_accept(fault_inner(fc), private_data, private_data_len);
}

static doca_error_t fault_conn_reject(struct engine_conn *conn)
{
	struct fault_conn *fc = fault_conn_of(conn);

	return fc->w->inner_ops->conn_reject(fault_inner(fc));
}

static doca_error_t fault_conn_peer_addr(const struct engine_conn *conn, struct sockaddr_storage *addr,
					 socklen_t *len)
{
	const struct fault_conn *fc = fault_conn_of(conn);

	if (atomic_load(&fc->faked)) {
		memcpy(addr, &fc->fake_addr, fc->fake_addr_len);
		*len = fc->fake_addr_len;
		return DOCA_SUCCESS;
	}
	return fc->w->inner_ops->conn_peer_addr(fault_inner(fc), addr, len);
}

static uint32_t fault_conn_id(const struct engine_conn *conn)
{
	const struct fault_conn *fc = fault_conn_of(conn);

	return fc->w->inner_ops->conn_id(fault_inner(fc));
}

static void fault_conn_set_user(struct engine_conn *conn, void *user)
{
	fault_conn_of(conn)->user = user;
}

static void *fault_conn_get_user(const struct engine_conn *conn)
{
	return fault_conn_of(conn)->user;
}

static bool fault_conn_is_usable(const struct engine_conn *conn)
{
	const struct fault_conn *fc = fault_conn_of(conn);

	return fc->w->inner_ops->conn_is_usable(fault_inner(fc));
}

static void fault_marks_save(const struct fault_worker *w, struct fault_marks *m)
{
	memcpy(m->seen, w->seen, sizeof(m->seen));
	memcpy(m->rng, w->rng, sizeof(m->rng));
}

static void fault_marks_restore(struct fault_worker *w, const struct fault_marks *m)
{
	memcpy(w->seen, m->seen, sizeof(m->seen));
	memcpy(w->rng, m->rng, sizeof(m->rng));
}

/* Take wr over: count it in flight and route its done() through ours. */
static void fault_wr_adopt(struct fault_worker *w, struct fault_conn *fc, struct engine_wr *wr, atomic_uint *inflight)
{
	wr->wrap_done = wr->done;
	wr->wrap_arg = fc == NULL ? (void *)w : (void *)fc;
	wr->done = fault_wr_done;
	atomic_fetch_add(inflight, 1);
}

/* Post an adopted wr now; a refusal gives it back as it came. */
static doca_error_t fault_post_now(struct fault_worker *w, struct engine_wr *wr, atomic_uint *inflight)
{
	doca_error_t status = fault_inner_post(w, wr);

	if (status != DOCA_SUCCESS) {
		atomic_fetch_sub(inflight, 1);
		wr->done = wr->wrap_done;
	}
	return status;
}

/*
 * The rules for one submission (fc NULL for a receive): FULL at a depth
 * (the task stays the caller's and counts nothing), an injected failure,
 * a delay, or straight to the inner engine. A submission the inner
 * engine refuses leaves every count as it was; on a connection that
 * cannot carry it no rule applies, so the caller hears the engine's
 * refusal at submit, as without faults.
 */
static doca_error_t fault_submit(struct fault_worker *w, struct fault_conn *fc, struct engine_wr *wr)
{
	atomic_uint *inflight = fc == NULL ? &w->recv_inflight : &fc->inflight[wr->opcode];
	struct engine_wr **head = fc == NULL ? &w->rheld_head : &fc->held_head;
	struct engine_wr **tail = fc == NULL ? &w->rheld_tail : &fc->held_tail;
	struct fault_marks marks;
	doca_error_t status;
	uint64_t delay, storm, now;

	fault_refresh(w);
	if (fc != NULL && !w->inner_ops->conn_is_usable(fault_inner(fc))) {
		fault_wr_adopt(w, fc, wr, inflight);
		return fault_post_now(w, wr, inflight);
	}
	status = fault_admit(w, fc, wr->opcode, atomic_load(inflight), fc == NULL ? 0 : fault_conn_id((void *)fc));
	if (status != DOCA_SUCCESS)
		return status;
	fault_marks_save(w, &marks);
	status = fault_pick_fail(w, fc, wr->opcode);
	if (status != DOCA_SUCCESS) {
		fault_count(SOFTDOCA_FAULT_FAILED);
		fault_wr_complete(wr, status);
		goto accepted;
	}
	delay = fault_pick_delay(w, fc, wr->opcode);
	storm = fc == NULL ? fault_pick_storm(w, wr->opcode, fault_now_ns()) : 0;
	fault_wr_adopt(w, fc, wr, inflight);
	if (delay + storm > 0 || *head != NULL) {
		if (delay > 0)
			fault_count(SOFTDOCA_FAULT_DELAYED);
		if (storm > 0)
			fault_count(SOFTDOCA_FAULT_RNR);
		now = fault_now_ns();
		fault_hold(head, tail, wr, now + delay + storm);
		w->held++;
		fault_wake_at(w, (uint64_t)(*tail)->wr_id, now);
		goto accepted;
	}
	status = fault_post_now(w, wr, inflight);
	if (status != DOCA_SUCCESS) {
		fault_marks_restore(w, &marks);
		return status;
	}
accepted:
	if (fc != NULL) {
		fc->ops++;
		fault_drop_after_ops(fc);
	}
	return DOCA_SUCCESS;
}

static doca_error_t fault_post(struct engine_wr *wr)
{
	if (wr->conn == NULL || wr->opcode == ENGINE_OP_RECV || wr->opcode > ENGINE_OP_SYNC_ADD) {
		SDK_LOG_ERR("work request needs a connection and a remote opcode (opcode %u)", wr->opcode);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return fault_submit(fault_conn_of(wr->conn)->w, fault_conn_of(wr->conn), wr);
}

static doca_error_t fault_post_recv(struct engine_worker *worker, struct engine_wr *wr)
{
	if (wr->opcode != ENGINE_OP_RECV) {
		SDK_LOG_ERR("a receive must have opcode RECV, not %u", wr->opcode);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return fault_submit(fault_worker_of(worker), NULL, wr);
}

/* One table per inner engine: only worker_create needs to know which. */
#define FAULT_OPS(NAME, INNER) \
	static doca_error_t fault_worker_create_##NAME(struct doca_dev *dev, const struct engine_worker_conf *conf, \
						       struct engine_worker **worker_out) \
	{ \
		return fault_worker_create(&(INNER), dev, conf, worker_out); \
	} \
	static const struct engine_ops fault_ops_##NAME = { \
		.name = #NAME, \
		.worker_create = fault_worker_create_##NAME, \
		.worker_destroy = fault_worker_destroy, \
		.worker_progress = fault_worker_progress, \
		.worker_flush = fault_worker_flush, \
		.worker_outstanding = fault_worker_outstanding, \
		.conn_export = fault_conn_export, \
		.conn_connect = fault_conn_connect, \
		.conn_disconnect = fault_conn_disconnect, \
		.conn_release = fault_conn_release, \
		.listen = fault_listen, \
		.listen_stop = fault_listen_stop, \
		.conn_connect_addr = fault_conn_connect_addr, \
		.conn_accept = fault_conn_accept, \
		.conn_reject = fault_conn_reject, \
		.conn_peer_addr = fault_conn_peer_addr, \
		.conn_id = fault_conn_id, \
		.conn_set_user = fault_conn_set_user, \
		.conn_get_user = fault_conn_get_user, \
		.conn_is_usable = fault_conn_is_usable, \
		.post = fault_post, \
		.post_recv = fault_post_recv, \
		.flush_posts = fault_flush_posts, \
	}

FAULT_OPS(ucx, engine_ucx_ops);
FAULT_OPS(loopback, engine_loopback_ops);

doca_error_t engine_fault_wrap(const struct engine_ops *inner, const struct engine_ops **ops_out)
{
	const char *env;

	if (!atomic_load_explicit(&fault_api_used, memory_order_acquire)) {
		env = getenv(FAULT_ENV);
		if (env == NULL) {
			*ops_out = inner; /* no faults: the engine itself, at no cost */
			return DOCA_SUCCESS;
		}
		if (fault_env_install(env) != DOCA_SUCCESS)
			return DOCA_ERROR_INVALID_VALUE; /* fault_parse_all said why */
	}
	if (inner == &engine_ucx_ops) {
		*ops_out = &fault_ops_ucx;
	} else if (inner == &engine_loopback_ops) {
		*ops_out = &fault_ops_loopback;
	} else {
		SDK_LOG_ERR("fault injection cannot wrap the \"%s\" engine", inner->name);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	return DOCA_SUCCESS;
}
