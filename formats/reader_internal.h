/*
 * formats/reader_internal.h - reading from an already opened tt_source
 * (used by tt_read_trace and by tests that need a custom source). Internal.
 */
#ifndef TT_FORMATS_READER_INTERNAL_H
#define TT_FORMATS_READER_INTERNAL_H

#include "formats/source.h"
#include "tracetool/formats.h"

void tt__init_stats(tt_read_stats *st);
/* The caller keeps ownership of src. */
int tt__read_source(tt_source *src, const tt_trace_sink *sink,
                    const tt_read_options *opts, tt_read_stats *st);

/* A deep copy of ev in one allocation (free() it); NULL if out of memory. */
tt_event *tt__event_clone(const tt_event *ev);

/* formats/trace_reader.c: tt_read_trace on the calling thread (formats/pipe.c
 * holds tt_read_trace, which runs this here or on a second thread) */
int tt__read_trace_direct(const char *path, const tt_trace_sink *sink,
                          const tt_read_options *opts, tt_read_stats *stats);

#endif
