/*
 * call/call.c - tt_call (tracetool/call.h): the options object read into
 * name/argument pairs as the CLI's argv would give them, the command run
 * with its result printed as JSON into memory.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "call/call_internal.h"
#include "formats/json.h"
#include "tracetool/call.h"
#include "tracetool/store.h"

int tc_usage(tc *t, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    t->usage = 1;
    return tt_error_set_at(TT_EINVALID, NULL, -1, "%s: %s", t->cmd, msg);
}

/* ---- the options object ---- */

static int add_arg(tc *t, const char *key, size_t klen, const char *arg, size_t alen, int kind)
{
    tc_arg *a;
    char *name;
    size_t i;
    if (!(a = realloc(t->args, (t->nargs + 1) * sizeof(*a))))
        return tt_error_set(TT_ENOMEM, "out of memory");
    t->args = a;
    a += t->nargs;
    if (!(a->key = tt_arena_strndup(&t->arena, key, klen)) ||
        !(name = tt_arena_strndup(&t->arena, key, klen)) ||
        (arg && !(a->arg = tt_arena_strndup(&t->arena, arg, alen))))
        return tt_error_set(TT_ENOMEM, "out of memory");
    for (i = 0; i < klen; i++)
        if (name[i] == '_')
            name[i] = '-';
    a->name = name;
    if (!arg)
        a->arg = NULL;
    a->kind = kind;
    t->nargs++;
    return 0;
}

/* one value (a list's element when in_list): its pair */
static int read_value(tc *t, tt_jp *jp, const char *key, size_t klen, int in_list)
{
    enum tt_jtype ty = tt_jp_peek(jp);
    const char *s;
    size_t len;
    tt_jnum n;
    int rc;
    switch (ty) {
    case TT_JT_STRING:
        if ((rc = tt_jp_string(jp, &t->arena, &s, &len)) < 0)
            return rc;
        return add_arg(t, key, klen, s, len, TC_TEXT);
    case TT_JT_NUMBER:
        if ((rc = tt_jp_number(jp, &n)) < 0)
            return rc;
        return add_arg(t, key, klen, n.text, n.len, TC_TEXT);
    case TT_JT_TRUE:
    case TT_JT_FALSE:
    case TT_JT_NULL:
        if ((rc = tt_jp_literal(jp, &ty)) < 0)
            return rc;
        if (in_list)
            return tc_usage(t, "option '%.*s': a list holds strings or numbers", (int)klen, key);
        if (ty == TT_JT_NULL) /* not given */
            return 0;
        return add_arg(t, key, klen, NULL, 0, ty == TT_JT_TRUE ? TC_TRUE : TC_FALSE);
    case TT_JT_ARRAY:
        if (in_list)
            return tc_usage(t, "option '%.*s': a list holds strings or numbers", (int)klen, key);
        if ((rc = tt_jp_array_begin(jp)) < 0)
            return rc;
        while ((rc = tt_jp_array_next(jp)) > 0)
            if ((rc = read_value(t, jp, key, klen, 1)) < 0)
                return rc;
        return rc;
    default:
        return tc_usage(t, "option '%.*s': want a string, a number, true or a list", (int)klen,
                        key);
    }
}

static int read_options(tc *t, const char *json)
{
    tt_jp jp;
    const char *key;
    size_t klen, len = json ? strlen(json) : 0;
    int rc;
    if (!json || !len)
        return 0;
    tt_jp_init(&jp, "options", json, 0, json, len);
    if (tt_jp_peek(&jp) != TT_JT_OBJECT)
        return tc_usage(t, "the options are not a JSON object");
    if ((rc = tt_jp_object_begin(&jp)) < 0)
        goto bad;
    while ((rc = tt_jp_object_next(&jp, &t->arena, &key, &klen)) > 0) {
        if ((rc = read_value(t, &jp, key, klen, 0)) < 0) {
            if (t->usage)
                return rc;
            goto bad;
        }
    }
    if (rc == 0)
        rc = tt_jp_finish(&jp);
    if (rc == 0)
        return 0;
bad:
    return tc_usage(t, "the options are not valid JSON: %s", tt_error_last()->message);
}

int tc_parse(tc *t, const tc_opt *opts, const char *const *writes,
             int (*set)(tc *t, void *ctx, int key, const char *arg), void *ctx)
{
    size_t i, k;
    int rc;
    for (i = 0; i < t->nargs; i++) {
        const tc_arg *a = &t->args[i];
        if (!strcmp(a->name, "format"))
            return tc_usage(t, "option 'format': the result is always JSON");
        for (k = 0; writes && writes[k]; k++)
            if (!strcmp(a->name, writes[k]))
                return tc_usage(t, "option '%s' writes a file: not available here "
                                   "(run the tracetool program for it)", a->key);
        for (k = 0; opts[k].name && strcmp(opts[k].name, a->name); k++)
            ;
        if (!opts[k].name)
            return tc_usage(t, "unknown option '%s'", a->key);
        if (opts[k].has_arg && a->kind != TC_TEXT)
            return tc_usage(t, "option '%s' wants a string or a number, not %s", a->key,
                            a->kind == TC_TRUE ? "true" : "false");
        if (!opts[k].has_arg && a->kind == TC_TEXT)
            return tc_usage(t, "option '%s' is a flag: want true or false", a->key);
        if (a->kind == TC_FALSE)
            continue;
        if ((rc = set(t, ctx, opts[k].key, a->arg)) < 0)
            return rc;
    }
    return 0;
}

/* ---- inputs ---- */

int tc_inputs(tc *t, size_t lo, size_t hi, const char *msg)
{
    size_t i;
    if (t->nin < lo || t->nin > hi)
        return tc_usage(t, "%s", msg);
    for (i = 0; i < t->nin; i++) {
        if (!t->in[i])
            return tc_usage(t, "input %zu is NULL", i + 1);
        if (!strcmp(t->in[i], "-"))
            return tc_usage(t, "standard input ('-') is not an input here: name a file");
    }
    return 0;
}

int tc_refuse_summaries(tc *t, const char *const *in, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (in[i] && tt_is_summary_file(in[i]))
            return tt_error_set_at(TT_EINVALID, in[i], -1, "a summary holds no events: `%s`"
                                   " needs the traces or their database", t->cmd);
    return 0;
}

int tc_run_input(tc *t, const char *in, int (*on_db)(tc *t, tt_db *db, void *ctx),
                 int (*on_file)(tc *t, const char *path, void *ctx),
                 int (*on_sum)(tc *t, tt_summary *s, void *ctx), void *ctx)
{
    int rc;
    if (on_sum && tt_is_summary_file(in)) {
        tt_summary *s;
        if ((rc = tt_summary_load(in, &s)) < 0)
            return rc;
        rc = on_sum(t, s, ctx);
        tt_summary_free(s);
        return rc;
    }
    if ((rc = tc_refuse_summaries(t, &in, 1)) < 0)
        return rc;
    if (tt_is_sqlite_file(in)) {
        tt_db *db;
        if ((rc = tt_db_open_input(&db, in)) < 0)
            return rc;
        rc = on_db(t, db, ctx);
        tt_db_free(db);
        return rc;
    }
    return on_file(t, in, ctx);
}

/* ---- the call ---- */

static const struct {
    const char *name;
    int (*run)(tc *t);
} commands[] = {
    { "info", tc_info },         { "averages", tc_averages },
    { "kernels", tc_kernels },   { "breakdown", tc_breakdown },
    { "memtimeline", tc_memtimeline }, { "crosscheck", tc_crosscheck },
    { "diff", tc_diff },         { "queue", tc_queue },
    { "bandwidth", tc_bandwidth }, { "critical-path", tc_critpath },
    { "collectives", tc_collectives },
};

int tt_call(const char *command, const char *const *inputs, size_t ninputs, const char *options,
            char **out, size_t *len, int *exit_code)
{
    tc t;
    char *buf = NULL;
    size_t n = 0, i;
    int rc;
    if (out)
        *out = NULL;
    if (len)
        *len = 0;
    if (exit_code)
        *exit_code = 2;
    if (!command || !out || !len || !exit_code || (ninputs && !inputs))
        return tt_error_set(TT_ERROR, "tt_call: command, out, len and exit_code are needed");
    memset(&t, 0, sizeof(t));
    t.cmd = command;
    t.in = inputs;
    t.nin = ninputs;
    for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (!strcmp(commands[i].name, command))
            break;
    if (i == sizeof(commands) / sizeof(commands[0])) {
        t.cmd = "tracetool";
        rc = tc_usage(&t, "unknown command '%s'", command);
        return rc;
    }
    rc = read_options(&t, options);
    if (rc == 0 && !(t.out = open_memstream(&buf, &n)))
        rc = tt_error_set(TT_ENOMEM, "out of memory");
    if (rc == 0)
        rc = commands[i].run(&t);
    if (t.out && fclose(t.out) != 0 && rc == 0)
        rc = tt_error_set(TT_ENOMEM, "out of memory");
    free(t.args);
    tt_arena_release(&t.arena);
    if (rc < 0) {
        free(buf);
        int code = tt_error_last()->code;
        *exit_code = t.usage ? 2 : tt_exit_code(code ? code : rc);
        return rc;
    }
    *out = buf;
    *len = n;
    *exit_code = t.exit_code;
    return 0;
}

void tt_call_free(char *out)
{
    free(out);
}
