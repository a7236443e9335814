/*
 * softdoca RDMA samples: the part every RDMA sample shares, and the entry
 * function of each sample.
 *
 * Each sample directory holds <name>_main.c, which reads the command line
 * into struct rdma_config (rdma_cmdline_parse) and calls the sample's entry
 * function, doca_error_t <name>(struct rdma_config *cfg), in <name>_sample.c.
 * An entry function takes plain C data, returns what went wrong and never
 * exits the process, so a program in another language can fill the
 * configuration (rdma_config_set_defaults first) and call it; such a
 * caller sets up logging with sample_log_init() (../../common.h).
 *
 * A sample describes itself once (struct sample_desc: its role, what it
 * gives to or needs from its peer, the permissions it grants, the tasks it
 * configures) and calls sample_run(). The shared code then does what every
 * DOCA RDMA sample does, in this order:
 *
 *   open the device named by -d          (a wrong name lists the devices)
 *   create the mmap, PE, RDMA context    (permissions, -g, -tt, -nc)
 *   desc->configure()                    (the program's task pools)
 *   start the context
 *   connect to the peer                  descriptor files and Enter, or RDMA CM
 *   hand over the mmap / sync event      -m file, or a send/receive over CM
 *   desc->run()                          (the program submits its tasks)
 *   progress until sample_finish()       (bounded: SAMPLE_PEER_TIMEOUT_SEC)
 *   disconnect, stop, tear down, delete the descriptor files it used
 *
 * Every wait for the peer is bounded: a side started alone, or given stale
 * descriptor files, gives up after SAMPLE_PEER_TIMEOUT_SEC seconds and says
 * what it was waiting for; an RDMA CM side whose peers all left gives up
 * two seconds later. Waits for the user (Enter) are not bounded, but a
 * closed standard input is reported instead of spinning.
 */
#ifndef RDMA_COMMON_H_
#define RDMA_COMMON_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_mmap.h>
#include <doca_pe.h>
#include <doca_rdma.h>
#include <doca_sync_event.h>

#include "common.h"

#define SAMPLE_DEFAULT_STRING "Hi DOCA RDMA!"
#define SAMPLE_DEFAULT_LOCAL_DESC_PATH "/tmp/local_connection_desc_path.txt"
#define SAMPLE_DEFAULT_REMOTE_DESC_PATH "/tmp/remote_connection_desc_path.txt"
#define SAMPLE_DEFAULT_RESOURCE_DESC_PATH "/tmp/remote_resource_desc_path.txt"
#define SAMPLE_DEFAULT_CM_PORT 13579

#define SAMPLE_STRING_MAX 256		/* longest -s/-r/-w string, without its NUL */
#define SAMPLE_MSG_LEN (SAMPLE_STRING_MAX + 1) /* one string with its NUL */
#define SAMPLE_PATH_MAX 1024		/* longest descriptor file path */
#define SAMPLE_FILE_MAX (SAMPLE_PATH_MAX + 16) /* a path with a "-0000" connection suffix */
#define SAMPLE_ADDR_MAX 128		/* longest -sa address */
#define SAMPLE_MAX_CONNECTIONS 8	/* largest -nc */
#define SAMPLE_MEM_LEN 4096		/* bytes of local memory each sample registers */
#define SAMPLE_PEER_TIMEOUT_SEC 60	/* longest wait for the peer, in seconds
					 * (SOFTDOCA_SAMPLE_TIMEOUT overrides it) */

/* Values both sides of a pair agree on. */
#define SAMPLE_IMMEDIATE_VALUE 0xABCDu	  /* *_immediate: raw 32 bits, as DOCA's samples send */
#define SAMPLE_SYNC_SIGNAL 0xD0CAu	  /* sync_event: the requester's signal; the answer is +1 */
#define SAMPLE_SYNC_DONE UINT64_MAX	  /* sync_event: the requester's "finished" */
#define SAMPLE_ATOMIC_START 100u	  /* atomic: the responder's starting value */
#define SAMPLE_ATOMIC_SWAP 1000u	  /* atomic: what compare-and-swap puts in its place */
#define SAMPLE_ATOMIC_ADD 23u		  /* atomic: what fetch-and-add adds */

/* Optional flags a program adds to the shared ones. */
enum sample_flag {
	SAMPLE_FLAG_SEND_STRING = 1u << 0,     /* -s/--send-string */
	SAMPLE_FLAG_READ_STRING = 1u << 1,     /* -r/--read-string */
	SAMPLE_FLAG_WRITE_STRING = 1u << 2,    /* -w/--write-string */
	SAMPLE_FLAG_NUM_CONNECTIONS = 1u << 3, /* -nc/--num-connections */
};

/* What a sample is told: the command line, or a caller's settings. */
struct rdma_config {
	char device[DOCA_DEVINFO_IFACE_NAME_SIZE];	 /* -d: ibdev or interface name */
	bool gid_index_set;				 /* -g given */
	uint32_t gid_index;				 /* -g */
	char local_desc_path[SAMPLE_PATH_MAX];		 /* -ld: this side's connection descriptor */
	char remote_desc_path[SAMPLE_PATH_MAX];		 /* -re: the peer's connection descriptor */
	char resource_desc_path[SAMPLE_PATH_MAX];	 /* -m: the mmap / sync event descriptor */
	enum doca_rdma_transport_type transport;	 /* -tt */
	bool use_cm;					 /* -cm */
	uint16_t cm_port;				 /* -lp */
	char server_addr[SAMPLE_ADDR_MAX + 1];		 /* -sa: set makes this side the CM client */
	enum doca_rdma_addr_type server_addr_type;	 /* -sat */
	char send_string[SAMPLE_MSG_LEN];		 /* -s */
	char read_string[SAMPLE_MSG_LEN];		 /* -r */
	char write_string[SAMPLE_MSG_LEN];		 /* -w */
	uint32_t num_connections;			 /* -nc */
};

/* What a program does with the peer's memory or sync event descriptor. */
enum sample_resource {
	SAMPLE_RESOURCE_NONE,  /* two-sided only: nothing to hand over */
	SAMPLE_RESOURCE_OFFER, /* this side exports one (-m file, or a send over CM) */
	SAMPLE_RESOURCE_NEED,  /* this side uses the peer's (-m file, or a receive over CM) */
};

struct sample;

/* A program, described once. */
struct sample_desc {
	const char *me;			  /* "receiver", "responder", ... (for messages) */
	const char *peer;		  /* "sender", "requester", ... */
	bool passive;			  /* writes its descriptor first; in DC never reads the peer's */
	bool multi_conn;		  /* -nc connections, files named <path>-0000, <path>-0001, ... */
	enum sample_resource resource;	  /* what crosses over besides the connection */
	const char *resource_name;	  /* "memory map", "sync event" (for messages) */
	uint32_t mmap_permissions;	  /* of the local memory */
	uint32_t rdma_permissions;	  /* what the peer may do through the connection */
	doca_error_t (*cap_check)(const struct doca_devinfo *devinfo); /* NULL: any device */
	const char *cap_what;		  /* what cap_check checks, e.g. "RDMA send tasks" */

	/* Before start: configure the program's own task types, set
	 * s->num_receive_tasks / s->num_send_tasks, prepare s->mem. */
	doca_error_t (*configure)(struct sample *s);
	/* Connected, peer's descriptor (if needed) in s->peer_desc: submit tasks,
	 * or wait for the user; end with sample_finish(). */
	doca_error_t (*run)(struct sample *s);
	/* Receive and send tasks go through the shared code (RDMA CM hands the
	 * descriptor over with them too); these get the program's own ones. The
	 * shared code frees the task and releases its buffer afterwards. */
	void (*on_receive)(struct sample *s, struct doca_rdma_task_receive *task, doca_error_t status);
	void (*on_send)(struct sample *s, struct doca_rdma_task_send *task, doca_error_t status);
	/* After the context stopped, before teardown: release program objects. */
	void (*cleanup)(struct sample *s);
};

/* One run of a program. Programs read these fields; the shared code owns them. */
struct sample {
	const struct rdma_config *cfg;
	const struct sample_desc *desc;
	void *app; /* the program's own state */

	struct doca_dev *dev;
	struct doca_pe *pe;
	struct doca_rdma *rdma;
	struct doca_ctx *ctx;
	struct doca_buf_inventory *inv;
	struct doca_mmap *mmap; /* over mem */
	char *mem;		/* SAMPLE_MEM_LEN bytes, zeroed, 64-byte aligned */

	bool is_client;	    /* -cm with -sa */
	uint32_t num_conns; /* connections this run uses */
	struct doca_rdma_connection *conns[SAMPLE_MAX_CONNECTIONS];
	uint32_t num_established;
	bool conn_closed[SAMPLE_MAX_CONNECTIONS];
	uint32_t num_requests;

	uint32_t num_receive_tasks; /* set by configure() */
	uint32_t num_send_tasks;    /* set by configure() */

	/* SAMPLE_RESOURCE_OFFER: the descriptor to hand over. The shared code
	 * exports the mmap when configure() leaves it NULL. */
	const void *offer_desc;
	size_t offer_len;
	/* SAMPLE_RESOURCE_NEED: the peer's descriptor, and where it came from. */
	void *peer_desc;
	size_t peer_desc_len;
	char peer_desc_source[SAMPLE_PATH_MAX + 64];
	struct doca_mmap *peer_mmap;		      /* made by sample_peer_mmap() */
	struct doca_sync_event *event;		      /* a program's local sync event */
	struct doca_sync_event_remote_net *peer_event; /* a program's view of the peer's */

	/* Progress. */
	enum doca_ctx_states state;
	bool done;	      /* sample_finish() was called */
	bool stopping;	      /* tearing down: flushed tasks are expected */
	doca_error_t result;  /* first error */
	char waiting_for[160]; /* what the current bounded wait waits for */

	/* RDMA CM descriptor hand-over. */
	struct doca_rdma_addr *cm_addr;
	struct doca_mmap *neg_mmap;
	char *neg_mem;
	bool neg_done;
	bool neg_failed;

	/* Descriptor files this run wrote or read, deleted at exit. */
	char written[2 * SAMPLE_MAX_CONNECTIONS + 1][SAMPLE_FILE_MAX];
	uint32_t num_written;
	char read[2 * SAMPLE_MAX_CONNECTIONS + 1][SAMPLE_FILE_MAX];
	uint32_t num_read;
};

/* The defaults: the values a sample has when no flag is given (the device is empty). */
void rdma_config_set_defaults(struct rdma_config *cfg);

/* sizeof(struct rdma_config), for a caller in another language to check
 * its copy of the layout against. */
size_t rdma_config_size(void);

/*
 * Command line: set up logging as DOCA's samples do (sample_log_init),
 * fill cfg with the defaults, register the shared flags plus the `extra`
 * ones (enum sample_flag) with doca_argp and parse. Call
 * rdma_cmdline_exit() whatever this returns.
 */
doca_error_t rdma_cmdline_parse(int argc, char **argv, unsigned int extra, struct rdma_config *cfg);

/* Release doca_argp, log how the sample finished (sample_report) and
 * return the process exit status. */
int rdma_cmdline_exit(doca_error_t result);

/* The entry functions, one per sample directory (<name>/<name>_sample.c). */
doca_error_t rdma_send(struct rdma_config *cfg);
doca_error_t rdma_receive(struct rdma_config *cfg);
doca_error_t rdma_send_immediate(struct rdma_config *cfg);
doca_error_t rdma_receive_immediate(struct rdma_config *cfg);
doca_error_t rdma_read_requester(struct rdma_config *cfg);
doca_error_t rdma_read_responder(struct rdma_config *cfg);
doca_error_t rdma_write_requester(struct rdma_config *cfg);
doca_error_t rdma_write_responder(struct rdma_config *cfg);
doca_error_t rdma_write_immediate_requester(struct rdma_config *cfg);
doca_error_t rdma_write_immediate_responder(struct rdma_config *cfg);
doca_error_t rdma_sync_event_requester(struct rdma_config *cfg);
doca_error_t rdma_sync_event_responder(struct rdma_config *cfg);
doca_error_t rdma_multi_conn_send(struct rdma_config *cfg);
doca_error_t rdma_multi_conn_receive(struct rdma_config *cfg);
doca_error_t rdma_atomic_requester(struct rdma_config *cfg);
doca_error_t rdma_atomic_responder(struct rdma_config *cfg);

/* Everything a sample does, from its configuration to its result. */
doca_error_t sample_run(const struct rdma_config *cfg, const struct sample_desc *desc, void *app);

/* The program's work is over; the first outcome stands and the main loop stops. */
void sample_finish(struct sample *s, doca_error_t result);

/* A task of the program failed: log it and finish with its status (quietly
 * ignored while stopping, or once the outcome is known). */
void sample_task_failed(struct sample *s, const char *what, doca_error_t status);

/* Describe what the next bounded wait is for (used in the timeout message). */
void sample_expect(struct sample *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Progress the PE until pred() holds, a task failed, or the peer timeout. */
doca_error_t sample_wait_until(struct sample *s, bool (*pred)(struct sample *s, void *arg), void *arg);

/* A buffer over the local memory: [mem+offset, +len), data_len bytes of data. */
doca_error_t sample_local_buf(struct sample *s, size_t offset, size_t len, size_t data_len, struct doca_buf **buf);

/* Turn the peer's memory descriptor into s->peer_mmap (errors name its source). */
doca_error_t sample_peer_mmap(struct sample *s);

/* A buffer over the start of the peer's memory: up to len bytes, data_len of data. */
doca_error_t sample_peer_buf(struct sample *s, size_t len, size_t data_len, struct doca_buf **buf);

/* Submit a receive (dst may be NULL) / a send on connection i (src may be
 * NULL); completions go to desc->on_receive / desc->on_send. On failure
 * the buffer is released. */
doca_error_t sample_post_receive(struct sample *s, struct doca_buf *dst);
doca_error_t sample_post_send(struct sample *s, uint32_t conn_index, struct doca_buf *src);

/* For the program's own task types: release up to two buffers (NULL is
 * fine); log a failed allocation and release its buffers; submit, and on
 * failure log, free the task and release its buffers. `what` names the
 * task ("read", "write with immediate"). */
void sample_release(struct doca_buf *a, struct doca_buf *b);
doca_error_t sample_alloc_failed(const char *what, doca_error_t result, struct doca_buf *a, struct doca_buf *b);
doca_error_t sample_submit(struct doca_task *task, const char *what, struct doca_buf *a, struct doca_buf *b);

/* Index of a connection in s->conns, or s->num_conns when unknown. */
uint32_t sample_conn_index(const struct sample *s, const struct doca_rdma_connection *conn);

/* Memory the peer filled with RDMA writes or atomics and then said, out
 * of band (the user pressed Enter), that it is done with: read it only
 * through these. The ordering runs through the peer process, which
 * ThreadSanitizer cannot see; the test suite's tests/tsan.supp names these
 * two functions, and no other read of such memory. */
const char *sample_peer_written_cstr(const void *p, size_t max);
uint64_t sample_peer_written_u64(const void *p);

/* The data of buf as a C string; logs what is wrong (whose: "the sender's
 * message") and returns an error when it is not NUL-terminated. */
doca_error_t sample_buf_string(const struct doca_buf *buf, const char *whose, const char **text);

#endif /* RDMA_COMMON_H_ */
