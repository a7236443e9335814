/*
 * softdoca — the UCX link: active messages over UCX for peers on this
 * host (shared memory; CMA for large payloads).
 *
 * One UCX context per open device, shared by the workers on it; one UCX
 * worker per engine worker. UCX never gets a TCP transport (engine.c
 * hands it the transport list; link_tcp.c carries TCP): UCX's TCP
 * receive path trusts every frame it reads, before any handshake. What
 * shared memory UCX uses is private to this user (see engine_transports).
 *
 * What a peer gives UCX is checked first: worker addresses (ucx_addr.c)
 * before ucp_ep_create; every active message id has a handler entry, so
 * an id nobody uses never reaches uninitialised memory in UCX; and the
 * settings both sides must share (a mismatch aborts UCX in its wireup)
 * travel in the descriptor and are compared before an endpoint exists
 * (link_ucx_settings, conn.c).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <doca_dev.h>

#include "core_engine.h"
#include "engine_internal.h"
#include "link.h"
#include "link_ucx.h"
#include "ucx_addr.h"

SDK_LOG_REGISTER(ENGINE::UCX)

_Static_assert(sizeof(struct engine_sge) == sizeof(ucp_dt_iov_t) &&
		       offsetof(struct engine_sge, addr) == offsetof(ucp_dt_iov_t, buffer) &&
		       offsetof(struct engine_sge, len) == offsetof(ucp_dt_iov_t, length),
	       "an engine_sge list is passed to UCX as an iov");

/* What we keep in each UCX request (ucp_params.request_size): the
 * engine's callback, so one UCX callback serves every call site. */
struct ucx_req {
	link_cb cb;
};

static pthread_mutex_t ucx_lock = PTHREAD_MUTEX_INITIALIZER;
static struct engine_ucx *ucx_list;

/* ---- the settings both sides must share ---------------------------------- */

/* UCX's own words for yes and no. */
static int ucx_bool(const char *v)
{
	static const char *const yes[] = {"y", "yes", "on", "1", "true"};
	static const char *const no[] = {"n", "no", "off", "0", "false"};

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcasecmp(v, yes[i]) == 0)
			return 1;
		if (strcasecmp(v, no[i]) == 0)
			return 0;
	}
	return -1;
}

/* A boolean option as UCX will see it: the environment's, else ours. */
static bool ucx_option_on(const char *env, bool ours)
{
	const char *v = getenv(env);
	int b = v != NULL ? ucx_bool(v) : -1;

	return b < 0 ? ours : b == 1;
}

uint32_t link_ucx_settings(void)
{
	const char *scheme = getenv("UCX_RNDV_SCHEME");
	uint32_t bits = 0;

	if (ucx_option_on("UCX_MM_ERROR_HANDLING", true))
		bits |= WIRE_UCX_MM_ERROR_HANDLING;
	if (ucx_option_on("UCX_CMA_MEMORY_INVALIDATE", true))
		bits |= WIRE_UCX_CMA_MEMORY_INVALIDATE;
	if (!ucx_option_on("UCX_PROTO_ENABLE", false))
		bits |= WIRE_UCX_PROTO_V1;
	if (scheme == NULL || strcasecmp(scheme, "put_zcopy") == 0)
		bits |= WIRE_UCX_RNDV_PUT;
	return bits;
}

/* Set UCX option key unless the user chose it in the environment as env
 * (a transport's own options are named without their component prefix
 * in ucp_config_modify, but with it in the environment). */
static void ucx_default_as(ucp_config_t *config, const char *env, const char *key, const char *value)
{
	ucs_status_t st;

	if (getenv(env) != NULL)
		return;
	st = ucp_config_modify(config, key, value);
	if (st != UCS_OK)
		SDK_LOG_DBG("UCX option %s=%s not applied: %s", env, value, ucs_status_string(st));
}

/* Set a UCX option unless the user chose it in the environment. */
static void ucx_default(ucp_config_t *config, const char *name, const char *value)
{
	char env[128];

	snprintf(env, sizeof(env), "UCX_%s", name);
	ucx_default_as(config, env, name, value);
}

static uint32_t ucx_version(void)
{
	static atomic_flag warned = ATOMIC_FLAG_INIT;
	unsigned int major, minor, release;

	ucp_get_version(&major, &minor, &release);
	/* The suite passes on 1.12, 1.13 and 1.16 (the package's Depends);
	 * others may crash inside UCX when a peer dies mid-transfer or sends
	 * what it should not. Say so, once. */
	if (!(major == 1 && (minor == 12 || minor == 13 || minor == 16)) && !atomic_flag_test_and_set(&warned))
		SDK_LOG_WARN("UCX %u.%u.%u is not one softdoca is tested with (1.12, 1.13, 1.16): a peer that dies"
			     " mid-transfer or sends malformed messages may crash this process inside UCX",
			     major, minor, release);
	return UCX_ADDR_UCX_VERSION(major, minor);
}

static void ucx_request_init(void *request)
{
	((struct ucx_req *)request)->cb = NULL;
}

static doca_error_t ucx_context_create(struct doca_dev *dev, const char *tls, ucp_context_h *out)
{
	const char *iface = softdoca_devinfo_iface(doca_dev_as_devinfo(dev));
	ucp_params_t params = {0};
	ucp_config_t *config;
	ucs_status_t st;

	st = ucp_config_read(NULL, NULL, &config);
	if (st != UCS_OK) {
		SDK_LOG_ERR("UCX configuration could not be read: %s", ucs_status_string(st));
		return DOCA_ERROR_DRIVER;
	}
	/* The transports softdoca lets UCX use: never TCP (link_tcp.c
	 * carries it), and no shared memory another user could write. */
	st = ucp_config_modify(config, "TLS", tls);
	if (st != UCS_OK) {
		SDK_LOG_ERR("UCX refused the transport list \"%s\": %s", tls, ucs_status_string(st));
		ucp_config_release(config);
		return DOCA_ERROR_DRIVER;
	}
	/* The device is its interface (plus shared memory for peers on this
	 * host). */
	if (iface[0] != '\0')
		ucx_default(config, "NET_DEVICES", iface);
	ucx_default(config, "KEEPALIVE_INTERVAL", "1s");
	/* Peers' worker addresses are checked before UCX sees them
	 * (ucx_addr.c), and unified mode's cannot be: never use it. */
	st = ucp_config_modify(config, "UNIFIED_MODE", "n");
	if (st != UCS_OK)
		SDK_LOG_WARN("UCX option UNIFIED_MODE=n not applied: %s", ucs_status_string(st));
	/* Every endpoint uses the peer error mode; shared memory serves it
	 * only with the mm transports' error handling on (POSIX then
	 * qualifies; SysV never does). */
	ucx_default(config, "MM_ERROR_HANDLING", "y");
	/* Rendezvous by "put": a sender's RTS then carries no key of its
	 * buffer. In UCX's default ("get" first) a send purged because its
	 * peer died completes only at a later progress (UCX revokes the key
	 * first), and a shared-memory peer that died with our FIFO to it
	 * full leaves that purge to ucp_worker_destroy, which never
	 * progresses: the sends are never completed ("... was not returned
	 * to mpool ucp_requests"). Without a key the purge, wherever it
	 * runs, completes them at once (callbacks included). Still one
	 * copy: the sender puts (CMA) where the receiver would have got. */
	ucx_default(config, "RNDV_SCHEME", "put_zcopy");
	/* UCX's first protocol implementation: the default up to 1.15, and
	 * the one every setting here is made for (1.16's second one fails
	 * to release a purged rendezvous send's registration and asserts). */
	ucx_default(config, "PROTO_ENABLE", "n");
	/* In the peer error mode UCX gives rendezvous only lanes whose
	 * memory domain can invalidate keys, and CMA's claims that only on
	 * request: without it 1 MiB shared-memory transfers take the
	 * two-copy FIFO path at half the speed. Both peers must agree (the
	 * descriptor says, link_ucx_settings). */
	ucx_default_as(config, "UCX_CMA_MEMORY_INVALIDATE", "MEMORY_INVALIDATE", "y");

	params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED |
			    UCP_PARAM_FIELD_REQUEST_SIZE | UCP_PARAM_FIELD_REQUEST_INIT;
	params.features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
	params.mt_workers_shared = 1;
	params.request_size = sizeof(struct ucx_req);
	params.request_init = ucx_request_init;
	/* ucp_init would declare the API of the headers we built with (1.13
	 * on Debian 12) and make UCX 1.12 warn on every start; we use only
	 * 1.12's API, so declare that (see Depends in scripts/package.sh). */
	st = ucp_init_version(ENGINE_UCP_API_MAJOR, ENGINE_UCP_API_MINOR, &params, config, out);
	ucp_config_release(config);
	if (st != UCS_OK) {
		SDK_LOG_ERR("UCX could not start on interface '%s' with transports \"%s\": %s", iface, tls,
			    ucs_status_string(st));
		return DOCA_ERROR_DRIVER;
	}
	return DOCA_SUCCESS;
}

static doca_error_t ucx_get(struct doca_dev *dev, const char *tls, struct engine_ucx **out)
{
	struct engine_ucx *u;
	doca_error_t status = DOCA_SUCCESS;

	pthread_mutex_lock(&ucx_lock);
	for (u = ucx_list; u != NULL; u = u->next)
		if (u->dev == dev)
			break;
	if (u == NULL) {
		u = calloc(1, sizeof(*u));
		if (u == NULL) {
			status = DOCA_ERROR_NO_MEMORY;
			goto out;
		}
		status = ucx_context_create(dev, tls, &u->context);
		u->version = ucx_version();
		if (status != DOCA_SUCCESS) {
			free(u);
			goto out;
		}
		u->dev = dev;
		u->next = ucx_list;
		ucx_list = u;
	}
	u->refs++;
	*out = u;
out:
	pthread_mutex_unlock(&ucx_lock);
	return status;
}

static void ucx_put(struct engine_ucx *u)
{
	struct engine_ucx **link;

	pthread_mutex_lock(&ucx_lock);
	if (--u->refs == 0) {
		for (link = &ucx_list; *link != NULL; link = &(*link)->next) {
			if (*link == u) {
				*link = u->next;
				break;
			}
		}
		ucp_cleanup(u->context);
		free(u);
	}
	pthread_mutex_unlock(&ucx_lock);
}

/* ---- incoming messages ------------------------------------------------- */

static ucs_status_t ucx_am(void *arg, uint16_t id, const void *header, size_t header_length, void *data,
			   size_t length, const ucp_am_recv_param_t *param)
{
	struct link_msg m = {
		.id = id,
		.header = header,
		.header_len = header_length,
		.data = data,
		.length = length,
		.rndv = (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0,
		.link = &link_ucx_ops,
	};

	return engine_on_msg(arg, &m) == LINK_RX_KEPT ? UCS_INPROGRESS : UCS_OK;
}

/* UCX's handler has no id argument: one per id we use. */
#define UCX_AM_HANDLER(name, id)                                                                               \
	static ucs_status_t name(void *arg, const void *header, size_t header_length, void *data, size_t length, \
				 const ucp_am_recv_param_t *param)                                               \
	{                                                                                                        \
		return ucx_am(arg, id, header, header_length, data, length, param);                              \
	}

UCX_AM_HANDLER(ucx_am_hello, WIRE_AM_HELLO)
UCX_AM_HANDLER(ucx_am_bye, WIRE_AM_BYE)
UCX_AM_HANDLER(ucx_am_req, WIRE_AM_REQ)
UCX_AM_HANDLER(ucx_am_resp, WIRE_AM_RESP)
UCX_AM_HANDLER(ucx_am_ping, WIRE_AM_PING)
UCX_AM_HANDLER(ucx_am_ack, WIRE_AM_ACK)
UCX_AM_HANDLER(ucx_am_batch, WIRE_AM_BATCH)

/* Our handler for active message id, or NULL for an id we do not use. */
static ucp_am_recv_callback_t worker_am_handler(unsigned int id)
{
	switch (id) {
	case WIRE_AM_HELLO:
		return ucx_am_hello;
	case WIRE_AM_BYE:
		return ucx_am_bye;
	case WIRE_AM_REQ:
		return ucx_am_req;
	case WIRE_AM_RESP:
		return ucx_am_resp;
	case WIRE_AM_PING:
		return ucx_am_ping;
	case WIRE_AM_ACK:
		return ucx_am_ack;
	case WIRE_AM_BATCH:
		return ucx_am_batch;
	default:
		return NULL;
	}
}

static doca_error_t worker_set_handler(struct engine_worker *w, unsigned int id)
{
	ucp_am_handler_param_t p = {
		.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
			      UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS,
		.id = id,
		.cb = worker_am_handler(id),
		.arg = w,
		/* Eager payloads may be kept past the callback, so an
		 * operation that must wait its turn needs no copy. */
		.flags = UCP_AM_FLAG_PERSISTENT_DATA,
	};
	ucs_status_t st;

	if (p.cb == NULL) {
		p.arg = NULL;
		p.flags = 0;
	}
	st = ucp_worker_set_am_recv_handler(w->ucp, &p);
	if (st != UCS_OK) {
		SDK_LOG_ERR("cannot register UCX active message handler %#x: %s", id, ucs_status_string(st));
		return DOCA_ERROR_DRIVER;
	}
	return DOCA_SUCCESS;
}

/* Every one of the 65536 ids gets a handler entry, ours or an explicit
 * "none". A peer may send any id, and UCX reads the id's entry before it
 * checks the table's length (past the table's end, for an id above it);
 * and up to 1.16, when the table grows, UCX leaves the new entries
 * uninitialised, so an id nobody registered can call a garbage pointer.
 * Sizing the table once, by the last id, then filling it leaves no entry
 * unset; it costs 1.5 MiB and about a millisecond a worker. */
static doca_error_t worker_set_handlers(struct engine_worker *w)
{
	doca_error_t status = worker_set_handler(w, UINT16_MAX);

	for (unsigned int id = 0; id < UINT16_MAX && status == DOCA_SUCCESS; id++)
		status = worker_set_handler(w, id);
	return status;
}

static doca_error_t worker_open_ucp(struct engine_worker *w)
{
	ucp_worker_params_t wp = {0};
	ucs_status_t st;

	wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
	/* Our lock serialises every thread that touches the worker. */
	wp.thread_mode = UCS_THREAD_MODE_SERIALIZED;
	st = ucp_worker_create(w->ucx->context, &wp, &w->ucp);
	if (st != UCS_OK) {
		SDK_LOG_ERR("cannot create a UCX worker: %s", ucs_status_string(st));
		w->ucp = NULL;
		return DOCA_ERROR_DRIVER;
	}
	st = ucp_worker_get_address(w->ucp, &w->own_addr, &w->own_addr_len);
	if (st != UCS_OK) {
		SDK_LOG_ERR("cannot get the UCX worker address: %s", ucs_status_string(st));
		w->own_addr = NULL;
		return DOCA_ERROR_DRIVER;
	}
	st = ucp_worker_get_efd(w->ucp, &w->efd);
	if (st != UCS_OK) {
		SDK_LOG_ERR("UCX worker has no event fd: %s", ucs_status_string(st));
		return DOCA_ERROR_DRIVER;
	}
	return worker_set_handlers(w);
}

doca_error_t link_ucx_open(struct engine_worker *w, struct doca_dev *dev, const char *tls)
{
	doca_error_t status;

	w->efd = -1;
	status = ucx_get(dev, tls, &w->ucx);
	if (status != DOCA_SUCCESS) {
		w->ucx = NULL;
		return status;
	}
	status = worker_open_ucp(w);
	if (status != DOCA_SUCCESS)
		link_ucx_close(w);
	return status;
}

void link_ucx_close(struct engine_worker *w)
{
	if (w->ucx == NULL)
		return;
	if (w->ucp != NULL) {
		if (w->own_addr != NULL)
			ucp_worker_release_address(w->ucp, w->own_addr);
		ucp_worker_destroy(w->ucp);
	}
	w->own_addr = NULL;
	w->ucp = NULL;
	w->efd = -1;
	ucx_put(w->ucx);
	w->ucx = NULL;
}

unsigned int link_ucx_progress(struct engine_worker *w)
{
	return ucp_worker_progress(w->ucp);
}

bool link_ucx_arm(struct engine_worker *w)
{
	return ucp_worker_arm(w->ucp) != UCS_ERR_BUSY;
}

/* ---- endpoints ------------------------------------------------------------ */

static doca_error_t ucx_status(ucs_status_t st)
{
	if (st == UCS_OK)
		return DOCA_SUCCESS;
	return st == UCS_ERR_CANCELED ? DOCA_ERROR_CONNECTION_ABORTED : DOCA_ERROR_IO_FAILED;
}

static void ucx_ep_error(void *arg, ucp_ep_h ep, ucs_status_t st)
{
	char why[96];

	(void)ep;
	snprintf(why, sizeof(why), "UCX: %s", ucs_status_string(st));
	engine_link_failed(arg, DOCA_ERROR_CONNECTION_ABORTED, why);
}

/* Our endpoint to the peer at addr (untrusted bytes, proven well-formed
 * before UCX sees them). Always in UCX's peer error mode: UCX then
 * reports transport failures, and a closed endpoint goes away (in the
 * other mode UCX keeps it, and a shared-memory peer's segment mapped,
 * until the worker is destroyed). */
static doca_error_t ucx_ep_open(struct engine_conn *c, const uint8_t *addr, size_t addr_len)
{
	struct engine_worker *w = c->worker;
	ucp_ep_params_t ep = {0};
	doca_error_t status;
	ucs_status_t st;
	ucp_ep_h h;

	if (w->ucp == NULL)
		return DOCA_ERROR_NOT_SUPPORTED;
	if (addr == NULL || addr_len == 0) {
		SDK_LOG_ERR_RL("connection %u: the peer's UCX worker address is missing", c->id);
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = ucx_addr_check(addr, addr_len, w->own_addr, w->own_addr_len, w->ucx->version);
	if (status != DOCA_SUCCESS)
		return status;
	ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
			UCP_EP_PARAM_FIELD_ERR_HANDLER;
	ep.address = (const ucp_address_t *)addr;
	ep.err_mode = UCP_ERR_HANDLING_MODE_PEER;
	ep.err_handler.cb = ucx_ep_error;
	ep.err_handler.arg = c;
	st = ucp_ep_create(w->ucp, &ep, &h);
	if (st != UCS_OK) {
		SDK_LOG_DBG("connection %u: ucp_ep_create: %s", c->id, ucs_status_string(st));
		return DOCA_ERROR_CONNECTION_ABORTED;
	}
	c->ep = h;
	return DOCA_SUCCESS;
}

static void ucx_flush_done(void *request, ucs_status_t st, void *user)
{
	(void)st;
	((struct engine_conn *)user)->flushed = true;
	ucp_request_free(request);
}

static void ucx_ep_flush(struct engine_conn *c, uint64_t deadline_ns)
{
	ucp_request_param_t p = {0};
	ucs_status_ptr_t req;

	if (c->ep == NULL)
		return;
	c->flushed = false;
	p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
	p.cb.send = ucx_flush_done;
	p.user_data = c;
	req = ucp_ep_flush_nbx(c->ep, &p);
	if (req == NULL || UCS_PTR_IS_ERR(req))
		return;
	while (!c->flushed && engine_now_ns() < deadline_ns)
		ucp_worker_progress(c->worker->ucp);
}

static void ucx_ep_close(struct engine_conn *c)
{
	ucp_request_param_t p = {0};
	ucs_status_ptr_t req;

	if (c->ep == NULL)
		return;
	p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
	p.flags = UCP_EP_CLOSE_FLAG_FORCE;
	req = ucp_ep_close_nbx(c->ep, &p);
	if (UCS_PTR_IS_PTR(req))
		ucp_request_free(req); /* completes during later progress */
	c->ep = NULL;
}

/* ---- sends and fetches ----------------------------------------------------- */

static void ucx_send_cb(void *request, ucs_status_t st, void *user)
{
	link_cb cb = ((struct ucx_req *)request)->cb;

	if (cb != NULL)
		cb(request, ucx_status(st), user);
	ucp_request_free(request);
}

static void ucx_recv_cb(void *request, ucs_status_t st, size_t length, void *user)
{
	(void)length;
	ucx_send_cb(request, st, user);
}

/* A list of n > 0 buffers holding len bytes for UCX's nbx calls: several
 * as an iov (p's datatype), one contiguous, which lets UCX use
 * zero-copy. Returns the buffer argument; *count gets the count one. */
static void *ucx_buffer(const struct engine_sge *iov, uint32_t n, size_t len, ucp_request_param_t *p, size_t *count)
{
	if (n > 1) {
		p->op_attr_mask |= UCP_OP_ATTR_FIELD_DATATYPE;
		p->datatype = ucp_dt_make_iov();
		*count = n;
		return (void *)iov;
	}
	*count = len;
	return n == 1 ? iov[0].addr : NULL;
}

/* The request UCX returned: the engine's callback is noted in it, or,
 * when nobody waits, it is given back to UCX at once. */
static doca_error_t ucx_result(ucs_status_ptr_t req, link_cb cb, void **out)
{
	*out = NULL;
	if (req == NULL)
		return DOCA_SUCCESS;
	if (UCS_PTR_IS_ERR(req)) {
		SDK_LOG_DBG("UCX: %s", ucs_status_string(UCS_PTR_STATUS(req)));
		return DOCA_ERROR_CONNECTION_ABORTED;
	}
	if (cb == NULL) {
		ucp_request_free(req);
		return DOCA_SUCCESS;
	}
	((struct ucx_req *)req)->cb = cb;
	*out = req;
	return DOCA_SUCCESS;
}

static doca_error_t ucx_send(struct engine_conn *c, const struct link_send *s, void **out)
{
	ucp_request_param_t p = {0};
	size_t count = 0;
	void *buffer = NULL;

	*out = NULL;
	if (c->ep == NULL)
		return DOCA_ERROR_NOT_CONNECTED;
	/* Without a callback UCX frees the request itself once we give it
	 * back (ucx_result): a callback of ours would free it twice. */
	if (s->cb != NULL) {
		p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
		p.cb.send = ucx_send_cb;
		p.user_data = s->user;
	}
	if (s->eager) {
		p.op_attr_mask |= UCP_OP_ATTR_FIELD_FLAGS;
		p.flags = UCP_AM_SEND_FLAG_EAGER;
	}
	/* UCX rejects an empty iov: no buffers, no payload. */
	if (s->iov_count > 0 && s->len > 0)
		buffer = ucx_buffer(s->iov, s->iov_count, s->len, &p, &count);
	return ucx_result(ucp_am_send_nbx(c->ep, s->id, s->header, s->header_len, buffer, count, &p), s->cb, out);
}

static doca_error_t ucx_recv_data(struct engine_worker *w, void *data, const struct engine_sge *iov,
				  uint32_t iov_count, size_t len, link_cb cb, void *user, void **out)
{
	ucp_request_param_t p = {0};
	size_t count = 0;
	void *buffer;

	p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
	p.cb.recv_am = ucx_recv_cb;
	p.user_data = user;
	buffer = ucx_buffer(iov, iov_count, len, &p, &count);
	return ucx_result(ucp_am_recv_data_nbx(w->ucp, data, buffer, count, &p), cb, out);
}

static void ucx_data_release(struct engine_worker *w, void *data, bool rndv)
{
	(void)rndv;
	ucp_am_data_release(w->ucp, data);
}

static void ucx_cancel(struct engine_worker *w, void *req)
{
	ucp_request_cancel(w->ucp, req);
}

const struct link_ops link_ucx_ops = {
	.name = "ucx",
	.kind = LINK_UCX,
	.ep_open = ucx_ep_open,
	.ep_flush = ucx_ep_flush,
	.ep_close = ucx_ep_close,
	.send = ucx_send,
	.recv_data = ucx_recv_data,
	.data_release = ucx_data_release,
	.cancel = ucx_cancel,
};
