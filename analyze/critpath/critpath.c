/*
 * analyze/critpath/critpath.c - `tracetool critical-path`: the public
 * calls (tracetool/critpath.h), the one trace chosen (--trace, --rank:
 * analyze/input/each.c), and the printing through the table writer.
 *
 * A trace is read (critpath_read.c), and when it is the one chosen, its
 * window is analysed at once (graph, longest path); the overlay, when
 * asked for, is written once the input has no other trace chosen.
 */
#include "common/compat.h"
#include "analyze/critpath/critpath_state.h"
#include "analyze/input/each.h"
#include "analyze/filter/filtering.h"
#include "common/buf.h"
#include "common/tmath.h"
#include "report/table_json.h"
#include "store/db_internal.h"
#include "tracetool/table.h"

#include <inttypes.h>

void tt_cp_result_free(tt_cp_result *res)
{
    size_t i;
    if (!res)
        return;
    for (i = 0; i < res->nnames; i++)
        free(res->names[i]);
    free(res->names);
    free(res->segments);
    free(res->path);
    free(res->window_op);
    memset(res, 0, sizeof(*res));
}

/* ---- the trace chosen ---- */

struct pick {
    const tt_cp_options *o;
    const regex_t *data_load;
    tt__flt *fl;        /* --name, --under (NULL: neither) */
    const char *src;    /* the input, for messages */
    tt_cp_result *res;
    int analysed;       /* traces chosen so far */
};

static void pick_drop(void *ctx, void *r)
{
    (void)ctx;
    if (r) {
        tt__cp_run_release(r);
        free(r);
    }
}

static int chosen(const struct pick *x, const tt__rows_result *res)
{
    return (res->format == TT_FMT_CHROME || res->format == TT_FMT_CHROME_ARRAY) &&
           (x->o->rank < 0 || (res->have_rank && res->rank == x->o->rank));
}

static int analyse(struct pick *x, struct cp_run *run, const char *src)
{
    int rc;
    if (x->analysed++)
        return tt_error_set_at(TT_EINVALID, x->src, -1, "critical-path takes one trace, and "
                               "several are in the input: choose one with --rank or --trace");
    if ((rc = tt__cp_window(run, src)) < 0 || (rc = tt__cp_graph(run)) < 0)
        return rc;
    return tt__cp_longest(run);
}

static int pick_read(void *ctx, const char *path, tt_db *db, int64_t id, tt__rows_result *res,
                     void **r)
{
    struct pick *x = ctx;
    struct cp_run *run = calloc(1, sizeof(*run));
    int rc;
    if (!run)
        return tt__oom();
    run->o = x->o;
    run->data_load = x->data_load;
    run->fl = x->fl;
    rc = tt__cp_read(run, path, db, id);
    *res = run->rres;
    res->metadata = NULL;
    if (rc == 0 && chosen(x, res))
        rc = analyse(x, run, db ? x->src : path);
    if (rc < 0) {
        pick_drop(ctx, run);
        return rc;
    }
    *r = run;
    return 0;
}

static int pick_take(void *ctx, void *r, int64_t id, const char *path)
{
    struct pick *x = ctx;
    struct cp_run *run = r;
    int rc = 0;
    x->res->trace_id = id;
    if (x->o->overlay)
        rc = tt__cp_overlay(run, x->o->overlay);
    if (rc == 0 && !(x->res->path = strdup(path)))
        rc = tt__oom();
    if (rc == 0)
        rc = tt__cp_result(run, x->res);
    pick_drop(ctx, run);
    return rc;
}

/* the data_load patterns compiled into re[0..n) */
static int compile_patterns(const tt_cp_options *o, regex_t **re)
{
    size_t i;
    int err;
    *re = NULL;
    if (!o->ndata_load)
        return 0;
    if (!(*re = calloc(o->ndata_load, sizeof(**re))))
        return tt__oom();
    for (i = 0; i < o->ndata_load; i++)
        if ((err = regcomp(&(*re)[i], o->data_load[i], REG_EXTENDED | REG_NOSUB)) != 0) {
            char msg[160];
            size_t k;
            regerror(err, &(*re)[i], msg, sizeof(msg));
            for (k = 0; k < i; k++)
                regfree(&(*re)[k]);
            free(*re);
            *re = NULL;
            return tt_error_set(TT_EINVALID, "bad data-load pattern '%s': %s", o->data_load[i],
                                msg);
        }
    return 0;
}

/* --name and --under (version 2) compiled into *fl (NULL: neither) */
static int filter_of(const tt_cp_options *o, tt__flt **fl)
{
    tt_filter nu = TT_FILTER_INIT; /* the time range: the window's (critpath_read.c) */
    *fl = NULL;
    if (o->version < 2 && (o->filter.name || o->filter.under))
        return tt_error_set(TT_EINVALID, "critical-path: --name and --under need options "
                                         "version 2");
    if (o->version < 2)
        return 0;
    if (o->filter.under && o->step_set)
        return tt_error_set(TT_EINVALID, "critical-path: --step and --under both choose the "
                                         "window (--under 'ProfilerStep#N' is --step N)");
    if (o->filter.under && (o->instance_from < 0 || o->instance_to < o->instance_from))
        return tt_error_set(TT_EINVALID, "critical-path: instances %" PRId64 "-%" PRId64
                            " (want 0 <= A <= B)", o->instance_from, o->instance_to);
    nu.name = o->filter.name;
    nu.under = o->filter.under;
    return tt__flt_new(fl, &nu);
}

static int result_of(const char *input, tt_db *db, const tt_cp_options *o, tt_cp_result *res)
{
    struct pick x;
    struct tt__visit v;
    regex_t *re;
    tt__flt *fl;
    size_t i;
    int rc;
    memset(res, 0, sizeof(*res));
    if (o->version < 1)
        return tt_error_set(TT_EINVALID, "tt_cp_options: version %u", o->version);
    if ((rc = filter_of(o, &fl)) < 0)
        return rc;
    if ((rc = compile_patterns(o, &re)) < 0) {
        tt__flt_free(fl);
        return rc;
    }
    memset(&x, 0, sizeof(x));
    x.o = o;
    x.fl = fl;
    x.data_load = re;
    x.src = db ? (db->source ? db->source : db->path) : input;
    x.res = res;
    v.ctx = &x;
    v.read = pick_read;
    v.take = pick_take;
    v.drop = pick_drop;
    rc = tt__each_trace(o->trace_id, o->rank, input, db, &v);
    for (i = 0; re && i < o->ndata_load; i++)
        regfree(&re[i]);
    free(re);
    tt__flt_free(fl);
    if (rc < 0)
        tt_cp_result_free(res);
    return rc;
}

int tt_critpath_db_result(tt_db *db, const tt_cp_options *opts, tt_cp_result *res)
{
    return result_of(NULL, db, opts, res);
}

int tt_critpath_file_result(const char *path, const tt_cp_options *opts, tt_cp_result *res)
{
    return result_of(path, NULL, opts, res);
}

/* ---- printing ---- */

enum { C_WHAT, C_BOUND, C_NS, C_PCT, C_OFFSET, C_KIND, C_NAME, C_FROM, C_TO, C_FROM_NS,
       C_TO_NS, C_STREAM, C_COUNT };

static const tt_table_col cp_cols[C_COUNT] = {
    { "What", "what", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
    { "Bound by", "bound_by", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
    { "Time (ns)", "ns", TT_COL_NS, 0, 0, 0, 0, 0, 0, 0 },
    { "Share (%)", "pct", TT_COL_PCT, 0, 0, 0, 4, 1, 0, 0 },
    { "Offset (ns)", "offset_ns", TT_COL_NS, 0, 0, 0, 0, 0, 0, 0 },
    { "Kind", "kind", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
    { "Event", "name", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, TT_COL_QUOTE },
    { "From", "from", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, TT_COL_QUOTE },
    { "To", "to", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, TT_COL_QUOTE },
    { "From (ns)", "from_ns", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "To (ns)", "to_ns", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "Stream", "stream", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
};

static const size_t text_bd[] = { C_BOUND, C_NS, C_PCT };
static const size_t text_seg[] = { C_OFFSET, C_NS, C_KIND, C_BOUND, C_FROM, C_TO, C_NAME };
static const size_t csv_all[] = { C_WHAT, C_BOUND, C_NS, C_PCT, C_OFFSET, C_KIND, C_NAME,
                                  C_FROM, C_TO, C_FROM_NS, C_TO_NS, C_STREAM };
static const size_t json_seg[] = { C_FROM, C_TO, C_KIND, C_BOUND, C_NAME, C_NS, C_FROM_NS,
                                   C_TO_NS, C_OFFSET, C_STREAM };

#define NCOLS(a) (sizeof(a) / sizeof((a)[0]))

/* the categories in the order they are shown */
static const int bound_order[] = { TT_CP_CPU, TT_CP_DATA_LOADING, TT_CP_GPU_COMPUTE,
                                   TT_CP_GPU_COMM, TT_CP_KERNEL_KERNEL, TT_CP_LAUNCH };
#define NBOUND_SHOWN (sizeof(bound_order) / sizeof(bound_order[0]))

static tt_table *breakdown_table(const tt_cp_result *res)
{
    tt_table *t = tt_table_new(cp_cols, C_COUNT);
    size_t i;
    for (i = 0; t && i < NBOUND_SHOWN; i++) {
        int b = bound_order[i];
        if (tt_table_add_row(t) < 0 || tt_table_set_text(t, C_WHAT, "breakdown") < 0 ||
            tt_table_set_text(t, C_BOUND, tt_cp_bound_name(b)) < 0) {
            tt_table_free(t);
            return NULL;
        }
        tt_table_set_int(t, C_NS, res->bound_ns[b]);
        tt_table_set_float(t, C_PCT, res->length_ns ? 100.0 * (double)res->bound_ns[b] /
                                                          (double)res->length_ns
                                                    : 0.0);
    }
    return t;
}

/* the aligned table's From and To: a name cut to NODE_CUT bytes (at a
 * character's start) and "...", so one kernel's template arguments do not
 * widen every row; the whole names are in Event (the last column), CSV
 * and JSON */
#define NODE_CUT 40

static char *node_text(const char *event, int end, int cut)
{
    tt_buf b = TT_BUF_INIT;
    size_t n = strlen(event);
    if (cut && n > NODE_CUT) {
        n = NODE_CUT - 3;
        while (n > 0 && ((unsigned char)event[n] & 0xC0) == 0x80)
            n--;
        tt_buf_addf(&b, "%.*s... (%s)", (int)n, event, end ? "end" : "start");
    } else {
        tt_buf_addf(&b, "%s (%s)", event, end ? "end" : "start");
    }
    if (b.oom) {
        tt_buf_release(&b);
        return NULL;
    }
    return b.buf; /* the buffer's text, owned by the caller */
}

static int segment_row(tt_table *t, const tt_cp_result *res, const tt_cp_segment *s, int cut)
{
    char *from = node_text(s->from_event, s->from_end, cut),
         *to = node_text(s->to_event, s->to_end, cut);
    int rc = from && to ? 0 : TT_ENOMEM;
    if (rc == 0 && (tt_table_add_row(t) < 0 || tt_table_set_text(t, C_WHAT, "segment") < 0 ||
                    tt_table_set_text(t, C_BOUND, tt_cp_bound_name(s->bound)) < 0 ||
                    tt_table_set_text(t, C_KIND, tt_cp_edge_name(s->kind)) < 0 ||
                    tt_table_set_text(t, C_NAME, s->name) < 0 ||
                    tt_table_set_text(t, C_FROM, from) < 0 || tt_table_set_text(t, C_TO, to) < 0))
        rc = TT_ENOMEM;
    free(from);
    free(to);
    if (rc < 0)
        return tt__oom();
    tt_table_set_int(t, C_NS, s->ns);
    tt_table_set_int(t, C_OFFSET, tt_sat_sub(s->from_ns, res->start_ns));
    tt_table_set_int(t, C_FROM_NS, s->from_ns);
    tt_table_set_int(t, C_TO_NS, s->to_ns);
    if (s->gpu)
        tt_table_set_int(t, C_STREAM, s->stream);
    return 0;
}

/* segments [first, first + n) (a table of all of them for aligned text;
 * the other formats take them SEG_CHUNK at a time: the table writer holds
 * a row's cells, more than a segment) */
#define SEG_CHUNK 4096

static tt_table *segment_table(const tt_cp_result *res, size_t first, size_t n, int cut)
{
    tt_table *t = tt_table_new(cp_cols, C_COUNT);
    size_t i;
    for (i = first; t && i < first + n && i < res->nsegments; i++)
        if (segment_row(t, res, &res->segments[i], cut) < 0) {
            tt_table_free(t);
            return NULL;
        }
    return t;
}

static void window_text(const tt_cp_result *res, tt_buf *b)
{
    if (res->step >= 0)
        tt_buf_addf(b, "ProfilerStep#%" PRId64, res->step);
    else if (res->window_op && res->instance_from == res->instance_to)
        tt_buf_addf(b, "%s, instance %" PRId64 " of %" PRId64 " matching --under",
                    res->window_op, res->instance_from, res->instances);
    else if (res->window_op)
        tt_buf_addf(b, "%s, instances %" PRId64 "-%" PRId64 " of %" PRId64 " matching --under",
                    res->window_op, res->instance_from, res->instance_to, res->instances);
    else
        tt_buf_addstr(b, "the whole trace");
    if (res->have_rank)
        tt_buf_addf(b, ", rank %" PRId64, res->rank);
}

/* the lines above the tables (text, Markdown) */
static void print_head(const tt_cp_result *res, const tt_cp_options *o, int md, FILE *out)
{
    tt_buf b = TT_BUF_INIT, v = TT_BUF_INIT;
    window_text(res, &b);
    if (md) {
        fprintf(out, "### Critical path, trace %" PRId64 " (%s): ", res->trace_id, b.buf);
        tt_table_markdown_text(out, res->path);
        fputs("\n\n", out);
    } else {
        fprintf(out, "Critical path, trace %" PRId64 " (%s): %s\n", res->trace_id, b.buf,
                tt_visible(&v, res->path));
    }
    fprintf(out, "%sLength %" PRId64 " ns over %zu nodes (graph: %zu nodes, %zu edges; %zu "
                 "events in the window)\n\n",
            md ? "" : " ", res->length_ns, res->path_segments + 1, res->graph_nodes,
            res->graph_edges, res->events);
    if (o->version >= 2 && o->filter.name)
        fprintf(out, "%s%zu of its %zu segments at an event matching --name: %" PRId64
                     " ns (%.1f%% of the length)\n\n",
                md ? "" : " ", res->nsegments, res->path_segments, res->shown_ns,
                res->length_ns ? 100.0 * (double)res->shown_ns / (double)res->length_ns : 0.0);
    tt_buf_release(&b);
    tt_buf_release(&v);
}

static int write_table(const tt_table *t, int format, const size_t *cols, size_t n, int header,
                       FILE *out)
{
    tt_table_write_options w = TT_TABLE_WRITE_OPTIONS_INIT;
    w.format = format;
    w.cols = cols;
    w.ncols = n;
    w.no_header = !header;
    w.indent = format == TT_FORMAT_TABLE ? " " : NULL;
    return tt_table_write(t, &w, out);
}

/* the segments, a chunk at a time: JSON rows into w (w NULL: the format's
 * table, its header before the first chunk when header) */
static int write_segments(const tt_cp_result *res, int format, const size_t *cols, size_t n,
                          int header, tt_jw *w, FILE *out)
{
    tt_table_write_options wo = TT_TABLE_WRITE_OPTIONS_INIT;
    size_t first = 0;
    int rc = 0;
    wo.cols = cols;
    wo.ncols = n;
    wo.flags = TT_TABLE_JSON_SKIP_NULL;
    do {
        tt_table *t = segment_table(res, first, SEG_CHUNK, 0);
        if (!t)
            return tt__oom();
        rc = w ? tt__table_json_rows(t, &wo, w, 2)
               : write_table(t, format, cols, n, header && first == 0, out);
        tt_table_free(t);
        first += SEG_CHUNK;
    } while (rc == 0 && first < res->nsegments);
    return rc;
}

static void json_head(const tt_cp_result *res, tt_jw *w)
{
    size_t i;
    tt_jw_kint(w, "trace_id", res->trace_id);
    tt_jw_kstr(w, "path", res->path);
    tt_jw_key(w, "rank");
    if (res->have_rank)
        tt_jw_int(w, res->rank);
    else
        tt_jw_null(w);
    tt_jw_key(w, "step");
    if (res->step >= 0)
        tt_jw_int(w, res->step);
    else
        tt_jw_null(w);
    tt_jw_kint(w, "events", (int64_t)res->events);
    tt_jw_kint(w, "graph_nodes", (int64_t)res->graph_nodes);
    tt_jw_kint(w, "graph_edges", (int64_t)res->graph_edges);
    tt_jw_kint(w, "path_nodes", (int64_t)res->path_segments + 1);
    tt_jw_kint(w, "length_ns", res->length_ns);
    tt_jw_kint(w, "segments_shown", (int64_t)res->nsegments);
    tt_jw_kint(w, "shown_ns", res->shown_ns);
    tt_jw_key(w, "window_op");
    if (res->window_op) {
        tt_jw_str(w, res->window_op);
        tt_jw_kint(w, "instance_from", res->instance_from);
        tt_jw_kint(w, "instance_to", res->instance_to);
        tt_jw_kint(w, "instances", res->instances);
    } else {
        tt_jw_null(w);
    }
    tt_jw_kobj(w, "breakdown");
    for (i = 0; i < NBOUND_SHOWN; i++)
        tt_jw_kint(w, tt_cp_bound_name(bound_order[i]), res->bound_ns[bound_order[i]]);
    tt_jw_end(w);
}

static int print_json(const tt_cp_result *res, FILE *out)
{
    tt_jw w;
    int rc;
    tt_jw_init_file(&w, out, TT_JW_LINE);
    tt_jw_obj(&w);
    json_head(res, &w);
    tt_jw_karr(&w, "segments");
    rc = write_segments(res, TT_FORMAT_JSON, json_seg, NCOLS(json_seg), 0, &w, out);
    tt_jw_nl(&w, 0);
    tt_jw_end(&w);
    tt_jw_end(&w);
    if (tt_jw_finish(&w) < 0 && rc == 0)
        rc = TT_EIO;
    return rc;
}

int tt_critpath_print(const tt_cp_result *res, const tt_cp_options *o, FILE *out)
{
    tt_table *bd = breakdown_table(res), *seg = NULL;
    int rc = 0, md = o->format == TT_FORMAT_MARKDOWN;
    if (!bd) {
        rc = tt__oom();
    } else if (o->format == TT_FORMAT_JSON) {
        rc = print_json(res, out);
    } else if (o->format == TT_FORMAT_CSV) {
        if ((rc = write_table(bd, TT_FORMAT_CSV, csv_all, NCOLS(csv_all), 1, out)) == 0)
            rc = write_segments(res, TT_FORMAT_CSV, csv_all, NCOLS(csv_all), 0, NULL, out);
    } else {
        print_head(res, o, md, out);
        if ((rc = write_table(bd, md ? TT_FORMAT_MARKDOWN : TT_FORMAT_TABLE, text_bd,
                              NCOLS(text_bd), 1, out)) == 0)
            fputs("\n", out);
        if (rc == 0 && md)
            rc = write_segments(res, TT_FORMAT_MARKDOWN, text_seg, NCOLS(text_seg), 1, NULL, out);
        else if (rc == 0 && !(seg = segment_table(res, 0, res->nsegments, 1)))
            rc = tt__oom();
        else if (rc == 0)
            rc = write_table(seg, TT_FORMAT_TABLE, text_seg, NCOLS(text_seg), 1, out);
    }
    tt_table_free(bd);
    tt_table_free(seg);
    return rc;
}

static int print_of(const char *input, tt_db *db, const tt_cp_options *o, FILE *out)
{
    tt_cp_result res;
    int rc = result_of(input, db, o, &res);
    if (rc < 0)
        return rc;
    rc = tt_critpath_print(&res, o, out);
    tt_cp_result_free(&res);
    return rc;
}

int tt_critpath_db(tt_db *db, const tt_cp_options *opts, FILE *out)
{
    return print_of(NULL, db, opts, out);
}

int tt_critpath_file(const char *path, const tt_cp_options *opts, FILE *out)
{
    return print_of(path, NULL, opts, out);
}
