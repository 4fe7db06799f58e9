/*
 * tracetool/call.h - every analysis through one call, options and result as
 * JSON text: what bindings use (`import tracetool`, python/), so that they
 * mirror no C struct and run in the caller's process.
 *
 *   char *out = NULL; size_t len = 0; int code = 0;
 *   int rc = tt_call("averages", inputs, 1,
 *                    "{\"group_by_shape\": true, \"sort_by\": \"self_cpu_time_total\"}",
 *                    &out, &len, &code);
 *   ... out: the JSON `tracetool averages --group-by-shape --sort-by ... --format json`
 *       prints, byte for byte ...
 *   tt_call_free(out);
 *
 * command: a CLI command name ("info", "averages", "kernels", "breakdown",
 * "memtimeline", "crosscheck", "diff", "queue", "bandwidth", "critical-path",
 * "collectives"). inputs: what the CLI takes as INPUT (a trace file, a
 * directory of rank files, a database, a summary; diff: BASE then NEW).
 * options: a JSON object whose keys are the command's long option names
 * with '-' written '_' ("group_by_shape", "row_limit", "time_range"), values
 * as the CLI takes them (true for a flag, a number, a string, a list for an
 * option given several times); NULL or "{}" for none. The output format is
 * always JSON ("format" is refused); options that write files
 * (--html, --save-summary, --overlay, ...) are refused too.
 *
 * Returns 0 with *out (malloc'd, NUL-terminated, *len bytes) and *exit_code
 * the CLI's exit code for that result (diff: 0 unchanged, 1 regressed, ...);
 * or a negative tt_error_code with tt_error_last() holding the CLI's one-line
 * message, *exit_code the CLI's exit code for it (2 usage: an unknown option
 * or a bad value; 3 bad input; 4 I/O; ...) and *out NULL. Thread-safe as
 * the analyses are (each call its own state); it never prints or exits.
 */
#ifndef TRACETOOL_CALL_H
#define TRACETOOL_CALL_H

#include <stddef.h>

#include "tracetool/common.h"

TT_BEGIN_DECL

TT_EXTERN(int) tt_call(const char *command, const char *const *inputs, size_t ninputs,
                       const char *options, char **out, size_t *len, int *exit_code);
/* free tt_call's output; NULL is a no-op */
TT_EXTERN(void) tt_call_free(char *out);

TT_END_DECL

#endif
