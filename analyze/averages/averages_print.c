/*
 * analyze/averages/averages_print.c - printing an averages result: torch's
 * key_averages().table() character for character, or CSV, JSON, Markdown,
 * all through the table writer (tracetool/table.h): the torch table is a
 * table of preformatted right-aligned cells with fixed widths.
 */
#include "analyze/averages/averages_state.h"
#include "report/table_json.h"
#include "tracetool/table.h"
#include "common/buf.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

static const char *const sort_keys[] = {
    "cpu_time", "cuda_time", "cpu_time_total", "cuda_time_total", "self_cpu_time_total",
    "self_cuda_time_total", "cpu_memory_usage", "cuda_memory_usage",
    "self_cpu_memory_usage", "self_cuda_memory_usage", "count", "device_time",
    "device_time_total", "self_device_time_total", "device_memory_usage",
    "self_device_memory_usage", NULL,
};

int tt_avg_sort_key_valid(const char *k)
{
    size_t i;
    if (!k)
        return 1;
    for (i = 0; sort_keys[i]; i++) {
        if (!strcmp(k, sort_keys[i]))
            return 1;
    }
    return 0;
}

double tt__avg_sort_value(const tt_avg_row *r, const char *k)
{
    double c = r->count ? (double)r->count : 1;
    if (!strcmp(k, "cpu_time")) return r->cpu_total_us / c;
    if (!strcmp(k, "cuda_time") || !strcmp(k, "device_time")) return r->device_total_us / c;
    if (!strcmp(k, "cpu_time_total")) return r->cpu_total_us;
    if (!strcmp(k, "cuda_time_total") || !strcmp(k, "device_time_total")) return r->device_total_us;
    if (!strcmp(k, "self_cpu_time_total")) return r->self_cpu_us;
    if (!strcmp(k, "self_cuda_time_total") || !strcmp(k, "self_device_time_total"))
        return r->self_device_us;
    if (!strcmp(k, "cpu_memory_usage")) return (double)r->cpu_mem;
    if (!strcmp(k, "cuda_memory_usage") || !strcmp(k, "device_memory_usage"))
        return (double)r->device_mem;
    if (!strcmp(k, "self_cpu_memory_usage")) return (double)r->self_cpu_mem;
    if (!strcmp(k, "self_cuda_memory_usage") || !strcmp(k, "self_device_memory_usage"))
        return (double)r->self_device_mem;
    return (double)r->count;
}

/* ---- torch's table ---- */

static void fmt_time(char *buf, size_t n, double us)
{
    if (us >= 1e6)
        snprintf(buf, n, "%.3fs", us / 1e6);
    else if (us >= 1e3)
        snprintf(buf, n, "%.3fms", us / 1e3);
    else
        snprintf(buf, n, "%.3fus", us);
}

static void fmt_share(char *buf, size_t n, double t, double total)
{
    if (total == 0)
        snprintf(buf, n, "NaN");
    else
        snprintf(buf, n, "%.2f%%", t * 100.0 / total);
}

static void fmt_mem(char *buf, size_t n, int64_t b)
{
    const double KB = 1024, MB = 1024 * 1024, GB = 1024.0 * 1024 * 1024;
    double a = fabs((double)b);
    if (a >= GB)
        snprintf(buf, n, "%.2f Gb", (double)b / GB);
    else if (a >= MB)
        snprintf(buf, n, "%.2f Mb", (double)b / MB);
    else if (a >= KB)
        snprintf(buf, n, "%.2f Kb", (double)b / KB);
    else
        snprintf(buf, n, "%" PRId64 " b", b);
}

static int is_gpu_annotation(const tt_avg_row *r)
{
    return r->device == TT_AVG_DEV_CUDA && r->is_user_annotation;
}

/* Which rows the printer shows: 1 show, 0 skip, -1 stop (row_limit reached);
 * *printed counts the shown ones. */
static int shown(const tt_avg_options *o, const tt_avg_row *r, int64_t *printed)
{
    if (o->top_level_only && r->has_parent)
        return 0;
    if (o->version >= 2 && o->hide_gpu_annotations && is_gpu_annotation(r))
        return 0;
    if (o->row_limit >= 0 && *printed >= o->row_limit)
        return -1;
    (*printed)++;
    return 1;
}

/* torch's columns: every cell preformatted text, right-aligned, in a width
 * fixed from every row (printed or not); Source Location left-aligned */
struct layout {
    tt_table_col col[20];
    char src_title[16]; /* "Source Location" cut to its width, as torch's format cuts it */
    int ncol;
    int src; /* the Source Location column (-1: none) */
    int has_dev, has_dev_mem, has_shapes, show_mem;
};

static void tcol(struct layout *t, const char *h, size_t w, size_t max)
{
    tt_table_col *c = &t->col[t->ncol++];
    memset(c, 0, sizeof(*c));
    c->title = h;
    c->type = TT_COL_TEXT;
    c->align = TT_ALIGN_RIGHT;
    c->width = (int)(w < max ? w : max);
}

/* the longest entry of a '\n'-joined stack */
static size_t longest_entry(const char *p)
{
    size_t m = 0;
    while (p && *p) {
        const char *e = strchr(p, '\n');
        size_t sl = e ? (size_t)(e - p) : strlen(p);
        if (sl > m)
            m = sl;
        p = e ? e + 1 : NULL;
    }
    return m;
}

/* columns and widths, from every row (printed or not), as torch */
static void table_layout(struct layout *t, const tt_avg_trace *tr, const tt_avg_options *o)
{
    size_t i, maxname = 0, maxshape = 0, maxsrc = 0;
    memset(t, 0, sizeof(*t));
    t->src = -1;
    t->show_mem = tr->show_memory;
    for (i = 0; i < tr->nrows; i++) {
        const tt_avg_row *r = &tr->rows[i];
        size_t l = strlen(r->name), src = longest_entry(r->stack);
        if (l > maxname)
            maxname = l;
        if (r->self_device_us > 0)
            t->has_dev = 1;
        if (r->self_device_mem > 0)
            t->has_dev_mem = 1;
        if (o->group_by_shape && r->input_shapes && r->input_shapes[0] &&
            strcmp(r->input_shapes, "[]"))
            t->has_shapes = 1;
        if (o->group_by_shape && r->input_shapes && strlen(r->input_shapes) > maxshape)
            maxshape = strlen(r->input_shapes);
        if (src > maxsrc)
            maxsrc = src;
    }
    tcol(t, "Name", maxname + 4, 55);
    tcol(t, "Self CPU %", 12, 12);
    tcol(t, "Self CPU", 12, 12);
    tcol(t, "CPU total %", 12, 12);
    tcol(t, "CPU total", 12, 12);
    tcol(t, "CPU time avg", 12, 12);
    if (t->has_dev) {
        tcol(t, "Self CUDA", 12, 12);
        tcol(t, "Self CUDA %", 12, 12);
        tcol(t, "CUDA total", 12, 12);
        tcol(t, "CUDA time avg", 12, 12);
    }
    if (t->show_mem) {
        tcol(t, "CPU Mem", 12, 12);
        tcol(t, "Self CPU Mem", 12, 12);
        if (t->has_dev_mem) {
            tcol(t, "CUDA Mem", 12, 12);
            tcol(t, "Self CUDA Mem", 12, 12);
        }
    }
    tcol(t, "# of Calls", 12, 12);
    if (t->has_shapes)
        tcol(t, "Input Shapes", maxshape + 4, 80);
    if (maxsrc) {
        t->src = t->ncol;
        tcol(t, "Source Location", maxsrc + 4, 75);
        t->col[t->src].align = TT_ALIGN_LEFT;
        snprintf(t->src_title, sizeof(t->src_title), "%.*s", t->col[t->src].width,
                 "Source Location");
        t->col[t->src].title = t->src_title;
    }
}

/* s[0..len) cut to `width` bytes, into buf */
static const char *cut(char *buf, size_t n, const char *s, size_t len, int width)
{
    snprintf(buf, n, "%.*s", (int)(len < (size_t)width ? len : (size_t)width), s);
    return buf;
}

/* the byte length of the first n UTF-8 characters of s[0..len) */
static size_t utf8_bytes(const char *s, size_t len, size_t n)
{
    size_t i = 0;
    while (i < len && n) {
        i++;
        while (i < len && ((unsigned char)s[i] & 0xC0) == 0x80)
            i++;
        n--;
    }
    return i;
}

/* torch's trim_path: a stack entry longer than the column keeps its last
 * `width` characters, the first three of them replaced by "..." */
static const char *trim_path(char *buf, size_t n, const char *s, size_t len, int width)
{
    size_t chars = 0, i, skip;
    for (i = 0; i < len; i++)
        chars += ((unsigned char)s[i] & 0xC0) != 0x80;
    if (width < 0 || chars <= (size_t)width) {
        snprintf(buf, n, "%.*s", (int)len, s);
        return buf;
    }
    skip = utf8_bytes(s, len, chars - (size_t)width);
    if ((size_t)width > 3) {
        skip += utf8_bytes(s + skip, len - skip, 3);
        snprintf(buf, n, "...%.*s", (int)(len - skip), s + skip);
    } else {
        snprintf(buf, n, "%.*s", (int)(len - skip), s + skip);
    }
    return buf;
}

/* a row's Source Location: its first entry on the row; entries 2..5 on
 * rows of empty cells, then a row of empty cells */
static int table_stack(tt_table *t, const struct layout *l, const tt_avg_row *r)
{
    const char *st = r->stack ? r->stack : "";
    const char *e = strchr(st, '\n');
    char entry[512];
    int k, shown_n = 1, w = l->col[l->src].width;
    if (tt_table_set_text(t, (size_t)l->src, trim_path(entry, sizeof(entry), st,
                                                       e ? (size_t)(e - st) : strlen(st), w)) < 0)
        return TT_ENOMEM;
    while (e && shown_n < 5) {
        const char *q = e + 1;
        e = strchr(q, '\n');
        if (tt_table_add_row(t) < 0 ||
            tt_table_set_text(t, (size_t)l->src,
                              trim_path(entry, sizeof(entry), q,
                                        e ? (size_t)(e - q) : strlen(q), w)) < 0)
            return TT_ENOMEM;
        for (k = 0; k < l->ncol; k++)
            if (k != l->src && tt_table_set_text(t, (size_t)k, "") < 0)
                return TT_ENOMEM;
        shown_n++;
    }
    if (tt_table_add_row(t) < 0)
        return TT_ENOMEM;
    for (k = 0; k < l->ncol; k++)
        if (tt_table_set_text(t, (size_t)k, "") < 0)
            return TT_ENOMEM;
    return 0;
}

static int table_row(tt_table *t, const struct layout *l, const tt_avg_row *r,
                     const tt_avg_trace *tr)
{
    char b[64], name[64];
    double cnt = (double)r->count;
    size_t c = 0;
    int rc = tt_table_add_row(t);
    if ((int)strlen(r->name) >= 55 - 3)
        snprintf(name, sizeof(name), "%.52s...", r->name);
    else
        snprintf(name, sizeof(name), "%s", r->name);
    if ((int)strlen(name) > l->col[0].width)
        name[l->col[0].width] = '\0';
#define PUT(s) (rc = rc < 0 ? rc : tt_table_set_text(t, c++, (s)))
#define CELL(fmt, v) (fmt(b, sizeof(b), v), PUT(b))
#define SHARE(v, total) (fmt_share(b, sizeof(b), v, total), PUT(b))
    PUT(name);
    SHARE(r->self_cpu_us, tr->self_cpu_total_us);
    CELL(fmt_time, r->self_cpu_us);
    SHARE(r->cpu_total_us, tr->self_cpu_total_us);
    CELL(fmt_time, r->cpu_total_us);
    CELL(fmt_time, r->cpu_total_us / cnt);
    if (l->has_dev) {
        CELL(fmt_time, r->self_device_us);
        SHARE(r->self_device_us, tr->self_device_total_us);
        CELL(fmt_time, r->device_total_us);
        CELL(fmt_time, r->device_total_us / cnt);
    }
    if (l->show_mem) {
        CELL(fmt_mem, r->cpu_mem);
        CELL(fmt_mem, r->self_cpu_mem);
        if (l->has_dev_mem) {
            CELL(fmt_mem, r->device_mem);
            CELL(fmt_mem, r->self_device_mem);
        }
    }
    snprintf(b, sizeof(b), "%" PRId64, r->count);
    PUT(b);
    if (l->has_shapes) {
        const char *sh = r->input_shapes ? r->input_shapes : "[]";
        char cutb[96];
        int width = l->col[c].width;
        PUT(cut(cutb, sizeof(cutb), sh, strlen(sh), width));
    }
#undef PUT
#undef CELL
#undef SHARE
    if (rc == 0 && l->src >= 0)
        rc = table_stack(t, l, r);
    return rc;
}

static int print_table(FILE *out, const tt_avg_trace *tr, const tt_avg_options *o)
{
    tt_table_write_options w = TT_TABLE_WRITE_OPTIONS_INIT;
    struct layout l;
    tt_table *t;
    size_t i;
    int c, rc = 0;
    int64_t printed = 0, annotations = 0;
    char b[64];
    table_layout(&l, tr, o);
    if (!(t = tt_table_new(l.col, (size_t)l.ncol)))
        return TT_ENOMEM;
    for (i = 0; i < tr->nrows && rc == 0; i++) {
        int s = shown(o, &tr->rows[i], &printed);
        if (s < 0)
            break;
        if (s)
            rc = table_row(t, &l, &tr->rows[i], tr);
        if (s && is_gpu_annotation(&tr->rows[i]))
            annotations++;
    }
    if (rc < 0) {
        tt_table_free(t);
        return rc;
    }
    if (o->top_level_only) {
        int line = -2, k;
        for (c = 0; c < l.ncol; c++)
            line += l.col[c].width + 2;
        for (k = 0; k < line; k++)
            fputc('=', out);
        fputs("\nThis report only display top-level ops statistics\n", out);
    }
    w.flags = TT_TABLE_RULE_ABOVE | TT_TABLE_RULE_BELOW | TT_TABLE_PAD_LAST | TT_TABLE_BYTE_WIDTH;
    rc = tt_table_write(t, &w, out);
    tt_table_free(t);
    if (rc < 0)
        return rc;
    fmt_time(b, sizeof(b), tr->self_cpu_total_us);
    fprintf(out, "Self CPU time total: %s\n", b);
    if (l.has_dev) {
        fmt_time(b, sizeof(b), tr->self_device_total_us);
        fprintf(out, "Self CUDA time total: %s\n", b);
    }
    if (annotations) /* torch's parity kept, explained */
        fprintf(out, "Note: %" PRId64 " row%s of GPU user annotations (gpu_user_annotation) span"
                     " the kernels inside them and are not in \"Self CUDA time total\", so their"
                     " Self CUDA %% can pass 100%% (as in torch); --no-gpu-annotations leaves"
                     " them out.\n", annotations, annotations == 1 ? "" : "s");
    return 0;
}

/* ---- CSV, JSON, Markdown: one table per trace ---- */

enum { A_TRACE, A_RANK, A_NAME, A_SHAPES, A_STACK, A_DEVICE, A_COUNT, A_SELF_CPU, A_CPU_TOTAL,
       A_CPU_AVG, A_SELF_DEV, A_DEV_TOTAL, A_DEV_AVG, A_CPU_MEM, A_SELF_CPU_MEM, A_DEV_MEM,
       A_SELF_DEV_MEM, A_COUNT_COLS };

/* CSV and JSON keys (one naming: torch's key_averages attribute names) and
 * Markdown titles; averages quotes every CSV text cell, as it always has
 * (device excepted; JSON ignores the quoting flag) */
static const tt_table_col avg_cols[A_COUNT_COLS] = {
    { "Trace", "trace_id", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "Rank", "rank", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "Name", "name", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, TT_COL_QUOTE },
    { "Input Shapes", "input_shapes", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, TT_COL_QUOTE },
    { "Stack", "stack", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, TT_COL_QUOTE },
    { "Device", "device", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
    { "# of Calls", "count", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "Self CPU (us)", "self_cpu_time_total_us", TT_COL_FLOAT, 0, 0, 0, 3, 3, 0, 0 },
    { "CPU total (us)", "cpu_time_total_us", TT_COL_FLOAT, 0, 0, 0, 3, 3, 0, 0 },
    { "CPU avg (us)", "cpu_time_us", TT_COL_FLOAT, 0, 0, 0, 3, 3, 0, 0 },
    { "Self CUDA (us)", "self_device_time_total_us", TT_COL_FLOAT, 0, 0, 0, 3, 3, 0, 0 },
    { "CUDA total (us)", "device_time_total_us", TT_COL_FLOAT, 0, 0, 0, 3, 3, 0, 0 },
    { "CUDA avg (us)", "device_time_us", TT_COL_FLOAT, 0, 0, 0, 3, 3, 0, 0 },
    { "CPU Mem", "cpu_memory_usage", TT_COL_BYTES, 0, 0, 0, 0, 0, 0, 0 },
    { "Self CPU Mem", "self_cpu_memory_usage", TT_COL_BYTES, 0, 0, 0, 0, 0, 0, 0 },
    { "CUDA Mem", "device_memory_usage", TT_COL_BYTES, 0, 0, 0, 0, 0, 0, 0 },
    { "Self CUDA Mem", "self_device_memory_usage", TT_COL_BYTES, 0, 0, 0, 0, 0, 0, 0 },
};

static const size_t csv_view[] = { A_TRACE, A_RANK, A_NAME, A_SHAPES, A_DEVICE, A_COUNT,
                                   A_SELF_CPU, A_CPU_TOTAL, A_CPU_AVG, A_SELF_DEV,
                                   A_DEV_TOTAL, A_DEV_AVG, A_CPU_MEM, A_SELF_CPU_MEM,
                                   A_DEV_MEM, A_SELF_DEV_MEM };
static const size_t json_view[] = { A_NAME, A_SHAPES, A_STACK, A_DEVICE, A_COUNT, A_SELF_CPU,
                                    A_CPU_TOTAL, A_SELF_DEV, A_DEV_TOTAL, A_CPU_MEM,
                                    A_SELF_CPU_MEM, A_DEV_MEM, A_SELF_DEV_MEM };
static const size_t md_view[] = { A_NAME, A_SELF_CPU, A_CPU_TOTAL, A_SELF_DEV, A_DEV_TOTAL,
                                  A_CPU_MEM, A_SELF_CPU_MEM, A_DEV_MEM, A_SELF_DEV_MEM,
                                  A_COUNT };
static const size_t md_shape_view[] = { A_NAME, A_SHAPES, A_SELF_CPU, A_CPU_TOTAL,
                                        A_SELF_DEV, A_DEV_TOTAL, A_CPU_MEM, A_SELF_CPU_MEM,
                                        A_DEV_MEM, A_SELF_DEV_MEM, A_COUNT };
#define NCOLS(a) (sizeof(a) / sizeof((a)[0]))

static int add_row(tt_table *t, const tt_avg_trace *tr, const tt_avg_row *r, int format)
{
    const char *shapes = r->input_shapes;
    if (!shapes && format == TT_FORMAT_CSV)
        shapes = ""; /* CSV: an empty quoted field, as before */
    if (tt_table_add_row(t) < 0 || tt_table_set_text(t, A_NAME, r->name) < 0 ||
        tt_table_set_text(t, A_SHAPES, shapes) < 0 || tt_table_set_text(t, A_STACK, r->stack) < 0 ||
        tt_table_set_text(t, A_DEVICE, r->device == DEV_CPU ? "CPU" : "CUDA") < 0)
        return TT_ENOMEM;
    tt_table_set_int(t, A_TRACE, tr->trace_id);
    if (tr->have_rank)
        tt_table_set_int(t, A_RANK, tr->rank);
    tt_table_set_int(t, A_COUNT, r->count);
    tt_table_set_float(t, A_SELF_CPU, r->self_cpu_us);
    tt_table_set_float(t, A_CPU_TOTAL, r->cpu_total_us);
    tt_table_set_float(t, A_CPU_AVG, r->cpu_total_us / (double)r->count);
    tt_table_set_float(t, A_SELF_DEV, r->self_device_us);
    tt_table_set_float(t, A_DEV_TOTAL, r->device_total_us);
    tt_table_set_float(t, A_DEV_AVG, r->device_total_us / (double)r->count);
    tt_table_set_int(t, A_CPU_MEM, r->cpu_mem);
    tt_table_set_int(t, A_SELF_CPU_MEM, r->self_cpu_mem);
    tt_table_set_int(t, A_DEV_MEM, r->device_mem);
    tt_table_set_int(t, A_SELF_DEV_MEM, r->self_device_mem);
    return 0;
}

/* the table of the rows a trace shows (NULL when out of memory); *printed:
 * how many */
static tt_table *shown_table(const tt_avg_trace *tr, const tt_avg_options *o, int64_t *printed)
{
    tt_table *t = tt_table_new(avg_cols, A_COUNT_COLS);
    size_t i;
    int rc = 0;
    *printed = 0;
    if (!t)
        return NULL;
    for (i = 0; i < tr->nrows && rc == 0; i++) {
        int s = shown(o, &tr->rows[i], printed);
        if (s < 0)
            break;
        if (s)
            rc = add_row(t, tr, &tr->rows[i], o->format);
    }
    if (rc < 0) {
        tt_table_free(t);
        return NULL;
    }
    return t;
}

/* JSON: one object per trace, its rows under "rows" */
static int print_json_trace(tt_jw *w, const tt_avg_trace *tr, const tt_avg_options *o)
{
    tt_table_write_options wo = TT_TABLE_WRITE_OPTIONS_INIT;
    int64_t printed;
    tt_table *t = shown_table(tr, o, &printed);
    int rc;
    if (!t)
        return TT_ENOMEM;
    wo.cols = json_view;
    wo.ncols = NCOLS(json_view);
    wo.flags = TT_TABLE_JSON_SKIP_NULL; /* input_shapes, stack: only when grouped by */
    tt_jw_nl(w, 0);
    tt_jw_obj(w);
    tt_jw_kint(w, "trace_id", tr->trace_id);
    if (printed) {
        tt_jw_kstr(w, "path", tr->path);
        if (tr->have_rank)
            tt_jw_kint(w, "rank", tr->rank);
        else
            tt_jw_knull(w, "rank");
    }
    rc = tt__table_json_array(t, &wo, w, "rows", 2);
    tt_jw_end(w);
    tt_table_free(t);
    return rc;
}

/* CSV: one header for the whole output; Markdown: a heading and a table per
 * trace with rows */
static int print_rows(FILE *out, const tt_avg_trace *tr, const tt_avg_options *o,
                      int first_trace)
{
    tt_table_write_options w = TT_TABLE_WRITE_OPTIONS_INIT;
    int64_t printed;
    tt_table *t = shown_table(tr, o, &printed);
    int rc = 0;
    if (!t)
        return TT_ENOMEM;
    if (o->format == TT_FORMAT_CSV) {
        w.format = TT_FORMAT_CSV;
        w.cols = csv_view;
        w.ncols = NCOLS(csv_view);
        w.no_header = !first_trace;
    } else {
        if (!printed)
            goto done;
        w.format = TT_FORMAT_MARKDOWN;
        w.cols = o->group_by_shape ? md_shape_view : md_view;
        w.ncols = o->group_by_shape ? NCOLS(md_shape_view) : NCOLS(md_view);
        fprintf(out, "%s### trace %" PRId64 ": ", first_trace ? "" : "\n", tr->trace_id);
        tt_table_markdown_text(out, tr->path);
        fputs("\n\n", out);
    }
    rc = tt_table_write(t, &w, out);
done:
    tt_table_free(t);
    return rc;
}

static int print_trace(FILE *out, const tt_avg_trace *tr, const tt_avg_options *o,
                       int header_per_trace, int first)
{
    if (o->format != TT_FORMAT_TABLE)
        return print_rows(out, tr, o, first);
    if (!first)
        fputc('\n', out);
    if (header_per_trace) {
        fprintf(out, "trace %" PRId64, tr->trace_id);
        if (tr->have_rank)
            fprintf(out, " (rank %" PRId64 ")", tr->rank);
        tt_buf v = TT_BUF_INIT;
        fprintf(out, ": %s\n", tt_visible(&v, tr->path));
        tt_buf_release(&v);
    }
    return tr->nrows ? print_table(out, tr, o) : 0;
}

static int print_json(const tt_avg_result *res, const tt_avg_options *opts, FILE *out)
{
    tt_jw w;
    size_t k;
    int rc = 0;
    tt_jw_init_file(&w, out, TT_JW_LINE);
    tt_jw_obj(&w);
    tt_jw_karr(&w, "traces");
    for (k = 0; k < res->ntraces && rc == 0; k++)
        rc = print_json_trace(&w, &res->traces[k], opts);
    tt_jw_nl(&w, 0);
    tt_jw_end(&w);
    tt_jw_end(&w);
    if (tt_jw_finish(&w) == TT_ENOMEM && !rc)
        rc = TT_ENOMEM;
    return rc;
}

int tt_averages_print(const tt_avg_result *res, const tt_avg_options *opts, FILE *out)
{
    size_t k;
    int rc = 0;
    if (opts->format == TT_FORMAT_JSON)
        rc = print_json(res, opts, out);
    for (k = 0; opts->format != TT_FORMAT_JSON && k < res->ntraces && rc == 0; k++)
        rc = print_trace(out, &res->traces[k], opts, res->header_per_trace, k == 0);
    if (rc == TT_ENOMEM)
        return tt_error_set(rc, "out of memory");
    return rc; /* write errors are the caller's to check (ferror) */
}
