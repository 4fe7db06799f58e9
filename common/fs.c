/*
 * common/fs.c - the temporary files of the library, the registry of partial
 * outputs (removed when a signal ends the process) and the walk of a
 * directory of traces (compat.h). Output files are written by report/out.c.
 */
#include "common/compat.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <unistd.h>

const char *tt__tmpdir(void)
{
    const char *d = getenv("TMPDIR");
    struct stat st;
    if (d && *d && stat(d, &st) == 0 && S_ISDIR(st.st_mode))
        return d;
    return "/tmp";
}

int tt__mkstemp(char *buf, size_t cap, const char *what)
{
    const char *dir = tt__tmpdir();
    size_t dl = strlen(dir);
    int n, fd;
    mode_t old;
    while (dl > 1 && dir[dl - 1] == '/')
        dl--;
    n = snprintf(buf, cap, "%.*s/tracetool-%s-XXXXXX", (int)dl, dir, what);
    if (n < 0 || (size_t)n >= cap) {
        tt_error_set(TT_EIO, "cannot create a temporary file in %s: path too long", dir);
        return -1;
    }
    old = umask(077); /* mkstemp makes 0600 already; be sure */
    fd = mkstemp(buf);
    umask(old);
    if (fd < 0) {
        int e = errno;
        tt_error_set(TT_EIO, "cannot create a temporary file in %s: %s (set TMPDIR to"
                             " another directory)", dir, strerror(e));
        return -1;
    }
    return fd;
}

FILE *tt__tmpfile(void)
{
    char path[4096];
    int fd = tt__mkstemp(path, sizeof(path), "spool");
    FILE *f;
    if (fd < 0)
        return NULL;
    unlink(path);
    if (!(f = fdopen(fd, "w+b"))) {
        close(fd);
        tt_error_set(TT_EIO, "cannot use a temporary file: %s", strerror(errno));
    }
    return f;
}

/* ---- partial outputs: removed when a signal ends the process ---- */

#define NPARTIAL 16
static _Atomic(char *) partial[NPARTIAL];

int tt__partial_add(const char *path)
{
    char *copy = strdup(path);
    int i;
    for (i = 0; copy && i < NPARTIAL; i++) {
        char *none = NULL;
        if (atomic_compare_exchange_strong(&partial[i], &none, copy))
            return i;
    }
    free(copy);
    return -1;
}

void tt__partial_remove(int slot)
{
    if (slot >= 0 && slot < NPARTIAL)
        free(atomic_exchange(&partial[slot], NULL));
}

static void on_fatal_signal(int sig)
{
    int i, e = errno;
    for (i = 0; i < NPARTIAL; i++) {
        char *p = atomic_load(&partial[i]);
        if (p)
            unlink(p); /* async-signal-safe; the name is never freed here */
    }
    errno = e;
    signal(sig, SIG_DFL);
    raise(sig);
}

void tt_remove_partial_outputs_on_signals(void)
{
    static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
    size_t i;
    for (i = 0; i < TT_ARRAY_SIZE(sigs); i++) {
        struct sigaction old, sa;
        if (sigaction(sigs[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL ||
            (old.sa_flags & SA_SIGINFO))
            continue; /* ignored (nohup) or someone else's: leave it */
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = on_fatal_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
}

/* ---- tt_walk_traces ---- */

struct seen {
    dev_t *dev;
    ino_t *ino;
    size_t n, cap; /* open addressing, cap a power of two (0: empty) */
};

static size_t seen_slot(const struct seen *t, dev_t d, ino_t i)
{
    uint64_t h = ((uint64_t)i * 0x9E3779B97F4A7C15ull) ^ (uint64_t)d;
    size_t k = (size_t)(h ^ (h >> 29)) & (t->cap - 1);
    while (t->ino[k] && !(t->ino[k] == i && t->dev[k] == d))
        k = (k + 1) & (t->cap - 1);
    return k;
}

/* 1 if (d, i) was there already, 0 if it is added now, TT_ENOMEM */
static int seen_add(struct seen *t, dev_t d, ino_t i)
{
    size_t k;
    if (i == 0)
        i = (ino_t)-1; /* 0 marks an empty slot */
    if (2 * (t->n + 1) > t->cap) {
        struct seen g = { NULL, NULL, 0, t->cap ? 2 * t->cap : 64 };
        size_t j;
        g.dev = calloc(g.cap, sizeof(*g.dev));
        g.ino = calloc(g.cap, sizeof(*g.ino));
        if (!g.dev || !g.ino) {
            free(g.dev);
            free(g.ino);
            return TT_ENOMEM;
        }
        for (j = 0; j < t->cap; j++) {
            if (t->ino[j]) {
                k = seen_slot(&g, t->dev[j], t->ino[j]);
                g.dev[k] = t->dev[j];
                g.ino[k] = t->ino[j];
                g.n++;
            }
        }
        free(t->dev);
        free(t->ino);
        *t = g;
    }
    k = seen_slot(t, d, i);
    if (t->ino[k])
        return 1;
    t->dev[k] = d;
    t->ino[k] = i;
    t->n++;
    return 0;
}

struct walker {
    tt_dir_walk *w;
    struct seen dirs, files;
    size_t afiles, aloops, aunread;
};

static int push(char ***v, size_t *n, size_t *alloc, char *s)
{
    if (TT_ALLOC_GROW(*v, *n + 1, *alloc) < 0) {
        free(s);
        return TT_ENOMEM;
    }
    (*v)[(*n)++] = s;
    return 0;
}

static int trace_name(const char *name)
{
    size_t n = strlen(name);
    return (n > 5 && !strcmp(name + n - 5, ".json")) || (n > 3 && !strcmp(name + n - 3, ".gz"));
}

static int walk_dir(struct walker *k, const char *dir, int depth)
{
    struct dirent **ents;
    size_t dl = strlen(dir);
    int n, i, rc = 0;
    while (dl > 1 && dir[dl - 1] == '/')
        dl--;
    if ((n = scandir(dir, &ents, NULL, alphasort)) < 0) {
        char *d = strdup(dir);
        return d ? push(&k->w->unreadable, &k->w->nunreadable, &k->aunread, d) : TT_ENOMEM;
    }
    for (i = 0; i < n; i++) {
        const char *nm = ents[i]->d_name;
        struct stat st;
        char *path = NULL;
        if (rc == 0 && nm[0] != '.' && asprintf(&path, "%.*s/%s", (int)dl, dir, nm) < 0)
            rc = TT_ENOMEM;
        if (rc == 0 && path && stat(path, &st) == 0) {
            if (S_ISDIR(st.st_mode)) {
                int again = seen_add(&k->dirs, st.st_dev, st.st_ino);
                if (again < 0)
                    rc = again;
                else if (again || depth > 64) {
                    rc = push(&k->w->loops, &k->w->nloops, &k->aloops, path);
                    path = NULL;
                } else {
                    rc = walk_dir(k, path, depth + 1);
                }
            } else if (S_ISREG(st.st_mode) && trace_name(nm)) {
                int again = seen_add(&k->files, st.st_dev, st.st_ino);
                if (again < 0)
                    rc = again;
                else if (!again) {
                    rc = push(&k->w->files, &k->w->nfiles, &k->afiles, path);
                    path = NULL;
                }
            }
        }
        free(path);
        free(ents[i]);
    }
    free(ents);
    return rc;
}

int tt_walk_traces(const char *dir, tt_dir_walk *w)
{
    struct walker k;
    struct stat st;
    int rc = 0;
    memset(w, 0, sizeof(*w));
    memset(&k, 0, sizeof(k));
    k.w = w;
    if (stat(dir, &st) == 0 && (rc = seen_add(&k.dirs, st.st_dev, st.st_ino)) >= 0)
        rc = walk_dir(&k, dir, 0);
    free(k.dirs.dev);
    free(k.dirs.ino);
    free(k.files.dev);
    free(k.files.ino);
    if (rc < 0)
        return tt__oom();
    return 0;
}

static void free_list(char **v, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

void tt_dir_walk_free(tt_dir_walk *w)
{
    if (!w)
        return;
    free_list(w->files, w->nfiles);
    free_list(w->loops, w->nloops);
    free_list(w->unreadable, w->nunreadable);
    memset(w, 0, sizeof(*w));
}
