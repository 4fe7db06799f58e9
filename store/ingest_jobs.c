/*
 * store/ingest_jobs.c - tt_ingest_files: several files ingested with
 * opts->jobs threads, the database written by one writer.
 *
 * The calling thread is the writer: it writes the files in the order
 * given, each its own transaction, as tt_ingest_file would, so trace ids
 * and row ids are those of a sequential ingest. Up to jobs - 1 files are
 * read and linked at once, each on its own reader thread (store/ingest.c's
 * worker), the next one started as soon as the writer has drained the
 * previous reader's rows, so a reader keeps running while the writer
 * finishes a file (the SQL passes, the COMMIT) and starts the next.
 *
 * A file read before its turn cannot know the database's ids, so it is
 * read with ids of its own (struct ingest.local_ids): strings numbered
 * from 1 in its own table, slice and runtime ids from 1, trace id 0. When
 * its turn comes the writer opens its transaction (the traces row), learns
 * the bases (max(id) of slices and runtime) and maps every id as it writes
 * each batch (ig_remap_job): a string through the writer's table of the
 * database's strings (a string already stored is not stored again, a new
 * one gets the next id, in the order the file first used it, as the
 * sequential ingest numbers it), a slice or runtime id plus its base. The
 * reader hands a batch of strings over before any batch that uses them
 * (ingest_write.c, rb_flush_keep).
 *
 * Memory: a file read ahead holds at most AHEAD_JOBS batches of rows (the
 * reader waits for its turn once it made them all; fewer with many readers:
 * AHEAD_TOTAL for all, at least JOB_MAX each) besides what one file's
 * reading holds today; at most jobs - 1 files are read ahead. Measured on 4
 * x 60 MB files (bench/README.md): 64 batches lose part of the overlap,
 * 1024 gain nothing over 256.
 */
#include "common/compat.h"
#include "store/ingest_state.h"

#include <sched.h>
#include <unistd.h>

/* batches of RB_K rows a file read ahead may hold (each about 100 KB),
 * and all of them together (never fewer than JOB_MAX a file) */
#ifndef AHEAD_JOBS
#define AHEAD_JOBS 256
#endif
#define AHEAD_TOTAL 768

/* ---- the files ---- */

struct slot {
    struct ingest g;
    tt_ingest_result res;
    tt_read_options ropts;
    tt_trace_sink sink;
    struct ig_worker *w;
    int rc;        /* a failure before its turn (the reader not started) */
    tt_error err;
    double t0;
};

struct engine {
    tt_db *db;
    const tt_ingest_options *opts;
    const char *const *paths;
    size_t n;
    int ahead_jobs; /* batches each reader may hold */
    struct slot **slots;
    struct ingest glob; /* the writer's: the database's strings (glob.strs) */
    struct ig_remap remap;
};

/* a file's reader started, with ids of its own */
static void slot_start(struct engine *e, size_t k)
{
    struct slot *s = calloc(1, sizeof(*s));
    struct ingest *g;
    tt_error keep = *tt_error_last(); /* the writer's, for the file it just wrote */
    e->slots[k] = s;
    if (!s)
        return;
    g = &s->g;
    s->t0 = ig_now_s();
    g->timing_t0 = s->t0;
    g->db = e->db;
    g->opts = e->opts;
    g->res = &s->res;
    g->local_ids = 1;
    g->next_slice_id = 1;
    g->next_runtime_id = 1;
    g->q.maxjobs = e->ahead_jobs;
    tt_buf_init(&g->metadata);
    tt_buf_addch(&g->metadata, '{');
    s->ropts = (tt_read_options)TT_READ_OPTIONS_INIT;
    ig_set_sink(&s->sink, g);
    if ((s->rc = ig_rbufs_init(g)) < 0 ||
        (s->rc = ig_reader_start(g, &s->w, e->paths[k], &s->sink, &s->ropts, &s->res.stats)) <
            0) {
        s->err = *tt_error_last();
        ig_reader_abort(g, s->w);
        s->w = NULL;
    }
    tt_error_set_at(keep.code, keep.source, keep.offset, "%s", keep.message);
}

static void slot_free(struct slot *s)
{
    if (!s)
        return;
    ig_reader_abort(&s->g, s->w);
    ig_release(&s->g);
    free(s);
}

/* the global string table again from the database (after a rollback) */
static int load_strings(struct engine *e)
{
    tt_strtab_release(&e->glob.strs);
    memset(&e->glob.strs, 0, sizeof(e->glob.strs));
    e->glob.db = e->db;
    return ig_load_strings(&e->glob);
}

/* file k's turn: its transaction, its rows mapped as they are written */
static int slot_write(struct engine *e, size_t k, size_t *started, size_t ahead)
{
    struct slot *s = e->slots[k];
    struct ingest *g = &s->g;
    const char *path = e->paths[k];
    struct ig_worker *w = s->w;
    tt_strtab own;
    int rc;

    if (s->rc < 0) {
        tt_error_set_at(s->err.code ? s->err.code : s->rc, s->err.source, s->err.offset, "%s",
                        s->err.message);
        return s->rc;
    }
    if ((rc = ig_begin(g, path)) < 0) {
        tt_error saved = *tt_error_last();
        ig_reader_abort(g, w); /* before its row buffers go */
        s->w = NULL;
        tt_error_set_at(saved.code, saved.source, saved.offset, "%s", saved.message);
        ig_rollback(g, path, rc);
        return rc;
    }
    memset(&e->remap, 0, sizeof(e->remap));
    e->remap.trace_id = s->res.trace_id;
    e->remap.slice_base = ig_next_id(e->db, "slices") - 1;
    e->remap.rt_base = ig_next_id(e->db, "runtime") - 1;
    e->remap.strs = &e->glob.strs;
    g->remap = &e->remap;
    s->w = NULL;
    rc = ig_reader_drain(g, w);
    /* its rows are written: the next file's reading starts */
    while (*started < e->n && *started <= k + ahead)
        slot_start(e, (*started)++);
    if (rc == TT_ETRUNCATED && (e->opts->flags & TT_INGEST_SALVAGE))
        rc = 0;
    g->trace_id = s->res.trace_id;
    /* the rows still held, then the SQL passes with the database's strings */
    if (rc == 0 && (rc = ig_pend_flush(g, 0)) == 0)
        rc = ig_flush_all(g);
    if (rc == 0) {
        own = g->strs;
        g->strs = e->glob.strs;
        rc = ig_finish(g, path, &s->res.stats);
        g->strs = own;
    }
    if (rc == 0) {
        ig_release_statements(g);
        ig_phase(g, "committing");
        rc = tt_db_exec(e->db, "COMMIT");
        ig_timing(g, "commit");
    }
    if (rc < 0)
        ig_rollback(g, path, rc);
    free(e->remap.smap);
    e->remap.smap = NULL;
    g->remap = NULL;
    if (rc < 0) {
        tt_error saved = *tt_error_last();
        int lrc = load_strings(e); /* the rolled back ones are gone */
        if (lrc < 0)
            return lrc;
        tt_error_set_at(saved.code, saved.source, saved.offset, "%s", saved.message);
        return rc;
    }
    s->res.rows = g->rows;
    s->res.unmatched_end = g->unmatched_end;
    s->res.no_phase = g->no_phase;
    s->res.seconds = ig_now_s() - s->t0;
    return 0;
}

static int ingest_parallel(tt_db *db, const char *const *paths, size_t n,
                           const tt_ingest_options *opts, tt_ingest_each_fn each,
                           void *payload)
{
    struct engine e;
    size_t k, started = 0, ahead = (size_t)(opts->jobs - 1);
    int rc = 0;
    double tprev = 0;

    memset(&e, 0, sizeof(e));
    e.db = db;
    e.opts = opts;
    e.paths = paths;
    e.n = n;
    e.ahead_jobs = AHEAD_TOTAL / (int)ahead < AHEAD_JOBS ? AHEAD_TOTAL / (int)ahead : AHEAD_JOBS;
    if (e.ahead_jobs < JOB_MAX)
        e.ahead_jobs = JOB_MAX;
    if (db->readonly)
        return tt_error_set_at(TT_EIO, db->path, -1, "database opened read-only");
    if (!(e.slots = calloc(n, sizeof(*e.slots))))
        return tt__oom();
    if ((rc = load_strings(&e)) < 0)
        goto out;
    while (started < n && started < ahead)
        slot_start(&e, started++);
    for (k = 0; k < n; k++) {
        struct slot *s;
        int frc;
        if (k == started) /* no reader yet (cannot happen with ahead >= 1) */
            slot_start(&e, started++);
        if (!(s = e.slots[k])) {
            frc = tt__oom();
        } else {
            if (s->t0 < tprev)
                s->t0 = tprev; /* its time: from when the writer could take it */
            tt_error_clear();
            frc = slot_write(&e, k, &started, ahead);
        }
        tprev = ig_now_s();
        if (each)
            each(payload, k, paths[k], frc, frc < 0 || !s ? NULL : &s->res);
        slot_free(s);
        e.slots[k] = NULL;
    }
out:
    for (k = 0; k < n; k++)
        slot_free(e.slots[k]);
    free(e.slots);
    tt_strtab_release(&e.glob.strs);
    return rc;
}

int tt_ingest_files(tt_db *db, const char *const *paths, size_t n,
                    const tt_ingest_options *opts, tt_ingest_each_fn each, void *payload)
{
    tt_ingest_options o = TT_INGEST_OPTIONS_INIT;
    size_t k;
    if (opts)
        o = *opts;
    if (o.version < 3 || o.jobs <= 0) {
        o.version = TT_INGEST_OPTIONS_VERSION;
        o.jobs = tt_ingest_default_jobs();
    }
    if (o.jobs >= 2 && n >= 2) {
        o.progress = NULL;
        return ingest_parallel(db, paths, n, &o, each, payload);
    }
    for (k = 0; k < n; k++) {
        tt_ingest_result r;
        int rc = tt_ingest_file(db, paths[k], &o, &r);
        if (each)
            each(payload, k, paths[k], rc, rc < 0 ? NULL : &r);
    }
    return 0;
}

/* a cgroup v2 cpu.max quota, rounded up; 0 when none */
static int cgroup_cpus(void)
{
    FILE *f = fopen("/sys/fs/cgroup/cpu.max", "r");
    char q[32] = "";
    long long period = 0;
    int n = 0;
    if (!f)
        return 0;
    if (fscanf(f, "%31s %lld", q, &period) == 2 && strcmp(q, "max") && period > 0) {
        long long quota = atoll(q);
        if (quota > 0)
            n = (int)((quota + period - 1) / period);
    }
    fclose(f);
    return n;
}

int tt_ingest_default_jobs(void)
{
    int n = 0, q;
#ifdef CPU_COUNT
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0)
        n = CPU_COUNT(&set);
#endif
    if (n <= 0)
        n = (int)sysconf(_SC_NPROCESSORS_ONLN);
    q = cgroup_cpus();
    if (q > 0 && q < n)
        n = q;
    return n > 0 ? n : 1;
}
