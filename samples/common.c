/*
 * softdoca samples: what every DOCA sample may share, whatever library it
 * shows (the RDMA samples add theirs in doca_rdma/rdma_common.c): logging
 * set-up and the closing line, command-line strings, the Enter prompt,
 * opening a device by name, and descriptor files that appear whole or not
 * at all. Written for softdoca; see common.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <doca_log.h>

#include "common.h"

DOCA_LOG_REGISTER(SAMPLE::COMMON);

doca_error_t sample_log_init(void)
{
	struct doca_log_backend *sdk_log;
	doca_error_t result;

	/* Program messages on stdout/stderr; the library's warnings and errors on stderr. */
	result = doca_log_backend_create_standard();
	if (result != DOCA_SUCCESS) {
		fprintf(stderr, "Cannot set up logging: %s\n", doca_error_get_descr(result));
		return result;
	}
	result = doca_log_backend_create_with_file_sdk(stderr, &sdk_log);
	if (result == DOCA_SUCCESS)
		result = doca_log_backend_set_sdk_level(sdk_log, DOCA_LOG_LEVEL_WARNING);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("Cannot set up the library's log: %s", doca_error_get_descr(result));
	return result;
}

int sample_report(doca_error_t result)
{
	if (result == DOCA_SUCCESS) {
		DOCA_LOG_INFO("Sample finished successfully");
		return EXIT_SUCCESS;
	}
	DOCA_LOG_INFO("Sample finished with errors");
	return EXIT_FAILURE;
}

/* A path too long for the buffers below is refused, never cut short. */
static doca_error_t path_fits(const char *path, const char *what)
{
	if (strnlen(path, SAMPLE_PATH_BUF) < SAMPLE_PATH_BUF)
		return DOCA_SUCCESS;
	DOCA_LOG_ERR("The path for %s is too long (at most %d characters)", what, SAMPLE_PATH_BUF - 1);
	return DOCA_ERROR_INVALID_VALUE;
}

doca_error_t sample_copy_arg(char *dst, size_t size, const char *value, const char *flag)
{
	size_t len = strnlen(value, size);

	if (len == size) {
		DOCA_LOG_ERR("%s: the value is too long (at most %zu characters)", flag, size - 1);
		return DOCA_ERROR_INVALID_VALUE;
	}
	memcpy(dst, value, len + 1);
	return DOCA_SUCCESS;
}

double sample_now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

const char *sample_cstr(const void *p, size_t max)
{
	return memchr(p, '\0', max) != NULL ? p : NULL;
}

doca_error_t sample_prompt_enter(const char *fmt, ...)
{
	char text[512];
	va_list ap;
	int c;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	DOCA_LOG_INFO("%s", text);

	do {
		c = getchar();
	} while (c != EOF && c != '\n' && c != '\r');
	if (c == EOF) {
		DOCA_LOG_ERR("Standard input ended while waiting for Enter: run the sample in a terminal, "
			     "or give it one line of input per prompt");
		return DOCA_ERROR_IO_FAILED;
	}
	return DOCA_SUCCESS;
}

static doca_error_t write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return DOCA_ERROR_IO_FAILED;
		p += n;
		len -= (size_t)n;
	}
	return DOCA_SUCCESS;
}

/* The directory a path's file lives in: "." for a bare name. */
static void path_dir(const char *path, char *out, size_t size)
{
	const char *slash = strrchr(path, '/');

	if (slash == NULL)
		snprintf(out, size, ".");
	else if (slash == path)
		snprintf(out, size, "/");
	else
		snprintf(out, size, "%.*s", (int)(slash - path), path);
}

/* Why a file cannot be made at path, which does not exist (lstat said
 * so with err): a missing or unusable directory on the way. False if
 * nothing is wrong with the way there. */
static bool path_explain_missing(const char *path, int err, const char *verb, const char *what)
{
	char dir[SAMPLE_PATH_BUF];
	struct stat st;

	path_dir(path, dir, sizeof(dir));
	if (err == ENOTDIR) {
		DOCA_LOG_ERR("Cannot %s %s %s %s: a part of that path is a file, not a directory", verb, what,
			     strcmp(verb, "write") == 0 ? "to" : "from", path);
		return true;
	}
	if (err == EACCES) {
		DOCA_LOG_ERR("Cannot %s %s %s %s: this user may not enter a directory on the way (check the "
			     "permissions of %s and above)", verb, what, strcmp(verb, "write") == 0 ? "to" : "from",
			     path, dir);
		return true;
	}
	if (err != ENOENT)
		return false;
	if (stat(dir, &st) != 0 && strcmp(verb, "write") == 0) {
		DOCA_LOG_ERR("Cannot write %s to %s: the directory %s does not exist; create it (mkdir -p %s) or "
			     "give a path in an existing directory", what, path, dir, dir);
		return true;
	}
	if (stat(dir, &st) != 0) {
		DOCA_LOG_ERR("Cannot read %s from %s: the directory %s does not exist (a typing mistake in the "
			     "path?)", what, path, dir);
		return true;
	}
	if (!S_ISDIR(st.st_mode)) {
		DOCA_LOG_ERR("Cannot %s %s %s %s: %s is not a directory", verb, what,
			     strcmp(verb, "write") == 0 ? "to" : "from", path, dir);
		return true;
	}
	if (strcmp(verb, "write") == 0 && access(dir, W_OK | X_OK) != 0) {
		DOCA_LOG_ERR("Cannot write %s to %s: this user may not create files in %s (%s)", what, path, dir,
			     strerror(errno));
		return true;
	}
	return false;
}

/* Can a new file be written at path? Says what is in the way if not. */
static doca_error_t path_check_new(const char *path, const char *what)
{
	struct stat st;

	if (lstat(path, &st) != 0)
		return path_explain_missing(path, errno, "write", what) ? DOCA_ERROR_IO_FAILED : DOCA_SUCCESS;
	if (S_ISDIR(st.st_mode)) {
		DOCA_LOG_ERR("Cannot write %s to %s: that is a directory. Give the path of a file (it need not "
			     "exist yet), for example %s/%s", what, path, path, "descriptor.txt");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (S_ISREG(st.st_mode)) {
		DOCA_LOG_ERR("Cannot write %s to %s: the file already exists. It is left over from an earlier run, or "
			     "another program on this host uses the same path: delete it, or choose another path",
			     what, path);
		return DOCA_ERROR_ALREADY_EXIST;
	}
	DOCA_LOG_ERR("Cannot write %s to %s: something that is not a regular file is there (%s): choose another "
		     "path", what, path, S_ISLNK(st.st_mode) ? "a symbolic link" : "a FIFO, socket or device");
	return DOCA_ERROR_ALREADY_EXIST;
}

/*
 * Write a descriptor file so that it appears whole or not at all (written
 * under a temporary name, then linked in place), and never over an
 * existing file: a leftover or another program's file is reported.
 */
doca_error_t sample_file_write(const char *path, const void *data, size_t len, const char *what)
{
	char tmp[SAMPLE_PATH_BUF + 8];
	doca_error_t result;
	int fd;

	result = path_fits(path, what);
	if (result == DOCA_SUCCESS)
		result = path_check_new(path, what);
	if (result != DOCA_SUCCESS)
		return result;
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
	fd = mkstemp(tmp);
	if (fd < 0) {
		DOCA_LOG_ERR("Cannot create %s (for %s): %s", path, what, strerror(errno));
		return DOCA_ERROR_IO_FAILED;
	}
	if (fchmod(fd, 0644) != 0 || write_all(fd, data, len) != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Cannot write %s to %s: %s", what, path, strerror(errno));
		result = DOCA_ERROR_IO_FAILED;
	}
	if (close(fd) != 0 && result == DOCA_SUCCESS) {
		DOCA_LOG_ERR("Cannot write %s to %s: %s", what, path, strerror(errno));
		result = DOCA_ERROR_IO_FAILED;
	}
	if (result == DOCA_SUCCESS && link(tmp, path) != 0) {
		if (errno == EEXIST) {
			DOCA_LOG_ERR("Cannot write %s to %s: the file appeared meanwhile (another program writes the "
				     "same path?)", what, path);
			result = DOCA_ERROR_ALREADY_EXIST;
		} else if (rename(tmp, path) != 0) { /* file systems without hard links */
			DOCA_LOG_ERR("Cannot write %s to %s: %s", what, path, strerror(errno));
			result = DOCA_ERROR_IO_FAILED;
		}
	}
	(void)unlink(tmp);
	return result;
}

/* Read a whole descriptor file; errors name the file and what is wrong. */
doca_error_t sample_file_read(const char *path, const char *what, const char *writer, void **data_out,
			      size_t *len_out)
{
	doca_error_t result = DOCA_SUCCESS;
	struct stat st;
	size_t got = 0;
	char *data = NULL;
	int fd;

	result = path_fits(path, what);
	if (result != DOCA_SUCCESS)
		return result;
	/* Non-blocking: opening a FIFO given by mistake must not hang. */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;

		/* The line NVIDIA's samples log first: users who know those
		 * samples recognise it (a side that read before its peer had
		 * written the file); the lines below say which file and why. */
		DOCA_LOG_ERR("Failed to open the file %s for reading", path);
		if (path_explain_missing(path, err, "read", what))
			return DOCA_ERROR_IO_FAILED;
		if (err == EACCES) {
			DOCA_LOG_ERR("Cannot read %s from %s: this user may not read that file (check its owner and "
				     "mode: ls -l %s)", what, path, path);
			return DOCA_ERROR_IO_FAILED;
		}
		DOCA_LOG_ERR("Cannot read %s from %s: %s", what, path, strerror(err));
		if (err == ENOENT)
			DOCA_LOG_ERR("The %s writes that file when it starts: copy it here (to %s) before pressing "
				     "Enter", writer, path);
		return DOCA_ERROR_IO_FAILED;
	}
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		DOCA_LOG_ERR("Cannot read %s from %s: that is a directory. Give the path of the file the %s wrote, "
			     "for example %s/%s", what, path, writer, path, "descriptor.txt");
		result = DOCA_ERROR_IO_FAILED;
	} else if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		DOCA_LOG_ERR("Cannot read %s from %s: not a regular file", what, path);
		result = DOCA_ERROR_IO_FAILED;
	} else if (st.st_size == 0) {
		DOCA_LOG_ERR("%s is empty, where %s was expected: the copy from the %s did not complete, or it is "
			     "the wrong file", path, what, writer);
		result = DOCA_ERROR_INVALID_VALUE;
	} else if (st.st_size > SAMPLE_DESC_FILE_MAX) {
		DOCA_LOG_ERR("%s is %lld bytes, far larger than %s: is it the right file?", path,
			     (long long)st.st_size, what);
		result = DOCA_ERROR_INVALID_VALUE;
	} else if ((data = malloc((size_t)st.st_size)) == NULL) {
		DOCA_LOG_ERR("Out of memory reading %s", path);
		result = DOCA_ERROR_NO_MEMORY;
	}
	while (result == DOCA_SUCCESS && got < (size_t)st.st_size) {
		ssize_t n = read(fd, data + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			DOCA_LOG_ERR("Cannot read %s from %s: %s", what, path, n < 0 ? strerror(errno) : "it shrank");
			result = DOCA_ERROR_IO_FAILED;
		} else {
			got += (size_t)n;
		}
	}
	close(fd);
	if (result != DOCA_SUCCESS) {
		free(data);
		return result;
	}
	*data_out = data;
	*len_out = got;
	return DOCA_SUCCESS;
}

static void list_devices(struct doca_devinfo **list, uint32_t n)
{
	char ibdev[DOCA_DEVINFO_IBDEV_NAME_SIZE];
	char iface[DOCA_DEVINFO_IFACE_NAME_SIZE];
	uint32_t i;

	if (n == 0) {
		DOCA_LOG_ERR("No DOCA devices were found on this machine");
		return;
	}
	DOCA_LOG_ERR("Available devices (-d takes the ibdev name or the interface name; doca_caps --list-devs, "
		     "in /opt/mellanox/doca/tools or /usr/local/bin, shows their GIDs, which -g takes by index):");
	for (i = 0; i < n; i++) {
		if (doca_devinfo_get_ibdev_name(list[i], ibdev, sizeof(ibdev)) != DOCA_SUCCESS)
			strcpy(ibdev, "?");
		if (doca_devinfo_get_iface_name(list[i], iface, sizeof(iface)) != DOCA_SUCCESS)
			strcpy(iface, "-");
		DOCA_LOG_ERR("    %-20s interface %s", ibdev, iface);
	}
}

doca_error_t sample_open_device(const char *name, sample_cap_check_fn cap_check, const char *cap_what,
			       struct doca_dev **dev)
{
	char ibdev[DOCA_DEVINFO_IBDEV_NAME_SIZE];
	char iface[DOCA_DEVINFO_IFACE_NAME_SIZE];
	struct doca_devinfo **list = NULL;
	struct doca_devinfo *found = NULL;
	doca_error_t result;
	uint32_t n = 0, i;
	int pass;

	result = doca_devinfo_create_list(&list, &n);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Cannot list the DOCA devices: %s", doca_error_get_descr(result));
		return result;
	}
	/* An ibdev name wins over an interface of the same name. */
	for (pass = 0; pass < 2 && found == NULL; pass++) {
		for (i = 0; i < n && found == NULL; i++) {
			if (pass == 0 && doca_devinfo_get_ibdev_name(list[i], ibdev, sizeof(ibdev)) == DOCA_SUCCESS &&
			    strcmp(ibdev, name) == 0)
				found = list[i];
			if (pass == 1 && doca_devinfo_get_iface_name(list[i], iface, sizeof(iface)) == DOCA_SUCCESS &&
			    strcmp(iface, name) == 0)
				found = list[i];
		}
	}
	if (found == NULL) {
		DOCA_LOG_ERR("No DOCA device is named \"%s\"", name);
		list_devices(list, n);
		result = DOCA_ERROR_NOT_FOUND;
	} else if (cap_check != NULL && cap_check(found) != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Device %s cannot run %s (doca_caps -d %s lists what it can do)", name,
			     cap_what, name);
		result = DOCA_ERROR_NOT_SUPPORTED;
	} else {
		result = doca_dev_open(found, dev);
		if (result != DOCA_SUCCESS)
			DOCA_LOG_ERR("Cannot open device %s: %s", name, doca_error_get_descr(result));
	}
	doca_devinfo_destroy_list(list);
	return result;
}
