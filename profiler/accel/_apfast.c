/* Compiled hot path of the profile job (optional; profiler/accel/fast.py picks it or the pure-Python code).
 *
 * Expander: the step-1 reducer (profiler.job.expand.Expander): one URI-R's cells -> key records
 * (b'K <key>', JSON bytes of [total, min, max, urir, bytes, digests, dedup_bytes, first, last]) and digest
 * records (b'D <digest>', [urlkey, [[period, mime, status, max_len], ...]]). The records differ
 * in how they are cut into partial records from the Python Expander's, never in their sums.
 * Step 2 uses an Expander of its own for the corrections of digests that several URI-Rs hold
 * (correct(), take_digest_keys(), end_digest_raw(); profiler.job.digests.compiled_corrections).
 *
 * Aggregator: the map side (profiler.job.mapside.CaptureAggregator) with a CDX line parser
 * (profiler.formats.cdx.make_parser) for the lines that need no surt() call and no escaping; other
 * lines are handed back to Python, whose captures are added with add_capture().
 *
 * Every string is handled as the UTF-8 bytes of the Python str; the operations used
 * (prefixes, find of ASCII bytes, comparisons) give the same results on code points and bytes.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <limits.h>
#include <errno.h>
#ifndef _WIN32
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#endif
#ifdef __GLIBC__
#include <malloc.h>
#endif
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* ------------------------------------------------------------------ byte buffers */

typedef struct { char *p; Py_ssize_t n, cap; } Buf;

static int buf_reserve(Buf *b, Py_ssize_t extra) {
    if (b->n + extra <= b->cap) return 0;
    Py_ssize_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + extra) cap *= 2;
    char *p = PyMem_Realloc(b->p, cap);
    if (!p) { PyErr_NoMemory(); return -1; }
    b->p = p; b->cap = cap;
    return 0;
}
static inline int buf_put(Buf *b, const char *s, Py_ssize_t n) {
    if (buf_reserve(b, n) < 0) return -1;
    memcpy(b->p + b->n, s, n); b->n += n;
    return 0;
}
static inline int buf_putc(Buf *b, char c) { return buf_put(b, &c, 1); }
static inline int buf_put_u32(Buf *b, uint32_t v) { return buf_put(b, (const char *)&v, 4); }
static void buf_free(Buf *b) { PyMem_Free(b->p); b->p = NULL; b->n = b->cap = 0; }

/* ------------------------------------------------------------------ hash map: bytes -> insertion index */

typedef struct { Py_ssize_t off, len, slot; uint64_t h; } Ent;
typedef struct {
    Ent *ents; Py_ssize_t n, ecap;
    Py_ssize_t *slots; Py_ssize_t nslots;     /* power of two, -1 = empty */
    Buf keys;
} Map;

static inline uint64_t hash_bytes(const char *s, Py_ssize_t n) {
    /* 8 bytes at a time (FNV-1a's byte loop was a quarter of the step-1 reducer), then
     * splitmix64's finaliser so that the low bits that pick a slot depend on every byte */
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (uint64_t)n, v;
    for (; n >= 8; s += 8, n -= 8) {
        memcpy(&v, s, 8);
        h = (h ^ v) * 0xBF58476D1CE4E5B9ULL;
        h ^= h >> 32;
    }
    v = 0;
    memcpy(&v, s, (size_t)n);
    h = (h ^ v) * 0x94D049BB133111EBULL;
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ULL;
    return h ^ (h >> 29);
}

static int map_init(Map *m) {
    memset(m, 0, sizeof *m);
    m->nslots = 16;
    m->slots = PyMem_Malloc(m->nslots * sizeof(Py_ssize_t));
    if (!m->slots) { PyErr_NoMemory(); return -1; }
    for (Py_ssize_t i = 0; i < m->nslots; i++) m->slots[i] = -1;
    return 0;
}
static void map_free(Map *m) {
    PyMem_Free(m->ents); PyMem_Free(m->slots); buf_free(&m->keys);
    memset(m, 0, sizeof *m);
}
static void map_clear(Map *m) {
    for (Py_ssize_t i = 0; i < m->n; i++) m->slots[m->ents[i].slot] = -1;
    m->n = 0; m->keys.n = 0;
}
static inline const char *map_key(const Map *m, Py_ssize_t i) { return m->keys.p + m->ents[i].off; }

static int map_grow(Map *m) {
    Py_ssize_t ns = m->nslots * 2;
    Py_ssize_t *slots = PyMem_Malloc(ns * sizeof(Py_ssize_t));
    if (!slots) { PyErr_NoMemory(); return -1; }
    for (Py_ssize_t i = 0; i < ns; i++) slots[i] = -1;
    for (Py_ssize_t i = 0; i < m->n; i++) {
        Py_ssize_t s = (Py_ssize_t)(m->ents[i].h & (uint64_t)(ns - 1));
        while (slots[s] >= 0) s = (s + 1) & (ns - 1);
        slots[s] = i; m->ents[i].slot = s;
    }
    PyMem_Free(m->slots); m->slots = slots; m->nslots = ns;
    return 0;
}

/* Index of key k with hash h, or -1; *slot: its slot, or the empty slot where it would go */
static Py_ssize_t map_probe(const Map *m, const char *k, Py_ssize_t kl, uint64_t h, Py_ssize_t *slot) {
    Py_ssize_t mask = m->nslots - 1, s = (Py_ssize_t)(h & (uint64_t)mask);
    for (;;) {
        Py_ssize_t i = m->slots[s];
        if (i < 0) break;
        const Ent *e = &m->ents[i];
        if (e->h == h && e->len == kl && memcmp(m->keys.p + e->off, k, kl) == 0) { *slot = s; return i; }
        s = (s + 1) & mask;
    }
    *slot = s;
    return -1;
}

/* Index of key k, or -1 when it is absent. */
static inline Py_ssize_t map_find(const Map *m, const char *k, Py_ssize_t kl) {
    Py_ssize_t slot;
    return map_probe(m, k, kl, hash_bytes(k, kl), &slot);
}

/* Index of key k (added when absent: *added = 1). -1 on memory error. */
static Py_ssize_t map_find_or_add(Map *m, const char *k, Py_ssize_t kl, int *added) {
    uint64_t h = hash_bytes(k, kl);
    Py_ssize_t s, found = map_probe(m, k, kl, h, &s);
    if (found >= 0) { *added = 0; return found; }
    if (m->n == m->ecap) {
        Py_ssize_t cap = m->ecap ? m->ecap * 2 : 16;
        Ent *ents = PyMem_Realloc(m->ents, cap * sizeof(Ent));
        if (!ents) { PyErr_NoMemory(); return -1; }
        m->ents = ents; m->ecap = cap;
    }
    Py_ssize_t off = m->keys.n;
    if (buf_put(&m->keys, k, kl) < 0) return -1;
    Py_ssize_t i = m->n++;
    m->ents[i].off = off; m->ents[i].len = kl; m->ents[i].h = h; m->ents[i].slot = s;
    m->slots[s] = i;
    *added = 1;
    if (m->n * 2 > m->nslots && map_grow(m) < 0) return -1;
    return i;
}

/* ------------------------------------------------------------------ digest filter
 *
 * Which payload digests more than one map record holds (profiler.runtime.digestfilter): a blocked Bloom
 * filter of two bitmaps, "in one record" and "in two or more", set by the map tasks; step 1 writes
 * a digest record only for a digest the merged "two or more" bitmap holds. A bitmap is a power of
 * two of 64-byte blocks; a digest's hash_bytes() picks a block with its bits 36 and up and four
 * bits in it with bits 0-35, 9 at a time. A false "two or more" costs a digest record that step 2
 * skips; there are no false "one". */

#define FILTER_BLOCK 64
#define FILTER_BITS 4

static const char *utf8(PyObject *o, Py_ssize_t *n);

typedef struct { Py_buffer view; int on; Py_ssize_t nbytes; } Filter;   /* nbytes: of one bitmap */

static inline unsigned char *filter_block(unsigned char *bits, Py_ssize_t nbytes, uint64_t h) {
    return bits + (Py_ssize_t)((h >> 36) & (uint64_t)(nbytes / FILTER_BLOCK - 1)) * FILTER_BLOCK;
}
static inline int block_has(const unsigned char *blk, uint64_t h) {
    for (int i = 0; i < FILTER_BITS; i++) {
        unsigned b = (unsigned)(h >> (9 * i)) & 511;
        if (!(blk[b >> 3] >> (b & 7) & 1)) return 0;
    }
    return 1;
}
static inline void block_set(unsigned char *blk, uint64_t h) {
    for (int i = 0; i < FILTER_BITS; i++) {
        unsigned b = (unsigned)(h >> (9 * i)) & 511;
        blk[b >> 3] |= (unsigned char)(1u << (b & 7));
    }
}
static inline int filter_size_ok(Py_ssize_t n) { return n >= FILTER_BLOCK && (n & (n - 1)) == 0; }

/* take a buffer of `halves` bitmaps (writable for the map side's two) into f; None: no filter */
static int filter_take(Filter *f, PyObject *obj, int halves) {
    if (f->on) { PyBuffer_Release(&f->view); f->on = 0; }
    if (obj == Py_None) return 0;
    if (PyObject_GetBuffer(obj, &f->view, halves == 2 ? PyBUF_WRITABLE : PyBUF_SIMPLE) < 0) return -1;
    Py_ssize_t n = f->view.len / halves;
    if (f->view.len % halves || !filter_size_ok(n)) {
        PyBuffer_Release(&f->view);
        PyErr_SetString(PyExc_ValueError, "a digest filter's bitmaps are a power of two of 64-byte blocks");
        return -1;
    }
    f->nbytes = n; f->on = 1;
    return 0;
}
static void filter_release(Filter *f) { if (f->on) { PyBuffer_Release(&f->view); f->on = 0; } }

/* a digest filter's "two or more" bitmap holds h (no filter: every digest) */
static inline int filter_shared(const Filter *f, uint64_t h) {
    return !f->on || block_has(filter_block(f->view.buf, f->nbytes, h), h);
}

static int u64_cmp(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* the digests of one record (hashes hs[0:n], in any order, repeats allowed) into the map side's
 * bitmaps: each distinct one in "two or more" when "one" holds it already, and in "one" */
static void filter_add_record(unsigned char *bits, Py_ssize_t nbytes, uint64_t *hs, Py_ssize_t n) {
    if (n > 16) qsort(hs, (size_t)n, sizeof *hs, u64_cmp);
    for (Py_ssize_t i = 0; i < n; i++) {
        uint64_t h = hs[i];
        int dup = 0;
        if (n > 16) dup = i > 0 && hs[i - 1] == h;
        else for (Py_ssize_t j = 0; j < i && !dup; j++) dup = hs[j] == h;
        if (dup) continue;
        unsigned char *one = filter_block(bits, nbytes, h);
        if (block_has(one, h)) block_set(one + nbytes, h);
        else block_set(one, h);
    }
}

/* digest_filter_add(filter, digests): one map record's digests (str or bytes; '-' is none) into a
 * map task's filter (a bytearray of its two bitmaps) */
static PyObject *digest_filter_add(PyObject *unused, PyObject *args) {
    PyObject *fo, *digests;
    if (!PyArg_ParseTuple(args, "OO", &fo, &digests)) return NULL;
    Filter f = {0};
    if (filter_take(&f, fo, 2) < 0) return NULL;
    PyObject *seq = PySequence_Fast(digests, "digests must be a sequence");
    if (!seq) { filter_release(&f); return NULL; }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq), k = 0;
    uint64_t *hs = PyMem_Malloc((n ? n : 1) * sizeof *hs);
    if (!hs) { Py_DECREF(seq); filter_release(&f); return PyErr_NoMemory(); }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *d = PySequence_Fast_GET_ITEM(seq, i);
        const char *s; Py_ssize_t sn;
        if (PyBytes_Check(d)) { s = PyBytes_AS_STRING(d); sn = PyBytes_GET_SIZE(d); }
        else if (!(s = utf8(d, &sn))) { PyMem_Free(hs); Py_DECREF(seq); filter_release(&f); return NULL; }
        if (sn == 1 && s[0] == '-') continue;
        hs[k++] = hash_bytes(s, sn);
    }
    filter_add_record(f.view.buf, f.nbytes, hs, k);
    PyMem_Free(hs); Py_DECREF(seq); filter_release(&f);
    Py_RETURN_NONE;
}

/* digest_filter_merge(one, two, its_one, its_two) -> bits set in two: one map task's bitmaps
 * (part of them) into the merged ones: two |= its_two | (one & its_one); one |= its_one */
static PyObject *digest_filter_merge(PyObject *unused, PyObject *args) {
    Py_buffer v[4];
    if (!PyArg_ParseTuple(args, "w*w*y*y*", &v[0], &v[1], &v[2], &v[3])) return NULL;
    Py_ssize_t n = v[0].len;
    long long set = -1;
    if (v[1].len == n && v[2].len == n && v[3].len == n && n % 8 == 0) {
        unsigned char *one = v[0].buf, *two = v[1].buf;
        const unsigned char *ione = v[2].buf, *itwo = v[3].buf;
        set = 0;
        for (Py_ssize_t i = 0; i < n; i += 8) {
            uint64_t a, b, c, d;
            memcpy(&a, one + i, 8); memcpy(&b, two + i, 8); memcpy(&c, ione + i, 8); memcpy(&d, itwo + i, 8);
            b |= d | (a & c);
            a |= c;
            memcpy(one + i, &a, 8); memcpy(two + i, &b, 8);
            set += __builtin_popcountll(b);
        }
    }
    for (int i = 0; i < 4; i++) PyBuffer_Release(&v[i]);
    if (set < 0) { PyErr_SetString(PyExc_ValueError, "bitmaps of one length, a multiple of 8 bytes"); return NULL; }
    return PyLong_FromLongLong(set);
}

/* digest_filter_has(bitmap, digest) -> bool: the bitmap (one, of either kind) holds the digest */
static PyObject *digest_filter_has(PyObject *unused, PyObject *args) {
    PyObject *fo;
    const char *s; Py_ssize_t sn;
    if (!PyArg_ParseTuple(args, "Os#", &fo, &s, &sn)) return NULL;
    Filter f = {0};
    if (filter_take(&f, fo, 1) < 0) return NULL;
    int has = filter_shared(&f, hash_bytes(s, sn));
    filter_release(&f);
    return PyBool_FromLong(has);
}

/* ------------------------------------------------------------------ strings of a record */

#define TSMAX 31
typedef struct { char s[TSMAX + 1]; uint8_t n; } TS;

static inline int bytes_cmp(const char *a, Py_ssize_t an, const char *b, Py_ssize_t bn) {
    int c = memcmp(a, b, an < bn ? an : bn);
    if (c) return c;
    return an < bn ? -1 : an > bn ? 1 : 0;
}
/* bytes_cmp of two TS. Their bytes past n are zero (ts_set, TS_FIRST, TS_LAST), so up to 16 bytes
 * two words read as big-endian numbers decide: a zero past the shorter one's end sorts first, as
 * its end does (and equal words leave the lengths to decide). */
static inline int ts_cmp(const TS *a, const TS *b) {
    if (a->n <= 16 && b->n <= 16) {
        uint64_t x, y;
        memcpy(&x, a->s, 8); memcpy(&y, b->s, 8);
        if (x == y) { memcpy(&x, a->s + 8, 8); memcpy(&y, b->s + 8, 8); }
        if (x != y) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            x = __builtin_bswap64(x); y = __builtin_bswap64(y);
#endif
            return x < y ? -1 : 1;
        }
        return a->n < b->n ? -1 : a->n > b->n;
    }
    return bytes_cmp(a->s, a->n, b->s, b->n);
}
static int ts_set(TS *t, const char *s, Py_ssize_t n) {
    if (n > TSMAX) { PyErr_SetString(PyExc_ValueError, "timestamp too long"); return -1; }
    memcpy(t->s, s, n); t->n = (uint8_t)n;
    memset(t->s + n, 0, sizeof t->s - n);
    return 0;
}
/* start values of a running minimum and maximum */
static const TS TS_FIRST = {"~", 1}, TS_LAST = {"", 0};

/* stats record (profiler.model.stats) */
typedef struct { int64_t total, min, max, urir, bytes, digests, dedup; TS first, last; } Rec;

static inline void rec_merge(Rec *a, const Rec *b) {
    a->total += b->total;
    if (b->min < a->min) a->min = b->min;
    if (b->max > a->max) a->max = b->max;
    a->urir += b->urir; a->bytes += b->bytes; a->digests += b->digests; a->dedup += b->dedup;
    if (ts_cmp(&b->first, &a->first) < 0) a->first = b->first;
    if (ts_cmp(&b->last, &a->last) > 0) a->last = b->last;
}

/* a Map with one Rec per key */
typedef struct { Map m; Rec *recs; Py_ssize_t rcap; } RecMap;

static int recmap_init(RecMap *t) { t->recs = NULL; t->rcap = 0; return map_init(&t->m); }
static void recmap_free(RecMap *t) { map_free(&t->m); PyMem_Free(t->recs); t->recs = NULL; t->rcap = 0; }
static int recmap_add(RecMap *t, const char *k, Py_ssize_t kl, const Rec *r) {
    int added;
    Py_ssize_t i = map_find_or_add(&t->m, k, kl, &added);
    if (i < 0) return -1;
    if (added) {
        if (i >= t->rcap) {
            Py_ssize_t cap = t->rcap ? t->rcap * 2 : 16;
            while (cap <= i) cap *= 2;
            Rec *recs = PyMem_Realloc(t->recs, cap * sizeof(Rec));
            if (!recs) { PyErr_NoMemory(); return -1; }
            t->recs = recs; t->rcap = cap;
        }
        t->recs[i] = *r;
    } else {
        rec_merge(&t->recs[i], r);
    }
    return 0;
}

/* realloc one array to n elements of size bytes (a MemoryError on failure) */
static int resize(void **arr, Py_ssize_t n, size_t size) {
    void *p = PyMem_Realloc(*arr, n * size);
    if (!p) { PyErr_NoMemory(); return -1; }
    *arr = p;
    return 0;
}

/* indices by a small integer id (suffix and tuple ids), one generation at a time: at[id] holds
 * while gen[id] == cur, so a new generation (stamp_next) empties it without clearing */
typedef struct { uint32_t *gen, cur; int32_t *at; Py_ssize_t cap; } StampIndex;

/* the index of id, or -1 */
static inline Py_ssize_t stamp_get(const StampIndex *s, Py_ssize_t id) {
    return id < s->cap && s->gen[id] == s->cur ? s->at[id] : -1;
}

/* at[id] = v in this generation */
static int stamp_set(StampIndex *s, Py_ssize_t id, Py_ssize_t v) {
    if (v >= INT32_MAX) { PyErr_SetString(PyExc_OverflowError, "too many entries"); return -1; }
    if (id >= s->cap) {
        Py_ssize_t old = s->cap, cap = old ? old : 64;
        while (cap <= id) cap *= 2;
        if (resize((void **)&s->gen, cap, sizeof(uint32_t)) < 0 || resize((void **)&s->at, cap, sizeof(int32_t)) < 0)
            return -1;
        memset(s->gen + old, 0, (cap - old) * sizeof(uint32_t));
        s->cap = cap;
    }
    if (s->cur == 0) s->cur = 1;
    s->gen[id] = s->cur; s->at[id] = (int32_t)v;
    return 0;
}

static void stamp_next(StampIndex *s) {
    if (++s->cur == 0) {      /* the generations wrapped round: every entry is stale again */
        if (s->gen) memset(s->gen, 0, s->cap * sizeof(uint32_t));
        s->cur = 1;
    }
}

static void stamp_free(StampIndex *s) {
    PyMem_Free(s->gen); PyMem_Free(s->at);
    memset(s, 0, sizeof *s);
}

/* records by a small integer id (suffix and tuple ids with a set index), one generation at a
 * time: no hashing; the ids in order of first use in ids[] */
typedef struct { StampIndex ix; Rec *recs; int64_t *ids; Py_ssize_t n, rcap; } IdRecs;

static int idrecs_add(IdRecs *t, int64_t id, const Rec *r) {
    Py_ssize_t i = stamp_get(&t->ix, id);
    if (i >= 0) { rec_merge(&t->recs[i], r); return 0; }
    if (t->n == t->rcap) {
        Py_ssize_t cap = t->rcap ? t->rcap * 2 : 64;
        if (resize((void **)&t->recs, cap, sizeof(Rec)) < 0 || resize((void **)&t->ids, cap, sizeof(int64_t)) < 0)
            return -1;
        t->rcap = cap;
    }
    if (stamp_set(&t->ix, id, t->n) < 0) return -1;
    t->recs[t->n] = *r; t->ids[t->n] = id; t->n++;
    return 0;
}
static void idrecs_clear(IdRecs *t) { t->n = 0; stamp_next(&t->ix); }
static void idrecs_free(IdRecs *t) {
    stamp_free(&t->ix); PyMem_Free(t->recs); PyMem_Free(t->ids);
    memset(t, 0, sizeof *t);
}

/* ------------------------------------------------------------------ str helpers */

static const char *utf8(PyObject *o, Py_ssize_t *n) {
    if (!PyUnicode_Check(o)) { PyErr_SetString(PyExc_TypeError, "expected str"); return NULL; }
    return PyUnicode_AsUTF8AndSize(o, n);
}

static int get_i64(PyObject *o, int64_t *v) {
    long long x = PyLong_AsLongLong(o);
    if (x == -1 && PyErr_Occurred()) return -1;
    *v = x;
    return 0;
}

/* ------------------------------------------------------------------ suffixes */

/* "datetime mime status" of (p, m, s) under one combination (option codes, see fast.py):
 * datetime 0 any, 1 year, 2 month; mime 0 any, 1 type, 2 category; status 0 any, 1 class, 2 code. */
static int put_suffix(Buf *b, const char *p, Py_ssize_t pn, const char *m, Py_ssize_t mn,
                      const char *s, Py_ssize_t sn, const uint8_t *c) {
    if (c[0] == 0) { if (buf_putc(b, '-') < 0) return -1; }
    else if (buf_put(b, p, c[0] == 1 ? (pn < 4 ? pn : 4) : (pn < 6 ? pn : 6)) < 0) return -1;
    if (buf_putc(b, ' ') < 0) return -1;
    if (c[1] == 0) { if (buf_putc(b, '-') < 0) return -1; }
    else if (c[1] == 1) { if (buf_put(b, m, mn) < 0) return -1; }
    else {   /* mime_category: 'text/html' -> 'text/' + '*'; without '/' (or at 0) unchanged */
        const char *slash = mn ? memchr(m, '/', mn) : NULL;
        if (slash && slash > m) { if (buf_put(b, m, slash - m) < 0 || buf_put(b, "/*", 2) < 0) return -1; }
        else if (buf_put(b, m, mn) < 0) return -1;
    }
    if (buf_putc(b, ' ') < 0) return -1;
    if (c[2] == 0) return buf_putc(b, '-');
    if (c[2] == 2 || sn == 0) return buf_put(b, s, sn);
    /* status_class: '200' -> '2xx'; 'unk' and anything else -> 'unk' */
    if (s[0] >= '1' && s[0] <= '5' && !(sn == 3 && memcmp(s, "unk", 3) == 0)) {
        char cls[3] = {s[0], 'x', 'x'};
        return buf_put(b, cls, 3);
    }
    return buf_put(b, "unk", 3);
}

/* ------------------------------------------------------------------ Expander */

typedef struct {   /* one resolved (period, mime, status) tuple of the current URI-R */
    const char *p, *m, *s; Py_ssize_t pn, mn, sn;
    int64_t count, bytes, dash;
    TS first, last;
    Py_ssize_t dig_head;      /* linked list of (digest id, max_len) in the dg arrays */
    Py_ssize_t tid;           /* its id in tidmap */
    Rec rec;
} Tup;

typedef struct {   /* one merged cell */
    const char *p, *m, *s, *d; Py_ssize_t pn, mn, sn, dn; int rev;
    int64_t count, bytes, maxlen; TS first, last;
} Cell;

typedef struct {   /* SURT levels: combination set and key of each (is_host: the host level) */
    int n, cap;
    int *set, *is_host; Py_ssize_t *off, *len; Buf keys;
} Levels;

typedef struct { int64_t n, total, largest; } KeyAcc;   /* a shared digest under one key */

/* the records of one level key (root, a TLD, a domain) over consecutive hosts, added to the table
 * when the key changes: sfx (suffix id * nsets + set) -> multi-tuple URI-Rs' exact records, tup
 * (tuple id * nsets + set) -> single-tuple URI-Rs' records rolled up by tuple (expanded then) */
typedef struct { Buf key; int used; IdRecs sfx, tup; } LevelAcc;

typedef struct {
    PyObject_HEAD
    int nsets;
    int *ncombos;              /* per set */
    uint8_t (**combos)[3];     /* per set: ncombos[i] option triples */
    int set_of[6];             /* root, tld, domain, host, path, url */
    int host_depth, path_depth, exact_urls;
    Py_ssize_t limit;
    RecMap table;              /* profile key -> record (flushed at limit) */
    IdRecs host_tuples;        /* tuple id -> single-tuple URI-Rs' records of the open host */
    IdRecs host_suffix;        /* suffix id * nsets + set -> multi-tuple URI-Rs' exact records */
    LevelAcc *acc; int nacc;   /* per position of the open host's levels above the host */
    int have_group, host_none;
    Buf host;
    Levels grp;                /* root, TLD, domain and host levels of the open host */
    Levels own;                /* path and URL levels of the current URI-R */
    /* scratch of one URI-R */
    Map cellmap; Cell *cells; Py_ssize_t ccap;
    StampIndex tupix; Tup *tups; Py_ssize_t tcap;   /* tuple id -> the URI-R's tuple */
    Map digmap; int64_t *dmax; uint64_t *dstamp; Py_ssize_t dcap; uint64_t stamp;
    Py_ssize_t *dhead, dhcap;  /* per digest id: its latest entry (chained by dg_dnext) */
    /* entries (tuple, digest, max_len): chained per tuple (dg_next) and per digest (dg_dnext) */
    Py_ssize_t *dg_did, *dg_next, *dg_t, *dg_dnext; int64_t *dg_ml; Py_ssize_t dgn, dgcap;
    Map origmap; Py_ssize_t *orig_cell; Py_ssize_t ocap;
    /* suffixes by id: tidmap (tuple key -> id), sfxmap (suffix -> id), memo[tid * ctot + cofs[set] +
     * combination] (suffix id or -1, rows for memo_rows tuples); forgotten between hosts when large */
    Map tidmap, sfxmap; int32_t *memo; Py_ssize_t memo_cap, memo_rows, id_limit; int ctot, *cofs;
    StampIndex pj;             /* projection groups of one set: suffix id -> group */
    Py_ssize_t *pj_head, *pj_last, *pj_sid, pjcap, npg; Py_ssize_t *pe_t, *pe_next, pecap, pen;
    uint64_t *pj_mask; Py_ssize_t pjmcap;       /* a group's tuples as bits (URI-Rs of <= 64 tuples) */
    struct MaskRec *mrec; uint32_t mrec_gen; int mrec_n;   /* the URI-R's group records by bits */
    Py_ssize_t *dr_start, drcap; Py_ssize_t *de_t, *de_d, decap;   /* digest records' entries */
    /* step 2 (correct()): one shared digest's profile keys, see profiler.job.digests */
    Levels clev;               /* levels of the URI-R being added */
    Map cmine; int64_t *cmine_ml; Py_ssize_t cmine_cap;         /* key -> the URI-R's largest length */
    Map ckey; KeyAcc *ck; Py_ssize_t ck_cap;                    /* key -> URI-Rs, sum, largest */
    Buf kb, sb;
    /* raw mode: digest record lines held back, written in byte order a run (4 MiB, or limit lines)
     * at a time: the sort between steps 1 and 2 takes half the time over sorted runs */
    Buf drun; Py_ssize_t *drun_off, drun_cap, ndrun;
    PyObject *out;             /* list of output pairs of the current call */
    int raw_mode; Buf raw;     /* or: output lines of the current call (add_raw, close_raw) */
    Filter shared;             /* digests of two or more map records (profiler.runtime.digestfilter), if known */
    long long held_back;       /* digest records not written: the filter has their digest in one record */
} Expander;

static int grow(void **arr, Py_ssize_t *cap, Py_ssize_t need, size_t size) {
    if (need <= *cap) return 0;
    Py_ssize_t c = *cap ? *cap : 16;
    while (c < need) c *= 2;
    void *p = PyMem_Realloc(*arr, c * size);
    if (!p) { PyErr_NoMemory(); return -1; }
    *arr = p; *cap = c;
    return 0;
}

/* grow two parallel arrays of one capacity */
static int grow2(void **a, size_t asz, void **b, size_t bsz, Py_ssize_t *cap, Py_ssize_t need) {
    if (need <= *cap) return 0;
    Py_ssize_t c = *cap ? *cap : 16;
    while (c < need) c *= 2;
    if (resize(a, c, asz) < 0 || resize(b, c, bsz) < 0) return -1;
    *cap = c;
    return 0;
}

/* one output record prefix+k with JSON value js: a (key, value) pair of bytes appended to x->out,
 * or in raw mode the line "key<TAB>value\n" appended to x->raw */
static int emit(Expander *x, const char *prefix, Py_ssize_t pn, const char *k, Py_ssize_t kn,
                const char *js, Py_ssize_t jn) {
    if (x->raw_mode) {
        Buf *b = &x->raw;
        if (buf_reserve(b, pn + kn + jn + 2) < 0) return -1;
        memcpy(b->p + b->n, prefix, pn); b->n += pn;
        memcpy(b->p + b->n, k, kn); b->n += kn;
        b->p[b->n++] = '\t';
        memcpy(b->p + b->n, js, jn); b->n += jn;
        b->p[b->n++] = '\n';
        return 0;
    }
    PyObject *key = PyBytes_FromStringAndSize(NULL, pn + kn);
    if (!key) return -1;
    memcpy(PyBytes_AS_STRING(key), prefix, pn);
    memcpy(PyBytes_AS_STRING(key) + pn, k, kn);
    PyObject *value = PyBytes_FromStringAndSize(js, jn);
    if (!value) { Py_DECREF(key); return -1; }
    PyObject *pair = PyTuple_Pack(2, key, value);
    Py_DECREF(key); Py_DECREF(value);
    if (!pair) return -1;
    int r = PyList_Append(x->out, pair);
    Py_DECREF(pair);
    return r;
}

static int json_str(Buf *b, const char *s, Py_ssize_t n);
static int json_int(Buf *b, int64_t v);

/* a record as the JSON text orjson gives its list, in x->sb */
static int rec_json(Buf *b, const Rec *r);
static int rec_to_json(Expander *x, const Rec *r) {
    x->sb.n = 0;
    return rec_json(&x->sb, r);
}

/* a stats record as the JSON text orjson gives its list, appended to b */
static int rec_json(Buf *b, const Rec *r) {
    if (buf_putc(b, '[') < 0 || json_int(b, r->total) < 0 || buf_putc(b, ',') < 0 || json_int(b, r->min) < 0
        || buf_putc(b, ',') < 0 || json_int(b, r->max) < 0 || buf_putc(b, ',') < 0 || json_int(b, r->urir) < 0
        || buf_putc(b, ',') < 0 || json_int(b, r->bytes) < 0 || buf_putc(b, ',') < 0
        || json_int(b, r->digests) < 0 || buf_putc(b, ',') < 0 || json_int(b, r->dedup) < 0
        || buf_putc(b, ',') < 0 || json_str(b, r->first.s, r->first.n) < 0 || buf_putc(b, ',') < 0
        || json_str(b, r->last.s, r->last.n) < 0 || buf_putc(b, ']') < 0) return -1;
    return 0;
}

static int sort_lines_from(Buf *b, Py_ssize_t from);

/* the table's key records, and an empty table; as lines they are in byte order (one sorted run
 * of the output, which the local runner merges instead of sorting: profiler.runtime.presorted) */
static int flush_table(Expander *x) {
    Map *m = &x->table.m;
    Py_ssize_t before = x->raw.n;
    for (Py_ssize_t i = 0; i < m->n; i++)
        if (rec_to_json(x, &x->table.recs[i]) < 0
            || emit(x, "K ", 2, map_key(m, i), m->ents[i].len, x->sb.p, x->sb.n) < 0) return -1;
    map_clear(m);
    return x->raw_mode ? sort_lines_from(&x->raw, before) : 0;
}

/* table[key + ' ' + suffix] += r for every distinct suffix of tuple (p, m, s) in set idx */
static int expand_tuple(Expander *x, const char *key, Py_ssize_t kn, const char *p, Py_ssize_t pn,
                        const char *m, Py_ssize_t mn, const char *s, Py_ssize_t sn, int idx, const Rec *r) {
    Buf *b = &x->kb;
    int nc = x->ncombos[idx];
    Py_ssize_t starts[64], lens[64];
    int seen = 0;
    for (int c = 0; c < nc; c++) {
        b->n = 0;
        if (buf_put(b, key, kn) < 0 || buf_putc(b, ' ') < 0) return -1;
        if (put_suffix(b, p, pn, m, mn, s, sn, x->combos[idx][c]) < 0) return -1;
        /* dedupe: two combinations may give one suffix ('unk', a mime without '/') */
        Py_ssize_t sl = b->n - kn - 1;
        int dup = 0;
        for (int j = 0; j < seen && !dup; j++)
            dup = lens[j] == sl && memcmp(x->sb.p + starts[j], b->p + kn + 1, sl) == 0;
        if (dup) continue;
        if (seen < 64) {
            if (seen == 0) x->sb.n = 0;
            starts[seen] = x->sb.n; lens[seen] = sl;
            if (buf_put(&x->sb, b->p + kn + 1, sl) < 0) return -1;
            seen++;
        }
        if (recmap_add(&x->table, b->p, b->n, r) < 0) return -1;
    }
    return 0;
}

static int put_tuple_key(Buf *b, const char *p, Py_ssize_t pn, const char *m, Py_ssize_t mn,
                         const char *s, Py_ssize_t sn) {
    return (buf_put_u32(b, (uint32_t)pn) < 0 || buf_put(b, p, pn) < 0 || buf_put_u32(b, (uint32_t)mn) < 0
            || buf_put(b, m, mn) < 0 || buf_put_u32(b, (uint32_t)sn) < 0 || buf_put(b, s, sn) < 0) ? -1 : 0;
}

static void get_tuple_key(const char *k, const char **p, Py_ssize_t *pn, const char **m, Py_ssize_t *mn,
                          const char **s, Py_ssize_t *sn) {
    uint32_t n;
    memcpy(&n, k, 4); *pn = n; *p = k + 4; k += 4 + n;
    memcpy(&n, k, 4); *mn = n; *m = k + 4; k += 4 + n;
    memcpy(&n, k, 4); *sn = n; *s = k + 4;
}

/* table[key + ' ' + suffix sid] += r */
static int add_keyed(Expander *x, const char *key, Py_ssize_t kn, uint32_t sid, const Rec *r) {
    Buf *b = &x->kb;
    b->n = 0;
    return (buf_put(b, key, kn) < 0 || buf_putc(b, ' ') < 0
            || buf_put(b, map_key(&x->sfxmap, sid), x->sfxmap.ents[sid].len) < 0
            || recmap_add(&x->table, b->p, b->n, r) < 0) ? -1 : 0;
}

/* table[key + ' ' + suffix] += r for every distinct suffix of tuple tid in set idx */
static int expand_tid(Expander *x, const char *key, Py_ssize_t kn, int64_t tid, int idx, const Rec *r) {
    const char *p, *m, *s;
    Py_ssize_t pn, mn, sn;
    get_tuple_key(map_key(&x->tidmap, tid), &p, &pn, &m, &mn, &s, &sn);
    return expand_tuple(x, key, kn, p, pn, m, mn, s, sn, idx, r);
}

/* the accumulated records of one level key into the table */
static int acc_flush(Expander *x, LevelAcc *a) {
    const char *key = a->key.p;
    Py_ssize_t kn = a->key.n;
    for (Py_ssize_t i = 0; i < a->sfx.n; i++)
        if (add_keyed(x, key, kn, (uint32_t)(a->sfx.ids[i] / x->nsets), &a->sfx.recs[i]) < 0) return -1;
    idrecs_clear(&a->sfx);
    for (Py_ssize_t i = 0; i < a->tup.n; i++) {
        int64_t id = a->tup.ids[i];
        if (expand_tid(x, key, kn, id / x->nsets, (int)(id % x->nsets), &a->tup.recs[i]) < 0) return -1;
    }
    idrecs_clear(&a->tup);
    return 0;
}

static int acc_flush_all(Expander *x) {
    for (int g = 0; g < x->nacc; g++)
        if (acc_flush(x, &x->acc[g]) < 0) return -1;
    return 0;
}

/* the accumulator of position g, holding level key (key, kn): a different key's records are
 * added to the table first */
static LevelAcc *acc_for(Expander *x, int g, const char *key, Py_ssize_t kn) {
    if (g >= x->nacc) {
        if (resize((void **)&x->acc, g + 1, sizeof(LevelAcc)) < 0) return NULL;
        for (int i = x->nacc; i <= g; i++) {
            LevelAcc *a = &x->acc[i];
            memset(a, 0, sizeof *a);
            x->nacc = i + 1;
        }
    }
    LevelAcc *a = &x->acc[g];
    if (a->used && a->key.n == kn && memcmp(a->key.p, key, kn) == 0) return a;
    if (acc_flush(x, a) < 0) return NULL;
    a->key.n = 0;
    if (buf_put(&a->key, key, kn) < 0) return NULL;
    a->used = 1;
    return a;
}

/* the finished host's records -> its host key (expanded), TLD/domain/root accumulators */
static int close_group(Expander *x) {
    if (!x->have_group) return 0;
    x->have_group = 0;
    IdRecs *hs = &x->host_suffix, *ht = &x->host_tuples;
    int ns = x->nsets;
    for (int g = 0; g < x->grp.n; g++) {
        const char *key = x->grp.keys.p + x->grp.off[g];
        Py_ssize_t kn = x->grp.len[g];
        int idx = x->grp.set[g];
        if (x->grp.is_host[g]) {
            for (Py_ssize_t i = 0; i < hs->n; i++)
                if (hs->ids[i] % ns == idx && add_keyed(x, key, kn, (uint32_t)(hs->ids[i] / ns), &hs->recs[i]) < 0)
                    return -1;
            if (x->ncombos[idx] == 0) continue;
            for (Py_ssize_t i = 0; i < ht->n; i++)
                if (expand_tid(x, key, kn, ht->ids[i], idx, &ht->recs[i]) < 0) return -1;
            continue;
        }
        LevelAcc *a = acc_for(x, g, key, kn);
        if (!a) return -1;
        for (Py_ssize_t i = 0; i < hs->n; i++)
            if (hs->ids[i] % ns == idx && idrecs_add(&a->sfx, hs->ids[i], &hs->recs[i]) < 0) return -1;
        if (x->ncombos[idx] > 0)
            for (Py_ssize_t i = 0; i < ht->n; i++)
                if (idrecs_add(&a->tup, ht->ids[i] * ns + idx, &ht->recs[i]) < 0) return -1;
        if (a->sfx.n + a->tup.n >= x->limit && acc_flush(x, a) < 0) return -1;
    }
    idrecs_clear(hs);
    idrecs_clear(ht);
    if (x->sfxmap.n > x->id_limit || x->tidmap.n > x->id_limit) {   /* bounded: ids start again */
        if (acc_flush_all(x) < 0) return -1;
        map_clear(&x->sfxmap);
        map_clear(&x->tidmap);
        x->memo_rows = 0;
    }
    return 0;
}

static void levels_free(Levels *L) {
    PyMem_Free(L->set); PyMem_Free(L->is_host); PyMem_Free(L->off); PyMem_Free(L->len); buf_free(&L->keys);
    memset(L, 0, sizeof *L);
}

/* append the level a + b (a key in two parts) of combination set idx */
static int levels_add(Levels *L, int idx, int is_host, const char *a, Py_ssize_t an, const char *b, Py_ssize_t bn) {
    if (L->n == L->cap) {
        int cap = L->cap ? L->cap * 2 : 8;
        if (resize((void **)&L->set, cap, sizeof(int)) < 0 || resize((void **)&L->is_host, cap, sizeof(int)) < 0
            || resize((void **)&L->off, cap, sizeof(Py_ssize_t)) < 0
            || resize((void **)&L->len, cap, sizeof(Py_ssize_t)) < 0) return -1;
        L->cap = cap;
    }
    int g = L->n++;
    L->set[g] = idx;
    L->is_host[g] = is_host;
    L->off[g] = L->keys.n;
    if (buf_put(&L->keys, a, an) < 0 || buf_put(&L->keys, b, bn) < 0) return -1;
    L->len[g] = an + bn;
    return 0;
}

/* keys.group_levels(host), appended to L: root, tld, domain (host-label wildcards), host */
static int group_level_keys(Expander *x, Levels *L, const char *host, Py_ssize_t hn, int none) {
    if (levels_add(L, x->set_of[0], 0, "*", 1, "", 0) < 0) return -1;
    if (none) return 0;
    Py_ssize_t labels = 1;
    for (Py_ssize_t i = 0; i < hn; i++) labels += host[i] == ',';
    Py_ssize_t upto = labels - 1 < x->host_depth ? labels - 1 : x->host_depth;
    Py_ssize_t k = 0;
    for (Py_ssize_t i = 0; i < hn && k < upto; i++) {
        if (host[i] == ',') {
            k++;
            if (levels_add(L, x->set_of[k == 1 ? 1 : 2], 0, host, i, ",*", 2) < 0) return -1;
        }
    }
    if (labels <= x->host_depth && levels_add(L, x->set_of[3], 1, host, hn, ")/*", 3) < 0) return -1;
    return 0;
}

/* keys.own_levels(urlkey), appended to L: path directories (hosts of <= host_depth labels) and
 * the exact URL; hn: length of the host part, none: no ')' */
static int own_level_keys(Expander *x, Levels *L, const char *u, Py_ssize_t un, Py_ssize_t hn, int none) {
    if (!none && x->path_depth) {
        Py_ssize_t labels = 1;
        for (Py_ssize_t i = 0; i < hn; i++) labels += u[i] == ',';
        if (labels <= x->host_depth) {
            const char *path = u + hn + 1;
            Py_ssize_t pl = un - hn - 1;
            const char *q = memchr(path, '?', pl);
            if (q) pl = q - path;
            const char *h = memchr(path, '#', pl);
            if (h) pl = h - path;
            if (pl > 0 && path[0] == '/') {
                int depth = 0;
                for (Py_ssize_t i = 1; i < pl && depth < x->path_depth; i++) {
                    if (path[i] != '/') continue;
                    depth++;
                    if (levels_add(L, x->set_of[4], 0, u, hn + 1 + i + 1, "*", 1) < 0) return -1;
                }
            }
        }
    }
    if (!x->exact_urls) return 0;
    if (un > 0 && u[un - 1] == '*') return levels_add(L, x->set_of[5], 0, u, un - 1, "%2A", 3);
    return levels_add(L, x->set_of[5], 0, u, un, "", 0);
}

/* the levels of urlkey u, all of them (keys.surt_levels) or only its own, in L */
static int urlkey_levels(Expander *x, Levels *L, const char *u, Py_ssize_t un, int all) {
    const char *paren = memchr(u, ')', un);
    Py_ssize_t hn = paren ? paren - u : 0;
    L->n = 0; L->keys.n = 0;
    if (all && group_level_keys(x, L, u, hn, paren == NULL) < 0) return -1;
    return own_level_keys(x, L, u, un, hn, paren == NULL);
}

static int open_group(Expander *x, const char *host, Py_ssize_t hn, int none) {
    x->grp.n = 0; x->grp.keys.n = 0;
    x->host.n = 0;
    if (!none && buf_put(&x->host, host, hn) < 0) return -1;
    x->host_none = none;
    x->have_group = 1;
    return group_level_keys(x, &x->grp, host, hn, none);
}

/* record of one URI-R over the tuples of projection group g (project() takes a group of one tuple's
 * record as it is) */
static void group_record(Expander *x, Py_ssize_t g, Rec *out) {
    int64_t count = 0, bytes = 0, dash = 0, ndig = 0, dsum = 0;
    TS first = TS_FIRST, last = TS_LAST;
    uint64_t stamp = ++x->stamp;
    for (Py_ssize_t e = x->pj_head[g]; e >= 0; e = x->pe_next[e]) {
        Tup *t = &x->tups[x->pe_t[e]];
        count += t->count; bytes += t->bytes; dash += t->dash;
        if (ts_cmp(&t->first, &first) < 0) first = t->first;
        if (ts_cmp(&t->last, &last) > 0) last = t->last;
        for (Py_ssize_t d = t->dig_head; d >= 0; d = x->dg_next[d]) {
            Py_ssize_t did = x->dg_did[d];
            int64_t ml = x->dg_ml[d];
            if (x->dstamp[did] != stamp) { x->dstamp[did] = stamp; x->dmax[did] = ml; ndig++; dsum += ml; }
            else if (ml > x->dmax[did]) { dsum += ml - x->dmax[did]; x->dmax[did] = ml; }
        }
    }
    out->total = out->min = out->max = count; out->urir = 1; out->bytes = bytes;
    out->digests = ndig; out->dedup = dsum + dash; out->first = first; out->last = last;
}

/* Records of a URI-R's groups of several tuples by their tuples' bits: one set of tuples is the
 * group of many suffixes (every combination of 'any' or the year, for tuples of one year), and its
 * record is worked out once (on the synthetic 1M index 2.4M groups had 176,000 sets of tuples).
 * Emptied for each URI-R by a new generation; when full, records are worked out each time. */
#define MREC_SLOTS 256
struct MaskRec { uint64_t mask; uint32_t gen; Rec rec; };

static const Rec *mask_record(Expander *x, Py_ssize_t g, Rec *scratch) {
    uint64_t mask = x->pj_mask[g];
    if (!x->mrec) {
        if (!(x->mrec = PyMem_Calloc(MREC_SLOTS, sizeof(struct MaskRec)))) { group_record(x, g, scratch); return scratch; }
    }
    unsigned i = (unsigned)((mask * 0x9E3779B97F4A7C15ULL) >> 56) & (MREC_SLOTS - 1);
    for (int probes = 0; probes < MREC_SLOTS; probes++, i = (i + 1) & (MREC_SLOTS - 1)) {
        struct MaskRec *m = &x->mrec[i];
        if (m->gen == x->mrec_gen && m->mask == mask) return &m->rec;
        if (m->gen != x->mrec_gen) {
            if (x->mrec_n >= MREC_SLOTS / 2) break;
            x->mrec_n++;
            m->gen = x->mrec_gen; m->mask = mask;
            group_record(x, g, &m->rec);
            return &m->rec;
        }
    }
    group_record(x, g, scratch);
    return scratch;
}

/* a new URI-R: no group records yet */
static void mask_records_next(Expander *x) {
    x->mrec_n = 0;
    if (++x->mrec_gen == 0) {
        if (x->mrec) memset(x->mrec, 0, MREC_SLOTS * sizeof(struct MaskRec));
        x->mrec_gen = 1;
    }
}

/* the id of the suffix of tuple tp under combination c of set idx (memoised per tuple) */
static Py_ssize_t suffix_id(Expander *x, const Tup *tp, int idx, int c) {
    int32_t *slot = &x->memo[tp->tid * x->ctot + x->cofs[idx] + c];
    if (*slot >= 0) return *slot;
    Buf *b = &x->sb;
    b->n = 0;
    if (put_suffix(b, tp->p, tp->pn, tp->m, tp->mn, tp->s, tp->sn, x->combos[idx][c]) < 0) return -1;
    int added;
    Py_ssize_t sid = map_find_or_add(&x->sfxmap, b->p, b->n, &added);
    if (sid < 0) return -1;
    if (sid > INT32_MAX) { PyErr_SetString(PyExc_OverflowError, "too many suffixes"); return -1; }
    *slot = (int32_t)sid;
    return sid;
}

/* the URI-R's exact record of each suffix of set idx; added to table under key, or to
 * host_suffix (key NULL) */
static int project(Expander *x, Py_ssize_t ntup, int idx, const char *key, Py_ssize_t kn) {
    int nc = x->ncombos[idx];
    if (nc == 0) return 0;
    stamp_next(&x->pj);
    x->npg = 0;
    x->pen = 0;
    for (Py_ssize_t t = 0; t < ntup; t++) {
        Tup *tp = &x->tups[t];
        for (int c = 0; c < nc; c++) {
            Py_ssize_t sid = suffix_id(x, tp, idx, c);
            if (sid < 0) return -1;
            Py_ssize_t g = stamp_get(&x->pj, sid);
            if (g < 0) {
                g = x->npg++;
                Py_ssize_t cap = x->pjcap;
                if (grow2((void **)&x->pj_head, sizeof(Py_ssize_t), (void **)&x->pj_last, sizeof(Py_ssize_t),
                          &cap, g + 1) < 0 || grow((void **)&x->pj_sid, &x->pjcap, g + 1, sizeof(Py_ssize_t)) < 0
                    || grow((void **)&x->pj_mask, &x->pjmcap, g + 1, sizeof(uint64_t)) < 0
                    || stamp_set(&x->pj, sid, g) < 0)
                    return -1;
                x->pj_head[g] = -1; x->pj_last[g] = -1; x->pj_sid[g] = sid; x->pj_mask[g] = 0;
            } else if (x->pe_t[x->pj_last[g]] == t) {
                continue;     /* the tuple is in the group already */
            }
            if (grow2((void **)&x->pe_t, sizeof(Py_ssize_t), (void **)&x->pe_next, sizeof(Py_ssize_t),
                      &x->pecap, x->pen + 1) < 0) return -1;
            Py_ssize_t e = x->pen++;
            x->pe_t[e] = t; x->pe_next[e] = -1;
            if (x->pj_last[g] < 0) x->pj_head[g] = e; else x->pe_next[x->pj_last[g]] = e;
            x->pj_last[g] = e;
            if (t < 64) x->pj_mask[g] |= (uint64_t)1 << t;
        }
    }
    for (Py_ssize_t g = 0; g < x->npg; g++) {
        Rec scratch;
        const Rec *r = &scratch;
        Py_ssize_t e = x->pj_head[g];
        if (x->pe_next[e] < 0) r = &x->tups[x->pe_t[e]].rec;
        else if (ntup <= 64) r = mask_record(x, g, &scratch);
        else group_record(x, g, &scratch);
        uint32_t sid = (uint32_t)x->pj_sid[g];
        if (key) {
            if (add_keyed(x, key, kn, sid, r) < 0) return -1;
        } else if (idrecs_add(&x->host_suffix, (int64_t)sid * x->nsets + idx, r) < 0) return -1;
    }
    return 0;
}

static const char REVISIT_MIME[] = "warc/revisit";
#define DRUN_BYTES (4 << 20)
/* suffix and tuple ids held before they start again (the arrays indexed by them stay small) */
#define ID_LIMIT 32768

/* one cell of the current URI-R, merged with an equal (period, mime, status, digest, revisit) one */
static int add_cell(Expander *x, const Cell *v) {
    Buf *b = &x->sb;
    b->n = 0;
    if (put_tuple_key(b, v->p, v->pn, v->m, v->mn, v->s, v->sn) < 0 || buf_put_u32(b, (uint32_t)v->dn) < 0
        || buf_put(b, v->d, v->dn) < 0 || buf_putc(b, (char)v->rev) < 0) return -1;
    int added;
    Py_ssize_t i = map_find_or_add(&x->cellmap, b->p, b->n, &added);
    if (i < 0) return -1;
    if (added) {
        if (grow((void **)&x->cells, &x->ccap, i + 1, sizeof(Cell)) < 0) return -1;
        x->cells[i] = *v;
    } else {
        Cell *o = &x->cells[i];
        o->count += v->count; o->bytes += v->bytes;
        if (v->maxlen > o->maxlen) o->maxlen = v->maxlen;
        if (ts_cmp(&v->first, &o->first) < 0) o->first = v->first;
        if (ts_cmp(&v->last, &o->last) > 0) o->last = v->last;
    }
    return 0;
}

/* the cells of cell lists (Python objects: [[period, mime, status, digest, revisit, count, bytes,
 * max_len, first, last], ...]) into the current URI-R */
static int add_cell_lists(Expander *x, PyObject *lists) {
    Py_ssize_t nl = PyList_GET_SIZE(lists);
    for (Py_ssize_t li = 0; li < nl; li++) {
        PyObject *cl = PyList_GET_ITEM(lists, li);
        if (!PyList_Check(cl)) { PyErr_SetString(PyExc_TypeError, "cell list expected"); return -1; }
        for (Py_ssize_t ci = 0; ci < PyList_GET_SIZE(cl); ci++) {
            PyObject *c = PyList_GET_ITEM(cl, ci);
            Py_ssize_t items = PyList_Check(c) ? PyList_GET_SIZE(c) : 0;
            if (items != 10 && items != 8) {      /* 8: one capture's [.., count, bytes, timestamp] */
                PyErr_SetString(PyExc_TypeError, "cell of 8 or 10 items expected"); return -1;
            }
            int last = items == 10 ? 9 : 7;
            Cell v;
            const char *f, *l; Py_ssize_t fn, ln;
            if (!(v.p = utf8(PyList_GET_ITEM(c, 0), &v.pn)) || !(v.m = utf8(PyList_GET_ITEM(c, 1), &v.mn))
                || !(v.s = utf8(PyList_GET_ITEM(c, 2), &v.sn)) || !(v.d = utf8(PyList_GET_ITEM(c, 3), &v.dn))
                || !(f = utf8(PyList_GET_ITEM(c, last - 1 + (items == 8)), &fn))
                || !(l = utf8(PyList_GET_ITEM(c, last), &ln)))
                return -1;
            int rev = PyObject_IsTrue(PyList_GET_ITEM(c, 4));
            if (rev < 0) return -1;
            v.rev = rev;
            if (get_i64(PyList_GET_ITEM(c, 5), &v.count) < 0 || get_i64(PyList_GET_ITEM(c, 6), &v.bytes) < 0
                || get_i64(PyList_GET_ITEM(c, items == 10 ? 7 : 6), &v.maxlen) < 0) return -1;
            if (ts_set(&v.first, f, fn) < 0 || ts_set(&v.last, l, ln) < 0) return -1;
            if (add_cell(x, &v) < 0) return -1;
        }
    }
    return 0;
}

/* JSON as the map side writes it (no spaces): a string without escapes and of ASCII only, or an
 * integer of at most 18 digits. 0 read (*at moves past it), 1 anything else */
static int json_plain_str(const char **at, const char *end, const char **s, Py_ssize_t *n) {
    const char *p = *at;
    if (p >= end || *p != '"') return 1;
    const char *q = ++p;
    while (q < end && *q != '"') {
        unsigned char c = (unsigned char)*q;
        if (c < 0x20 || c >= 0x80 || c == '\\') return 1;
        q++;
    }
    if (q >= end) return 1;
    *s = p; *n = q - p; *at = q + 1;
    return 0;
}
static int json_plain_int(const char **at, const char *end, int64_t *v) {
    const char *p = *at;
    int neg = p < end && *p == '-';
    if (neg) p++;
    const char *q = p;
    int64_t x = 0;
    for (; q < end && *q >= '0' && *q <= '9'; q++) {
        if (q - p == 19 || x > (INT64_MAX - (*q - '0')) / 10) return 1;     /* past int64: Python's */
        x = x * 10 + (*q - '0');
    }
    if (q == p) return 1;
    *v = neg ? -x : x; *at = q;
    return 0;
}
static inline int json_char(const char **at, const char *end, char c) {
    if (*at >= end || **at != c) return 1;
    (*at)++;
    return 0;
}

/* the cells of one cell list in JSON text (a reduce input line's value) into the current URI-R.
 * 0 added, 1 not in the map side's plain form (Python reads it), -1 error */
static int add_cell_json(Expander *x, const char *p, const char *end) {
    if (json_char(&p, end, '[')) return 1;
    if (p < end && *p == ']') return p + 1 == end ? 0 : 1;
    for (;;) {
        Cell v;
        const char *f, *l; Py_ssize_t fn, ln;
        int64_t rev;
        if (json_char(&p, end, '[') || json_plain_str(&p, end, &v.p, &v.pn) || json_char(&p, end, ',')
            || json_plain_str(&p, end, &v.m, &v.mn) || json_char(&p, end, ',')
            || json_plain_str(&p, end, &v.s, &v.sn) || json_char(&p, end, ',')
            || json_plain_str(&p, end, &v.d, &v.dn) || json_char(&p, end, ',')
            || json_plain_int(&p, end, &rev) || (rev != 0 && rev != 1) || json_char(&p, end, ',')
            || json_plain_int(&p, end, &v.count) || json_char(&p, end, ',')
            || json_plain_int(&p, end, &v.bytes) || json_char(&p, end, ',')) return 1;
        if (p < end && *p == '"') {   /* 8 items: [.., count, bytes, timestamp]: largest = bytes, last = first */
            v.maxlen = v.bytes;
            if (json_plain_str(&p, end, &f, &fn) || json_char(&p, end, ']') || fn > TSMAX) return 1;
            l = f; ln = fn;
        } else if (json_plain_int(&p, end, &v.maxlen) || json_char(&p, end, ',')
                   || json_plain_str(&p, end, &f, &fn) || json_char(&p, end, ',')
                   || json_plain_str(&p, end, &l, &ln) || json_char(&p, end, ']')
                   || fn > TSMAX || ln > TSMAX) return 1;
        v.rev = (int)rev;
        if (ts_set(&v.first, f, fn) < 0 || ts_set(&v.last, l, ln) < 0 || add_cell(x, &v) < 0) return -1;
        if (p < end && *p == ',') { p++; continue; }
        if (json_char(&p, end, ']')) return 1;
        return p == end ? 0 : 1;
    }
}

/* the current URI-R's merged cells -> resolved tuples (its number) */
static Py_ssize_t collect(Expander *x) {
    Py_ssize_t nc = x->cellmap.n;
    /* originals: per digest, the earliest non-revisit cell by (first, mime, status) */
    Map *om = &x->origmap;
    map_clear(om);
    for (Py_ssize_t i = 0; i < nc; i++) {
        Cell *c = &x->cells[i];
        if (c->rev || (c->dn == 1 && c->d[0] == '-')) continue;
        int added;
        Py_ssize_t j = map_find_or_add(om, c->d, c->dn, &added);
        if (j < 0) return -1;
        if (grow((void **)&x->orig_cell, &x->ocap, j + 1, sizeof(Py_ssize_t)) < 0) return -1;
        if (added) { x->orig_cell[j] = i; continue; }
        Cell *k = &x->cells[x->orig_cell[j]];
        int r = ts_cmp(&c->first, &k->first);
        if (r == 0) r = bytes_cmp(c->m, c->mn, k->m, k->mn);
        if (r == 0) r = bytes_cmp(c->s, c->sn, k->s, k->sn);
        if (r < 0) x->orig_cell[j] = i;
    }
    Map *dm = &x->digmap;
    Py_ssize_t nt = 0;
    stamp_next(&x->tupix);
    map_clear(dm);
    x->dgn = 0;
    for (Py_ssize_t i = 0; i < nc; i++) {
        Cell *c = &x->cells[i];
        const char *m = c->m, *s = c->s;
        Py_ssize_t mn = c->mn, sn = c->sn;
        if (c->rev) {
            /* lookup only: origmap holds exactly the digests with an original */
            Py_ssize_t j = (c->dn == 1 && c->d[0] == '-') ? -1 : map_find(om, c->d, c->dn);
            if (j >= 0) {
                Cell *o = &x->cells[x->orig_cell[j]];
                m = o->m; mn = o->mn; s = o->s; sn = o->sn;
            } else {
                m = REVISIT_MIME; mn = sizeof(REVISIT_MIME) - 1; s = "unk"; sn = 3;
            }
        }
        Buf *b = &x->sb;
        b->n = 0;
        if (put_tuple_key(b, c->p, c->pn, m, mn, s, sn) < 0) return -1;
        int added;
        Py_ssize_t tid = map_find_or_add(&x->tidmap, b->p, b->n, &added);
        if (tid < 0) return -1;
        if (tid >= x->memo_rows) {   /* a new row of memoised suffix ids */
            if (grow((void **)&x->memo, &x->memo_cap, (tid + 1) * x->ctot, sizeof(int32_t)) < 0) return -1;
            memset(x->memo + x->memo_rows * x->ctot, 0xff, (tid + 1 - x->memo_rows) * x->ctot * sizeof(int32_t));
            x->memo_rows = tid + 1;
        }
        Py_ssize_t t = stamp_get(&x->tupix, tid);
        if (t < 0) {
            t = nt++;
            if (grow((void **)&x->tups, &x->tcap, t + 1, sizeof(Tup)) < 0 || stamp_set(&x->tupix, tid, t) < 0)
                return -1;
            Tup *tp = &x->tups[t];
            tp->tid = tid;
            tp->p = c->p; tp->pn = c->pn; tp->m = m; tp->mn = mn; tp->s = s; tp->sn = sn;
            tp->count = tp->bytes = tp->dash = 0;
            tp->first = TS_FIRST; tp->last = TS_LAST;
            tp->dig_head = -1;
        }
        Tup *tp = &x->tups[t];
        tp->count += c->count; tp->bytes += c->bytes;
        if (ts_cmp(&c->first, &tp->first) < 0) tp->first = c->first;
        if (ts_cmp(&c->last, &tp->last) > 0) tp->last = c->last;
        if (c->dn == 1 && c->d[0] == '-') { tp->dash += c->bytes; continue; }
        Py_ssize_t did = map_find_or_add(dm, c->d, c->dn, &added);
        if (did < 0) return -1;
        if (added) {
            if (grow2((void **)&x->dmax, sizeof(int64_t), (void **)&x->dstamp, sizeof(uint64_t),
                      &x->dcap, did + 1) < 0
                || grow((void **)&x->dhead, &x->dhcap, did + 1, sizeof(Py_ssize_t)) < 0) return -1;
            x->dstamp[did] = 0;
            x->dhead[did] = -1;
        }
        Py_ssize_t d;
        for (d = x->dhead[did]; d >= 0 && x->dg_t[d] != t; d = x->dg_dnext[d]) ;
        if (d >= 0) {
            if (c->maxlen > x->dg_ml[d]) x->dg_ml[d] = c->maxlen;
            continue;
        }
        if (x->dgn == x->dgcap) {
            Py_ssize_t cap = x->dgcap ? x->dgcap * 2 : 64;
            if (resize((void **)&x->dg_did, cap, sizeof(Py_ssize_t)) < 0
                || resize((void **)&x->dg_next, cap, sizeof(Py_ssize_t)) < 0
                || resize((void **)&x->dg_t, cap, sizeof(Py_ssize_t)) < 0
                || resize((void **)&x->dg_dnext, cap, sizeof(Py_ssize_t)) < 0
                || resize((void **)&x->dg_ml, cap, sizeof(int64_t)) < 0) return -1;
            x->dgcap = cap;
        }
        d = x->dgn++;
        x->dg_did[d] = did; x->dg_ml[d] = c->maxlen; x->dg_next[d] = tp->dig_head; tp->dig_head = d;
        x->dg_t[d] = t; x->dg_dnext[d] = x->dhead[did]; x->dhead[did] = d;
    }
    for (Py_ssize_t t = 0; t < nt; t++) {
        Tup *tp = &x->tups[t];
        int64_t nd = 0, sum = 0;
        for (Py_ssize_t d = tp->dig_head; d >= 0; d = x->dg_next[d]) { nd++; sum += x->dg_ml[d]; }
        Rec *r = &tp->rec;
        r->total = r->min = r->max = tp->count; r->urir = 1; r->bytes = tp->bytes;
        r->digests = nd; r->dedup = sum + tp->dash; r->first = tp->first; r->last = tp->last;
    }
    return nt;
}

/* one record per digest of the URI-R: D digest -> JSON [urlkey, [[period, mime, status, max_len], ...]]
 * (its entries in tuple order) */
static int digest_records(Expander *x, const char *u, Py_ssize_t un, Py_ssize_t nt) {
    Map *dm = &x->digmap;
    Py_ssize_t nd = dm->n;
    if (nd == 0) return 0;
    /* entries by digest id: a counting sort of the tuples' digest chains */
    if (grow((void **)&x->dr_start, &x->drcap, nd + 1, sizeof(Py_ssize_t)) < 0
        || grow2((void **)&x->de_t, sizeof(Py_ssize_t), (void **)&x->de_d, sizeof(Py_ssize_t), &x->decap, x->dgn) < 0)
        return -1;
    Py_ssize_t *start = x->dr_start;
    memset(start, 0, (nd + 1) * sizeof(Py_ssize_t));
    for (Py_ssize_t t = 0; t < nt; t++)
        for (Py_ssize_t d = x->tups[t].dig_head; d >= 0; d = x->dg_next[d]) start[x->dg_did[d] + 1]++;
    for (Py_ssize_t did = 0; did < nd; did++) start[did + 1] += start[did];
    for (Py_ssize_t t = 0; t < nt; t++)
        for (Py_ssize_t d = x->tups[t].dig_head; d >= 0; d = x->dg_next[d]) {
            Py_ssize_t at = start[x->dg_did[d]]++;
            x->de_t[at] = t; x->de_d[at] = d;
        }
    Buf *b = &x->sb;
    Py_ssize_t at = 0;
    for (Py_ssize_t did = 0; did < nd; did++) {
        if (!filter_shared(&x->shared, dm->ents[did].h)) {   /* no other URI-R has it: step 2 needs nothing */
            x->held_back++;
            at = start[did];
            continue;
        }
        b->n = 0;
        if (buf_putc(b, '[') < 0 || json_str(b, u, un) < 0 || buf_put(b, ",[", 2) < 0) return -1;
        for (Py_ssize_t e = at; e < start[did]; e++) {
            Tup *tp = &x->tups[x->de_t[e]];
            if ((e > at && buf_putc(b, ',') < 0) || buf_putc(b, '[') < 0 || json_str(b, tp->p, tp->pn) < 0
                || buf_putc(b, ',') < 0 || json_str(b, tp->m, tp->mn) < 0 || buf_putc(b, ',') < 0
                || json_str(b, tp->s, tp->sn) < 0 || buf_putc(b, ',') < 0
                || json_int(b, x->dg_ml[x->de_d[e]]) < 0 || buf_putc(b, ']') < 0) return -1;
        }
        at = start[did];
        if (buf_put(b, "]]", 2) < 0) return -1;
        if (!x->raw_mode) {
            if (emit(x, "D ", 2, map_key(dm, did), dm->ents[did].len, b->p, b->n) < 0) return -1;
            continue;
        }
        if (grow((void **)&x->drun_off, &x->drun_cap, x->ndrun + 1, sizeof(Py_ssize_t)) < 0) return -1;
        x->drun_off[x->ndrun++] = x->drun.n;
        if (buf_put(&x->drun, "D ", 2) < 0 || buf_put(&x->drun, map_key(dm, did), dm->ents[did].len) < 0
            || buf_putc(&x->drun, '\t') < 0 || buf_put(&x->drun, b->p, b->n) < 0 || buf_putc(&x->drun, '\n') < 0)
            return -1;
    }
    return 0;
}

/* a held-back line: its first 8 bytes as a big-endian number (zero-padded), then its bytes */
typedef struct { uint64_t pre; const char *p; Py_ssize_t n; } LineRef;

static void lineref_set(LineRef *r, const char *p, Py_ssize_t n) {
    r->p = p; r->n = n;
    unsigned char w[8] = {0};
    memcpy(w, p, n < 8 ? n : 8);
    r->pre = 0;
    for (int k = 0; k < 8; k++) r->pre = (r->pre << 8) | w[k];
}

static int lineref_cmp(const void *a, const void *b) {
    const LineRef *x = a, *y = b;
    if (x->pre != y->pre) return x->pre < y->pre ? -1 : 1;
    return bytes_cmp(x->p, x->n, y->p, y->n);
}

/* refs in byte order of their lines: a radix sort on the 8-byte prefixes (a byte a pass, the
 * passes where all prefixes agree skipped), then each run of equal prefixes by its bytes */
static int sort_linerefs(LineRef *refs, Py_ssize_t n) {
    LineRef *tmp = PyMem_Malloc(n * sizeof(LineRef));
    if (!tmp) { PyErr_NoMemory(); return -1; }
    LineRef *src = refs, *dst = tmp;
    for (int shift = 0; shift < 64; shift += 8) {
        Py_ssize_t count[257] = {0};
        for (Py_ssize_t i = 0; i < n; i++) count[((src[i].pre >> shift) & 0xff) + 1]++;
        int one_bucket = 0;
        for (int b = 1; b <= 256; b++) if (count[b] == n) one_bucket = 1;
        if (one_bucket) continue;
        for (int b = 0; b < 256; b++) count[b + 1] += count[b];
        for (Py_ssize_t i = 0; i < n; i++) dst[count[(src[i].pre >> shift) & 0xff]++] = src[i];
        LineRef *t = src; src = dst; dst = t;
    }
    if (src != refs) memcpy(refs, src, n * sizeof(LineRef));
    PyMem_Free(tmp);
    for (Py_ssize_t i = 0; i < n; ) {
        Py_ssize_t j = i + 1;
        while (j < n && refs[j].pre == refs[i].pre) j++;
        if (j - i > 1) qsort(refs + i, j - i, sizeof(LineRef), lineref_cmp);
        i = j;
    }
    return 0;
}

/* the lines of b from byte from on (each ends with a newline) put in byte order */
static int sort_lines_from(Buf *b, Py_ssize_t from) {
    Py_ssize_t n = 0;
    for (Py_ssize_t at = from; at < b->n; at++) if (b->p[at] == '\n') n++;
    if (n < 2) return 0;
    LineRef *refs = PyMem_Malloc(n * sizeof(LineRef));
    char *tmp = PyMem_Malloc(b->n - from);
    if (!refs || !tmp) { PyMem_Free(refs); PyMem_Free(tmp); PyErr_NoMemory(); return -1; }
    Py_ssize_t i = 0;
    for (Py_ssize_t at = from; at < b->n; i++) {
        const char *nl = memchr(b->p + at, '\n', b->n - at);
        lineref_set(&refs[i], b->p + at, nl - (b->p + at));
        at = nl - b->p + 1;
    }
    if (sort_linerefs(refs, n) < 0) { PyMem_Free(refs); PyMem_Free(tmp); return -1; }
    Py_ssize_t t = 0;
    for (i = 0; i < n; i++) {
        memcpy(tmp + t, refs[i].p, refs[i].n); t += refs[i].n;
        tmp[t++] = '\n';
    }
    memcpy(b->p + from, tmp, t);
    PyMem_Free(refs); PyMem_Free(tmp);
    return 0;
}

/* the held-back digest record lines, in byte order (as `LC_ALL=C sort` compares lines), to the
 * output */
static int drun_flush(Expander *x) {
    Py_ssize_t n = x->ndrun;
    if (n == 0) return 0;
    LineRef *refs = PyMem_Malloc(n * sizeof(LineRef));
    if (!refs) { PyErr_NoMemory(); return -1; }
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t start = x->drun_off[i], end = (i + 1 < n ? x->drun_off[i + 1] : x->drun.n) - 1;
        lineref_set(&refs[i], x->drun.p + start, end - start);
    }
    if (sort_linerefs(refs, n) < 0) { PyMem_Free(refs); return -1; }
    int rc = buf_reserve(&x->raw, x->drun.n);
    for (Py_ssize_t i = 0; i < n && rc == 0; i++) {
        memcpy(x->raw.p + x->raw.n, refs[i].p, refs[i].n);
        x->raw.n += refs[i].n;
        x->raw.p[x->raw.n++] = '\n';
    }
    PyMem_Free(refs);
    x->ndrun = 0; x->drun.n = 0;
    return rc;
}

/* URI-R u, whose cells are added: its key and digest records */
static int uri_r(Expander *x, const char *u, Py_ssize_t un) {
    const char *paren = memchr(u, ')', un);
    Py_ssize_t hn = paren ? paren - u : 0;
    int none = paren == NULL;
    if (!x->have_group || none != x->host_none || (!none && (hn != x->host.n || memcmp(u, x->host.p, hn) != 0))) {
        /* before collect(): closing a host may forget the tuple ids */
        if (close_group(x) < 0 || open_group(x, u, hn, none) < 0) return -1;
    }
    Py_ssize_t nt = collect(x);
    if (nt < 0) return -1;
    mask_records_next(x);
    if (nt == 1) {
        if (idrecs_add(&x->host_tuples, x->tups[0].tid, &x->tups[0].rec) < 0) return -1;
    } else if (nt > 1) {
        uint64_t done = 0;   /* sets already projected (set indices < 64) */
        for (int g = 0; g < x->grp.n; g++) {
            int idx = x->grp.set[g];
            if (idx < 64 && (done >> idx) & 1) continue;
            if (idx < 64) done |= 1ULL << idx;
            if (project(x, nt, idx, NULL, 0) < 0) return -1;
        }
    }
    /* own levels: path directories and the exact URL */
    Levels *own = &x->own;
    if (urlkey_levels(x, own, u, un, 0) < 0) return -1;
    for (int l = 0; l < own->n; l++)
        if (project(x, nt, own->set[l], own->keys.p + own->off[l], own->len[l]) < 0) return -1;
    if (digest_records(x, u, un, nt) < 0) return -1;
    if ((x->drun.n >= DRUN_BYTES || x->ndrun >= x->limit) && drun_flush(x) < 0) return -1;
    if (x->table.m.n >= x->limit) return flush_table(x);
    return 0;
}

/* The records of one call, in either sink: a list of (key, value) pairs, or in raw mode the
 * bytes of their key<TAB>value lines. step(x, arg) writes them; it returns -1 on an error. */
static PyObject *run_sink(Expander *x, int raw, int (*step)(Expander *, void *), void *arg) {
    x->raw_mode = raw;
    if (!raw && !(x->out = PyList_New(0))) return NULL;
    int r = step(x, arg);
    x->raw_mode = 0;
    if (raw) {
        PyObject *out = r < 0 ? NULL : PyBytes_FromStringAndSize(x->raw.p ? x->raw.p : "", x->raw.n);
        x->raw.n = 0;
        if (x->raw.cap > (64 << 20)) buf_free(&x->raw);   /* a large flush: give the memory back */
        return out;
    }
    PyObject *out = x->out;
    x->out = NULL;
    if (r < 0) { Py_DECREF(out); return NULL; }
    return out;
}

/* arg: (urlkey, cell lists) */
static int add_step(Expander *x, void *arg) {
    PyObject *args = arg;
    PyObject *urlkey, *values;
    if (!PyArg_ParseTuple(args, "UO", &urlkey, &values)) return -1;
    Py_ssize_t un;
    const char *u = utf8(urlkey, &un);
    if (!u) return -1;
    PyObject *lists = PySequence_List(values);     /* keeps the cells alive while their UTF-8 is used */
    if (!lists) return -1;
    map_clear(&x->cellmap);
    int r = add_cell_lists(x, lists);
    if (r == 0) r = uri_r(x, u, un);
    Py_DECREF(lists);
    return r;
}

/* feed(buf, pos, final) -> (state, pos, end, lines): step 1 over the sorted lines key<TAB>cells of
 * buf from pos, a URI-R (a run of lines of one key) at a time; lines: the records, as add_raw().
 * state 0: read up to pos; when not final, the last URI-R is left (it may go on in the next
 * buffer) and pos is where it starts. state 1: the lines buf[pos:end] (one key: !meta, a key or
 * cells not in the map side's plain form) are for Python, then go on at end. */
typedef struct { const char *buf; Py_ssize_t pos, end, n; int final, state; } Feed;

/* where the lines of buf to read end: all of it when final, else after the last newline */
static Py_ssize_t lines_limit(const Feed *fd) {
    Py_ssize_t limit = fd->n;
    if (!fd->final)
        while (limit > fd->pos && fd->buf[limit - 1] != '\n') limit--;
    return limit;
}

/* the run of lines from pos (below limit) with the key of its first line: its end (after the
 * newline); *kn: the key's length; *nlines: the run's lines; 0 when the line has no TAB (a run
 * of one line) */
static Py_ssize_t key_run(const char *buf, Py_ssize_t pos, Py_ssize_t limit, Py_ssize_t *kn,
                          Py_ssize_t *nlines, int *has_tab) {
    const char *line = buf + pos;
    const char *nl = memchr(line, '\n', limit - pos);
    Py_ssize_t le = nl ? nl - buf : limit;
    const char *tab = memchr(line, '\t', le - pos);
    *kn = tab ? tab - line : le - pos;
    *has_tab = tab != NULL;
    *nlines = 1;
    Py_ssize_t end = nl ? le + 1 : limit;
    if (!tab) return end;
    while (end < limit && limit - end > *kn && buf[end + *kn] == '\t' && memcmp(buf + end, line, *kn) == 0) {
        const char *q = memchr(buf + end, '\n', limit - end);
        end = q ? q - buf + 1 : limit;
        (*nlines)++;
    }
    return end;
}

/* A reader of sorted lines over the runs of one key: decide(ctx, buf, pos, end, kn, nlines, tab, out)
 * writes a run's lines to out and returns 0, or returns 1 to leave the run to Python, -1 on an
 * error. Sets fd's state, pos and end as feed() returns them. */
typedef int (*RunDecider)(void *ctx, const char *buf, Py_ssize_t pos, Py_ssize_t end, Py_ssize_t kn,
                          Py_ssize_t nlines, int tab, Buf *out);

static int scan_runs(Feed *fd, RunDecider decide, void *ctx, Buf *out) {
    const char *buf = fd->buf;
    Py_ssize_t limit = lines_limit(fd), pos = fd->pos;
    fd->state = 0;
    while (pos < limit) {
        Py_ssize_t kn, nlines;
        int tab;
        Py_ssize_t end = key_run(buf, pos, limit, &kn, &nlines, &tab);
        if (end == limit && !fd->final) break;       /* may go on in the next buffer */
        int r = decide(ctx, buf, pos, end, kn, nlines, tab, out);
        if (r < 0) return -1;
        if (r == 1) { fd->state = 1; fd->pos = pos; fd->end = end; return 0; }
        pos = end;
    }
    fd->pos = fd->end = pos;
    return 0;
}

/* (buf, pos, final) of a reader's call, in view and fd */
static int parse_feed(PyObject *args, Py_buffer *view, Feed *fd) {
    if (!PyArg_ParseTuple(args, "y*np", view, &fd->pos, &fd->final)) return -1;
    if (fd->pos < 0 || fd->pos > view->len) {
        PyBuffer_Release(view); PyErr_SetString(PyExc_ValueError, "position out of the buffer"); return -1;
    }
    fd->buf = view->buf; fd->n = view->len;
    return 0;
}

/* step 1: a URI-R's run of lines in the map side's plain JSON through the expander (its records
 * go to x->raw); any other run (!meta, not plain) is Python's */
static int feed_run(void *ctx, const char *buf, Py_ssize_t pos, Py_ssize_t end, Py_ssize_t kn, Py_ssize_t nlines,
                    int tab, Buf *out) {
    Expander *x = ctx;
    const char *line = buf + pos;
    if (!tab || (kn == 5 && memcmp(line, "!meta", 5) == 0)) return 1;
    for (Py_ssize_t k = 0; k < kn; k++)
        if ((unsigned char)line[k] >= 0x80) return 1;
    map_clear(&x->cellmap);
    for (Py_ssize_t at = pos; at < end; ) {
        const char *q = memchr(buf + at, '\n', end - at);
        Py_ssize_t e = q ? q - buf : end;
        int r = add_cell_json(x, buf + at + kn + 1, buf + e);
        if (r != 0) return r;
        at = e + 1;
    }
    return uri_r(x, line, kn) < 0 ? -1 : 0;
}

static int feed_step(Expander *x, void *arg) { return scan_runs(arg, feed_run, x, &x->raw); }

static PyObject *Expander_feed(Expander *x, PyObject *args) {
    Py_buffer view;
    Feed fd;
    if (parse_feed(args, &view, &fd) < 0) return NULL;
    PyObject *lines = run_sink(x, 1, feed_step, &fd);
    PyBuffer_Release(&view);
    if (!lines) return NULL;
    PyObject *out = Py_BuildValue("(innN)", fd.state, fd.pos, fd.end, lines);
    return out;
}

static int close_step(Expander *x, void *unused) {
    if (x->ndrun > 0) {   /* held back in raw mode: as lines, or as pairs */
        if (x->raw_mode) { if (drun_flush(x) < 0) return -1; }
        else {
            int raw_lines = x->raw_mode;
            x->raw_mode = 1;
            Py_ssize_t before = x->raw.n;
            int r = drun_flush(x);
            x->raw_mode = raw_lines;
            if (r < 0) return -1;
            for (Py_ssize_t at = before; at < x->raw.n; ) {      /* lines -> (key, value) pairs */
                const char *line = x->raw.p + at, *nl = memchr(line, '\n', x->raw.n - at);
                const char *tab = memchr(line, '\t', nl - line);
                if (emit(x, "", 0, line, tab - line, tab + 1, nl - tab - 1) < 0) return -1;
                at = nl - x->raw.p + 1;
            }
            x->raw.n = before;
        }
    }
    if (close_group(x) < 0 || acc_flush_all(x) < 0) return -1;
    return flush_table(x);
}

/* step 2 (profiler.job.digests.corrections): one URI-R of a digest that several URI-Rs hold. The
 * largest length of each profile key its entries [[period, mime, status, max_len], ...] reach is
 * added to the digest's (URI-Rs, sum of lengths, largest) of that key. */
static int correct_uri_r(Expander *x, PyObject *urlkey, PyObject *entries) {
    Py_ssize_t un;
    const char *u = utf8(urlkey, &un);
    if (!u) return -1;
    Levels *L = &x->clev;
    if (urlkey_levels(x, L, u, un, 1) < 0) return -1;
    Map *mm = &x->cmine;
    map_clear(mm);
    Py_ssize_t ne = PyList_GET_SIZE(entries);
    for (Py_ssize_t i = 0; i < ne; i++) {
        PyObject *e = PyList_GET_ITEM(entries, i);
        if (!PyList_Check(e) || PyList_GET_SIZE(e) != 4) {
            PyErr_SetString(PyExc_ValueError, "a digest entry is [period, mime, status, max_len]");
            return -1;
        }
        Py_ssize_t pn, mn, sn;
        const char *p = utf8(PyList_GET_ITEM(e, 0), &pn), *m = p ? utf8(PyList_GET_ITEM(e, 1), &mn) : NULL;
        const char *s = m ? utf8(PyList_GET_ITEM(e, 2), &sn) : NULL;
        int64_t ml;
        if (!s || get_i64(PyList_GET_ITEM(e, 3), &ml) < 0) return -1;
        for (int l = 0; l < L->n; l++) {
            int idx = L->set[l];
            for (int c = 0; c < x->ncombos[idx]; c++) {
                Buf *b = &x->kb;
                b->n = 0;
                if (buf_put(b, L->keys.p + L->off[l], L->len[l]) < 0 || buf_putc(b, ' ') < 0
                    || put_suffix(b, p, pn, m, mn, s, sn, x->combos[idx][c]) < 0) return -1;
                int added;
                Py_ssize_t k = map_find_or_add(mm, b->p, b->n, &added);
                if (k < 0 || grow((void **)&x->cmine_ml, &x->cmine_cap, k + 1, sizeof(int64_t)) < 0) return -1;
                if (added || ml > x->cmine_ml[k]) x->cmine_ml[k] = ml;
            }
        }
    }
    for (Py_ssize_t i = 0; i < mm->n; i++) {
        int added;
        Py_ssize_t k = map_find_or_add(&x->ckey, map_key(mm, i), mm->ents[i].len, &added);
        if (k < 0 || grow((void **)&x->ck, &x->ck_cap, k + 1, sizeof(KeyAcc)) < 0) return -1;
        int64_t ml = x->cmine_ml[i];
        KeyAcc *a = &x->ck[k];
        if (added) { a->n = 1; a->total = a->largest = ml; continue; }
        a->n++; a->total += ml;
        if (ml > a->largest) a->largest = ml;
    }
    return 0;
}

/* correct(urlkey, entries) -> the number of profile keys the digest touches so far */
static PyObject *Expander_correct(Expander *x, PyObject *args) {
    PyObject *urlkey, *entries;
    if (!PyArg_ParseTuple(args, "UO!", &urlkey, &PyList_Type, &entries)) return NULL;
    if (correct_uri_r(x, urlkey, entries) < 0) return NULL;
    return PyLong_FromSsize_t(x->ckey.n);
}

/* the digest's keys so far, {key: [URI-Rs, sum of lengths, largest]} (to spill), forgotten here */
static PyObject *Expander_take_digest_keys(Expander *x, PyObject *noargs) {
    PyObject *out = PyDict_New();
    if (!out) return NULL;
    Map *m = &x->ckey;
    for (Py_ssize_t i = 0; i < m->n; i++) {
        KeyAcc *a = &x->ck[i];
        PyObject *k = PyUnicode_DecodeUTF8(map_key(m, i), m->ents[i].len, NULL);
        PyObject *v = k ? Py_BuildValue("[LLL]", (long long)a->n, (long long)a->total, (long long)a->largest) : NULL;
        if (!v || PyDict_SetItem(out, k, v) < 0) { Py_XDECREF(k); Py_XDECREF(v); Py_DECREF(out); return NULL; }
        Py_DECREF(k); Py_DECREF(v);
    }
    map_clear(m);
    return out;
}

/* the digest's corrections (a key held by n > 1 of its URI-Rs: -(n-1) digests, -(sum - largest)
 * dedup bytes) into the table, which is flushed when full */
static int end_digest_step(Expander *x, void *unused) {
    Map *m = &x->ckey;
    Rec r = {0, (int64_t)1 << 62, 0, 0, 0, 0, 0, {"~", 1}, {"", 0}};   /* stats.correction */
    for (Py_ssize_t i = 0; i < m->n; i++) {
        KeyAcc *a = &x->ck[i];
        if (a->n < 2) continue;
        r.digests = -(a->n - 1);
        r.dedup = -(a->total - a->largest);
        if (recmap_add(&x->table, map_key(m, i), m->ents[i].len, &r) < 0) return -1;
    }
    map_clear(m);
    if (x->table.m.n >= x->limit) return flush_table(x);
    return 0;
}

static PyObject *Expander_end_digest_raw(Expander *x, PyObject *noargs) { return run_sink(x, 1, end_digest_step, NULL); }

static PyObject *Expander_add(Expander *x, PyObject *args) { return run_sink(x, 0, add_step, args); }
static PyObject *Expander_add_raw(Expander *x, PyObject *args) { return run_sink(x, 1, add_step, args); }
static PyObject *Expander_close(Expander *x, PyObject *noargs) { return run_sink(x, 0, close_step, NULL); }
static PyObject *Expander_close_raw(Expander *x, PyObject *noargs) { return run_sink(x, 1, close_step, NULL); }

static void Expander_dealloc(Expander *x) {
    for (int i = 0; i < x->nsets; i++) PyMem_Free(x->combos ? x->combos[i] : NULL);
    PyMem_Free(x->combos); PyMem_Free(x->ncombos);
    recmap_free(&x->table); idrecs_free(&x->host_tuples); idrecs_free(&x->host_suffix);
    for (int g = 0; g < x->nacc; g++) {
        idrecs_free(&x->acc[g].sfx); idrecs_free(&x->acc[g].tup); buf_free(&x->acc[g].key);
    }
    PyMem_Free(x->acc); x->acc = NULL; x->nacc = 0;
    buf_free(&x->host); levels_free(&x->grp); levels_free(&x->own); levels_free(&x->clev);
    map_free(&x->cmine); PyMem_Free(x->cmine_ml); map_free(&x->ckey); PyMem_Free(x->ck);
    map_free(&x->cellmap); PyMem_Free(x->cells);
    stamp_free(&x->tupix); PyMem_Free(x->tups);
    map_free(&x->digmap); PyMem_Free(x->dmax); PyMem_Free(x->dstamp);
    PyMem_Free(x->dhead);
    PyMem_Free(x->dg_did); PyMem_Free(x->dg_next); PyMem_Free(x->dg_t); PyMem_Free(x->dg_dnext); PyMem_Free(x->dg_ml);
    map_free(&x->origmap); PyMem_Free(x->orig_cell);
    map_free(&x->tidmap); map_free(&x->sfxmap); PyMem_Free(x->memo); PyMem_Free(x->cofs);
    stamp_free(&x->pj); PyMem_Free(x->pj_sid);
    PyMem_Free(x->pj_head); PyMem_Free(x->pj_last); PyMem_Free(x->pj_mask); PyMem_Free(x->mrec);
    PyMem_Free(x->pe_t); PyMem_Free(x->pe_next);
    PyMem_Free(x->dr_start); PyMem_Free(x->de_t); PyMem_Free(x->de_d);
    buf_free(&x->kb); buf_free(&x->sb); buf_free(&x->raw); buf_free(&x->drun); PyMem_Free(x->drun_off);
    filter_release(&x->shared);
    Py_XDECREF(x->out);
    Py_TYPE(x)->tp_free((PyObject *)x);
}

/* Expander(combo_sets, set_of, host_depth, path_depth, exact_urls, limit)
 * combo_sets: [[(dt, mime, status) option codes, ...], ...]; set_of: 6 set indices */
static int Expander_init(Expander *x, PyObject *args, PyObject *kw) {
    PyObject *sets, *set_of;
    int hd, pd, ex;
    Py_ssize_t limit;
    if (!PyArg_ParseTuple(args, "OOiipn", &sets, &set_of, &hd, &pd, &ex, &limit)) return -1;
    if (x->combos) { PyErr_SetString(PyExc_RuntimeError, "Expander initialised twice"); return -1; }
    PyObject *s = PySequence_Fast(sets, "combo_sets must be a sequence");
    if (!s) return -1;
    int n = (int)PySequence_Fast_GET_SIZE(s);
    if (n > 255) { Py_DECREF(s); PyErr_SetString(PyExc_ValueError, "too many combination sets"); return -1; }
    x->nsets = n;
    x->ncombos = PyMem_Calloc(n ? n : 1, sizeof(int));
    x->combos = PyMem_Calloc(n ? n : 1, sizeof(*x->combos));
    if (!x->ncombos || !x->combos) { Py_DECREF(s); PyErr_NoMemory(); return -1; }
    for (int i = 0; i < n; i++) {
        PyObject *cs = PySequence_Fast(PySequence_Fast_GET_ITEM(s, i), "a combination set must be a sequence");
        if (!cs) { Py_DECREF(s); return -1; }
        int nc = (int)PySequence_Fast_GET_SIZE(cs);
        if (nc > 64) { Py_DECREF(cs); Py_DECREF(s); PyErr_SetString(PyExc_ValueError, "too many combinations"); return -1; }
        x->combos[i] = PyMem_Calloc(nc ? nc : 1, 3);
        if (!x->combos[i]) { Py_DECREF(cs); Py_DECREF(s); PyErr_NoMemory(); return -1; }
        x->ncombos[i] = nc;
        for (int c = 0; c < nc; c++) {
            int a, b, d;
            if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(cs, c), "iii", &a, &b, &d)) {
                Py_DECREF(cs); Py_DECREF(s); return -1;
            }
            if (a < 0 || a > 2 || b < 0 || b > 2 || d < 0 || d > 2) {
                Py_DECREF(cs); Py_DECREF(s); PyErr_SetString(PyExc_ValueError, "option code out of range"); return -1;
            }
            x->combos[i][c][0] = (uint8_t)a; x->combos[i][c][1] = (uint8_t)b; x->combos[i][c][2] = (uint8_t)d;
        }
        Py_DECREF(cs);
    }
    Py_DECREF(s);
    if (!PyArg_ParseTuple(set_of, "iiiiii", &x->set_of[0], &x->set_of[1], &x->set_of[2], &x->set_of[3],
                          &x->set_of[4], &x->set_of[5])) return -1;
    for (int i = 0; i < 6; i++)
        if (x->set_of[i] < 0 || x->set_of[i] >= n) { PyErr_SetString(PyExc_ValueError, "bad set index"); return -1; }
    x->host_depth = hd; x->path_depth = pd; x->exact_urls = ex;
    x->limit = limit < 1 ? 1 : limit;
    x->id_limit = x->limit < ID_LIMIT ? x->limit : ID_LIMIT;
    if (!(x->cofs = PyMem_Calloc(n ? n : 1, sizeof(int)))) { PyErr_NoMemory(); return -1; }
    x->ctot = 0;
    for (int i = 0; i < n; i++) { x->cofs[i] = x->ctot; x->ctot += x->ncombos[i]; }
    if (x->ctot == 0) x->ctot = 1;
    if (recmap_init(&x->table) < 0
        || map_init(&x->cellmap) < 0
        || map_init(&x->digmap) < 0 || map_init(&x->origmap) < 0 || map_init(&x->tidmap) < 0
        || map_init(&x->sfxmap) < 0
        || map_init(&x->cmine) < 0 || map_init(&x->ckey) < 0) return -1;
    return 0;
}

static PyObject *Expander_set_shared_digests(Expander *x, PyObject *bitmap) {
    if (filter_take(&x->shared, bitmap, 1) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *Expander_get_held_back(Expander *x, void *closure) { return PyLong_FromLongLong(x->held_back); }

static PyGetSetDef Expander_getset[] = {
    {"digests_held_back", (getter)Expander_get_held_back, NULL,
     "digest records not written: the shared-digest bitmap has their digest in one map record only", NULL},
    {NULL}
};

static PyMethodDef Expander_methods[] = {
    {"add", (PyCFunction)Expander_add, METH_VARARGS, "add(urlkey, cell_lists) -> [(key, value), ...]"},
    {"set_shared_digests", (PyCFunction)Expander_set_shared_digests, METH_O,
     "set_shared_digests(bitmap or None): write digest records only for digests the bitmap holds"},
    {"close", (PyCFunction)Expander_close, METH_NOARGS, "close() -> [(key, value), ...]"},
    {"add_raw", (PyCFunction)Expander_add_raw, METH_VARARGS,
     "add_raw(urlkey, cell_lists) -> bytes: the same records as add(), as key<TAB>value lines"},
    {"close_raw", (PyCFunction)Expander_close_raw, METH_NOARGS, "close_raw() -> bytes: close()'s records as lines"},
    {"feed", (PyCFunction)Expander_feed, METH_VARARGS,
     "feed(buf, pos, final) -> (state, pos, end, lines): add_raw() over sorted reduce input lines"},
    {"correct", (PyCFunction)Expander_correct, METH_VARARGS,
     "correct(urlkey, entries) -> int: add one URI-R of a shared digest (step 2); the digest's keys so far"},
    {"take_digest_keys", (PyCFunction)Expander_take_digest_keys, METH_NOARGS,
     "take_digest_keys() -> {key: [URI-Rs, sum of lengths, largest]}: the digest's keys so far (to spill)"},
    {"end_digest_raw", (PyCFunction)Expander_end_digest_raw, METH_NOARGS,
     "end_digest_raw() -> bytes: the digest's corrections into the table; K lines when it fills up"},
    {NULL}
};

static PyTypeObject ExpanderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "profiler.accel._apfast.Expander",
    .tp_basicsize = sizeof(Expander),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Expander_init,
    .tp_dealloc = (destructor)Expander_dealloc,
    .tp_methods = Expander_methods,
    .tp_getset = Expander_getset,
    .tp_doc = "Step-1 reducer: URI-R cells -> key and digest records (see profiler.job.expand.Expander); "
              "step 2: corrections of shared digests (see profiler.job.digests).",
};


/* ------------------------------------------------------------------ Aggregator (map side) */

typedef struct { int64_t count, bytes, maxlen; TS first, last; Py_ssize_t next; } ACell;

typedef struct {
    PyObject_HEAD
    int period_len, resolve;
    Py_ssize_t limit;
    int nfields, i_key, i_url, i_ts, i_mime, i_status, i_digest, i_len;
    Map uris; Py_ssize_t *u_head, *u_tail, ucap;
    Py_ssize_t last_ui;        /* the URI-R of the capture before (an index's captures of one URI-R follow each other) */
    Map cells; ACell *cv; Py_ssize_t cvcap;
    long long captures;
    long long bytes_total, max_bytes;   /* lengths added; the most they may add up to (mapside.map_split) */
    Buf kb, jb;
    Filter filter; uint64_t *fh; Py_ssize_t fhcap;   /* the map task's digest filter, if any */
} Aggregator;

static int agg_layout(Aggregator *a, PyObject *letters) {
    Py_ssize_t n;
    const char *s = utf8(letters, &n);
    if (!s) return -1;
    a->nfields = 0;
    a->i_key = a->i_url = a->i_ts = a->i_mime = a->i_status = a->i_digest = a->i_len = -1;
    int i_n = -1;
    Py_ssize_t i = 0;
    while (i < n) {
        while (i < n && (s[i] == ' ' || s[i] == '\t')) i++;
        if (i >= n) break;
        Py_ssize_t j = i;
        while (j < n && s[j] != ' ' && s[j] != '\t') j++;
        int f = a->nfields++;
        if (j - i == 1) {   /* the first position of a letter wins, as in make_parser's dict */
            switch (s[i]) {
            case 'N': if (a->i_key < 0) a->i_key = f; break;
            case 'a': if (a->i_url < 0) a->i_url = f; break;
            case 'b': if (a->i_ts < 0) a->i_ts = f; break;
            case 'm': if (a->i_mime < 0) a->i_mime = f; break;
            case 's': if (a->i_status < 0) a->i_status = f; break;
            case 'k': if (a->i_digest < 0) a->i_digest = f; break;
            case 'S': if (a->i_len < 0) a->i_len = f; break;
            case 'n': if (i_n < 0) i_n = f; break;
            }
        }
        i = j;
    }
    if (a->i_len < 0) a->i_len = i_n;
    return 0;
}

/* add one capture (UTF-8 strings); 1 when the table is full, -1 on error */
static int agg_add(Aggregator *a, const char *u, Py_ssize_t un, const char *ts, Py_ssize_t tn,
                   const char *m, Py_ssize_t mn, const char *s, Py_ssize_t sn, const char *d, Py_ssize_t dn,
                   int64_t length, int revisit) {
    int added = 0;
    Py_ssize_t ui = a->last_ui;
    if (ui < 0 || a->uris.ents[ui].len != un || memcmp(map_key(&a->uris, ui), u, un) != 0) {
        ui = map_find_or_add(&a->uris, u, un, &added);
        if (ui < 0) return -1;
        a->last_ui = ui;
    }
    if (added) {
        if (grow2((void **)&a->u_head, sizeof(Py_ssize_t), (void **)&a->u_tail, sizeof(Py_ssize_t), &a->ucap, ui + 1) < 0)
            return -1;
        a->u_head[ui] = a->u_tail[ui] = -1;
    }
    a->captures++;
    a->bytes_total += length;
    Py_ssize_t pn = tn < a->period_len ? tn : a->period_len;
    int rev = revisit && a->resolve;
    Buf *b = &a->kb;
    b->n = 0;
    uint32_t uix = (uint32_t)ui;
    if (buf_put(b, (const char *)&uix, 4) < 0) return -1;
    if (rev) { if (put_tuple_key(b, ts, pn, "", 0, "", 0) < 0) return -1; }
    else if (put_tuple_key(b, ts, pn, m, mn, s, sn) < 0) return -1;
    if (buf_put_u32(b, (uint32_t)dn) < 0 || buf_put(b, d, dn) < 0 || buf_putc(b, (char)rev) < 0) return -1;
    Py_ssize_t ci = map_find_or_add(&a->cells, b->p, b->n, &added);
    if (ci < 0) return -1;
    if (added) {
        if (grow((void **)&a->cv, &a->cvcap, ci + 1, sizeof(ACell)) < 0) return -1;
        ACell *c = &a->cv[ci];
        c->count = 1; c->bytes = length; c->maxlen = length;
        if (ts_set(&c->first, ts, tn) < 0) return -1;
        c->last = c->first;
        c->next = -1;
        if (a->u_tail[ui] < 0) a->u_head[ui] = ci; else a->cv[a->u_tail[ui]].next = ci;
        a->u_tail[ui] = ci;
    } else {
        ACell *c = &a->cv[ci];
        TS t;
        if (ts_set(&t, ts, tn) < 0) return -1;
        c->count++; c->bytes += length;
        if (length > c->maxlen) c->maxlen = length;
        if (ts_cmp(&t, &c->first) < 0) c->first = t;
        else if (ts_cmp(&t, &c->last) > 0) c->last = t;
    }
    return a->uris.n >= a->limit ? 1 : 0;
}

/* the first byte of s[j:n] that JSON escapes (a control byte, '"', '\\'), or n; 16 bytes a step (SSE2) */
static inline Py_ssize_t json_plain_end(const char *s, Py_ssize_t j, Py_ssize_t n) {
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'), ctl = _mm_set1_epi8(0x1f);
    for (; j + 16 <= n; j += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(s + j));
        __m128i m = _mm_or_si128(_mm_cmpeq_epi8(_mm_min_epu8(v, ctl), v),
                                 _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)));
        int mask = _mm_movemask_epi8(m);
        if (mask) return j + __builtin_ctz(mask);
    }
#endif
    while (j < n && (unsigned char)s[j] >= 0x20 && s[j] != '"' && s[j] != '\\') j++;
    return j;
}

static int json_str(Buf *b, const char *s, Py_ssize_t n) {
    /* runs that need no escape are copied whole */
    if (buf_reserve(b, n + 2) < 0) return -1;
    b->p[b->n++] = '"';
    Py_ssize_t i = 0;
    while (i < n) {
        Py_ssize_t j = json_plain_end(s, i, n);
        if (buf_put(b, s + i, j - i) < 0) return -1;
        if (j == n) break;
        unsigned char c = (unsigned char)s[j];
        if (c == '"' || c == '\\') { char e[2] = {'\\', (char)c}; if (buf_put(b, e, 2) < 0) return -1; }
        else {
            char e[7];
            snprintf(e, sizeof e, "\\u%04x", c);
            if (buf_put(b, e, 6) < 0) return -1;
        }
        i = j + 1;
    }
    return buf_putc(b, '"');
}

static int json_int(Buf *b, int64_t v) {
    char t[24];
    int n = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do { t[sizeof t - 1 - n++] = (char)('0' + u % 10); u /= 10; } while (u);
    if (v < 0) t[sizeof t - 1 - n++] = '-';
    return buf_put(b, t + sizeof t - n, n);
}

/* URI-R ui's record written: the JSON of its cells [[period, mime, status, digest, revisit, count,
 * bytes, max_len, first, last], ...] appended to b, and its digests into the map task's digest
 * filter when there is one (in the same pass over the cells) */
static int agg_record(Aggregator *a, Py_ssize_t ui, Buf *b) {
    Py_ssize_t nh = 0;
    if (buf_putc(b, '[') < 0) return -1;
    for (Py_ssize_t ci = a->u_head[ui]; ci >= 0; ci = a->cv[ci].next) {
        const char *k = map_key(&a->cells, ci) + 4, *p, *m, *s;
        Py_ssize_t pn, mn, sn;
        get_tuple_key(k, &p, &pn, &m, &mn, &s, &sn);
        const char *dk = s + sn;
        uint32_t dn;
        memcpy(&dn, dk, 4);
        const char *d = dk + 4;
        int rev = d[dn];
        ACell *c = &a->cv[ci];
        if (a->filter.on && !(dn == 1 && d[0] == '-')) {
            if (grow((void **)&a->fh, &a->fhcap, nh + 1, sizeof(uint64_t)) < 0) return -1;
            a->fh[nh++] = hash_bytes(d, dn);
        }
        if ((ci != a->u_head[ui] && buf_putc(b, ',') < 0) || buf_putc(b, '[') < 0
            || json_str(b, p, pn) < 0 || buf_putc(b, ',') < 0 || json_str(b, m, mn) < 0
            || buf_putc(b, ',') < 0 || json_str(b, s, sn) < 0 || buf_putc(b, ',') < 0
            || json_str(b, d, dn) < 0 || buf_put(b, rev ? ",1," : ",0,", 3) < 0
            || json_int(b, c->count) < 0 || buf_putc(b, ',') < 0 || json_int(b, c->bytes) < 0
            || buf_putc(b, ',') < 0) return -1;
        if (c->count == 1) {          /* one capture: largest length = bytes, last = first (8 items) */
            if (json_str(b, c->first.s, c->first.n) < 0 || buf_putc(b, ']') < 0) return -1;
            continue;
        }
        if (json_int(b, c->maxlen) < 0 || buf_putc(b, ',') < 0 || json_str(b, c->first.s, c->first.n) < 0
            || buf_putc(b, ',') < 0 || json_str(b, c->last.s, c->last.n) < 0 || buf_putc(b, ']') < 0) return -1;
    }
    if (a->filter.on) filter_add_record(a->filter.view.buf, a->filter.nbytes, a->fh, nh);
    return buf_putc(b, ']');
}

static void agg_clear(Aggregator *a) {
    a->last_ui = -1;
    map_clear(&a->uris);
    map_clear(&a->cells);
}

/* The table emptied by a flush; with keep, but for the URI-R of the last capture, whose cells are
 * put back: when the table fills up on a URI-R's first capture, its next captures may follow (a
 * sorted index's do), and the flushed URI-Rs are then whole, written once and in order. */
static int agg_clear_keeping(Aggregator *a, int keep) {
    Py_ssize_t ui = a->last_ui;
    if (!keep || ui < 0) { agg_clear(a); return 0; }
    Buf *sv = &a->kb;                 /* the URI-R's key, then each cell: key length, key, ACell */
    sv->n = 0;
    Py_ssize_t un = a->uris.ents[ui].len;
    if (buf_put(sv, map_key(&a->uris, ui), un) < 0) return -1;
    for (Py_ssize_t ci = a->u_head[ui]; ci >= 0; ci = a->cv[ci].next) {
        Py_ssize_t kn = a->cells.ents[ci].len;
        if (buf_put(sv, (const char *)&kn, sizeof kn) < 0 || buf_put(sv, map_key(&a->cells, ci), kn) < 0
            || buf_put(sv, (const char *)&a->cv[ci], sizeof(ACell)) < 0) return -1;
    }
    agg_clear(a);
    int added;
    Py_ssize_t nu = map_find_or_add(&a->uris, sv->p, un, &added);   /* the map copies the key */
    if (nu < 0 || grow2((void **)&a->u_head, sizeof(Py_ssize_t), (void **)&a->u_tail, sizeof(Py_ssize_t),
                        &a->ucap, nu + 1) < 0) return -1;
    a->u_head[nu] = a->u_tail[nu] = -1;
    a->last_ui = nu;
    uint32_t uix = (uint32_t)nu;
    for (Py_ssize_t at = un; at < sv->n;) {
        Py_ssize_t kn;
        memcpy(&kn, sv->p + at, sizeof kn); at += sizeof kn;
        memcpy(sv->p + at, &uix, 4);                                   /* the cell key's URI-R index */
        Py_ssize_t ci = map_find_or_add(&a->cells, sv->p + at, kn, &added);
        if (ci < 0 || grow((void **)&a->cv, &a->cvcap, ci + 1, sizeof(ACell)) < 0) return -1;
        at += kn;
        memcpy(&a->cv[ci], sv->p + at, sizeof(ACell)); at += sizeof(ACell);
        a->cv[ci].next = -1;
        if (a->u_tail[nu] < 0) a->u_head[nu] = ci; else a->cv[a->u_tail[nu]].next = ci;
        a->u_tail[nu] = ci;
    }
    return 0;
}

static int keep_arg(PyObject *args, int *keep) {
    *keep = 0;
    return PyArg_ParseTuple(args, "|p", keep);
}

/* [(urlkey bytes, cells JSON bytes), ...] and an empty table (keep: agg_clear_keeping) */
static PyObject *Aggregator_flush(Aggregator *a, PyObject *args) {
    int keep;
    if (!keep_arg(args, &keep)) return NULL;
    PyObject *out = PyList_New(0);
    if (!out) return NULL;
    Buf *b = &a->jb;
    for (Py_ssize_t ui = 0; ui < a->uris.n; ui++) {
        if (keep && ui == a->last_ui) continue;
        b->n = 0;
        if (agg_record(a, ui, b) < 0) goto fail;
        PyObject *pair = Py_BuildValue("(y#y#)", map_key(&a->uris, ui), a->uris.ents[ui].len, b->p, b->n);
        if (!pair) goto fail;
        int r = PyList_Append(out, pair);
        Py_DECREF(pair);
        if (r < 0) goto fail;
    }
    if (agg_clear_keeping(a, keep) < 0) goto fail;
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}

/* flush() as bytes: the lines urlkey<TAB>cells JSON */
static PyObject *Aggregator_flush_raw(Aggregator *a, PyObject *args) {
    int keep;
    if (!keep_arg(args, &keep)) return NULL;
    Buf *b = &a->jb;
    b->n = 0;
    for (Py_ssize_t ui = 0; ui < a->uris.n; ui++)
        if (!(keep && ui == a->last_ui)
            && (buf_put(b, map_key(&a->uris, ui), a->uris.ents[ui].len) < 0 || buf_putc(b, '\t') < 0
                || agg_record(a, ui, b) < 0 || buf_putc(b, '\n') < 0)) return NULL;
    PyObject *out = PyBytes_FromStringAndSize(b->p ? b->p : "", b->n);
    if (!out) return NULL;
    if (agg_clear_keeping(a, keep) < 0) { Py_DECREF(out); return NULL; }
    b->n = 0;
    if (b->cap > (64 << 20)) buf_free(b);
    return out;
}

static inline int is_ws(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == 11 || c == 12; }

/* the end of the field of line[j:n] at j: the first whitespace byte (is_ws), or n; 16 bytes a step
 * to the next byte <= 0x20 (SSE2) */
static inline Py_ssize_t field_end(const char *line, Py_ssize_t j, Py_ssize_t n) {
    for (;;) {
#if defined(__SSE2__)
        const __m128i space = _mm_set1_epi8(0x20);
        for (; j + 16 <= n; j += 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(line + j));
            int mask = _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(v, space), v));
            if (mask) { j += __builtin_ctz(mask); break; }
        }
#endif
        while (j < n && (unsigned char)line[j] > 0x20) j++;
        if (j >= n || is_ws((unsigned char)line[j])) return j;
        j++;                 /* a control byte that is no whitespace belongs to the field */
    }
}
static inline int is_safe(const char *s, Py_ssize_t n) {   /* key_field leaves it as it is: printable ASCII */
    for (Py_ssize_t i = 0; i < n; i++) if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f) return 0;
    return 1;
}
static inline int all_digits(const char *s, Py_ssize_t n) {
    if (n == 0) return 0;
    for (Py_ssize_t i = 0; i < n; i++) if (s[i] < '0' || s[i] > '9') return 0;
    return 1;
}
static inline int starts(const char *s, Py_ssize_t n, const char *prefix) {
    size_t pl = strlen(prefix);
    return (size_t)n >= pl && memcmp(s, prefix, pl) == 0;
}
static inline int in2(const char *t, const char *lo, const char *hi) {
    return memcmp(t, lo, 2) >= 0 && memcmp(t, hi, 2) <= 0;
}

#define MAXF 32
/* One CDX line the way profiler.formats.cdx's parser reads it, for the common case only: 0 parsed and
 * added, 1 table full after adding it, 2 Python must read it (legend, skip reason, surt(),
 * escaping), -1 error. */
static int agg_line(Aggregator *a, const char *line, Py_ssize_t n) {
    const char *f[MAXF]; Py_ssize_t fl[MAXF];
    int nf = 0;
    if (a->nfields == 0 || a->nfields > MAXF || a->i_key < 0 || a->i_ts < 0) return 2;
    if (n >= 4 && (memcmp(line, " CDX", 4) == 0 || memcmp(line, "CDX ", 4) == 0)) return 2;
    Py_ssize_t i = 0;
    while (i < n) {
        while (i < n && is_ws((unsigned char)line[i])) i++;
        if (i >= n) break;
        Py_ssize_t j = i;
        j = field_end(line, j, n);
        if (nf == MAXF) return 2;
        f[nf] = line + i; fl[nf] = j - i; nf++;
        i = j;
    }
    if (nf != a->nfields) return 2;
    const char *key = f[a->i_key]; Py_ssize_t kn = fl[a->i_key];
    const char *mr = a->i_mime >= 0 ? f[a->i_mime] : "-"; Py_ssize_t mrn = a->i_mime >= 0 ? fl[a->i_mime] : 1;
    if (starts(mr, mrn, "warc/warcinfo") || starts(mr, mrn, "arc/filedesc") || starts(mr, mrn, "warc/metadata")
        || starts(mr, mrn, "warc/request")) return 2;
    if (a->i_url >= 0 && (starts(f[a->i_url], fl[a->i_url], "filedesc:") || starts(f[a->i_url], fl[a->i_url], "warcinfo:")))
        return 2;
    /* the index's urlkey, when it is a SURT that needs no escaping */
    const char *paren = memchr(key, ')', kn);
    if (!paren || paren == key || memchr(key, '/', paren - key) || !is_safe(key, kn) || key[0] == '!' || key[0] == '@' || key[0] == '{')
        return 2;
    /* timestamp: 4 to 14 digits, padded to the earliest valid datetime, components in range */
    const char *tr = f[a->i_ts]; Py_ssize_t tn = fl[a->i_ts];
    if (tn < 4 || tn > 14 || !all_digits(tr, tn)) return 2;
    char ts[14];
    memcpy(ts, tr, tn);
    memset(ts + tn, '0', 14 - tn);
    if (tn < 6 && ts[4] == '0' && ts[5] == '0') ts[5] = '1';
    if (tn < 8 && ts[6] == '0' && ts[7] == '0') ts[7] = '1';
    if ((tn > 4 && !in2(ts + 4, "01", "12")) || (tn > 6 && !in2(ts + 6, "01", "31"))
        || (tn > 8 && memcmp(ts + 8, "23", 2) > 0) || (tn > 10 && memcmp(ts + 10, "59", 2) > 0)
        || (tn > 12 && memcmp(ts + 12, "60", 2) > 0)) return 2;
    int64_t length = 0;
    if (a->i_len >= 0) {
        const char *lr = f[a->i_len]; Py_ssize_t ln = fl[a->i_len];
        if (all_digits(lr, ln)) {
            if (ln > 18) return 2;
            for (Py_ssize_t k = 0; k < ln; k++) length = length * 10 + (lr[k] - '0');
        } else if (!(ln == 1 && lr[0] == '-')) return 2;
    }
    /* mime: up to ';', lower case; unknown forms -> 'unk' */
    char mime[256];
    const char *semi = memchr(mr, ';', mrn);
    Py_ssize_t mn = semi ? semi - mr : mrn;
    if (mn > (Py_ssize_t)sizeof mime || !is_safe(mr, mn) || (mn > 0 && mr[0] == '{')) return 2;
    for (Py_ssize_t k = 0; k < mn; k++) mime[k] = (mr[k] >= 'A' && mr[k] <= 'Z') ? mr[k] + 32 : mr[k];
    if (mn == 0 || (mn == 1 && mime[0] == '-') || (mn == 3 && !memcmp(mime, "unk", 3))
        || (mn == 7 && !memcmp(mime, "unknown", 7)) || (mn == 7 && !memcmp(mime, "no-type", 7))
        || (mn == 4 && !memcmp(mime, "none", 4))) {
        memcpy(mime, "unk", 3); mn = 3;
    }
    const char *st = "unk"; Py_ssize_t stn = 3;
    if (a->i_status >= 0 && fl[a->i_status] == 3 && all_digits(f[a->i_status], 3)) { st = f[a->i_status]; stn = 3; }
    char digest[256];
    Py_ssize_t dn = 1;
    digest[0] = '-';
    if (a->i_digest >= 0) {
        const char *dr = f[a->i_digest]; Py_ssize_t drn = fl[a->i_digest];
        if (!(drn == 1 && dr[0] == '-')) {
            const char *colon = memchr(dr, ':', drn);
            if (colon) { drn -= colon + 1 - dr; dr = colon + 1; }
            if (drn > 0) {
                if (drn > (Py_ssize_t)sizeof digest || !is_safe(dr, drn)) return 2;
                for (Py_ssize_t k = 0; k < drn; k++) digest[k] = (dr[k] >= 'a' && dr[k] <= 'z') ? dr[k] - 32 : dr[k];
                dn = drn;
            }
        }
    }
    int revisit = mn == 12 && memcmp(mime, "warc/revisit", 12) == 0;
    if (length > a->max_bytes - a->bytes_total) return 2;    /* past the byte budget: Python counts it */
    int r = agg_add(a, key, kn, ts, 14, mime, mn, st, stn, digest, dn, length, revisit);
    return r;
}

/* feed(buf, pos) -> (state, pos, end): reads the lines of buf from pos. state 0: all read (pos =
 * len(buf)); 1: the line buf[pos:end] is for Python (then go on at end + 1); 2: the table is full
 * (flush, then go on at pos). */
static PyObject *Aggregator_feed(Aggregator *a, PyObject *args) {
    Py_buffer view;
    Py_ssize_t pos;
    if (!PyArg_ParseTuple(args, "y*n", &view, &pos)) return NULL;
    if (pos < 0) { PyBuffer_Release(&view); PyErr_SetString(PyExc_ValueError, "negative position"); return NULL; }
    const char *buf = view.buf;
    Py_ssize_t n = view.len;
    int state = 0;
    Py_ssize_t end = n;
    while (pos < n) {
        const char *nl = memchr(buf + pos, '\n', n - pos);
        Py_ssize_t le = nl ? nl - buf : n, next = nl ? le + 1 : n;
        Py_ssize_t ln = le - pos;
        if (ln > 0 && buf[pos + ln - 1] == '\r') ln--;
        if (ln == 0 || buf[pos] == '!' || buf[pos] == '@') { pos = next; continue; }
        int r = agg_line(a, buf + pos, ln);
        if (r < 0) { PyBuffer_Release(&view); return NULL; }
        if (r == 2) { state = 1; end = le; break; }
        pos = next;
        if (r == 1) { state = 2; break; }
    }
    PyBuffer_Release(&view);
    return Py_BuildValue("(inn)", state, pos, end);
}

static PyObject *Aggregator_add_capture(Aggregator *a, PyObject *args) {
    PyObject *u, *t, *m, *s, *d, *rev;
    long long length;
    if (!PyArg_ParseTuple(args, "UUUUULO", &u, &t, &m, &s, &d, &length, &rev)) return NULL;
    Py_ssize_t un, tn, mn, sn, dn;
    const char *us = utf8(u, &un), *ts = utf8(t, &tn), *ms = utf8(m, &mn), *ss = utf8(s, &sn), *ds = utf8(d, &dn);
    if (!us || !ts || !ms || !ss || !ds) return NULL;
    int r = PyObject_IsTrue(rev);
    if (r < 0) return NULL;
    r = agg_add(a, us, un, ts, tn, ms, mn, ss, sn, ds, dn, length, r);
    if (r < 0) return NULL;
    return PyBool_FromLong(r);
}

static PyObject *Aggregator_set_layout(Aggregator *a, PyObject *letters) {
    if (agg_layout(a, letters) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *Aggregator_get_captures(Aggregator *a, void *closure) { return PyLong_FromLongLong(a->captures); }
static PyObject *Aggregator_get_bytes_total(Aggregator *a, void *closure) { return PyLong_FromLongLong(a->bytes_total); }

static PyObject *Aggregator_set_max_bytes(Aggregator *a, PyObject *arg) {
    long long v = PyLong_AsLongLong(arg);
    if (v == -1 && PyErr_Occurred()) return NULL;
    if (v < 0) { PyErr_SetString(PyExc_ValueError, "max_bytes must not be negative"); return NULL; }
    a->max_bytes = v;
    Py_RETURN_NONE;
}

static void Aggregator_dealloc(Aggregator *a) {
    map_free(&a->uris); map_free(&a->cells);
    PyMem_Free(a->u_head); PyMem_Free(a->u_tail); PyMem_Free(a->cv);
    buf_free(&a->kb); buf_free(&a->jb);
    filter_release(&a->filter); PyMem_Free(a->fh);
    Py_TYPE(a)->tp_free((PyObject *)a);
}

/* Aggregator(period_len, resolve_revisits, limit, letters) */
static int Aggregator_init(Aggregator *a, PyObject *args, PyObject *kw) {
    int pl, resolve;
    Py_ssize_t limit;
    PyObject *letters;
    if (!PyArg_ParseTuple(args, "ipnU", &pl, &resolve, &limit, &letters)) return -1;
    if (a->uris.slots) { PyErr_SetString(PyExc_RuntimeError, "Aggregator initialised twice"); return -1; }
    a->period_len = pl; a->resolve = resolve; a->limit = limit < 1 ? 1 : limit;
    a->last_ui = -1;
    a->bytes_total = 0; a->max_bytes = LLONG_MAX;
    if (map_init(&a->uris) < 0 || map_init(&a->cells) < 0) return -1;
    return agg_layout(a, letters);
}

static PyObject *Aggregator_set_digest_filter(Aggregator *a, PyObject *filter) {
    if (filter_take(&a->filter, filter, 2) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef Aggregator_methods[] = {
    {"feed", (PyCFunction)Aggregator_feed, METH_VARARGS, "feed(buf, pos) -> (state, pos, end)"},
    {"add_capture", (PyCFunction)Aggregator_add_capture, METH_VARARGS,
     "add_capture(urlkey, ts, mime, status, digest, length, revisit) -> table full"},
    {"flush", (PyCFunction)Aggregator_flush, METH_VARARGS,
     "flush(keep_last=False) -> [(urlkey, cells JSON), ...]; keep_last: the last capture's URI-R stays"},
    {"flush_raw", (PyCFunction)Aggregator_flush_raw, METH_VARARGS, "flush_raw(keep_last=False) -> bytes: flush()'s records as lines"},
    {"set_layout", (PyCFunction)Aggregator_set_layout, METH_O, "set_layout(CDX legend letters)"},
    {"set_max_bytes", (PyCFunction)Aggregator_set_max_bytes, METH_O,
     "set_max_bytes(n): lines whose length would take the lengths added past n come back to Python"},
    {"set_digest_filter", (PyCFunction)Aggregator_set_digest_filter, METH_O,
     "set_digest_filter(bytearray or None): each flushed record's digests go into this map task's filter"},
    {NULL}
};

static PyGetSetDef Aggregator_getset[] = {
    {"captures", (getter)Aggregator_get_captures, NULL, "captures added", NULL},
    {"bytes_total", (getter)Aggregator_get_bytes_total, NULL, "lengths added", NULL},
    {NULL}
};

static PyTypeObject AggregatorType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "profiler.accel._apfast.Aggregator",
    .tp_basicsize = sizeof(Aggregator),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Aggregator_init,
    .tp_dealloc = (destructor)Aggregator_dealloc,
    .tp_methods = Aggregator_methods,
    .tp_getset = Aggregator_getset,
    .tp_doc = "Map side: CDX lines -> cells per URI-R (see profiler.job.mapside.CaptureAggregator).",
};

/* ------------------------------------------------------------------ key records in plain JSON */

/* a stats record [total, min, max, urir, bytes, digests, dedup_bytes, first, last] in the plain JSON
 * of the steps before (see json_plain_str) -> r: 0, or 1 when it is not plain */
static int parse_record(const char *p, const char *end, Rec *r) {
    int64_t v[7];
    const char *first, *last;
    Py_ssize_t fn, ln;
    if (json_char(&p, end, '[')) return 1;
    for (int i = 0; i < 7; i++)
        if (json_plain_int(&p, end, &v[i]) || json_char(&p, end, ',')) return 1;
    if (json_plain_str(&p, end, &first, &fn) || json_char(&p, end, ',') || json_plain_str(&p, end, &last, &ln)
        || json_char(&p, end, ']') || p != end || fn > TSMAX || ln > TSMAX) return 1;
    r->total = v[0]; r->min = v[1]; r->max = v[2]; r->urir = v[3]; r->bytes = v[4]; r->digests = v[5];
    r->dedup = v[6];
    ts_set(&r->first, first, fn);
    ts_set(&r->last, last, ln);
    return 0;
}

/* a += b as profiler.model.stats.merge_into; 1 when a sum leaves int64 (Python's, which raises) */
static int rec_merge_checked(Rec *a, const Rec *b) {
    if (__builtin_add_overflow(a->total, b->total, &a->total) || __builtin_add_overflow(a->urir, b->urir, &a->urir)
        || __builtin_add_overflow(a->bytes, b->bytes, &a->bytes)
        || __builtin_add_overflow(a->digests, b->digests, &a->digests)
        || __builtin_add_overflow(a->dedup, b->dedup, &a->dedup)) return 1;
    if (b->min < a->min) a->min = b->min;
    if (b->max > a->max) a->max = b->max;
    if (ts_cmp(&b->first, &a->first) < 0) a->first = b->first;
    if (ts_cmp(&b->last, &a->last) > 0) a->last = b->last;
    return 0;
}

/* the records of a run of lines of one key (key, TAB, plain JSON record) summed as
 * profiler.model.stats.sum_all: 0, or 1 when one is not plain or a sum leaves int64 */
static int sum_run(const char *buf, Py_ssize_t pos, Py_ssize_t end, Py_ssize_t kn, Rec *sum) {
    for (Py_ssize_t at = pos; at < end; ) {
        const char *nl = memchr(buf + at, '\n', end - at);
        Py_ssize_t le = nl ? nl - buf : end;
        Rec r;
        if (parse_record(buf + at + kn + 1, buf + le, &r)) return 1;
        if (at == pos) *sum = r;
        else if (rec_merge_checked(sum, &r)) return 1;
        at = le + 1;
    }
    return 0;
}

/* a stats record as its profile line's JSON block (profiler.model.stats.to_json), appended to b */
static int profile_json(Buf *b, const Rec *r) {
    static const char *names[] = {"{\"urim\":{\"total\":", ",\"min\":", ",\"max\":", "},\"urir\":",
                                  ",\"bytes\":", ",\"digests\":", ",\"dedup_bytes\":"};
    int64_t v[7] = {r->total, r->min, r->max, r->urir, r->bytes, r->digests, r->dedup};
    for (int i = 0; i < 7; i++)
        if (buf_put(b, names[i], strlen(names[i])) < 0 || json_int(b, v[i]) < 0) return -1;
    return (buf_put(b, ",\"first\":", 9) < 0 || json_str(b, r->first.s, r->first.n) < 0
            || buf_put(b, ",\"last\":", 8) < 0 || json_str(b, r->last.s, r->last.n) < 0 || buf_putc(b, '}') < 0)
        ? -1 : 0;
}

/* ------------------------------------------------------------------ step 2's lone records */

/* a reader of sorted lines over the runs of one key (skim, profile_lines):
 * (buf, pos, final) -> (state, pos, end, lines) as Expander.feed() */
static PyObject *read_runs(PyObject *args, RunDecider decide) {
    Py_buffer view;
    Feed fd;
    if (parse_feed(args, &view, &fd) < 0) return NULL;
    Buf out = {NULL, 0, 0};
    int r = scan_runs(&fd, decide, NULL, &out);
    PyBuffer_Release(&view);
    PyObject *lines = r < 0 ? NULL : PyBytes_FromStringAndSize(out.p ? out.p : "", out.n);
    buf_free(&out);
    if (!lines) return NULL;
    return Py_BuildValue("(innN)", fd.state, fd.pos, fd.end, lines);
}

/* step 2 (profiler.job.rawsteps.reduce_digests_and_keys): a digest record alone under its key (one
 * URI-R holds the digest) is dropped, any other lone record but !meta is copied, a key's several
 * key records are summed; the runs of a digest several URI-Rs hold, and !meta, are Python's */
static int skim_run(void *unused, const char *buf, Py_ssize_t pos, Py_ssize_t end, Py_ssize_t kn, Py_ssize_t nlines, int tab,
                    Buf *out) {
    if (nlines > 1) {       /* a key's records summed; digests and !meta: Python's */
        Rec sum;
        if (!(tab && kn >= 2 && buf[pos] == 'K' && buf[pos + 1] == ' ') || sum_run(buf, pos, end, kn, &sum)) return 1;
        return (buf_put(out, buf + pos, kn) < 0 || buf_putc(out, '\t') < 0 || rec_json(out, &sum) < 0
                || buf_putc(out, '\n') < 0) ? -1 : 0;
    }
    if (tab && kn == 5 && memcmp(buf + pos, "!meta", 5) == 0) return 1;
    if (kn >= 2 && buf[pos] == 'D' && buf[pos + 1] == ' ') return 0;      /* as key.startswith(b"D ") */
    return (buf_put(out, buf + pos, end - pos) < 0 || (buf[end - 1] != '\n' && buf_putc(out, '\n') < 0)) ? -1 : 0;
}

/* skim(buf, pos, final) -> (state, pos, end, lines): step 2's key records and lone digest records
 * over sorted lines */
static PyObject *skim(PyObject *unused, PyObject *args) { return read_runs(args, skim_run); }

/* ------------------------------------------------------------------ step 3's keys */

/* step 3 (profiler.job.rawsteps.reduce_profile_lines): a key's records, summed, become its profile
 * line, key<TAB>JSON block */
static int profile_run(void *unused, const char *buf, Py_ssize_t pos, Py_ssize_t end, Py_ssize_t kn, Py_ssize_t nlines, int tab,
                       Buf *out) {
    Rec sum;
    if (!(tab && kn >= 2 && buf[pos] == 'K' && buf[pos + 1] == ' ') || sum_run(buf, pos, end, kn, &sum)) return 1;
    return (buf_put(out, buf + pos + 2, kn - 2) < 0 || buf_putc(out, '\t') < 0 || profile_json(out, &sum) < 0
            || buf_putc(out, '\n') < 0) ? -1 : 0;
}

/* profile_lines(buf, pos, final) -> (state, pos, end, lines): step 3's key records over sorted
 * lines (!meta, JSON that is not plain, sums past int64: Python's) */
static PyObject *profile_lines(PyObject *unused, PyObject *args) { return read_runs(args, profile_run); }

/* ------------------------------------------------------------------ the profile's lines */

/* ordered_lines(data, previous) -> (text, lines, last key) or None: the lines of data (each ends
 * with a newline) as profile lines, the TAB after each key a space (profiler.files.output), when their
 * keys (up to the first TAB) are in strictly increasing byte order after the key previous (None:
 * no line before); None when they are not. */
static PyObject *ordered_lines(PyObject *unused, PyObject *args) {
    Py_buffer view;
    PyObject *prev;
    if (!PyArg_ParseTuple(args, "y*O", &view, &prev)) return NULL;
    const char *pk = NULL;
    Py_ssize_t pkn = 0;
    if (prev != Py_None) {
        if (!PyBytes_Check(prev)) { PyBuffer_Release(&view); PyErr_SetString(PyExc_TypeError, "bytes or None expected"); return NULL; }
        pk = PyBytes_AS_STRING(prev); pkn = PyBytes_GET_SIZE(prev);
    }
    const char *d = view.buf;
    Py_ssize_t n = view.len, pos = 0, count = 0;
    PyObject *text = PyBytes_FromStringAndSize(NULL, n);
    if (!text) { PyBuffer_Release(&view); return NULL; }
    char *o = PyBytes_AS_STRING(text);
    int ordered = 1;
    while (pos < n) {
        const char *nl = memchr(d + pos, '\n', n - pos);
        Py_ssize_t le = nl ? nl - d : n;
        const char *tab = memchr(d + pos, '\t', le - pos);
        Py_ssize_t kn = tab ? tab - (d + pos) : le - pos;
        if (pk && bytes_cmp(d + pos, kn, pk, pkn) <= 0) { ordered = 0; break; }
        pk = d + pos; pkn = kn;
        memcpy(o + pos, d + pos, (nl ? le + 1 : n) - pos);
        if (tab) o[tab - d] = ' ';
        count++;
        pos = nl ? le + 1 : n;
    }
    PyObject *out = NULL;
    if (!ordered) { Py_DECREF(text); out = Py_None; Py_INCREF(out); }
    else {
        PyObject *last = pk ? PyBytes_FromStringAndSize(pk, pkn) : (Py_INCREF(prev), prev);
        if (last) out = Py_BuildValue("(NnN)", text, count, last);
        else Py_DECREF(text);
    }
    PyBuffer_Release(&view);
    return out;
}

/* ------------------------------------------------------------------ legend lines */

/* the start of a legend line whose "CDX " is at i (a line start, or after one space), or -1 */
static inline Py_ssize_t legend_line_start(const unsigned char *p, Py_ssize_t i) {
    if (i >= 1 && p[i - 1] == '\n') return i;
    if (i >= 2 && p[i - 1] == ' ' && p[i - 2] == '\n') return i - 1;
    return -1;
}

static int add_offset(Py_ssize_t **arr, Py_ssize_t *n, Py_ssize_t *cap, Py_ssize_t v) {
    if (*n == *cap) {
        Py_ssize_t c = *cap ? *cap * 2 : 16;
        Py_ssize_t *a = realloc(*arr, c * sizeof(Py_ssize_t));
        if (!a) return -1;
        *arr = a; *cap = c;
    }
    (*arr)[(*n)++] = v;
    return 0;
}

/* legend_starts(buf, end, base) -> [base + offset of each line of buf[:end] that is a legend
 * (starts with "CDX " or " CDX ") after a newline in buf], as profiler.formats.inputs._legend_starts;
 * 16 bytes a step with SSE2, without the GIL (threads scan parts of a file at once) */
static PyObject *legend_starts(PyObject *unused, PyObject *args) {
    Py_buffer view;
    Py_ssize_t end, base;
    if (!PyArg_ParseTuple(args, "y*nn", &view, &end, &base)) return NULL;
    if (end < 0 || end > view.len) {
        PyBuffer_Release(&view); PyErr_SetString(PyExc_ValueError, "end out of the buffer"); return NULL;
    }
    const unsigned char *p = view.buf;
    Py_ssize_t *found = NULL, nfound = 0, cap = 0, i = 0;
    int failed = 0;
    Py_BEGIN_ALLOW_THREADS
#if defined(__SSE2__)
    const __m128i C = _mm_set1_epi8('C'), D = _mm_set1_epi8('D'), X = _mm_set1_epi8('X'), S = _mm_set1_epi8(' ');
    for (; i + 19 <= end && !failed; i += 16) {
        __m128i m1 = _mm_and_si128(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + i)), C),
                                   _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + i + 1)), D));
        __m128i m2 = _mm_and_si128(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + i + 2)), X),
                                   _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + i + 3)), S));
        unsigned m = (unsigned)_mm_movemask_epi8(_mm_and_si128(m1, m2));
        while (m && !failed) {
            Py_ssize_t at = legend_line_start(p, i + __builtin_ctz(m));
            if (at >= 0 && add_offset(&found, &nfound, &cap, base + at) < 0) failed = 1;
            m &= m - 1;
        }
    }
#endif
    for (; i + 4 <= end && !failed; i++) {
        if (p[i] == 'C' && p[i + 1] == 'D' && p[i + 2] == 'X' && p[i + 3] == ' ') {
            Py_ssize_t at = legend_line_start(p, i);
            if (at >= 0 && add_offset(&found, &nfound, &cap, base + at) < 0) failed = 1;
        }
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    if (failed) { free(found); return PyErr_NoMemory(); }
    PyObject *out = PyList_New(nfound);
    for (Py_ssize_t k = 0; out && k < nfound; k++) {
        PyObject *v = PyLong_FromSsize_t(found[k]);
        if (!v) { Py_CLEAR(out); break; }
        PyList_SET_ITEM(out, k, v);
    }
    free(found);
    return out;
}

/* ------------------------------------------------------------------ shuffle merge */

#ifndef _WIN32
/* A shuffle's inputs that are sorted already, or in a few long sorted runs (map outputs of a sorted
 * index; step 1's output), are merged instead of sorted again: sorted_runs cuts a file into runs
 * of lines in byte order (LC_ALL=C sort's order: bytes unsigned, a line before the longer lines it
 * starts; without the GIL, the file mapped into memory a few MiB at a time), and a reduce task's
 * LineMerger merges its part of the runs and the sorted short ones, read() into buffers of its own. */
typedef struct {
    int fd, eof, owned, nl;      /* nl: the current line ended with a newline */
    char *buf;
    Py_ssize_t cap, pos, end, left;       /* left: bytes still to read, -1 to the end of the file */
    const char *line; Py_ssize_t n;       /* the current line, without its newline */
} Stream;

static inline int line_cmp(const char *a, Py_ssize_t an, const char *b, Py_ssize_t bn) {
    int c = memcmp(a, b, an < bn ? an : bn);
    return c ? c : (an > bn) - (an < bn);
}

static int stream_open(Stream *s, int fd, Py_ssize_t limit, Py_ssize_t bufsize) {
    memset(s, 0, sizeof *s);
    s->fd = fd; s->left = limit; s->cap = bufsize; s->owned = 1;
    s->buf = malloc(bufsize);
    if (!s->buf) { errno = ENOMEM; return -1; }
    return 0;
}

/* a stream over bytes in memory (not copied) */
static void stream_of(Stream *s, const char *p, Py_ssize_t n) {
    memset(s, 0, sizeof *s);
    s->fd = -1; s->buf = (char *)p; s->cap = s->end = n; s->eof = 1;
}

static void stream_close(Stream *s) { if (s->owned) free(s->buf); s->buf = NULL; }

/* the next line of s: 1, 0 at the end, -1 on a read error (errno; ENOMEM when out of memory).
 * The line before is no longer valid. */
static int stream_next(Stream *s) {
    for (;;) {
        char *nl = s->pos < s->end ? memchr(s->buf + s->pos, '\n', s->end - s->pos) : NULL;
        if (nl) {
            s->line = s->buf + s->pos; s->n = nl - s->line; s->pos += s->n + 1; s->nl = 1;
            return 1;
        }
        if (s->eof || s->left == 0) {
            if (s->pos == s->end) return 0;
            s->line = s->buf + s->pos; s->n = s->end - s->pos; s->pos = s->end; s->nl = 0;
            return 1;
        }
        if (s->pos > 0) { memmove(s->buf, s->buf + s->pos, s->end - s->pos); s->end -= s->pos; s->pos = 0; }
        if (s->end == s->cap) {                  /* a line longer than the buffer */
            char *b = realloc(s->buf, s->cap * 2);
            if (!b) { errno = ENOMEM; return -1; }
            s->buf = b; s->cap *= 2;
        }
        Py_ssize_t want = s->cap - s->end;
        if (s->left >= 0 && want > s->left) want = s->left;
        ssize_t got = read(s->fd, s->buf + s->end, (size_t)want);
        if (got < 0) { if (errno == EINTR) continue; return -1; }
        if (got == 0) s->eof = 1;
        s->end += got;
        if (s->left >= 0) s->left -= got;
    }
}

/* one more line of the runs: a new run when it sorts before the line before (or is the first);
 * 0, or 1 past max_runs */
static inline int run_add(Py_ssize_t *runs, Py_ssize_t *n, Py_ssize_t max_runs, int first, const char *prev,
                          Py_ssize_t pn, const char *line, Py_ssize_t len, Py_ssize_t bytes) {
    if (first || line_cmp(prev, pn, line, len) > 0) {
        if (*n == max_runs) return 1;
        runs[(*n)++] = 0;
    }
    runs[*n - 1] += bytes;
    return 0;
}

/* the runs of a regular file mapped into memory, not read (no copy of its bytes); the pages
 * scanned are let go every few MiB, so the process's memory does not grow with the file:
 * 1 done (runs[0:*nruns], *nruns -1 past max_runs), 0 when it cannot be mapped */
static int runs_mapped(int fd, Py_ssize_t *runs, Py_ssize_t *nruns, Py_ssize_t max_runs) {
    struct stat st;
    off_t off = lseek(fd, 0, SEEK_CUR);
    if (off < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= off) return 0;
    size_t size = (size_t)st.st_size;
    char *base = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) return 0;
    madvise(base, size, MADV_SEQUENTIAL);
    const long page = sysconf(_SC_PAGESIZE);
    const char *p = base + off, *end = base + size, *prev = NULL, *released = base;
    Py_ssize_t pn = 0, n = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', end - p);
        Py_ssize_t len = nl ? nl - p : end - p;
        if (run_add(runs, &n, max_runs, !prev, prev, pn, p, len, len + (nl != NULL))) { n = -1; break; }
        prev = p; pn = len;
        p += len + (nl != NULL);
        if (p - released >= (8 << 20)) {        /* let the pages before the line before go */
            const char *upto = base + ((prev - base) / page) * page;
            if (upto > released) { madvise((void *)released, upto - released, MADV_DONTNEED); released = upto; }
        }
    }
    munmap(base, size);
    *nruns = n;
    return 1;
}

/* the runs of what cannot be mapped (a pipe), read: 0, or -1 (errno) */
static int runs_read(int fd, Py_ssize_t bufsize, Py_ssize_t *runs, Py_ssize_t *nruns, Py_ssize_t max_runs) {
    Stream s;
    if (stream_open(&s, fd, -1, bufsize) < 0) return -1;
    char *prev = NULL;
    Py_ssize_t pn = 0, pcap = 0, n = 0;
    int r = 0, first = 1;
    for (;;) {
        int got = stream_next(&s);
        if (got <= 0) { r = got; break; }
        if (run_add(runs, &n, max_runs, first, prev, pn, s.line, s.n, s.n + s.nl)) { n = -1; break; }
        if (s.n > pcap) {                      /* the line before, kept: the buffer moves on */
            char *b = realloc(prev, s.n);
            if (!b) { errno = ENOMEM; r = -1; break; }
            prev = b; pcap = s.n;
        }
        if (s.n) memcpy(prev, s.line, s.n);
        pn = s.n; first = 0;
    }
    stream_close(&s);
    free(prev);
    *nruns = n;
    return r;
}

/* sorted_runs(fd, bufsize, max_runs) -> [length, ...]: fd's bytes from its position cut into runs
 * of lines in sorted order, or None past max_runs runs */
static PyObject *sorted_runs(PyObject *unused, PyObject *args) {
    int fd;
    Py_ssize_t bufsize, max_runs;
    if (!PyArg_ParseTuple(args, "inn", &fd, &bufsize, &max_runs)) return NULL;
    if (bufsize < 1 || max_runs < 0) { PyErr_SetString(PyExc_ValueError, "bufsize and max_runs must be positive"); return NULL; }
    Py_ssize_t *runs = malloc((max_runs + 1) * sizeof(Py_ssize_t)), nruns = 0;
    if (!runs) return PyErr_NoMemory();
    int r = 0;
    Py_BEGIN_ALLOW_THREADS
    if (!runs_mapped(fd, runs, &nruns, max_runs)) r = runs_read(fd, bufsize, runs, &nruns, max_runs);
    Py_END_ALLOW_THREADS
    if (r < 0) { free(runs); return PyErr_SetFromErrno(errno == ENOMEM ? PyExc_MemoryError : PyExc_OSError); }
    if (nruns < 0) { free(runs); Py_RETURN_NONE; }
    PyObject *out = PyList_New(nruns);
    for (Py_ssize_t i = 0; out && i < nruns; i++) {
        PyObject *v = PyLong_FromSsize_t(runs[i]);
        if (!v) { Py_CLEAR(out); break; }
        PyList_SET_ITEM(out, i, v);
    }
    free(runs);
    return out;
}

/* the merge's output: bytes in memory (b grows) */
typedef struct { char *b; Py_ssize_t n, cap; } Out;

static int out_put(Out *o, const char *p, Py_ssize_t n) {
    if (o->n + n > o->cap) {
        Py_ssize_t cap = o->cap ? o->cap : 1 << 16;
        while (cap < o->n + n) cap *= 2;
        char *b = realloc(o->b, cap);
        if (!b) { errno = ENOMEM; return -1; }
        o->b = b; o->cap = cap;
    }
    memcpy(o->b + o->n, p, n); o->n += n;
    return 0;
}

/* the heap of streams by their current lines (ties: either; equal lines are the same bytes) */
static inline int heap_less(Stream *st, int a, int b) { return line_cmp(st[a].line, st[a].n, st[b].line, st[b].n) < 0; }
static void heap_down(Stream *st, int *h, int n, int i) {
    for (;;) {
        int l = 2 * i + 1, m = i;
        if (l < n && heap_less(st, h[l], h[m])) m = l;
        if (l + 1 < n && heap_less(st, h[l + 1], h[m])) m = l + 1;
        if (m == i) return;
        int t = h[i]; h[i] = h[m]; h[m] = t; i = m;
    }
}

/* the lines of s from its current one while they are not past bound (all when bound is NULL)
 * and the output holds less than limit bytes (no limit when < 0), written in blocks as they lie
 * in its buffer; s is left at its next line. 1, 0 at s's end, -1 */
static int emit_run(Stream *s, const char *bound, Py_ssize_t bn, Out *o, Py_ssize_t limit) {
    const char *blk = s->line;
    Py_ssize_t len = 0;
    for (;;) {
        if (!s->nl) {                      /* a last line without newline: written with one */
            if (out_put(o, blk, len) < 0 || out_put(o, s->line, s->n) < 0 || out_put(o, "\n", 1) < 0) return -1;
            return stream_next(s);
        }
        len += s->n + 1;
        char *nl = s->pos < s->end ? memchr(s->buf + s->pos, '\n', s->end - s->pos) : NULL;
        if (nl) {
            s->line = s->buf + s->pos; s->n = nl - s->line; s->pos += s->n + 1;
        } else {                           /* the buffer is read to its end: the block goes first */
            if (out_put(o, blk, len) < 0) return -1;
            int got = stream_next(s);
            if (got <= 0) return got;
            blk = s->line; len = 0;
        }
        if ((bound && line_cmp(s->line, s->n, bound, bn) > 0) || (limit >= 0 && o->n + len >= limit)) break;
    }
    if (out_put(o, blk, len) < 0) return -1;
    return 1;
}

/* k streams (and one over the bytes tail) merged: opened, first lines read, heap built */
typedef struct { Stream *st; int *heap; int k, n, opened; } Merge;

static void merge_free(Merge *m) {
    for (int i = 0; i < m->opened; i++) stream_close(&m->st[i]);
    free(m->st); free(m->heap);
    memset(m, 0, sizeof *m);
}

/* without the GIL; -1 with errno */
static int merge_start(Merge *m, int k, const int *fds, const Py_ssize_t *lens, const char *tail, Py_ssize_t tn,
                       Py_ssize_t bufsize) {
    memset(m, 0, sizeof *m);
    m->k = k;
    m->st = calloc(k + 1, sizeof(Stream));
    m->heap = malloc((k + 1) * sizeof(int));
    if (!m->st || !m->heap) { errno = ENOMEM; return -1; }
    for (; m->opened < k; m->opened++)
        if (stream_open(&m->st[m->opened], fds[m->opened], lens[m->opened], bufsize) < 0) return -1;
    stream_of(&m->st[k], tail, tn);
    for (int i = 0; i <= k; i++) {
        int got = stream_next(&m->st[i]);
        if (got < 0) return -1;
        if (got) m->heap[m->n++] = i;
    }
    for (int i = m->n / 2 - 1; i >= 0; i--) heap_down(m->st, m->heap, m->n, i);
    return 0;
}

/* merged lines to o until the streams end or o holds limit bytes (no limit when < 0); -1 */
static int merge_some(Merge *m, Out *o, Py_ssize_t limit) {
    while (m->n > 0 && (limit < 0 || o->n < limit)) {
        /* the first stream's lines up to the smallest line of the others, in one block */
        int c = m->n > 1 ? m->heap[1] : -1;
        if (m->n > 2 && heap_less(m->st, m->heap[2], c)) c = m->heap[2];
        int got = emit_run(&m->st[m->heap[0]], c >= 0 ? m->st[c].line : NULL, c >= 0 ? m->st[c].n : 0, o, limit);
        if (got < 0) return -1;
        if (!got) m->heap[0] = m->heap[--m->n];
        heap_down(m->st, m->heap, m->n, 0);
    }
    return 0;
}

/* [(fd, length), ...] -> fds, lens (malloc'd); -1 with a Python error */
static int parse_inputs(PyObject *inputs, int *k, int **fds, Py_ssize_t **lens) {
    PyObject *seq = PySequence_Fast(inputs, "inputs must be a sequence of (fd, length)");
    if (!seq) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > INT_MAX - 1) { Py_DECREF(seq); PyErr_SetString(PyExc_ValueError, "too many inputs"); return -1; }
    *k = (int)n;
    *fds = malloc((n + 1) * sizeof(int));
    *lens = malloc((n + 1) * sizeof(Py_ssize_t));
    if (!*fds || !*lens) { Py_DECREF(seq); free(*fds); free(*lens); PyErr_NoMemory(); return -1; }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "in", &(*fds)[i], &(*lens)[i])) {
            Py_DECREF(seq); free(*fds); free(*lens); return -1;
        }
    }
    Py_DECREF(seq);
    return 0;
}

/* LineMerger([(fd, length), ...], tail, bufsize): the first length bytes of each fd (from its
 * position) and the bytes tail, each whole sorted lines, merged in order, read(size) a buffer at a
 * time; every line ends with a newline (as sort writes it). For a reduce task that reads its part
 * of several sorted runs (profiler.job.rawsteps.input_chunks). */
typedef struct {
    PyObject_HEAD
    Merge m;
    PyObject *tail;        /* the bytes the tail stream reads */
    Out o;
    int started;
} LineMerger;

static int LineMerger_init(LineMerger *x, PyObject *args, PyObject *kw) {
    PyObject *inputs, *tail;
    Py_ssize_t bufsize;
    if (!PyArg_ParseTuple(args, "OSn", &inputs, &tail, &bufsize)) return -1;
    if (x->started) { PyErr_SetString(PyExc_RuntimeError, "LineMerger already initialised"); return -1; }
    if (bufsize < 2) { PyErr_SetString(PyExc_ValueError, "bufsize must be at least 2"); return -1; }
    int k, *fds;
    Py_ssize_t *lens;
    if (parse_inputs(inputs, &k, &fds, &lens) < 0) return -1;
    Py_INCREF(tail);
    x->tail = tail;
    x->started = 1;
    int r = merge_start(&x->m, k, fds, lens, PyBytes_AS_STRING(tail), PyBytes_GET_SIZE(tail), bufsize);
    free(fds); free(lens);
    if (r < 0) { PyErr_SetFromErrno(errno == ENOMEM ? PyExc_MemoryError : PyExc_OSError); return -1; }
    return 0;
}

static PyObject *LineMerger_read(LineMerger *x, PyObject *args) {
    Py_ssize_t size;
    if (!PyArg_ParseTuple(args, "n", &size)) return NULL;
    if (!x->started) { PyErr_SetString(PyExc_RuntimeError, "LineMerger not initialised"); return NULL; }
    x->o.n = 0;
    if (merge_some(&x->m, &x->o, size < 1 ? 1 : size) < 0)
        return PyErr_SetFromErrno(errno == ENOMEM ? PyExc_MemoryError : PyExc_OSError);
    return PyBytes_FromStringAndSize(x->o.b ? x->o.b : "", x->o.n);
}

static void LineMerger_dealloc(LineMerger *x) {
    merge_free(&x->m);
    free(x->o.b);
    Py_XDECREF(x->tail);
    Py_TYPE(x)->tp_free((PyObject *)x);
}

static PyMethodDef LineMerger_methods[] = {
    {"read", (PyCFunction)LineMerger_read, METH_VARARGS,
     "read(size) -> the next merged lines, whole, about size bytes (b'' at the end)"},
    {NULL}
};

static PyTypeObject LineMergerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "profiler.accel._apfast.LineMerger",
    .tp_basicsize = sizeof(LineMerger),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)LineMerger_init,
    .tp_dealloc = (destructor)LineMerger_dealloc,
    .tp_methods = LineMerger_methods,
    .tp_doc = "LineMerger([(fd, length), ...], tail, bufsize): sorted runs of lines merged, read(size) at a time.",
};
#endif

/* ------------------------------------------------------------------ shuffle buckets */

/* CRC-32 (zlib's: reflected 0xEDB88320), so that Python's zlib.crc32 picks the same bucket;
 * eight bytes a step (slicing-by-8) */
static uint32_t crc_table[8][256];

static void crc_init(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++) crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xFF];
}

static uint32_t crc32_of(const unsigned char *p, Py_ssize_t n) {
    uint32_t c = 0xFFFFFFFFu;
    while (n >= 8) {
        uint32_t lo = c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
        c = crc_table[7][lo & 0xFF] ^ crc_table[6][(lo >> 8) & 0xFF] ^ crc_table[5][(lo >> 16) & 0xFF]
            ^ crc_table[4][lo >> 24] ^ crc_table[3][p[4]] ^ crc_table[2][p[5]] ^ crc_table[1][p[6]] ^ crc_table[0][p[7]];
        p += 8;
        n -= 8;
    }
    while (n--) c = crc_table[0][(c ^ *p++) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

/* bucket_lines(data, parts) -> [bytes] * parts: the lines of data (a last one without its newline
 * gets one), each into bucket zlib.crc32(key) % parts, key = the line up to its first TAB (or the
 * whole line); in their order (profiler.runtime.sparksteps). */
static PyObject *bucket_lines(PyObject *unused, PyObject *args) {
    Py_buffer view;
    Py_ssize_t parts;
    if (!PyArg_ParseTuple(args, "y*n", &view, &parts)) return NULL;
    if (parts < 1 || parts > (1 << 20)) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "bucket_lines: parts must be in 1..2^20");
        return NULL;
    }
    const char *d = view.buf;
    Py_ssize_t n = view.len, pos = 0, lines = 0;
    for (Py_ssize_t i = 0; i < n; i++) lines += d[i] == '\n';
    lines += n > 0 && d[n - 1] != '\n';
    uint32_t *to = PyMem_Malloc((lines ? lines : 1) * sizeof(uint32_t));
    Py_ssize_t *size = PyMem_Calloc(parts, sizeof(Py_ssize_t));
    PyObject *out = PyList_New(parts);
    if (!to || !size || !out) goto fail;
    for (Py_ssize_t i = 0; pos < n; i++) {
        const char *nl = memchr(d + pos, '\n', n - pos);
        Py_ssize_t le = nl ? nl - d : n;
        const char *tab = memchr(d + pos, '\t', le - pos);
        Py_ssize_t kn = tab ? tab - (d + pos) : le - pos;
        to[i] = crc32_of((const unsigned char *)d + pos, kn) % (uint32_t)parts;
        size[to[i]] += le - pos + 1;
        pos = le + 1;
    }
    char **at = PyMem_Malloc(parts * sizeof(char *));
    if (!at) goto fail;
    for (Py_ssize_t b = 0; b < parts; b++) {
        PyObject *o = PyBytes_FromStringAndSize(NULL, size[b]);
        if (!o) { PyMem_Free(at); goto fail; }
        PyList_SET_ITEM(out, b, o);
        at[b] = PyBytes_AS_STRING(o);
    }
    pos = 0;
    for (Py_ssize_t i = 0; pos < n; i++) {
        const char *nl = memchr(d + pos, '\n', n - pos);
        Py_ssize_t le = nl ? nl - d : n;
        memcpy(at[to[i]], d + pos, le - pos);
        at[to[i]] += le - pos;
        *at[to[i]]++ = '\n';
        pos = le + 1;
    }
    PyMem_Free(at); PyMem_Free(to); PyMem_Free(size);
    PyBuffer_Release(&view);
    return out;
fail:
    PyMem_Free(to); PyMem_Free(size); Py_XDECREF(out);
    PyBuffer_Release(&view);
    return PyErr_Occurred() ? NULL : PyErr_NoMemory();
}


/* a line of a buffer: start and length without its newline */
typedef struct { const char *p; Py_ssize_t n; } SortLine;

static inline int sortline_le(const SortLine *a, const SortLine *b) {
    Py_ssize_t m = a->n < b->n ? a->n : b->n;
    int c = memcmp(a->p, b->p, m);
    return c < 0 || (c == 0 && a->n <= b->n);
}

/* sort_lines([bytes, ...]) -> bytes: the lines of the buffers (each of whole lines; a last one
 * without its newline gets one) in byte order, as LC_ALL=C sort (and Python's bytes) order them;
 * a merge sort of the runs already in order (profiler.runtime.sparksteps). */
static PyObject *sort_lines(PyObject *unused, PyObject *arg) {
    PyObject *seq = PySequence_Fast(arg, "sort_lines: a sequence of bytes expected");
    if (!seq) return NULL;
    Py_ssize_t nb = PySequence_Fast_GET_SIZE(seq), lines = 0, total = 0;
    for (Py_ssize_t b = 0; b < nb; b++) {
        PyObject *o = PySequence_Fast_GET_ITEM(seq, b);
        if (!PyBytes_Check(o)) { Py_DECREF(seq); PyErr_SetString(PyExc_TypeError, "sort_lines: bytes expected"); return NULL; }
        const char *d = PyBytes_AS_STRING(o);
        Py_ssize_t n = PyBytes_GET_SIZE(o);
        for (Py_ssize_t i = 0; i < n; i++) lines += d[i] == '\n';
        lines += n > 0 && d[n - 1] != '\n';
        total += n + (n > 0 && d[n - 1] != '\n');
    }
    SortLine *a = PyMem_Malloc((lines ? lines : 1) * sizeof(SortLine));
    SortLine *t = PyMem_Malloc((lines ? lines : 1) * sizeof(SortLine));
    Py_ssize_t *run = PyMem_Malloc((lines + 2) * sizeof(Py_ssize_t));
    PyObject *out = NULL;
    if (!a || !t || !run) { PyErr_NoMemory(); goto done; }
    Py_ssize_t k = 0;
    for (Py_ssize_t b = 0; b < nb; b++) {
        PyObject *o = PySequence_Fast_GET_ITEM(seq, b);
        const char *d = PyBytes_AS_STRING(o);
        Py_ssize_t n = PyBytes_GET_SIZE(o), pos = 0;
        while (pos < n) {
            const char *nl = memchr(d + pos, '\n', n - pos);
            Py_ssize_t le = nl ? nl - d : n;
            a[k].p = d + pos; a[k].n = le - pos; k++;
            pos = le + 1;
        }
    }
    /* runs in order, then merged pairwise until one is left */
    Py_ssize_t nr = 0;
    run[nr++] = 0;
    for (Py_ssize_t i = 1; i < lines; i++) if (!sortline_le(&a[i - 1], &a[i])) run[nr++] = i;
    run[nr] = lines;
    while (nr > 1) {
        Py_ssize_t w = 0;
        for (Py_ssize_t r = 0; r < nr; r += 2) {
            Py_ssize_t lo = run[r], mid = run[r + 1], hi = r + 2 <= nr ? run[r + 2] : mid;
            if (r + 1 >= nr) { memcpy(t + lo, a + lo, (mid - lo) * sizeof(SortLine)); run[w++] = lo; continue; }
            Py_ssize_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi) t[o++] = sortline_le(&a[i], &a[j]) ? a[i++] : a[j++];
            while (i < mid) t[o++] = a[i++];
            while (j < hi) t[o++] = a[j++];
            run[w++] = lo;
        }
        run[w] = lines;
        nr = w;
        SortLine *swap = a; a = t; t = swap;
    }
    out = PyBytes_FromStringAndSize(NULL, total);
    if (!out) goto done;
    char *o = PyBytes_AS_STRING(out);
    for (Py_ssize_t i = 0; i < lines; i++) {
        memcpy(o, a[i].p, a[i].n);
        o += a[i].n;
        *o++ = '\n';
    }
done:
    PyMem_Free(a); PyMem_Free(t); PyMem_Free(run);
    Py_DECREF(seq);
    return out;
}

/* ------------------------------------------------------------------ allocator */

/* glibc's malloc serves a request past its mmap threshold with a mapping of its own, unmapped when
   freed, and moves the threshold up as such blocks are freed: a task's buffers of a few MiB, made
   and freed all along, were fresh pages each time (a page fault per 4 KiB, a large share of a 1M
   run in the kernel). Fixed thresholds keep them in the heap, and free memory past trim_threshold
   at its top is still given back. */
static PyObject *tune_allocator(PyObject *self, PyObject *args) {
    Py_ssize_t mmap_threshold, trim_threshold;
    if (!PyArg_ParseTuple(args, "nn", &mmap_threshold, &trim_threshold)) return NULL;
    if (mmap_threshold <= 0 || trim_threshold <= 0 || mmap_threshold > INT_MAX || trim_threshold > INT_MAX) {
        PyErr_SetString(PyExc_ValueError, "tune_allocator: thresholds must be in 1..INT_MAX bytes");
        return NULL;
    }
#ifdef __GLIBC__
    if (mallopt(M_MMAP_THRESHOLD, (int)mmap_threshold) && mallopt(M_TRIM_THRESHOLD, (int)trim_threshold))
        Py_RETURN_TRUE;
#endif
    Py_RETURN_FALSE;
}

/* ------------------------------------------------------------------ module */

static PyMethodDef module_methods[] = {
    {"skim", skim, METH_VARARGS,
     "skim(buf, pos, final) -> (state, pos, end, lines): step 2's key and lone digest records over sorted lines"},
    {"ordered_lines", ordered_lines, METH_VARARGS,
     "ordered_lines(data, previous) -> (text, lines, last key) or None: profile lines of ordered keys"},
    {"legend_starts", legend_starts, METH_VARARGS,
     "legend_starts(buf, end, base) -> [offset, ...]: the legend lines of buf[:end], at base + offset"},
    {"profile_lines", profile_lines, METH_VARARGS,
     "profile_lines(buf, pos, final) -> (state, pos, end, lines): step 3's key records over sorted lines"},
#ifndef _WIN32
    {"sorted_runs", sorted_runs, METH_VARARGS,
     "sorted_runs(fd, bufsize, max_runs) -> [length, ...] of the runs of sorted lines from fd's position, or None"},
#endif
    {"digest_filter_add", digest_filter_add, METH_VARARGS,
     "digest_filter_add(filter, digests): one map record's digests into a map task's filter (bytearray)"},
    {"digest_filter_merge", digest_filter_merge, METH_VARARGS,
     "digest_filter_merge(one, two, its_one, its_two) -> bits set in two: a map task's bitmaps into the merged ones"},
    {"digest_filter_has", digest_filter_has, METH_VARARGS,
     "digest_filter_has(bitmap, digest) -> bool: one bitmap of a digest filter holds the digest"},
    {"bucket_lines", bucket_lines, METH_VARARGS,
     "bucket_lines(data, parts) -> [bytes] * parts: lines by zlib.crc32(key) % parts, in their order"},
    {"sort_lines", sort_lines, METH_O,
     "sort_lines([bytes, ...]) -> bytes: the buffers' lines in byte order"},
    {"tune_allocator", tune_allocator, METH_VARARGS,
     "tune_allocator(mmap_threshold, trim_threshold) -> True, or False where malloc is not glibc's"},
    {NULL}
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_apfast", "Compiled hot path of archive-profiler (optional).", -1, module_methods,
};

PyMODINIT_FUNC PyInit__apfast(void) {
    crc_init();
    if (PyType_Ready(&ExpanderType) < 0 || PyType_Ready(&AggregatorType) < 0) return NULL;
#ifndef _WIN32
    if (PyType_Ready(&LineMergerType) < 0) return NULL;
#endif
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Py_INCREF(&ExpanderType);
    if (PyModule_AddObject(m, "Expander", (PyObject *)&ExpanderType) < 0) { Py_DECREF(m); return NULL; }
    Py_INCREF(&AggregatorType);
    if (PyModule_AddObject(m, "Aggregator", (PyObject *)&AggregatorType) < 0) { Py_DECREF(m); return NULL; }
#ifndef _WIN32
    Py_INCREF(&LineMergerType);
    if (PyModule_AddObject(m, "LineMerger", (PyObject *)&LineMergerType) < 0) { Py_DECREF(m); return NULL; }
#endif
    return m;
}
