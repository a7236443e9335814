/*
 * softdoca — the small strict JSON reader behind `-j/--json`.
 *
 * Parses a whole document into a tree. Strict RFC 8259 syntax: no
 * comments, no trailing commas, no duplicate keys in an object, no raw
 * control characters in strings, one value per document. Every string is
 * NUL-terminated for the caller; a "\u0000" escape is refused so strings
 * stay C strings. Numbers keep their source text, so the caller decides
 * whether it wanted an int or a double. Not installed.
 */
#ifndef SOFTDOCA_ARGP_JSON_H_
#define SOFTDOCA_ARGP_JSON_H_

#include <stdbool.h>
#include <stddef.h>

#include <doca_error.h>

enum argp_json_type {
	ARGP_JSON_NULL,
	ARGP_JSON_BOOL,
	ARGP_JSON_NUMBER,
	ARGP_JSON_STRING,
	ARGP_JSON_ARRAY,
	ARGP_JSON_OBJECT,
};

struct argp_json_member;

struct argp_json_value {
	enum argp_json_type type;
	unsigned int line; /* where the value starts, 1-based, for messages */
	unsigned int col;
	union {
		bool boolean;
		char *text; /* NUMBER: the number as written; STRING: the decoded text */
		struct {
			struct argp_json_value *items;
			size_t count;
		} array;
		struct {
			struct argp_json_member *members; /* in document order */
			size_t count;
		} object;
	} u;
};

struct argp_json_member {
	char *key;
	unsigned int key_line; /* where the key starts, for messages */
	unsigned int key_col;
	struct argp_json_value value;
};

/* Size of the error text buffer the parse functions fill. */
#define ARGP_JSON_ERR_SIZE 256

/*
 * Parse len bytes of text. On success *root_out is the document, freed with
 * argp_json_free. On failure err (ARGP_JSON_ERR_SIZE bytes) says what and
 * where ("line 3, column 7: expected ':' after an object key"). Errors:
 * INVALID_VALUE (malformed), NO_MEMORY.
 */
doca_error_t argp_json_parse(const char *text, size_t len, struct argp_json_value **root_out, char *err);

/*
 * Read and parse the file at path. Errors as argp_json_parse, plus
 * IO_FAILED (cannot open or read) and TOO_BIG (larger than the limit).
 */
doca_error_t argp_json_parse_file(const char *path, struct argp_json_value **root_out, char *err);

/* Free a document from argp_json_parse; NULL is allowed. */
void argp_json_free(struct argp_json_value *root);

/* Name of a type, for messages ("string", "number", ...). */
const char *argp_json_type_name(enum argp_json_type type);

#endif /* SOFTDOCA_ARGP_JSON_H_ */
