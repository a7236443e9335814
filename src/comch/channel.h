/*
 * softdoca — the comch transport: framed messages between a comch server
 * and its clients over Unix-domain SOCK_SEQPACKET sockets. Not installed.
 *
 * The kernel keeps record boundaries and order, so one frame is one
 * datagram: a 16-byte header (magic, version, type, sequence number,
 * payload length; little-endian) and its payload. Every frame read is
 * hostile until comch_frame_parse has proven it well formed; the caller
 * drops a connection whose frame fails (one log line names what was
 * wrong).
 *
 * A connection begins with HELLO (client: server name, the server's
 * secret, its limits) answered by WELCOME (server: its limits, the
 * connection id) or REJECT; then MSG frames in both directions, and BYE
 * from whichever side leaves. A closed socket (EOF, ECONNRESET) is a dead
 * peer: the kernel reports it at once when a process dies. The fast path
 * adds CONSUMER_NEW (a consumer's queue: its parameters, and its shared
 * memory and doorbell socket as SCM_RIGHTS) and CONSUMER_GONE, either
 * direction.
 *
 * The rendezvous is the emulated PCIe link of dev_rep.h: a server named N
 * bound to the representor of function F listens on
 * <dir>/<F>.comch-<hash(N)>-sock and writes its secret to
 * <dir>/<F>.comch-<hash(N)>-key (mode 0600); a client on the host device
 * of F must read that file to connect, and the server checks the peer's
 * uid (SO_PEERCRED). A client on another function looks at other paths.
 * Files are named relative to a descriptor of <dir>, so a directory as
 * long as dev_rep allows (255 characters) works though a socket address
 * holds only 107.
 *
 * Everything here is non-blocking and runs on the caller's thread.
 */
#ifndef SOFTDOCA_COMCH_CHANNEL_H_
#define SOFTDOCA_COMCH_CHANNEL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <doca_error.h>

#include "dev_rep.h"

#define COMCH_WIRE_MAGIC 0x48434453u /* "SDCH" read as little-endian bytes */
/* 2: a consumer's doorbell is a Unix datagram socket (was an eventfd). */
#define COMCH_WIRE_VERSION 2u
#define COMCH_HDR_LEN 16u

/* Largest control message (what doca_comch_cap_get_max_msg_size reports):
 * the 4 KiB a BlueField control-channel buffer holds less its 16-byte
 * header, the figure DOCA has given for its channel since Comm Channel. */
#define COMCH_MAX_MSG_SIZE 4080u
/* Longest server name, NUL included (doca_comch_cap_get_max_name_len). */
#define COMCH_MAX_NAME_LEN 120u
#define COMCH_SECRET_LEN 16u
/* Fixed part of a HELLO payload; the name's bytes follow (no NUL). */
#define COMCH_HELLO_FIXED_LEN (4u + 4u + 2u + 2u + COMCH_SECRET_LEN)
/* Largest payload of any frame type, and so the receive buffer. */
#define COMCH_MAX_PAYLOAD COMCH_MAX_MSG_SIZE
#define COMCH_MAX_FRAME (COMCH_HDR_LEN + COMCH_MAX_PAYLOAD)

enum comch_frame_type {
	COMCH_FRAME_HELLO = 1,
	COMCH_FRAME_WELCOME = 2,
	COMCH_FRAME_REJECT = 3,
	COMCH_FRAME_MSG = 4,
	COMCH_FRAME_BYE = 5,
	COMCH_FRAME_CONSUMER_NEW = 6,
	COMCH_FRAME_CONSUMER_GONE = 7,
};

/* Fast-path limits (the consumer/producer caps). */
#define COMCH_FP_MAX_SLOTS 4096u	  /* posted receive tasks per consumer */
#define COMCH_FP_MAX_BUF (4u << 20)	  /* bytes per message */
#define COMCH_FP_MAX_IMM 32u		  /* immediate data bytes */
#define COMCH_CONSUMER_NEW_LEN 20u
/* File descriptors a frame may carry (CONSUMER_NEW: memfd, doorbell). */
#define COMCH_MAX_FDS 2u

/* Why a server refused a HELLO (the wire's own codes). */
enum comch_reject_reason {
	COMCH_REJECT_NAME = 1,   /* no server of that name here */
	COMCH_REJECT_SECRET = 2, /* the secret does not match */
	COMCH_REJECT_FULL = 3,   /* the server has its most clients */
	COMCH_REJECT_LIMITS = 4, /* sizes out of range */
};

/* A parsed frame; pointers point into the buffer that was parsed. */
struct comch_frame {
	uint16_t type;
	uint32_t seq;
	uint32_t len; /* payload bytes */
	const uint8_t *payload;
	union {
		struct {
			uint32_t max_msg_size;
			uint32_t recv_queue_size;
			const char *name; /* not NUL-terminated: name_len bytes */
			uint16_t name_len;
			const uint8_t *secret; /* COMCH_SECRET_LEN bytes */
		} hello;
		struct {
			uint32_t max_msg_size;
			uint32_t conn_id;
		} welcome;
		struct {
			uint32_t reason; /* enum comch_reject_reason */
		} reject;
		struct {
			uint32_t id;
			uint32_t slots;
			uint32_t slot_size;
			uint32_t imm_max;
		} consumer; /* CONSUMER_NEW; CONSUMER_GONE sets id only */
	} u;
	/* Descriptors that came with the frame (comch_chan_recv): the caller
	 * owns them and must close what it does not keep. */
	int fds[COMCH_MAX_FDS];
	unsigned int nfds;
};

/* Check and decode one frame of len bytes. max_msg bounds a MSG payload
 * (the receiver's own limit). DOCA_ERROR_INVALID_VALUE with one log line
 * (naming who, e.g. "comch server") for anything malformed: short, bad
 * magic/version/type, length field not the datagram's, a payload not the
 * size of its type, a name with NUL or out of range. */
doca_error_t comch_frame_parse(const uint8_t *buf, size_t len, uint32_t max_msg, const char *who,
			       struct comch_frame *out);

/* Write a header for a frame into hdr (COMCH_HDR_LEN bytes). */
void comch_frame_put_hdr(uint8_t *hdr, uint16_t type, uint32_t seq, uint32_t payload_len);

/* Encode a HELLO payload into buf (at least COMCH_HELLO_FIXED_LEN +
 * name_len bytes); returns its length. */
uint32_t comch_hello_encode(uint8_t *buf, uint32_t max_msg_size, uint32_t recv_queue_size, const char *name,
			    uint16_t name_len, const uint8_t secret[COMCH_SECRET_LEN]);

/* Encode a CONSUMER_NEW payload (COMCH_CONSUMER_NEW_LEN bytes). */
void comch_consumer_new_encode(uint8_t *buf, uint32_t id, uint32_t slots, uint32_t slot_size, uint32_t imm_max);

/* ---- Rendezvous ---- */

/* Check a server name: 1..COMCH_MAX_NAME_LEN-1 bytes before its NUL.
 * DOCA_ERROR_INVALID_VALUE with a log line naming func otherwise. */
doca_error_t comch_name_check(const char *name, const char *func);

/* One end of a connection. */
struct comch_chan {
	int fd;
	uint32_t tx_seq; /* last sequence number sent */
	uint32_t rx_seq; /* last sequence number received */
	uint8_t *rx_buf; /* COMCH_MAX_FRAME + 1 bytes */
};

/* Set up chan around a connected socket (takes fd; closes it on failure). */
doca_error_t comch_chan_init(struct comch_chan *chan, int fd);
/* Close the socket (chan->fd becomes -1); the receive buffer stays, so a
 * frame being delivered remains readable. */
void comch_chan_close(struct comch_chan *chan);
/* Close the socket and free the buffer. */
void comch_chan_fini(struct comch_chan *chan);

/* Send one frame. DOCA_SUCCESS, DOCA_ERROR_AGAIN (socket buffer full:
 * retry later, nothing was sent), DOCA_ERROR_CONNECTION_RESET (peer gone). */
doca_error_t comch_chan_send(struct comch_chan *chan, uint16_t type, const void *payload, uint32_t len);
/* The same with nfds (<= COMCH_MAX_FDS) descriptors attached (not closed). */
doca_error_t comch_chan_send_fds(struct comch_chan *chan, uint16_t type, const void *payload, uint32_t len,
				 const int *fds, unsigned int nfds);

/* Receive and parse one frame (out points into chan->rx_buf until the
 * next call). DOCA_ERROR_AGAIN: nothing to read. DOCA_ERROR_CONNECTION_RESET:
 * the peer closed or died. DOCA_ERROR_INVALID_VALUE: a malformed or
 * out-of-order frame, or descriptors on a frame that takes none or not
 * the ones it takes (logged, descriptors closed): drop the connection. */
doca_error_t comch_chan_recv(struct comch_chan *chan, uint32_t max_msg, const char *who, struct comch_frame *out);

/* ---- Listener (server) ---- */

/* Longest name of a rendezvous file in its directory, NUL included
 * ("<pci address>.comch-<16 hex digits>-sock"). */
#define COMCH_RDV_NAME_MAX 64u

struct comch_listener {
	int fd;
	int dirfd; /* the rendezvous directory: our files are named relative to it */
	char dir[SOFTDOCA_PCIE_DIR_MAX]; /* its path, for log lines */
	char sock_name[COMCH_RDV_NAME_MAX];
	char secret_name[COMCH_RDV_NAME_MAX];
	dev_t sock_dev; /* what we bound, to unlink only our own */
	ino_t sock_ino;
	uint8_t secret[COMCH_SECRET_LEN];
};

/* Listen for clients of name on link; draws a fresh secret and publishes
 * it. DOCA_ERROR_IN_USE when a live server already listens under that
 * name on that link. */
doca_error_t comch_listener_open(struct comch_listener *l, const struct softdoca_pcie_link *link, const char *name);
void comch_listener_close(struct comch_listener *l);

/* Accept one pending client whose uid is ours (or root); others are
 * closed with a log line. DOCA_ERROR_AGAIN when none is pending. */
doca_error_t comch_listener_accept(struct comch_listener *l, int *fd_out);

/* ---- Connect (client) ---- */

/* Connect to the server called name on link and read its secret.
 * DOCA_ERROR_NOT_FOUND: no such server (yet); DOCA_ERROR_AGAIN: its
 * backlog is full. Both: retry later. */
doca_error_t comch_connect(const struct softdoca_pcie_link *link, const char *name, int *fd_out,
			   uint8_t secret_out[COMCH_SECRET_LEN]);

#endif /* SOFTDOCA_COMCH_CHANNEL_H_ */
