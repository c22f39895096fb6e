/* ------------------------------------------------------------------ Aggregator (map side) */

typedef struct { int64_t count, bytes, maxlen; TS first, last; Py_ssize_t next; } ACell;

/* where the map side finds each criterion's value (profiler.model.criteria: Criterion.origin): the
 * fields, the size class of the length, the collection (by the line's file name through a table
 * Python fills, or the split's own), the depth (an index line has none: 'unk') */
enum { SRC_TIMESTAMP = 0, SRC_MIME = 1, SRC_STATUS = 2, SRC_LANG = 3, SRC_SIZE = 4, SRC_COLLECTION = 5,
       SRC_DEPTH = 6, NSOURCES };
static const char *const SOURCE_NAMES[] = {"timestamp", "mime", "status", "lang", "length:size_class",
                                           "collection", "depth"};
/* the line formats the map side parses (profiler.job.kernels) */
static const char *const LINE_FORMATS[] = {"cdx", "cdxj"};

#define LANG_TABLE_MAX 4096  /* language entries an Aggregator learns; lines of others go to Python */
#define COLL_TABLE_MAX 65536 /* file names whose collection an Aggregator holds (then it forgets them) */
#define COLL_NAME_MAX 1000   /* the bytes of a file name a collection pattern reads (profiler.model.collection) */
#define LANG_ENTRY_MAX 32     /* longer entries are never learnt */
typedef struct { char s[8]; uint8_t n; } LangCode;

typedef struct {
    PyObject_HEAD
    int period_len, resolve;
    Crit crit;                 /* the policy's criteria */
    int source[MAXC];          /* each one's source */
    Py_ssize_t limit;
    int cdxj;                  /* the lines are CDXJ; else CDX, their fields at these positions */
    int nfields, i_key, i_url, i_ts, i_mime, i_status, i_digest, i_len, i_file;
    unsigned cj_mask;          /* the CDXJ keys read (CJ_*): the language ones when a criterion's source is lang */
    Map langs; LangCode *lang_codes; Py_ssize_t lang_cap, lang_limit;   /* language entry -> code (add_language) */
    Buf pending;               /* the entry feed() asks Python's code of */
    int coll_by_name;          /* a collection pattern reads the lines' file names (else: coll_default) */
    Buf coll_default;          /* the collection of a line without a file name, or of every line */
    Map colls; Py_ssize_t *coll_off, *coll_len, coll_cap; Buf coll_values;   /* file name -> collection */
    Buf coll_pending;          /* the file name feed() asks Python's collection of */
    Map uris; Py_ssize_t *u_head, *u_tail, ucap;
    Py_ssize_t last_ui;        /* the URI-R of the capture before (an index's captures of one URI-R follow each other) */
    Map cells; ACell *cv; Py_ssize_t cvcap;
    long long captures;
    long long bytes_total, max_bytes;   /* lengths added; the most they may add up to (mapside.map_split) */
    Buf kb, jb, ckb;
    Filter filter; uint64_t *fh; Py_ssize_t fhcap;   /* the map task's digest filter, if any */
} Aggregator;

/* the lines' format: CDX with the fields of legend letters, or CDXJ (letters None) */
static int agg_layout(Aggregator *a, PyObject *letters) {
    a->nfields = 0;
    a->i_key = a->i_url = a->i_ts = a->i_mime = a->i_status = a->i_digest = a->i_len = a->i_file = -1;
    a->cdxj = letters == Py_None;
    if (a->cdxj) return 0;
    Py_ssize_t n;
    const char *s = utf8(letters, &n);
    if (!s) return -1;
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
            case 'g': if (a->i_file < 0) a->i_file = f; break;
            }
        }
        i = j;
    }
    if (a->i_len < 0) a->i_len = i_n;
    return 0;
}

/* add one capture: its URI-R, its timestamp and its cell key (profiler.job.cells: values, digest,
 * revisit, as put_values wrote them, then the digest's length and bytes and the revisit byte);
 * 1 when the table is full, -1 on error */
static int agg_add(Aggregator *a, const char *u, Py_ssize_t un, const char *ts, Py_ssize_t tn,
                   const char *ck, Py_ssize_t ckn, int64_t length) {
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
    Buf *b = &a->kb;
    b->n = 0;
    uint32_t uix = (uint32_t)ui;
    if (buf_put(b, (const char *)&uix, 4) < 0 || buf_put(b, ck, ckn) < 0) return -1;
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

/* URI-R ui's record written: the JSON of its cells [[values..., digest, revisit, count, bytes, max_len,
 * first, last], ...] (profiler.job.cells) appended to b, and its digests into the map task's digest
 * filter when there is one (in the same pass over the cells) */
static int agg_record(Aggregator *a, Py_ssize_t ui, Buf *b) {
    Py_ssize_t nh = 0;
    if (buf_putc(b, '[') < 0) return -1;
    for (Py_ssize_t ci = a->u_head[ui]; ci >= 0; ci = a->cv[ci].next) {
        const char *v[MAXC];
        Py_ssize_t vn[MAXC];
        const char *dk = get_values(map_key(&a->cells, ci) + 4, a->crit.k, v, vn);
        uint32_t dn;
        memcpy(&dn, dk, 4);
        const char *d = dk + 4;
        int rev = d[dn];
        ACell *c = &a->cv[ci];
        if (a->filter.on && !(dn == 1 && d[0] == '-')) {
            if (grow((void **)&a->fh, &a->fhcap, nh + 1, sizeof(uint64_t)) < 0) return -1;
            a->fh[nh++] = hash_bytes(d, dn);
        }
        if ((ci != a->u_head[ui] && buf_putc(b, ',') < 0) || buf_putc(b, '[') < 0) return -1;
        for (int q = 0; q < a->crit.k; q++)
            if (json_str(b, v[q], vn[q]) < 0 || buf_putc(b, ',') < 0) return -1;
        if (json_str(b, d, dn) < 0 || buf_put(b, rev ? ",1," : ",0,", 3) < 0
            || json_int(b, c->count) < 0 || buf_putc(b, ',') < 0 || json_int(b, c->bytes) < 0
            || buf_putc(b, ',') < 0) return -1;
        if (c->count == 1) {          /* one capture: largest length = bytes, last = first (8 items) */
            if (json_ts(b, &c->first) < 0 || buf_putc(b, ']') < 0) return -1;
            continue;
        }
        if (json_int(b, c->maxlen) < 0 || buf_putc(b, ',') < 0 || json_ts(b, &c->first) < 0
            || buf_putc(b, ',') < 0 || json_ts(b, &c->last) < 0 || buf_putc(b, ']') < 0) return -1;
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
    Py_ssize_t i = 0;
#if defined(__SSE2__)
    /* 16 bytes a step: as signed bytes, printable ASCII is 0x21 to 0x7e (0x7f-0xff are 127 or below 0) */
    const __m128i low = _mm_set1_epi8(0x20), high = _mm_set1_epi8(0x7f);
    for (; i + 16 <= n; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(s + i));
        __m128i bad = _mm_or_si128(_mm_cmplt_epi8(v, _mm_add_epi8(low, _mm_set1_epi8(1))), _mm_cmpeq_epi8(v, high));
        if (_mm_movemask_epi8(bad)) return 0;
    }
#endif
    for (; i < n; i++) if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f) return 0;
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

/* the fields of one index line a capture is made of, raw (NULL: the line has none); lang: its
 * language code, coll: its collection, found already */
typedef struct {
    const char *key, *ts, *mime, *status, *digest, *length, *lang, *coll;
    Py_ssize_t kn, tn, mn, sn, dn, ln, gn, cn;
} RawFields;

/* a urlkey the index gives as a SURT that key_field and urlkey leave as it is */
static inline int plain_surt(const char *key, Py_ssize_t kn) {
    const char *paren = memchr(key, ')', kn);
    return paren && paren != key && !memchr(key, '/', paren - key) && is_safe(key, kn)
           && key[0] != '!' && key[0] != '@' && key[0] != '{' && key[0] != '(';
}

/* the timestamp padded to the earliest valid datetime (profiler.model.normalise.fractional_timestamp: up
 * to 23 digits, those past the fourteenth a fraction of a second, dropped): 0, or 1 when it is not valid */
static int norm_timestamp(const char *tr, Py_ssize_t tn, char ts[14]) {
    if (tn > 14 && tn <= 23 && all_digits(tr, tn)) tn = 14;
    if (tn < 4 || tn > 14 || !all_digits(tr, tn)) return 1;
    memcpy(ts, tr, tn);
    memset(ts + tn, '0', 14 - tn);
    if (tn < 6 && ts[4] == '0' && ts[5] == '0') ts[5] = '1';
    if (tn < 8 && ts[6] == '0' && ts[7] == '0') ts[7] = '1';
    if ((tn > 4 && !in2(ts + 4, "01", "12")) || (tn > 6 && !in2(ts + 6, "01", "31"))
        || (tn > 8 && memcmp(ts + 8, "23", 2) > 0) || (tn > 10 && memcmp(ts + 10, "59", 2) > 0)
        || (tn > 12 && memcmp(ts + 12, "60", 2) > 0) || memcmp(ts, "0000", 4) == 0) return 1;
    if (tn > 6) {   /* the day in its month (normalise.days_in_month) */
        static const int days[13] = {0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
        int year = (ts[0] - '0') * 1000 + (ts[1] - '0') * 100 + (ts[2] - '0') * 10 + (ts[3] - '0');
        int month = (ts[4] - '0') * 10 + (ts[5] - '0'), day = (ts[6] - '0') * 10 + (ts[7] - '0');
        int leap = month == 2 && year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
        if (day > days[month] + leap) return 1;
    }
    return 0;
}

/* the length (normalise.length): digits, '-' or nothing; 0, or 1 when Python must read it */
static int norm_length(const char *lr, Py_ssize_t ln, int64_t *length) {
    *length = 0;
    if (!lr || ln == 0 || (ln == 1 && lr[0] == '-')) return 0;
    if (!all_digits(lr, ln) || ln > 18) return 1;
    for (Py_ssize_t k = 0; k < ln; k++) *length = *length * 10 + (lr[k] - '0');
    return 0;
}

static inline int is_bytes_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

/* the mime type (normalise.mime: up to ';', stripped, lower case; unknown forms and bare class names 'unk') into mime[256]:
 * 0, or 1 when key_field would escape it */
static int norm_mime(const char *mr, Py_ssize_t mrn, char *mime, Py_ssize_t *mn) {
    const char *semi = memchr(mr, ';', mrn);
    Py_ssize_t n = semi ? semi - mr : mrn;
    while (n > 0 && is_bytes_space(mr[n - 1])) n--;
    while (n > 0 && is_bytes_space(mr[0])) { mr++; n--; }
    for (Py_ssize_t k = 0; k < n; k++)    /* cut at white space within (normalise.mime) */
        if (is_bytes_space(mr[k])) { n = k; break; }
    if (n > 256 || !is_safe(mr, n) || (n > 0 && mr[0] == '{')) return 1;
    for (Py_ssize_t k = 0; k < n; k++) mime[k] = (mr[k] >= 'A' && mr[k] <= 'Z') ? mr[k] + 32 : mr[k];
    if (n == 0 || (n == 1 && mime[0] == '-') || (n == 3 && !memcmp(mime, "unk", 3))
        || (n == 7 && !memcmp(mime, "unknown", 7)) || (n == 7 && !memcmp(mime, "no-type", 7))
        || (n == 4 && !memcmp(mime, "none", 4))
        /* the bare names of the mime class level: no media types (they would share its keys) */
        || (n == 4 && (!memcmp(mime, "html", 4) || !memcmp(mime, "code", 4)))
        || (n == 5 && (!memcmp(mime, "image", 5) || !memcmp(mime, "media", 5) || !memcmp(mime, "other", 5)))
        || (n == 8 && !memcmp(mime, "document", 8))
        /* normalise.not_a_media_type: no top-level type ('/x'), or a category's spelling ('text/' then '*') */
        || (n > 0 && mime[0] == '/') || (n >= 2 && mime[n - 2] == '/' && mime[n - 1] == '*')) {
        memcpy(mime, "unk", 3); n = 3;
    }
    *mn = n;
    return 0;
}

/* s[0:n] into out, ASCII lower-case letters in upper case (16 bytes a step with SSE2) */
static inline void upper(const char *s, Py_ssize_t n, char *out) {
    Py_ssize_t k = 0;
#if defined(__SSE2__)
    const __m128i before_a = _mm_set1_epi8('a' - 1), after_z = _mm_set1_epi8('z' + 1), flip = _mm_set1_epi8(32);
    for (; k + 16 <= n; k += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(s + k));
        __m128i lower = _mm_and_si128(_mm_cmpgt_epi8(v, before_a), _mm_cmplt_epi8(v, after_z));
        _mm_storeu_si128((__m128i *)(out + k), _mm_sub_epi8(v, _mm_and_si128(lower, flip)));
    }
#endif
    for (; k < n; k++) out[k] = (s[k] >= 'a' && s[k] <= 'z') ? s[k] - 32 : s[k];
}

/* the digest (normalise.digest: its 'algo:' prefix cut, upper case; '-' when unknown) into digest[256]:
 * 0, or 1 when key_field would escape it */
static int norm_digest(const char *dr, Py_ssize_t drn, char *digest, Py_ssize_t *dn) {
    digest[0] = '-'; *dn = 1;
    if (!dr || drn == 0 || (drn == 1 && dr[0] == '-')) return 0;
    const char *colon = memchr(dr, ':', drn);
    if (colon) { drn -= colon + 1 - dr; dr = colon + 1; }
    if (drn == 0) return 0;
    if (drn > 256 || !is_safe(dr, drn) || dr[0] == '{') return 1;
    upper(dr, drn, digest);
    *dn = drn;
    return 0;
}

/* one capture from its raw fields, normalised as profiler.model.normalise does and added: 0, 1 table
 * full after adding it, 2 Python must read the line (a skip reason, surt(), escaping), -1 error */
/* FacetRedux's size class of a length (profiler.model.normalise.size_class) */
static const char *size_class(int64_t length) {
    static const char *const names[] = {"0-1k", "1k-10k", "10k-100k", "100k-1m", "1m-10m", "10m-100m", "100m-1g"};
    int64_t bound = 1000;
    for (int i = 0; i < 7; i++, bound *= 10)
        if (length < bound) return names[i];
    return "1g+";
}

static int agg_capture(Aggregator *a, const RawFields *r) {
    const char *mr = r->mime && r->mn ? r->mime : "-";
    Py_ssize_t mrn = r->mime && r->mn ? r->mn : 1;
    if (!plain_surt(r->key, r->kn)) return 2;
    char ts[14], mime[256], digest[256];
    Py_ssize_t mn, dn;
    int64_t length;
    if (norm_timestamp(r->ts, r->tn, ts) || norm_length(r->length, r->ln, &length) || norm_mime(mr, mrn, mime, &mn)
        || norm_digest(r->digest, r->dn, digest, &dn)) return 2;
    /* no memento (profiler.formats.cdx.NON_CAPTURE_MIMES, of the normalised type: any case, stripped) */
    if (starts(mime, mn, "warc/warcinfo") || starts(mime, mn, "arc/filedesc") || starts(mime, mn, "warc/metadata")
        || starts(mime, mn, "warc/request")) return 2;
    const char *st = "unk";
    if (r->status && r->sn == 3 && all_digits(r->status, 3)) st = r->status;
    int revisit = mn == 12 && memcmp(mime, "warc/revisit", 12) == 0;
    if (length > a->max_bytes - a->bytes_total) return 2;    /* past the byte budget: Python counts it */
    /* the cell key (profiler.job.cells.CellKeys): each criterion's value from its source, a revisit's
     * blank for those it takes from its original; digest; revisit */
    int rev = revisit && a->resolve;
    Buf *b = &a->ckb;
    b->n = 0;
    for (int q = 0; q < a->crit.k; q++) {
        const char *v = ""; Py_ssize_t vn = 0;
        if (!(rev && a->crit.resolved[q])) {
            switch (a->source[q]) {
            case SRC_TIMESTAMP: v = ts; vn = a->period_len < 14 ? a->period_len : 14; break;
            case SRC_MIME: v = mime; vn = mn; break;
            case SRC_STATUS: v = st; vn = 3; break;
            case SRC_LANG: v = r->lang; vn = r->gn; break;
            case SRC_SIZE: v = size_class(length); vn = (Py_ssize_t)strlen(v); break;
            case SRC_COLLECTION: v = r->coll; vn = r->cn; break;
            case SRC_DEPTH: v = "unk"; vn = 3; break;
            }
        }
        if (buf_put_u32(b, (uint32_t)vn) < 0 || buf_put(b, v, vn) < 0) return -1;
    }
    if (buf_put_u32(b, (uint32_t)dn) < 0 || buf_put(b, digest, dn) < 0 || buf_putc(b, (char)rev) < 0) return -1;
    return agg_add(a, r->key, r->kn, ts, 14, b->p, b->n, length);
}

/* the collection of a line whose file name is name[0:n] (NULL: none): the split's own without a pattern
 * or a name ('-' names none), else the table's (profiler.model.collection: the pattern reads the
 * name's first COLL_NAME_MAX bytes). 0 (*v), 4 the name is to be learnt (a->coll_pending), -1 error */
static int agg_collection(Aggregator *a, const char *name, Py_ssize_t n, const char **v, Py_ssize_t *vn) {
    if (!a->coll_by_name || !name || n == 0 || (n == 1 && name[0] == '-')) {
        *v = a->coll_default.p ? a->coll_default.p : "unk"; *vn = a->coll_default.p ? a->coll_default.n : 3;
        return 0;
    }
    if (n > COLL_NAME_MAX) n = COLL_NAME_MAX;
    Py_ssize_t i = map_find(&a->colls, name, n);
    if (i >= 0) { *v = a->coll_values.p + a->coll_off[i]; *vn = a->coll_len[i]; return 0; }
    a->coll_pending.n = 0;
    return buf_put(&a->coll_pending, name, n) < 0 ? -1 : 4;
}

#define MAXF 32
/* One CDX line the way profiler.formats.cdx's parser reads it, for the common case only: agg_capture's
 * answers (2 also for a legend) */
static int agg_line(Aggregator *a, const char *line, Py_ssize_t n) {
    const char *f[MAXF]; Py_ssize_t fl[MAXF];
    int nf = 0;
    if (a->nfields == 0 || a->nfields > MAXF || a->i_key < 0 || a->i_ts < 0) return 2;
    {   /* a legend (profiler.formats.cdx.LEGEND_STARTS): Python reads it */
        Py_ssize_t k = n > 0 && (line[0] == ' ' || line[0] == '\t');
        if (n >= k + 4 && memcmp(line + k, "CDX", 3) == 0 && (line[k + 3] == ' ' || line[k + 3] == '\t')) return 2;
    }
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
    if (a->i_url >= 0 && (starts(f[a->i_url], fl[a->i_url], "filedesc:") || starts(f[a->i_url], fl[a->i_url], "warcinfo:")))
        return 2;
    RawFields r = {f[a->i_key], f[a->i_ts], NULL, NULL, NULL, NULL, "unk", NULL, fl[a->i_key], fl[a->i_ts],
                   0, 0, 0, 0, 3, 0};
    int found = agg_collection(a, a->i_file >= 0 ? f[a->i_file] : NULL, a->i_file >= 0 ? fl[a->i_file] : 0,
                               &r.coll, &r.cn);
    if (found) return found;
    if (a->i_mime >= 0) { r.mime = f[a->i_mime]; r.mn = fl[a->i_mime]; }      /* a CDX line names no language */
    if (a->i_status >= 0) {
        r.status = f[a->i_status]; r.sn = fl[a->i_status];
        if (memchr(r.status, '=', r.sn)) return 2;   /* a media type's parameter where the status goes: Python reads it */
    }
    if (a->i_digest >= 0) { r.digest = f[a->i_digest]; r.dn = fl[a->i_digest]; }
    if (a->i_len >= 0) { r.length = f[a->i_len]; r.ln = fl[a->i_len]; }
    return agg_capture(a, &r);
}

/* the code the table holds for a language entry: 0 (*code), 2 Python must read the line (the table is
 * full, or the entry too long for it), 3 the entry is to be learnt (a->pending) */
static int lang_lookup(Aggregator *a, const char *s, Py_ssize_t n, const char **code, Py_ssize_t *cn) {
    Py_ssize_t i = map_find(&a->langs, s, n);
    if (i >= 0) { *code = a->lang_codes[i].s; *cn = a->lang_codes[i].n; return 0; }
    if (n > LANG_ENTRY_MAX || a->langs.n >= a->lang_limit) return 2;
    a->pending.n = 0;
    return buf_put(&a->pending, s, n) < 0 ? -1 : 3;
}

/* the language of a CDXJ languages or lang value (profiler.model.language.primary_language: its first
 * entry that is not empty, up to ';', stripped): lang_lookup's answers, or 'unk' when it has none */
static int agg_language(Aggregator *a, const char *v, Py_ssize_t n, const char **code, Py_ssize_t *cn) {
    if (n > 4 * 64) return 2;                 /* past primary_language's bound */
    const char *p = v, *e = v + n;
    for (;;) {
        const char *comma = memchr(p, ',', e - p), *stop = comma ? comma : e;
        const char *semi = memchr(p, ';', stop - p), *t = semi ? semi : stop;
        while (p < t && *p == ' ') p++;       /* a plain JSON string's only white space */
        while (t > p && t[-1] == ' ') t--;
        if (t > p) return lang_lookup(a, p, t - p, code, cn);
        if (!comma) break;
        p = comma + 1;
    }
    *code = "unk"; *cn = 3;
    return 0;
}

/* One CDXJ line the way profiler.formats.cdxj's parser reads it, for the common case only (a SURT
 * urlkey, the block as cj_object reads it): agg_capture's answers, and 3 when its language entry is
 * to be learnt */
static int agg_cdxj_line(Aggregator *a, const char *line, Py_ssize_t n) {
    const char *end = line + n, *sp = memchr(line, ' ', n);
    if (!sp) return 2;
    const char *ts = sp + 1, *sp2 = memchr(ts, ' ', end - ts);
    if (!sp2) return 2;
    CJFields f;
    if (cj_long_digits(sp2 + 1, end - sp2 - 1) || cj_object(sp2 + 1, end, a->cj_mask, &f)) return 2;
    RawFields r = {line, ts, NULL, NULL, NULL, NULL, "unk", NULL, sp - line, sp2 - ts, 0, 0, 0, 0, 3, 0};
    int found = agg_collection(a, f.s[CJ_FILENAME], f.n[CJ_FILENAME], &r.coll, &r.cn);
    if (found) return found;
    r.mime = cj_first3(&f, CJ_MIME, CJ_MIME_TYPE, CJ_MIMETYPE, &r.mn);      /* profiler.formats.cdxj's order */
    r.status = cj_first3(&f, CJ_STATUS, CJ_STATUS_CODE, CJ_STATUSCODE, &r.sn);
    r.digest = cj_first(&f, CJ_DIGEST, CJ_PAYLOAD_DIGEST, &r.dn);
    r.length = f.s[CJ_LENGTH]; r.ln = f.n[CJ_LENGTH];
    Py_ssize_t vn;
    const char *v = cj_first(&f, CJ_LANGUAGES, CJ_LANG, &vn);
    if (v && (found = agg_language(a, v, vn, &r.lang, &r.gn))) return found;
    return agg_capture(a, &r);
}

/* feed(buf, pos) -> (state, pos, end): reads the lines of buf from pos. state 0: all read (pos =
 * len(buf)); 1: the line buf[pos:end] is for Python (then go on at end + 1); 2: the table is full
 * (flush, then go on at pos); 3: the CDXJ line buf[pos:end] has a language entry the table does not
 * hold (pending_language(); add_language(), then go on at pos); 4: the line buf[pos:end] has a file
 * name whose collection the table does not hold (pending_collection(); add_collection(), then go on
 * at pos). */
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
        int r = a->cdxj ? agg_cdxj_line(a, buf + pos, ln) : agg_line(a, buf + pos, ln);
        if (r < 0) { PyBuffer_Release(&view); return NULL; }
        if (r >= 2) { state = r == 2 ? 1 : r; end = le; break; }
        pos = next;
        if (r == 1) { state = 2; break; }
    }
    PyBuffer_Release(&view);
    return Py_BuildValue("(inn)", state, pos, end);
}

/* add_cell(urlkey, timestamp, cell key, length): a capture Python parsed, with its cell key
 * (values..., digest, revisit) from profiler.job.cells.CellKeys */
static PyObject *Aggregator_add_cell(Aggregator *a, PyObject *args) {
    PyObject *u, *t, *key;
    long long length;
    if (!PyArg_ParseTuple(args, "UUO!L", &u, &t, &PyTuple_Type, &key, &length)) return NULL;
    int k = a->crit.k;
    if (PyTuple_GET_SIZE(key) != k + 2) { PyErr_SetString(PyExc_ValueError, "a cell key is (values..., digest, revisit)"); return NULL; }
    Py_ssize_t un, tn;
    const char *us = utf8(u, &un), *ts = utf8(t, &tn);
    if (!us || !ts) return NULL;
    Buf *b = &a->ckb;
    b->n = 0;
    for (int q = 0; q <= k; q++) {
        Py_ssize_t vn;
        const char *v = utf8(PyTuple_GET_ITEM(key, q), &vn);
        if (!v || buf_put_u32(b, (uint32_t)vn) < 0 || buf_put(b, v, vn) < 0) return NULL;
    }
    int rev = PyObject_IsTrue(PyTuple_GET_ITEM(key, k + 1));
    if (rev < 0 || buf_putc(b, (char)rev) < 0) return NULL;
    int r = agg_add(a, us, un, ts, tn, b->p, b->n, length);
    if (r < 0) return NULL;
    return PyBool_FromLong(r);
}

static PyObject *Aggregator_set_layout(Aggregator *a, PyObject *letters) {
    if (agg_layout(a, letters) < 0) return NULL;
    Py_RETURN_NONE;
}

/* the language entry of the line feed() left with state 3 */
static PyObject *Aggregator_pending_language(Aggregator *a, PyObject *unused) {
    return PyBytes_FromStringAndSize(a->pending.p ? a->pending.p : "", a->pending.n);
}

/* add_language(entry, code): Python's code (normalise_language) of a language entry; False when the
 * table is full or the entry too long for it (its lines then go to Python) */
static PyObject *Aggregator_add_language(Aggregator *a, PyObject *args) {
    const char *entry, *code;
    Py_ssize_t en, cn;
    if (!PyArg_ParseTuple(args, "y#s#", &entry, &en, &code, &cn)) return NULL;
    if (cn < 1 || cn > (Py_ssize_t)sizeof a->lang_codes[0].s) {
        PyErr_SetString(PyExc_ValueError, "a language code of 1 to 8 bytes");
        return NULL;
    }
    if (en > LANG_ENTRY_MAX || a->langs.n >= a->lang_limit) Py_RETURN_FALSE;
    int added;
    Py_ssize_t i = map_find_or_add(&a->langs, entry, en, &added);
    if (i < 0 || grow((void **)&a->lang_codes, &a->lang_cap, i + 1, sizeof(LangCode)) < 0) return NULL;
    memcpy(a->lang_codes[i].s, code, cn);
    a->lang_codes[i].n = (uint8_t)cn;
    Py_RETURN_TRUE;
}

/* the file name of the line feed() left with state 4 (its first COLL_NAME_MAX bytes) */
static PyObject *Aggregator_pending_collection(Aggregator *a, PyObject *unused) {
    return PyBytes_FromStringAndSize(a->coll_pending.p ? a->coll_pending.p : "", a->coll_pending.n);
}

/* add_collection(name, collection): Python's collection of a file name (its first COLL_NAME_MAX
 * bytes); a full table is emptied first */
static PyObject *Aggregator_add_collection(Aggregator *a, PyObject *args) {
    const char *name, *value;
    Py_ssize_t nn, vn;
    if (!PyArg_ParseTuple(args, "y#s#", &name, &nn, &value, &vn)) return NULL;
    if (nn > COLL_NAME_MAX || vn < 1) { PyErr_SetString(PyExc_ValueError, "a file name of at most 1000 bytes and a collection"); return NULL; }
    if (a->colls.n >= COLL_TABLE_MAX) { map_clear(&a->colls); a->coll_values.n = 0; }
    int added;
    Py_ssize_t i = map_find_or_add(&a->colls, name, nn, &added);
    if (i < 0 || grow2((void **)&a->coll_off, sizeof(Py_ssize_t), (void **)&a->coll_len, sizeof(Py_ssize_t),
                       &a->coll_cap, i + 1) < 0) return NULL;
    a->coll_off[i] = a->coll_values.n; a->coll_len[i] = vn;
    if (buf_put(&a->coll_values, value, vn) < 0) return NULL;
    Py_RETURN_NONE;
}

/* set_collection(default, by_name): the collection of lines without a file name (or of every line),
 * and whether a pattern reads the file names (then the CDXJ key filename is read too) */
static PyObject *Aggregator_set_collection(Aggregator *a, PyObject *args) {
    const char *value;
    Py_ssize_t vn;
    int by_name;
    if (!PyArg_ParseTuple(args, "s#p", &value, &vn, &by_name)) return NULL;
    if (vn < 1) { PyErr_SetString(PyExc_ValueError, "an empty collection"); return NULL; }
    a->coll_default.n = 0;
    if (buf_put(&a->coll_default, value, vn) < 0) return NULL;
    a->coll_by_name = by_name;
    if (by_name) a->cj_mask |= 1u << CJ_FILENAME; else a->cj_mask &= ~(1u << CJ_FILENAME);
    map_clear(&a->colls); a->coll_values.n = 0;
    Py_RETURN_NONE;
}

static PyObject *Aggregator_set_language_limit(Aggregator *a, PyObject *arg) {
    Py_ssize_t v = PyLong_AsSsize_t(arg);
    if (v == -1 && PyErr_Occurred()) return NULL;
    a->lang_limit = v < 0 ? 0 : v > LANG_TABLE_MAX ? LANG_TABLE_MAX : v;
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
    buf_free(&a->kb); buf_free(&a->jb); buf_free(&a->ckb);
    map_free(&a->langs); PyMem_Free(a->lang_codes); buf_free(&a->pending);
    map_free(&a->colls); PyMem_Free(a->coll_off); PyMem_Free(a->coll_len); buf_free(&a->coll_values);
    buf_free(&a->coll_default); buf_free(&a->coll_pending);
    crit_free(&a->crit);
    filter_release(&a->filter); PyMem_Free(a->fh);
    Py_TYPE(a)->tp_free((PyObject *)a);
}

/* Aggregator(period_len, resolve_revisits, limit, letters, sources, criteria): letters the CDX layout
 * (None: CDXJ lines), sources where each criterion's value comes from (SOURCE_NAMES), criteria as the
 * Expander takes them */
static int Aggregator_init(Aggregator *a, PyObject *args, PyObject *kw) {
    int pl, resolve;
    Py_ssize_t limit;
    PyObject *letters, *sources, *spec;
    if (!PyArg_ParseTuple(args, "ipnOOO", &pl, &resolve, &limit, &letters, &sources, &spec)) return -1;
    if (a->uris.slots) { PyErr_SetString(PyExc_RuntimeError, "Aggregator initialised twice"); return -1; }
    if (crit_parse(&a->crit, spec) < 0) return -1;
    PyObject *src = PySequence_Fast(sources, "sources must be a sequence");
    if (!src) return -1;
    if (PySequence_Fast_GET_SIZE(src) != a->crit.k) {
        Py_DECREF(src); PyErr_SetString(PyExc_ValueError, "one source per criterion"); return -1;
    }
    for (int q = 0; q < a->crit.k; q++) {
        Py_ssize_t n;
        const char *name = utf8(PySequence_Fast_GET_ITEM(src, q), &n);
        if (!name) { Py_DECREF(src); return -1; }
        a->source[q] = -1;
        for (int i = 0; i < NSOURCES; i++)
            if ((Py_ssize_t)strlen(SOURCE_NAMES[i]) == n && memcmp(SOURCE_NAMES[i], name, n) == 0) a->source[q] = i;
        if (a->source[q] < 0) {
            Py_DECREF(src); PyErr_Format(PyExc_ValueError, "no compiled source %.40s", name); return -1;
        }
    }
    Py_DECREF(src);
    a->cj_mask = (1u << CJ_LANGUAGES) - 1;
    for (int q = 0; q < a->crit.k; q++)
        if (a->source[q] == SRC_LANG) a->cj_mask |= 1u << CJ_LANGUAGES | 1u << CJ_LANG;
    a->lang_limit = LANG_TABLE_MAX;
    a->period_len = pl; a->resolve = resolve; a->limit = limit < 1 ? 1 : limit;
    a->last_ui = -1;
    a->bytes_total = 0; a->max_bytes = LLONG_MAX;
    if (map_init(&a->uris) < 0 || map_init(&a->cells) < 0 || map_init(&a->langs) < 0 || map_init(&a->colls) < 0)
        return -1;
    return agg_layout(a, letters);
}

static PyObject *Aggregator_set_digest_filter(Aggregator *a, PyObject *filter) {
    if (filter_take(&a->filter, filter, 2) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef Aggregator_methods[] = {
    {"feed", (PyCFunction)Aggregator_feed, METH_VARARGS, "feed(buf, pos) -> (state, pos, end)"},
    {"add_cell", (PyCFunction)Aggregator_add_cell, METH_VARARGS,
     "add_cell(urlkey, ts, cell key, length) -> table full: a capture parsed in Python, with its cell key"},
    {"flush", (PyCFunction)Aggregator_flush, METH_VARARGS,
     "flush(keep_last=False) -> [(urlkey, cells JSON), ...]; keep_last: the last capture's URI-R stays"},
    {"flush_raw", (PyCFunction)Aggregator_flush_raw, METH_VARARGS, "flush_raw(keep_last=False) -> bytes: flush()'s records as lines"},
    {"set_layout", (PyCFunction)Aggregator_set_layout, METH_O, "set_layout(CDX legend letters, or None: CDXJ lines)"},
    {"pending_language", (PyCFunction)Aggregator_pending_language, METH_NOARGS,
     "pending_language() -> bytes: the language entry of the line feed() left with state 3"},
    {"add_language", (PyCFunction)Aggregator_add_language, METH_VARARGS,
     "add_language(entry bytes, code str) -> added: Python's code of a language entry, for the lines to come"},
    {"pending_collection", (PyCFunction)Aggregator_pending_collection, METH_NOARGS,
     "pending_collection() -> bytes: the file name of the line feed() left with state 4"},
    {"add_collection", (PyCFunction)Aggregator_add_collection, METH_VARARGS,
     "add_collection(file name bytes, collection str): Python's collection of a file name, for the lines to come"},
    {"set_collection", (PyCFunction)Aggregator_set_collection, METH_VARARGS,
     "set_collection(collection str, by_name): the collection of lines without a file name (or of all lines), "
     "and whether file names are looked up"},
    {"set_language_limit", (PyCFunction)Aggregator_set_language_limit, METH_O,
     "set_language_limit(n): the language entries the table holds at most (LANG_TABLE_MAX)"},
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
    .tp_doc = "Map side: CDX or CDXJ lines -> cells per URI-R (see profiler.job.mapside.CaptureAggregator).",
};

