/*
** snapshot/format.c — the frame of the bytes a snapshot or a delta is
** (docs/SNAPSHOT.md is the format): the magic words, the checksum of
** every section, the layout hash the component table carries.
**
** A snapshot is a header and sections, every number little-endian (put32
** and get32, in internal.h):
**
**     header   "TECSSNAP" version flags                  (16 bytes + sum)
**     COMP     the component table, by name
**     ENTS     slots: generations, the free list in order
**     ARCH     one per archetype, in the world's order: its components, its rows'
**              slots, its values column by column, its enableable bits
**     SPRS     one per sparse component with members: slots, values
**     RSRC     the resources
**     END.
**
** Each section is its tag, its payload, then a trailer: the payload's
** length and its checksum (sum64 below), so a writer streams a section
** without knowing its length first, and a reader parses the payload by
** its structure and checks the trailer at its end. A delta (delta.c) is
** framed the same way behind its own magic word.
**
** Calls: nothing of the other snapshot files; the registry's entries
** (component) and their descriptions (meta) are read through inlines.
*/
#include "internal.h"

const unsigned char tecs__snap_magic[8] = { 'T', 'E', 'C', 'S', 'S', 'N', 'A', 'P' };
const unsigned char tecs__snap_magic_delta[8] = { 'T', 'E', 'C', 'S', 'D', 'L', 'T', 'A' };

/* sum64: a Fletcher-style sum over the input's 64-bit little-endian
** words, in four lanes (32 bytes a step): each lane adds the word to a,
** and a to b, modulo 2^64, so a changed word changes a, and two swapped
** words change b. The tail bytes go into lane 0 one by one; the lanes and
** the length are folded and mixed at the end. Adds only, so it keeps up
** with memcpy. Streaming: pieces of any size give the sum of the whole. */
#define SUM_PRIME 0x100000001b3ull
#define SUM_BASIS 0xcbf29ce484222325ull

void tecs__sum_init(sum64 *s)
{
    for (int i = 0; i < 4; i++)
        s->a[i] = s->b[i] = (uint64_t)i + 1;
    s->total = 0;
    s->nbuf = 0;
}

static inline uint64_t word_le(const unsigned char *p, bool big)
{
    uint64_t v;
    memcpy(&v, p, 8);
    if (big) {
        v = (v >> 32) | (v << 32);
        v = ((v & 0xffff0000ffff0000ull) >> 16) | ((v & 0x0000ffff0000ffffull) << 16);
        v = ((v & 0xff00ff00ff00ff00ull) >> 8) | ((v & 0x00ff00ff00ff00ffull) << 8);
    }
    return v;
}

static void sum_blocks(sum64 *s, const unsigned char *p, size_t n)
{
    uint64_t a[4], b[4];
    const bool big = host_big();
    memcpy(a, s->a, sizeof a);
    memcpy(b, s->b, sizeof b);
    for (size_t i = 0; i + 32 <= n; i += 32)
        for (int k = 0; k < 4; k++) {
            a[k] += word_le(p + i + 8 * k, big);
            b[k] += a[k];
        }
    memcpy(s->a, a, sizeof a);
    memcpy(s->b, b, sizeof b);
}

void tecs__sum_add(sum64 *s, const void *data, size_t n)
{
    const unsigned char *p = data;
    s->total += n;
    if (s->nbuf > 0) {
        size_t k = 32 - s->nbuf < n ? 32 - s->nbuf : n;
        memcpy(s->buf + s->nbuf, p, k);
        s->nbuf += (uint32_t)k, p += k, n -= k;
        if (s->nbuf < 32)
            return;
        sum_blocks(s, s->buf, 32);
        s->nbuf = 0;
    }
    size_t whole = n & ~(size_t)31;
    sum_blocks(s, p, whole);
    memcpy(s->buf, p + whole, n - whole);
    s->nbuf = (uint32_t)(n - whole);
}

/* sum_blocks, the bytes copied to dst on the way: one pass over them,
** each block read once into w, stored from w and summed from w. */
static void sum_copy_blocks(sum64 *s, unsigned char *restrict dst, const unsigned char *restrict p,
                            size_t n)
{
    uint64_t a[4], b[4];
    const bool big = host_big();
    memcpy(a, s->a, sizeof a);
    memcpy(b, s->b, sizeof b);
    for (size_t i = 0; i + 32 <= n; i += 32) {
        unsigned char w[32];
        memcpy(w, p + i, 32);
        memcpy(dst + i, w, 32);
        for (int k = 0; k < 4; k++) {
            a[k] += word_le(w + 8 * k, big);
            b[k] += a[k];
        }
    }
    memcpy(s->a, a, sizeof a);
    memcpy(s->b, b, sizeof b);
}

void tecs__sum_copy(sum64 *s, void *dst, const void *data, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *p = data;
    size_t head = s->nbuf == 0 ? 0 : 32 - s->nbuf < n ? 32 - s->nbuf : n;
    memcpy(d, p, head);
    tecs__sum_add(s, p, head);
    size_t whole = (n - head) & ~(size_t)31;
    sum_copy_blocks(s, d + head, p + head, whole);
    s->total += whole;
    memcpy(d + head + whole, p + head + whole, n - head - whole);
    tecs__sum_add(s, p + head + whole, n - head - whole);
}

uint64_t tecs__sum_end(const sum64 *s)
{
    uint64_t a0 = s->a[0], b0 = s->b[0];
    for (uint32_t i = 0; i < s->nbuf; i++) {
        a0 += s->buf[i] + 1u;
        b0 += a0;
    }
    uint64_t h = SUM_BASIS ^ s->total;
    uint64_t v[8] = { a0, b0, s->a[1], s->b[1], s->a[2], s->b[2], s->a[3], s->b[3] };
    for (int i = 0; i < 8; i++) {
        h = (h ^ v[i]) * SUM_PRIME;
        h ^= h >> 29;
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

/* The hash of a component's layout: what the loader compares. Its size,
** alignment, storage and enableable flag, and its description's layout
** hash (meta.c: names, types, offsets, counts) when it has one. A
** component a load registered keeps the hash it was saved with, so that
** saving it again gives the same snapshot. */
uint64_t tecs__snap_layout_hash(const tecs__comp *ci)
{
    if (ci->meta == NULL && ci->saved_hash != 0)
        return ci->saved_hash;
    unsigned char b[18];
    put32(b, ci->size);
    put32(b + 4, ci->align);
    b[8] = ci->sparse;
    b[9] = ci->enableable;
    put64(b + 10, ci->meta ? ci->meta->hash : 0);
    uint64_t h = SUM_BASIS;
    for (size_t i = 0; i < (ci->meta ? sizeof b : 10); i++)
        h = (h ^ b[i]) * SUM_PRIME;
    return h;
}
