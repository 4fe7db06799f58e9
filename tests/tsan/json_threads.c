/*
 * tests/tsan/json_threads.c - four threads open JSON parsers at the same
 * moment from a cold start (nothing parsed before) and parse the same
 * document: built with -fsanitize=thread by scripts/test.sh, so a data race
 * in the parser's shared state (its byte-class tables, issue 24) fails the
 * run. Exit 0 when every thread got the expected minified text.
 */
#include "common/compat.h"
#include "common/buf.h"
#include "formats/json.h"
#include "formats/source.h"

#include <pthread.h>

#define NTHREADS 4
#define ROUNDS 50

static const char doc[] =
    " [ {\"name\": \"aten::mm\", \"ph\" : \"X\", \"ts\": 1.5, \"dur\": 20,\n"
    "    \"args\": {\"External id\": 7, \"a\\\"b\": [true, false, null]}},\n"
    "   {\"name\": \"k\\u00e9rnel\", \"ts\": -3e2, \"cat\": \"kernel\"} ] ";
static const char want[] =
    "[{\"name\":\"aten::mm\",\"ph\":\"X\",\"ts\":1.5,\"dur\":20,"
    "\"args\":{\"External id\":7,\"a\\\"b\":[true,false,null]}},"
    "{\"name\":\"k\xc3\xa9rnel\",\"ts\":-3e2,\"cat\":\"kernel\"}]";

static pthread_barrier_t start;

/* 0 when the document streams and minifies to `want` */
static int parse_once(void)
{
    tt_source *src = NULL;
    tt_jstream js;
    tt_jp jp;
    tt_buf out = {0};
    const char *v;
    size_t len;
    int rc = tt_source_open_mem(&src, "doc.json", doc, sizeof(doc) - 1);
    if (rc)
        return rc;
    rc = tt_js_init(&js, src);
    if (!rc)
        rc = tt_js_scan_value(&js, &v, &len);
    if (!rc) {
        tt_jp_init(&jp, "doc.json", js.buf, js.base, v, len);
        rc = tt_jp_minify(&jp, &out);
    }
    if (!rc && (out.len != sizeof(want) - 1 || memcmp(out.buf, want, out.len) != 0))
        rc = TT_ERROR;
    tt_buf_release(&out);
    tt_js_release(&js);
    tt_source_free(src);
    return rc;
}

static void *worker(void *arg)
{
    int *rc = arg, i;
    pthread_barrier_wait(&start);
    for (i = 0; i < ROUNDS && !*rc; i++)
        *rc = parse_once();
    return NULL;
}

int main(void)
{
    pthread_t t[NTHREADS];
    int rc[NTHREADS] = {0}, i, bad = 0;
    pthread_barrier_init(&start, NULL, NTHREADS);
    for (i = 0; i < NTHREADS; i++)
        if (pthread_create(&t[i], NULL, worker, &rc[i]) != 0) {
            fprintf(stderr, "json_threads: pthread_create failed\n");
            return 1;
        }
    for (i = 0; i < NTHREADS; i++) {
        pthread_join(t[i], NULL);
        if (rc[i]) {
            fprintf(stderr, "json_threads: thread %d: %s\n", i, tt_strerror(rc[i]));
            bad = 1;
        }
    }
    pthread_barrier_destroy(&start);
    if (!bad)
        printf("json_threads: %d threads x %d parses agree\n", NTHREADS, ROUNDS);
    return bad;
}
