/*
 * tracetool/table.h - one writer for result tables.
 *
 * A table is a list of named, typed columns and rows of cells (null, integer,
 * float or text). tt_table_write() prints it as aligned text, CSV (RFC 4180
 * quoting, "\n" line ends), JSON (an array of objects) or Markdown, showing
 * the columns a caller picks in the order it picks them, so one table can
 * feed layouts that order their columns differently.
 */
#ifndef TRACETOOL_TABLE_H
#define TRACETOOL_TABLE_H

#include <stddef.h>
#include <stdio.h>

#include "tracetool/common.h"

TT_BEGIN_DECL

enum { TT_COL_TEXT = 0, TT_COL_INT, TT_COL_NS, TT_COL_BYTES, TT_COL_PCT, TT_COL_FLOAT };
enum { TT_ALIGN_AUTO = 0, TT_ALIGN_LEFT, TT_ALIGN_RIGHT, TT_ALIGN_CENTER };
/* tt_output_format's first four (tracetool/common.h) */
#define TT_TABLE_TEXT TT_FORMAT_TABLE
#define TT_TABLE_CSV TT_FORMAT_CSV
#define TT_TABLE_JSON TT_FORMAT_JSON
#define TT_TABLE_MARKDOWN TT_FORMAT_MARKDOWN

/* TT_COL_QUOTE: CSV always quotes this column's text cells (otherwise only
 * cells holding a comma, a quote, CR or LF are quoted). */
enum { TT_COL_QUOTE = 1u };

/* tt_table_write_options.flags: layout variants. */
enum {
    TT_TABLE_RULE_ABOVE = 1u << 0,  /* text: a line of dashes above the titles too */
    TT_TABLE_RULE_BELOW = 1u << 1,  /* text: a line of dashes after the rows */
    TT_TABLE_NO_RULE = 1u << 2,     /* text: no line of dashes under the titles */
    TT_TABLE_PAD_LAST = 1u << 3,    /* text: the last column is padded and followed by
                                       sep like the others (rules included) */
    TT_TABLE_BYTE_WIDTH = 1u << 4,  /* text: widths count bytes, not UTF-8 characters */
    TT_TABLE_JSON_INLINE = 1u << 5, /* JSON: "[{...}, {...}]" on one line (no indent) */
    TT_TABLE_JSON_TIGHT = 1u << 6,  /* JSON: "]" right after the last object, not on a
                                       line of its own */
    TT_TABLE_JSON_SKIP_NULL = 1u << 7, /* JSON: leave out the keys of null cells */
};

typedef struct tt_table_col {
    const char *title;  /* header in text and Markdown output */
    const char *key;    /* CSV header and JSON key; NULL = title */
    int type;           /* TT_COL_*: text left-aligned, the others numbers */
    int align;          /* TT_ALIGN_* of cells in text output; AUTO: by type */
    int header_align;   /* of the title in text output; AUTO = align */
    int width;          /* text: column width; 0 = widest of title and cells */
    int prec;           /* digits after the point of float cells in CSV/JSON */
    int text_prec;      /* the same in text/Markdown */
    double text_scale;  /* text/Markdown show value / text_scale (0: as is);
                           an integer cell so scaled prints with text_prec */
    unsigned flags;     /* TT_COL_QUOTE */
} tt_table_col;

typedef struct tt_table tt_table;

/* A table over `cols` (not copied: it must outlive the table). NULL when out
 * of memory. */
TT_EXTERN(tt_table *) tt_table_new(const tt_table_col *cols, size_t ncols);
/* NULL is a no-op. */
TT_EXTERN(void) tt_table_free(tt_table *t);
/* Append a row of null cells; the setters fill the last row. 0 or TT_ENOMEM. */
TT_EXTERN(int) tt_table_add_row(tt_table *t);
TT_EXTERN(void) tt_table_set_int(tt_table *t, size_t col, int64_t v);
TT_EXTERN(void) tt_table_set_float(tt_table *t, size_t col, double v);
/* Copies s (NULL: a null cell). 0 or TT_ENOMEM. */
TT_EXTERN(int) tt_table_set_text(tt_table *t, size_t col, const char *s);
/* A cell holding a JSON value written as it is in JSON output (the caller
 * makes it valid JSON: a nested array, an object...); the other formats
 * treat it as text. Copies json (NULL: a null cell). 0 or TT_ENOMEM. */
TT_EXTERN(int) tt_table_set_json(tt_table *t, size_t col, const char *json);
TT_EXTERN(size_t) tt_table_nrows(const tt_table *t);

typedef struct tt_table_write_options {
    unsigned int version;
    tt_output_format format; /* TT_FORMAT_TABLE, _CSV, _JSON or _MARKDOWN */
    const size_t *cols;  /* the columns to write, in this order; NULL = all */
    size_t ncols;
    int no_header;       /* text/CSV/Markdown: rows only */
    const char *indent;  /* text: before every line; JSON: before every object */
    const char *sep;     /* text: between columns; NULL = two spaces */
    unsigned flags;      /* TT_TABLE_RULE_ABOVE ... */
} tt_table_write_options;
#define TT_TABLE_WRITE_OPTIONS_INIT \
    { .version = 1, .format = TT_FORMAT_TABLE }

/*
 * Write the table. Text: a title line, a line of dashes as wide as each
 * column, then the rows; the last column is not padded when left-aligned
 * (flags change this layout). Cells wider than a fixed width are not cut.
 * CSV: a header of keys, then the rows; numbers as in JSON, null cells and
 * floats that are not finite are empty fields. JSON: "[" then "\n" indent
 * "{...}" per row separated by ",", then "\n]" (no final newline); keys are
 * the column keys, floats that are not finite are null. Markdown: "| title |"
 * header, alignment row, rows, with cells escaped by tt_table_markdown_text().
 * Numbers: integers in decimal; floats with `prec` digits (CSV/JSON) or
 * `text_prec` after `text_scale` (text/Markdown). Returns 0, TT_EINVALID
 * (a column that does not exist) or TT_ENOMEM; write errors are left to the
 * caller (ferror).
 */
TT_EXTERN(int) tt_table_write(const tt_table *t, const tt_table_write_options *opts, FILE *out);

/* Write s for a terminal: control characters (C0, DEL, C1) made visible as
 * \n \r \t, \xNN or \u0085, so a name in a trace can neither move the
 * cursor nor forge output lines. Text and CSV cells are written so too. */
TT_EXTERN(void) tt_table_text_safe(FILE *out, const char *s);
/* Write s as one CSV field: quoted (quotes doubled) when `always` or when it
 * holds a comma, a quote, CR or LF. */
TT_EXTERN(void) tt_table_csv_text(FILE *out, const char *s, int always);
/* Write s for a Markdown table cell or heading: Markdown punctuation
 * (\ ` * _ [ ] < > | &) backslash-escaped, CR LF / CR / LF as <br>, other
 * control characters as their Unicode control pictures (U+2400 + c, U+2421). */
TT_EXTERN(void) tt_table_markdown_text(FILE *out, const char *s);

TT_END_DECL

#endif
