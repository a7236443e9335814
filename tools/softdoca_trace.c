/*
 * softdoca_trace — summarise a SOFTDOCA_TRACE timeline: per task type,
 * how many completed, how many failed with which status, and the latency
 * from submit to completion (p50, p99, max). It reads the line-per-event
 * JSON the library writes (src/core/trace.c); a line it cannot read is
 * counted and reported, never trusted.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRACE_LINE_MAX 4096
#define TRACE_NAME_MAX 64
#define TRACE_TYPES_MAX 64
#define TRACE_STATUSES_MAX 32

struct status_count {
	char name[TRACE_NAME_MAX];
	uint64_t count;
};

struct type_stats {
	char name[TRACE_NAME_MAX];
	double *lat_us;
	size_t count, cap;
	uint64_t errors;
	struct status_count statuses[TRACE_STATUSES_MAX];
	unsigned int num_statuses;
};

static struct type_stats types[TRACE_TYPES_MAX];
static unsigned int num_types;

/* The string value of "key":"..." in line, copied into out; false if absent or too long. */
static int field_str(const char *line, const char *key, char *out, size_t size)
{
	char pat[TRACE_NAME_MAX + 8];
	const char *p, *end;

	snprintf(pat, sizeof(pat), "\"%s\":\"", key);
	p = strstr(line, pat);
	if (p == NULL)
		return 0;
	p += strlen(pat);
	end = strchr(p, '"');
	if (end == NULL || (size_t)(end - p) >= size || end == p)
		return 0;
	memcpy(out, p, (size_t)(end - p));
	out[end - p] = '\0';
	return 1;
}

static int field_num(const char *line, const char *key, double *out)
{
	char pat[TRACE_NAME_MAX + 8];
	const char *p;
	char *end;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(line, pat);
	if (p == NULL)
		return 0;
	p += strlen(pat);
	errno = 0;
	*out = strtod(p, &end);
	return end != p && errno == 0 && isfinite(*out) && *out >= 0;
}

static struct type_stats *type_get(const char *name)
{
	for (unsigned int i = 0; i < num_types; i++)
		if (strcmp(types[i].name, name) == 0)
			return &types[i];
	if (num_types == TRACE_TYPES_MAX)
		return NULL;
	snprintf(types[num_types].name, TRACE_NAME_MAX, "%s", name);
	return &types[num_types++];
}

static int type_add(struct type_stats *t, double lat_us, const char *status)
{
	if (t->count == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;
		double *grown = realloc(t->lat_us, cap * sizeof(*grown));

		if (grown == NULL)
			return 0;
		t->lat_us = grown;
		t->cap = cap;
	}
	t->lat_us[t->count++] = lat_us;
	if (strcmp(status, "DOCA_SUCCESS") == 0)
		return 1;
	t->errors++;
	for (unsigned int i = 0; i < t->num_statuses; i++) {
		if (strcmp(t->statuses[i].name, status) == 0) {
			t->statuses[i].count++;
			return 1;
		}
	}
	if (t->num_statuses < TRACE_STATUSES_MAX) {
		snprintf(t->statuses[t->num_statuses].name, TRACE_NAME_MAX, "%s", status);
		t->statuses[t->num_statuses++].count = 1;
	}
	return 1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Nearest rank: the smallest value with at least p% of them at or below. */
static double percentile(const double *sorted, size_t n, double p)
{
	size_t rank = (size_t)((p / 100.0) * (double)n + 0.999999);

	if (rank == 0)
		rank = 1;
	return sorted[rank > n ? n - 1 : rank - 1];
}

/* One completion ("ph":"X", "cat":"task"): 1 counted, 0 not one, -1 malformed. */
static int line_take(const char *line)
{
	char name[TRACE_NAME_MAX], status[TRACE_NAME_MAX];
	struct type_stats *t;
	double dur;

	if (strstr(line, "\"cat\":\"task\",\"ph\":\"X\"") == NULL)
		return 0;
	if (!field_str(line, "name", name, sizeof(name)) || !field_str(line, "status", status, sizeof(status)) ||
	    !field_num(line, "dur", &dur))
		return -1;
	t = type_get(name);
	if (t == NULL || !type_add(t, dur, status))
		return -1;
	return 1;
}

static void report(uint64_t dropped, int have_dropped, uint64_t malformed)
{
	printf("%-24s %10s %8s %12s %12s %12s\n", "type", "count", "errors", "p50_us", "p99_us", "max_us");
	for (unsigned int i = 0; i < num_types; i++) {
		struct type_stats *t = &types[i];

		qsort(t->lat_us, t->count, sizeof(double), cmp_double);
		printf("%-24s %10zu %8" PRIu64 " %12.3f %12.3f %12.3f\n", t->name, t->count, t->errors,
		       percentile(t->lat_us, t->count, 50), percentile(t->lat_us, t->count, 99),
		       t->lat_us[t->count - 1]);
		for (unsigned int s = 0; s < t->num_statuses; s++)
			printf("  %-22s %10" PRIu64 "\n", t->statuses[s].name, t->statuses[s].count);
	}
	if (have_dropped)
		printf("dropped events: %" PRIu64 "\n", dropped);
	if (malformed != 0)
		printf("unreadable lines: %" PRIu64 "\n", malformed);
}

int main(int argc, char **argv)
{
	char line[TRACE_LINE_MAX];
	uint64_t malformed = 0, dropped = 0;
	int have_dropped = 0, long_line = 0, rc = 1;
	FILE *f;

	if (argc != 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: softdoca_trace <trace.json>\n"
				"  summarises a SOFTDOCA_TRACE file: per task type the count, errors by status\n"
				"  and submit-to-completion latency (p50, p99, max) in microseconds\n");
		return 2;
	}
	f = fopen(argv[1], "r");
	if (f == NULL) {
		fprintf(stderr, "softdoca_trace: cannot open %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	if (fgets(line, sizeof(line), f) == NULL || strncmp(line, "{\"traceEvents\":[", 16) != 0) {
		fprintf(stderr, "softdoca_trace: %s is not a softdoca trace (no traceEvents array first)\n", argv[1]);
		goto out;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		double d;

		if (strchr(line, '\n') == NULL && !feof(f)) {
			long_line = 1; /* the rest of an over-long line follows: skip it */
			continue;
		}
		if (long_line) {
			long_line = 0;
			malformed++;
			continue;
		}
		if (line_take(line) < 0)
			malformed++;
		if (strstr(line, "\"name\":\"softdoca_trace\"") != NULL && field_num(line, "dropped_events", &d)) {
			dropped = (uint64_t)d;
			have_dropped = 1;
		}
	}
	if (ferror(f)) {
		fprintf(stderr, "softdoca_trace: reading %s failed\n", argv[1]);
		goto out;
	}
	report(dropped, have_dropped, malformed);
	rc = 0;
out:
	fclose(f);
	for (unsigned int i = 0; i < num_types; i++)
		free(types[i].lat_us);
	return rc;
}
