/*
 * softdoca — DOCA RDMA: a context that connects to peers and runs RDMA
 * operations on them (send/receive, read, write, atomics, remote sync
 * events).
 *
 * Life cycle: doca_rdma_create, set properties and task configurations
 * while IDLE, doca_pe_connect_ctx, doca_ctx_start. Once RUNNING, make
 * connections, either out of band (doca_rdma_export on both sides, carry
 * the descriptors across, doca_rdma_connect on both sides) or through RDMA
 * CM (listen / connect_to_addr). Connection and task callbacks run only
 * inside doca_pe_progress on the thread that calls it.
 *
 * On softdoca the device is a soft NIC: peers are reached over shared
 * memory or TCP, and one-sided operations still complete without the
 * peer's CPU taking part in the program.
 */
#ifndef DOCA_RDMA_H_
#define DOCA_RDMA_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <doca_compat.h>
#include <doca_error.h>
#include <doca_types.h>

/* DOCA's doca_rdma.h brings in the verbs headers on Linux, and programs
 * use names from them (NVIDIA's storage application: IB_DEVICE_NAME_MAX).
 * A soft device needs no libibverbs: the kernel's uapi header (Debian's
 * linux-libc-dev, always there with libc6-dev) has those constants. */
#if defined(__linux__) && defined(__has_include)
#if __has_include(<rdma/ib_user_verbs.h>)
#include <rdma/ib_user_verbs.h>
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

struct doca_buf;
struct doca_ctx;
struct doca_dev;
struct doca_devinfo;
struct doca_sync_event_remote_net;
struct doca_task;
/* From librdmacm; only pointers to it are used here. */
struct rdma_cm_id;

/* ---- types ---- */

enum doca_rdma_transport_type {
	DOCA_RDMA_TRANSPORT_TYPE_RC = 0, /* reliable connection (default) */
	DOCA_RDMA_TRANSPORT_TYPE_DC = 1, /* dynamically connected */
};

/* One entry of a device's GID table. */
struct doca_rdma_gid {
	uint8_t raw[DOCA_GID_BYTE_LENGTH];
};

/* How the text of doca_rdma_addr_create is to be read. */
enum doca_rdma_addr_type {
	DOCA_RDMA_ADDR_TYPE_IPv4 = 0, /* dotted quad, e.g. 192.0.2.1 */
	DOCA_RDMA_ADDR_TYPE_IPv6 = 1, /* IPv6 text, e.g. fe80::1 */
	DOCA_RDMA_ADDR_TYPE_GID = 2,  /* a GID written as IPv6 text */
};

/* What the peer did to complete a receive. */
enum doca_rdma_opcode {
	DOCA_RDMA_OPCODE_RECV_SEND = 0,
	DOCA_RDMA_OPCODE_RECV_SEND_WITH_IMM = 1,
	DOCA_RDMA_OPCODE_RECV_WRITE_WITH_IMM = 2,
};

struct doca_rdma;
struct doca_rdma_addr;
struct doca_rdma_connection;
struct doca_gpu_dev_rdma;
struct doca_dpa_completion;

struct doca_rdma_task_receive;
struct doca_rdma_task_send;
struct doca_rdma_task_send_imm;
struct doca_rdma_task_read;
struct doca_rdma_task_write;
struct doca_rdma_task_write_imm;
struct doca_rdma_task_atomic_cmp_swp;
struct doca_rdma_task_atomic_fetch_add;
struct doca_rdma_task_remote_net_sync_event_get;
struct doca_rdma_task_remote_net_sync_event_notify_set;
struct doca_rdma_task_remote_net_sync_event_notify_add;

/* Handle of an RDMA context on a DPA datapath. */
typedef uint64_t doca_dpa_dev_rdma_t;

/* ---- context ---- */

/* An RDMA context on an open device. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_create(struct doca_dev *dev, struct doca_rdma **rdma);

/* Only while IDLE (DOCA_ERROR_BAD_STATE otherwise). */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_destroy(struct doca_rdma *rdma);

/* The generic context view; the same pointer on every call. */
DOCA_EXPERIMENTAL
struct doca_ctx *doca_rdma_as_ctx(struct doca_rdma *rdma);

/* ---- out-of-band connections ---- */

/*
 * Make a new connection and describe it for the peer. The descriptor is
 * owned by the library and stays valid until the context stops. RUNNING
 * context only (DOCA_ERROR_BAD_STATE); DOCA_ERROR_FULL once
 * max_num_connections connections were made.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_export(struct doca_rdma *rdma, const void **local_rdma_conn_details,
			      size_t *local_rdma_conn_details_size, struct doca_rdma_connection **rdma_connection);

/*
 * Bind a connection made by doca_rdma_export to the peer's descriptor. The
 * link is up once the peer has connected too; tasks submitted meanwhile
 * wait for it. No established callback runs for such a connection (as on
 * hardware, it is RDMA CM's). RUNNING context only.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_connect(struct doca_rdma *rdma, const void *remote_rdma_conn_details,
			       size_t remote_rdma_conn_details_size, struct doca_rdma_connection *rdma_connection);

/* ---- RDMA CM connections ---- */

/*
 * An address for doca_rdma_connect_to_addr, parsed from text according to
 * addr_type. DOCA_ERROR_INVALID_VALUE for text that is not such an address.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_addr_create(enum doca_rdma_addr_type addr_type, const char *address, uint16_t port,
				   struct doca_rdma_addr **addr);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_addr_destroy(struct doca_rdma_addr *addr);

/* The type, text (owned by addr) and port addr was created with. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_addr_get_params(struct doca_rdma_addr *addr, enum doca_rdma_addr_type *addr_type,
				       const char **address, uint16_t *port);

/*
 * Server side: accept connection requests on port (RUNNING context, RC,
 * request callback set). The port is opened at each address of the
 * context's device (its GIDs: IPv4 and IPv6), never on every interface.
 * Errors: BAD_STATE, NOT_SUPPORTED (DC), ALREADY_EXIST (listening on it
 * already), FULL (8 ports at once), IN_USE (another socket holds the port
 * at one of the device's addresses), NOT_FOUND (the device has no address).
 */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_start_listen_to_port(struct doca_rdma *rdma, uint16_t port);

/* Stop accepting new requests; established connections stay. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_stop_listen_to_port(struct doca_rdma *rdma, uint16_t port);

/* Accept a request, from the request callback. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_connection_accept(struct doca_rdma_connection *rdma_connection, void *private_data,
					 uint8_t private_data_len);

/* Refuse a request, from the request callback. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_connection_reject(struct doca_rdma_connection *rdma_connection);

/* Client side: connect to a listening peer; the outcome arrives through
 * the connection callbacks. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_connect_to_addr(struct doca_rdma *rdma, struct doca_rdma_addr *addr,
				       union doca_data connection_user_data);

/*
 * Close a connection; its operations in flight fail and the peer sees a
 * disconnection. Safe to call from the disconnection callback, and more
 * than once.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_connection_disconnect(struct doca_rdma_connection *rdma_connection);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_connection_set_user_data(struct doca_rdma_connection *rdma_connection,
						union doca_data connection_user_data);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_connection_get_user_data(const struct doca_rdma_connection *rdma_connection,
						union doca_data *connection_user_data);

/* A number that tells the connections of one context apart. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_connection_get_id(const struct doca_rdma_connection *rdma_connection,
					 uint32_t *connection_id);

/* The peer address of an RDMA CM connection. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_connection_get_addr(const struct doca_rdma_connection *rdma_connection,
					   struct doca_rdma_addr **addr);

/* A peer asks to connect (RDMA CM server). */
typedef void (*doca_rdma_connection_request_cb_t)(struct doca_rdma_connection *rdma_connection,
						  union doca_data ctx_user_data);

/* An RDMA CM connection is ready for tasks (not called for connections
 * made by doca_rdma_export and doca_rdma_connect). */
typedef void (*doca_rdma_connection_established_cb_t)(struct doca_rdma_connection *rdma_connection,
						      union doca_data connection_user_data,
						      union doca_data ctx_user_data);

/* A connection could not be set up, or broke. */
typedef void (*doca_rdma_connection_failure_cb_t)(struct doca_rdma_connection *rdma_connection,
						  union doca_data connection_user_data,
						  union doca_data ctx_user_data);

/* The peer closed the connection. */
typedef void (*doca_rdma_connection_disconnection_cb_t)(struct doca_rdma_connection *rdma_connection,
							union doca_data connection_user_data,
							union doca_data ctx_user_data);

/*
 * The connection callbacks, called from doca_pe_progress. Only while IDLE.
 * request_cb may be NULL for a context that never listens; the others are
 * required.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_connection_state_callbacks(struct doca_rdma *rdma,
						      doca_rdma_connection_request_cb_t request_cb,
						      doca_rdma_connection_established_cb_t established_cb,
						      doca_rdma_connection_failure_cb_t failure_cb,
						      doca_rdma_connection_disconnection_cb_t disconnect_cb);

/* Application-owned RDMA CM (real RDMA devices only; soft devices say
 * DOCA_ERROR_NOT_SUPPORTED). Wrap an incoming cm_id in a connection. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_bridge_prepare_connection(struct doca_rdma *rdma, struct rdma_cm_id *cm_id,
						 struct doca_rdma_connection **rdma_connection);

/* Accept on a connection made by doca_rdma_bridge_prepare_connection. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_bridge_accept(struct doca_rdma *rdma, void *private_data, uint8_t private_data_len,
				     struct doca_rdma_connection *rdma_connection);

/* Report that the application's CM saw the connection established. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_bridge_established(struct doca_rdma *rdma, struct doca_rdma_connection *rdma_connection);

/* ---- device capabilities ---- */

/* Largest receive queue a context on this device can have. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_cap_get_max_recv_queue_size(const struct doca_devinfo *devinfo, uint32_t *max_recv_queue_size);

/* Largest send queue (operations outstanding at once on one connection). */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_cap_get_max_send_queue_size(const struct doca_devinfo *devinfo, uint32_t *max_send_queue_size);

/* Longest local buffer list of send, send_imm, read, write and write_imm. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_cap_get_max_send_buf_list_len(const struct doca_devinfo *devinfo,
						     uint32_t *max_send_buf_list_len);

/* Most bytes one operation moves. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_cap_get_max_message_size(const struct doca_devinfo *devinfo, uint32_t *max_message_size);

/* Number of entries in the device's GID table. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_cap_get_gid_table_size(const struct doca_devinfo *devinfo, uint32_t *gid_table_size);

/* Copy GIDs start_index .. start_index + num_entries - 1 into gid_array,
 * which must have num_entries slots. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_cap_get_gid(const struct doca_devinfo *devinfo, uint32_t start_index, uint32_t num_entries,
				   struct doca_rdma_gid *gid_array);

/* DOCA_SUCCESS when the device supports the transport type,
 * DOCA_ERROR_NOT_SUPPORTED otherwise. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_cap_transport_type_is_supported(const struct doca_devinfo *devinfo,
						       enum doca_rdma_transport_type transport_type);

/* ---- properties: setters only while IDLE, getters any time ---- */

/* Operations outstanding at once on each connection (each has its own
 * send queue, as each is a QP on hardware; DOCA_ERROR_FULL past it);
 * rounded up to a power of two. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_send_queue_size(struct doca_rdma *rdma, uint32_t send_queue_size);

/* GPU/DPA datapaths only: DOCA_ERROR_NOT_SUPPORTED on the CPU datapath,
 * where the receive queue is the receive task pool. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_recv_queue_size(struct doca_rdma *rdma, uint32_t recv_queue_size);

/* Longest local buffer list of send, send_imm, read, write and write_imm
 * tasks (default 1). */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_max_send_buf_list_len(struct doca_rdma *rdma, uint32_t max_send_buf_list_len);

/* RC (default) or DC. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_transport_type(struct doca_rdma *rdma, enum doca_rdma_transport_type transport_type);

/* Path MTU; DOCA_MTU_SIZE_RAW_ETHERNET is refused. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_mtu(struct doca_rdma *rdma, enum doca_mtu_size mtu);

/* What peers may do to memory through this context: doca_access_flag bits
 * among LOCAL_READ_WRITE, RDMA_READ, RDMA_WRITE and RDMA_ATOMIC (default
 * LOCAL_READ_WRITE). */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_permissions(struct doca_rdma *rdma, uint32_t permissions);

/* Whether to send a global routing header (0 or 1, default 1). */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_grh_enabled(struct doca_rdma *rdma, uint8_t grh_enabled);

/* Which GID table entry (local address) to use (default 0). */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_gid_index(struct doca_rdma *rdma, uint32_t gid_index);

/* Service level, 0..15 (default 0). */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_sl(struct doca_rdma *rdma, uint32_t sl);

/* Milliseconds allowed to each RDMA CM resolve step. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_connection_request_timeout(struct doca_rdma *rdma, uint16_t timeout);

/* Most connections this context makes (default 1). */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_max_num_connections(struct doca_rdma *rdma, uint16_t max_num_connections);

/* How often a send is retried while the peer has no receive posted,
 * 0..7; 7 retries for ever (default 7). */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_rnr_retry_count(struct doca_rdma *rdma, uint8_t rnr_retry_count);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_send_queue_size(const struct doca_rdma *rdma, uint32_t *send_queue_size);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_recv_queue_size(const struct doca_rdma *rdma, uint32_t *recv_queue_size);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_max_send_buf_list_len(const struct doca_rdma *rdma, uint32_t *max_send_buf_list_len);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_transport_type(const struct doca_rdma *rdma, enum doca_rdma_transport_type *transport_type);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_mtu(const struct doca_rdma *rdma, enum doca_mtu_size *mtu);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_permissions(struct doca_rdma *rdma, uint32_t *permissions);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_grh_enabled(const struct doca_rdma *rdma, uint8_t *grh_enabled);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_gid_index(const struct doca_rdma *rdma, uint32_t *gid_index);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_sl(const struct doca_rdma *rdma, uint32_t *sl);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_connection_request_timeout(const struct doca_rdma *rdma, uint16_t *timeout);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_max_num_connections(struct doca_rdma *rdma, uint16_t *max_num_connections);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_rnr_retry_count(const struct doca_rdma *rdma, uint8_t *rnr_retry_count);

/* ---- GPU and DPA datapaths (not available on soft devices) ---- */

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_dpa_handle(struct doca_rdma *rdma, doca_dpa_dev_rdma_t *dpa_rdma);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_gpu_handle(struct doca_rdma *rdma, struct doca_gpu_dev_rdma **gpu_rdma);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_dpa_completion_attach(struct doca_rdma *rdma, struct doca_dpa_completion *dpa_comp);

/*
 * ---- tasks ----
 *
 * Every task type T has a completion callback type (one for success and
 * error), a capability query, set_conf (callbacks and pool size, while
 * IDLE), allocate_init, as_task, and a setter/getter per field. Tasks that
 * act on a peer also carry the connection to use. Local destinations are
 * filled after their data and their data length grows by the bytes
 * written; sources supply their data.
 */

/* ---- receive task ---- */

typedef void (*doca_rdma_task_receive_completion_cb_t)(struct doca_rdma_task_receive *task,
						       union doca_data task_user_data, union doca_data ctx_user_data);

/* DOCA_SUCCESS when the device runs receive tasks. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_cap_task_receive_is_supported(const struct doca_devinfo *devinfo);

/* Callbacks and pool size of receive tasks; only while IDLE. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_task_receive_set_conf(struct doca_rdma *rdma,
					     doca_rdma_task_receive_completion_cb_t successful_task_completion_cb,
					     doca_rdma_task_receive_completion_cb_t error_task_completion_cb,
					     uint32_t num_tasks);

/*
 * Take a receive task from the pool (RUNNING context only;
 * DOCA_ERROR_NO_MEMORY when the pool is empty).
 * Once submitted, the receive takes the next incoming send, send with
 * immediate or write with immediate of any connection. dst_buf may be NULL
 * for messages without data.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_task_receive_allocate_init(struct doca_rdma *rdma, struct doca_buf *dst_buf,
						  union doca_data user_data, struct doca_rdma_task_receive **task);

DOCA_EXPERIMENTAL
struct doca_task *doca_rdma_task_receive_as_task(struct doca_rdma_task_receive *task);

/* dst_buf: local buffer (list) that the incoming message fills, after its data. */
DOCA_EXPERIMENTAL
void doca_rdma_task_receive_set_dst_buf(struct doca_rdma_task_receive *task, struct doca_buf *dst_buf);

DOCA_EXPERIMENTAL
struct doca_buf *doca_rdma_task_receive_get_dst_buf(const struct doca_rdma_task_receive *task);

/* Longest destination buffer list a receive may use on this device. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_cap_task_receive_get_max_dst_buf_list_len(const struct doca_devinfo *devinfo,
								 enum doca_rdma_transport_type transport_type,
								 uint32_t *max_buf_list_len);

/* Longest destination buffer list of this context's receives (default 1);
 * only while IDLE. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_task_receive_set_dst_buf_list_len(struct doca_rdma *rdma, uint32_t buf_list_len);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_task_receive_get_dst_buf_list_len(const struct doca_rdma *rdma, uint32_t *buf_list_len);

/* Results of a completed receive (valid in the success callback). */

/* What the peer did: send, send with immediate or write with immediate. */
DOCA_EXPERIMENTAL
enum doca_rdma_opcode doca_rdma_task_receive_get_result_opcode(const struct doca_rdma_task_receive *task);

/* Bytes received: for a send, what was placed into the destination
 * buffers; for a write with immediate (DOCA_RDMA_OPCODE_RECV_WRITE_WITH_IMM),
 * the length the peer wrote into its target region, as verbs reports it,
 * while the receive's own buffers are left untouched. */
DOCA_EXPERIMENTAL
uint32_t doca_rdma_task_receive_get_result_len(const struct doca_rdma_task_receive *task);

/* The sender's immediate data, bit for bit. */
DOCA_EXPERIMENTAL
doca_be32_t doca_rdma_task_receive_get_result_immediate_data(const struct doca_rdma_task_receive *task);

/* The connection the message came on. */
DOCA_EXPERIMENTAL
const struct doca_rdma_connection *doca_rdma_task_receive_get_result_rdma_connection(
	const struct doca_rdma_task_receive *task);

/* ---- send task ---- */

typedef void (*doca_rdma_task_send_completion_cb_t)(struct doca_rdma_task_send *task, union doca_data task_user_data,
						    union doca_data ctx_user_data);

/* DOCA_SUCCESS when the device runs send tasks. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_cap_task_send_is_supported(const struct doca_devinfo *devinfo);

/* Callbacks and pool size of send tasks; only while IDLE. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_task_send_set_conf(struct doca_rdma *rdma,
					  doca_rdma_task_send_completion_cb_t successful_task_completion_cb,
					  doca_rdma_task_send_completion_cb_t error_task_completion_cb,
					  uint32_t num_tasks);

/*
 * Take a send task from the pool (RUNNING context only;
 * DOCA_ERROR_NO_MEMORY when the pool is empty).
 * src_buf may be NULL to send an empty message. The peer must have a
 * receive submitted.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_task_send_allocate_init(struct doca_rdma *rdma, struct doca_rdma_connection *rdma_connection,
					       const struct doca_buf *src_buf, union doca_data user_data,
					       struct doca_rdma_task_send **task);

DOCA_EXPERIMENTAL
struct doca_task *doca_rdma_task_send_as_task(struct doca_rdma_task_send *task);

DOCA_EXPERIMENTAL
void doca_rdma_task_send_set_rdma_connection(struct doca_rdma_task_send *task,
					     struct doca_rdma_connection *rdma_connection);

DOCA_EXPERIMENTAL
const struct doca_rdma_connection *doca_rdma_task_send_get_rdma_connection(const struct doca_rdma_task_send *task);

/* src_buf: local buffer (list) whose data is sent. */
DOCA_EXPERIMENTAL
void doca_rdma_task_send_set_src_buf(struct doca_rdma_task_send *task, const struct doca_buf *src_buf);

DOCA_EXPERIMENTAL
const struct doca_buf *doca_rdma_task_send_get_src_buf(const struct doca_rdma_task_send *task);

/* ---- send with immediate task ---- */

typedef void (*doca_rdma_task_send_imm_completion_cb_t)(struct doca_rdma_task_send_imm *task,
							union doca_data task_user_data, union doca_data ctx_user_data);

/* DOCA_SUCCESS when the device runs send with immediate tasks. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_cap_task_send_imm_is_supported(const struct doca_devinfo *devinfo);

/* Callbacks and pool size of send with immediate tasks; only while IDLE. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_task_send_imm_set_conf(struct doca_rdma *rdma,
					      doca_rdma_task_send_imm_completion_cb_t successful_task_completion_cb,
					      doca_rdma_task_send_imm_completion_cb_t error_task_completion_cb,
					      uint32_t num_tasks);

/*
 * Take a send with immediate task from the pool (RUNNING context only;
 * DOCA_ERROR_NO_MEMORY when the pool is empty).
 * Like send, plus 32 bits of immediate data.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_task_send_imm_allocate_init(struct doca_rdma *rdma, struct doca_rdma_connection *rdma_connection,
						   const struct doca_buf *src_buf, doca_be32_t immediate_data,
						   union doca_data user_data, struct doca_rdma_task_send_imm **task);

DOCA_EXPERIMENTAL
struct doca_task *doca_rdma_task_send_imm_as_task(struct doca_rdma_task_send_imm *task);

DOCA_EXPERIMENTAL
void doca_rdma_task_send_imm_set_rdma_connection(struct doca_rdma_task_send_imm *task,
						 struct doca_rdma_connection *rdma_connection);

DOCA_EXPERIMENTAL
const struct doca_rdma_connection *doca_rdma_task_send_imm_get_rdma_connection(
	const struct doca_rdma_task_send_imm *task);

/* src_buf: local buffer (list) whose data is sent. */
DOCA_EXPERIMENTAL
void doca_rdma_task_send_imm_set_src_buf(struct doca_rdma_task_send_imm *task, const struct doca_buf *src_buf);

DOCA_EXPERIMENTAL
const struct doca_buf *doca_rdma_task_send_imm_get_src_buf(const struct doca_rdma_task_send_imm *task);

/* immediate_data: 32 bits delivered to the peer's receive as given. */
DOCA_EXPERIMENTAL
void doca_rdma_task_send_imm_set_immediate_data(struct doca_rdma_task_send_imm *task, doca_be32_t immediate_data);

DOCA_EXPERIMENTAL
doca_be32_t doca_rdma_task_send_imm_get_immediate_data(const struct doca_rdma_task_send_imm *task);

/* ---- read task ---- */

typedef void (*doca_rdma_task_read_completion_cb_t)(struct doca_rdma_task_read *task, union doca_data task_user_data,
						    union doca_data ctx_user_data);

/* DOCA_SUCCESS when the device runs read tasks. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_cap_task_read_is_supported(const struct doca_devinfo *devinfo);

/* Callbacks and pool size of read tasks; only while IDLE. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_task_read_set_conf(struct doca_rdma *rdma,
					  doca_rdma_task_read_completion_cb_t successful_task_completion_cb,
					  doca_rdma_task_read_completion_cb_t error_task_completion_cb,
					  uint32_t num_tasks);

/*
 * Take a read task from the pool (RUNNING context only;
 * DOCA_ERROR_NO_MEMORY when the pool is empty).
 * Copies the data of src_buf (on an mmap made from the peer's export) into
 * the free space after dst_buf's data; dst_buf's data length grows by the
 * bytes read. Both may be NULL to read nothing.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_task_read_allocate_init(struct doca_rdma *rdma, struct doca_rdma_connection *rdma_connection,
					       const struct doca_buf *src_buf, struct doca_buf *dst_buf,
					       union doca_data user_data, struct doca_rdma_task_read **task);

DOCA_EXPERIMENTAL
struct doca_task *doca_rdma_task_read_as_task(struct doca_rdma_task_read *task);

DOCA_EXPERIMENTAL
void doca_rdma_task_read_set_rdma_connection(struct doca_rdma_task_read *task,
					     struct doca_rdma_connection *rdma_connection);

DOCA_EXPERIMENTAL
const struct doca_rdma_connection *doca_rdma_task_read_get_rdma_connection(const struct doca_rdma_task_read *task);

/* src_buf: remote buffer whose data is read (head only). */
DOCA_EXPERIMENTAL
void doca_rdma_task_read_set_src_buf(struct doca_rdma_task_read *task, const struct doca_buf *src_buf);

DOCA_EXPERIMENTAL
const struct doca_buf *doca_rdma_task_read_get_src_buf(const struct doca_rdma_task_read *task);

/* dst_buf: local buffer (list) the data is appended to. */
DOCA_EXPERIMENTAL
void doca_rdma_task_read_set_dst_buf(struct doca_rdma_task_read *task, struct doca_buf *dst_buf);

DOCA_EXPERIMENTAL
struct doca_buf *doca_rdma_task_read_get_dst_buf(const struct doca_rdma_task_read *task);

/* Bytes read (valid in the success callback). */
DOCA_EXPERIMENTAL
uint32_t doca_rdma_task_read_get_result_len(const struct doca_rdma_task_read *task);

/* ---- write task ---- */

typedef void (*doca_rdma_task_write_completion_cb_t)(struct doca_rdma_task_write *task, union doca_data task_user_data,
						     union doca_data ctx_user_data);

/* DOCA_SUCCESS when the device runs write tasks. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_cap_task_write_is_supported(const struct doca_devinfo *devinfo);

/* Callbacks and pool size of write tasks; only while IDLE. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_task_write_set_conf(struct doca_rdma *rdma,
					   doca_rdma_task_write_completion_cb_t successful_task_completion_cb,
					   doca_rdma_task_write_completion_cb_t error_task_completion_cb,
					   uint32_t num_tasks);

/*
 * Take a write task from the pool (RUNNING context only;
 * DOCA_ERROR_NO_MEMORY when the pool is empty).
 * Writes src_buf's data into the peer's memory after dst_buf's data (dst_buf
 * is on an mmap made from the peer's export; its data length is left as
 * is). Both may be NULL to write nothing.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_task_write_allocate_init(struct doca_rdma *rdma, struct doca_rdma_connection *rdma_connection,
						const struct doca_buf *src_buf, struct doca_buf *dst_buf,
						union doca_data user_data, struct doca_rdma_task_write **task);

DOCA_EXPERIMENTAL
struct doca_task *doca_rdma_task_write_as_task(struct doca_rdma_task_write *task);

DOCA_EXPERIMENTAL
void doca_rdma_task_write_set_rdma_connection(struct doca_rdma_task_write *task,
					      struct doca_rdma_connection *rdma_connection);

DOCA_EXPERIMENTAL
const struct doca_rdma_connection *doca_rdma_task_write_get_rdma_connection(const struct doca_rdma_task_write *task);

/* src_buf: local buffer (list) whose data is written. */
DOCA_EXPERIMENTAL
void doca_rdma_task_write_set_src_buf(struct doca_rdma_task_write *task, const struct doca_buf *src_buf);

DOCA_EXPERIMENTAL
const struct doca_buf *doca_rdma_task_write_get_src_buf(const struct doca_rdma_task_write *task);

/* dst_buf: remote buffer written after its data (head only). */
DOCA_EXPERIMENTAL
void doca_rdma_task_write_set_dst_buf(struct doca_rdma_task_write *task, struct doca_buf *dst_buf);

DOCA_EXPERIMENTAL
struct doca_buf *doca_rdma_task_write_get_dst_buf(const struct doca_rdma_task_write *task);

/* ---- write with immediate task ---- */

typedef void (*doca_rdma_task_write_imm_completion_cb_t)(struct doca_rdma_task_write_imm *task,
							 union doca_data task_user_data, union doca_data ctx_user_data);

/* DOCA_SUCCESS when the device runs write with immediate tasks. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_cap_task_write_imm_is_supported(const struct doca_devinfo *devinfo);

/* Callbacks and pool size of write with immediate tasks; only while IDLE. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_task_write_imm_set_conf(struct doca_rdma *rdma,
					       doca_rdma_task_write_imm_completion_cb_t successful_task_completion_cb,
					       doca_rdma_task_write_imm_completion_cb_t error_task_completion_cb,
					       uint32_t num_tasks);

/*
 * Take a write with immediate task from the pool (RUNNING context only;
 * DOCA_ERROR_NO_MEMORY when the pool is empty).
 * Like write, then consumes one receive on the peer, which reports the
 * immediate data.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_task_write_imm_allocate_init(struct doca_rdma *rdma,
						    struct doca_rdma_connection *rdma_connection,
						    const struct doca_buf *src_buf, struct doca_buf *dst_buf,
						    doca_be32_t immediate_data, union doca_data user_data,
						    struct doca_rdma_task_write_imm **task);

DOCA_EXPERIMENTAL
struct doca_task *doca_rdma_task_write_imm_as_task(struct doca_rdma_task_write_imm *task);

DOCA_EXPERIMENTAL
void doca_rdma_task_write_imm_set_rdma_connection(struct doca_rdma_task_write_imm *task,
						  struct doca_rdma_connection *rdma_connection);

DOCA_EXPERIMENTAL
const struct doca_rdma_connection *doca_rdma_task_write_imm_get_rdma_connection(
	const struct doca_rdma_task_write_imm *task);

/* src_buf: local buffer (list) whose data is written. */
DOCA_EXPERIMENTAL
void doca_rdma_task_write_imm_set_src_buf(struct doca_rdma_task_write_imm *task, const struct doca_buf *src_buf);

DOCA_EXPERIMENTAL
const struct doca_buf *doca_rdma_task_write_imm_get_src_buf(const struct doca_rdma_task_write_imm *task);

/* dst_buf: remote buffer written after its data (head only). */
DOCA_EXPERIMENTAL
void doca_rdma_task_write_imm_set_dst_buf(struct doca_rdma_task_write_imm *task, struct doca_buf *dst_buf);

DOCA_EXPERIMENTAL
struct doca_buf *doca_rdma_task_write_imm_get_dst_buf(const struct doca_rdma_task_write_imm *task);

/* immediate_data: 32 bits delivered to the peer's receive as given. */
DOCA_EXPERIMENTAL
void doca_rdma_task_write_imm_set_immediate_data(struct doca_rdma_task_write_imm *task, doca_be32_t immediate_data);

DOCA_EXPERIMENTAL
doca_be32_t doca_rdma_task_write_imm_get_immediate_data(const struct doca_rdma_task_write_imm *task);

/* ---- atomic compare-and-swap task ---- */

typedef void (*doca_rdma_task_atomic_cmp_swp_completion_cb_t)(struct doca_rdma_task_atomic_cmp_swp *task,
							      union doca_data task_user_data,
							      union doca_data ctx_user_data);

/* DOCA_SUCCESS when the device runs atomic compare-and-swap tasks. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_cap_task_atomic_cmp_swp_is_supported(const struct doca_devinfo *devinfo);

/* Callbacks and pool size of atomic compare-and-swap tasks; only while IDLE. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_task_atomic_cmp_swp_set_conf(
	struct doca_rdma *rdma, doca_rdma_task_atomic_cmp_swp_completion_cb_t successful_task_completion_cb,
	doca_rdma_task_atomic_cmp_swp_completion_cb_t error_task_completion_cb, uint32_t num_tasks);

/*
 * Take a atomic compare-and-swap task from the pool (RUNNING context only;
 * DOCA_ERROR_NO_MEMORY when the pool is empty).
 * On the peer's 8 bytes at dst_buf's data (8-byte aligned): store swap_data
 * if they equal cmp_data. The old value is appended to result_buf.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_task_atomic_cmp_swp_allocate_init(struct doca_rdma *rdma,
							 struct doca_rdma_connection *rdma_connection,
							 struct doca_buf *dst_buf, struct doca_buf *result_buf,
							 uint64_t cmp_data, uint64_t swap_data,
							 union doca_data user_data,
							 struct doca_rdma_task_atomic_cmp_swp **task);

DOCA_EXPERIMENTAL
struct doca_task *doca_rdma_task_atomic_cmp_swp_as_task(struct doca_rdma_task_atomic_cmp_swp *task);

DOCA_EXPERIMENTAL
void doca_rdma_task_atomic_cmp_swp_set_rdma_connection(struct doca_rdma_task_atomic_cmp_swp *task,
						       struct doca_rdma_connection *rdma_connection);

DOCA_EXPERIMENTAL
const struct doca_rdma_connection *doca_rdma_task_atomic_cmp_swp_get_rdma_connection(
	const struct doca_rdma_task_atomic_cmp_swp *task);

/* dst_buf: remote buffer: its first 8 bytes of data are the target. */
DOCA_EXPERIMENTAL
void doca_rdma_task_atomic_cmp_swp_set_dst_buf(struct doca_rdma_task_atomic_cmp_swp *task, struct doca_buf *dst_buf);

DOCA_EXPERIMENTAL
struct doca_buf *doca_rdma_task_atomic_cmp_swp_get_dst_buf(const struct doca_rdma_task_atomic_cmp_swp *task);

/* result_buf: local buffer that gets the old 8-byte value after its data. */
DOCA_EXPERIMENTAL
void doca_rdma_task_atomic_cmp_swp_set_result_buf(struct doca_rdma_task_atomic_cmp_swp *task,
						  struct doca_buf *result_buf);

DOCA_EXPERIMENTAL
struct doca_buf *doca_rdma_task_atomic_cmp_swp_get_result_buf(const struct doca_rdma_task_atomic_cmp_swp *task);

/* cmp_data: value compared with the remote 8 bytes. */
DOCA_EXPERIMENTAL
void doca_rdma_task_atomic_cmp_swp_set_cmp_data(struct doca_rdma_task_atomic_cmp_swp *task, uint64_t cmp_data);

DOCA_EXPERIMENTAL
uint64_t doca_rdma_task_atomic_cmp_swp_get_cmp_data(const struct doca_rdma_task_atomic_cmp_swp *task);

/* swap_data: value stored when the comparison matches. */
DOCA_EXPERIMENTAL
void doca_rdma_task_atomic_cmp_swp_set_swap_data(struct doca_rdma_task_atomic_cmp_swp *task, uint64_t swap_data);

DOCA_EXPERIMENTAL
uint64_t doca_rdma_task_atomic_cmp_swp_get_swap_data(const struct doca_rdma_task_atomic_cmp_swp *task);

/* ---- atomic fetch-and-add task ---- */

typedef void (*doca_rdma_task_atomic_fetch_add_completion_cb_t)(struct doca_rdma_task_atomic_fetch_add *task,
								union doca_data task_user_data,
								union doca_data ctx_user_data);

/* DOCA_SUCCESS when the device runs atomic fetch-and-add tasks. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_cap_task_atomic_fetch_add_is_supported(const struct doca_devinfo *devinfo);

/* Callbacks and pool size of atomic fetch-and-add tasks; only while IDLE. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_task_atomic_fetch_add_set_conf(
	struct doca_rdma *rdma, doca_rdma_task_atomic_fetch_add_completion_cb_t successful_task_completion_cb,
	doca_rdma_task_atomic_fetch_add_completion_cb_t error_task_completion_cb, uint32_t num_tasks);

/*
 * Take a atomic fetch-and-add task from the pool (RUNNING context only;
 * DOCA_ERROR_NO_MEMORY when the pool is empty).
 * On the peer's 8 bytes at dst_buf's data (8-byte aligned): add add_data.
 * The old value is appended to result_buf.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_task_atomic_fetch_add_allocate_init(struct doca_rdma *rdma,
							   struct doca_rdma_connection *rdma_connection,
							   struct doca_buf *dst_buf, struct doca_buf *result_buf,
							   uint64_t add_data, union doca_data user_data,
							   struct doca_rdma_task_atomic_fetch_add **task);

DOCA_EXPERIMENTAL
struct doca_task *doca_rdma_task_atomic_fetch_add_as_task(struct doca_rdma_task_atomic_fetch_add *task);

DOCA_EXPERIMENTAL
void doca_rdma_task_atomic_fetch_add_set_rdma_connection(struct doca_rdma_task_atomic_fetch_add *task,
							 struct doca_rdma_connection *rdma_connection);

DOCA_EXPERIMENTAL
const struct doca_rdma_connection *doca_rdma_task_atomic_fetch_add_get_rdma_connection(
	const struct doca_rdma_task_atomic_fetch_add *task);

/* dst_buf: remote buffer: its first 8 bytes of data are the target. */
DOCA_EXPERIMENTAL
void doca_rdma_task_atomic_fetch_add_set_dst_buf(struct doca_rdma_task_atomic_fetch_add *task,
						 struct doca_buf *dst_buf);

DOCA_EXPERIMENTAL
struct doca_buf *doca_rdma_task_atomic_fetch_add_get_dst_buf(const struct doca_rdma_task_atomic_fetch_add *task);

/* result_buf: local buffer that gets the old 8-byte value after its data. */
DOCA_EXPERIMENTAL
void doca_rdma_task_atomic_fetch_add_set_result_buf(struct doca_rdma_task_atomic_fetch_add *task,
						    struct doca_buf *result_buf);

DOCA_EXPERIMENTAL
struct doca_buf *doca_rdma_task_atomic_fetch_add_get_result_buf(const struct doca_rdma_task_atomic_fetch_add *task);

/* add_data: value added to the remote 8 bytes. */
DOCA_EXPERIMENTAL
void doca_rdma_task_atomic_fetch_add_set_add_data(struct doca_rdma_task_atomic_fetch_add *task, uint64_t add_data);

DOCA_EXPERIMENTAL
uint64_t doca_rdma_task_atomic_fetch_add_get_add_data(const struct doca_rdma_task_atomic_fetch_add *task);

/* ---- remote sync event get task ---- */

typedef void (*doca_rdma_task_remote_net_sync_event_get_completion_cb_t)(
	struct doca_rdma_task_remote_net_sync_event_get *task, union doca_data task_user_data,
	union doca_data ctx_user_data);

/* DOCA_SUCCESS when the device runs remote sync event get tasks. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_cap_task_remote_net_sync_event_get_is_supported(const struct doca_devinfo *devinfo);

/* Callbacks and pool size of remote sync event get tasks; only while IDLE. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_task_remote_net_sync_event_get_set_conf(
	struct doca_rdma *rdma, doca_rdma_task_remote_net_sync_event_get_completion_cb_t successful_task_completion_cb,
	doca_rdma_task_remote_net_sync_event_get_completion_cb_t error_task_completion_cb, uint32_t num_tasks);

/*
 * Take a remote sync event get task from the pool (RUNNING context only;
 * DOCA_ERROR_NO_MEMORY when the pool is empty).
 * Reads the 64-bit value of a peer's sync event into dst_buf (at its data
 * end; data_len grows by 8). Needs RDMA_READ in the peer's permissions.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_task_remote_net_sync_event_get_allocate_init(
	struct doca_rdma *rdma, struct doca_rdma_connection *rdma_connection,
	const struct doca_sync_event_remote_net *event, struct doca_buf *dst_buf, union doca_data user_data,
	struct doca_rdma_task_remote_net_sync_event_get **task);

DOCA_EXPERIMENTAL
struct doca_task *doca_rdma_task_remote_net_sync_event_get_as_task(
	struct doca_rdma_task_remote_net_sync_event_get *task);

DOCA_EXPERIMENTAL
void doca_rdma_task_remote_net_sync_event_get_set_rdma_connection(struct doca_rdma_task_remote_net_sync_event_get *task,
								  struct doca_rdma_connection *rdma_connection);

DOCA_EXPERIMENTAL
const struct doca_rdma_connection *doca_rdma_task_remote_net_sync_event_get_get_rdma_connection(
	const struct doca_rdma_task_remote_net_sync_event_get *task);

/* sync_event: the peer's sync event. */
DOCA_EXPERIMENTAL
void doca_rdma_task_remote_net_sync_event_get_set_sync_event(struct doca_rdma_task_remote_net_sync_event_get *task,
							     const struct doca_sync_event_remote_net *sync_event);

DOCA_EXPERIMENTAL
const struct doca_sync_event_remote_net *doca_rdma_task_remote_net_sync_event_get_get_sync_event(
	const struct doca_rdma_task_remote_net_sync_event_get *task);

/* dst_buf: local buffer that gets the 8-byte value. */
DOCA_EXPERIMENTAL
void doca_rdma_task_remote_net_sync_event_get_set_dst_buf(struct doca_rdma_task_remote_net_sync_event_get *task,
							  struct doca_buf *dst_buf);

DOCA_EXPERIMENTAL
struct doca_buf *doca_rdma_task_remote_net_sync_event_get_get_dst_buf(
	const struct doca_rdma_task_remote_net_sync_event_get *task);

/* Bytes written to dst_buf (valid in the success callback). */
DOCA_EXPERIMENTAL
uint32_t doca_rdma_task_remote_net_sync_event_get_get_result_len(
	const struct doca_rdma_task_remote_net_sync_event_get *task);

/* ---- remote sync event set task ---- */

typedef void (*doca_rdma_task_remote_net_sync_event_notify_set_completion_cb_t)(
	struct doca_rdma_task_remote_net_sync_event_notify_set *task, union doca_data task_user_data,
	union doca_data ctx_user_data);

/* DOCA_SUCCESS when the device runs remote sync event set tasks. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_cap_task_remote_net_sync_event_notify_set_is_supported(const struct doca_devinfo *devinfo);

/* Callbacks and pool size of remote sync event set tasks; only while IDLE. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_task_remote_net_sync_event_notify_set_set_conf(
	struct doca_rdma *rdma,
	doca_rdma_task_remote_net_sync_event_notify_set_completion_cb_t successful_task_completion_cb,
	doca_rdma_task_remote_net_sync_event_notify_set_completion_cb_t error_task_completion_cb, uint32_t num_tasks);

/*
 * Take a remote sync event set task from the pool (RUNNING context only;
 * DOCA_ERROR_NO_MEMORY when the pool is empty).
 * Sets a peer's sync event to the first 8 bytes of src_buf, waking its
 * waiters. Needs RDMA_WRITE in the peer's permissions.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_task_remote_net_sync_event_notify_set_allocate_init(
	struct doca_rdma *rdma, struct doca_rdma_connection *rdma_connection, struct doca_sync_event_remote_net *event,
	const struct doca_buf *src_buf, union doca_data user_data,
	struct doca_rdma_task_remote_net_sync_event_notify_set **task);

DOCA_EXPERIMENTAL
struct doca_task *doca_rdma_task_remote_net_sync_event_notify_set_as_task(
	struct doca_rdma_task_remote_net_sync_event_notify_set *task);

DOCA_EXPERIMENTAL
void doca_rdma_task_remote_net_sync_event_notify_set_set_rdma_connection(
	struct doca_rdma_task_remote_net_sync_event_notify_set *task, struct doca_rdma_connection *rdma_connection);

DOCA_EXPERIMENTAL
const struct doca_rdma_connection *doca_rdma_task_remote_net_sync_event_notify_set_get_rdma_connection(
	const struct doca_rdma_task_remote_net_sync_event_notify_set *task);

/* sync_event: the peer's sync event. */
DOCA_EXPERIMENTAL
void doca_rdma_task_remote_net_sync_event_notify_set_set_sync_event(
	struct doca_rdma_task_remote_net_sync_event_notify_set *task, struct doca_sync_event_remote_net *sync_event);

DOCA_EXPERIMENTAL
struct doca_sync_event_remote_net *doca_rdma_task_remote_net_sync_event_notify_set_get_sync_event(
	const struct doca_rdma_task_remote_net_sync_event_notify_set *task);

/* src_buf: local buffer whose first 8 bytes are the new value. */
DOCA_EXPERIMENTAL
void doca_rdma_task_remote_net_sync_event_notify_set_set_src_buf(
	struct doca_rdma_task_remote_net_sync_event_notify_set *task, const struct doca_buf *src_buf);

DOCA_EXPERIMENTAL
const struct doca_buf *doca_rdma_task_remote_net_sync_event_notify_set_get_src_buf(
	const struct doca_rdma_task_remote_net_sync_event_notify_set *task);

/* ---- remote sync event add task ---- */

typedef void (*doca_rdma_task_remote_net_sync_event_notify_add_completion_cb_t)(
	struct doca_rdma_task_remote_net_sync_event_notify_add *task, union doca_data task_user_data,
	union doca_data ctx_user_data);

/* DOCA_SUCCESS when the device runs remote sync event add tasks. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_cap_task_remote_net_sync_event_notify_add_is_supported(const struct doca_devinfo *devinfo);

/* Callbacks and pool size of remote sync event add tasks; only while IDLE. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_task_remote_net_sync_event_notify_add_set_conf(
	struct doca_rdma *rdma,
	doca_rdma_task_remote_net_sync_event_notify_add_completion_cb_t successful_task_completion_cb,
	doca_rdma_task_remote_net_sync_event_notify_add_completion_cb_t error_task_completion_cb, uint32_t num_tasks);

/*
 * Take a remote sync event add task from the pool (RUNNING context only;
 * DOCA_ERROR_NO_MEMORY when the pool is empty).
 * Adds add_data to a peer's sync event; the old value goes to result_buf.
 * Needs RDMA_ATOMIC in the peer's permissions.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_task_remote_net_sync_event_notify_add_allocate_init(
	struct doca_rdma *rdma, struct doca_rdma_connection *rdma_connection, struct doca_sync_event_remote_net *event,
	struct doca_buf *result_buf, uint64_t add_data, union doca_data user_data,
	struct doca_rdma_task_remote_net_sync_event_notify_add **task);

DOCA_EXPERIMENTAL
struct doca_task *doca_rdma_task_remote_net_sync_event_notify_add_as_task(
	struct doca_rdma_task_remote_net_sync_event_notify_add *task);

DOCA_EXPERIMENTAL
void doca_rdma_task_remote_net_sync_event_notify_add_set_rdma_connection(
	struct doca_rdma_task_remote_net_sync_event_notify_add *task, struct doca_rdma_connection *rdma_connection);

DOCA_EXPERIMENTAL
const struct doca_rdma_connection *doca_rdma_task_remote_net_sync_event_notify_add_get_rdma_connection(
	const struct doca_rdma_task_remote_net_sync_event_notify_add *task);

/* sync_event: the peer's sync event. */
DOCA_EXPERIMENTAL
void doca_rdma_task_remote_net_sync_event_notify_add_set_sync_event(
	struct doca_rdma_task_remote_net_sync_event_notify_add *task, struct doca_sync_event_remote_net *sync_event);

DOCA_EXPERIMENTAL
struct doca_sync_event_remote_net *doca_rdma_task_remote_net_sync_event_notify_add_get_sync_event(
	const struct doca_rdma_task_remote_net_sync_event_notify_add *task);

/* result_buf: local buffer that gets the old 8-byte value. */
DOCA_EXPERIMENTAL
void doca_rdma_task_remote_net_sync_event_notify_add_set_result_buf(
	struct doca_rdma_task_remote_net_sync_event_notify_add *task, struct doca_buf *result_buf);

DOCA_EXPERIMENTAL
struct doca_buf *doca_rdma_task_remote_net_sync_event_notify_add_get_result_buf(
	const struct doca_rdma_task_remote_net_sync_event_notify_add *task);

/* add_data: value added to the event. */
DOCA_EXPERIMENTAL
void doca_rdma_task_remote_net_sync_event_notify_add_set_add_data(
	struct doca_rdma_task_remote_net_sync_event_notify_add *task, uint64_t add_data);

DOCA_EXPERIMENTAL
uint64_t doca_rdma_task_remote_net_sync_event_notify_add_get_add_data(
	const struct doca_rdma_task_remote_net_sync_event_notify_add *task);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_RDMA_H_ */
