/* ------------------------------------------------------------------ criteria (profiler.model.criteria)
 *
 * A policy's criteria as the extension takes them (profiler.accel.fast): for each criterion of the
 * key, in order, the projection of each level code (0: any, written '-') and the value a revisit
 * takes when its original is not found (None: the revisit keeps its own value, as its time). The
 * values of a tuple are strings, one per criterion; a suffix is their fields joined by spaces. */

#define MAXC 8        /* criteria of one key */
#define MAXL 6        /* levels of one criterion besides any */
#define MAXCOMBOS 256 /* combinations of one SURT level */
#define MAXPREFIX 255 /* characters a PREFIX level keeps */
/* (the module exports these bounds as MAX_CRITERIA, MAX_LEVELS, MAX_COMBINATIONS and MAX_PREFIX:
 * profiler.job.kernels runs the Python kernels for a policy past them) */

/* the SURT levels, in the order of profiler.accel.fast.LEVELS (profiler.model.policy.LEVEL_TYPES) */
enum { LV_ROOT, LV_TLD, LV_SUFFIX, LV_DOMAIN, LV_SUBDOMAIN, LV_HOST, LV_PATH, LV_URL, NLEVELS };

/* projection kinds: the numbers of profiler.accel.fast.PROJECTION_CODE */
enum { PJ_ANY = 0, PJ_IDENTITY = 1, PJ_PREFIX = 2, PJ_CATEGORY = 3, PJ_CLASS = 4, PJ_MIME_CLASS = 5 };
static const char *const PROJECTION_NAMES[] = {"identity", "prefix", "category", "class", "mime_class"};
#define NPROJECTIONS 5

/* a media type's content class (profiler.model.criteria.mime_class: MIME_CLASS_TYPES, then
 * MIME_CLASS_PREFIXES; 'unk' stays 'unk', every other type is 'other') */
static const char *const MIME_CLASS_EXACT[][2] = {
    {"text/html", "html"}, {"application/xhtml+xml", "html"},
    {"application/x-shockwave-flash", "media"}, {"application/vnd.apple.mpegurl", "media"},
    {"application/dash+xml", "media"},
    {"application/pdf", "document"}, {"application/msword", "document"}, {"application/rtf", "document"},
    {"application/epub+zip", "document"}, {"text/plain", "document"}, {"text/csv", "document"},
    {"text/css", "code"}, {"text/javascript", "code"}, {"application/javascript", "code"},
    {"application/x-javascript", "code"}, {"application/json", "code"}, {"application/ld+json", "code"},
    {"text/xml", "code"}, {"application/xml", "code"}, {"application/rss+xml", "code"},
    {"application/atom+xml", "code"}, {"application/wasm", "code"}, {"application/font-woff", "code"},
    {"unk", "unk"},
};
static const char *const MIME_CLASS_PREFIX[][2] = {
    {"image/", "image"}, {"audio/", "media"}, {"video/", "media"}, {"application/vnd.ms-", "document"},
    {"application/vnd.openxmlformats-officedocument.", "document"},
    {"application/vnd.oasis.opendocument.", "document"}, {"font/", "code"},
};

static const char *mime_class(const char *v, Py_ssize_t n) {
    for (size_t i = 0; i < sizeof MIME_CLASS_EXACT / sizeof MIME_CLASS_EXACT[0]; i++)
        if ((Py_ssize_t)strlen(MIME_CLASS_EXACT[i][0]) == n && memcmp(MIME_CLASS_EXACT[i][0], v, n) == 0)
            return MIME_CLASS_EXACT[i][1];
    for (size_t i = 0; i < sizeof MIME_CLASS_PREFIX / sizeof MIME_CLASS_PREFIX[0]; i++) {
        size_t pl = strlen(MIME_CLASS_PREFIX[i][0]);
        if ((size_t)n >= pl && memcmp(MIME_CLASS_PREFIX[i][0], v, pl) == 0) return MIME_CLASS_PREFIX[i][1];
    }
    return "other";
}

typedef struct { uint8_t kind, n; } Proj;

typedef struct {
    int k;                                   /* criteria of the key */
    int nlev[MAXC];                          /* levels of each, besides any */
    Proj proj[MAXC][MAXL + 1];               /* by level code */
    int resolved[MAXC];                      /* a revisit takes the value of its original */
    Buf revisit[MAXC];                       /* ... or this one when it has none */
} Crit;

static void crit_free(Crit *c) {
    for (int i = 0; i < MAXC; i++) buf_free(&c->revisit[i]);
    c->k = 0;
}

/* spec: ((((kind, n), ...), revisit or None), ...) -> c; -1 with an exception */
static int crit_parse(Crit *c, PyObject *spec) {
    PyObject *s = PySequence_Fast(spec, "criteria must be a sequence");
    if (!s) return -1;
    Py_ssize_t k = PySequence_Fast_GET_SIZE(s);
    if (k < 1 || k > MAXC) { Py_DECREF(s); PyErr_Format(PyExc_ValueError, "1 to %d criteria, not %zd", MAXC, k); return -1; }
    c->k = (int)k;
    for (int i = 0; i < c->k; i++) {
        PyObject *levels, *revisit;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(s, i), "OO", &levels, &revisit)) { Py_DECREF(s); return -1; }
        PyObject *ls = PySequence_Fast(levels, "levels must be a sequence");
        if (!ls) { Py_DECREF(s); return -1; }
        Py_ssize_t nl = PySequence_Fast_GET_SIZE(ls);
        if (nl > MAXL) { Py_DECREF(ls); Py_DECREF(s); PyErr_SetString(PyExc_ValueError, "too many levels"); return -1; }
        c->nlev[i] = (int)nl;
        c->proj[i][0].kind = PJ_ANY; c->proj[i][0].n = 0;
        for (Py_ssize_t l = 0; l < nl; l++) {
            int kind, n;
            if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(ls, l), "ii", &kind, &n)) { Py_DECREF(ls); Py_DECREF(s); return -1; }
            if (kind < PJ_IDENTITY || kind > PJ_MIME_CLASS || n < 0 || n > MAXPREFIX) {
                Py_DECREF(ls); Py_DECREF(s); PyErr_SetString(PyExc_ValueError, "unknown projection"); return -1;
            }
            c->proj[i][l + 1].kind = (uint8_t)kind; c->proj[i][l + 1].n = (uint8_t)n;
        }
        Py_DECREF(ls);
        c->revisit[i].n = 0;
        c->resolved[i] = revisit != Py_None;
        if (c->resolved[i]) {
            Py_ssize_t rn;
            const char *r = utf8(revisit, &rn);
            if (!r || buf_put(&c->revisit[i], r, rn) < 0) { Py_DECREF(s); return -1; }
        }
    }
    Py_DECREF(s);
    return 0;
}

/* a value's field under projection p, appended to b (profiler.model.criteria.project) */
static int put_field(Buf *b, const char *v, Py_ssize_t n, Proj p) {
    switch (p.kind) {
    case PJ_ANY: return buf_putc(b, '-');
    case PJ_PREFIX: {        /* the first n characters, as Python's str slice: UTF-8 characters, not bytes (a
                              * plugin's value 'éab' is 'éa' at a prefix of 2, never a cut character) */
        Py_ssize_t k = 0;
        for (int chars = 0; k < n; k++)
            if (((unsigned char)v[k] & 0xC0) != 0x80 && chars++ == p.n) break;
        return buf_put(b, v, k);
    }
    case PJ_CATEGORY: {      /* 'text/html' -> 'text/' + '*'; without '/' (or at 0) unchanged */
        const char *slash = n ? memchr(v, '/', n) : NULL;
        if (slash && slash > v) return (buf_put(b, v, slash - v) < 0 || buf_put(b, "/*", 2) < 0) ? -1 : 0;
        return buf_put(b, v, n);
    }
    case PJ_CLASS:           /* '200' -> '2xx'; 'unk' and anything else -> 'unk'; '' stays '' */
        if (n == 0) return 0;
        if (v[0] >= '1' && v[0] <= '5' && !(n == 3 && memcmp(v, "unk", 3) == 0)) {
            char cls[3] = {v[0], 'x', 'x'};
            return buf_put(b, cls, 3);
        }
        return buf_put(b, "unk", 3);
    case PJ_MIME_CLASS: {    /* 'image/png' -> 'image'; '' stays '' */
        if (n == 0) return 0;
        const char *cls = mime_class(v, n);
        return buf_put(b, cls, (Py_ssize_t)strlen(cls));
    }
    default: return buf_put(b, v, n);
    }
}

/* the key suffix of values v under the combination of level codes c */
static int put_suffix(Buf *b, const Crit *cr, const char *const *v, const Py_ssize_t *vn, const uint8_t *c) {
    for (int i = 0; i < cr->k; i++)
        if ((i && buf_putc(b, ' ') < 0) || put_field(b, v[i], vn[i], cr->proj[i][c[i]]) < 0) return -1;
    return 0;
}

/* k values as a key of a Map: each its 4-byte length and bytes */
static int put_values(Buf *b, int k, const char *const *v, const Py_ssize_t *vn) {
    for (int i = 0; i < k; i++)
        if (buf_put_u32(b, (uint32_t)vn[i]) < 0 || buf_put(b, v[i], vn[i]) < 0) return -1;
    return 0;
}

/* the k values of a key put_values wrote; returns where the key goes on after them */
static const char *get_values(const char *key, int k, const char **v, Py_ssize_t *vn) {
    for (int i = 0; i < k; i++) {
        uint32_t n;
        memcpy(&n, key, 4);
        vn[i] = n; v[i] = key + 4;
        key += 4 + n;
    }
    return key;
}

/* the names of the projections and value sources the extension knows (profiler.job.kernels) */
static PyObject *names_tuple(const char *const *names, int n) {
    PyObject *t = PyTuple_New(n);
    if (!t) return NULL;
    for (int i = 0; i < n; i++) {
        PyObject *s = PyUnicode_FromString(names[i]);
        if (!s) { Py_DECREF(t); return NULL; }
        PyTuple_SET_ITEM(t, i, s);
    }
    return t;
}
