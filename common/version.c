/*
 * common/version.c - the library's version at run time (a program or the
 * Python module may load a libtracetool.so other than the headers it was
 * built with).
 */
#include "tracetool/common.h"

const char *tt_version(void)
{
    return TT_VERSION;
}
