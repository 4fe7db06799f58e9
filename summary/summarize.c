/*
 * summary/summarize.c - tt_summarize: a summary of a trace file, a
 * directory of per-rank traces, a database or a summary.
 *
 * A trace file is ingested into a temporary database of its own (one
 * file at a time, so memory stays what one ingest takes), and each section
 * writer runs on the stored trace: one read of the file for every section,
 * and each section computed the way the database path computes it, so a
 * result rebuilt from the summary prints what the database prints. (Each
 * writer reading the file itself costs one read per section; measured in
 * docs/SUMMARY.md.) Only Chrome/Kineto traces are summarised, as the
 * analyses read only those (analyze/input/each.c).
 */
#include "common/compat.h"
#include "summary/sections.h"
#include "store/db_internal.h"

#include <inttypes.h>
#include <sys/stat.h>

struct acc {
    struct tt_summary s;
    size_t alloc;
    const tt_summarize_options *o;
    size_t seen; /* traces looked at (selected or not) */
};

static int is_chrome(tt_trace_format f)
{
    return f == TT_FMT_CHROME || f == TT_FMT_CHROME_ARRAY;
}

static int selected(const struct acc *a, int64_t id, int have_rank, int64_t rank)
{
    return (a->o->trace_id <= 0 || a->o->trace_id == id) &&
           (a->o->rank < 0 || (have_rank && rank == a->o->rank));
}

static char *content_hash(tt_db *db, int64_t id)
{
    sqlite3_stmt *st;
    char *h = NULL;
    if (tt_db_prepare(db, &st, "SELECT content_hash FROM traces WHERE id = ?1") < 0)
        return NULL;
    sqlite3_bind_int64(st, 1, id);
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        h = strdup((const char *)sqlite3_column_text(st, 0));
    else
        tt_error_set_at(TT_EDB, db->path, -1, "trace %" PRId64 " has no content hash", id);
    sqlite3_finalize(st);
    if (!h && tt_error_last()->code == 0)
        tt__oom();
    return h;
}

/* each section of stored trace t into the summary */
static int add_trace(struct acc *a, tt_db *db, const tt__db_trace *t)
{
    struct tt__sum_trace *x;
    struct tt__sum_src src;
    size_t k;
    int rc = 0;
    if (TT_ALLOC_GROW(a->s.traces, a->s.n + 1, a->alloc) < 0)
        return tt__oom();
    x = &a->s.traces[a->s.n];
    memset(x, 0, sizeof(*x));
    if (!(x->path = strdup(t->path)))
        return tt__oom();
    a->s.n++;
    if (!(x->content_hash = content_hash(db, t->id)))
        return tt_error_last()->code ? tt_error_last()->code : TT_ENOMEM;
    x->have_rank = t->have_rank;
    x->rank = t->have_rank ? t->rank : 0;
    src.db = db;
    src.trace_id = t->id;
    src.path = t->path;
    for (k = 0; rc == 0 && k < tt__sum_nsections; k++) {
        int sec = tt__sum_sections[k].sec;
        tt_buf b = TT_BUF_INIT;
        tt_jw w;
        tt_jw_init(&w, &b, TT_JW_COMPACT);
        rc = tt__sum_sections[k].write(&src, &w);
        if (tt_jw_finish(&w) < 0 && rc == 0)
            rc = tt_error_set_at(TT_EINVALID, t->path, -1,
                                 "the \"%s\" section was left unfinished (a bug)",
                                 tt__sec_name[sec]);
        if (rc == 0 && b.oom)
            rc = tt__oom();
        if (rc == 0 && b.len == 0)
            rc = tt_error_set_at(TT_EINVALID, t->path, -1, "the \"%s\" section is empty (a bug)",
                                 tt__sec_name[sec]);
        if (rc < 0) {
            tt_buf_release(&b);
            break;
        }
        x->sec[sec] = b.buf;
        x->seclen[sec] = b.len;
    }
    return rc;
}

/* the selected Chrome/Kineto traces of db; ids: the input's own (a
 * database's) or, for a file of a directory, file_id */
static int add_db(struct acc *a, tt_db *db, int64_t file_id)
{
    tt__db_trace *tr = NULL;
    size_t n = 0, i;
    int rc;
    if ((rc = tt__db_traces(db, &tr, &n)) < 0)
        return rc;
    for (i = 0; rc == 0 && i < n; i++) {
        int64_t id = file_id ? file_id : tr[i].id;
        a->seen++;
        if (is_chrome(tr[i].format) && selected(a, id, tr[i].have_rank, tr[i].rank))
            rc = add_trace(a, db, &tr[i]);
    }
    tt__db_traces_free(tr, n);
    return rc;
}

/* one trace file, ingested into a temporary database of its own */
static int add_file(struct acc *a, const char *path, int64_t id)
{
    tt_db *db;
    tt_ingest_options io = TT_INGEST_OPTIONS_INIT;
    int rc;
    if (a->o->trace_id > 0 && a->o->trace_id != id)
        return 0;
    if ((rc = tt__open_temp_db(&db, "summarize")) < 0)
        return rc;
    rc = tt_ingest_file(db, path, &io, NULL);
    if (rc == 0)
        rc = add_db(a, db, id);
    tt_db_free(db);
    return rc;
}

static int is_dir(const char *path)
{
    struct stat sb;
    return strcmp(path, "-") && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* a summary: its traces of --trace and --rank */
static int add_summary(struct acc *a, const char *input)
{
    tt_summary *in;
    size_t i;
    int rc;
    if ((rc = tt_summary_load(input, &in)) < 0)
        return rc;
    a->seen = in->n;
    for (i = 0; i < in->n; i++) {
        struct tt__sum_trace *t = &in->traces[i];
        if (!selected(a, t->id, t->have_rank, t->rank))
            continue;
        if (TT_ALLOC_GROW(a->s.traces, a->s.n + 1, a->alloc) < 0) {
            tt_summary_free(in);
            return tt__oom();
        }
        a->s.traces[a->s.n++] = *t;
        memset(t, 0, sizeof(*t));
    }
    tt_summary_free(in);
    return 0;
}

static int gather(struct acc *a, const char *input)
{
    tt_dir_walk w;
    size_t i;
    int rc = 0;
    if (is_dir(input)) {
        if ((rc = tt_walk_traces(input, &w)) == 0 && !w.nfiles)
            rc = tt_error_set_at(TT_ENOTFOUND, input, -1, "no trace files in this directory");
        for (i = 0; rc == 0 && i < w.nfiles; i++)
            rc = add_file(a, w.files[i], (int64_t)i + 1);
        tt_dir_walk_free(&w);
    } else if (tt_is_summary_file(input)) {
        rc = add_summary(a, input);
    } else if (strcmp(input, "-") && tt_is_sqlite_file(input)) {
        tt_db *db;
        if ((rc = tt_db_open_input(&db, input)) < 0)
            return rc;
        rc = add_db(a, db, 0);
        tt_db_free(db);
    } else {
        rc = add_file(a, input, 1);
    }
    if (rc == 0 && !a->s.n)
        rc = tt_error_set_at(a->o->trace_id > 0 || a->o->rank >= 0 ? TT_ENOTFOUND
                                                                   : TT_EUNSUPPORTED,
                             input, -1, "no Chrome/Kineto trace %s",
                             a->o->trace_id > 0 || a->o->rank >= 0 ? "matches --trace/--rank"
                                                                   : "to summarise");
    return rc;
}

int tt_summarize(const char *input, const tt_summarize_options *o, const char *out_path)
{
    tt_summarize_options def = TT_SUMMARIZE_OPTIONS_INIT;
    struct acc a;
    size_t i;
    int rc;
    tt_error_clear();
    memset(&a, 0, sizeof(a));
    a.o = o ? o : &def;
    if (!input || !out_path)
        return tt_error_set(TT_EINVALID, "tt_summarize: no input or no output");
    if (!(a.s.path = strdup(input)))
        return tt__oom();
    rc = gather(&a, input);
    if (rc == 0)
        rc = tt__sum_normalize(&a.s, NULL);
    if (rc == 0)
        rc = tt__sum_write(&a.s, out_path);
    for (i = 0; i < a.s.n; i++)
        tt__sum_trace_release(&a.s.traces[i]);
    free(a.s.traces);
    free(a.s.path);
    return rc;
}
