/*
 * analyze/crosscheck/crosscheck.c - `tracetool crosscheck`: join the op nodes of a
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
 * This file pairs every ET with its Kineto trace, stores the links and makes
 * the result (tt_crosscheck_run); the join is in crosscheck_join.c and
 * crosscheck_order.c, the report in crosscheck_report.c.
 *
 * Memory is bounded by the number of ET nodes: Kineto slices are streamed
 * with SQL (index slices(trace_id, external_id)), never loaded whole.
 */
#include "analyze/crosscheck/crosscheck_state.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------- et_links */

static int store_links(struct xc *x, const struct pair *p, int64_t *nlinks)
{
    sqlite3_stmt *del = NULL, *ins = NULL;
    size_t i;
    int rc;
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
        sqlite3_reset(ins);
        sqlite3_bind_int64(ins, 2, m->slice);
        sqlite3_bind_int64(ins, 4, p->ops[i].row);
        sqlite3_bind_int64(ins, 6, m->kkey - p->ops[i].rf);
        if (sqlite3_step(ins) != SQLITE_DONE) {
            rc = tt_db_error(x->db, "cannot write table et_links");
            goto fail;
        }
        (*nlinks)++;
    }
    sqlite3_finalize(del);
    sqlite3_finalize(ins);
    return tt_db_exec(x->db, "COMMIT");
fail:
    sqlite3_finalize(del);
    sqlite3_finalize(ins);
    sqlite3_exec(x->db->sql, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

/* ---------------------------------------------------------------- pairing */

static void traces_free(struct tinfo *t, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        free(t[i].path);
    free(t);
}

static int load_traces(struct xc *x, struct tinfo **out, size_t *n)
{
    sqlite3_stmt *st;
    size_t alloc = 0;
    int s;
    *out = NULL;
    *n = 0;
    if (tt_db_prepare(x->db, &st, "SELECT id, path, format, rank, pid FROM traces ORDER BY id") < 0)
        return TT_EDB;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        struct tinfo *t;
        const char *fmt = (const char *)sqlite3_column_text(st, 2);
        const char *path = (const char *)sqlite3_column_text(st, 1);
        if (TT_ALLOC_GROW(*out, *n + 1, alloc) < 0) {
            sqlite3_finalize(st);
            return xc_oom();
        }
        t = &(*out)[(*n)++];
        memset(t, 0, sizeof(*t));
        t->id = sqlite3_column_int64(st, 0);
        if (!(t->path = strdup(path ? path : ""))) {
            sqlite3_finalize(st);
            return xc_oom();
        }
        t->is_et = fmt && !strcmp(fmt, "execution-trace");
        t->is_kineto = fmt && (!strcmp(fmt, "kineto-json") || !strcmp(fmt, "chrome-array"));
        t->has_rank = sqlite3_column_type(st, 3) == SQLITE_INTEGER;
        t->rank = sqlite3_column_int64(st, 3);
        t->has_pid = sqlite3_column_type(st, 4) == SQLITE_INTEGER;
        t->pid = sqlite3_column_int64(st, 4);
    }
    sqlite3_finalize(st);
    return s == SQLITE_DONE ? 0 : tt_db_error(x->db, "cannot read table traces");
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

static int prepare_all(struct xc *x)
{
    if (tt_db_prepare(x->db, &x->st_str, "SELECT s FROM strings WHERE id = ?1") < 0 ||
        tt_db_prepare(x->db, &x->st_before,
                      "SELECT s.id, s.external_id, s.name, s.ts, s.dur, s.seq_nr FROM slices AS s"
                      " WHERE s.trace_id = ?1 AND s.cat IN (?2, ?3) AND s.pid IS ?4"
                      " AND s.tid IS ?5 AND s.external_id < ?6"
                      " ORDER BY s.external_id DESC, s.id DESC LIMIT ?7") < 0 ||
        tt_db_prepare(x->db, &x->st_after,
                      "SELECT s.id, s.external_id, s.name, s.ts, s.dur, s.seq_nr FROM slices AS s"
                      " WHERE s.trace_id = ?1 AND s.cat IN (?2, ?3) AND s.pid IS ?4"
                      " AND s.tid IS ?5 AND s.external_id >= ?6"
                      " ORDER BY s.external_id, s.id LIMIT ?7") < 0 ||
        tt_db_prepare(x->db, &x->st_cand,
                      "SELECT s.id, s.external_id, s.pid, s.tid, s.ts FROM slices AS s"
                      " WHERE s.trace_id = ?1 AND s.cat IN (?2, ?3) AND s.name = ?4"
                      " AND s.external_id IS NOT NULL AND (?5 < 0 OR s.seq_nr = ?5)"
                      " ORDER BY s.external_id LIMIT ?6") < 0)
        return TT_EDB;
    return 0;
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

/* Check ET t[i] against each candidate; the best pairing in *best (its ops
 * and result to release by the caller, also on error). */
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
        if (best->ops) { /* reuse the ET nodes */
            cur.ops = best->ops;
            cur.n = best->n;
            cur.nrf = best->nrf;
            cur.et_nodes = best->et_nodes;
            cur.et_roots = best->et_roots;
            cur.dup_et = best->dup_et;
        } else if ((rc = xc_load_et(x, &cur)) < 0) {
            free(cur.ops);
            return rc;
        }
        if ((rc = xc_check_pair(x, &cur)) < 0) {
            if (cur.ops != best->ops)
                free(cur.ops);
            return rc;
        }
        if (!have || pair_better(&cur, best)) {
            struct etop *ops = cur.ops;
            pair_release(best);
            *best = cur;
            best->ops = ops;
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
        if (!x->o->store || (rc = store_links(x, &best, &res->summary.links)) == 0)
            rc = xc_export_pair(x, &best, slot);
    }
    pair_release(&best);
    free(best.ops);
    free(cand);
    return rc;
}

/* the index of slices by External id, when the database can take it */
static int ensure_index(tt_db *db)
{
    sqlite3_stmt *q = NULL;
    int has_et = 0;
    if (db->readonly)
        return 0;
    if (sqlite3_prepare_v2(db->sql, "SELECT 1 FROM et_nodes LIMIT 1", -1, &q, NULL) ==
            SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
        has_et = 1;
    sqlite3_finalize(q);
    return has_et ? tt_db_ensure_index(db, TT_IDX_SLICES_EXT) : 0;
}

int tt_crosscheck_run(tt_db *db, const tt_xc_options *opts, tt_xcheck_result **out)
{
    struct xc x;
    tt_xc_options defo = TT_XC_OPTIONS_INIT;
    struct tinfo *t = NULL;
    size_t nt = 0, i, net = 0, nk = 0;
    unsigned char *kused = NULL;
    tt_xcheck_result *res;
    int rc = 0;
    *out = NULL;
    if (!(res = calloc(1, sizeof(*res))))
        return xc_oom();
    memset(&x, 0, sizeof(x));
    x.db = db;
    x.o = opts ? opts : &defo;
    x.limit = x.o->limit < 0 ? 0 : (size_t)x.o->limit;
    tt_error_clear();
    x.cat_cpu = xc_string_id(db, "cpu_op");
    x.cat_ua = xc_string_id(db, "user_annotation");
    /* the joins look ops up by External id (a read-only database without the
     * index still works, by scanning) */
    if ((rc = ensure_index(db)) < 0 || (rc = prepare_all(&x)) < 0 ||
        (rc = load_traces(&x, &t, &nt)) < 0)
        goto out;
    for (i = 0; i < nt; i++) {
        net += t[i].is_et;
        nk += t[i].is_kineto;
    }
    if (!net) {
        rc = tt_error_set_at(TT_ENOTFOUND, db->path, -1, "no Execution Trace in this database");
        goto out;
    }
    if (!nk) {
        rc = tt_error_set_at(TT_ENOTFOUND, db->path, -1, "no Kineto trace in this database");
        goto out;
    }
    if (!(kused = calloc(nt, 1))) {
        rc = xc_oom();
        goto out;
    }
    for (i = 0; i < nt && rc == 0; i++) {
        if (t[i].is_et)
            rc = run_one(&x, t, nt, i, net, nk, kused, res);
    }
    for (i = 0; i < nt && rc == 0; i++) {
        if (t[i].is_kineto && !kused[i]) {
            res->summary.unpaired_kineto++;
            rc = add_trace(&t[i], &res->unpaired_kineto, &res->nunpaired_kineto);
        }
    }
out:
    sqlite3_finalize(x.st_str);
    sqlite3_finalize(x.st_before);
    sqlite3_finalize(x.st_after);
    sqlite3_finalize(x.st_cand);
    traces_free(t, nt);
    free(kused);
    if (rc < 0)
        tt_xcheck_result_free(res);
    else
        *out = res;
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
    if (sum)
        *sum = res->summary;
    if (out)
        rc = tt_xcheck_result_print(res, opts, out);
    if (rc == 0 && !res->summary.pairs && !res->summary.unpaired_et &&
        (opts->trace_id || opts->rank >= 0))
        rc = tt_error_set_at(TT_ENOTFOUND, db->path, -1, "no ET/Kineto pair matches --trace/--rank");
    tt_xcheck_result_free(res);
    return rc;
}

/* ---------------------------------------------------------------- files */

static int ingest_one(tt_db *db, const char *path, int *nfiles)
{
    int rc = tt_ingest_file(db, path, NULL, NULL);
    (*nfiles)++;
    if (rc == TT_EEXISTS) { /* the same content given twice */
        tt_error_clear();
        return 0;
    }
    return rc;
}

/* the trace files under dir, each once (tt_walk_traces: loops not followed) */
static int walk(tt_db *db, const char *dir, int *nfiles)
{
    tt_dir_walk w;
    size_t i;
    int rc = tt_walk_traces(dir, &w);
    if (rc == 0 && w.nunreadable)
        rc = tt_error_set_at(TT_EIO, w.unreadable[0], -1, "cannot read directory");
    for (i = 0; rc == 0 && i < w.nfiles; i++)
        rc = ingest_one(db, w.files[i], nfiles);
    tt_dir_walk_free(&w);
    return rc;
}

int tt_crosscheck_files(const char *const *inputs, size_t n, const tt_xc_options *opts, FILE *out,
                        tt_xc_summary *sum)
{
    int rc = 0, nfiles;
    size_t i;
    tt_db *db = NULL;
    tt_xc_options o = TT_XC_OPTIONS_INIT;
    if (opts)
        o = *opts;
    o.store = 0;
    for (i = 0; i < n; i++) {
        struct stat st;
        if (strcmp(inputs[i], "-") && stat(inputs[i], &st) != 0)
            return tt_error_set_at(TT_EIO, inputs[i], -1, "no such file or directory");
    }
    if ((rc = tt__open_temp_db(&db, "crosscheck")) < 0)
        goto out;
    for (i = 0; i < n; i++) {
        struct stat st;
        nfiles = 0;
        if (strcmp(inputs[i], "-") && stat(inputs[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            if ((rc = walk(db, inputs[i], &nfiles)) < 0)
                goto out;
            if (!nfiles) {
                rc = tt_error_set_at(TT_ENOTFOUND, inputs[i], -1,
                                     "no trace files (*.json, *.json.gz, *.gz) in this directory");
                goto out;
            }
        } else if ((rc = ingest_one(db, inputs[i], &nfiles)) < 0) {
            goto out;
        }
    }
    {
        sqlite3_stmt *st;
        int64_t net = 0, nk = 0;
        if (tt_db_prepare(db, &st,
                          "SELECT sum(format = 'execution-trace'),"
                          " sum(format IN ('kineto-json', 'chrome-array')) FROM traces") < 0) {
            rc = TT_EDB;
            goto out;
        }
        if (sqlite3_step(st) == SQLITE_ROW) {
            net = sqlite3_column_int64(st, 0);
            nk = sqlite3_column_int64(st, 1);
        }
        sqlite3_finalize(st);
        if (!net || !nk) {
            rc = tt_error_set_at(TT_EINVALID, n ? inputs[0] : "", -1,
                                 "no %s among the inputs (crosscheck needs a PyTorch Execution"
                                 " Trace and a Kineto trace)",
                                 !net ? "Execution Trace" : "Kineto trace");
            goto out;
        }
    }
    rc = tt_crosscheck_db(db, &o, out, sum);
out:
    tt_db_free(db);
    return rc;
}
