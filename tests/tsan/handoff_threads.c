/*
 * tests/tsan/handoff_threads.c - every producer/consumer hand-off of the
 * library under ThreadSanitizer (scripts/test.sh, tsan phase, linked with
 * the -fsanitize=thread build of the library): the queue itself (common/
 * queue.h) streaming, rotating buffers with wake batching and cancelled
 * midway; the gzip inflater thread (formats/source.c) and the reader thread
 * (formats/pipe.c) through a whole file, a consumer that stops early and a
 * gzip stream cut short; the ingest worker handing jobs to the SQLite writer
 * (store/ingest.c), whole and truncated (--salvage); the averages' spill
 * thread (TT_AVG_RUN_RECS makes many runs). Criterion cannot run under
 * ThreadSanitizer (its forked workers map their arena at fixed addresses,
 * Snaipe/Criterion#274), hence a plain program: exit 0 when every case
 * gave what it should, 1 with a line saying which did not; a data race
 * stops it earlier (TSAN_OPTIONS=halt_on_error=1).
 *
 *   handoff_threads GZIP_TRACE
 */
#include "common/compat.h"
#include "common/queue.h"
#include "tracetool/averages.h"
#include "tracetool/formats.h"
#include "tracetool/store.h"

#include <pthread.h>
#include <unistd.h>

static int failures;

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "FAILED %s:%d: ", __FILE__, __LINE__);            \
            fprintf(stderr, __VA_ARGS__);                                      \
            fprintf(stderr, " (last error: %s)\n", tt_error_last()->message);  \
            failures++;                                                        \
        }                                                                      \
    } while (0)

/* ---- the queue: two threads rotating buffers through two queues ---- */

#define NITEMS 50000

struct rot {
    tt__queue full, empty;
    int rc;
};

static void *rot_producer(void *arg)
{
    struct rot *r = arg;
    uintptr_t seq;
    for (seq = 1; seq <= NITEMS; seq++) {
        void *v;
        uintptr_t *b;
        if ((r->rc = tt__queue_get(&r->empty, &v)) != 1)
            break;
        b = v;
        *b = seq; /* written here, read by the consumer: the queue orders it */
        if ((r->rc = tt__queue_put(&r->full, b)) < 0)
            break;
    }
    tt__queue_close(&r->full);
    return NULL;
}

static void queue_rotation(unsigned nbuf, unsigned wake, uintptr_t stop_at)
{
    struct rot r;
    uintptr_t *bufs = calloc(nbuf, sizeof(*bufs)), want = 1;
    pthread_t th;
    unsigned i;
    void *v;
    memset(&r, 0, sizeof(r));
    if (!bufs || tt__queue_init(&r.full, nbuf) < 0 || tt__queue_init(&r.empty, nbuf) < 0) {
        CHECK(0, "queue: out of memory");
        return;
    }
    tt__queue_set_wake(&r.full, wake);
    tt__queue_set_wake(&r.empty, wake);
    for (i = 0; i < nbuf; i++)
        tt__queue_put(&r.empty, &bufs[i]);
    if (pthread_create(&th, NULL, rot_producer, &r) != 0) {
        CHECK(0, "queue: no thread");
        return;
    }
    while (tt__queue_get(&r.full, &v) == 1) {
        uintptr_t *b = v;
        if (*b != want) {
            CHECK(0, "queue: item %lu where %lu was due", (unsigned long)*b,
                  (unsigned long)want);
            break;
        }
        if (want++ == stop_at) {
            tt__queue_fail(&r.empty, TT_ECANCELED);
            tt__queue_fail(&r.full, TT_ECANCELED);
            break;
        }
        *b = 0;
        tt__queue_put(&r.empty, b);
    }
    pthread_join(th, NULL);
    if (stop_at)
        CHECK(r.rc == TT_ECANCELED && want == stop_at + 1, "queue: cancel at %lu",
              (unsigned long)stop_at);
    else
        CHECK(r.rc == 0 && want == NITEMS + 1, "queue: %lu items of %d", (unsigned long)want - 1,
              NITEMS);
    tt__queue_destroy(&r.full);
    tt__queue_destroy(&r.empty);
    free(bufs);
}

/* ---- the reader: gzip inflater thread + reader thread ---- */

struct count {
    int64_t events, stop_after;
};

static int count_event(void *ctx, const tt_event *ev)
{
    struct count *c = ctx;
    (void)ev;
    if (++c->events == c->stop_after)
        return tt_error_set(TT_EDB, "the consumer stops here");
    return 0;
}

static int read_file(const char *path, int64_t stop_after, struct count *c,
                     tt_read_stats *st)
{
    tt_trace_sink sink = { .ctx = c, .on_event = count_event };
    tt_read_options o = TT_READ_OPTIONS_INIT;
    o.flags = TT_READ_THREADED;
    memset(c, 0, sizeof(*c));
    c->stop_after = stop_after;
    return tt_read_trace(path, &sink, &o, st);
}

static void reader_cases(const char *trace, const char *cut)
{
    struct count c;
    tt_read_stats st;
    int64_t all;
    int rc = read_file(trace, 0, &c, &st);
    CHECK(rc == 0 && c.events > 1000 && st.gzip, "reader: whole file (rc %d, %lld events)", rc,
          (long long)c.events);
    all = c.events;
    rc = read_file(trace, 300, &c, &st);
    CHECK(rc == TT_EDB && c.events == 300, "reader: consumer stops (rc %d, %lld events)", rc,
          (long long)c.events);
    CHECK(!strcmp(tt_error_last()->message, "the consumer stops here"),
          "reader: the consumer's error is returned");
    rc = read_file(cut, 0, &c, &st);
    CHECK(rc == TT_ETRUNCATED && st.truncated && c.events > 0 && c.events < all,
          "reader: gzip cut short (rc %d, %lld events)", rc, (long long)c.events);
}

/* ---- the ingest: worker thread + SQLite writer ---- */

static void ingest_cases(const char *trace, const char *cut, const char *dir)
{
    char path[600];
    tt_db *db = NULL;
    tt_ingest_options o = TT_INGEST_OPTIONS_INIT;
    tt_ingest_result res;
    int rc;
    snprintf(path, sizeof(path), "%s/ingest.db", dir);
    if ((rc = tt_db_open(&db, path, TT_DB_CREATE)) < 0) {
        CHECK(0, "ingest: cannot open %s", path);
        return;
    }
    rc = tt_ingest_file(db, trace, &o, &res);
    CHECK(rc == 0 && res.rows > 1000, "ingest: whole file (rc %d, %lld rows)", rc,
          (long long)res.rows);
    rc = tt_ingest_file(db, cut, &o, &res);
    CHECK(rc == TT_ETRUNCATED, "ingest: a truncated file is refused (rc %d)", rc);
    o.flags = TT_INGEST_SALVAGE;
    rc = tt_ingest_file(db, cut, &o, &res);
    CHECK(rc == 0 && res.rows > 0 && res.stats.truncated,
          "ingest: --salvage keeps what came before the cut (rc %d, %lld rows)", rc,
          (long long)res.rows);
    tt_db_free(db);
    unlink(path);
}

/* ---- averages: the spill thread sorting runs while the next fills ---- */

static void averages_case(const char *trace)
{
    tt_avg_options o = TT_AVG_OPTIONS_INIT;
    FILE *out = fopen("/dev/null", "w");
    int rc;
    setenv("TT_AVG_RUN_RECS", "4096", 1); /* many runs, each spilled on the helper */
    rc = tt_averages_file(trace, &o, out);
    CHECK(rc == 0, "averages: rc %d", rc);
    unsetenv("TT_AVG_RUN_RECS");
    fclose(out);
}

/* the first half of a gzip file: a stream cut short */
static int write_cut(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    char *buf;
    long n;
    int ok = 0;
    if (in && out && fseek(in, 0, SEEK_END) == 0 && (n = ftell(in)) > 0 &&
        fseek(in, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n))) {
        ok = fread(buf, 1, (size_t)n, in) == (size_t)n &&
             fwrite(buf, 1, (size_t)n / 2, out) == (size_t)n / 2;
        free(buf);
    }
    if (in)
        fclose(in);
    if (out && fclose(out) != 0)
        ok = 0;
    return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
    char dir[] = "/tmp/tt-handoff-XXXXXX", cut[600];
    if (argc != 2) {
        fprintf(stderr, "usage: handoff_threads GZIP_TRACE\n");
        return 2;
    }
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 2;
    }
    snprintf(cut, sizeof(cut), "%s/cut.json.gz", dir);
    if (write_cut(argv[1], cut) < 0) {
        fprintf(stderr, "cannot write %s\n", cut);
        return 2;
    }
    queue_rotation(4, 1, 0);
    queue_rotation(32, 8, 0);
    queue_rotation(4, 1, 20000);
    queue_rotation(32, 8, 777);
    reader_cases(argv[1], cut);
    ingest_cases(argv[1], cut, dir);
    averages_case(argv[1]);
    unlink(cut);
    rmdir(dir);
    if (failures) {
        fprintf(stderr, "handoff_threads: %d case(s) failed\n", failures);
        return 1;
    }
    printf("handoff_threads: every hand-off case passed\n");
    return 0;
}
