/*
 * softdoca — a small strict JSON reader for argp's configuration files.
 *
 * Recursive descent over an in-memory buffer; the caller owns the text.
 * Configuration files are small and typed by hand, so the parser favours
 * exact error positions over speed. Nesting is bounded so a hostile file
 * cannot exhaust the stack.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

/* Deeper documents are refused: argp needs two levels, a stack frame per
 * level must stay cheap. */
#define JSON_MAX_DEPTH 64
/* Configuration files are a few hundred bytes; anything huge is a mistake. */
#define JSON_MAX_FILE_SIZE (4u << 20)

struct json_parser {
	const char *text;
	size_t len;
	size_t pos;
	unsigned int line;
	unsigned int col;
	char *err;
	doca_error_t status; /* first error, reported once */
};

static void json_value_clear(struct argp_json_value *v);

static doca_error_t json_fail(struct json_parser *p, doca_error_t status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static doca_error_t json_fail(struct json_parser *p, doca_error_t status, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (p->status != DOCA_SUCCESS)
		return p->status;
	n = snprintf(p->err, ARGP_JSON_ERR_SIZE, "line %u, column %u: ", p->line, p->col);
	if (n < 0 || n >= ARGP_JSON_ERR_SIZE)
		n = 0;
	va_start(ap, fmt);
	vsnprintf(p->err + n, ARGP_JSON_ERR_SIZE - (size_t)n, fmt, ap);
	va_end(ap);
	p->status = status;
	return status;
}

static doca_error_t json_no_memory(struct json_parser *p)
{
	return json_fail(p, DOCA_ERROR_NO_MEMORY, "out of memory");
}

static int json_peek(const struct json_parser *p)
{
	return p->pos < p->len ? (unsigned char)p->text[p->pos] : -1;
}

/* Consume one byte, keeping line and column (columns count bytes). */
static void json_advance(struct json_parser *p)
{
	if (p->pos >= p->len)
		return;
	if (p->text[p->pos] == '\n') {
		p->line++;
		p->col = 1;
	} else {
		p->col++;
	}
	p->pos++;
}

static void json_skip_space(struct json_parser *p)
{
	int c = json_peek(p);

	while (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
		json_advance(p);
		c = json_peek(p);
	}
}

/* Describe the byte at the cursor for an error message. */
static const char *json_describe_here(const struct json_parser *p, char *buf, size_t size)
{
	int c = json_peek(p);

	if (c < 0)
		snprintf(buf, size, "end of file");
	else if (c >= 0x20 && c < 0x7f)
		snprintf(buf, size, "'%c'", c);
	else
		snprintf(buf, size, "byte 0x%02x", (unsigned int)c);
	return buf;
}

static doca_error_t json_unexpected(struct json_parser *p, const char *expected)
{
	char here[32];

	return json_fail(p, DOCA_ERROR_INVALID_VALUE, "expected %s, found %s", expected,
			 json_describe_here(p, here, sizeof(here)));
}

static doca_error_t json_parse_value(struct json_parser *p, struct argp_json_value *v, unsigned int depth);

/* Match a keyword such as "true" at the cursor. */
static doca_error_t json_parse_literal(struct json_parser *p, const char *word)
{
	size_t n = strlen(word);

	if (p->len - p->pos < n || memcmp(p->text + p->pos, word, n) != 0)
		return json_unexpected(p, "a value");
	while (n-- > 0)
		json_advance(p);
	return DOCA_SUCCESS;
}

static int json_is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static void json_skip_digits(struct json_parser *p)
{
	while (json_is_digit(json_peek(p)))
		json_advance(p);
}

/* -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, kept as text. */
static doca_error_t json_parse_number(struct json_parser *p, struct argp_json_value *v)
{
	size_t start = p->pos;
	size_t n;

	if (json_peek(p) == '-')
		json_advance(p);
	if (json_peek(p) == '0') {
		json_advance(p);
		if (json_is_digit(json_peek(p)))
			return json_fail(p, DOCA_ERROR_INVALID_VALUE, "numbers may not have leading zeros");
	} else if (json_is_digit(json_peek(p))) {
		json_skip_digits(p);
	} else {
		return json_unexpected(p, "a digit");
	}
	if (json_peek(p) == '.') {
		json_advance(p);
		if (!json_is_digit(json_peek(p)))
			return json_unexpected(p, "a digit after '.'");
		json_skip_digits(p);
	}
	if (json_peek(p) == 'e' || json_peek(p) == 'E') {
		json_advance(p);
		if (json_peek(p) == '+' || json_peek(p) == '-')
			json_advance(p);
		if (!json_is_digit(json_peek(p)))
			return json_unexpected(p, "a digit in the exponent");
		json_skip_digits(p);
	}
	n = p->pos - start;
	v->u.text = malloc(n + 1);
	if (v->u.text == NULL)
		return json_no_memory(p);
	memcpy(v->u.text, p->text + start, n);
	v->u.text[n] = '\0';
	v->type = ARGP_JSON_NUMBER;
	return DOCA_SUCCESS;
}

/* A growing byte buffer for decoded strings. */
struct json_buf {
	char *data;
	size_t len;
	size_t cap;
};

static int json_buf_put(struct json_buf *b, const char *bytes, size_t n)
{
	char *grown;
	size_t cap;

	if (b->len + n + 1 > b->cap) {
		cap = b->cap != 0 ? b->cap : 32;
		while (cap < b->len + n + 1)
			cap *= 2;
		grown = realloc(b->data, cap);
		if (grown == NULL)
			return -1;
		b->data = grown;
		b->cap = cap;
	}
	memcpy(b->data + b->len, bytes, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

static int json_hex_value(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Read the four hex digits after "\u". */
static doca_error_t json_parse_hex4(struct json_parser *p, uint32_t *unit)
{
	uint32_t value = 0;
	int digit;
	int i;

	for (i = 0; i < 4; i++) {
		digit = json_hex_value(json_peek(p));
		if (digit < 0)
			return json_unexpected(p, "4 hex digits after \\u");
		value = value << 4 | (uint32_t)digit;
		json_advance(p);
	}
	*unit = value;
	return DOCA_SUCCESS;
}

/* Write a code point as UTF-8. */
static size_t json_utf8_encode(uint32_t cp, char out[4])
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* "\uXXXX", possibly a surrogate pair "\uD83D\uDE00"; cursor after the 'u'. */
static doca_error_t json_parse_unicode_escape(struct json_parser *p, struct json_buf *b)
{
	uint32_t cp;
	uint32_t low;
	char utf8[4];
	size_t n;

	if (json_parse_hex4(p, &cp) != DOCA_SUCCESS)
		return p->status;
	if (cp >= 0xdc00 && cp <= 0xdfff)
		return json_fail(p, DOCA_ERROR_INVALID_VALUE, "lone low surrogate \\u%04X", (unsigned int)cp);
	if (cp >= 0xd800 && cp <= 0xdbff) {
		if (json_peek(p) != '\\')
			return json_unexpected(p, "a low surrogate \\uDC00-\\uDFFF");
		json_advance(p);
		if (json_peek(p) != 'u')
			return json_unexpected(p, "a low surrogate \\uDC00-\\uDFFF");
		json_advance(p);
		if (json_parse_hex4(p, &low) != DOCA_SUCCESS)
			return p->status;
		if (low < 0xdc00 || low > 0xdfff)
			return json_fail(p, DOCA_ERROR_INVALID_VALUE, "high surrogate not followed by a low one");
		cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
	}
	if (cp == 0)
		return json_fail(p, DOCA_ERROR_INVALID_VALUE, "\\u0000 is not allowed in a string");
	n = json_utf8_encode(cp, utf8);
	if (json_buf_put(b, utf8, n) != 0)
		return json_no_memory(p);
	return DOCA_SUCCESS;
}

/* One escape; cursor on the byte after the backslash. */
static doca_error_t json_parse_escape(struct json_parser *p, struct json_buf *b)
{
	static const char from[] = "\"\\/bfnrt";
	static const char to[] = "\"\\/\b\f\n\r\t";
	const char *hit;
	int c = json_peek(p);

	if (c == 'u') {
		json_advance(p);
		return json_parse_unicode_escape(p, b);
	}
	hit = c > 0 ? strchr(from, c) : NULL;
	if (hit == NULL)
		return json_unexpected(p, "an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)");
	json_advance(p);
	if (json_buf_put(b, &to[hit - from], 1) != 0)
		return json_no_memory(p);
	return DOCA_SUCCESS;
}

/* Length of the UTF-8 sequence starting with lead byte c and the smallest
 * code point it may encode (to refuse overlong forms); 0 if c cannot lead. */
static size_t json_utf8_lead(int c, uint32_t *cp, uint32_t *min)
{
	if (c >= 0xc2 && c <= 0xdf) {
		*cp = (uint32_t)c & 0x1f;
		*min = 0x80;
		return 2;
	}
	if (c >= 0xe0 && c <= 0xef) {
		*cp = (uint32_t)c & 0x0f;
		*min = 0x800;
		return 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		*cp = (uint32_t)c & 0x07;
		*min = 0x10000;
		return 4;
	}
	return 0;
}

/* Copy one multi-byte UTF-8 character, refusing malformed ones: the RFC
 * requires UTF-8 and the text ends up in logs and device names. */
static doca_error_t json_copy_utf8(struct json_parser *p, struct json_buf *b)
{
	const char *start = p->text + p->pos;
	uint32_t cp;
	uint32_t min;
	size_t n = json_utf8_lead(json_peek(p), &cp, &min);
	size_t i;
	int c;

	if (n == 0 || p->len - p->pos < n)
		return json_fail(p, DOCA_ERROR_INVALID_VALUE, "invalid UTF-8 in a string");
	for (i = 1; i < n; i++) {
		c = (unsigned char)start[i];
		if ((c & 0xc0) != 0x80)
			return json_fail(p, DOCA_ERROR_INVALID_VALUE, "invalid UTF-8 in a string");
		cp = cp << 6 | ((uint32_t)c & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return json_fail(p, DOCA_ERROR_INVALID_VALUE, "invalid UTF-8 in a string");
	if (json_buf_put(b, start, n) != 0)
		return json_no_memory(p);
	for (i = 0; i < n; i++)
		json_advance(p);
	return DOCA_SUCCESS;
}

/* A string; cursor on the opening quote. The result is NUL-terminated. */
static doca_error_t json_parse_string(struct json_parser *p, char **out)
{
	struct json_buf b = {0};
	char byte;
	int c;

	json_advance(p);
	if (json_buf_put(&b, "", 0) != 0)
		return json_no_memory(p);
	for (;;) {
		c = json_peek(p);
		if (c < 0) {
			json_fail(p, DOCA_ERROR_INVALID_VALUE, "string not closed before end of file");
			goto fail;
		}
		if (c == '"')
			break;
		if (c < 0x20) {
			json_fail(p, DOCA_ERROR_INVALID_VALUE, "control byte 0x%02x inside a string; escape it",
				  (unsigned int)c);
			goto fail;
		}
		if (c == '\\') {
			json_advance(p);
			if (json_parse_escape(p, &b) != DOCA_SUCCESS)
				goto fail;
			continue;
		}
		if (c >= 0x80) {
			if (json_copy_utf8(p, &b) != DOCA_SUCCESS)
				goto fail;
			continue;
		}
		byte = (char)c;
		if (json_buf_put(&b, &byte, 1) != 0) {
			json_no_memory(p);
			goto fail;
		}
		json_advance(p);
	}
	json_advance(p);
	*out = b.data;
	return DOCA_SUCCESS;
fail:
	free(b.data);
	return p->status;
}

/* Make room for element number count (zeroed) in an array of count
 * elements of size elem. The room doubles whenever count reaches a power
 * of two, so the capacity is implied by the count and a file of millions
 * of items costs O(n) copying, not O(n^2). */
static void *json_grow(void *items, size_t count, size_t elem)
{
	size_t cap = count == 0 ? 1 : count * 2;
	char *grown = items;

	if (count == 0 || (count & (count - 1)) == 0) {
		if (cap > SIZE_MAX / elem)
			return NULL;
		grown = realloc(items, cap * elem);
		if (grown == NULL)
			return NULL;
	}
	memset(grown + count * elem, 0, elem);
	return grown;
}

static doca_error_t json_parse_array(struct json_parser *p, struct argp_json_value *v, unsigned int depth)
{
	struct argp_json_value *items;

	v->type = ARGP_JSON_ARRAY;
	json_advance(p);
	json_skip_space(p);
	if (json_peek(p) == ']') {
		json_advance(p);
		return DOCA_SUCCESS;
	}
	for (;;) {
		items = json_grow(v->u.array.items, v->u.array.count, sizeof(*items));
		if (items == NULL)
			return json_no_memory(p);
		v->u.array.items = items;
		/* Counted before parsing so a half-built item is freed too. */
		v->u.array.count++;
		if (json_parse_value(p, &items[v->u.array.count - 1], depth + 1) != DOCA_SUCCESS)
			return p->status;
		json_skip_space(p);
		if (json_peek(p) == ']') {
			json_advance(p);
			return DOCA_SUCCESS;
		}
		if (json_peek(p) != ',')
			return json_unexpected(p, "',' or ']'");
		json_advance(p);
	}
}

struct json_key_ref {
	const char *key;
	size_t index; /* in document order */
};

static int json_key_ref_cmp(const void *a, const void *b)
{
	const struct json_key_ref *x = a;
	const struct json_key_ref *y = b;
	int c = strcmp(x->key, y->key);

	if (c != 0)
		return c;
	return (x->index > y->index) - (x->index < y->index);
}

/* A key twice in one object is refused where it comes the second time.
 * Found by sorting the keys, not by comparing each with those before it:
 * a 4 MiB file holds 10^5 keys or more, and n^2/2 comparisons of them
 * took minutes (a hang, for a hostile file). */
static doca_error_t json_object_check_keys(struct json_parser *p, const struct argp_json_value *obj)
{
	const struct argp_json_member *members = obj->u.object.members;
	size_t n = obj->u.object.count;
	size_t first_dup = n;
	struct json_key_ref *refs;
	size_t i;

	if (n < 2)
		return DOCA_SUCCESS;
	refs = malloc(n * sizeof(*refs));
	if (refs == NULL)
		return json_no_memory(p);
	for (i = 0; i < n; i++)
		refs[i] = (struct json_key_ref){.key = members[i].key, .index = i};
	qsort(refs, n, sizeof(*refs), json_key_ref_cmp);
	/* Of all second (third...) occurrences, the first in the document. */
	for (i = 1; i < n; i++)
		if (refs[i].index < first_dup && strcmp(refs[i].key, refs[i - 1].key) == 0)
			first_dup = refs[i].index;
	free(refs);
	if (first_dup == n)
		return DOCA_SUCCESS;
	p->line = members[first_dup].key_line;
	p->col = members[first_dup].key_col;
	return json_fail(p, DOCA_ERROR_INVALID_VALUE, "key \"%s\" appears twice in the object",
			 members[first_dup].key);
}

/* One "key": value pair; the member slot is already counted in its object. */
static doca_error_t json_parse_member(struct json_parser *p, struct argp_json_member *m, unsigned int depth)
{
	json_skip_space(p);
	if (json_peek(p) != '"')
		return json_unexpected(p, "a string key");
	m->key_line = p->line;
	m->key_col = p->col;
	if (json_parse_string(p, &m->key) != DOCA_SUCCESS)
		return p->status;
	json_skip_space(p);
	if (json_peek(p) != ':')
		return json_unexpected(p, "':' after an object key");
	json_advance(p);
	return json_parse_value(p, &m->value, depth + 1);
}

static doca_error_t json_parse_object(struct json_parser *p, struct argp_json_value *v, unsigned int depth)
{
	struct argp_json_member *members;

	v->type = ARGP_JSON_OBJECT;
	json_advance(p);
	json_skip_space(p);
	if (json_peek(p) == '}') {
		json_advance(p);
		return DOCA_SUCCESS;
	}
	for (;;) {
		members = json_grow(v->u.object.members, v->u.object.count, sizeof(*members));
		if (members == NULL)
			return json_no_memory(p);
		v->u.object.members = members;
		v->u.object.count++;
		if (json_parse_member(p, &members[v->u.object.count - 1], depth) != DOCA_SUCCESS)
			return p->status;
		json_skip_space(p);
		if (json_peek(p) == '}') {
			json_advance(p);
			return json_object_check_keys(p, v);
		}
		if (json_peek(p) != ',')
			return json_unexpected(p, "',' or '}'");
		json_advance(p);
	}
}

static doca_error_t json_parse_value(struct json_parser *p, struct argp_json_value *v, unsigned int depth)
{
	int c;

	if (depth > JSON_MAX_DEPTH)
		return json_fail(p, DOCA_ERROR_INVALID_VALUE, "nested deeper than %d levels", JSON_MAX_DEPTH);
	json_skip_space(p);
	v->line = p->line;
	v->col = p->col;
	c = json_peek(p);
	switch (c) {
	case '{':
		return json_parse_object(p, v, depth);
	case '[':
		return json_parse_array(p, v, depth);
	case '"':
		v->type = ARGP_JSON_STRING;
		return json_parse_string(p, &v->u.text);
	case 't':
		v->type = ARGP_JSON_BOOL;
		v->u.boolean = true;
		return json_parse_literal(p, "true");
	case 'f':
		v->type = ARGP_JSON_BOOL;
		v->u.boolean = false;
		return json_parse_literal(p, "false");
	case 'n':
		v->type = ARGP_JSON_NULL;
		return json_parse_literal(p, "null");
	default:
		if (c == '-' || json_is_digit(c))
			return json_parse_number(p, v);
		return json_unexpected(p, "a value");
	}
}

doca_error_t argp_json_parse(const char *text, size_t len, struct argp_json_value **root_out, char *err)
{
	struct json_parser p = {.text = text, .len = len, .line = 1, .col = 1, .err = err};
	struct argp_json_value *root;

	err[0] = '\0';
	root = calloc(1, sizeof(*root));
	if (root == NULL) {
		snprintf(err, ARGP_JSON_ERR_SIZE, "out of memory");
		return DOCA_ERROR_NO_MEMORY;
	}
	/* A UTF-8 byte order mark is not JSON, but editors write it. */
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		p.pos = 3;
	if (json_parse_value(&p, root, 0) != DOCA_SUCCESS)
		goto fail;
	json_skip_space(&p);
	if (p.pos != p.len) {
		json_unexpected(&p, "end of file after the top-level value");
		goto fail;
	}
	*root_out = root;
	return DOCA_SUCCESS;
fail:
	argp_json_free(root);
	return p.status;
}

/* Read a whole regular file into memory. */
static doca_error_t json_read_file(const char *path, char **data_out, size_t *len_out, char *err)
{
	doca_error_t status = DOCA_SUCCESS;
	char *data = NULL;
	size_t len = 0;
	size_t n;
	FILE *f;

	f = fopen(path, "rb");
	if (f == NULL) {
		snprintf(err, ARGP_JSON_ERR_SIZE, "cannot open: %s", strerror(errno));
		return DOCA_ERROR_IO_FAILED;
	}
	data = malloc(JSON_MAX_FILE_SIZE + 1);
	if (data == NULL) {
		snprintf(err, ARGP_JSON_ERR_SIZE, "out of memory");
		status = DOCA_ERROR_NO_MEMORY;
		goto close_file;
	}
	/* Read one byte past the limit to tell "exactly at" from "over". */
	n = fread(data, 1, JSON_MAX_FILE_SIZE + 1, f);
	if (ferror(f)) {
		snprintf(err, ARGP_JSON_ERR_SIZE, "cannot read: %s", strerror(errno));
		status = DOCA_ERROR_IO_FAILED;
		goto free_data;
	}
	if (n > JSON_MAX_FILE_SIZE) {
		snprintf(err, ARGP_JSON_ERR_SIZE, "larger than %u bytes", JSON_MAX_FILE_SIZE);
		status = DOCA_ERROR_TOO_BIG;
		goto free_data;
	}
	len = n;
	*data_out = data;
	*len_out = len;
	goto close_file;
free_data:
	free(data);
close_file:
	fclose(f);
	return status;
}

doca_error_t argp_json_parse_file(const char *path, struct argp_json_value **root_out, char *err)
{
	doca_error_t status;
	char *data;
	size_t len;

	err[0] = '\0';
	status = json_read_file(path, &data, &len, err);
	if (status != DOCA_SUCCESS)
		return status;
	status = argp_json_parse(data, len, root_out, err);
	free(data);
	return status;
}

static void json_value_clear(struct argp_json_value *v)
{
	size_t i;

	switch (v->type) {
	case ARGP_JSON_NUMBER:
	case ARGP_JSON_STRING:
		free(v->u.text);
		break;
	case ARGP_JSON_ARRAY:
		for (i = 0; i < v->u.array.count; i++)
			json_value_clear(&v->u.array.items[i]);
		free(v->u.array.items);
		break;
	case ARGP_JSON_OBJECT:
		for (i = 0; i < v->u.object.count; i++) {
			free(v->u.object.members[i].key);
			json_value_clear(&v->u.object.members[i].value);
		}
		free(v->u.object.members);
		break;
	default:
		break;
	}
}

void argp_json_free(struct argp_json_value *root)
{
	if (root == NULL)
		return;
	json_value_clear(root);
	free(root);
}

const char *argp_json_type_name(enum argp_json_type type)
{
	switch (type) {
	case ARGP_JSON_NULL:
		return "null";
	case ARGP_JSON_BOOL:
		return "boolean";
	case ARGP_JSON_NUMBER:
		return "number";
	case ARGP_JSON_STRING:
		return "string";
	case ARGP_JSON_ARRAY:
		return "array";
	case ARGP_JSON_OBJECT:
		return "object";
	}
	return "unknown";
}
