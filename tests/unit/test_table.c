/*
 * tests/unit/test_table.c - the result-table writer (tracetool/table.h) on a
 * small table in every format; the expected texts are written by hand from
 * the format rules (RFC 4180 for CSV, JSON string escapes, Markdown escapes).
 */
#include "common/compat.h"
#include "tracetool/table.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(table);

enum { NAME, COUNT, PCT, BYTES, NCOL };

static const tt_table_col cols[NCOL] = {
    { "Name", "name", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
    { "Count", "count", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    { "Share (%)", "pct", TT_COL_PCT, 0, 0, 0, 3, 1, 0, 0 },
    { "Size (kB)", "bytes", TT_COL_BYTES, 0, 0, 0, 0, 2, 1e3, 0 },
};

static tt_table *sample(void)
{
    tt_table *t = tt_table_new(cols, NCOL);
    cr_assert_not_null(t);
    cr_assert_eq(tt_table_add_row(t), 0);
    cr_assert_eq(tt_table_set_text(t, NAME, "plain"), 0);
    tt_table_set_int(t, COUNT, 12);
    tt_table_set_float(t, PCT, 62.5);
    tt_table_set_int(t, BYTES, 1500);
    cr_assert_eq(tt_table_add_row(t), 0);
    cr_assert_eq(tt_table_set_text(t, NAME, "a,b \"q\"\nx\x01|y"), 0);
    tt_table_set_int(t, COUNT, -3);
    tt_table_set_float(t, PCT, 37.5);
    /* BYTES stays null */
    cr_assert_eq(tt_table_nrows(t), 2);
    return t;
}

static char *render(const tt_table *t, const tt_table_write_options *o)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert_not_null(f);
    cr_assert_eq(tt_table_write(t, o, f), 0);
    fclose(f);
    return buf;
}

static void expect_format(int format, const char *want)
{
    tt_table *t = sample();
    tt_table_write_options o = TT_TABLE_WRITE_OPTIONS_INIT;
    char *got;
    o.format = format;
    got = render(t, &o);
    cr_expect_str_eq(got, want);
    free(got);
    tt_table_free(t);
}

Test(table, text)
{
    /* widths from the widest of title and cells (the second name is 16
     * characters once its control characters are made visible: \n and
     * \x01 never reach a terminal raw); text left, numbers right; the last
     * column is right-aligned so it is padded too */
    expect_format(TT_FORMAT_TABLE,
                  "Name              Count  Share (%)  Size (kB)\n"
                  "----------------  -----  ---------  ---------\n"
                  "plain                12       62.5       1.50\n"
                  "a,b \"q\"\\nx\\x01|y     -3       37.5           \n");
}

Test(table, csv)
{
    expect_format(TT_FORMAT_CSV, "name,count,pct,bytes\n"
                                "plain,12,62.500,1500\n"
                                "\"a,b \"\"q\"\"\\nx\\x01|y\",-3,37.500,\n");
}

Test(table, json)
{
    expect_format(TT_FORMAT_JSON,
                  "[\n{\"name\": \"plain\", \"count\": 12, \"pct\": 62.500, \"bytes\": 1500},"
                  "\n{\"name\": \"a,b \\\"q\\\"\\nx\\u0001|y\", \"count\": -3, \"pct\": 37.500,"
                  " \"bytes\": null}\n]");
}

Test(table, markdown)
{
    expect_format(TT_FORMAT_MARKDOWN, "| Name | Count | Share (%) | Size (kB) |\n"
                                     "|---|---:|---:|---:|\n"
                                     "| plain | 12 | 62.5 | 1.50 |\n"
                                     "| a,b \"q\"<br>x\xe2\x90\x81\\|y | -3 | 37.5 |  |\n");
}

/* a column subset in another order, fixed widths, header alignments, indent,
 * no header, forced CSV quoting, JSON indent */
Test(table, views_and_layout)
{
    static const tt_table_col c2[2] = {
        { "Avg", "avg", TT_COL_NS, 0, TT_ALIGN_CENTER, 9, 3, 1, 0, 0 },
        { "Label", "label", TT_COL_TEXT, 0, 0, 8, 0, 0, 0, TT_COL_QUOTE },
    };
    static const size_t rev[2] = { 1, 0 };
    tt_table *t = tt_table_new(c2, 2);
    tt_table_write_options o = TT_TABLE_WRITE_OPTIONS_INIT;
    char *got;
    cr_assert_eq(tt_table_add_row(t), 0);
    tt_table_set_float(t, 0, 1.25);
    cr_assert_eq(tt_table_set_text(t, 1, "k"), 0);
    o.indent = " ";
    got = render(t, &o);
    cr_expect_str_eq(got, "    Avg     Label\n"
                          " ---------  --------\n"
                          "       1.2  k\n");
    free(got);
    o.cols = rev;
    o.ncols = 2;
    o.format = TT_FORMAT_CSV;
    got = render(t, &o);
    cr_expect_str_eq(got, "label,avg\n\"k\",1.250\n");
    free(got);
    o.no_header = 1;
    got = render(t, &o);
    cr_expect_str_eq(got, "\"k\",1.250\n");
    free(got);
    o.format = TT_FORMAT_JSON;
    o.indent = "  ";
    got = render(t, &o);
    cr_expect_str_eq(got, "[\n  {\"label\": \"k\", \"avg\": 1.250}\n]");
    free(got);
    tt_table_free(t);
}

Test(table, empty_and_bad_column)
{
    tt_table *t = tt_table_new(cols, NCOL);
    tt_table_write_options o = TT_TABLE_WRITE_OPTIONS_INIT;
    static const size_t bad[1] = { 7 };
    char *got;
    o.format = TT_FORMAT_JSON;
    got = render(t, &o);
    cr_expect_str_eq(got, "[\n]");
    free(got);
    o.cols = bad;
    o.ncols = 1;
    cr_expect_eq(tt_table_write(t, &o, stdout), TT_EINVALID);
    tt_table_free(t);
}

Test(table, quoting_helpers)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    tt_table_csv_text(f, "x", 0);
    fputc(';', f);
    tt_table_csv_text(f, "x", 1);
    fputc(';', f);
    tt_table_csv_text(f, "a\rb", 0);
    fputc(';', f);
    tt_table_csv_text(f, "a\nb", 0);
    fputc(';', f);
    tt_table_csv_text(f, "say \"hi\"", 0);
    fputc(';', f);
    tt_table_markdown_text(f, "*a_b* `c` <d> & e\\f\r\ng\x7f");
    fclose(f);
    /* CSV: line ends and other control characters shown, one record a line */
    cr_expect_str_eq(buf, "x;\"x\";a\\rb;a\\nb;\"say \"\"hi\"\"\";\\*a\\_b\\* \\`c\\` \\<d\\> \\& e\\\\f<br>g\xe2\x90\xa1");
    free(buf);
}

/* ---- layout flags (torch's key_averages layout and the others' lists) ---- */

static const tt_table_col pre_cols[3] = {
    { "Name", NULL, TT_COL_TEXT, TT_ALIGN_RIGHT, 0, 6, 0, 0, 0, 0 },
    { "Time", NULL, TT_COL_TEXT, TT_ALIGN_RIGHT, 0, 8, 0, 0, 0, 0 },
    { "Where", NULL, TT_COL_TEXT, TT_ALIGN_LEFT, 0, 5, 0, 0, 0, 0 },
};

/* preformatted right-aligned cells, rules above and below, every column
 * padded and followed by the separator, widths in bytes */
Test(table, torch_layout_flags)
{
    tt_table *t = tt_table_new(pre_cols, 3);
    tt_table_write_options o = TT_TABLE_WRITE_OPTIONS_INIT;
    char *got;
    cr_assert_eq(tt_table_add_row(t), 0);
    cr_assert_eq(tt_table_set_text(t, 0, "\xc3\xa9t"), 0); /* 2 characters, 3 bytes */
    cr_assert_eq(tt_table_set_text(t, 1, "1.500ms"), 0);
    cr_assert_eq(tt_table_set_text(t, 2, "a.py"), 0);
    cr_assert_eq(tt_table_add_row(t), 0);
    cr_assert_eq(tt_table_set_text(t, 0, ""), 0);
    cr_assert_eq(tt_table_set_text(t, 1, ""), 0);
    /* column 2 stays null: an empty cell */
    o.flags = TT_TABLE_RULE_ABOVE | TT_TABLE_RULE_BELOW | TT_TABLE_PAD_LAST | TT_TABLE_BYTE_WIDTH;
    got = render(t, &o);
    cr_expect_str_eq(got, "------  --------  -----  \n"
                          "  Name      Time  Where  \n"
                          "------  --------  -----  \n"
                          "   \xc3\xa9t   1.500ms  a.py   \n"
                          "                         \n"
                          "------  --------  -----  \n");
    free(got);
    /* without BYTE_WIDTH the name counts 2 characters; NO_RULE drops the
     * line under the titles; the last column, left-aligned, is not padded */
    o.flags = TT_TABLE_NO_RULE;
    o.indent = "  ";
    got = render(t, &o);
    cr_expect_str_eq(got, "    Name      Time  Where\n"
                          "      \xc3\xa9t   1.500ms  a.py\n"
                          "                    \n");
    free(got);
    tt_table_free(t);
}

/* JSON layouts: inline lists, "]" right after the last row, null keys left
 * out, raw JSON cells, control characters escaped, non-finite floats null */
Test(table, json_layouts)
{
    static const tt_table_col jc[4] = {
        { "Name", "name", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
        { "V", "v", TT_COL_FLOAT, 0, 0, 0, 2, 2, 0, 0 },
        { "Sub", "sub", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
        { "Opt", "opt", TT_COL_INT, 0, 0, 0, 0, 0, 0, 0 },
    };
    tt_table *t = tt_table_new(jc, 4);
    tt_table_write_options o = TT_TABLE_WRITE_OPTIONS_INIT;
    char *got;
    cr_assert_eq(tt_table_add_row(t), 0);
    cr_assert_eq(tt_table_set_text(t, 0, "tab\there\x1f\"\\"), 0);
    tt_table_set_float(t, 1, NAN);
    cr_assert_eq(tt_table_set_json(t, 2, "[1, {\"a\": null}]"), 0);
    tt_table_set_int(t, 3, 7);
    cr_assert_eq(tt_table_add_row(t), 0);
    cr_assert_eq(tt_table_set_text(t, 0, "b"), 0);
    tt_table_set_float(t, 1, -INFINITY);
    o.format = TT_FORMAT_JSON;
    o.flags = TT_TABLE_JSON_INLINE;
    got = render(t, &o);
    cr_expect_str_eq(got, "[{\"name\": \"tab\\there\\u001f\\\"\\\\\", \"v\": null, "
                          "\"sub\": [1, {\"a\": null}], \"opt\": 7}, "
                          "{\"name\": \"b\", \"v\": null, \"sub\": null, \"opt\": null}]");
    free(got);
    o.flags = TT_TABLE_JSON_TIGHT | TT_TABLE_JSON_SKIP_NULL;
    o.indent = "  ";
    got = render(t, &o);
    cr_expect_str_eq(got, "[\n  {\"name\": \"tab\\there\\u001f\\\"\\\\\", \"v\": null, "
                          "\"sub\": [1, {\"a\": null}], \"opt\": 7},"
                          "\n  {\"name\": \"b\", \"v\": null}]");
    free(got);
    tt_table_free(t);
    /* an empty inline list */
    t = tt_table_new(jc, 4);
    o.flags = TT_TABLE_JSON_INLINE;
    got = render(t, &o);
    cr_expect_str_eq(got, "[]");
    free(got);
    tt_table_free(t);
}

/* CSV: non-finite floats and null cells are empty fields, a JSON cell is a
 * text field (quoted when it holds a comma, a quote or a line end), the
 * header quotes a key that needs it; Markdown escapes JSON cells as text
 * and shows non-finite floats as printf does */
Test(table, csv_markdown_special_cells)
{
    static const tt_table_col sc[3] = {
        { "A|B", "a,b", TT_COL_FLOAT, 0, 0, 0, 1, 1, 0, 0 },
        { "J", "j", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
        { "T", "t", TT_COL_TEXT, 0, 0, 0, 0, 0, 0, 0 },
    };
    tt_table *t = tt_table_new(sc, 3);
    tt_table_write_options o = TT_TABLE_WRITE_OPTIONS_INIT;
    char *got;
    cr_assert_eq(tt_table_add_row(t), 0);
    tt_table_set_float(t, 0, INFINITY);
    cr_assert_eq(tt_table_set_json(t, 1, "[\"x\", 2]"), 0);
    cr_assert_eq(tt_table_set_text(t, 2, "l1\r\nl2"), 0);
    cr_assert_eq(tt_table_add_row(t), 0);
    tt_table_set_float(t, 0, 2.25);
    o.format = TT_FORMAT_CSV;
    got = render(t, &o);
    /* a line end inside a cell is shown, not written: one record per line */
    cr_expect_str_eq(got, "\"a,b\",j,t\n,\"[\"\"x\"\", 2]\",l1\\r\\nl2\n2.2,,\n");
    free(got);
    o.format = TT_FORMAT_MARKDOWN;
    got = render(t, &o);
    cr_expect_str_eq(got, "| A\\|B | J | T |\n|---:|---|---|\n"
                          "| inf | \\[\"x\", 2\\] | l1<br>l2 |\n| 2.2 |  |  |\n");
    free(got);
    tt_table_free(t);
}
