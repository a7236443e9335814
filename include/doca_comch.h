/*
 * softdoca — DOCA Comch (3.3): the control channel between a client on
 * the host and a server on the BlueField Arm cores.
 *
 * softdoca carries it between two processes of one machine: the server
 * listens on a per-host rendezvous directory, the client connects there
 * (see docs/ and src/comch/channel.h). Messages are ordered per
 * connection, limited to the size doca_comch_cap_get_max_msg_size
 * reports, and every callback runs inside doca_pe_progress on the thread
 * that progresses the context's PE.
 *
 * Written for softdoca; names, types and values follow DOCA 3.3.
 */
#ifndef DOCA_COMCH_H_
#define DOCA_COMCH_H_

#include <stddef.h>
#include <stdint.h>

#include <doca_compat.h>
#include <doca_error.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_dev;
struct doca_dev_rep;
struct doca_devinfo;
struct doca_ctx;
struct doca_task;

/* ---- Connections ---- */

/* One client-server pair, seen from either end. Owned by the library:
 * valid from its connection event until its disconnection event (server)
 * or while the client context runs (client). */
struct doca_comch_connection;

/* Attach application data to a connection. DOCA_ERROR_INVALID_VALUE for NULL. */
DOCA_STABLE
doca_error_t doca_comch_connection_set_user_data(struct doca_comch_connection *connection, union doca_data user_data);

/* The data last attached (zero if none, or for NULL). */
DOCA_STABLE
union doca_data doca_comch_connection_get_user_data(const struct doca_comch_connection *connection);

/* The server a connection belongs to; NULL for a client's connection. */
DOCA_STABLE
struct doca_comch_server *doca_comch_server_get_server_ctx(const struct doca_comch_connection *connection);

/* The client a connection belongs to; NULL for a server's connection. */
DOCA_STABLE
struct doca_comch_client *doca_comch_client_get_client_ctx(const struct doca_comch_connection *connection);

/* ---- Capabilities (per device) ---- */

/* Longest server name, counting the terminating NUL. */
DOCA_STABLE
doca_error_t doca_comch_cap_get_max_name_len(const struct doca_devinfo *devinfo, uint32_t *max_name_len);

/* Largest control message one send task may carry, in bytes. */
DOCA_STABLE
doca_error_t doca_comch_cap_get_max_msg_size(const struct doca_devinfo *devinfo, uint32_t *size);

/* Largest receive queue a server or client may ask for. */
DOCA_STABLE
doca_error_t doca_comch_cap_get_max_recv_queue_size(const struct doca_devinfo *devinfo, uint32_t *size);

/* Most clients one server accepts at a time. */
DOCA_STABLE
doca_error_t doca_comch_cap_get_max_clients(const struct doca_devinfo *devinfo, uint32_t *num_clients);

/* Most send tasks one server or client may configure. */
DOCA_STABLE
doca_error_t doca_comch_cap_get_max_send_tasks(const struct doca_devinfo *devinfo, uint32_t *max_send_tasks);

/* DOCA_SUCCESS if the device can host a server, DOCA_ERROR_NOT_SUPPORTED if not. */
DOCA_STABLE
doca_error_t doca_comch_cap_server_is_supported(const struct doca_devinfo *devinfo);

/* DOCA_SUCCESS if the device can host a client, DOCA_ERROR_NOT_SUPPORTED if not. */
DOCA_STABLE
doca_error_t doca_comch_cap_client_is_supported(const struct doca_devinfo *devinfo);

/* ---- Server context ---- */

struct doca_comch_server;

/* A server listening under name (NUL-terminated, shorter than
 * doca_comch_cap_get_max_name_len) for clients of the host function that
 * repr stands for. Errors: DOCA_ERROR_INVALID_VALUE (NULL, bad name),
 * DOCA_ERROR_NO_MEMORY. */
DOCA_STABLE
doca_error_t doca_comch_server_create(struct doca_dev *dev, struct doca_dev_rep *repr, const char *name,
				      struct doca_comch_server **comch_server);

/* Free an idle server. DOCA_ERROR_BAD_STATE unless its context is idle. */
DOCA_STABLE
doca_error_t doca_comch_server_destroy(struct doca_comch_server *comch_server);

/* Message size limit of this server (idle only; at most the device cap). */
DOCA_STABLE
doca_error_t doca_comch_server_set_max_msg_size(struct doca_comch_server *comch_server, uint32_t size);

DOCA_STABLE
doca_error_t doca_comch_server_get_max_msg_size(const struct doca_comch_server *comch_server, uint32_t *size);

/* Receive queue depth (idle only; 1..doca_comch_cap_get_max_recv_queue_size). */
DOCA_STABLE
doca_error_t doca_comch_server_set_recv_queue_size(struct doca_comch_server *comch_server, uint32_t size);

DOCA_STABLE
doca_error_t doca_comch_server_get_recv_queue_size(const struct doca_comch_server *comch_server, uint32_t *size);

DOCA_STABLE
doca_error_t doca_comch_server_get_device(const struct doca_comch_server *comch_server, struct doca_dev **dev);

DOCA_STABLE
doca_error_t doca_comch_server_get_device_rep(const struct doca_comch_server *comch_server,
					       struct doca_dev_rep **repr);

/* The server's generic context (for doca_ctx_* and doca_pe_connect_ctx). */
DOCA_STABLE
struct doca_ctx *doca_comch_server_as_ctx(struct doca_comch_server *comch_server);

/* Close one connection; the client is told. Errors:
 * DOCA_ERROR_INVALID_VALUE (NULL, or not this server's connection),
 * DOCA_ERROR_IN_USE (producers or consumers still exist on it),
 * DOCA_ERROR_AGAIN (the goodbye could not be queued; call again later). */
DOCA_STABLE
doca_error_t doca_comch_server_disconnect(struct doca_comch_server *comch_server,
					  struct doca_comch_connection *connection);

/* ---- Client context ---- */

struct doca_comch_client;

/* A client that will connect to the server called name. */
DOCA_STABLE
doca_error_t doca_comch_client_create(struct doca_dev *dev, const char *name, struct doca_comch_client **comch_client);

DOCA_STABLE
doca_error_t doca_comch_client_destroy(struct doca_comch_client *comch_client);

DOCA_STABLE
doca_error_t doca_comch_client_set_max_msg_size(struct doca_comch_client *comch_client, uint32_t size);

DOCA_STABLE
doca_error_t doca_comch_client_get_max_msg_size(const struct doca_comch_client *comch_client, uint32_t *size);

DOCA_STABLE
doca_error_t doca_comch_client_set_recv_queue_size(struct doca_comch_client *comch_client, uint32_t size);

DOCA_STABLE
doca_error_t doca_comch_client_get_recv_queue_size(const struct doca_comch_client *comch_client, uint32_t *size);

DOCA_STABLE
doca_error_t doca_comch_client_get_device(const struct doca_comch_client *comch_client, struct doca_dev **dev);

/* The client's generic context. Its start is asynchronous: STARTING until
 * the server accepted, then RUNNING. */
DOCA_STABLE
struct doca_ctx *doca_comch_client_as_ctx(struct doca_comch_client *comch_client);

/* The client's one connection. DOCA_ERROR_BAD_STATE unless RUNNING. */
DOCA_STABLE
doca_error_t doca_comch_client_get_connection(const struct doca_comch_client *comch_client,
					      struct doca_comch_connection **connection);

/* ---- Send task ---- */

/* Send one control message to the peer of a connection. */
struct doca_comch_task_send;

/* Completion (success or error) of a send task. */
typedef void (*doca_comch_task_send_completion_cb_t)(struct doca_comch_task_send *task,
						     union doca_data task_user_data,
						     union doca_data ctx_user_data);

/* Callbacks and pool size of the server's send tasks (idle only). */
DOCA_STABLE
doca_error_t doca_comch_server_task_send_set_conf(struct doca_comch_server *comch_server,
						  doca_comch_task_send_completion_cb_t task_completion_cb,
						  doca_comch_task_send_completion_cb_t task_error_cb,
						  uint32_t num_send_tasks);

DOCA_STABLE
doca_error_t doca_comch_client_task_send_set_conf(struct doca_comch_client *comch_client,
						  doca_comch_task_send_completion_cb_t task_completion_cb,
						  doca_comch_task_send_completion_cb_t task_error_cb,
						  uint32_t num_send_tasks);

/* Take a send task from the pool, set to send len bytes at msg to peer.
 * msg is read at submit and must stay unchanged until the completion.
 * Errors: DOCA_ERROR_INVALID_VALUE (NULL, len 0 or above the message size
 * limit), DOCA_ERROR_NO_MEMORY (pool empty), DOCA_ERROR_BAD_STATE. */
DOCA_STABLE
doca_error_t doca_comch_server_task_send_alloc_init(struct doca_comch_server *comch_server,
						    struct doca_comch_connection *peer,
						    const void *msg,
						    uint32_t len,
						    struct doca_comch_task_send **task);

DOCA_STABLE
doca_error_t doca_comch_client_task_send_alloc_init(struct doca_comch_client *comch_client,
						    struct doca_comch_connection *peer,
						    const void *msg,
						    uint32_t len,
						    struct doca_comch_task_send **task);

DOCA_STABLE
struct doca_task *doca_comch_task_send_as_task(struct doca_comch_task_send *task);

/* ---- Message receive event ---- */

struct doca_comch_event_msg_recv;

/* A message arrived on comch_connection. recv_buffer is valid only
 * during the call. */
typedef void (*doca_comch_event_msg_recv_cb_t)(struct doca_comch_event_msg_recv *event,
					       uint8_t *recv_buffer,
					       uint32_t msg_len,
					       struct doca_comch_connection *comch_connection);

DOCA_STABLE
doca_error_t doca_comch_server_event_msg_recv_register(struct doca_comch_server *comch_server,
						       doca_comch_event_msg_recv_cb_t recv_event_cb);

DOCA_STABLE
doca_error_t doca_comch_client_event_msg_recv_register(struct doca_comch_client *comch_client,
						       doca_comch_event_msg_recv_cb_t recv_event_cb);

/* ---- Connection status event (server) ---- */

struct doca_comch_event_connection_status_changed;

/* A client connected or disconnected; change_successful is 1 when the
 * change took place, 0 when it failed. */
typedef void (*doca_comch_event_connection_status_changed_cb_t)(
	struct doca_comch_event_connection_status_changed *event,
	struct doca_comch_connection *comch_connection,
	uint8_t change_successful);

DOCA_STABLE
doca_error_t doca_comch_server_event_connection_status_changed_register(
	struct doca_comch_server *comch_server,
	doca_comch_event_connection_status_changed_cb_t connect_event_cb,
	doca_comch_event_connection_status_changed_cb_t disconnect_event_cb);

/* ---- Connection counters ---- */

enum doca_comch_counter {
	DOCA_COMCH_COUNTER_SENT_MESSAGES = 1, /* messages this side sent on the connection */
	DOCA_COMCH_COUNTER_SENT_BYTES = 2,    /* their bytes */
	DOCA_COMCH_COUNTER_RECV_MESSAGES = 3, /* messages this side received on it */
	DOCA_COMCH_COUNTER_RECV_BYTES = 4,    /* their bytes */
};

/* Take a snapshot of the connection's counters for doca_comch_connection_get_counter.
 * DOCA_ERROR_CONNECTION_INPROGRESS before it is established,
 * DOCA_ERROR_CONNECTION_ABORTED after it failed. */
DOCA_STABLE
doca_error_t doca_comch_connection_update_info(struct doca_comch_connection *comch_connection);

/* One counter as of the last doca_comch_connection_update_info. */
DOCA_STABLE
doca_error_t doca_comch_connection_get_counter(const struct doca_comch_connection *comch_connection,
					       enum doca_comch_counter counter_type,
					       uint64_t *counter_value);

/* ---- Consumer events (fast path) ---- */

struct doca_comch_event_consumer;

/* The peer created (or destroyed) the consumer with this id on the connection. */
typedef void (*doca_comch_event_consumer_cb_t)(struct doca_comch_event_consumer *event,
					       struct doca_comch_connection *comch_connection,
					       uint32_t id);

DOCA_STABLE
doca_error_t doca_comch_server_event_consumer_register(struct doca_comch_server *comch_server,
						       doca_comch_event_consumer_cb_t new_consumer_event_cb,
						       doca_comch_event_consumer_cb_t expired_consumer_event_cb);

DOCA_STABLE
doca_error_t doca_comch_client_event_consumer_register(struct doca_comch_client *comch_client,
						       doca_comch_event_consumer_cb_t new_consumer_event_cb,
						       doca_comch_event_consumer_cb_t expired_consumer_event_cb);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_COMCH_H_ */
