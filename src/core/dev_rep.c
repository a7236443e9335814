/*
 * softdoca — representors and the emulated PCIe link (see dev_rep.h).
 *
 * Representors. doca_devinfo_rep_create_list on an open soft device lists
 * one representor per soft device of the host, in doca_devinfo_create_list
 * order: the device a BlueField-side program opens stands for the
 * BlueField, its representors for the host's PCI functions. Each is a PF
 * representor (DOCA_DEVINFO_REP_FILTER_NET matches it), not hot-plugged,
 * with the host device's PCI address, its interface name, and the VUID
 * "softdoca-pf-<PCI address>". The host devices have no emulated functions,
 * so DOCA_DEVINFO_REP_FILTER_EMULATED alone lists none.
 *
 * Lifetimes. A representor info holds a reference on the host devinfo it
 * stands for; its list and every representor opened from it hold one on
 * the info, so an open representor outlives its list. Live lists and open
 * representors sit in registries, so that pointers softdoca did not hand
 * out are refused without being read.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dev.h"
#include "dev_rep.h"
#include "log_internal.h"

SDK_LOG_REGISTER(DEV_REP);

#define REP_VUID_PREFIX "softdoca-pf-"
#define PCIE_DIR_DEFAULT_FMT "/tmp/softdoca-pcie-%u"
#define PCIE_LEAF_MAX 32

struct doca_devinfo_rep {
	atomic_uint refcount;	    /* the list's plus one per open representor */
	struct doca_devinfo *host; /* referenced: the host function it stands for */
	char vuid[DOCA_DEVINFO_REP_VUID_SIZE];
};

/* A list handed out: the array the caller sees is items (NULL-terminated). */
struct rep_list {
	struct rep_list *next; /* registry link */
	uint32_t nb;
	struct doca_devinfo_rep *items[];
};

struct doca_dev_rep {
	struct doca_dev_rep *next; /* registry link */
	struct doca_devinfo_rep *info; /* referenced */
};

static pthread_mutex_t rep_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rep_list *live_lists;
static struct doca_dev_rep *open_reps;

static doca_error_t null_arg(const char *func, const char *name)
{
	SDK_LOG_ERR("%s: %s is NULL", func, name);
	return DOCA_ERROR_INVALID_VALUE;
}

static void rep_info_unref(struct doca_devinfo_rep *info)
{
	if (atomic_fetch_sub(&info->refcount, 1) != 1)
		return;
	core_devinfo_unref(info->host);
	free(info);
}

/* Whether info was handed out and is still alive; caller holds rep_lock.
 * Compares pointers only: an unknown one is never read. */
static int rep_info_known(const struct doca_devinfo_rep *info)
{
	for (const struct rep_list *l = live_lists; l != NULL; l = l->next)
		for (uint32_t i = 0; i < l->nb; i++)
			if (l->items[i] == info)
				return 1;
	for (const struct doca_dev_rep *r = open_reps; r != NULL; r = r->next)
		if (r->info == info)
			return 1;
	return 0;
}

static int rep_open_known(const struct doca_dev_rep *rep)
{
	for (const struct doca_dev_rep *r = open_reps; r != NULL; r = r->next)
		if (r == rep)
			return 1;
	return 0;
}

/* Validate a representor info argument of API call func. */
static doca_error_t check_info(const char *func, const struct doca_devinfo_rep *info)
{
	int known;

	if (info == NULL)
		return null_arg(func, "devinfo_rep");
	pthread_mutex_lock(&rep_lock);
	known = rep_info_known(info);
	pthread_mutex_unlock(&rep_lock);
	if (!known) {
		SDK_LOG_ERR("%s: %p is not a representor of a live list or an open representor", func,
			    (const void *)info);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

/* ---- lists ------------------------------------------------------------ */

static struct doca_devinfo_rep *rep_info_new(struct doca_devinfo *host)
{
	struct doca_devinfo_rep *info = calloc(1, sizeof(*info));

	if (info == NULL)
		return NULL;
	atomic_init(&info->refcount, 1);
	core_devinfo_ref(host);
	info->host = host;
	snprintf(info->vuid, sizeof(info->vuid), REP_VUID_PREFIX "%s", host->pci_addr);
	return info;
}

static void rep_list_free(struct rep_list *list)
{
	for (uint32_t i = 0; i < list->nb; i++)
		rep_info_unref(list->items[i]);
	free(list);
}

/* Representors for the host devices that filter selects. Every host device
 * is a PF with a net representor; none is emulated. */
static doca_error_t rep_list_build(int filter, struct rep_list **out)
{
	int want = filter == DOCA_DEVINFO_REP_FILTER_ALL || (filter & DOCA_DEVINFO_REP_FILTER_NET) != 0;
	struct doca_devinfo **hosts = NULL;
	struct rep_list *list;
	uint32_t nb_hosts = 0;
	doca_error_t err;

	err = doca_devinfo_create_list(&hosts, &nb_hosts);
	if (err != DOCA_SUCCESS)
		return err;
	if (!want)
		nb_hosts = 0;
	list = calloc(1, sizeof(*list) + (nb_hosts + 1) * sizeof(list->items[0]));
	if (list == NULL) {
		err = DOCA_ERROR_NO_MEMORY;
		goto destroy_hosts;
	}
	for (uint32_t i = 0; i < nb_hosts; i++) {
		list->items[i] = rep_info_new(hosts[i]);
		if (list->items[i] == NULL) {
			rep_list_free(list);
			err = DOCA_ERROR_NO_MEMORY;
			goto destroy_hosts;
		}
		list->nb++;
	}
	*out = list;

destroy_hosts:
	doca_devinfo_destroy_list(hosts);
	if (err == DOCA_ERROR_NO_MEMORY)
		SDK_LOG_ERR("out of memory listing representors");
	return err;
}

DOCA_STABLE
doca_error_t doca_devinfo_rep_create_list(struct doca_dev *dev, int filter,
					  struct doca_devinfo_rep ***dev_list_rep, uint32_t *nb_devs_rep)
{
	int known = DOCA_DEVINFO_REP_FILTER_NET | DOCA_DEVINFO_REP_FILTER_EMULATED;
	char pci[DOCA_DEVINFO_PCI_ADDR_SIZE];
	struct rep_list *list = NULL;
	doca_error_t err;

	if (dev == NULL)
		return null_arg(__func__, "dev");
	if (dev_list_rep == NULL)
		return null_arg(__func__, "dev_list_rep");
	if (nb_devs_rep == NULL)
		return null_arg(__func__, "nb_devs_rep");
	if ((filter & ~known) != 0) {
		SDK_LOG_ERR("%s: unknown representor filter 0x%x", __func__, (unsigned int)filter);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (core_dev_pci_addr(dev, pci) != DOCA_SUCCESS) {
		SDK_LOG_ERR("%s: %p is not an open device", __func__, (void *)dev);
		return DOCA_ERROR_INVALID_VALUE;
	}
	err = rep_list_build(filter, &list);
	if (err != DOCA_SUCCESS)
		return err;

	pthread_mutex_lock(&rep_lock);
	list->next = live_lists;
	live_lists = list;
	pthread_mutex_unlock(&rep_lock);
	SDK_LOG_DBG("device %s: %u representor(s) for filter 0x%x", pci, list->nb, (unsigned int)filter);
	*dev_list_rep = list->items;
	*nb_devs_rep = list->nb;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_devinfo_rep_destroy_list(struct doca_devinfo_rep **dev_list_rep)
{
	struct rep_list *found = NULL;

	if (dev_list_rep == NULL)
		return null_arg(__func__, "dev_list_rep");
	pthread_mutex_lock(&rep_lock);
	for (struct rep_list **link = &live_lists; *link != NULL; link = &(*link)->next) {
		if ((*link)->items == dev_list_rep) {
			found = *link;
			*link = found->next;
			break;
		}
	}
	pthread_mutex_unlock(&rep_lock);
	if (found == NULL) {
		SDK_LOG_ERR("%s: %p is not a live representor list (destroyed already?)", __func__,
			    (void *)dev_list_rep);
		return DOCA_ERROR_INVALID_VALUE;
	}
	rep_list_free(found);
	return DOCA_SUCCESS;
}

/* ---- open representors -------------------------------------------------- */

DOCA_STABLE
doca_error_t doca_dev_rep_open(struct doca_devinfo_rep *devinfo, struct doca_dev_rep **dev_rep)
{
	struct doca_dev_rep *rep;
	doca_error_t err = DOCA_SUCCESS;

	if (devinfo == NULL)
		return null_arg(__func__, "devinfo");
	if (dev_rep == NULL)
		return null_arg(__func__, "dev_rep");
	rep = calloc(1, sizeof(*rep));
	if (rep == NULL) {
		SDK_LOG_ERR("%s: out of memory", __func__);
		return DOCA_ERROR_NO_MEMORY;
	}
	pthread_mutex_lock(&rep_lock);
	if (!rep_info_known(devinfo)) {
		err = DOCA_ERROR_INVALID_VALUE;
		goto unlock;
	}
	atomic_fetch_add(&devinfo->refcount, 1);
	rep->info = devinfo;
	rep->next = open_reps;
	open_reps = rep;

unlock:
	pthread_mutex_unlock(&rep_lock);
	if (err != DOCA_SUCCESS) {
		SDK_LOG_ERR("%s: %p is not a representor of a live list", __func__, (void *)devinfo);
		free(rep);
		return err;
	}
	SDK_LOG_DBG("opened representor %s", devinfo->vuid);
	*dev_rep = rep;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_dev_rep_close(struct doca_dev_rep *dev)
{
	struct doca_dev_rep *found = NULL;

	if (dev == NULL)
		return null_arg(__func__, "dev");
	pthread_mutex_lock(&rep_lock);
	for (struct doca_dev_rep **link = &open_reps; *link != NULL; link = &(*link)->next) {
		if (*link == dev) {
			found = dev;
			*link = dev->next;
			break;
		}
	}
	pthread_mutex_unlock(&rep_lock);
	if (found == NULL) {
		SDK_LOG_ERR("%s: %p is not an open representor (closed already?)", __func__, (void *)dev);
		return DOCA_ERROR_INVALID_VALUE;
	}
	SDK_LOG_DBG("closed representor %s", found->info->vuid);
	rep_info_unref(found->info);
	free(found);
	return DOCA_SUCCESS;
}

DOCA_STABLE
struct doca_devinfo_rep *doca_dev_rep_as_devinfo(struct doca_dev_rep *dev_rep)
{
	struct doca_devinfo_rep *info = NULL;

	if (dev_rep == NULL) {
		(void)null_arg(__func__, "dev_rep");
		return NULL;
	}
	pthread_mutex_lock(&rep_lock);
	if (rep_open_known(dev_rep))
		info = dev_rep->info;
	pthread_mutex_unlock(&rep_lock);
	if (info == NULL)
		SDK_LOG_ERR("%s: %p is not an open representor", __func__, (void *)dev_rep);
	return info;
}

/* ---- getters -------------------------------------------------------------- */

/* Shared checks of the getters: a known info and an output pointer. */
static doca_error_t rep_getter(const char *func, const struct doca_devinfo_rep *info, const void *out)
{
	if (info == NULL)
		return null_arg(func, "devinfo_rep");
	if (out == NULL)
		return null_arg(func, "output");
	return check_info(func, info);
}

static doca_error_t copy_str(const char *func, const char *what, const char *s, char *out, uint32_t size)
{
	size_t need = strlen(s) + 1;

	if (size < need) {
		SDK_LOG_ERR("%s: buffer of %u bytes is too small for %s '%s' (%zu bytes needed)", func, size, what,
			    s, need);
		return DOCA_ERROR_INVALID_VALUE;
	}
	memcpy(out, s, need);
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_devinfo_rep_get_vuid(const struct doca_devinfo_rep *devinfo_rep, char *rep_vuid, uint32_t size)
{
	doca_error_t err = rep_getter(__func__, devinfo_rep, rep_vuid);

	if (err != DOCA_SUCCESS)
		return err;
	return copy_str(__func__, "VUID", devinfo_rep->vuid, rep_vuid, size);
}

DOCA_STABLE
doca_error_t doca_devinfo_rep_is_equal_pci_addr(const struct doca_devinfo_rep *devinfo_rep, const char *pci_addr_str,
						uint8_t *is_equal)
{
	doca_error_t err;

	if (pci_addr_str == NULL)
		return null_arg(__func__, "pci_addr_str");
	err = rep_getter(__func__, devinfo_rep, is_equal);
	if (err != DOCA_SUCCESS)
		return err;
	return core_pci_addr_compare(__func__, devinfo_rep->vuid, devinfo_rep->host->pci_addr, pci_addr_str,
				     is_equal);
}

DOCA_STABLE
doca_error_t doca_devinfo_rep_get_pci_addr_str(const struct doca_devinfo_rep *devinfo_rep, char *pci_addr_str)
{
	doca_error_t err = rep_getter(__func__, devinfo_rep, pci_addr_str);

	if (err != DOCA_SUCCESS)
		return err;
	memcpy(pci_addr_str, devinfo_rep->host->pci_addr, DOCA_DEVINFO_REP_PCI_ADDR_SIZE);
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_devinfo_rep_get_pci_func_type(const struct doca_devinfo_rep *devinfo_rep,
						enum doca_pci_func_type *pci_func_type)
{
	doca_error_t err = rep_getter(__func__, devinfo_rep, pci_func_type);

	if (err != DOCA_SUCCESS)
		return err;
	*pci_func_type = DOCA_PCI_FUNC_TYPE_PF;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_devinfo_rep_get_is_hotplug(const struct doca_devinfo_rep *devinfo_rep, uint8_t *is_hotplug)
{
	doca_error_t err = rep_getter(__func__, devinfo_rep, is_hotplug);

	if (err != DOCA_SUCCESS)
		return err;
	*is_hotplug = 0;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_rep_get_iface_name(const struct doca_devinfo_rep *devinfo_rep, char *iface_name,
					     uint32_t size)
{
	doca_error_t err = rep_getter(__func__, devinfo_rep, iface_name);

	if (err != DOCA_SUCCESS)
		return err;
	return copy_str(__func__, "interface name", devinfo_rep->host->iface_name, iface_name, size);
}

DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_rep_get_vhca_id(const struct doca_devinfo_rep *devinfo_rep, uint16_t *vhca_id)
{
	doca_error_t err = rep_getter(__func__, devinfo_rep, vhca_id);

	if (err != DOCA_SUCCESS)
		return err;
	/* An answer, not a caller mistake: info level, as for devices. */
	SDK_LOG_INFO("%s: not supported by %s: a soft function has no virtual HCA", __func__, devinfo_rep->vuid);
	return DOCA_ERROR_NOT_SUPPORTED;
}

/* ---- the rendezvous directory ----------------------------------------------- */

/* Absolute, printable, no "." or ".." component, fits. */
static int pcie_dir_valid(const char *path)
{
	size_t len = strnlen(path, SOFTDOCA_PCIE_DIR_MAX);

	if (len == 0 || len >= SOFTDOCA_PCIE_DIR_MAX || path[0] != '/')
		return 0;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)path[i] < 0x20 || (unsigned char)path[i] == 0x7f)
			return 0;
	for (const char *c = path; c != NULL; c = strchr(c + 1, '/')) {
		const char *comp = c + 1;
		size_t n = strcspn(comp, "/");

		if ((n == 1 && comp[0] == '.') || (n == 2 && comp[0] == '.' && comp[1] == '.'))
			return 0;
	}
	return 1;
}

/* Where the rendezvous directory is, without touching it. */
static doca_error_t pcie_dir_path(char out[SOFTDOCA_PCIE_DIR_MAX])
{
	const char *env = getenv(SOFTDOCA_PCIE_DIR_ENV);

	if (env == NULL || env[0] == '\0') {
		snprintf(out, SOFTDOCA_PCIE_DIR_MAX, PCIE_DIR_DEFAULT_FMT, (unsigned int)geteuid());
		return DOCA_SUCCESS;
	}
	if (!pcie_dir_valid(env)) {
		SDK_LOG_ERR(SOFTDOCA_PCIE_DIR_ENV "='%.*s' is not an absolute path of at most %d printable "
			    "characters without '.' or '..' components",
			    SOFTDOCA_PCIE_DIR_MAX, env, SOFTDOCA_PCIE_DIR_MAX - 1);
		return DOCA_ERROR_INVALID_VALUE;
	}
	snprintf(out, SOFTDOCA_PCIE_DIR_MAX, "%s", env);
	/* "/a/b/" and "/a/b" are one directory: one link identity. */
	for (size_t len = strlen(out); len > 1 && out[len - 1] == '/'; len--)
		out[len - 1] = '\0';
	return DOCA_SUCCESS;
}

/* Open path as a directory: no symlink as last component, ours or root's,
 * not writable by group or others. */
static doca_error_t pcie_dir_open_checked(const char *path, int *fd_out)
{
	struct stat st;
	int fd;

	if (mkdir(path, 0700) != 0 && errno != EEXIST) {
		SDK_LOG_ERR("rendezvous directory %s: cannot create it: %s", path, strerror(errno));
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		SDK_LOG_ERR("rendezvous directory %s: %s", path,
			    e == ELOOP || e == ENOTDIR ? "a symlink or not a directory, refused" : strerror(e));
		return e == ELOOP || e == ENOTDIR || e == EACCES ? DOCA_ERROR_NOT_PERMITTED
								  : DOCA_ERROR_OPERATING_SYSTEM;
	}
	if (fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode)) {
		SDK_LOG_ERR("rendezvous directory %s: not a directory", path);
		close(fd);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		SDK_LOG_ERR("rendezvous directory %s belongs to uid %u, not to uid %u or root: refused", path,
			    (unsigned int)st.st_uid, (unsigned int)geteuid());
		close(fd);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
		SDK_LOG_ERR("rendezvous directory %s is writable by group or others (mode %03o): refused", path,
			    (unsigned int)(st.st_mode & 0777));
		close(fd);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	*fd_out = fd;
	return DOCA_SUCCESS;
}

SOFTDOCA_EXPORT doca_error_t softdoca_pcie_dir(char dir_out[SOFTDOCA_PCIE_DIR_MAX])
{
	char path[SOFTDOCA_PCIE_DIR_MAX];
	doca_error_t err;
	int fd;

	if (dir_out == NULL)
		return null_arg(__func__, "dir_out");
	err = pcie_dir_path(path);
	if (err != DOCA_SUCCESS)
		return err;
	err = pcie_dir_open_checked(path, &fd);
	if (err != DOCA_SUCCESS)
		return err;
	close(fd);
	memcpy(dir_out, path, sizeof(path));
	return DOCA_SUCCESS;
}

SOFTDOCA_EXPORT doca_error_t softdoca_pcie_dir_open(int *dirfd_out)
{
	char path[SOFTDOCA_PCIE_DIR_MAX];
	doca_error_t err;

	if (dirfd_out == NULL)
		return null_arg(__func__, "dirfd_out");
	err = pcie_dir_path(path);
	if (err != DOCA_SUCCESS)
		return err;
	return pcie_dir_open_checked(path, dirfd_out);
}

/* ---- link identities ---------------------------------------------------------- */

/* Fill out from a host PCI address (lower-cased: one spelling per link). */
static doca_error_t link_fill(const char *pci, struct softdoca_pcie_link *out)
{
	struct softdoca_pcie_link link;
	doca_error_t err;

	memset(&link, 0, sizeof(link));
	for (size_t i = 0; i + 1 < sizeof(link.pci_addr) && pci[i] != '\0'; i++)
		link.pci_addr[i] = (pci[i] >= 'A' && pci[i] <= 'F') ? (char)(pci[i] - 'A' + 'a') : pci[i];
	err = softdoca_pcie_dir(link.dir);
	if (err != DOCA_SUCCESS)
		return err;
	*out = link;
	return DOCA_SUCCESS;
}

SOFTDOCA_EXPORT doca_error_t softdoca_dev_pcie_link(const struct doca_dev *dev, struct softdoca_pcie_link *out)
{
	char pci[DOCA_DEVINFO_PCI_ADDR_SIZE];

	if (dev == NULL)
		return null_arg(__func__, "dev");
	if (out == NULL)
		return null_arg(__func__, "out");
	if (core_dev_pci_addr(dev, pci) != DOCA_SUCCESS) {
		SDK_LOG_ERR("%s: %p is not an open device", __func__, (const void *)dev);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return link_fill(pci, out);
}

SOFTDOCA_EXPORT doca_error_t softdoca_dev_rep_pcie_link(const struct doca_dev_rep *rep,
							struct softdoca_pcie_link *out)
{
	char pci[DOCA_DEVINFO_PCI_ADDR_SIZE];
	int known;

	if (rep == NULL)
		return null_arg(__func__, "rep");
	if (out == NULL)
		return null_arg(__func__, "out");
	pthread_mutex_lock(&rep_lock);
	known = rep_open_known(rep);
	if (known)
		memcpy(pci, rep->info->host->pci_addr, sizeof(pci));
	pthread_mutex_unlock(&rep_lock);
	if (!known) {
		SDK_LOG_ERR("%s: %p is not an open representor", __func__, (const void *)rep);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return link_fill(pci, out);
}

SOFTDOCA_EXPORT int softdoca_pcie_link_equal(const struct softdoca_pcie_link *a, const struct softdoca_pcie_link *b)
{
	if (a == NULL || b == NULL)
		return 0;
	return strncmp(a->pci_addr, b->pci_addr, sizeof(a->pci_addr)) == 0 &&
	       strncmp(a->dir, b->dir, sizeof(a->dir)) == 0;
}

static int leaf_valid(const char *leaf)
{
	size_t len = strnlen(leaf, PCIE_LEAF_MAX + 1);

	if (len == 0 || len > PCIE_LEAF_MAX)
		return 0;
	for (size_t i = 0; i < len; i++) {
		char c = leaf[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
		      c == '-'))
			return 0;
	}
	return 1;
}

SOFTDOCA_EXPORT doca_error_t softdoca_pcie_link_path(const struct softdoca_pcie_link *link, const char *leaf,
						     char *out, size_t size)
{
	int n;

	if (link == NULL)
		return null_arg(__func__, "link");
	if (leaf == NULL)
		return null_arg(__func__, "leaf");
	if (out == NULL)
		return null_arg(__func__, "out");
	if (!leaf_valid(leaf)) {
		SDK_LOG_ERR("%s: leaf '%.*s' is not 1-%d letters, digits, '_' or '-'", __func__, PCIE_LEAF_MAX + 1,
			    leaf, PCIE_LEAF_MAX);
		return DOCA_ERROR_INVALID_VALUE;
	}
	n = snprintf(out, size, "%.*s/%.*s.%s", SOFTDOCA_PCIE_DIR_MAX, link->dir, DOCA_DEVINFO_PCI_ADDR_SIZE,
		     link->pci_addr, leaf);
	if (n < 0 || (size_t)n >= size) {
		SDK_LOG_ERR("%s: path of '%s' in %s needs %d bytes, %zu given", __func__, leaf, link->dir, n + 1,
			    size);
		if (size > 0)
			out[0] = '\0';
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}
