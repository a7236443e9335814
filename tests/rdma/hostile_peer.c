/*
 * hostile_peer — a peer that speaks softdoca's wire protocol by hand and
 * breaks it on purpose, to show that a DOCA RDMA target refuses what it
 * must and touches nothing it should not.
 *
 *   hostile_peer --dir DIR --group conn|perm_read|perm_write|atomic
 *                [--link auto|ucx|tcp] [--ep-err-mode auto|none|peer]
 *
 * It plays against `rdma_peer --role target --hostile` in DIR:
 *
 *   hostile.target.conn  the target's connection descriptor for us (read)
 *   target.mmap          the target's exported memory (read)
 *   hostile.conn         our connection descriptor (written)
 *   hostile.done         every scenario sent and judged (written)
 *   hostile.failed       we gave up before the scenarios ran (written)
 *   hostile.checked      the target compared its memory (waited for)
 *   target.failed        the target gave up (stops our waits)
 *
 * No libdoca_rdma here: hand-made HELLO, BYE, REQ and RESP messages
 * (wire.h) with none of the initiator's checks, carried as the engine
 * would carry them to this target (see Transports): over UCX (our own
 * context, worker and endpoint to the target's worker address) when the
 * target lets UCX use shared memory, else over softdoca's TCP link (our
 * own sockets, AUTH and frames written by hand, link_tcp_wire.h). Our
 * connection descriptor is built by wire_desc_build with our address on
 * that transport, so the target's doca_rdma_connect to it succeeds and
 * the connection is real.
 *
 * Every scenario starts from an operation that would succeed (in range,
 * right keys, permitted), breaks one thing, and sends it; then it sends a
 * probe (a zero-length read, which the target answers with success) and
 * waits, bounded, for the probe's answer. Messages on one endpoint reach
 * the target in order and it answers in order, so once the probe is
 * answered every earlier message has been judged: a refused operation has
 * its error answer by then and a dropped one has none. Every answer must
 * be addressed to our connection id and secret, echo the opcode, carry no
 * data and, for the refused, a status that maps to the error target.c
 * gives the refusal; a refusal with a reason (wire.h) must name the
 * permission the opcode needs or our region's bounds, nothing else. The
 * target then checks that no byte of its region or of the canaries around
 * it changed.
 *
 * UCX: our endpoint uses the error-handling mode the engine uses (peer;
 * that is --ep-err-mode auto): UCX refuses two endpoints between the same
 * workers with different modes. --ep-err-mode none|peer forces one, to
 * reproduce what a mismatch does to the target.
 *
 * TCP: a message the link cannot frame (an empty header: its parser
 * refuses the frame and closes the connection, which link_attack tests)
 * is not sent, with a NOTE line; it counts as dropped, which the target
 * would do with it over UCX.
 *
 * Output: one "PASS hostile GROUP SCENARIO: ..." or "FAIL ..." line per
 * scenario. Exit status 0 only if every scenario passed.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <ucp/api/ucp.h>

#include <doca_error.h>
#include <doca_types.h>

#include "link_tcp_wire.h"
#include "mmap.h"
#include "wire.h"

/* ------------------------------------------------------------------ */
/* Limits and constants                                                 */

#define FILE_WAIT_S 20.0    /* the target's descriptor files */
#define HELLO_WAIT_S 10.0   /* the target connects to us and says HELLO */
#define ANSWER_WAIT_S 5.0   /* a scenario's answers and its probe's */
#define CHECKED_WAIT_S 15.0 /* the target's memory check */
/* After the probe's answer, keep progressing this long so an answer that
 * should not exist has a chance to show up. Not needed for correctness
 * (the probe already orders everything before it); an extra net. */
#define SETTLE_S 0.02

#define MAX_ANSWERS 512
#define MAX_EXPECT 48
#define BIG_LEN (256u * 1024u) /* rendezvous-sized payloads */
#define SMALL_LEN 64u
#define OUR_CONN_ID 0x4857u    /* the connection id our descriptor claims */
#define FLOOD_PER_KIND 1000u   /* flood: messages of each kind (hostile_tests.sh counts log lines) */

/* am_send flag of ours: do not ask UCX for a reply endpoint. */
#define NO_REPLY (1u << 31)
/* Active message ids after RESP: RDMA CM's request and answer in this
 * tree (cm.c), unused before it; and one that nobody registers. */
#define AM_CM_REQ (WIRE_AM_RESP + 1)
#define AM_CM_REP (WIRE_AM_RESP + 2)
#define AM_UNREGISTERED 0x5dffu
/* tcp: the engine's rendezvous threshold (link_tcp.c), and how long a
 * connect to the target's link port may take. */
#define TCP_RNDV_THRESH (16u * 1024u)
#define CONNECT_WAIT_MS 5000

#define RD DOCA_ACCESS_FLAG_RDMA_READ
#define WR DOCA_ACCESS_FLAG_RDMA_WRITE
#define AT DOCA_ACCESS_FLAG_RDMA_ATOMIC

/* ------------------------------------------------------------------ */
/* Types                                                                */

/* What one sent message must lead to. */
struct expect {
	uint64_t wr_id;
	uint8_t opcode;
	bool dropped;        /* no answer may come */
	doca_error_t status; /* otherwise: the answer's status */
	bool answered;
	char what[112];
};

/* An answer (RESP) as it arrived. */
struct answer {
	struct wire_resp hdr;
	size_t hdr_len;
	size_t data_len;
	bool rndv;
	bool judged;
};

/* A message UCX may still read: header then payload, freed on completion. */
struct send_op {
	struct hostile *h;
	char what[112];
	uint8_t bytes[];
};

struct hostile;

struct scenario {
	const char *name;
	void (*run)(struct hostile *h);
};

struct group {
	const char *name;
	uint32_t need; /* RDMA permissions the target's region must grant */
	uint32_t lack; /* ... and must not grant */
	const struct scenario *scenarios;
};

enum err_mode_choice { ERR_MODE_AUTO, ERR_MODE_NONE, ERR_MODE_PEER };

enum transport { TR_AUTO, TR_UCX, TR_TCP };

/* tcp: a payload of ours offered by RTS, until the target's CTS. */
struct tcp_offer {
	struct tcp_offer *next;
	uint64_t id;
	size_t len;
	char what[112];
	uint8_t data[];
};

/* tcp: our two sockets (each one way) and what moves on them. */
struct tcp_link {
	int listen_fd;              /* the target connects here ... */
	int in_fd;                  /* ... and writes to us on this (we only read) */
	int out_fd;                 /* ours to its link port (we only write) */
	struct lt_addr self;        /* our address, as our descriptor says it */
	uint8_t *out;               /* bytes for out_fd not written yet */
	size_t out_len, out_off, out_cap;
	uint8_t in[LT_FRAME_HDR + LT_HDR_MAX + LT_MSG_MAX]; /* a whole frame at most */
	size_t in_len;
	bool in_authed;             /* the target's AUTH came and named us */
	struct tcp_offer *offers;
	uint64_t next_id;
};

struct hostile {
	const char *dir;
	const struct group *grp;
	enum err_mode_choice err_mode;
	bool target_gave_up;
	double next_gave_up_check;

	/* The target: its connection descriptor and its exported region. */
	uint8_t *tconn_bytes;
	size_t tconn_len;
	struct wire_desc tconn;
	uint8_t *mmap_bytes;
	size_t mmap_len;
	struct softdoca_mmap_desc region;

	/* Us. */
	uint32_t my_id;
	uint8_t my_secret[ENGINE_SECRET_LEN];
	enum transport tr;
	ucp_context_h ucp;          /* ucx */
	ucp_worker_h worker;
	ucp_ep_h ep;
	int efd;
	struct tcp_link tcp;        /* tcp */
	uint8_t *big; /* BIG_LEN bytes of payload */
	uint8_t small[SMALL_LEN];

	/* What came in. */
	struct answer answers[MAX_ANSWERS];
	uint32_t nanswers;
	uint32_t answers_lost;     /* past MAX_ANSWERS */
	uint32_t acks;             /* acknowledgements: no scenario earns one */
	uint32_t hellos;           /* the target's HELLOs */
	struct wire_hello hello;   /* the first one */
	size_t hello_len;
	uint32_t byes, reqs;       /* neither may come while we run */

	/* The scenario under way. */
	const char *scen;
	struct expect exp[MAX_EXPECT];
	uint32_t nexp;
	uint32_t first_answer;     /* answers before this one belong to earlier scenarios */
	uint32_t sends_pending;
	uint32_t nsent;            /* messages this scenario sent */
	char problems[2048];
	uint32_t nproblems;
	uint64_t next_wr_id;

	int passed, failed;
};

/* ------------------------------------------------------------------ */
/* Small helpers                                                        */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Note one thing wrong with the scenario under way. */
__attribute__((format(printf, 2, 3))) static void problem(struct hostile *h, const char *fmt, ...)
{
	size_t used = strlen(h->problems);
	va_list ap;

	h->nproblems++;
	if (used + 4 >= sizeof(h->problems))
		return;
	if (used > 0)
		used += (size_t)snprintf(h->problems + used, sizeof(h->problems) - used, "; ");
	va_start(ap, fmt);
	vsnprintf(h->problems + used, sizeof(h->problems) - used, fmt, ap);
	va_end(ap);
}

static const char *op_label(uint8_t opcode)
{
	switch (opcode) {
	case ENGINE_OP_WRITE:
		return "write";
	case ENGINE_OP_READ:
		return "read";
	case ENGINE_OP_ATOMIC_CAS:
		return "cas";
	case ENGINE_OP_ATOMIC_FADD:
		return "fadd";
	case ENGINE_OP_SYNC_GET:
		return "sync_get";
	case ENGINE_OP_SYNC_SET:
		return "sync_set";
	case ENGINE_OP_SYNC_ADD:
		return "sync_add";
	default:
		return "op";
	}
}

/* An answer's status is the wire's own number (enum wire_status). */
static const char *status_name(int32_t status)
{
	doca_error_t err;

	return wire_status_to_doca(status, &err) ? doca_error_get_name(err) : "an unknown wire status";
}

/* ------------------------------------------------------------------ */
/* Files in DIR                                                         */

static void path_of(const struct hostile *h, const char *name, char *out, size_t len)
{
	snprintf(out, len, "%s/%s", h->dir, name);
}

static bool file_exists(const struct hostile *h, const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	path_of(h, name, path, sizeof(path));
	return stat(path, &st) == 0;
}

/* True once the target wrote target.failed (looked at every 50 ms). */
static bool target_gave_up(struct hostile *h)
{
	double t = now_s();

	if (!h->target_gave_up && t >= h->next_gave_up_check) {
		h->next_gave_up_check = t + 0.05;
		h->target_gave_up = file_exists(h, "target.failed");
	}
	return h->target_gave_up;
}

/* Write all of a file under a temporary name, then rename it into place. */
static int write_file(const struct hostile *h, const char *name, const void *data, size_t len)
{
	char path[PATH_MAX], tmp[PATH_MAX + 32];
	const uint8_t *d = data;
	int fd;

	path_of(h, name, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -errno;
	while (len > 0) {
		ssize_t n = write(fd, d, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int e = n < 0 ? errno : EIO;

			close(fd);
			unlink(tmp);
			return -e;
		}
		d += n;
		len -= (size_t)n;
	}
	if (close(fd) != 0 || rename(tmp, path) != 0) {
		int e = errno;

		unlink(tmp);
		return -e;
	}
	return 0;
}

/* Read a whole file; 1 if it does not exist (yet). */
static int read_file(const struct hostile *h, const char *name, uint8_t **data, size_t *len)
{
	char path[PATH_MAX];
	uint8_t *buf = NULL;
	size_t cap = 0, used = 0;
	int fd;

	path_of(h, name, path, sizeof(path));
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return errno == ENOENT ? 1 : -errno;
	for (;;) {
		ssize_t n;

		if (used == cap) {
			uint8_t *nb;

			cap = cap ? 2 * cap : 4096;
			nb = realloc(buf, cap);
			if (nb == NULL) {
				free(buf);
				close(fd);
				return -ENOMEM;
			}
			buf = nb;
		}
		n = read(fd, buf + used, cap - used);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;

			free(buf);
			close(fd);
			return -e;
		}
		if (n == 0)
			break;
		used += (size_t)n;
	}
	close(fd);
	*data = buf;
	*len = used;
	return 0;
}

/* Wait (bounded poll of DIR) for the target's file `name`. */
static int wait_file(const struct hostile *h, const char *name, uint8_t **data, size_t *len)
{
	const struct timespec tick = {.tv_sec = 0, .tv_nsec = 2 * 1000 * 1000};
	double deadline = now_s() + FILE_WAIT_S;

	for (;;) {
		int r = read_file(h, name, data, len);

		if (r == 0)
			return 0;
		if (r < 0) {
			printf("FAIL hostile setup: reading %s/%s: %s\n", h->dir, name, strerror(-r));
			return -1;
		}
		if (file_exists(h, "target.failed")) {
			printf("FAIL hostile setup: the target gave up (see its output) while we waited for %s\n", name);
			return -1;
		}
		if (now_s() > deadline) {
			printf("FAIL hostile setup: timed out after %.0f s waiting for the target's file %s/%s\n",
			       FILE_WAIT_S, h->dir, name);
			return -1;
		}
		nanosleep(&tick, NULL);
	}
}

/* ------------------------------------------------------------------ */
/* Receiving: the target's messages, from either transport              */

static ucs_status_t on_resp(void *arg, const void *header, size_t header_length, void *data, size_t length,
			    const ucp_am_recv_param_t *param)
{
	struct hostile *h = arg;
	struct answer *a;

	(void)data;
	if (h->nanswers == MAX_ANSWERS) {
		h->answers_lost++;
		return UCS_OK;
	}
	a = &h->answers[h->nanswers++];
	memset(a, 0, sizeof(*a));
	a->hdr_len = header_length;
	if (header != NULL)
		memcpy(&a->hdr, header, header_length < sizeof(a->hdr) ? header_length : sizeof(a->hdr));
	a->data_len = length;
	a->rndv = (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0;
	return UCS_OK; /* never keep a payload: there must be none */
}

/* Every request of ours fails or carries a result (the probe is a read),
 * so the target owes us no acknowledgement: one is counted as a fault. */
static ucs_status_t on_ack(void *arg, const void *header, size_t header_length, void *data, size_t length,
			   const ucp_am_recv_param_t *param)
{
	struct hostile *h = arg;

	(void)header;
	(void)header_length;
	(void)data;
	(void)length;
	(void)param;
	h->acks++;
	return UCS_OK;
}

static ucs_status_t on_hello(void *arg, const void *header, size_t header_length, void *data, size_t length,
			     const ucp_am_recv_param_t *param)
{
	struct hostile *h = arg;

	(void)data;
	(void)length;
	(void)param;
	if (h->hellos++ == 0) {
		h->hello_len = header_length;
		if (header != NULL)
			memcpy(&h->hello, header,
			       header_length < sizeof(h->hello) ? header_length : sizeof(h->hello));
	}
	return UCS_OK;
}

static ucs_status_t on_bye(void *arg, const void *header, size_t header_length, void *data, size_t length,
			   const ucp_am_recv_param_t *param)
{
	struct hostile *h = arg;

	(void)header;
	(void)header_length;
	(void)data;
	(void)length;
	(void)param;
	h->byes++;
	return UCS_OK;
}

static ucs_status_t on_req(void *arg, const void *header, size_t header_length, void *data, size_t length,
			   const ucp_am_recv_param_t *param)
{
	struct hostile *h = arg;

	(void)header;
	(void)header_length;
	(void)data;
	(void)length;
	(void)param;
	h->reqs++;
	return UCS_OK;
}

/* ------------------------------------------------------------------ */
/* Transports                                                           */
/*
 * How our messages reach the target, and how its messages reach the
 * handlers above. The target's descriptor decides, as the engine's own
 * choice does (conn.c): UCX when the target lets UCX use shared memory
 * (WIRE_DESC_FLAG_SHM and a worker address), else softdoca's TCP link
 * (--link forces one):
 *   ucx  our own UCX worker and an endpoint to the target's worker
 *        address, configured with the UCX settings the target's
 *        descriptor names (the engine refuses a peer whose differ).
 *   tcp  our socket to the target's link port, opened with AUTH (the
 *        target's connection id and secret), carries our messages as MSG
 *        frames, or as RTS and then DATA once the target's CTS asks for
 *        the payload (link_tcp_wire.h); the target's socket to our port,
 *        whose AUTH must name our connection and secret, carries its
 *        frames to the same handlers. We decline every RTS of the target
 *        (CTS of 0 bytes): no answer may carry a payload.
 * Each has the same five calls: *_setup (before our descriptor is
 * written), *_desc (our address in it), *_am_send, *_pump, *_teardown.
 */

/* Our handler for a message id, or NULL (the message is ignored, as UCX
 * ignores an id nobody registered; the target's PINGs are). */
static ucp_am_recv_callback_t handler_of(unsigned int id)
{
	switch (id) {
	case WIRE_AM_HELLO:
		return on_hello;
	case WIRE_AM_BYE:
		return on_bye;
	case WIRE_AM_REQ:
		return on_req;
	case WIRE_AM_RESP:
		return on_resp;
	case WIRE_AM_ACK:
		return on_ack;
	default:
		return NULL;
	}
}

static const unsigned int handled_ids[] = {WIRE_AM_HELLO, WIRE_AM_BYE, WIRE_AM_REQ, WIRE_AM_RESP, WIRE_AM_ACK};

/* ---- ucx ----------------------------------------------------------- */

/* Progress once; if nothing happened, sleep on the worker's event fd for
 * at most max_ms. */
static void ucx_pump(struct hostile *h, int max_ms)
{
	struct pollfd pfd = {.fd = h->efd, .events = POLLIN, .revents = 0};

	if (ucp_worker_progress(h->worker) != 0)
		return;
	if (ucp_worker_arm(h->worker) != UCS_OK)
		return; /* UCS_ERR_BUSY: more to progress */
	(void)poll(&pfd, 1, max_ms);
}

static void send_done(void *request, ucs_status_t st, void *user)
{
	struct send_op *s = user;

	s->h->sends_pending--;
	if (st != UCS_OK)
		problem(s->h, "%s: UCX send completed with %s", s->what, ucs_status_string(st));
	ucp_request_free(request);
	free(s);
}

/* Send active message `id` with a header of hdr_len bytes (0: none) and a
 * payload, asking UCX for a reply endpoint as the engine does. The bytes
 * are copied and live until UCX is done with them. */
static void ucx_am_send(struct hostile *h, unsigned int id, const void *hdr, size_t hdr_len, const void *payload,
			size_t len, uint32_t flags, const char *what)
{
	struct send_op *s = malloc(sizeof(*s) + hdr_len + len + 1);
	ucp_request_param_t p = {0};
	ucs_status_ptr_t req;

	if (s == NULL) {
		problem(h, "%s: out of memory", what);
		return;
	}
	s->h = h;
	snprintf(s->what, sizeof(s->what), "%s", what);
	if (hdr_len > 0)
		memcpy(s->bytes, hdr, hdr_len);
	if (len > 0)
		memcpy(s->bytes + hdr_len, payload, len);
	p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS | UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
	p.flags = (flags & NO_REPLY) ? flags & ~NO_REPLY : UCP_AM_SEND_FLAG_REPLY | flags;
	p.cb.send = send_done;
	p.user_data = s;
	req = ucp_am_send_nbx(h->ep, id, hdr_len > 0 ? s->bytes : NULL, hdr_len, len > 0 ? s->bytes + hdr_len : NULL,
			      len, &p);
	if (req == NULL) {
		free(s);
		h->nsent++;
		return;
	}
	if (UCS_PTR_IS_ERR(req)) {
		problem(h, "%s: ucp_am_send_nbx failed: %s", what, ucs_status_string(UCS_PTR_STATUS(req)));
		free(s);
		return;
	}
	h->sends_pending++;
	h->nsent++;
}

/* The engine's rule (conn.c): every endpoint uses UCX's peer error mode.
 * Ours must match the target's, unless a scenario forces the other one. */
static ucp_err_handling_mode_t ep_err_mode(const struct hostile *h)
{
	return h->err_mode == ERR_MODE_NONE ? UCP_ERR_HANDLING_MODE_NONE : UCP_ERR_HANDLING_MODE_PEER;
}

static void on_ep_error(void *arg, ucp_ep_h ep, ucs_status_t st)
{
	struct hostile *h = arg;

	(void)ep;
	problem(h, "our endpoint to the target failed: %s", ucs_status_string(st));
}

/* The UCX settings two peers must share (WIRE_UCX_*), as the target's
 * descriptor names them: ours are made the same. */
static void ucx_apply_settings(ucp_config_t *config, uint32_t bits)
{
	(void)ucp_config_modify(config, "MM_ERROR_HANDLING", (bits & WIRE_UCX_MM_ERROR_HANDLING) ? "y" : "n");
	(void)ucp_config_modify(config, "MEMORY_INVALIDATE", (bits & WIRE_UCX_CMA_MEMORY_INVALIDATE) ? "y" : "n");
	(void)ucp_config_modify(config, "PROTO_ENABLE", (bits & WIRE_UCX_PROTO_V1) ? "n" : "y");
	if (bits & WIRE_UCX_RNDV_PUT)
		(void)ucp_config_modify(config, "RNDV_SCHEME", "put_zcopy");
}

static int ucx_setup(struct hostile *h)
{
	ucp_params_t params = {0};
	ucp_worker_params_t wp = {0};
	ucp_ep_params_t ep = {0};
	ucp_config_t *config;
	ucs_status_t st;

	st = ucp_config_read(NULL, NULL, &config);
	if (st != UCS_OK) {
		printf("FAIL hostile setup: ucp_config_read: %s\n", ucs_status_string(st));
		return -1;
	}
	ucx_apply_settings(config, h->tconn.ucx_settings);
	params.field_mask = UCP_PARAM_FIELD_FEATURES;
	params.features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
	st = ucp_init(&params, config, &h->ucp);
	ucp_config_release(config);
	if (st != UCS_OK) {
		printf("FAIL hostile setup: ucp_init: %s\n", ucs_status_string(st));
		return -1;
	}
	wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
	wp.thread_mode = UCS_THREAD_MODE_SINGLE;
	st = ucp_worker_create(h->ucp, &wp, &h->worker);
	if (st != UCS_OK) {
		printf("FAIL hostile setup: ucp_worker_create: %s\n", ucs_status_string(st));
		return -1;
	}
	st = ucp_worker_get_efd(h->worker, &h->efd);
	if (st != UCS_OK) {
		printf("FAIL hostile setup: ucp_worker_get_efd: %s\n", ucs_status_string(st));
		return -1;
	}
	for (size_t i = 0; i < sizeof(handled_ids) / sizeof(handled_ids[0]); i++) {
		ucp_am_handler_param_t p = {
			.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
				      UCP_AM_HANDLER_PARAM_FIELD_ARG,
			.id = handled_ids[i],
			.cb = handler_of(handled_ids[i]),
			.arg = h,
		};

		st = ucp_worker_set_am_recv_handler(h->worker, &p);
		if (st != UCS_OK) {
			printf("FAIL hostile setup: ucp_worker_set_am_recv_handler: %s\n", ucs_status_string(st));
			return -1;
		}
	}
	ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
			UCP_EP_PARAM_FIELD_ERR_HANDLER;
	ep.address = (const ucp_address_t *)h->tconn.worker_addr;
	ep.err_mode = ep_err_mode(h);
	ep.err_handler.cb = on_ep_error;
	ep.err_handler.arg = h;
	st = ucp_ep_create(h->worker, &ep, &h->ep);
	if (st != UCS_OK) {
		printf("FAIL hostile setup: ucp_ep_create to the target's worker address: %s\n",
		       ucs_status_string(st));
		return -1;
	}
	return 0;
}

/* A descriptor d (its other fields set) offering our worker's address. */
static doca_error_t ucx_desc(struct hostile *h, struct wire_desc *d, uint8_t **desc, size_t *desc_len)
{
	ucp_address_t *addr;
	size_t addr_len;
	doca_error_t err;
	ucs_status_t st;

	st = ucp_worker_get_address(h->worker, &addr, &addr_len);
	if (st != UCS_OK) {
		printf("NOTE hostile: ucp_worker_get_address: %s\n", ucs_status_string(st));
		return DOCA_ERROR_DRIVER;
	}
	d->flags |= WIRE_DESC_FLAG_SHM;
	d->ucx_settings = h->tconn.ucx_settings;
	d->worker_addr = (const uint8_t *)addr;
	d->worker_addr_len = (uint32_t)addr_len;
	err = wire_desc_build(d, desc, desc_len);
	ucp_worker_release_address(h->worker, addr);
	return err;
}

static void ucx_teardown(struct hostile *h)
{
	if (h->ep != NULL) {
		ucp_request_param_t p = {0};
		ucs_status_ptr_t req;
		double deadline = now_s() + 2.0;

		p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
		p.flags = UCP_EP_CLOSE_FLAG_FORCE;
		req = ucp_ep_close_nbx(h->ep, &p);
		while (UCS_PTR_IS_PTR(req) && ucp_request_check_status(req) == UCS_INPROGRESS && now_s() < deadline)
			ucp_worker_progress(h->worker);
		if (UCS_PTR_IS_PTR(req))
			ucp_request_free(req);
	}
	if (h->worker != NULL)
		ucp_worker_destroy(h->worker);
	if (h->ucp != NULL)
		ucp_cleanup(h->ucp);
}

/* ---- tcp ----------------------------------------------------------- */

/* A socket's end, seen or not: the link is gone, say so once. */
static void tcp_close(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Append bytes to what goes out on our socket. */
static bool tcp_queue(struct hostile *h, const void *bytes, size_t len)
{
	struct tcp_link *t = &h->tcp;

	if (t->out_len + len > t->out_cap) {
		size_t cap = t->out_cap ? t->out_cap : 64 * 1024;
		uint8_t *nb;

		while (cap < t->out_len + len)
			cap *= 2;
		nb = realloc(t->out, cap);
		if (nb == NULL)
			return false;
		t->out = nb;
		t->out_cap = cap;
	}
	memcpy(t->out + t->out_len, bytes, len);
	t->out_len += len;
	return true;
}

/* One frame: its header, then body (the engine header, AUTH's body),
 * then the payload. */
static bool tcp_queue_frame(struct hostile *h, const struct lt_frame *f, const void *body, size_t body_len,
			    const void *payload, size_t len)
{
	uint8_t head[LT_FRAME_HDR];

	lt_frame_build(head, f);
	return tcp_queue(h, head, sizeof(head)) && (body_len == 0 || tcp_queue(h, body, body_len)) &&
	       (len == 0 || tcp_queue(h, payload, len));
}

/* Write what our socket takes now. The count of bytes written. */
static size_t tcp_flush(struct hostile *h)
{
	struct tcp_link *t = &h->tcp;
	size_t wrote = 0;

	while (t->out_fd >= 0 && t->out_off < t->out_len) {
		ssize_t n = send(t->out_fd, t->out + t->out_off, t->out_len - t->out_off, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0) {
			problem(h, "our tcp link connection to the target broke: %s", strerror(errno));
			tcp_close(&t->out_fd);
			break;
		}
		t->out_off += (size_t)n;
		wrote += (size_t)n;
	}
	if (t->out_off == t->out_len)
		t->out_off = t->out_len = 0;
	return wrote;
}

/* Send message `id` as the TCP link frames it: MSG, or RTS when the
 * payload goes by rendezvous (UCX's flag, or too large to travel whole
 * or, unflagged, larger than the engine's rendezvous threshold). */
static void tcp_am_send(struct hostile *h, unsigned int id, const void *hdr, size_t hdr_len, const void *payload,
			size_t len, uint32_t flags, const char *what)
{
	struct tcp_link *t = &h->tcp;
	struct lt_frame f = {.type = LT_MSG, .am_id = (uint16_t)id, .hdr_len = (uint32_t)hdr_len, .len = len};
	bool rndv = len > 0 && ((flags & UCP_AM_SEND_FLAG_RNDV) || len > LT_MSG_MAX ||
				(!(flags & UCP_AM_SEND_FLAG_EAGER) && len > TCP_RNDV_THRESH));
	struct tcp_offer *o;

	if (hdr_len == 0 || hdr_len > LT_HDR_MAX) {
		/* The link's frame parser refuses such a frame and closes the
		 * connection (link_attack tests that); the engine never sees
		 * it, so it is dropped as the scenario expects. */
		printf("NOTE hostile %s %s: %s: a %zu-byte header cannot be framed on the tcp link; not sent\n",
		       h->grp->name, h->scen, what, hdr_len);
		return;
	}
	if (t->out_fd < 0) {
		problem(h, "%s: not sent, our tcp link connection is gone", what);
		return;
	}
	if (!rndv) {
		if (!tcp_queue_frame(h, &f, hdr, hdr_len, payload, len))
			problem(h, "%s: out of memory", what);
		else
			h->nsent++;
		(void)tcp_flush(h);
		return;
	}
	o = malloc(sizeof(*o) + len);
	if (o == NULL) {
		problem(h, "%s: out of memory", what);
		return;
	}
	o->id = ++t->next_id;
	o->len = len;
	snprintf(o->what, sizeof(o->what), "%s", what);
	memcpy(o->data, payload, len);
	f.type = LT_RTS;
	f.id = o->id;
	if (!tcp_queue_frame(h, &f, hdr, hdr_len, NULL, 0)) {
		free(o);
		problem(h, "%s: out of memory", what);
		return;
	}
	o->next = t->offers;
	t->offers = o;
	h->sends_pending++; /* until the target's CTS */
	h->nsent++;
	(void)tcp_flush(h);
}

/* The target's CTS for one of our RTS: its payload (all of it), or none. */
static bool tcp_on_cts(struct hostile *h, const struct lt_frame *f)
{
	struct tcp_offer **link = &h->tcp.offers, *o;

	while (*link != NULL && (*link)->id != f->id)
		link = &(*link)->next;
	o = *link;
	if (o == NULL || (f->len != 0 && f->len != o->len)) {
		problem(h, "the target's clear-to-send (id %" PRIu64 ", %" PRIu64 " B) names no payload we offered",
			f->id, f->len);
		return false;
	}
	*link = o->next;
	for (size_t off = 0; off < f->len; off += LT_DATA_MAX) {
		struct lt_frame d = {.type = LT_DATA, .id = o->id};

		d.len = f->len - off < LT_DATA_MAX ? f->len - off : LT_DATA_MAX;
		if (!tcp_queue_frame(h, &d, NULL, 0, o->data + off, (size_t)d.len))
			problem(h, "%s: out of memory for its data", o->what);
	}
	h->sends_pending--;
	free(o);
	return true;
}

/* One whole frame from the target (after its AUTH). */
static bool tcp_on_frame(struct hostile *h, const struct lt_frame *f, const uint8_t *at)
{
	const uint8_t *header = at + LT_FRAME_HDR;
	ucp_am_recv_param_t param = {0};
	ucp_am_recv_callback_t cb;

	switch (f->type) {
	case LT_CTS:
		return tcp_on_cts(h, f);
	case LT_MSG:
	case LT_RTS:
		cb = handler_of(f->am_id);
		param.recv_attr = f->type == LT_RTS ? UCP_AM_RECV_ATTR_FLAG_RNDV : 0;
		if (cb != NULL)
			(void)cb(h, header, f->hdr_len,
				 f->type == LT_MSG && f->len > 0 ? (void *)(header + f->hdr_len) : NULL,
				 (size_t)f->len, &param);
		if (f->type == LT_RTS) {
			struct lt_frame cts = {.type = LT_CTS, .id = f->id, .len = 0};

			if (!tcp_queue_frame(h, &cts, NULL, 0, NULL, 0))
				problem(h, "out of memory for a clear-to-send");
		}
		return true;
	default:
		problem(h, "the target sent a frame of type %u (%s) on its tcp link connection", f->type,
			f->type == LT_AUTH ? "a second AUTH" : "DATA we never asked for");
		return false;
	}
}

/* The target's first frame must be AUTH naming our connection and secret. */
static bool tcp_check_auth(struct hostile *h, const uint8_t *bytes)
{
	struct lt_frame f;
	struct lt_auth a;

	if (lt_frame_parse(bytes, &f) != DOCA_SUCCESS || f.type != LT_AUTH ||
	    lt_auth_parse(bytes + LT_FRAME_HDR, LT_AUTH_LEN, &a) != DOCA_SUCCESS) {
		problem(h, "the target's tcp link connection to us did not start with a well-formed AUTH");
		return false;
	}
	if (a.conn_id != h->my_id || memcmp(a.secret, h->my_secret, ENGINE_SECRET_LEN) != 0) {
		problem(h, "the target's AUTH names connection %u%s, not ours (%u) with our secret", a.conn_id,
			a.conn_id == h->my_id ? " with another secret" : "", h->my_id);
		return false;
	}
	return true;
}

/* The socket the target writes on: the one it opened to us, or, when
 * it opened none (the engine lets the side with the lower address, port
 * and connection id open the one connection both use), ours. */
static int *tcp_read_fd(struct tcp_link *t)
{
	return t->in_fd >= 0 ? &t->in_fd : &t->out_fd;
}

/* Read what the target's socket has and hand each whole frame on. The
 * count of frames handled. */
static unsigned int tcp_read(struct hostile *h)
{
	struct tcp_link *t = &h->tcp;
	int *fd = tcp_read_fd(t);
	unsigned int frames = 0;
	size_t at = 0;
	ssize_t n;

	do {
		n = recv(*fd, t->in + t->in_len, sizeof(t->in) - t->in_len, MSG_DONTWAIT);
	} while (n < 0 && errno == EINTR);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
		problem(h, "the target's tcp link connection to us ended (%s)", n == 0 ? "closed" : strerror(errno));
		tcp_close(fd);
		return 0;
	}
	if (n > 0)
		t->in_len += (size_t)n;
	if (!t->in_authed && t->in_len >= LT_FRAME_HDR + LT_AUTH_LEN) {
		if (!tcp_check_auth(h, t->in)) {
			tcp_close(fd);
			return 0;
		}
		t->in_authed = true;
		at = LT_FRAME_HDR + LT_AUTH_LEN;
	}
	while (t->in_authed && t->in_len - at >= LT_FRAME_HDR) {
		struct lt_frame f;

		if (lt_frame_parse(t->in + at, &f) != DOCA_SUCCESS) {
			problem(h, "the target sent a malformed frame on its tcp link connection");
			tcp_close(fd);
			return frames;
		}
		if (t->in_len - at < lt_frame_inline_len(&f))
			break;
		frames++;
		if (!tcp_on_frame(h, &f, t->in + at)) {
			tcp_close(fd);
			return frames;
		}
		at += lt_frame_inline_len(&f);
	}
	memmove(t->in, t->in + at, t->in_len - at);
	t->in_len -= at;
	return frames;
}

/* The target connects to our port once it has our descriptor. */
static void tcp_accept(struct hostile *h)
{
	struct tcp_link *t = &h->tcp;
	int fd = accept4(t->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0)
		return;
	if (t->in_fd >= 0 || t->in_authed) {
		problem(h, "the target opened a second tcp link connection to us");
		close(fd);
		return;
	}
	t->in_fd = fd;
}

/* Bytes (or the end) on our socket, which the target only reads once it
 * opened its own. */
static void tcp_check_out(struct hostile *h)
{
	uint8_t byte;
	ssize_t n = recv(h->tcp.out_fd, &byte, 1, MSG_DONTWAIT);

	if (n > 0)
		problem(h, "the target wrote on our tcp link connection, which it only reads");
	else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
		problem(h, "the target closed our tcp link connection (it refused a frame, or failed)");
	else
		return;
	tcp_close(&h->tcp.out_fd);
}

/* Move what can move now; if nothing did, sleep on our sockets for at
 * most max_ms and move what that brought. */
static void tcp_pump(struct hostile *h, int max_ms)
{
	struct tcp_link *t = &h->tcp;

	for (int round = 0; round < 2; round++) {
		struct pollfd p[3];
		nfds_t np = 0;
		size_t moved;

		p[np++] = (struct pollfd){.fd = t->in_fd >= 0 ? t->in_fd : t->listen_fd, .events = POLLIN};
		p[np++] = (struct pollfd){.fd = t->out_fd, .events = POLLIN | (t->out_len > 0 ? POLLOUT : 0)};
		if (poll(p, np, round == 0 ? 0 : max_ms) <= 0 && round == 0)
			continue; /* nothing now: sleep */
		moved = tcp_flush(h);
		if (p[0].revents != 0 && p[0].fd == t->listen_fd)
			tcp_accept(h);
		else if (p[0].revents != 0 && t->in_fd >= 0)
			moved += tcp_read(h);
		if ((p[1].revents & (POLLIN | POLLHUP | POLLERR)) && t->out_fd >= 0) {
			if (t->in_fd >= 0)
				tcp_check_out(h);
			else
				moved += tcp_read(h); /* the target writes on ours */
		}
		moved += tcp_flush(h); /* CTS and DATA the frames asked for */
		if (moved > 0 || round == 1)
			return;
	}
}

/* A socket to addr, connected within CONNECT_WAIT_MS; -1 if not. */
static int tcp_connect(const struct sockaddr_storage *sa, socklen_t len)
{
	struct pollfd p = {.events = POLLOUT};
	int fd = socket(sa->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), err = 0, one = 1;
	socklen_t el = sizeof(err);

	if (fd < 0)
		return -1;
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (const struct sockaddr *)sa, len) != 0 && errno != EINPROGRESS) {
		close(fd);
		return -1;
	}
	p.fd = fd;
	if (poll(&p, 1, CONNECT_WAIT_MS) != 1 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0 || err != 0) {
		close(fd);
		errno = err != 0 ? err : ETIMEDOUT;
		return -1;
	}
	return fd;
}

static void sockaddr_of(const struct lt_addr *a, uint16_t port, struct sockaddr_storage *sa, socklen_t *len)
{
	memset(sa, 0, sizeof(*sa));
	if (a->family == 4) {
		struct sockaddr_in *in = (struct sockaddr_in *)sa;

		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		memcpy(&in->sin_addr, a->addr, 4);
		*len = sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)sa;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		memcpy(&in6->sin6_addr, a->addr, 16);
		*len = sizeof(*in6);
	}
}

/* Listen on the target's own address (it is on this host), connect to
 * its link port and queue our AUTH. */
static int tcp_setup(struct hostile *h)
{
	struct tcp_link *t = &h->tcp;
	struct lt_frame f = {.type = LT_AUTH, .hdr_len = LT_AUTH_LEN};
	struct lt_auth auth = {.conn_id = h->tconn.conn_id};
	uint8_t body[LT_AUTH_LEN];
	struct sockaddr_storage sa;
	struct lt_addr target;
	socklen_t len;

	t->listen_fd = t->out_fd = t->in_fd = -1;
	if (lt_addr_parse(h->tconn.tcp_addr, sizeof(h->tconn.tcp_addr), &target) != DOCA_SUCCESS) {
		printf("FAIL hostile setup: the target's tcp link address does not parse\n");
		return -1;
	}
	sockaddr_of(&target, 0, &sa, &len);
	t->listen_fd = socket(sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (t->listen_fd < 0 || bind(t->listen_fd, (struct sockaddr *)&sa, len) != 0 || listen(t->listen_fd, 4) != 0 ||
	    getsockname(t->listen_fd, (struct sockaddr *)&sa, &len) != 0) {
		printf("FAIL hostile setup: cannot listen for the target's tcp link connection: %s\n", strerror(errno));
		return -1;
	}
	t->self = target;
	t->self.port = ntohs(sa.ss_family == AF_INET ? ((struct sockaddr_in *)&sa)->sin_port :
						       ((struct sockaddr_in6 *)&sa)->sin6_port);
	sockaddr_of(&target, target.port, &sa, &len);
	t->out_fd = tcp_connect(&sa, len);
	if (t->out_fd < 0) {
		printf("FAIL hostile setup: cannot reach the target's tcp link port %u: %s\n", target.port,
		       strerror(errno));
		return -1;
	}
	memcpy(auth.secret, h->tconn.secret, ENGINE_SECRET_LEN);
	lt_auth_build(body, &auth);
	if (!tcp_queue_frame(h, &f, body, sizeof(body), NULL, 0)) {
		printf("FAIL hostile setup: out of memory\n");
		return -1;
	}
	(void)tcp_flush(h);
	return 0;
}

/* A descriptor d (its other fields set) offering our tcp link address. */
static doca_error_t tcp_desc(struct hostile *h, struct wire_desc *d, uint8_t **desc, size_t *desc_len)
{
	d->has_tcp = true;
	lt_addr_build(d->tcp_addr, &h->tcp.self);
	return wire_desc_build(d, desc, desc_len);
}

static void tcp_teardown(struct hostile *h)
{
	struct tcp_link *t = &h->tcp;

	tcp_close(&t->out_fd);
	tcp_close(&t->in_fd);
	tcp_close(&t->listen_fd);
	while (t->offers != NULL) {
		struct tcp_offer *o = t->offers;

		t->offers = o->next;
		free(o);
	}
	free(t->out);
	t->out = NULL;
}

/* ---- either -------------------------------------------------------- */

static void pump(struct hostile *h, int max_ms)
{
	if (h->tr == TR_TCP)
		tcp_pump(h, max_ms);
	else
		ucx_pump(h, max_ms);
}

/* Send active message `id`: a header of hdr_len bytes and a payload of
 * len bytes (both copied); flags: UCX's send flags and NO_REPLY. */
static void am_send(struct hostile *h, unsigned int id, const void *hdr, size_t hdr_len, const void *payload,
		    size_t len, uint32_t flags, const char *what)
{
	if (h->tr == TR_TCP)
		tcp_am_send(h, id, hdr, hdr_len, payload, len, flags, what);
	else
		ucx_am_send(h, id, hdr, hdr_len, payload, len, flags, what);
}

/* A descriptor (fields of d set by the caller) offering our address. */
static doca_error_t our_desc(struct hostile *h, struct wire_desc *d, uint8_t **desc, size_t *desc_len)
{
	return h->tr == TR_TCP ? tcp_desc(h, d, desc, desc_len) : ucx_desc(h, d, desc, desc_len);
}

static int tr_setup(struct hostile *h)
{
	return h->tr == TR_TCP ? tcp_setup(h) : ucx_setup(h);
}

static void tr_teardown(struct hostile *h)
{
	if (h->tr == TR_TCP)
		tcp_teardown(h);
	else
		ucx_teardown(h);
}

/* ------------------------------------------------------------------ */
/* Building requests                                                    */

/* A request that would succeed on its own terms: right connection id and
 * secret, right region id and secret, the region's first byte. Callers
 * set the address, length and operands, then break one thing. */
static void req_base(struct hostile *h, struct wire_req *r, uint8_t opcode)
{
	memset(r, 0, sizeof(*r));
	r->version = WIRE_VERSION;
	r->opcode = opcode;
	r->dst_conn_id = h->tconn.conn_id;
	memcpy(r->dst_secret, h->tconn.secret, ENGINE_SECRET_LEN);
	r->src_conn_id = h->my_id;
	r->wr_id = h->next_wr_id++;
	r->region_id = h->region.region_id;
	memcpy(r->region_secret, h->region.secret, ENGINE_SECRET_LEN);
	r->remote_addr = h->region.addr;
}

static void write_req(struct hostile *h, struct wire_req *r, uint64_t addr, uint64_t len)
{
	req_base(h, r, ENGINE_OP_WRITE);
	r->remote_addr = addr;
	r->length = len;
}

static void read_req(struct hostile *h, struct wire_req *r, uint64_t addr, uint64_t len)
{
	req_base(h, r, ENGINE_OP_READ);
	r->remote_addr = addr;
	r->length = len;
}

static void fadd_req(struct hostile *h, struct wire_req *r, uint64_t addr)
{
	req_base(h, r, ENGINE_OP_ATOMIC_FADD);
	r->remote_addr = addr;
	r->operand = 0x0101010101010101ull;
}

static void cas_req(struct hostile *h, struct wire_req *r, uint64_t addr)
{
	req_base(h, r, ENGINE_OP_ATOMIC_CAS);
	r->remote_addr = addr;
	r->compare = 0;
	r->operand = ~0ull;
}

static struct expect *expect_add(struct hostile *h, const struct wire_req *r, bool dropped, doca_error_t status,
				 const char *what)
{
	struct expect *e;

	if (h->nexp == MAX_EXPECT) {
		problem(h, "test bug: more than %d messages in one scenario", MAX_EXPECT);
		return NULL;
	}
	e = &h->exp[h->nexp++];
	memset(e, 0, sizeof(*e));
	e->wr_id = r->wr_id;
	e->opcode = r->opcode;
	e->dropped = dropped;
	e->status = status;
	snprintf(e->what, sizeof(e->what), "%s", what);
	return e;
}

/* Send request r (hdr_len bytes of it, which may be more or less than the
 * struct: the extra bytes are zero) with a payload of len bytes taken from
 * our pattern buffers. */
static void send_req_raw(struct hostile *h, const struct wire_req *r, size_t hdr_len, size_t len, uint32_t flags,
			 const char *what)
{
	uint8_t hdr[sizeof(struct wire_req) + 64] = {0};
	const uint8_t *payload = len <= SMALL_LEN ? h->small : h->big;

	if (hdr_len > sizeof(hdr) || len > BIG_LEN) {
		problem(h, "test bug: %s is too large", what);
		return;
	}
	memcpy(hdr, r, sizeof(*r));
	am_send(h, WIRE_AM_REQ, hdr, hdr_len, payload, len, flags, what);
}

/* Send r with a payload of len bytes; it must be refused with `status`. */
__attribute__((format(printf, 6, 7))) static void refused(struct hostile *h, struct wire_req *r, size_t len,
							  uint32_t flags, doca_error_t status, const char *fmt, ...)
{
	char what[112];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (expect_add(h, r, false, status, what) != NULL)
		send_req_raw(h, r, sizeof(*r), len, flags, what);
}

/* Send hdr_len bytes of r with a payload of len bytes; it must be dropped
 * without an answer. */
__attribute__((format(printf, 6, 7))) static void dropped(struct hostile *h, struct wire_req *r, size_t hdr_len,
							  size_t len, uint32_t flags, const char *fmt, ...)
{
	char what[112];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (expect_add(h, r, true, DOCA_SUCCESS, what) != NULL)
		send_req_raw(h, r, hdr_len, len, flags, what);
}

/* ------------------------------------------------------------------ */
/* Judging a scenario                                                   */

static struct expect *expect_find(struct hostile *h, uint64_t wr_id)
{
	for (uint32_t i = 0; i < h->nexp; i++)
		if (h->exp[i].wr_id == wr_id)
			return &h->exp[i];
	return NULL;
}

/* The wire's bit for the permission an opcode needs at the target. */
static uint64_t wire_perm_of(uint8_t opcode)
{
	switch (opcode) {
	case ENGINE_OP_READ:
	case ENGINE_OP_SYNC_GET:
		return WIRE_PERM_RDMA_READ;
	case ENGINE_OP_WRITE:
	case ENGINE_OP_WRITE_IMM:
	case ENGINE_OP_SYNC_SET:
		return WIRE_PERM_RDMA_WRITE;
	default:
		return WIRE_PERM_RDMA_ATOMIC;
	}
}

/* A refusal's reason (value, result_len) must be what the target saw:
 * the permission the opcode needs, or our region's bounds; every other
 * answer of ours carries neither. */
static void judge_refusal(struct hostile *h, const struct expect *e, const struct wire_resp *r)
{
	uint64_t want_value = 0, want_len = 0;

	switch (r->status) {
	case WIRE_STATUS_CTX_LACKS:
	case WIRE_STATUS_REGION_LACKS:
		want_value = wire_perm_of(e->opcode);
		break;
	case WIRE_STATUS_OUT_OF_RANGE:
		want_value = h->region.addr;
		want_len = h->region.len;
		break;
	default:
		break;
	}
	if (r->value != want_value || r->result_len != want_len)
		problem(h, "%s: answer (wire status %#x) carries value %#" PRIx64 " and result_len %" PRIu64
			   ", expected %#" PRIx64 " and %" PRIu64,
			e->what, (unsigned)r->status, r->value, r->result_len, want_value, want_len);
}

/* One answer against what it answers. */
static void judge_answer(struct hostile *h, struct answer *a)
{
	struct expect *e;
	const struct wire_resp *r = &a->hdr;
	doca_error_t st;

	a->judged = true;
	if (a->hdr_len != sizeof(struct wire_resp)) {
		problem(h, "an answer with a %zu-byte header (want %zu)", a->hdr_len, sizeof(struct wire_resp));
		return;
	}
	e = expect_find(h, r->wr_id);
	if (e == NULL) {
		problem(h, "an answer for wr_id %#" PRIx64 ", which this scenario never sent (status %s)", r->wr_id,
			status_name(r->status));
		return;
	}
	if (e->dropped) {
		problem(h, "%s was answered with %s; it must be dropped unanswered", e->what, status_name(r->status));
		e->answered = true;
		return;
	}
	if (e->answered) {
		problem(h, "%s was answered twice", e->what);
		return;
	}
	e->answered = true;
	if (r->version != WIRE_VERSION || r->flags != 0 || r->reserved != 0)
		problem(h, "%s: answer with version %u, flags %#x, reserved %#x", e->what, r->version, r->flags,
			r->reserved);
	if (r->dst_conn_id != h->my_id || memcmp(r->dst_secret, h->my_secret, ENGINE_SECRET_LEN) != 0)
		problem(h, "%s: answer addressed to connection %u%s, not to ours (%u) with our secret", e->what,
			r->dst_conn_id, r->dst_conn_id == h->my_id ? " with another secret" : "", h->my_id);
	if (r->opcode != e->opcode)
		problem(h, "%s: answer echoes opcode %u, not %u", e->what, r->opcode, e->opcode);
	if (!wire_status_to_doca(r->status, &st) || st != e->status)
		problem(h, "%s: answered %s (wire status %#x), expected %s", e->what, status_name(r->status),
			(unsigned)r->status, doca_error_get_name(e->status));
	judge_refusal(h, e, r);
	if (a->data_len != 0)
		problem(h, "%s: answer carries %zu payload bytes%s", e->what, a->data_len,
			a->rndv ? " by rendezvous" : "");
}

static bool all_answered(struct hostile *h)
{
	for (uint32_t i = h->first_answer; i < h->nanswers; i++)
		if (!h->answers[i].judged)
			judge_answer(h, &h->answers[i]);
	for (uint32_t i = 0; i < h->nexp; i++)
		if (!h->exp[i].dropped && !h->exp[i].answered)
			return false;
	return h->sends_pending == 0;
}

static void scen_begin(struct hostile *h, const char *name)
{
	h->scen = name;
	h->nexp = 0;
	h->first_answer = h->nanswers;
	h->nsent = 0;
	h->problems[0] = '\0';
	h->nproblems = 0;
}

/* Send the probe, wait for it and every answer due, judge, report. */
static void scen_end(struct hostile *h)
{
	struct wire_req probe;
	double deadline, settle;
	uint32_t n_refused = 0, n_dropped = 0, n_other;

	n_other = h->nsent - (h->nexp < h->nsent ? h->nexp : h->nsent); /* not REQs */
	req_base(h, &probe, ENGINE_OP_READ);
	probe.length = 0; /* reads nothing: no key is checked, always answered */
	refused(h, &probe, 0, 0, DOCA_SUCCESS, "probe (zero-length read, answered with success)");

	deadline = now_s() + ANSWER_WAIT_S;
	while (!all_answered(h) && now_s() < deadline && !target_gave_up(h))
		pump(h, 5);
	if (target_gave_up(h))
		problem(h, "the target gave up (see its output)");
	settle = now_s() + SETTLE_S;
	while (now_s() < settle)
		pump(h, 2);
	(void)all_answered(h);

	for (uint32_t i = 0; i < h->nexp; i++) {
		const struct expect *e = &h->exp[i];

		if (e->dropped)
			n_dropped += !e->answered;
		else if (!e->answered)
			problem(h, "%s: no answer within %.0f s%s", e->what, ANSWER_WAIT_S,
				e->wr_id == probe.wr_id ? " (the target stopped serving this connection?)" : "");
		else if (e->wr_id != probe.wr_id)
			n_refused++;
	}
	if (h->sends_pending != 0)
		problem(h, "%u send(s) still not complete after %.0f s (a refused payload never released?)",
			h->sends_pending, ANSWER_WAIT_S);
	if (h->byes != 0)
		problem(h, "the target said BYE to us (%u)", h->byes);
	if (h->reqs != 0)
		problem(h, "the target sent us %u request(s)", h->reqs);
	if (h->answers_lost != 0)
		problem(h, "%u answers beyond the %d this program keeps", h->answers_lost, MAX_ANSWERS);
	if (h->acks != 0)
		problem(h, "%u acknowledgements, though no request of ours succeeded without a result", h->acks);

	if (h->nproblems == 0) {
		h->passed++;
		printf("PASS hostile %s %s: %u refused with the right status, %u dropped unanswered, "
		       "%u other messages (HELLO, BYE, RESP, CM) sent; probe answered\n",
		       h->grp->name, h->scen, n_refused, n_dropped, n_other);
	} else {
		h->failed++;
		printf("FAIL hostile %s %s: %u problem(s): %s\n", h->grp->name, h->scen, h->nproblems, h->problems);
	}
	fflush(stdout);
}

/* ------------------------------------------------------------------ */
/* Scenarios                                                            */

/* The region as the descriptor grants it. */
#define BASE(h) ((h)->region.addr)
#define LEN(h) ((h)->region.len)

/* Before HELLO: an operation on the right connection with the right
 * secret must be dropped. Then HELLO, the target's HELLO, and a probe. */
static void scen_handshake(struct hostile *h)
{
	struct wire_hello hello = {0};
	const struct wire_hello *t = &h->hello;
	struct wire_req r;
	double deadline;

	if (h->grp->need & WR)
		write_req(h, &r, BASE(h), SMALL_LEN);
	else if (h->grp->need & RD)
		read_req(h, &r, BASE(h), SMALL_LEN);
	else
		fadd_req(h, &r, BASE(h));
	dropped(h, &r, sizeof(r), r.opcode == ENGINE_OP_WRITE ? SMALL_LEN : 0, 0,
		"permitted %s before our HELLO", op_label(r.opcode));

	hello.version = WIRE_VERSION;
	hello.dst_conn_id = h->tconn.conn_id;
	memcpy(hello.dst_secret, h->tconn.secret, ENGINE_SECRET_LEN);
	hello.src_conn_id = h->my_id;
	memcpy(hello.src_secret, h->my_secret, ENGINE_SECRET_LEN);
	am_send(h, WIRE_AM_HELLO, &hello, sizeof(hello), NULL, 0, 0, "our HELLO");

	/* The target connects to our descriptor and says HELLO: only then
	 * does it execute our operations. */
	deadline = now_s() + HELLO_WAIT_S;
	while (h->hellos == 0 && now_s() < deadline && !target_gave_up(h))
		pump(h, 5);
	if (h->hellos == 0) {
		problem(h, "no HELLO from the target within %.0f s", HELLO_WAIT_S);
	} else if (h->hello_len != sizeof(struct wire_hello) || t->version != WIRE_VERSION || t->flags != 0 ||
		   t->reserved != 0 || t->dst_conn_id != h->my_id ||
		   memcmp(t->dst_secret, h->my_secret, ENGINE_SECRET_LEN) != 0 || t->src_conn_id != h->tconn.conn_id ||
		   memcmp(t->src_secret, h->tconn.secret, ENGINE_SECRET_LEN) != 0) {
		problem(h, "the target's HELLO (%zu bytes) does not name our connection %u and its own %u with their "
			   "secrets",
			h->hello_len, h->my_id, h->tconn.conn_id);
	}
}

static void scen_conn_secret(struct hostile *h)
{
	static const char *const how[] = {"first bit flipped", "last bit flipped", "all zero",
					  "the region secret", "our own secret"};
	struct wire_req r;

	for (size_t k = 0; k < sizeof(how) / sizeof(how[0]); k++) {
		write_req(h, &r, BASE(h), SMALL_LEN);
		switch (k) {
		case 0:
			r.dst_secret[0] ^= 1;
			break;
		case 1:
			r.dst_secret[ENGINE_SECRET_LEN - 1] ^= 0x80;
			break;
		case 2:
			memset(r.dst_secret, 0, ENGINE_SECRET_LEN);
			break;
		case 3:
			memcpy(r.dst_secret, h->region.secret, ENGINE_SECRET_LEN);
			break;
		default:
			memcpy(r.dst_secret, h->my_secret, ENGINE_SECRET_LEN);
			break;
		}
		dropped(h, &r, sizeof(r), SMALL_LEN, 0, "write with connection secret: %s", how[k]);
	}
	write_req(h, &r, BASE(h), BIG_LEN < LEN(h) ? BIG_LEN : LEN(h));
	r.dst_secret[7] ^= 0x10;
	dropped(h, &r, sizeof(r), (size_t)r.length, UCP_AM_SEND_FLAG_RNDV,
		"rendezvous write of the whole region with a wrong connection secret");
	read_req(h, &r, BASE(h), SMALL_LEN);
	r.dst_secret[3] ^= 4;
	dropped(h, &r, sizeof(r), 0, 0, "read with a wrong connection secret");
}

static void scen_conn_id(struct hostile *h)
{
	const uint32_t ids[] = {0, h->tconn.conn_id + 1, 0xFFFFFFFFu, 0x80000000u | h->tconn.conn_id, h->my_id};
	struct wire_req r;

	for (size_t k = 0; k < sizeof(ids) / sizeof(ids[0]); k++) {
		write_req(h, &r, BASE(h), SMALL_LEN);
		r.dst_conn_id = ids[k];
		dropped(h, &r, sizeof(r), SMALL_LEN, 0, "write to unknown connection id %#x (right secret)", ids[k]);
	}
	read_req(h, &r, BASE(h), SMALL_LEN);
	r.dst_conn_id = h->tconn.conn_id + 1;
	dropped(h, &r, sizeof(r), 0, 0, "read on unknown connection id %u", r.dst_conn_id);
}

static void scen_region_id(struct hostile *h)
{
	const uint64_t ids[] = {h->region.region_id + 1, h->region.region_id - 1, h->region.region_id ^ (1ull << 63),
				0, UINT64_MAX};
	struct wire_req r;

	for (size_t k = 0; k < sizeof(ids) / sizeof(ids[0]); k++) {
		if (ids[k] == h->region.region_id)
			continue;
		if (h->grp->need & WR) {
			write_req(h, &r, BASE(h), SMALL_LEN);
			r.region_id = ids[k];
			refused(h, &r, SMALL_LEN, 0, DOCA_ERROR_NOT_PERMITTED, "write to forged region id %#" PRIx64,
				ids[k]);
		}
		if (h->grp->need & RD) {
			read_req(h, &r, BASE(h), SMALL_LEN);
			r.region_id = ids[k];
			refused(h, &r, 0, 0, DOCA_ERROR_NOT_PERMITTED, "read of forged region id %#" PRIx64, ids[k]);
		}
	}
	if (h->grp->need & WR) {
		write_req(h, &r, BASE(h), SMALL_LEN);
		r.region_id++;
		refused(h, &r, SMALL_LEN, UCP_AM_SEND_FLAG_RNDV, DOCA_ERROR_NOT_PERMITTED,
			"rendezvous write to a forged region id");
	}
}

static void scen_region_secret(struct hostile *h)
{
	static const char *const how[] = {"first bit flipped", "last bit flipped", "all zero",
					  "the connection secret"};
	struct wire_req r;

	for (size_t k = 0; k < sizeof(how) / sizeof(how[0]); k++) {
		for (int op = 0; op < 2; op++) {
			if (op == 0 && !(h->grp->need & WR))
				continue;
			if (op == 1 && !(h->grp->need & RD))
				continue;
			if (op == 0)
				write_req(h, &r, BASE(h), SMALL_LEN);
			else
				read_req(h, &r, BASE(h), SMALL_LEN);
			switch (k) {
			case 0:
				r.region_secret[0] ^= 1;
				break;
			case 1:
				r.region_secret[ENGINE_SECRET_LEN - 1] ^= 0x80;
				break;
			case 2:
				memset(r.region_secret, 0, ENGINE_SECRET_LEN);
				break;
			default:
				memcpy(r.region_secret, h->tconn.secret, ENGINE_SECRET_LEN);
				break;
			}
			refused(h, &r, op == 0 ? SMALL_LEN : 0, 0, DOCA_ERROR_NOT_PERMITTED,
				"%s with region secret: %s", op == 0 ? "write" : "read", how[k]);
		}
	}
	if (h->grp->need & WR) {
		write_req(h, &r, BASE(h), BIG_LEN < LEN(h) ? BIG_LEN : LEN(h));
		r.region_secret[5] ^= 0x20;
		refused(h, &r, (size_t)r.length, UCP_AM_SEND_FLAG_RNDV, DOCA_ERROR_NOT_PERMITTED,
			"rendezvous write of the whole region with a wrong region secret");
	}
}

/* Writes and reads at [addr, +len): each must be refused as out of range. */
static void oob_pair(struct hostile *h, uint64_t addr, uint64_t len, const char *where)
{
	struct wire_req r;

	if (len <= BIG_LEN) {
		write_req(h, &r, addr, len);
		refused(h, &r, (size_t)len, 0, DOCA_ERROR_INVALID_VALUE, "write of %" PRIu64 " B %s", len, where);
	}
	read_req(h, &r, addr, len);
	refused(h, &r, 0, 0, DOCA_ERROR_INVALID_VALUE, "read of %" PRIu64 " B %s", len, where);
}

static void scen_oob_below(struct hostile *h)
{
	oob_pair(h, BASE(h) - 16, 16, "just below the region");
	oob_pair(h, BASE(h) - 1, 16, "from 1 B below the region into it");
	oob_pair(h, BASE(h) - 4096, 64, "4 KiB below the region");
	oob_pair(h, 4096, 16, "at address 4096");
}

static void scen_oob_above(struct hostile *h)
{
	oob_pair(h, BASE(h) + LEN(h), 16, "just past the region end");
	oob_pair(h, BASE(h) + LEN(h), 1, "at the region end");
	oob_pair(h, BASE(h) + LEN(h) + 4096 - 16, 16, "4 KiB past the region end");
}

static void scen_oob_straddle(struct hostile *h)
{
	oob_pair(h, BASE(h) + LEN(h) - 8, 16, "straddling the region end");
	oob_pair(h, BASE(h) + LEN(h) - 1, 2, "straddling the region end by 1 B");
	oob_pair(h, BASE(h), LEN(h) + 1, "one more than the whole region");
}

/* addr + len past 2^64: every form must be refused, not wrapped. */
static void scen_oob_wrap(struct hostile *h)
{
	struct wire_req r;

	write_req(h, &r, UINT64_MAX - 7, 16);
	refused(h, &r, 16, 0, DOCA_ERROR_INVALID_VALUE, "write of 16 B at 2^64-8 (end wraps to 8)");
	write_req(h, &r, UINT64_MAX, 2);
	refused(h, &r, 2, 0, DOCA_ERROR_INVALID_VALUE, "write of 2 B at 2^64-1");
	read_req(h, &r, BASE(h) + 8, 0 - (uint64_t)8);
	refused(h, &r, 0, 0, DOCA_ERROR_INVALID_VALUE, "read at region+8 of 2^64-8 B (end wraps to the region start)");
	read_req(h, &r, BASE(h) + LEN(h) - 8, 0 - LEN(h) + 16);
	refused(h, &r, 0, 0, DOCA_ERROR_INVALID_VALUE,
		"read at the region end-8 whose end wraps to region+8 (inside the region)");
	read_req(h, &r, BASE(h), UINT64_MAX);
	refused(h, &r, 0, 0, DOCA_ERROR_INVALID_VALUE, "read of 2^64-1 B at the region start");
	read_req(h, &r, UINT64_MAX, 2);
	refused(h, &r, 0, 0, DOCA_ERROR_INVALID_VALUE, "read of 2 B at 2^64-1");
}

/* Large payloads, eager and rendezvous, that would run past the region:
 * refused before a byte lands, and the payload released. */
static void scen_oob_large(struct hostile *h)
{
	struct wire_req r;

	write_req(h, &r, BASE(h), BIG_LEN);
	refused(h, &r, BIG_LEN, UCP_AM_SEND_FLAG_RNDV, DOCA_ERROR_INVALID_VALUE,
		"rendezvous write of %u B from the region start", BIG_LEN);
	write_req(h, &r, BASE(h), BIG_LEN);
	refused(h, &r, BIG_LEN, UCP_AM_SEND_FLAG_EAGER, DOCA_ERROR_INVALID_VALUE,
		"eager write of %u B from the region start", BIG_LEN);
	write_req(h, &r, BASE(h) + LEN(h) - SMALL_LEN, SMALL_LEN);
	refused(h, &r, BIG_LEN, UCP_AM_SEND_FLAG_RNDV, DOCA_ERROR_INVALID_VALUE,
		"rendezvous write of %u B claiming %u B of room at the region end", BIG_LEN, SMALL_LEN);
	write_req(h, &r, BASE(h) - BIG_LEN / 2, BIG_LEN);
	refused(h, &r, BIG_LEN, UCP_AM_SEND_FLAG_RNDV, DOCA_ERROR_INVALID_VALUE,
		"rendezvous write of %u B centred on the region start", BIG_LEN);
	read_req(h, &r, BASE(h), BIG_LEN);
	refused(h, &r, 0, 0, DOCA_ERROR_INVALID_VALUE, "read of %u B from the region start", BIG_LEN);
}

static void scen_write_noperm(struct hostile *h)
{
	struct wire_req r;

	write_req(h, &r, BASE(h), SMALL_LEN);
	refused(h, &r, SMALL_LEN, 0, DOCA_ERROR_NOT_PERMITTED, "in-range write of %u B", SMALL_LEN);
	write_req(h, &r, BASE(h) + LEN(h) - 1, 1);
	refused(h, &r, 1, 0, DOCA_ERROR_NOT_PERMITTED, "write of the region's last byte");
	write_req(h, &r, BASE(h), LEN(h));
	refused(h, &r, (size_t)LEN(h), UCP_AM_SEND_FLAG_RNDV, DOCA_ERROR_NOT_PERMITTED,
		"rendezvous write of the whole region");
	write_req(h, &r, BASE(h), LEN(h));
	refused(h, &r, (size_t)LEN(h), UCP_AM_SEND_FLAG_EAGER, DOCA_ERROR_NOT_PERMITTED,
		"eager write of the whole region");
}

static void scen_read_noperm(struct hostile *h)
{
	struct wire_req r;

	read_req(h, &r, BASE(h), SMALL_LEN);
	refused(h, &r, 0, 0, DOCA_ERROR_NOT_PERMITTED, "in-range read of %u B", SMALL_LEN);
	read_req(h, &r, BASE(h) + LEN(h) - 1, 1);
	refused(h, &r, 0, 0, DOCA_ERROR_NOT_PERMITTED, "read of the region's last byte");
	read_req(h, &r, BASE(h), LEN(h));
	refused(h, &r, 0, 0, DOCA_ERROR_NOT_PERMITTED, "read of the whole region");
}

static void scen_atomic_noperm(struct hostile *h)
{
	struct wire_req r;

	fadd_req(h, &r, BASE(h));
	refused(h, &r, 0, 0, DOCA_ERROR_NOT_PERMITTED, "fetch-and-add on the region's first word");
	cas_req(h, &r, BASE(h));
	r.compare = 0; /* whatever is there: a missing check would still be seen by the target */
	refused(h, &r, 0, 0, DOCA_ERROR_NOT_PERMITTED, "compare-and-swap on the region's first word");
	fadd_req(h, &r, BASE(h) + (LEN(h) & ~(uint64_t)7) - 8);
	refused(h, &r, 0, 0, DOCA_ERROR_NOT_PERMITTED, "fetch-and-add on the region's last word");
}

static void scen_atomic_misaligned(struct hostile *h)
{
	static const uint64_t offs[] = {4, 1, 7};
	struct wire_req r;

	for (size_t k = 0; k < sizeof(offs) / sizeof(offs[0]); k++) {
		fadd_req(h, &r, BASE(h) + offs[k]);
		refused(h, &r, 0, 0, DOCA_ERROR_INVALID_VALUE, "fetch-and-add at region+%" PRIu64, offs[k]);
	}
	cas_req(h, &r, BASE(h) + 4);
	refused(h, &r, 0, 0, DOCA_ERROR_INVALID_VALUE, "compare-and-swap at region+4");
	fadd_req(h, &r, BASE(h) + LEN(h) - 4);
	refused(h, &r, 0, 0, DOCA_ERROR_INVALID_VALUE, "fetch-and-add straddling the region end (end-4)");
}

static void scen_atomic_oob(struct hostile *h)
{
	struct wire_req r;

	fadd_req(h, &r, BASE(h) - 8);
	refused(h, &r, 0, 0, DOCA_ERROR_INVALID_VALUE, "fetch-and-add on the word below the region");
	cas_req(h, &r, BASE(h) - 8);
	refused(h, &r, 0, 0, DOCA_ERROR_INVALID_VALUE, "compare-and-swap on the word below the region");
	fadd_req(h, &r, BASE(h) + (LEN(h) & ~(uint64_t)7) + ((LEN(h) & 7) ? 8 : 0));
	refused(h, &r, 0, 0, DOCA_ERROR_INVALID_VALUE, "fetch-and-add on the word past the region end");
	fadd_req(h, &r, UINT64_MAX - 7);
	refused(h, &r, 0, 0, DOCA_ERROR_INVALID_VALUE, "fetch-and-add at 2^64-8");
	fadd_req(h, &r, 8);
	refused(h, &r, 0, 0, DOCA_ERROR_INVALID_VALUE, "fetch-and-add at address 8");
}

static void scen_atomic_keys(struct hostile *h)
{
	struct wire_req r;

	fadd_req(h, &r, BASE(h));
	r.region_id++;
	refused(h, &r, 0, 0, DOCA_ERROR_NOT_PERMITTED, "fetch-and-add on a forged region id");
	fadd_req(h, &r, BASE(h));
	r.region_secret[9] ^= 2;
	refused(h, &r, 0, 0, DOCA_ERROR_NOT_PERMITTED, "fetch-and-add with a wrong region secret");
	cas_req(h, &r, BASE(h));
	memset(r.region_secret, 0, ENGINE_SECRET_LEN);
	refused(h, &r, 0, 0, DOCA_ERROR_NOT_PERMITTED, "compare-and-swap with an all-zero region secret");
	fadd_req(h, &r, BASE(h));
	r.dst_secret[0] ^= 1;
	dropped(h, &r, sizeof(r), 0, 0, "fetch-and-add with a wrong connection secret");
}

/* Remote sync event operations naming the memory region (no sync event
 * was exported): refused, and a set with the wrong payload size too. */
static void scen_sync_forged(struct hostile *h)
{
	struct wire_req r;

	req_base(h, &r, ENGINE_OP_SYNC_GET);
	refused(h, &r, 0, 0, DOCA_ERROR_NOT_PERMITTED, "sync event get naming the memory region");
	req_base(h, &r, ENGINE_OP_SYNC_SET);
	refused(h, &r, 8, 0, DOCA_ERROR_NOT_PERMITTED, "sync event set naming the memory region");
	req_base(h, &r, ENGINE_OP_SYNC_ADD);
	r.operand = 1;
	refused(h, &r, 0, 0, DOCA_ERROR_NOT_PERMITTED, "sync event add naming the memory region");
	req_base(h, &r, ENGINE_OP_SYNC_ADD);
	r.region_id = UINT64_MAX;
	refused(h, &r, 0, 0, DOCA_ERROR_NOT_PERMITTED, "sync event add naming sync event 2^64-1");
	req_base(h, &r, ENGINE_OP_SYNC_SET);
	refused(h, &r, 16, 0, DOCA_ERROR_INVALID_VALUE, "sync event set carrying 16 B");
}

/* Malformed headers around an otherwise permitted write: dropped. */
static void scen_malformed(struct hostile *h)
{
	struct wire_req r;

	write_req(h, &r, BASE(h), SMALL_LEN);
	dropped(h, &r, sizeof(r) - 1, SMALL_LEN, 0, "write with a header 1 B short");
	write_req(h, &r, BASE(h), SMALL_LEN);
	dropped(h, &r, sizeof(r) + 8, SMALL_LEN, 0, "write with a header 8 B long");
	write_req(h, &r, BASE(h), SMALL_LEN);
	dropped(h, &r, 0, SMALL_LEN, 0, "write with no header at all");
	write_req(h, &r, BASE(h), SMALL_LEN);
	dropped(h, &r, sizeof(struct wire_resp), SMALL_LEN, 0, "write with a header of a response's size");

	for (int k = 0; k < 3; k++) {
		static const uint16_t versions[] = {0, WIRE_VERSION + 1, 0xFFFF};

		write_req(h, &r, BASE(h), SMALL_LEN);
		r.version = versions[k];
		dropped(h, &r, sizeof(r), SMALL_LEN, 0, "write of wire version %u", versions[k]);
	}
	for (int k = 0; k < 3; k++) {
		static const uint8_t opcodes[] = {ENGINE_OP_RECV, ENGINE_OP_SYNC_ADD + 1, 0xFF};

		write_req(h, &r, BASE(h), SMALL_LEN);
		r.opcode = opcodes[k];
		dropped(h, &r, sizeof(r), SMALL_LEN, 0, "write-shaped request with opcode %u", opcodes[k]);
	}
	write_req(h, &r, BASE(h), SMALL_LEN);
	r.flags = 0x02; /* 0x01 is WIRE_REQ_ACK_NOW */
	dropped(h, &r, sizeof(r), SMALL_LEN, 0, "write with flags 0x02");
	write_req(h, &r, BASE(h), SMALL_LEN);
	r.flags = 0x80;
	dropped(h, &r, sizeof(r), SMALL_LEN, 0, "write with flags 0x80");
	write_req(h, &r, BASE(h), SMALL_LEN);
	r.reserved = 1;
	dropped(h, &r, sizeof(r), SMALL_LEN, 0, "write with reserved 1");
	write_req(h, &r, BASE(h), SMALL_LEN);
	r.reserved = 0x80000000u;
	dropped(h, &r, sizeof(r), SMALL_LEN, UCP_AM_SEND_FLAG_RNDV, "rendezvous write with reserved 0x80000000");

	/* A request under an active message id nobody registered. */
	write_req(h, &r, BASE(h), SMALL_LEN);
	if (expect_add(h, &r, true, DOCA_SUCCESS, "write sent under an unregistered active message id"))
		am_send(h, AM_UNREGISTERED, &r, sizeof(r), h->small, SMALL_LEN, 0, "write under an unregistered AM id");
}

/* One entry of a forged batch: a request, the payload bytes that follow
 * it (not always what it claims), and whether it is expected to be
 * refused (answered with status) or dropped unanswered. */
struct batch_entry {
	struct wire_req r;
	size_t payload;
	bool dropped;
	doca_error_t status;
	const char *what;
};

/* Send the entries as one WIRE_AM_BATCH whose header says count (and
 * flags), hdr_len bytes of it, with the UCX send flags am_flags. */
static void send_batch(struct hostile *h, struct batch_entry *e, uint32_t n, uint32_t count, uint16_t flags,
		       size_t hdr_len, uint32_t am_flags, const char *what)
{
	uint8_t buf[8 * (sizeof(struct wire_req) + SMALL_LEN)];
	struct wire_batch b = {.version = WIRE_VERSION, .flags = flags, .count = count};
	size_t off = 0;

	for (uint32_t i = 0; i < n; i++) {
		size_t entry = wire_pad8(sizeof(e[i].r) + e[i].payload);

		if (off + entry > sizeof(buf) || e[i].payload > SMALL_LEN) {
			problem(h, "test bug: batch %s too large", what);
			return;
		}
		if (expect_add(h, &e[i].r, e[i].dropped, e[i].status, e[i].what) == NULL)
			return;
		memset(buf + off, 0, entry);
		memcpy(buf + off, &e[i].r, sizeof(e[i].r));
		memcpy(buf + off + sizeof(e[i].r), h->small, e[i].payload);
		off += entry;
	}
	am_send(h, WIRE_AM_BATCH, &b, hdr_len, buf, off, am_flags, what);
}

/* An out-of-bounds write the target refuses, as a batch entry. */
static void batch_oob(struct hostile *h, struct batch_entry *e, bool dropped, const char *what)
{
	memset(e, 0, sizeof(*e));
	write_req(h, &e->r, BASE(h) + LEN(h), 16);
	e->payload = 16;
	e->dropped = dropped;
	e->status = DOCA_ERROR_INVALID_VALUE;
	e->what = what;
}

/* Batches: each entry is judged as a request alone; a malformed entry
 * ends its batch (the ones after it are dropped); a malformed batch
 * header drops the whole batch. */
static void scen_batch(struct hostile *h)
{
	struct batch_entry e[4];

	batch_oob(h, &e[0], false, "batch entry 1 of 3 (out of bounds)");
	batch_oob(h, &e[1], false, "batch entry 2 of 3 (out of bounds)");
	batch_oob(h, &e[2], false, "batch entry 3 of 3 (out of bounds)");
	send_batch(h, e, 3, 3, 0, sizeof(struct wire_batch), 0, "well-formed batch");

	batch_oob(h, &e[0], false, "entry 1 of a batch claiming 4 with 2");
	batch_oob(h, &e[1], false, "entry 2 of a batch claiming 4 with 2");
	send_batch(h, e, 2, 4, 0, sizeof(struct wire_batch), 0, "batch with fewer entries than it says");

	batch_oob(h, &e[0], false, "entry before one claiming too much payload");
	batch_oob(h, &e[1], true, "entry claiming more payload than the batch holds");
	e[1].r.length = 1u << 20;
	batch_oob(h, &e[2], true, "entry after one claiming too much payload");
	send_batch(h, e, 3, 3, 0, sizeof(struct wire_batch), 0, "batch with an overlong entry");

	batch_oob(h, &e[0], false, "entry before one of another wire version");
	batch_oob(h, &e[1], true, "entry of another wire version");
	e[1].r.version = WIRE_VERSION + 1;
	batch_oob(h, &e[2], true, "entry after one of another wire version");
	send_batch(h, e, 3, 3, 0, sizeof(struct wire_batch), 0, "batch with a bad entry");

	batch_oob(h, &e[0], false, "entry before one with a wrong connection secret");
	batch_oob(h, &e[1], true, "entry with a wrong connection secret");
	e[1].r.dst_secret[5] ^= 0x10;
	batch_oob(h, &e[2], false, "entry after one with a wrong connection secret");
	send_batch(h, e, 3, 3, 0, sizeof(struct wire_batch), 0, "batch with a forged entry");

	batch_oob(h, &e[0], true, "entry of a batch of count 1");
	batch_oob(h, &e[1], true, "second entry of a batch of count 1");
	send_batch(h, e, 2, 1, 0, sizeof(struct wire_batch), 0, "batch of count 1");
	batch_oob(h, &e[0], true, "entry of a batch of count 65");
	batch_oob(h, &e[1], true, "second entry of a batch of count 65");
	send_batch(h, e, 2, WIRE_BATCH_MAX + 1, 0, sizeof(struct wire_batch), 0, "batch of count 65");
	batch_oob(h, &e[0], true, "entry of a batch with flags");
	batch_oob(h, &e[1], true, "second entry of a batch with flags");
	send_batch(h, e, 2, 2, 1, sizeof(struct wire_batch), 0, "batch with flags 1");
	batch_oob(h, &e[0], true, "entry of a batch with a short header");
	batch_oob(h, &e[1], true, "second entry of a batch with a short header");
	send_batch(h, e, 2, 2, 0, sizeof(struct wire_batch) - 1, 0, "batch with a short header");
	batch_oob(h, &e[0], true, "entry of a batch sent by rendezvous");
	batch_oob(h, &e[1], true, "second entry of a batch sent by rendezvous");
	send_batch(h, e, 2, 2, 0, sizeof(struct wire_batch), UCP_AM_SEND_FLAG_RNDV, "batch sent by rendezvous");
}

/* A flood of messages the target must drop, FLOOD_PER_KIND of each of four
 * kinds, each of which the target logs at its own place: wrong connection
 * secret, unknown connection id, short header, wrong wire version. None is
 * tracked (and none may be answered: an answer would be one this scenario
 * never sent); hostile_tests.sh checks that the target's log stayed small. */
static void scen_flood(struct hostile *h)
{
	struct wire_req r;

	for (uint32_t i = 0; i < FLOOD_PER_KIND; i++) {
		write_req(h, &r, BASE(h), SMALL_LEN);
		r.dst_secret[0] ^= 1;
		send_req_raw(h, &r, sizeof(r), SMALL_LEN, 0, "flood: write with a wrong connection secret");
		write_req(h, &r, BASE(h), SMALL_LEN);
		r.dst_conn_id = h->tconn.conn_id + 1;
		send_req_raw(h, &r, sizeof(r), SMALL_LEN, 0, "flood: write to an unknown connection id");
		write_req(h, &r, BASE(h), SMALL_LEN);
		send_req_raw(h, &r, sizeof(r) - 1, SMALL_LEN, 0, "flood: write with a header 1 B short");
		write_req(h, &r, BASE(h), SMALL_LEN);
		r.version = WIRE_VERSION + 1;
		send_req_raw(h, &r, sizeof(r), SMALL_LEN, 0, "flood: write of the next wire version");
		if (i % 32 == 31)
			pump(h, 0);
	}
	printf("NOTE hostile %s flood: %u messages of each of 4 kinds sent\n", h->grp->name, FLOOD_PER_KIND);
}

/* RDMA CM messages on a connection made by export/connect, with a valid
 * descriptor (ours) as payload: dropped; the target must not report a
 * connection request (it checks) nor change our connection. */
static void scen_cm_inject(struct hostile *h)
{
	uint8_t hdr[8] = {0}, payload[WIRE_DESC_FIXED_LEN + WIRE_DESC_MAX_ADDR_LEN + 32];
	struct wire_desc d = {0};
	uint8_t *desc = NULL;
	size_t desc_len = 0;
	uint16_t version = WIRE_VERSION;
	uint32_t dl;

	d.conn_id = h->my_id + 100;
	memset(d.secret, 0x3c, ENGINE_SECRET_LEN);
	d.pid = (uint32_t)getpid();
	if (our_desc(h, &d, &desc, &desc_len) != DOCA_SUCCESS || desc_len + 16 > sizeof(payload)) {
		free(desc);
		problem(h, "cannot build a descriptor for the CM messages");
		return;
	}
	/* Header: version u16, private data length u8, reserved u8,
	 * descriptor length u32; payload: descriptor, then private data. */
	dl = (uint32_t)desc_len;
	memcpy(hdr, &version, 2);
	memcpy(hdr + 4, &dl, 4);
	memcpy(payload, desc, desc_len);
	memset(payload + desc_len, 0x77, 16);
	am_send(h, AM_CM_REQ, hdr, sizeof(hdr), payload, desc_len, 0, "CM request with a valid descriptor");
	am_send(h, AM_CM_REQ, hdr, sizeof(hdr), payload, desc_len, NO_REPLY,
		"CM request with a valid descriptor, no reply endpoint");
	hdr[2] = 16;
	am_send(h, AM_CM_REP, hdr, sizeof(hdr), payload, desc_len + 16, 0, "CM answer with a valid descriptor");
	am_send(h, AM_CM_REP, hdr, sizeof(hdr), payload, desc_len + 16, NO_REPLY,
		"CM answer with a valid descriptor, no reply endpoint");
	hdr[2] = 0;
	am_send(h, AM_CM_REQ, hdr, sizeof(hdr) - 1, payload, desc_len, 0, "CM request with a short header");
	free(desc);
}

/* Responses sent to the target, which has nothing in flight: ignored,
 * never answered, and the target keeps serving. */
static void scen_resp_inject(struct hostile *h)
{
	static const struct {
		uint64_t wr_id;
		uint8_t opcode;
		int32_t status;
		size_t payload;
		uint32_t flags;
		int secret_bit; /* -1: right secret */
		size_t hdr_len; /* 0: the right size */
	} inj[] = {
		{0, ENGINE_OP_WRITE, WIRE_STATUS_SUCCESS, 0, 0, -1, 0},
		{1, ENGINE_OP_READ, WIRE_STATUS_SUCCESS, SMALL_LEN, 0, -1, 0},
		{0xFFFFFFFFull, ENGINE_OP_ATOMIC_FADD, WIRE_STATUS_SUCCESS, 0, 0, -1, 0},
		{(1ull << 32) | 0, ENGINE_OP_WRITE, WIRE_STATUS_IO_FAILED, 0, 0, -1, 0},
		{0, ENGINE_OP_READ, WIRE_STATUS_SUCCESS, BIG_LEN, UCP_AM_SEND_FLAG_RNDV, -1, 0},
		{0, ENGINE_OP_READ, WIRE_STATUS_SUCCESS, BIG_LEN, UCP_AM_SEND_FLAG_EAGER, -1, 0},
		{0, ENGINE_OP_WRITE, WIRE_STATUS_SUCCESS, 0, 0, 3, 0},
		{0, ENGINE_OP_WRITE, -1, 0, 0, -1, 0},
		{0, ENGINE_OP_WRITE, 1000, 0, 0, -1, 0},
		{0, 0, WIRE_STATUS_SUCCESS, 0, 0, -1, 0},
		{0, ENGINE_OP_WRITE, WIRE_STATUS_SUCCESS, 0, 0, -1, sizeof(struct wire_resp) - 1},
	};

	for (size_t k = 0; k < sizeof(inj) / sizeof(inj[0]); k++) {
		struct wire_resp resp = {0};
		char what[112];

		resp.version = WIRE_VERSION;
		resp.opcode = inj[k].opcode;
		resp.dst_conn_id = h->tconn.conn_id;
		memcpy(resp.dst_secret, h->tconn.secret, ENGINE_SECRET_LEN);
		if (inj[k].secret_bit >= 0)
			resp.dst_secret[inj[k].secret_bit] ^= 1;
		resp.wr_id = inj[k].wr_id;
		resp.status = inj[k].status;
		resp.result_len = inj[k].payload;
		snprintf(what, sizeof(what), "injected answer #%zu (wr_id %#" PRIx64 ")", k, inj[k].wr_id);
		am_send(h, WIRE_AM_RESP, &resp, inj[k].hdr_len ? inj[k].hdr_len : sizeof(resp),
			inj[k].payload <= SMALL_LEN ? h->small : h->big, inj[k].payload, inj[k].flags, what);
	}
	/* Acknowledgements of nothing: any wr_id, a wrong secret, flags, a
	 * payload, a short or a long header. */
	for (int k = 0; k < 8; k++) {
		struct {
			struct wire_ack ack;
			uint8_t extra[8];
		} a = {0};
		size_t len = k == 5 ? sizeof(a.ack) - 1 : k == 6 ? sizeof(a) : sizeof(a.ack);
		char what[112];

		a.ack.version = WIRE_VERSION;
		a.ack.dst_conn_id = h->tconn.conn_id;
		memcpy(a.ack.dst_secret, h->tconn.secret, ENGINE_SECRET_LEN);
		a.ack.wr_id = k == 1 ? UINT64_MAX : k == 2 ? 1ull << 40 : (uint64_t)k;
		if (k == 3)
			a.ack.dst_secret[0] ^= 1;
		if (k == 4)
			a.ack.flags = 1;
		if (k == 7)
			a.ack.version = WIRE_VERSION + 1;
		snprintf(what, sizeof(what), "injected acknowledgement #%d", k);
		am_send(h, WIRE_AM_ACK, &a, len, h->small, k == 0 ? SMALL_LEN : 0, 0, what);
	}
}

/* A second HELLO must not take the connection over: the probe's answer
 * must still come to our connection id and secret (judge_answer). The
 * takeover attempt comes last, so that nothing after it could undo it. */
static void scen_hello_again(struct hostile *h)
{
	struct wire_hello hello;

	for (int k = 0; k < 4; k++) {
		memset(&hello, 0, sizeof(hello));
		hello.version = WIRE_VERSION;
		hello.dst_conn_id = h->tconn.conn_id;
		memcpy(hello.dst_secret, h->tconn.secret, ENGINE_SECRET_LEN);
		hello.src_conn_id = h->my_id + 1 + (uint32_t)k;
		memset(hello.src_secret, 0xA5 + k, ENGINE_SECRET_LEN);
		if (k == 0) { /* an exact replay of ours */
			hello.src_conn_id = h->my_id;
			memcpy(hello.src_secret, h->my_secret, ENGINE_SECRET_LEN);
		}
		if (k == 1)
			hello.dst_secret[0] ^= 1; /* a wrong secret */
		/* k == 2: a short header; k == 3: another peer's credentials */
		am_send(h, WIRE_AM_HELLO, &hello, k == 2 ? sizeof(hello) - 1 : sizeof(hello), NULL, 0, 0,
			"second HELLO");
	}
}

/* BYEs that must not close the connection: the probe is still answered,
 * and the target's DOCA layer reports no disconnection (it checks). */
static void scen_bye_forged(struct hostile *h)
{
	uint8_t eight[8] = {0};

	for (int k = 0; k < 6; k++) {
		struct wire_bye bye = {0};
		size_t len = sizeof(bye);

		bye.version = WIRE_VERSION;
		bye.dst_conn_id = h->tconn.conn_id;
		memcpy(bye.dst_secret, h->tconn.secret, ENGINE_SECRET_LEN);
		switch (k) {
		case 0:
			bye.dst_secret[0] ^= 1;
			break;
		case 1:
			bye.dst_secret[ENGINE_SECRET_LEN - 1] ^= 0x80;
			break;
		case 2:
			bye.dst_conn_id = h->tconn.conn_id + 1;
			break;
		case 3:
			len = sizeof(bye) - 1; /* right secret, short header */
			break;
		case 4:
			bye.version = WIRE_VERSION + 1; /* right secret, other version */
			break;
		default:
			break; /* right secret, but carrying a payload */
		}
		am_send(h, WIRE_AM_BYE, &bye, len, eight, k == 5 ? sizeof(eight) : 0, 0, "forged BYE");
	}
}

static const struct scenario conn_scenarios[] = {
	{"handshake", scen_handshake},
	{"conn_secret", scen_conn_secret},
	{"conn_id", scen_conn_id},
	{"region_id", scen_region_id},
	{"region_secret", scen_region_secret},
	{"oob_below", scen_oob_below},
	{"oob_above", scen_oob_above},
	{"oob_straddle", scen_oob_straddle},
	{"oob_wrap", scen_oob_wrap},
	{"oob_large", scen_oob_large},
	{"atomic_noperm", scen_atomic_noperm},
	{"sync_forged", scen_sync_forged},
	{"malformed", scen_malformed},
	{"batch", scen_batch},
	{"flood", scen_flood},
	{"resp_inject", scen_resp_inject},
	{"cm_inject", scen_cm_inject},
	{"hello_again", scen_hello_again},
	{"bye_forged", scen_bye_forged},
	{NULL, NULL},
};

static const struct scenario perm_read_scenarios[] = {
	{"handshake", scen_handshake},
	{"write_noperm", scen_write_noperm},
	{"atomic_noperm", scen_atomic_noperm},
	{"region_id", scen_region_id},
	{NULL, NULL},
};

static const struct scenario perm_write_scenarios[] = {
	{"handshake", scen_handshake},
	{"read_noperm", scen_read_noperm},
	{"atomic_noperm", scen_atomic_noperm},
	{"region_secret", scen_region_secret},
	{NULL, NULL},
};

static const struct scenario atomic_scenarios[] = {
	{"handshake", scen_handshake},
	{"atomic_misaligned", scen_atomic_misaligned},
	{"atomic_oob", scen_atomic_oob},
	{"atomic_keys", scen_atomic_keys},
	{"read_noperm", scen_read_noperm},
	{"write_noperm", scen_write_noperm},
	{NULL, NULL},
};

static const struct group groups[] = {
	{"conn", RD | WR, AT, conn_scenarios},
	{"perm_read", RD, WR | AT, perm_read_scenarios},
	{"perm_write", WR, RD | AT, perm_write_scenarios},
	{"atomic", AT, RD | WR, atomic_scenarios},
};

/* ------------------------------------------------------------------ */
/* Setup                                                                */

static int hex_nibble(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Who we are, as a descriptor says it: the kernel's boot id (hex digits,
 * two per byte) and our pid namespace's inode. Zeros if unreadable: the
 * target then treats us as a remote peer, which works too. */
static void host_identity(uint8_t id[WIRE_HOST_ID_LEN], uint64_t *pid_ns)
{
	char text[64] = {0};
	struct stat st;
	size_t n = 0;
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);

	memset(id, 0, WIRE_HOST_ID_LEN);
	*pid_ns = 0;
	if (fd >= 0) {
		ssize_t got = read(fd, text, sizeof(text) - 1);

		close(fd);
		for (ssize_t i = 0; i + 1 < got && n < WIRE_HOST_ID_LEN; i++) {
			int hi = hex_nibble(text[i]), lo;

			if (hi < 0)
				continue;
			lo = hex_nibble(text[++i]);
			if (lo < 0)
				break;
			id[n++] = (uint8_t)(hi << 4 | lo);
		}
	}
	if (n != WIRE_HOST_ID_LEN)
		memset(id, 0, WIRE_HOST_ID_LEN);
	if (stat("/proc/self/ns/pid", &st) == 0)
		*pid_ns = (uint64_t)st.st_ino;
}

static int read_target_files(struct hostile *h)
{
	doca_error_t err;
	uint32_t perms;

	if (wait_file(h, "hostile.target.conn", &h->tconn_bytes, &h->tconn_len) != 0 ||
	    wait_file(h, "target.mmap", &h->mmap_bytes, &h->mmap_len) != 0)
		return -1;
	err = wire_desc_parse(h->tconn_bytes, h->tconn_len, &h->tconn);
	if (err != DOCA_SUCCESS) {
		printf("FAIL hostile setup: the target's connection descriptor (%zu B) does not parse: %s\n",
		       h->tconn_len, doca_error_get_name(err));
		return -1;
	}
	err = softdoca_mmap_desc_parse(h->mmap_bytes, h->mmap_len, &h->region);
	if (err != DOCA_SUCCESS) {
		printf("FAIL hostile setup: the target's mmap descriptor (%zu B) does not parse: %s\n", h->mmap_len,
		       doca_error_get_name(err));
		return -1;
	}
	perms = h->region.permissions & (RD | WR | AT);
	if ((perms & h->grp->need) != h->grp->need || (perms & h->grp->lack) != 0) {
		printf("FAIL hostile setup: group %s needs a region exported with RDMA permissions 0x%x and without "
		       "0x%x; target.mmap grants 0x%x (run the target with the matching --case)\n",
		       h->grp->name, h->grp->need, h->grp->lack, perms);
		return -1;
	}
	if (h->region.len < 16 || h->region.addr < 2 * BIG_LEN || h->region.addr > UINT64_MAX / 2) {
		printf("FAIL hostile setup: region [%#" PRIx64 ", +%" PRIu64 ") is not one these scenarios can aim "
		       "around\n",
		       h->region.addr, h->region.len);
		return -1;
	}
	return 0;
}

/* The transport (see Transports): as the engine would choose from the
 * target's descriptor, unless --link named one the descriptor offers. */
static int choose_transport(struct hostile *h)
{
	bool ucx = (h->tconn.flags & WIRE_DESC_FLAG_SHM) && h->tconn.worker_addr_len > 0, tcp = h->tconn.has_tcp;

	if (h->tr == TR_AUTO)
		h->tr = ucx ? TR_UCX : TR_TCP;
	if ((h->tr == TR_UCX && !ucx) || (h->tr == TR_TCP && !tcp)) {
		printf("FAIL hostile setup: the target's descriptor offers no %s link (run both with the same UCX_TLS)\n",
		       h->tr == TR_UCX ? "UCX (shared memory)" : "tcp");
		return -1;
	}
	printf("NOTE hostile %s: over the %s link\n", h->grp->name, h->tr == TR_UCX ? "UCX (shared memory)" : "tcp");
	return 0;
}

/* Our descriptor, as doca_rdma_export would write it, offering our
 * address on the transport we use. */
static int publish_descriptor(struct hostile *h)
{
	struct wire_desc d = {0};
	uint8_t *desc;
	size_t desc_len;
	doca_error_t err;
	int r;

	d.conn_id = h->my_id;
	memcpy(d.secret, h->my_secret, ENGINE_SECRET_LEN);
	d.pid = (uint32_t)getpid();
	host_identity(d.host_id, &d.pid_ns);
	err = our_desc(h, &d, &desc, &desc_len);
	if (err != DOCA_SUCCESS) {
		printf("FAIL hostile setup: building our descriptor: %s\n", doca_error_get_name(err));
		return -1;
	}
	r = write_file(h, "hostile.conn", desc, desc_len);
	free(desc);
	if (r != 0) {
		printf("FAIL hostile setup: writing %s/hostile.conn: %s\n", h->dir, strerror(-r));
		return -1;
	}
	return 0;
}

/* After hostile.done: keep the connection up until the target has
 * compared its memory, so our exit is not mistaken for a disconnection
 * caused by a forged message. */
static void wait_checked(struct hostile *h)
{
	double deadline = now_s() + CHECKED_WAIT_S;

	while (!file_exists(h, "hostile.checked") && !target_gave_up(h)) {
		if (now_s() > deadline) {
			printf("NOTE hostile %s: the target did not write hostile.checked within %.0f s\n", h->grp->name,
			       CHECKED_WAIT_S);
			return;
		}
		pump(h, 2);
	}
}

static void usage(FILE *f)
{
	fprintf(f, "usage: hostile_peer --dir DIR --group GROUP [--link auto|ucx|tcp] [--ep-err-mode auto|none|peer]\n"
		   "groups:");
	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
		fprintf(f, " %s", groups[i].name);
	fprintf(f, "\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"dir", required_argument, NULL, 'd'},
		{"group", required_argument, NULL, 'g'},
		{"ep-err-mode", required_argument, NULL, 'e'},
		{"link", required_argument, NULL, 'l'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	static struct hostile hs; /* large: not on the stack */
	struct hostile *h = &hs;
	const char *group = NULL;
	char summary[96];
	int opt;

	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'd':
			h->dir = optarg;
			break;
		case 'g':
			group = optarg;
			break;
		case 'e':
			if (strcmp(optarg, "auto") == 0)
				h->err_mode = ERR_MODE_AUTO;
			else if (strcmp(optarg, "none") == 0)
				h->err_mode = ERR_MODE_NONE;
			else if (strcmp(optarg, "peer") == 0)
				h->err_mode = ERR_MODE_PEER;
			else {
				fprintf(stderr, "bad --ep-err-mode %s (auto, none, peer)\n", optarg);
				return 2;
			}
			break;
		case 'l':
			if (strcmp(optarg, "auto") == 0)
				h->tr = TR_AUTO;
			else if (strcmp(optarg, "ucx") == 0)
				h->tr = TR_UCX;
			else if (strcmp(optarg, "tcp") == 0)
				h->tr = TR_TCP;
			else {
				fprintf(stderr, "bad --link %s (auto, ucx, tcp)\n", optarg);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (h->dir == NULL || group == NULL || optind != argc) {
		usage(stderr);
		return 2;
	}
	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
		if (strcmp(groups[i].name, group) == 0)
			h->grp = &groups[i];
	if (h->grp == NULL) {
		fprintf(stderr, "unknown group %s\n", group);
		usage(stderr);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);

	h->my_id = OUR_CONN_ID;
	h->next_wr_id = 0x4853000000000001ull;
	h->big = malloc(BIG_LEN);
	if (h->big == NULL || getrandom(h->my_secret, sizeof(h->my_secret), 0) != sizeof(h->my_secret)) {
		printf("FAIL hostile setup: no memory or no randomness\n");
		(void)write_file(h, "hostile.failed", "setup", 5);
		return 1;
	}
	/* Payloads unlike anything in the target's region. */
	memset(h->small, 0xEE, sizeof(h->small));
	memset(h->big, 0xEE, BIG_LEN);

	if (read_target_files(h) != 0 || choose_transport(h) != 0 || tr_setup(h) != 0 ||
	    publish_descriptor(h) != 0) {
		(void)write_file(h, "hostile.failed", "setup", 5);
		tr_teardown(h);
		return 1;
	}
	for (const struct scenario *s = h->grp->scenarios; s->name != NULL; s++) {
		scen_begin(h, s->name);
		s->run(h);
		scen_end(h);
		if (s == h->grp->scenarios && h->failed != 0) {
			printf("FAIL hostile %s: no working connection; the other scenarios are not run\n",
			       h->grp->name);
			(void)write_file(h, "hostile.failed", "handshake", 9);
			break;
		}
	}
	snprintf(summary, sizeof(summary), "%d passed, %d failed", h->passed, h->failed);
	(void)write_file(h, "hostile.done", summary, strlen(summary));
	printf("hostile %s: %s\n", h->grp->name, summary);
	wait_checked(h);
	tr_teardown(h);
	free(h->big);
	free(h->tconn_bytes);
	free(h->mmap_bytes);
	return h->failed == 0 ? 0 : 1;
}
