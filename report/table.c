/*
 * report/table.c - the result-table writer (tracetool/table.h): typed
 * columns and rows of cells, written as aligned text, CSV, JSON or Markdown.
 */
#include "common/compat.h"
#include "common/buf.h"
#include "report/table_json.h"
#include "tracetool/table.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { CELL_NULL = 0, CELL_INT, CELL_FLOAT, CELL_TEXT, CELL_JSON }; /* JSON: raw JSON text */

struct cell {
    int kind;
    int64_t i;
    double f;
    char *s;
};

struct tt_table {
    const tt_table_col *cols;
    size_t ncols, nrows, alloc; /* alloc: cells */
    struct cell *cells;         /* row-major, nrows * ncols */
};

tt_table *tt_table_new(const tt_table_col *cols, size_t ncols)
{
    tt_table *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->cols = cols;
    t->ncols = ncols;
    return t;
}

void tt_table_free(tt_table *t)
{
    size_t i;
    if (!t)
        return;
    for (i = 0; i < t->nrows * t->ncols; i++)
        free(t->cells[i].s);
    free(t->cells);
    free(t);
}

int tt_table_add_row(tt_table *t)
{
    size_t n = (t->nrows + 1) * t->ncols;
    if (TT_ALLOC_GROW(t->cells, n, t->alloc) < 0)
        return TT_ENOMEM;
    memset(&t->cells[t->nrows * t->ncols], 0, t->ncols * sizeof(*t->cells));
    t->nrows++;
    return 0;
}

static struct cell *last_cell(tt_table *t, size_t col)
{
    if (!t->nrows || col >= t->ncols)
        return NULL;
    return &t->cells[(t->nrows - 1) * t->ncols + col];
}

void tt_table_set_int(tt_table *t, size_t col, int64_t v)
{
    struct cell *c = last_cell(t, col);
    if (c) {
        c->kind = CELL_INT;
        c->i = v;
    }
}

void tt_table_set_float(tt_table *t, size_t col, double v)
{
    struct cell *c = last_cell(t, col);
    if (c) {
        c->kind = CELL_FLOAT;
        c->f = v;
    }
}

static int set_string(tt_table *t, size_t col, const char *s, int kind)
{
    struct cell *c = last_cell(t, col);
    char *d;
    if (!c)
        return 0;
    if (!s) {
        free(c->s);
        c->s = NULL;
        c->kind = CELL_NULL;
        return 0;
    }
    if (!(d = strdup(s)))
        return TT_ENOMEM;
    free(c->s);
    c->s = d;
    c->kind = kind;
    return 0;
}

int tt_table_set_text(tt_table *t, size_t col, const char *s)
{
    return set_string(t, col, s, CELL_TEXT);
}

int tt_table_set_json(tt_table *t, size_t col, const char *json)
{
    return set_string(t, col, json, CELL_JSON);
}

size_t tt_table_nrows(const tt_table *t)
{
    return t->nrows;
}

/* ---- quoting ---- */

void tt_table_text_safe(FILE *out, const char *s)
{
    tt_buf b = TT_BUF_INIT;
    fputs(tt_visible(&b, s), out);
    tt_buf_release(&b);
}

void tt_table_csv_text(FILE *out, const char *s, int always)
{
    tt_buf b = TT_BUF_INIT;
    s = tt_visible(&b, s); /* no raw control character reaches a terminal */
    if (!always && !s[strcspn(s, ",\"\r\n")]) {
        fputs(s, out);
        tt_buf_release(&b);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
    tt_buf_release(&b);
}

void tt_table_markdown_text(FILE *out, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '\r' || c == '\n') {
            if (c == '\r' && s[1] == '\n')
                s++;
            fputs("<br>", out);
        } else if (c == 0xc2 && (unsigned char)s[1] >= 0x80 && (unsigned char)s[1] <= 0x9f) {
            fprintf(out, "\\u%04x", (unsigned)(unsigned char)s[1]); /* C1: no picture */
            s++;
        } else if (c < 0x20 || c == 0x7f) {
            unsigned cp = c == 0x7f ? 0x2421 : 0x2400 + c; /* control pictures, 3 bytes */
            fputc(0xe0 | (cp >> 12), out);
            fputc(0x80 | ((cp >> 6) & 0x3f), out);
            fputc(0x80 | (cp & 0x3f), out);
        } else {
            if (strchr("\\`*_[]<>|&", c))
                fputc('\\', out);
            fputc(c, out);
        }
    }
}

/* ---- cell text ---- */

static int col_align(const tt_table_col *c)
{
    if (c->align != TT_ALIGN_AUTO)
        return c->align;
    return c->type == TT_COL_TEXT ? TT_ALIGN_LEFT : TT_ALIGN_RIGHT;
}

static const char *col_key(const tt_table_col *c)
{
    return c->key ? c->key : c->title ? c->title : "";
}

/* A number cell as text: human = text/Markdown (text_prec, text_scale). */
static void fmt_num(tt_buf *b, const tt_table_col *col, const struct cell *c, int human)
{
    double scale = human ? col->text_scale : 0;
    int prec = human ? col->text_prec : col->prec;
    if (c->kind == CELL_INT && scale == 0) {
        tt_buf_addf(b, "%" PRId64, c->i);
        return;
    }
    {
        double v = c->kind == CELL_INT ? (double)c->i : c->f;
        if (scale != 0)
            v /= scale;
        if (!isfinite(v) && !human)
            tt_buf_addstr(b, "null");
        else
            tt_buf_addf(b, "%.*f", prec, v);
    }
}

static size_t utf8_width(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

/* the width of s in text output: UTF-8 characters or (TT_TABLE_BYTE_WIDTH) bytes */
static size_t text_width(const char *s, unsigned flags)
{
    return flags & TT_TABLE_BYTE_WIDTH ? strlen(s) : utf8_width(s);
}

static void pad(FILE *out, size_t n)
{
    while (n--)
        fputc(' ', out);
}

/* s aligned in `width`; last: the last column, which left alone is not
 * padded on its right (unless TT_TABLE_PAD_LAST) */
static void put_aligned(FILE *out, const char *s, size_t width, int align, int last,
                        unsigned flags)
{
    size_t w = text_width(s, flags), room = w < width ? width - w : 0;
    if (flags & TT_TABLE_PAD_LAST)
        last = 0;
    if (align == TT_ALIGN_RIGHT)
        pad(out, room);
    else if (align == TT_ALIGN_CENTER)
        pad(out, room / 2);
    fputs(s, out);
    if (last && align == TT_ALIGN_LEFT)
        return;
    if (align == TT_ALIGN_LEFT)
        pad(out, room);
    else if (align == TT_ALIGN_CENTER && !last)
        pad(out, room - room / 2);
}

/* The human text of a cell (text/Markdown). */
static const char *human_cell(tt_buf *b, const tt_table_col *col, const struct cell *c)
{
    tt_buf_reset(b);
    if (c->kind == CELL_TEXT || c->kind == CELL_JSON)
        return c->s;
    if (c->kind != CELL_NULL)
        fmt_num(b, col, c, 1);
    return b->buf;
}

struct view {
    const tt_table *t;
    const size_t *cols;
    size_t n;
};

static size_t view_col(const struct view *v, size_t k)
{
    return v->cols ? v->cols[k] : k;
}

/* a line of dashes as wide as each column */
static void text_rule(const struct view *v, const size_t *w, const char *ind, const char *sep,
                      unsigned flags, FILE *out)
{
    size_t k, i;
    fputs(ind, out);
    for (k = 0; k < v->n; k++) {
        for (i = 0; i < w[k]; i++)
            fputc('-', out);
        if (k + 1 < v->n || (flags & TT_TABLE_PAD_LAST))
            fputs(sep, out);
    }
    fputc('\n', out);
}

/* one line: the titles (row NULL) or a row's cells */
static void text_line(const struct view *v, const size_t *w, const struct cell *row,
                      const tt_table_write_options *o, const char *ind, const char *sep,
                      tt_buf *b, FILE *out)
{
    const tt_table *t = v->t;
    size_t k;
    fputs(ind, out);
    for (k = 0; k < v->n; k++) {
        const tt_table_col *c = &t->cols[view_col(v, k)];
        int last = k + 1 == v->n;
        if (row) {
            put_aligned(out, tt_visible(b, human_cell(b, c, &row[view_col(v, k)])), w[k],
                        col_align(c), last,
                        o->flags);
        } else {
            int a = c->header_align != TT_ALIGN_AUTO ? c->header_align : col_align(c);
            put_aligned(out, c->title ? c->title : "", w[k], a, last, o->flags);
        }
        if (!last || (o->flags & TT_TABLE_PAD_LAST))
            fputs(sep, out);
    }
    fputc('\n', out);
}

static int write_text(const struct view *v, const tt_table_write_options *o, FILE *out)
{
    const tt_table *t = v->t;
    const char *ind = o->indent ? o->indent : "", *sep = o->sep ? o->sep : "  ";
    size_t *w = calloc(v->n ? v->n : 1, sizeof(*w)), k, r;
    tt_buf b = TT_BUF_INIT;
    if (!w)
        return TT_ENOMEM;
    for (k = 0; k < v->n; k++) {
        const tt_table_col *c = &t->cols[view_col(v, k)];
        w[k] = (size_t)(c->width > 0 ? c->width : 0);
        if (c->width > 0)
            continue;
        if (c->title && text_width(c->title, o->flags) > w[k])
            w[k] = text_width(c->title, o->flags);
        for (r = 0; r < t->nrows; r++) {
            const struct cell *x0 = &t->cells[r * t->ncols + view_col(v, k)];
            size_t x = text_width(tt_visible(&b, human_cell(&b, c, x0)), o->flags);
            if (x > w[k])
                w[k] = x;
        }
    }
    if (!o->no_header) {
        if (o->flags & TT_TABLE_RULE_ABOVE)
            text_rule(v, w, ind, sep, o->flags, out);
        text_line(v, w, NULL, o, ind, sep, &b, out);
        if (!(o->flags & TT_TABLE_NO_RULE))
            text_rule(v, w, ind, sep, o->flags, out);
    }
    for (r = 0; r < t->nrows; r++)
        text_line(v, w, &t->cells[r * t->ncols], o, ind, sep, &b, out);
    if (o->flags & TT_TABLE_RULE_BELOW)
        text_rule(v, w, ind, sep, o->flags, out);
    tt_buf_release(&b);
    free(w);
    return 0;
}

static void write_csv(const struct view *v, const tt_table_write_options *o, FILE *out)
{
    const tt_table *t = v->t;
    tt_buf b = TT_BUF_INIT;
    size_t k, r;
    if (!o->no_header) {
        for (k = 0; k < v->n; k++) {
            if (k)
                fputc(',', out);
            tt_table_csv_text(out, col_key(&t->cols[view_col(v, k)]), 0);
        }
        fputc('\n', out);
    }
    for (r = 0; r < t->nrows; r++) {
        for (k = 0; k < v->n; k++) {
            const tt_table_col *c = &t->cols[view_col(v, k)];
            const struct cell *x = &t->cells[r * t->ncols + view_col(v, k)];
            if (k)
                fputc(',', out);
            if (x->kind == CELL_TEXT || x->kind == CELL_JSON) {
                tt_table_csv_text(out, x->s, (c->flags & TT_COL_QUOTE) != 0);
            } else if (x->kind != CELL_NULL) {
                tt_buf_reset(&b);
                fmt_num(&b, c, x, 0);
                if (strcmp(b.buf, "null")) /* a non-finite float is an empty field */
                    fputs(b.buf, out);
            }
        }
        fputc('\n', out);
    }
    tt_buf_release(&b);
}

/* the rows as objects, each a value where w is (report/table_json.h) */
int tt__table_json_rows(const tt_table *t, const tt_table_write_options *o, tt_jw *w, int indent)
{
    tt_table_write_options def = TT_TABLE_WRITE_OPTIONS_INIT;
    struct view v;
    size_t k, r;
    if (!o)
        o = &def;
    v.t = t;
    v.cols = o->cols;
    v.n = o->cols ? o->ncols : t->ncols;
    for (k = 0; k < v.n; k++)
        if (view_col(&v, k) >= t->ncols)
            return tt_error_set(TT_EINVALID, "table: no column %zu", view_col(&v, k));
    for (r = 0; r < t->nrows; r++) {
        if (indent >= 0)
            tt_jw_nl(w, indent);
        tt_jw_obj(w);
        for (k = 0; k < v.n; k++) {
            const tt_table_col *c = &t->cols[view_col(&v, k)];
            const struct cell *x = &t->cells[r * t->ncols + view_col(&v, k)];
            if (x->kind == CELL_NULL && (o->flags & TT_TABLE_JSON_SKIP_NULL))
                continue;
            tt_jw_key(w, col_key(c));
            if (x->kind == CELL_TEXT)
                tt_jw_str(w, x->s);
            else if (x->kind == CELL_JSON)
                tt_jw_raw(w, x->s, (size_t)-1);
            else if (x->kind == CELL_NULL)
                tt_jw_null(w);
            else if (x->kind == CELL_INT)
                tt_jw_int(w, x->i);
            else
                tt_jw_num(w, x->f, c->prec);
        }
        tt_jw_end(w);
        tt_jw__flush(w, 0);
    }
    return 0;
}

int tt__table_json_array(const tt_table *t, const tt_table_write_options *o, tt_jw *w,
                         const char *key, int indent)
{
    int rc;
    if (key)
        tt_jw_key(w, key);
    tt_jw_arr(w);
    rc = tt__table_json_rows(t, o, w, indent);
    tt_jw_nl(w, 0);
    tt_jw_end(w);
    return rc;
}

/* an array of objects: a row a line (indented by o->indent), or on one line */
static int write_json(const struct view *v, const tt_table_write_options *o, FILE *out)
{
    int inl = (o->flags & TT_TABLE_JSON_INLINE) != 0;
    tt_jw w;
    tt_jw_init_file(&w, out, 0);
    if (inl || (o->flags & TT_TABLE_JSON_TIGHT)) {
        tt_jw_arr(&w);
        tt__table_json_rows(v->t, o, &w, inl ? -1 : (o->indent ? (int)strlen(o->indent) : 0));
        tt_jw_end(&w);
    } else {
        tt__table_json_array(v->t, o, &w, NULL, o->indent ? (int)strlen(o->indent) : 0);
    }
    return tt_jw_finish(&w);
}

static void write_markdown(const struct view *v, const tt_table_write_options *o, FILE *out)
{
    const tt_table *t = v->t;
    tt_buf b = TT_BUF_INIT;
    size_t k, r;
    if (!o->no_header) {
        fputc('|', out);
        for (k = 0; k < v->n; k++) {
            fputc(' ', out);
            tt_table_markdown_text(out, t->cols[view_col(v, k)].title
                                            ? t->cols[view_col(v, k)].title : "");
            fputs(" |", out);
        }
        fputs("\n|", out);
        for (k = 0; k < v->n; k++) {
            int a = col_align(&t->cols[view_col(v, k)]);
            fputs(a == TT_ALIGN_RIGHT ? "---:|" : a == TT_ALIGN_CENTER ? ":---:|" : "---|", out);
        }
        fputc('\n', out);
    }
    for (r = 0; r < t->nrows; r++) {
        fputc('|', out);
        for (k = 0; k < v->n; k++) {
            const tt_table_col *c = &t->cols[view_col(v, k)];
            fputc(' ', out);
            tt_table_markdown_text(out, human_cell(&b, c, &t->cells[r * t->ncols + view_col(v, k)]));
            fputs(" |", out);
        }
        fputc('\n', out);
    }
    tt_buf_release(&b);
}

int tt_table_write(const tt_table *t, const tt_table_write_options *opts, FILE *out)
{
    tt_table_write_options def = TT_TABLE_WRITE_OPTIONS_INIT;
    struct view v;
    size_t k;
    int rc = 0;
    if (!opts)
        opts = &def;
    v.t = t;
    v.cols = opts->cols;
    v.n = opts->cols ? opts->ncols : t->ncols;
    for (k = 0; k < v.n; k++)
        if (view_col(&v, k) >= t->ncols)
            return tt_error_set(TT_EINVALID, "table: no column %zu", view_col(&v, k));
    switch (opts->format) {
    case TT_FORMAT_CSV:
        write_csv(&v, opts, out);
        break;
    case TT_FORMAT_JSON:
        rc = write_json(&v, opts, out);
        if (rc == TT_ENOMEM)
            return rc; /* set */
        break; /* write errors are the caller's to check (ferror) */
    case TT_FORMAT_MARKDOWN:
        write_markdown(&v, opts, out);
        break;
    default:
        rc = write_text(&v, opts, out);
        if (rc < 0)
            return tt_error_set(rc, "out of memory");
    }
    return 0; /* write errors are the caller's to check (ferror) */
}
