/*
 * tests/unit/test_log.c - tt_set_log and the library's log messages (issue
 * 24): a message reaches the callback installed, with its level and topic;
 * levels below the one asked for do not; without a callback nothing is
 * written to stderr, even with the environment variables that used to make
 * the library print (TT_TIMING, TT_DEBUG_AVG, TT_DEBUG_MEMTL); and once
 * tt_set_log returns, the callback it replaced is never called again.
 * Each Criterion test runs in its own process: no callback at the start.
 */
#include "common/compat.h"
#include "common/log.h"
#include "tracetool/analyze.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#define TRACE TT_TESTDATA "/kineto/simple_add_trace.json.gz"

struct seen {
    pthread_mutex_t lock;
    size_t n;
    int level[64];
    char topic[64][32];
    char msg[64][256];
};

static void collect(void *ctx, int level, const char *topic, const char *msg)
{
    struct seen *s = ctx;
    pthread_mutex_lock(&s->lock);
    if (s->n < 64) {
        s->level[s->n] = level;
        snprintf(s->topic[s->n], sizeof(s->topic[0]), "%s", topic);
        snprintf(s->msg[s->n], sizeof(s->msg[0]), "%s", msg);
    }
    s->n++;
    pthread_mutex_unlock(&s->lock);
}

/* the index of the first message starting with prefix, or -1 */
static int find(const struct seen *s, const char *prefix)
{
    size_t i;
    for (i = 0; i < s->n && i < 64; i++)
        if (!strncmp(s->msg[i], prefix, strlen(prefix)))
            return (int)i;
    return -1;
}

static tt_avg_result *averages(int group_by_stack)
{
    tt_avg_options o = TT_AVG_OPTIONS_INIT;
    tt_avg_result *res = NULL;
    o.group_by_stack = group_by_stack;
    cr_assert_eq(tt_averages_compute_file(TRACE, &o, &res), 0, "%s",
                 tt_error_last()->message);
    return res;
}

Test(log, message_reaches_callback)
{
    struct seen s = { .lock = PTHREAD_MUTEX_INITIALIZER };
    tt_set_log(collect, &s, TT_LOG_DEBUG);
    tt__log(TT_LOG_INFO, "timing", "%-12s %.3f s", "commit", 0.25);
    cr_assert_eq(s.n, 1);
    cr_expect_eq(s.level[0], TT_LOG_INFO);
    cr_expect_str_eq(s.topic[0], "timing");
    cr_expect_str_eq(s.msg[0], "timing: commit       0.250 s");
}

Test(log, levels_below_the_threshold_are_dropped)
{
    struct seen s = { .lock = PTHREAD_MUTEX_INITIALIZER };
    cr_expect_not(tt__log_enabled(TT_LOG_INFO), "nothing is enabled without a callback");
    tt_set_log(collect, &s, TT_LOG_INFO);
    cr_expect_not(tt__log_enabled(TT_LOG_DEBUG));
    cr_expect(tt__log_enabled(TT_LOG_INFO));
    tt__log(TT_LOG_DEBUG, "averages", "dropped");
    tt__log(TT_LOG_INFO, "timing", "kept");
    cr_assert_eq(s.n, 1);
    cr_expect_str_eq(s.msg[0], "timing: kept");
    tt_set_log(NULL, &s, TT_LOG_DEBUG);
    cr_expect_not(tt__log_enabled(TT_LOG_INFO));
    tt__log(TT_LOG_INFO, "timing", "after");
    cr_expect_eq(s.n, 1, "a message after tt_set_log(NULL)");
}

Test(log, long_message_is_cut_not_overrun)
{
    struct seen s = { .lock = PTHREAD_MUTEX_INITIALIZER };
    char big[3000];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    tt_set_log(collect, &s, TT_LOG_DEBUG);
    tt__log(TT_LOG_DEBUG, "averages", "%s", big);
    cr_assert_eq(s.n, 1);
    cr_expect_eq(strncmp(s.msg[0], "averages: xxx", 13), 0);
}

/* the library's messages: averages says which way it read the file (the
 * record stream, with --group-by-stack too), and an ingest says its phase
 * times */
Test(log, analysis_messages_reach_callback)
{
    struct seen s = { .lock = PTHREAD_MUTEX_INITIALIZER };
    char dir[] = "/tmp/tt_test_log_XXXXXX", dbp[64];
    tt_db *db;
    tt_set_log(collect, &s, TT_LOG_DEBUG);
    tt_avg_result_free(averages(0));
    cr_expect_geq(find(&s, "averages: read without a database"), 0);
    s.n = 0;
    tt_avg_result_free(averages(5));
    cr_expect_geq(find(&s, "averages: read without a database"), 0,
                  "%zu messages, first: %s", s.n, s.n ? s.msg[0] : "");
    s.n = 0;
    cr_assert(mkdtemp(dir));
    snprintf(dbp, sizeof(dbp), "%s/t.db", dir);
    cr_assert_eq(tt_db_open(&db, dbp, TT_DB_CREATE), 0);
    cr_assert_eq(tt_ingest_file(db, TRACE, NULL, NULL), 0);
    tt_db_free(db);
    unlink(dbp);
    rmdir(dir);
    cr_expect_geq(find(&s, "timing: read+insert"), 0);
    cr_expect_geq(find(&s, "timing: commit"), 0);
    if (find(&s, "timing: commit") >= 0)
        cr_expect_eq(s.level[find(&s, "timing: commit")], TT_LOG_INFO);
}

/* stderr into a file while fn runs; returns how many bytes were written */
static long stderr_bytes_during(void (*fn)(void))
{
    char path[] = "/tmp/tt_test_log_XXXXXX";
    int fd = mkstemp(path), saved;
    off_t n;
    cr_assert_geq(fd, 0);
    unlink(path);
    fflush(stderr);
    saved = dup(2);
    cr_assert_geq(saved, 0);
    cr_assert_eq(dup2(fd, 2), 2);
    fn();
    fflush(stderr);
    cr_assert_eq(dup2(saved, 2), 2);
    close(saved);
    n = lseek(fd, 0, SEEK_END);
    close(fd);
    return (long)n;
}

static void run_analyses(void)
{
    tt_avg_result_free(averages(0));
    tt_avg_result_free(averages(5));
    tt__log(TT_LOG_INFO, "timing", "direct");
}

Test(log, nothing_on_stderr_without_callback)
{
    setenv("TT_TIMING", "1", 1);
    setenv("TT_DEBUG_AVG", "1", 1);
    setenv("TT_DEBUG_MEMTL", "1", 1);
    cr_expect_eq(stderr_bytes_during(run_analyses), 0,
                 "the library wrote to stderr with no log callback installed");
}

/* loggers on threads while the main thread swaps the callback: after
 * tt_set_log(NULL) returns, the old callback is never entered again */
struct race {
    struct seen *s;
    int stop;
};

static void *logger(void *arg)
{
    struct race *r = arg;
    while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE))
        tt__log(TT_LOG_DEBUG, "averages", "from a thread");
    return NULL;
}

Test(log, set_log_while_threads_log)
{
    struct seen s = { .lock = PTHREAD_MUTEX_INITIALIZER };
    struct race r = { &s, 0 };
    pthread_t t[4];
    size_t i, before;
    for (i = 0; i < 4; i++)
        cr_assert_eq(pthread_create(&t[i], NULL, logger, &r), 0);
    for (i = 0; i < 200; i++) {
        tt_set_log(collect, &s, TT_LOG_DEBUG);
        tt_set_log(NULL, NULL, TT_LOG_DEBUG);
    }
    tt_set_log(collect, &s, TT_LOG_DEBUG);
    while (1) { /* until some thread got through */
        pthread_mutex_lock(&s.lock);
        before = s.n;
        pthread_mutex_unlock(&s.lock);
        if (before)
            break;
        sched_yield();
    }
    tt_set_log(NULL, NULL, TT_LOG_DEBUG);
    pthread_mutex_lock(&s.lock);
    before = s.n;
    pthread_mutex_unlock(&s.lock);
    usleep(20000);
    __atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
    for (i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    cr_expect_eq(s.n, before, "the callback ran after tt_set_log(NULL) returned");
    cr_expect_str_eq(s.msg[0], "averages: from a thread");
}
