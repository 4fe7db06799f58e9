/*
 * analyze/averages_print.c - printing an averages result: torch's
 * key_averages().table() character for character, or CSV, JSON, Markdown.
 */
#include "analyze/averages_state.h"
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

struct table {
    const char *hdr[20];
    int width[20];
    int ncol;
    int left_col; /* Source Location is left-aligned (-1: none) */
    int has_dev, has_dev_mem, has_shapes, show_mem;
};

static void tcell(FILE *out, const struct table *t, int col, const char *v)
{
    if (col == t->left_col)
        fprintf(out, "%-*.*s  ", t->width[col], t->width[col], v);
    else
        fprintf(out, "%*s  ", t->width[col], v);
}

static void tsep(FILE *out, const struct table *t)
{
    int c, i;
    for (c = 0; c < t->ncol; c++) {
        for (i = 0; i < t->width[c]; i++)
            fputc('-', out);
        fputs("  ", out);
    }
    fputc('\n', out);
}

static void tcol(struct table *t, const char *h, size_t w, size_t max)
{
    t->hdr[t->ncol] = h;
    t->width[t->ncol++] = (int)(w < max ? w : max);
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
static void table_layout(struct table *t, const tt_avg_trace *tr, const tt_avg_options *o)
{
    size_t i, maxname = 0, maxshape = 0, maxsrc = 0;
    memset(t, 0, sizeof(*t));
    t->left_col = -1;
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
        t->left_col = t->ncol;
        tcol(t, "Source Location", maxsrc + 4, 75);
    }
}

/* a row's Source Location: first entry here; entries 2..5 on rows of
 * empty cells, then an empty row */
static void table_stack(FILE *out, const struct table *t, const tt_avg_row *r, int c)
{
    const char *st = r->stack ? r->stack : "";
    const char *e = strchr(st, '\n');
    char first[256];
    int k, shown = 1;
    snprintf(first, sizeof(first), "%.*s", (int)(e ? e - st : (long)strlen(st)), st);
    tcell(out, t, c, first);
    fputc('\n', out);
    while (e && shown < 5) {
        const char *q = e + 1;
        e = strchr(q, '\n');
        snprintf(first, sizeof(first), "%.*s", (int)(e ? e - q : (long)strlen(q)), q);
        for (k = 0; k < t->ncol; k++)
            tcell(out, t, k, k == t->left_col ? first : "");
        fputc('\n', out);
        shown++;
    }
    for (k = 0; k < t->ncol; k++)
        tcell(out, t, k, "");
}

static void table_row(FILE *out, const struct table *t, const tt_avg_row *r,
                      const tt_avg_trace *tr)
{
    char b[64], name[64];
    double cnt = (double)r->count;
    int c = 0;
    if ((int)strlen(r->name) >= 55 - 3)
        snprintf(name, sizeof(name), "%.52s...", r->name);
    else
        snprintf(name, sizeof(name), "%s", r->name);
    if ((int)strlen(name) > t->width[0])
        name[t->width[0]] = '\0';
    tcell(out, t, c++, name);
#define CELL(fmt, v) (fmt(b, sizeof(b), v), tcell(out, t, c++, b))
#define SHARE(v, total) (fmt_share(b, sizeof(b), v, total), tcell(out, t, c++, b))
    SHARE(r->self_cpu_us, tr->self_cpu_total_us);
    CELL(fmt_time, r->self_cpu_us);
    SHARE(r->cpu_total_us, tr->self_cpu_total_us);
    CELL(fmt_time, r->cpu_total_us);
    CELL(fmt_time, r->cpu_total_us / cnt);
    if (t->has_dev) {
        CELL(fmt_time, r->self_device_us);
        SHARE(r->self_device_us, tr->self_device_total_us);
        CELL(fmt_time, r->device_total_us);
        CELL(fmt_time, r->device_total_us / cnt);
    }
    if (t->show_mem) {
        CELL(fmt_mem, r->cpu_mem);
        CELL(fmt_mem, r->self_cpu_mem);
        if (t->has_dev_mem) {
            CELL(fmt_mem, r->device_mem);
            CELL(fmt_mem, r->self_device_mem);
        }
    }
#undef CELL
#undef SHARE
    snprintf(b, sizeof(b), "%" PRId64, r->count);
    tcell(out, t, c++, b);
    if (t->has_shapes) {
        char sh[96];
        snprintf(sh, sizeof(sh), "%.*s", t->width[c], r->input_shapes ? r->input_shapes : "[]");
        tcell(out, t, c++, sh);
    }
    if (t->left_col >= 0)
        table_stack(out, t, r, c++);
    fputc('\n', out);
}

static void print_table(FILE *out, const tt_avg_trace *tr, const tt_avg_options *o)
{
    struct table t;
    size_t i;
    int c;
    int64_t printed = 0;
    char b[64];
    table_layout(&t, tr, o);
    if (o->top_level_only) {
        int line = -2, k;
        for (c = 0; c < t.ncol; c++)
            line += t.width[c] + 2;
        for (k = 0; k < line; k++)
            fputc('=', out);
        fputs("\nThis report only display top-level ops statistics\n", out);
    }
    tsep(out, &t);
    for (c = 0; c < t.ncol; c++)
        tcell(out, &t, c, t.hdr[c]);
    fputc('\n', out);
    tsep(out, &t);
    for (i = 0; i < tr->nrows; i++) {
        if (o->top_level_only && tr->rows[i].has_parent)
            continue;
        if (o->row_limit >= 0 && printed >= o->row_limit)
            break;
        printed++;
        table_row(out, &t, &tr->rows[i], tr);
    }
    tsep(out, &t);
    fmt_time(b, sizeof(b), tr->self_cpu_total_us);
    fprintf(out, "Self CPU time total: %s\n", b);
    if (t.has_dev) {
        fmt_time(b, sizeof(b), tr->self_device_total_us);
        fprintf(out, "Self CUDA time total: %s\n", b);
    }
}

/* ---- CSV, JSON, Markdown ---- */

/* averages quotes every text cell, as it always has */
static void csv_str(FILE *out, const char *s)
{
    tt_table_csv_text(out, s, 1);
}

static const char *dev_name(const tt_avg_row *r)
{
    return r->device == DEV_CPU ? "CPU" : "CUDA";
}

static void csv_row(FILE *out, const tt_avg_trace *tr, const tt_avg_row *r, int header)
{
    if (header)
        fputs("trace_id,rank,name,input_shapes,device,count,self_cpu_us,cpu_total_us,"
              "cpu_avg_us,self_device_us,device_total_us,device_avg_us,cpu_mem,"
              "self_cpu_mem,device_mem,self_device_mem\n",
              out);
    fprintf(out, "%" PRId64 ",", tr->trace_id);
    if (tr->have_rank)
        fprintf(out, "%" PRId64, tr->rank);
    fputc(',', out);
    csv_str(out, r->name);
    fputc(',', out);
    csv_str(out, r->input_shapes ? r->input_shapes : "");
    fprintf(out, ",%s,%" PRId64 ",%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%" PRId64 ",%" PRId64
                 ",%" PRId64 ",%" PRId64 "\n",
            dev_name(r), r->count, r->self_cpu_us, r->cpu_total_us,
            r->cpu_total_us / (double)r->count, r->self_device_us, r->device_total_us,
            r->device_total_us / (double)r->count, r->cpu_mem, r->self_cpu_mem, r->device_mem,
            r->self_device_mem);
}

static void json_str(FILE *out, const char *s)
{
    tt_buf b = TT_BUF_INIT;
    tt_buf_add_json_string(&b, s, strlen(s));
    fputs(b.buf, out);
    tt_buf_release(&b);
}

static void json_row(FILE *out, const tt_avg_trace *tr, const tt_avg_row *r, int first_row,
                     int first_trace)
{
    if (first_row) {
        fprintf(out, "%s{\"trace_id\": %" PRId64 ", \"path\": ", first_trace ? "" : ",\n",
                tr->trace_id);
        json_str(out, tr->path);
        if (tr->have_rank)
            fprintf(out, ", \"rank\": %" PRId64, tr->rank);
        else
            fputs(", \"rank\": null", out);
        fputs(", \"rows\": [\n", out);
    } else {
        fputs(",\n", out);
    }
    fputs("  {\"name\": ", out);
    json_str(out, r->name);
    if (r->input_shapes) {
        fputs(", \"input_shapes\": ", out);
        json_str(out, r->input_shapes);
    }
    if (r->stack) {
        fputs(", \"stack\": ", out);
        json_str(out, r->stack);
    }
    fprintf(out, ", \"device\": \"%s\", \"count\": %" PRId64
                 ", \"self_cpu_time_total_us\": %.3f, \"cpu_time_total_us\": %.3f"
                 ", \"self_device_time_total_us\": %.3f, \"device_time_total_us\": %.3f"
                 ", \"cpu_memory_usage\": %" PRId64 ", \"self_cpu_memory_usage\": %" PRId64
                 ", \"device_memory_usage\": %" PRId64
                 ", \"self_device_memory_usage\": %" PRId64 "}",
            dev_name(r), r->count, r->self_cpu_us, r->cpu_total_us, r->self_device_us,
            r->device_total_us, r->cpu_mem, r->self_cpu_mem, r->device_mem, r->self_device_mem);
}

static void markdown_row(FILE *out, const tt_avg_trace *tr, const tt_avg_row *r,
                         const tt_avg_options *o, int first_row, int first_trace)
{
    const char *p;
    if (first_row) {
        fprintf(out, "%s### trace %" PRId64 ": %s\n\n", first_trace ? "" : "\n", tr->trace_id,
                tr->path);
        fputs("| Name |", out);
        if (o->group_by_shape)
            fputs(" Input Shapes |", out);
        fputs(" Self CPU (us) | CPU total (us) | Self CUDA (us) | CUDA total (us) |"
              " CPU Mem | Self CPU Mem | CUDA Mem | Self CUDA Mem | # of Calls |\n|---|",
              out);
        if (o->group_by_shape)
            fputs("---|", out);
        fputs("---:|---:|---:|---:|---:|---:|---:|---:|---:|\n", out);
    }
    fputs("| `", out);
    for (p = r->name; *p; p++)
        fputc(*p == '|' || *p == '`' ? '\'' : *p, out);
    fputs("` |", out);
    if (o->group_by_shape)
        fprintf(out, " %s |", r->input_shapes ? r->input_shapes : "");
    fprintf(out, " %.3f | %.3f | %.3f | %.3f | %" PRId64 " | %" PRId64 " | %" PRId64
                 " | %" PRId64 " | %" PRId64 " |\n",
            r->self_cpu_us, r->cpu_total_us, r->self_device_us, r->device_total_us, r->cpu_mem,
            r->self_cpu_mem, r->device_mem, r->self_device_mem, r->count);
}

static void print_rows(FILE *out, const tt_avg_trace *tr, const tt_avg_options *o,
                       int first_trace)
{
    size_t i;
    int64_t printed = 0;
    for (i = 0; i < tr->nrows; i++) {
        const tt_avg_row *r = &tr->rows[i];
        if (o->top_level_only && r->has_parent)
            continue;
        if (o->row_limit >= 0 && printed >= o->row_limit)
            break;
        if (o->format == TT_AVG_CSV)
            csv_row(out, tr, r, printed == 0 && first_trace);
        else if (o->format == TT_AVG_JSON)
            json_row(out, tr, r, printed == 0, first_trace);
        else
            markdown_row(out, tr, r, o, printed == 0, first_trace);
        printed++;
    }
    if (o->format == TT_AVG_JSON) {
        if (printed == 0)
            fprintf(out, "%s{\"trace_id\": %" PRId64 ", \"rows\": [", first_trace ? "" : ",\n",
                    tr->trace_id);
        fputs("\n]}", out);
    }
}

static void print_trace(FILE *out, const tt_avg_trace *tr, const tt_avg_options *o,
                        int header_per_trace, int first)
{
    if (o->format != TT_AVG_TABLE) {
        print_rows(out, tr, o, first);
        return;
    }
    if (!first)
        fputc('\n', out);
    if (header_per_trace) {
        fprintf(out, "trace %" PRId64, tr->trace_id);
        if (tr->have_rank)
            fprintf(out, " (rank %" PRId64 ")", tr->rank);
        fprintf(out, ": %s\n", tr->path);
    }
    if (tr->nrows)
        print_table(out, tr, o);
}

int tt_averages_print(const tt_avg_result *res, const tt_avg_options *opts, FILE *out)
{
    size_t k;
    if (opts->format == TT_AVG_JSON)
        fputs("{\"traces\": [\n", out);
    for (k = 0; k < res->ntraces; k++)
        print_trace(out, &res->traces[k], opts, res->header_per_trace, k == 0);
    if (opts->format == TT_AVG_JSON)
        fputs("\n]}\n", out);
    return 0;
}
