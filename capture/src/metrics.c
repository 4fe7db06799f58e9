/*
 * capture/src/metrics.c - torchelastic's metrics API (the team's seed
 * torch/distributed/elastic/metrics/api.py) and the function wrappers:
 * put_metric to a per-group handler (null by default), its console format
 * "[<time.time()>][<group>]: <name>=<value>", JSON lines, counters in the
 * trace; prof's <key>.success / .failure / .duration.ms; and a function run
 * under a profile of its own that always returns the function's result
 * (the strobelight seed's promise, without its bugs: a concurrent or nested
 * call still runs the work).
 */
#define _GNU_SOURCE
#include "capture/src/capture_internal.h"
#include "common/buf.h"
#include "report/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_GROUPS 64

struct handler {
    char *group; /* NULL: the default */
    tt_cap_metric_fn fn;
    void *user;
};

static pthread_mutex_t mlock = PTHREAD_MUTEX_INITIALIZER;
static struct handler handlers[MAX_GROUPS];
static size_t nhandlers;
static struct handler deflt = { NULL, tt_cap_metric_null, NULL };

void tt_cap_metric_null(double ts, const char *group, const char *name, int64_t value, void *user)
{
    (void)ts, (void)group, (void)name, (void)value, (void)user;
}

void tt_cap_metric_console(double ts, const char *group, const char *name, int64_t value,
                           void *user)
{
    FILE *f = user ? user : stdout;
    fprintf(f, "[%.6f][%s]: %s=%lld\n", ts, group, name, (long long)value);
    fflush(f);
}

/* one line: the JSON writer's text, written with one fwrite */
void tt_cap_metric_jsonl(double ts, const char *group, const char *name, int64_t value, void *user)
{
    FILE *f = user;
    tt_buf b = TT_BUF_INIT;
    tt_jw w;
    if (!f)
        return;
    tt_jw_init(&w, &b, TT_JW_LINE);
    tt_jw_obj(&w);
    tt_jw_knum(&w, "timestamp", ts, 6);
    tt_jw_key(&w, "group");
    tt_cap__json_str(&w, group, strlen(group));
    tt_jw_key(&w, "name");
    tt_cap__json_str(&w, name, strlen(name));
    tt_jw_kint(&w, "value", value);
    tt_jw_end(&w);
    if (tt_jw_finish(&w) == 0)
        fwrite(b.buf, 1, b.len, f);
    fflush(f);
    tt_buf_release(&b);
}

tt_cap_status tt_cap_metrics_configure(const char *group, tt_cap_metric_fn fn, void *user)
{
    size_t i;
    tt_cap_status rc = TT_CAP_OK;
    if (!fn)
        fn = tt_cap_metric_null;
    pthread_mutex_lock(&mlock);
    if (!group) {
        deflt.fn = fn;
        deflt.user = user;
    } else {
        for (i = 0; i < nhandlers && strcmp(handlers[i].group, group); i++)
            ;
        if (i == nhandlers) {
            if (nhandlers == MAX_GROUPS || !(handlers[i].group = strdup(group))) {
                tt_cap__set_error("no room for metric group %s", group);
                rc = TT_CAP_ENOMEM;
            } else {
                nhandlers++;
            }
        }
        if (rc == TT_CAP_OK) {
            handlers[i].fn = fn;
            handlers[i].user = user;
        }
    }
    pthread_mutex_unlock(&mlock);
    return rc;
}

void tt_cap_put_metric(const char *name, int64_t value, const char *group)
{
    struct handler h;
    struct timespec now;
    size_t i;
    if (!name)
        return;
    if (!group)
        group = "torchelastic";
    pthread_mutex_lock(&mlock);
    h = deflt;
    for (i = 0; i < nhandlers; i++)
        if (!strcmp(handlers[i].group, group))
            h = handlers[i];
    pthread_mutex_unlock(&mlock);
    clock_gettime(CLOCK_REALTIME, &now);
    h.fn((double)now.tv_sec + now.tv_nsec / 1e9, group, name, value, h.user);
}

int tt_cap_prof(const char *key, const char *group, int (*fn)(void *), void *arg)
{
    char name[256];
    int64_t t0 = tt_cap__mono(), ms;
    int result = fn(arg);
    ms = (tt_cap__mono() - t0) / 1000000;
    snprintf(name, sizeof(name), "%s.%s", key ? key : "fn", result == 0 ? "success" : "failure");
    tt_cap_put_metric(name, 1, group);
    snprintf(name, sizeof(name), "%s.duration.ms", key ? key : "fn");
    tt_cap_put_metric(name, ms, group);
    return result;
}

int tt_cap_profile_function(const tt_cap_config *c, int (*fn)(void *), void *arg)
{
    int started = tt_cap_start(c) == TT_CAP_OK; /* failures are logged and counted there */
    int result = fn(arg);
    if (started)
        tt_cap_stop();
    return result;
}
