/*
 * softdoca — the comch transport (see channel.h): the frame format and
 * its strict parser, the rendezvous paths on a PCIe link, listening, connecting,
 * and sending/receiving frames on non-blocking SOCK_SEQPACKET sockets.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "channel.h"
#include "dev_rep.h"
#include "log_internal.h"
#include "secret.h"

SDK_LOG_REGISTER(COMCH_CHANNEL)

#define COMCH_LISTEN_BACKLOG 64

/* ---- little-endian field access ---- */

static void put_u16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put_u32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint16_t get_u16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

/* ---- frames ---- */

void comch_frame_put_hdr(uint8_t *hdr, uint16_t type, uint32_t seq, uint32_t payload_len)
{
	put_u32(hdr, COMCH_WIRE_MAGIC);
	put_u16(hdr + 4, COMCH_WIRE_VERSION);
	put_u16(hdr + 6, type);
	put_u32(hdr + 8, seq);
	put_u32(hdr + 12, payload_len);
}

uint32_t comch_hello_encode(uint8_t *buf, uint32_t max_msg_size, uint32_t recv_queue_size, const char *name,
			    uint16_t name_len, const uint8_t secret[COMCH_SECRET_LEN])
{
	put_u32(buf, max_msg_size);
	put_u32(buf + 4, recv_queue_size);
	put_u16(buf + 8, name_len);
	put_u16(buf + 10, 0);
	memcpy(buf + 12, secret, COMCH_SECRET_LEN);
	memcpy(buf + COMCH_HELLO_FIXED_LEN, name, name_len);
	return COMCH_HELLO_FIXED_LEN + name_len;
}

void comch_consumer_new_encode(uint8_t *buf, uint32_t id, uint32_t slots, uint32_t slot_size, uint32_t imm_max)
{
	put_u32(buf, id);
	put_u32(buf + 4, slots);
	put_u32(buf + 8, slot_size);
	put_u32(buf + 12, imm_max);
	put_u32(buf + 16, 0);
}

static const char *frame_type_name(uint16_t type)
{
	switch (type) {
	case COMCH_FRAME_HELLO:
		return "HELLO";
	case COMCH_FRAME_WELCOME:
		return "WELCOME";
	case COMCH_FRAME_REJECT:
		return "REJECT";
	case COMCH_FRAME_MSG:
		return "MSG";
	case COMCH_FRAME_BYE:
		return "BYE";
	case COMCH_FRAME_CONSUMER_NEW:
		return "CONSUMER_NEW";
	case COMCH_FRAME_CONSUMER_GONE:
		return "CONSUMER_GONE";
	default:
		return "?";
	}
}

static doca_error_t parse_hello(struct comch_frame *f, const char *who)
{
	const uint8_t *p = f->payload;
	uint16_t name_len;

	if (f->len < COMCH_HELLO_FIXED_LEN) {
		SDK_LOG_ERR("%s: HELLO of %u bytes is shorter than its fixed part (%u)", who, f->len,
			    COMCH_HELLO_FIXED_LEN);
		return DOCA_ERROR_INVALID_VALUE;
	}
	name_len = get_u16(p + 8);
	if (name_len == 0 || name_len >= COMCH_MAX_NAME_LEN) {
		SDK_LOG_ERR("%s: HELLO names a server of %u bytes (1..%u)", who, name_len, COMCH_MAX_NAME_LEN - 1);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (f->len != COMCH_HELLO_FIXED_LEN + name_len) {
		SDK_LOG_ERR("%s: HELLO of %u bytes does not match its name length %u", who, f->len, name_len);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (get_u16(p + 10) != 0) {
		SDK_LOG_ERR("%s: HELLO has a non-zero reserved field", who);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (memchr(p + COMCH_HELLO_FIXED_LEN, '\0', name_len) != NULL) {
		SDK_LOG_ERR("%s: HELLO's server name holds a NUL byte", who);
		return DOCA_ERROR_INVALID_VALUE;
	}
	f->u.hello.max_msg_size = get_u32(p);
	f->u.hello.recv_queue_size = get_u32(p + 4);
	f->u.hello.name_len = name_len;
	f->u.hello.secret = p + 12;
	f->u.hello.name = (const char *)(p + COMCH_HELLO_FIXED_LEN);
	return DOCA_SUCCESS;
}

static doca_error_t parse_consumer_new(struct comch_frame *f, const char *who)
{
	const uint8_t *p = f->payload;

	f->u.consumer.id = get_u32(p);
	f->u.consumer.slots = get_u32(p + 4);
	f->u.consumer.slot_size = get_u32(p + 8);
	f->u.consumer.imm_max = get_u32(p + 12);
	if (f->u.consumer.id == 0 || f->u.consumer.slots == 0 || f->u.consumer.slots > COMCH_FP_MAX_SLOTS ||
	    f->u.consumer.slot_size == 0 || f->u.consumer.slot_size > COMCH_FP_MAX_BUF ||
	    f->u.consumer.imm_max > COMCH_FP_MAX_IMM || get_u32(p + 16) != 0) {
		SDK_LOG_ERR("%s: CONSUMER_NEW out of range (id %u, %u slots of %u bytes, %u immediate bytes)", who,
			    f->u.consumer.id, f->u.consumer.slots, f->u.consumer.slot_size, f->u.consumer.imm_max);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

/* The payload length each type must have (or bounds). */
static doca_error_t parse_payload(struct comch_frame *f, uint32_t max_msg, const char *who)
{
	switch (f->type) {
	case COMCH_FRAME_HELLO:
		return parse_hello(f, who);
	case COMCH_FRAME_WELCOME:
		if (f->len != 8)
			break;
		f->u.welcome.max_msg_size = get_u32(f->payload);
		f->u.welcome.conn_id = get_u32(f->payload + 4);
		return DOCA_SUCCESS;
	case COMCH_FRAME_REJECT:
		if (f->len != 4)
			break;
		f->u.reject.reason = get_u32(f->payload);
		return DOCA_SUCCESS;
	case COMCH_FRAME_MSG:
		if (f->len == 0 || f->len > max_msg) {
			SDK_LOG_ERR("%s: message of %u bytes (1..%u allowed)", who, f->len, max_msg);
			return DOCA_ERROR_INVALID_VALUE;
		}
		return DOCA_SUCCESS;
	case COMCH_FRAME_BYE:
		if (f->len != 0)
			break;
		return DOCA_SUCCESS;
	case COMCH_FRAME_CONSUMER_NEW:
		if (f->len != COMCH_CONSUMER_NEW_LEN)
			break;
		return parse_consumer_new(f, who);
	case COMCH_FRAME_CONSUMER_GONE:
		if (f->len != 4)
			break;
		f->u.consumer.id = get_u32(f->payload);
		if (f->u.consumer.id == 0) {
			SDK_LOG_ERR("%s: CONSUMER_GONE for consumer 0", who);
			return DOCA_ERROR_INVALID_VALUE;
		}
		return DOCA_SUCCESS;
	default:
		SDK_LOG_ERR("%s: frame of unknown type %u", who, f->type);
		return DOCA_ERROR_INVALID_VALUE;
	}
	SDK_LOG_ERR("%s: %s frame with a payload of %u bytes", who, frame_type_name(f->type), f->len);
	return DOCA_ERROR_INVALID_VALUE;
}

doca_error_t comch_frame_parse(const uint8_t *buf, size_t len, uint32_t max_msg, const char *who,
			       struct comch_frame *out)
{
	struct comch_frame f;
	uint32_t magic, version, plen;
	doca_error_t status;

	if (buf == NULL || len < COMCH_HDR_LEN) {
		SDK_LOG_ERR("%s: frame of %zu bytes is shorter than a header (%u)", who, len, COMCH_HDR_LEN);
		return DOCA_ERROR_INVALID_VALUE;
	}
	magic = get_u32(buf);
	version = get_u16(buf + 4);
	if (magic != COMCH_WIRE_MAGIC) {
		SDK_LOG_ERR("%s: frame with bad magic 0x%08x", who, magic);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (version != COMCH_WIRE_VERSION) {
		SDK_LOG_ERR("%s: frame of wire version %u (this softdoca speaks %u)", who, version,
			    COMCH_WIRE_VERSION);
		return DOCA_ERROR_INVALID_VALUE;
	}
	plen = get_u32(buf + 12);
	if (len > COMCH_MAX_FRAME || plen != len - COMCH_HDR_LEN) {
		SDK_LOG_ERR("%s: frame says %u payload bytes but carries %zu", who, plen, len - COMCH_HDR_LEN);
		return DOCA_ERROR_INVALID_VALUE;
	}
	memset(&f, 0, sizeof(f));
	f.type = get_u16(buf + 6);
	f.seq = get_u32(buf + 8);
	f.len = plen;
	f.payload = buf + COMCH_HDR_LEN;
	status = parse_payload(&f, max_msg, who);
	if (status != DOCA_SUCCESS)
		return status;
	*out = f;
	return DOCA_SUCCESS;
}

/* ---- rendezvous ---- */

doca_error_t comch_name_check(const char *name, const char *func)
{
	size_t len;

	if (name == NULL) {
		SDK_LOG_ERR("%s: name is NULL", func);
		return DOCA_ERROR_INVALID_VALUE;
	}
	len = strnlen(name, COMCH_MAX_NAME_LEN);
	if (len == 0 || len >= COMCH_MAX_NAME_LEN) {
		SDK_LOG_ERR("%s: server name must be 1..%u bytes long", func, COMCH_MAX_NAME_LEN - 1);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

/* FNV-1a: names map to fixed-length file names (a name may hold '/'). */
static uint64_t name_hash(const char *name)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (const unsigned char *p = (const unsigned char *)name; *p != '\0'; p++)
		h = (h ^ *p) * 0x100000001b3ull;
	return h;
}

/* The name in the link's directory of one of its files, as dev_rep
 * builds it ("<pci>.<leaf>"): the path less the directory. */
static doca_error_t rendezvous_name(const struct softdoca_pcie_link *link, const char *leaf,
				    char name[COMCH_RDV_NAME_MAX])
{
	char path[SOFTDOCA_PCIE_DIR_MAX + COMCH_RDV_NAME_MAX];
	size_t dir_len = strnlen(link->dir, sizeof(link->dir));
	doca_error_t status = softdoca_pcie_link_path(link, leaf, path, sizeof(path));

	if (status != DOCA_SUCCESS)
		return status;
	if (strncmp(path, link->dir, dir_len) != 0 || path[dir_len] != '/' ||
	    strlen(path + dir_len + 1) >= COMCH_RDV_NAME_MAX) {
		SDK_LOG_ERR("comch: %s is not a file name in %s", path, link->dir);
		return DOCA_ERROR_INVALID_VALUE;
	}
	memcpy(name, path + dir_len + 1, strlen(path + dir_len + 1) + 1);
	return DOCA_SUCCESS;
}

/* The link's two files of server name: "<pci>.comch-<hash>-sock" and
 * "-key" (the leaf rule refuses most bytes a name may hold, so the name
 * is hashed; HELLO carries the name itself, which the server compares). */
static doca_error_t rendezvous_names(const struct softdoca_pcie_link *link, const char *name,
				     char sock_name[COMCH_RDV_NAME_MAX], char secret_name[COMCH_RDV_NAME_MAX])
{
	char leaf[40];
	uint64_t h = name_hash(name);
	doca_error_t status;

	snprintf(leaf, sizeof(leaf), "comch-%016llx-sock", (unsigned long long)h);
	status = rendezvous_name(link, leaf, sock_name);
	if (status != DOCA_SUCCESS)
		return status;
	snprintf(leaf, sizeof(leaf), "comch-%016llx-key", (unsigned long long)h);
	return rendezvous_name(link, leaf, secret_name);
}

/* The link's directory, for the *at() calls: whatever happens to its path
 * meanwhile, every file goes to the directory opened here. It passed
 * dev_rep's checks (ours or root's, not group/other-writable) when the
 * link was taken. */
static doca_error_t rendezvous_dir_open(const struct softdoca_pcie_link *link, const char *who, int *dirfd_out)
{
	int fd = open(link->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0) {
		SDK_LOG_ERR("%s: rendezvous directory %s: %s", who, link->dir, strerror(errno));
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	*dirfd_out = fd;
	return DOCA_SUCCESS;
}

/* The address of socket file name in the directory dir (open as dirfd).
 * A socket address holds 107 bytes of path, the directory up to 255: a
 * path too long goes through the descriptor ("/proc/self/fd/<dirfd>/
 * <name>", about 60 bytes), which the kernel resolves to the same
 * directory; a path that fits is used as it is (no need for /proc). */
static doca_error_t rendezvous_sockaddr(int dirfd, const char *dir, const char *name, struct sockaddr_un *sa)
{
	int n;

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	n = snprintf(sa->sun_path, sizeof(sa->sun_path), "%s/%s", dir, name);
	if (n >= 0 && (size_t)n < sizeof(sa->sun_path))
		return DOCA_SUCCESS;
	n = snprintf(sa->sun_path, sizeof(sa->sun_path), "/proc/self/fd/%d/%s", dirfd, name);
	if (n >= 0 && (size_t)n < sizeof(sa->sun_path))
		return DOCA_SUCCESS;
	SDK_LOG_ERR("comch: no socket address for %s in %s", name, dir); /* names are short: not seen */
	return DOCA_ERROR_INVALID_VALUE;
}

/* shutdown before close: the peer sees the end at once even when the
 * kernel releases the socket later (another thread, e.g. the watcher
 * polling it, may hold a passing reference to it). */
static void socket_end(int fd)
{
	(void)shutdown(fd, SHUT_RDWR);
	close(fd);
}

static int seqpacket_socket(void)
{
	return socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
}

/* ---- secret file ---- */

/* Write the secret to a file of our own, then rename it into place: a
 * client never reads half a secret. */
static doca_error_t secret_publish(int dirfd, const char *dir, const char *name,
				   const uint8_t secret[COMCH_SECRET_LEN])
{
	char tmp[COMCH_RDV_NAME_MAX + 16];
	int fd;
	ssize_t n;

	snprintf(tmp, sizeof(tmp), "%s.%d", name, (int)getpid());
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		SDK_LOG_ERR("comch: cannot write server secret %s/%s: %s", dir, tmp, strerror(errno));
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	n = write(fd, secret, COMCH_SECRET_LEN);
	close(fd);
	if (n != (ssize_t)COMCH_SECRET_LEN || renameat(dirfd, tmp, dirfd, name) != 0) {
		SDK_LOG_ERR("comch: cannot publish server secret %s/%s: %s", dir, name, strerror(errno));
		unlinkat(dirfd, tmp, 0);
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	return DOCA_SUCCESS;
}

static doca_error_t secret_read(int dirfd, const char *dir, const char *name, uint8_t secret[COMCH_SECRET_LEN])
{
	struct stat st;
	ssize_t n;
	int fd;

	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return DOCA_ERROR_NOT_FOUND; /* the server is between bind and publish: retry */
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size != (off_t)COMCH_SECRET_LEN) {
		SDK_LOG_ERR("comch: server secret %s/%s is not a %u-byte file", dir, name, COMCH_SECRET_LEN);
		close(fd);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	n = read(fd, secret, COMCH_SECRET_LEN);
	close(fd);
	if (n != (ssize_t)COMCH_SECRET_LEN) {
		SDK_LOG_ERR("comch: cannot read server secret %s/%s", dir, name);
		return DOCA_ERROR_IO_FAILED;
	}
	return DOCA_SUCCESS;
}

/* ---- listener ---- */

/* Is something listening at sa? (Only a live server accepts.) */
static bool addr_has_listener(const struct sockaddr_un *sa)
{
	int fd = seqpacket_socket();
	bool live;

	if (fd < 0)
		return false;
	live = connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0 || errno == EAGAIN;
	close(fd);
	return live;
}

/* Bind and listen at sa, and note what we bound (to unlink only our own). */
static doca_error_t listener_bind(struct comch_listener *l, const struct sockaddr_un *sa, const char *name)
{
	struct stat st;
	int err;

	l->fd = seqpacket_socket();
	if (l->fd < 0) {
		SDK_LOG_ERR("comch server \"%s\": socket: %s", name, strerror(errno));
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	if (bind(l->fd, (const struct sockaddr *)sa, sizeof(*sa)) != 0 || listen(l->fd, COMCH_LISTEN_BACKLOG) != 0 ||
	    fstatat(l->dirfd, l->sock_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		err = errno;
		SDK_LOG_ERR("comch server \"%s\": cannot listen on %s/%s: %s", name, l->dir, l->sock_name, strerror(err));
		close(l->fd);
		l->fd = -1;
		return err == EADDRINUSE ? DOCA_ERROR_IN_USE : DOCA_ERROR_OPERATING_SYSTEM;
	}
	l->sock_dev = st.st_dev;
	l->sock_ino = st.st_ino;
	return DOCA_SUCCESS;
}

doca_error_t comch_listener_open(struct comch_listener *l, const struct softdoca_pcie_link *link, const char *name)
{
	struct sockaddr_un sa;
	doca_error_t status;

	memset(l, 0, sizeof(*l));
	l->fd = l->dirfd = -1;
	memcpy(l->dir, link->dir, sizeof(l->dir));
	status = rendezvous_names(link, name, l->sock_name, l->secret_name);
	if (status != DOCA_SUCCESS)
		return status;
	status = rendezvous_dir_open(link, "comch server", &l->dirfd);
	if (status != DOCA_SUCCESS)
		return status;
	status = rendezvous_sockaddr(l->dirfd, l->dir, l->sock_name, &sa);
	if (status != DOCA_SUCCESS)
		goto close_dir;
	if (addr_has_listener(&sa)) {
		SDK_LOG_ERR("comch server \"%s\": another server already listens under that name", name);
		status = DOCA_ERROR_IN_USE;
		goto close_dir;
	}
	unlinkat(l->dirfd, l->sock_name, 0); /* a departed server's socket */
	status = softdoca_secret_generate(l->secret, COMCH_SECRET_LEN);
	if (status != DOCA_SUCCESS)
		goto close_dir;
	status = listener_bind(l, &sa, name);
	if (status != DOCA_SUCCESS)
		goto close_dir;
	status = secret_publish(l->dirfd, l->dir, l->secret_name, l->secret);
	if (status != DOCA_SUCCESS)
		goto unlink_sock;
	SDK_LOG_DBG("comch server \"%s\" listens on %s/%s", name, l->dir, l->sock_name);
	return DOCA_SUCCESS;

unlink_sock:
	unlinkat(l->dirfd, l->sock_name, 0);
	close(l->fd);
	l->fd = -1;
close_dir:
	close(l->dirfd);
	l->dirfd = -1;
	return status;
}

void comch_listener_close(struct comch_listener *l)
{
	struct stat st;

	if (l->fd < 0)
		return;
	/* A later server of the same name may have replaced our files. */
	if (fstatat(l->dirfd, l->sock_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_dev == l->sock_dev &&
	    st.st_ino == l->sock_ino) {
		unlinkat(l->dirfd, l->sock_name, 0);
		unlinkat(l->dirfd, l->secret_name, 0);
	}
	socket_end(l->fd); /* refuses new clients at once */
	l->fd = -1;
	close(l->dirfd);
	l->dirfd = -1;
}

doca_error_t comch_listener_accept(struct comch_listener *l, int *fd_out)
{
	struct ucred cred;
	socklen_t cred_len = sizeof(cred);
	int fd;

	fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNABORTED)
			return DOCA_ERROR_AGAIN;
		SDK_LOG_ERR_RL("comch server: accept: %s", strerror(errno));
		return DOCA_ERROR_AGAIN;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cred_len) != 0 ||
	    (cred.uid != geteuid() && cred.uid != 0)) {
		SDK_LOG_ERR_RL("comch server: refused a client of another user (uid %u)", (unsigned int)cred.uid);
		close(fd);
		return DOCA_ERROR_AGAIN;
	}
	*fd_out = fd;
	return DOCA_SUCCESS;
}

/* ---- connect ---- */

/* Connect a new socket to sa: the socket, or -1 with *status set. */
static int connect_to(const struct sockaddr_un *sa, const char *dir, const char *name, doca_error_t *status)
{
	int fd = seqpacket_socket(), err;

	if (fd < 0) {
		SDK_LOG_ERR("comch client: socket: %s", strerror(errno));
		*status = DOCA_ERROR_OPERATING_SYSTEM;
		return -1;
	}
	if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0)
		return fd;
	err = errno;
	close(fd);
	if (err == ENOENT || err == ECONNREFUSED)
		*status = DOCA_ERROR_NOT_FOUND;
	else if (err == EAGAIN || err == EINTR)
		*status = DOCA_ERROR_AGAIN;
	else {
		SDK_LOG_ERR("comch client: connect to %s/%s: %s", dir, name, strerror(err));
		*status = DOCA_ERROR_OPERATING_SYSTEM;
	}
	return -1;
}

doca_error_t comch_connect(const struct softdoca_pcie_link *link, const char *name, int *fd_out,
			   uint8_t secret_out[COMCH_SECRET_LEN])
{
	char sock_name[COMCH_RDV_NAME_MAX], secret_name[COMCH_RDV_NAME_MAX];
	struct sockaddr_un sa;
	doca_error_t status;
	int dirfd, fd;

	status = rendezvous_names(link, name, sock_name, secret_name);
	if (status != DOCA_SUCCESS)
		return status;
	status = rendezvous_dir_open(link, "comch client", &dirfd);
	if (status != DOCA_SUCCESS)
		return status;
	status = rendezvous_sockaddr(dirfd, link->dir, sock_name, &sa);
	fd = status == DOCA_SUCCESS ? connect_to(&sa, link->dir, sock_name, &status) : -1;
	/* Read the secret after the connect: the one of the server we reached. */
	if (fd >= 0) {
		status = secret_read(dirfd, link->dir, secret_name, secret_out);
		if (status != DOCA_SUCCESS)
			close(fd);
	}
	close(dirfd);
	if (status != DOCA_SUCCESS)
		return status;
	*fd_out = fd;
	return DOCA_SUCCESS;
}

/* ---- channel ---- */

doca_error_t comch_chan_init(struct comch_chan *chan, int fd)
{
	memset(chan, 0, sizeof(*chan));
	chan->fd = fd;
	chan->rx_buf = malloc(COMCH_MAX_FRAME + 1);
	if (chan->rx_buf == NULL) {
		SDK_LOG_ERR("comch: no memory for a receive buffer");
		close(fd);
		chan->fd = -1;
		return DOCA_ERROR_NO_MEMORY;
	}
	return DOCA_SUCCESS;
}

void comch_chan_close(struct comch_chan *chan)
{
	if (chan->fd >= 0)
		socket_end(chan->fd);
	chan->fd = -1;
}

void comch_chan_fini(struct comch_chan *chan)
{
	comch_chan_close(chan);
	free(chan->rx_buf);
	chan->rx_buf = NULL;
}

doca_error_t comch_chan_send_fds(struct comch_chan *chan, uint16_t type, const void *payload, uint32_t len,
				 const int *fds, unsigned int nfds)
{
	union {
		struct cmsghdr hdr;
		char buf[CMSG_SPACE(sizeof(int) * COMCH_MAX_FDS)];
	} ctl;
	uint8_t hdr[COMCH_HDR_LEN];
	struct iovec iov[2];
	struct msghdr mh;
	ssize_t n;

	if (nfds > COMCH_MAX_FDS)
		return DOCA_ERROR_INVALID_VALUE;
	comch_frame_put_hdr(hdr, type, chan->tx_seq + 1, len);
	iov[0].iov_base = hdr;
	iov[0].iov_len = sizeof(hdr);
	iov[1].iov_base = (void *)payload;
	iov[1].iov_len = len;
	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = iov;
	mh.msg_iovlen = len > 0 ? 2 : 1;
	if (nfds > 0) {
		struct cmsghdr *cm;

		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
	}
	do {
		n = sendmsg(chan->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS)
			return DOCA_ERROR_AGAIN;
		return DOCA_ERROR_CONNECTION_RESET;
	}
	/* SEQPACKET sends a whole record or nothing. */
	chan->tx_seq++;
	return DOCA_SUCCESS;
}

doca_error_t comch_chan_send(struct comch_chan *chan, uint16_t type, const void *payload, uint32_t len)
{
	return comch_chan_send_fds(chan, type, payload, len, NULL, 0);
}

static void fds_close(int *fds, unsigned int nfds)
{
	for (unsigned int i = 0; i < nfds; i++)
		close(fds[i]);
}

/* Take the descriptors a datagram carried; false if the control data was
 * cut (more than we take) or not SCM_RIGHTS (all closed then). */
static bool fds_collect(struct msghdr *mh, int fds[COMCH_MAX_FDS], unsigned int *nfds)
{
	bool ok = (mh->msg_flags & MSG_CTRUNC) == 0;

	*nfds = 0;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm != NULL; cm = CMSG_NXTHDR(mh, cm)) {
		size_t n;
		int got[COMCH_MAX_FDS + 1];

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS) {
			ok = false;
			continue;
		}
		n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		if (n > ARRAY_SIZE(got))
			n = ARRAY_SIZE(got);
		memcpy(got, CMSG_DATA(cm), n * sizeof(int));
		for (size_t i = 0; i < n; i++) {
			if (*nfds < COMCH_MAX_FDS)
				fds[(*nfds)++] = got[i];
			else {
				close(got[i]);
				ok = false;
			}
		}
	}
	if (!ok) {
		fds_close(fds, *nfds);
		*nfds = 0;
	}
	return ok;
}

/* How many descriptors a frame type comes with. */
static unsigned int frame_fds_expected(uint16_t type)
{
	return type == COMCH_FRAME_CONSUMER_NEW ? 2u : 0u;
}

doca_error_t comch_chan_recv(struct comch_chan *chan, uint32_t max_msg, const char *who, struct comch_frame *out)
{
	union {
		struct cmsghdr hdr;
		char buf[CMSG_SPACE(sizeof(int) * COMCH_MAX_FDS)];
	} ctl;
	int fds[COMCH_MAX_FDS];
	unsigned int nfds;
	struct comch_frame f;
	struct iovec iov;
	struct msghdr mh;
	doca_error_t status;
	ssize_t n;

	iov.iov_base = chan->rx_buf;
	iov.iov_len = COMCH_MAX_FRAME + 1;
	do {
		memset(&mh, 0, sizeof(mh));
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = ctl.buf;
		mh.msg_controllen = sizeof(ctl.buf);
		/* MSG_TRUNC: the datagram's real length, so an oversized one is
		 * seen as such rather than silently cut. */
		n = recvmsg(chan->fd, &mh, MSG_DONTWAIT | MSG_TRUNC | MSG_CMSG_CLOEXEC);
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return DOCA_ERROR_AGAIN;
		return DOCA_ERROR_CONNECTION_RESET;
	}
	if (!fds_collect(&mh, fds, &nfds)) {
		SDK_LOG_ERR("%s: a frame came with more or other ancillary data than any frame takes", who);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (n == 0) {
		fds_close(fds, nfds);
		return DOCA_ERROR_CONNECTION_RESET; /* orderly close or the peer died */
	}
	if ((size_t)n > COMCH_MAX_FRAME) {
		SDK_LOG_ERR("%s: frame of %zd bytes, at most %u", who, n, COMCH_MAX_FRAME);
		fds_close(fds, nfds);
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = comch_frame_parse(chan->rx_buf, (size_t)n, max_msg, who, &f);
	if (status == DOCA_SUCCESS && nfds != frame_fds_expected(f.type)) {
		SDK_LOG_ERR("%s: %s frame with %u descriptors attached (%u expected)", who, frame_type_name(f.type),
			    nfds, frame_fds_expected(f.type));
		status = DOCA_ERROR_INVALID_VALUE;
	}
	if (status == DOCA_SUCCESS && f.seq != chan->rx_seq + 1) {
		SDK_LOG_ERR("%s: frame %u arrived where %u was due", who, f.seq, chan->rx_seq + 1);
		status = DOCA_ERROR_INVALID_VALUE;
	}
	if (status != DOCA_SUCCESS) {
		fds_close(fds, nfds);
		return status;
	}
	chan->rx_seq = f.seq;
	memcpy(f.fds, fds, sizeof(fds));
	f.nfds = nfds;
	*out = f;
	return DOCA_SUCCESS;
}
