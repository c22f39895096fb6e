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

