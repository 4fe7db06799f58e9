/*
 * report/json.h - the one streaming JSON writer: every JSON the project
 * prints or writes (the analyses' --format json, the table writer's JSON,
 * diff's summaries, the Chrome export, the capture library's Kineto traces,
 * Execution Traces and metrics) is written through it.
 *
 * The writer places the separators (", " and ": ", or "," and ":" when
 * compact), escapes strings (tt_buf_add_json_string) and writes a
 * non-finite number as null; the caller says where lines break
 * (tt_jw_nl) so that each output keeps its layout. Text goes to a tt_buf:
 * the caller's, a FILE (written out every TT_JW_FLUSH_AT bytes and at
 * tt_jw_finish) or an output file (report/out.h: handed on as it fills).
 *
 *   tt_jw w;
 *   tt_jw_init_file(&w, stdout, 0);
 *   tt_jw_obj(&w);
 *   tt_jw_kint(&w, "count", 3);
 *   tt_jw_karr(&w, "rows");
 *   tt_jw_nl(&w, 2); tt_jw_str(&w, "a");    (each row on its own line)
 *   tt_jw_nl(&w, 0); tt_jw_end(&w);         ("\n]")
 *   tt_jw_end(&w);
 *   rc = tt_jw_finish(&w);                   {"count": 3, "rows": [\n  "a"\n]}
 *
 * Misuse (a key outside an object, a value where a key is due, ends past
 * the first bracket, nesting deeper than TT_JW_MAX_DEPTH) is a programming
 * error: it is recorded, and tt_jw_finish returns TT_EINVALID. Internal.
 */
#ifndef TT_REPORT_JSON_H
#define TT_REPORT_JSON_H

#include "common/buf.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifdef TT_CAPTURE_BUILD
/* the capture library's copy has names of its own (as report/out.h) */
#define tt_jw_init tt_cap__jw_init
#define tt_jw_init_file tt_cap__jw_init_file
#define tt_jw_init_out tt_cap__jw_init_out
#define tt_jw_finish tt_cap__jw_finish
#define tt_jw__flush tt_cap__jw_flush
#define tt_jw_obj tt_cap__jw_obj
#define tt_jw_arr tt_cap__jw_arr
#define tt_jw_end tt_cap__jw_end
#define tt_jw_key tt_cap__jw_key
#define tt_jw_keyn tt_cap__jw_keyn
#define tt_jw_str tt_cap__jw_str
#define tt_jw_strn tt_cap__jw_strn
#define tt_jw_int tt_cap__jw_int
#define tt_jw_uint tt_cap__jw_uint
#define tt_jw_num tt_cap__jw_num
#define tt_jw_fixed tt_cap__jw_fixed
#define tt_jw_bool tt_cap__jw_bool
#define tt_jw_null tt_cap__jw_null
#define tt_jw_raw tt_cap__jw_raw
#define tt_jw_nl tt_cap__jw_nl
#endif

#define TT_JW_MAX_DEPTH 64
#define TT_JW_FLUSH_AT (1u << 16) /* bytes kept before a FILE is written */

struct tt_out;

enum {
    TT_JW_COMPACT = 1u << 0, /* "," and ":" (no spaces): the export's layout */
    TT_JW_SCRIPT = 1u << 1,  /* strings also escape < > & ' and U+2028, U+2029 as
                                \u: the JSON may sit in an HTML <script> (the
                                caller passes valid UTF-8) */
    TT_JW_LINE = 1u << 2,    /* a newline after the document (its root value) */
};

typedef struct tt_jw {
    tt_buf *b;          /* the text goes here */
    /* the rest is json.c's */
    tt_buf own;         /* b when writing to a FILE */
    FILE *f;            /* written out at TT_JW_FLUSH_AT; NULL: none */
    struct tt_out *o;   /* handed on as it fills; NULL: none */
    unsigned flags;     /* TT_JW_* */
    int depth;          /* open brackets */
    int err;            /* 0, TT_EINVALID (misuse), TT_ENOMEM, TT_EIO */
    int brk;            /* indent of a pending line break; -1: none */
    unsigned char key;  /* a key was written: its value is next */
    unsigned char kind[TT_JW_MAX_DEPTH];  /* '{' or '[' */
    unsigned char count[TT_JW_MAX_DEPTH]; /* 0: nothing in it yet; 1: something */
} tt_jw;

/* write to b (appended; the caller owns and flushes it) */
void tt_jw_init(tt_jw *w, tt_buf *b, unsigned flags);
/* write to f (buffered; tt_jw_finish writes the rest and checks ferror) */
void tt_jw_init_file(tt_jw *w, FILE *f, unsigned flags);
/* write to an output file (report/out.h): appended to o->b, handed on with
 * tt_out_flush as it fills; the caller closes o */
void tt_jw_init_out(tt_jw *w, struct tt_out *o, unsigned flags);
/* flush (FILE: write out and fflush) and free: 0, or the first error:
 * TT_EINVALID (misuse, or brackets left open), TT_ENOMEM, TT_EIO (set) */
int tt_jw_finish(tt_jw *w);

/* the next value (or the closing bracket) starts on a new line indented by
 * `indent` spaces; before a value after a key it is ignored */
void tt_jw_nl(tt_jw *w, int indent);

void tt_jw_obj(tt_jw *w);                 /* { */
void tt_jw_arr(tt_jw *w);                 /* [ */
void tt_jw_end(tt_jw *w);                 /* } or ], whichever is open */
void tt_jw_key(tt_jw *w, const char *k);
void tt_jw_keyn(tt_jw *w, const char *k, size_t n);
void tt_jw_str(tt_jw *w, const char *s); /* NULL: null */
void tt_jw_strn(tt_jw *w, const char *s, size_t n);
void tt_jw_int(tt_jw *w, int64_t v);
void tt_jw_uint(tt_jw *w, uint64_t v);
/* "%.*f" (prec < 0: "%.17g", a float read back exactly); NaN, inf: null */
void tt_jw_num(tt_jw *w, double v, int prec);
/* v / 10^digits with exactly `digits` decimals, in integers (ns as µs:
 * tt_jw_fixed(w, 1500, 3) writes 1.500; -1 writes -0.001) */
void tt_jw_fixed(tt_jw *w, int64_t v, int digits_after);
void tt_jw_bool(tt_jw *w, int v);
void tt_jw_null(tt_jw *w);
/* one value that is JSON already (a trace's args object, a number kept as
 * its text); n == (size_t)-1: strlen */
void tt_jw_raw(tt_jw *w, const char *json, size_t n);

/* a key and its value */
static inline void tt_jw_kobj(tt_jw *w, const char *k) { tt_jw_key(w, k); tt_jw_obj(w); }
static inline void tt_jw_karr(tt_jw *w, const char *k) { tt_jw_key(w, k); tt_jw_arr(w); }
static inline void tt_jw_kstr(tt_jw *w, const char *k, const char *s) { tt_jw_key(w, k); tt_jw_str(w, s); }
static inline void tt_jw_kint(tt_jw *w, const char *k, int64_t v) { tt_jw_key(w, k); tt_jw_int(w, v); }
static inline void tt_jw_kuint(tt_jw *w, const char *k, uint64_t v) { tt_jw_key(w, k); tt_jw_uint(w, v); }
static inline void tt_jw_knum(tt_jw *w, const char *k, double v, int prec) { tt_jw_key(w, k); tt_jw_num(w, v, prec); }
static inline void tt_jw_kfixed(tt_jw *w, const char *k, int64_t v, int digits) { tt_jw_key(w, k); tt_jw_fixed(w, v, digits); }
static inline void tt_jw_kbool(tt_jw *w, const char *k, int v) { tt_jw_key(w, k); tt_jw_bool(w, v); }
static inline void tt_jw_knull(tt_jw *w, const char *k) { tt_jw_key(w, k); tt_jw_null(w); }
static inline void tt_jw_kraw(tt_jw *w, const char *k, const char *json) { tt_jw_key(w, k); tt_jw_raw(w, json, (size_t)-1); }

/* hand the text on when enough is buffered (a FILE or an output file; a
 * caller's buffer is the caller's): called by the writer after each
 * closing bracket, and by callers at a row's end if they like */
int tt_jw__flush(tt_jw *w, int force);

#endif
