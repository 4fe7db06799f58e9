/*
 * tests/fuzz/fuzz_trace.c - fuzz the trace readers (tt_read_trace_mem).
 *
 * The input is the whole file (Kineto JSON, Execution Trace, memory-timeline
 * export, gzip of any of them). The sink reads every field of every
 * tt_event / tt_et_node / tt_memrow / meta value it is given (strlen of each
 * string, every byte of args), checks that the fields documented as minified
 * JSON parse as one JSON value, and folds everything into a digest.
 *
 * The input is then read a second time from a memory source that returns
 * only a few bytes per read (1..13, from the input size): the status, the
 * stats and the digest of everything delivered must not change.
 *
 * Built as a libFuzzer target (fuzz_trace, -DTT_BUILD_FUZZ=ON with clang) and
 * as a plain corpus replayer (replay_trace, any compiler; see replay_main.c).
 */
#include "common/compat.h"

#include "formats/json.h"
#include "formats/reader_internal.h"
#include "formats/source.h"
#include "tracetool/formats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond, ...)                                                  \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "fuzz_trace: check failed: %s: ", #cond);        \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
            abort();                                                           \
        }                                                                      \
    } while (0)

struct digest {
    uint64_t h;
    int64_t calls;
    tt_trace_format fmt;
};

static void mix(struct digest *d, const void *p, size_t n)
{
    const unsigned char *b = p;
    size_t i;
    for (i = 0; i < n; i++) {
        d->h ^= b[i];
        d->h *= 1099511628211ull;
    }
}

static void mix_i64(struct digest *d, int64_t v)
{
    mix(d, &v, sizeof(v));
}

/* A string field: NULL or NUL-terminated; strlen reads every byte. */
static void mix_str(struct digest *d, const char *s)
{
    if (!s) {
        mix_i64(d, -1);
        return;
    }
    mix_i64(d, (int64_t)strlen(s));
    mix(d, s, strlen(s) + 1);
}

/* A field documented as minified JSON: must parse as exactly one value
 * (an object when want_object). */
static void check_json(const char *what, const char *s, size_t len, int want_object)
{
    tt_jp jp;
    int rc;
    tt_jp_init(&jp, what, s, 0, s, len);
    if (want_object)
        FUZZ_CHECK(len > 0 && s[0] == '{', "%s is not a JSON object: %.200s", what, s);
    rc = tt_jp_skip(&jp);
    FUZZ_CHECK(rc == 0, "%s is not valid JSON (rc %d): %.200s", what, rc, s);
    rc = tt_jp_finish(&jp);
    FUZZ_CHECK(rc == 0, "%s has data after the value: %.200s", what, s);
}

static void mix_json(struct digest *d, const char *what, const char *s, int want_object)
{
    mix_str(d, s);
    if (s)
        check_json(what, s, strlen(s), want_object);
}

static void mix_id(struct digest *d, const tt_id *id)
{
    mix_i64(d, id->present);
    mix_i64(d, id->is_str);
    if (!id->present)
        return;
    if (id->is_str) {
        FUZZ_CHECK(id->str != NULL, "string id without str");
        mix_str(d, id->str);
    } else {
        mix_i64(d, id->num);
    }
}

static int on_format(void *ctx, tt_trace_format fmt)
{
    struct digest *d = ctx;
    FUZZ_CHECK(fmt >= TT_FMT_UNKNOWN && fmt <= TT_FMT_MEMTL_RAW, "format %d", (int)fmt);
    FUZZ_CHECK(tt_format_name(fmt) != NULL, "no name for format %d", (int)fmt);
    (void)strlen(tt_format_name(fmt));
    d->fmt = fmt;
    d->calls++;
    mix_i64(d, 1000 + fmt);
    return 0;
}

static int on_meta(void *ctx, const char *key, const char *json, size_t len)
{
    struct digest *d = ctx;
    FUZZ_CHECK(key != NULL && json != NULL, "meta with NULL key or value");
    d->calls++;
    mix_str(d, key);
    mix(d, json, len);
    check_json("meta value", json, len, 0);
    return 0;
}

static int on_event(void *ctx, const tt_event *ev)
{
    struct digest *d = ctx;
    int i;
    d->calls++;
    mix_i64(d, ev->index);
    mix_i64(d, ev->offset);
    mix(d, &ev->ph, 1);
    FUZZ_CHECK(ev->name != NULL, "event name is NULL (documented \"\" if missing)");
    mix_str(d, ev->name);
    mix_str(d, ev->cat);
    mix_id(d, &ev->pid);
    mix_id(d, &ev->tid);
    mix_id(d, &ev->id);
    mix_i64(d, ev->has_ts);
    mix_i64(d, ev->has_dur);
    mix_i64(d, ev->ts_ns);
    mix_i64(d, ev->dur_ns);
    mix_str(d, ev->bp);
    mix_str(d, ev->s);
    mix_i64(d, ev->have);
    mix_i64(d, ev->external_id);
    mix_i64(d, ev->correlation);
    mix_i64(d, ev->rf_id);
    mix_i64(d, ev->ev_idx);
    mix_i64(d, ev->seq_nr);
    mix_i64(d, ev->fwd_tid);
    mix_i64(d, ev->device);
    mix_i64(d, ev->stream);
    mix_i64(d, ev->context);
    mix_i64(d, ev->cbid);
    mix_i64(d, ev->registers);
    mix_i64(d, ev->shared_mem);
    mix_i64(d, ev->bytes);
    mix_i64(d, ev->addr);
    mix_i64(d, ev->device_type);
    mix_i64(d, ev->device_id);
    mix_i64(d, ev->total_allocated);
    mix_i64(d, ev->total_reserved);
    mix_i64(d, ev->sort_index);
    for (i = 0; i < 3; i++) {
        mix_i64(d, ev->grid[i]);
        mix_i64(d, ev->block[i]);
    }
    mix_json(d, "input_dims", ev->input_dims, 0);
    mix_json(d, "input_types", ev->input_types, 0);
    mix_str(d, ev->arg_name);
    mix_str(d, ev->arg_labels);
    mix_i64(d, (int64_t)ev->args_len);
    if (ev->args) {
        /* every byte of args, then the terminator */
        mix(d, ev->args, ev->args_len);
        check_json("args", ev->args, ev->args_len, 1);
    } else {
        FUZZ_CHECK(ev->args_len == 0, "args NULL with args_len %zu", ev->args_len);
    }
    /* a deep copy must be complete: every pointer of the clone is readable */
    {
        tt_event *c = tt__event_clone(ev);
        if (c) {
            FUZZ_CHECK(c->ph == ev->ph && c->index == ev->index && c->ts_ns == ev->ts_ns,
                       "clone differs");
            FUZZ_CHECK(strcmp(c->name, ev->name) == 0, "clone name differs");
            FUZZ_CHECK((c->args == NULL) == (ev->args == NULL) &&
                           (!c->args || (c->args_len == ev->args_len &&
                                         memcmp(c->args, ev->args, ev->args_len) == 0)),
                       "clone args differ");
            (void)(c->cat ? strlen(c->cat) : 0);
            (void)(c->pid.is_str && c->pid.str ? strlen(c->pid.str) : 0);
            (void)(c->tid.is_str && c->tid.str ? strlen(c->tid.str) : 0);
            (void)(c->id.is_str && c->id.str ? strlen(c->id.str) : 0);
            (void)(c->bp ? strlen(c->bp) : 0);
            (void)(c->s ? strlen(c->s) : 0);
            (void)(c->input_dims ? strlen(c->input_dims) : 0);
            (void)(c->input_types ? strlen(c->input_types) : 0);
            (void)(c->arg_name ? strlen(c->arg_name) : 0);
            (void)(c->arg_labels ? strlen(c->arg_labels) : 0);
            free(c);
        }
    }
    return 0;
}

static int on_et_node(void *ctx, const tt_et_node *n)
{
    struct digest *d = ctx;
    d->calls++;
    mix_i64(d, n->index);
    mix_i64(d, n->offset);
    mix_i64(d, n->id);
    FUZZ_CHECK(n->name != NULL, "ET node name is NULL");
    mix_str(d, n->name);
    mix_i64(d, n->has_parent);
    mix_i64(d, n->parent);
    mix_i64(d, n->have);
    mix_i64(d, n->rf_id);
    mix_i64(d, n->fw_parent);
    mix_i64(d, n->seq_id);
    mix_i64(d, n->scope);
    mix_i64(d, n->tid);
    mix_i64(d, n->fw_tid);
    mix_str(d, n->op_schema);
    mix_json(d, "inputs", n->inputs, 0);
    mix_json(d, "input_shapes", n->input_shapes, 0);
    mix_json(d, "input_types", n->input_types, 0);
    mix_json(d, "input_strides", n->input_strides, 0);
    mix_json(d, "outputs", n->outputs, 0);
    mix_json(d, "output_shapes", n->output_shapes, 0);
    mix_json(d, "output_types", n->output_types, 0);
    mix_json(d, "output_strides", n->output_strides, 0);
    mix_json(d, "attrs", n->attrs, 1);
    mix_json(d, "extra", n->extra, 1);
    return 0;
}

static int on_memrow(void *ctx, const tt_memrow *r)
{
    struct digest *d = ctx;
    d->calls++;
    mix_i64(d, r->index);
    mix_i64(d, r->ts);
    mix_i64(d, r->action);
    mix_i64(d, r->bytes);
    mix_i64(d, r->has_category);
    mix_i64(d, r->category);
    return 0;
}

static int read_once(const uint8_t *data, size_t size, size_t max_read, struct digest *d,
                     tt_read_stats *st)
{
    tt_trace_sink sink;
    tt_read_options opts = TT_READ_OPTIONS_INIT;
    int rc;
    memset(&sink, 0, sizeof(sink));
    sink.ctx = d;
    sink.on_format = on_format;
    sink.on_meta = on_meta;
    sink.on_event = on_event;
    sink.on_et_node = on_et_node;
    sink.on_memrow = on_memrow;
    memset(d, 0, sizeof(*d));
    d->h = 14695981039346656037ull;
    if (max_read == 0)
        return tt_read_trace_mem("fuzz.json", data, size, &sink, &opts, st);
    /* the same as tt_read_trace_mem, with short reads */
    {
        tt_source *src;
        tt__init_stats(st);
        tt_error_clear();
        if ((rc = tt_source_open_mem(&src, "fuzz.json", data, size)) < 0)
            return rc;
        tt_source_set_max_read(src, max_read);
        rc = tt__read_source(src, &sink, &opts, st);
        tt_source_free(src);
    }
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct digest d1, d2;
    tt_read_stats s1, s2;
    int rc1, rc2;
    size_t max_read = 1 + size % 13;

    rc1 = read_once(data, size, 0, &d1, &s1);
    if (rc1 < 0) {
        const tt_error *e = tt_error_last();
        char msg[1200];
        FUZZ_CHECK(e->code == rc1, "error %d, tt_error_last() says %d", rc1, e->code);
        FUZZ_CHECK(memchr(e->message, 0, sizeof(e->message)) &&
                       memchr(e->source, 0, sizeof(e->source)),
                   "unterminated error record");
        tt_error_format(e, msg, sizeof(msg));
        (void)strlen(msg);
    }
    FUZZ_CHECK(s1.events <= d1.calls, "stats.events %lld > callbacks %lld",
               (long long)s1.events, (long long)d1.calls);
    FUZZ_CHECK(strlen(s1.hash) == 32 || rc1 == TT_EEMPTY || s1.hash[0] == '\0',
               "hash '%s'", s1.hash);

    rc2 = read_once(data, size, max_read, &d2, &s2);
    FUZZ_CHECK(rc1 == rc2, "status %d with one read, %d with %zu-byte reads", rc1, rc2,
               max_read);
    if (rc1 != TT_ENOMEM) {
        FUZZ_CHECK(d1.calls == d2.calls && d1.h == d2.h,
                   "delivered data differs with %zu-byte reads (%lld vs %lld callbacks)",
                   max_read, (long long)d1.calls, (long long)d2.calls);
        FUZZ_CHECK(s1.format == s2.format && s1.events == s2.events &&
                       s1.repaired == s2.repaired && s1.skipped == s2.skipped &&
                       s1.truncated == s2.truncated && s1.gzip == s2.gzip,
                   "stats differ with %zu-byte reads", max_read);
    }
    tt_error_clear();
    return 0;
}
