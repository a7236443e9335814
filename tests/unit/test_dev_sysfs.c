/*
 * RDMA devices of the host, read from /sys/class/infiniband: a made-up
 * sysfs tree (core_sysfs_set_root, a test seam) with an rxe device on lo,
 * a PCI device whose netdev does not exist, and entries the kernel would
 * never write. Each device is listed under its own name with the kernel's
 * GID table, indices unchanged (NVIDIA's guidance: -d rxe0 -g 1), the soft
 * device of its netdev is left out, and data moves over the GID chosen.
 */
#include <dirent.h>
#include <errno.h>
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

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_log.h>
#include <doca_mmap.h>
#include <doca_pe.h>
#include <doca_rdma.h>

#include "dev.h"
#include "dev_sysfs.h"

static char root[64];

/* SDK lines at DEBUG, kept to look for the data-path line. */
static char log_line[1024];
static char data_path_line[1024];

static void log_flush(char *buf)
{
	if (strstr(buf, "data path") != NULL)
		snprintf(data_path_line, sizeof(data_path_line), "%s", buf);
}

/* ---- the made-up tree ------------------------------------------------------ */

static void put_file(const char *rel, const char *text)
{
	char path[512], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	/* mkdir -p of the file's directory */
	for (slash = strchr(path + strlen(root) + 1, '/'); slash != NULL; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		assert_true(mkdir(path, 0700) == 0 || errno == EEXIST);
		*slash = '/';
	}
	if (text == NULL)
		return; /* the directory only */
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void put_gid(const char *dev, int i, const char *gid, const char *type, const char *ndev)
{
	char rel[256];

	snprintf(rel, sizeof(rel), "class/infiniband/%s/ports/1/gids/%d", dev, i);
	put_file(rel, gid);
	if (type != NULL) {
		snprintf(rel, sizeof(rel), "class/infiniband/%s/ports/1/gid_attrs/types/%d", dev, i);
		put_file(rel, type);
	}
	if (ndev != NULL) {
		snprintf(rel, sizeof(rel), "class/infiniband/%s/ports/1/gid_attrs/ndevs/%d", dev, i);
		put_file(rel, ndev);
	}
}

static void remove_tree(const char *path)
{
	struct dirent *e;
	DIR *dir = opendir(path);

	if (dir == NULL) {
		unlink(path);
		return;
	}
	while ((e = readdir(dir)) != NULL) {
		char child[512];

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(child, sizeof(child), "%s/%s", path, e->d_name);
		if (e->d_type == DT_DIR)
			remove_tree(child);
		else
			unlink(child);
	}
	closedir(dir);
	rmdir(path);
}

#define ZERO_GID "0000:0000:0000:0000:0000:0000:0000:0000\n"
#define GID_V6_LOOPBACK "0000:0000:0000:0000:0000:0000:0000:0001\n"
#define GID_127_0_0_1 "0000:0000:0000:0000:0000:ffff:7f00:0001\n"
#define GID_127_0_0_2 "0000:0000:0000:0000:0000:ffff:7f00:0002\n"

static int group_setup(void **state)
{
	char rel[256];

	(void)state;
	snprintf(root, sizeof(root), "/tmp/softdoca_sysfs_XXXXXX");
	if (mkdtemp(root) == NULL)
		return -1;
	/* rxe0 on lo: 0 ::1, 1 127.0.0.1 (RoCE v2), 2 empty, 3 127.0.0.2
	 * (IB/RoCE v1), 4 not a GID, 5 empty, then the table ends. */
	put_gid("rxe0", 0, GID_V6_LOOPBACK, "RoCE v2\n", "lo\n");
	put_gid("rxe0", 1, GID_127_0_0_1, "RoCE v2\n", "lo\n");
	put_gid("rxe0", 2, ZERO_GID, NULL, NULL);
	put_gid("rxe0", 3, GID_127_0_0_2, "IB/RoCE v1\n", "lo\n");
	put_gid("rxe0", 4, "zzzz:0000:0000:0000:0000:ffff:7f00:0003\n", "RoCE v2\n", "lo\n");
	put_gid("rxe0", 5, ZERO_GID, NULL, NULL);
	/* mlx5_9: a PCI function, its netdev gone. */
	put_gid("mlx5_9", 0, "fe80:0000:0000:0000:0202:c9ff:fe00:0001\n", "IB/RoCE v1\n", "nosuchif9\n");
	put_file("devices/pci0000:00/0000:03:00.0/x", NULL);
	snprintf(rel, sizeof(rel), "%s/class/infiniband/mlx5_9/device", root);
	assert_int_equal(symlink("../../../devices/pci0000:00/0000:03:00.0", rel), 0);
	/* Not listed: a name DOCA cannot report, a device with no port. */
	put_gid("bad name!", 0, GID_127_0_0_1, "RoCE v2\n", "lo\n");
	put_file("class/infiniband/noport0/node_type", "1: CA\n");
	core_sysfs_set_root(root);
	{
		struct doca_log_backend *backend;

		assert_int_equal(doca_log_backend_create_with_buf_sdk(log_line, sizeof(log_line), log_flush, &backend),
				 DOCA_SUCCESS);
		assert_int_equal(doca_log_backend_set_sdk_level(backend, DOCA_LOG_LEVEL_DEBUG), DOCA_SUCCESS);
	}
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	core_sysfs_set_root(NULL);
	remove_tree(root);
	return 0;
}

/* ---- listing ---------------------------------------------------------------- */

struct listing {
	struct doca_devinfo **list;
	uint32_t nb;
};

static struct doca_devinfo *find(const struct listing *l, const char *ibdev)
{
	char name[DOCA_DEVINFO_IBDEV_NAME_SIZE];

	for (uint32_t i = 0; i < l->nb; i++) {
		assert_int_equal(doca_devinfo_get_ibdev_name(l->list[i], name, sizeof(name)), DOCA_SUCCESS);
		if (strcmp(name, ibdev) == 0)
			return l->list[i];
	}
	return NULL;
}

static void test_devices_under_their_names(void **state)
{
	struct listing l;
	struct doca_devinfo *rxe, *mlx;
	char iface[DOCA_DEVINFO_IFACE_NAME_SIZE], pci[DOCA_DEVINFO_PCI_ADDR_SIZE];

	(void)state;
	assert_int_equal(doca_devinfo_create_list(&l.list, &l.nb), DOCA_SUCCESS);
	rxe = find(&l, "rxe0");
	mlx = find(&l, "mlx5_9");
	assert_non_null(rxe);
	assert_non_null(mlx);
	assert_null(find(&l, "soft_lo")); /* lo's device is rxe0 now */
	assert_null(find(&l, "bad name!"));
	assert_null(find(&l, "noport0"));
	assert_int_equal(softdoca_devinfo_kind(rxe), SOFTDOCA_DEV_KIND_RDMA);
	assert_int_equal(doca_devinfo_get_iface_name(rxe, iface, sizeof(iface)), DOCA_SUCCESS);
	assert_string_equal(iface, "lo");
	assert_int_equal(doca_devinfo_get_pci_addr_str(mlx, pci), DOCA_SUCCESS);
	assert_string_equal(pci, "0000:03:00.0");
	assert_int_equal(doca_devinfo_get_iface_name(mlx, iface, sizeof(iface)), DOCA_SUCCESS);
	assert_string_equal(iface, "nosuchif9");
	assert_int_equal(doca_devinfo_destroy_list(l.list), DOCA_SUCCESS);
}

static void test_gid_table_as_sysfs_gives_it(void **state)
{
	static const uint8_t v4_1[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1};
	static const uint8_t zero[16];
	struct doca_rdma_gid gids[4];
	struct listing l;
	struct doca_devinfo *rxe;
	uint32_t size = 0, index = 99;

	(void)state;
	assert_int_equal(doca_devinfo_create_list(&l.list, &l.nb), DOCA_SUCCESS);
	rxe = find(&l, "rxe0");
	assert_non_null(rxe);
	assert_int_equal(doca_rdma_cap_get_gid_table_size(rxe, &size), DOCA_SUCCESS);
	assert_int_equal(size, 4); /* 4 and 5 are empty: the table ends at 3 */
	assert_int_equal(doca_rdma_cap_get_gid(rxe, 0, 4, gids), DOCA_SUCCESS);
	assert_memory_equal(gids[1].raw, v4_1, 16);
	assert_memory_equal(gids[2].raw, zero, 16);
	assert_int_equal(gids[0].raw[15], 1);
	assert_int_equal(gids[3].raw[15], 2);
	assert_string_equal(softdoca_devinfo_gid_type(rxe, 1), "RoCE v2");
	assert_string_equal(softdoca_devinfo_gid_type(rxe, 2), "");
	assert_string_equal(softdoca_devinfo_gid_type(rxe, 3), "IB/RoCE v1");
	assert_int_equal(softdoca_devinfo_gid_find(rxe, v4_1, &index), DOCA_SUCCESS);
	assert_int_equal(index, 1);
	assert_int_equal(doca_devinfo_destroy_list(l.list), DOCA_SUCCESS);
}

/* ---- a context on rxe0 --------------------------------------------------------- */

static struct doca_dev *open_rxe0(void)
{
	struct listing l;
	struct doca_dev *dev = NULL;

	assert_int_equal(doca_devinfo_create_list(&l.list, &l.nb), DOCA_SUCCESS);
	assert_non_null(find(&l, "rxe0"));
	assert_int_equal(doca_dev_open(find(&l, "rxe0"), &dev), DOCA_SUCCESS);
	assert_int_equal(doca_devinfo_destroy_list(l.list), DOCA_SUCCESS);
	return dev;
}

static void test_gid_index_rules(void **state)
{
	struct doca_dev *dev = open_rxe0();
	struct doca_rdma *rdma;

	(void)state;
	assert_int_equal(doca_rdma_create(dev, &rdma), DOCA_SUCCESS);
	assert_int_equal(doca_rdma_set_gid_index(rdma, 2), DOCA_ERROR_INVALID_VALUE); /* empty */
	assert_int_equal(doca_rdma_set_gid_index(rdma, 4), DOCA_ERROR_INVALID_VALUE); /* past the end */
	assert_int_equal(doca_rdma_set_gid_index(rdma, 1), DOCA_SUCCESS);
	assert_int_equal(doca_rdma_destroy(rdma), DOCA_SUCCESS);
	assert_int_equal(doca_dev_close(dev), DOCA_SUCCESS);
}

struct side {
	struct doca_rdma *rdma;
	const void *desc;
	size_t desc_len;
	struct doca_rdma_connection *conn;
};

static int writes_ok, writes_err;

static void write_ok(struct doca_rdma_task_write *t, union doca_data tu, union doca_data cu)
{
	(void)t;
	(void)tu;
	(void)cu;
	writes_ok++;
}

static void write_err(struct doca_rdma_task_write *t, union doca_data tu, union doca_data cu)
{
	(void)t;
	(void)tu;
	(void)cu;
	writes_err++;
}

static void side_start(struct side *s, struct doca_dev *dev, struct doca_pe *pe)
{
	assert_int_equal(doca_rdma_create(dev, &s->rdma), DOCA_SUCCESS);
	assert_int_equal(doca_rdma_set_gid_index(s->rdma, 1), DOCA_SUCCESS);
	assert_int_equal(doca_rdma_set_permissions(s->rdma, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE |
								   DOCA_ACCESS_FLAG_RDMA_WRITE),
			 DOCA_SUCCESS);
	assert_int_equal(doca_rdma_task_write_set_conf(s->rdma, write_ok, write_err, 4), DOCA_SUCCESS);
	assert_int_equal(doca_pe_connect_ctx(pe, doca_rdma_as_ctx(s->rdma)), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_start(doca_rdma_as_ctx(s->rdma)), DOCA_SUCCESS);
	assert_int_equal(doca_rdma_export(s->rdma, &s->desc, &s->desc_len, &s->conn), DOCA_SUCCESS);
}

static void side_stop(struct side *s, struct doca_pe *pe)
{
	enum doca_ctx_states st = DOCA_CTX_STATE_RUNNING;

	(void)doca_ctx_stop(doca_rdma_as_ctx(s->rdma));
	for (int i = 0; i < 1000000 && st != DOCA_CTX_STATE_IDLE; i++) {
		(void)doca_pe_progress(pe);
		assert_int_equal(doca_ctx_get_state(doca_rdma_as_ctx(s->rdma), &st), DOCA_SUCCESS);
	}
	assert_int_equal(st, DOCA_CTX_STATE_IDLE);
	assert_int_equal(doca_rdma_destroy(s->rdma), DOCA_SUCCESS);
}

static struct doca_mmap *mmap_on(struct doca_dev *dev, void *addr, size_t len)
{
	struct doca_mmap *m;

	assert_int_equal(doca_mmap_create(&m), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_set_memrange(m, addr, len), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_set_permissions(m, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_WRITE),
			 DOCA_SUCCESS);
	assert_int_equal(doca_mmap_add_dev(m, dev), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_start(m), DOCA_SUCCESS);
	return m;
}

/* What a user following the guidance runs: a context on rxe0 with -g 1
 * writes to another; the data arrives. */
static void test_write_over_gid_1(void **state)
{
	static char src_mem[64], dst_mem[64];
	struct doca_dev *dev = open_rxe0();
	struct doca_mmap *src_m = mmap_on(dev, src_mem, sizeof(src_mem));
	struct doca_mmap *dst_m = mmap_on(dev, dst_mem, sizeof(dst_mem));
	struct doca_mmap *remote;
	struct doca_buf_inventory *inv;
	struct doca_buf *src, *dst;
	struct doca_rdma_task_write *w;
	struct side a, b;
	struct doca_pe *pe;
	union doca_data ud = {.u64 = 0};
	const void *mdesc;
	size_t mdesc_len;

	(void)state;
	writes_ok = writes_err = 0;
	memcpy(src_mem, "over rxe0, GID 1", 16);
	assert_int_equal(doca_pe_create(&pe), DOCA_SUCCESS);
	assert_int_equal(doca_buf_inventory_create(4, &inv), DOCA_SUCCESS);
	assert_int_equal(doca_buf_inventory_start(inv), DOCA_SUCCESS);
	side_start(&a, dev, pe);
	side_start(&b, dev, pe);
	assert_int_equal(doca_rdma_connect(a.rdma, b.desc, b.desc_len, a.conn), DOCA_SUCCESS);
	assert_int_equal(doca_rdma_connect(b.rdma, a.desc, a.desc_len, b.conn), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_export_rdma(dst_m, dev, &mdesc, &mdesc_len), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_create_from_export(NULL, mdesc, mdesc_len, dev, &remote), DOCA_SUCCESS);
	assert_int_equal(doca_buf_inventory_buf_get_by_data(inv, src_m, src_mem, 16, &src), DOCA_SUCCESS);
	assert_int_equal(doca_buf_inventory_buf_get_by_addr(inv, remote, dst_mem, 16, &dst), DOCA_SUCCESS);
	assert_int_equal(doca_rdma_task_write_allocate_init(a.rdma, a.conn, src, dst, ud, &w), DOCA_SUCCESS);
	assert_int_equal(doca_task_submit(doca_rdma_task_write_as_task(w)), DOCA_SUCCESS);
	for (int i = 0; i < 10000000 && writes_ok + writes_err == 0; i++)
		(void)doca_pe_progress(pe);
	assert_int_equal(writes_ok, 1);
	assert_memory_equal(dst_mem, "over rxe0, GID 1", 16);
	/* The start said what carries the traffic, and that rxe0 itself does not. */
	assert_non_null(strstr(data_path_line, "rdma start on device rxe0 (interface lo): data path "));
	assert_non_null(strstr(data_path_line, "the RDMA device's own transport is not used"));
	doca_task_free(doca_rdma_task_write_as_task(w));
	assert_int_equal(doca_buf_dec_refcount(src, NULL), DOCA_SUCCESS);
	assert_int_equal(doca_buf_dec_refcount(dst, NULL), DOCA_SUCCESS);
	side_stop(&a, pe);
	side_stop(&b, pe);
	assert_int_equal(doca_mmap_destroy(remote), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_destroy(src_m), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_destroy(dst_m), DOCA_SUCCESS);
	assert_int_equal(doca_buf_inventory_destroy(inv), DOCA_SUCCESS);
	assert_int_equal(doca_pe_destroy(pe), DOCA_SUCCESS);
	assert_int_equal(doca_dev_close(dev), DOCA_SUCCESS);
}

/* ---- no RDMA device, and no leak ---------------------------------------------- */

static void test_no_class_dir_gives_soft_devices(void **state)
{
	char empty[sizeof(root) + 8];
	struct listing l;

	(void)state;
	snprintf(empty, sizeof(empty), "%s/empty", root);
	put_file("empty/x", NULL);
	core_sysfs_set_root(empty);
	assert_int_equal(doca_devinfo_create_list(&l.list, &l.nb), DOCA_SUCCESS);
	assert_non_null(find(&l, "soft_lo"));
	assert_null(find(&l, "rxe0"));
	assert_int_equal(doca_devinfo_destroy_list(l.list), DOCA_SUCCESS);
	core_sysfs_set_root(root);
}

static int count_fds(void)
{
	int n = 0;
	DIR *dir = opendir("/proc/self/fd");

	assert_non_null(dir);
	while (readdir(dir) != NULL)
		n++;
	closedir(dir);
	return n;
}

static void test_listing_leaks_nothing(void **state)
{
	struct listing l;
	int fds;

	(void)state;
	assert_int_equal(doca_devinfo_create_list(&l.list, &l.nb), DOCA_SUCCESS);
	assert_int_equal(doca_devinfo_destroy_list(l.list), DOCA_SUCCESS);
	fds = count_fds();
	for (int i = 0; i < 300; i++) {
		assert_int_equal(doca_devinfo_create_list(&l.list, &l.nb), DOCA_SUCCESS);
		assert_int_equal(doca_devinfo_destroy_list(l.list), DOCA_SUCCESS);
	}
	assert_int_equal(count_fds(), fds);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_devices_under_their_names),
		cmocka_unit_test(test_gid_table_as_sysfs_gives_it),
		cmocka_unit_test(test_gid_index_rules),
		cmocka_unit_test(test_write_over_gid_1),
		cmocka_unit_test(test_no_class_dir_gives_soft_devices),
		cmocka_unit_test(test_listing_leaks_nothing),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
