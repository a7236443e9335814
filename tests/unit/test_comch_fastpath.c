/*
 * Tests of DOCA Comch's fast path: producer -> consumer between two
 * processes in order with immediate data, a killed peer on either side
 * (consumers expire, tasks fail, within a bound), hostile CONSUMER_NEW /
 * CONSUMER_GONE frames and queues at the socket, fds and heap flat over
 * create/send/destroy cycles, and the PCIe-function binding (a client on
 * another function does not reach the server).
 *
 * The other process of a two-process test is this binary exec'd again
 * ("--child <role>"). Every test gets its own SOFTDOCA_PCIE_DIR.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_comch.h>
#include <doca_comch_consumer.h>
#include <doca_comch_producer.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_mmap.h>
#include <doca_pe.h>

#include "channel.h"
#include "comch_internal.h"
#include "comch_test.h"
#include "dev_rep.h"

#define NAME "fastpath test/server:1" /* bytes the path leaf rule refuses */
#define N_MSGS 500
#define BUF_SIZE 256
#define N_BUFS 8
#define IMM_LEN 8

static char dir[64];

static struct doca_dev *open_dev_n(uint32_t idx)
{
	struct doca_devinfo **list;
	struct doca_dev *dev = NULL;
	uint32_t n;

	if (doca_devinfo_create_list(&list, &n) != DOCA_SUCCESS)
		return NULL;
	if (idx < n && doca_dev_open(list[idx], &dev) != DOCA_SUCCESS)
		dev = NULL;
	doca_devinfo_destroy_list(list);
	return dev;
}

/* The representor of device idx's function, listed on dev. */
static struct doca_dev_rep *open_rep(struct doca_dev *dev, uint32_t idx)
{
	char pci[DOCA_DEVINFO_PCI_ADDR_SIZE];
	struct doca_devinfo_rep **list;
	struct doca_dev_rep *rep = NULL;
	struct doca_dev *host = open_dev_n(idx);
	uint32_t n;

	assert_non_null(host);
	assert_int_equal(doca_devinfo_get_pci_addr_str(doca_dev_as_devinfo(host), pci), DOCA_SUCCESS);
	assert_int_equal(doca_dev_close(host), DOCA_SUCCESS);
	assert_int_equal(doca_devinfo_rep_create_list(dev, DOCA_DEVINFO_REP_FILTER_NET, &list, &n), DOCA_SUCCESS);
	for (uint32_t i = 0; i < n && rep == NULL; i++) {
		uint8_t eq = 0;

		if (doca_devinfo_rep_is_equal_pci_addr(list[i], pci, &eq) == DOCA_SUCCESS && eq)
			assert_int_equal(doca_dev_rep_open(list[i], &rep), DOCA_SUCCESS);
	}
	doca_devinfo_rep_destroy_list(list);
	assert_non_null(rep);
	return rep;
}

/* ---- one side: a server or a client, its PE, consumer and producer ---- */

struct side {
	struct doca_dev *dev;
	struct doca_dev_rep *rep;
	struct doca_pe *pe;
	struct doca_comch_server *server;
	struct doca_comch_client *client;
	struct doca_ctx *ctx;
	struct doca_comch_connection *conn;
	volatile int connects, disconnects;
	volatile int new_consumers, expired_consumers;
	volatile uint32_t remote_id, expired_id;
	/* consumer */
	struct doca_comch_consumer *consumer;
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
	uint8_t *mem;
	volatile int received, recv_errors, bad;
	/* producer */
	struct doca_comch_producer *producer;
	volatile int sent, send_errors;
	uint8_t out[N_BUFS][BUF_SIZE];
};

static struct side A;

static void on_connect(struct doca_comch_event_connection_status_changed *ev, struct doca_comch_connection *conn,
		       uint8_t ok)
{
	(void)ev;
	if (ok) {
		A.conn = conn;
		A.connects++;
	}
}

static void on_disconnect(struct doca_comch_event_connection_status_changed *ev,
			  struct doca_comch_connection *conn, uint8_t ok)
{
	(void)ev;
	(void)conn;
	(void)ok;
	A.disconnects++;
}

static void on_new_consumer(struct doca_comch_event_consumer *ev, struct doca_comch_connection *conn, uint32_t id)
{
	(void)ev;
	(void)conn;
	A.remote_id = id;
	A.new_consumers++;
}

static void on_expired_consumer(struct doca_comch_event_consumer *ev, struct doca_comch_connection *conn,
				uint32_t id)
{
	(void)ev;
	(void)conn;
	A.expired_id = id;
	A.expired_consumers++;
}

static void on_msg(struct doca_comch_event_msg_recv *ev, uint8_t *buf, uint32_t len, struct doca_comch_connection *c)
{
	(void)ev;
	(void)buf;
	(void)len;
	(void)c;
}

static void on_send(struct doca_comch_task_send *t, union doca_data tu, union doca_data cu)
{
	(void)tu;
	(void)cu;
	doca_task_free(doca_comch_task_send_as_task(t));
}

static void side_server_open(void)
{
	memset(&A, 0, sizeof(A));
	A.dev = open_dev_n(0);
	assert_non_null(A.dev);
	A.rep = open_rep(A.dev, 0);
	assert_int_equal(doca_pe_create(&A.pe), DOCA_SUCCESS);
	assert_int_equal(doca_comch_server_create(A.dev, A.rep, NAME, &A.server), DOCA_SUCCESS);
	A.ctx = doca_comch_server_as_ctx(A.server);
	assert_int_equal(doca_comch_server_task_send_set_conf(A.server, on_send, on_send, 16), DOCA_SUCCESS);
	assert_int_equal(doca_comch_server_event_msg_recv_register(A.server, on_msg), DOCA_SUCCESS);
	assert_int_equal(doca_comch_server_event_connection_status_changed_register(A.server, on_connect,
										    on_disconnect),
			 DOCA_SUCCESS);
	assert_int_equal(doca_comch_server_event_consumer_register(A.server, on_new_consumer, on_expired_consumer),
			 DOCA_SUCCESS);
	assert_int_equal(doca_pe_connect_ctx(A.pe, A.ctx), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_start(A.ctx), DOCA_SUCCESS);
}

/* A client on device idx; 0 when it connected within ms. */
static int side_client_open(uint32_t idx, uint64_t ms)
{
	memset(&A, 0, sizeof(A));
	A.dev = open_dev_n(idx);
	if (A.dev == NULL || doca_pe_create(&A.pe) != DOCA_SUCCESS)
		return 1;
	if (doca_comch_client_create(A.dev, NAME, &A.client) != DOCA_SUCCESS)
		return 2;
	A.ctx = doca_comch_client_as_ctx(A.client);
	if (doca_comch_client_task_send_set_conf(A.client, on_send, on_send, 16) != DOCA_SUCCESS ||
	    doca_comch_client_event_msg_recv_register(A.client, on_msg) != DOCA_SUCCESS ||
	    doca_comch_client_event_consumer_register(A.client, on_new_consumer, on_expired_consumer) !=
		    DOCA_SUCCESS ||
	    doca_pe_connect_ctx(A.pe, A.ctx) != DOCA_SUCCESS || doca_ctx_start(A.ctx) != DOCA_ERROR_IN_PROGRESS)
		return 3;
	if (!progress_until_state(A.pe, A.ctx, DOCA_CTX_STATE_RUNNING, ms))
		return 4;
	return doca_comch_client_get_connection(A.client, &A.conn) == DOCA_SUCCESS ? 0 : 5;
}

static void side_close(void)
{
	if (A.server != NULL) {
		(void)doca_ctx_stop(A.ctx);
		assert_true(progress_until_state(A.pe, A.ctx, DOCA_CTX_STATE_IDLE, 3000));
		assert_int_equal(doca_comch_server_destroy(A.server), DOCA_SUCCESS);
	}
	if (A.client != NULL) {
		enum doca_ctx_states st;

		assert_int_equal(doca_ctx_get_state(A.ctx, &st), DOCA_SUCCESS);
		if (st != DOCA_CTX_STATE_IDLE)
			(void)doca_ctx_stop(A.ctx);
		assert_true(progress_until_state(A.pe, A.ctx, DOCA_CTX_STATE_IDLE, 3000));
		assert_int_equal(doca_comch_client_destroy(A.client), DOCA_SUCCESS);
	}
	assert_int_equal(doca_pe_destroy(A.pe), DOCA_SUCCESS);
	if (A.rep != NULL)
		assert_int_equal(doca_dev_rep_close(A.rep), DOCA_SUCCESS);
	assert_int_equal(doca_dev_close(A.dev), DOCA_SUCCESS);
}

/* ---- consumer ---- */

static uint32_t msg_len(uint32_t i)
{
	return 1 + (i * 37u) % BUF_SIZE;
}

static void msg_fill(uint8_t *p, uint32_t len, uint32_t i)
{
	for (uint32_t k = 0; k < len; k++)
		p[k] = (uint8_t)(i * 7u + k);
}

static void imm_fill(uint8_t *p, uint32_t i)
{
	for (uint32_t k = 0; k < IMM_LEN; k++)
		p[k] = (uint8_t)(i ^ (k * 31u));
}

static void post_one(struct doca_comch_consumer_task_post_recv *t, uint32_t slot);

static void on_recv(struct doca_comch_consumer_task_post_recv *t, union doca_data tu, union doca_data cu)
{
	struct doca_buf *buf = doca_comch_consumer_task_post_recv_get_buf(t);
	uint32_t i = (uint32_t)A.received;
	uint8_t want[BUF_SIZE], imm[IMM_LEN];
	void *data;
	size_t len;

	(void)cu;
	assert_int_equal(doca_buf_get_data(buf, &data), DOCA_SUCCESS);
	assert_int_equal(doca_buf_get_data_len(buf, &len), DOCA_SUCCESS);
	msg_fill(want, msg_len(i), i);
	imm_fill(imm, i);
	if (len != msg_len(i) || memcmp(data, want, len) != 0 ||
	    doca_comch_consumer_task_post_recv_get_imm_data_len(t) != IMM_LEN ||
	    memcmp(doca_comch_consumer_task_post_recv_get_imm_data(t), imm, IMM_LEN) != 0 ||
	    doca_comch_consumer_task_post_recv_get_producer_id(t) == 0)
		A.bad++;
	A.received++;
	/* Post the buffer again, empty. */
	assert_int_equal(doca_buf_set_data(buf, data, 0), DOCA_SUCCESS);
	post_one(t, (uint32_t)tu.u64);
}

static void on_recv_err(struct doca_comch_consumer_task_post_recv *t, union doca_data tu, union doca_data cu)
{
	(void)tu;
	(void)cu;
	A.recv_errors++;
	doca_buf_dec_refcount(doca_comch_consumer_task_post_recv_get_buf(t), NULL);
	doca_task_free(doca_comch_consumer_task_post_recv_as_task(t));
}

static void post_one(struct doca_comch_consumer_task_post_recv *t, uint32_t slot)
{
	union doca_data ud = {.u64 = slot};

	doca_task_set_user_data(doca_comch_consumer_task_post_recv_as_task(t), ud);
	if (doca_task_submit(doca_comch_consumer_task_post_recv_as_task(t)) != DOCA_SUCCESS)
		A.bad++;
}

static void consumer_open(struct doca_pe *pe)
{
	assert_non_null(A.mem = calloc(N_BUFS, BUF_SIZE));
	assert_int_equal(doca_mmap_create(&A.mmap), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_add_dev(A.mmap, A.dev), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_set_memrange(A.mmap, A.mem, N_BUFS * BUF_SIZE), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_start(A.mmap), DOCA_SUCCESS);
	assert_int_equal(doca_buf_inventory_create(N_BUFS, &A.inv), DOCA_SUCCESS);
	assert_int_equal(doca_buf_inventory_start(A.inv), DOCA_SUCCESS);
	assert_int_equal(doca_comch_consumer_create(A.conn, A.mmap, &A.consumer), DOCA_SUCCESS);
	assert_int_equal(doca_comch_consumer_set_imm_data_len(A.consumer, IMM_LEN), DOCA_SUCCESS);
	assert_int_equal(doca_comch_consumer_task_post_recv_set_conf(A.consumer, on_recv, on_recv_err, N_BUFS),
			 DOCA_SUCCESS);
	assert_int_equal(doca_pe_connect_ctx(pe, doca_comch_consumer_as_ctx(A.consumer)), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_start(doca_comch_consumer_as_ctx(A.consumer)), DOCA_ERROR_IN_PROGRESS);
	assert_true(progress_until_state(pe, doca_comch_consumer_as_ctx(A.consumer), DOCA_CTX_STATE_RUNNING, 3000));
	for (uint32_t i = 0; i < N_BUFS; i++) {
		struct doca_comch_consumer_task_post_recv *t;
		struct doca_buf *buf;

		assert_int_equal(doca_buf_inventory_buf_get_by_addr(A.inv, A.mmap, A.mem + i * BUF_SIZE, BUF_SIZE,
								    &buf),
				 DOCA_SUCCESS);
		assert_int_equal(doca_comch_consumer_task_post_recv_alloc_init(A.consumer, buf, &t), DOCA_SUCCESS);
		post_one(t, i);
	}
}

static void consumer_close(struct doca_pe *pe)
{
	struct doca_ctx *ctx = doca_comch_consumer_as_ctx(A.consumer);
	enum doca_ctx_states st;

	assert_int_equal(doca_ctx_get_state(ctx, &st), DOCA_SUCCESS);
	if (st != DOCA_CTX_STATE_IDLE)
		(void)doca_ctx_stop(ctx);
	assert_true(progress_until_state(pe, ctx, DOCA_CTX_STATE_IDLE, 3000));
	assert_int_equal(doca_comch_consumer_destroy(A.consumer), DOCA_SUCCESS);
	A.consumer = NULL;
	assert_int_equal(doca_buf_inventory_destroy(A.inv), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_destroy(A.mmap), DOCA_SUCCESS);
	free(A.mem);
}

/* ---- producer ---- */

static void on_sent(struct doca_comch_producer_task_send *t, union doca_data tu, union doca_data cu)
{
	(void)tu;
	(void)cu;
	A.sent++;
	doca_buf_dec_refcount((struct doca_buf *)doca_comch_producer_task_send_get_buf(t), NULL);
	doca_task_free(doca_comch_producer_task_send_as_task(t));
}

static void on_sent_err(struct doca_comch_producer_task_send *t, union doca_data tu, union doca_data cu)
{
	(void)tu;
	(void)cu;
	A.send_errors++;
	doca_buf_dec_refcount((struct doca_buf *)doca_comch_producer_task_send_get_buf(t), NULL);
	doca_task_free(doca_comch_producer_task_send_as_task(t));
}

static struct doca_pe *producer_pe;

static void producer_open(void)
{
	assert_non_null(A.mem = calloc(N_BUFS, BUF_SIZE));
	assert_int_equal(doca_mmap_create(&A.mmap), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_add_dev(A.mmap, A.dev), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_set_memrange(A.mmap, A.mem, N_BUFS * BUF_SIZE), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_start(A.mmap), DOCA_SUCCESS);
	assert_int_equal(doca_buf_inventory_create(N_BUFS, &A.inv), DOCA_SUCCESS);
	assert_int_equal(doca_buf_inventory_start(A.inv), DOCA_SUCCESS);
	assert_int_equal(doca_pe_create(&producer_pe), DOCA_SUCCESS);
	assert_int_equal(doca_comch_producer_create(A.conn, &A.producer), DOCA_SUCCESS);
	assert_int_equal(doca_comch_producer_task_send_set_conf(A.producer, on_sent, on_sent_err, N_BUFS),
			 DOCA_SUCCESS);
	assert_int_equal(doca_pe_connect_ctx(producer_pe, doca_comch_producer_as_ctx(A.producer)), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_start(doca_comch_producer_as_ctx(A.producer)), DOCA_SUCCESS);
}

static void producer_close(void)
{
	struct doca_ctx *ctx = doca_comch_producer_as_ctx(A.producer);
	enum doca_ctx_states st;

	assert_int_equal(doca_ctx_get_state(ctx, &st), DOCA_SUCCESS);
	if (st != DOCA_CTX_STATE_IDLE)
		(void)doca_ctx_stop(ctx);
	assert_true(progress_until_state(producer_pe, ctx, DOCA_CTX_STATE_IDLE, 3000));
	assert_int_equal(doca_comch_producer_destroy(A.producer), DOCA_SUCCESS);
	A.producer = NULL;
	assert_int_equal(doca_pe_destroy(producer_pe), DOCA_SUCCESS);
	assert_int_equal(doca_buf_inventory_destroy(A.inv), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_destroy(A.mmap), DOCA_SUCCESS);
	free(A.mem);
}

/* Send message i to the remote consumer, retrying while it has no buffer
 * (DOCA_ERROR_AGAIN) for ms; the submit status. */
static doca_error_t producer_send(uint32_t i, uint64_t ms)
{
	static uint8_t imm[N_BUFS][IMM_LEN];
	struct doca_comch_producer_task_send *t;
	uint8_t *p = A.mem + (i % N_BUFS) * BUF_SIZE;
	uint64_t end = now_ms() + ms;
	struct doca_buf *buf;
	doca_error_t st;

	/* Slot i % N_BUFS is free again: at most N_BUFS in flight. */
	while (i - (uint32_t)(A.sent + A.send_errors) >= N_BUFS)
		if (doca_pe_progress(producer_pe) == 0 && now_ms() > end)
			return DOCA_ERROR_TIME_OUT;
	msg_fill(p, msg_len(i), i);
	imm_fill(imm[i % N_BUFS], i);
	assert_int_equal(doca_buf_inventory_buf_get_by_data(A.inv, A.mmap, p, msg_len(i), &buf), DOCA_SUCCESS);
	assert_int_equal(doca_comch_producer_task_send_alloc_init(A.producer, buf, imm[i % N_BUFS], IMM_LEN,
								  A.remote_id, &t),
			 DOCA_SUCCESS);
	do {
		st = doca_task_submit(doca_comch_producer_task_send_as_task(t));
		if (st == DOCA_ERROR_AGAIN) {
			/* The consumer's process reposts on its own: nothing of ours
			 * needs progress for the credit to come. */
			usleep(50);
		}
	} while (st == DOCA_ERROR_AGAIN && now_ms() < end);
	if (st != DOCA_SUCCESS) {
		doca_buf_dec_refcount(buf, NULL);
		doca_task_free(doca_comch_producer_task_send_as_task(t));
	}
	return st;
}

/* ---- child roles ---- */

/* Client with a producer: send N_MSGS to the server's consumer. */
static int child_producer(void)
{
	int rc = side_client_open(0, 10000);

	if (rc != 0)
		return 10 + rc;
	if (!progress_until(A.pe, &A.new_consumers, 1, 10000))
		return 20;
	producer_open();
	for (uint32_t i = 0; i < N_MSGS; i++)
		if (producer_send(i, 10000) != DOCA_SUCCESS)
			return 30;
	if (!progress_until(producer_pe, &A.sent, N_MSGS, 10000) || A.send_errors != 0)
		return 40;
	producer_close();
	/* The parent stops its server when it has them all. */
	if (!progress_until_state(A.pe, A.ctx, DOCA_CTX_STATE_IDLE, 10000))
		return 50;
	side_close();
	return 0;
}

/* Client with a consumer, then idle until killed. */
static int child_idle_consumer(void)
{
	if (side_client_open(0, 10000) != 0)
		return 1;
	consumer_open(A.pe);
	for (;;)
		if (doca_pe_progress(A.pe) == 0)
			usleep(1000);
}

/* Client with a consumer on a PE of its own that is never progressed: its
 * start alone must reach the peer (NVIDIA's storage service does this). */
static int child_unprogressed_consumer(void)
{
	struct doca_pe *quiet_pe = NULL;

	if (side_client_open(0, 10000) != 0)
		return 1;
	assert_int_equal(doca_pe_create(&quiet_pe), DOCA_SUCCESS);
	assert_non_null(A.mem = calloc(N_BUFS, BUF_SIZE));
	assert_int_equal(doca_mmap_create(&A.mmap), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_add_dev(A.mmap, A.dev), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_set_memrange(A.mmap, A.mem, N_BUFS * BUF_SIZE), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_start(A.mmap), DOCA_SUCCESS);
	assert_int_equal(doca_comch_consumer_create(A.conn, A.mmap, &A.consumer), DOCA_SUCCESS);
	assert_int_equal(doca_comch_consumer_task_post_recv_set_conf(A.consumer, on_recv, on_recv_err, N_BUFS),
			 DOCA_SUCCESS);
	assert_int_equal(doca_pe_connect_ctx(quiet_pe, doca_comch_consumer_as_ctx(A.consumer)), DOCA_SUCCESS);
	if (doca_ctx_start(doca_comch_consumer_as_ctx(A.consumer)) != DOCA_ERROR_IN_PROGRESS)
		return 2;
	/* Until killed; bounded so a failing parent does not leave us behind. */
	for (uint64_t end = now_ms() + 20000; now_ms() < end;)
		if (doca_pe_progress(A.pe) == 0)
			usleep(1000);
	return 3;
}

/* Server with a consumer on its first connection, then idle until killed. */
static int child_server_consumer(void)
{
	side_server_open();
	if (!progress_until(A.pe, &A.connects, 1, 10000))
		return 1;
	consumer_open(A.pe);
	for (;;)
		if (doca_pe_progress(A.pe) == 0)
			usleep(1000);
}

/* Exit codes of the doorbell victim. */
enum { VICTIM_SENT = 0, VICTIM_REFUSED = 2 };

/* Server whose first client announces a consumer (a hostile one, in
 * test_hostile_doorbell): VICTIM_REFUSED when the server dropped that
 * client instead, VICTIM_SENT once a producer's N_BUFS sends to it all
 * completed. A producer blocked on the doorbell never exits. */
static int child_doorbell_victim(void)
{
	uint64_t end;

	side_server_open();
	if (!progress_until(A.pe, &A.connects, 1, 10000))
		return 1;
	end = now_ms() + 10000;
	while (A.new_consumers == 0 && A.disconnects == 0 && now_ms() < end)
		if (doca_pe_progress(A.pe) == 0)
			usleep(100);
	if (A.new_consumers == 0) {
		side_close();
		return A.disconnects > 0 ? VICTIM_REFUSED : 3;
	}
	producer_open();
	for (uint32_t i = 0; i < N_BUFS; i++)
		if (producer_send(i, 5000) != DOCA_SUCCESS)
			return 4;
	if (!progress_until(producer_pe, &A.sent, N_BUFS, 5000) || A.send_errors != 0)
		return 5;
	producer_close();
	side_close();
	return VICTIM_SENT;
}

static pid_t spawn_child(const char *role)
{
	return comch_test_spawn("test_comch_fastpath", role);
}

static int child_main(const char *role)
{
	if (strcmp(role, "producer") == 0)
		return child_producer();
	if (strcmp(role, "idle-consumer") == 0)
		return child_idle_consumer();
	if (strcmp(role, "server-consumer") == 0)
		return child_server_consumer();
	if (strcmp(role, "unprogressed-consumer") == 0)
		return child_unprogressed_consumer();
	if (strcmp(role, "doorbell-victim") == 0)
		return child_doorbell_victim();
	return 126;
}

static int setup_dir(void **state)
{
	(void)state;
	comch_test_dir_make(dir, sizeof(dir), "/tmp/softdoca-comch-fp-XXXXXX");
	return 0;
}

static int teardown_dir(void **state)
{
	(void)state;
	assert_int_equal(rmdir(dir), 0); /* servers removed their files */
	return 0;
}

/* A killed server leaves its socket and secret behind: clear them so the
 * teardown's check holds for the others. */
static void dir_clear(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[sizeof(dir) + 260];

	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(d);
	while (readdir(d) != NULL)
		n++;
	closedir(d);
	return n;
}

/* ---- tests ---- */

static void test_two_process_ordered(void **state)
{
	int status;
	pid_t pid;

	(void)state;
	side_server_open();
	pid = spawn_child("producer");
	assert_true(pid > 0);
	assert_true(progress_until(A.pe, &A.connects, 1, 10000));
	consumer_open(A.pe);
	assert_true(progress_until(A.pe, &A.received, N_MSGS, 20000));
	assert_int_equal(A.bad, 0);
	assert_int_equal(A.recv_errors, 0);
	consumer_close(A.pe);
	/* Our posted buffers were flushed with the stop, as errors. */
	assert_int_equal(A.recv_errors, N_BUFS);
	side_close();
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* The client side dies: its consumer expires here, and our consumer's
 * posted tasks fail and it stops, within a bound. */
static void test_killed_client(void **state)
{
	uint64_t t0;
	pid_t pid;

	(void)state;
	side_server_open();
	pid = spawn_child("idle-consumer");
	assert_true(pid > 0);
	assert_true(progress_until(A.pe, &A.connects, 1, 10000));
	assert_true(progress_until(A.pe, &A.new_consumers, 1, 10000));
	assert_true(A.remote_id != 0);
	consumer_open(A.pe);
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	t0 = now_ms();
	assert_true(progress_until(A.pe, &A.expired_consumers, 1, 2000));
	assert_int_equal(A.expired_id, A.remote_id);
	assert_true(progress_until(A.pe, &A.recv_errors, N_BUFS, 2000));
	assert_true(progress_until_state(A.pe, doca_comch_consumer_as_ctx(A.consumer), DOCA_CTX_STATE_IDLE, 2000));
	assert_true(now_ms() - t0 < 2000);
	consumer_close(A.pe);
	side_close();
}

/* The peer's consumer is announced by its start, though its PE is never
 * progressed; it expires when that process dies. */
static void test_announced_at_start(void **state)
{
	pid_t pid;

	(void)state;
	side_server_open();
	pid = spawn_child("unprogressed-consumer");
	assert_true(pid > 0);
	assert_true(progress_until(A.pe, &A.connects, 1, 10000));
	assert_true(progress_until(A.pe, &A.new_consumers, 1, 10000));
	assert_true(A.remote_id != 0);
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	assert_true(progress_until(A.pe, &A.expired_consumers, 1, 2000));
	assert_int_equal(A.expired_id, A.remote_id);
	side_close();
}

/* The server side dies while we (the client) produce to its consumer:
 * the consumer expires, the client fails, the producer's tasks fail and
 * it stops, within a bound. */
static void test_killed_server(void **state)
{
	uint64_t t0;
	pid_t pid;

	(void)state;
	pid = spawn_child("server-consumer");
	assert_true(pid > 0);
	assert_int_equal(side_client_open(0, 10000), 0);
	assert_true(progress_until(A.pe, &A.new_consumers, 1, 10000));
	producer_open();
	assert_int_equal(producer_send(0, 5000), DOCA_SUCCESS);
	assert_true(progress_until(producer_pe, &A.sent, 1, 3000));
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	t0 = now_ms();
	/* Nothing progresses the client: the producer notices on its own. */
	assert_true(progress_until_state(producer_pe, doca_comch_producer_as_ctx(A.producer), DOCA_CTX_STATE_IDLE,
					 2000));
	assert_true(now_ms() - t0 < 2000);
	assert_true(progress_until(A.pe, &A.expired_consumers, 1, 2000));
	assert_int_equal(A.expired_id, A.remote_id);
	assert_true(progress_until_state(A.pe, A.ctx, DOCA_CTX_STATE_IDLE, 2000));
	producer_close();
	side_close();
	dir_clear();
}

/* ---- hostile peers at the socket ---- */

/* A client speaking the wire itself, established (HELLO answered by
 * WELCOME) with the server that pe progresses; pe NULL: the server is
 * another process's, which may not be listening yet. */
static int raw_client_on(struct doca_pe *pe, uint8_t secret[COMCH_SECRET_LEN], struct comch_chan *chan)
{
	uint8_t hello[COMCH_HELLO_FIXED_LEN + COMCH_MAX_NAME_LEN];
	struct softdoca_pcie_link link;
	struct comch_frame f;
	uint64_t end = now_ms() + 10000;
	doca_error_t st;
	uint32_t len;
	int fd = -1;

	assert_int_equal(softdoca_dev_pcie_link(A.dev, &link), DOCA_SUCCESS);
	while ((st = comch_connect(&link, NAME, &fd, secret)) == DOCA_ERROR_NOT_FOUND && pe == NULL &&
	       now_ms() < end)
		usleep(1000);
	assert_int_equal(st, DOCA_SUCCESS);
	assert_int_equal(comch_chan_init(chan, fd), DOCA_SUCCESS);
	len = comch_hello_encode(hello, COMCH_MAX_MSG_SIZE, 16, NAME, (uint16_t)strlen(NAME), secret);
	assert_int_equal(comch_chan_send(chan, COMCH_FRAME_HELLO, hello, len), DOCA_SUCCESS);
	for (;;) {
		st = comch_chan_recv(chan, COMCH_MAX_MSG_SIZE, "raw", &f);
		if (st == DOCA_SUCCESS) {
			assert_int_equal(f.type, COMCH_FRAME_WELCOME);
			break;
		}
		assert_int_equal(st, DOCA_ERROR_AGAIN);
		assert_true(now_ms() < end);
		if (pe != NULL)
			(void)doca_pe_progress(pe);
		else
			usleep(100);
	}
	return fd;
}

static int raw_client(uint8_t secret[COMCH_SECRET_LEN], struct comch_chan *chan)
{
	return raw_client_on(A.pe, secret, chan);
}

/* The server drops the raw connection within ms (EOF/reset seen). */
static bool raw_dropped(struct comch_chan *chan, uint64_t ms)
{
	uint64_t end = now_ms() + ms;
	struct comch_frame f;

	while (now_ms() < end) {
		doca_error_t st;

		(void)doca_pe_progress(A.pe);
		st = comch_chan_recv(chan, COMCH_MAX_MSG_SIZE, "raw", &f);
		if (st == DOCA_ERROR_CONNECTION_RESET)
			return true;
		if (st == DOCA_SUCCESS && f.type == COMCH_FRAME_BYE)
			return true;
		usleep(100);
	}
	return false;
}

/* A queue as a consumer makes it, optionally spoiled: bell[1] is the
 * doorbell handed to the producer, bell[0] the consumer's end. */
struct raw_queue {
	int memfd, bell[2];
	uint8_t *map;
	size_t len;
};

static void raw_queue_make(struct raw_queue *q, uint32_t slots, uint32_t slot_size, bool seal, size_t extra)
{
	struct comch_queue_hdr *h;

	q->len = comch_queue_size(slots, slot_size);
	q->memfd = memfd_create("raw-queue", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	assert_true(q->memfd >= 0);
	assert_int_equal(ftruncate(q->memfd, (off_t)(q->len + extra)), 0);
	if (seal)
		assert_int_equal(fcntl(q->memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW), 0);
	q->map = mmap(NULL, q->len, PROT_READ | PROT_WRITE, MAP_SHARED, q->memfd, 0);
	assert_true(q->map != MAP_FAILED);
	h = (struct comch_queue_hdr *)(void *)q->map;
	h->magic = COMCH_QUEUE_MAGIC;
	h->version = COMCH_QUEUE_VERSION;
	h->slots = slots;
	h->slot_size = slot_size;
	h->imm_max = IMM_LEN;
	assert_int_equal(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, q->bell), 0);
}

static void raw_queue_free(struct raw_queue *q)
{
	munmap(q->map, q->len);
	close(q->memfd);
	close(q->bell[0]);
	close(q->bell[1]);
}

static void raw_announce(struct comch_chan *chan, uint32_t id, uint32_t slots, uint32_t slot_size, int fd0, int fd1,
			 unsigned int nfds)
{
	uint8_t p[COMCH_CONSUMER_NEW_LEN];
	int fds[2] = {fd0, fd1};

	comch_consumer_new_encode(p, id, slots, slot_size, IMM_LEN);
	assert_int_equal(comch_chan_send_fds(chan, COMCH_FRAME_CONSUMER_NEW, p, sizeof(p), fds, nfds), DOCA_SUCCESS);
}

/* One spoiled announcement: the connection is dropped, no event fires. */
static void hostile_case(int variant)
{
	uint8_t secret[COMCH_SECRET_LEN];
	struct comch_chan chan;
	struct raw_queue q;
	int pipefd[2];
	int c0 = A.connects;

	raw_client(secret, &chan);
	assert_true(progress_until(A.pe, &A.connects, c0 + 1, 3000));
	raw_queue_make(&q, 4, 64, variant != 1, variant == 2 ? 4096 : 0);
	assert_int_equal(pipe2(pipefd, O_CLOEXEC), 0);
	switch (variant) {
	case 0: /* no descriptors at all */
		raw_announce(&chan, 5, 4, 64, -1, -1, 0);
		break;
	case 1: /* not sealed: could shrink under the mapping */
	case 2: /* not the announced size */
		raw_announce(&chan, 5, 4, 64, q.memfd, q.bell[1], 2);
		break;
	case 3: /* a pipe for the doorbell */
		raw_announce(&chan, 5, 4, 64, q.memfd, pipefd[1], 2);
		break;
	case 4: /* header says other dimensions */
		raw_announce(&chan, 5, 2, 128, q.memfd, q.bell[1], 2);
		break;
	case 5: { /* a MSG carrying a descriptor */
		int fds[1] = {q.bell[1]};

		assert_int_equal(comch_chan_send_fds(&chan, COMCH_FRAME_MSG, "x", 1, fds, 1), DOCA_SUCCESS);
		break;
	}
	case 6: { /* retiring a consumer never announced */
		uint8_t p[4] = {9, 0, 0, 0};

		assert_int_equal(comch_chan_send(&chan, COMCH_FRAME_CONSUMER_GONE, p, 4), DOCA_SUCCESS);
		break;
	}
	case 7: { /* an eventfd for the doorbell: its owner can make writes block */
		int evfd = eventfd(0, EFD_CLOEXEC);

		assert_true(evfd >= 0);
		raw_announce(&chan, 5, 4, 64, q.memfd, evfd, 2);
		close(evfd);
		break;
	}
	case 8: { /* a stream socket for the doorbell */
		int sp[2];

		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
		raw_announce(&chan, 5, 4, 64, q.memfd, sp[1], 2);
		close(sp[0]);
		close(sp[1]);
		break;
	}
	default:
		fail();
	}
	assert_true(raw_dropped(&chan, 3000));
	assert_int_equal(A.new_consumers, 0);
	close(pipefd[0]);
	close(pipefd[1]);
	raw_queue_free(&q);
	comch_chan_fini(&chan);
}

static void test_hostile_frames(void **state)
{
	struct comch_remote_consumer *unused = NULL;
	uint8_t secret[COMCH_SECRET_LEN];
	struct comch_chan chan;
	struct raw_queue q;
	int fds_before;

	(void)state;
	(void)unused;
	side_server_open();
	/* Warm up whatever the library opens once. */
	hostile_case(0);
	fds_before = count_fds();
	for (int v = 0; v <= 8; v++)
		hostile_case(v);
	assert_int_equal(A.new_consumers, 0);
	assert_int_equal(count_fds(), fds_before); /* every descriptor they sent was closed */

	/* A proper announcement, then a queue that lies about its credits: the
	 * producer's task fails, nothing is written out of bounds. */
	fds_before = A.connects;
	raw_client(secret, &chan);
	assert_true(progress_until(A.pe, &A.connects, fds_before + 1, 3000));
	raw_queue_make(&q, 4, BUF_SIZE, true, 0);
	raw_announce(&chan, 5, 4, BUF_SIZE, q.memfd, q.bell[1], 2);
	assert_true(progress_until(A.pe, &A.new_consumers, 1, 3000));
	assert_int_equal(A.remote_id, 5);
	producer_open();
	assert_int_equal(producer_send(0, 200), DOCA_ERROR_AGAIN); /* nothing posted yet: AGAIN throughout */
	atomic_store(&((struct comch_queue_hdr *)(void *)q.map)->posted, 1000u);
	assert_int_equal(producer_send(1, 1000), DOCA_SUCCESS);
	assert_true(progress_until(producer_pe, &A.send_errors, 1, 2000));
	/* An honest credit with a cap smaller than the message. */
	atomic_store(&((struct comch_queue_hdr *)(void *)q.map)->posted, 1u);
	*(uint32_t *)(void *)(q.map + comch_queue_cap_off()) = 0;
	assert_int_equal(producer_send(2, 1000), DOCA_SUCCESS);
	assert_true(progress_until(producer_pe, &A.send_errors, 2, 2000));
	/* An unknown consumer id is refused at submit. */
	A.remote_id = 77;
	assert_int_equal(producer_send(3, 100), DOCA_ERROR_NOT_FOUND);
	/* Retire it: the expired event names it. */
	{
		uint8_t p[4] = {5, 0, 0, 0};

		assert_int_equal(comch_chan_send(&chan, COMCH_FRAME_CONSUMER_GONE, p, 4), DOCA_SUCCESS);
	}
	assert_true(progress_until(A.pe, &A.expired_consumers, 1, 2000));
	assert_int_equal(A.expired_id, 5);
	producer_close();
	raw_queue_free(&q);
	comch_chan_fini(&chan);
	assert_true(progress_until(A.pe, &A.disconnects, A.connects, 3000));
	side_close();
}

/* A hostile producer: the raw peer maps our consumer's queue and writes
 * a slot longer than the posted buffer, then counts more slots than were
 * posted. The task fails, then the consumer; nothing is copied out of
 * bounds. */
static void test_hostile_producer(void **state)
{
	uint8_t secret[COMCH_SECRET_LEN];
	struct comch_queue_hdr *h;
	struct comch_slot *slot;
	struct comch_chan chan;
	struct comch_frame f;
	uint64_t end;
	uint8_t *map;
	size_t len;
	int memfd = -1, bell = -1;

	(void)state;
	side_server_open();
	raw_client(secret, &chan);
	assert_true(progress_until(A.pe, &A.connects, 1, 3000));
	consumer_open(A.pe);
	end = now_ms() + 3000;
	while (memfd < 0) {
		doca_error_t st = comch_chan_recv(&chan, COMCH_MAX_MSG_SIZE, "raw", &f);

		assert_true(now_ms() < end);
		if (st == DOCA_ERROR_AGAIN) {
			(void)doca_pe_progress(A.pe);
			continue;
		}
		assert_int_equal(st, DOCA_SUCCESS);
		assert_int_equal(f.type, COMCH_FRAME_CONSUMER_NEW);
		assert_int_equal(f.nfds, 2);
		assert_int_equal(f.u.consumer.slots, N_BUFS);
		assert_int_equal(f.u.consumer.slot_size, N_BUFS * BUF_SIZE);
		assert_int_equal(f.u.consumer.imm_max, IMM_LEN);
		memfd = f.fds[0];
		bell = f.fds[1];
	}
	len = comch_queue_size(N_BUFS, N_BUFS * BUF_SIZE);
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	assert_true(map != MAP_FAILED);
	h = (struct comch_queue_hdr *)(void *)map;
	assert_int_equal(atomic_load(&h->posted), N_BUFS); /* consumer_open posted them all */
	/* Slot 0 claims more bytes than its buffer (BUF_SIZE) holds. */
	slot = (struct comch_slot *)(void *)(map + comch_queue_slot_off(N_BUFS, N_BUFS * BUF_SIZE, 0));
	slot->len = BUF_SIZE + 1;
	slot->imm_len = 0;
	atomic_store(&h->produced, 1u);
	assert_true(progress_until(A.pe, &A.recv_errors, 1, 2000));
	assert_int_equal(A.received, 0);
	/* Then more slots filled than posted: the consumer stops. */
	atomic_store(&h->produced, 1000u);
	assert_true(progress_until_state(A.pe, doca_comch_consumer_as_ctx(A.consumer), DOCA_CTX_STATE_IDLE, 2000));
	assert_int_equal(A.received, 0);
	assert_int_equal(A.recv_errors, N_BUFS);
	consumer_close(A.pe);
	munmap(map, len);
	close(memfd);
	close(bell);
	comch_chan_fini(&chan);
	side_close();
}

/* Wait up to ms for child pid to exit; its wait status, or -1 (then it
 * was killed). */
static int child_wait(pid_t pid, uint64_t ms)
{
	uint64_t end = now_ms() + ms;
	int status;

	while (now_ms() < end) {
		pid_t got = waitpid(pid, &status, WNOHANG);

		assert_true(got == 0 || got == pid);
		if (got == pid)
			return status;
		usleep(1000);
	}
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return -1;
}

/* A hostile consumer whose doorbell its owner has made block: a blocking
 * eventfd at its largest count (refused: only a datagram socket is a
 * doorbell), or a blocking datagram socket whose queue is full (taken:
 * sends ring it without ever waiting). The producer is in another
 * process, so a blocked one shows as a child that never exits. */
static void doorbell_case(bool use_eventfd)
{
	uint8_t secret[COMCH_SECRET_LEN];
	struct comch_chan chan;
	struct raw_queue q;
	int bell, status;
	pid_t pid;

	memset(&A, 0, sizeof(A));
	A.dev = open_dev_n(0);
	assert_non_null(A.dev);
	pid = spawn_child("doorbell-victim");
	assert_true(pid > 0);
	raw_client_on(NULL, secret, &chan);
	raw_queue_make(&q, N_BUFS, BUF_SIZE, true, 0);
	for (uint32_t i = 0; i < N_BUFS; i++)
		*(uint32_t *)(void *)(q.map + comch_queue_cap_off() + i * sizeof(uint32_t)) = BUF_SIZE;
	atomic_store(&((struct comch_queue_hdr *)(void *)q.map)->posted, (uint32_t)N_BUFS);
	if (use_eventfd) {
		uint64_t most = 0xfffffffffffffffeull; /* one more and write() waits */

		bell = eventfd(0, EFD_CLOEXEC); /* blocking */
		assert_true(bell >= 0);
		assert_int_equal(write(bell, &most, sizeof(most)), sizeof(most));
	} else {
		bell = dup(q.bell[1]);
		assert_true(bell >= 0);
		while (send(bell, "x", 1, MSG_DONTWAIT) == 1)
			; /* until the consumer's end holds no more */
		assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
		/* O_NONBLOCK off on the file the producer gets. */
		assert_int_equal(fcntl(bell, F_SETFL, fcntl(bell, F_GETFL) & ~O_NONBLOCK), 0);
	}
	raw_announce(&chan, 5, N_BUFS, BUF_SIZE, q.memfd, bell, 2);
	status = child_wait(pid, 15000);
	if (status == -1) {
		dir_clear(); /* the killed server's files */
		fail_msg("the producer blocked on a doorbell its peer controls");
	}
	assert_true(WIFEXITED(status));
	if (use_eventfd) {
		assert_int_equal(WEXITSTATUS(status), VICTIM_REFUSED);
	} else {
		assert_int_equal(WEXITSTATUS(status), VICTIM_SENT);
		assert_int_equal(atomic_load(&((struct comch_queue_hdr *)(void *)q.map)->produced), N_BUFS);
	}
	close(bell);
	raw_queue_free(&q);
	comch_chan_fini(&chan);
	assert_int_equal(doca_dev_close(A.dev), DOCA_SUCCESS);
}

static void test_hostile_doorbell(void **state)
{
	(void)state;
	doorbell_case(true);
	doorbell_case(false);
}

/* One process: server and client on one PE, a consumer on the client's
 * connection, a producer on the server's; fds and heap flat. */
static struct side B; /* the client half */

static void cycle_once(struct doca_comch_connection *srv_conn, struct doca_comch_connection *cli_conn, int i)
{
	A.conn = cli_conn;
	consumer_open(A.pe);
	assert_true(progress_until(A.pe, &A.new_consumers, i + 1, 3000));
	A.conn = srv_conn;
	{
		uint8_t *cmem = A.mem;
		struct doca_mmap *cmmap = A.mmap;
		struct doca_buf_inventory *cinv = A.inv;

		producer_open();
		assert_int_equal(producer_send((uint32_t)A.received, 3000), DOCA_SUCCESS);
		assert_true(progress_until(producer_pe, &A.sent, i + 1, 3000));
		producer_close();
		A.mem = cmem;
		A.mmap = cmmap;
		A.inv = cinv;
	}
	assert_true(progress_until(A.pe, &A.received, i + 1, 3000));
	consumer_close(A.pe);
	assert_true(progress_until(A.pe, &A.expired_consumers, i + 1, 3000));
}

static void cli_on_new(struct doca_comch_event_consumer *ev, struct doca_comch_connection *conn, uint32_t id)
{
	on_new_consumer(ev, conn, id);
}

/* Server and a client of ours on A.pe; the client's connection. */
static struct doca_comch_connection *pair_open(void)
{
	struct doca_comch_connection *cli_conn;

	side_server_open();
	assert_int_equal(doca_comch_client_create(A.dev, NAME, &A.client), DOCA_SUCCESS);
	assert_int_equal(doca_comch_client_task_send_set_conf(A.client, on_send, on_send, 4), DOCA_SUCCESS);
	assert_int_equal(doca_comch_client_event_consumer_register(A.client, cli_on_new, on_expired_consumer),
			 DOCA_SUCCESS);
	assert_int_equal(doca_pe_connect_ctx(A.pe, doca_comch_client_as_ctx(A.client)), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_start(doca_comch_client_as_ctx(A.client)), DOCA_ERROR_IN_PROGRESS);
	assert_true(progress_until_state(A.pe, doca_comch_client_as_ctx(A.client), DOCA_CTX_STATE_RUNNING, 3000));
	assert_true(progress_until(A.pe, &A.connects, 1, 3000));
	assert_int_equal(doca_comch_client_get_connection(A.client, &cli_conn), DOCA_SUCCESS);
	return cli_conn;
}

static void pair_close(void)
{
	(void)doca_ctx_stop(doca_comch_client_as_ctx(A.client));
	assert_true(progress_until_state(A.pe, doca_comch_client_as_ctx(A.client), DOCA_CTX_STATE_IDLE, 3000));
	assert_int_equal(doca_comch_client_destroy(A.client), DOCA_SUCCESS);
	A.client = NULL;
	side_close();
}

static void test_cycles_flat(void **state)
{
	const int warm = 5, cycles = 100;
	struct doca_comch_connection *cli_conn, *srv_conn;
	size_t heap_before;
	int fds_before;

	(void)state;
	(void)B;
	cli_conn = pair_open();
	srv_conn = A.conn;
	for (int i = 0; i < warm; i++)
		cycle_once(srv_conn, cli_conn, i);
	fds_before = count_fds();
	heap_before = mallinfo2().uordblks;
	for (int i = warm; i < warm + cycles; i++)
		cycle_once(srv_conn, cli_conn, i);
	assert_int_equal(count_fds(), fds_before);
	assert_true(mallinfo2().uordblks < heap_before + 16 * 1024);
	assert_int_equal(A.bad, 0);
	pair_close();
}

static bool handle_readable(struct doca_pe *pe, int ms)
{
	doca_notification_handle_t h;
	struct pollfd pfd;

	assert_int_equal(doca_pe_get_notification_handle(pe, &h), DOCA_SUCCESS);
	pfd = (struct pollfd){.fd = (int)h, .events = POLLIN};
	return poll(&pfd, 1, ms) == 1;
}

/* A consumer's PE, armed and asleep, is woken by a producer's send. */
static void test_notification(void **state)
{
	struct doca_comch_connection *cli_conn, *srv_conn;
	doca_notification_handle_t h;
	struct doca_pe *cpe;

	(void)state;
	cli_conn = pair_open();
	srv_conn = A.conn;
	assert_int_equal(doca_pe_create(&cpe), DOCA_SUCCESS);
	A.conn = cli_conn;
	consumer_open(cpe);
	assert_true(progress_until(A.pe, &A.new_consumers, 1, 3000));
	while (doca_pe_progress(cpe) != 0)
		;
	assert_int_equal(doca_pe_get_notification_handle(cpe, &h), DOCA_SUCCESS);
	assert_int_equal(doca_pe_request_notification(cpe), DOCA_SUCCESS);
	assert_false(handle_readable(cpe, 0));
	A.conn = srv_conn;
	{
		uint8_t *cmem = A.mem;
		struct doca_mmap *cmmap = A.mmap;
		struct doca_buf_inventory *cinv = A.inv;

		producer_open();
		assert_int_equal(producer_send(0, 3000), DOCA_SUCCESS);
		assert_true(progress_until(producer_pe, &A.sent, 1, 3000));
		assert_true(handle_readable(cpe, 2000));
		producer_close();
		A.mem = cmem;
		A.mmap = cmmap;
		A.inv = cinv;
	}
	assert_int_equal(doca_pe_clear_notification(cpe, h), DOCA_SUCCESS);
	assert_true(progress_until(cpe, &A.received, 1, 2000));
	assert_int_equal(A.bad, 0);
	consumer_close(cpe);
	assert_int_equal(doca_pe_destroy(cpe), DOCA_SUCCESS);
	pair_close();
}

/* A client on another emulated PCI function does not reach the server
 * bound to function 0's representor; one on function 0 does. */
static void test_other_function_unreached(void **state)
{
	struct doca_dev *other = open_dev_n(1);
	struct doca_comch_client *cli;
	struct doca_pe *pe;
	uint64_t end;
	enum doca_ctx_states st;

	(void)state;
	if (other == NULL) {
		skip(); /* one soft device only: no second function */
		return;
	}
	side_server_open();
	assert_int_equal(doca_pe_create(&pe), DOCA_SUCCESS);
	assert_int_equal(doca_comch_client_create(other, NAME, &cli), DOCA_SUCCESS);
	assert_int_equal(doca_pe_connect_ctx(pe, doca_comch_client_as_ctx(cli)), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_start(doca_comch_client_as_ctx(cli)), DOCA_ERROR_IN_PROGRESS);
	end = now_ms() + 500;
	while (now_ms() < end) {
		(void)doca_pe_progress(pe);
		(void)doca_pe_progress(A.pe);
		usleep(500);
	}
	assert_int_equal(doca_ctx_get_state(doca_comch_client_as_ctx(cli), &st), DOCA_SUCCESS);
	assert_int_equal(st, DOCA_CTX_STATE_STARTING);
	assert_int_equal(A.connects, 0);
	(void)doca_ctx_stop(doca_comch_client_as_ctx(cli));
	assert_true(progress_until_state(pe, doca_comch_client_as_ctx(cli), DOCA_CTX_STATE_IDLE, 3000));
	assert_int_equal(doca_comch_client_destroy(cli), DOCA_SUCCESS);
	assert_int_equal(doca_pe_destroy(pe), DOCA_SUCCESS);
	assert_int_equal(doca_dev_close(other), DOCA_SUCCESS);
	/* The same server is there for function 0's own client. */
	assert_int_equal(doca_comch_client_create(A.dev, NAME, &cli), DOCA_SUCCESS);
	assert_int_equal(doca_pe_connect_ctx(A.pe, doca_comch_client_as_ctx(cli)), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_start(doca_comch_client_as_ctx(cli)), DOCA_ERROR_IN_PROGRESS);
	assert_true(progress_until(A.pe, &A.connects, 1, 3000));
	(void)doca_ctx_stop(doca_comch_client_as_ctx(cli));
	assert_true(progress_until_state(A.pe, doca_comch_client_as_ctx(cli), DOCA_CTX_STATE_IDLE, 3000));
	assert_int_equal(doca_comch_client_destroy(cli), DOCA_SUCCESS);
	side_close();
}

/* The DPA consumer completion (DOCA's "consumer creation on DPA" calls,
 * DOCA 3.x's imm_data_len pair among them): no DPA on a soft device, so each
 * answers NOT_SUPPORTED and leaves its outputs alone. */
static void test_dpa_consumer_completion_refused(void **state)
{
	struct doca_comch_consumer_completion *comp = NULL;
	const struct doca_comch_consumer_completion *ccomp = NULL;
	uint32_t v = 7;

	(void)state;
	assert_int_equal(doca_comch_consumer_completion_create(&comp), DOCA_ERROR_NOT_SUPPORTED);
	assert_null(comp);
	assert_int_equal(doca_comch_consumer_completion_set_imm_data_len(comp, 16), DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(doca_comch_consumer_completion_get_imm_data_len(ccomp, &v), DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(doca_comch_consumer_completion_get_max_num_consumers(ccomp, &v), DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(doca_comch_consumer_completion_get_max_num_recv(ccomp, &v), DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(v, 7);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_two_process_ordered, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_killed_client, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_announced_at_start, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_killed_server, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_hostile_frames, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_hostile_producer, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_hostile_doorbell, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_cycles_flat, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_notification, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_other_function_unreached, setup_dir, teardown_dir),
		cmocka_unit_test(test_dpa_consumer_completion_refused),
	};

	signal(SIGPIPE, SIG_IGN);
	if (argc == 3 && strcmp(argv[1], "--child") == 0)
		return child_main(argv[2]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
