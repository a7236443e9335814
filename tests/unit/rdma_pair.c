/*
 * The fixture the RDMA unit tests share (rdma_pair.h): log capture, the
 * loopback device, PE and inventory, mmaps and buffers, sides A and B,
 * and the callbacks that hand task completions to the test.
 */
#include "rdma_pair.h"

#include <pthread.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <doca_buf_inventory.h>
#include <doca_log.h>

#include "rdma.h" /* struct doca_rdma_connection: conn_is_up only */

_Atomic int error_lines;
_Atomic int warning_lines;
char last_error[2048];
const char *_Atomic error_needle;
_Atomic int error_needle_lines;
static char log_line[2048];
/* The last WARN line: written by whichever thread logs (the PE stall
 * monitor has its own), read by the test through last_warning_copy. */
static pthread_mutex_t warning_lock = PTHREAD_MUTEX_INITIALIZER;
static char last_warning[2048];

struct doca_dev *dev;
struct doca_pe *pe;
struct side A, B;

static struct doca_devinfo **dev_list;
static struct doca_buf_inventory *inv;

/* ---- SDK log capture ------------------------------------------------- */

static void log_flush(char *line)
{
	if (getenv("TEST_RDMA_VERBOSE") != NULL)
		fputs(line, stderr);
	if (strstr(line, "[ERROR]") != NULL)
		error_lines++;
	if (strstr(line, "[ERROR]") != NULL)
		snprintf(last_error, sizeof(last_error), "%s", line);
	if (strstr(line, "[ERROR]") != NULL && error_needle != NULL && strstr(line, error_needle) != NULL)
		error_needle_lines++;
	if (strstr(line, "[WARN]") != NULL) {
		pthread_mutex_lock(&warning_lock);
		snprintf(last_warning, sizeof(last_warning), "%s", line);
		pthread_mutex_unlock(&warning_lock);
		warning_lines++;
	}
}

void last_warning_copy(char *out, size_t size)
{
	pthread_mutex_lock(&warning_lock);
	snprintf(out, size, "%s", last_warning);
	pthread_mutex_unlock(&warning_lock);
}

static void log_capture_init(void)
{
	struct doca_log_backend *backend;

	assert_int_equal(doca_log_backend_create_with_buf_sdk(log_line, sizeof(log_line), log_flush, &backend),
			 DOCA_SUCCESS);
	assert_int_equal(doca_log_backend_set_sdk_level(backend, DOCA_LOG_LEVEL_WARNING), DOCA_SUCCESS);
}

/* ---- device, inventory, PE, mmaps -------------------------------------------- */

static struct doca_dev *open_loopback(void)
{
	struct doca_dev *d = NULL;
	uint32_t nb = 0, i;
	char name[DOCA_DEVINFO_IBDEV_NAME_SIZE];

	if (doca_devinfo_create_list(&dev_list, &nb) != DOCA_SUCCESS || nb == 0)
		return NULL;
	/* Prefer the loopback device: always there, always up. */
	for (i = 0; i < nb; i++) {
		if (doca_devinfo_get_ibdev_name(dev_list[i], name, sizeof(name)) == DOCA_SUCCESS &&
		    strcmp(name, "soft_lo") == 0)
			break;
	}
	if (doca_dev_open(dev_list[i < nb ? i : 0], &d) != DOCA_SUCCESS)
		return NULL;
	return d;
}

int rdma_pair_setup(void)
{
	log_capture_init();
	dev = open_loopback();
	if (dev == NULL)
		return -1;
	assert_ok(doca_buf_inventory_create(256, &inv));
	assert_ok(doca_buf_inventory_start(inv));
	assert_ok(doca_pe_create(&pe));
	return 0;
}

void rdma_pair_teardown(void)
{
	assert_ok(doca_pe_destroy(pe));
	assert_ok(doca_buf_inventory_stop(inv));
	assert_ok(doca_buf_inventory_destroy(inv));
	assert_ok(doca_dev_close(dev));
	assert_ok(doca_devinfo_destroy_list(dev_list));
}

struct doca_mmap *local_mmap(void *addr, size_t len, uint32_t perms)
{
	struct doca_mmap *m;

	assert_ok(doca_mmap_create(&m));
	assert_ok(doca_mmap_set_memrange(m, addr, len));
	assert_ok(doca_mmap_set_permissions(m, perms));
	assert_ok(doca_mmap_add_dev(m, dev));
	assert_ok(doca_mmap_start(m));
	return m;
}

struct doca_mmap *remote_of(struct doca_mmap *local)
{
	const void *desc;
	size_t len;
	struct doca_mmap *m;

	assert_ok(doca_mmap_export_rdma(local, dev, &desc, &len));
	assert_ok(doca_mmap_create_from_export(NULL, desc, len, dev, &m));
	return m;
}

/* ---- buffers --------------------------------------------------------------- */

struct doca_buf *buf_on(struct doca_mmap *m, void *addr, size_t len, size_t data_len)
{
	struct doca_buf *b;

	assert_ok(doca_buf_inventory_buf_get_by_args(inv, m, addr, len, addr, data_len, &b));
	return b;
}

size_t data_len_of(const struct doca_buf *b)
{
	size_t n;

	assert_ok(doca_buf_get_data_len(b, &n));
	return n;
}

void put(struct doca_buf *b)
{
	if (b != NULL)
		assert_ok(doca_buf_dec_refcount(b, NULL));
}

/* ---- callbacks ------------------------------------------------------------- */

#define TASK_CALLBACKS(T) \
	void on_ok_##T(struct doca_rdma_task_##T *task, union doca_data tu, union doca_data cu) \
	{ \
		(void)tu; \
		rdma_pair_task_done(doca_rdma_task_##T##_as_task(task), true, cu); \
	} \
	void on_err_##T(struct doca_rdma_task_##T *task, union doca_data tu, union doca_data cu) \
	{ \
		(void)tu; \
		rdma_pair_task_done(doca_rdma_task_##T##_as_task(task), false, cu); \
	}

TASK_CALLBACKS(receive)
TASK_CALLBACKS(send)
TASK_CALLBACKS(send_imm)
TASK_CALLBACKS(read)
TASK_CALLBACKS(write)
TASK_CALLBACKS(write_imm)
TASK_CALLBACKS(atomic_cmp_swp)
TASK_CALLBACKS(atomic_fetch_add)
TASK_CALLBACKS(remote_net_sync_event_get)
TASK_CALLBACKS(remote_net_sync_event_notify_set)
TASK_CALLBACKS(remote_net_sync_event_notify_add)

static struct side *side_of(union doca_data ctx_user_data)
{
	return ctx_user_data.ptr;
}

void on_established(struct doca_rdma_connection *conn, union doca_data cud, union doca_data ctxud)
{
	(void)conn;
	(void)cud;
	side_of(ctxud)->established++;
}

void on_failure(struct doca_rdma_connection *conn, union doca_data cud, union doca_data ctxud)
{
	(void)cud;
	side_of(ctxud)->failed_conn = conn;
	side_of(ctxud)->failed++;
}

void on_disconnect(struct doca_rdma_connection *conn, union doca_data cud, union doca_data ctxud)
{
	(void)cud;
	side_of(ctxud)->disconnected_conn = conn;
	side_of(ctxud)->disconnected++;
	/* What the DOCA CM samples do: close our end too; must succeed. */
	assert_ok(doca_rdma_connection_disconnect(conn));
}

/* ---- contexts and progress ---------------------------------------------------- */

uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

bool progress_until(const int *counter, int want)
{
	uint64_t deadline = now_ms() + 10000;

	while (*counter < want) {
		if (now_ms() > deadline)
			return false;
		(void)doca_pe_progress(pe);
	}
	return true;
}

void side_create(struct side *s)
{
	union doca_data ud = {.ptr = s};

	memset(s, 0, sizeof(*s));
	assert_ok(doca_rdma_create(dev, &s->rdma));
	s->ctx = doca_rdma_as_ctx(s->rdma);
	assert_non_null(s->ctx);
	assert_ok(doca_ctx_set_user_data(s->ctx, ud));
	assert_ok(doca_pe_connect_ctx(pe, s->ctx));
}

void side_apply_conf(struct side *s, const struct side_conf *c)
{
	struct doca_rdma *r = s->rdma;

	assert_ok(doca_rdma_set_permissions(r, c->permissions));
	assert_ok(doca_rdma_set_rnr_retry_count(r, c->rnr_retry));
	if (c->send_queue_size != 0)
		assert_ok(doca_rdma_set_send_queue_size(r, c->send_queue_size));
	if (c->buf_list_len != 0) {
		assert_ok(doca_rdma_set_max_send_buf_list_len(r, c->buf_list_len));
		assert_ok(doca_rdma_task_receive_set_dst_buf_list_len(r, c->buf_list_len));
	}
}

void side_conf_tasks(struct side *s, uint32_t num_tasks, bool sync_event_tasks)
{
	struct doca_rdma *r = s->rdma;

	assert_ok(doca_rdma_task_receive_set_conf(r, on_ok_receive, on_err_receive, num_tasks));
	assert_ok(doca_rdma_task_send_set_conf(r, on_ok_send, on_err_send, num_tasks));
	assert_ok(doca_rdma_task_send_imm_set_conf(r, on_ok_send_imm, on_err_send_imm, num_tasks));
	assert_ok(doca_rdma_task_read_set_conf(r, on_ok_read, on_err_read, num_tasks));
	assert_ok(doca_rdma_task_write_set_conf(r, on_ok_write, on_err_write, num_tasks));
	assert_ok(doca_rdma_task_write_imm_set_conf(r, on_ok_write_imm, on_err_write_imm, num_tasks));
	assert_ok(doca_rdma_task_atomic_cmp_swp_set_conf(r, on_ok_atomic_cmp_swp, on_err_atomic_cmp_swp, num_tasks));
	assert_ok(doca_rdma_task_atomic_fetch_add_set_conf(r, on_ok_atomic_fetch_add, on_err_atomic_fetch_add,
							   num_tasks));
	if (sync_event_tasks) {
		assert_ok(doca_rdma_task_remote_net_sync_event_get_set_conf(
			r, on_ok_remote_net_sync_event_get, on_err_remote_net_sync_event_get, num_tasks));
		assert_ok(doca_rdma_task_remote_net_sync_event_notify_set_set_conf(
			r, on_ok_remote_net_sync_event_notify_set, on_err_remote_net_sync_event_notify_set, num_tasks));
		assert_ok(doca_rdma_task_remote_net_sync_event_notify_add_set_conf(
			r, on_ok_remote_net_sync_event_notify_add, on_err_remote_net_sync_event_notify_add, num_tasks));
	}
	assert_ok(doca_rdma_set_connection_state_callbacks(r, NULL, on_established, on_failure, on_disconnect));
}

void progress_rounds(int n)
{
	for (int i = 0; i < n; i++)
		(void)doca_pe_progress(pe);
}

bool progress_notified_until(const int *counter, int want, uint32_t timeout_ms, int *wakeups)
{
	uint64_t deadline = now_ms() + timeout_ms;
	struct epoll_event ev = {.events = EPOLLIN};
	doca_notification_handle_t fd;
	int ep;

	assert_ok(doca_pe_get_notification_handle(pe, &fd));
	ep = epoll_create1(EPOLL_CLOEXEC);
	assert_true(ep >= 0);
	assert_int_equal(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev), 0);
	while (*counter < want) {
		uint64_t now = now_ms();

		if (now >= deadline)
			break;
		/* Armed, then asleep until the PE says there is work. */
		assert_ok(doca_pe_request_notification(pe));
		if (epoll_wait(ep, &ev, 1, (int)(deadline - now)) <= 0)
			continue;
		if (wakeups != NULL)
			(*wakeups)++;
		assert_ok(doca_pe_clear_notification(pe, fd));
		while (doca_pe_progress(pe) != 0)
			;
	}
	close(ep);
	return *counter >= want;
}

enum doca_ctx_states state_of(const struct side *s)
{
	enum doca_ctx_states st;

	assert_ok(doca_ctx_get_state(s->ctx, &st));
	return st;
}

void side_start_export(struct side *s)
{
	assert_ok(doca_ctx_start(s->ctx));
	assert_int_equal(state_of(s), DOCA_CTX_STATE_RUNNING);
	assert_ok(doca_rdma_export(s->rdma, &s->desc, &s->desc_len, &s->conn));
}

void side_stop(struct side *s)
{
	uint64_t deadline = now_ms() + 10000;

	if (s->rdma == NULL)
		return;
	(void)doca_ctx_stop(s->ctx);
	while (state_of(s) != DOCA_CTX_STATE_IDLE) {
		assert_true(now_ms() < deadline);
		(void)doca_pe_progress(pe);
	}
}

void side_destroy(struct side *s)
{
	if (s->rdma == NULL)
		return;
	side_stop(s);
	assert_ok(doca_rdma_destroy(s->rdma));
	s->rdma = NULL;
}

/*
 * A test seam: DOCA has no call that says whether a connection is up, and
 * no event for one made by doca_rdma_export + doca_rdma_connect (the
 * established callback is RDMA CM's only; on hardware the connect call
 * itself moves the QP to RTS). Programs just submit; a test that must know
 * the link is up before going on (which connection came up 2nd, a drop
 * timed from establishment, a fixture that hands a connected pair to the
 * test) reads the library's state. The state changes inside
 * doca_pe_progress, on the thread that calls it, which is this one.
 */
bool conn_is_up(const struct doca_rdma_connection *conn)
{
	return conn->state == RDMA_CONN_ESTABLISHED;
}

bool progress_until_up(const struct doca_rdma_connection *conn)
{
	uint64_t deadline = now_ms() + 10000;

	while (!conn_is_up(conn)) {
		if (now_ms() > deadline)
			return false;
		(void)doca_pe_progress(pe);
	}
	return true;
}

void pair_connect(void)
{
	assert_ok(doca_rdma_connect(A.rdma, B.desc, B.desc_len, A.conn));
	assert_ok(doca_rdma_connect(B.rdma, A.desc, A.desc_len, B.conn));
	assert_true(progress_until_up(A.conn));
	assert_true(progress_until_up(B.conn));
	/* Up without the established callback: it is RDMA CM's only. */
	assert_int_equal(A.established + B.established, 0);
}

struct doca_rdma_task_receive *post_receive(struct side *s, struct doca_buf *dst)
{
	struct doca_rdma_task_receive *recv;
	union doca_data ud = {.u64 = 0};

	assert_ok(doca_rdma_task_receive_allocate_init(s->rdma, dst, ud, &recv));
	assert_ok(doca_task_submit(doca_rdma_task_receive_as_task(recv)));
	return recv;
}
