/*
 * softdoca_trace — read one or more SOFTDOCA_TRACE timelines (the
 * line-per-event JSON of src/core/trace.c) and
 *  - summarise them: per task type, how many completed, how many failed
 *    with which status, the latency from submit to completion (p50, p99,
 *    max), and how many operations arrived at a target;
 *  - with --merge OUT.json, write them as one trace: timestamps are
 *    CLOCK_MONOTONIC in every file, so the traces of two peers on one host
 *    line up (a process per pid, its tracks under it);
 *  - with --png OUT.png, draw a latency histogram and the tasks in flight
 *    over time with gnuplot (a data file and a script in a scratch
 *    directory; exit 2 when gnuplot is not installed).
 * A line it cannot read is counted and reported, never trusted: --merge
 * copies only lines that are one well-formed JSON object.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define TRACE_LINE_MAX 4096
#define TRACE_NAME_MAX 64
#define TRACE_TYPES_MAX 64
#define TRACE_STATUSES_MAX 32
#define TRACE_PATH_MAX 4096
#define PLOT_BINS 50
#define PLOT_DEPTH_BUCKETS 1000

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

/* A completed task's span, for the in-flight depth. */
struct span {
	double start_us, end_us;
};

/* One end of a span: +1 at its start, -1 at its end. */
struct edge {
	double t_us;
	int step;
};

static struct type_stats types[TRACE_TYPES_MAX];
static unsigned int num_types;
static struct span *spans;
static size_t num_spans, spans_cap;
static uint64_t at_target;

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

static int span_add(double start_us, double dur_us)
{
	if (num_spans == spans_cap) {
		size_t cap = spans_cap ? spans_cap * 2 : 4096;
		struct span *grown = realloc(spans, cap * sizeof(*grown));

		if (grown == NULL)
			return 0;
		spans = grown;
		spans_cap = cap;
	}
	spans[num_spans++] = (struct span){start_us, start_us + dur_us};
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
static int line_take_task(const char *line)
{
	char name[TRACE_NAME_MAX], status[TRACE_NAME_MAX];
	struct type_stats *t;
	double dur, ts;

	if (strstr(line, "\"cat\":\"task\",\"ph\":\"X\"") == NULL)
		return 0;
	if (!field_str(line, "name", name, sizeof(name)) || !field_str(line, "status", status, sizeof(status)) ||
	    !field_num(line, "dur", &dur) || !field_num(line, "ts", &ts))
		return -1;
	t = type_get(name);
	if (t == NULL || !type_add(t, dur, status) || !span_add(ts, dur))
		return -1;
	return 1;
}

/* Whether line (without its newline and trailing comma) is one JSON
 * object: brackets balance outside strings, strings close with JSON's
 * escapes, no control characters. Enough to copy it into a merge. */
static bool line_is_object(const char *line, size_t len)
{
	int depth = 0;
	bool in_str = false;

	if (len < 2 || line[0] != '{' || line[len - 1] != '}')
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)line[i];

		if (c < 0x20)
			return false;
		if (in_str) {
			if (c == '\\') {
				if (i + 1 >= len || strchr("\"\\/bfnrtu", line[i + 1]) == NULL)
					return false;
				i++;
			} else if (c == '"') {
				in_str = false;
			}
			continue;
		}
		if (c == '"')
			in_str = true;
		else if (c == '{' || c == '[')
			depth++;
		else if ((c == '}' || c == ']') && --depth < 0)
			return false;
		if (depth == 0 && i + 1 < len)
			return false; /* something after the object closed */
	}
	return depth == 0 && !in_str;
}

struct merge_out {
	FILE *f;
	uint64_t lines;
};

/* Copy an event line into the merged trace; false if it is not one. */
static bool merge_line(struct merge_out *m, const char *line)
{
	size_t len = strcspn(line, "\n");

	if (len > 0 && line[len - 1] == ',')
		len--;
	if (!line_is_object(line, len))
		return false;
	if (m->lines++ > 0)
		fputs(",\n", m->f);
	fwrite(line, 1, len, m->f);
	return true;
}

static bool line_is_event(const char *line)
{
	return strncmp(line, "{\"name\":\"", 9) == 0;
}

/* Read one trace file: 0 read, 1 not readable as a trace. */
static int trace_read(const char *path, struct merge_out *m, uint64_t *dropped, uint64_t *malformed)
{
	char line[TRACE_LINE_MAX];
	int long_line = 0, rc = 1;
	FILE *f = fopen(path, "r");

	if (f == NULL) {
		fprintf(stderr, "softdoca_trace: cannot open %s: %s\n", path, strerror(errno));
		return 1;
	}
	if (fgets(line, sizeof(line), f) == NULL || strncmp(line, "{\"traceEvents\":[", 16) != 0) {
		fprintf(stderr, "softdoca_trace: %s is not a softdoca trace (no traceEvents array first)\n", path);
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
			(*malformed)++;
			continue;
		}
		if (!line_is_event(line))
			continue; /* the closing lines */
		if (line_take_task(line) < 0)
			(*malformed)++;
		else if (strstr(line, "\"name\":\"at_target\",") != NULL)
			at_target++;
		if (strstr(line, "\"name\":\"softdoca_trace\"") != NULL && field_num(line, "dropped_events", &d))
			*dropped += (uint64_t)d;
		if (m->f != NULL && !merge_line(m, line))
			(*malformed)++;
	}
	if (ferror(f)) {
		fprintf(stderr, "softdoca_trace: reading %s failed\n", path);
		goto out;
	}
	rc = 0;
out:
	fclose(f);
	return rc;
}

static void report(unsigned int files, uint64_t dropped, uint64_t malformed)
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
	printf("at target: %" PRIu64 " operations\n", at_target);
	printf("dropped events: %" PRIu64 "\n", dropped);
	if (files > 1)
		printf("files: %u\n", files);
	if (malformed != 0)
		printf("unreadable lines: %" PRIu64 "\n", malformed);
}

/* ---- the plot ------------------------------------------------------------ */

/* A path gnuplot's single-quoted strings carry as it is. */
static bool path_plain(const char *p)
{
	return strpbrk(p, "'\n\r") == NULL && strlen(p) < TRACE_PATH_MAX - 64;
}

static bool gnuplot_found(void)
{
	const char *path = getenv("PATH");
	char dir[TRACE_PATH_MAX];

	if (path == NULL)
		return false;
	while (*path != '\0') {
		size_t n = strcspn(path, ":");

		if (n > 0 && n + sizeof("/gnuplot") < sizeof(dir)) {
			memcpy(dir, path, n);
			strcpy(dir + n, "/gnuplot");
			if (access(dir, X_OK) == 0)
				return true;
		}
		path += n;
		if (*path == ':')
			path++;
	}
	return false;
}

/* A task type's name as a gnuplot title: letters, digits, " _.-" only. */
static void plot_title(char *out, size_t size, const char *name)
{
	size_t i;

	for (i = 0; i + 1 < size && name[i] != '\0'; i++) {
		char c = name[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			  strchr(" _.-", c) != NULL;

		out[i] = ok ? c : '_';
	}
	out[i] = '\0';
}

/* Latency histogram: PLOT_BINS bins spaced evenly on a log scale, a
 * column of counts per type. Types' latencies are sorted (report). */
static int plot_write_hist(const char *path)
{
	double lo = INFINITY, hi = 0, step;
	FILE *f = fopen(path, "w");

	if (f == NULL)
		return 0;
	for (unsigned int i = 0; i < num_types; i++) {
		const struct type_stats *t = &types[i];

		for (size_t k = 0; k < t->count; k++) {
			if (t->lat_us[k] > 0) {
				lo = fmin(lo, t->lat_us[k]);
				break;
			}
		}
		hi = fmax(hi, t->lat_us[t->count - 1]);
	}
	if (!isfinite(lo) || hi <= 0)
		lo = hi = 1;
	if (hi <= lo * 1.01) {
		lo /= 2;
		hi *= 2;
	}
	step = (log10(hi) - log10(lo)) / PLOT_BINS;
	for (int b = 0; b < PLOT_BINS; b++) {
		double b_lo = pow(10, log10(lo) + b * step), b_hi = pow(10, log10(lo) + (b + 1) * step);

		fprintf(f, "%.6g", sqrt(b_lo * b_hi));
		for (unsigned int i = 0; i < num_types; i++) {
			const struct type_stats *t = &types[i];
			size_t n = 0;

			for (size_t k = 0; k < t->count; k++)
				if ((t->lat_us[k] >= b_lo || (b == 0 && t->lat_us[k] < b_lo)) &&
				    (t->lat_us[k] < b_hi || b == PLOT_BINS - 1))
					n++;
			fprintf(f, " %zu", n);
		}
		fputc('\n', f);
	}
	return fclose(f) == 0;
}

static int cmp_edge(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	if (x->t_us != y->t_us)
		return (x->t_us > y->t_us) - (x->t_us < y->t_us);
	return x->step - y->step; /* an end before a start at the same instant */
}

/* Tasks in flight: the most at once in each of PLOT_DEPTH_BUCKETS
 * intervals from the first submit to the last completion, in ms. */
static int plot_write_depth(const char *path)
{
	struct edge *e = malloc(2 * (num_spans ? num_spans : 1) * sizeof(*e));
	FILE *f = e != NULL ? fopen(path, "w") : NULL;
	double t0, t1, width;
	long depth = 0;
	size_t k = 0;

	if (f == NULL) {
		free(e);
		return 0;
	}
	for (size_t i = 0; i < num_spans; i++) {
		e[2 * i] = (struct edge){spans[i].start_us, 1};
		e[2 * i + 1] = (struct edge){spans[i].end_us, -1};
	}
	qsort(e, 2 * num_spans, sizeof(*e), cmp_edge);
	t0 = num_spans ? e[0].t_us : 0;
	t1 = num_spans ? e[2 * num_spans - 1].t_us : 1;
	width = t1 > t0 ? (t1 - t0) / PLOT_DEPTH_BUCKETS : 1;
	for (int b = 0; b < PLOT_DEPTH_BUCKETS; b++) {
		double end = t0 + (b + 1) * width;
		long most = depth;

		while (k < 2 * num_spans && (e[k].t_us < end || b == PLOT_DEPTH_BUCKETS - 1)) {
			depth += e[k++].step;
			if (depth > most)
				most = depth;
		}
		fprintf(f, "%.6f %ld\n", (b * width) / 1000.0, most);
	}
	free(e);
	return fclose(f) == 0;
}

static int plot_write_script(const char *path, const char *dir, const char *png, unsigned int files)
{
	FILE *f = fopen(path, "w");
	size_t tasks = 0;

	if (f == NULL)
		return 0;
	for (unsigned int i = 0; i < num_types; i++)
		tasks += types[i].count;
	fprintf(f, "set terminal pngcairo size 1000,900 noenhanced\nset output '%s'\n", png);
	fprintf(f, "set multiplot layout 2,1 title 'softdoca timeline: %zu tasks from %u file(s)'\n", tasks, files);
	fputs("set grid\nset logscale x\nset key right top\n", f);
	fputs("set xlabel 'submit to completion [us]'\nset ylabel 'tasks'\nplot ", f);
	for (unsigned int i = 0; i < num_types; i++) {
		char title[TRACE_NAME_MAX];

		plot_title(title, sizeof(title), types[i].name);
		fprintf(f, "%s'%s/hist.dat' using 1:%u with histeps lw 2 title '%s'", i ? ", " : "", dir, i + 2, title);
	}
	if (num_types == 0)
		fprintf(f, "'%s/hist.dat' using 1:(0) with lines title 'no tasks'", dir);
	fputs("\nunset logscale x\nset yrange [0:*]\nset xlabel 'time since the first submit [ms]'\n"
	      "set ylabel 'tasks in flight'\n", f);
	fprintf(f, "plot '%s/depth.dat' using 1:2 with steps lw 2 title 'most in flight at once (%d intervals)'\n",
		dir, PLOT_DEPTH_BUCKETS);
	fputs("unset multiplot\n", f);
	return fclose(f) == 0;
}

static int plot_run(const char *script)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return 0;
	if (pid == 0) {
		execlp("gnuplot", "gnuplot", script, (char *)NULL);
		fprintf(stderr, "softdoca_trace: cannot run gnuplot: %s\n", strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 0;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* Draw png from what was read; 0 on success. */
static int plot(const char *png, unsigned int files)
{
	const char *tmp = getenv("TMPDIR");
	char dir[TRACE_PATH_MAX - 32], hist[TRACE_PATH_MAX], depth[TRACE_PATH_MAX], script[TRACE_PATH_MAX];
	int ok;

	if (tmp == NULL || tmp[0] == '\0' || !path_plain(tmp))
		tmp = "/tmp";
	if ((size_t)snprintf(dir, sizeof(dir), "%s/softdoca_trace.XXXXXX", tmp) >= sizeof(dir) || mkdtemp(dir) == NULL) {
		fprintf(stderr, "softdoca_trace: cannot make a scratch directory in %s: %s\n", tmp, strerror(errno));
		return 1;
	}
	snprintf(hist, sizeof(hist), "%s/hist.dat", dir);
	snprintf(depth, sizeof(depth), "%s/depth.dat", dir);
	snprintf(script, sizeof(script), "%s/plot.gp", dir);
	ok = plot_write_hist(hist) && plot_write_depth(depth) && plot_write_script(script, dir, png, files);
	if (!ok)
		fprintf(stderr, "softdoca_trace: cannot write the plot's data in %s\n", dir);
	else if (!(ok = plot_run(script)))
		fprintf(stderr, "softdoca_trace: gnuplot failed to draw %s\n", png);
	unlink(hist);
	unlink(depth);
	unlink(script);
	rmdir(dir);
	if (ok)
		printf("plot: %s\n", png);
	return ok ? 0 : 1;
}

/* ---- main ---------------------------------------------------------------- */

static int usage(void)
{
	fprintf(stderr, "usage: softdoca_trace [--png OUT.png] [--merge OUT.json] <trace.json>...\n"
			"  summarises SOFTDOCA_TRACE files: per task type the count, errors by status\n"
			"  and submit-to-completion latency (p50, p99, max) in microseconds, and the\n"
			"  operations that arrived at a target; several files (the peers of one host)\n"
			"  are taken together. --merge writes them as one trace (Perfetto, chrome://tracing);\n"
			"  --png draws a latency histogram and the tasks in flight over time (gnuplot)\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *png = NULL, *merge = NULL;
	struct merge_out m = {0};
	uint64_t malformed = 0, dropped = 0;
	unsigned int files = 0;
	int i, rc = 1;

	for (i = 1; i < argc && argv[i][0] == '-'; i += 2) {
		if (i + 1 >= argc || argv[i + 1][0] == '\0')
			return usage();
		if (strcmp(argv[i], "--png") == 0)
			png = argv[i + 1];
		else if (strcmp(argv[i], "--merge") == 0)
			merge = argv[i + 1];
		else
			return usage();
	}
	if (i >= argc)
		return usage();
	if (png != NULL && !gnuplot_found()) {
		fprintf(stderr, "softdoca_trace: --png needs gnuplot, which is not installed (Debian: gnuplot-nox)\n");
		return 2;
	}
	if (png != NULL && !path_plain(png)) {
		fprintf(stderr, "softdoca_trace: --png %s: a path with a quote or a line break is refused\n", png);
		return 2;
	}
	if (merge != NULL) {
		m.f = fopen(merge, "w");
		if (m.f == NULL) {
			fprintf(stderr, "softdoca_trace: cannot write %s: %s\n", merge, strerror(errno));
			return 1;
		}
		fputs("{\"traceEvents\":[\n", m.f);
	}
	for (; i < argc; i++, files++)
		if (trace_read(argv[i], &m, &dropped, &malformed) != 0)
			goto out;
	if (m.f != NULL) {
		fputs("\n],\"displayTimeUnit\":\"ns\"}\n", m.f);
		if (fclose(m.f) != 0) {
			m.f = NULL;
			fprintf(stderr, "softdoca_trace: writing %s failed\n", merge);
			goto out;
		}
		m.f = NULL;
		printf("merged: %s (%" PRIu64 " events from %u files)\n", merge, m.lines, files);
	}
	report(files, dropped, malformed);
	rc = png != NULL ? plot(png, files) : 0;
out:
	if (m.f != NULL)
		fclose(m.f);
	for (unsigned int t = 0; t < num_types; t++)
		free(types[t].lat_us);
	free(spans);
	return rc;
}
