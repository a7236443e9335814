/*
 * softdoca RDMA samples, the part every RDMA sample shares: its command
 * line, device, objects, connection set-up (descriptor files or RDMA CM),
 * bounded progress and teardown. See rdma_common.h for the order of
 * events; what is not RDMA's is in ../../common.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <doca_argp.h>
#include <doca_log.h>

#include "rdma_common.h"

DOCA_LOG_REGISTER(RDMA_SAMPLE::COMMON);

/* Receive/send task user data: whose task it is. */
enum { TAG_PROGRAM = 0, TAG_HANDOVER = 1 };

#define INVENTORY_SIZE 64
#define STOP_TIMEOUT_SEC 10	  /* start/stop of the context: the library's own work */
#define POLL_SLICE_MS 10	  /* longest sleep between two progress calls */
#define PEER_GONE_GRACE_SEC 2	  /* completions may trail a closed connection */

static bool argp_ready;

/* ------------------------------------------------------------------ */
/* Command line                                                       */

static doca_error_t flag_device(void *param, void *config)
{
	struct rdma_config *cfg = config;

	return sample_copy_arg(cfg->device, sizeof(cfg->device), param, "-d/--device");
}

static doca_error_t flag_gid_index(void *param, void *config)
{
	struct rdma_config *cfg = config;
	int value = *(int *)param;

	if (value < 0) {
		DOCA_LOG_ERR("-g/--gid-index: %d is negative; GID indexes start at 0", value);
		return DOCA_ERROR_INVALID_VALUE;
	}
	cfg->gid_index = (uint32_t)value;
	cfg->gid_index_set = true;
	return DOCA_SUCCESS;
}

/* The last part of a path ("local.txt" of "/tmp/local.txt"). */
static const char *path_base(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash != NULL ? slash + 1 : path;
}

/*
 * A descriptor path names a file, which need not exist yet. Giving the
 * directory to put it in is the usual slip: say so now, with a path to
 * give instead, rather than fail later with a message about the file.
 */
static doca_error_t copy_path_arg(char *dst, size_t size, const char *value, const char *flag,
				  const char *default_path)
{
	struct stat st;
	size_t len = strlen(value);

	if (len > 0 && stat(value, &st) == 0 && S_ISDIR(st.st_mode)) {
		DOCA_LOG_ERR("%s: %s is a directory; give the path of a file (it need not exist yet), for example "
			     "%s %s%s%s",
			     flag, value, flag, value, value[len - 1] == '/' ? "" : "/", path_base(default_path));
		return DOCA_ERROR_INVALID_VALUE;
	}
	return sample_copy_arg(dst, size, value, flag);
}

static doca_error_t flag_local_desc(void *param, void *config)
{
	struct rdma_config *cfg = config;

	return copy_path_arg(cfg->local_desc_path, sizeof(cfg->local_desc_path), param, "-ld",
			     SAMPLE_DEFAULT_LOCAL_DESC_PATH);
}

static doca_error_t flag_remote_desc(void *param, void *config)
{
	struct rdma_config *cfg = config;

	return copy_path_arg(cfg->remote_desc_path, sizeof(cfg->remote_desc_path), param, "-re",
			     SAMPLE_DEFAULT_REMOTE_DESC_PATH);
}

static doca_error_t flag_resource_desc(void *param, void *config)
{
	struct rdma_config *cfg = config;

	return copy_path_arg(cfg->resource_desc_path, sizeof(cfg->resource_desc_path), param, "-m",
			     SAMPLE_DEFAULT_RESOURCE_DESC_PATH);
}

static doca_error_t flag_transport(void *param, void *config)
{
	struct rdma_config *cfg = config;
	const char *value = param;

	if (strcasecmp(value, "RC") == 0) {
		cfg->transport = DOCA_RDMA_TRANSPORT_TYPE_RC;
	} else if (strcasecmp(value, "DC") == 0) {
		cfg->transport = DOCA_RDMA_TRANSPORT_TYPE_DC;
	} else {
		DOCA_LOG_ERR("-tt/--transport-type: \"%s\" is not a transport type; use RC or DC", value);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

static doca_error_t flag_use_cm(void *param, void *config)
{
	struct rdma_config *cfg = config;

	cfg->use_cm = *(bool *)param;
	return DOCA_SUCCESS;
}

static doca_error_t flag_listen_port(void *param, void *config)
{
	struct rdma_config *cfg = config;
	int value = *(int *)param;

	if (value < 1 || value > 65535) {
		DOCA_LOG_ERR("-lp/--listen-port: %d is not a TCP port number (1..65535)", value);
		return DOCA_ERROR_INVALID_VALUE;
	}
	cfg->cm_port = (uint16_t)value;
	return DOCA_SUCCESS;
}

static doca_error_t flag_server_addr(void *param, void *config)
{
	struct rdma_config *cfg = config;

	return sample_copy_arg(cfg->server_addr, sizeof(cfg->server_addr), param, "-sa/--server-addr");
}

static doca_error_t flag_server_addr_type(void *param, void *config)
{
	struct rdma_config *cfg = config;
	const char *value = param;

	if (strcasecmp(value, "ipv4") == 0 || strcasecmp(value, "ip4") == 0) {
		cfg->server_addr_type = DOCA_RDMA_ADDR_TYPE_IPv4;
	} else if (strcasecmp(value, "ipv6") == 0 || strcasecmp(value, "ip6") == 0) {
		cfg->server_addr_type = DOCA_RDMA_ADDR_TYPE_IPv6;
	} else if (strcasecmp(value, "gid") == 0) {
		cfg->server_addr_type = DOCA_RDMA_ADDR_TYPE_GID;
	} else {
		DOCA_LOG_ERR("-sat/--server-addr-type: \"%s\" is not an address type; use ipv4, ipv6 or gid", value);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

static doca_error_t flag_send_string(void *param, void *config)
{
	struct rdma_config *cfg = config;

	return sample_copy_arg(cfg->send_string, sizeof(cfg->send_string), param, "-s/--send-string");
}

static doca_error_t flag_read_string(void *param, void *config)
{
	struct rdma_config *cfg = config;

	return sample_copy_arg(cfg->read_string, sizeof(cfg->read_string), param, "-r/--read-string");
}

static doca_error_t flag_write_string(void *param, void *config)
{
	struct rdma_config *cfg = config;

	return sample_copy_arg(cfg->write_string, sizeof(cfg->write_string), param, "-w/--write-string");
}

static doca_error_t flag_num_connections(void *param, void *config)
{
	struct rdma_config *cfg = config;
	int value = *(int *)param;

	if (value < 1 || value > SAMPLE_MAX_CONNECTIONS) {
		DOCA_LOG_ERR("-nc/--num-connections: %d is out of range (1..%d)", value, SAMPLE_MAX_CONNECTIONS);
		return DOCA_ERROR_INVALID_VALUE;
	}
	cfg->num_connections = (uint32_t)value;
	return DOCA_SUCCESS;
}

struct flag {
	unsigned int needs; /* 0: every program; else an enum sample_flag bit */
	const char *short_name;
	const char *long_name;
	const char *arguments;
	const char *description;
	enum doca_argp_type type;
	doca_argp_param_cb_t callback;
	bool mandatory;
};

static const struct flag flags[] = {
	{0, "d", "device", "<IB device name>",
	 "device to use: its ibdev name (e.g. soft_lo) or its network interface name (e.g. lo)",
	 DOCA_ARGP_TYPE_STRING, flag_device, true},
	{0, "g", "gid-index", "<index>", "GID index for DOCA RDMA (optional)", DOCA_ARGP_TYPE_INT, flag_gid_index,
	 false},
	{0, "ld", "local-descriptor-path", "<path>",
	 "file this side writes its connection descriptor to, for the peer (default " SAMPLE_DEFAULT_LOCAL_DESC_PATH
	 "); not used with -cm",
	 DOCA_ARGP_TYPE_STRING, flag_local_desc, false},
	{0, "re", "remote-descriptor-path", "<path>",
	 "file this side reads the peer's connection descriptor from (default " SAMPLE_DEFAULT_REMOTE_DESC_PATH
	 "); not used with -cm",
	 DOCA_ARGP_TYPE_STRING, flag_remote_desc, false},
	{0, "m", "remote-resource-descriptor-path", "<path>",
	 "file of the memory map or sync event descriptor: the responder writes it, the requester reads it "
	 "(default " SAMPLE_DEFAULT_RESOURCE_DESC_PATH "); not used with -cm",
	 DOCA_ARGP_TYPE_STRING, flag_resource_desc, false},
	{0, "tt", "transport-type", "<RC|DC>",
	 "transport type for DOCA RDMA (default RC); DC only with descriptor files and a single connection",
	 DOCA_ARGP_TYPE_STRING, flag_transport, false},
	{0, "cm", "use-rdma-cm", NULL, "set up the connection with RDMA CM instead of descriptor files",
	 DOCA_ARGP_TYPE_BOOLEAN, flag_use_cm, false},
	{0, "lp", "listen-port", "<port>", "RDMA CM port: the server listens on it, the client connects to it "
	 "(default 13579)", DOCA_ARGP_TYPE_INT, flag_listen_port, false},
	{0, "sa", "server-addr", "<address>", "RDMA CM server address; giving it makes this side the client",
	 DOCA_ARGP_TYPE_STRING, flag_server_addr, false},
	{0, "sat", "server-addr-type", "<ipv4|ipv6|gid>", "type of the -sa address (default ipv4)",
	 DOCA_ARGP_TYPE_STRING, flag_server_addr_type, false},
	{SAMPLE_FLAG_SEND_STRING, "s", "send-string", "<string>",
	 "string to send (default \"" SAMPLE_DEFAULT_STRING "\")", DOCA_ARGP_TYPE_STRING, flag_send_string, false},
	{SAMPLE_FLAG_READ_STRING, "r", "read-string", "<string>",
	 "string the requester reads (default \"" SAMPLE_DEFAULT_STRING "\")", DOCA_ARGP_TYPE_STRING,
	 flag_read_string, false},
	{SAMPLE_FLAG_WRITE_STRING, "w", "write-string", "<string>",
	 "string to write (default \"" SAMPLE_DEFAULT_STRING "\")", DOCA_ARGP_TYPE_STRING, flag_write_string,
	 false},
	{SAMPLE_FLAG_NUM_CONNECTIONS, "nc", "num-connections", "<1..8>",
	 "number of connections (default 1); an RDMA CM client has exactly one", DOCA_ARGP_TYPE_INT,
	 flag_num_connections, false},
};

static doca_error_t register_flag(const struct flag *f)
{
	struct doca_argp_param *param;
	doca_error_t result;

	result = doca_argp_param_create(&param);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Cannot create the -%s flag: %s", f->short_name, doca_error_get_descr(result));
		return result;
	}
	doca_argp_param_set_short_name(param, f->short_name);
	doca_argp_param_set_long_name(param, f->long_name);
	if (f->arguments != NULL)
		doca_argp_param_set_arguments(param, f->arguments);
	doca_argp_param_set_description(param, f->description);
	doca_argp_param_set_callback(param, f->callback);
	doca_argp_param_set_type(param, f->type);
	if (f->mandatory)
		doca_argp_param_set_mandatory(param);
	result = doca_argp_register_param(param);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("Cannot register the -%s flag: %s", f->short_name, doca_error_get_descr(result));
	return result;
}

void rdma_config_set_defaults(struct rdma_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	strcpy(cfg->local_desc_path, SAMPLE_DEFAULT_LOCAL_DESC_PATH);
	strcpy(cfg->remote_desc_path, SAMPLE_DEFAULT_REMOTE_DESC_PATH);
	strcpy(cfg->resource_desc_path, SAMPLE_DEFAULT_RESOURCE_DESC_PATH);
	strcpy(cfg->send_string, SAMPLE_DEFAULT_STRING);
	strcpy(cfg->read_string, SAMPLE_DEFAULT_STRING);
	strcpy(cfg->write_string, SAMPLE_DEFAULT_STRING);
	cfg->transport = DOCA_RDMA_TRANSPORT_TYPE_RC;
	cfg->cm_port = SAMPLE_DEFAULT_CM_PORT;
	cfg->server_addr_type = DOCA_RDMA_ADDR_TYPE_IPv4;
	cfg->num_connections = 1;
}

size_t rdma_config_size(void)
{
	return sizeof(struct rdma_config);
}

doca_error_t rdma_cmdline_parse(int argc, char **argv, unsigned int extra, struct rdma_config *cfg)
{
	doca_error_t result;
	size_t i;

	rdma_config_set_defaults(cfg);
	result = sample_log_init();
	if (result != DOCA_SUCCESS)
		return result;
	DOCA_LOG_INFO("Starting the sample");

	result = doca_argp_init(NULL, cfg);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Cannot initialize the argument parser: %s", doca_error_get_descr(result));
		return result;
	}
	argp_ready = true;
	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		if (flags[i].needs != 0 && (flags[i].needs & extra) == 0)
			continue;
		result = register_flag(&flags[i]);
		if (result != DOCA_SUCCESS)
			return result;
	}
	result = doca_argp_start(argc, argv);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("Cannot parse the command line: %s", doca_error_get_descr(result));
	return result;
}

int rdma_cmdline_exit(doca_error_t result)
{
	if (argp_ready) {
		doca_argp_destroy();
		argp_ready = false;
	}
	return sample_report(result);
}

/* ------------------------------------------------------------------ */
/* Small helpers                                                      */

const char *sample_peer_written_cstr(const void *p, size_t max)
{
	return sample_cstr(p, max);
}

uint64_t sample_peer_written_u64(const void *p)
{
	return *(const volatile uint64_t *)p;
}

doca_error_t sample_buf_string(const struct doca_buf *buf, const char *whose, const char **text)
{
	size_t len = 0;
	void *data = NULL;
	doca_error_t result;

	result = doca_buf_get_data(buf, &data);
	if (result == DOCA_SUCCESS)
		result = doca_buf_get_data_len(buf, &len);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Cannot look at %s: %s", whose, doca_error_get_descr(result));
		return result;
	}
	*text = sample_cstr(data, len);
	if (*text == NULL) {
		DOCA_LOG_ERR("Expected a string as %s, got %zu bytes without a terminating NUL", whose, len);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

void sample_finish(struct sample *s, doca_error_t result)
{
	if (s->stopping || s->done)
		return; /* the first outcome stands */
	s->result = result;
	s->done = true;
}

void sample_task_failed(struct sample *s, const char *what, doca_error_t status)
{
	if (s->stopping || s->done)
		return; /* flushed by our own stop, or after the outcome */
	DOCA_LOG_ERR("RDMA %s task failed: %s (%s)", what, doca_error_get_descr(status), doca_error_get_name(status));
	sample_finish(s, status == DOCA_SUCCESS ? DOCA_ERROR_UNEXPECTED : status);
}

void sample_expect(struct sample *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->waiting_for, sizeof(s->waiting_for), fmt, ap);
	va_end(ap);
}

uint32_t sample_conn_index(const struct sample *s, const struct doca_rdma_connection *conn)
{
	uint32_t i;

	for (i = 0; i < s->num_conns; i++) {
		if (s->conns[i] == conn)
			return i;
	}
	return s->num_conns;
}

/* ------------------------------------------------------------------ */
/* Progress                                                           */

static bool ctx_is(struct sample *s, void *state)
{
	return s->state == *(enum doca_ctx_states *)state;
}

static bool is_done(struct sample *s, void *arg)
{
	(void)arg;
	return s->done;
}

/* Sleep until the PE has something to progress, at most POLL_SLICE_MS. */
static void pe_idle(struct sample *s)
{
	doca_notification_handle_t fd = doca_event_invalid_handle;
	struct pollfd pfd;

	if (doca_pe_get_notification_handle(s->pe, &fd) != DOCA_SUCCESS ||
	    doca_pe_request_notification(s->pe) != DOCA_SUCCESS) {
		struct timespec ts = {0, 1000 * 1000};

		nanosleep(&ts, NULL);
		return;
	}
	pfd.fd = fd;
	pfd.events = POLLIN;
	pfd.revents = 0;
	(void)poll(&pfd, 1, POLL_SLICE_MS);
	(void)doca_pe_clear_notification(s->pe, 0);
}

/* Every established RDMA CM connection is closed or failed. */
static bool peers_gone(const struct sample *s)
{
	uint32_t i;

	if (!s->cfg->use_cm || s->num_established == 0)
		return false;
	for (i = 0; i < s->num_established; i++) {
		if (!s->conn_closed[i])
			return false;
	}
	return true;
}

static doca_error_t wait_for(struct sample *s, bool (*pred)(struct sample *s, void *arg), void *arg, int timeout_sec)
{
	double deadline = sample_now_sec() + timeout_sec;
	double gone_since = 0;

	for (;;) {
		if (pred(s, arg))
			return DOCA_SUCCESS;
		if (s->done && s->result != DOCA_SUCCESS && !s->stopping)
			return s->result;
		if (sample_now_sec() >= deadline)
			return DOCA_ERROR_TIME_OUT;
		/* All peers left while this side still waits: allow what they
		 * did before leaving to complete, then give up. */
		if (!s->stopping && !s->done && peers_gone(s)) {
			if (gone_since == 0) {
				gone_since = sample_now_sec();
			} else if (sample_now_sec() - gone_since >= PEER_GONE_GRACE_SEC) {
				DOCA_LOG_ERR("Every connection is closed, but this side still waits for %s: the %s left "
					     "too early", s->waiting_for[0] != '\0' ? s->waiting_for : "its peer",
					     s->desc->peer);
				sample_finish(s, DOCA_ERROR_CONNECTION_ABORTED);
				return s->result;
			}
		}
		if (doca_pe_progress(s->pe) == 0)
			pe_idle(s);
	}
}

/* SAMPLE_PEER_TIMEOUT_SEC, or SOFTDOCA_SAMPLE_TIMEOUT seconds (for tests). */
static int peer_timeout(void)
{
	const char *env = getenv("SOFTDOCA_SAMPLE_TIMEOUT");
	char *end = NULL;
	long value;

	if (env == NULL || *env == '\0')
		return SAMPLE_PEER_TIMEOUT_SEC;
	value = strtol(env, &end, 10);
	if (*end != '\0' || value < 1 || value > 86400) {
		DOCA_LOG_WARN("Ignoring SOFTDOCA_SAMPLE_TIMEOUT=\"%s\": not a number of seconds (1..86400)", env);
		return SAMPLE_PEER_TIMEOUT_SEC;
	}
	return (int)value;
}

/* A bounded wait for the peer: on timeout, say what never came. */
static doca_error_t wait_for_peer(struct sample *s, bool (*pred)(struct sample *s, void *arg), void *arg)
{
	int limit = peer_timeout();
	doca_error_t result = wait_for(s, pred, arg, limit);

	if (result == DOCA_ERROR_TIME_OUT) {
		DOCA_LOG_ERR("Gave up after %d seconds waiting for %s", limit,
			     s->waiting_for[0] != '\0' ? s->waiting_for : "the peer");
		if (s->cfg->use_cm)
			DOCA_LOG_ERR("The %s never connected or never answered: check that it runs now with -cm, %s",
				     s->desc->peer,
				     s->is_client ? "listening on that address and port" :
						    "and connects to this side's address and port (-sa, -lp)");
		else
			DOCA_LOG_ERR("The %s never connected or never answered: check that it runs now, on a device "
				     "that reaches this one, and that each side has the other's descriptors from this "
				     "run", s->desc->peer);
		sample_finish(s, result);
	}
	return result;
}

doca_error_t sample_wait_until(struct sample *s, bool (*pred)(struct sample *s, void *arg), void *arg)
{
	return wait_for_peer(s, pred, arg);
}

/* ------------------------------------------------------------------ */
/* Descriptor files                                                   */

static void remember(char list[][SAMPLE_FILE_MAX], uint32_t *count, uint32_t max, const char *path)
{
	if (*count < max)
		snprintf(list[(*count)++], SAMPLE_FILE_MAX, "%s", path);
}

/* A descriptor file, written whole; remembered so that the run deletes it. */
static doca_error_t file_write(struct sample *s, const char *path, const void *data, size_t len, const char *what)
{
	doca_error_t result = sample_file_write(path, data, len, what);

	if (result == DOCA_SUCCESS)
		remember(s->written, &s->num_written, sizeof(s->written) / sizeof(s->written[0]), path);
	return result;
}

/* The peer's descriptor file; remembered so that a good run deletes it. */
static doca_error_t file_read(struct sample *s, const char *path, const char *what, void **data_out, size_t *len_out)
{
	doca_error_t result = sample_file_read(path, what, s->desc->peer, data_out, len_out);

	if (result == DOCA_SUCCESS)
		remember(s->read, &s->num_read, sizeof(s->read) / sizeof(s->read[0]), path);
	return result;
}

/* At exit: the files this run wrote; the peer's copies only after a good run. */
static void delete_files(struct sample *s, bool good_run)
{
	uint32_t i;

	for (i = 0; i < s->num_written; i++) {
		if (unlink(s->written[i]) != 0 && errno != ENOENT)
			DOCA_LOG_WARN("Cannot delete %s: %s", s->written[i], strerror(errno));
	}
	for (i = 0; good_run && i < s->num_read; i++) {
		if (unlink(s->read[i]) != 0 && errno != ENOENT)
			DOCA_LOG_WARN("Cannot delete %s: %s", s->read[i], strerror(errno));
	}
}

/* ------------------------------------------------------------------ */
/* Memory                                                             */

static doca_error_t make_mmap(struct sample *s, void *addr, size_t len, uint32_t permissions, struct doca_mmap **out)
{
	struct doca_mmap *mmap = NULL;
	doca_error_t result;

	result = doca_mmap_create(&mmap);
	if (result == DOCA_SUCCESS)
		result = doca_mmap_set_permissions(mmap, permissions);
	if (result == DOCA_SUCCESS)
		result = doca_mmap_set_memrange(mmap, addr, len);
	if (result == DOCA_SUCCESS)
		result = doca_mmap_add_dev(mmap, s->dev);
	if (result == DOCA_SUCCESS)
		result = doca_mmap_start(mmap);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Cannot set up a memory map of %zu bytes: %s", len, doca_error_get_descr(result));
		if (mmap != NULL)
			(void)doca_mmap_destroy(mmap);
		return result;
	}
	*out = mmap;
	return DOCA_SUCCESS;
}

static void drop_mmap(struct doca_mmap **mmap, bool stop, const char *what)
{
	doca_error_t result;

	if (*mmap == NULL)
		return;
	if (stop) {
		result = doca_mmap_stop(*mmap);
		if (result != DOCA_SUCCESS)
			DOCA_LOG_ERR("Cannot stop the %s: %s", what, doca_error_get_descr(result));
	}
	result = doca_mmap_destroy(*mmap);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("Cannot destroy the %s: %s", what, doca_error_get_descr(result));
	*mmap = NULL;
}

doca_error_t sample_local_buf(struct sample *s, size_t offset, size_t len, size_t data_len, struct doca_buf **buf)
{
	doca_error_t result;

	if (offset + len > SAMPLE_MEM_LEN || data_len > len) {
		DOCA_LOG_ERR("A local buffer of %zu bytes at offset %zu does not fit the sample's memory", len, offset);
		return DOCA_ERROR_INVALID_VALUE;
	}
	result = doca_buf_inventory_buf_get_by_args(s->inv, s->mmap, s->mem + offset, len, s->mem + offset, data_len,
						    buf);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("Cannot get a buffer over local memory: %s", doca_error_get_descr(result));
	return result;
}

doca_error_t sample_peer_mmap(struct sample *s)
{
	doca_error_t result;

	result = doca_mmap_create_from_export(NULL, s->peer_desc, s->peer_desc_len, s->dev, &s->peer_mmap);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("The %s's memory descriptor (%s) was refused: %s (%s)", s->desc->peer, s->peer_desc_source,
			     doca_error_get_descr(result), doca_error_get_name(result));
		DOCA_LOG_ERR("Use the descriptor the %s wrote in this run, copied whole", s->desc->peer);
		s->peer_mmap = NULL;
	}
	return result;
}

doca_error_t sample_peer_buf(struct sample *s, size_t len, size_t data_len, struct doca_buf **buf)
{
	doca_error_t result;
	size_t peer_len = 0;
	void *peer_addr = NULL;

	result = doca_mmap_get_memrange(s->peer_mmap, &peer_addr, &peer_len);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Cannot get the range of the %s's memory: %s", s->desc->peer,
			     doca_error_get_descr(result));
		return result;
	}
	if (len > peer_len)
		len = peer_len;
	if (data_len > len)
		data_len = len;
	result = doca_buf_inventory_buf_get_by_args(s->inv, s->peer_mmap, peer_addr, len, peer_addr, data_len, buf);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("Cannot get a buffer over the %s's memory: %s", s->desc->peer,
			     doca_error_get_descr(result));
	return result;
}

/* ------------------------------------------------------------------ */
/* Receive and send tasks                                             */

static void handover_received(struct sample *s, struct doca_rdma_task_receive *task, doca_error_t status)
{
	struct doca_buf *dst = doca_rdma_task_receive_get_dst_buf(task);
	size_t len = 0;
	void *data = NULL;

	if (status != DOCA_SUCCESS) {
		if (!s->stopping)
			DOCA_LOG_ERR("Receiving the %s's %s descriptor failed: %s", s->desc->peer,
				     s->desc->resource_name, doca_error_get_descr(status));
		s->neg_failed = true;
		sample_finish(s, status);
		return;
	}
	if (doca_buf_get_data(dst, &data) != DOCA_SUCCESS || doca_buf_get_data_len(dst, &len) != DOCA_SUCCESS ||
	    len == 0 || (s->peer_desc = malloc(len)) == NULL) {
		DOCA_LOG_ERR("The %s's %s descriptor arrived empty or could not be kept", s->desc->peer,
			     s->desc->resource_name);
		s->neg_failed = true;
		sample_finish(s, DOCA_ERROR_INVALID_VALUE);
		return;
	}
	memcpy(s->peer_desc, data, len);
	s->peer_desc_len = len;
	s->neg_done = true;
}

static void receive_completed(struct doca_rdma_task_receive *task, union doca_data task_user_data,
			      union doca_data ctx_user_data)
{
	struct sample *s = ctx_user_data.ptr;
	struct doca_task *t = doca_rdma_task_receive_as_task(task);
	struct doca_buf *dst = doca_rdma_task_receive_get_dst_buf(task);
	doca_error_t status = doca_task_get_status(t);

	if (task_user_data.u64 == TAG_HANDOVER)
		handover_received(s, task, status);
	else if (s->desc->on_receive != NULL)
		s->desc->on_receive(s, task, status);
	doca_task_free(t);
	if (dst != NULL)
		(void)doca_buf_dec_refcount(dst, NULL);
}

static void send_completed(struct doca_rdma_task_send *task, union doca_data task_user_data,
			   union doca_data ctx_user_data)
{
	struct sample *s = ctx_user_data.ptr;
	struct doca_task *t = doca_rdma_task_send_as_task(task);
	struct doca_buf *src = (struct doca_buf *)doca_rdma_task_send_get_src_buf(task);
	doca_error_t status = doca_task_get_status(t);

	if (task_user_data.u64 == TAG_HANDOVER) {
		if (status == DOCA_SUCCESS) {
			s->neg_done = true;
		} else {
			if (!s->stopping)
				DOCA_LOG_ERR("Sending the %s descriptor to the %s failed: %s", s->desc->resource_name,
					     s->desc->peer, doca_error_get_descr(status));
			s->neg_failed = true;
			sample_finish(s, status);
		}
	} else if (s->desc->on_send != NULL) {
		s->desc->on_send(s, task, status);
	}
	doca_task_free(t);
	if (src != NULL)
		(void)doca_buf_dec_refcount(src, NULL);
}

static doca_error_t post_receive(struct sample *s, struct doca_buf *dst, uint64_t tag)
{
	struct doca_rdma_task_receive *task = NULL;
	union doca_data user_data = {.u64 = tag};
	doca_error_t result;

	result = doca_rdma_task_receive_allocate_init(s->rdma, dst, user_data, &task);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Cannot allocate a receive task: %s", doca_error_get_descr(result));
	} else {
		result = doca_task_submit(doca_rdma_task_receive_as_task(task));
		if (result != DOCA_SUCCESS) {
			DOCA_LOG_ERR("Cannot submit a receive task: %s", doca_error_get_descr(result));
			doca_task_free(doca_rdma_task_receive_as_task(task));
		}
	}
	if (result != DOCA_SUCCESS && dst != NULL)
		(void)doca_buf_dec_refcount(dst, NULL);
	return result;
}

static doca_error_t post_send(struct sample *s, uint32_t conn_index, struct doca_buf *src, uint64_t tag)
{
	struct doca_rdma_task_send *task = NULL;
	union doca_data user_data = {.u64 = tag};
	doca_error_t result;

	result = doca_rdma_task_send_allocate_init(s->rdma, s->conns[conn_index], src, user_data, &task);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Cannot allocate a send task: %s", doca_error_get_descr(result));
	} else {
		result = doca_task_submit(doca_rdma_task_send_as_task(task));
		if (result != DOCA_SUCCESS) {
			DOCA_LOG_ERR("Cannot submit a send task: %s", doca_error_get_descr(result));
			doca_task_free(doca_rdma_task_send_as_task(task));
		}
	}
	if (result != DOCA_SUCCESS && src != NULL)
		(void)doca_buf_dec_refcount(src, NULL);
	return result;
}

void sample_release(struct doca_buf *a, struct doca_buf *b)
{
	if (a != NULL)
		(void)doca_buf_dec_refcount(a, NULL);
	if (b != NULL)
		(void)doca_buf_dec_refcount(b, NULL);
}

doca_error_t sample_alloc_failed(const char *what, doca_error_t result, struct doca_buf *a, struct doca_buf *b)
{
	DOCA_LOG_ERR("Cannot allocate an RDMA %s task: %s", what, doca_error_get_descr(result));
	sample_release(a, b);
	return result;
}

doca_error_t sample_submit(struct doca_task *task, const char *what, struct doca_buf *a, struct doca_buf *b)
{
	doca_error_t result = doca_task_submit(task);

	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Cannot submit the RDMA %s task: %s", what, doca_error_get_descr(result));
		doca_task_free(task);
		sample_release(a, b);
	}
	return result;
}

doca_error_t sample_post_receive(struct sample *s, struct doca_buf *dst)
{
	return post_receive(s, dst, TAG_PROGRAM);
}

doca_error_t sample_post_send(struct sample *s, uint32_t conn_index, struct doca_buf *src)
{
	if (conn_index >= s->num_conns) {
		DOCA_LOG_ERR("No connection [%u] to send on", conn_index);
		if (src != NULL)
			(void)doca_buf_dec_refcount(src, NULL);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return post_send(s, conn_index, src, TAG_PROGRAM);
}

/* ------------------------------------------------------------------ */
/* Context and RDMA CM callbacks                                      */

static void state_changed(const union doca_data user_data, struct doca_ctx *ctx, enum doca_ctx_states prev_state,
			  enum doca_ctx_states next_state)
{
	struct sample *s = user_data.ptr;

	(void)ctx;
	(void)prev_state;
	s->state = next_state;
	switch (next_state) {
	case DOCA_CTX_STATE_RUNNING:
		DOCA_LOG_INFO("RDMA context is running");
		break;
	case DOCA_CTX_STATE_STOPPING:
		DOCA_LOG_INFO("RDMA context is stopping; tasks still in flight are flushed");
		break;
	case DOCA_CTX_STATE_IDLE:
		DOCA_LOG_INFO("RDMA context has stopped");
		break;
	default:
		break;
	}
}

static void cm_request(struct doca_rdma_connection *conn, union doca_data ctx_user_data)
{
	struct sample *s = ctx_user_data.ptr;
	doca_error_t result;

	if (s->num_requests >= s->num_conns) {
		DOCA_LOG_WARN("Refusing a connection request: all %u connections are taken", s->num_conns);
		result = doca_rdma_connection_reject(conn);
		if (result != DOCA_SUCCESS)
			DOCA_LOG_ERR("Cannot refuse the connection request: %s", doca_error_get_descr(result));
		return;
	}
	s->num_requests++;
	DOCA_LOG_INFO("Accepting a connection request from a %s", s->desc->peer);
	result = doca_rdma_connection_accept(conn, NULL, 0);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Cannot accept the connection request: %s", doca_error_get_descr(result));
		sample_finish(s, result);
	}
}

static void cm_established(struct doca_rdma_connection *conn, union doca_data conn_user_data,
			   union doca_data ctx_user_data)
{
	struct sample *s = ctx_user_data.ptr;
	uint32_t i = s->num_established;

	(void)conn_user_data;
	if (i >= s->num_conns) {
		DOCA_LOG_ERR("More connections were established than the %u asked for", s->num_conns);
		sample_finish(s, DOCA_ERROR_UNEXPECTED);
		return;
	}
	s->conns[i] = conn;
	s->num_established++;
	DOCA_LOG_INFO("Connection [%u] with the %s is established", i, s->desc->peer);
}

static void cm_failure(struct doca_rdma_connection *conn, union doca_data conn_user_data,
		       union doca_data ctx_user_data)
{
	struct sample *s = ctx_user_data.ptr;

	uint32_t i = sample_conn_index(s, conn);

	(void)conn_user_data;
	if (s->stopping || s->done)
		return; /* the work is over: the peer may leave */
	if (i < s->num_established) {
		/* Completions of what the peer did before it left may still be
		 * on their way: the progress loop gives them a moment. */
		DOCA_LOG_WARN("Connection [%u] with the %s failed: the %s went away or the network between the two "
			      "broke", i, s->desc->peer, s->desc->peer);
		s->conn_closed[i] = true;
		return;
	}
	if (s->is_client)
		DOCA_LOG_ERR("Could not connect to the %s at %s port %u: is it running with -cm (and without -sa), "
			     "listening on that port and reachable from this device?",
			     s->desc->peer, s->cfg->server_addr, s->cfg->cm_port);
	else
		DOCA_LOG_ERR("A connection from the %s failed while being set up", s->desc->peer);
	sample_finish(s, DOCA_ERROR_CONNECTION_ABORTED);
}

static void cm_disconnected(struct doca_rdma_connection *conn, union doca_data conn_user_data,
			    union doca_data ctx_user_data)
{
	struct sample *s = ctx_user_data.ptr;
	uint32_t i = sample_conn_index(s, conn);
	doca_error_t result;

	(void)conn_user_data;
	DOCA_LOG_INFO("The %s closed connection [%u]", s->desc->peer, i);
	result = doca_rdma_connection_disconnect(conn);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_WARN("Closing our end of connection [%u] failed: %s", i, doca_error_get_descr(result));
	if (i < s->num_conns)
		s->conn_closed[i] = true;
}

/* ------------------------------------------------------------------ */
/* Set-up and teardown                                                */

/* One string field of the configuration ends inside its array. */
static doca_error_t check_string(const char *field, size_t size, const char *name)
{
	if (memchr(field, '\0', size) != NULL)
		return DOCA_SUCCESS;
	DOCA_LOG_ERR("The configuration's %s is not a string ending within its %zu bytes", name, size);
	return DOCA_ERROR_INVALID_VALUE;
}

/*
 * What the command-line callbacks check, checked again: a caller in
 * another language fills struct rdma_config itself.
 */
static doca_error_t check_fields(const struct rdma_config *cfg)
{
#define FIELD(f) {cfg->f, sizeof(cfg->f), #f}
	const struct {
		const char *text;
		size_t size;
		const char *name;
	} strings[] = {FIELD(device), FIELD(local_desc_path), FIELD(remote_desc_path), FIELD(resource_desc_path),
		       FIELD(server_addr), FIELD(send_string), FIELD(read_string), FIELD(write_string)};
#undef FIELD
	doca_error_t result;
	size_t i;

	for (i = 0; i < sizeof(strings) / sizeof(strings[0]); i++) {
		result = check_string(strings[i].text, strings[i].size, strings[i].name);
		if (result != DOCA_SUCCESS)
			return result;
	}
	if (cfg->transport != DOCA_RDMA_TRANSPORT_TYPE_RC && cfg->transport != DOCA_RDMA_TRANSPORT_TYPE_DC) {
		DOCA_LOG_ERR("The configuration's transport (%d) is neither RC nor DC", (int)cfg->transport);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (cfg->server_addr_type != DOCA_RDMA_ADDR_TYPE_IPv4 && cfg->server_addr_type != DOCA_RDMA_ADDR_TYPE_IPv6 &&
	    cfg->server_addr_type != DOCA_RDMA_ADDR_TYPE_GID) {
		DOCA_LOG_ERR("The configuration's server_addr_type (%d) is not ipv4, ipv6 or gid",
			     (int)cfg->server_addr_type);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (cfg->num_connections < 1 || cfg->num_connections > SAMPLE_MAX_CONNECTIONS) {
		DOCA_LOG_ERR("The configuration's num_connections (%u) is out of range (1..%d)", cfg->num_connections,
			     SAMPLE_MAX_CONNECTIONS);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (cfg->use_cm && cfg->cm_port == 0) {
		DOCA_LOG_ERR("The configuration's cm_port is 0; RDMA CM needs a TCP port number (1..65535)");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

static doca_error_t check_config(struct sample *s)
{
	const struct rdma_config *cfg = s->cfg;
	doca_error_t result;

	result = check_fields(cfg);
	if (result != DOCA_SUCCESS)
		return result;
	s->is_client = cfg->use_cm && cfg->server_addr[0] != '\0';
	s->num_conns = s->is_client ? 1 : cfg->num_connections;
	if (cfg->transport == DOCA_RDMA_TRANSPORT_TYPE_DC && (cfg->use_cm || cfg->num_connections > 1)) {
		DOCA_LOG_ERR("-tt DC works only with descriptor files and a single connection (no -cm, no -nc > 1)");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (s->is_client && cfg->num_connections > 1) {
		DOCA_LOG_ERR("An RDMA CM client (-sa given) has exactly one connection, but -nc is %u; give -nc to "
			     "the server and start one client per connection", cfg->num_connections);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (cfg->use_cm)
		DOCA_LOG_INFO("This side is the %s; it connects with RDMA CM as the %s (%s port %u)", s->desc->me,
			      s->is_client ? "client" : "server", s->is_client ? cfg->server_addr : "listening on",
			      cfg->cm_port);
	else
		DOCA_LOG_INFO("This side is the %s; it connects with descriptor files (transport %s)", s->desc->me,
			      cfg->transport == DOCA_RDMA_TRANSPORT_TYPE_DC ? "DC" : "RC");
	return DOCA_SUCCESS;
}

/* The local memory the sample works on, and an inventory for its buffers. */
static doca_error_t make_memory(struct sample *s)
{
	doca_error_t result;

	s->mem = aligned_alloc(64, SAMPLE_MEM_LEN);
	if (s->mem == NULL) {
		DOCA_LOG_ERR("Out of memory");
		return DOCA_ERROR_NO_MEMORY;
	}
	memset(s->mem, 0, SAMPLE_MEM_LEN);
	result = make_mmap(s, s->mem, SAMPLE_MEM_LEN, s->desc->mmap_permissions, &s->mmap);
	if (result != DOCA_SUCCESS)
		return result;
	result = doca_buf_inventory_create(INVENTORY_SIZE, &s->inv);
	if (result == DOCA_SUCCESS)
		result = doca_buf_inventory_start(s->inv);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("Cannot set up a buffer inventory: %s", doca_error_get_descr(result));
	return result;
}

/* The PE and the RDMA context with the command line's properties. */
static doca_error_t make_context(struct sample *s)
{
	const struct rdma_config *cfg = s->cfg;
	union doca_data ctx_user_data = {.ptr = s};
	doca_error_t result;

	result = doca_pe_create(&s->pe);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Cannot create a progress engine: %s", doca_error_get_descr(result));
		return result;
	}

	result = doca_rdma_create(s->dev, &s->rdma);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Cannot create the RDMA context: %s", doca_error_get_descr(result));
		return result;
	}
	s->ctx = doca_rdma_as_ctx(s->rdma);
	if (s->ctx == NULL) {
		DOCA_LOG_ERR("The RDMA context has no generic context");
		return DOCA_ERROR_UNEXPECTED;
	}
	result = doca_rdma_set_permissions(s->rdma, s->desc->rdma_permissions);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Cannot set the RDMA permissions: %s", doca_error_get_descr(result));
		return result;
	}
	if (cfg->gid_index_set) {
		result = doca_rdma_set_gid_index(s->rdma, cfg->gid_index);
		if (result != DOCA_SUCCESS) {
			DOCA_LOG_ERR("Cannot use GID index %u on %s: %s (doca_caps -d %s shows its GID table)",
				     cfg->gid_index, cfg->device, doca_error_get_descr(result), cfg->device);
			return result;
		}
	}
	result = doca_rdma_set_max_num_connections(s->rdma, (uint16_t)s->num_conns);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Cannot allow %u connections: %s", s->num_conns, doca_error_get_descr(result));
		return result;
	}
	result = doca_rdma_set_transport_type(s->rdma, cfg->transport);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Cannot use transport %s: %s", cfg->transport == DOCA_RDMA_TRANSPORT_TYPE_DC ? "DC" : "RC",
			     doca_error_get_descr(result));
		return result;
	}
	if (cfg->use_cm) {
		result = doca_rdma_set_connection_state_callbacks(s->rdma, cm_request, cm_established, cm_failure,
								  cm_disconnected);
		if (result != DOCA_SUCCESS) {
			DOCA_LOG_ERR("Cannot set the RDMA CM callbacks: %s", doca_error_get_descr(result));
			return result;
		}
	}
	result = doca_ctx_set_state_changed_cb(s->ctx, state_changed);
	if (result == DOCA_SUCCESS)
		result = doca_ctx_set_user_data(s->ctx, ctx_user_data);
	if (result == DOCA_SUCCESS)
		result = doca_pe_connect_ctx(s->pe, s->ctx);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("Cannot attach the RDMA context to the progress engine: %s", doca_error_get_descr(result));
	return result;
}

/* The program's tasks, the shared receive/send pools, what to hand over. */
static doca_error_t configure_tasks(struct sample *s)
{
	bool handover = s->cfg->use_cm && s->desc->resource != SAMPLE_RESOURCE_NONE;
	uint32_t receives, sends;
	doca_error_t result;

	if (s->desc->configure != NULL) {
		result = s->desc->configure(s);
		if (result != DOCA_SUCCESS)
			return result;
	}

	receives = s->num_receive_tasks + (handover && s->desc->resource == SAMPLE_RESOURCE_NEED ? 1 : 0);
	sends = s->num_send_tasks + (handover && s->desc->resource == SAMPLE_RESOURCE_OFFER ? 1 : 0);
	if (receives > 0) {
		result = doca_rdma_task_receive_set_conf(s->rdma, receive_completed, receive_completed, receives);
		if (result != DOCA_SUCCESS) {
			DOCA_LOG_ERR("Cannot configure %u receive tasks: %s", receives, doca_error_get_descr(result));
			return result;
		}
	}
	if (sends > 0) {
		result = doca_rdma_task_send_set_conf(s->rdma, send_completed, send_completed, sends);
		if (result != DOCA_SUCCESS) {
			DOCA_LOG_ERR("Cannot configure %u send tasks: %s", sends, doca_error_get_descr(result));
			return result;
		}
	}
	if (handover) {
		s->neg_mem = calloc(1, SAMPLE_MEM_LEN);
		if (s->neg_mem == NULL) {
			DOCA_LOG_ERR("Out of memory");
			return DOCA_ERROR_NO_MEMORY;
		}
		result = make_mmap(s, s->neg_mem, SAMPLE_MEM_LEN, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE, &s->neg_mmap);
		if (result != DOCA_SUCCESS)
			return result;
	}
	if (s->desc->resource == SAMPLE_RESOURCE_OFFER && s->offer_desc == NULL) {
		result = doca_mmap_export_rdma(s->mmap, s->dev, &s->offer_desc, &s->offer_len);
		if (result != DOCA_SUCCESS) {
			DOCA_LOG_ERR("Cannot export the memory map for the %s: %s", s->desc->peer,
				     doca_error_get_descr(result));
			return result;
		}
	}
	return DOCA_SUCCESS;
}

static doca_error_t setup(struct sample *s)
{
	doca_error_t result;

	result = sample_open_device(s->cfg->device, s->desc->cap_check, s->desc->cap_what, &s->dev);
	if (result == DOCA_SUCCESS)
		result = make_memory(s);
	if (result == DOCA_SUCCESS)
		result = make_context(s);
	if (result == DOCA_SUCCESS)
		result = configure_tasks(s);
	return result;
}

static doca_error_t start_context(struct sample *s)
{
	enum doca_ctx_states running = DOCA_CTX_STATE_RUNNING;
	doca_error_t result;

	result = doca_ctx_start(s->ctx);
	if (result != DOCA_SUCCESS && result != DOCA_ERROR_IN_PROGRESS) {
		DOCA_LOG_ERR("Cannot start the RDMA context: %s", doca_error_get_descr(result));
		return result;
	}
	result = wait_for(s, ctx_is, &running, STOP_TIMEOUT_SEC);
	if (result == DOCA_ERROR_TIME_OUT)
		DOCA_LOG_ERR("The RDMA context did not start within %d seconds", STOP_TIMEOUT_SEC);
	return result;
}

static void stop_context(struct sample *s)
{
	enum doca_ctx_states idle = DOCA_CTX_STATE_IDLE;
	doca_error_t result;
	uint32_t i;

	s->stopping = true;
	for (i = 0; s->cfg->use_cm && i < s->num_established; i++) {
		if (s->conn_closed[i])
			continue;
		result = doca_rdma_connection_disconnect(s->conns[i]);
		if (result != DOCA_SUCCESS)
			DOCA_LOG_WARN("Cannot close connection [%u]: %s", i, doca_error_get_descr(result));
		s->conn_closed[i] = true;
	}
	if (s->ctx == NULL || s->state == DOCA_CTX_STATE_IDLE)
		return;
	result = doca_ctx_stop(s->ctx);
	if (result != DOCA_SUCCESS && result != DOCA_ERROR_IN_PROGRESS) {
		DOCA_LOG_ERR("Cannot stop the RDMA context: %s", doca_error_get_descr(result));
		return;
	}
	if (wait_for(s, ctx_is, &idle, STOP_TIMEOUT_SEC) != DOCA_SUCCESS)
		DOCA_LOG_ERR("The RDMA context did not stop within %d seconds", STOP_TIMEOUT_SEC);
}

static doca_error_t teardown(struct sample *s)
{
	doca_error_t result = DOCA_SUCCESS, r;

	stop_context(s);
	if (s->desc->cleanup != NULL)
		s->desc->cleanup(s);
	drop_mmap(&s->peer_mmap, true, "memory map of the peer");
	if (s->peer_event != NULL) {
		r = doca_sync_event_remote_net_destroy(s->peer_event);
		if (r != DOCA_SUCCESS)
			DOCA_LOG_ERR("Cannot destroy the peer's sync event handle: %s", doca_error_get_descr(r));
		s->peer_event = NULL;
	}
	if (s->event != NULL) {
		r = doca_sync_event_stop(s->event);
		if (r != DOCA_SUCCESS)
			DOCA_LOG_ERR("Cannot stop the sync event: %s", doca_error_get_descr(r));
		r = doca_sync_event_destroy(s->event);
		if (r != DOCA_SUCCESS)
			DOCA_LOG_ERR("Cannot destroy the sync event: %s", doca_error_get_descr(r));
		s->event = NULL;
	}
	if (s->cm_addr != NULL) {
		r = doca_rdma_addr_destroy(s->cm_addr);
		if (r != DOCA_SUCCESS)
			DOCA_LOG_ERR("Cannot destroy the server address: %s", doca_error_get_descr(r));
	}
	drop_mmap(&s->neg_mmap, false, "memory map of the descriptor hand-over");
	if (s->rdma != NULL) {
		r = doca_rdma_destroy(s->rdma);
		if (r != DOCA_SUCCESS) {
			DOCA_LOG_ERR("Cannot destroy the RDMA context: %s", doca_error_get_descr(r));
			DOCA_ERROR_PROPAGATE(result, r);
		}
	}
	if (s->pe != NULL) {
		r = doca_pe_destroy(s->pe);
		if (r != DOCA_SUCCESS) {
			DOCA_LOG_ERR("Cannot destroy the progress engine: %s", doca_error_get_descr(r));
			DOCA_ERROR_PROPAGATE(result, r);
		}
	}
	if (s->inv != NULL) {
		r = doca_buf_inventory_stop(s->inv);
		if (r == DOCA_SUCCESS)
			r = doca_buf_inventory_destroy(s->inv);
		if (r != DOCA_SUCCESS) {
			DOCA_LOG_ERR("Cannot release the buffer inventory: %s", doca_error_get_descr(r));
			DOCA_ERROR_PROPAGATE(result, r);
		}
	}
	drop_mmap(&s->mmap, true, "local memory map");
	if (s->dev != NULL) {
		r = doca_dev_close(s->dev);
		if (r != DOCA_SUCCESS) {
			DOCA_LOG_ERR("Cannot close the device: %s", doca_error_get_descr(r));
			DOCA_ERROR_PROPAGATE(result, r);
		}
	}
	free(s->mem);
	free(s->neg_mem);
	free(s->peer_desc);
	return result;
}

/* ------------------------------------------------------------------ */
/* Connecting: descriptor files                                       */

static void conn_file(char *out, size_t size, const char *base, const struct sample *s, uint32_t i)
{
	if (s->desc->multi_conn)
		snprintf(out, size, "%s-%04u", base, i);
	else
		snprintf(out, size, "%s", base);
}

static doca_error_t connect_with_files(struct sample *s)
{
	const struct rdma_config *cfg = s->cfg;
	const struct sample_desc *d = s->desc;
	bool dc = cfg->transport == DOCA_RDMA_TRANSPORT_TYPE_DC;
	bool write_own = !(dc && !d->passive); /* the DC initiator needs no descriptor of its own */
	bool read_peer = !(dc && d->passive);  /* the DC target never learns of its peer */
	char local[SAMPLE_FILE_MAX], remote[SAMPLE_FILE_MAX], what[128];
	const void *desc;
	size_t desc_len;
	void *peer;
	size_t peer_len;
	doca_error_t result;
	uint32_t i;

	for (i = 0; i < s->num_conns; i++) {
		conn_file(local, sizeof(local), cfg->local_desc_path, s, i);
		conn_file(remote, sizeof(remote), cfg->remote_desc_path, s, i);
		if (d->multi_conn)
			DOCA_LOG_INFO("Setting up connection [%u] of %u", i, s->num_conns);

		result = doca_rdma_export(s->rdma, &desc, &desc_len, &s->conns[i]);
		if (result != DOCA_SUCCESS) {
			DOCA_LOG_ERR("Cannot export connection [%u]: %s", i, doca_error_get_descr(result));
			return result;
		}
		if (write_own) {
			result = file_write(s, local, desc, desc_len, "this side's connection descriptor");
			if (result != DOCA_SUCCESS)
				return result;
		}
		if (i == 0 && d->resource == SAMPLE_RESOURCE_OFFER) {
			snprintf(what, sizeof(what), "the %s descriptor", d->resource_name);
			result = file_write(s, cfg->resource_desc_path, s->offer_desc, s->offer_len, what);
			if (result != DOCA_SUCCESS)
				return result;
		}
		if (write_own && i == 0 && d->resource == SAMPLE_RESOURCE_OFFER)
			DOCA_LOG_INFO("You can now copy %s and %s to the %s", local, cfg->resource_desc_path, d->peer);
		else if (write_own)
			DOCA_LOG_INFO("You can now copy %s to the %s", local, d->peer);
		else if (i == 0 && d->resource == SAMPLE_RESOURCE_OFFER)
			DOCA_LOG_INFO("You can now copy %s to the %s", cfg->resource_desc_path, d->peer);

		if (!read_peer)
			continue;
		if (i == 0 && d->resource == SAMPLE_RESOURCE_NEED)
			result = sample_prompt_enter("Copy %s and %s from the %s, %sthen press Enter", remote,
						     cfg->resource_desc_path, d->peer,
						     dc ? "" : "press Enter on its side, ");
		else
			result = sample_prompt_enter("Copy %s from the %s, %sthen press Enter", remote, d->peer,
						     d->passive || dc ? "" : "press Enter on its side, ");
		if (result != DOCA_SUCCESS)
			return result;

		snprintf(what, sizeof(what), "the %s's connection descriptor", d->peer);
		result = file_read(s, remote, what, &peer, &peer_len);
		if (result != DOCA_SUCCESS)
			return result;
		result = doca_rdma_connect(s->rdma, peer, peer_len, s->conns[i]);
		free(peer);
		if (result == DOCA_ERROR_CONNECTION_ABORTED || result == DOCA_ERROR_NOT_CONNECTED ||
		    result == DOCA_ERROR_CONNECTION_RESET) {
			DOCA_LOG_ERR("Cannot reach the %s that wrote %s: %s (%s)", d->peer, remote,
				     doca_error_get_descr(result), doca_error_get_name(result));
			DOCA_LOG_ERR("The %s never connected: it is not running any more, or its device does not reach "
				     "this one. Start it again and copy the descriptor it writes", d->peer);
			return result;
		}
		if (result != DOCA_SUCCESS) {
			DOCA_LOG_ERR("The %s's connection descriptor in %s was refused: %s (%s)", d->peer, remote,
				     doca_error_get_descr(result), doca_error_get_name(result));
			DOCA_LOG_ERR("Copy it again, whole, from the %s's current run; each run writes a new one",
				     d->peer);
			return result;
		}
		if (i == 0 && d->resource == SAMPLE_RESOURCE_NEED) {
			snprintf(what, sizeof(what), "the %s's %s descriptor", d->peer, d->resource_name);
			result = file_read(s, cfg->resource_desc_path, what, &s->peer_desc, &s->peer_desc_len);
			if (result != DOCA_SUCCESS)
				return result;
			snprintf(s->peer_desc_source, sizeof(s->peer_desc_source), "read from %s",
				 cfg->resource_desc_path);
		}
		if (d->multi_conn)
			DOCA_LOG_INFO("Connection [%u] is set up", i);
	}
	s->num_established = s->num_conns;
	return DOCA_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Connecting: RDMA CM                                                */

static bool all_established(struct sample *s, void *arg)
{
	(void)arg;
	return s->num_established >= s->num_conns;
}

static bool handover_over(struct sample *s, void *arg)
{
	(void)arg;
	return s->neg_done;
}

static void cm_not_supported(const char *call, doca_error_t result)
{
	DOCA_LOG_ERR("RDMA CM is not supported by this build of the DOCA libraries (%s: %s)", call,
		     doca_error_get_descr(result));
	DOCA_LOG_ERR("Run both sides without -cm to connect with descriptor files instead");
}

static doca_error_t connect_with_cm(struct sample *s)
{
	const struct rdma_config *cfg = s->cfg;
	union doca_data conn_user_data = {.u64 = 0};
	doca_error_t result;

	if (!s->is_client) {
		result = doca_rdma_start_listen_to_port(s->rdma, cfg->cm_port);
		if (result == DOCA_ERROR_NOT_SUPPORTED) {
			cm_not_supported("doca_rdma_start_listen_to_port", result);
			return result;
		}
		if (result == DOCA_ERROR_IN_USE) {
			DOCA_LOG_ERR("Cannot listen on port %u: another program is listening on it; pick another port "
				     "with -lp (and give the %s the same -lp)", cfg->cm_port, s->desc->peer);
			return result;
		}
		if (result != DOCA_SUCCESS) {
			DOCA_LOG_ERR("Cannot listen on port %u: %s", cfg->cm_port, doca_error_get_descr(result));
			return result;
		}
		DOCA_LOG_INFO("Listening for RDMA CM connections on port %u; waiting for %u %s%s", cfg->cm_port,
			      s->num_conns, s->desc->peer, s->num_conns > 1 ? "s" : "");
		sample_expect(s, "%u %s%s to connect to port %u", s->num_conns, s->desc->peer,
			      s->num_conns > 1 ? "s" : "", cfg->cm_port);
	} else {
		result = doca_rdma_addr_create(cfg->server_addr_type, cfg->server_addr, cfg->cm_port, &s->cm_addr);
		if (result != DOCA_SUCCESS) {
			DOCA_LOG_ERR("\"%s\" is not a usable %s server address: %s", cfg->server_addr,
				     cfg->server_addr_type == DOCA_RDMA_ADDR_TYPE_IPv4   ? "IPv4" :
				     cfg->server_addr_type == DOCA_RDMA_ADDR_TYPE_IPv6 ? "IPv6" : "GID",
				     doca_error_get_descr(result));
			return result;
		}
		result = doca_rdma_connect_to_addr(s->rdma, s->cm_addr, conn_user_data);
		if (result == DOCA_ERROR_NOT_SUPPORTED) {
			cm_not_supported("doca_rdma_connect_to_addr", result);
			return result;
		}
		if (result != DOCA_SUCCESS) {
			DOCA_LOG_ERR("Cannot connect to %s port %u: %s", cfg->server_addr, cfg->cm_port,
				     doca_error_get_descr(result));
			return result;
		}
		DOCA_LOG_INFO("Connecting to the %s at %s port %u", s->desc->peer, cfg->server_addr, cfg->cm_port);
		sample_expect(s, "the %s at %s port %u to accept the connection", s->desc->peer, cfg->server_addr,
			      cfg->cm_port);
	}
	return wait_for_peer(s, all_established, NULL);
}

/* Over RDMA CM the mmap / sync event descriptor goes in one send. */
static doca_error_t hand_over_with_cm(struct sample *s)
{
	const struct sample_desc *d = s->desc;
	struct doca_buf *buf = NULL;
	doca_error_t result;

	if (d->resource == SAMPLE_RESOURCE_NEED) {
		result = doca_buf_inventory_buf_get_by_addr(s->inv, s->neg_mmap, s->neg_mem, SAMPLE_MEM_LEN, &buf);
		if (result != DOCA_SUCCESS) {
			DOCA_LOG_ERR("Cannot get a buffer for the %s's descriptor: %s", d->peer,
				     doca_error_get_descr(result));
			return result;
		}
		result = post_receive(s, buf, TAG_HANDOVER);
		if (result != DOCA_SUCCESS)
			return result;
		DOCA_LOG_INFO("Posted a receive for the %s's %s descriptor", d->peer, d->resource_name);
		sample_expect(s, "the %s's %s descriptor over the RDMA CM connection", d->peer, d->resource_name);
		result = wait_for_peer(s, handover_over, NULL);
		if (result != DOCA_SUCCESS)
			return result;
		snprintf(s->peer_desc_source, sizeof(s->peer_desc_source), "received over the RDMA CM connection");
		DOCA_LOG_INFO("Received the %s's %s descriptor (%zu bytes)", d->peer, d->resource_name,
			      s->peer_desc_len);
		return DOCA_SUCCESS;
	}

	if (s->offer_len > SAMPLE_MEM_LEN) {
		DOCA_LOG_ERR("The %s descriptor is %zu bytes, more than the %d the %s can receive", d->resource_name,
			     s->offer_len, SAMPLE_MEM_LEN, d->peer);
		return DOCA_ERROR_TOO_BIG;
	}
	memcpy(s->neg_mem, s->offer_desc, s->offer_len);
	result = sample_prompt_enter("Wait till the %s has posted its receive for the %s descriptor, then press Enter",
				     d->peer, d->resource_name);
	if (result != DOCA_SUCCESS)
		return result;
	result = doca_buf_inventory_buf_get_by_data(s->inv, s->neg_mmap, s->neg_mem, s->offer_len, &buf);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Cannot get a buffer for the %s descriptor: %s", d->resource_name,
			     doca_error_get_descr(result));
		return result;
	}
	result = post_send(s, 0, buf, TAG_HANDOVER);
	if (result != DOCA_SUCCESS)
		return result;
	sample_expect(s, "the %s to take the %s descriptor", d->peer, d->resource_name);
	result = wait_for_peer(s, handover_over, NULL);
	if (result == DOCA_SUCCESS)
		DOCA_LOG_INFO("Sent the %s descriptor to the %s", d->resource_name, d->peer);
	return result;
}

/* ------------------------------------------------------------------ */
/* The run                                                            */

doca_error_t sample_run(const struct rdma_config *cfg, const struct sample_desc *desc, void *app)
{
	struct sample s;
	doca_error_t result, r;

	if (cfg == NULL || desc == NULL) {
		DOCA_LOG_ERR("The sample was called without a configuration");
		return DOCA_ERROR_INVALID_VALUE;
	}
	memset(&s, 0, sizeof(s));
	s.cfg = cfg;
	s.desc = desc;
	s.app = app;
	s.state = DOCA_CTX_STATE_IDLE;

	result = check_config(&s);
	if (result == DOCA_SUCCESS)
		result = setup(&s);
	if (result == DOCA_SUCCESS)
		result = start_context(&s);
	if (result == DOCA_SUCCESS)
		result = cfg->use_cm ? connect_with_cm(&s) : connect_with_files(&s);
	if (result == DOCA_SUCCESS && cfg->use_cm && desc->resource != SAMPLE_RESOURCE_NONE)
		result = hand_over_with_cm(&s);
	if (result == DOCA_SUCCESS) {
		s.waiting_for[0] = '\0';
		result = desc->run(&s);
	}
	if (result == DOCA_SUCCESS) {
		r = wait_for_peer(&s, is_done, NULL);
		result = r != DOCA_SUCCESS ? r : s.result;
	}
	r = teardown(&s);
	DOCA_ERROR_PROPAGATE(result, r);
	delete_files(&s, result == DOCA_SUCCESS);
	return result;
}
