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

/* ------------------------------------------------------------------ strings of a record */

/* A timestamp of up to TSDIGITS digits (the steps' first and last) as one number that orders as
 * its bytes do: its digits padded with '0' to TSDIGITS, times 32, plus its length (of two with the
 * same padded digits the shorter is a prefix of the other, so it sorts first). "" is 0 and "~"
 * (the running minimum's start and a correction's first), after every digit string, the largest.
 * Records stay small, and a comparison is one of integers. Any other string is not a TS: its
 * readers leave it to Python (ts_ok). */
#define TSDIGITS 17
typedef struct { uint64_t v; } TS;

static const uint64_t TS_POW10[TSDIGITS + 1] = {
    1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL, 100000000ULL,
    1000000000ULL, 10000000000ULL, 100000000000ULL, 1000000000000ULL, 10000000000000ULL,
    100000000000000ULL, 1000000000000000ULL, 10000000000000000ULL, 100000000000000000ULL};

static inline int bytes_cmp(const char *a, Py_ssize_t an, const char *b, Py_ssize_t bn) {
    int c = memcmp(a, b, an < bn ? an : bn);
    if (c) return c;
    return an < bn ? -1 : an > bn ? 1 : 0;
}
static inline int ts_cmp(const TS *a, const TS *b) { return a->v < b->v ? -1 : a->v > b->v; }
/* start values of a running minimum and maximum */
static const TS TS_FIRST = {UINT64_MAX}, TS_LAST = {0};

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define TS_SWAR 1
/* 8 bytes at s are ASCII digits: each byte's high nibble is 3, and still 3 after adding 6 */
static inline int ts_digits8_ok(const char *s) {
    uint64_t v;
    memcpy(&v, s, 8);
    const uint64_t highs = 0xF0F0F0F0F0F0F0F0ULL, threes = 0x3030303030303030ULL;
    return (v & highs) == threes && ((v + 0x0606060606060606ULL) & highs) == threes;
}
/* the number of 8 ASCII digits at s */
static inline uint64_t ts_digits8(const char *s) {
    uint64_t v;
    memcpy(&v, s, 8);
    v -= 0x3030303030303030ULL;
    v = v * 10 + (v >> 8);
    return ((v & 0x000000FF000000FFULL) * (100 + (1000000ULL << 32))
            + ((v >> 16) & 0x000000FF000000FFULL) * (1 + (10000ULL << 32))) >> 32;
}
#endif
/* s[:n] can be a TS: up to TSDIGITS ASCII digits, or "~" (a correction's first: after them all) */
static inline int ts_ok(const char *s, Py_ssize_t n) {
#ifdef TS_SWAR
    if (n == 14) return ts_digits8_ok(s) && ts_digits8_ok(s + 6);
#endif
    if (n > TSDIGITS) return 0;
    if (n == 1 && s[0] == '~') return 1;
    for (Py_ssize_t i = 0; i < n; i++)
        if ((unsigned char)(s[i] - '0') > 9) return 0;
    return 1;
}
/* the TS of s[:n], which ts_ok accepts */
static inline TS ts_of(const char *s, Py_ssize_t n) {
    if (n == 1 && s[0] == '~') return TS_FIRST;
    uint64_t d = 0;
#ifdef TS_SWAR
    if (n == 14) d = ts_digits8(s) * 1000000 + ts_digits8(s + 6) % 1000000;
    else
#endif
    for (Py_ssize_t i = 0; i < n; i++) d = d * 10 + (uint64_t)(s[i] - '0');
    TS t = {(d * TS_POW10[TSDIGITS - n]) << 5 | (uint64_t)n};
    return t;
}
static inline int ts_set(TS *t, const char *s, Py_ssize_t n) {
    if (!ts_ok(s, n)) { PyErr_SetString(PyExc_ValueError, "not a timestamp of up to 17 digits"); return -1; }
    *t = ts_of(s, n);
    return 0;
}
/* t's string into s (TSDIGITS + 1 bytes): its length */
static Py_ssize_t ts_str(const TS *t, char *s) {
    static const char pairs[] =
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
        "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
        "8081828384858687888990919293949596979899";
    if (t->v == UINT64_MAX) { s[0] = '~'; return 1; }
    uint64_t d = t->v >> 5;
    uint32_t hi = (uint32_t)(d / 100000000ULL), lo = (uint32_t)(d % 100000000ULL);   /* 9 and 8 digits */
    for (int i = TSDIGITS - 2; i >= 9; i -= 2) { memcpy(s + i, pairs + 2 * (lo % 100), 2); lo /= 100; }
    s[8] = (char)('0' + hi % 10); hi /= 10;
    for (int i = 6; i >= 0; i -= 2) { memcpy(s + i, pairs + 2 * (hi % 100), 2); hi /= 100; }
    return (Py_ssize_t)(t->v & 31);
}

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

/* indices by a small integer id (suffix and tuple ids), one generation at a time: e[id].at holds
 * while e[id].gen == cur, so a new generation (stamp_next) empties it without clearing; the two
 * words of an id side by side (one cache line read per lookup) */
typedef struct { uint32_t gen; int32_t at; } StampEntry;
typedef struct { StampEntry *e; uint32_t cur; Py_ssize_t cap; } StampIndex;

/* the index of id, or -1 */
static inline Py_ssize_t stamp_get(const StampIndex *s, Py_ssize_t id) {
    return id < s->cap && s->e[id].gen == s->cur ? s->e[id].at : -1;
}

static int stamp_grow(StampIndex *s, Py_ssize_t id) {
    Py_ssize_t old = s->cap, cap = old ? old : 64;
    while (cap <= id) cap *= 2;
    if (resize((void **)&s->e, cap, sizeof(StampEntry)) < 0) return -1;
    memset(s->e + old, 0, (cap - old) * sizeof(StampEntry));
    s->cap = cap;
    return 0;
}

/* at[id] = v in this generation */
static inline int stamp_set(StampIndex *s, Py_ssize_t id, Py_ssize_t v) {
    if (v >= INT32_MAX) { PyErr_SetString(PyExc_OverflowError, "too many entries"); return -1; }
    if (id >= s->cap && stamp_grow(s, id) < 0) return -1;
    if (s->cur == 0) s->cur = 1;
    s->e[id].gen = s->cur; s->e[id].at = (int32_t)v;
    return 0;
}

static void stamp_next(StampIndex *s) {
    if (++s->cur == 0) {      /* the generations wrapped round: every entry is stale again */
        if (s->e) memset(s->e, 0, s->cap * sizeof(StampEntry));
        s->cur = 1;
    }
}

static void stamp_free(StampIndex *s) {
    PyMem_Free(s->e);
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

static int grow_to(void **arr, Py_ssize_t *cap, Py_ssize_t need, size_t size) {
    Py_ssize_t c = *cap ? *cap : 16;
    while (c < need) c *= 2;
    void *p = PyMem_Realloc(*arr, c * size);
    if (!p) { PyErr_NoMemory(); return -1; }
    *arr = p; *cap = c;
    return 0;
}

/* an array of *cap elements of size bytes grown to hold need (the check inline, the growth not) */
static inline int grow(void **arr, Py_ssize_t *cap, Py_ssize_t need, size_t size) {
    return need <= *cap ? 0 : grow_to(arr, cap, need, size);
}

/* grow two parallel arrays of one capacity */
static int grow2_to(void **a, size_t asz, void **b, size_t bsz, Py_ssize_t *cap, Py_ssize_t need) {
    Py_ssize_t c = *cap ? *cap : 16;
    while (c < need) c *= 2;
    if (resize(a, c, asz) < 0 || resize(b, c, bsz) < 0) return -1;
    *cap = c;
    return 0;
}
static inline int grow2(void **a, size_t asz, void **b, size_t bsz, Py_ssize_t *cap, Py_ssize_t need) {
    return need <= *cap ? 0 : grow2_to(a, asz, b, bsz, cap, need);
}
