/*
 * analyze/memtimeline.c - `tracetool memtimeline`: torch's memory timeline
 * (FORMATS.md 4) rebuilt from the [memory] events of a stored trace, or
 * re-rendered from torch's own raw export.
 *
 * Three SQL-ordered passes over the device's [memory] events, so memory is
 * bounded by the allocations live at one time, never by the trace:
 *  1. context: each event's innermost enclosing CPU op on its thread and the
 *     phase around it (forward, backward, AccumulateGrad, Optimizer.step,
 *     ProfilerStep#N), from a per-thread stack walk (temp table memctx);
 *  2. pairing in time order by address: each allocation's free time and the
 *     category the heuristics give it (temp table memcat), see docs/MEMTIMELINE.md;
 *  3. emission: the timeline tuples (PREEXISTING, CREATE, DESTROY) in torch's
 *     order, coalesced per torch's _coalesce_timeline into [times, sizes],
 *     written as .json, .json.gz or .raw.json.gz while streaming; the plot
 *     gets a peak-preserving downsampled copy.
 */
#include "common/compat.h"
#include "common/buf.h"
#include "analyze/db_internal.h"
#include "tracetool/crosscheck.h"
#include "tracetool/render.h"

#include <errno.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define NCOL 9          /* torch's sizes rows: baseline + 8 categories */
#define MAX_BUCKETS 3000
#define TOP_N 15

/* phase flags of an event's context */
enum { PH_BACKWARD = 1, PH_ACCUMGRAD = 2, PH_OPTIMIZER = 4, PH_STEP = 8 };

static const char *const cat_rule[TT_CAT_COUNT] = {
    "PARAMETER: never freed and allocated outside any profiler step",
    "OPTIMIZER_STATE: allocated in Optimizer.step and still live after it",
    "INPUT: allocated in a step before the first op of the model (data loading/copies)",
    "TEMPORARY: freed before the op that allocated it ended",
    "ACTIVATION: allocated in the forward pass and freed in the backward pass",
    "GRADIENT: allocated under AccumulateGrad (or a backward op) and live after it",
    "AUTOGRAD_DETAIL: allocated and freed inside the backward pass",
    "Unknown: no rule applied (or live before the trace started)",
};

/* ---- output sink: plain file, gzip or stdout ---- */

struct out {
    FILE *f;
    gzFile gz;
    int err;
};

static void out_write(struct out *o, const char *s, size_t n)
{
    if (o->err || !n)
        return;
    if (o->gz) {
        if (gzwrite(o->gz, s, (unsigned)n) != (int)n)
            o->err = 1;
    } else if (fwrite(s, 1, n, o->f) != n) {
        o->err = 1;
    }
}

static void out_str(struct out *o, const char *s)
{
    out_write(o, s, strlen(s));
}

/* ---- downsampled series for the plot ---- */

struct series {
    int64_t t0, t1;
    size_t n;
    int64_t *t, *sizes; /* up to 2 * MAX_BUCKETS points */
    int64_t bucket;     /* current bucket */
    int64_t bmax_t, bmin_t, bmax[NCOL], bmin[NCOL], bmax_tot, bmin_tot;
    int have;
};

static int64_t total_of(const int64_t *s)
{
    int64_t t = 0;
    int c;
    for (c = 1; c < NCOL; c++)
        t += s[c];
    return t;
}

static void series_flush(struct series *s)
{
    if (!s->have)
        return;
    /* keep the bucket's lowest and highest points, in time order */
    if (s->bmin_t < s->bmax_t) {
        s->t[s->n] = s->bmin_t;
        memcpy(&s->sizes[s->n * NCOL], s->bmin, sizeof(s->bmin));
        s->n++;
    }
    s->t[s->n] = s->bmax_t;
    memcpy(&s->sizes[s->n * NCOL], s->bmax, sizeof(s->bmax));
    s->n++;
    if (s->bmin_t > s->bmax_t) {
        s->t[s->n] = s->bmin_t;
        memcpy(&s->sizes[s->n * NCOL], s->bmin, sizeof(s->bmin));
        s->n++;
    }
    s->have = 0;
}

static void series_add(struct series *s, int64_t t, const int64_t *sz)
{
    int64_t span = s->t1 > s->t0 ? s->t1 - s->t0 : 1;
    int64_t b = (int64_t)((double)(t - s->t0) / (double)span * (MAX_BUCKETS - 1));
    int64_t tot = total_of(sz);
    if (b != s->bucket)
        series_flush(s);
    s->bucket = b;
    if (!s->have || tot >= s->bmax_tot) {
        s->bmax_tot = tot;
        s->bmax_t = t;
        memcpy(s->bmax, sz, sizeof(s->bmax));
    }
    if (!s->have || tot < s->bmin_tot) {
        s->bmin_tot = tot;
        s->bmin_t = t;
        memcpy(s->bmin, sz, sizeof(s->bmin));
    }
    s->have = 1;
}

/* ---- coalescing (torch's _coalesce_timeline) ---- */

struct coalesce {
    FILE *times_tmp;    /* times after the first one */
    FILE *sizes_tmp;    /* sizes rows */
    int64_t last_t;
    int64_t cur[NCOL];
    int have;
    int64_t t_min;
    int64_t npoints;
    int64_t first_t_raw; /* -1 when the first point is PREEXISTING */
    struct series *plot;
    int64_t peak_total, peak_t;
};

static void co_emit_point(struct coalesce *c)
{
    int k;
    if (c->times_tmp) {
        /* the first time may be -1 (PREEXISTING): written last, as t_min */
        if (c->npoints)
            fprintf(c->times_tmp, ", %" PRId64, c->last_t);
        fputs(c->npoints ? ", [" : "[", c->sizes_tmp);
        for (k = 0; k < NCOL; k++)
            fprintf(c->sizes_tmp, "%s%" PRId64, k ? ", " : "", c->cur[k]);
        fputc(']', c->sizes_tmp);
    }
    if (c->plot && c->last_t >= 0)
        series_add(c->plot, c->last_t, c->cur);
    if (total_of(c->cur) > c->peak_total) {
        c->peak_total = total_of(c->cur);
        c->peak_t = c->last_t;
    }
    c->npoints++;
}

/*
 * torch computes int(t / 1000) in Python: the exact quotient rounded to the
 * nearest double (half to even), then truncated. For 19-digit ns times that
 * is q + 1 when the remainder rounds up to a whole unit; reproduce it
 * exactly with integers (q < 2^53 for any epoch time in µs).
 */
static int64_t py_div1000(int64_t t)
{
    int64_t q, r, n, rem;
    int e, m;
    if (t < 0)
        return t == INT64_MIN ? INT64_MIN / 1000 : -py_div1000(-t);
    q = t / 1000;
    r = t % 1000;
    if (q == 0)
        return 0;
    e = 63 - __builtin_clzll((unsigned long long)q);
    if (e >= 53)
        return q;
    m = 52 - e; /* the double's spacing near q is 2^-m */
    n = (r << m) / 1000;
    rem = (r << m) % 1000;
    if (rem * 2 > 1000 || (rem * 2 == 1000 && (n & 1)))
        n++;
    return n >= ((int64_t)1 << m) ? q + 1 : q;
}

/* add n bytes to category cat (0..7) at raw time t_ns (-1 = preexisting) */
static void co_add(struct coalesce *c, int64_t t_ns, int cat, int64_t n)
{
    int64_t t = t_ns == -1 ? -1 : py_div1000(t_ns);
    if (c->t_min == -1 || (t > 0 && t < c->t_min))
        c->t_min = t;
    if (!c->have) {
        c->have = 1;
        c->last_t = t;
        c->first_t_raw = t;
    } else if (t != c->last_t) {
        co_emit_point(c);
        c->last_t = t;
    }
    c->cur[cat + 1] += n;
}

static void co_finish(struct coalesce *c)
{
    if (c->have)
        co_emit_point(c);
}

/* ---- context pass ---- */

struct frame {
    int64_t id, end, name;
    unsigned flags;
    int64_t step;
};

static int str_has(const char *s, const char *needle)
{
    return s && strstr(s, needle) != NULL;
}

static unsigned flags_of(const char *name, int is_backward_seq)
{
    unsigned f = 0;
    if (!name)
        return 0;
    if (str_has(name, "autograd::engine::evaluate_function") || str_has(name, "Backward") ||
        is_backward_seq)
        f |= PH_BACKWARD;
    if (str_has(name, "AccumulateGrad"))
        f |= PH_ACCUMGRAD;
    if (!strncmp(name, "Optimizer.step", 14) || !strncmp(name, "Optimizer.zero_grad", 19))
        f |= PH_OPTIMIZER;
    if (!strncmp(name, "ProfilerStep#", 13))
        f |= PH_STEP;
    return f;
}

/* ?1 trace, ?2 device type, ?3 device id: the device filter of the passes */
static void bind_device(sqlite3_stmt *st, int64_t trace, int dtype, int64_t did)
{
    sqlite3_bind_int64(st, 1, trace);
    sqlite3_bind_int(st, 2, dtype);
    sqlite3_bind_int64(st, 3, did);
}

/* Fill temp.memctx(mem_id, op_id, op_end, flags, step) for the device's events. */
static int context_pass(tt_db *db, int64_t trace, int dtype, int64_t did)
{
    sqlite3_stmt *st = NULL, *ins = NULL;
    struct frame *stack = NULL;
    size_t n = 0, alloc = 0;
    sqlite3_value *cp = NULL, *ct = NULL;
    int rc = 0, r;
    if ((rc = tt_db_exec(db, "DROP TABLE IF EXISTS temp.memctx;"
                             "CREATE TEMP TABLE memctx(mem_id INTEGER PRIMARY KEY, op_id INTEGER,"
                             " op_end INTEGER, flags INTEGER, step INTEGER)")) < 0)
        return rc;
    if (tt_db_prepare(db, &st,
                      "SELECT 0 AS k, s.id, s.pid, s.tid, s.ts, coalesce(s.dur, 0),"
                      "  n.s, (s.seq_nr IS NOT NULL AND coalesce(s.fwd_tid, 0) > 0)"
                      " FROM slices AS s JOIN strings AS n ON n.id = s.name"
                      " WHERE s.trace_id = ?1 AND s.ts IS NOT NULL"
                      "  AND s.tid IN (SELECT DISTINCT tid FROM memory WHERE trace_id = ?1)"
                      " UNION ALL SELECT 1, m.id, m.pid, m.tid, m.ts, 0, NULL, 0 FROM memory AS m"
                      " WHERE m.trace_id = ?1 AND m.device_type = ?2 AND coalesce(m.device_id, -1) = ?3"
                      "  AND m.ts IS NOT NULL"
                      " ORDER BY 3, 4, 5, k, 6 DESC") < 0 ||
        tt_db_prepare(db, &ins, "INSERT INTO temp.memctx VALUES(?,?,?,?,?)") < 0) {
        rc = TT_EDB;
        goto out;
    }
    bind_device(st, trace, dtype, did);
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        int k = sqlite3_column_int(st, 0);
        int64_t id = sqlite3_column_int64(st, 1), ts = sqlite3_column_int64(st, 4);
        sqlite3_value *pv = sqlite3_column_value(st, 2), *tv = sqlite3_column_value(st, 3);
        if (!cp || sqlite3_value_type(pv) != sqlite3_value_type(cp) ||
            sqlite3_value_int64(pv) != sqlite3_value_int64(cp) ||
            sqlite3_value_type(tv) != sqlite3_value_type(ct) ||
            sqlite3_value_int64(tv) != sqlite3_value_int64(ct) ||
            (sqlite3_value_type(tv) == SQLITE_TEXT &&
             strcmp((const char *)sqlite3_value_text(tv), (const char *)sqlite3_value_text(ct)))) {
            sqlite3_value_free(cp);
            sqlite3_value_free(ct);
            cp = sqlite3_value_dup(pv);
            ct = sqlite3_value_dup(tv);
            n = 0;
        }
        while (n && stack[n - 1].end < ts)
            n--;
        if (k == 0) {
            int64_t end = ts + sqlite3_column_int64(st, 5);
            const char *nm = (const char *)sqlite3_column_text(st, 6);
            unsigned f = flags_of(nm, sqlite3_column_int(st, 7));
            while (n && stack[n - 1].end < end)
                n--;
            if (TT_ALLOC_GROW(stack, n + 1, alloc) < 0) {
                rc = tt_error_set(TT_ENOMEM, "out of memory");
                goto out;
            }
            stack[n].id = id;
            stack[n].end = end;
            stack[n].flags = f | (n ? stack[n - 1].flags : 0);
            stack[n].step = (f & PH_STEP) ? id : n ? stack[n - 1].step : 0;
            n++;
            continue;
        }
        sqlite3_bind_int64(ins, 1, id);
        if (n) {
            sqlite3_bind_int64(ins, 2, stack[n - 1].id);
            sqlite3_bind_int64(ins, 3, stack[n - 1].end);
            sqlite3_bind_int64(ins, 4, stack[n - 1].flags);
            sqlite3_bind_int64(ins, 5, stack[n - 1].step);
        } else {
            sqlite3_bind_null(ins, 2);
            sqlite3_bind_null(ins, 3);
            sqlite3_bind_int64(ins, 4, 0);
            sqlite3_bind_null(ins, 5);
        }
        if (sqlite3_step(ins) != SQLITE_DONE) {
            rc = tt_db_error(db, "cannot store memory event context");
            goto out;
        }
        sqlite3_reset(ins);
    }
    if (r != SQLITE_DONE)
        rc = tt_db_error(db, "cannot read memory events");
out:
    sqlite3_value_free(cp);
    sqlite3_value_free(ct);
    free(stack);
    sqlite3_finalize(st);
    sqlite3_finalize(ins);
    return rc;
}

/* ---- live allocations by address (open addressing) ---- */

struct live {
    int64_t addr, bytes, mem_id, ts, op_id, op_end, step;
    unsigned flags;
    int cat;
    int etcat, rule;     /* the ET's verdict (-1 none) and its rule (ETR_*) */
    int used;
};

struct livemap {
    struct live *e;
    size_t cap, n;
};

static size_t lhash(int64_t a, size_t cap)
{
    uint64_t x = (uint64_t)a * 0x9E3779B97F4A7C15ULL;
    return (size_t)(x >> 17) & (cap - 1);
}

static int live_grow(struct livemap *m)
{
    struct livemap nm;
    size_t i;
    nm.cap = m->cap ? m->cap * 2 : 4096;
    nm.n = 0;
    nm.e = calloc(nm.cap, sizeof(*nm.e));
    if (!nm.e)
        return TT_ENOMEM;
    for (i = 0; i < m->cap; i++) {
        if (m->e[i].used) {
            size_t j = lhash(m->e[i].addr, nm.cap);
            while (nm.e[j].used)
                j = (j + 1) & (nm.cap - 1);
            nm.e[j] = m->e[i];
            nm.n++;
        }
    }
    free(m->e);
    *m = nm;
    return 0;
}

static struct live *live_find(struct livemap *m, int64_t addr)
{
    size_t j;
    if (!m->cap)
        return NULL;
    j = lhash(addr, m->cap);
    while (m->e[j].used) {
        if (m->e[j].addr == addr)
            return &m->e[j];
        j = (j + 1) & (m->cap - 1);
    }
    return NULL;
}

static struct live *live_put(struct livemap *m, int64_t addr)
{
    size_t j;
    if ((m->n + 1) * 2 > m->cap && live_grow(m) < 0)
        return NULL;
    j = lhash(addr, m->cap);
    while (m->e[j].used) {
        if (m->e[j].addr == addr)
            return &m->e[j];
        j = (j + 1) & (m->cap - 1);
    }
    memset(&m->e[j], 0, sizeof(m->e[j]));
    m->e[j].used = 1;
    m->e[j].addr = addr;
    m->n++;
    return &m->e[j];
}

static void live_del(struct livemap *m, struct live *e)
{
    size_t j = (size_t)(e - m->e), k;
    m->e[j].used = 0;
    m->n--;
    k = (j + 1) & (m->cap - 1);
    while (m->e[k].used) {
        struct live tmp = m->e[k];
        m->e[k].used = 0;
        m->n--;
        {
            size_t h = lhash(tmp.addr, m->cap);
            while (m->e[h].used)
                h = (h + 1) & (m->cap - 1);
            m->e[h] = tmp;
            m->n++;
        }
        k = (k + 1) & (m->cap - 1);
    }
}

/* the heuristics (docs/MEMTIMELINE.md), decided when the block is freed
 * (free_ts) or at the end of the trace (free_ts = -1) */
static int categorize(const struct live *a, int64_t free_ts, unsigned free_flags)
{
    /* torch's precedence: a gradient by identity beats a temporary */
    if (a->etcat == TT_CAT_GRADIENT)
        return a->etcat;
    if (free_ts >= 0 && a->op_id && free_ts <= a->op_end)
        return TT_CAT_TEMPORARY;
    if (a->etcat >= 0)
        return a->etcat;
    if (a->flags & PH_ACCUMGRAD)
        return TT_CAT_GRADIENT;
    if (a->flags & PH_OPTIMIZER)
        return free_ts < 0 || !(free_flags & PH_OPTIMIZER) ? TT_CAT_OPTIMIZER_STATE
                                                          : TT_CAT_TEMPORARY;
    if (a->flags & PH_BACKWARD)
        return free_ts >= 0 && (free_flags & PH_BACKWARD) ? TT_CAT_AUTOGRAD_DETAIL
                                                          : TT_CAT_GRADIENT;
    if ((a->flags & PH_STEP) && a->op_id && free_ts >= 0 && (free_flags & PH_BACKWARD))
        return TT_CAT_ACTIVATION;
    if (!(a->flags & PH_STEP) && free_ts < 0)
        return TT_CAT_PARAMETER;
    return TT_CAT_UNKNOWN;
}

/* pass 2: category of every allocation -> temp.memcat(mem_id, cat) */
#define RULE_OF(a, cat) ((a)->etcat >= 0 && (a)->etcat == (cat) ? (a)->rule : 0)
static int category_pass(tt_db *db, int64_t trace, int dtype, int64_t did, int nocat)
{
    sqlite3_stmt *st = NULL, *ins = NULL;
    struct livemap m = { NULL, 0, 0 };
    size_t i;
    int rc = 0, r;
    if ((rc = tt_db_exec(db, "DROP TABLE IF EXISTS temp.memcat;"
                             "CREATE TEMP TABLE memcat(mem_id INTEGER PRIMARY KEY, cat INTEGER,"
                             " rule INTEGER)")) < 0)
        return rc;
    if (tt_db_prepare(db, &st,
                      "SELECT m.id, m.ts, m.addr, m.bytes, c.op_id, c.op_end, c.flags, c.step,"
                      " coalesce(e.cat, -1), coalesce(e.rule, 0)"
                      " FROM memory AS m LEFT JOIN temp.memctx AS c ON c.mem_id = m.id"
                      " LEFT JOIN temp.memet AS e ON e.mem_id = m.id"
                      " WHERE m.trace_id = ?1 AND m.device_type = ?2 AND coalesce(m.device_id, -1) = ?3"
                      "  AND m.ts IS NOT NULL AND m.bytes IS NOT NULL ORDER BY m.ts, m.id") < 0 ||
        tt_db_prepare(db, &ins, "INSERT OR REPLACE INTO temp.memcat VALUES(?,?,?)") < 0) {
        rc = TT_EDB;
        goto out;
    }
    bind_device(st, trace, dtype, did);
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0), ts = sqlite3_column_int64(st, 1);
        int64_t addr = sqlite3_column_int64(st, 2), bytes = sqlite3_column_int64(st, 3);
        unsigned flags = (unsigned)sqlite3_column_int64(st, 6);
        struct live *a = live_find(&m, addr);
        int cat;
        if (bytes > 0) {
            if (a) { /* reallocated without a free we saw: close the old one */
                cat = nocat ? TT_CAT_UNKNOWN : categorize(a, -1, 0);
                sqlite3_bind_int64(ins, 1, a->mem_id);
                sqlite3_bind_int(ins, 2, cat);
                sqlite3_bind_int(ins, 3, RULE_OF(a, cat));
                if (sqlite3_step(ins) != SQLITE_DONE)
                    goto dberr;
                sqlite3_reset(ins);
            }
            if (!(a = live_put(&m, addr))) {
                rc = tt_error_set(TT_ENOMEM, "out of memory");
                goto out;
            }
            a->bytes = bytes;
            a->mem_id = id;
            a->ts = ts;
            a->op_id = sqlite3_column_int64(st, 4);
            a->op_end = sqlite3_column_int64(st, 5);
            a->flags = flags;
            a->step = sqlite3_column_int64(st, 7);
            a->etcat = sqlite3_column_int(st, 8);
            a->rule = sqlite3_column_int(st, 9);
            continue;
        }
        if (bytes < 0 && a) {
            cat = nocat ? TT_CAT_UNKNOWN : categorize(a, ts, flags);
            sqlite3_bind_int64(ins, 1, a->mem_id);
            sqlite3_bind_int(ins, 2, cat);
            sqlite3_bind_int(ins, 3, RULE_OF(a, cat));
            if (sqlite3_step(ins) != SQLITE_DONE)
                goto dberr;
            sqlite3_reset(ins);
            live_del(&m, a);
        }
    }
    if (r != SQLITE_DONE)
        goto dberr;
    for (i = 0; i < m.cap; i++) {
        if (!m.e[i].used)
            continue;
        int cat = nocat ? TT_CAT_UNKNOWN : categorize(&m.e[i], -1, 0);
        sqlite3_bind_int64(ins, 1, m.e[i].mem_id);
        sqlite3_bind_int(ins, 2, cat);
        sqlite3_bind_int(ins, 3, RULE_OF(&m.e[i], cat));
        if (sqlite3_step(ins) != SQLITE_DONE)
            goto dberr;
        sqlite3_reset(ins);
    }
    goto out;
dberr:
    rc = tt_db_error(db, "cannot categorise memory events");
out:
    free(m.e);
    sqlite3_finalize(st);
    sqlite3_finalize(ins);
    return rc;
}

/* ---- device selection ---- */

static int parse_device(const char *dev, int *dtype, int64_t *did)
{
    const char *colon;
    if (!dev || !strcmp(dev, "cpu")) {
        *dtype = 0;
        *did = -1;
        return 0;
    }
    colon = strchr(dev, ':');
    if (!strncmp(dev, "cuda", 4) && (dev[4] == '\0' || dev[4] == ':')) {
        *dtype = 1;
        *did = colon ? atoll(colon + 1) : 0;
        return 0;
    }
    return tt_error_set(TT_EINVALID, "unknown device '%s' (use cpu or cuda:N)", dev);
}

/* ---- the whole job ---- */

struct job {
    tt_db *db;
    const tt_memtl_options *o;
    int64_t trace;
    const char *label;
    int raw_input;  /* a torch raw export: re-render */
    int dtype;
    int64_t did;
    char device[32];
    int64_t base_ns;
};

static const char *suffix_kind(const char *out)
{
    size_t n = strlen(out);
#define ENDS(s) (n >= strlen(s) && !strcmp(out + n - strlen(s), s))
    if (!strcmp(out, "-"))
        return "stdout";
    if (ENDS(".raw.json.gz"))
        return "raw";
    if (ENDS(".html"))
        return "html";
    if (ENDS(".png"))
        return "png";
    if (ENDS(".gz"))
        return "jsongz";
    return "json";
#undef ENDS
}

static int64_t q1(tt_db *db, const char *sql, int64_t a, int b, int64_t c, int *ok)
{
    sqlite3_stmt *st;
    int64_t v = 0;
    *ok = 0;
    if (sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_int64(st, 1, a);
    sqlite3_bind_int(st, 2, b);
    sqlite3_bind_int64(st, 3, c);
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
        v = sqlite3_column_int64(st, 0);
        *ok = 1;
    }
    sqlite3_finalize(st);
    return v;
}

/* ---- pass 1b: tensor identities from a linked Execution Trace ---- */

/*
 * When the trace's CPU ops are joined to an Execution Trace (table et_links,
 * written by `tracetool ingest` or `crosscheck`), the ET's data flow names
 * what a block is for, as torch's own categorizer does from tensor
 * identities (FORMATS.md 4.2). Each storage of the ET gets: the topmost node
 * whose outputs first show it (its creator), whether it is the gradient
 * input of torch::autograd::AccumulateGrad, and whether a backward node reads
 * it. An allocation inside an op is the creator's storage of that op (or of
 * one of its ancestors) with the same device and size (the allocator rounds
 * up to 512 bytes). Result: temp.memet(mem_id, cat, rule).
 */
enum { ETR_NONE = 0, ETR_GRADIENT, ETR_ACTIVATION, ETR_AUTOGRAD, ETR_COUNT };

static const char *const et_rule[ETR_COUNT] = {
    NULL,
    "GRADIENT (ET): the gradient input of torch::autograd::AccumulateGrad",
    "ACTIVATION (ET): made by a forward op, read by a backward op",
    "AUTOGRAD_DETAIL (ET): made by a backward op, not a gradient",
};

struct i64map {
    int64_t *k;
    size_t *v;
    unsigned char *used;
    size_t cap, n;
};

static int i64map_put(struct i64map *m, int64_t key, size_t val);

static size_t i64map_slot(const struct i64map *m, int64_t key)
{
    size_t j = lhash(key, m->cap);
    while (m->used[j] && m->k[j] != key)
        j = (j + 1) & (m->cap - 1);
    return j;
}

static int i64map_grow(struct i64map *m)
{
    struct i64map nm = { NULL, NULL, NULL, m->cap ? m->cap * 2 : 1024, 0 };
    size_t i;
    nm.k = malloc(nm.cap * sizeof(*nm.k));
    nm.v = malloc(nm.cap * sizeof(*nm.v));
    nm.used = calloc(nm.cap, 1);
    if (!nm.k || !nm.v || !nm.used) {
        free(nm.k);
        free(nm.v);
        free(nm.used);
        return TT_ENOMEM;
    }
    for (i = 0; i < m->cap; i++)
        if (m->used[i])
            i64map_put(&nm, m->k[i], m->v[i]);
    free(m->k);
    free(m->v);
    free(m->used);
    *m = nm;
    return 0;
}

static int i64map_put(struct i64map *m, int64_t key, size_t val)
{
    size_t j;
    if ((m->n + 1) * 2 > m->cap && i64map_grow(m) < 0)
        return TT_ENOMEM;
    j = i64map_slot(m, key);
    if (!m->used[j]) {
        m->used[j] = 1;
        m->k[j] = key;
        m->n++;
    }
    m->v[j] = val;
    return 0;
}

static int i64map_get(const struct i64map *m, int64_t key, size_t *val)
{
    size_t j;
    if (!m->cap)
        return 0;
    j = i64map_slot(m, key);
    if (!m->used[j])
        return 0;
    *val = m->v[j];
    return 1;
}

static void i64map_free(struct i64map *m)
{
    free(m->k);
    free(m->v);
    free(m->used);
}

enum { EN_BW = 1, EN_OPT = 2, EN_AG = 4 };

struct etnode {
    int64_t node_id, parent;
    unsigned flags;      /* EN_* of the node and its ancestors */
    unsigned own;        /* EN_* of the node itself */
};

struct etstore {
    int64_t creator;     /* node_id of the topmost node first showing it */
    int64_t need;        /* bytes: (offset + numel) * itemsize */
    int64_t dev_id;
    int dev_type;        /* 0 cpu, 1 cuda, -1 other */
    unsigned char created, grad, bw_read, used;
};

static int et_dev(const char *s, int *type, int64_t *id)
{
    *id = -1;
    if (!s)
        return -1;
    if (!strcmp(s, "cpu")) {
        *type = 0;
        return 0;
    }
    if (!strncmp(s, "cuda", 4)) {
        *type = 1;
        *id = s[4] == ':' ? strtoll(s + 5, NULL, 10) : 0;
        return 0;
    }
    *type = -1;
    return 0;
}

static int by_creator(const void *a, const void *b)
{
    const struct etstore *x = a, *y = b;
    return x->creator < y->creator ? -1 : x->creator > y->creator;
}

static int et_pass(tt_db *db, int64_t trace, int dtype, int64_t did, int nocat)
{
    sqlite3_stmt *st = NULL, *ins = NULL, *lnk = NULL, *par = NULL;
    struct etnode *nodes = NULL;
    struct etstore *sto = NULL;
    size_t nn = 0, an = 0, ns = 0, as = 0, i;
    struct i64map nmap = { 0 }, rowmap = { 0 }, smap = { 0 };
    int64_t et = 0;
    int rc = 0, r, ok = 0;
    if ((rc = tt_db_exec(db, "DROP TABLE IF EXISTS temp.memet;"
                             "CREATE TEMP TABLE memet(mem_id INTEGER PRIMARY KEY, cat INTEGER,"
                             " rule INTEGER)")) < 0)
        return rc;
    if (nocat)
        return 0;
    if (q1(db, "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'et_links'",
           0, 0, 0, &ok) <= 0)
        return 0;
    et = q1(db, "SELECT min(et_trace_id) FROM et_links WHERE kineto_trace_id = ?1", trace, 0, 0,
            &ok);
    if (!ok || et <= 0)
        return 0;

    /* the ET's nodes in id order (a parent's id is below its children's) */
    if (tt_db_prepare(db, &st, "SELECT n.id, n.node_id, n.parent, s.s FROM et_nodes AS n"
                               " JOIN strings AS s ON s.id = n.name WHERE n.trace_id = ?1"
                               " ORDER BY n.node_id") < 0) {
        rc = TT_EDB;
        goto out;
    }
    sqlite3_bind_int64(st, 1, et);
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 3);
        struct etnode *e;
        size_t p;
        if (TT_ALLOC_GROW(nodes, nn + 1, an) < 0)
            goto nomem;
        e = &nodes[nn];
        e->node_id = sqlite3_column_int64(st, 1);
        e->parent = sqlite3_column_type(st, 2) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 2);
        e->own = 0;
        if (str_has(name, "autograd::engine::evaluate_function") || str_has(name, "Backward"))
            e->own |= EN_BW;
        if (name && (!strncmp(name, "Optimizer.step", 14) ||
                     !strncmp(name, "Optimizer.zero_grad", 19)))
            e->own |= EN_OPT;
        if (str_has(name, "AccumulateGrad"))
            e->own |= EN_AG | EN_BW;
        e->flags = e->own;
        if (e->parent != e->node_id && i64map_get(&nmap, e->parent, &p))
            e->flags |= nodes[p].flags;
        if (i64map_put(&nmap, e->node_id, nn) < 0 ||
            i64map_put(&rowmap, sqlite3_column_int64(st, 0), nn) < 0)
            goto nomem;
        nn++;
    }
    if (r != SQLITE_DONE)
        goto dberr;
    sqlite3_finalize(st);
    st = NULL;

    /* every tensor argument, in node order: [id, storage, offset, numel, itemsize, device] */
    if (tt_db_prepare(db, &st,
#define ET_TENSOR(col) \
    " FROM et_nodes AS n, json_tree(n." col ") AS t WHERE n.trace_id = ?1" \
    "  AND json_valid(n." col ") AND t.type = 'array' AND t.parent IS NOT NULL" \
    "  AND json_array_length(t.value) = 6 AND json_type(t.value, '$[0]') = 'integer'" \
    "  AND json_type(t.value, '$[1]') = 'integer' AND json_type(t.value, '$[5]') = 'text'"
                      "SELECT n.node_id AS node, 0 AS io, t.path = '$' AND t.key = 0 AS top,"
                      " t.value ->> 1, (t.value ->> 2 + t.value ->> 3) * (t.value ->> 4),"
                      " t.value ->> 5" ET_TENSOR("inputs")
                      " UNION ALL SELECT n.node_id, 1, 0,"
                      " t.value ->> 1, (t.value ->> 2 + t.value ->> 3) * (t.value ->> 4),"
                      " t.value ->> 5" ET_TENSOR("outputs")
                      " ORDER BY node, io") < 0) {
#undef ET_TENSOR
        rc = TT_EDB;
        goto out;
    }
    sqlite3_bind_int64(st, 1, et);
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t node = sqlite3_column_int64(st, 0), sid = sqlite3_column_int64(st, 3);
        int out = sqlite3_column_int(st, 1), top = sqlite3_column_int(st, 2);
        size_t ni, si;
        const struct etnode *e;
        struct etstore *s;
        if (!i64map_get(&nmap, node, &ni))
            continue;
        e = &nodes[ni];
        if (!i64map_get(&smap, sid, &si)) {
            if (TT_ALLOC_GROW(sto, ns + 1, as) < 0)
                goto nomem;
            si = ns++;
            s = &sto[si];
            memset(s, 0, sizeof(*s));
            s->creator = node;
            s->created = (unsigned char)out;
            s->need = sqlite3_column_int64(st, 4);
            et_dev((const char *)sqlite3_column_text(st, 5), &s->dev_type, &s->dev_id);
            if (i64map_put(&smap, sid, si) < 0)
                goto nomem;
        }
        s = &sto[si];
        if (!out && (e->own & EN_AG))
            s->grad = 1;
        if (!out && top && e->parent >= 0) {
            size_t pi;
            /* torch: the first input of AccumulateGrad's child (detach / add_) */
            if (i64map_get(&nmap, e->parent, &pi) && (nodes[pi].own & EN_AG))
                s->grad = 1;
        }
        if (!out && (e->flags & EN_BW) && node != s->creator)
            s->bw_read = 1;
    }
    if (r != SQLITE_DONE)
        goto dberr;
    sqlite3_finalize(st);
    st = NULL;
    i64map_free(&smap);
    memset(&smap, 0, sizeof(smap));
    /* storages by creator, for the lookup below */
    {
        size_t k = 0;
        for (i = 0; i < ns; i++)
            if (sto[i].created && sto[i].need > 0)
                sto[k++] = sto[i];
        ns = k;
        qsort(sto, ns, sizeof(*sto), by_creator);
    }

    /* each allocation of the device inside a linked op */
    if (tt_db_prepare(db, &st, "SELECT m.id, m.bytes, c.op_id FROM memory AS m"
                               " JOIN temp.memctx AS c ON c.mem_id = m.id"
                               " WHERE m.trace_id = ?1 AND m.device_type = ?2"
                               "  AND coalesce(m.device_id, -1) = ?3 AND m.bytes > 0"
                               "  AND c.op_id IS NOT NULL ORDER BY m.ts, m.id") < 0 ||
        tt_db_prepare(db, &lnk, "SELECT et_node_row_id FROM et_links WHERE kineto_trace_id = ?1"
                                " AND slice_id = ?2 AND et_trace_id = ?3") < 0 ||
        tt_db_prepare(db, &par, "SELECT parent_id FROM slices WHERE id = ?1") < 0 ||
        tt_db_prepare(db, &ins, "INSERT INTO temp.memet VALUES(?,?,?)") < 0) {
        rc = TT_EDB;
        goto out;
    }
    bind_device(st, trace, dtype, did);
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t mem = sqlite3_column_int64(st, 0), bytes = sqlite3_column_int64(st, 1);
        int64_t op = sqlite3_column_int64(st, 2), node = -1;
        struct etstore *hit = NULL;
        size_t ni = 0;
        int depth, rule;
        /* the innermost linked op around the allocation */
        for (depth = 0; op > 0 && depth < 64 && node < 0; depth++) {
            sqlite3_reset(lnk);
            sqlite3_bind_int64(lnk, 1, trace);
            sqlite3_bind_int64(lnk, 2, op);
            sqlite3_bind_int64(lnk, 3, et);
            if (sqlite3_step(lnk) == SQLITE_ROW &&
                i64map_get(&rowmap, sqlite3_column_int64(lnk, 0), &ni)) {
                node = nodes[ni].node_id;
                break;
            }
            sqlite3_reset(par);
            sqlite3_bind_int64(par, 1, op);
            op = sqlite3_step(par) == SQLITE_ROW ? sqlite3_column_int64(par, 0) : 0;
        }
        /* a storage created there (or by an ancestor) with this device and size */
        for (depth = 0; node >= 0 && depth < 64 && !hit; depth++) {
            size_t lo = 0, hi = ns;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (sto[mid].creator < node)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            for (; lo < ns && sto[lo].creator == node; lo++) {
                struct etstore *s = &sto[lo];
                if (!s->used && s->dev_type == dtype && (dtype == 0 || s->dev_id == did) &&
                    bytes >= s->need && bytes - s->need < 512) {
                    hit = s;
                    break;
                }
            }
            if (hit || !i64map_get(&nmap, node, &ni) || nodes[ni].parent == node)
                break;
            node = nodes[ni].parent;
            if (!i64map_get(&nmap, node, &ni))
                break;
        }
        if (!hit)
            continue;
        hit->used = 1;
        {
            size_t ci = 0;
            unsigned cf = i64map_get(&nmap, hit->creator, &ci) ? nodes[ci].flags : 0;
            if (hit->grad)
                rule = ETR_GRADIENT;
            else if (cf & EN_BW)
                rule = ETR_AUTOGRAD;
            else if (!(cf & EN_OPT) && hit->bw_read)
                rule = ETR_ACTIVATION;
            else
                continue;
        }
        sqlite3_bind_int64(ins, 1, mem);
        sqlite3_bind_int(ins, 2, rule == ETR_GRADIENT     ? TT_CAT_GRADIENT
                                 : rule == ETR_AUTOGRAD ? TT_CAT_AUTOGRAD_DETAIL
                                                        : TT_CAT_ACTIVATION);
        sqlite3_bind_int(ins, 3, rule);
        if (sqlite3_step(ins) != SQLITE_DONE)
            goto dberr;
        sqlite3_reset(ins);
    }
    if (r != SQLITE_DONE)
        goto dberr;
    goto out;
nomem:
    rc = tt_error_set(TT_ENOMEM, "out of memory");
    goto out;
dberr:
    rc = tt_db_error(db, "cannot read the Execution Trace");
out:
    i64map_free(&nmap);
    i64map_free(&rowmap);
    i64map_free(&smap);
    free(nodes);
    free(sto);
    sqlite3_finalize(st);
    sqlite3_finalize(ins);
    sqlite3_finalize(lnk);
    sqlite3_finalize(par);
    return rc;
}

static char *name_of_slice(tt_db *db, int64_t id)
{
    sqlite3_stmt *st;
    char *r = NULL;
    if (!id)
        return strdup("");
    if (sqlite3_prepare_v2(db->sql, "SELECT n.s FROM slices AS s JOIN strings AS n ON n.id = s.name"
                                    " WHERE s.id = ?1", -1, &st, NULL) != SQLITE_OK)
        return strdup("");
    sqlite3_bind_int64(st, 1, id);
    if (sqlite3_step(st) == SQLITE_ROW)
        r = strdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return r ? r : strdup("");
}

static int run_job(struct job *j, const char *output)
{
    char *part = NULL; /* OUTPUT.XXXXXX while it is written */
    const char *kind = suffix_kind(output);
    int want_json = !strcmp(kind, "json") || !strcmp(kind, "jsongz") || !strcmp(kind, "stdout");
    int want_raw = !strcmp(kind, "raw");
    int want_plot = !strcmp(kind, "png") || !strcmp(kind, "html");
    struct out o = { NULL, NULL, 0 };
    struct coalesce co;
    struct series plot;
    FILE *sizes_tmp = NULL, *times_tmp = NULL;
    sqlite3_stmt *st = NULL;
    int rc = 0, r, ok;
    int64_t raw_rows = 0;
    struct livemap live = { NULL, 0, 0 };
    int64_t *at = NULL, *aa = NULL, *ar = NULL;
    size_t na = 0, aalloc = 0;
    int64_t peak_alloc = 0, peak_res = 0, peak_t = 0, peak_mem_id = 0;
    tt_memtl_alloc top[TOP_N];
    char *top_ops[TOP_N];
    size_t ntop = 0, i;
    char *peak_op = NULL, *peak_step = NULL;

    memset(&co, 0, sizeof(co));
    memset(&plot, 0, sizeof(plot));
    memset(top_ops, 0, sizeof(top_ops));
    co.t_min = -1;
    co.plot = want_plot ? &plot : NULL;

    /* time range for the plot buckets */
    if (want_plot) {
        int64_t t0, t1;
        if (j->raw_input) {
            t0 = q1(j->db, "SELECT min(ts) FROM memory_timeline WHERE trace_id = ?1 AND ts > 0"
                           " AND ?2 = ?2 AND ?3 = ?3", j->trace, 0, 0, &ok);
            t1 = q1(j->db, "SELECT max(ts) FROM memory_timeline WHERE trace_id = ?1"
                           " AND ?2 = ?2 AND ?3 = ?3", j->trace, 0, 0, &ok);
        } else {
            t0 = q1(j->db, "SELECT min(ts) FROM memory WHERE trace_id = ?1 AND device_type = ?2"
                           " AND coalesce(device_id, -1) = ?3", j->trace, j->dtype, j->did, &ok);
            t1 = q1(j->db, "SELECT max(ts) FROM memory WHERE trace_id = ?1 AND device_type = ?2"
                           " AND coalesce(device_id, -1) = ?3", j->trace, j->dtype, j->did, &ok);
            t0 = (t0 + j->base_ns) / 1000;
            t1 = (t1 + j->base_ns) / 1000;
        }
        if (j->raw_input) {
            t0 /= 1000;
            t1 /= 1000;
        }
        plot.t0 = t0;
        plot.t1 = t1;
        plot.bucket = -1;
        plot.t = malloc(sizeof(int64_t) * 3 * MAX_BUCKETS);
        plot.sizes = malloc(sizeof(int64_t) * NCOL * 3 * MAX_BUCKETS);
        if (!plot.t || !plot.sizes) {
            rc = tt_error_set(TT_ENOMEM, "out of memory");
            goto out;
        }
    }

    /* open the output */
    if (want_json || want_raw) {
        if (!strcmp(kind, "stdout")) {
            o.f = stdout;
        } else if (tt__path_kind(output) == TT_PATH_OTHER) {
            /* a device, a pipe, a symbolic link: written in place */
            if (!strcmp(kind, "json") ? !(o.f = fopen(output, "wb"))
                                      : !(o.gz = gzopen(output, "wb6"))) {
                rc = tt_error_set_at(TT_EIO, output, -1, "cannot write: %s", strerror(errno));
                goto out;
            }
        } else {
            /* written beside OUTPUT and renamed at the end: a failure leaves
             * no half-written file */
            int fd;
            if (!(part = malloc(strlen(output) + 8))) {
                rc = tt_error_set(TT_ENOMEM, "out of memory");
                goto out;
            }
            sprintf(part, "%s.XXXXXX", output);
            if ((fd = mkstemp(part)) < 0) {
                free(part);
                part = NULL;
                rc = tt_error_set_at(TT_EIO, output, -1, "cannot write: %s", strerror(errno));
                goto out;
            }
            fchmod(fd, 0644);
            if (!strcmp(kind, "json") ? !(o.f = fdopen(fd, "wb")) : !(o.gz = gzdopen(fd, "wb6"))) {
                close(fd);
                rc = tt_error_set_at(TT_EIO, output, -1, "cannot write");
                goto out;
            }
        }
        if (want_json) {
            sizes_tmp = tmpfile();
            times_tmp = tmpfile();
            if (!sizes_tmp || !times_tmp) {
                rc = tt_error_set(TT_EIO, "cannot create a temporary file");
                goto out;
            }
            co.times_tmp = times_tmp;
            co.sizes_tmp = sizes_tmp;
        } else {
            out_str(&o, "[");
        }
    }

    if (j->raw_input) {
        /* torch's own raw export: every row already carries its category */
        if (tt_db_prepare(j->db, &st, "SELECT ts, action, bytes, coalesce(category, 7)"
                                      " FROM memory_timeline WHERE trace_id = ?1 ORDER BY id") < 0) {
            rc = TT_EDB;
            goto out;
        }
        sqlite3_bind_int64(st, 1, j->trace);
        while ((r = sqlite3_step(st)) == SQLITE_ROW) {
            int64_t t = sqlite3_column_int64(st, 0), n = sqlite3_column_int64(st, 2);
            int cat = (int)sqlite3_column_int64(st, 3);
            if (cat < 0 || cat >= TT_CAT_COUNT)
                cat = TT_CAT_UNKNOWN;
            if (j->o->no_categories)
                cat = TT_CAT_UNKNOWN;
            if (want_raw) {
                char b[128];
                snprintf(b, sizeof(b), "%s[%" PRId64 ", %" PRId64 ", %" PRId64 ", %d]",
                         raw_rows++ ? ", " : "", t, (int64_t)sqlite3_column_int64(st, 1), n, cat);
                out_str(&o, b);
            }
            co_add(&co, t, cat, n);
        }
        if (r != SQLITE_DONE) {
            rc = tt_db_error(j->db, "cannot read the memory timeline");
            goto out;
        }
        sqlite3_finalize(st);
        st = NULL;
    } else {
        if ((rc = context_pass(j->db, j->trace, j->dtype, j->did)) < 0 ||
            (rc = et_pass(j->db, j->trace, j->dtype, j->did, j->o->no_categories)) < 0 ||
            (rc = category_pass(j->db, j->trace, j->dtype, j->did, j->o->no_categories)) < 0)
            goto out;
        /* pass 3: the timeline in time order; PREEXISTING first (t = -1) */
        if (tt_db_prepare(j->db, &st,
                          "SELECT m.id, m.ts, m.addr, m.bytes, m.total_allocated, m.total_reserved,"
                          " coalesce(k.cat, 7), c.op_id, c.step, coalesce(k.rule, 0)"
                          " FROM memory AS m LEFT JOIN temp.memcat AS k ON k.mem_id = m.id"
                          " LEFT JOIN temp.memctx AS c ON c.mem_id = m.id"
                          " WHERE m.trace_id = ?1 AND m.device_type = ?2 AND coalesce(m.device_id, -1) = ?3"
                          "  AND m.ts IS NOT NULL AND m.bytes IS NOT NULL ORDER BY m.ts, m.id") < 0) {
            rc = TT_EDB;
            goto out;
        }
        /* blocks freed before any allocation we saw: PREEXISTING at -1 */
        {
            sqlite3_stmt *pre;
            struct livemap seen = { NULL, 0, 0 };
            if (tt_db_prepare(j->db, &pre,
                              "SELECT m.addr, m.bytes FROM memory AS m WHERE m.trace_id = ?1"
                              " AND m.device_type = ?2 AND coalesce(m.device_id, -1) = ?3"
                              " AND m.ts IS NOT NULL AND m.bytes IS NOT NULL ORDER BY m.ts, m.id") < 0) {
                rc = TT_EDB;
                goto out;
            }
            sqlite3_bind_int64(pre, 1, j->trace);
            sqlite3_bind_int(pre, 2, j->dtype);
            sqlite3_bind_int64(pre, 3, j->did);
            while (sqlite3_step(pre) == SQLITE_ROW) {
                int64_t addr = sqlite3_column_int64(pre, 0), b = sqlite3_column_int64(pre, 1);
                struct live *a = live_find(&seen, addr);
                if (b > 0) {
                    if (!live_put(&seen, addr)) {
                        rc = tt_error_set(TT_ENOMEM, "out of memory");
                        break;
                    }
                } else if (b < 0) {
                    if (a) {
                        live_del(&seen, a);
                    } else {
                        if (want_raw) {
                            char buf[128];
                            snprintf(buf, sizeof(buf), "%s[-1, 1, %" PRId64 ", %d]",
                                     raw_rows++ ? ", " : "", -b, TT_CAT_UNKNOWN);
                            out_str(&o, buf);
                        }
                        co_add(&co, -1, TT_CAT_UNKNOWN, -b);
                        /* it will be destroyed at its free: track it as live */
                        {
                            struct live *p = live_put(&live, addr);
                            if (!p) {
                                rc = tt_error_set(TT_ENOMEM, "out of memory");
                                break;
                            }
                            p->bytes = -b;
                            p->cat = TT_CAT_UNKNOWN;
                            p->ts = -1;
                        }
                        /* mark so the second free of a reused address is not preexisting */
                        if (!live_put(&seen, addr)) {
                            rc = tt_error_set(TT_ENOMEM, "out of memory");
                            break;
                        }
                        live_del(&seen, live_find(&seen, addr));
                    }
                }
            }
            sqlite3_finalize(pre);
            free(seen.e);
            if (rc < 0)
                goto out;
        }
        sqlite3_bind_int64(st, 1, j->trace);
        sqlite3_bind_int(st, 2, j->dtype);
        sqlite3_bind_int64(st, 3, j->did);
        while ((r = sqlite3_step(st)) == SQLITE_ROW) {
            int64_t id = sqlite3_column_int64(st, 0), ts = sqlite3_column_int64(st, 1);
            int64_t addr = sqlite3_column_int64(st, 2), b = sqlite3_column_int64(st, 3);
            int64_t t_ns = ts + j->base_ns;
            struct live *a = live_find(&live, addr);
            if (sqlite3_column_type(st, 4) != SQLITE_NULL) {
                int64_t al = sqlite3_column_int64(st, 4), re = sqlite3_column_int64(st, 5);
                if (want_plot) {
                    if (TT_ALLOC_GROW(at, na + 1, aalloc) < 0 ||
                        !(aa = realloc(aa, aalloc * sizeof(*aa))) ||
                        !(ar = realloc(ar, aalloc * sizeof(*ar)))) {
                        rc = tt_error_set(TT_ENOMEM, "out of memory");
                        goto out;
                    }
                    /* keep at most one allocator sample per plot bucket: the max */
                    {
                        int64_t tu = t_ns / 1000;
                        int64_t span = plot.t1 > plot.t0 ? plot.t1 - plot.t0 : 1;
                        int64_t bk = (int64_t)((double)(tu - plot.t0) / (double)span * (MAX_BUCKETS - 1));
                        int64_t pbk = na ? (int64_t)((double)(at[na - 1] - plot.t0) / (double)span *
                                                     (MAX_BUCKETS - 1))
                                         : -1;
                        if (na && bk == pbk) {
                            if (al > aa[na - 1]) {
                                at[na - 1] = tu;
                                aa[na - 1] = al;
                            }
                            if (re > ar[na - 1])
                                ar[na - 1] = re;
                        } else {
                            at[na] = tu;
                            aa[na] = al;
                            ar[na] = re;
                            na++;
                        }
                    }
                }
                if (al > peak_alloc) {
                    peak_alloc = al;
                    peak_t = t_ns / 1000;
                    peak_mem_id = id;
                }
                if (re > peak_res)
                    peak_res = re;
            }
            if (b > 0) {
                int cat = (int)sqlite3_column_int64(st, 6);
                if (a) { /* allocated again while live: torch's INCREMENT_VERSION */
                    co_add(&co, t_ns, a->cat, -a->bytes);
                    if (want_raw) {
                        char buf[160];
                        snprintf(buf, sizeof(buf), "%s[%" PRId64 ", 3, %" PRId64 ", %d], [%" PRId64
                                                   ", 3, %" PRId64 ", %d]",
                                 raw_rows++ ? ", " : "", t_ns, -a->bytes, a->cat, t_ns, b, cat);
                        out_str(&o, buf);
                    }
                } else if (want_raw) {
                    char buf[128];
                    snprintf(buf, sizeof(buf), "%s[%" PRId64 ", 2, %" PRId64 ", %d]",
                             raw_rows++ ? ", " : "", t_ns, b, cat);
                    out_str(&o, buf);
                }
                co_add(&co, t_ns, cat, b);
                if (!(a = live_put(&live, addr))) {
                    rc = tt_error_set(TT_ENOMEM, "out of memory");
                    goto out;
                }
                a->bytes = b;
                a->cat = cat;
                a->ts = t_ns / 1000;
                a->op_id = sqlite3_column_int64(st, 7);
                a->mem_id = id;
                a->rule = sqlite3_column_int(st, 9);
            } else if (b < 0 && a) {
                if (want_raw) {
                    char buf[128];
                    snprintf(buf, sizeof(buf), "%s[%" PRId64 ", 4, %" PRId64 ", %d]",
                             raw_rows++ ? ", " : "", t_ns, -a->bytes, a->cat);
                    out_str(&o, buf);
                }
                co_add(&co, t_ns, a->cat, -a->bytes);
                live_del(&live, a);
            }
            if (id == peak_mem_id && want_plot) {
                /* snapshot the largest live blocks at the allocated peak */
                int64_t top_opid[TOP_N];
                for (i = 0; i < ntop; i++) {
                    free(top_ops[i]);
                    top_ops[i] = NULL;
                }
                ntop = 0;
                for (i = 0; i < live.cap; i++) {
                    size_t k;
                    if (!live.e[i].used)
                        continue;
                    for (k = ntop; k > 0 && top[k - 1].bytes < live.e[i].bytes; k--)
                        ;
                    if (k >= TOP_N)
                        continue;
                    if (ntop == TOP_N)
                        ntop--;
                    memmove(&top[k + 1], &top[k], (ntop - k) * sizeof(top[0]));
                    memmove(&top_opid[k + 1], &top_opid[k], (ntop - k) * sizeof(top_opid[0]));
                    top[k].addr = live.e[i].addr;
                    top[k].bytes = live.e[i].bytes;
                    top[k].t_us = live.e[i].ts;
                    top[k].category = live.e[i].cat;
                    top[k].rule = live.e[i].rule > 0 && live.e[i].rule < ETR_COUNT
                                      ? et_rule[live.e[i].rule]
                                      : cat_rule[live.e[i].cat];
                    top_opid[k] = live.e[i].op_id;
                    ntop++;
                }
                free(peak_op);
                free(peak_step);
                peak_op = name_of_slice(j->db, sqlite3_column_int64(st, 7));
                peak_step = name_of_slice(j->db, sqlite3_column_int64(st, 8));
                for (i = 0; i < ntop; i++)
                    top_ops[i] = name_of_slice(j->db, top_opid[i]);
            }
        }
        if (r != SQLITE_DONE) {
            rc = tt_db_error(j->db, "cannot read memory events");
            goto out;
        }
    }
    co_finish(&co);

    if (want_json) {
        char b[64], buf[65536];
        size_t n;
        /* torch re-stamps the PREEXISTING time -1 with t_min */
        out_str(&o, "[[");
        if (co.npoints) {
            snprintf(b, sizeof(b), "%" PRId64,
                     co.first_t_raw < 0 && co.t_min != -1 ? co.t_min : co.first_t_raw);
            out_str(&o, b);
        }
        rewind(times_tmp);
        while ((n = fread(buf, 1, sizeof(buf), times_tmp)) > 0)
            out_write(&o, buf, n);
        out_str(&o, "], [");
        rewind(sizes_tmp);
        while ((n = fread(buf, 1, sizeof(buf), sizes_tmp)) > 0)
            out_write(&o, buf, n);
        out_str(&o, "]]");
    } else if (want_raw) {
        out_str(&o, "]");
    }
    if (want_plot) {
        tt_memtl tl;
        series_flush(&plot);
        for (i = 0; i < ntop; i++) {
            top[i].op = top_ops[i] ? top_ops[i] : "";
            top[i].t_us -= plot.t0;
        }
        for (i = 0; i < plot.n; i++)
            plot.t[i] -= plot.t0;
        for (i = 0; i < na; i++)
            at[i] -= plot.t0;
        memset(&tl, 0, sizeof(tl));
        tl.title = j->label;
        tl.device = j->device;
        tl.categories = !j->o->no_categories;
        tl.n = plot.n;
        tl.t_us = plot.t;
        tl.sizes = plot.sizes;
        tl.n_alloc = na;
        tl.alloc_t_us = at;
        tl.allocated = aa;
        tl.reserved = ar;
        tl.peak_allocated = peak_alloc ? peak_alloc : co.peak_total;
        tl.peak_reserved = peak_res;
        tl.peak_t_us = (peak_alloc ? peak_t : co.peak_t) - plot.t0;
        tl.peak_op = peak_op ? peak_op : "";
        tl.peak_step = peak_step ? peak_step : "";
        tl.n_top = ntop;
        tl.top = top;
        rc = !strcmp(kind, "png") ? tt_render_png(&tl, output) : tt_render_html(&tl, output);
        if (rc < 0)
            goto out;
    }
out:
    if (o.f && o.f != stdout && fclose(o.f) != 0 && rc == 0)
        rc = tt_error_set_at(TT_EIO, output, -1, "write error");
    else if (o.f == stdout)
        fflush(stdout);
    if (o.gz && gzclose(o.gz) != Z_OK && rc == 0)
        rc = tt_error_set_at(TT_EIO, output, -1, "write error");
    if (o.err && rc == 0)
        rc = tt_error_set_at(TT_EIO, output, -1, "write error");
    if (part) {
        if (rc == 0 && rename(part, output) != 0)
            rc = tt_error_set_at(TT_EIO, output, -1, "cannot write: %s", strerror(errno));
        if (rc != 0)
            unlink(part);
        free(part);
    }
    if (sizes_tmp)
        fclose(sizes_tmp);
    if (times_tmp)
        fclose(times_tmp);
    sqlite3_finalize(st);
    free(live.e);
    free(plot.t);
    free(plot.sizes);
    free(at);
    free(aa);
    free(ar);
    for (i = 0; i < ntop; i++)
        free(top_ops[i]);
    free(peak_op);
    free(peak_step);
    return rc;
}

int tt_memtimeline_db(tt_db *db, const tt_memtl_options *opts, const char *output)
{
    struct job j;
    sqlite3_stmt *tr;
    int found = 0, rc = 0;
    memset(&j, 0, sizeof(j));
    j.db = db;
    j.o = opts;
    if (tt_db_prepare(db, &tr, "SELECT id, path, format, base_time_ns FROM traces"
                               " WHERE format IN ('kineto-json', 'chrome-array', 'memory-timeline-raw')"
                               " AND (?1 = 0 OR id = ?1) AND (?2 < 0 OR rank = ?2) ORDER BY id") < 0)
        return TT_EDB;
    sqlite3_bind_int64(tr, 1, opts->trace_id);
    sqlite3_bind_int64(tr, 2, opts->rank);
    if (sqlite3_step(tr) == SQLITE_ROW) {
        const char *fmt = (const char *)sqlite3_column_text(tr, 2);
        char *label = strdup((const char *)sqlite3_column_text(tr, 1));
        found = 1;
        j.trace = sqlite3_column_int64(tr, 0);
        j.raw_input = fmt && !strcmp(fmt, "memory-timeline-raw");
        j.base_ns = sqlite3_column_int64(tr, 3);
        sqlite3_finalize(tr);
        tr = NULL;
        j.label = label ? label : "";
        if (!j.raw_input) {
            int ok;
            if (opts->device) {
                rc = parse_device(opts->device, &j.dtype, &j.did);
            } else {
                /* default as torch: cuda:0 when the trace has CUDA memory events */
                int64_t d = q1(db, "SELECT min(coalesce(device_id, 0)) FROM memory WHERE"
                                   " trace_id = ?1 AND device_type = ?2 AND ?3 = ?3",
                               j.trace, 1, 0, &ok);
                if (ok) {
                    j.dtype = 1;
                    j.did = d;
                } else {
                    j.dtype = 0;
                    j.did = -1;
                }
            }
            if (rc == 0) {
                if (j.dtype == 0)
                    snprintf(j.device, sizeof(j.device), "cpu");
                else
                    snprintf(j.device, sizeof(j.device), "cuda:%" PRId64, j.did);
                if (!q1(db, "SELECT count(*) FROM memory WHERE trace_id = ?1 AND device_type = ?2"
                            " AND coalesce(device_id, -1) = ?3", j.trace, j.dtype, j.did, &ok))
                    rc = tt_error_set_at(TT_ENOTFOUND, label, -1,
                                         "no [memory] events for device %s (was the trace taken"
                                         " with profile_memory=True?)", j.device);
            }
        } else {
            snprintf(j.device, sizeof(j.device), "%s", opts->device ? opts->device : "cuda:0");
        }
        if (rc == 0)
            rc = run_job(&j, output);
        free(label);
    } else {
        sqlite3_finalize(tr);
    }
    if (!found)
        return tt__db_none(db, opts->trace_id || opts->rank >= 0, "Kineto trace or memory-timeline export");
    return rc;
}

int tt_memtimeline_file(const char *path, const tt_memtl_options *opts, const char *output)
{
    tt_db *db;
    int rc = tt__open_ingested_temp(&db, path);
    if (rc < 0)
        return rc;
    if (opts && opts->et_path) {
        /* the ET beside the trace in the temporary database, joined to its
         * ops as `tracetool ingest` does (table et_links) */
        tt_xc_options xo = TT_XC_OPTIONS_INIT;
        tt_xc_summary sum;
        if ((rc = tt_ingest_file(db, opts->et_path, NULL, NULL)) < 0) {
            tt_db_free(db);
            return rc;
        }
        rc = tt_crosscheck_db(db, &xo, NULL, &sum);
        if (rc == TT_ENOTFOUND) {
            tt_db_free(db);
            return tt_error_set_at(TT_EINVALID, opts->et_path, -1,
                                   "not a PyTorch Execution Trace");
        }
        if (rc < 0 || sum.links <= 0) {
            tt_db_free(db);
            return tt_error_set_at(TT_EINVALID, opts->et_path, -1,
                                   "this Execution Trace does not match the trace's CPU ops"
                                   " (see 'tracetool crosscheck')");
        }
    }
    rc = tt_memtimeline_db(db, opts, output);
    tt_db_free(db);
    return rc;
}
