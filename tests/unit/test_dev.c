/*
 * Unit tests of devices: listing, naming and aliases, open/close counting,
 * getters and their argument checks, PCI address parsing, representors
 * (the BlueField side) and the emulated PCIe link seam of dev_rep.h.
 */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <doca_dev.h>

#include "dev.h"
#include "dev_rep.h"

#define ALIAS_ENV "SOFTDOCA_DEVICES"

struct listing {
	struct doca_devinfo **list;
	uint32_t nb;
};

static void list_create(struct listing *l)
{
	assert_int_equal(doca_devinfo_create_list(&l->list, &l->nb), DOCA_SUCCESS);
	assert_non_null(l->list);
}

static void list_destroy(struct listing *l)
{
	assert_int_equal(doca_devinfo_destroy_list(l->list), DOCA_SUCCESS);
	l->list = NULL;
}

static struct doca_devinfo *find_ibdev(const struct listing *l, const char *name)
{
	char buf[DOCA_DEVINFO_IBDEV_NAME_SIZE];

	for (uint32_t i = 0; i < l->nb; i++) {
		assert_int_equal(doca_devinfo_get_ibdev_name(l->list[i], buf, sizeof(buf)), DOCA_SUCCESS);
		if (strcmp(buf, name) == 0)
			return l->list[i];
	}
	return NULL;
}

static struct doca_devinfo *find_iface(const struct listing *l, const char *iface)
{
	char buf[DOCA_DEVINFO_IFACE_NAME_SIZE];

	for (uint32_t i = 0; i < l->nb; i++) {
		assert_int_equal(doca_devinfo_get_iface_name(l->list[i], buf, sizeof(buf)), DOCA_SUCCESS);
		if (strcmp(buf, iface) == 0)
			return l->list[i];
	}
	return NULL;
}

/* Tests about loopback need 127.0.0.1 on lo (a fresh netns lacks it). */
static int lo_has_ipv4(void)
{
	struct ifaddrs *ifas;
	int found = 0;

	if (getifaddrs(&ifas) != 0)
		return 0;
	for (struct ifaddrs *ifa = ifas; ifa != NULL; ifa = ifa->ifa_next) {
		if (ifa->ifa_addr == NULL || ifa->ifa_addr->sa_family != AF_INET || strcmp(ifa->ifa_name, "lo") != 0)
			continue;
		if (((struct sockaddr_in *)ifa->ifa_addr)->sin_addr.s_addr == htonl(INADDR_LOOPBACK))
			found = 1;
	}
	freeifaddrs(ifas);
	return found;
}

static int setup(void **state)
{
	(void)state;
	unsetenv(ALIAS_ENV);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unsetenv(ALIAS_ENV);
	return 0;
}

#define NEED_LO() \
	do { \
		if (!lo_has_ipv4()) { \
			print_message("lo has no 127.0.0.1 here; skipped\n"); \
			skip(); \
		} \
	} while (0)

/* ---- listing ----------------------------------------------------------- */

static void test_list_has_lo(void **state)
{
	static const uint8_t want_gid[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1};
	static const uint8_t want_v4[4] = {127, 0, 0, 1};
	struct listing l;
	struct doca_devinfo *lo;
	uint8_t v4[DOCA_DEVINFO_IPV4_ADDR_SIZE];
	uint8_t gid[DOCA_GID_BYTE_LENGTH];
	char iface[DOCA_DEVINFO_IFACE_NAME_SIZE];
	uint32_t index = UINT32_MAX;
	(void)state;

	NEED_LO();
	list_create(&l);
	assert_true(l.nb >= 1);
	assert_null(l.list[l.nb]); /* NULL-terminated */
	lo = find_ibdev(&l, "soft_lo");
	assert_non_null(lo);
	assert_ptr_equal(l.list[0], lo); /* loopback first */
	assert_int_equal(doca_devinfo_get_iface_name(lo, iface, sizeof(iface)), DOCA_SUCCESS);
	assert_string_equal(iface, "lo");
	assert_int_equal(doca_devinfo_get_ipv4_addr(lo, v4, sizeof(v4)), DOCA_SUCCESS);
	assert_memory_equal(v4, want_v4, 4);

	assert_int_equal(softdoca_devinfo_gid_find(lo, want_gid, &index), DOCA_SUCCESS);
	assert_int_equal(softdoca_devinfo_gid(lo, index, gid), DOCA_SUCCESS);
	assert_memory_equal(gid, want_gid, 16);
	/* IPv4 addresses come first in the GID table. */
	assert_int_equal(softdoca_devinfo_gid(lo, 0, gid), DOCA_SUCCESS);
	assert_memory_equal(gid, want_gid, 12);
	assert_string_equal(softdoca_devinfo_iface(lo), "lo");
	assert_string_equal(softdoca_devinfo_ibdev(lo), "soft_lo");
	assert_int_equal(softdoca_devinfo_ifindex(lo), if_nametoindex("lo"));
	assert_int_equal(softdoca_devinfo_kind(lo), SOFTDOCA_DEV_KIND_SOFT);
	list_destroy(&l);
}

/* Every device: the documented PCI scheme, unique names and addresses,
 * loopback first then by interface name. */
static void test_list_invariants(void **state)
{
	struct listing l;
	(void)state;

	list_create(&l);
	for (uint32_t i = 0; i < l.nb; i++) {
		char pci[DOCA_DEVINFO_PCI_ADDR_SIZE];
		char want[DOCA_DEVINFO_PCI_ADDR_SIZE];
		unsigned int ifx = softdoca_devinfo_ifindex(l.list[i]);

		assert_int_equal(ifx, if_nametoindex(softdoca_devinfo_iface(l.list[i])));
		snprintf(want, sizeof(want), "%04x:%02x:%02x.%x", (ifx >> 13) & 0xffff, (ifx >> 5) & 0xff, ifx & 0x1f,
			 (ifx >> 29) & 3);
		assert_int_equal(doca_devinfo_get_pci_addr_str(l.list[i], pci), DOCA_SUCCESS);
		assert_string_equal(pci, want);
		assert_true(softdoca_devinfo_gid_count(l.list[i]) >= 1);
		for (uint32_t j = i + 1; j < l.nb; j++) {
			char other[DOCA_DEVINFO_PCI_ADDR_SIZE];

			assert_int_equal(doca_devinfo_get_pci_addr_str(l.list[j], other), DOCA_SUCCESS);
			assert_string_not_equal(pci, other);
			assert_string_not_equal(softdoca_devinfo_ibdev(l.list[i]), softdoca_devinfo_ibdev(l.list[j]));
		}
		if (i > 0 && strcmp(softdoca_devinfo_iface(l.list[i - 1]), "lo") != 0)
			assert_true(strcmp(softdoca_devinfo_iface(l.list[i - 1]), softdoca_devinfo_iface(l.list[i])) < 0);
	}
	list_destroy(&l);
}

static void test_gid_and_addr(void **state)
{
	struct listing l;
	struct doca_devinfo *lo;
	struct sockaddr_storage ss;
	socklen_t len = 0;
	uint8_t gid[DOCA_GID_BYTE_LENGTH];
	uint32_t count;
	uint32_t index;
	static const uint8_t nowhere[16] = {0x20, 0x01, 0x0d, 0xb8, 0xde, 0xad};
	(void)state;

	NEED_LO();
	list_create(&l);
	lo = find_iface(&l, "lo");
	assert_non_null(lo);
	count = softdoca_devinfo_gid_count(lo);
	assert_int_equal(softdoca_devinfo_addr(lo, 0, &ss, &len), DOCA_SUCCESS);
	assert_int_equal(ss.ss_family, AF_INET);
	assert_int_equal(len, sizeof(struct sockaddr_in));
	assert_int_equal(((struct sockaddr_in *)&ss)->sin_addr.s_addr, htonl(INADDR_LOOPBACK));

	assert_int_equal(softdoca_devinfo_gid(lo, count, gid), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(softdoca_devinfo_gid(NULL, 0, gid), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(softdoca_devinfo_gid(lo, 0, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(softdoca_devinfo_addr(lo, count, &ss, &len), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(softdoca_devinfo_addr(lo, 0, NULL, &len), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(softdoca_devinfo_addr(lo, 0, &ss, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(softdoca_devinfo_gid_find(lo, nowhere, &index), DOCA_ERROR_NOT_FOUND);
	assert_int_equal(softdoca_devinfo_gid_find(NULL, nowhere, &index), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(softdoca_devinfo_gid_count(NULL), 0);
	assert_string_equal(softdoca_devinfo_iface(NULL), "");
	list_destroy(&l);
}

/* ---- SOFTDOCA_DEVICES -------------------------------------------------- */

static void test_alias_renames(void **state)
{
	struct listing l;
	struct doca_devinfo *dev;
	char name[DOCA_DEVINFO_IBDEV_NAME_SIZE];
	(void)state;

	NEED_LO();
	assert_int_equal(setenv(ALIAS_ENV, "mlx5_7=lo", 1), 0);
	list_create(&l);
	assert_null(find_ibdev(&l, "soft_lo"));
	dev = find_ibdev(&l, "mlx5_7");
	assert_non_null(dev);
	assert_ptr_equal(dev, find_iface(&l, "lo"));
	assert_int_equal(doca_devinfo_get_ibdev_name(dev, name, sizeof(name)), DOCA_SUCCESS);
	assert_string_equal(name, "mlx5_7");
	list_destroy(&l);

	/* A good entry after bad ones and empty ones still applies. */
	assert_int_equal(setenv(ALIAS_ENV, ",garbage,,mlx5_3=lo,", 1), 0);
	list_create(&l);
	assert_non_null(find_ibdev(&l, "mlx5_3"));
	list_destroy(&l);
}

static void test_alias_malformed_ignored(void **state)
{
	static const char *const bad[] = {
		"novalue",      "=lo",		"mlx5_0=",	"a=b=lo",     "bad name=lo",
		"bad/name=lo", "mlx5_9=nosuchif0",
		/* 64 characters: one too many */
		"nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn=lo",
	};
	struct listing l;
	(void)state;

	NEED_LO();
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(setenv(ALIAS_ENV, bad[i], 1), 0);
		list_create(&l);
		assert_non_null(find_ibdev(&l, "soft_lo"));
		assert_null(find_ibdev(&l, "mlx5_9"));
		assert_null(find_ibdev(&l, "mlx5_0"));
		list_destroy(&l);
	}

	/* A second name for the same interface is ignored. */
	assert_int_equal(setenv(ALIAS_ENV, "first=lo,second=lo", 1), 0);
	list_create(&l);
	assert_non_null(find_ibdev(&l, "first"));
	assert_null(find_ibdev(&l, "second"));
	list_destroy(&l);
}

/* ---- open / close ------------------------------------------------------ */

static void test_destroy_list_keeps_open_dev(void **state)
{
	struct listing l;
	struct doca_dev *dev = NULL;
	struct doca_devinfo *info;
	char name[DOCA_DEVINFO_IBDEV_NAME_SIZE];
	uint8_t gid[DOCA_GID_BYTE_LENGTH];
	(void)state;

	list_create(&l);
	assert_true(l.nb >= 1);
	assert_int_equal(doca_dev_open(l.list[0], &dev), DOCA_SUCCESS);
	assert_non_null(dev);
	snprintf(name, sizeof(name), "%s", softdoca_devinfo_ibdev(l.list[0]));
	list_destroy(&l);

	info = doca_dev_as_devinfo(dev);
	assert_non_null(info);
	assert_string_equal(softdoca_devinfo_ibdev(info), name);
	assert_int_equal(softdoca_devinfo_gid(info, 0, gid), DOCA_SUCCESS);
	assert_int_equal(doca_dev_close(dev), DOCA_SUCCESS);
}

static void test_open_close_refcount(void **state)
{
	struct listing a;
	struct listing b;
	struct doca_dev *d1 = NULL;
	struct doca_dev *d2 = NULL;
	struct doca_dev *d3 = NULL;
	(void)state;

	list_create(&a);
	list_create(&b);
	assert_int_equal(a.nb, b.nb);
	assert_true(a.nb >= 1);
	assert_int_equal(doca_dev_open(a.list[0], &d1), DOCA_SUCCESS);
	assert_int_equal(doca_dev_open(a.list[0], &d2), DOCA_SUCCESS);
	assert_ptr_equal(d1, d2);
	/* Same device from another snapshot: same handle. */
	assert_int_equal(doca_dev_open(b.list[0], &d3), DOCA_SUCCESS);
	assert_ptr_equal(d1, d3);
	list_destroy(&a);
	list_destroy(&b);

	assert_int_equal(doca_dev_close(d1), DOCA_SUCCESS);
	assert_int_equal(doca_dev_close(d1), DOCA_SUCCESS);
	assert_non_null(doca_dev_as_devinfo(d1)); /* still open once */

	/* A holder (mmap, context) blocks the last close. */
	softdoca_dev_hold(d1);
	assert_int_equal(doca_dev_close(d1), DOCA_ERROR_IN_USE);
	softdoca_dev_release(d1);
	assert_int_equal(doca_dev_close(d1), DOCA_SUCCESS);
	/* Closed for good: a further close is refused, not a crash. */
	assert_int_equal(doca_dev_close(d1), DOCA_ERROR_INVALID_VALUE);
}

/* Threads opening and closing one device concurrently: every open gets
 * the same handle and the counts balance (the last close releases it). */
#define RACE_THREADS 4
#define RACE_ROUNDS 2000

struct race {
	struct doca_devinfo *devinfo;
	struct doca_dev *expected;
	int failures;
};

static void *race_open_close(void *arg)
{
	struct race *r = arg;

	for (int i = 0; i < RACE_ROUNDS; i++) {
		struct doca_dev *dev = NULL;

		if (doca_dev_open(r->devinfo, &dev) != DOCA_SUCCESS || dev != r->expected ||
		    doca_dev_close(dev) != DOCA_SUCCESS)
			__atomic_add_fetch(&r->failures, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void test_open_close_threads(void **state)
{
	pthread_t threads[RACE_THREADS];
	struct listing l;
	struct race r = {NULL, NULL, 0};
	(void)state;

	list_create(&l);
	r.devinfo = l.list[0];
	/* Keep one open so that the handle stays the same throughout. */
	assert_int_equal(doca_dev_open(r.devinfo, &r.expected), DOCA_SUCCESS);
	for (int i = 0; i < RACE_THREADS; i++)
		assert_int_equal(pthread_create(&threads[i], NULL, race_open_close, &r), 0);
	for (int i = 0; i < RACE_THREADS; i++)
		assert_int_equal(pthread_join(threads[i], NULL), 0);
	assert_int_equal(r.failures, 0);
	assert_int_equal(doca_dev_close(r.expected), DOCA_SUCCESS);
	assert_int_equal(doca_dev_close(r.expected), DOCA_ERROR_INVALID_VALUE); /* released */
	list_destroy(&l);
}

static void test_open_close_bad_args(void **state)
{
	struct listing l;
	struct doca_dev *dev;
	(void)state;

	list_create(&l);
	assert_int_equal(doca_dev_open(NULL, &dev), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_dev_open(l.list[0], NULL), DOCA_ERROR_INVALID_VALUE);
	/* NULL closes nothing (NVIDIA's DMA samples close a cleared pointer);
	 * a pointer that is not an open device is refused. */
	assert_int_equal(doca_dev_close(NULL), DOCA_SUCCESS);
	assert_int_equal(doca_dev_close((struct doca_dev *)&l), DOCA_ERROR_INVALID_VALUE);
	assert_null(doca_dev_as_devinfo(NULL));
	assert_int_equal(doca_devinfo_create_list(NULL, &l.nb), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_create_list(&l.list, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_destroy_list(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_dev_accelerate_resource_reclaim(NULL), DOCA_ERROR_INVALID_VALUE);
	list_destroy(&l);
}

/* ---- getters ----------------------------------------------------------- */

static void test_name_getters(void **state)
{
	struct listing l;
	struct doca_devinfo *d;
	char buf[DOCA_DEVINFO_IFACE_NAME_SIZE];
	char pci[DOCA_DEVINFO_PCI_ADDR_SIZE];
	(void)state;

	NEED_LO();
	list_create(&l);
	d = find_iface(&l, "lo");
	assert_non_null(d);
	assert_int_equal(doca_devinfo_get_iface_name(NULL, buf, sizeof(buf)), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_get_iface_name(d, NULL, sizeof(buf)), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_get_iface_name(d, buf, 2), DOCA_ERROR_INVALID_VALUE); /* "lo" needs 3 */
	assert_int_equal(doca_devinfo_get_iface_name(d, buf, 3), DOCA_SUCCESS);
	assert_string_equal(buf, "lo");
	assert_int_equal(doca_devinfo_get_ibdev_name(NULL, buf, sizeof(buf)), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_get_ibdev_name(d, NULL, sizeof(buf)), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_get_ibdev_name(d, buf, 7), DOCA_ERROR_INVALID_VALUE); /* "soft_lo" needs 8 */
	assert_int_equal(doca_devinfo_get_ibdev_name(d, buf, 0), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_get_ibdev_name(d, buf, 8), DOCA_SUCCESS);
	assert_string_equal(buf, "soft_lo");
	assert_int_equal(doca_devinfo_get_pci_addr_str(NULL, pci), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_get_pci_addr_str(d, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_get_pci_addr_str(d, pci), DOCA_SUCCESS);
	assert_int_equal(strlen(pci), DOCA_DEVINFO_PCI_ADDR_SIZE - 1);
	list_destroy(&l);
}

static void test_addr_getters(void **state)
{
	static const uint8_t zeros[6] = {0};
	struct listing l;
	struct doca_devinfo *d;
	uint8_t buf[16];
	(void)state;

	NEED_LO();
	list_create(&l);
	d = find_iface(&l, "lo");
	assert_non_null(d);
	assert_int_equal(doca_devinfo_get_ipv4_addr(NULL, buf, 4), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_get_ipv4_addr(d, NULL, 4), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_get_ipv4_addr(d, buf, 3), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_get_ipv6_addr(NULL, buf, 16), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_get_ipv6_addr(d, NULL, 16), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_get_ipv6_addr(d, buf, 15), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_get_mac_addr(NULL, buf, 6), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_get_mac_addr(d, NULL, 6), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_get_mac_addr(d, buf, 5), DOCA_ERROR_INVALID_VALUE);
	memset(buf, 0xaa, sizeof(buf));
	assert_int_equal(doca_devinfo_get_mac_addr(d, buf, 6), DOCA_SUCCESS);
	assert_memory_equal(buf, zeros, 6); /* loopback's MAC is all zeros */

	/* IPv6: ::1 when lo has it, NOT_FOUND when it has no IPv6 address. */
	{
		struct in6_addr any6;
		int has_v6 = 0;
		uint8_t gid[16];

		for (uint32_t i = 0; i < softdoca_devinfo_gid_count(d); i++) {
			assert_int_equal(softdoca_devinfo_gid(d, i, gid), DOCA_SUCCESS);
			memcpy(&any6, gid, 16);
			if (!IN6_IS_ADDR_V4MAPPED(&any6))
				has_v6 = 1;
		}
		assert_int_equal(doca_devinfo_get_ipv6_addr(d, buf, 16), has_v6 ? DOCA_SUCCESS : DOCA_ERROR_NOT_FOUND);
		if (has_v6)
			assert_memory_equal(buf, &in6addr_loopback, 16);
	}
	list_destroy(&l);
}

static void test_misc_getters_and_caps(void **state)
{
	typedef doca_error_t (*cap_fn)(const struct doca_devinfo *, uint8_t *);
	static const struct {
		cap_fn fn;
		uint8_t yes;
	} caps[] = {
		{doca_devinfo_cap_is_hotplug_manager_supported, 0},
		{doca_devinfo_cap_is_notification_moderation_supported, 0},
		/* Every soft device lists representors (the BlueField side). */
		{doca_devinfo_rep_cap_is_filter_all_supported, 1},
		{doca_devinfo_rep_cap_is_filter_net_supported, 1},
		{doca_devinfo_rep_cap_is_filter_emulated_supported, 1},
		{doca_devinfo_cap_is_accelerate_resource_reclaim_supported, 0},
	};
	struct listing l;
	struct doca_devinfo *d;
	struct doca_dev *dev;
	enum doca_pci_func_type type = DOCA_PCI_FUNC_TYPE_SF;
	uint64_t rate = 0;
	uint32_t sf;
	uint16_t u16;
	(void)state;

	list_create(&l);
	d = l.list[0];
	assert_int_equal(doca_devinfo_get_pci_func_type(d, &type), DOCA_SUCCESS);
	assert_int_equal(type, DOCA_PCI_FUNC_TYPE_PF);
	assert_int_equal(doca_devinfo_get_pci_func_type(NULL, &type), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_get_pci_func_type(d, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_get_sf_index(d, &sf), DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(doca_devinfo_get_sf_index(NULL, &sf), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_get_sf_index(d, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_get_lid(d, &u16), DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(doca_devinfo_get_lid(NULL, &u16), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_get_lid(d, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_get_vhca_id(d, &u16), DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(doca_devinfo_get_vhca_id(NULL, &u16), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_get_active_rate(d, &rate), DOCA_SUCCESS);
	assert_true(rate > 0);
	assert_int_equal(doca_devinfo_get_active_rate(NULL, &rate), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_get_active_rate(d, NULL), DOCA_ERROR_INVALID_VALUE);

	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		uint8_t v = 0xee;

		assert_int_equal(caps[i].fn(d, &v), DOCA_SUCCESS);
		assert_int_equal(v, caps[i].yes);
		assert_int_equal(caps[i].fn(NULL, &v), DOCA_ERROR_INVALID_VALUE);
		assert_int_equal(caps[i].fn(d, NULL), DOCA_ERROR_INVALID_VALUE);
	}

	assert_int_equal(doca_dev_open(d, &dev), DOCA_SUCCESS);
	assert_int_equal(doca_dev_accelerate_resource_reclaim(dev), DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(doca_dev_close(dev), DOCA_SUCCESS);
	list_destroy(&l);
}

/* ---- PCI addresses ----------------------------------------------------- */

static void test_pci_addr_parsing(void **state)
{
	static const char *const malformed[] = {
		"",		"0000:00:01",	"0000:00:01.8",	 "0000:00:20.0", "000:00:01.0", "0000-00:01.0",
		"00:01.0 ",	"0000:00:01.0x", "g0:01.0",	 "+0:01.0",	 "00:01:0",	"0000:00:1.0",
		"00.01.0",	"0:00:01.0",	 "00000:00:01.0", " 00:01.0",
	};
	struct listing l;
	struct doca_devinfo *d;
	char pci[DOCA_DEVINFO_PCI_ADDR_SIZE];
	char upper[DOCA_DEVINFO_PCI_ADDR_SIZE];
	uint8_t eq = 0xee;
	(void)state;

	list_create(&l);
	d = l.list[0];
	assert_int_equal(doca_devinfo_get_pci_addr_str(d, pci), DOCA_SUCCESS);

	/* Full form matches itself, in either case. */
	assert_int_equal(doca_devinfo_is_equal_pci_addr(d, pci, &eq), DOCA_SUCCESS);
	assert_int_equal(eq, 1);
	for (size_t i = 0; i <= strlen(pci); i++)
		upper[i] = (char)(pci[i] >= 'a' && pci[i] <= 'f' ? pci[i] - 'a' + 'A' : pci[i]);
	eq = 0xee;
	assert_int_equal(doca_devinfo_is_equal_pci_addr(d, upper, &eq), DOCA_SUCCESS);
	assert_int_equal(eq, 1);

	/* Short form (domain 0) matches when the domain is 0000. */
	eq = 0xee;
	assert_int_equal(doca_devinfo_is_equal_pci_addr(d, pci + 5, &eq), DOCA_SUCCESS);
	assert_int_equal(eq, strncmp(pci, "0000:", 5) == 0);

	/* Well-formed but different. */
	eq = 0xee;
	assert_int_equal(doca_devinfo_is_equal_pci_addr(d, "ffff:FF:1f.7", &eq), DOCA_SUCCESS);
	assert_int_equal(eq, 0);
	eq = 0xee;
	assert_int_equal(doca_devinfo_is_equal_pci_addr(d, "fe:1F.6", &eq), DOCA_SUCCESS);
	assert_int_equal(eq, 0);

	for (size_t i = 0; i < sizeof(malformed) / sizeof(malformed[0]); i++) {
		eq = 0xee;
		assert_int_equal(doca_devinfo_is_equal_pci_addr(d, malformed[i], &eq), DOCA_ERROR_INVALID_VALUE);
		assert_int_equal(eq, 0xee); /* untouched on error */
	}
	assert_int_equal(doca_devinfo_is_equal_pci_addr(NULL, pci, &eq), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_is_equal_pci_addr(d, NULL, &eq), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_is_equal_pci_addr(d, pci, NULL), DOCA_ERROR_INVALID_VALUE);
	list_destroy(&l);
}

/* ---- representors (the BlueField side) ------------------------------------ */

/* An open device and its representor list with filter. */
struct rep_fixture {
	struct listing l;
	struct doca_dev *dev;
	struct doca_devinfo_rep **reps;
	uint32_t nb;
};

static void rep_fixture_open(struct rep_fixture *f, int filter)
{
	list_create(&f->l);
	assert_true(f->l.nb > 0);
	assert_int_equal(doca_dev_open(f->l.list[0], &f->dev), DOCA_SUCCESS);
	f->reps = NULL;
	f->nb = 0xdead;
	assert_int_equal(doca_devinfo_rep_create_list(f->dev, filter, &f->reps, &f->nb), DOCA_SUCCESS);
	assert_non_null(f->reps);
}

static void rep_fixture_close(struct rep_fixture *f)
{
	assert_int_equal(doca_devinfo_rep_destroy_list(f->reps), DOCA_SUCCESS);
	assert_int_equal(doca_dev_close(f->dev), DOCA_SUCCESS);
	list_destroy(&f->l);
}

/* The representor standing for the host device with PCI address pci. */
static struct doca_devinfo_rep *rep_find_pci(const struct rep_fixture *f, const char *pci)
{
	for (uint32_t i = 0; i < f->nb; i++) {
		uint8_t eq = 0;

		assert_int_equal(doca_devinfo_rep_is_equal_pci_addr(f->reps[i], pci, &eq), DOCA_SUCCESS);
		if (eq)
			return f->reps[i];
	}
	return NULL;
}

/* One representor per host soft device, in list order, with its identity. */
static void test_rep_list_and_getters(void **state)
{
	struct rep_fixture f;
	(void)state;

	rep_fixture_open(&f, DOCA_DEVINFO_REP_FILTER_ALL);
	assert_int_equal(f.nb, f.l.nb);
	assert_null(f.reps[f.nb]);
	for (uint32_t i = 0; i < f.nb; i++) {
		char host_pci[DOCA_DEVINFO_PCI_ADDR_SIZE];
		char pci[DOCA_DEVINFO_REP_PCI_ADDR_SIZE];
		char iface[DOCA_DEVINFO_IFACE_NAME_SIZE];
		char host_iface[DOCA_DEVINFO_IFACE_NAME_SIZE];
		char vuid[DOCA_DEVINFO_REP_VUID_SIZE];
		char want_vuid[DOCA_DEVINFO_REP_VUID_SIZE];
		enum doca_pci_func_type type = DOCA_PCI_FUNC_TYPE_SF;
		uint8_t u8 = 0xee;
		uint16_t u16;

		assert_int_equal(doca_devinfo_get_pci_addr_str(f.l.list[i], host_pci), DOCA_SUCCESS);
		assert_int_equal(doca_devinfo_rep_get_pci_addr_str(f.reps[i], pci), DOCA_SUCCESS);
		assert_string_equal(pci, host_pci);
		assert_int_equal(doca_devinfo_rep_is_equal_pci_addr(f.reps[i], host_pci, &u8), DOCA_SUCCESS);
		assert_int_equal(u8, 1);
		/* The BDF form names the same function (domain 0). */
		if (strncmp(host_pci, "0000:", 5) == 0) {
			u8 = 0;
			assert_int_equal(doca_devinfo_rep_is_equal_pci_addr(f.reps[i], host_pci + 5, &u8),
					 DOCA_SUCCESS);
			assert_int_equal(u8, 1);
		}
		assert_int_equal(doca_devinfo_rep_is_equal_pci_addr(f.reps[i], "ffff:ff:1f.7", &u8), DOCA_SUCCESS);
		assert_int_equal(u8, 0);
		assert_int_equal(doca_devinfo_rep_is_equal_pci_addr(f.reps[i], "b1:00.0x", &u8),
				 DOCA_ERROR_INVALID_VALUE);
		assert_int_equal(doca_devinfo_rep_is_equal_pci_addr(f.reps[i], "", &u8), DOCA_ERROR_INVALID_VALUE);

		assert_int_equal(doca_devinfo_rep_get_vuid(f.reps[i], vuid, sizeof(vuid)), DOCA_SUCCESS);
		snprintf(want_vuid, sizeof(want_vuid), "softdoca-pf-%s", host_pci);
		assert_string_equal(vuid, want_vuid);
		assert_int_equal(doca_devinfo_rep_get_vuid(f.reps[i], vuid, (uint32_t)strlen(want_vuid)),
				 DOCA_ERROR_INVALID_VALUE);

		assert_int_equal(doca_devinfo_rep_get_pci_func_type(f.reps[i], &type), DOCA_SUCCESS);
		assert_int_equal(type, DOCA_PCI_FUNC_TYPE_PF);
		u8 = 0xee;
		assert_int_equal(doca_devinfo_rep_get_is_hotplug(f.reps[i], &u8), DOCA_SUCCESS);
		assert_int_equal(u8, 0);
		assert_int_equal(doca_devinfo_get_iface_name(f.l.list[i], host_iface, sizeof(host_iface)),
				 DOCA_SUCCESS);
		assert_int_equal(doca_devinfo_rep_get_iface_name(f.reps[i], iface, sizeof(iface)), DOCA_SUCCESS);
		assert_string_equal(iface, host_iface);
		assert_int_equal(doca_devinfo_rep_get_iface_name(f.reps[i], iface, 1), DOCA_ERROR_INVALID_VALUE);
		assert_int_equal(doca_devinfo_rep_get_vhca_id(f.reps[i], &u16), DOCA_ERROR_NOT_SUPPORTED);
	}
	rep_fixture_close(&f);
}

static void test_rep_filters(void **state)
{
	struct rep_fixture all;
	struct rep_fixture net;
	struct rep_fixture emu;
	struct rep_fixture both;
	(void)state;

	rep_fixture_open(&all, DOCA_DEVINFO_REP_FILTER_ALL);
	rep_fixture_open(&net, DOCA_DEVINFO_REP_FILTER_NET);
	rep_fixture_open(&emu, DOCA_DEVINFO_REP_FILTER_EMULATED);
	rep_fixture_open(&both, DOCA_DEVINFO_REP_FILTER_NET | DOCA_DEVINFO_REP_FILTER_EMULATED);
	assert_int_equal(net.nb, all.nb);
	assert_int_equal(both.nb, all.nb);
	/* Soft host functions are PFs, none is emulated: an empty list. */
	assert_int_equal(emu.nb, 0);
	assert_null(emu.reps[0]);
	for (uint32_t i = 0; i < all.nb; i++) {
		char pci[DOCA_DEVINFO_REP_PCI_ADDR_SIZE];

		assert_int_equal(doca_devinfo_rep_get_pci_addr_str(all.reps[i], pci), DOCA_SUCCESS);
		assert_non_null(rep_find_pci(&net, pci));
	}
	rep_fixture_close(&both);
	rep_fixture_close(&emu);
	rep_fixture_close(&net);
	rep_fixture_close(&all);
}

/* An open representor outlives its list; closes are checked. */
static void test_rep_open_close(void **state)
{
	struct rep_fixture f;
	struct doca_dev_rep *rep = NULL;
	struct doca_dev_rep *rep2 = NULL;
	struct doca_devinfo_rep *info;
	char pci_before[DOCA_DEVINFO_REP_PCI_ADDR_SIZE];
	char pci_after[DOCA_DEVINFO_REP_PCI_ADDR_SIZE];
	char vuid[DOCA_DEVINFO_REP_VUID_SIZE];
	(void)state;

	rep_fixture_open(&f, DOCA_DEVINFO_REP_FILTER_NET);
	assert_true(f.nb > 0);
	assert_int_equal(doca_devinfo_rep_get_pci_addr_str(f.reps[0], pci_before), DOCA_SUCCESS);
	assert_int_equal(doca_dev_rep_open(f.reps[0], &rep), DOCA_SUCCESS);
	assert_non_null(rep);
	assert_int_equal(doca_dev_rep_open(f.reps[0], &rep2), DOCA_SUCCESS);
	assert_ptr_not_equal(rep, rep2);
	assert_ptr_equal(doca_dev_rep_as_devinfo(rep), f.reps[0]);

	/* The list goes; the representor and its info stay. */
	assert_int_equal(doca_devinfo_rep_destroy_list(f.reps), DOCA_SUCCESS);
	assert_int_equal(doca_devinfo_rep_destroy_list(f.reps), DOCA_ERROR_INVALID_VALUE);
	info = doca_dev_rep_as_devinfo(rep);
	assert_non_null(info);
	assert_int_equal(doca_devinfo_rep_get_pci_addr_str(info, pci_after), DOCA_SUCCESS);
	assert_string_equal(pci_before, pci_after);
	assert_int_equal(doca_devinfo_rep_get_vuid(info, vuid, sizeof(vuid)), DOCA_SUCCESS);
	/* The device the list came from may close while representors live. */
	assert_int_equal(doca_dev_close(f.dev), DOCA_SUCCESS);

	assert_int_equal(doca_dev_rep_close(rep), DOCA_SUCCESS);
	assert_int_equal(doca_dev_rep_close(rep), DOCA_ERROR_INVALID_VALUE);
	assert_null(doca_dev_rep_as_devinfo(rep));
	/* rep2 still holds the info. */
	assert_int_equal(doca_devinfo_rep_get_pci_addr_str(info, pci_after), DOCA_SUCCESS);
	assert_int_equal(doca_dev_rep_close(rep2), DOCA_SUCCESS);
	/* Nobody holds it any more: refused, not read. */
	assert_int_equal(doca_devinfo_rep_get_pci_addr_str(info, pci_after), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_dev_rep_open(info, &rep), DOCA_ERROR_INVALID_VALUE);
	list_destroy(&f.l);
}

static void test_rep_bad_args(void **state)
{
	struct listing l;
	struct doca_dev *dev;
	struct doca_devinfo_rep **reps = NULL;
	struct doca_dev_rep *rep = NULL;
	uint32_t nb = 0;
	char buf[DOCA_DEVINFO_REP_VUID_SIZE];
	uint8_t u8;
	uint16_t u16;
	enum doca_pci_func_type type;
	uint64_t dummy[16] = {0};
	struct doca_devinfo_rep *fake_info = (struct doca_devinfo_rep *)dummy;
	(void)state;

	list_create(&l);
	assert_int_equal(doca_dev_open(l.list[0], &dev), DOCA_SUCCESS);
	assert_int_equal(doca_devinfo_rep_create_list(dev, 0x40, &reps, &nb), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_rep_create_list(dev, -1, &reps, &nb), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_rep_create_list(NULL, 0, &reps, &nb), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_rep_create_list(dev, 0, NULL, &nb), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_rep_create_list(dev, 0, &reps, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_rep_create_list((struct doca_dev *)dummy, 0, &reps, &nb),
			 DOCA_ERROR_INVALID_VALUE);
	assert_null(reps);

	assert_int_equal(doca_devinfo_rep_destroy_list(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_rep_destroy_list((struct doca_devinfo_rep **)dummy), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_dev_rep_open(NULL, &rep), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_dev_rep_open(fake_info, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_dev_rep_open(fake_info, &rep), DOCA_ERROR_INVALID_VALUE);
	assert_null(rep);
	assert_int_equal(doca_dev_rep_close(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_dev_rep_close((struct doca_dev_rep *)dummy), DOCA_ERROR_INVALID_VALUE);
	assert_null(doca_dev_rep_as_devinfo(NULL));
	assert_null(doca_dev_rep_as_devinfo((struct doca_dev_rep *)dummy));

	/* NULL and foreign infos, NULL outputs. */
	assert_int_equal(doca_devinfo_rep_get_vuid(NULL, buf, sizeof(buf)), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_rep_get_vuid(fake_info, buf, sizeof(buf)), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_rep_is_equal_pci_addr(NULL, "00:00.0", &u8), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_rep_is_equal_pci_addr(fake_info, "00:00.0", &u8), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_rep_get_pci_addr_str(NULL, buf), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_rep_get_pci_addr_str(fake_info, buf), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_rep_get_pci_func_type(NULL, &type), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_rep_get_pci_func_type(fake_info, &type), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_rep_get_is_hotplug(NULL, &u8), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_rep_get_iface_name(NULL, buf, sizeof(buf)), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_rep_get_vhca_id(NULL, &u16), DOCA_ERROR_INVALID_VALUE);

	assert_int_equal(doca_devinfo_rep_create_list(dev, DOCA_DEVINFO_REP_FILTER_ALL, &reps, &nb), DOCA_SUCCESS);
	assert_true(nb > 0);
	assert_int_equal(doca_devinfo_rep_get_vuid(reps[0], NULL, sizeof(buf)), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_rep_is_equal_pci_addr(reps[0], NULL, &u8), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_rep_is_equal_pci_addr(reps[0], "00:00.0", NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_rep_get_pci_addr_str(reps[0], NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_rep_get_pci_func_type(reps[0], NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_rep_get_is_hotplug(reps[0], NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_rep_get_iface_name(reps[0], NULL, 16), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_rep_get_vhca_id(reps[0], NULL), DOCA_ERROR_INVALID_VALUE);
	/* An element pointer is not a list. */
	assert_int_equal(doca_devinfo_rep_destroy_list(reps + 1), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_devinfo_rep_destroy_list(reps), DOCA_SUCCESS);

	assert_int_equal(doca_dev_close(dev), DOCA_SUCCESS);
	/* A closed device lists nothing. */
	assert_int_equal(doca_devinfo_rep_create_list(dev, 0, &reps, &nb), DOCA_ERROR_INVALID_VALUE);
	list_destroy(&l);
}

/* ---- the emulated PCIe link ------------------------------------------------- */

/* A fresh rendezvous directory for one test, in SOFTDOCA_PCIE_DIR. */
static void pcie_dir_fresh(char *dir, size_t size)
{
	snprintf(dir, size, "/tmp/softdoca-test-pcie-XXXXXX");
	assert_non_null(mkdtemp(dir));
	assert_int_equal(setenv(SOFTDOCA_PCIE_DIR_ENV, dir, 1), 0);
}

static void pcie_dir_remove(const char *dir)
{
	unsetenv(SOFTDOCA_PCIE_DIR_ENV);
	assert_int_equal(rmdir(dir), 0);
}

/* Host device and representor of one PCI address are ends of one link;
 * another address or another rendezvous directory is another link. */
static void test_pcie_link(void **state)
{
	struct rep_fixture f;
	struct doca_dev_rep *rep = NULL;
	struct doca_dev_rep *other_rep = NULL;
	struct softdoca_pcie_link host;
	struct softdoca_pcie_link dpu;
	struct softdoca_pcie_link other;
	char pci[DOCA_DEVINFO_PCI_ADDR_SIZE];
	char dir[64];
	char dir2[64];
	char path[128];
	char want[128];
	(void)state;

	pcie_dir_fresh(dir, sizeof(dir));
	rep_fixture_open(&f, DOCA_DEVINFO_REP_FILTER_NET);
	assert_int_equal(doca_devinfo_get_pci_addr_str(f.l.list[0], pci), DOCA_SUCCESS);
	assert_int_equal(doca_dev_rep_open(rep_find_pci(&f, pci), &rep), DOCA_SUCCESS);

	assert_int_equal(softdoca_dev_pcie_link(f.dev, &host), DOCA_SUCCESS);
	assert_int_equal(softdoca_dev_rep_pcie_link(rep, &dpu), DOCA_SUCCESS);
	assert_string_equal(host.pci_addr, pci);
	assert_string_equal(host.dir, dir);
	assert_true(softdoca_pcie_link_equal(&host, &dpu));
	assert_false(softdoca_pcie_link_equal(&host, NULL));
	assert_false(softdoca_pcie_link_equal(NULL, &dpu));

	if (f.nb > 1) {
		struct doca_devinfo_rep *info = NULL;
		uint8_t eq = 1;

		for (uint32_t i = 0; i < f.nb && info == NULL; i++) {
			assert_int_equal(doca_devinfo_rep_is_equal_pci_addr(f.reps[i], pci, &eq), DOCA_SUCCESS);
			if (!eq)
				info = f.reps[i];
		}
		assert_non_null(info);
		assert_int_equal(doca_dev_rep_open(info, &other_rep), DOCA_SUCCESS);
		assert_int_equal(softdoca_dev_rep_pcie_link(other_rep, &other), DOCA_SUCCESS);
		assert_false(softdoca_pcie_link_equal(&host, &other));
		assert_int_equal(doca_dev_rep_close(other_rep), DOCA_SUCCESS);
	}

	/* Another emulated host: same function, another rendezvous directory. */
	pcie_dir_fresh(dir2, sizeof(dir2));
	assert_int_equal(softdoca_dev_rep_pcie_link(rep, &other), DOCA_SUCCESS);
	assert_string_equal(other.dir, dir2);
	assert_false(softdoca_pcie_link_equal(&host, &other));
	pcie_dir_remove(dir2);
	assert_int_equal(setenv(SOFTDOCA_PCIE_DIR_ENV, dir, 1), 0);

	/* Paths of the link's files. */
	assert_int_equal(softdoca_pcie_link_path(&host, "comch-x", path, sizeof(path)), DOCA_SUCCESS);
	snprintf(want, sizeof(want), "%s/%s.comch-x", dir, pci);
	assert_string_equal(path, want);
	assert_int_equal(softdoca_pcie_link_path(&host, "comch-x", path, strlen(want)), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(softdoca_pcie_link_path(&host, "", path, sizeof(path)), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(softdoca_pcie_link_path(&host, "../x", path, sizeof(path)), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(softdoca_pcie_link_path(&host, "a.b", path, sizeof(path)), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(softdoca_pcie_link_path(&host, "0123456789012345678901234567890123", path, sizeof(path)),
			 DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(softdoca_pcie_link_path(NULL, "x", path, sizeof(path)), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(softdoca_pcie_link_path(&host, NULL, path, sizeof(path)), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(softdoca_pcie_link_path(&host, "x", NULL, sizeof(path)), DOCA_ERROR_INVALID_VALUE);

	/* Bad arguments: NULL, or objects that are not open. */
	assert_int_equal(softdoca_dev_pcie_link(NULL, &host), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(softdoca_dev_pcie_link(f.dev, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(softdoca_dev_rep_pcie_link(NULL, &dpu), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(softdoca_dev_rep_pcie_link(rep, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_dev_rep_close(rep), DOCA_SUCCESS);
	assert_int_equal(softdoca_dev_rep_pcie_link(rep, &dpu), DOCA_ERROR_INVALID_VALUE);
	rep_fixture_close(&f);
	assert_int_equal(softdoca_dev_pcie_link(f.dev, &host), DOCA_ERROR_INVALID_VALUE);
	pcie_dir_remove(dir);
}

/* The rendezvous directory refuses what someone else could control. */
static void test_pcie_dir_hostile(void **state)
{
	char base[64];
	char path[SOFTDOCA_PCIE_DIR_MAX + 8];
	char got[SOFTDOCA_PCIE_DIR_MAX];
	char want[128];
	struct stat st;
	int fd = -1;
	(void)state;

	/* Default: per user under /tmp. */
	unsetenv(SOFTDOCA_PCIE_DIR_ENV);
	assert_int_equal(softdoca_pcie_dir(got), DOCA_SUCCESS);
	snprintf(want, sizeof(want), "/tmp/softdoca-pcie-%u", (unsigned int)geteuid());
	assert_string_equal(got, want);
	assert_int_equal(softdoca_pcie_dir(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(softdoca_pcie_dir_open(NULL), DOCA_ERROR_INVALID_VALUE);

	snprintf(base, sizeof(base), "/tmp/softdoca-test-pcie-XXXXXX");
	assert_non_null(mkdtemp(base));

	/* A missing directory is created 0700; a trailing '/' is the same one. */
	snprintf(path, sizeof(path), "%s/new/", base);
	assert_int_equal(setenv(SOFTDOCA_PCIE_DIR_ENV, path, 1), 0);
	assert_int_equal(softdoca_pcie_dir(got), DOCA_SUCCESS);
	snprintf(path, sizeof(path), "%s/new", base);
	assert_string_equal(got, path);
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_int_equal(softdoca_pcie_dir_open(&fd), DOCA_SUCCESS);
	assert_true(fd >= 0);
	assert_int_equal(close(fd), 0);
	assert_int_equal(rmdir(path), 0);

	/* Writable by others. */
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(chmod(path, 0777), 0);
	assert_int_equal(setenv(SOFTDOCA_PCIE_DIR_ENV, path, 1), 0);
	assert_int_equal(softdoca_pcie_dir(got), DOCA_ERROR_NOT_PERMITTED);
	assert_int_equal(chmod(path, 0720), 0);
	assert_int_equal(softdoca_pcie_dir(got), DOCA_ERROR_NOT_PERMITTED);
	assert_int_equal(chmod(path, 0755), 0);
	assert_int_equal(softdoca_pcie_dir(got), DOCA_SUCCESS);
	assert_int_equal(rmdir(path), 0);

	/* A symlink to a good directory, and a regular file. */
	snprintf(want, sizeof(want), "%s/link", base);
	assert_int_equal(symlink(base, want), 0);
	assert_int_equal(setenv(SOFTDOCA_PCIE_DIR_ENV, want, 1), 0);
	assert_int_equal(softdoca_pcie_dir(got), DOCA_ERROR_NOT_PERMITTED);
	assert_int_equal(softdoca_pcie_dir_open(&fd), DOCA_ERROR_NOT_PERMITTED);
	assert_int_equal(unlink(want), 0);
	{
		FILE *file = fopen(want, "w");

		assert_non_null(file);
		fclose(file);
	}
	assert_int_equal(softdoca_pcie_dir(got), DOCA_ERROR_NOT_PERMITTED);
	assert_int_equal(unlink(want), 0);

	/* Missing parent: nothing is created beyond the last component. */
	snprintf(path, sizeof(path), "%s/no/such", base);
	assert_int_equal(setenv(SOFTDOCA_PCIE_DIR_ENV, path, 1), 0);
	assert_int_equal(softdoca_pcie_dir(got), DOCA_ERROR_OPERATING_SYSTEM);

	/* Malformed values. */
	static const char *const bad[] = {"relative/dir", "/tmp/../etc", "/tmp/./x", "/tmp/a\nb", "/..", ".", "/x/.."};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(setenv(SOFTDOCA_PCIE_DIR_ENV, bad[i], 1), 0);
		assert_int_equal(softdoca_pcie_dir(got), DOCA_ERROR_INVALID_VALUE);
	}
	memset(path, 'a', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = '\0';
	assert_int_equal(setenv(SOFTDOCA_PCIE_DIR_ENV, path, 1), 0);
	assert_int_equal(softdoca_pcie_dir(got), DOCA_ERROR_INVALID_VALUE);

	unsetenv(SOFTDOCA_PCIE_DIR_ENV);
	assert_int_equal(rmdir(base), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_list_has_lo, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_invariants, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gid_and_addr, setup, teardown),
		cmocka_unit_test_setup_teardown(test_alias_renames, setup, teardown),
		cmocka_unit_test_setup_teardown(test_alias_malformed_ignored, setup, teardown),
		cmocka_unit_test_setup_teardown(test_destroy_list_keeps_open_dev, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_close_refcount, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_close_threads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_close_bad_args, setup, teardown),
		cmocka_unit_test_setup_teardown(test_name_getters, setup, teardown),
		cmocka_unit_test_setup_teardown(test_addr_getters, setup, teardown),
		cmocka_unit_test_setup_teardown(test_misc_getters_and_caps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pci_addr_parsing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rep_list_and_getters, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rep_filters, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rep_open_close, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rep_bad_args, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pcie_link, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pcie_dir_hostile, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
