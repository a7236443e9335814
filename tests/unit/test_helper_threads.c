/*
 * softdoca issue 20, item 7: the four process-wide reasons to wake a PE
 * (the PE stall monitor, fault injection's wake timer, the Comch socket
 * watcher, the sync event watcher) share one helper thread, Core's waker.
 * The threads of the process are counted in /proc/self/task as each use
 * starts: one more than before the first, and no more after the others;
 * each use is then seen working (the PE asleep on its notification handle
 * is woken for the delayed write and for the sync event value), and when
 * everything is gone the thread is gone too.
 *
 * Run over the loopback engine (meson.build sets it): UCX's engine has
 * threads of its own, which would blur the count. ThreadSanitizer starts
 * a thread of its own with the process's first one: under it, the first
 * step counts at least one more.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ThreadSanitizer (gcc says so one way, clang another). */
#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif
#ifndef UNDER_TSAN
#define UNDER_TSAN 0
#endif

#include <doca_comch.h>
#include <doca_dev.h>
#include <doca_sync_event.h>
#include <softdoca_fault.h>

#include "rdma_pair.h"

#define MEM_SIZE 4096

static _Alignas(64) char mem[MEM_SIZE];
static _Alignas(64) char src_mem[64];
static int done_count;
static int wait_done;
static uint64_t cell;

void rdma_pair_task_done(struct doca_task *task, bool ok, union doca_data ctx_user_data)
{
	(void)ctx_user_data;
	assert_true(ok);
	doca_task_free(task);
	done_count++;
}

/* Threads of this process; with name, only those named so. */
static int threads(const char *name)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		char path[300], comm[32] = "";
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		if (name == NULL) {
			n++;
			continue;
		}
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		if (fgets(comm, sizeof(comm), f) != NULL && strncmp(comm, name, strlen(name)) == 0)
			n++;
		fclose(f);
	}
	closedir(d);
	return n;
}

static void pause_ms(unsigned int ms)
{
	const struct timespec t = {.tv_sec = 0, .tv_nsec = (long)ms * 1000000L};

	nanosleep(&t, NULL);
}

/* ---- Comch: a server context running on pe ------------------------------------ */

static struct doca_dev_rep *server_rep(void)
{
	char pci[DOCA_DEVINFO_PCI_ADDR_SIZE];
	struct doca_devinfo_rep **list;
	struct doca_dev_rep *rep = NULL;
	uint32_t n;

	assert_ok(doca_devinfo_get_pci_addr_str(doca_dev_as_devinfo(dev), pci));
	assert_ok(doca_devinfo_rep_create_list(dev, DOCA_DEVINFO_REP_FILTER_NET, &list, &n));
	for (uint32_t i = 0; i < n && rep == NULL; i++) {
		uint8_t eq = 0;

		if (doca_devinfo_rep_is_equal_pci_addr(list[i], pci, &eq) == DOCA_SUCCESS && eq)
			assert_ok(doca_dev_rep_open(list[i], &rep));
	}
	assert_ok(doca_devinfo_rep_destroy_list(list));
	assert_non_null(rep);
	return rep;
}

static void srv_recv(struct doca_comch_event_msg_recv *ev, uint8_t *buf, uint32_t len,
		     struct doca_comch_connection *conn)
{
	(void)ev;
	(void)buf;
	(void)len;
	(void)conn;
}

static void srv_conn(struct doca_comch_event_connection_status_changed *ev, struct doca_comch_connection *conn,
		     uint8_t ok)
{
	(void)ev;
	(void)conn;
	(void)ok;
}

static void srv_sent(struct doca_comch_task_send *task, union doca_data tu, union doca_data cu)
{
	(void)tu;
	(void)cu;
	doca_task_free(doca_comch_task_send_as_task(task));
}

/* ---- sync event: a wait on caller memory, parked ------------------------------ */

static void on_wait(struct doca_sync_event_task_wait_eq *task, union doca_data tu, union doca_data cu)
{
	(void)tu;
	(void)cu;
	wait_done++;
	doca_task_free(doca_sync_event_task_wait_eq_as_doca_task(task));
}

/* Progress only when the PE's notification handle says so (the shared
 * fixture), until *counter reaches want. */
static void sleep_until(const int *counter, int want)
{
	assert_true(progress_notified_until(counter, want, 5000, NULL));
}

/* Stop ctx and progress until it is IDLE. */
static void stop_ctx(struct doca_ctx *ctx)
{
	enum doca_ctx_states st = DOCA_CTX_STATE_RUNNING;

	(void)doca_ctx_stop(ctx);
	for (int i = 0; i < 1000000 && st != DOCA_CTX_STATE_IDLE; i++) {
		assert_ok(doca_ctx_get_state(ctx, &st));
		if (st != DOCA_CTX_STATE_IDLE)
			(void)doca_pe_progress(pe);
	}
	assert_int_equal(st, DOCA_CTX_STATE_IDLE);
}

static void test_one_thread_for_all(void **state)
{
	struct doca_comch_server *server;
	struct doca_dev_rep *rep;
	struct doca_sync_event *ev;
	struct doca_sync_event_task_wait_eq *wt;
	struct doca_rdma_task_write *wr;
	struct doca_mmap *local_mm, *mine_mm, *remote_mm;
	struct doca_buf *src, *dst;
	const struct side_conf conf = {ALL_RDMA_PERMS, 7, 0, 0};
	union doca_data ud = {.u64 = 0};
	char dir[] = "/tmp/softdoca-helper-XXXXXX";
	uint64_t t0, delayed = 0;
	int before, with;

	(void)state;
	assert_int_equal(threads("softdoca-waker"), 0);
	before = threads(NULL);

	/* The stall monitor: the first PE (rdma_pair_setup makes it). */
	assert_int_equal(rdma_pair_setup(), 0);
	with = threads(NULL);
#if UNDER_TSAN
	assert_true(with >= before + 1); /* TSan starts its own thread with the first one */
#else
	assert_int_equal(with, before + 1);
#endif
	assert_int_equal(threads("softdoca-waker"), 1);

	/* Fault injection: a write held 200 ms, its PE woken when it is due. */
	assert_ok(softdoca_fault_set("write:delay=fixed:200ms"));
	side_create(&A);
	side_create(&B);
	side_apply_conf(&A, &conf);
	side_apply_conf(&B, &conf);
	side_conf_tasks(&A, 4, false);
	side_conf_tasks(&B, 4, false);
	side_start_export(&A);
	side_start_export(&B);
	pair_connect();
	local_mm = local_mmap(mem, sizeof(mem), ALL_RDMA_PERMS);
	mine_mm = local_mmap(src_mem, sizeof(src_mem), ALL_RDMA_PERMS);
	remote_mm = remote_of(local_mm);
	memcpy(src_mem, "eightbyt", 8);
	src = buf_on(mine_mm, src_mem, 8, 8);
	dst = buf_on(remote_mm, mem, 8, 0);
	assert_ok(doca_rdma_task_write_allocate_init(A.rdma, A.conn, src, dst, ud, &wr));
	t0 = now_ms();
	assert_ok(doca_task_submit(doca_rdma_task_write_as_task(wr)));
	assert_int_equal(threads(NULL), with);

	/* Comch: a running server watches its listening socket. */
	assert_non_null(mkdtemp(dir));
	assert_int_equal(setenv("SOFTDOCA_PCIE_DIR", dir, 1), 0);
	rep = server_rep();
	assert_ok(doca_comch_server_create(dev, rep, "helper_threads", &server));
	assert_ok(doca_comch_server_task_send_set_conf(server, srv_sent, srv_sent, 4));
	assert_ok(doca_comch_server_event_msg_recv_register(server, srv_recv));
	assert_ok(doca_comch_server_event_connection_status_changed_register(server, srv_conn, srv_conn));
	assert_ok(doca_pe_connect_ctx(pe, doca_comch_server_as_ctx(server)));
	assert_ok(doca_ctx_start(doca_comch_server_as_ctx(server)));
	assert_int_equal(threads(NULL), with);

	/* The sync event watcher: a wait on caller memory, parked. */
	cell = 7;
	assert_ok(doca_sync_event_create(&ev));
	assert_ok(doca_sync_event_add_publisher_location_cpu(ev, dev));
	assert_ok(doca_sync_event_add_subscriber_location_cpu(ev, dev));
	assert_ok(doca_sync_event_set_addr(ev, &cell));
	assert_ok(doca_pe_connect_ctx(pe, doca_sync_event_as_ctx(ev)));
	assert_ok(doca_sync_event_task_wait_eq_set_conf(ev, on_wait, on_wait, 4));
	assert_ok(doca_ctx_start(doca_sync_event_as_ctx(ev)));
	assert_ok(doca_sync_event_task_wait_eq_alloc_init(ev, 8, UINT64_MAX, ud, &wt));
	assert_ok(doca_task_submit(doca_sync_event_task_wait_eq_as_doca_task(wt)));
	progress_rounds(10);
	assert_int_equal(wait_done, 0);

	/* All four at once: still one helper thread. */
	assert_int_equal(threads(NULL), with);
	assert_int_equal(threads("softdoca-waker"), 1);

	/* And they work: asleep on the handle, the PE is woken for the held
	 * write (fault timer) and for the value (sync event watcher). */
	sleep_until(&done_count, 1);
	assert_true(now_ms() - t0 >= 200);
	assert_ok(softdoca_fault_get_count(SOFTDOCA_FAULT_DELAYED, &delayed));
	assert_int_equal(delayed, 1);
	assert_memory_equal(mem, "eightbyt", 8);
	__atomic_store_n(&cell, 8, __ATOMIC_SEQ_CST);
	sleep_until(&wait_done, 1);

	/* Everything gone: so is the thread. */
	stop_ctx(doca_sync_event_as_ctx(ev));
	assert_ok(doca_sync_event_destroy(ev));
	stop_ctx(doca_comch_server_as_ctx(server));
	assert_ok(doca_comch_server_destroy(server));
	assert_ok(doca_dev_rep_close(rep));
	put(src);
	put(dst);
	side_destroy(&A);
	side_destroy(&B);
	assert_ok(doca_mmap_destroy(remote_mm));
	assert_ok(doca_mmap_destroy(mine_mm));
	assert_ok(doca_mmap_destroy(local_mm));
	softdoca_fault_clear();
	rdma_pair_teardown();
	for (int i = 0; i < 5000 && (threads("softdoca-waker") != 0 || threads(NULL) != with - 1); i++)
		pause_ms(1);
	assert_int_equal(threads("softdoca-waker"), 0);
	assert_int_equal(threads(NULL), with - 1);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_thread_for_all),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
