/* ------------------------------------------------------------------ shuffle of raw lines (profiler.runtime.sparksteps) */

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
