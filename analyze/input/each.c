/*
 * analyze/input/each.c - the traces an analysis reads, and in which order
 * (each.h): a trace file, each file of a directory of per-rank traces, or
 * the traces of a database; those of --trace and --rank, Chrome/Kineto ones
 * only, by rank (unknown first) then id.
 */
#include "common/compat.h"
#include "analyze/input/each.h"
#include "store/db_internal.h"

#include <inttypes.h>
#include <sys/stat.h>

/* one trace read, waiting for its place */
struct item {
    void *r;            /* the visitor's result */
    int64_t id, rank;
    int have_rank;
    const char *path;   /* the walk's or the trace list's */
};

static int cmp_item(const void *a, const void *b)
{
    const struct item *x = a, *y = b;
    if (x->have_rank != y->have_rank)
        return x->have_rank ? 1 : -1; /* SQL's NULL first */
    if (x->have_rank && x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

static int is_chrome(tt_trace_format f)
{
    return f == TT_FMT_CHROME || f == TT_FMT_CHROME_ARRAY;
}

struct walk {
    int64_t trace_id, rank;     /* the selection (0, -1: any) */
    const struct tt__visit *v;
    struct item *it;
    size_t n, alloc;
    tt_trace_format first; /* the format of trace 1, for the error without one */
    int have_first;
};

static int selected(const struct walk *w, int64_t id, int have_rank, int64_t rank)
{
    return (w->trace_id <= 0 || w->trace_id == id) &&
           (w->rank < 0 || (have_rank && rank == w->rank));
}

/* read one trace; keep it when selected */
static int visit(struct walk *w, const char *path, tt_db *db, int64_t id)
{
    tt__rows_result res;
    void *r = NULL;
    int rc;
    if (w->trace_id > 0 && w->trace_id != id)
        return 0;
    if ((rc = w->v->read(w->v->ctx, path, db, id, &res, &r)) < 0)
        return rc;
    if (!w->have_first) {
        w->first = res.format;
        w->have_first = 1;
    }
    if (!is_chrome(res.format) || !selected(w, id, res.have_rank, res.rank)) {
        w->v->drop(w->v->ctx, r);
        return 0;
    }
    if (TT_ALLOC_GROW(w->it, w->n + 1, w->alloc) < 0) {
        w->v->drop(w->v->ctx, r);
        return tt__oom();
    }
    w->it[w->n].r = r;
    w->it[w->n].id = id;
    w->it[w->n].have_rank = res.have_rank;
    w->it[w->n].rank = res.rank;
    w->it[w->n].path = path;
    w->n++;
    return 0;
}

/* the traces of a database: their format and rank known before reading */
static int visit_db(struct walk *w, tt_db *db, tt__db_trace **tr, size_t *ntr)
{
    size_t i;
    int rc;
    if ((rc = tt__db_traces(db, tr, ntr)) < 0)
        return rc;
    for (i = 0; rc == 0 && i < *ntr; i++) {
        const tt__db_trace *t = &(*tr)[i];
        if (is_chrome(t->format) && selected(w, t->id, t->have_rank, t->rank))
            rc = visit(w, t->path, db, t->id);
    }
    return rc;
}

/* no trace selected: as tt__db_none words it for a file or directory */
static int none_in_input(const char *input, const struct walk *w)
{
    int filtered = w->trace_id > 0 || w->rank >= 0;
    if (filtered || !w->have_first)
        return tt_error_set_at(TT_ENOTFOUND, input, -1, "no Chrome/Kineto trace %s",
                               filtered ? "matches --trace/--rank" : "in this file");
    return tt_error_set_at(TT_EUNSUPPORTED, input, -1,
                           "no Chrome/Kineto trace in this file (read as %s)",
                           tt_format_name(w->first));
}

static int is_dir(const char *path)
{
    struct stat sb;
    return strcmp(path, "-") && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

int tt__each_trace(int64_t trace_id, int64_t rank, const char *input, tt_db *db,
                   const struct tt__visit *v)
{
    struct walk w;
    tt_dir_walk dw;
    tt__db_trace *tr = NULL;
    size_t ntr = 0, i;
    int rc = 0, dir = !db && is_dir(input);
    memset(&w, 0, sizeof(w));
    memset(&dw, 0, sizeof(dw));
    w.trace_id = trace_id;
    w.rank = rank;
    w.v = v;
    if (db) {
        rc = visit_db(&w, db, &tr, &ntr);
    } else if (dir) {
        if ((rc = tt_walk_traces(input, &dw)) == 0 && !dw.nfiles)
            rc = tt_error_set_at(TT_ENOTFOUND, input, -1, "no trace files in this directory");
        for (i = 0; rc == 0 && i < dw.nfiles; i++)
            rc = visit(&w, dw.files[i], NULL, (int64_t)i + 1);
    } else {
        rc = visit(&w, input, NULL, 1);
    }
    if (rc == 0 && !w.n)
        rc = db ? tt__db_none(db, trace_id > 0 || rank >= 0, "Chrome/Kineto trace")
                : none_in_input(input, &w);
    if (rc == 0 && w.n > 1)
        TT_QSORT(w.it, w.n, sizeof(*w.it), cmp_item);
    for (i = 0; i < w.n; i++) { /* each taken in order, or dropped after a failure */
        if (rc == 0)
            rc = v->take(v->ctx, w.it[i].r, w.it[i].id, w.it[i].path);
        else
            v->drop(v->ctx, w.it[i].r);
    }
    free(w.it);
    tt_dir_walk_free(&dw);
    tt__db_traces_free(tr, ntr);
    return rc;
}
