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

