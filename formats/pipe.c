/*
 * formats/pipe.c - tt_read_trace: on the calling thread, or on a second thread.
 *
 * With TT_READ_THREADED the reader (decompression excepted, which has its own
 * thread) runs on a worker thread and hands deep copies of what it decodes to
 * the calling thread in batches, so decoding overlaps whatever the sink does
 * (SQLite inserts). A small fixed ring of batches bounds the memory: they go
 * round two queues (common/queue.h), filled ones to the calling thread and
 * delivered ones back. Callbacks run on the calling thread, in input order;
 * the last error is carried back.
 */
#include "common/compat.h"
#include "common/arena.h"
#include "common/queue.h"
#include "formats/reader_internal.h"
#include "tracetool/formats.h"

#include <pthread.h>

#define NBATCH 4
#define BATCH_ITEMS 4096

enum { IT_FORMAT, IT_META, IT_EVENT, IT_NODE, IT_MEMROW };

struct item {
    int kind;
    union {
        tt_trace_format fmt;
        struct {
            const char *key, *json;
            size_t len;
        } meta;
        tt_event ev;
        tt_et_node node;
        tt_memrow row;
    } u;
};

struct batch {
    struct item *items;
    size_t n;
    tt_arena arena;
};

struct pipe {
    struct batch b[NBATCH];
    tt__queue full;     /* filled batches, in order, to the calling thread */
    tt__queue empty;    /* delivered batches, back to the reader thread */
    struct batch *cur;  /* reader thread: the batch being filled, NULL none */
    /* the reader thread's result, read after the join */
    int rc;
    tt_error err;
    tt_read_stats stats;
    const char *path;
    tt_read_options opts;
};

/* NULL once the calling thread stopped (its sink failed) */
static struct batch *cur_batch(struct pipe *p)
{
    struct batch *b;
    void *v;
    if (p->cur)
        return p->cur;
    if (tt__queue_get(&p->empty, &v) != 1)
        return NULL;
    b = p->cur = v;
    b->n = 0;
    tt_arena_reset(&b->arena);
    return b;
}

static void publish(struct pipe *p)
{
    if (!p->cur)
        return;
    tt__queue_put(&p->full, p->cur); /* NBATCH slots: fails only once stopped */
    p->cur = NULL;
}

static struct item *new_item(struct pipe *p, struct batch **bo)
{
    struct batch *b = cur_batch(p);
    if (!b)
        return NULL;
    *bo = b;
    return &b->items[b->n];
}

static void commit_item(struct pipe *p, struct batch *b)
{
    if (++b->n == BATCH_ITEMS)
        publish(p);
}

#define DUP(field)                                                             \
    do {                                                                       \
        if ((field) && !((field) = tt_arena_strndup(a, (field), strlen(field)))) \
            return TT_ENOMEM;                                                  \
    } while (0)

static int dup_id(tt_arena *a, tt_id *id)
{
    if (id->present && id->is_str)
        DUP(id->str);
    return 0;
}

static int c_format(void *ctx, tt_trace_format f)
{
    struct pipe *p = ctx;
    struct batch *b;
    struct item *it = new_item(p, &b);
    if (!it)
        return TT_ECANCELED;
    it->kind = IT_FORMAT;
    it->u.fmt = f;
    commit_item(p, b);
    return 0;
}

static int c_meta(void *ctx, const char *key, const char *json, size_t len)
{
    struct pipe *p = ctx;
    struct batch *b;
    struct item *it = new_item(p, &b);
    if (!it)
        return TT_ECANCELED;
    it->kind = IT_META;
    it->u.meta.key = tt_arena_strndup(&b->arena, key, strlen(key));
    it->u.meta.json = tt_arena_strndup(&b->arena, json, len);
    it->u.meta.len = len;
    if (!it->u.meta.key || !it->u.meta.json)
        return tt__oom();
    commit_item(p, b);
    return 0;
}

static int copy_event(tt_arena *a, tt_event *e)
{
    DUP(e->name);
    DUP(e->cat);
    DUP(e->bp);
    DUP(e->s);
    DUP(e->input_dims);
    DUP(e->input_types);
    DUP(e->arg_name);
    DUP(e->arg_labels);
    if (e->args && !(e->args = tt_arena_strndup(a, e->args, e->args_len)))
        return TT_ENOMEM;
    if (dup_id(a, &e->pid) < 0 || dup_id(a, &e->tid) < 0 || dup_id(a, &e->id) < 0)
        return TT_ENOMEM;
    return 0;
}

/* one malloc holding the event and its strings; free() it */
tt_event *tt__event_clone(const tt_event *ev)
{
    const char *strs[12];
    size_t lens[12], total = sizeof(tt_event), i, n = 0;
    tt_event *c;
    char *p;
    const char **fields[12];
    tt_event tmp = *ev;
    fields[n++] = &tmp.name;
    fields[n++] = &tmp.cat;
    fields[n++] = &tmp.bp;
    fields[n++] = &tmp.s;
    fields[n++] = &tmp.input_dims;
    fields[n++] = &tmp.input_types;
    fields[n++] = &tmp.arg_name;
    fields[n++] = &tmp.arg_labels;
    fields[n++] = &tmp.args;
    fields[n++] = &tmp.pid.str;
    fields[n++] = &tmp.tid.str;
    fields[n++] = &tmp.id.str;
    for (i = 0; i < n; i++) {
        strs[i] = *fields[i];
        lens[i] = !strs[i] ? 0 : fields[i] == &tmp.args ? ev->args_len : strlen(strs[i]);
        if (strs[i])
            total += lens[i] + 1;
    }
    c = malloc(total);
    if (!c)
        return NULL;
    p = (char *)(c + 1);
    for (i = 0; i < n; i++) {
        if (!strs[i])
            continue;
        memcpy(p, strs[i], lens[i]);
        p[lens[i]] = '\0';
        *fields[i] = p;
        p += lens[i] + 1;
    }
    *c = tmp;
    return c;
}

static int c_event(void *ctx, const tt_event *ev)
{
    struct pipe *p = ctx;
    struct batch *b;
    struct item *it = new_item(p, &b);
    if (!it)
        return TT_ECANCELED;
    it->kind = IT_EVENT;
    it->u.ev = *ev;
    if (copy_event(&b->arena, &it->u.ev) < 0)
        return tt__oom();
    commit_item(p, b);
    return 0;
}

static int copy_node(tt_arena *a, tt_et_node *n)
{
    DUP(n->name);
    DUP(n->op_schema);
    DUP(n->inputs);
    DUP(n->input_shapes);
    DUP(n->input_types);
    DUP(n->input_strides);
    DUP(n->outputs);
    DUP(n->output_shapes);
    DUP(n->output_types);
    DUP(n->output_strides);
    DUP(n->attrs);
    DUP(n->extra);
    return 0;
}

static int c_node(void *ctx, const tt_et_node *n)
{
    struct pipe *p = ctx;
    struct batch *b;
    struct item *it = new_item(p, &b);
    if (!it)
        return TT_ECANCELED;
    it->kind = IT_NODE;
    it->u.node = *n;
    if (copy_node(&b->arena, &it->u.node) < 0)
        return tt__oom();
    commit_item(p, b);
    return 0;
}

static int c_memrow(void *ctx, const tt_memrow *m)
{
    struct pipe *p = ctx;
    struct batch *b;
    struct item *it = new_item(p, &b);
    if (!it)
        return TT_ECANCELED;
    it->kind = IT_MEMROW;
    it->u.row = *m;
    commit_item(p, b);
    return 0;
}

static void *producer(void *arg)
{
    struct pipe *p = arg;
    tt_trace_sink sink;
    tt_read_options o = p->opts;
    int rc;
    memset(&sink, 0, sizeof(sink));
    sink.ctx = p;
    sink.on_format = c_format;
    sink.on_meta = c_meta;
    sink.on_event = c_event;
    sink.on_et_node = c_node;
    sink.on_memrow = c_memrow;
    tt__init_stats(&p->stats);
    rc = tt__read_trace_direct(p->path, &sink, &o, &p->stats);
    publish(p);
    p->rc = rc;
    if (rc < 0)
        p->err = *tt_error_last();
    /* the batches queued are delivered first, then the read's error (a
     * truncated file's rows count: --salvage) */
    tt__queue_close(&p->full);
    return NULL;
}

static int deliver(const tt_trace_sink *s, const struct item *it)
{
    switch (it->kind) {
    case IT_FORMAT:
        return s->on_format ? s->on_format(s->ctx, it->u.fmt) : 0;
    case IT_META:
        return s->on_meta ? s->on_meta(s->ctx, it->u.meta.key, it->u.meta.json, it->u.meta.len) : 0;
    case IT_EVENT:
        return s->on_event ? s->on_event(s->ctx, &it->u.ev) : 0;
    case IT_NODE:
        return s->on_et_node ? s->on_et_node(s->ctx, &it->u.node) : 0;
    default:
        return s->on_memrow ? s->on_memrow(s->ctx, &it->u.row) : 0;
    }
}

static int read_threaded(const char *path, const tt_trace_sink *sink,
                      const tt_read_options *opts, tt_read_stats *stats)
{
    struct pipe *p = calloc(1, sizeof(*p));
    pthread_t th;
    int i, rc = 0, sink_rc = 0;
    tt_error sink_err;
    if (!p)
        return tt__oom();
    if (tt__queue_init(&p->full, NBATCH) < 0 || tt__queue_init(&p->empty, NBATCH) < 0) {
        rc = TT_ENOMEM;
        goto out;
    }
    for (i = 0; i < NBATCH; i++) {
        p->b[i].items = malloc(sizeof(struct item) * BATCH_ITEMS);
        p->b[i].arena.block_size = 256 * 1024;
        if (!p->b[i].items) {
            rc = tt__oom();
            goto out;
        }
        tt__queue_put(&p->empty, &p->b[i]); /* NBATCH slots: cannot block */
    }
    p->path = path;
    p->opts = *opts;
    if (pthread_create(&th, NULL, producer, p) != 0) {
        rc = tt_error_set(TT_ERROR, "cannot start the reader thread");
        goto out;
    }
    for (;;) {
        struct batch *b;
        void *v;
        size_t k;
        if (tt__queue_get(&p->full, &v) != 1)
            break; /* the reader thread is done */
        b = v;
        for (k = 0; k < b->n && !sink_rc; k++)
            sink_rc = deliver(sink, &b->items[k]);
        if (sink_rc) {
            /* stop the reader thread wherever it waits; what it still
             * decodes is dropped */
            sink_err = *tt_error_last();
            tt__queue_fail(&p->empty, sink_rc < 0 ? sink_rc : TT_ECANCELED);
            tt__queue_fail(&p->full, sink_rc < 0 ? sink_rc : TT_ECANCELED);
            break;
        }
        tt__queue_put(&p->empty, b); /* NBATCH slots: cannot block */
    }
    pthread_join(th, NULL);
    *stats = p->stats;
    if (sink_rc) {
        tt_error_set_at(sink_err.code ? sink_err.code : sink_rc, sink_err.source,
                        sink_err.offset, "%s", sink_err.message);
        rc = sink_rc < 0 ? sink_rc : TT_ECANCELED;
    } else if (p->rc < 0) {
        tt_error_set_at(p->err.code, p->err.source, p->err.offset, "%s", p->err.message);
        rc = p->rc;
    }
out:
    tt__queue_destroy(&p->full);
    tt__queue_destroy(&p->empty);
    for (i = 0; i < NBATCH; i++) {
        free(p->b[i].items);
        tt_arena_release(&p->b[i].arena);
    }
    free(p);
    return rc;
}

/* tt_set_file_progress: set by the caller before any read starts */
static tt_file_progress_fn file_progress;
static void *file_progress_payload;

void tt_set_file_progress(tt_file_progress_fn fn, void *payload)
{
    file_progress = fn;
    file_progress_payload = payload;
}

struct file_progress_ctx {
    tt_file_progress_fn fn;
    void *payload;
    const char *path;
};

static void on_file_progress(void *payload, int64_t file_pos, int64_t file_size, int64_t bytes,
                             int64_t events)
{
    struct file_progress_ctx *c = payload;
    c->fn(c->payload, c->path, file_pos, file_size, bytes, events, 0);
}

static int read_trace(const char *path, const tt_trace_sink *sink, const tt_read_options *opts,
                      tt_read_stats *stats)
{
    if (opts && (opts->flags & TT_READ_THREADED))
        return read_threaded(path, sink, opts, stats);
    return tt__read_trace_direct(path, sink, opts, stats);
}

int tt_read_trace(const char *path, const tt_trace_sink *sink,
                  const tt_read_options *opts, tt_read_stats *stats)
{
    tt_read_stats local;
    tt_read_options with = TT_READ_OPTIONS_INIT;
    struct file_progress_ctx c = { file_progress, file_progress_payload, path };
    int rc;
    if (!stats)
        stats = &local;
    tt__init_stats(stats);
    tt_error_clear();
    if (!c.fn || (opts && opts->progress))
        return read_trace(path, sink, opts, stats);
    if (opts)
        with = *opts;
    with.progress = on_file_progress;
    with.progress_payload = &c;
    c.fn(c.payload, path, 0, -1, 0, 0, 0); /* the read starts */
    rc = read_trace(path, sink, &with, stats);
    c.fn(c.payload, path, -1, -1, -1, stats->events, 1);
    return rc;
}
