/*
 * compare/diff/diff_report.c - the reports of `tracetool diff`: text and
 * Markdown for people (a verdict line, the environment, the gated metrics,
 * the top contributors, added / removed / count-changed rows, notes), JSON
 * (versioned, with units, polarity and the samples), JUnit XML (one
 * testcase per gated item) and GitHub workflow commands. Tables go through
 * the one table writer (tracetool/table.h).
 */
#include "common/compat.h"
#include "report/json.h"
#include "report/out.h"
#include "compare/diff/diff_state.h"
#include "common/buf.h"
#include "tracetool/table.h"

#include <math.h>
#include <string.h>

static const char *const vname[] = { "unchanged", "improved", "inconclusive", "regressed",
                                     "not gated" };
static const char *const status_name[] = { "matched", "added", "removed", "count changed" };

void tt__diff_pct(char *out, size_t cap, double ratio)
{
    if (isnan(ratio) || isinf(ratio))
        snprintf(out, cap, "n/a");
    else
        snprintf(out, cap, "%+.1f%%", (ratio - 1) * 100);
}

/* ---- tables ---- */

enum { MC_METRIC, MC_UNIT, MC_BASE, MC_NEW, MC_CHANGE, MC_P, MC_N, MC_VERDICT, MC_NOTE, MC_COUNT };

static const tt_table_col metric_cols[MC_COUNT] = {
    { "Metric", "metric", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
    { "Unit", "unit", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
    { "Base", "base", TT_COL_FLOAT, 0, 0, 0, 1, 1, 0, 0 },
    { "New", "new", TT_COL_FLOAT, 0, 0, 0, 1, 1, 0, 0 },
    { "Change %", "change_pct", TT_COL_FLOAT, 0, 0, 0, 1, 1, 0, 0 },
    { "p", "p", TT_COL_FLOAT, 0, 0, 0, 4, 4, 0, 0 },
    { "n", "n", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
    { "Verdict", "verdict", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
    { "Note", "note", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
};

/* ms and MiB in the tables: values scaled for reading */
static double shown(double v, const char *unit)
{
    return !strcmp(unit, "ns") ? v / 1e6 : !strcmp(unit, "bytes") ? v / (1024.0 * 1024.0) : v;
}

static const char *shown_unit(const char *unit)
{
    return !strcmp(unit, "ns") ? "ms" : !strcmp(unit, "bytes") ? "MiB" : unit;
}

static int metrics_table(const tt_diff_result *r, int fmt, FILE *out)
{
    tt_table *t = tt_table_new(metric_cols, MC_COUNT);
    tt_table_write_options wo = TT_TABLE_WRITE_OPTIONS_INIT;
    size_t i;
    int rc = 0;
    char n[48];
    if (!t)
        return tt__oom();
    for (i = 0; i < r->nmetrics && rc == 0; i++) {
        const tt_diff_metric *m = &r->metrics[i];
        if ((rc = tt_table_add_row(t)) < 0)
            break;
        snprintf(n, sizeof(n), "%zu/%zu", m->nb, m->nn);
        tt_table_set_text(t, MC_METRIC, m->id);
        tt_table_set_text(t, MC_UNIT, shown_unit(m->unit));
        if (isfinite(m->base)) /* else an empty cell: no "nan" */
            tt_table_set_float(t, MC_BASE, shown(m->base, m->unit));
        if (isfinite(m->new_))
            tt_table_set_float(t, MC_NEW, shown(m->new_, m->unit));
        if (isfinite(m->ratio))
            tt_table_set_float(t, MC_CHANGE, (m->ratio - 1) * 100);
        if (!isnan(m->p))
            tt_table_set_float(t, MC_P, m->p);
        tt_table_set_text(t, MC_N, n);
        tt_table_set_text(t, MC_VERDICT, vname[m->verdict]);
        tt_table_set_text(t, MC_NOTE, m->note);
    }
    wo.format = fmt;
    if (rc == 0)
        rc = tt_table_write(t, &wo, out);
    tt_table_free(t);
    return rc;
}

enum { RC_KIND, RC_KEY, RC_STATUS, RC_BCOUNT, RC_NCOUNT, RC_BMS, RC_NMS, RC_DMS, RC_SHARE,
       RC_VERDICT, RC_COUNT };

static const tt_table_col row_cols[RC_COUNT] = {
    { "Kind", "kind", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
    { "Key", "key", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
    { "Status", "status", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
    { "Base calls/step", "base_count", TT_COL_FLOAT, 0, 0, 0, 1, 1, 0, 0 },
    { "New calls/step", "new_count", TT_COL_FLOAT, 0, 0, 0, 1, 1, 0, 0 },
    { "Base ms/step", "base_ms", TT_COL_FLOAT, 0, 0, 0, 3, 3, 0, 0 },
    { "New ms/step", "new_ms", TT_COL_FLOAT, 0, 0, 0, 3, 3, 0, 0 },
    { "Delta ms", "delta_ms", TT_COL_FLOAT, 0, 0, 0, 3, 3, 0, 0 },
    { "Share chg %", "share_pct", TT_COL_FLOAT, 0, 0, 0, 1, 1, 0, 0 },
    { "Verdict", "verdict", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
};

/* a row's change of share of the step (new - base, NaN when a side lacks
 * the key): bounded, and its sign is the row's own */
static double shown_share(const tt_diff_result *r, const tt_diff_row *w)
{
    TT_UNUSED(r);
    return w->share;
}

/* rows with status (-1: any) into a table, at most limit (-1: all); *left:
 * how many more there were */
static int rows_table(const tt_diff_result *r, int status, int limit, int fmt, FILE *out,
                      size_t *left)
{
    tt_table *t = tt_table_new(row_cols, RC_COUNT);
    tt_table_write_options wo = TT_TABLE_WRITE_OPTIONS_INIT;
    size_t i, shown_n = 0;
    int rc = 0;
    *left = 0;
    if (!t)
        return tt__oom();
    for (i = 0; i < r->nrows && rc == 0; i++) {
        const tt_diff_row *w = &r->rows[i];
        if (status >= 0 && w->status != status)
            continue;
        if (status < 0 && (w->delta_ns == 0 || !strcmp(w->key, "ProfilerStep*")))
            continue;
        if (limit >= 0 && shown_n >= (size_t)limit) {
            (*left)++;
            continue;
        }
        shown_n++;
        if ((rc = tt_table_add_row(t)) < 0)
            break;
        tt_table_set_text(t, RC_KIND, w->kind);
        tt_table_set_text(t, RC_KEY, w->key);
        tt_table_set_text(t, RC_STATUS, status_name[w->status]);
        tt_table_set_float(t, RC_BCOUNT, w->base_count);
        tt_table_set_float(t, RC_NCOUNT, w->new_count);
        tt_table_set_float(t, RC_BMS, w->base_ns / 1e6);
        tt_table_set_float(t, RC_NMS, w->new_ns / 1e6);
        tt_table_set_float(t, RC_DMS, w->delta_ns / 1e6);
        if (isfinite(shown_share(r, w)))
            tt_table_set_float(t, RC_SHARE, shown_share(r, w) * 100);
        tt_table_set_text(t, RC_VERDICT, vname[w->verdict]);
    }
    wo.format = fmt;
    if (rc == 0 && tt_table_nrows(t))
        rc = tt_table_write(t, &wo, out);
    else if (rc == 0)
        fputs(fmt == TT_FORMAT_MARKDOWN ? "(none)" : "  (none)", out);
    tt_table_free(t);
    return rc;
}

/* ---- text and Markdown ---- */

static void write_coverage(const tt_diff_result *r, int md, FILE *out)
{
    static const char *const what[2] = { "CPU op time", "kernel time" };
    int k;
    for (k = 0; k < 2; k++) {
        if (isnan(r->coverage[k][0]) && isnan(r->coverage[k][1]))
            continue;
        fprintf(out, "%s%s in keys found on both sides: BASE %.1f%%, NEW %.1f%%\n", md ? "- " : "  ",
                what[k], isnan(r->coverage[k][0]) ? 0.0 : r->coverage[k][0] * 100,
                isnan(r->coverage[k][1]) ? 0.0 : r->coverage[k][1] * 100);
    }
}

static int write_human(const tt_diff_result *r, const tt_diff_options *o, int md, FILE *out)
{
    static const char *const section[] = { "Environment", "Gated and reported metrics",
                                           "Top contributors to the change",
                                           "Added (only in NEW)", "Removed (only in BASE)",
                                           "Count changes per step" };
    const int fmt = md ? TT_FORMAT_MARKDOWN : TT_FORMAT_TABLE;
    size_t left, s;
    int rc = 0, k;
    if (md) {
        fputs("### tracetool diff: ", out);
        tt_table_markdown_text(out, r->reason);
        fputs("\n\n", out);
    } else {
        tt_table_text_safe(out, r->reason);
        fputs("\n\n", out);
    }
    for (s = 0; s < 7 && rc == 0; s++) {
        if (s == 6) {
            fputs(md ? "#### Notes\n\n" : "Notes\n", out);
            write_coverage(r, md, out);
            break;
        }
        fprintf(out, md ? "#### %s\n\n" : "%s\n", section[s]);
        switch (s) {
        case 0:
            for (k = 0; k < 2; k++) {
                fputs(md ? "- " : "  ", out);
                fputs(k ? "NEW  " : "BASE ", out);
                if (md)
                    tt_table_markdown_text(out, r->env[k]);
                else
                    tt_table_text_safe(out, r->env[k]);
                fputs("\n", out);
            }
            if (r->mismatch[0]) {
                fputs(md ? "- **differs:** " : "  differs: ", out);
                if (md)
                    tt_table_markdown_text(out, r->mismatch);
                else
                    tt_table_text_safe(out, r->mismatch);
                fputs(o->allow_env_mismatch ? " (compared anyway: --allow-env-mismatch)\n"
                                            : "\n",
                      out);
            }
            break;
        case 1:
            rc = metrics_table(r, fmt, out);
            fputs("\n", out);
            break;
        default:
            rc = rows_table(r, s == 2 ? -1 : (int)s - 2, o->top, fmt, out, &left);
            fputs("\n", out);
            if (left)
                fprintf(out, md ? "\n%zu rows omitted\n" : "  %zu rows omitted\n", left);
            break;
        }
        fputs("\n", out);
    }
    return rc;
}

/* ---- JSON ---- */

/* v as the JSON and CSV reports write a number: an integer whole ("%.0f"),
 * else six significant digits ("%.6g"); NULL when it is not finite */
static const char *num_text(char *b, size_t cap, double v)
{
    if (!isfinite(v))
        return NULL;
    snprintf(b, cap, v == floor(v) && fabs(v) < 9e15 ? "%.0f" : "%.6g", v);
    return b;
}

/* k and v: the number's text (tt_jw_num has no "%.6g"), or null */
static void json_num(tt_jw *w, const char *k, double v)
{
    char t[40];
    const char *s = num_text(t, sizeof(t), v);
    if (k)
        tt_jw_key(w, k);
    if (s)
        tt_jw_raw(w, s, strlen(s));
    else
        tt_jw_null(w);
}

/* "base" or "new" of a metric: {"n": N, "value": V, "samples": [...]} */
static void json_side(tt_jw *w, const char *k, size_t n, double value, const double *v)
{
    size_t i;
    tt_jw_kobj(w, k);
    tt_jw_kuint(w, "n", n);
    json_num(w, "value", value);
    tt_jw_karr(w, "samples");
    for (i = 0; i < n; i++)
        json_num(w, NULL, v[i]);
    tt_jw_end(w);
    tt_jw_end(w);
}

static void json_metric(tt_jw *w, const tt_diff_metric *m)
{
    tt_jw_nl(w, 4);
    tt_jw_obj(w);
    tt_jw_kstr(w, "id", m->id);
    tt_jw_kstr(w, "unit", m->unit);
    tt_jw_kstr(w, "polarity", "lower_is_better");
    tt_jw_kbool(w, "gated", m->gated);
    json_side(w, "base", m->nb, m->base, m->b);
    json_side(w, "new", m->nn, m->new_, m->n);
    json_num(w, "ratio", m->ratio);
    json_num(w, "hl_shift", m->hl);
    json_num(w, "p", m->p);
    tt_jw_kstr(w, "test", isnan(m->p) ? "none" : m->exact ? "mann-whitney exact"
                                                           : "mann-whitney normal");
    tt_jw_kstr(w, "verdict", vname[m->verdict]);
    tt_jw_kstr(w, "note", m->note);
    tt_jw_end(w);
}

static void json_row(tt_jw *w, const tt_diff_result *r, const tt_diff_row *x)
{
    tt_jw_nl(w, 4);
    tt_jw_obj(w);
    tt_jw_kstr(w, "kind", x->kind);
    tt_jw_kstr(w, "key", x->key);
    tt_jw_kstr(w, "status", status_name[x->status]);
    json_num(w, "base_count", x->base_count);
    json_num(w, "new_count", x->new_count);
    json_num(w, "base_ns", x->base_ns);
    json_num(w, "new_ns", x->new_ns);
    json_num(w, "delta_ns", x->delta_ns);
    json_num(w, "base_share", x->base_share);
    json_num(w, "new_share", x->new_share);
    json_num(w, "shift", x->shift);
    json_num(w, "share", shown_share(r, x));
    json_num(w, "p", x->p);
    json_num(w, "q", x->q);
    tt_jw_kstr(w, "verdict", vname[x->verdict]);
    tt_jw_end(w);
}

/* a key a line; the metrics and the rows an object a line. 0 or TT_ENOMEM
 * (write errors are the caller's to check: ferror) */
static int write_json(const tt_diff_result *r, FILE *out)
{
    static const char *const cov[2] = { "op_time", "kernel_time" };
    tt_jw w;
    size_t i;
    int k, rc;
    tt_jw_init_file(&w, out, TT_JW_LINE);
    tt_jw_obj(&w);
    tt_jw_nl(&w, 2);
    tt_jw_kstr(&w, "schema", "tracetool.diff/1");
    tt_jw_nl(&w, 2);
    tt_jw_kstr(&w, "verdict", r->not_comparable ? "not comparable" : vname[r->verdict]);
    tt_jw_nl(&w, 2);
    tt_jw_kint(&w, "exit_code", r->exit_code);
    tt_jw_nl(&w, 2);
    tt_jw_kstr(&w, "summary", r->reason);
    tt_jw_nl(&w, 2);
    tt_jw_kobj(&w, "environment");
    tt_jw_kstr(&w, "base", r->env[0]);
    tt_jw_kstr(&w, "new", r->env[1]);
    tt_jw_kstr(&w, "mismatch", r->mismatch);
    tt_jw_end(&w);
    tt_jw_nl(&w, 2);
    tt_jw_kobj(&w, "coverage");
    for (k = 0; k < 2; k++) {
        tt_jw_kobj(&w, cov[k]);
        json_num(&w, "base", r->coverage[k][0]);
        json_num(&w, "new", r->coverage[k][1]);
        tt_jw_end(&w);
    }
    tt_jw_end(&w);
    tt_jw_nl(&w, 2);
    tt_jw_karr(&w, "metrics");
    for (i = 0; i < r->nmetrics; i++)
        json_metric(&w, &r->metrics[i]);
    tt_jw_nl(&w, 2);
    tt_jw_end(&w);
    tt_jw_nl(&w, 2);
    tt_jw_karr(&w, "rows");
    for (i = 0; i < r->nrows; i++)
        json_row(&w, r, &r->rows[i]);
    tt_jw_nl(&w, 2);
    tt_jw_end(&w);
    tt_jw_nl(&w, 0);
    tt_jw_end(&w);
    rc = tt_jw_finish(&w);
    return rc == TT_ENOMEM ? rc : 0;
}

/* ---- CSV ---- */

enum { CC_KIND, CC_KEY, CC_STATUS, CC_UNIT, CC_GATED, CC_BASE_N, CC_BASE, CC_NEW_N, CC_NEW,
       CC_RATIO, CC_HL, CC_BCOUNT, CC_NCOUNT, CC_BNS, CC_NNS, CC_DNS, CC_SHARE, CC_P, CC_Q,
       CC_TEST, CC_VERDICT, CC_NOTE, CC_COUNT };

#define CSV_COL(k) { k, k, TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 }
static const tt_table_col csv_cols[CC_COUNT] = {
    CSV_COL("kind"),      CSV_COL("key"),       CSV_COL("status"),    CSV_COL("unit"),
    CSV_COL("gated"),     CSV_COL("base_n"),    CSV_COL("base"),      CSV_COL("new_n"),
    CSV_COL("new"),       CSV_COL("ratio"),     CSV_COL("hl_shift"),  CSV_COL("base_count"),
    CSV_COL("new_count"), CSV_COL("base_ns"),   CSV_COL("new_ns"),    CSV_COL("delta_ns"),
    CSV_COL("share"),     CSV_COL("p"),         CSV_COL("q"),         CSV_COL("test"),
    CSV_COL("verdict"),   CSV_COL("note"),
};

/* a number as in the JSON report (an empty field when not finite) */
static void csv_num(tt_table *t, size_t col, double v)
{
    char b[40];
    if (num_text(b, sizeof(b), v))
        tt_table_set_text(t, col, b);
}

/* one row for the result (kind "result": its verdict, the headline as the
 * note), one per metric (kind "metric", key its id), one per key row; the
 * header is the JSON report's keys (base / new: the metric's value) */
static int write_csv(const tt_diff_result *r, FILE *out)
{
    tt_table *t = tt_table_new(csv_cols, CC_COUNT);
    tt_table_write_options wo = TT_TABLE_WRITE_OPTIONS_INIT;
    size_t i;
    int rc;
    if (!t)
        return tt__oom();
    rc = tt_table_add_row(t);
    if (rc == 0) {
        tt_table_set_text(t, CC_KIND, "result");
        tt_table_set_text(t, CC_VERDICT, r->not_comparable ? "not comparable" : vname[r->verdict]);
        tt_table_set_text(t, CC_NOTE, r->reason);
    }
    for (i = 0; i < r->nmetrics && rc == 0; i++) {
        const tt_diff_metric *m = &r->metrics[i];
        if ((rc = tt_table_add_row(t)) < 0)
            break;
        tt_table_set_text(t, CC_KIND, "metric");
        tt_table_set_text(t, CC_KEY, m->id);
        tt_table_set_text(t, CC_UNIT, m->unit);
        tt_table_set_text(t, CC_GATED, m->gated ? "true" : "false");
        csv_num(t, CC_BASE_N, (double)m->nb);
        csv_num(t, CC_BASE, m->base);
        csv_num(t, CC_NEW_N, (double)m->nn);
        csv_num(t, CC_NEW, m->new_);
        csv_num(t, CC_RATIO, m->ratio);
        csv_num(t, CC_HL, m->hl);
        csv_num(t, CC_P, m->p);
        tt_table_set_text(t, CC_TEST, isnan(m->p) ? "none" : m->exact ? "mann-whitney exact"
                                                                      : "mann-whitney normal");
        tt_table_set_text(t, CC_VERDICT, vname[m->verdict]);
        tt_table_set_text(t, CC_NOTE, m->note);
    }
    for (i = 0; i < r->nrows && rc == 0; i++) {
        const tt_diff_row *w = &r->rows[i];
        if ((rc = tt_table_add_row(t)) < 0)
            break;
        tt_table_set_text(t, CC_KIND, w->kind);
        tt_table_set_text(t, CC_KEY, w->key);
        tt_table_set_text(t, CC_STATUS, status_name[w->status]);
        csv_num(t, CC_BCOUNT, w->base_count);
        csv_num(t, CC_NCOUNT, w->new_count);
        csv_num(t, CC_BNS, w->base_ns);
        csv_num(t, CC_NNS, w->new_ns);
        csv_num(t, CC_DNS, w->delta_ns);
        csv_num(t, CC_SHARE, shown_share(r, w));
        csv_num(t, CC_P, w->p);
        csv_num(t, CC_Q, w->q);
        tt_table_set_text(t, CC_VERDICT, vname[w->verdict]);
    }
    wo.format = TT_FORMAT_CSV;
    if (rc == 0)
        rc = tt_table_write(t, &wo, out);
    tt_table_free(t);
    return rc;
}

/* ---- JUnit and GitHub ---- */

/* the length of the UTF-8 character at s when it is valid and allowed in
 * XML 1.0 (no surrogate, no U+FFFE / U+FFFF), else 0 */
static size_t xml_char_len(const unsigned char *s)
{
    unsigned c = s[0], cp;
    size_t n, k;
    if (c < 0x80)
        return 1;
    n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (!n)
        return 0;
    cp = c & (0xff >> (n + 1));
    for (k = 1; k < n; k++) {
        if ((s[k] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[k] & 0x3f);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff)
        return 0;
    return n;
}

/* s as XML text or attribute value: markup escaped, line ends and tabs as
 * character references (a raw one in an attribute reads as a space), what
 * XML 1.0 does not allow (other C0 characters, bytes that are no UTF-8) as
 * the text report shows it (\x1b) */
static void xml_text(FILE *out, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned char c = *p;
        size_t n = xml_char_len(p);
        if (c == '<')
            fputs("&lt;", out);
        else if (c == '>')
            fputs("&gt;", out);
        else if (c == '&')
            fputs("&amp;", out);
        else if (c == '"')
            fputs("&quot;", out);
        else if (c == '\n')
            fputs("&#10;", out);
        else if (c == '\r')
            fputs("&#13;", out);
        else if (c == '\t')
            fputs("&#9;", out);
        else if (c < 0x20 || !n)
            fprintf(out, "\\x%02x", c), n = 1;
        else
            fwrite(p, 1, n, out);
        p += n ? n : 1;
    }
}

static void write_junit(const tt_diff_result *r, FILE *out)
{
    size_t i, tests = 0, failures = 0, skipped = 0;
    for (i = 0; i < r->nmetrics; i++)
        if (r->metrics[i].gated) {
            tests++;
            failures += r->metrics[i].verdict == TT_V_REGRESSED;
            skipped += r->metrics[i].verdict == TT_V_INCONCLUSIVE ||
                       r->metrics[i].verdict == TT_V_NOT_GATED;
        }
    for (i = 0; i < r->nrows; i++)
        if (r->rows[i].verdict != TT_V_NOT_GATED) {
            tests++;
            failures += r->rows[i].verdict == TT_V_REGRESSED;
        }
    if (r->not_comparable) {
        tests++;
        failures++;
    }
    fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                 "<testsuite name=\"tracetool diff\" tests=\"%zu\" failures=\"%zu\" errors=\"0\""
                 " skipped=\"%zu\" time=\"0\">\n",
            tests, failures, skipped);
    if (r->not_comparable) {
        fputs("  <testcase classname=\"environment\" name=\"comparable\" time=\"0\">"
              "<failure type=\"not comparable\" message=\"", out);
        xml_text(out, r->reason);
        fputs("\"/></testcase>\n", out);
    }
    for (i = 0; i < r->nmetrics; i++) {
        const tt_diff_metric *m = &r->metrics[i];
        char msg[320], pct[32];
        if (!m->gated)
            continue;
        tt__diff_pct(pct, sizeof(pct), m->ratio);
        snprintf(msg, sizeof(msg), "%s %s: %s%s%s", m->id, vname[m->verdict], pct,
                 m->note[0] ? "; " : "", m->note);
        fprintf(out, "  <testcase classname=\"%s\" name=\"%s\" time=\"0\">",
                strstr(m->id, "peak") ? "memory" : "step", m->id);
        if (m->verdict == TT_V_REGRESSED || m->verdict == TT_V_INCONCLUSIVE ||
            m->verdict == TT_V_NOT_GATED) {
            fputs(m->verdict == TT_V_REGRESSED ? "<failure type=\"regression\" message=\""
                                               : "<skipped message=\"",
                  out);
            xml_text(out, msg);
            fputs("\"/>", out);
        }
        fputs("</testcase>\n", out);
    }
    for (i = 0; i < r->nrows; i++) {
        const tt_diff_row *w = &r->rows[i];
        if (w->verdict == TT_V_NOT_GATED)
            continue;
        fprintf(out, "  <testcase classname=\"%s\" name=\"", w->kind);
        xml_text(out, w->key);
        fputs("\" time=\"0\">", out);
        if (w->verdict == TT_V_REGRESSED)
            fprintf(out, "<failure type=\"regression\" message=\"+%.3f ms per step\"/>",
                    w->delta_ns / 1e6);
        fputs("</testcase>\n", out);
    }
    fputs("  <system-out>", out);
    xml_text(out, r->reason);
    fputs("</system-out>\n</testsuite>\n", out);
}

/*
 * One workflow command, "::CMD title=tracetool diff::MESSAGE", on one line:
 * the message's % CR LF escaped as %25 %0D %0A (GitHub's own escapes),
 * other control characters (C0, DEL, C1: ESC, \x01) made visible as the
 * text report does (\x1b), so a trace's names can neither start another
 * command nor reach the log raw. The title, a property, is fixed (a
 * property would also need ':' and ',' escaped, as %3A and %2C).
 */
static void gh_command(FILE *out, const char *cmd, const char *msg)
{
    tt_buf b, v;
    tt_buf_init(&b);
    tt_buf_init(&v);
    for (; *msg; msg++) {
        if (*msg == '%')
            tt_buf_add(&b, "%25", 3);
        else if (*msg == '\r')
            tt_buf_add(&b, "%0D", 3);
        else if (*msg == '\n')
            tt_buf_add(&b, "%0A", 3);
        else
            tt_buf_addch(&b, *msg);
    }
    fprintf(out, "::%s title=tracetool diff::%s\n", cmd,
            b.oom || !b.buf ? "" : tt_visible(&v, b.buf));
    tt_buf_release(&b);
    tt_buf_release(&v);
}

static void write_github(const tt_diff_result *r, FILE *out)
{
    size_t i, n = 0, more = 0;
    char pct[32];
    tt_buf line;
    if (r->not_comparable) {
        gh_command(out, "error", r->reason);
        return;
    }
    tt_buf_init(&line);
    if (r->mismatch[0]) {
        tt_buf_reset(&line);
        tt_buf_addf(&line, "compared although the environments differ: %s", r->mismatch);
        gh_command(out, "warning", line.buf ? line.buf : "");
    }
    for (i = 0; i < r->nmetrics; i++) {
        const tt_diff_metric *m = &r->metrics[i];
        int err = m->verdict == TT_V_REGRESSED;
        if (!m->gated || !(err || m->verdict == TT_V_INCONCLUSIVE || m->note[0]))
            continue;
        if (n >= 10) {
            more++;
            continue;
        }
        n++;
        tt__diff_pct(pct, sizeof(pct), m->ratio);
        tt_buf_reset(&line);
        tt_buf_addf(&line, "%s %s: %s (n = %zu/%zu)%s%s", m->id, vname[m->verdict], pct, m->nb,
                    m->nn, m->note[0] ? "; " : "", m->note);
        gh_command(out, err ? "error" : "warning", line.buf ? line.buf : "");
    }
    for (i = 0; i < r->nrows; i++) {
        if (r->rows[i].verdict != TT_V_REGRESSED)
            continue;
        if (n >= 10) {
            more++;
            continue;
        }
        n++;
        tt_buf_reset(&line);
        tt_buf_addf(&line, "%s ", r->rows[i].kind);
        tt_buf_add(&line, r->rows[i].key, strlen(r->rows[i].key)); /* whole, however long */
        tt_buf_addf(&line, " regressed: %+.3f ms per step", r->rows[i].delta_ns / 1e6);
        gh_command(out, "error", line.buf ? line.buf : "");
    }
    if (more)
        fprintf(out, "::notice title=tracetool diff::%zu more\n", more);
    if (!n)
        gh_command(out, "notice", r->reason);
    tt_buf_release(&line);
}

int tt_diff_write(const tt_diff_result *r, const tt_diff_options *o, tt_output_format format, FILE *out)
{
    tt_diff_options def = TT_DIFF_OPTIONS_INIT;
    if (!o)
        o = &def;
    switch (format) {
    case TT_FORMAT_MARKDOWN: return write_human(r, o, 1, out);
    case TT_FORMAT_JSON: return write_json(r, out);
    case TT_FORMAT_JUNIT: write_junit(r, out); return 0;
    case TT_FORMAT_GITHUB: write_github(r, out); return 0;
    case TT_FORMAT_CSV: return write_csv(r, out);
    default: return write_human(r, o, 0, out);
    }
}

int tt_diff_write_file(const tt_diff_result *r, const tt_diff_options *o, tt_output_format format,
                       const char *path)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    int rc;
    if (!m)
        return tt__oom();
    rc = tt_diff_write(r, o, format, m);
    if (fclose(m) != 0 && rc == 0)
        rc = tt__oom();
    if (rc == 0)
        rc = tt__write_file_atomic(path, buf, len);
    free(buf);
    return rc;
}
