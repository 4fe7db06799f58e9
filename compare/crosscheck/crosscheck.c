/*
 * compare/crosscheck/crosscheck.c - `tracetool crosscheck`: join the op nodes of a
 * PyTorch Execution Trace (ET) to the cpu_op / user_annotation slices of the
 * Kineto trace taken beside it, report what does not agree, and store the
 * join in table et_links (docs/CROSSCHECK.md).
 *
 * Per pair (ET trace, Kineto trace):
 *   - PyTorch's rule (test_execution_trace.py): sorted ET rf_id (roots
 *     excluded) == sorted Kineto "Record function id" (absent = -1);
 *   - the join: "Record function id" == rf_id when the Kineto trace has
 *     non-zero ones; else External id, first at the constant offset
 *     (External id = rf_id + offset) that agrees on the most names, and when
 *     that leaves ops unmatched, in per-thread order (crosscheck_order.c).
 *   A pair counts as matched only when the names agree.
 *
 * This file pairs every ET with its Kineto trace, stores the links (the one
 * place that writes SQL: table et_links of a database input) and makes the
 * result (tt_crosscheck_run); the traces come from the record stream
 * (crosscheck_rows.c: a file's rows, a database's rows alike), the join is
 * in crosscheck_join.c and crosscheck_order.c, the report in
 * crosscheck_report.c.
 *
 * Memory: the ET nodes and the Kineto cpu_op / user_annotation slices of
 * the traces checked (a database's traces are loaded as the pairs need them).
 */
#include "compare/crosscheck/crosscheck_state.h"
#include "compare/crosscheck/links.h"
#include "store/ingest_rows.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------- et_links */

/* the et_nodes ids of ET trace id, in id order (the order of its rows) */
static int et_row_ids(struct xc *x, int64_t id, int64_t **out, size_t *n)
{
    sqlite3_stmt *st;
    size_t alloc = 0;
    int s;
    *out = NULL;
    *n = 0;
    if (tt_db_prepare(x->db, &st, "SELECT id FROM et_nodes WHERE trace_id = ?1 ORDER BY id") < 0)
        return TT_EDB;
    sqlite3_bind_int64(st, 1, id);
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        if (TT_ALLOC_GROW(*out, *n + 1, alloc) < 0) {
            sqlite3_finalize(st);
            return xc_oom();
        }
        (*out)[(*n)++] = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    return s == SQLITE_DONE ? 0 : tt_db_error(x->db, "cannot read execution-trace nodes");
}

static int store_links(struct xc *x, const struct pair *p, int64_t *nlinks)
{
    sqlite3_stmt *del = NULL, *ins = NULL;
    int64_t *rows = NULL;
    size_t i, nrows = 0;
    int rc;
    if ((rc = et_row_ids(x, p->et->id, &rows, &nrows)) < 0)
        return rc;
    if ((rc = tt_db_exec(x->db,
                         "CREATE TABLE IF NOT EXISTS et_links(kineto_trace_id INTEGER NOT NULL,"
                         " slice_id INTEGER NOT NULL, et_trace_id INTEGER NOT NULL,"
                         " et_node_row_id INTEGER NOT NULL, key TEXT NOT NULL, offset INTEGER);"
                         "CREATE INDEX IF NOT EXISTS et_links_slice ON et_links(kineto_trace_id,"
                         " slice_id);"
                         "CREATE INDEX IF NOT EXISTS et_links_node ON et_links(et_trace_id,"
                         " et_node_row_id);")) < 0)
        return rc;
    if ((rc = tt_db_exec(x->db, "BEGIN IMMEDIATE")) < 0)
        return rc;
    /* links of traces deleted since (ingest --replace) */
    if ((rc = tt_db_exec(x->db, "DELETE FROM et_links WHERE kineto_trace_id NOT IN"
                                " (SELECT id FROM traces) OR et_trace_id NOT IN"
                                " (SELECT id FROM traces)")) < 0)
        goto fail;
    if ((rc = tt_db_prepare(x->db, &del,
                            "DELETE FROM et_links WHERE kineto_trace_id = ?1 AND et_trace_id = ?2")) <
            0 ||
        (rc = tt_db_prepare(x->db, &ins,
                            "INSERT INTO et_links(kineto_trace_id, slice_id, et_trace_id,"
                            " et_node_row_id, key, offset) VALUES(?1, ?2, ?3, ?4, ?5, ?6)")) < 0)
        goto fail;
    sqlite3_bind_int64(del, 1, p->k->id);
    sqlite3_bind_int64(del, 2, p->et->id);
    if (sqlite3_step(del) != SQLITE_DONE) {
        rc = tt_db_error(x->db, "cannot write table et_links (--no-store only reports)");
        goto fail;
    }
    sqlite3_bind_int64(ins, 1, p->k->id);
    sqlite3_bind_int64(ins, 3, p->et->id);
    sqlite3_bind_text(ins, 5, xc_key_name(p->r->key), -1, SQLITE_STATIC);
    for (i = 0; i < p->n; i++) {
        const struct match *m = &p->r->m[i];
        if (m->state != M_OK)
            continue;
        if (p->ops[i].row < 0 || (size_t)p->ops[i].row >= nrows) {
            rc = tt_error_set_at(TT_EDB, x->db->path, -1,
                                 "execution-trace nodes changed during the check");
            goto fail;
        }
        sqlite3_reset(ins);
        sqlite3_bind_int64(ins, 2, m->slice);
        sqlite3_bind_int64(ins, 4, rows[p->ops[i].row]);
        sqlite3_bind_int64(ins, 6, m->kkey - p->ops[i].rf);
        if (sqlite3_step(ins) != SQLITE_DONE) {
            rc = tt_db_error(x->db, "cannot write table et_links");
            goto fail;
        }
        (*nlinks)++;
    }
    sqlite3_finalize(del);
    sqlite3_finalize(ins);
    free(rows);
    return tt_db_exec(x->db, "COMMIT");
fail:
    sqlite3_finalize(del);
    sqlite3_finalize(ins);
    free(rows);
    sqlite3_exec(x->db->sql, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

/* the matched ops of pair p, kept in x->collect (files: no database) */
static int collect_links(struct xc *x, const struct pair *p)
{
    struct tt__xc_links *l = x->collect;
    size_t i;
    l->pairs++;
    for (i = 0; i < p->n; i++) {
        const struct match *m = &p->r->m[i];
        if (m->state != M_OK)
            continue;
        if (TT_ALLOC_GROW(l->v, l->n + 1, l->alloc) < 0)
            return xc_oom();
        l->v[l->n].slice_id = m->slice;
        l->v[l->n++].node_id = p->ops[i].node_id;
    }
    return 0;
}

/* ---------------------------------------------------------------- pairing */

static void traces_free(struct tinfo *t, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        xc_trace_release(&t[i]);
    free(t);
}

static int add_tinfo(struct xc *x, const struct tinfo *t, size_t *alloc)
{
    if (TT_ALLOC_GROW(x->t, x->nt + 1, *alloc) < 0)
        return xc_oom();
    x->t[x->nt++] = *t;
    return 0;
}

/* the traces of a database (their rows are loaded as the pairs need them) */
static int load_traces(struct xc *x)
{
    tt__db_trace *dt = NULL;
    size_t n = 0, i, alloc = 0;
    int rc;
    if ((rc = tt__db_traces(x->db, &dt, &n)) < 0)
        return rc;
    for (i = 0; i < n && rc == 0; i++) {
        struct tinfo t;
        memset(&t, 0, sizeof(t));
        t.id = dt[i].id;
        t.is_et = dt[i].format == TT_FMT_ET;
        t.is_kineto = dt[i].format == TT_FMT_CHROME || dt[i].format == TT_FMT_CHROME_ARRAY;
        t.has_rank = dt[i].have_rank;
        t.rank = dt[i].rank;
        t.has_pid = dt[i].have_pid;
        t.pid = dt[i].pid;
        if (!(t.path = strdup(dt[i].path ? dt[i].path : "")))
            rc = xc_oom();
        else if ((rc = add_tinfo(x, &t, &alloc)) < 0)
            free(t.path);
    }
    tt__db_traces_free(dt, n);
    return rc;
}

static void pair_release(struct pair *p)
{
    xc_result_free(p->r);
    p->r = NULL;
}

/* a is a better pairing than b */
static int pair_better(const struct pair *a, const struct pair *b)
{
    if (a->consistent != b->consistent)
        return a->consistent;
    if (a->r->matched != b->r->matched)
        return a->r->matched > b->r->matched;
    return a->r->k_only < b->r->k_only;
}

/* the Kineto traces an ET may pair with (cand, *nc); *how: how they were
 * chosen; *skip: --trace/--rank leave this ET out */
static const char *pair_cands(struct xc *x, const struct tinfo *t, size_t nt, size_t i,
                              size_t net, size_t nk, size_t *cand, size_t *nc,
                              unsigned char *kused, int *skip)
{
    const char *how = "pid";
    size_t j, c, m;
    *nc = 0;
    *skip = 0;
    /* same pid; several: same rank among them */
    for (j = 0; j < nt; j++) {
        if (t[j].is_kineto && t[i].has_pid && t[j].has_pid && t[j].pid == t[i].pid)
            cand[(*nc)++] = j;
    }
    if (*nc > 1 && t[i].has_rank) {
        for (c = 0, m = 0; c < *nc; c++) {
            if (t[cand[c]].has_rank && t[cand[c]].rank == t[i].rank)
                cand[m++] = cand[c];
        }
        if (m) {
            *nc = m;
            how = "pid and rank";
        }
    }
    if (!*nc && t[i].has_rank) {
        how = "rank";
        for (j = 0; j < nt; j++) {
            if (t[j].is_kineto && t[j].has_rank && t[j].rank == t[i].rank)
                cand[(*nc)++] = j;
        }
    }
    if (!*nc && net == 1 && nk == 1) {
        how = "being the only ET and the only Kineto trace (pid and rank differ)";
        for (j = 0; j < nt; j++) {
            if (t[j].is_kineto)
                cand[(*nc)++] = j;
        }
    }
    /* --trace / --rank */
    if (x->o->trace_id && t[i].id != x->o->trace_id) {
        for (c = 0, m = 0; c < *nc; c++) {
            if (t[cand[c]].id == x->o->trace_id)
                cand[m++] = cand[c];
        }
        if (!m) {
            for (c = 0; c < *nc; c++)
                kused[cand[c]] = 1;
            *skip = 1;
            return how;
        }
        *nc = m;
    }
    if (x->o->rank >= 0 && !(t[i].has_rank && t[i].rank == x->o->rank)) {
        for (c = 0, m = 0; c < *nc; c++) {
            if (t[cand[c]].has_rank && t[cand[c]].rank == x->o->rank)
                cand[m++] = cand[c];
        }
        if (!m) {
            for (c = 0; c < *nc; c++)
                kused[cand[c]] = 1;
            *skip = 1;
            return how;
        }
        *nc = m;
    }
    return how;
}

/* Check ET t[i] against each candidate; the best pairing in *best (its
 * result to release by the caller, also on error; its ops are the ET's). */
static int best_pair(struct xc *x, const struct tinfo *t, size_t i, const size_t *cand,
                     size_t nc, struct pair *best)
{
    struct pair cur;
    size_t c;
    int rc, have = 0;
    memset(best, 0, sizeof(*best));
    for (c = 0; c < nc; c++) {
        memset(&cur, 0, sizeof(cur));
        cur.et = &t[i];
        cur.k = &t[cand[c]];
        if ((rc = xc_load_et(x, &cur)) < 0)
            return rc;
        if ((rc = xc_check_pair(x, &cur)) < 0)
            return rc;
        if (!have || pair_better(&cur, best)) {
            pair_release(best);
            *best = cur;
            have = 1;
        } else {
            pair_release(&cur);
        }
    }
    return 0;
}

static void pair_how(struct pair *best, const struct tinfo *et, const char *how, size_t nc)
{
    if (nc > 1)
        snprintf(best->how, sizeof(best->how), "%s %" PRId64 " (best of %zu Kineto traces)", how,
                 !strcmp(how, "rank") ? et->rank : et->pid, nc);
    else if (!strcmp(how, "rank"))
        snprintf(best->how, sizeof(best->how), "rank %" PRId64, et->rank);
    else if (!strcmp(how, "pid and rank"))
        snprintf(best->how, sizeof(best->how), "pid %" PRId64 " and rank %" PRId64, et->pid,
                 et->rank);
    else if (!strcmp(how, "pid"))
        snprintf(best->how, sizeof(best->how), "pid %" PRId64, et->pid);
    else
        snprintf(best->how, sizeof(best->how), "%s", how);
}

void tt_xcheck_result_free(tt_xcheck_result *res)
{
    size_t i;
    if (!res)
        return;
    for (i = 0; i < res->npairs; i++)
        xc_pair_clear(&res->pairs[i]);
    free(res->pairs);
    for (i = 0; i < res->nunpaired_kineto; i++)
        free(res->unpaired_kineto[i].path);
    free(res->unpaired_kineto);
    free(res);
}

/* a copy of trace t (path included) appended to *arr */
static int add_trace(const struct tinfo *t, tt_xc_trace **arr, size_t *n)
{
    tt_xc_trace *tr;
    if (!(tr = realloc(*arr, (*n + 1) * sizeof(**arr))))
        return xc_oom();
    *arr = tr;
    xc_trace_export(t, &tr[*n]);
    if (!(tr[*n].path = strdup(t->path)))
        return xc_oom();
    (*n)++;
    return 0;
}

/* ET t[i]: paired (checked, links stored, exported) or unpaired */
static int run_one(struct xc *x, const struct tinfo *t, size_t nt, size_t i, size_t net, size_t nk,
                   unsigned char *kused, tt_xcheck_result *res)
{
    struct pair best;
    size_t *cand, nc, c;
    const char *how;
    tt_xc_pair *slot;
    int rc, skip;
    if (!(cand = malloc(nt * sizeof(*cand))))
        return xc_oom();
    how = pair_cands(x, t, nt, i, net, nk, cand, &nc, kused, &skip);
    if (skip) {
        free(cand);
        return 0;
    }
    if (!(slot = realloc(res->pairs, (res->npairs + 1) * sizeof(*res->pairs)))) {
        free(cand);
        return xc_oom();
    }
    res->pairs = slot;
    slot = &res->pairs[res->npairs++];
    memset(slot, 0, sizeof(*slot));
    if (!nc) {
        res->summary.unpaired_et++;
        xc_trace_export(&t[i], &slot->et);
        free(cand);
        return (slot->et.path = strdup(t[i].path)) ? 0 : xc_oom();
    }
    for (c = 0; c < nc; c++)
        kused[cand[c]] = 1;
    rc = best_pair(x, t, i, cand, nc, &best);
    if (rc == 0) {
        pair_how(&best, &t[i], how, nc);
        res->summary.pairs++;
        if (best.consistent)
            res->summary.consistent++;
        else
            res->summary.inconsistent++;
        if (x->collect)
            rc = collect_links(x, &best);
        if (rc == 0 && (!x->o->store || (rc = store_links(x, &best, &res->summary.links)) == 0))
            rc = xc_export_pair(x, &best, slot);
    }
    pair_release(&best);
    free(cand);
    return rc;
}

/* every ET of x->t paired, checked, exported; where: the input named in
 * errors */
static int run_all(struct xc *x, const char *where, tt_xcheck_result *res)
{
    struct tinfo *t = x->t;
    size_t nt = x->nt, i, net = 0, nk = 0;
    unsigned char *kused = NULL;
    int rc = 0;
    for (i = 0; i < nt; i++) {
        net += t[i].is_et;
        nk += t[i].is_kineto;
    }
    if (!net)
        return tt_error_set_at(TT_ENOTFOUND, where, -1, "no Execution Trace in this database");
    if (!nk)
        return tt_error_set_at(TT_ENOTFOUND, where, -1, "no Kineto trace in this database");
    if (!(kused = calloc(nt, 1)))
        return xc_oom();
    for (i = 0; i < nt && rc == 0; i++) {
        if (t[i].is_et)
            rc = run_one(x, t, nt, i, net, nk, kused, res);
    }
    for (i = 0; i < nt && rc == 0; i++) {
        if (t[i].is_kineto && !kused[i]) {
            res->summary.unpaired_kineto++;
            rc = add_trace(&t[i], &res->unpaired_kineto, &res->nunpaired_kineto);
        }
    }
    free(kused);
    return rc;
}

static void xc_init(struct xc *x, const tt_xc_options *o)
{
    memset(x, 0, sizeof(*x));
    x->o = o;
    x->limit = o->limit < 0 ? 0 : (size_t)o->limit;
}

static void xc_free(struct xc *x)
{
    traces_free(x->t, x->nt);
    xc_strs_free(&x->str);
}

/* the category strings the Kineto ops are chosen by */
static int xc_cats(struct xc *x)
{
    if ((x->cat_cpu = xc_intern(&x->str, "cpu_op", 6)) < 0 ||
        (x->cat_ua = xc_intern(&x->str, "user_annotation", 15)) < 0)
        return xc_oom();
    return 0;
}

/* the result of x->t (where: the input named in errors); *out on success */
static int finish_run(struct xc *x, const char *where, tt_xcheck_result **out)
{
    tt_xcheck_result *res = calloc(1, sizeof(*res));
    int rc;
    *out = NULL;
    if (!res)
        return xc_oom();
    if ((rc = run_all(x, where, res)) < 0)
        tt_xcheck_result_free(res);
    else
        *out = res;
    return rc;
}

int tt_crosscheck_run(tt_db *db, const tt_xc_options *opts, tt_xcheck_result **out)
{
    struct xc x;
    tt_xc_options defo = TT_XC_OPTIONS_INIT;
    int rc;
    *out = NULL;
    xc_init(&x, opts ? opts : &defo);
    x.db = db;
    tt_error_clear();
    if ((rc = xc_cats(&x)) == 0 && (rc = load_traces(&x)) == 0)
        rc = finish_run(&x, db->path, out);
    xc_free(&x);
    return rc;
}

/* the report of res (where: the input named in errors) */
static int report(tt_xcheck_result *res, const tt_xc_options *opts, const char *where,
                  FILE *out, tt_xc_summary *sum)
{
    int rc = 0;
    if (sum)
        *sum = res->summary;
    if (out)
        rc = tt_xcheck_result_print(res, opts, out);
    if (rc == 0 && !res->summary.pairs && !res->summary.unpaired_et &&
        (opts->trace_id || opts->rank >= 0))
        rc = tt_error_set_at(TT_ENOTFOUND, where, -1, "no ET/Kineto pair matches --trace/--rank");
    return rc;
}

int tt_crosscheck_db(tt_db *db, const tt_xc_options *opts, FILE *out, tt_xc_summary *sum)
{
    tt_xc_options defo = TT_XC_OPTIONS_INIT;
    tt_xcheck_result *res = NULL;
    int rc;
    if (!opts)
        opts = &defo;
    if (sum)
        memset(sum, 0, sizeof(*sum));
    if ((rc = tt_crosscheck_run(db, opts, &res)) < 0)
        return rc;
    rc = report(res, opts, db->path, out, sum);
    tt_xcheck_result_free(res);
    return rc;
}

/* ---------------------------------------------------------------- files */

/* a trace file read into x->t (ids as a database of the inputs in this
 * order would give them; the same content given twice is read once) */
static int load_one(struct xc *x, const char *path, int *nfiles, size_t *alloc, int64_t *base)
{
    struct tinfo t;
    int rc;
    memset(&t, 0, sizeof(t));
    (*nfiles)++;
    if (!(t.path = strdup(path)))
        return xc_oom();
    t.id = x->nt ? x->t[x->nt - 1].id + 1 : 1;
    rc = xc_load_file(x, path, &t, base);
    if (rc == 0 && (rc = add_tinfo(x, &t, alloc)) == 0)
        return 0;
    xc_trace_release(&t);
    return rc > 0 ? 0 : rc;
}

/* the trace files under dir, each once (tt_walk_traces: loops not followed) */
static int walk(struct xc *x, const char *dir, int *nfiles, size_t *alloc, int64_t *base)
{
    tt_dir_walk w;
    size_t i;
    int rc = tt_walk_traces(dir, &w);
    if (rc == 0 && w.nunreadable)
        rc = tt_error_set_at(TT_EIO, w.unreadable[0], -1, "cannot read directory");
    for (i = 0; rc == 0 && i < w.nfiles; i++)
        rc = load_one(x, w.files[i], nfiles, alloc, base);
    tt_dir_walk_free(&w);
    return rc;
}

/* the inputs (files, directories) read into x->t */
static int load_inputs(struct xc *x, const char *const *inputs, size_t n)
{
    size_t i, alloc = 0, net = 0, nk = 0;
    int64_t base = 0;
    int rc, nfiles;
    for (i = 0; i < n; i++) {
        struct stat st;
        if (strcmp(inputs[i], "-") && stat(inputs[i], &st) != 0)
            return tt_error_set_at(TT_EIO, inputs[i], -1, "no such file or directory");
    }
    for (i = 0; i < n; i++) {
        struct stat st;
        nfiles = 0;
        if (strcmp(inputs[i], "-") && stat(inputs[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            if ((rc = walk(x, inputs[i], &nfiles, &alloc, &base)) < 0)
                return rc;
            if (!nfiles)
                return tt_error_set_at(TT_ENOTFOUND, inputs[i], -1,
                                       "no trace files (*.json, *.json.gz, *.gz) in this"
                                       " directory");
        } else if ((rc = load_one(x, inputs[i], &nfiles, &alloc, &base)) < 0) {
            return rc;
        }
    }
    for (i = 0; i < x->nt; i++) {
        net += x->t[i].is_et;
        nk += x->t[i].is_kineto;
    }
    if (!net || !nk)
        return tt_error_set_at(TT_EINVALID, n ? inputs[0] : "", -1,
                               "no %s among the inputs (crosscheck needs a PyTorch Execution"
                               " Trace and a Kineto trace)",
                               !net ? "Execution Trace" : "Kineto trace");
    return 0;
}

int tt_crosscheck_files(const char *const *inputs, size_t n, const tt_xc_options *opts, FILE *out,
                        tt_xc_summary *sum)
{
    struct xc x;
    tt_xc_options o = TT_XC_OPTIONS_INIT;
    tt_xcheck_result *res = NULL;
    const char *where = n ? inputs[0] : "";
    int rc;
    if (opts)
        o = *opts;
    o.store = 0; /* no database to store into */
    if (sum)
        memset(sum, 0, sizeof(*sum));
    xc_init(&x, &o);
    tt_error_clear();
    if ((rc = xc_cats(&x)) == 0 && (rc = load_inputs(&x, inputs, n)) == 0 &&
        (rc = finish_run(&x, where, &res)) == 0)
        rc = report(res, &o, where, out, sum);
    tt_xcheck_result_free(res);
    xc_free(&x);
    return rc;
}

/* ---------------------------------------------------------------- links */

static int by_slice(const void *a, const void *b)
{
    const struct tt__xc_link *x = a, *y = b;
    if (x->slice_id != y->slice_id)
        return x->slice_id < y->slice_id ? -1 : 1;
    return x->node_id < y->node_id ? -1 : x->node_id > y->node_id;
}

int tt__xc_links_files(const char *trace, const char *et_path, struct tt__xc_links *out)
{
    struct xc x;
    tt_xc_options o = TT_XC_OPTIONS_INIT;
    tt_xcheck_result *res = NULL;
    size_t alloc = 0, i, net = 0, nk = 0;
    int64_t base = 0;
    int rc, nfiles = 0;
    memset(out, 0, sizeof(*out));
    if (access(trace, F_OK) != 0 || access(et_path, F_OK) != 0) { /* as an ingest says it */
        const char *p = access(trace, F_OK) != 0 ? trace : et_path;
        return tt_error_set_at(TT_EIO, p, -1, "cannot open: %s", strerror(errno));
    }
    o.store = 0;
    xc_init(&x, &o);
    x.collect = out;
    tt_error_clear();
    if ((rc = xc_cats(&x)) == 0 && (rc = load_one(&x, trace, &nfiles, &alloc, &base)) == 0)
        rc = load_one(&x, et_path, &nfiles, &alloc, &base);
    for (i = 0; rc == 0 && i < x.nt; i++) {
        net += x.t[i].is_et;
        nk += x.t[i].is_kineto;
    }
    if (rc == 0 && (!net || !nk))
        rc = tt_error_set_at(TT_ENOTFOUND, !net ? et_path : trace, -1, "no %s",
                             !net ? "Execution Trace" : "Kineto trace");
    if (rc == 0)
        rc = finish_run(&x, trace, &res);
    tt_xcheck_result_free(res);
    xc_free(&x);
    if (rc < 0) {
        tt__xc_links_free(out);
        return rc;
    }
    TT_QSORT(out->v, out->n, sizeof(*out->v), by_slice);
    return 0;
}

void tt__xc_links_free(struct tt__xc_links *l)
{
    free(l->v);
    memset(l, 0, sizeof(*l));
}

int tt__xc_links_find(const struct tt__xc_links *l, int64_t slice_id, int64_t *node_id)
{
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (l->v[mid].slice_id < slice_id)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < l->n && l->v[lo].slice_id == slice_id) {
        *node_id = l->v[lo].node_id;
        return 1;
    }
    return 0;
}
