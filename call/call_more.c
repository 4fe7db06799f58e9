/*
 * call/call_more.c - tt_call's commands still to come.
 */
#include "call/call_internal.h"

#define TC_LATER(fn)                                                                 \
    int fn(tc *t)                                                                  \
    {                                                                              \
        return tc_usage(t, "not available through tt_call yet");                    \
    }
TC_LATER(tc_breakdown)
TC_LATER(tc_queue)
TC_LATER(tc_bandwidth)
TC_LATER(tc_collectives)
TC_LATER(tc_critpath)
TC_LATER(tc_memtimeline)
TC_LATER(tc_crosscheck)
TC_LATER(tc_diff)
