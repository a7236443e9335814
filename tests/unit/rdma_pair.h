/*
 * What the RDMA unit tests (test_rdma.c, test_rdma_loopback.c,
 * test_fault.c, test_fault_cm.c) share, so that each keeps only its own
 * cases: SDK log capture, the soft loopback device with one PE and one
 * buf inventory, mmaps and buffers over test memory, the two contexts A
 * and B ("sides") a test configures, starts and connects to each other,
 * progress (busy, or asleep on the PE's notification handle), and the
 * task and connection callbacks. Each test says what a
 * task completion means to it by defining rdma_pair_task_done().
 *
 * The short names are the ones these tests have always used; they live in
 * test programs only.
 */
#ifndef TEST_RDMA_PAIR_H_
#define TEST_RDMA_PAIR_H_

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <doca_buf.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_mmap.h>
#include <doca_pe.h>
#include <doca_rdma.h>

/* ---- SDK log capture (TEST_RDMA_VERBOSE=1 also prints the lines) ------- */

/* Atomic: the library may log from its own threads. */
extern _Atomic int error_lines;   /* ERROR lines the library logged so far */
extern _Atomic int warning_lines; /* WARN lines the library logged so far */
extern char last_error[]; /* the last ERROR line */
/* ERROR lines holding error_needle (set by the test; NULL counts none). */
extern const char *_Atomic error_needle;
extern _Atomic int error_needle_lines;
/* The last WARN line, copied into out (any thread may have logged it). */
void last_warning_copy(char *out, size_t size);

/* The call fails with code and says why in the log. */
#define assert_fails(expr, code) \
	do { \
		int before_ = error_lines; \
		assert_int_equal((expr), (code)); \
		assert_true(error_lines > before_); \
	} while (0)

#define assert_ok(expr) assert_int_equal((expr), DOCA_SUCCESS)

/* ---- shared objects ------------------------------------------------------ */

#define ALL_RDMA_PERMS \
	(DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_READ | DOCA_ACCESS_FLAG_RDMA_WRITE | \
	 DOCA_ACCESS_FLAG_RDMA_ATOMIC)

extern struct doca_dev *dev; /* the soft loopback device (soft_lo) */
extern struct doca_pe *pe;   /* every side's progress engine */

struct side {
	struct doca_rdma *rdma;
	struct doca_ctx *ctx;
	struct doca_rdma_connection *conn;
	const void *desc;
	size_t desc_len;
	int established; /* callbacks: RDMA CM connections only, never export/connect */
	int failed;
	int disconnected;
	/* The connections the last failure and disconnection callbacks named. */
	struct doca_rdma_connection *failed_conn;
	struct doca_rdma_connection *disconnected_conn;
};

extern struct side A, B;

/* Log capture, device, inventory and PE; -1 when there is no device. */
int rdma_pair_setup(void);
void rdma_pair_teardown(void);

/* A started mmap of [addr, addr + len) on dev. */
struct doca_mmap *local_mmap(void *addr, size_t len, uint32_t perms);
/* The same memory seen as a peer sees it: a from-export mmap. */
struct doca_mmap *remote_of(struct doca_mmap *local);

/* ---- buffers ----------------------------------------------------------------- */

/* A buf whose data window is [addr, addr + data_len) inside [addr, addr + len). */
struct doca_buf *buf_on(struct doca_mmap *m, void *addr, size_t len, size_t data_len);
size_t data_len_of(const struct doca_buf *b);
void put(struct doca_buf *b);

/* ---- callbacks ----------------------------------------------------------------- */

/* Defined by each test: one task of A or B completed (ok or not);
 * ctx_user_data is the side whose task it was. */
void rdma_pair_task_done(struct doca_task *task, bool ok, union doca_data ctx_user_data);

#define RDMA_PAIR_TASK_CALLBACKS(T) \
	void on_ok_##T(struct doca_rdma_task_##T *task, union doca_data tu, union doca_data cu); \
	void on_err_##T(struct doca_rdma_task_##T *task, union doca_data tu, union doca_data cu);

RDMA_PAIR_TASK_CALLBACKS(receive)
RDMA_PAIR_TASK_CALLBACKS(send)
RDMA_PAIR_TASK_CALLBACKS(send_imm)
RDMA_PAIR_TASK_CALLBACKS(read)
RDMA_PAIR_TASK_CALLBACKS(write)
RDMA_PAIR_TASK_CALLBACKS(write_imm)
RDMA_PAIR_TASK_CALLBACKS(atomic_cmp_swp)
RDMA_PAIR_TASK_CALLBACKS(atomic_fetch_add)
RDMA_PAIR_TASK_CALLBACKS(remote_net_sync_event_get)
RDMA_PAIR_TASK_CALLBACKS(remote_net_sync_event_notify_set)
RDMA_PAIR_TASK_CALLBACKS(remote_net_sync_event_notify_add)

#undef RDMA_PAIR_TASK_CALLBACKS

/* Count into the side (the context's user data); a disconnect also
 * closes our end, as the DOCA CM samples do, and that must succeed. */
void on_established(struct doca_rdma_connection *conn, union doca_data cud, union doca_data ctxud);
void on_failure(struct doca_rdma_connection *conn, union doca_data cud, union doca_data ctxud);
void on_disconnect(struct doca_rdma_connection *conn, union doca_data cud, union doca_data ctxud);

/* ---- contexts and progress ------------------------------------------------------- */

uint64_t now_ms(void);
/* Progress until *counter reaches want; false after 10 s. */
bool progress_until(const int *counter, int want);
/* The same for a program that sleeps: progress only when the PE's
 * notification handle (epoll) says so, until *counter reaches want;
 * false after timeout_ms. *wakeups (may be NULL) counts the wake-ups. */
bool progress_notified_until(const int *counter, int want, uint32_t timeout_ms, int *wakeups);

/* s zeroed, then a new context on dev whose user data is s, on pe. */
void side_create(struct side *s);

/* How a side is configured before start. */
struct side_conf {
	uint32_t permissions;
	uint8_t rnr_retry; /* 7: for ever */
	uint32_t send_queue_size; /* 0: the library's default */
	uint32_t buf_list_len;	  /* send and receive; 0: the library's default */
};

/* Apply c to a side made by side_create. */
void side_apply_conf(struct side *s, const struct side_conf *c);
/* The task pools of s, num_tasks each (the remote sync event tasks too
 * when sync_event_tasks), and the connection callbacks above. */
void side_conf_tasks(struct side *s, uint32_t num_tasks, bool sync_event_tasks);
enum doca_ctx_states state_of(const struct side *s);
/* A fixed number of progress rounds: for checks that nothing happens. */
void progress_rounds(int n);
/* Start s (it must reach RUNNING) and export its first connection. */
void side_start_export(struct side *s);
/* Stop s and progress until it is IDLE (fails after 10 s); no-op once destroyed. */
void side_stop(struct side *s);
void side_destroy(struct side *s);
/* Test seam (rdma_pair.c says why): the connection is established, as
 * the library's state says; DOCA gives no event for an export/connect one. */
bool conn_is_up(const struct doca_rdma_connection *conn);
/* Progress until conn_is_up(conn); false after 10 s. */
bool progress_until_up(const struct doca_rdma_connection *conn);
/* Connect A's and B's exported connections and progress until both are
 * up; neither side's established callback runs (it is RDMA CM's only). */
void pair_connect(void);

struct doca_rdma_task_receive *post_receive(struct side *s, struct doca_buf *dst);

#endif /* TEST_RDMA_PAIR_H_ */
