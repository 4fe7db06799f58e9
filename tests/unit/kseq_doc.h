/*
 * tests/unit/kseq_doc.h - what test_kernels_seq.c and test_breakdown_annot.c
 * share: a hand-made trace written from its events, in order or reversed
 * (the tables of a file may come in any order), and the loop over every
 * input: the file in order, reversed, a database of it, with the spills in
 * memory and forced to disk (common/spill.h).
 */
#ifndef TT_TESTS_UNIT_KSEQ_DOC_H
#define TT_TESTS_UNIT_KSEQ_DOC_H

#include "common/spill.h"
#include "tracetool/store.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <unistd.h>

/* /tmp/tt_<prefix>_<pid>_<name> */
static void kseq_path(char *buf, size_t n, const char *prefix, const char *name)
{
    snprintf(buf, n, "/tmp/tt_%s_%d_%s", prefix, (int)getpid(), name);
}

/* {"traceEvents": [ev...]} into the file <prefix> fwd.json (rev.json when
 * reversed); its path (static) */
static const char *kseq_write(const char *prefix, const char *const *ev, size_t n, int reversed)
{
    static char path[256];
    FILE *f;
    size_t i;
    kseq_path(path, sizeof(path), prefix, reversed ? "rev.json" : "fwd.json");
    cr_assert_not_null(f = fopen(path, "w"));
    fputs("{\"traceEvents\": [", f);
    for (i = 0; i < n; i++)
        fprintf(f, "%s%s", i ? "," : "", ev[reversed ? n - 1 - i : i]);
    fputs("]}", f);
    fclose(f);
    return path;
}

/* the files kseq_write made removed, the spill limit back to its default */
static void kseq_cleanup(const char *prefix)
{
    char p[256];
    kseq_path(p, sizeof(p), prefix, "fwd.json");
    unlink(p);
    kseq_path(p, sizeof(p), prefix, "rev.json");
    unlink(p);
    tt__spill_set_limit(0);
}

/* a new database holding the trace at path */
static tt_db *kseq_db_open(const char *prefix, const char *path)
{
    char dbp[256];
    tt_db *d;
    kseq_path(dbp, sizeof(dbp), prefix, "t.db");
    unlink(dbp);
    cr_assert_eq(tt_db_open(&d, dbp, TT_DB_CREATE), 0);
    cr_assert_eq(tt_ingest_file(d, path, NULL, NULL), 0, "%s", tt_error_last()->message);
    return d;
}

static void kseq_db_close(const char *prefix, tt_db *d)
{
    char dbp[256];
    tt_db_free(d);
    kseq_path(dbp, sizeof(dbp), prefix, "t.db");
    unlink(dbp);
}

/* the body once per input: db 0 the file, 1 reversed, 2 a database (the
 * caller's run() makes it); tiny 1: spills of 64 bytes. path = WRITE(rev). */
#define KSEQ_EACH_INPUT(path, db, tiny, WRITE)                                              \
    for (tiny = 0; tiny < 2; tiny++)                                                        \
        for (db = 0; db < 3; db++)                                                          \
            if ((tt__spill_set_limit(tiny ? 64 : 0), path = WRITE(db == 1)) != NULL)

#endif
