/*
 * tracetool/common.h - definitions shared by every tracetool module:
 * export macros, return codes and the last-error record.
 *
 * Every function of libtracetool returns an int: 0 (TT_OK) on success or a
 * negative tt_error_code. The detailed message, the input name and the byte
 * offset of the problem are kept in a thread-local record read with
 * tt_error_last(). The library never prints and never exits: its few
 * diagnostic messages go to the callback of tt_set_log (below).
 */
#ifndef TRACETOOL_COMMON_H
#define TRACETOOL_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#define TT_BEGIN_DECL extern "C" {
#define TT_END_DECL }
#else
#define TT_BEGIN_DECL
#define TT_END_DECL
#endif

#if defined(__GNUC__)
#define TT_EXTERN(type) extern __attribute__((visibility("default"))) type
#define TT_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define TT_EXTERN(type) extern type
#define TT_PRINTF(f, a)
#endif

#define TT_VERSION "0.1.0"

TT_BEGIN_DECL

/* TT_VERSION of the library linked or loaded (it may differ from the headers'). */
TT_EXTERN(const char *) tt_version(void);

/* Return codes. Append only; never renumber. */
typedef enum tt_error_code {
    TT_OK = 0,
    TT_ERROR = -1,       /* generic failure; see tt_error_last() */
    TT_ENOMEM = -2,      /* out of memory */
    TT_EIO = -3,         /* read/write error, missing file */
    TT_EINVALID = -4,    /* malformed input (syntax, wrong shape) */
    TT_ENOTFOUND = -5,   /* no such trace, file or key */
    TT_EUNSUPPORTED = -6, /* input of a kind we do not read (not JSON, not a
                             trace, the wrong kind of trace for an analysis) */
    TT_ITEROVER = -7,    /* end of iteration, not an error */
    TT_ETRUNCATED = -8,  /* input ends before the document is complete */
    TT_EEXISTS = -9,     /* already present (e.g. trace already ingested) */
    TT_EDB = -10,        /* SQLite error */
    TT_EEMPTY = -11,     /* empty input */
    TT_ECANCELED = -12   /* stopped by a callback */
} tt_error_code;

/* The last error raised on this thread. Fields are valid until the next
 * library call on the same thread that fails. */
typedef struct tt_error {
    int code;             /* a tt_error_code */
    char message[512];    /* lowercase, no trailing full stop */
    char source[512];     /* file name ("-" for stdin), "" if none */
    int64_t offset;       /* byte offset in the (decompressed) input, -1 if none */
} tt_error;

/* Never NULL. */
TT_EXTERN(const tt_error *) tt_error_last(void);

/* The tracetool program's exit code for a return code (README.md, "Exit
 * codes"): 0 ok, 3 bad input, 4 I/O or database, 5 exists, 70 internal. */
TT_EXTERN(int) tt_exit_code(int code);

/* Short static description of a code ("out of memory", ...). */
TT_EXTERN(const char *) tt_strerror(int code);

/* Formats "SOURCE: byte N: MESSAGE" (parts omitted when unknown) into buf. */
TT_EXTERN(void) tt_error_format(const tt_error *e, char *buf, size_t size);

/*
 * Log messages. The library's few diagnostic messages go to a callback the
 * program installs, and nowhere when it installs none (the default). Each
 * message is one line without its newline, starting with its topic and a
 * colon, e.g. "timing: commit       0.012 s". The topics:
 *   "timing"       phase times of ingest and memtimeline       TT_LOG_INFO
 *   "averages"     which way averages read a file              TT_LOG_DEBUG
 *   "memtimeline"  where memtimeline's events came from        TT_LOG_DEBUG
 *   "breakdown"    which way breakdown read each trace file    TT_LOG_DEBUG
 * (the tracetool program prints them with TT_TIMING=1, TT_DEBUG_AVG=1 and
 * TT_DEBUG_MEMTL=1 in its environment).
 *
 * tt_set_log(fn, ctx, level) delivers the messages of `level` and above to
 * fn(ctx, ...); fn NULL delivers none. Process-wide and safe from any
 * thread: once it returns, the callback it replaced is not running and is
 * not called again. fn may be called from several library threads at once,
 * and must not call tt_set_log.
 */
typedef enum tt_log_level {
    TT_LOG_DEBUG = 10, /* how an analysis went about its work */
    TT_LOG_INFO = 20   /* measurements (phase times) */
} tt_log_level;
typedef void (*tt_log_fn)(void *ctx, int level, const char *topic, const char *msg);
TT_EXTERN(void) tt_set_log(tt_log_fn fn, void *ctx, int level);

/*
 * The trace files under a directory: regular files named *.json or *.gz
 * (hidden ones and hidden directories left out), in sorted order, found
 * through sub-directories and symbolic links. Each directory and each file
 * is taken once however many links lead to it: a link to a directory
 * already walked (a loop, or a second way into it) is listed in `loops` and
 * not followed.
 */
typedef struct tt_dir_walk {
    char **files;
    size_t nfiles;
    char **loops;   /* links to a directory already walked */
    size_t nloops;
    char **unreadable; /* directories that could not be read */
    size_t nunreadable;
} tt_dir_walk;

/* 0 (even when nothing is found), or TT_ENOMEM; *w is filled either way and
 * must be freed. */
TT_EXTERN(int) tt_walk_traces(const char *dir, tt_dir_walk *w);
TT_EXTERN(void) tt_dir_walk_free(tt_dir_walk *w);

/*
 * How every analysis prints its result (the options' `format`): an aligned
 * text table, CSV (RFC 4180, a header row), one JSON document, a Markdown
 * table; `tracetool diff` also writes JUnit XML and GitHub annotations.
 */
typedef enum tt_output_format {
    TT_FORMAT_TABLE = 0,
    TT_FORMAT_CSV,
    TT_FORMAT_JSON,
    TT_FORMAT_MARKDOWN,
    TT_FORMAT_JUNIT,
    TT_FORMAT_GITHUB
} tt_output_format;

/*
 * For programs: when SIGINT, SIGTERM or SIGHUP ends the process, first
 * remove the output files tracetool is writing under a temporary name
 * (OUT.tmp, OUT.XXXXXX), then die of the signal as before. A signal that is
 * ignored or handled when this is called (nohup, a shell's trap) is left as
 * it is. The library never installs handlers by itself.
 */
TT_EXTERN(void) tt_remove_partial_outputs_on_signals(void);

TT_END_DECL

#endif
