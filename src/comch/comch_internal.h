/*
 * softdoca — what the comch control path (comch.c) and the fast path
 * (comch_fastpath.c) share: a connection's hooks for producers and
 * consumers, and the consumer queue in shared memory. Not installed.
 *
 * The fast path. A consumer owns a queue: a sealed memfd of one header
 * and `slots` slots, and a doorbell, a pair of Unix datagram sockets. It
 * announces the queue on its connection (CONSUMER_NEW, the memfd and one
 * end of the doorbell as SCM_RIGHTS); the peer maps it (a remote consumer
 * of that connection) and fires its new-consumer event. A post_recv task
 * writes the room of its buffer into the next slot's cap and bumps
 * `posted`; a producer send copies its bytes and immediate data into the
 * next slot, bumps `produced` and rings the doorbell (a one-byte datagram
 * sent with MSG_DONTWAIT: never a wait, whatever the peer did to the
 * socket; an eventfd or a pipe could block); the consumer copies the slot
 * into the task's buffer. Slot k
 * belongs to the k-th posted task, so messages arrive in send order.
 * Everything a peer writes into the queue is hostile: each side bounds
 * every index and length with values of its own.
 *
 * Threads: a connection, and the producers and consumers on it, are used
 * from one thread at a time (any PEs).
 */
#ifndef SOFTDOCA_COMCH_INTERNAL_H_
#define SOFTDOCA_COMCH_INTERNAL_H_

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <doca_comch.h>

#include "channel.h"

#define COMCH_QUEUE_MAGIC 0x51484353u /* "SCHQ" */
#define COMCH_QUEUE_VERSION 1u
/* Remote consumers one connection holds at most (the consumer cap). */
#define COMCH_FP_MAX_CONSUMERS 512u

/* The queue header, at offset 0 of the memfd; the cap array follows, then
 * the slots (each COMCH_SLOT_HDR bytes of struct comch_slot, then
 * slot_size data bytes, the whole rounded up to 64). */
struct comch_queue_hdr {
	uint32_t magic;
	uint32_t version;
	uint32_t slots;
	uint32_t slot_size;
	uint32_t imm_max;
	uint32_t reserved[11];
	_Atomic uint32_t posted; /* consumer: buffers posted, ever (wraps) */
	uint32_t pad1[15];
	_Atomic uint32_t produced; /* producers: slots filled, ever (wraps) */
	uint32_t pad2[15];
};

struct comch_slot {
	uint32_t len;
	uint32_t imm_len;
	uint32_t producer_id;
	uint32_t reserved;
	uint8_t imm[COMCH_FP_MAX_IMM];
};

#define COMCH_SLOT_HDR ((uint32_t)sizeof(struct comch_slot))

static inline uint32_t comch_queue_stride(uint32_t slot_size)
{
	return (COMCH_SLOT_HDR + slot_size + 63u) & ~63u;
}

/* Byte offset of the cap array. */
static inline size_t comch_queue_cap_off(void)
{
	return sizeof(struct comch_queue_hdr);
}

/* Byte offset of slot i's header. */
static inline size_t comch_queue_slot_off(uint32_t slots, uint32_t slot_size, uint32_t i)
{
	size_t slots_off = (comch_queue_cap_off() + (size_t)slots * sizeof(uint32_t) + 63u) & ~(size_t)63u;

	return slots_off + (size_t)i * comch_queue_stride(slot_size);
}

/* Bytes of a queue of these dimensions (fits in size_t: both bounded). */
static inline size_t comch_queue_size(uint32_t slots, uint32_t slot_size)
{
	return comch_queue_slot_off(slots, slot_size, slots);
}

/* A consumer of the peer, mapped on this side (the producers' view). */
struct comch_remote_consumer {
	uint32_t id;
	uint32_t slots;
	uint32_t slot_size;
	uint32_t imm_max;
	uint32_t produced; /* our count: never read back from the queue */
	uint8_t *map;
	size_t map_len;
	int bell; /* the consumer's doorbell: a Unix datagram socket */
	struct comch_remote_consumer *next;
};

/* Map the queue of a CONSUMER_NEW frame (takes f's descriptors, closes
 * them on failure). DOCA_ERROR_INVALID_VALUE with a log line when the
 * descriptors are not a sealed memfd of the announced size and a Unix
 * datagram socket. */
doca_error_t comch_remote_consumer_open(const struct comch_frame *f, const char *who,
					struct comch_remote_consumer **out);
void comch_remote_consumer_close(struct comch_remote_consumer *rc);

/* A producer or consumer attached to a connection. */
struct comch_fp_link {
	struct doca_comch_connection *conn; /* NULL once the connection was freed */
	bool lost;			    /* the connection died or was closed */
	struct comch_fp_link *next;
};

/* Attach link (conn must be established): DOCA_ERROR_INVALID_VALUE (logged
 * naming func) otherwise. */
doca_error_t comch_conn_fp_attach(struct doca_comch_connection *conn, struct comch_fp_link *link,
				  const char *func);
void comch_conn_fp_detach(struct comch_fp_link *link);
/* Whether the connection still stands; also notices a peer that died
 * while nobody progressed the connection's own context. */
bool comch_conn_fp_alive(struct comch_fp_link *link);
/* Send a frame on the link's connection (as comch_chan_send_fds). */
doca_error_t comch_conn_fp_send(struct comch_fp_link *link, uint16_t type, const void *payload, uint32_t len,
				const int *fds, unsigned int nfds);
/* The peer's consumer id on the link's connection, or NULL. */
struct comch_remote_consumer *comch_conn_fp_consumer(struct comch_fp_link *link, uint32_t id);
/* The device of the connection's context (NULL when gone). */
struct doca_dev *comch_conn_fp_dev(struct comch_fp_link *link);

/* A capability query's answer: value into *out, or DOCA_ERROR_INVALID_VALUE
 * (logged naming func) when devinfo or out is NULL. */
doca_error_t comch_cap_u32(const struct doca_devinfo *devinfo, uint32_t *out, uint32_t value, const char *func);

#endif /* SOFTDOCA_COMCH_INTERNAL_H_ */
