/*
 * report/table_json.h - a table's rows into a JSON document being written
 * (report/json.h), for the printers that put tables inside their own
 * objects. Internal.
 */
#ifndef TT_REPORT_TABLE_JSON_H
#define TT_REPORT_TABLE_JSON_H

#include "report/json.h"
#include "tracetool/table.h"

/* each row of t as an object, written as a value where w is (inside an
 * array the caller opened): the columns o picks (NULL: all), with the keys
 * of null cells left out under TT_TABLE_JSON_SKIP_NULL; indent >= 0: each
 * row on a line of its own, indented so; -1: on the current line. 0 or
 * TT_EINVALID (o names a column t lacks; set) */
int tt__table_json_rows(const tt_table *t, const tt_table_write_options *o, tt_jw *w, int indent);

/* "key": [ its rows, a line each indented so, then "]" on a line of its own
 * at indent 0 ] (key NULL: the array alone, as a value) */
int tt__table_json_array(const tt_table *t, const tt_table_write_options *o, tt_jw *w,
                         const char *key, int indent);

#endif
