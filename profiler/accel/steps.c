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
        || json_char(&p, end, ']') || p != end || !ts_ok(first, fn) || !ts_ok(last, ln)) return 1;
    r->total = v[0]; r->min = v[1]; r->max = v[2]; r->urir = v[3]; r->bytes = v[4]; r->digests = v[5];
    r->dedup = v[6];
    r->first = ts_of(first, fn);
    r->last = ts_of(last, ln);
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
    return (buf_put(b, ",\"first\":", 9) < 0 || json_ts(b, &r->first) < 0
            || buf_put(b, ",\"last\":", 8) < 0 || json_ts(b, &r->last) < 0 || buf_putc(b, '}') < 0)
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

/* step 2 (profiler.job.steps.digest_lines): a digest record alone under its key (one
 * URI-R holds the digest) is dropped, any other lone record but !meta is copied, a key's several
 * key records are summed; the runs of a digest several URI-Rs hold, of a salted digest
 * (S <salt> <digest>, even a lone line: its shares, profiler.job.hotdigests) and !meta are Python's */
static int skim_run(void *unused, const char *buf, Py_ssize_t pos, Py_ssize_t end, Py_ssize_t kn, Py_ssize_t nlines, int tab,
                    Buf *out) {
    if (nlines > 1) {       /* a key's records summed; digests and !meta: Python's */
        Rec sum;
        if (!(tab && kn >= 2 && buf[pos] == 'K' && buf[pos + 1] == ' ') || sum_run(buf, pos, end, kn, &sum)) return 1;
        return (buf_put(out, buf + pos, kn) < 0 || buf_putc(out, '\t') < 0 || rec_json(out, &sum) < 0
                || buf_putc(out, '\n') < 0) ? -1 : 0;
    }
    if (tab && kn == 5 && memcmp(buf + pos, "!meta", 5) == 0) return 1;
    if (kn >= 2 && buf[pos] == 'S' && buf[pos + 1] == ' ') return 1;      /* a salted digest's share */
    if (kn >= 2 && buf[pos] == 'D' && buf[pos + 1] == ' ') return 0;      /* as key.startswith(b"D ") */
    return (buf_put(out, buf + pos, end - pos) < 0 || (buf[end - 1] != '\n' && buf_putc(out, '\n') < 0)) ? -1 : 0;
}

/* skim(buf, pos, final) -> (state, pos, end, lines): step 2's key records and lone digest records
 * over sorted lines */
static PyObject *skim(PyObject *unused, PyObject *args) { return read_runs(args, skim_run); }

/* ------------------------------------------------------------------ step 3's keys */

/* step 3 (profiler.job.steps.profile_lines): a key's records, summed, become its profile
 * line, key<TAB>JSON block; a run with a share of a salted digest (a JSON list that starts with
 * a string, profiler.job.hotdigests) anywhere in it does not parse as records: Python's */
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

