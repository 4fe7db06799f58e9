/*
 * analyze/kernels/kernels.c - `tracetool kernels`: GPU kernel and memory-operation
 * summaries in the shape of Nsight Systems' cuda_gpu_kern_sum /
 * cuda_gpu_mem_time_sum (Time %, Total, Instances, Avg, Med, Min, Max,
 * StdDev, Name), and Nsight's cuda_api_sum and cuda_gpu_mem_size_sum.
 *
 * Each trace's summaries come from its rows (kernels_stream.c), whether it
 * is a file, a file of a directory or a trace of a database
 * (kernels_input.c picks and orders them); each summary is a
 * tt_kern_summary (tt_kernels_*_result return them), printed through the
 * table writer (tracetool/table.h).
 */
#include "common/compat.h"
#include "common/tmath.h"
#include "common/buf.h"
#include "store/db_internal.h"
#include "analyze/kernels/kernels_state.h"
#include "report/table_json.h"
#include "tracetool/table.h"

#include <inttypes.h>
#include <math.h>

void tt__kern_summary_release(tt_kern_summary *s)
{
    size_t i;
    for (i = 0; i < s->nrows; i++)
        free(s->rows[i].name);
    free(s->rows);
    free(s->path);
    tt__kern_seq_release(s);
    memset(s, 0, sizeof(*s));
}

/* ---- printing, through the table writer ---- */

enum { C_TRACE, C_WHAT, C_PCT, C_TOTAL, C_N, C_AVG, C_MED, C_MIN, C_MAX, C_SD, C_BYTES,
       C_GBPS, C_NAME, C_CALLS, C_COUNT_B, C_AVG_B, C_MED_B, C_MIN_B, C_MAX_B, C_SD_B, C_OPER,
       C_LAUNCH, C_DAVG, C_DMIN, C_DMAX, C_SEQ_N, C_SEQ_LEN, C_SEQ_GPU, C_SEQ_CPU, C_SEQ,
       C_SEQ_OPS, C_COUNT };

/* Nsight's cuda_gpu_kern_sum, cuda_api_sum and cuda_gpu_mem_size_sum layouts
 * in text; csv/json keys as before */
static const tt_table_col kern_cols[C_COUNT] = {
    { "Trace", "trace_id", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "What", "what", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
    { "Time (%)", "time_pct", TT_COL_PCT, 0, 0, 8, 4, 1, 0, 0 },
    { "Total Time (ns)", "total_ns", TT_COL_NS, 0, 0, 15, 0, 0, 0, 0 },
    { "Instances", "count", TT_COL_INT, 0, 0, 9, 0, 0, 0, 0 },
    { "Avg (ns)", "avg_ns", TT_COL_NS, 0, TT_ALIGN_CENTER, 12, 3, 1, 0, 0 },
    { "Med (ns)", "med_ns", TT_COL_NS, 0, TT_ALIGN_CENTER, 12, 1, 1, 0, 0 },
    { "Min (ns)", "min_ns", TT_COL_NS, 0, TT_ALIGN_LEFT, 10, 0, 0, 0, 0 },
    { "Max (ns)", "max_ns", TT_COL_NS, 0, TT_ALIGN_LEFT, 10, 0, 0, 0, 0 },
    { "StdDev (ns)", "stddev_ns", TT_COL_NS, 0, 0, 11, 3, 1, 0, 0 },
    { "Total (MB)", "bytes", TT_COL_BYTES, 0, TT_ALIGN_LEFT, 10, 0, 3, 1e6, 0 },
    { "GB/s", "gb_per_s", TT_COL_FLOAT, 0, TT_ALIGN_LEFT, 7, 3, 2, 0, 0 },
    { "Name", "name", TT_COL_TEXT, 0, 0, 50, 0, 0, 0, TT_COL_QUOTE },
    { "Num Calls", "count", TT_COL_INT, 0, 0, 9, 0, 0, 0, 0 },
    { "Count", "count", TT_COL_INT, 0, 0, 9, 0, 0, 0, 0 },
    { "Avg (MB)", "avg_bytes", TT_COL_BYTES, 0, 0, 10, 3, 3, 1e6, 0 },
    { "Med (MB)", "med_bytes", TT_COL_BYTES, 0, 0, 10, 1, 3, 1e6, 0 },
    { "Min (MB)", "min_bytes", TT_COL_BYTES, 0, 0, 10, 0, 3, 1e6, 0 },
    { "Max (MB)", "max_bytes", TT_COL_BYTES, 0, 0, 10, 0, 3, 1e6, 0 },
    { "StdDev (MB)", "stddev_bytes", TT_COL_BYTES, 0, 0, 11, 3, 3, 1e6, 0 },
    { "Operation", "name", TT_COL_TEXT, 0, 0, 20, 0, 0, 0, TT_COL_QUOTE },
    { "Launches", "launches", TT_COL_INT, 0, 0, 8, 0, 0, 0, 0 },
    { "Delay Avg (ns)", "delay_avg_ns", TT_COL_NS, 0, 0, 14, 3, 1, 0, 0 },
    { "Delay Min (ns)", "delay_min_ns", TT_COL_NS, 0, 0, 14, 0, 0, 0, 0 },
    { "Delay Max (ns)", "delay_max_ns", TT_COL_NS, 0, 0, 14, 0, 0, 0, 0 },
    { "Count", "count", TT_COL_INT, 0, 0, 7, 0, 0, 0, 0 },
    { "Len", "length", TT_COL_INT, 0, 0, 3, 0, 0, 0, 0 },
    { "GPU Time (ns)", "gpu_ns", TT_COL_NS, 0, 0, 13, 0, 0, 0, 0 },
    { "CPU Time (ns)", "cpu_ns", TT_COL_NS, 0, 0, 13, 0, 0, 0, 0 },
    { "Sequence", "pattern", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, TT_COL_QUOTE },
    { "Ops", "ops", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, TT_COL_QUOTE },
};

/* the columns of one layout per kind of summary: text/markdown, CSV, JSON */
struct layout {
    const size_t *text, *csv, *json;
    size_t ntext, ncsv, njson;
};
#define NCOLS(a) (sizeof(a) / sizeof((a)[0]))
#define LAYOUT(t, c, j) { t, c, j, NCOLS(t), NCOLS(c), NCOLS(j) }

static const size_t text_kern[] = { C_PCT, C_TOTAL, C_N, C_AVG, C_MED, C_MIN, C_MAX, C_SD,
                                    C_NAME };
static const size_t text_mem[] = { C_PCT, C_TOTAL, C_N, C_AVG, C_MED, C_MIN, C_MAX, C_SD,
                                   C_BYTES, C_GBPS, C_NAME };
static const size_t csv_cols[] = { C_TRACE, C_WHAT, C_PCT, C_TOTAL, C_N, C_AVG, C_MED,
                                   C_MIN, C_MAX, C_SD, C_BYTES, C_GBPS, C_NAME };
static const size_t json_kern[] = { C_NAME, C_PCT, C_TOTAL, C_N, C_AVG, C_MED, C_MIN,
                                    C_MAX, C_SD };
static const size_t json_mem[] = { C_NAME, C_PCT, C_TOTAL, C_N, C_AVG, C_MED, C_MIN,
                                   C_MAX, C_SD, C_BYTES, C_GBPS };
static const size_t text_rt[] = { C_PCT, C_TOTAL, C_CALLS, C_AVG, C_MED, C_MIN, C_MAX, C_SD,
                                  C_NAME };
static const size_t csv_rt[] = { C_TRACE, C_WHAT, C_PCT, C_TOTAL, C_CALLS, C_AVG, C_MED,
                                 C_MIN, C_MAX, C_SD, C_NAME };
static const size_t text_size[] = { C_BYTES, C_COUNT_B, C_AVG_B, C_MED_B, C_MIN_B, C_MAX_B,
                                    C_SD_B, C_OPER };
static const size_t csv_size[] = { C_TRACE, C_WHAT, C_BYTES, C_COUNT_B, C_AVG_B, C_MED_B,
                                   C_MIN_B, C_MAX_B, C_SD_B, C_OPER };
static const size_t json_size[] = { C_OPER, C_BYTES, C_COUNT_B, C_AVG_B, C_MED_B, C_MIN_B,
                                    C_MAX_B, C_SD_B };

/* --by op: the launch delays too */
static const size_t text_op[] = { C_PCT, C_TOTAL, C_N, C_AVG, C_MED, C_MIN, C_MAX, C_SD,
                                  C_DAVG, C_DMIN, C_DMAX, C_NAME };
static const size_t csv_op[] = { C_TRACE, C_WHAT, C_PCT, C_TOTAL, C_N, C_AVG, C_MED, C_MIN,
                                 C_MAX, C_SD, C_BYTES, C_GBPS, C_LAUNCH, C_DAVG, C_DMIN, C_DMAX,
                                 C_NAME };
static const size_t json_op[] = { C_NAME, C_PCT, C_TOTAL, C_N, C_AVG, C_MED, C_MIN,
                                  C_MAX, C_SD, C_LAUNCH, C_DAVG, C_DMIN, C_DMAX };

/* --sequences */
static const size_t text_seq[] = { C_SEQ_N, C_SEQ_LEN, C_SEQ_GPU, C_SEQ_CPU, C_SEQ, C_SEQ_OPS };
static const size_t csv_seq[] = { C_TRACE, C_SEQ_N, C_SEQ_LEN, C_SEQ_GPU, C_SEQ_CPU, C_SEQ,
                                  C_SEQ_OPS };
static const size_t json_seq[] = { C_SEQ, C_SEQ_OPS, C_SEQ_N, C_SEQ_LEN, C_SEQ_GPU, C_SEQ_CPU };

static const struct layout layout_kern = LAYOUT(text_kern, csv_cols, json_kern);
static const struct layout layout_seq = LAYOUT(text_seq, csv_seq, json_seq);
static const struct layout layout_op = LAYOUT(text_op, csv_op, json_op);
static const struct layout layout_mem = LAYOUT(text_mem, csv_cols, json_mem);
static const struct layout layout_rt = LAYOUT(text_rt, csv_rt, json_kern);
static const struct layout layout_size = LAYOUT(text_size, csv_size, json_size);

static const struct layout *layout_of(const tt_kern_summary *s)
{
    if (s->by == TT_KERN_BY_RUNTIME)
        return &layout_rt;
    if (s->by == TT_KERN_BY_MEMSIZE)
        return &layout_size;
    if (s->by == TT_KERN_BY_OP && !s->memory)
        return &layout_op;
    if (s->by == TT_KERN_BY_SEQUENCE)
        return &layout_seq;
    return s->memory ? &layout_mem : &layout_kern;
}

/* the summary's kind: CSV's `what`, JSON's "what" */
static const char *what_name(const tt_kern_summary *s)
{
    if (s->by == TT_KERN_BY_RUNTIME)
        return "runtime";
    if (s->by == TT_KERN_BY_MEMSIZE)
        return "memory_size";
    if (s->by == TT_KERN_BY_SEQUENCE)
        return "sequences";
    return s->memory ? "memory" : "kernels";
}

static void set_row(tt_table *t, const tt_kern_summary *s, const tt_kern_row *x)
{
    tt_table_set_int(t, C_TRACE, s->trace_id);
    tt_table_set_int(t, C_N, x->instances);
    tt_table_set_int(t, C_CALLS, x->instances);
    tt_table_set_int(t, C_COUNT_B, x->instances);
    tt_table_set_int(t, C_BYTES, x->bytes);
    if (s->by == TT_KERN_BY_MEMSIZE) {
        tt_table_set_float(t, C_AVG_B, x->avg_bytes);
        tt_table_set_float(t, C_MED_B, x->med_bytes);
        tt_table_set_int(t, C_MIN_B, x->min_bytes);
        tt_table_set_int(t, C_MAX_B, x->max_bytes);
        tt_table_set_float(t, C_SD_B, x->stddev_bytes);
        return;
    }
    tt_table_set_float(t, C_PCT, x->time_pct);
    tt_table_set_int(t, C_TOTAL, x->total_ns);
    tt_table_set_float(t, C_AVG, x->avg_ns);
    tt_table_set_float(t, C_MED, x->med_ns);
    tt_table_set_int(t, C_MIN, x->min_ns);
    tt_table_set_int(t, C_MAX, x->max_ns);
    tt_table_set_float(t, C_SD, x->stddev_ns);
    tt_table_set_float(t, C_GBPS, x->gb_per_s);
    tt_table_set_int(t, C_LAUNCH, x->launches);
    if (x->launches) { /* null without a launch */
        tt_table_set_float(t, C_DAVG, x->delay_avg_ns);
        tt_table_set_int(t, C_DMIN, x->delay_min_ns);
        tt_table_set_int(t, C_DMAX, x->delay_max_ns);
    }
}

/* row k of the summary (BY_SEQUENCE: its sequence k); 0 or TT_ENOMEM */
static int add_row(tt_table *t, const tt_kern_summary *s, size_t k)
{
    const tt_kern_seq *q = s->by == TT_KERN_BY_SEQUENCE ? &s->seqs[k] : NULL;
    const tt_kern_row *x = q ? NULL : &s->rows[k];
    if (tt_table_add_row(t) < 0 || tt_table_set_text(t, C_WHAT, what_name(s)) < 0)
        return TT_ENOMEM;
    if (q) {
        tt_table_set_int(t, C_TRACE, s->trace_id);
        tt_table_set_int(t, C_SEQ_N, q->count);
        tt_table_set_int(t, C_SEQ_LEN, q->length);
        tt_table_set_int(t, C_SEQ_GPU, q->gpu_ns);
        tt_table_set_int(t, C_SEQ_CPU, q->cpu_ns);
        return tt_table_set_text(t, C_SEQ, q->pattern) < 0 ||
                       tt_table_set_text(t, C_SEQ_OPS, q->ops) < 0
                   ? TT_ENOMEM
                   : 0;
    }
    if (tt_table_set_text(t, C_NAME, x->name) < 0 || tt_table_set_text(t, C_OPER, x->name) < 0)
        return TT_ENOMEM;
    set_row(t, s, x);
    return 0;
}

static tt_table *summary_table(const tt_kern_summary *s)
{
    tt_table *t = tt_table_new(kern_cols, C_COUNT);
    size_t k, n = s->by == TT_KERN_BY_SEQUENCE ? s->nseqs : s->nrows;
    for (k = 0; t && k < n; k++)
        if (add_row(t, s, k) < 0) {
            tt_table_free(t);
            return NULL;
        }
    return t;
}

static const char *by_name(int by)
{
    return by == TT_KERN_BY_LAUNCH     ? "launch"
           : by == TT_KERN_BY_STREAM   ? "stream"
           : by == TT_KERN_BY_OP       ? "op"
           : by == TT_KERN_BY_SEQUENCE ? "sequence"
                                       : "name";
}

static const char *title_of(const tt_kern_summary *s, const tt_kern_options *o, tt_buf *b)
{
    if (s->by == TT_KERN_BY_SEQUENCE && o->seq_op && *o->seq_op)
        return tt_buf_addf(b, "GPU activity sequences (at least %" PRId64 ") under each "
                              "outermost op whose name contains \"%s\"", o->seq_len, o->seq_op),
               b->buf;
    if (s->by == TT_KERN_BY_SEQUENCE)
        return tt_buf_addf(b, "Sequences of %" PRId64 " consecutive GPU activities on a stream",
                           o->seq_len),
               b->buf;
    if (s->by == TT_KERN_BY_RUNTIME)
        return "CUDA/HIP runtime call summary";
    if (s->by == TT_KERN_BY_MEMSIZE)
        return "GPU memory operation summary by size";
    return s->memory ? "GPU memory operation summary" : "GPU kernel summary";
}

/* The lines above a summary's table (text, Markdown). */
static void print_head(const tt_kern_summary *s, const tt_kern_options *o, FILE *out, int first)
{
    tt_buf h = TT_BUF_INIT;
    if (o->format == TT_FORMAT_MARKDOWN) {
        fprintf(out, "%s### %s, trace %" PRId64 ": ", first ? "" : "\n", title_of(s, o, &h),
                s->trace_id);
        tt_table_markdown_text(out, s->path);
        fputs("\n\n", out);
    } else if (o->format != TT_FORMAT_CSV) {
        tt_buf v = TT_BUF_INIT;
        fprintf(out, "%s%s, trace %" PRId64 ": %s\n\n", first ? "" : "\n", title_of(s, o, &h),
                s->trace_id, tt_visible(&v, s->path));
        tt_buf_release(&v);
    }
    tt_buf_release(&h);
}

/* JSON: a summary's object, its rows under "rows" */
static int print_json_summary(const tt_kern_summary *s, const tt_kern_options *o, tt_jw *w,
                              int first)
{
    tt_table_write_options wo = TT_TABLE_WRITE_OPTIONS_INIT;
    const struct layout *l = layout_of(s);
    int size = s->by == TT_KERN_BY_MEMSIZE;
    tt_table *t = summary_table(s);
    int rc;
    if (!t)
        return tt__oom();
    if (!first)
        tt_jw_nl(w, 0);
    tt_jw_obj(w);
    tt_jw_kint(w, "trace_id", s->trace_id);
    tt_jw_kstr(w, "path", s->path);
    tt_jw_kstr(w, "what", what_name(s));
    tt_jw_kstr(w, "group_by", s->memory ? "kind" : by_name(s->by));
    if (s->by == TT_KERN_BY_SEQUENCE) {
        tt_jw_kint(w, "sequence_length", o->seq_len);
        tt_jw_kstr(w, "under_op", o->seq_op && *o->seq_op ? o->seq_op : NULL);
        tt_jw_kint(w, "sequences", s->ngroups);
    }
    tt_jw_kint(w, size ? "total_bytes" : "total_ns", size ? s->total_bytes : s->total_ns);
    wo.cols = l->json;
    wo.ncols = l->njson;
    rc = tt__table_json_array(t, &wo, w, "rows", 2);
    tt_jw_end(w);
    tt_table_free(t);
    return rc;
}

static int print_summary(const tt_kern_summary *s, const tt_kern_options *o, FILE *out,
                         int first)
{
    tt_table_write_options w = TT_TABLE_WRITE_OPTIONS_INIT;
    const struct layout *l = layout_of(s);
    tt_table *t;
    int rc;
    print_head(s, o, out, first);
    if (o->format == TT_FORMAT_MARKDOWN && s->ngroups == 0) {
        fputs("(none)\n", out);
        return 0;
    }
    if (!(t = summary_table(s)))
        return tt__oom();
    switch (o->format) {
    case TT_FORMAT_CSV:
        w.format = TT_FORMAT_CSV;
        w.cols = l->csv;
        w.ncols = l->ncsv;
        w.no_header = !first;
        break;
    default:
        w.format = o->format == TT_FORMAT_MARKDOWN ? TT_FORMAT_MARKDOWN : TT_FORMAT_TABLE;
        w.cols = l->text;
        w.ncols = l->ntext;
        w.indent = " ";
    }
    rc = tt_table_write(t, &w, out);
    tt_table_free(t);
    if (o->format == TT_FORMAT_TABLE && s->ngroups == 0)
        fputs(" (none)\n", out);
    return rc;
}

/* ---- the selected traces ---- */

static int collect_one(tt_kern_result *res, tt_kern_summary *s)
{
    size_t alloc = res->nsummaries; /* grows one by one: few summaries */
    if (TT_ALLOC_GROW(res->summaries, res->nsummaries + 1, alloc) < 0) {
        tt__kern_summary_release(s);
        return tt__oom();
    }
    res->summaries[res->nsummaries++] = *s;
    return 0;
}

struct sums {
    const tt_kern_options *o;
    tt_kern_result *res;
};

static void sums_drop(void *ctx, void *r)
{
    tt_kern_summary *two = r;
    (void)ctx;
    if (!two)
        return;
    tt__kern_summary_release(&two[0]);
    tt__kern_summary_release(&two[1]);
    free(two);
}

static int sums_read(void *ctx, const char *path, tt_db *db, int64_t id, tt__rows_result *res,
                     void **r)
{
    struct sums *x = ctx;
    tt_kern_summary *two = calloc(2, sizeof(*two));
    int rc;
    if (!two)
        return tt__oom();
    rc = x->o->version >= 3 && x->o->by == TT_KERN_BY_SEQUENCE
             ? tt__kern_seq_trace(x->o, path, db, id, two, res)
             : tt__kern_trace(x->o, path, db, id, two, res);
    if (rc < 0) {
        sums_drop(ctx, two);
        return rc;
    }
    *r = two;
    return 0;
}

/* the wanted summaries of a trace into the result, in order */
static int sums_take(void *ctx, void *r, int64_t id, const char *path)
{
    struct sums *x = ctx;
    tt_kern_summary *two = r;
    int rc = 0, m;
    for (m = 0; m < 2; m++) {
        two[m].trace_id = id;
        if (rc == 0 && tt__kern_wants(x->o, m)) {
            if (!(two[m].path = strdup(path)))
                rc = tt__oom();
            else
                rc = collect_one(x->res, &two[m]);
        } else {
            tt__kern_summary_release(&two[m]);
        }
    }
    free(two);
    return rc;
}

void tt_kern_result_free(tt_kern_result *res)
{
    size_t i;
    if (!res)
        return;
    for (i = 0; i < res->nsummaries; i++)
        tt__kern_summary_release(&res->summaries[i]);
    free(res->summaries);
    res->summaries = NULL;
    res->nsummaries = 0;
}

/* BY_RUNTIME, BY_MEMSIZE: an error when no summary has a row */
static int check_found(const tt_kern_result *res, const tt_kern_options *o, const char *src,
                       int file)
{
    size_t i;
    if (o->by != TT_KERN_BY_RUNTIME && o->by != TT_KERN_BY_MEMSIZE && o->by != TT_KERN_BY_SEQUENCE)
        return 0;
    for (i = 0; i < res->nsummaries; i++)
        if (res->summaries[i].ngroups)
            return 0;
    return tt__kern_nothing(src, file, o);
}

static int not_activities(void)
{
    return tt_error_set(TT_EINVALID, "kernels --by activity has no summary (see "
                                     "tt_kernels_db_activities)");
}

/* the summaries of input (a file or a directory; db NULL) or of db */
static int result_of(const char *input, tt_db *db, const tt_kern_options *o,
                     tt_kern_result *res)
{
    struct sums x;
    struct tt__visit v;
    int rc;
    memset(res, 0, sizeof(*res));
    if (o->by == TT_KERN_BY_ACTIVITY)
        return not_activities();
    x.o = o;
    x.res = res;
    v.ctx = &x;
    v.read = sums_read;
    v.take = sums_take;
    v.drop = sums_drop;
    rc = tt__kern_each(o, input, db, &v);
    if (rc == 0 && db)
        rc = check_found(res, o, db->source ? db->source : db->path, db->source != NULL);
    else if (rc == 0)
        rc = check_found(res, o, input, 1);
    if (rc < 0)
        tt_kern_result_free(res);
    return rc;
}

int tt_kernels_db_result(tt_db *db, const tt_kern_options *o, tt_kern_result *res)
{
    return result_of(NULL, db, o, res);
}

int tt_kernels_file_result(const char *path, const tt_kern_options *opts, tt_kern_result *res)
{
    return result_of(path, NULL, opts, res);
}

int tt_kern_result_print(const tt_kern_result *res, const tt_kern_options *o, FILE *out)
{
    size_t i;
    int rc = 0;
    if (o->format == TT_FORMAT_JSON) {
        tt_jw w;
        tt_jw_init_file(&w, out, TT_JW_LINE);
        tt_jw_obj(&w);
        tt_jw_karr(&w, "summaries");
        for (i = 0; rc == 0 && i < res->nsummaries; i++)
            rc = print_json_summary(&res->summaries[i], o, &w, i == 0);
        tt_jw_nl(&w, 0);
        tt_jw_end(&w);
        tt_jw_end(&w);
        if (tt_jw_finish(&w) == TT_ENOMEM && rc == 0)
            rc = tt__oom();
        return rc;
    }
    for (i = 0; rc == 0 && i < res->nsummaries; i++)
        rc = print_summary(&res->summaries[i], o, out, i == 0);
    return rc;
}

int tt_kernels_db(tt_db *db, const tt_kern_options *o, FILE *out)
{
    tt_kern_result res;
    int rc;
    if (o->by == TT_KERN_BY_ACTIVITY)
        return tt__kern_print_activities(NULL, db, o, out);
    if ((rc = tt_kernels_db_result(db, o, &res)) < 0)
        return rc;
    rc = tt_kern_result_print(&res, o, out);
    tt_kern_result_free(&res);
    return rc;
}

int tt_kernels_file(const char *path, const tt_kern_options *opts, FILE *out)
{
    tt_kern_result res;
    int rc;
    if (opts->by == TT_KERN_BY_ACTIVITY)
        return tt__kern_print_activities(path, NULL, opts, out);
    if ((rc = tt_kernels_file_result(path, opts, &res)) < 0)
        return rc;
    rc = tt_kern_result_print(&res, opts, out);
    tt_kern_result_free(&res);
    return rc;
}
