/*
 * export/export.c - `tracetool export`: the chosen traces and steps of
 * trace files, directories of them or a database as one Chrome trace
 * (tracetool/export.h says what is written).
 *
 * Every trace reaches the export as the ingest's rows (store/ingest_rows.h):
 * a file through tt__ingest_rows, a database's trace through tt__db_rows;
 * export_rows.c turns them into sorted records, export_write.c writes them.
 * A file whose rows lack links that only the SQL passes after a load make
 * (res.needs_db) is read again, twice (TT_ROWS_RELINK: no database), to the
 * same consumer; standard input and pipes are read from a spill copy.
 */
#include "common/compat.h"
#include "common/log.h"
#include "store/db_internal.h"
#include "export/export_state.h"
#include "formats/spool.h"

#include <errno.h>
#include <inttypes.h>
#include <sys/stat.h>

/* the tables the export does not read */
#define SKIP (1u << TT_ROWS_ET | 1u << TT_ROWS_MEMTL)

const char *tt_export_kind_name(int kind)
{
    static const char *const names[TT_EXPORT_NKINDS] = {
        "slices", "runtime", "kernels", "memcpy", "memset", "gpu_other", "memory", "flows",
        "counters", "instants", "metadata",
    };
    return kind >= 0 && kind < TT_EXPORT_NKINDS ? names[kind] : "?";
}

static int is_chrome(tt_trace_format f)
{
    return f == TT_FMT_CHROME || f == TT_FMT_CHROME_ARRAY;
}

static int rank_chosen(const tt_export_options *o, int have_rank, int64_t rank)
{
    size_t i;
    if (!o->ranks)
        return 1;
    for (i = 0; have_rank && i < o->nranks; i++)
        if (o->ranks[i] == rank)
            return 1;
    return 0;
}

static int trace_chosen(const struct ex *x, const struct xtrace *t)
{
    return is_chrome(t->format) && (!x->o->trace_id || t->id == x->o->trace_id) &&
           rank_chosen(x->o, t->have_rank, t->rank);
}

static struct xtrace *trace_new(const char *path)
{
    const char *base = strrchr(path, '/');
    struct xtrace *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    /* the store's file_name: the path's last part */
    if (!(t->file = strdup(base ? base + 1 : path))) {
        free(t);
        return NULL;
    }
    return t;
}

/* a trace read: kept when chosen (every Chrome/Kineto trace is counted) */
static int trace_done(struct ex *x, struct xtrace *t)
{
    x->nchrome += is_chrome(t->format);
    if (!trace_chosen(x, t)) {
        tt__xp_trace_free(x, t);
        return 0;
    }
    if (TT_ALLOC_GROW(x->all, x->nall + 1, x->aall) < 0) {
        tt__xp_trace_free(x, t);
        return tt__oom();
    }
    x->all[x->nall++] = t;
    return 0;
}

/* one trace of db through the rows; start_ns as the database has it */
static int stream_db_trace(struct ex *x, tt_db *db, struct xtrace *t, int64_t start_ns)
{
    tt__rowsink sink = { 0 };
    tt__rows_result res;
    int rc;
    t->start_known = 1;
    t->start = start_ns == INT64_MIN ? 0 : start_ns;
    if ((rc = tt__xp_trace_begin(x, t)) < 0)
        return rc;
    tt__xp_sink(x, &sink);
    rc = tt__db_rows(db, t->id, &sink, SKIP, &res);
    if (rc > 0)
        rc = x->err ? x->err : TT_ECANCELED;
    if (rc == 0) {
        t->format = res.format;
        t->have_rank = res.have_rank;
        t->rank = res.rank;
        rc = tt__xp_trace_end(x, res.metadata);
        free(res.metadata);
    }
    return rc;
}

/* the same content is read once (the store's content hash); 1: seen before */
static int content_seen(struct ex *x, const char *hash)
{
    size_t i;
    for (i = 0; i < x->nhash; i++)
        if (!strcmp(x->hashes[i], hash))
            return 1;
    if (TT_ALLOC_GROW(x->hashes, x->nhash + 1, x->ahash) < 0)
        return tt__oom();
    snprintf(x->hashes[x->nhash++], sizeof(x->hashes[0]), "%s", hash);
    return 0;
}

/* ---------------------------------------------------------------- a file */

/* one trace file that can be read twice (path: where to read it; label:
 * what the user named) */
static int read_rows(struct ex *x, const char *path, const char *label, int in_dir)
{
    struct xtrace *t;
    tt__rowsink sink = { 0 };
    tt__rows_result res;
    unsigned relink = 0;
    int rc;
again:
    if (!(t = trace_new(label)))
        return tt__oom();
    if ((rc = tt__xp_trace_begin(x, t)) < 0) {
        tt__xp_trace_free(x, t);
        return rc;
    }
    tt__xp_sink(x, &sink);
    rc = tt__ingest_rows(path, &sink, 0, SKIP | relink, &res);
    if (rc > 0 || (rc < 0 && x->err))
        rc = x->err ? x->err : TT_ECANCELED;
    if (rc == 0 && res.needs_db) {
        /* links only the SQL passes after a load make: read again, twice */
        tt__log(TT_LOG_DEBUG, "export", "%s: read twice: %s", path, res.why_db);
        tt__xp_trace_free(x, t);
        free(res.metadata);
        relink = TT_ROWS_RELINK;
        goto again;
    }
    if (rc == TT_EUNSUPPORTED && in_dir) {
        tt__xp_trace_free(x, t);
        x->skipped++;
        tt_error_clear();
        return 0;
    }
    if (rc == 0 && (rc = content_seen(x, res.stats.hash)) != 0) {
        tt__xp_trace_free(x, t);
        free(res.metadata);
        return rc < 0 ? rc : 0;
    }
    if (rc == 0) {
        tt__log(TT_LOG_DEBUG, "export", "%s: read without a database", label);
        t->id = x->next_id++;
        t->format = res.format;
        t->have_rank = res.have_rank;
        t->rank = res.rank;
        rc = tt__xp_trace_end(x, res.metadata);
        free(res.metadata);
    }
    if (rc < 0) {
        if (!tt_error_last()->source[0])
            tt_error_set_source(label);
        tt__xp_trace_free(x, t);
        return rc;
    }
    return trace_done(x, t);
}

/* one file; standard input or a pipe from a spill copy (the way back
 * through a database reads it again) */
static int read_file(struct ex *x, const char *path, int in_dir)
{
    tt__spool sp;
    const char *rd;
    int rc = tt__spool_input(&sp, path, &rd);
    if (rc == 0)
        rc = read_rows(x, rd, path, in_dir);
    return tt__spool_end(&sp, path, rc);
}

static int read_input(struct ex *x, const char *in)
{
    struct stat st;
    tt_dir_walk w;
    size_t i;
    int rc;
    if (strcmp(in, "-") && stat(in, &st) == 0 && S_ISDIR(st.st_mode)) {
        if ((rc = tt_walk_traces(in, &w)) == 0 && w.nunreadable)
            rc = tt_error_set_at(TT_EIO, w.unreadable[0], -1, "cannot read directory");
        if (rc == 0 && !w.nfiles)
            rc = tt_error_set_at(TT_ENOTFOUND, in, -1,
                                 "no trace files (*.json, *.json.gz, *.gz) in this directory");
        for (i = 0; rc == 0 && i < w.nfiles; i++)
            rc = read_file(x, w.files[i], 1);
        tt_dir_walk_free(&w);
        return rc;
    }
    return read_file(x, in, 0);
}

/* ---------------------------------------------------------------- both */

/* in rank order (unknown ranks last), then by id */
static int trace_cmp(const void *a, const void *b)
{
    const struct xtrace *p = *(struct xtrace *const *)a, *q = *(struct xtrace *const *)b;
    if (p->have_rank != q->have_rank)
        return p->have_rank ? -1 : 1;
    if (p->have_rank && p->rank != q->rank)
        return p->rank < q->rank ? -1 : 1;
    return p->id < q->id ? -1 : p->id > q->id;
}

/* the chosen traces in order, their steps, the file */
static int finish(struct ex *x, const char *out_path)
{
    size_t i, with = 0;
    if (!x->nall && (x->o->trace_id || x->o->ranks))
        return tt_error_set_at(TT_ENOTFOUND, x->source, -1,
                               "no Chrome/Kineto trace matches --trace/--rank");
    TT_QSORT(x->all, x->nall, sizeof(*x->all), trace_cmp);
    x->tr = x->all;
    x->ntr = x->nall;
    if (x->o->steps_set) {
        for (i = 0; i < x->ntr; i++)
            with += x->tr[i]->nwin > 0;
        x->res->no_step = (int64_t)(x->ntr - with);
        if (!with)
            return tt_error_set_at(TT_ENOTFOUND, x->source, -1,
                                   "no ProfilerStep#%" PRId64 "..#%" PRId64
                                   " in the chosen traces",
                                   x->o->step_from, x->o->step_to);
    }
    return tt__xp_write(x, out_path);
}

static void ex_init(struct ex *x, const tt_export_options *o, tt_export_result *res)
{
    static const tt_export_options defaults = TT_EXPORT_OPTIONS_INIT;
    memset(x, 0, sizeof(*x));
    x->o = o ? o : &defaults;
    x->res = res;
    memset(x->res, 0, sizeof(*x->res));
    x->next_id = 1;
    tt_buf_init(&x->str_pool);
    tt_buf_init(&x->recs);
    tt_buf_init(&x->key);
    tt_buf_init(&x->name);
    tt_buf_init(&x->scratch);
    tt_buf_init(&x->threads.pool);
}

static void ex_release(struct ex *x)
{
    size_t i;
    for (i = 0; i < x->nall; i++)
        tt__xp_trace_free(x, x->all[i]);
    free(x->all);
    free(x->hashes);
    tt__xp_rows_release(x);
    tt_strtab_release(&x->threads);
    tt_buf_release(&x->key);
    tt_buf_release(&x->name);
    tt_buf_release(&x->scratch);
}

int tt_export_db(tt_db *db, const tt_export_options *o, const char *out_path,
                 tt_export_result *res)
{
    tt_export_result dummy;
    tt__db_trace *v = NULL;
    struct ex x;
    size_t n = 0, i;
    int rc;
    ex_init(&x, o, res ? res : &dummy);
    x.source = db->source ? db->source : db->path;
    rc = tt__db_traces(db, &v, &n);
    for (i = 0; rc == 0 && i < n; i++) {
        struct xtrace *t;
        if (!is_chrome(v[i].format) || (x.o->trace_id && v[i].id != x.o->trace_id) ||
            !rank_chosen(x.o, v[i].have_rank, v[i].rank))
            continue;
        if (!(t = trace_new(v[i].path))) {
            rc = tt__oom();
            break;
        }
        t->id = v[i].id;
        if ((rc = stream_db_trace(&x, db, t, v[i].start_ns)) == 0)
            rc = trace_done(&x, t);
        else
            tt__xp_trace_free(&x, t);
    }
    tt__db_traces_free(v, n);
    if (rc == 0 && !x.nall && !x.o->trace_id && !x.o->ranks)
        rc = tt__db_none(db, 0, "Chrome/Kineto trace");
    if (rc == 0)
        rc = finish(&x, out_path);
    ex_release(&x);
    return rc;
}

int tt_export_files(const char *const *inputs, size_t n, const tt_export_options *o,
                    const char *out_path, tt_export_result *res)
{
    tt_export_result dummy;
    struct ex x;
    size_t i;
    int rc = 0;
    for (i = 0; i < n; i++) {
        struct stat sb;
        if (strcmp(inputs[i], "-") && stat(inputs[i], &sb) != 0)
            return tt_error_set_at(TT_EIO, inputs[i], -1, "%s",
                                   errno == ENOENT ? "no such file or directory" : strerror(errno));
    }
    ex_init(&x, o, res ? res : &dummy);
    x.source = n == 1 ? inputs[0] : "the inputs";
    for (i = 0; rc == 0 && i < n; i++)
        rc = read_input(&x, inputs[i]);
    if (rc == 0 && !x.nchrome)
        rc = tt_error_set_at(TT_EUNSUPPORTED, n ? inputs[0] : "", -1,
                             "no Chrome/Kineto trace among the inputs");
    if (rc == 0) {
        rc = finish(&x, out_path);
        x.res->skipped_files = x.skipped;
    }
    ex_release(&x);
    return rc;
}
