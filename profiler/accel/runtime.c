/* ------------------------------------------------------------------ legend lines */

/* the start of a legend line whose "CDX" is at i (a line start, or after one space or tab), or -1 */
static inline Py_ssize_t legend_line_start(const unsigned char *p, Py_ssize_t i) {
    if (i >= 1 && p[i - 1] == '\n') return i;
    if (i >= 2 && (p[i - 1] == ' ' || p[i - 1] == '\t') && p[i - 2] == '\n') return i - 1;
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
 * ("CDX" and a space or tab, at its start or after one space or tab) after a newline in buf], as
 * profiler.formats.inputs._legend_starts;
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
    const __m128i C = _mm_set1_epi8('C'), D = _mm_set1_epi8('D'), X = _mm_set1_epi8('X'), S = _mm_set1_epi8(' '),
                  T = _mm_set1_epi8('\t');
    for (; i + 19 <= end && !failed; i += 16) {
        __m128i after = _mm_loadu_si128((const __m128i *)(p + i + 3));
        __m128i m1 = _mm_and_si128(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + i)), C),
                                   _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + i + 1)), D));
        __m128i m2 = _mm_and_si128(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + i + 2)), X),
                                   _mm_or_si128(_mm_cmpeq_epi8(after, S), _mm_cmpeq_epi8(after, T)));
        unsigned m = (unsigned)_mm_movemask_epi8(_mm_and_si128(m1, m2));
        while (m && !failed) {
            Py_ssize_t at = legend_line_start(p, i + __builtin_ctz(m));
            if (at >= 0 && add_offset(&found, &nfound, &cap, base + at) < 0) failed = 1;
            m &= m - 1;
        }
    }
#endif
    for (; i + 4 <= end && !failed; i++) {
        if (p[i] == 'C' && p[i + 1] == 'D' && p[i + 2] == 'X' && (p[i + 3] == ' ' || p[i + 3] == '\t')) {
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
 * of several sorted runs (profiler.runtime.task.input_chunks). */
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

