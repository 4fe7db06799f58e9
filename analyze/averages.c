/*
 * analyze/averages.c - `tracetool averages`: torch's key_averages() and
 * table() recomputed from a stored trace (../shared/docs/FORMATS.md 3).
 *
 * One ordered pass over the trace's events, all threads merged by start time
 * (each table scanned as stored into fixed-size records, sorted in runs of
 * 256k that a helper thread spills to a temporary file, then merged: memory
 * does not grow with the trace):
 *   - CPU events (cpu_op, user_annotation, legacy Operator / uncategorised,
 *     runtime calls) are nested per thread with torch's stack rule; a frame
 *     is finalised when it is popped, after its children;
 *   - the same-name single-child collapse (_remove_dup_nodes) happens at pop
 *     time: a frame keeps its first child back until it knows whether it is
 *     the only one;
 *   - [memory] records are summed into every CPU event whose [start, end]
 *     holds them (any thread) through running totals captured at start and,
 *     via a heap of open events ordered by end, at end; records inside no
 *     event become "[memory]" rows;
 *   - device time comes from the kernels/memcpys/memsets linked to the op at
 *     ingest (gpu_ops.op_id); GPU activities are rows of their own.
 * Rows are aggregated by key in first-occurrence order, then sorted and
 * printed like torch's table (or CSV / JSON / Markdown).
 *
 * A trace file is read without a database when it can be: the ingest's rows
 * (tt__ingest_rows: same decoding and in-stream links, no SQLite) become the
 * same records the tables would give, the device time of each op comes as
 * records that sort right after the op's (fs_kernel), and the same pass
 * runs. When the rows need
 * the SQL passes that follow a load, the file goes through a temporary
 * database instead (averages_stream says which, with TT_DEBUG_AVG=1).
 */
#include "common/compat.h"
#include "common/buf.h"
#include "analyze/db_internal.h"
#include "analyze/ingest_rows.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <sys/stat.h>

/* ---- aggregated rows ---- */

enum { DEV_CPU = 0, DEV_CUDA = 1 };

struct row {
    int64_t name;    /* string id (after the ProfilerStep rewrite) */
    int64_t shapes;  /* string id of Input Dims when grouping by shape, else 0 */
    int64_t stack;   /* local stack id when grouping by stack, else 0 */
    int device;      /* DEV_CPU / DEV_CUDA */
    int is_user_annotation;
    int has_parent;  /* of the first event (for --top-level-only) */
    int seen;        /* has_parent is set */
    int64_t count;
    double cpu_total, self_cpu, dev_total, self_dev; /* us */
    int64_t cpu_mem, self_cpu_mem, dev_mem, self_dev_mem;
    char *name_str;  /* resolved for output */
    char *shapes_str;
    size_t stack_idx;  /* index+1 into the state's stack strings, 0 = none */
    size_t order;    /* first occurrence */
};

struct agg {
    struct row *rows;
    size_t n, alloc;
    size_t *slots; /* hash: row index + 1 */
    size_t nslots;
};

static uint64_t key_hash(int64_t name, int64_t shapes, int64_t stack, int device)
{
    uint64_t h = (uint64_t)name * 0x9E3779B97F4A7C15ULL;
    h ^= (uint64_t)shapes * 0xC2B2AE3D27D4EB4FULL + (uint64_t)device;
    h ^= (uint64_t)stack * 0x165667B19E3779F9ULL;
    h ^= h >> 29;
    return h;
}

static int agg_grow(struct agg *a)
{
    size_t ns = a->nslots ? a->nslots * 2 : 1024, i;
    size_t *slots = calloc(ns, sizeof(*slots));
    if (!slots)
        return TT_ENOMEM;
    for (i = 0; i < a->n; i++) {
        struct row *r = &a->rows[i];
        size_t j = key_hash(r->name, r->shapes, r->stack, r->device) & (ns - 1);
        while (slots[j])
            j = (j + 1) & (ns - 1);
        slots[j] = i + 1;
    }
    free(a->slots);
    a->slots = slots;
    a->nslots = ns;
    return 0;
}

/* Row for a key, created (in first-occurrence order) when new. */
static struct row *agg_get(struct agg *a, int64_t name, int64_t shapes, int64_t stack,
                           int device)
{
    size_t j;
    struct row *r;
    if ((a->n + 1) * 2 > a->nslots && agg_grow(a) < 0)
        return NULL;
    j = key_hash(name, shapes, stack, device) & (a->nslots - 1);
    while (a->slots[j]) {
        r = &a->rows[a->slots[j] - 1];
        if (r->name == name && r->shapes == shapes && r->stack == stack && r->device == device)
            return r;
        j = (j + 1) & (a->nslots - 1);
    }
    if (TT_ALLOC_GROW(a->rows, a->n + 1, a->alloc) < 0)
        return NULL;
    r = &a->rows[a->n];
    memset(r, 0, sizeof(*r));
    r->name = name;
    r->shapes = shapes;
    r->stack = stack;
    r->device = device;
    r->order = a->n;
    a->slots[j] = ++a->n;
    return r;
}

static void agg_release(struct agg *a)
{
    size_t i;
    for (i = 0; i < a->n; i++) {
        free(a->rows[i].name_str);
        free(a->rows[i].shapes_str);
    }
    free(a->rows);
    free(a->slots);
    memset(a, 0, sizeof(*a));
}

/* ---- CPU event frames ---- */

struct ev {
    int64_t name, shapes, stack;
    int64_t start, end;     /* ns */
    int64_t kernels_ns;     /* own linked device time */
    int64_t mem_start[2];   /* running memory totals (cpu, device) before start */
    int64_t mem_end[2];     /* ... at end; set when the end is passed */
    int have_end_mem;
    int has_parent;
    int is_user_annotation;
    /* children */
    int nchildren;
    int64_t child_cpu_ns, child_dev_ns;
    int64_t child_mem[2];
    /* the first child, held back for the same-name collapse */
    int have_first;
    struct ev_first {
        int64_t name, shapes, stack, start, end, kernels_ns;
        int64_t child_cpu_ns, child_dev_ns, child_mem[2], mem[2];
        int64_t dev_total_ns;
        int nchildren, has_parent, is_user_annotation;
    } first;
    size_t heap_pos; /* index in the end-heap, or SIZE_MAX when out */
    uint64_t serial;
    struct ev *parent; /* the enclosing frame at push time */
    int closed;        /* popped from its thread stack: finished once its end is passed */
};

struct thread_stack {
    int64_t pid_i, tid_i;
    char *pid_s, *tid_s;
    int pid_is_str, tid_is_str, pid_null, tid_null;
    struct ev **frames;
    size_t n, alloc;
};

/* strings by id, for a pass without a database (ids 1, 2, ... in order) */
struct memstr {
    char **s;
    size_t n, alloc;
};

struct state {
    tt_db *db;
    const struct memstr *ms; /* set when there is no database */
    const tt_avg_options *o;
    struct agg agg;
    struct thread_stack *threads;
    size_t nthreads, athreads, last;
    /* heap of open events by end time, for memory totals at their end */
    struct ev **heap;
    size_t nheap, aheap;
    int64_t mem_total[2], mem_lt[2], mem_ts;
    int have_mem_ts;
    struct ev *free_list;
    uint64_t serial;
    int64_t step_name; /* string id of "ProfilerStep*" (0 until needed) */
    char **stacks;     /* distinct first-N stack entries ('\n'-joined); id = index + 1 */
    size_t nstacks, astacks;
    int any_memory;
};

/* heap helpers (min-heap on end) */
static void heap_swap(struct state *s, size_t i, size_t j)
{
    struct ev *t = s->heap[i];
    s->heap[i] = s->heap[j];
    s->heap[j] = t;
    s->heap[i]->heap_pos = i;
    s->heap[j]->heap_pos = j;
}

static int heap_less(const struct ev *a, const struct ev *b)
{
    /* equal ends: the later push (a child) first, so children finish before parents */
    return a->end < b->end || (a->end == b->end && a->serial > b->serial);
}

static void heap_up(struct state *s, size_t i)
{
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!heap_less(s->heap[i], s->heap[p]))
            break;
        heap_swap(s, i, p);
        i = p;
    }
}

static void heap_down(struct state *s, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < s->nheap && heap_less(s->heap[l], s->heap[m]))
            m = l;
        if (r < s->nheap && heap_less(s->heap[r], s->heap[m]))
            m = r;
        if (m == i)
            break;
        heap_swap(s, i, m);
        i = m;
    }
}

static int heap_push(struct state *s, struct ev *e)
{
    if (TT_ALLOC_GROW(s->heap, s->nheap + 1, s->aheap) < 0)
        return TT_ENOMEM;
    s->heap[s->nheap] = e;
    e->heap_pos = s->nheap++;
    heap_up(s, e->heap_pos);
    return 0;
}

static void heap_remove_top(struct state *s)
{
    struct ev *top = s->heap[0];
    top->heap_pos = SIZE_MAX;
    s->nheap--;
    if (s->nheap) {
        s->heap[0] = s->heap[s->nheap];
        s->heap[0]->heap_pos = 0;
        heap_down(s, 0);
    }
}

/* Record the running memory totals at the end of every open event that ends
 * before time t (records at exactly its end are already counted). */
static int finish(struct state *s, struct ev *e, struct ev *p);

static int pass_ends(struct state *s, int64_t t)
{
    int rc;
    while (s->nheap && s->heap[0]->end < t) {
        struct ev *e = s->heap[0];
        e->mem_end[0] = s->mem_total[0];
        e->mem_end[1] = s->mem_total[1];
        e->have_end_mem = 1;
        heap_remove_top(s);
        if (e->closed && (rc = finish(s, e, e->parent)) < 0)
            return rc;
    }
    return 0;
}

static struct ev *ev_new(struct state *s)
{
    struct ev *e = s->free_list;
    if (e)
        s->free_list = *(struct ev **)e;
    else if (!(e = malloc(sizeof(*e))))
        return NULL;
    memset(e, 0, sizeof(*e));
    e->heap_pos = SIZE_MAX;
    return e;
}

static void ev_free(struct state *s, struct ev *e)
{
    *(struct ev **)e = s->free_list;
    s->free_list = e;
}

/* ---- adding finished events to the aggregate ---- */

static int add_row(struct state *s, int64_t name, int64_t shapes, int64_t stack, int device,
                   int has_parent, int is_ua, double cpu_total, double self_cpu,
                   double dev_total, double self_dev, const int64_t mem[2],
                   const int64_t self_mem[2])
{
    struct row *r = agg_get(&s->agg, name, s->o->group_by_shape ? shapes : 0, stack, device);
    if (!r)
        return tt_error_set(TT_ENOMEM, "out of memory");
    if (r->count == 0)
        r->is_user_annotation = is_ua;
    if (!r->seen) {
        r->seen = 1;
        r->has_parent = has_parent;
    }
    r->count++;
    r->cpu_total += cpu_total;
    r->self_cpu += self_cpu;
    r->dev_total += dev_total;
    r->self_dev += self_dev;
    r->cpu_mem += mem[0];
    r->dev_mem += mem[1];
    r->self_cpu_mem += self_mem[0];
    r->self_dev_mem += self_mem[1];
    return 0;
}

static int emit_first(struct state *s, const struct ev_first *f)
{
    int64_t self_mem[2] = { f->mem[0] - f->child_mem[0], f->mem[1] - f->child_mem[1] };
    double cpu = (double)(f->end - f->start) / 1e3;
    return add_row(s, f->name, f->shapes, f->stack, DEV_CPU, f->has_parent, f->is_user_annotation, cpu,
                   cpu - (double)f->child_cpu_ns / 1e3, (double)f->dev_total_ns / 1e3,
                   (double)f->kernels_ns / 1e3, f->mem, self_mem);
}

/*
 * Finish frame e (its children are done) and hand it to its parent p (NULL
 * at top level). Frees e.
 */
static int finish(struct state *s, struct ev *e, struct ev *p)
{
    struct ev_first me;
    int rc;
    /* same-name single child: the child disappears, its children and
     * kernels become ours (torch's _remove_dup_nodes) */
    if (e->nchildren == 1 && e->have_first && e->first.name == e->name) {
        e->nchildren = e->first.nchildren;
        e->child_cpu_ns = e->first.child_cpu_ns;
        e->child_dev_ns = e->first.child_dev_ns;
        e->child_mem[0] = e->first.child_mem[0];
        e->child_mem[1] = e->first.child_mem[1];
        e->kernels_ns = e->first.kernels_ns;
        e->have_first = 0;
    } else if (e->have_first) {
        if ((rc = emit_first(s, &e->first)) < 0)
            return rc;
        e->have_first = 0;
    }
    me.name = e->name;
    me.shapes = e->shapes;
    me.stack = e->stack;
    me.start = e->start;
    me.end = e->end;
    me.kernels_ns = e->kernels_ns;
    me.child_cpu_ns = e->child_cpu_ns;
    me.child_dev_ns = e->child_dev_ns;
    me.child_mem[0] = e->child_mem[0];
    me.child_mem[1] = e->child_mem[1];
    me.mem[0] = e->mem_end[0] - e->mem_start[0];
    me.mem[1] = e->mem_end[1] - e->mem_start[1];
    me.dev_total_ns = e->kernels_ns + e->child_dev_ns;
    me.nchildren = e->nchildren;
    me.has_parent = p != NULL;
    me.is_user_annotation = e->is_user_annotation;
    ev_free(s, e);
    if (!p)
        return emit_first(s, &me);
    p->nchildren++;
    p->child_cpu_ns += me.end - me.start;
    p->child_dev_ns += me.dev_total_ns;
    p->child_mem[0] += me.mem[0];
    p->child_mem[1] += me.mem[1];
    if (p->nchildren == 1) {
        p->first = me;
        p->have_first = 1;
        return 0;
    }
    if (p->have_first) {
        if ((rc = emit_first(s, &p->first)) < 0)
            return rc;
        p->have_first = 0;
    }
    return emit_first(s, &me);
}

/* a pid or tid as stored: NULL, an integer or a string (not NUL-terminated) */
struct tkey {
    int is_null, is_str;
    int64_t i;
    const char *str;
    size_t len;
};

static void tkey_of_value(struct tkey *k, sqlite3_value *v)
{
    int t = sqlite3_value_type(v);
    memset(k, 0, sizeof(*k));
    k->is_null = t == SQLITE_NULL;
    k->is_str = t == SQLITE_TEXT;
    if (k->is_str) {
        k->str = (const char *)sqlite3_value_text(v);
        k->len = (size_t)sqlite3_value_bytes(v);
    } else {
        k->i = sqlite3_value_int64(v);
    }
}

static int value_matches(int is_null, int is_str, int64_t i, const char *str,
                         const struct tkey *k)
{
    if (k->is_null)
        return is_null;
    if (!k->is_str)
        return !is_null && !is_str && k->i == i;
    return !is_null && is_str && strlen(str) == k->len && !memcmp(str, k->str, k->len);
}

static struct thread_stack *thread_for(struct state *s, const struct tkey *pid,
                                       const struct tkey *tid)
{
    size_t i;
    struct thread_stack *t;
    for (i = 0; i < s->nthreads; i++) {
        size_t k = (s->last + i) % s->nthreads;
        t = &s->threads[k];
        if (value_matches(t->pid_null, t->pid_is_str, t->pid_i, t->pid_s, pid) &&
            value_matches(t->tid_null, t->tid_is_str, t->tid_i, t->tid_s, tid)) {
            s->last = k;
            return t;
        }
    }
    if (TT_ALLOC_GROW(s->threads, s->nthreads + 1, s->athreads) < 0)
        return NULL;
    t = &s->threads[s->nthreads];
    memset(t, 0, sizeof(*t));
    t->pid_null = pid->is_null;
    t->tid_null = tid->is_null;
    t->pid_is_str = pid->is_str;
    t->tid_is_str = tid->is_str;
    t->pid_i = pid->i;
    t->tid_i = tid->i;
    if (t->pid_is_str && !(t->pid_s = strndup(pid->str, pid->len)))
        return NULL;
    if (t->tid_is_str && !(t->tid_s = strndup(tid->str, tid->len)))
        return NULL;
    s->last = s->nthreads++;
    return t;
}

static int push_cpu(struct state *s, struct thread_stack *t, struct ev *e)
{
    int rc;
    /* torch: pop while the new event starts at/after the parent's end or
     * ends after it */
    while (t->n) {
        struct ev *p = t->frames[t->n - 1];
        if (e->start >= p->end || e->end > p->end) {
            t->n--;
            /* its [memory] records may still come (up to its end): finish
             * it once the stream passes its end */
            p->closed = 1;
            if (p->have_end_mem && (rc = finish(s, p, p->parent)) < 0)
                return rc;
        } else {
            break;
        }
    }
    e->has_parent = t->n > 0;
    e->parent = t->n ? t->frames[t->n - 1] : NULL;
    /* rows keep torch's order and the first event's parent: first
     * occurrence in start order */
    {
        struct row *r = agg_get(&s->agg, e->name, s->o->group_by_shape ? e->shapes : 0, e->stack,
                                DEV_CPU);
        if (!r)
            return tt_error_set(TT_ENOMEM, "out of memory");
        if (!r->seen) {
            r->seen = 1;
            r->has_parent = e->has_parent;
        }
    }
    if (TT_ALLOC_GROW(t->frames, t->n + 1, t->alloc) < 0)
        return tt_error_set(TT_ENOMEM, "out of memory");
    t->frames[t->n++] = e;
    return heap_push(s, e) < 0 ? tt_error_set(TT_ENOMEM, "out of memory") : 0;
}

static int flush_threads(struct state *s)
{
    size_t i;
    int rc;
    if ((rc = pass_ends(s, INT64_MAX)) < 0)
        return rc;
    for (i = 0; i < s->nthreads; i++) {
        struct thread_stack *t = &s->threads[i];
        while (t->n) {
            struct ev *e = t->frames[--t->n];
            if ((rc = finish(s, e, e->parent)) < 0)
                return rc;
        }
    }
    return 0;
}

static void state_release(struct state *s)
{
    size_t i;
    struct ev *e;
    for (i = 0; i < s->nthreads; i++) {
        struct thread_stack *t = &s->threads[i];
        while (t->n)
            free(t->frames[--t->n]);
        free(t->frames);
        free(t->pid_s);
        free(t->tid_s);
    }
    free(s->threads);
    free(s->heap);
    for (i = 0; i < s->nstacks; i++)
        free(s->stacks[i]);
    free(s->stacks);
    while ((e = s->free_list) != NULL) {
        s->free_list = *(struct ev **)e;
        free(e);
    }
    agg_release(&s->agg);
}

/* ---- names ---- */

static int is_filtered(const char *n)
{
    static const char *const names[] = {
        "[memory]", "[OutOfMemory]", "profiler::_record_function_enter",
        "profiler::_record_function_enter_new", "profiler::_record_function_exit",
        "aten::is_leaf", "aten::output_nr", "aten::_version",
    };
    size_t i;
    for (i = 0; i < TT_ARRAY_SIZE(names); i++) {
        if (!strcmp(n, names[i]))
            return 1;
    }
    return 0;
}

/* per-trace name classes, computed once per string id */
struct names {
    int64_t *ids;
    signed char *cls; /* 0 keep, 1 filtered, 2 ProfilerStep#N */
    size_t n, alloc;
};

static const char *mem_string(const struct memstr *ms, int64_t id)
{
    return id >= 1 && (size_t)id <= ms->n ? ms->s[id - 1] : NULL;
}

static int classify_name(const char *str)
{
    if (!str)
        return 0;
    if (is_filtered(str))
        return 1;
    return !strncmp(str, "ProfilerStep#", 13) ? 2 : 0;
}

static int name_class(const struct state *s, struct names *nm, int64_t id)
{
    size_t lo = 0, hi = nm->n;
    sqlite3_stmt *st;
    const char *str;
    int c = 0;
    tt_db *db = s->db;
    if (s->ms)
        return classify_name(mem_string(s->ms, id));
    /* ids are appended in increasing order of first use: linear probe of a
     * small sorted set is enough here */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (nm->ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < nm->n && nm->ids[lo] == id)
        return nm->cls[lo];
    if (sqlite3_prepare_v2(db->sql, "SELECT s FROM strings WHERE id = ?1", -1, &st, NULL) !=
        SQLITE_OK)
        return 0;
    sqlite3_bind_int64(st, 1, id);
    if (sqlite3_step(st) == SQLITE_ROW && (str = (const char *)sqlite3_column_text(st, 0)))
        c = classify_name(str);
    sqlite3_finalize(st);
    {
        size_t alloc2 = nm->alloc;
        if (TT_ALLOC_GROW(nm->ids, nm->n + 1, nm->alloc) < 0 ||
            TT_ALLOC_GROW(nm->cls, nm->n + 1, alloc2) < 0)
            return 0;
        nm->alloc = alloc2 > nm->alloc ? alloc2 : nm->alloc;
    }
    memmove(nm->ids + lo + 1, nm->ids + lo, (nm->n - lo) * sizeof(*nm->ids));
    memmove(nm->cls + lo + 1, nm->cls + lo, (nm->n - lo) * sizeof(*nm->cls));
    nm->ids[lo] = id;
    nm->cls[lo] = (signed char)c;
    nm->n++;
    return c;
}

static int64_t string_id(tt_db *db, const char *s, int create)
{
    sqlite3_stmt *st;
    int64_t id = 0;
    if (sqlite3_prepare_v2(db->sql, "SELECT id FROM strings WHERE s = ?1", -1, &st, NULL) !=
        SQLITE_OK)
        return 0;
    sqlite3_bind_text(st, 1, s, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW)
        id = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    (void)create;
    return id;
}

/* torch's _filter_stack_entry */
static int keep_stack_entry(const char *e, size_t len)
{
    static const char *const drop[][2] = {
        { "autograd/__init__", "_make_grads" }, { "autograd/__init__", "backward" },
        { "torch/tensor", "backward" }, { "_internal/common_utils", "prof_callable" },
        { "_internal/common_utils", "prof_func_call" },
        { "_internal/common_utils", "prof_meth_call" },
    };
    size_t i;
    char buf[1024];
    snprintf(buf, sizeof(buf), "%.*s", (int)(len < sizeof(buf) - 1 ? len : sizeof(buf) - 1), e);
    for (i = 0; i < TT_ARRAY_SIZE(drop); i++) {
        if (strstr(buf, drop[i][0]) && strstr(buf, drop[i][1]))
            return 0;
    }
    return 1;
}

/* Local id of the first n kept entries of a ';'-joined "Call stack". */
static int64_t stack_id(struct state *s, const char *cs, int64_t n)
{
    tt_buf b = TT_BUF_INIT;
    const char *p = cs;
    int64_t taken = 0;
    size_t i;
    while (p && *p && taken < n) {
        const char *e = strchr(p, ';');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len && keep_stack_entry(p, len)) {
            if (b.len)
                tt_buf_addch(&b, '\n');
            tt_buf_add(&b, p, len);
            taken++;
        }
        p = e ? e + 1 : NULL;
    }
    if (!b.len)
        return 0;
    for (i = 0; i < s->nstacks; i++) {
        if (!strcmp(s->stacks[i], b.buf)) {
            tt_buf_release(&b);
            return (int64_t)i + 1;
        }
    }
    if (TT_ALLOC_GROW(s->stacks, s->nstacks + 1, s->astacks) < 0) {
        tt_buf_release(&b);
        return -1;
    }
    s->stacks[s->nstacks++] = b.buf;
    return (int64_t)s->nstacks;
}

/* ---- the pass ---- */

/*
 * The pass reads every event of the trace in torch's order: (ts, end DESC),
 * then kind so that a memory record at an op's start follows the op's push,
 * then id. kind: 0 CPU op (slices), 1 runtime call, 2 [memory] record, 3 GPU
 * activity. Each table is scanned as stored (no ORDER BY) into fixed-size
 * records, sorted here in runs of RUN_RECS (full runs spill to a temporary
 * file) and merged: bounded memory, and about twice as fast as SQLite's own
 * sorter on the same rows.
 */
static const char *const scan_sql[4] = {
    "SELECT s.id, s.name, s.pid, s.tid, s.ts, coalesce(s.dur, 0),"
    " coalesce(s.input_dims, ?6), CASE WHEN s.cat = ?2 THEN 1 ELSE 0 END, k.kernels,"
    " CASE WHEN ?5 > 0 THEN json_extract(s.args, '$.\"Call stack\"') END"
    " FROM slices AS s LEFT JOIN temp.tt_avg_kernels AS k ON k.op_id = s.id"
    " WHERE s.trace_id = ?1 AND s.ts IS NOT NULL AND (s.cat IS NULL OR s.cat IN (?2, ?3, ?4))",
    "SELECT r.id, r.name, r.pid, r.tid, r.ts, coalesce(r.dur, 0), NULL, 0, NULL, NULL"
    " FROM runtime AS r WHERE r.trace_id = ?1 AND r.ts IS NOT NULL",
    "SELECT m.id, m.name, m.pid, m.tid, m.ts, 0, m.device_type, m.bytes, NULL, NULL"
    " FROM memory AS m WHERE m.trace_id = ?1 AND m.ts IS NOT NULL AND m.bytes IS NOT NULL",
    "SELECT g.id, g.name, g.pid, g.tid, g.ts, coalesce(g.dur, 0),"
    " CASE g.kind WHEN 'annotation' THEN 1 ELSE 0 END, 0, NULL, NULL"
    " FROM gpu_ops AS g WHERE g.trace_id = ?1 AND g.ts IS NOT NULL"
    " AND g.kind IN ('kernel', 'memcpy', 'memset', 'annotation')",
};

struct arec {
    int64_t ts, end, id, name;
    int64_t a;      /* kind 0: shapes id; 2: device type; 3: 1 for a GPU annotation */
    int64_t b;      /* kind 0: own device time (ns); 2: bytes */
    int64_t stack;  /* kind 0: local stack id when grouping by stack */
    int32_t kind;
    int32_t thread; /* kinds 0 and 1: index into state.threads */
    int32_t flags;  /* kind 0: AREC_* */
    int32_t pad;
};

enum {
    AREC_USER_ANNOTATION = 1, /* an op of cat user_annotation */
    AREC_DEVICE_WORK = 2      /* not an op: device time (b) of op id (fs_kernel) */
};

static int arec_cmp(const void *pa, const void *pb)
{
    const struct arec *x = pa, *y = pb;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    if (x->end != y->end)
        return x->end > y->end ? -1 : 1;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    /* an op before its device work */
    return (x->flags & AREC_DEVICE_WORK) - (y->flags & AREC_DEVICE_WORK);
}

#define RUN_RECS (256 * 1024) /* records sorted in memory at a time (16 MiB) */

/* TT_AVG_RUN_RECS=N (N >= 2) shrinks the runs, for tests of the merge */
static size_t run_recs(void)
{
    const char *v = getenv("TT_AVG_RUN_RECS");
    long n = v ? atol(v) : 0;
    return n >= 2 && n < RUN_RECS ? (size_t)n : RUN_RECS;
}
#define MERGE_BUF 512         /* records read ahead per spilled run */

struct runs {
    struct arec *buf; /* the run being filled */
    size_t n, cap;
    FILE *spill;      /* full runs, one after another */
    size_t nruns;
    size_t *run_len;  /* records per spilled run */
    size_t arun;
    /* a full run is sorted and written by a helper thread while the next fills */
    struct arec *full; /* the run being spilled (or the spare buffer) */
    size_t nfull;
    pthread_t th;
    int busy;          /* th is running */
    int th_rc;
    tt_error th_err;
};

static int is_sorted(const struct arec *a, size_t n)
{
    size_t i;
    for (i = 1; i < n; i++) {
        if (arec_cmp(&a[i - 1], &a[i]) > 0)
            return 0;
    }
    return 1;
}

static int spill_run(struct runs *r, struct arec *a, size_t n)
{
    if (!is_sorted(a, n)) /* traces are mostly in time order already */
        qsort(a, n, sizeof(*a), arec_cmp);
    if (!r->spill && !(r->spill = tmpfile()))
        return tt_error_set(TT_EIO, "cannot create a temporary file: %s", strerror(errno));
    if (TT_ALLOC_GROW(r->run_len, r->nruns + 1, r->arun) < 0)
        return tt_error_set(TT_ENOMEM, "out of memory");
    if (fwrite(a, sizeof(*a), n, r->spill) != n)
        return tt_error_set(TT_EIO, "cannot write a temporary file: %s", strerror(errno));
    r->run_len[r->nruns++] = n;
    return 0;
}

static void *spill_main(void *arg)
{
    struct runs *r = arg;
    r->th_rc = spill_run(r, r->full, r->nfull);
    if (r->th_rc < 0)
        r->th_err = *tt_error_last();
    return NULL;
}

/* wait for the helper; its error becomes the caller's */
static int spill_wait(struct runs *r)
{
    if (!r->busy)
        return 0;
    pthread_join(r->th, NULL);
    r->busy = 0;
    if (r->th_rc < 0)
        return tt_error_set_at(r->th_err.code ? r->th_err.code : r->th_rc, r->th_err.source,
                               r->th_err.offset, "%s", r->th_err.message);
    return 0;
}

static int runs_full(struct runs *r)
{
    struct arec *t;
    int rc;
    if ((rc = spill_wait(r)) < 0)
        return rc;
    if (!r->full && !(r->full = malloc(sizeof(*r->full) * r->cap)))
        return tt_error_set(TT_ENOMEM, "out of memory");
    t = r->full;
    r->full = r->buf;
    r->nfull = r->n;
    r->buf = t;
    r->n = 0;
    if (pthread_create(&r->th, NULL, spill_main, r) == 0) {
        r->busy = 1;
        return 0;
    }
    return spill_run(r, r->full, r->nfull); /* no thread: here */
}

static int runs_add(struct runs *r, const struct arec *e)
{
    int rc;
    if (!r->buf) {
        r->cap = run_recs();
        if (!(r->buf = malloc(sizeof(*r->buf) * r->cap)))
            return tt_error_set(TT_ENOMEM, "out of memory");
    }
    if (r->n == r->cap && (rc = runs_full(r)) < 0)
        return rc;
    r->buf[r->n++] = *e;
    return 0;
}

static void runs_release(struct runs *r)
{
    spill_wait(r);
    free(r->buf);
    free(r->full);
    free(r->run_len);
    if (r->spill)
        fclose(r->spill);
    memset(r, 0, sizeof(*r));
}

/* k-way merge of the spilled runs and the one in memory */
struct cursor {
    struct arec *buf;
    size_t pos, n;      /* in buf */
    size_t left;        /* records of the run not yet read into buf */
    int64_t off;        /* file offset of the next record to read */
};

struct merge {
    struct runs *r;
    struct cursor *c;
    size_t nc;
    size_t *heap; /* cursor indexes, min-heap on the current record */
    size_t nheap;
};

static const struct arec *cur_rec(const struct merge *m, size_t i)
{
    return &m->c[i].buf[m->c[i].pos];
}

static int cursor_fill(struct merge *m, struct cursor *c)
{
    size_t want = c->left < MERGE_BUF ? c->left : MERGE_BUF;
    c->pos = c->n = 0;
    if (!want)
        return 0;
    if (fseeko(m->r->spill, (off_t)c->off, SEEK_SET) != 0 ||
        fread(c->buf, sizeof(*c->buf), want, m->r->spill) != want)
        return tt_error_set(TT_EIO, "cannot read a temporary file");
    c->n = want;
    c->left -= want;
    c->off += (int64_t)(want * sizeof(*c->buf));
    return 0;
}

static void merge_down(struct merge *m, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, rr = l + 1, k = i;
        if (l < m->nheap && arec_cmp(cur_rec(m, m->heap[l]), cur_rec(m, m->heap[k])) < 0)
            k = l;
        if (rr < m->nheap && arec_cmp(cur_rec(m, m->heap[rr]), cur_rec(m, m->heap[k])) < 0)
            k = rr;
        if (k == i)
            break;
        {
            size_t t = m->heap[i];
            m->heap[i] = m->heap[k];
            m->heap[k] = t;
        }
        i = k;
    }
}

static int merge_start(struct merge *m, struct runs *r)
{
    size_t i, nspill;
    int64_t off = 0;
    int rc;
    memset(m, 0, sizeof(*m));
    m->r = r;
    if ((rc = spill_wait(r)) < 0) /* before counting: it may add a run */
        return rc;
    nspill = r->nruns;
    if (r->n && !is_sorted(r->buf, r->n))
        qsort(r->buf, r->n, sizeof(*r->buf), arec_cmp);
    m->c = calloc(nspill + 1, sizeof(*m->c));
    m->heap = calloc(nspill + 1, sizeof(*m->heap));
    if (!m->c || !m->heap)
        return tt_error_set(TT_ENOMEM, "out of memory");
    if (r->spill)
        fflush(r->spill);
    for (i = 0; i < nspill; i++) {
        struct cursor *c = &m->c[i];
        c->buf = malloc(sizeof(*c->buf) * MERGE_BUF);
        if (!c->buf)
            return tt_error_set(TT_ENOMEM, "out of memory");
        c->left = r->run_len[i];
        c->off = off;
        off += (int64_t)(r->run_len[i] * sizeof(*c->buf));
        if ((rc = cursor_fill(m, c)) < 0)
            return rc;
    }
    m->c[nspill].buf = r->buf; /* the last run, in memory */
    m->c[nspill].n = r->n;
    m->nc = nspill + 1;
    for (i = 0; i < m->nc; i++) {
        if (m->c[i].n)
            m->heap[m->nheap++] = i;
    }
    for (i = m->nheap / 2; i-- > 0;)
        merge_down(m, i);
    return 0;
}

/* the next record in order into *out: 1, or 0 at the end, or an error */
static int merge_next(struct merge *m, struct arec *out)
{
    struct cursor *c;
    int rc;
    if (!m->nheap)
        return 0;
    c = &m->c[m->heap[0]];
    *out = c->buf[c->pos++];
    if (c->pos == c->n) {
        if (c->buf != m->r->buf && (rc = cursor_fill(m, c)) < 0)
            return rc;
        if (c->pos == c->n) {
            m->heap[0] = m->heap[--m->nheap];
        }
    }
    if (m->nheap)
        merge_down(m, 0);
    return 1;
}

static void merge_release(struct merge *m)
{
    size_t i;
    for (i = 0; i < m->nc; i++) {
        if (m->c[i].buf != m->r->buf)
            free(m->c[i].buf);
    }
    free(m->c);
    free(m->heap);
    memset(m, 0, sizeof(*m));
}

static int mem_class(int64_t device_type)
{
    switch (device_type) {
    case 0: case 2: case 5: return 0;  /* CPU, MKLDNN, IDEEP */
    case 1: case 6: case 12: case 20: return 1; /* CUDA, HIP, XPU, PrivateUse1 */
    default: return -1;
    }
}

static int in_steps(const tt_avg_options *o, const int64_t *win, size_t nwin, int64_t ts)
{
    size_t i;
    if (!o->steps_set)
        return 1;
    for (i = 0; i < nwin; i++) {
        if (ts >= win[2 * i] && ts <= win[2 * i + 1])
            return 1;
    }
    return 0;
}

/* ProfilerStep#N windows with from <= N <= to */
static int step_windows(tt_db *db, int64_t trace, const tt_avg_options *o, int64_t **out,
                        size_t *n)
{
    sqlite3_stmt *st;
    size_t alloc = 0;
    *out = NULL;
    *n = 0;
    if (!o->steps_set)
        return 0;
    if (tt_db_prepare(db, &st, "SELECT n.s, s.ts, s.ts + coalesce(s.dur, 0) FROM slices AS s"
                               " JOIN strings AS n ON n.id = s.name WHERE s.trace_id = ?1"
                               " AND n.s LIKE 'ProfilerStep#%'") < 0)
        return TT_EDB;
    sqlite3_bind_int64(st, 1, trace);
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *nm = (const char *)sqlite3_column_text(st, 0);
        long long k = atoll(nm + 13);
        if (k < o->step_from || k > o->step_to)
            continue;
        if (TT_ALLOC_GROW(*out, 2 * (*n + 1), alloc) < 0) {
            sqlite3_finalize(st);
            return tt_error_set(TT_ENOMEM, "out of memory");
        }
        (*out)[2 * *n] = sqlite3_column_int64(st, 1);
        (*out)[2 * *n + 1] = sqlite3_column_int64(st, 2);
        (*n)++;
    }
    sqlite3_finalize(st);
    return 0;
}

/* Read the trace's events of one kind into the runs. */
static int scan_kind(struct state *s, struct runs *runs, int kind, int64_t trace,
                     const int64_t ids[4])
{
    sqlite3_stmt *st;
    int r, rc = 0;
    if (tt_db_prepare(s->db, &st, scan_sql[kind]) < 0)
        return TT_EDB;
    sqlite3_bind_int64(st, 1, trace);
    if (kind == 0) {
        sqlite3_bind_int64(st, 2, ids[0]);
        sqlite3_bind_int64(st, 3, ids[1]);
        sqlite3_bind_int64(st, 4, ids[2]);
        sqlite3_bind_int64(st, 5, s->o->group_by_stack);
        /* an op without Input Dims has torch's input_shapes [] */
        if (ids[3])
            sqlite3_bind_int64(st, 6, ids[3]);
        else
            sqlite3_bind_null(st, 6);
    }
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        struct arec e;
        int64_t dur = sqlite3_column_int64(st, 5);
        memset(&e, 0, sizeof(e));
        e.kind = kind;
        e.id = sqlite3_column_int64(st, 0);
        e.name = sqlite3_column_int64(st, 1);
        e.ts = sqlite3_column_int64(st, 4);
        e.end = e.ts + dur; /* the order uses ts + dur as stored */
        e.a = sqlite3_column_int64(st, 6);
        e.b = kind == 0 ? sqlite3_column_int64(st, 8) : sqlite3_column_int64(st, 7);
        e.flags = kind == 0 && sqlite3_column_int(st, 7) ? AREC_USER_ANNOTATION : 0;
        if (kind <= 1) {
            struct tkey pk, tk;
            struct thread_stack *t;
            tkey_of_value(&pk, sqlite3_column_value(st, 2));
            tkey_of_value(&tk, sqlite3_column_value(st, 3));
            t = thread_for(s, &pk, &tk);
            if (!t) {
                rc = tt_error_set(TT_ENOMEM, "out of memory");
                break;
            }
            e.thread = (int32_t)(t - s->threads);
        }
        if (kind == 0 && s->o->group_by_stack > 0 && sqlite3_column_type(st, 9) == SQLITE_TEXT) {
            e.stack = stack_id(s, (const char *)sqlite3_column_text(st, 9),
                               s->o->group_by_stack);
            if (e.stack < 0) {
                rc = tt_error_set(TT_ENOMEM, "out of memory");
                break;
            }
        }
        if ((rc = runs_add(runs, &e)) < 0)
            break;
    }
    if (rc == 0 && r != SQLITE_DONE)
        rc = tt_db_error(s->db, "cannot read events");
    sqlite3_finalize(st);
    return rc;
}

struct fstream;
static void fstream_fix(const struct fstream *fs, struct arec *e);

/*
 * The pass proper: events in order from the runs; fs (reading a file without
 * a database) completes op records with what was only known at the end.
 */
static int pass_merge(struct state *s, struct runs *runs, const int64_t *win, size_t nwin,
                      int64_t mem_name, const struct fstream *fs)
{
    struct names nm = { NULL, NULL, 0, 0 };
    struct merge m;
    struct arec e;
    struct ev *last = NULL; /* the op pushed by the previous record */
    int64_t last_id = 0;
    int rc, r;

    if ((rc = merge_start(&m, runs)) < 0) {
        merge_release(&m);
        return rc;
    }
    while ((r = merge_next(&m, &e)) != 0) {
        int64_t name, ts, dur;
        int cls;
        if (r < 0) {
            rc = r;
            break;
        }
        if (e.flags & AREC_DEVICE_WORK) {
            /* right after its op: add to the frame just pushed, if it was */
            if (last && last_id == e.id)
                last->kernels_ns += e.b;
            continue;
        }
        last = NULL;
        if (fs)
            fstream_fix(fs, &e);
        name = e.name;
        ts = e.ts;
        dur = e.end - e.ts;
        if (!s->have_mem_ts || ts != s->mem_ts) {
            s->mem_lt[0] = s->mem_total[0];
            s->mem_lt[1] = s->mem_total[1];
            s->mem_ts = ts;
            s->have_mem_ts = 1;
        }
        if ((rc = pass_ends(s, ts)) < 0)
            break;
        if (e.kind == 2) { /* [memory] record */
            int c = mem_class(e.a);
            int64_t bytes = e.b;
            s->any_memory = 1;
            if (c < 0 || !in_steps(s->o, win, nwin, ts))
                continue;
            s->mem_total[c] += bytes;
            if (s->nheap == 0) {
                /* inside no CPU event: a standalone "[memory]" row */
                int64_t mm[2] = { 0, 0 };
                mm[c] = bytes;
                if (!mem_name)
                    continue;
                if ((rc = add_row(s, mem_name, 0, 0, DEV_CPU, 0, 0, 0, 0, 0, 0, mm, mm)) < 0)
                    break;
            }
            continue;
        }
        cls = name_class(s, &nm, name);
        if (cls == 1 || !in_steps(s->o, win, nwin, ts))
            continue;
        if (cls == 2) {
            if (!s->step_name)
                s->step_name = -2; /* placeholder id for "ProfilerStep*" */
            name = s->step_name;
        }
        if (e.kind == 3) { /* GPU activity: a device row of its own */
            int64_t zero[2] = { 0, 0 };
            double d = (double)dur / 1e3;
            if ((rc = add_row(s, name, 0, 0, DEV_CUDA, 0, (int)e.a, 0, 0, d, d, zero, zero)) < 0)
                break;
            continue;
        }
        {
            struct ev *v = ev_new(s);
            if (!v) {
                rc = tt_error_set(TT_ENOMEM, "out of memory");
                break;
            }
            v->name = name;
            v->shapes = e.kind == 0 ? e.a : 0;
            v->stack = e.stack;
            v->start = ts;
            v->end = ts + (dur > 0 ? dur : 0);
            v->kernels_ns = e.b;
            v->is_user_annotation = (e.flags & AREC_USER_ANNOTATION) != 0;
            v->mem_start[0] = s->mem_lt[0];
            v->mem_start[1] = s->mem_lt[1];
            v->serial = s->serial++;
            if ((rc = push_cpu(s, &s->threads[e.thread], v)) < 0)
                break;
            if (e.kind == 0) {
                last = v;
                last_id = e.id;
            }
        }
    }
    merge_release(&m);
    free(nm.ids);
    free(nm.cls);
    if (rc == 0)
        rc = flush_threads(s);
    return rc;
}

static int run_pass(struct state *s, int64_t trace)
{
    int64_t cpu_op = string_id(s->db, "cpu_op", 0), ua = string_id(s->db, "user_annotation", 0);
    int64_t op_legacy = string_id(s->db, "Operator", 0);
    int64_t mem_name = string_id(s->db, "[memory]", 0);
    int64_t ids[4];
    int64_t *win = NULL;
    size_t nwin = 0;
    int rc = 0, r, kind;
    struct runs runs;

    memset(&runs, 0, sizeof(runs));
    if ((rc = step_windows(s->db, trace, s->o, &win, &nwin)) < 0)
        return rc;
    /* device time launched by each op, keyed by op id (bounded: SQLite) */
    {
        sqlite3_stmt *k;
        if ((rc = tt_db_exec(s->db, "DROP TABLE IF EXISTS temp.tt_avg_kernels;"
                                    "CREATE TEMP TABLE tt_avg_kernels(op_id INTEGER PRIMARY KEY,"
                                    " kernels INTEGER)")) < 0 ||
            (rc = tt_db_prepare(s->db, &k,
                                "INSERT INTO temp.tt_avg_kernels SELECT op_id, sum(dur) FROM gpu_ops"
                                " WHERE trace_id = ?1 AND op_id IS NOT NULL"
                                " AND kind IN ('kernel', 'memcpy', 'memset') GROUP BY op_id")) < 0) {
            free(win);
            return rc;
        }
        sqlite3_bind_int64(k, 1, trace);
        r = sqlite3_step(k);
        sqlite3_finalize(k);
        if (r != SQLITE_DONE) {
            free(win);
            return tt_db_error(s->db, "cannot sum device time per op");
        }
    }
    ids[0] = ua ? ua : -1;
    ids[1] = cpu_op ? cpu_op : -1;
    ids[2] = op_legacy ? op_legacy : -1;
    ids[3] = string_id(s->db, "[]", 0);
    for (kind = 0; kind < 4 && rc == 0; kind++)
        rc = scan_kind(s, &runs, kind, trace, ids);
    if (rc == 0)
        rc = pass_merge(s, &runs, win, nwin, mem_name, NULL);
    runs_release(&runs);
    free(win);
    return rc;
}

/* ---- output ---- */

static char *lookup(const struct state *s, int64_t id)
{
    sqlite3_stmt *st;
    char *r = NULL;
    tt_db *db = s->db;
    if (id == -2)
        return strdup("ProfilerStep*");
    if (s->ms) {
        const char *m = mem_string(s->ms, id);
        return strdup(m ? m : "?");
    }
    if (sqlite3_prepare_v2(db->sql, "SELECT s FROM strings WHERE id = ?1", -1, &st, NULL) !=
        SQLITE_OK)
        return strdup("?");
    sqlite3_bind_int64(st, 1, id);
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        r = strdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return r ? r : strdup("?");
}

/* minified JSON shapes "[[64,64],[]]" -> Python repr "[[64, 64], []]" */
static char *python_shapes(const char *json)
{
    tt_buf b = TT_BUF_INIT;
    const char *p;
    for (p = json; *p; p++) {
        tt_buf_addch(&b, *p);
        if (*p == ',')
            tt_buf_addch(&b, ' ');
    }
    return b.oom ? NULL : b.buf[0] ? b.buf : strdup("");
}

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

static double sort_value(const struct row *r, const char *k)
{
    double c = r->count ? (double)r->count : 1;
    if (!strcmp(k, "cpu_time")) return r->cpu_total / c;
    if (!strcmp(k, "cuda_time") || !strcmp(k, "device_time")) return r->dev_total / c;
    if (!strcmp(k, "cpu_time_total")) return r->cpu_total;
    if (!strcmp(k, "cuda_time_total") || !strcmp(k, "device_time_total")) return r->dev_total;
    if (!strcmp(k, "self_cpu_time_total")) return r->self_cpu;
    if (!strcmp(k, "self_cuda_time_total") || !strcmp(k, "self_device_time_total")) return r->self_dev;
    if (!strcmp(k, "cpu_memory_usage")) return (double)r->cpu_mem;
    if (!strcmp(k, "cuda_memory_usage") || !strcmp(k, "device_memory_usage")) return (double)r->dev_mem;
    if (!strcmp(k, "self_cpu_memory_usage")) return (double)r->self_cpu_mem;
    if (!strcmp(k, "self_cuda_memory_usage") || !strcmp(k, "self_device_memory_usage"))
        return (double)r->self_dev_mem;
    return (double)r->count;
}

static const char *g_sort_key;
static int cmp_rows(const void *a, const void *b)
{
    const struct row *x = *(const struct row *const *)a, *y = *(const struct row *const *)b;
    double vx = sort_value(x, g_sort_key), vy = sort_value(y, g_sort_key);
    if (vx != vy)
        return vx > vy ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

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
};

static int g_left_col = -1; /* Source Location is left-aligned */
static void tcell(FILE *out, const struct table *t, int col, const char *v)
{
    if (col == g_left_col)
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

static void print_table(FILE *out, struct row **rows, size_t n, const struct state *s,
                        int show_mem, double sum_self_cpu, double sum_self_dev)
{
    const tt_avg_options *o = s->o;
    struct table t;
    size_t i, maxname = 0, maxshape = 0;
    int has_dev = 0, has_dev_mem = 0, has_shapes = 0, c, src_col = -1;
    size_t maxsrc = 0;
    int64_t printed = 0;
    for (i = 0; i < n; i++) {
        size_t l = strlen(rows[i]->name_str);
        if (l > maxname)
            maxname = l;
        if (rows[i]->self_dev > 0)
            has_dev = 1;
        if (rows[i]->self_dev_mem > 0)
            has_dev_mem = 1;
        if (o->group_by_shape && rows[i]->shapes_str && rows[i]->shapes_str[0] &&
            strcmp(rows[i]->shapes_str, "[]")) {
            has_shapes = 1;
        }
        if (o->group_by_shape && rows[i]->shapes_str && strlen(rows[i]->shapes_str) > maxshape)
            maxshape = strlen(rows[i]->shapes_str);
        if (rows[i]->stack_idx) {
            const char *p = s->stacks[rows[i]->stack_idx - 1];
            while (p && *p) {
                const char *e = strchr(p, '\n');
                size_t sl = e ? (size_t)(e - p) : strlen(p);
                if (sl > maxsrc)
                    maxsrc = sl;
                p = e ? e + 1 : NULL;
            }
        }
    }
    memset(&t, 0, sizeof(t));
#define COL(h, w) (t.hdr[t.ncol] = (h), t.width[t.ncol++] = (w))
    COL("Name", (int)(maxname + 4 < 55 ? maxname + 4 : 55));
    COL("Self CPU %", 12);
    COL("Self CPU", 12);
    COL("CPU total %", 12);
    COL("CPU total", 12);
    COL("CPU time avg", 12);
    if (has_dev) {
        COL("Self CUDA", 12);
        COL("Self CUDA %", 12);
        COL("CUDA total", 12);
        COL("CUDA time avg", 12);
    }
    if (show_mem) {
        COL("CPU Mem", 12);
        COL("Self CPU Mem", 12);
        if (has_dev_mem) {
            COL("CUDA Mem", 12);
            COL("Self CUDA Mem", 12);
        }
    }
    COL("# of Calls", 12);
    if (has_shapes)
        COL("Input Shapes", (int)(maxshape + 4 < 80 ? maxshape + 4 : 80));
    if (maxsrc) {
        src_col = t.ncol;
        COL("Source Location", (int)(maxsrc + 4 < 75 ? maxsrc + 4 : 75));
    }
#undef COL
    g_left_col = src_col;
    if (o->top_level_only) {
        int line = -2, k2;
        for (c = 0; c < t.ncol; c++)
            line += t.width[c] + 2;
        for (k2 = 0; k2 < line; k2++)
            fputc('=', out);
        fputs("\nThis report only display top-level ops statistics\n", out);
    }
    tsep(out, &t);
    for (c = 0; c < t.ncol; c++)
        tcell(out, &t, c, t.hdr[c]);
    fputc('\n', out);
    tsep(out, &t);
    for (i = 0; i < n; i++) {
        const struct row *r = rows[i];
        char b[64], name[64];
        double cnt = (double)r->count;
        if (o->top_level_only && r->has_parent)
            continue;
        if (o->row_limit >= 0 && printed >= o->row_limit)
            break;
        printed++;
        c = 0;
        if ((int)strlen(r->name_str) >= 55 - 3)
            snprintf(name, sizeof(name), "%.52s...", r->name_str);
        else
            snprintf(name, sizeof(name), "%s", r->name_str);
        if ((int)strlen(name) > t.width[0])
            name[t.width[0]] = '\0';
        tcell(out, &t, c++, name);
        fmt_share(b, sizeof(b), r->self_cpu, sum_self_cpu);
        tcell(out, &t, c++, b);
        fmt_time(b, sizeof(b), r->self_cpu);
        tcell(out, &t, c++, b);
        fmt_share(b, sizeof(b), r->cpu_total, sum_self_cpu);
        tcell(out, &t, c++, b);
        fmt_time(b, sizeof(b), r->cpu_total);
        tcell(out, &t, c++, b);
        fmt_time(b, sizeof(b), r->cpu_total / cnt);
        tcell(out, &t, c++, b);
        if (has_dev) {
            fmt_time(b, sizeof(b), r->self_dev);
            tcell(out, &t, c++, b);
            fmt_share(b, sizeof(b), r->self_dev, sum_self_dev);
            tcell(out, &t, c++, b);
            fmt_time(b, sizeof(b), r->dev_total);
            tcell(out, &t, c++, b);
            fmt_time(b, sizeof(b), r->dev_total / cnt);
            tcell(out, &t, c++, b);
        }
        if (show_mem) {
            fmt_mem(b, sizeof(b), r->cpu_mem);
            tcell(out, &t, c++, b);
            fmt_mem(b, sizeof(b), r->self_cpu_mem);
            tcell(out, &t, c++, b);
            if (has_dev_mem) {
                fmt_mem(b, sizeof(b), r->dev_mem);
                tcell(out, &t, c++, b);
                fmt_mem(b, sizeof(b), r->self_dev_mem);
                tcell(out, &t, c++, b);
            }
        }
        snprintf(b, sizeof(b), "%" PRId64, r->count);
        tcell(out, &t, c++, b);
        if (has_shapes) {
            char sh[96];
            snprintf(sh, sizeof(sh), "%.*s", t.width[c], r->shapes_str ? r->shapes_str : "[]");
            tcell(out, &t, c++, sh);
        }
        if (src_col >= 0) {
            /* first entry here; entries 2..5 on rows of empty cells, then an empty row */
            const char *st = r->stack_idx ? s->stacks[r->stack_idx - 1] : "";
            const char *e = strchr(st, '\n');
            char first[256];
            int k, shown = 1;
            snprintf(first, sizeof(first), "%.*s", (int)(e ? e - st : (long)strlen(st)), st);
            tcell(out, &t, c++, first);
            fputc('\n', out);
            while (e && shown < 5) {
                const char *q = e + 1;
                e = strchr(q, '\n');
                snprintf(first, sizeof(first), "%.*s", (int)(e ? e - q : (long)strlen(q)), q);
                for (k = 0; k < t.ncol; k++)
                    tcell(out, &t, k, k == src_col ? first : "");
                fputc('\n', out);
                shown++;
            }
            for (k = 0; k < t.ncol; k++)
                tcell(out, &t, k, "");
        }
        fputc('\n', out);
    }
    tsep(out, &t);
    {
        char b[64];
        fmt_time(b, sizeof(b), sum_self_cpu);
        fprintf(out, "Self CPU time total: %s\n", b);
        if (has_dev) {
            fmt_time(b, sizeof(b), sum_self_dev);
            fprintf(out, "Self CUDA time total: %s\n", b);
        }
    }
}

static void csv_str(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

static void print_rows(FILE *out, struct row **rows, size_t n, const struct state *s,
                       int64_t trace, const char *label, int have_rank, int64_t rank,
                       int first_trace)
{
    const tt_avg_options *o = s->o;
    size_t i;
    int64_t printed = 0;
    for (i = 0; i < n; i++) {
        const struct row *r = rows[i];
        if (o->top_level_only && r->has_parent)
            continue;
        if (o->row_limit >= 0 && printed >= o->row_limit)
            break;
        if (o->format == TT_AVG_CSV) {
            if (printed == 0 && first_trace)
                fputs("trace_id,rank,name,input_shapes,device,count,self_cpu_us,cpu_total_us,"
                      "cpu_avg_us,self_device_us,device_total_us,device_avg_us,cpu_mem,"
                      "self_cpu_mem,device_mem,self_device_mem\n",
                      out);
            fprintf(out, "%" PRId64 ",", trace);
            if (have_rank)
                fprintf(out, "%" PRId64, rank);
            fputc(',', out);
            csv_str(out, r->name_str);
            fputc(',', out);
            csv_str(out, r->shapes_str ? r->shapes_str : "");
            fprintf(out, ",%s,%" PRId64 ",%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%" PRId64 ",%" PRId64
                         ",%" PRId64 ",%" PRId64 "\n",
                    r->device == DEV_CPU ? "CPU" : "CUDA", r->count, r->self_cpu, r->cpu_total,
                    r->cpu_total / (double)r->count, r->self_dev, r->dev_total,
                    r->dev_total / (double)r->count, r->cpu_mem, r->self_cpu_mem, r->dev_mem,
                    r->self_dev_mem);
        } else if (o->format == TT_AVG_JSON) {
            tt_buf b = TT_BUF_INIT;
            tt_buf_add_json_string(&b, r->name_str, strlen(r->name_str));
            if (printed == 0) {
                fprintf(out, "%s{\"trace_id\": %" PRId64 ", \"path\": ", first_trace ? "" : ",\n", trace);
                {
                    tt_buf lb = TT_BUF_INIT;
                    tt_buf_add_json_string(&lb, label, strlen(label));
                    fputs(lb.buf, out);
                    tt_buf_release(&lb);
                }
                if (have_rank)
                    fprintf(out, ", \"rank\": %" PRId64, rank);
                else
                    fputs(", \"rank\": null", out);
                fputs(", \"rows\": [\n", out);
            } else {
                fputs(",\n", out);
            }
            fprintf(out, "  {\"name\": %s", b.buf);
            tt_buf_reset(&b);
            if (r->shapes_str) {
                tt_buf_add_json_string(&b, r->shapes_str, strlen(r->shapes_str));
                fprintf(out, ", \"input_shapes\": %s", b.buf);
            }
            if (r->stack_idx) {
                const char *stk = s->stacks[r->stack_idx - 1];
                tt_buf_reset(&b);
                tt_buf_add_json_string(&b, stk, strlen(stk));
                fprintf(out, ", \"stack\": %s", b.buf);
            }
            tt_buf_release(&b);
            fprintf(out, ", \"device\": \"%s\", \"count\": %" PRId64
                         ", \"self_cpu_time_total_us\": %.3f, \"cpu_time_total_us\": %.3f"
                         ", \"self_device_time_total_us\": %.3f, \"device_time_total_us\": %.3f"
                         ", \"cpu_memory_usage\": %" PRId64 ", \"self_cpu_memory_usage\": %" PRId64
                         ", \"device_memory_usage\": %" PRId64
                         ", \"self_device_memory_usage\": %" PRId64 "}",
                    r->device == DEV_CPU ? "CPU" : "CUDA", r->count, r->self_cpu, r->cpu_total,
                    r->self_dev, r->dev_total, r->cpu_mem, r->self_cpu_mem, r->dev_mem,
                    r->self_dev_mem);
        } else { /* markdown */
            if (printed == 0) {
                fprintf(out, "%s### trace %" PRId64 ": %s\n\n", first_trace ? "" : "\n", trace, label);
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
            {
                const char *p;
                for (p = r->name_str; *p; p++)
                    fputc(*p == '|' || *p == '`' ? '\'' : *p, out);
            }
            fputs("` |", out);
            if (o->group_by_shape)
                fprintf(out, " %s |", r->shapes_str ? r->shapes_str : "");
            fprintf(out, " %.3f | %.3f | %.3f | %.3f | %" PRId64 " | %" PRId64 " | %" PRId64
                         " | %" PRId64 " | %" PRId64 " |\n",
                    r->self_cpu, r->cpu_total, r->self_dev, r->dev_total, r->cpu_mem,
                    r->self_cpu_mem, r->dev_mem, r->self_dev_mem, r->count);
        }
        printed++;
    }
    if (o->format == TT_AVG_JSON) {
        if (printed == 0) {
            fprintf(out, "%s{\"trace_id\": %" PRId64 ", \"rows\": [", first_trace ? "" : ",\n",
                    trace);
        }
        fputs("\n]}", out);
    }
}

/* print the rows of a finished pass */
static int report(struct state *s, int64_t trace, const char *label, int have_rank,
                  int64_t rank, int profile_memory, FILE *out, int first)
{
    const tt_avg_options *o = s->o;
    struct row **order = NULL;
    size_t i, n = 0;
    double sum_self_cpu = 0, sum_self_dev = 0;
    int rc = 0;
    order = malloc(sizeof(*order) * (s->agg.n ? s->agg.n : 1));
    if (!order) {
        rc = tt_error_set(TT_ENOMEM, "out of memory");
        goto out;
    }
    for (i = 0; i < s->agg.n; i++) {
        struct row *r = &s->agg.rows[i];
        if (r->count == 0)
            continue;
        sum_self_cpu += r->self_cpu;
        if (r->device == DEV_CUDA && !r->is_user_annotation)
            sum_self_dev += r->self_dev;
        r->name_str = lookup(s, r->name);
        r->stack_idx = (size_t)r->stack;
        if (o->group_by_shape) {
            char *js = r->shapes ? lookup(s, r->shapes) : NULL;
            r->shapes_str = js ? python_shapes(js) : strdup("[]");
            free(js);
        }
        if (!r->name_str || (o->group_by_shape && !r->shapes_str)) {
            rc = tt_error_set(TT_ENOMEM, "out of memory");
            goto out;
        }
        order[n++] = r;
    }
    if (o->sort_by && n) {
        g_sort_key = o->sort_by;
        qsort(order, n, sizeof(*order), cmp_rows);
    }
    if (o->format == TT_AVG_TABLE) {
        if (!first)
            fputc('\n', out);
        if (o->header_per_trace) {
            fprintf(out, "trace %" PRId64, trace);
            if (have_rank)
                fprintf(out, " (rank %" PRId64 ")", rank);
            fprintf(out, ": %s\n", label);
        }
        if (n)
            print_table(out, order, n, s, profile_memory || s->any_memory, sum_self_cpu,
                        sum_self_dev);
    } else {
        print_rows(out, order, n, s, trace, label, have_rank, rank, first);
    }
out:
    free(order);
    state_release(s);
    return rc;
}

static int averages_trace(tt_db *db, const tt_avg_options *o, int64_t trace, const char *label,
                          int have_rank, int64_t rank, int profile_memory, FILE *out,
                          int first)
{
    struct state s;
    int rc;
    memset(&s, 0, sizeof(s));
    s.db = db;
    s.o = o;
    if ((rc = run_pass(&s, trace)) < 0) {
        state_release(&s);
        return rc;
    }
    return report(&s, trace, label, have_rank, rank, profile_memory, out, first);
}

int tt_averages_db(tt_db *db, const tt_avg_options *opts, FILE *out)
{
    sqlite3_stmt *tr;
    int rc = 0, n = 0, ntraces;
    tt_avg_options o = *opts;
    if (!tt_avg_sort_key_valid(o.sort_by))
        return tt_error_set(TT_EINVALID, "unknown sort key '%s'", o.sort_by);
    if (tt_db_prepare(db, &tr, "SELECT count(*) FROM traces WHERE format IN ('kineto-json',"
                               " 'chrome-array') AND (?1 = 0 OR id = ?1) AND (?2 < 0 OR rank = ?2)") < 0)
        return TT_EDB;
    sqlite3_bind_int64(tr, 1, o.trace_id);
    sqlite3_bind_int64(tr, 2, o.rank);
    ntraces = sqlite3_step(tr) == SQLITE_ROW ? sqlite3_column_int(tr, 0) : 0;
    sqlite3_finalize(tr);
    if (ntraces == 0)
        return tt__db_none(db, o.trace_id || o.rank >= 0, "Chrome/Kineto trace");
    o.header_per_trace = ntraces > 1 || o.header_per_trace;
    if (tt_db_prepare(db, &tr,
                      "SELECT id, path, rank, metadata LIKE '%\"profile_memory\":1%' FROM traces"
                      " WHERE format IN ('kineto-json', 'chrome-array') AND (?1 = 0 OR id = ?1)"
                      " AND (?2 < 0 OR rank = ?2) ORDER BY rank, id") < 0)
        return TT_EDB;
    sqlite3_bind_int64(tr, 1, o.trace_id);
    sqlite3_bind_int64(tr, 2, o.rank);
    /* collect the traces first: the per-trace pass drops and creates a temp
     * table, which SQLite refuses while another statement is reading */
    {
        struct tinfo {
            int64_t id, rank;
            int have_rank, mem;
            char *label;
        } *ts = NULL;
        size_t nt = 0, at = 0, k;
        while (sqlite3_step(tr) == SQLITE_ROW) {
            const char *label = (const char *)sqlite3_column_text(tr, 1);
            if (TT_ALLOC_GROW(ts, nt + 1, at) < 0) {
                rc = tt_error_set(TT_ENOMEM, "out of memory");
                break;
            }
            ts[nt].id = sqlite3_column_int64(tr, 0);
            ts[nt].have_rank = sqlite3_column_type(tr, 2) != SQLITE_NULL;
            ts[nt].rank = sqlite3_column_int64(tr, 2);
            ts[nt].mem = sqlite3_column_int(tr, 3);
            ts[nt].label = strdup(label ? label : "");
            nt++;
        }
        sqlite3_finalize(tr);
        tr = NULL;
        if (o.format == TT_AVG_JSON && rc == 0)
            fputs("{\"traces\": [\n", out);
        for (k = 0; k < nt && rc == 0; k++) {
            rc = averages_trace(db, &o, ts[k].id, ts[k].label ? ts[k].label : "", ts[k].have_rank,
                                ts[k].rank, ts[k].mem, out, n == 0);
            n++;
        }
        for (k = 0; k < nt; k++)
            free(ts[k].label);
        free(ts);
    }
    if (o.format == TT_AVG_JSON && rc == 0)
        fputs("\n]}\n", out);
    tt_db_exec(db, "DROP TABLE IF EXISTS temp.tt_avg_kernels");
    return rc;
}

/* ---- straight from a trace file: the ingest's rows, no database ---- */

struct fstream {
    struct state *s;
    struct runs runs;
    struct memstr strs;
    int64_t id_cpu_op, id_ua, id_operator, id_memory, id_empty; /* 0: not seen */
    int64_t mem_rowid, gpu_rowid; /* what SQLite would number them */
    int64_t *win;                 /* ProfilerStep windows, with --steps */
    size_t nwin, awin;
    int neg_dur;                  /* an op with a negative dur (see fs_kernel) */
};

static int cell_null(const tt__cell *c)
{
    return c->type == TT_CELL_NULL;
}

/* SQLite's column_int64 of the cell (NULL -> 0) */
static int64_t cell_int(const tt__cell *c)
{
    return c->type == TT_CELL_INT ? c->i : 0;
}

static void tkey_of_cell(struct tkey *k, const tt__cell *c, const char *text)
{
    memset(k, 0, sizeof(*k));
    k->is_null = c->type == TT_CELL_NULL;
    k->is_str = c->type == TT_CELL_TEXT;
    if (k->is_str) {
        k->str = text + c->i;
        k->len = c->len;
    } else {
        k->i = c->i;
    }
}

static int text_is(const tt__cell *c, const char *text, const char *lit)
{
    size_t n = strlen(lit);
    return c->type == TT_CELL_TEXT && c->len == n && !memcmp(text + c->i, lit, n);
}

static int fs_string(struct fstream *fs, int64_t id, const char *str, size_t len)
{
    char *copy;
    if (id != (int64_t)fs->strs.n + 1)
        return tt_error_set(TT_ERROR, "string ids out of order (%lld)", (long long)id);
    if (TT_ALLOC_GROW(fs->strs.s, fs->strs.n + 1, fs->strs.alloc) < 0 ||
        !(copy = strndup(str, len)))
        return tt_error_set(TT_ENOMEM, "out of memory");
    fs->strs.s[fs->strs.n++] = copy;
    if (!strcmp(copy, "cpu_op"))
        fs->id_cpu_op = id;
    else if (!strcmp(copy, "user_annotation"))
        fs->id_ua = id;
    else if (!strcmp(copy, "Operator"))
        fs->id_operator = id;
    else if (!strcmp(copy, "[memory]"))
        fs->id_memory = id;
    else if (!strcmp(copy, "[]"))
        fs->id_empty = id;
    return 0;
}

/* ProfilerStep#N windows with from <= N <= to (as step_windows: LIKE is
 * case-blind, a slice without ts gives 0) */
static int fs_step(struct fstream *fs, const tt__cell *row)
{
    const tt_avg_options *o = fs->s->o;
    const char *nm = mem_string(&fs->strs, cell_int(&row[TT_C_SL_NAME]));
    long long k;
    if (!o->steps_set || !nm || strncasecmp(nm, "ProfilerStep#", 13) != 0)
        return 0;
    k = atoll(nm + 13);
    if (k < o->step_from || k > o->step_to)
        return 0;
    if (TT_ALLOC_GROW(fs->win, 2 * (fs->nwin + 1), fs->awin) < 0)
        return tt_error_set(TT_ENOMEM, "out of memory");
    fs->win[2 * fs->nwin] = cell_int(&row[TT_C_SL_TS]);
    fs->win[2 * fs->nwin + 1] = cell_null(&row[TT_C_SL_TS])
                                    ? 0
                                    : row[TT_C_SL_TS].i + cell_int(&row[TT_C_SL_DUR]);
    fs->nwin++;
    return 0;
}

/* one batch of the ingest's rows -> records of the pass (what scan_sql selects) */
static int fs_rows(void *ctx, int table, int nrows, int ncols, const tt__cell *cells,
                   const char *text)
{
    struct fstream *fs = ctx;
    int r, rc;
    for (r = 0; r < nrows; r++) {
        const tt__cell *row = cells + (size_t)r * (size_t)ncols;
        struct arec e;
        const tt__cell *pid = NULL, *tid = NULL;
        memset(&e, 0, sizeof(e));
        switch (table) {
        case TT_ROWS_STR:
            if ((rc = fs_string(fs, row[TT_C_STR_ID].i, text + row[TT_C_STR_S].i,
                                row[TT_C_STR_S].len)) < 0)
                return rc;
            continue;
        case TT_ROWS_SLICE: {
            int64_t cat = cell_int(&row[TT_C_SL_CAT]);
            if ((rc = fs_step(fs, row)) < 0)
                return rc;
            if (cell_null(&row[TT_C_SL_TS]) ||
                !(cell_null(&row[TT_C_SL_CAT]) || (cat && (cat == fs->id_ua ||
                                                           cat == fs->id_cpu_op ||
                                                           cat == fs->id_operator))))
                continue;
            if (cell_int(&row[TT_C_SL_DUR]) < 0)
                fs->neg_dur = 1;
            e.kind = 0;
            e.id = row[TT_C_SL_ID].i;
            e.name = cell_int(&row[TT_C_SL_NAME]);
            e.ts = row[TT_C_SL_TS].i;
            e.end = e.ts + cell_int(&row[TT_C_SL_DUR]);
            /* no Input Dims: "[]", whose id may only come later in the file */
            e.a = cell_null(&row[TT_C_SL_DIMS]) ? -1 : row[TT_C_SL_DIMS].i;
            e.flags = cat && cat == fs->id_ua ? AREC_USER_ANNOTATION : 0;
            pid = &row[TT_C_SL_PID];
            tid = &row[TT_C_SL_TID];
            break;
        }
        case TT_ROWS_RUNTIME:
            if (cell_null(&row[TT_C_RT_TS]))
                continue;
            e.kind = 1;
            e.id = cell_int(&row[TT_C_RT_ID]);
            e.name = cell_int(&row[TT_C_RT_NAME]);
            e.ts = row[TT_C_RT_TS].i;
            e.end = e.ts + cell_int(&row[TT_C_RT_DUR]);
            pid = &row[TT_C_RT_PID];
            tid = &row[TT_C_RT_TID];
            break;
        case TT_ROWS_MEMORY:
            fs->mem_rowid++;
            if (cell_null(&row[TT_C_MEM_TS]) || cell_null(&row[TT_C_MEM_BYTES]))
                continue;
            e.kind = 2;
            e.id = fs->mem_rowid;
            e.name = cell_int(&row[TT_C_MEM_NAME]);
            e.ts = e.end = row[TT_C_MEM_TS].i;
            e.a = cell_int(&row[TT_C_MEM_DEVTYPE]);
            e.b = row[TT_C_MEM_BYTES].i;
            break;
        case TT_ROWS_GPU: {
            const tt__cell *kind = &row[TT_C_GPU_KIND];
            int annot = text_is(kind, text, "annotation");
            int work = !annot && (text_is(kind, text, "kernel") || text_is(kind, text, "memcpy") ||
                                  text_is(kind, text, "memset"));
            fs->gpu_rowid++;
            if (!(work || annot) || cell_null(&row[TT_C_GPU_TS]))
                continue;
            e.kind = 3;
            e.id = fs->gpu_rowid;
            e.name = cell_int(&row[TT_C_GPU_NAME]);
            e.ts = row[TT_C_GPU_TS].i;
            e.end = e.ts + cell_int(&row[TT_C_GPU_DUR]);
            e.a = annot;
            break;
        }
        default:
            return 0; /* flows, instants, metadata, ...: not in the pass */
        }
        if (pid) {
            struct tkey pk, tk;
            struct thread_stack *t;
            tkey_of_cell(&pk, pid, text);
            tkey_of_cell(&tk, tid, text);
            if (!(t = thread_for(fs->s, &pk, &tk)))
                return tt_error_set(TT_ENOMEM, "out of memory");
            e.thread = (int32_t)(t - fs->s->threads);
        }
        if ((rc = runs_add(&fs->runs, &e)) < 0)
            return rc;
    }
    return 0;
}

/*
 * Device work of an op: a record that sorts right after the op's own (same
 * ts, end, kind and id) and adds to the frame the op has just pushed, so no
 * map of ops is held. The ingest gives the op's end as ts + max(dur, 0)
 * while the op's record has ts + dur: an op with a negative dur sends the
 * file through a database (neg_dur).
 */
static int fs_kernel(void *ctx, int64_t op_id, int64_t op_ts, int64_t op_end, int64_t dur)
{
    struct fstream *fs = ctx;
    struct arec e;
    memset(&e, 0, sizeof(e));
    e.kind = 0;
    e.id = op_id;
    e.ts = op_ts;
    e.end = op_end;
    e.b = dur;
    e.flags = AREC_DEVICE_WORK;
    return runs_add(&fs->runs, &e);
}

/* complete an op record with what the end of the file told */
static void fstream_fix(const struct fstream *fs, struct arec *e)
{
    if (e->kind == 0 && e->a < 0)
        e->a = fs->id_empty;
}

static int has_profile_memory(const char *metadata)
{
    /* as metadata LIKE '%"profile_memory":1%' (ASCII case-blind) */
    const char *p;
    for (p = metadata; p && *p; p++) {
        if (!strncasecmp(p, "\"profile_memory\":1", 18))
            return 1;
    }
    return 0;
}

/* TT_DEBUG_AVG=1: say which way a file was read (tests check it) */
static int fallback_note(const char *why)
{
    if (getenv("TT_DEBUG_AVG"))
        fprintf(stderr, "averages: through a temporary database: %s\n", why);
    return 1;
}

/*
 * Returns 1 (nothing printed) when the file needs what only a database
 * gives: the SQL passes after a load, --group-by-stack (JSON in args), a
 * non-Kineto file, ops with a negative dur, or input that cannot be read
 * twice (standard input, pipes).
 */
static int averages_stream(const char *path, const tt_avg_options *o, FILE *out)
{
    struct state s;
    struct fstream fs;
    tt__rowsink sink;
    tt__rows_result res;
    size_t i;
    int rc;

    struct stat sb;
    if (o->group_by_stack > 0)
        return fallback_note("--group-by-stack reads the args");
    /* the way back reads the file again: standard input and pipes cannot */
    if (!strcmp(path, "-") || stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
        return fallback_note("not a regular file (read once)");
    memset(&s, 0, sizeof(s));
    memset(&fs, 0, sizeof(fs));
    s.o = o;
    s.ms = &fs.strs;
    fs.s = &s;
    sink.ctx = &fs;
    sink.rows = fs_rows;
    sink.kernel = fs_kernel;
    rc = tt__ingest_rows(path, &sink, TT_READ_NO_ARGS,
                         1u << TT_ROWS_FLOW | 1u << TT_ROWS_META | 1u << TT_ROWS_INSTANT |
                             1u << TT_ROWS_ET | 1u << TT_ROWS_MEMTL,
                         &res);
    if (rc == 0 && fs.neg_dur)
        rc = fallback_note("ops with a negative dur");
    else if (rc == 0 && res.needs_db)
        rc = fallback_note(res.why_db);
    else if (rc == 0 && res.format != TT_FMT_CHROME && res.format != TT_FMT_CHROME_ARRAY)
        rc = fallback_note("not a Chrome/Kineto trace");
    else if (rc == 0 && getenv("TT_DEBUG_AVG"))
        fputs("averages: read without a database\n", stderr);
    if (rc == 0)
        rc = pass_merge(&s, &fs.runs, fs.win, fs.nwin, fs.id_memory, &fs);
    runs_release(&fs.runs);
    free(fs.win);
    if (rc == 0) {
        if (o->format == TT_AVG_JSON)
            fputs("{\"traces\": [\n", out);
        rc = report(&s, 1, path, res.have_rank, res.rank, has_profile_memory(res.metadata), out,
                    1);
        if (o->format == TT_AVG_JSON && rc == 0)
            fputs("\n]}\n", out);
    } else {
        state_release(&s);
    }
    for (i = 0; i < fs.strs.n; i++)
        free(fs.strs.s[i]);
    free(fs.strs.s);
    free(res.metadata);
    return rc;
}

int tt_averages_file(const char *path, const tt_avg_options *opts, FILE *out)
{
    tt_db *db;
    int rc;
    if (!tt_avg_sort_key_valid(opts->sort_by))
        return tt_error_set(TT_EINVALID, "unknown sort key '%s'", opts->sort_by);
    if ((rc = averages_stream(path, opts, out)) != 1)
        return rc;
    /* what only a database gives: ingest into a temporary one */
    if ((rc = tt__open_ingested_temp(&db, path)) < 0)
        return rc;
    rc = tt_averages_db(db, opts, out);
    tt_db_free(db);
    return rc;
}
