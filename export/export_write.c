/*
 * export/export_write.c - the Chrome trace of `tracetool export`
 * from the sorted records (export_state.h): the header, every process,
 * then each trace's runs merged in (ts, table, id) order, each thread named
 * before its first event.
 */
#include "common/compat.h"
#include "common/tmath.h"
#include "export/export_state.h"

#include <errno.h>
#include <inttypes.h>
#include <unistd.h>

/* bytes a run is read ahead by, at least */
#define RUN_READ ((size_t)1 << 16)
/* the header of a record in a run: length, ts, id, table */
#define RUN_HDR 21

/* ---------------------------------------------------------------- names */

static void id_text(tt_buf *b, const struct idv *v)
{
    if (v->type == V_INT)
        tt_buf_addf(b, "%" PRId64, v->i);
    else if (v->type == V_TEXT && v->len)
        tt_buf_add(b, v->s, v->len);
    else
        tt_buf_addstr(b, "(none)");
}

static const char *name_get(struct ex *x, const char *kind, const struct idv *p,
                            const struct idv *t)
{
    struct xtrace *tr = x->tr[x->cur];
    size_t slot;
    int64_t i;
    tt_buf_reset(&x->key);
    tt_buf_addstr(&x->key, kind);
    tt__xp_key_add(&x->key, p);
    if (t)
        tt__xp_key_add(&x->key, t);
    if (!tr->nmap.nslots || x->key.oom)
        return NULL;
    i = tt_strtab_find(&tr->nmap, x->key.buf, x->key.len, tt_strhash(x->key.buf, x->key.len),
                       &slot);
    return i > 0 ? tr->names[i - 1] : NULL;
}

/* the store's processes view: coalesce(labels, name), threads: name; an
 * empty one is none */
static const char *meta_name(struct ex *x, int thread, const struct idv *p, const struct idv *t)
{
    const char *v;
    if (thread)
        v = name_get(x, "T", p, t);
    else if (!(v = name_get(x, "L", p, NULL)))
        v = name_get(x, "N", p, NULL);
    return v && *v ? v : NULL;
}

/* The thread's name and sort index: CPU threads of the profiled process as
 * the source named them ("thread 1234 (python3)"), then GPU streams behind
 * their device ("GPU 0 stream 7"), then the rest ("Spans PyTorch Profiler"). */
static int64_t thread_label(struct ex *x, const struct xtrace *tr, const struct idv *p,
                            const struct idv *t)
{
    const char *tn = meta_name(x, 1, p, t), *pn;
    size_t n;
    tt_buf_reset(&x->name);
    if (p->type == V_INT && tr->have_cpu_pid && p->i == tr->cpu_pid) {
        if (tn)
            tt_buf_addstr(&x->name, tn);
        else {
            tt_buf_addstr(&x->name, "thread ");
            id_text(&x->name, t);
        }
        return t->type == V_INT && t->i >= 0 && t->i < (1 << CLASS_SHIFT)
                   ? t->i : (1 << CLASS_SHIFT) - 1;
    }
    pn = meta_name(x, 0, p, NULL);
    if (pn)
        tt_buf_addstr(&x->name, pn);
    else {
        tt_buf_addstr(&x->name, p->type == V_INT ? "pid " : "");
        id_text(&x->name, p);
    }
    tt_buf_addch(&x->name, ' ');
    if (tn)
        tt_buf_addstr(&x->name, tn);
    else {
        tt_buf_addstr(&x->name, p->type != V_INT ? ""
                                : pn && !strncmp(pn, "GPU", 3) ? "stream " : "tid ");
        id_text(&x->name, t);
    }
    /* Kineto's thread names end in a space ("stream 7 ") */
    for (n = x->name.len; n && x->name.buf[n - 1] == ' '; n--)
        x->name.buf[n - 1] = '\0';
    x->name.len = n;
    if (p->type == V_INT && t->type == V_INT)
        return ((int64_t)1 << CLASS_SHIFT) + ((p->i & 0xff) << 16) + (t->i & 0xffff);
    return ((int64_t)2 << CLASS_SHIFT) + (x->other_seq++ & 0xffffff);
}

/* each event on a line of its own: ",\n" after the one before */
static void begin_event(struct ex *x)
{
    tt_jw_nl(&x->jw, 0);
    x->res->events++;
}

/* "ts": ns as us, exact (export_out.h) */
static void put_ts(tt_jw *w, int64_t ts)
{
    tt_jw_key(w, "ts");
    xj_us(w, ts);
}

static void put_meta(struct ex *x, const char *what, int64_t pid, int64_t tid, int64_t ts,
                     const char *key, const char *text, int64_t num)
{
    tt_jw *w = &x->jw;
    begin_event(x);
    tt_jw_obj(w);
    tt_jw_kstr(w, "ph", "M");
    tt_jw_kstr(w, "name", what);
    tt_jw_kint(w, "pid", pid);
    tt_jw_kint(w, "tid", tid);
    put_ts(w, ts);
    tt_jw_kobj(w, "args");
    if (text)
        tt_jw_kstr(w, key, text);
    else
        tt_jw_kint(w, key, num);
    tt_jw_end(w);
    tt_jw_end(w);
    x->res->counts[TT_EXPORT_METADATA]++;
}

static int map_add(tt_strtab *t, const tt_buf *k, int64_t id)
{
    if (k->oom || tt_strtab_add(t, k->buf, k->len, tt_strhash(k->buf, k->len), id) < 0)
        return tt__oom();
    return 0;
}

/* the output tid of a source pid/tid; a thread seen for the first time gets
 * its thread_name and thread_sort_index here, before its first event */
static int thread_of(struct ex *x, const struct idv *p, const struct idv *t, int64_t ts,
                     int64_t *tid)
{
    const struct xtrace *tr = x->tr[x->cur];
    size_t slot;
    int64_t sort;
    int rc;
    tt_buf_reset(&x->key);
    tt__xp_key_add(&x->key, p);
    tt__xp_key_add(&x->key, t);
    if (x->threads.nslots && !x->key.oom &&
        (*tid = tt_strtab_find(&x->threads, x->key.buf, x->key.len,
                               tt_strhash(x->key.buf, x->key.len), &slot)) > 0)
        return 0;
    *tid = x->next_tid++;
    if ((rc = map_add(&x->threads, &x->key, *tid)) < 0)
        return rc;
    sort = thread_label(x, tr, p, t);
    if (x->name.oom)
        return tt__oom();
    put_meta(x, "thread_name", tr->out_pid, *tid, ts, "name", x->name.buf, 0);
    put_meta(x, "thread_sort_index", tr->out_pid, *tid, ts, "sort_index", NULL, sort);
    x->res->threads++;
    return 0;
}

/* every process first: its name, order and the file it came from */
static void put_processes(struct ex *x)
{
    size_t i;
    for (i = 0; i < x->ntr; i++) {
        const struct xtrace *t = x->tr[i];
        int64_t ts = tt_sat_add(t->start, tt_sat_sub(t->base, x->base));
        char label[64];
        if (!t->have_rank)
            snprintf(label, sizeof(label), "trace %" PRId64, t->id);
        else if (t->out_pid == t->rank)
            snprintf(label, sizeof(label), "rank %" PRId64, t->rank);
        else
            snprintf(label, sizeof(label), "rank %" PRId64 " (trace %" PRId64 ")", t->rank,
                     t->id);
        put_meta(x, "process_name", t->out_pid, 0, ts, "name", label, 0);
        put_meta(x, "process_sort_index", t->out_pid, 0, ts, "sort_index", NULL,
                 t->have_rank ? t->rank : t->out_pid);
        put_meta(x, "process_labels", t->out_pid, 0, ts, "labels", t->file, 0);
        x->res->processes++;
    }
}

/* pid = rank when the ranks are known, distinct and small; else a dense index.
 * The ranks are in order, so equal ones are neighbours. */
static void assign_pids(struct ex *x)
{
    size_t i;
    int by_rank = 1;
    int64_t maxpid = 0;
    x->base = x->tr[0]->base;
    for (i = 0; i < x->ntr; i++) {
        const struct xtrace *t = x->tr[i];
        if (!t->have_rank || t->rank < 0 || t->rank >= (1 << 20) ||
            (i && x->tr[i - 1]->rank == t->rank))
            by_rank = 0;
        if (t->base < x->base)
            x->base = t->base;
    }
    for (i = 0; i < x->ntr; i++) {
        x->tr[i]->out_pid = by_rank ? x->tr[i]->rank : (int64_t)i;
        if (x->tr[i]->out_pid > maxpid)
            maxpid = x->tr[i]->out_pid;
    }
    /* tids never equal a pid: a viewer takes tid == pid for a main thread */
    x->next_tid = maxpid + 1;
}

/* the file's object up to its "traceEvents" (opened): the format, the base
 * time, the source's metadata and what was exported */
static void put_header(struct ex *x)
{
    tt_jw *w = &x->jw;
    size_t i;
    int same_dev = x->ntr && x->tr[0]->devprops;
    tt_jw_obj(w);
    tt_jw_kint(w, "schemaVersion", 1);
    tt_jw_kstr(w, "displayTimeUnit", "ms");
    if (x->base)
        tt_jw_kint(w, "baseTimeNanoseconds", x->base);
    /* the source's devices when every trace had the same; its rank and world
     * when one trace is written (each trace's are in processes[]) */
    for (i = 1; i < x->ntr && same_dev; i++)
        same_dev = x->tr[i]->devprops && !strcmp(x->tr[i]->devprops, x->tr[0]->devprops);
    if (same_dev)
        tt_jw_kraw(w, "deviceProperties", x->tr[0]->devprops);
    if (x->ntr == 1 && x->tr[0]->distinfo)
        tt_jw_kraw(w, "distributedInfo", x->tr[0]->distinfo);
    tt_jw_kobj(w, "tracetool_export");
    tt_jw_kstr(w, "version", TT_VERSION);
    tt_jw_key(w, "steps");
    if (x->o->steps_set) {
        tt_jw_arr(w);
        tt_jw_int(w, x->o->step_from);
        tt_jw_int(w, x->o->step_to);
        tt_jw_end(w);
    } else {
        tt_jw_null(w);
    }
    tt_jw_karr(w, "processes");
    for (i = 0; i < x->ntr; i++) {
        const struct xtrace *t = x->tr[i];
        tt_jw_obj(w);
        tt_jw_kint(w, "pid", t->out_pid);
        tt_jw_kint(w, "trace_id", t->id);
        tt_jw_key(w, "rank");
        if (t->have_rank)
            tt_jw_int(w, t->rank);
        else
            tt_jw_null(w);
        tt_jw_kstr(w, "file", t->file);
        tt_jw_kint(w, "steps", x->o->steps_set ? (int64_t)t->nsteps : -1);
        if (t->distinfo)
            tt_jw_kraw(w, "distributedInfo", t->distinfo);
        if (t->devprops)
            tt_jw_kraw(w, "deviceProperties", t->devprops);
        tt_jw_end(w);
    }
    tt_jw_end(w);
    tt_jw_end(w);
    tt_jw_nl(w, 0);
    tt_jw_karr(w, "traceEvents");
}

/* ---------------------------------------------------------------- events */

/* A flow or async id made unique over the file: id * ntraces + trace when it
 * fits (one trace: the id itself), else a hash of both within 2^53; one
 * trace's text or null as it is. */
static void out_id(struct ex *x, const struct idv *v, struct idv *o)
{
    int64_t n = (int64_t)x->ntr, i = (int64_t)x->cur;
    char t[TT_XP_NUM + 1];
    size_t len;
    *o = *v;
    if (v->type == V_INT) {
        if (n == 1)
            return;
        if (v->i >= 0 && v->i <= (ID_SPACE - 1 - i) / n) {
            o->i = v->i * n + i;
            return;
        }
    } else if (n == 1) {
        return;
    }
    len = tt__xp_i64_text(t, i);
    t[len++] = ':';
    tt_buf_reset(&x->key);
    tt_buf_add(&x->key, t, len);
    if (v->type == V_INT)
        tt_buf_add(&x->key, t, tt__xp_i64_text(t, v->i));
    else if (v->type == V_TEXT)
        tt_buf_add(&x->key, v->s, v->len);
    o->type = V_INT;
    o->i = (int64_t)(tt_strhash(x->key.buf, x->key.len) % (uint64_t)ID_SPACE);
}

/* the ac2g flow the store folded into a runtime or GPU row (the view flows) */
static void put_folded_flow(struct ex *x, int f, const struct idv *corr, int64_t ts, int64_t tid)
{
    tt_jw *w = &x->jw;
    struct idv id;
    out_id(x, corr, &id);
    begin_event(x);
    tt_jw_obj(w);
    tt_jw_kstr(w, "ph", f == 1 ? "s" : "f");
    tt_jw_key(w, "id");
    if (id.type == V_INT)
        xj_i64(w, id.i);
    else if (id.type == V_TEXT)
        tt_jw_strn(w, id.s, id.len);
    else
        tt_jw_null(w);
    tt_jw_key(w, "pid");
    xj_i64(w, x->tr[x->cur]->out_pid);
    tt_jw_key(w, "tid");
    xj_i64(w, tid);
    put_ts(w, ts);
    tt_jw_kstr(w, "cat", "ac2g");
    tt_jw_kstr(w, "name", "ac2g");
    if (f != 1)
        tt_jw_kstr(w, "bp", "e");
    tt_jw_end(w);
    x->res->counts[TT_EXPORT_FLOWS]++;
}

/* --steps: the event starts in a window; a GPU activity goes with the
 * runtime call that launched it when that has a ts */
static int chosen(const struct xtrace *t, int table, int64_t ts, int64_t rt)
{
    if (table == T_GPU && rt != INT64_MIN && t->rtbits && rt >= t->rt_lo &&
        rt - t->rt_lo < t->rt_n) {
        int bits = t->rtbits[(rt - t->rt_lo) / 4] >> (2 * ((rt - t->rt_lo) % 4)) & 3;
        if (bits & 1)
            return bits >> 1;
    }
    return tt__xp_in_windows(t, ts);
}

/* a record's event, one object: its text (written when it was read, up to
 * "name", then after "ts" and after "id") with what the writing gives */
static void event_text(struct ex *x, tt_buf *b, int64_t pid, int64_t tid, int64_t ts,
                       const char *head, uint32_t hl, const char *t1, uint32_t l1,
                       const struct idv *id, const char *t2, uint32_t l2)
{
    tt_buf_reset(b);
    bput(b, head, hl);
    BPUTS(b, ",\"pid\":");
    xb_i64(b, pid);
    BPUTS(b, ",\"tid\":");
    xb_i64(b, tid);
    BPUTS(b, ",\"ts\":");
    xb_us(b, ts);
    bput(b, t1, l1);
    if (id) {
        struct idv o;
        out_id(x, id, &o);
        BPUTS(b, ",\"id\":");
        if (o.type == V_INT)
            xb_i64(b, o.i);
        else if (o.type == V_TEXT)
            tt_buf_add_json_string(b, o.s, o.len);
        else
            BPUTS(b, "null");
    }
    bput(b, t2, l2);
}

static int write_record(struct ex *x, int table, int64_t ts_in, const uint8_t *p)
{
    const struct xtrace *tr = x->tr[x->cur];
    struct idv pid, tid, id, corr;
    const char *head, *t1, *t2;
    uint32_t hl, l1, l2;
    int64_t rt, ts, otid;
    int kind, flow, has_id, rc;
    memcpy(&rt, p, sizeof(rt));
    p += sizeof(rt);
    kind = *p++;
    flow = *p++;
    if (x->o->steps_set && !chosen(tr, table, ts_in, rt))
        return 0;
    p = tt__xp_get_idv(p, &pid);
    p = tt__xp_get_idv(p, &tid);
    p = tt__xp_get_str(p, &head, &hl);
    p = tt__xp_get_str(p, &t1, &l1);
    has_id = *p++;
    if (has_id)
        p = tt__xp_get_idv(p, &id);
    p = tt__xp_get_str(p, &t2, &l2);
    if (flow)
        tt__xp_get_idv(p, &corr);
    ts = tt_sat_add(ts_in, tt_sat_sub(tr->base, x->base));
    if (kind == TT_EXPORT_COUNTERS && pid.type == V_NULL && tid.type == V_NULL)
        otid = 0; /* --counters: a track of the process, no thread named */
    else if ((rc = thread_of(x, &pid, &tid, ts, &otid)) < 0)
        return rc;
    event_text(x, &x->scratch, tr->out_pid, otid, ts, head, hl, t1, l1, has_id ? &id : NULL,
               t2, l2);
    if (x->scratch.oom)
        return tt__oom();
    begin_event(x);
    tt_jw_raw(&x->jw, x->scratch.buf, x->scratch.len);
    x->res->counts[kind]++;
    if (flow)
        put_folded_flow(x, flow, &corr, ts, otid);
    return tt_jw__flush(&x->jw, 0);
}

/* ---------------------------------------------------------------- merging */

/* one sorted source of a trace's records: a run of the spool, or the sort
 * buffer (keys sorted) */
struct src {
    int mem;
    size_t i;                /* mem: the next key */
    int64_t pos, end;        /* run: the spool bytes not yet read */
    uint8_t *buf;
    size_t cap, have, at;    /* run: bytes in buf, the current record's offset */
    int64_t ts, seq;
    int table;
    const uint8_t *rec;      /* the current record (NULL: done) */
};

static int src_next(struct ex *x, struct src *s)
{
    uint32_t len = 0;
    if (s->mem) {
        const struct xkey *k;
        if (s->i == x->nkeys) {
            s->rec = NULL;
            return 0;
        }
        k = &x->keys[s->i++];
        s->ts = k->ts;
        s->seq = k->seq;
        s->table = k->table;
        s->rec = (const uint8_t *)x->recs.buf + k->off;
        return 0;
    }
    if (s->rec) { /* past the current one */
        memcpy(&len, s->buf + s->at, 4);
        s->at += RUN_HDR + len;
    }
    while (1) {
        size_t left = s->have - s->at;
        if (left >= RUN_HDR) {
            memcpy(&len, s->buf + s->at, 4);
            if (left >= RUN_HDR + (size_t)len)
                break;
        }
        if (s->pos == s->end) {
            s->rec = NULL;
            return 0;
        }
        memmove(s->buf, s->buf + s->at, left);
        s->have = left;
        s->at = 0;
        if (left >= RUN_HDR && RUN_HDR + (size_t)len > s->cap) {
            uint8_t *nb = realloc(s->buf, RUN_HDR + (size_t)len);
            if (!nb)
                return tt__oom();
            s->buf = nb;
            s->cap = RUN_HDR + (size_t)len;
        }
        {
            size_t want = s->cap - s->have;
            ssize_t got;
            if ((int64_t)want > s->end - s->pos)
                want = (size_t)(s->end - s->pos);
            got = pread(fileno(x->spool), s->buf + s->have, want, (off_t)s->pos);
            if (got <= 0)
                return tt_error_set(TT_EIO, "cannot read a temporary file: %s",
                                    got < 0 ? strerror(errno) : "short read");
            s->have += (size_t)got;
            s->pos += got;
        }
    }
    memcpy(&s->ts, s->buf + s->at + 4, 8);
    memcpy(&s->seq, s->buf + s->at + 12, 8);
    s->table = s->buf[s->at + 20];
    s->rec = s->buf + s->at + RUN_HDR;
    return 0;
}

static int src_less(const struct src *a, const struct src *b)
{
    if (a->ts != b->ts)
        return a->ts < b->ts;
    if (a->table != b->table)
        return a->table < b->table;
    return a->seq < b->seq;
}

static void sift(struct src **h, size_t n, size_t i)
{
    while (1) {
        size_t l = 2 * i + 1, m = i;
        struct src *t;
        if (l < n && src_less(h[l], h[m]))
            m = l;
        if (l + 1 < n && src_less(h[l + 1], h[m]))
            m = l + 1;
        if (m == i)
            return;
        t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

/* one trace's events: its runs and what the buffer holds, merged */
static int write_trace(struct ex *x, struct xtrace *t)
{
    size_t ns = t->nruns + (t->in_mem ? 1 : 0), n = 0, i;
    struct src *s = calloc(ns ? ns : 1, sizeof(*s));
    struct src **h = calloc(ns ? ns : 1, sizeof(*h));
    size_t per = ns > 64 ? ((size_t)4 << 20) / ns : RUN_READ;
    int rc = 0;
    if (!s || !h) {
        free(s);
        free(h);
        return tt__oom();
    }
    if (per < 4096)
        per = 4096;
    if (t->nruns && fflush(x->spool) != 0)
        rc = tt_error_set(TT_EIO, "cannot write a temporary file: %s", strerror(errno));
    for (i = 0; rc == 0 && i < ns; i++) {
        if (i == t->nruns) {
            s[i].mem = 1;
            TT_QSORT(x->keys, x->nkeys, sizeof(*x->keys), tt__xp_key_cmp);
        } else {
            s[i].pos = t->runs[i].off;
            s[i].end = t->runs[i].off + t->runs[i].len;
            if (!(s[i].buf = malloc(per)))
                rc = tt__oom();
            s[i].cap = per;
        }
        if (rc == 0 && (rc = src_next(x, &s[i])) == 0 && s[i].rec)
            h[n++] = &s[i];
    }
    for (i = n; rc == 0 && i-- > 0;)
        sift(h, n, i);
    while (rc == 0 && n) {
        struct src *m = h[0];
        if ((rc = write_record(x, m->table, m->ts, m->rec)) == 0 &&
            (rc = src_next(x, m)) == 0) {
            if (!m->rec)
                h[0] = h[--n];
            sift(h, n, 0);
        }
    }
    for (i = 0; i < ns; i++)
        free(s[i].buf);
    free(s);
    free(h);
    return rc;
}

int tt__xp_write(struct ex *x, const char *out_path)
{
    size_t i;
    int rc, how = x->o->gzip < 0 ? TT_OUT_GZ_BY_NAME : x->o->gzip ? TT_OUT_GZIP : TT_OUT_PLAIN;
    assign_pids(x);
    if ((rc = tt_out_open(&x->out, out_path, how)) < 0)
        return rc;
    tt_jw_init_out(&x->jw, &x->out, TT_JW_COMPACT | TT_JW_LINE); /* the last line ends */
    put_header(x);
    put_processes(x);
    for (i = 0; rc == 0 && i < x->ntr; i++) {
        if (x->o->steps_set && !x->tr[i]->nwin)
            continue;
        x->cur = i;
        tt_strtab_release(&x->threads);
        tt_buf_init(&x->threads.pool);
        rc = write_trace(x, x->tr[i]);
    }
    if (rc == 0) {
        tt_jw_nl(&x->jw, 0);
        tt_jw_end(&x->jw); /* traceEvents */
        tt_jw_end(&x->jw);
        if ((rc = tt_jw_finish(&x->jw)) == TT_EINVALID)
            rc = tt_error_set(rc, "export: the JSON was left unfinished (a bug)");
    }
    rc = tt_out_close(&x->out, rc);
    x->res->bytes = tt_out_bytes(&x->out);
    return rc;
}
