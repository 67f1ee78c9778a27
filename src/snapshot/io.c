/*
** snapshot/io.c — the stdio and memory adapters: a snapshot or a delta
** saved to a FILE or a tecs_snapshot_buf_t, and loaded or applied from a
** FILE or bytes in memory. Each is a writer or a reader over the calls of
** save.c, load.c and delta.c; the memory reader also tells the bytes left
** (mem_left, so that the loader reserves what they back at once) and lends
** them in place (mem_view, so that the loader reads them without a copy).
**
** Calls: save, load, delta (their public calls, tecs__save_mem_write,
** tecs__load_with, tecs__delta_apply_with); alloc.
*/
#include "internal.h"

#include <errno.h>
#include <stdlib.h>

static tecs_err_t file_write(void *ctx, const void *data, size_t n)
{
    return fwrite(data, 1, n, ctx) == n ? TECS_OK : TECS_EINVAL;
}

static tecs_err_t file_read(void *ctx, void *data, size_t n)
{
    if (fread(data, 1, n, ctx) == n)
        return TECS_OK;
    return ferror((FILE *)ctx) ? TECS_EINVAL : TECS_EFORMAT;
}

tecs_err_t tecs_snapshot_save_file(tecs_world_t *w, FILE *f)
{
    if (w != NULL && f == NULL)
        return tecs__err(w, TECS_EINVAL, "NULL file");
    errno = 0;
    tecs_err_t err = tecs_snapshot_save(w, file_write, f);
    if (err == TECS_OK && fflush(f) != 0)
        err = TECS_EINVAL;
    if (w != NULL && err == TECS_EINVAL && errno != 0)
        tecs__err(w, err, "writing the snapshot: %s", strerror(errno));
    return err;
}

tecs_err_t tecs_snapshot_load_file(tecs_world_t *w, FILE *f)
{
    if (w != NULL && f == NULL)
        return tecs__err(w, TECS_EINVAL, "NULL file");
    return tecs_snapshot_load(w, file_read, f);
}

tecs_err_t tecs_snapshot_save_mem(tecs_world_t *w, tecs_snapshot_buf_t *buf)
{
    if (w != NULL && buf == NULL)
        return tecs__err(w, TECS_EINVAL, "NULL buffer");
    if (buf)
        buf->size = 0;
    tecs_err_t err = tecs_snapshot_save(w, tecs__save_mem_write, buf);
    if (err && buf)
        buf->size = 0;
    return err;
}

void tecs_snapshot_buf_free(tecs_snapshot_buf_t *buf)
{
    if (buf == NULL)
        return;
    free(buf->data);
    *buf = (tecs_snapshot_buf_t){ 0 };
}

typedef struct mem_in {
    const unsigned char *p;
    size_t left;
} mem_in;

static tecs_err_t mem_read(void *ctx, void *data, size_t n)
{
    mem_in *m = ctx;
    if (n > m->left)
        return TECS_EFORMAT;
    memcpy(data, m->p, n);
    m->p += n;
    m->left -= n;
    return TECS_OK;
}

static size_t mem_left(void *ctx)
{
    return ((mem_in *)ctx)->left;
}

static const unsigned char *mem_view(void *ctx, size_t n)
{
    mem_in *m = ctx;
    if (n > m->left)
        return NULL;
    m->p += n;
    m->left -= n;
    return m->p - n;
}

tecs_err_t tecs_snapshot_load_mem(tecs_world_t *w, const void *data, size_t size)
{
    if (w != NULL && data == NULL && size > 0)
        return tecs__err(w, TECS_EINVAL, "NULL data");
    mem_in m = { data, size };
    return tecs__load_with(w, mem_read, &m, mem_left, mem_view);
}

tecs_err_t tecs_delta_save_mem(tecs_world_t *w, tecs_mark_t *mark, tecs_snapshot_buf_t *buf)
{
    if (w != NULL && buf == NULL)
        return tecs__err(w, TECS_EINVAL, "NULL buffer");
    if (buf)
        buf->size = 0;
    tecs_err_t err = tecs_delta_save(w, mark, tecs__save_mem_write, buf);
    if (err && buf)
        buf->size = 0;
    return err;
}

tecs_err_t tecs_delta_apply_mem(tecs_world_t *w, const void *data, size_t size)
{
    if (w != NULL && data == NULL && size > 0)
        return tecs__err(w, TECS_EINVAL, "NULL data");
    mem_in m = { data, size };
    return tecs__delta_apply_with(w, mem_read, &m, mem_left);
}
