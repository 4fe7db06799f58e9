/*
 * common/log.h - the library's log messages, to the callback of tt_set_log
 * (include/tracetool/common.h) and nowhere without one. Internal.
 */
#ifndef TT_COMMON_LOG_H
#define TT_COMMON_LOG_H

#include "tracetool/common.h"

/* 1 when a message of this level would be delivered (to skip the work of
 * making one: a clock read, a format) */
int tt__log_enabled(int level);
/* Deliver "TOPIC: " + the formatted text (at most 1 KiB) at `level`. */
void tt__log(int level, const char *topic, const char *fmt, ...) TT_PRINTF(3, 4);

#endif
