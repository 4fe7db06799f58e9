/*
 * analyze/filter/filter_match.c - the filters as the analyses ask them
 * (analyze/filter/filtering.h): --name memoised by string id, --under's
 * intervals per thread, the launches of GPU rows, the verdict of a row.
 */
#include "common/compat.h"
#include "analyze/filter/filter_state.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

/* a regex compiled; anchored: against the whole text */
static int compile(regex_t *re, const char *s, int anchored)
{
    char *full = NULL;
    int e;
    if (anchored) {
        if (!(full = malloc(strlen(s) + 5)))
            return tt__oom();
        sprintf(full, "^(%s)$", s);
    }
    e = regcomp(re, full ? full : s, REG_EXTENDED | REG_NOSUB);
    free(full);
    return e ? TT_EINVALID : 0;
}

int tt__flt_new(tt__flt **out, const tt_filter *f)
{
    tt__flt *fl;
    int rc;
    *out = NULL;
    if (!tt_filter_active(f))
        return 0;
    if ((rc = tt_filter_check(f)) < 0)
        return rc;
    if (!(fl = calloc(1, sizeof(*fl))))
        return tt__oom();
    fl->f = *f;
    if (f->name && (rc = compile(&fl->name_re, f->name, 0)) == 0)
        fl->have_name = 1;
    if (rc == 0 && f->under && (rc = compile(&fl->under_re, f->under, 1)) == 0)
        fl->have_under = 1;
    if (rc < 0) {
        tt__flt_free(fl);
        return rc == TT_EINVALID ? tt_filter_check(f) : rc;
    }
    *out = fl;
    return 0;
}

void tt__flt_ops_clear(struct flt_ops *o)
{
    free(o->th);
    free(o->iv);
    free(o->raw);
    memset(o, 0, sizeof(*o));
}

void tt__flt_free(tt__flt *fl)
{
    if (!fl)
        return;
    if (fl->have_name)
        regfree(&fl->name_re);
    if (fl->have_under)
        regfree(&fl->under_re);
    free(fl->verdict);
    free(fl->lq);
    free(fl->cells);
    free(fl->links);
    tt__flt_ops_clear(&fl->ops);
    free(fl);
}

const tt_filter *tt__flt_spec(const tt__flt *fl)
{
    return fl ? &fl->f : NULL;
}

int tt__flt_needs_load(const tt__flt *fl)
{
    return fl && fl->have_under;
}

int tt__flt_wants_launch(const tt__flt *fl)
{
    return fl && (fl->have_under || fl->f.from_ns != TT_FILTER_OPEN_FROM ||
                  fl->f.to_ns != TT_FILTER_OPEN_TO);
}

void tt__flt_reset(tt__flt *fl)
{
    if (!fl)
        return;
    if (fl->verdict)
        memset(fl->verdict, 0, fl->nverdict);
    fl->lq_head = fl->lq_n = 0;
    fl->nlinks = fl->links_head = 0;
}

/* ---- --name, by string id ---- */

/* the verdict byte of id (grown to hold it); NULL when out of memory */
unsigned char *tt__flt_verdict_slot(unsigned char **v, size_t *n, int64_t id)
{
    if (id < 0)
        return NULL;
    if ((uint64_t)id >= *n) {
        size_t cap = *n ? *n : 1024;
        unsigned char *nv;
        while (cap <= (uint64_t)id)
            cap *= 2;
        if (!(nv = realloc(*v, cap)))
            return NULL;
        memset(nv + *n, 0, cap - *n);
        *v = nv;
        *n = cap;
    }
    return &(*v)[id];
}

/* s[0..len) against re (a NUL-terminated copy when s is not one) */
int tt__flt_match(const regex_t *re, const char *s, size_t len)
{
    char small[256], *z = small;
    int m;
    if (len >= sizeof(small) && !(z = malloc(len + 1)))
        return tt__oom();
    memcpy(z, s, len);
    z[len] = '\0';
    m = regexec(re, z, 0, NULL, 0) == 0;
    if (z != small)
        free(z);
    return m;
}

int tt__flt_string(tt__flt *fl, int64_t id, const char *s, size_t len)
{
    unsigned char *v;
    int m = 0, u = 0;
    if (!fl || !(fl->have_name || fl->have_under))
        return 0;
    if (!(v = tt__flt_verdict_slot(&fl->verdict, &fl->nverdict, id)))
        return id < 0 ? 0 : tt__oom();
    if ((fl->have_name && (m = tt__flt_match(&fl->name_re, s, len)) < 0) ||
        (fl->have_under && (u = tt__flt_match(&fl->under_re, s, len)) < 0))
        return m < 0 ? m : u;
    *v = (unsigned char)(V_SEEN | (m ? V_MATCH : 0) | (u ? V_UNDER : 0));
    return 0;
}

int tt__flt_under_name(const tt__flt *fl, int64_t id)
{
    if (!fl || !fl->have_under)
        return 1;
    return id >= 0 && (uint64_t)id < fl->nverdict && (fl->verdict[id] & V_UNDER);
}

int tt__flt_name(const tt__flt *fl, int64_t id)
{
    if (!fl || !fl->have_name)
        return 1;
    return id >= 0 && (uint64_t)id < fl->nverdict && (fl->verdict[id] & V_MATCH);
}

int tt__flt_time(const tt__flt *fl, int64_t ts)
{
    return !fl || tt__filter_in_time(&fl->f, ts);
}

/* ---- --under: the intervals of the matching ops ---- */

static int key_cmp(const tt__tkey *a, const tt__tkey *b)
{
    if (a->pkind != b->pkind)
        return a->pkind < b->pkind ? -1 : 1;
    if (a->pid != b->pid)
        return a->pid < b->pid ? -1 : 1;
    if (a->tkind != b->tkind)
        return a->tkind < b->tkind ? -1 : 1;
    return a->tid < b->tid ? -1 : a->tid > b->tid;
}

int tt__flt_add_op(tt__flt *fl, const tt__tkey *t, int64_t ts, int64_t end)
{
    struct flt_ops *o = &fl->ops;
    struct flt_raw *r;
    if (TT_ALLOC_GROW(o->raw, o->nraw + 1, o->araw) < 0)
        return tt__oom();
    r = &o->raw[o->nraw++];
    r->key = *t;
    r->ts = ts;
    r->end = end < ts ? ts : end;
    o->sealed = 0;
    return 0;
}

/* by thread, start, then the longer first */
static int raw_cmp(const void *x, const void *y)
{
    const struct flt_raw *a = x, *b = y;
    int c = key_cmp(&a->key, &b->key);
    if (c)
        return c;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    return a->end > b->end ? -1 : a->end < b->end;
}

/*
 * The raw intervals into each thread's outermost ones: sorted by start,
 * an interval inside the last one kept is dropped, so those kept start
 * and end later and later (the last one starting at or before a point has
 * the latest end of all that do).
 */
int tt__flt_seal(tt__flt *fl)
{
    struct flt_ops *o = &fl->ops;
    size_t i;
    free(o->th);
    free(o->iv);
    o->th = NULL;
    o->iv = NULL;
    o->nth = o->niv = 0;
    o->last = 0;
    if (o->nraw)
        TT_QSORT(o->raw, o->nraw, sizeof(*o->raw), raw_cmp);
    if (!(o->iv = malloc((o->nraw ? o->nraw : 1) * sizeof(*o->iv))) ||
        !(o->th = malloc((o->nraw ? o->nraw : 1) * sizeof(*o->th))))
        return tt__oom();
    for (i = 0; i < o->nraw; i++) {
        const struct flt_raw *r = &o->raw[i];
        struct flt_thread *t = o->nth ? &o->th[o->nth - 1] : NULL;
        if (!t || !tt__tkey_eq(&t->key, &r->key)) {
            t = &o->th[o->nth++];
            t->key = r->key;
            t->off = o->niv;
            t->n = 0;
        } else if (r->end <= o->iv[o->niv - 1].end) {
            continue; /* inside the one before */
        }
        o->iv[o->niv].ts = r->ts;
        o->iv[o->niv].end = r->end;
        o->niv++;
        t->n++;
    }
    free(o->raw);
    o->raw = NULL;
    o->nraw = o->araw = 0;
    o->sealed = 1;
    return 0;
}

void tt__flt_loaded(const tt__flt *fl, size_t *ops, size_t *threads)
{
    *ops = fl ? fl->ops.niv : 0;
    *threads = fl ? fl->ops.nth : 0;
}

/* the thread of key t (its index), -1 when it has no op */
static long find_thread(const struct flt_ops *o, const tt__tkey *t)
{
    size_t lo = 0, hi = o->nth;
    if (o->last < o->nth && tt__tkey_eq(&o->th[o->last].key, t))
        return (long)o->last;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = key_cmp(&o->th[mid].key, t);
        if (c == 0)
            return (long)mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

int tt__flt_under(const tt__flt *fl, const tt__tkey *t, int64_t ts, int64_t end)
{
    const struct flt_ops *o;
    const struct flt_iv *iv;
    size_t lo = 0, hi;
    long k;
    if (!fl || !fl->have_under)
        return 1;
    o = &fl->ops;
    if ((k = find_thread(o, t)) < 0)
        return 0;
    ((struct flt_ops *)o)->last = (size_t)k; /* a cache: events come in runs per thread */
    iv = &o->iv[o->th[k].off];
    hi = o->th[k].n;
    while (lo < hi) { /* the first interval starting after ts */
        size_t mid = lo + (hi - lo) / 2;
        if (iv[mid].ts <= ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (end < ts)
        end = ts;
    return lo > 0 && end <= iv[lo - 1].end;
}

/* ---- rows ---- */

static int64_t int_or(const tt__cell *c, int64_t dflt)
{
    return c->type == TT_CELL_INT ? c->i : dflt;
}

/* what an event of name id, start ts (have_ts), end, on the thread of
 * cells pid/tid fails: TT__FLT_* bits, 0 when it passes */
static int event_fails(const tt__flt *fl, int64_t name, int have_ts, int64_t ts, int64_t end,
                       const tt__cell *pid, const tt__cell *tid, const char *text)
{
    int fails;
    tt__tkey k;
    if (!fl)
        return 0;
    fails = tt__flt_name(fl, name) ? 0 : TT__FLT_NAME;
    if (!have_ts)
        return fails | (tt__flt_wants_launch(fl) ? TT__FLT_SCOPE : 0);
    if (!tt__flt_time(fl, ts))
        return fails | TT__FLT_SCOPE;
    if (!fl->have_under)
        return fails;
    k = tt__tkey_of_cells(pid, tid, text);
    return fails | (tt__flt_under(fl, &k, ts, end) ? 0 : TT__FLT_SCOPE);
}

/* a slice or runtime call: cells name, ts, dur, pid, tid */
static int span_fails(const tt__flt *fl, const tt__cell *row, const char *text, int name,
                      int ts, int dur, int pid, int tid)
{
    int64_t t = int_or(&row[ts], 0), d = int_or(&row[dur], 0);
    return event_fails(fl, int_or(&row[name], -1), row[ts].type == TT_CELL_INT, t,
                       d > 0 ? t + d : t, &row[pid], &row[tid], text);
}

int tt__flt_slice_fails(const tt__flt *fl, const tt__cell *row, const char *text)
{
    return span_fails(fl, row, text, TT_C_SL_NAME, TT_C_SL_TS, TT_C_SL_DUR, TT_C_SL_PID,
                      TT_C_SL_TID);
}

int tt__flt_runtime_fails(const tt__flt *fl, const tt__cell *row, const char *text)
{
    return span_fails(fl, row, text, TT_C_RT_NAME, TT_C_RT_TS, TT_C_RT_DUR, TT_C_RT_PID,
                      TT_C_RT_TID);
}

int tt__flt_memory_fails(const tt__flt *fl, const tt__cell *row, const char *text)
{
    int64_t ts = int_or(&row[TT_C_MEM_TS], 0);
    return event_fails(fl, int_or(&row[TT_C_MEM_NAME], -1), row[TT_C_MEM_TS].type == TT_CELL_INT,
                       ts, ts, &row[TT_C_MEM_PID], &row[TT_C_MEM_TID], text);
}

int tt__flt_slice(const tt__flt *fl, const tt__cell *row, const char *text)
{
    return !tt__flt_slice_fails(fl, row, text);
}

int tt__flt_runtime(const tt__flt *fl, const tt__cell *row, const char *text)
{
    return !tt__flt_runtime_fails(fl, row, text);
}

int tt__flt_memory(const tt__flt *fl, const tt__cell *row, const char *text)
{
    return !tt__flt_memory_fails(fl, row, text);
}

/* ---- GPU rows and their launches ---- */

int tt__flt_launch(tt__flt *fl, const tt__gpu_launch *l)
{
    if (!fl)
        return 0;
    if (fl->lq_head && fl->lq_head == fl->lq_n)
        fl->lq_head = fl->lq_n = 0;
    if (fl->lq_n == fl->lq_a && fl->lq_head > fl->lq_a / 2) { /* room at the front */
        memmove(fl->lq, fl->lq + fl->lq_head, (fl->lq_n - fl->lq_head) * sizeof(*fl->lq));
        fl->lq_n -= fl->lq_head;
        fl->lq_head = 0;
    }
    if (TT_ALLOC_GROW(fl->lq, fl->lq_n + 1, fl->lq_a) < 0)
        return tt__oom();
    fl->lq[fl->lq_n++] = *l;
    return 0;
}

/* the next launch taken (NULL: none waits) */
const tt__gpu_launch *tt__flt_launch_next(tt__flt *fl)
{
    if (fl->lq_head == fl->lq_n)
        return NULL;
    return &fl->lq[fl->lq_head++];
}

int tt__flt_gpu_fails_with(tt__flt *fl, const tt__cell *row, const tt__gpu_launch *l)
{
    int64_t ts = int_or(&row[TT_C_GPU_TS], 0);
    int have_ts = row[TT_C_GPU_TS].type == TT_CELL_INT, fails;
    if (l && l->rt_id && l->rt_ts != TT_ROWS_NO_TS) {
        ts = l->rt_ts;
        have_ts = 1;
    }
    fl->gpu_start = have_ts ? ts : TT_ROWS_NO_TS;
    fails = tt__flt_name(fl, int_or(&row[TT_C_GPU_NAME], -1)) ? 0 : TT__FLT_NAME;
    if (!tt__flt_wants_launch(fl))
        return fails;
    if (!have_ts || !tt__flt_time(fl, ts))
        return fails | TT__FLT_SCOPE;
    if (!fl->have_under)
        return fails;
    /* under an op: by its call, on the call's thread; without one, under none */
    if (l && l->rt_id && l->has_thread && l->rt_ts != TT_ROWS_NO_TS &&
        tt__flt_under(fl, &l->rt_thread, l->rt_ts, l->rt_ts))
        return fails;
    return fails | TT__FLT_SCOPE;
}

int tt__flt_gpu_fails(tt__flt *fl, const tt__cell *row, const char *text)
{
    const tt__gpu_launch *l = NULL;
    (void)text;
    if (!fl)
        return 0;
    if (tt__flt_wants_launch(fl) && !(l = tt__flt_launch_next(fl)))
        return tt_error_set(TT_ERROR, "filters: a GPU activity came without its launch");
    return tt__flt_gpu_fails_with(fl, row, l);
}

int tt__flt_gpu(tt__flt *fl, const tt__cell *row, const char *text)
{
    int f = tt__flt_gpu_fails(fl, row, text);
    return f < 0 ? f : !f;
}

int64_t tt__flt_gpu_start(const tt__flt *fl)
{
    return fl ? fl->gpu_start : TT_ROWS_NO_TS;
}
