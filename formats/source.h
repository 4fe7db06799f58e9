/*
 * formats/source.h - byte sources: a file, standard input or a gzip stream
 * (recognised by its magic bytes, not its name), read as decompressed bytes.
 * Internal to libtracetool.
 */
#ifndef TT_FORMATS_SOURCE_H
#define TT_FORMATS_SOURCE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct tt_source tt_source;

/* Open `path` ("-" = standard input). Gzip is detected by 1f 8b and inflated
 * on a second thread. On failure sets the last error (TT_EIO, TT_EEMPTY). */
int tt_source_open(tt_source **out, const char *path);
/* Wrap a memory buffer (not copied; must outlive the source). */
int tt_source_open_mem(tt_source **out, const char *name, const void *data,
                       size_t len);
/* Read up to n decompressed bytes. >0: bytes read, 0: end of input, <0: error
 * code (TT_ETRUNCATED for a gzip stream cut short, TT_EINVALID, TT_EIO). */
ssize_t tt_source_read(tt_source *s, void *buf, size_t n);
const char *tt_source_name(const tt_source *s);
int tt_source_is_gzip(const tt_source *s);
/* Size of the file on disk (-1 if not a regular file) and bytes consumed
 * from it so far (compressed bytes for gzip). */
int64_t tt_source_file_size(const tt_source *s);
int64_t tt_source_file_pos(const tt_source *s);
/* Hash of every decompressed byte read so far: 32 hex digits + NUL. */
void tt_source_hash_hex(tt_source *s, char out[33]);
void tt_source_free(tt_source *s);
/* Tests: make every read return at most n bytes (0 = no limit), to exercise
 * values split across reads at every byte. */
void tt_source_set_max_read(tt_source *s, size_t n);

#endif
