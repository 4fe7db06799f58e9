/*
 * tests/unit/test_reader.c - tt_read_trace_mem / tt__read_source over small
 * hand-written traces of every vintage, split reads, gzip and truncation.
 */
#include "common/compat.h"
#include "common/buf.h"
#include "common/hash.h"
#include "formats/reader_internal.h"
#include "formats/source.h"
#include "tracetool/formats.h"

#include <criterion/criterion.h>
#include <unistd.h>
#include <zlib.h>

/* ---- a sink that keeps deep copies of everything ---- */

static char *xdup(const char *s)
{
    return s ? strdup(s) : NULL;
}

static char *xdupn(const char *s, size_t n)
{
    char *d;
    if (!s)
        return NULL;
    d = malloc(n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

struct col {
    int nformat;
    tt_trace_format fmt;
    int events_before_format; /* events seen before on_format: must stay 0 */
    size_t nmeta;
    char *meta_key[32], *meta_json[32];
    size_t nev, aev;
    tt_event *ev;
    size_t nnode, anode;
    tt_et_node *node;
    size_t nrow, arow;
    tt_memrow *row;
    tt_buf log; /* canonical text of every callback, to compare reads */
    int stop_after; /* >0: on_event returns TT_ECANCELED-like code after n */
};

static void log_id(tt_buf *b, const char *what, const tt_id *id)
{
    if (!id->present)
        tt_buf_addf(b, " %s=-", what);
    else if (id->is_str)
        tt_buf_addf(b, " %s='%s'", what, id->str);
    else
        tt_buf_addf(b, " %s=%lld", what, (long long)id->num);
}

static int c_format(void *ctx, tt_trace_format f)
{
    struct col *c = ctx;
    c->nformat++;
    c->fmt = f;
    tt_buf_addf(&c->log, "format %s\n", tt_format_name(f));
    return 0;
}

static int c_meta(void *ctx, const char *key, const char *json, size_t len)
{
    struct col *c = ctx;
    cr_assert_eq(strlen(json), len, "meta '%s': len %zu but strlen %zu", key, len,
                 strlen(json));
    cr_assert_lt(c->nmeta, 32);
    c->meta_key[c->nmeta] = xdup(key);
    c->meta_json[c->nmeta] = xdupn(json, len);
    c->nmeta++;
    tt_buf_addf(&c->log, "meta %s=%.*s\n", key, (int)len, json);
    return 0;
}

static int c_event(void *ctx, const tt_event *e)
{
    struct col *c = ctx;
    tt_event *d;
    tt_buf *b = &c->log;
    if (!c->nformat)
        c->events_before_format++;
    if (e->args)
        cr_assert_eq(strlen(e->args), e->args_len);
    if (c->nev == c->aev) {
        c->aev = c->aev ? c->aev * 2 : 16;
        c->ev = realloc(c->ev, c->aev * sizeof(*c->ev));
    }
    d = &c->ev[c->nev++];
    *d = *e;
    d->name = xdup(e->name);
    d->cat = xdup(e->cat);
    d->pid.str = e->pid.is_str ? xdup(e->pid.str) : NULL;
    d->tid.str = e->tid.is_str ? xdup(e->tid.str) : NULL;
    d->id.str = e->id.is_str ? xdup(e->id.str) : NULL;
    d->bp = xdup(e->bp);
    d->s = xdup(e->s);
    d->input_dims = xdup(e->input_dims);
    d->input_types = xdup(e->input_types);
    d->arg_name = xdup(e->arg_name);
    d->arg_labels = xdup(e->arg_labels);
    d->args = e->args ? xdupn(e->args, e->args_len) : NULL;

    tt_buf_addf(b, "event #%lld @%lld ph=%c name='%s' cat=%s", (long long)e->index,
                (long long)e->offset, e->ph ? e->ph : '0', e->name,
                e->cat ? e->cat : "(null)");
    log_id(b, "pid", &e->pid);
    log_id(b, "tid", &e->tid);
    log_id(b, "id", &e->id);
    tt_buf_addf(b, " ts=%d:%lld dur=%d:%lld bp=%s s=%s have=%x", e->has_ts,
                (long long)e->ts_ns, e->has_dur, (long long)e->dur_ns,
                e->bp ? e->bp : "-", e->s ? e->s : "-", e->have);
    tt_buf_addf(b, " ext=%lld corr=%lld rf=%lld evidx=%lld seq=%lld fwd=%lld",
                (long long)e->external_id, (long long)e->correlation,
                (long long)e->rf_id, (long long)e->ev_idx, (long long)e->seq_nr,
                (long long)e->fwd_tid);
    tt_buf_addf(b, " dev=%lld str=%lld ctx=%lld cbid=%lld reg=%lld shm=%lld bytes=%lld",
                (long long)e->device, (long long)e->stream, (long long)e->context,
                (long long)e->cbid, (long long)e->registers, (long long)e->shared_mem,
                (long long)e->bytes);
    tt_buf_addf(b, " addr=%lld dt=%lld di=%lld ta=%lld tr=%lld si=%lld",
                (long long)e->addr, (long long)e->device_type, (long long)e->device_id,
                (long long)e->total_allocated, (long long)e->total_reserved,
                (long long)e->sort_index);
    if (e->have & TT_A_GRID)
        tt_buf_addf(b, " grid=%lld,%lld,%lld", (long long)e->grid[0],
                    (long long)e->grid[1], (long long)e->grid[2]);
    if (e->have & TT_A_BLOCK)
        tt_buf_addf(b, " block=%lld,%lld,%lld", (long long)e->block[0],
                    (long long)e->block[1], (long long)e->block[2]);
    tt_buf_addf(b, " dims=%s types=%s an=%s al=%s args=%s\n",
                e->input_dims ? e->input_dims : "-",
                e->input_types ? e->input_types : "-", e->arg_name ? e->arg_name : "-",
                e->arg_labels ? e->arg_labels : "-", e->args ? e->args : "-");
    if (c->stop_after && (int)c->nev >= c->stop_after)
        return TT_ECANCELED;
    return 0;
}

static int c_node(void *ctx, const tt_et_node *n)
{
    struct col *c = ctx;
    tt_et_node *d;
    if (c->nnode == c->anode) {
        c->anode = c->anode ? c->anode * 2 : 16;
        c->node = realloc(c->node, c->anode * sizeof(*c->node));
    }
    d = &c->node[c->nnode++];
    *d = *n;
    d->name = xdup(n->name);
    d->op_schema = xdup(n->op_schema);
    d->inputs = xdup(n->inputs);
    d->input_shapes = xdup(n->input_shapes);
    d->input_types = xdup(n->input_types);
    d->input_strides = xdup(n->input_strides);
    d->outputs = xdup(n->outputs);
    d->output_shapes = xdup(n->output_shapes);
    d->output_types = xdup(n->output_types);
    d->output_strides = xdup(n->output_strides);
    d->attrs = xdup(n->attrs);
    d->extra = xdup(n->extra);
    tt_buf_addf(&c->log,
                "node #%lld @%lld id=%lld name='%s' parent=%d:%lld have=%x rf=%lld "
                "fwp=%lld seq=%lld scope=%lld tid=%lld fwtid=%lld schema=%s in=%s "
                "ins=%s int=%s instr=%s out=%s outs=%s outt=%s outstr=%s attrs=%s "
                "extra=%s\n",
                (long long)n->index, (long long)n->offset, (long long)n->id, n->name,
                n->has_parent, (long long)n->parent, n->have, (long long)n->rf_id,
                (long long)n->fw_parent, (long long)n->seq_id, (long long)n->scope,
                (long long)n->tid, (long long)n->fw_tid,
                n->op_schema ? n->op_schema : "-", n->inputs ? n->inputs : "-",
                n->input_shapes ? n->input_shapes : "-",
                n->input_types ? n->input_types : "-",
                n->input_strides ? n->input_strides : "-", n->outputs ? n->outputs : "-",
                n->output_shapes ? n->output_shapes : "-",
                n->output_types ? n->output_types : "-",
                n->output_strides ? n->output_strides : "-", n->attrs ? n->attrs : "-",
                n->extra ? n->extra : "-");
    return 0;
}

static int c_row(void *ctx, const tt_memrow *m)
{
    struct col *c = ctx;
    if (c->nrow == c->arow) {
        c->arow = c->arow ? c->arow * 2 : 16;
        c->row = realloc(c->row, c->arow * sizeof(*c->row));
    }
    c->row[c->nrow++] = *m;
    tt_buf_addf(&c->log, "row #%lld ts=%lld action=%lld bytes=%lld cat=%d:%lld\n",
                (long long)m->index, (long long)m->ts, (long long)m->action,
                (long long)m->bytes, m->has_category, (long long)m->category);
    return 0;
}

static void col_free(struct col *c)
{
    size_t i;
    for (i = 0; i < c->nmeta; i++) {
        free(c->meta_key[i]);
        free(c->meta_json[i]);
    }
    for (i = 0; i < c->nev; i++) {
        tt_event *e = &c->ev[i];
        free((char *)e->name);
        free((char *)e->cat);
        free((char *)e->pid.str);
        free((char *)e->tid.str);
        free((char *)e->id.str);
        free((char *)e->bp);
        free((char *)e->s);
        free((char *)e->input_dims);
        free((char *)e->input_types);
        free((char *)e->arg_name);
        free((char *)e->arg_labels);
        free((char *)e->args);
    }
    for (i = 0; i < c->nnode; i++) {
        tt_et_node *n = &c->node[i];
        free((char *)n->name);
        free((char *)n->op_schema);
        free((char *)n->inputs);
        free((char *)n->input_shapes);
        free((char *)n->input_types);
        free((char *)n->input_strides);
        free((char *)n->outputs);
        free((char *)n->output_shapes);
        free((char *)n->output_types);
        free((char *)n->output_strides);
        free((char *)n->attrs);
        free((char *)n->extra);
    }
    free(c->ev);
    free(c->node);
    free(c->row);
    tt_buf_release(&c->log);
    memset(c, 0, sizeof(*c));
}

static tt_trace_sink sink_of(struct col *c)
{
    tt_trace_sink s;
    memset(&s, 0, sizeof(s));
    s.ctx = c;
    s.on_format = c_format;
    s.on_meta = c_meta;
    s.on_event = c_event;
    s.on_et_node = c_node;
    s.on_memrow = c_row;
    return s;
}

/* max_read < 0: tt_read_trace_mem; otherwise tt__read_source with that cap */
static int read_doc(const void *doc, size_t len, int max_read, struct col *c,
                    tt_read_stats *st)
{
    tt_trace_sink s;
    int rc;
    memset(c, 0, sizeof(*c));
    tt_buf_init(&c->log);
    s = sink_of(c);
    if (max_read < 0)
        return tt_read_trace_mem("mem.json", doc, len, &s, NULL, st);
    {
        tt_source *src;
        tt__init_stats(st);
        tt_error_clear();
        rc = tt_source_open_mem(&src, "mem.json", doc, len);
        if (rc < 0)
            return rc;
        tt_source_set_max_read(src, (size_t)max_read);
        rc = tt__read_source(src, &s, NULL, st);
        tt_source_free(src);
    }
    return rc;
}

static int read_str(const char *doc, int max_read, struct col *c, tt_read_stats *st)
{
    return read_doc(doc, strlen(doc), max_read, c, st);
}

#define MODES_N 4
static const int modes[MODES_N] = { -1, 0, 1, 3 };

static void streq_or_null(const char *got, const char *want, const char *what)
{
    if (!want) {
        cr_assert_null(got, "%s: expected NULL, got '%s'", what, got);
        return;
    }
    cr_assert_not_null(got, "%s: expected '%s', got NULL", what, want);
    cr_assert_str_eq(got, want, "%s", what);
}

/* Read doc in every mode; all must give the same callbacks. Returns the
 * collection of the first mode (caller frees). */
static int read_all_modes(const char *doc, struct col *out, tt_read_stats *st)
{
    int i, rc0 = 0;
    char *ref = NULL;
    for (i = 0; i < MODES_N; i++) {
        struct col c;
        tt_read_stats s;
        int rc = read_str(doc, modes[i], &c, &s);
        if (i == 0) {
            rc0 = rc;
            ref = xdupn(c.log.buf, c.log.len);
            *out = c;
            *st = s;
            continue;
        }
        cr_assert_eq(rc, rc0, "max_read %d: rc %d vs %d", modes[i], rc, rc0);
        cr_assert_str_eq(c.log.buf, ref, "max_read %d differs", modes[i]);
        cr_assert_eq(s.events, st->events);
        cr_assert_eq(s.bytes, st->bytes);
        cr_assert_str_eq(s.hash, st->hash);
        col_free(&c);
    }
    free(ref);
    return rc0;
}

/* ---- object form ---- */

Test(reader, object_form_meta_before_and_after)
{
    static const char doc[] =
        "{\n  \"schemaVersion\": 1,\n"
        "  \"deviceProperties\": [ { \"id\": 0, \"name\": \"H100\" } ],\n"
        "  \"distributedInfo\": { \"rank\" : 3, \"world_size\": 8 },\n"
        "  \"traceEvents\": [\n"
        "    {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::add\", \"pid\": 1, "
        "\"tid\": 2, \"ts\": 10, \"dur\": 5, \"args\": {\"External id\": 7}},\n"
        "    {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, "
        "\"tid\": 7, \"ts\": 12.5, \"dur\": 1.25}\n"
        "  ],\n"
        "  \"traceName\": \"t.json\",\n"
        "  \"displayTimeUnit\": \"ms\",\n"
        "  \"baseTimeNanoseconds\": 1700000000000000000\n"
        "}\n";
    static const char *const keys[] = { "schemaVersion", "deviceProperties",
                                        "distributedInfo", "traceName",
                                        "displayTimeUnit", "baseTimeNanoseconds" };
    static const char *const vals[] = { "1", "[{\"id\":0,\"name\":\"H100\"}]",
                                        "{\"rank\":3,\"world_size\":8}", "\"t.json\"",
                                        "\"ms\"", "1700000000000000000" };
    struct col c;
    tt_read_stats st;
    size_t i;
    int rc = read_all_modes(doc, &c, &st);
    cr_assert_eq(rc, 0, "%s", tt_error_last()->message);
    cr_assert_eq(c.nformat, 1);
    cr_assert_eq(c.fmt, TT_FMT_CHROME);
    cr_assert_eq(st.format, TT_FMT_CHROME);
    cr_assert_eq(c.events_before_format, 0);
    cr_assert_eq(c.nmeta, 6);
    for (i = 0; i < 6; i++) {
        cr_assert_str_eq(c.meta_key[i], keys[i]);
        cr_assert_str_eq(c.meta_json[i], vals[i], "meta %s", keys[i]);
    }
    cr_assert_eq(c.nev, 2);
    cr_assert_eq(st.events, 2);
    cr_assert_eq(st.bytes, (int64_t)strlen(doc));
    cr_assert_eq(st.file_bytes, (int64_t)strlen(doc));
    cr_assert_eq(st.gzip, 0);
    cr_assert_eq(st.truncated, 0);
    cr_assert_eq(st.repaired, 0);
    cr_assert_eq(st.skipped, 0);
    cr_assert_eq(st.first_repair_offset, -1);
    cr_assert_eq(st.first_skip_offset, -1);
    cr_assert_eq(c.ev[0].index, 0);
    cr_assert_eq(c.ev[1].index, 1);
    cr_assert_eq(c.ev[0].offset, strstr(doc, "{\"ph\": \"X\", \"cat\": \"cpu_op\"") - doc);
    cr_assert_eq(c.ev[1].offset, strstr(doc, "{\"ph\": \"X\", \"cat\": \"kernel\"") - doc);
    cr_assert_eq(c.ev[0].ph, 'X');
    cr_assert_str_eq(c.ev[0].name, "aten::add");
    cr_assert_str_eq(c.ev[0].cat, "cpu_op");
    cr_assert_eq(c.ev[0].ts_ns, 10000);
    cr_assert_eq(c.ev[0].dur_ns, 5000);
    cr_assert(c.ev[0].have & TT_A_EXTERNAL_ID);
    cr_assert_eq(c.ev[0].external_id, 7);
    cr_assert_null(c.ev[0].args);
    cr_assert_eq(c.ev[1].ts_ns, 12500);
    cr_assert_eq(c.ev[1].dur_ns, 1250);
    {
        /* the stats hash is the content hash of the bytes */
        tt_hash h;
        char hex[33];
        tt_hash_init(&h);
        tt_hash_update(&h, doc, strlen(doc));
        tt_hash_final_hex(&h, hex);
        cr_assert_str_eq(st.hash, hex);
    }
    col_free(&c);
}

Test(reader, object_form_key_order_and_trailing_commas)
{
    /* traceEvents first, then metadata; a trailing comma at top level */
    static const char doc[] =
        "{\"traceEvents\":[{\"ph\":\"i\",\"name\":\"a\",\"ts\":1,\"s\":\"g\"},],"
        "\"meta\":{\"x\":[1, 2 ,3]},}";
    struct col c;
    tt_read_stats st;
    int rc = read_all_modes(doc, &c, &st);
    cr_assert_eq(rc, 0, "%s", tt_error_last()->message);
    cr_assert_eq(c.nev, 1);
    cr_assert_eq(c.nmeta, 1);
    cr_assert_str_eq(c.meta_key[0], "meta");
    cr_assert_str_eq(c.meta_json[0], "{\"x\":[1,2,3]}");
    cr_assert_str_eq(c.ev[0].s, "g");
    cr_assert_eq(c.ev[0].ph, 'i');
    cr_assert_eq(st.repaired, 2);
    col_free(&c);
}

/* ---- bare array form, ids ---- */

Test(reader, array_form_string_tids)
{
    static const char doc[] =
        "[{\"ph\":\"X\",\"name\":\"a\",\"pid\":\"1234\",\"tid\":\"25738\",\"ts\":1,\"dur\":2},\n"
        " {\"ph\":\"X\",\"name\":\"b\",\"pid\":0,\"tid\":\"stream 7\",\"ts\":3.5,\"dur\":1},\n"
        " {\"ph\":\"i\",\"name\":\"c\",\"pid\":\"Spans\",\"tid\":-5,\"ts\":\"2.25\",\"s\":\"t\"},\n"
        " {\"ph\":\"s\",\"name\":\"f\",\"pid\":1,\"tid\":1,\"ts\":4,\"id\":\"0x1f\",\"bp\":\"e\"},\n"
        " {\"ph\":\"f\",\"name\":\"f\",\"pid\":1,\"tid\":1,\"ts\":5,\"id\":77}]";
    struct col c;
    tt_read_stats st;
    int rc = read_all_modes(doc, &c, &st);
    cr_assert_eq(rc, 0, "%s", tt_error_last()->message);
    cr_assert_eq(c.fmt, TT_FMT_CHROME_ARRAY);
    cr_assert_eq(c.nmeta, 0);
    cr_assert_eq(c.nev, 5);
    cr_assert(c.ev[0].pid.present && !c.ev[0].pid.is_str);
    cr_assert_eq(c.ev[0].pid.num, 1234);
    cr_assert(c.ev[0].tid.present && !c.ev[0].tid.is_str);
    cr_assert_eq(c.ev[0].tid.num, 25738);
    cr_assert(c.ev[1].tid.present && c.ev[1].tid.is_str);
    cr_assert_str_eq(c.ev[1].tid.str, "stream 7");
    cr_assert_eq(c.ev[1].pid.num, 0);
    cr_assert(!c.ev[1].pid.is_str);
    cr_assert_eq(c.ev[1].ts_ns, 3500);
    cr_assert(c.ev[2].pid.is_str);
    cr_assert_str_eq(c.ev[2].pid.str, "Spans");
    cr_assert_eq(c.ev[2].tid.num, -5);
    cr_assert(c.ev[2].has_ts);
    cr_assert_eq(c.ev[2].ts_ns, 2250);
    cr_assert_eq(c.ev[2].has_dur, 0);
    cr_assert(!c.ev[0].id.present);
    cr_assert(c.ev[3].id.present && c.ev[3].id.is_str);
    cr_assert_str_eq(c.ev[3].id.str, "0x1f");
    cr_assert_str_eq(c.ev[3].bp, "e");
    cr_assert(c.ev[4].id.present && !c.ev[4].id.is_str);
    cr_assert_eq(c.ev[4].id.num, 77);
    cr_assert_null(c.ev[4].bp);
    cr_assert_null(c.ev[0].cat);
    col_free(&c);
}

Test(reader, legacy_categories_and_keys)
{
    /* PyTorch 1.8 / legacy exporter: Operator, Kernel, Runtime, Memcpy; lower
     * case "external id" and "Input dims" */
    static const char doc[] =
        "[{\"name\":\"aten::mm\",\"ph\":\"X\",\"cat\":\"Operator\",\"ts\":100,\"dur\":50,"
        "\"pid\":\"3\",\"tid\":\"4\",\"args\":{\"external id\":11,\"Input dims\":[[2,3],[3,4]]}},"
        "{\"name\":\"cudaLaunchKernel\",\"ph\":\"X\",\"cat\":\"Runtime\",\"ts\":110,\"dur\":5,"
        "\"pid\":3,\"tid\":4,\"args\":{\"correlation\":21,\"external id\":11,\"cbid\":211}},"
        "{\"name\":\"volta_sgemm\",\"ph\":\"X\",\"cat\":\"Kernel\",\"ts\":120,\"dur\":30,"
        "\"pid\":0,\"tid\":\"stream 7\",\"args\":{\"correlation\":21,\"external id\":11,"
        "\"device\":0,\"stream\":7}},"
        "{\"name\":\"Memcpy HtoD\",\"ph\":\"X\",\"cat\":\"Memcpy\",\"ts\":130,\"dur\":3,"
        "\"pid\":0,\"tid\":\"stream 7\",\"args\":{\"bytes\":4096}}]";
    struct col c;
    tt_read_stats st;
    int rc = read_all_modes(doc, &c, &st);
    cr_assert_eq(rc, 0, "%s", tt_error_last()->message);
    cr_assert_eq(c.nev, 4);
    cr_assert_str_eq(c.ev[0].cat, "Operator");
    cr_assert(c.ev[0].have & TT_A_EXTERNAL_ID);
    cr_assert_eq(c.ev[0].external_id, 11);
    streq_or_null(c.ev[0].input_dims, "[[2,3],[3,4]]", "Input dims");
    cr_assert_null(c.ev[0].args);
    cr_assert_str_eq(c.ev[1].cat, "Runtime");
    cr_assert_eq(c.ev[1].have, TT_A_CORRELATION | TT_A_EXTERNAL_ID | TT_A_CBID);
    cr_assert_eq(c.ev[1].correlation, 21);
    cr_assert_eq(c.ev[1].cbid, 211);
    cr_assert_str_eq(c.ev[2].cat, "Kernel");
    cr_assert_eq(c.ev[2].have,
                 TT_A_CORRELATION | TT_A_EXTERNAL_ID | TT_A_DEVICE | TT_A_STREAM);
    cr_assert_eq(c.ev[2].stream, 7);
    cr_assert_eq(c.ev[2].device, 0);
    cr_assert_str_eq(c.ev[3].cat, "Memcpy");
    cr_assert_eq(c.ev[3].have, TT_A_BYTES);
    cr_assert_eq(c.ev[3].bytes, 4096);
    col_free(&c);
}

/* ---- timestamps ---- */

Test(reader, timestamps_int_float_string)
{
    static const char doc[] =
        "{\"traceEvents\":["
        "{\"ph\":\"X\",\"name\":\"int\",\"ts\":123,\"dur\":0},"
        "{\"ph\":\"X\",\"name\":\"float\",\"ts\":2413669096100.149,\"dur\":0.5},"
        "{\"ph\":\"X\",\"name\":\"str\",\"ts\":\"100.5\",\"dur\":\"7\"},"
        "{\"ph\":\"X\",\"name\":\"neg\",\"ts\":-3.25},"
        "{\"ph\":\"X\",\"name\":\"round\",\"ts\":0.0005,\"dur\":1.0004},"
        "{\"ph\":\"X\",\"name\":\"exp\",\"ts\":1e3},"
        "{\"ph\":\"X\",\"name\":\"bad\",\"ts\":\"abc\",\"dur\":null},"
        "{\"ph\":\"X\",\"name\":\"nan\",\"ts\":NaN},"
        "{\"ph\":\"X\",\"name\":\"none\"}"
        "]}";
    struct col c;
    tt_read_stats st;
    int rc = read_all_modes(doc, &c, &st);
    cr_assert_eq(rc, 0, "%s", tt_error_last()->message);
    cr_assert_eq(c.nev, 9);
    cr_assert(c.ev[0].has_ts && c.ev[0].has_dur);
    cr_assert_eq(c.ev[0].ts_ns, 123000);
    cr_assert_eq(c.ev[0].dur_ns, 0);
    cr_assert_eq(c.ev[1].ts_ns, 2413669096100149LL);
    cr_assert_eq(c.ev[1].dur_ns, 500);
    cr_assert(c.ev[2].has_ts && c.ev[2].has_dur);
    cr_assert_eq(c.ev[2].ts_ns, 100500);
    cr_assert_eq(c.ev[2].dur_ns, 7000);
    cr_assert_eq(c.ev[3].ts_ns, -3250);
    cr_assert_eq(c.ev[3].has_dur, 0);
    cr_assert_eq(c.ev[4].ts_ns, 1);
    cr_assert_eq(c.ev[4].dur_ns, 1000);
    cr_assert_eq(c.ev[5].ts_ns, 1000000);
    /* not a time: kept raw in args with the '@' prefix */
    cr_assert_eq(c.ev[6].has_ts, 0);
    cr_assert_eq(c.ev[6].has_dur, 0);
    streq_or_null(c.ev[6].args, "{\"@ts\":\"abc\",\"@dur\":null}", "bad ts args");
    cr_assert_eq(c.ev[7].has_ts, 0);
    streq_or_null(c.ev[7].args, "{\"@ts\":\"NaN\"}", "NaN ts args");
    cr_assert_eq(c.ev[8].has_ts, 0);
    cr_assert_null(c.ev[8].args);
    col_free(&c);
}

/* ---- args ---- */

Test(reader, args_decoded_and_rest_minified)
{
    static const char doc[] =
        "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,"
        "\"tid\":7,\"ts\":1,\"dur\":2,\"myKey\": [1, 2],\"args\":{"
        "\"External id\": 12, \"correlation\": 99, "
        "\"block\": [128,1,1], \"registers per thread\": 32, \"shared memory\": 0, "
        "\"device\": 0, \"stream\": 7, \"context\": 1, \"Record function id\": 5, "
        "\"Ev Idx\": 4, \"Sequence number\": 9, \"Fwd thread id\": 2, \"cbid\": 211, "
        "\"Bytes\": 1024, \"Input Dims\": [[2, 3], []], \"Input type\": [\"float\", \"\"], "
        "\"foo\": { \"x\" : [1, 2] }, \"bar\": \"baz\", \"queued\": 0.5, \"name\": \"n\"},"
        "\"extra2\":true}]}";
    struct col c;
    tt_read_stats st;
    tt_event *e;
    int rc = read_all_modes(doc, &c, &st);
    cr_assert_eq(rc, 0, "%s", tt_error_last()->message);
    cr_assert_eq(c.nev, 1);
    e = &c.ev[0];
    cr_assert_eq(e->have,
                 TT_A_EXTERNAL_ID | TT_A_CORRELATION | TT_A_BLOCK |
                     TT_A_REGISTERS | TT_A_SHARED_MEM | TT_A_DEVICE | TT_A_STREAM |
                     TT_A_CONTEXT | TT_A_RF_ID | TT_A_EV_IDX | TT_A_SEQ_NR |
                     TT_A_FWD_TID | TT_A_CBID | TT_A_BYTES,
                 "have %x", e->have);
    cr_assert_eq(e->external_id, 12);
    cr_assert_eq(e->correlation, 99);
    cr_assert_eq(e->block[0], 128);
    cr_assert_eq(e->block[1], 1);
    cr_assert_eq(e->block[2], 1);
    cr_assert_eq(e->registers, 32);
    cr_assert_eq(e->shared_mem, 0);
    cr_assert_eq(e->device, 0);
    cr_assert_eq(e->stream, 7);
    cr_assert_eq(e->context, 1);
    cr_assert_eq(e->rf_id, 5);
    cr_assert_eq(e->ev_idx, 4);
    cr_assert_eq(e->seq_nr, 9);
    cr_assert_eq(e->fwd_tid, 2);
    cr_assert_eq(e->cbid, 211);
    cr_assert_eq(e->bytes, 1024);
    streq_or_null(e->input_dims, "[[2,3],[]]", "input_dims");
    streq_or_null(e->input_types, "[\"float\",\"\"]", "input_types");
    cr_assert_null(e->arg_name); /* "name" is only decoded for 'M' events */
    streq_or_null(e->args,
                  "{\"foo\":{\"x\":[1,2]},\"bar\":\"baz\",\"queued\":0.5,\"name\":\"n\","
                  "\"@myKey\":[1,2],\"@extra2\":true}",
                  "args");
    cr_assert_eq(e->args_len, strlen(e->args));
    col_free(&c);
}

Test(reader, args_grid_triple)
{
    /* "grid" (4 letters) must be decoded like "block" (5 letters) */
    static const char doc[] =
        "[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"args\":{\"grid\": [1, 2, 3],"
        "\"block\": [128, 1, 1], \"x\": 0}}]";
    struct col c;
    tt_read_stats st;
    tt_event *e;
    int rc = read_all_modes(doc, &c, &st);
    cr_assert_eq(rc, 0, "%s", tt_error_last()->message);
    cr_assert_eq(c.nev, 1);
    e = &c.ev[0];
    cr_assert(e->have & TT_A_BLOCK);
    cr_assert_eq(e->block[0], 128);
    cr_assert(e->have & TT_A_GRID, "grid not decoded: have %x, args %s", e->have,
              e->args ? e->args : "-");
    cr_assert_eq(e->grid[0], 1);
    cr_assert_eq(e->grid[1], 2);
    cr_assert_eq(e->grid[2], 3);
    streq_or_null(e->args, "{\"x\":0}", "args");
    col_free(&c);
}

Test(reader, args_that_do_not_decode_stay_in_rest)
{
    static const char doc[] =
        "[{\"ph\":\"X\",\"name\":\"k\",\"args\":{\"grid\":[1,2],\"block\":[1,\"x\",3],"
        "\"correlation\":\"abc\",\"External id\":1e2,\"stream\":99999999999999999999,"
        "\"device\":1,\"device\":2}},"
        "{\"ph\":\"X\",\"name\":\"k2\",\"args\":5},"
        "{\"ph\":\"X\",\"name\":\"k3\",\"args\":null}]";
    struct col c;
    tt_read_stats st;
    tt_event *e;
    int rc = read_all_modes(doc, &c, &st);
    cr_assert_eq(rc, 0, "%s", tt_error_last()->message);
    cr_assert_eq(c.nev, 3);
    e = &c.ev[0];
    cr_assert_eq(e->have, TT_A_DEVICE, "have %x", e->have);
    cr_assert_eq(e->device, 1);
    streq_or_null(e->args,
                  "{\"grid\":[1,2],\"block\":[1,\"x\",3],\"correlation\":\"abc\","
                  "\"External id\":1e2,\"stream\":99999999999999999999,\"device\":2}",
                  "args");
    streq_or_null(c.ev[1].args, "{\"@args\":5}", "non-object args");
    cr_assert_null(c.ev[2].args);
    col_free(&c);
}

Test(reader, memory_events)
{
    static const char doc[] =
        "[{\"ph\":\"i\",\"s\":\"t\",\"name\":\"[memory]\",\"pid\":1,\"tid\":1,\"ts\":5,"
        "\"args\":{\"Device Type\":1,\"Device Id\":0,\"Addr\":94000000000000,"
        "\"Bytes\":-512,\"Total Allocated\":1024,\"Total Reserved\":2097152,"
        "\"Ev Idx\":17}}]";
    struct col c;
    tt_read_stats st;
    tt_event *e;
    int rc = read_all_modes(doc, &c, &st);
    cr_assert_eq(rc, 0, "%s", tt_error_last()->message);
    cr_assert_eq(c.nev, 1);
    e = &c.ev[0];
    cr_assert_str_eq(e->name, "[memory]");
    cr_assert_eq(e->have,
                 TT_A_DEVICE_TYPE | TT_A_DEVICE_ID | TT_A_ADDR | TT_A_BYTES |
                     TT_A_TOTAL_ALLOC | TT_A_TOTAL_RESERVED | TT_A_EV_IDX,
                 "have %x", e->have);
    cr_assert_eq(e->device_type, 1);
    cr_assert_eq(e->device_id, 0);
    cr_assert_eq(e->addr, 94000000000000LL);
    cr_assert_eq(e->bytes, -512);
    cr_assert_eq(e->total_allocated, 1024);
    cr_assert_eq(e->total_reserved, 2097152);
    cr_assert_eq(e->ev_idx, 17);
    cr_assert_null(e->args);
    col_free(&c);
}

Test(reader, metadata_events_and_args_before_ph)
{
    static const char doc[] =
        "{\"traceEvents\":["
        "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"tid\":0,\"args\":{\"name\":\"python\"}},"
        "{\"name\":\"process_labels\",\"ph\":\"M\",\"pid\":1,\"args\":{\"labels\":\"CPU\"}},"
        "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":1,\"args\":{\"sort_index\":5}},"
        /* args before ph */
        "{\"args\":{\"name\":\"thread 2 (main)\",\"x\":1},\"name\":\"thread_name\",\"ph\":\"M\","
        "\"pid\":1,\"tid\":2},"
        "{\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":-3},\"pid\":1,\"tid\":2,"
        "\"ph\":\"M\"},"
        "{\"args\":{\"External id\":44,\"Input Dims\":[[1]],\"sort_index\":1,\"name\":\"q\"},"
        "\"cat\":\"cpu_op\",\"name\":\"aten::relu\",\"ts\":1,\"dur\":1,\"ph\":\"X\"},"
        /* labels that are not a string stay in args */
        "{\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":2,\"args\":{\"labels\":[\"a\"]}}"
        "]}";
    struct col c;
    tt_read_stats st;
    int rc = read_all_modes(doc, &c, &st);
    cr_assert_eq(rc, 0, "%s", tt_error_last()->message);
    cr_assert_eq(c.nev, 7);
    cr_assert_eq(c.ev[0].ph, 'M');
    streq_or_null(c.ev[0].arg_name, "python", "process_name");
    cr_assert_null(c.ev[0].args);
    streq_or_null(c.ev[1].arg_labels, "CPU", "labels");
    cr_assert_null(c.ev[1].arg_name);
    cr_assert(c.ev[2].have & TT_A_SORT_INDEX);
    cr_assert_eq(c.ev[2].sort_index, 5);

    cr_assert_eq(c.ev[3].ph, 'M');
    streq_or_null(c.ev[3].arg_name, "thread 2 (main)", "args before ph: name");
    streq_or_null(c.ev[3].args, "{\"x\":1}", "args before ph: rest");
    cr_assert_eq(c.ev[3].tid.num, 2);
    cr_assert(c.ev[4].have & TT_A_SORT_INDEX, "args before ph: sort_index");
    cr_assert_eq(c.ev[4].sort_index, -3);
    cr_assert_eq(c.ev[4].ph, 'M');

    cr_assert_eq(c.ev[5].ph, 'X');
    cr_assert_eq(c.ev[5].have, TT_A_EXTERNAL_ID, "have %x", c.ev[5].have);
    cr_assert_eq(c.ev[5].external_id, 44);
    streq_or_null(c.ev[5].input_dims, "[[1]]", "dims");
    cr_assert_null(c.ev[5].arg_name);
    streq_or_null(c.ev[5].args, "{\"sort_index\":1,\"name\":\"q\"}", "X rest");

    cr_assert_null(c.ev[6].arg_labels);
    streq_or_null(c.ev[6].args, "{\"labels\":[\"a\"]}", "non-string labels");
    col_free(&c);
}

Test(reader, phase_and_name_oddities)
{
    static const char doc[] =
        "[{\"name\":\"noph\",\"ts\":1},"
        "{\"ph\":\"XX\",\"name\":\"longph\"},"
        "{\"ph\":\"X\",\"name\":7,\"cat\":null},"
        "{\"ph\":\"X\",\"name\":\"n\\u00e9\\\"q\"}]";
    struct col c;
    tt_read_stats st;
    int rc = read_all_modes(doc, &c, &st);
    cr_assert_eq(rc, 0, "%s", tt_error_last()->message);
    cr_assert_eq(c.nev, 4);
    cr_assert_eq(c.ev[0].ph, 0);
    cr_assert_str_eq(c.ev[0].name, "noph");
    cr_assert_eq(c.ev[1].ph, 0);
    streq_or_null(c.ev[1].args, "{\"@ph\":\"XX\"}", "long ph");
    cr_assert_str_eq(c.ev[2].name, "");
    cr_assert_null(c.ev[2].cat);
    streq_or_null(c.ev[2].args, "{\"@name\":7,\"@cat\":null}", "non-string name");
    cr_assert_str_eq(c.ev[3].name, "n\xc3\xa9\"q");
    col_free(&c);
}

Test(reader, repairs_and_skips_counted)
{
    static const char doc[] =
        "{\"traceEvents\":[1,{\"ph\":\"X\",\"name\":\"ok\"},\"s\","
        "{\"ph\":\"X\",\"name\":\"bad\xff\"},[2],"
        "{\"ph\":\"X\",\"name\":\"tab\t\"}]}";
    struct col c;
    tt_read_stats st;
    int rc = read_all_modes(doc, &c, &st);
    cr_assert_eq(rc, 0, "%s", tt_error_last()->message);
    cr_assert_eq(c.nev, 3);
    cr_assert_eq(st.events, 3);
    cr_assert_eq(st.skipped, 3);
    cr_assert_eq(st.first_skip_offset, 16);
    cr_assert_eq(st.repaired, 2);
    cr_assert_eq(st.first_repair_offset, strstr(doc, "{\"ph\":\"X\",\"name\":\"bad") - doc);
    cr_assert_str_eq(c.ev[1].name, "bad\xef\xbf\xbd");
    cr_assert_eq(c.ev[1].index, 1);
    cr_assert_eq(c.ev[2].index, 2);
    col_free(&c);
}

/* ---- Execution Traces ---- */

static const char et_flat[] =
    "{\"schema\": \"1.0.1\", \"pid\": 563677, \"time\": \"2023-07-14 11:53:07\",\n"
    " \"nodes\": [\n"
    "  {\"name\": \"[pytorch|profiler|execution_trace|thread]\", \"id\": 2, \"rf_id\": 0,"
    " \"parent\": 1, \"fw_parent\": 0, \"seq_id\": -1, \"scope\": 7, \"tid\": 1,"
    " \"fw_tid\": 0, \"op_schema\": \"\", \"inputs\": [], \"input_shapes\": [],"
    " \"input_types\": [], \"outputs\": [], \"output_shapes\": [], \"output_types\": []},\n"
    "  {\"name\": \"aten::empty\", \"id\": 5, \"rf_id\": 3, \"parent\": 4, \"fw_parent\": 0,"
    " \"seq_id\": -1, \"scope\": 0, \"tid\": 1, \"fw_tid\": 0,"
    " \"op_schema\": \"aten::empty(SymInt[] size) -> Tensor\","
    " \"inputs\": [[256,256],6,\"<None>\",\"cuda\",false],"
    " \"input_shapes\": [[[],[]],[],[],[],[]],"
    " \"input_types\": [\"GenericList[Int,Int]\",\"Int\",\"None\",\"Device\",\"Bool\"],"
    " \"outputs\": [[6,7,0,65536,4,\"cuda:0\"]], \"output_shapes\": [[256,256]],"
    " \"output_types\": [\"Tensor(float)\"], \"kernel_backend\": \"x\"}\n"
    " ],\n"
    " \"finish_ts\": 6278907999}\n";

static const char et_chakra[] =
    "{\"schema\": \"1.0.2-chakra.0.0.4\", \"pid\": 788625,\n"
    " \"nodes\": [\n"
    "  {\"id\": 5, \"name\": \"aten::empty\", \"ctrl_deps\": 4,\n"
    "   \"inputs\": {\"values\": [[256,256],6,\"<None>\",\"cuda\",false],"
    " \"shapes\": [[[],[]],[],[],[],[]],"
    " \"types\": [\"GenericList[Int,Int]\",\"Int\",\"None\",\"Device\",\"Bool\"]},\n"
    "   \"outputs\": {\"values\": [[6,7,0,65536,4,\"cuda:0\"]], \"shapes\": [[256,256]],"
    " \"types\": [\"Tensor(float)\"], \"strides\": [[256,1]]},\n"
    "   \"attrs\": [{\"name\": \"rf_id\", \"type\": \"uint64\", \"value\": 3},"
    " {\"name\": \"fw_parent\", \"type\": \"uint64\", \"value\": 0},"
    " {\"name\": \"seq_id\", \"type\": \"int64\", \"value\": -1},"
    " {\"name\": \"scope\", \"type\": \"uint64\", \"value\": 0},"
    " {\"name\": \"tid\", \"type\": \"uint64\", \"value\": 1},"
    " {\"name\": \"fw_tid\", \"type\": \"uint64\", \"value\": 0},"
    " {\"name\": \"op_schema\", \"type\": \"string\","
    " \"value\": \"aten::empty(SymInt[] size) -> Tensor\"},"
    " {\"name\": \"kernel_backend\", \"type\": \"string\", \"value\": \"x\"}]}\n"
    " ]}\n";

static void check_empty_node(const tt_et_node *n)
{
    cr_assert_eq(n->id, 5);
    cr_assert_str_eq(n->name, "aten::empty");
    cr_assert_eq(n->has_parent, 1);
    cr_assert_eq(n->parent, 4);
    cr_assert_eq(n->have, TT_ET_RF_ID | TT_ET_FW_PARENT | TT_ET_SEQ_ID | TT_ET_SCOPE |
                              TT_ET_TID | TT_ET_FW_TID,
                 "have %x", n->have);
    cr_assert_eq(n->rf_id, 3);
    cr_assert_eq(n->fw_parent, 0);
    cr_assert_eq(n->seq_id, -1);
    cr_assert_eq(n->scope, 0);
    cr_assert_eq(n->tid, 1);
    cr_assert_eq(n->fw_tid, 0);
    streq_or_null(n->op_schema, "aten::empty(SymInt[] size) -> Tensor", "op_schema");
    streq_or_null(n->inputs, "[[256,256],6,\"<None>\",\"cuda\",false]", "inputs");
    streq_or_null(n->input_shapes, "[[[],[]],[],[],[],[]]", "input_shapes");
    streq_or_null(n->input_types,
                  "[\"GenericList[Int,Int]\",\"Int\",\"None\",\"Device\",\"Bool\"]",
                  "input_types");
    streq_or_null(n->outputs, "[[6,7,0,65536,4,\"cuda:0\"]]", "outputs");
    streq_or_null(n->output_shapes, "[[256,256]]", "output_shapes");
    streq_or_null(n->output_types, "[\"Tensor(float)\"]", "output_types");
    cr_assert_null(n->input_strides);
}

Test(reader, et_schema_1_0_1_flat)
{
    struct col c;
    tt_read_stats st;
    int rc = read_all_modes(et_flat, &c, &st);
    cr_assert_eq(rc, 0, "%s", tt_error_last()->message);
    cr_assert_eq(c.fmt, TT_FMT_ET);
    cr_assert_eq(st.format, TT_FMT_ET);
    cr_assert_eq(c.nnode, 2);
    cr_assert_eq(c.nev, 0);
    cr_assert_eq(st.events, 2);
    cr_assert_eq(c.nmeta, 4);
    cr_assert_str_eq(c.meta_key[0], "schema");
    cr_assert_str_eq(c.meta_json[0], "\"1.0.1\"");
    cr_assert_str_eq(c.meta_key[1], "pid");
    cr_assert_str_eq(c.meta_json[1], "563677");
    cr_assert_str_eq(c.meta_key[2], "time");
    cr_assert_str_eq(c.meta_key[3], "finish_ts");
    cr_assert_str_eq(c.meta_json[3], "6278907999");

    cr_assert_eq(c.node[0].id, 2);
    cr_assert_eq(c.node[0].parent, 1);
    cr_assert_eq(c.node[0].scope, 7);
    streq_or_null(c.node[0].op_schema, "", "empty op_schema");
    streq_or_null(c.node[0].inputs, "[]", "empty inputs");
    cr_assert_eq(c.node[0].index, 0);
    cr_assert_eq(c.node[0].offset, strstr(et_flat, "{\"name\": \"[pytorch") - et_flat);

    check_empty_node(&c.node[1]);
    cr_assert_eq(c.node[1].index, 1);
    cr_assert_null(c.node[1].output_strides);
    cr_assert_null(c.node[1].attrs);
    streq_or_null(c.node[1].extra, "{\"kernel_backend\":\"x\"}", "extra");
    col_free(&c);
}

Test(reader, et_chakra_normalised)
{
    struct col c;
    tt_read_stats st;
    int rc = read_all_modes(et_chakra, &c, &st);
    cr_assert_eq(rc, 0, "%s", tt_error_last()->message);
    cr_assert_eq(c.fmt, TT_FMT_ET);
    cr_assert_eq(c.nnode, 1);
    check_empty_node(&c.node[0]);
    streq_or_null(c.node[0].output_strides, "[[256,1]]", "output_strides");
    streq_or_null(c.node[0].attrs, "{\"kernel_backend\":\"x\"}", "attrs");
    cr_assert_null(c.node[0].extra);
    col_free(&c);
}

Test(reader, et_chakra_odd_shapes)
{
    /* attrs not a list of objects, inputs with an unknown key, huge rf_id */
    static const char doc[] =
        "{\"nodes\":[{\"id\":1,\"name\":\"a\",\"attrs\":[1,2],"
        "\"inputs\":{\"values\":[],\"strides\":[[1]],\"extra\":3}},"
        "{\"id\":2,\"name\":\"b\",\"attrs\":[{\"name\":\"rf_id\",\"value\":99999999999999999999},"
        "{\"name\":\"tid\",\"value\":\"x\"}],\"ctrl_deps\":1},"
        "{\"id\":3,\"name\":\"c\",\"attrs\":{\"rf_id\":1}}],\"schema\":\"1.1.1-chakra.0.0.4\"}";
    struct col c;
    tt_read_stats st;
    int rc = read_all_modes(doc, &c, &st);
    cr_assert_eq(rc, 0, "%s", tt_error_last()->message);
    cr_assert_eq(c.nnode, 3);
    cr_assert_eq(c.nmeta, 1);
    cr_assert_str_eq(c.meta_key[0], "schema");
    cr_assert_eq(c.node[0].have, 0);
    streq_or_null(c.node[0].inputs, "[]", "inputs");
    streq_or_null(c.node[0].input_strides, "[[1]]", "strides");
    cr_assert_eq(c.node[0].has_parent, 0);
    cr_assert_not_null(c.node[0].extra);
    cr_assert(strstr(c.node[0].extra, "\"attrs\":[1,2]") != NULL, "%s", c.node[0].extra);
    cr_assert(strstr(c.node[0].extra, "\"inputs.extra\":3") != NULL, "%s", c.node[0].extra);
    cr_assert_eq(c.node[1].have, 0, "have %x", c.node[1].have);
    cr_assert_eq(c.node[1].parent, 1);
    streq_or_null(c.node[1].attrs,
                  "{\"rf_id\":99999999999999999999,\"tid\":\"x\"}", "odd attrs");
    cr_assert_eq(c.node[2].have, 0);
    streq_or_null(c.node[2].extra, "{\"attrs\":{\"rf_id\":1}}", "object attrs");
    col_free(&c);
}

Test(reader, et_real_file)
{
    const char *path = TT_TESTDATA "/et/simple_add_et.json.gz";
    struct col c;
    tt_trace_sink s;
    tt_read_stats st;
    size_t i, found = 0;
    int rc;
    FILE *f = fopen(path, "rb");
    if (!f)
        cr_skip_test("%s not present", path);
    fclose(f);
    memset(&c, 0, sizeof(c));
    tt_buf_init(&c.log);
    s = sink_of(&c);
    rc = tt_read_trace(path, &s, NULL, &st);
    cr_assert_eq(rc, 0, "%s", tt_error_last()->message);
    cr_assert_eq(st.gzip, 1);
    cr_assert_eq(st.format, TT_FMT_ET);
    cr_assert_eq(c.nnode, 38);
    cr_assert_eq(st.events, 38);
    for (i = 0; i < c.nnode; i++) {
        if (!strcmp(c.node[i].name, "aten::empty") && c.node[i].id == 5) {
            found++;
            cr_assert(c.node[i].have & TT_ET_RF_ID);
            cr_assert_eq(c.node[i].rf_id, 3);
            cr_assert(c.node[i].has_parent);
            cr_assert_eq(c.node[i].parent, 4);
            cr_assert_eq(c.node[i].tid, 1);
            streq_or_null(c.node[i].output_shapes, "[[256,256]]", "output_shapes");
        }
    }
    cr_assert_eq(found, 1);
    col_free(&c);
}

/* ---- memory timeline ---- */

Test(reader, memory_timeline_rows)
{
    static const char doc[] =
        "[[1000, 1, 512, 3], [2000.5, 3, 512, null],\n [3000,0,64,2], [4000, 2, 8],"
        " [1], {\"x\":1}, [5000, 1, 16, 0, 99]]";
    struct col c;
    tt_read_stats st;
    int rc = read_all_modes(doc, &c, &st);
    cr_assert_eq(rc, 0, "%s", tt_error_last()->message);
    cr_assert_eq(c.fmt, TT_FMT_MEMTL_RAW);
    cr_assert_eq(c.nev, 0);
    cr_assert_eq(c.nrow, 4, "rows %zu", c.nrow);
    cr_assert_eq(c.row[0].ts, 1000);
    cr_assert_eq(c.row[0].action, 1);
    cr_assert_eq(c.row[0].bytes, 512);
    cr_assert_eq(c.row[0].has_category, 1);
    cr_assert_eq(c.row[0].category, 3);
    cr_assert_eq(c.row[1].ts, 2000);
    cr_assert_eq(c.row[1].action, 3);
    cr_assert_eq(c.row[1].has_category, 0);
    cr_assert_eq(c.row[2].ts, 3000);
    cr_assert_eq(c.row[2].action, 0);
    cr_assert_eq(c.row[2].bytes, 64);
    cr_assert_eq(c.row[2].category, 2);
    cr_assert_eq(c.row[3].ts, 4000);
    cr_assert_eq(c.row[3].has_category, 0);
    cr_assert_eq(c.row[3].index, 3);
    cr_assert_eq(st.skipped, 3);
    cr_assert_eq(st.events, 4);
    col_free(&c);
}

/* ---- gzip ---- */

static unsigned char *gzip_of(const void *data, size_t len, size_t *outlen)
{
    z_stream zs;
    size_t cap = compressBound((uLong)len) + 64;
    unsigned char *out = malloc(cap);
    memset(&zs, 0, sizeof(zs));
    cr_assert_eq(deflateInit2(&zs, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), Z_OK);
    zs.next_in = (Bytef *)(uintptr_t)data;
    zs.avail_in = (uInt)len;
    zs.next_out = out;
    zs.avail_out = (uInt)cap;
    cr_assert_eq(deflate(&zs, Z_FINISH), Z_STREAM_END);
    *outlen = cap - zs.avail_out;
    deflateEnd(&zs);
    cr_assert_eq(out[0], 0x1f);
    cr_assert_eq(out[1], 0x8b);
    return out;
}

Test(reader, gzip_detected_by_magic)
{
    size_t glen;
    unsigned char *gz = gzip_of(et_flat, strlen(et_flat), &glen);
    struct col plain, z;
    tt_read_stats sp, sz;
    int mr;
    cr_assert_eq(read_str(et_flat, -1, &plain, &sp), 0);
    for (mr = -1; mr <= 3; mr += 2) {
        int rc = read_doc(gz, glen, mr, &z, &sz);
        cr_assert_eq(rc, 0, "max_read %d: %s", mr, tt_error_last()->message);
        cr_assert_eq(sz.gzip, 1);
        cr_assert_eq(sp.gzip, 0);
        cr_assert_str_eq(z.log.buf, plain.log.buf, "max_read %d", mr);
        cr_assert_eq(sz.bytes, (int64_t)strlen(et_flat));
        cr_assert_eq(sz.file_bytes, (int64_t)glen);
        /* the content hash is over the decompressed bytes */
        cr_assert_str_eq(sz.hash, sp.hash);
        col_free(&z);
    }
    col_free(&plain);
    free(gz);
}

Test(reader, gzip_truncated)
{
    /* a larger document so the cut lands inside the compressed data */
    tt_buf doc = TT_BUF_INIT;
    size_t glen, i;
    unsigned char *gz;
    struct col c;
    tt_read_stats st;
    int rc;
    tt_buf_addstr(&doc, "{\"traceEvents\":[");
    for (i = 0; i < 2000; i++)
        tt_buf_addf(&doc, "%s{\"ph\":\"X\",\"name\":\"op%zu\",\"ts\":%zu,\"dur\":1}",
                    i ? "," : "", i * 7919 % 10007, i);
    tt_buf_addstr(&doc, "]}");
    gz = gzip_of(doc.buf, doc.len, &glen);
    rc = read_doc(gz, glen / 2, -1, &c, &st);
    cr_assert_eq(rc, TT_ETRUNCATED, "rc %d", rc);
    cr_assert_eq(st.truncated, 1);
    cr_assert_eq(st.gzip, 1);
    cr_assert_lt(c.nev, 2000);
    cr_assert_eq((int64_t)c.nev, st.events);
    for (i = 0; i < c.nev; i++)
        cr_assert_eq(c.ev[i].ts_ns, (int64_t)i * 1000);
    col_free(&c);
    /* cut in the gzip trailer: all events are there but the stream is short */
    rc = read_doc(gz, glen - 4, -1, &c, &st);
    cr_assert_eq(rc, TT_ETRUNCATED, "rc %d", rc);
    cr_assert_eq(st.truncated, 1);
    col_free(&c);
    free(gz);
    tt_buf_release(&doc);
}

/* decompress as much of a (possibly cut) gzip stream as zlib can */
static size_t gunzip_prefix(const unsigned char *gz, size_t glen, char *out, size_t cap)
{
    z_stream zs;
    size_t n;
    memset(&zs, 0, sizeof(zs));
    cr_assert_eq(inflateInit2(&zs, 31), Z_OK);
    zs.next_in = (Bytef *)(uintptr_t)gz;
    zs.avail_in = (uInt)glen;
    zs.next_out = (Bytef *)out;
    zs.avail_out = (uInt)cap;
    (void)inflate(&zs, Z_SYNC_FLUSH);
    n = cap - zs.avail_out;
    inflateEnd(&zs);
    return n;
}

Test(reader, gzip_truncated_delivers_every_complete_event)
{
    /* TT_ETRUNCATED promises every complete event before the cut: for a gzip
     * input the cut is where the decompressible data ends */
    static const size_t nevents[] = { 50, 2000, 80000 };
    size_t t;
    for (t = 0; t < TT_ARRAY_SIZE(nevents); t++) {
        tt_buf doc = TT_BUF_INIT;
        size_t glen, i, plen, want = 0;
        unsigned char *gz;
        char *prefix;
        const char *p;
        struct col c;
        tt_read_stats st;
        int rc;
        tt_buf_addstr(&doc, "[");
        for (i = 0; i < nevents[t]; i++)
            tt_buf_addf(&doc, "%s{\"ph\":\"X\",\"name\":\"op%zu\",\"ts\":%zu,\"dur\":1}",
                        i ? "," : "", i * 7919 % 10007, i);
        tt_buf_addstr(&doc, "]");
        gz = gzip_of(doc.buf, doc.len, &glen);
        prefix = malloc(doc.len + 1);
        plen = gunzip_prefix(gz, glen * 3 / 4, prefix, doc.len);
        prefix[plen] = '\0';
        for (p = prefix; (p = strchr(p, '}')) != NULL; p++)
            want++;
        cr_assert_gt(want, 0);
        cr_assert_lt(want, nevents[t]);
        rc = read_doc(gz, glen * 3 / 4, -1, &c, &st);
        cr_assert_eq(rc, TT_ETRUNCATED, "rc %d", rc);
        cr_assert_eq(st.truncated, 1);
        cr_expect_eq(c.nev, want,
                     "%zu events in a %zu-byte document cut to %zu decompressible bytes:"
                     " %zu delivered, %zu complete",
                     nevents[t], doc.len, plen, c.nev, want);
        col_free(&c);
        free(prefix);
        free(gz);
        tt_buf_release(&doc);
    }
}

/* ---- truncation ---- */

static void every_cut(const char *doc, int max_read)
{
    size_t len = strlen(doc), cut;
    /* closing brace of each event: the events are the objects at depth 2 for
     * the object form or depth 1 for the array form; find them by scanning */
    size_t ends[16];
    size_t nends = 0, i;
    int depth = 0, instr = 0, esc = 0, evdepth = doc[0] == '{' ? 2 : 1;
    for (i = 0; i < len; i++) {
        char ch = doc[i];
        if (instr) {
            if (esc)
                esc = 0;
            else if (ch == '\\')
                esc = 1;
            else if (ch == '"')
                instr = 0;
            continue;
        }
        if (ch == '"')
            instr = 1;
        else if (ch == '{' || ch == '[')
            depth++;
        else if (ch == '}' || ch == ']') {
            depth--;
            if (ch == '}' && depth == evdepth)
                ends[nends++] = i;
        }
    }
    cr_assert_eq(nends, 3, "test document must hold 3 events");
    for (cut = 0; cut <= len; cut++) {
        struct col c;
        tt_read_stats st;
        size_t want = 0;
        int rc = read_doc(doc, cut, max_read, &c, &st);
        for (i = 0; i < nends; i++)
            if (ends[i] < cut)
                want++;
        if (cut == len) {
            cr_assert_eq(rc, 0, "full document: %s", tt_error_last()->message);
            cr_assert_eq(st.truncated, 0);
        } else if (cut == 0) {
            cr_assert_eq(rc, TT_EEMPTY, "cut 0: rc %d", rc);
        } else {
            cr_assert_eq(rc, TT_ETRUNCATED, "cut %zu max_read %d: rc %d (%s)", cut,
                         max_read, rc, tt_error_last()->message);
            cr_assert_eq(st.truncated, 1, "cut %zu", cut);
            cr_assert_eq(tt_error_last()->code, TT_ETRUNCATED);
            cr_assert_str_eq(tt_error_last()->source, "mem.json");
            cr_assert_eq(tt_error_last()->offset, (int64_t)cut,
                         "cut %zu max_read %d: error offset %lld", cut, max_read,
                         (long long)tt_error_last()->offset);
        }
        cr_assert_eq(c.nev, want, "cut %zu max_read %d: %zu events, want %zu", cut,
                     max_read, c.nev, want);
        cr_assert_eq(st.events, (int64_t)want);
        for (i = 0; i < c.nev; i++)
            cr_assert_eq(c.ev[i].ts_ns, (int64_t)(i + 1) * 1000, "cut %zu", cut);
        col_free(&c);
    }
}

static const char trunc_obj[] =
    "{\"schemaVersion\":1,\"traceEvents\":["
    "{\"ph\":\"X\",\"name\":\"a}\\\"{\",\"ts\":1,\"dur\":10,\"args\":{\"External id\":1}},"
    "{\"ph\":\"X\",\"name\":\"b\",\"ts\":2,\"dur\":3.5,\"args\":{\"x\":[1,{\"y\":\"]\"}]}},"
    "{\"ph\":\"i\",\"name\":\"c\\\\\",\"ts\":3,\"s\":\"t\"}"
    "],\"traceName\":\"x\"}";

static const char trunc_arr[] =
    "[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":10},"
    " {\"ph\":\"X\",\"name\":\"b\\\"}\",\"ts\":2,\"dur\":3},\n"
    " {\"ph\":\"X\",\"name\":\"c\",\"ts\":3,\"dur\":1,\"args\":{\"k\":null}}]";

Test(truncated, object_form_every_cut)
{
    every_cut(trunc_obj, -1);
}

Test(truncated, object_form_every_cut_split_reads)
{
    every_cut(trunc_obj, 1);
    every_cut(trunc_obj, 3);
}

Test(truncated, array_form_every_cut)
{
    every_cut(trunc_arr, -1);
    every_cut(trunc_arr, 1);
    every_cut(trunc_arr, 3);
}

/* ---- invalid inputs ---- */

static void read_fails(const char *doc, size_t len, int want)
{
    int i;
    for (i = 0; i < MODES_N; i++) {
        struct col c;
        tt_read_stats st;
        int rc = read_doc(doc, len, modes[i], &c, &st);
        cr_assert_eq(rc, want, "'%.*s' max_read %d: rc %d, want %d (%s)", (int)len, doc,
                     modes[i], rc, want, tt_error_last()->message);
        cr_assert_eq(tt_error_last()->code, want);
        cr_assert_eq(c.nev, 0);
        col_free(&c);
    }
}

Test(invalid, empty_and_not_json)
{
    read_fails("", 0, TT_EEMPTY);
    read_fails(" \n\t ", 4, TT_EEMPTY);
    read_fails("hello", 5, TT_EUNSUPPORTED);
    read_fails("{}", 2, TT_EUNSUPPORTED);
    read_fails("{\"foo\": 1}", 10, TT_EUNSUPPORTED);
    read_fails("{\"traceEvents\": 5}", 18, TT_EINVALID);
    read_fails("\x01\x02", 2, TT_EUNSUPPORTED);
}

Test(invalid, error_offsets)
{
    struct col c;
    tt_read_stats st;
    int rc;
    /* syntax error inside the second event */
    static const char doc[] = "[{\"ph\":\"X\",\"name\":\"a\"},{\"ph\":\"X\",\"name\":}]";
    rc = read_str(doc, -1, &c, &st);
    cr_assert_eq(rc, TT_EINVALID);
    cr_assert_eq(c.nev, 1);
    cr_assert_eq(tt_error_last()->offset, (int64_t)(strrchr(doc, '}') - doc),
                 "offset %lld", (long long)tt_error_last()->offset);
    cr_assert_str_eq(tt_error_last()->source, "mem.json");
    col_free(&c);
    /* missing comma between events */
    rc = read_str("[{\"ph\":\"X\"} {\"ph\":\"X\"}]", -1, &c, &st);
    cr_assert_eq(rc, TT_EINVALID);
    cr_assert_eq(tt_error_last()->offset, 12);
    col_free(&c);
    /* data after the document */
    rc = read_str("[{\"ph\":\"X\"}] x", -1, &c, &st);
    cr_assert_eq(rc, TT_EINVALID);
    cr_assert_eq(tt_error_last()->offset, 13);
    cr_assert_eq(c.nev, 1);
    col_free(&c);
}

Test(invalid, callback_stops_read)
{
    struct col c;
    tt_trace_sink s;
    tt_read_stats st;
    int rc;
    memset(&c, 0, sizeof(c));
    tt_buf_init(&c.log);
    c.stop_after = 2;
    s = sink_of(&c);
    rc = tt_read_trace_mem("m", trunc_arr, strlen(trunc_arr), &s, NULL, &st);
    cr_assert_eq(rc, TT_ECANCELED);
    cr_assert_eq(c.nev, 2);
    col_free(&c);
}

/* ---- split reads give identical results ---- */

Test(split, max_read_one_equals_unlimited)
{
    /* every vintage in one go, plus an event larger than the reader's direct
     * decoding window so the exact scanner handles it across reads */
    tt_buf doc = TT_BUF_INIT;
    size_t i;
    const char *docs[] = { trunc_obj, trunc_arr, et_flat, et_chakra };
    for (i = 0; i < TT_ARRAY_SIZE(docs); i++) {
        struct col a, b;
        tt_read_stats sa, sb;
        int ra = read_str(docs[i], 0, &a, &sa);
        int rb = read_str(docs[i], 1, &b, &sb);
        cr_assert_eq(ra, 0);
        cr_assert_eq(rb, 0);
        cr_assert_str_eq(a.log.buf, b.log.buf);
        col_free(&a);
        col_free(&b);
    }
    tt_buf_addstr(&doc, "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"small\",\"ts\":1},");
    tt_buf_addstr(&doc, "{\"ph\":\"X\",\"name\":\"big\",\"ts\":2,\"args\":{\"blob\":\"");
    for (i = 0; i < 150000; i++)
        tt_buf_addstr(&doc, i % 97 == 0 ? "\\\"" : i % 89 == 0 ? "\\\\" : "z");
    tt_buf_addstr(&doc, "\",\"External id\":5}},");
    for (i = 0; i < 3000; i++)
        tt_buf_addf(&doc, "{\"ph\":\"X\",\"name\":\"e%zu\\\"\",\"ts\":%zu.5,\"dur\":1},", i,
                    i);
    tt_buf_addstr(&doc, "{\"ph\":\"X\",\"name\":\"last\",\"ts\":9}]}");
    {
        struct col a, b, d;
        tt_read_stats sa, sb, sd;
        int ra = read_doc(doc.buf, doc.len, 0, &a, &sa);
        int rb = read_doc(doc.buf, doc.len, 1, &b, &sb);
        int rd = read_doc(doc.buf, doc.len, 7, &d, &sd);
        cr_assert_eq(ra, 0, "%s", tt_error_last()->message);
        cr_assert_eq(rb, 0);
        cr_assert_eq(rd, 0);
        cr_assert_eq(a.nev, 3003);
        cr_assert_eq(b.nev, 3003);
        cr_assert_str_eq(a.ev[1].name, "big");
        cr_assert_eq(a.ev[1].external_id, 5);
        cr_assert_gt(strlen(a.ev[1].args), 150000);
        cr_assert_str_eq(a.log.buf, b.log.buf);
        cr_assert_str_eq(a.log.buf, d.log.buf);
        cr_assert_str_eq(sa.hash, sb.hash);
        cr_assert_eq(sa.bytes, (int64_t)doc.len);
        cr_assert_eq(sb.bytes, (int64_t)doc.len);
        col_free(&a);
        col_free(&b);
        col_free(&d);
    }
    tt_buf_release(&doc);
}

Test(split, truncated_big_document_split_reads)
{
    /* a document longer than the direct window, cut inside an event */
    tt_buf doc = TT_BUF_INIT;
    size_t i, cut;
    tt_buf_addstr(&doc, "[");
    for (i = 0; i < 5000; i++)
        tt_buf_addf(&doc, "%s{\"ph\":\"X\",\"name\":\"e\",\"ts\":%zu}", i ? "," : "", i);
    tt_buf_addstr(&doc, "]");
    cut = doc.len * 3 / 5;
    {
        struct col a, b;
        tt_read_stats sa, sb;
        size_t want = 0;
        const char *p = doc.buf;
        while ((p = strchr(p, '}')) != NULL && (size_t)(p - doc.buf) < cut) {
            want++;
            p++;
        }
        cr_assert_eq(read_doc(doc.buf, cut, 0, &a, &sa), TT_ETRUNCATED);
        cr_assert_eq(read_doc(doc.buf, cut, 1, &b, &sb), TT_ETRUNCATED);
        cr_assert_eq(a.nev, want);
        cr_assert_eq(b.nev, want);
        cr_assert_str_eq(a.log.buf, b.log.buf);
        col_free(&a);
        col_free(&b);
    }
    tt_buf_release(&doc);
}

/* ---- the threaded reader gives what the plain reader gives ---- */

static char *temp_file(const void *data, size_t len)
{
    static char path[64];
    int fd;
    snprintf(path, sizeof(path), "/tmp/tt_reader_XXXXXX");
    fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, data, len), (ssize_t)len);
    close(fd);
    return path;
}

static int read_file(const char *path, int threaded, int stop_after, struct col *c,
                     tt_read_stats *st)
{
    tt_trace_sink s;
    tt_read_options o = TT_READ_OPTIONS_INIT;
    memset(c, 0, sizeof(*c));
    tt_buf_init(&c->log);
    c->stop_after = stop_after;
    s = sink_of(c);
    if (threaded)
        o.flags = TT_READ_THREADED;
    return tt_read_trace(path, &s, &o, st);
}

static void compare_threaded(const void *data, size_t len, int want_rc)
{
    char *path = temp_file(data, len);
    struct col a, b;
    tt_read_stats sa, sb;
    int ra = read_file(path, 0, 0, &a, &sa);
    int rb = read_file(path, 1, 0, &b, &sb);
    unlink(path);
    cr_assert_eq(ra, want_rc, "plain rc %d", ra);
    cr_assert_eq(rb, want_rc, "threaded rc %d (%s)", rb, tt_error_last()->message);
    cr_assert_eq(a.nev, b.nev);
    cr_assert_eq(a.nnode, b.nnode);
    cr_assert_eq(a.nrow, b.nrow);
    cr_assert_str_eq(a.log.buf, b.log.buf);
    cr_assert_eq(sa.events, sb.events);
    cr_assert_eq(sa.bytes, sb.bytes);
    cr_assert_eq(sa.truncated, sb.truncated);
    cr_assert_eq(sa.format, sb.format);
    cr_assert_str_eq(sa.hash, sb.hash);
    col_free(&a);
    col_free(&b);
}

Test(threaded, same_callbacks_as_plain)
{
    tt_buf doc = TT_BUF_INIT;
    size_t i;
    compare_threaded(trunc_obj, strlen(trunc_obj), 0);
    compare_threaded(et_flat, strlen(et_flat), 0);
    compare_threaded(et_chakra, strlen(et_chakra), 0);
    compare_threaded("[[1,2,3,4],[5,6,7,null]]", 24, 0);
    /* more events than one batch */
    tt_buf_addstr(&doc, "{\"a\":1,\"traceEvents\":[");
    for (i = 0; i < 10000; i++)
        tt_buf_addf(&doc, "%s{\"ph\":\"X\",\"name\":\"e%zu\",\"pid\":\"p%zu\",\"ts\":%zu,"
                          "\"args\":{\"k\":[%zu]}}",
                    i ? "," : "", i, i % 7, i, i);
    tt_buf_addstr(&doc, "],\"b\":{\"c\":2}}");
    compare_threaded(doc.buf, doc.len, 0);
    /* truncated: the same complete events, the same error */
    compare_threaded(doc.buf, doc.len / 2, TT_ETRUNCATED);
    tt_buf_release(&doc);
}

Test(threaded, errors_carried_back)
{
    struct col c;
    tt_read_stats st;
    char *path = temp_file("[{\"ph\":\"X\"},{\"ph\":}]", 20);
    int rc = read_file(path, 1, 0, &c, &st);
    cr_assert_eq(rc, TT_EINVALID);
    cr_assert_eq(tt_error_last()->code, TT_EINVALID);
    cr_assert_eq(tt_error_last()->offset, 18);
    cr_assert_str_eq(tt_error_last()->source, path);
    cr_assert_eq(c.nev, 1);
    col_free(&c);
    unlink(path);
    rc = read_file("/nonexistent/x.json", 1, 0, &c, &st);
    cr_assert_eq(rc, TT_ENOTFOUND);
    cr_assert_eq(tt_error_last()->code, TT_ENOTFOUND);
    col_free(&c);
}

Test(threaded, sink_error_stops_the_read)
{
    tt_buf doc = TT_BUF_INIT;
    size_t i;
    char *path;
    struct col c;
    tt_read_stats st;
    int rc, stops[] = { 1, 4096, 5000 };
    tt_buf_addstr(&doc, "[");
    for (i = 0; i < 20000; i++)
        tt_buf_addf(&doc, "%s{\"ph\":\"i\",\"name\":\"e\",\"ts\":%zu}", i ? "," : "", i);
    tt_buf_addstr(&doc, "]");
    path = temp_file(doc.buf, doc.len);
    for (i = 0; i < TT_ARRAY_SIZE(stops); i++) {
        rc = read_file(path, 1, stops[i], &c, &st);
        cr_assert_eq(rc, TT_ECANCELED, "rc %d", rc);
        cr_assert_eq(c.nev, (size_t)stops[i], "stop after %d: %zu events", stops[i], c.nev);
        col_free(&c);
    }
    unlink(path);
    tt_buf_release(&doc);
}

Test(reader, no_args_skips_only_the_leftovers)
{
    static const char doc[] =
        "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,"
        "\"tid\":7,\"ts\":1.5,\"dur\":2,\"extra\":{\"a\":[1,2]},\"args\":{\"External id\":"
        "5,\"correlation\":9,\"grid\":[1,2,3],\"queued\":0,\"Input Dims\":[[4]],"
        "\"nested\":{\"x\":\"\\u00e9\"}}},"
        "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":0,\"tid\":7,"
        "\"args\":{\"name\":\"stream 7\",\"other\":1}}]}";
    char *path = temp_file(doc, sizeof(doc) - 1);
    int k;
    for (k = 0; k < 2; k++) {
        struct col c;
        tt_read_stats st;
        tt_trace_sink s;
        tt_read_options o = TT_READ_OPTIONS_INIT;
        memset(&c, 0, sizeof(c));
        tt_buf_init(&c.log);
        s = sink_of(&c);
        o.flags = TT_READ_NO_ARGS | (k ? TT_READ_THREADED : 0);
        cr_assert_eq(tt_read_trace(path, &s, &o, &st), 0, "%s", tt_error_last()->message);
        cr_assert_eq(c.nev, 2);
        /* decoded fields are all there */
        cr_assert_eq(c.ev[0].external_id, 5);
        cr_assert_eq(c.ev[0].correlation, 9);
        cr_assert_eq(c.ev[0].grid[2], 3);
        cr_assert_eq(c.ev[0].ts_ns, 1500);
        cr_assert_str_eq(c.ev[0].input_dims, "[[4]]");
        cr_assert_str_eq(c.ev[1].arg_name, "stream 7");
        /* the rest is not collected */
        cr_assert_null(c.ev[0].args);
        cr_assert_null(c.ev[1].args);
        col_free(&c);
    }
    {
        /* without the flag the same file keeps them */
        struct col c;
        tt_read_stats st;
        cr_assert_eq(read_file(path, 0, 0, &c, &st), 0);
        cr_assert_not_null(c.ev[0].args);
        cr_assert(strstr(c.ev[0].args, "\"queued\":0") && strstr(c.ev[0].args, "\"@extra\""),
                  "%s", c.ev[0].args);
        col_free(&c);
    }
    unlink(path);
}

/* issue 11: a second traceEvents array was dropped silently; ts values that
 * are not a time were stored as NULL without a count */
Test(values, duplicate_keys_and_unstorable_times_are_counted)
{
    const char *doc =
        "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":1}],\"x\":1,"
        "\"traceEvents\":[{\"ph\":\"X\",\"name\":\"b\",\"ts\":[1],\"dur\":1},"
        "{\"ph\":\"X\",\"name\":\"c\",\"ts\":1e400,\"dur\":1},"
        "{\"ph\":\"X\",\"name\":\"d\",\"ts\":99999999999999999999,\"dur\":[2]}],\"x\":2}";
    int i;
    for (i = 0; i < MODES_N; i++) {
        struct col c;
        tt_read_stats st;
        cr_assert_eq(read_str(doc, modes[i], &c, &st), 0, "mode %d", modes[i]);
        cr_assert_eq(c.nev, 4, "both arrays' events (mode %d)", modes[i]);
        cr_assert_eq(st.dup_keys, 2, "traceEvents and x twice");
        cr_assert_eq(st.first_dup_key_offset, (int64_t)(strstr(doc, ",\"traceEvents\"") - doc + 1));
        cr_assert_eq(st.bad_times, 4, "[1], 1e400, beyond int64 and a dur [2]");
        cr_assert_eq(st.first_bad_time_offset, (int64_t)(strstr(doc, "[1]") - doc));
        cr_assert_not(c.ev[1].has_ts);
        cr_assert_not(c.ev[2].has_ts);
        col_free(&c);
    }
}

/* issue 28: times the analyses cannot add without overflow are refused where
 * they are read (ts outside (-2^61, 2^62) ns, |dur| >= 2^61 ns), and a
 * memory event's size of 2^53 bytes or more stays in args */
Test(values, times_beyond_the_computable_range_are_refused)
{
    const char *doc =
        "[{\"ph\":\"X\",\"name\":\"ok\",\"ts\":4611686018427387.903,\"dur\":2305843009213693.951},"
        "{\"ph\":\"X\",\"name\":\"top\",\"ts\":4611686018427387.904,\"dur\":1},"
        "{\"ph\":\"X\",\"name\":\"low\",\"ts\":-2305843009213693.952,\"dur\":1},"
        "{\"ph\":\"X\",\"name\":\"long\",\"ts\":1,\"dur\":2305843009213693.952},"
        "{\"ph\":\"X\",\"name\":\"d9\",\"ts\":9200000000000000,\"dur\":9200000000000000},"
        "{\"ph\":\"i\",\"name\":\"[memory]\",\"ts\":1,\"args\":{\"Bytes\":9007199254740992,"
        "\"Total Allocated\":9007199254740991}}]";
    int i;
    for (i = 0; i < MODES_N; i++) {
        struct col c;
        tt_read_stats st;
        cr_assert_eq(read_str(doc, modes[i], &c, &st), 0, "mode %d", modes[i]);
        cr_assert_eq(c.nev, 6);
        cr_assert(c.ev[0].has_ts && c.ev[0].has_dur, "the largest times in range are kept");
        cr_assert_eq(c.ev[0].ts_ns, INT64_C(4611686018427387903));
        cr_assert_eq(c.ev[0].dur_ns, INT64_C(2305843009213693951));
        cr_assert_not(c.ev[1].has_ts, "ts 2^62 ns");
        cr_assert_not(c.ev[2].has_ts, "ts -2^61 ns");
        cr_assert(c.ev[3].has_ts && !c.ev[3].has_dur, "dur 2^61 ns");
        cr_assert_not(c.ev[4].has_ts || c.ev[4].has_dur, "issue 29 D9's event");
        cr_assert_eq(st.bad_times, 5);
        cr_assert_eq(st.first_bad_time_offset, (int64_t)(strstr(doc, "4611686018427387.904") - doc));
        cr_assert_not(c.ev[5].have & TT_A_BYTES, "Bytes 2^53 is not a size");
        cr_assert(c.ev[5].have & TT_A_TOTAL_ALLOC, "Total Allocated 2^53 - 1 is");
        cr_assert(c.ev[5].args && strstr(c.ev[5].args, "\"Bytes\":9007199254740992"),
                  "kept in args: %s", c.ev[5].args ? c.ev[5].args : "(null)");
        col_free(&c);
    }
}
