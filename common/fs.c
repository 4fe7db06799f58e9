/*
 * common/fs.c - file-system questions shared by the writers of output files.
 */
#include "common/compat.h"

#include <errno.h>
#include <sys/stat.h>

int tt__path_kind(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? TT_PATH_MISSING : TT_PATH_OTHER;
    return S_ISREG(st.st_mode) ? TT_PATH_REGULAR : TT_PATH_OTHER;
}
