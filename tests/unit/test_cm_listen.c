/*
 * Unit tests of where an RDMA CM server listens, over the UCX engine in one
 * process (the fixture is rdma_pair.c; A and B are contexts on soft_lo).
 * As RDMA CM binds the device's GIDs, doca_rdma_start_listen_to_port opens
 * the port at each address of the context's device and nowhere else:
 * every GID of soft_lo takes a TCP connection on the port, an address of
 * any other soft device refuses it, and another program may listen on the
 * same port number there. The documented errors hold when one port means
 * several sockets: IN_USE when another socket holds the port at any one of
 * the device's addresses (or at every address), with none of ours left
 * behind; ALREADY_EXIST when the context listens on it already; and after
 * doca_rdma_stop_listen_to_port the port is free again at every address.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_rdma.h>

#include "rdma_pair.h"

#define MAX_ADDRS 64

void rdma_pair_task_done(struct doca_task *task, bool ok, union doca_data ctx_user_data)
{
	(void)task;
	(void)ok;
	(void)ctx_user_data;
	fail_msg("no task runs in these tests");
}

static void on_request(struct doca_rdma_connection *conn, union doca_data ctxud)
{
	(void)ctxud;
	(void)doca_rdma_connection_reject(conn);
}

/* A running context on soft_lo that may listen. */
static void listener_make(struct side *s)
{
	side_create(s);
	side_conf_tasks(s, 4, false);
	assert_ok(doca_rdma_set_connection_state_callbacks(s->rdma, on_request, on_established, on_failure,
							    on_disconnect));
	assert_ok(doca_ctx_start(s->ctx));
}

/* A port A can listen on (it does, on return). */
static uint16_t listen_somewhere(struct side *s)
{
	for (uint16_t p = (uint16_t)(23000 + getpid() % 4000), tries = 0; tries < 50; p++, tries++)
		if (doca_rdma_start_listen_to_port(s->rdma, p) == DOCA_SUCCESS)
			return p;
	fail_msg("no free port to listen on in 50 tries");
	return 0;
}

/* The addresses of a device's GIDs as socket addresses; IPv6 link-local
 * ones carry their interface. */
static int gid_addrs(struct doca_devinfo *info, struct sockaddr_storage *out, socklen_t *lens, int max)
{
	struct doca_rdma_gid gids[MAX_ADDRS];
	char iface[IF_NAMESIZE + 1] = "";
	uint32_t n = 0;

	if (doca_rdma_cap_get_gid_table_size(info, &n) != DOCA_SUCCESS || n == 0)
		return 0;
	n = n > (uint32_t)max ? (uint32_t)max : n;
	assert_ok(doca_rdma_cap_get_gid(info, 0, n, gids));
	(void)doca_devinfo_get_iface_name(info, iface, sizeof(iface));
	for (uint32_t i = 0; i < n; i++) {
		static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

		memset(&out[i], 0, sizeof(out[i]));
		if (memcmp(gids[i].raw, v4mapped, sizeof(v4mapped)) == 0) {
			struct sockaddr_in *in = (struct sockaddr_in *)&out[i];

			in->sin_family = AF_INET;
			memcpy(&in->sin_addr, gids[i].raw + 12, 4);
			lens[i] = sizeof(*in);
		} else {
			struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&out[i];

			in6->sin6_family = AF_INET6;
			memcpy(&in6->sin6_addr, gids[i].raw, 16);
			if (IN6_IS_ADDR_LINKLOCAL(&in6->sin6_addr))
				in6->sin6_scope_id = if_nametoindex(iface);
			lens[i] = sizeof(*in6);
		}
	}
	return (int)n;
}

static void set_port(struct sockaddr_storage *sa, uint16_t port)
{
	if (sa->ss_family == AF_INET)
		((struct sockaddr_in *)sa)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)sa)->sin6_port = htons(port);
}

static const char *sa_text(const struct sockaddr_storage *sa, char *buf, size_t size)
{
	const void *a = sa->ss_family == AF_INET ? (const void *)&((const struct sockaddr_in *)sa)->sin_addr :
						   (const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr;

	if (inet_ntop(sa->ss_family, a, buf, (socklen_t)size) == NULL)
		snprintf(buf, size, "?");
	return buf;
}

/* 0 when a TCP connection to sa is accepted, else the errno of connect
 * (bounded: a blocking connect with a 2 s send timeout). */
static int try_connect(const struct sockaddr_storage *sa, socklen_t len)
{
	struct timeval tv = {.tv_sec = 2};
	int fd = socket(sa->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int err = 0;

	assert_true(fd >= 0);
	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)), 0);
	if (connect(fd, (const struct sockaddr *)sa, len) != 0)
		err = errno;
	close(fd);
	return err;
}

/* A listening socket of our own on sa (-1 and errno when it cannot be). */
static int raw_listen(const struct sockaddr_storage *sa, socklen_t len)
{
	int fd = socket(sa->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;

	assert_true(fd >= 0);
	if (sa->ss_family == AF_INET6)
		assert_int_equal(setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)), 0);
	if (bind(fd, (const struct sockaddr *)sa, len) != 0 || listen(fd, 4) != 0) {
		int err = errno;

		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

static bool is_soft_lo(struct doca_devinfo *info)
{
	char name[DOCA_DEVINFO_IBDEV_NAME_SIZE];

	return doca_devinfo_get_ibdev_name(info, name, sizeof(name)) == DOCA_SUCCESS && strcmp(name, "soft_lo") == 0;
}

/* The port is open at every GID of soft_lo and at no address of another
 * device, where the same port number stays free for anyone. */
static void test_listen_own_addresses_only(void **state)
{
	struct sockaddr_storage own[MAX_ADDRS], other[MAX_ADDRS];
	socklen_t own_len[MAX_ADDRS], other_len[MAX_ADDRS];
	struct doca_devinfo **list = NULL;
	uint32_t ndev = 0;
	int nown, nother = 0;
	uint16_t port;
	char text[INET6_ADDRSTRLEN];

	(void)state;
	if (!is_soft_lo(doca_dev_as_devinfo(dev)))
		skip();
	listener_make(&A);
	port = listen_somewhere(&A);
	nown = gid_addrs(doca_dev_as_devinfo(dev), own, own_len, MAX_ADDRS);
	assert_true(nown > 0);
	for (int i = 0; i < nown; i++) {
		set_port(&own[i], port);
		if (try_connect(&own[i], own_len[i]) != 0)
			fail_msg("port %u is not open at soft_lo's address %s", port, sa_text(&own[i], text, sizeof(text)));
	}
	assert_ok(doca_devinfo_create_list(&list, &ndev));
	for (uint32_t d = 0; d < ndev; d++)
		if (!is_soft_lo(list[d]))
			nother += gid_addrs(list[d], other + nother, other_len + nother, MAX_ADDRS - nother);
	assert_ok(doca_devinfo_destroy_list(list));
	for (int i = 0; i < nother; i++) {
		int err, fd;

		set_port(&other[i], port);
		err = try_connect(&other[i], other_len[i]);
		if (err != ECONNREFUSED)
			fail_msg("port %u at %s (not soft_lo's): %s", port, sa_text(&other[i], text, sizeof(text)),
				 err == 0 ? "a connection was accepted" : strerror(err));
		/* Not ours there: another program may listen on it. */
		fd = raw_listen(&other[i], other_len[i]);
		if (fd < 0)
			fail_msg("cannot listen on %s port %u beside the soft_lo server: %s",
				 sa_text(&other[i], text, sizeof(text)), port, strerror(errno));
		close(fd);
	}
	if (nother == 0)
		printf("note: no other soft device with an address here; only soft_lo's addresses were tried\n");
	assert_ok(doca_rdma_stop_listen_to_port(A.rdma, port));
	/* Stopped: the port is free at every address of soft_lo. */
	for (int i = 0; i < nown; i++) {
		int fd = raw_listen(&own[i], own_len[i]);

		if (fd < 0)
			fail_msg("port %u still taken at %s after stop: %s", port, sa_text(&own[i], text, sizeof(text)),
				 strerror(errno));
		close(fd);
	}
	side_destroy(&A);
}

/* IN_USE when another socket holds the port at any one of the device's
 * addresses, or at every address; none of the context's sockets stays
 * behind, so the port is its own once the other socket goes. */
static void test_listen_in_use(void **state)
{
	struct sockaddr_storage own[MAX_ADDRS], any;
	socklen_t own_len[MAX_ADDRS], any_len;
	uint16_t port;
	int nown;

	(void)state;
	listener_make(&A);
	listener_make(&B);
	port = listen_somewhere(&A);
	/* Held by this context: ALREADY_EXIST; by another: IN_USE. */
	assert_fails(doca_rdma_start_listen_to_port(A.rdma, port), DOCA_ERROR_ALREADY_EXIST);
	assert_int_equal(doca_rdma_start_listen_to_port(B.rdma, port), DOCA_ERROR_IN_USE);
	assert_ok(doca_rdma_stop_listen_to_port(A.rdma, port));

	nown = gid_addrs(doca_dev_as_devinfo(dev), own, own_len, MAX_ADDRS);
	assert_true(nown > 0);
	for (int i = 0; i < nown; i++) {
		int fd;

		set_port(&own[i], port);
		fd = raw_listen(&own[i], own_len[i]);
		assert_true(fd >= 0);
		assert_int_equal(doca_rdma_start_listen_to_port(B.rdma, port), DOCA_ERROR_IN_USE);
		close(fd);
		/* The sockets B opened at the other addresses are gone. */
		assert_ok(doca_rdma_start_listen_to_port(B.rdma, port));
		assert_ok(doca_rdma_stop_listen_to_port(B.rdma, port));
	}
	/* A socket on every address (0.0.0.0) holds the IPv4 ones too. */
	memset(&any, 0, sizeof(any));
	any.ss_family = AF_INET;
	((struct sockaddr_in *)&any)->sin_addr.s_addr = htonl(INADDR_ANY);
	any_len = sizeof(struct sockaddr_in);
	set_port(&any, port);
	{
		int fd = raw_listen(&any, any_len);

		assert_true(fd >= 0);
		assert_int_equal(doca_rdma_start_listen_to_port(B.rdma, port), DOCA_ERROR_IN_USE);
		close(fd);
	}
	assert_ok(doca_rdma_start_listen_to_port(B.rdma, port));
	side_destroy(&B);
	side_destroy(&A);
}

static int group_setup(void **state)
{
	(void)state;
	return rdma_pair_setup() == 0 ? 0 : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	rdma_pair_teardown();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_listen_own_addresses_only),
		cmocka_unit_test(test_listen_in_use),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
