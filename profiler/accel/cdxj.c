/* ------------------------------------------------------------------ CDXJ JSON blocks (profiler.formats.cdxj)
 *
 * The JSON block of a CDXJ line read as profiler.jsonnum.loads (orjson) reads it, for the common case
 * only: an object whose values the profile needs are strings of printable ASCII without escapes, or
 * null. Every other value is checked as JSON and skipped. What this reader is not sure orjson reads
 * alike is left to Python: a run of 19 digits (jsonnum then reads the block with the standard
 * library), a number with an exponent (it may be infinite), a \u escape of a surrogate, nesting past
 * CJ_DEPTH, a needed key twice or escaped, a needed value of another kind, and whatever is not JSON. */

#define CJ_DEPTH 64

/* the keys profiler.formats.cdxj reads besides the URL ones (the compiled parser takes only SURT urlkeys) */
enum { CJ_MIME, CJ_MIME_TYPE, CJ_MIMETYPE, CJ_STATUS, CJ_STATUS_CODE, CJ_STATUSCODE, CJ_DIGEST, CJ_PAYLOAD_DIGEST,
       CJ_LENGTH, CJ_LANGUAGES, CJ_LANG, CJ_FILENAME, NCJ };
static const char *const CJ_KEYS[NCJ] = {"mime", "mime_type", "mimetype", "status", "status_code", "statuscode",
                                         "digest", "payload_digest", "length", "languages", "lang", "filename"};
static const uint8_t CJ_KEY_LEN[NCJ] = {4, 9, 8, 6, 11, 10, 6, 14, 6, 9, 4, 8};

/* the needed values of one block: s[i] NULL when key i is absent or null */
typedef struct { const char *s[NCJ]; Py_ssize_t n[NCJ]; } CJFields;

/* JSON white space (RFC 8259): space, tab, line feed, carriage return */
static inline const char *cj_ws(const char *p, const char *e) {
    while (p < e && (unsigned char)*p <= ' ' && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    return p;
}

/* whether s[0:n] holds 19 digits in a row (profiler.jsonnum leaves such text to the standard library);
 * 16 bytes a step (SSE2), runs carried across steps */
static int cj_long_digits(const char *s, Py_ssize_t n) {
    Py_ssize_t i = 0, run = 0;
#if defined(__SSE2__)
    const __m128i below = _mm_set1_epi8('0' - 1), above = _mm_set1_epi8('9' + 1);
    for (; i + 16 <= n; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(s + i));
        unsigned m = (unsigned)_mm_movemask_epi8(_mm_and_si128(_mm_cmpgt_epi8(v, below), _mm_cmplt_epi8(v, above)));
        if (m == 0xFFFF) {
            if ((run += 16) >= 19) return 1;
            continue;
        }
        unsigned not_digit = ~m & 0xFFFF;
        if (run + __builtin_ctz(not_digit) >= 19) return 1;    /* the run from before, and this step's first digits */
        run = __builtin_clz(not_digit) - 16;                   /* the digits this step ends with */
    }
#endif
    for (; i < n; i++) {
        run = (s[i] >= '0' && s[i] <= '9') ? run + 1 : 0;
        if (run >= 19) return 1;
    }
    return 0;
}

/* the length of the valid UTF-8 sequence (RFC 3629: no overlong forms, surrogates or code points past
 * U+10FFFF) of 2 to 4 bytes at p, or 0 */
static Py_ssize_t cj_utf8(const unsigned char *p, const unsigned char *e) {
    unsigned char c = p[0];
    Py_ssize_t k;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) k = 2;
    else if (c >= 0xE0 && c <= 0xEF) { k = 3; if (c == 0xE0) lo = 0xA0; else if (c == 0xED) hi = 0x9F; }
    else if (c >= 0xF0 && c <= 0xF4) { k = 4; if (c == 0xF0) lo = 0x90; else if (c == 0xF4) hi = 0x8F; }
    else return 0;
    if (e - p < k || p[1] < lo || p[1] > hi) return 0;
    for (Py_ssize_t i = 2; i < k; i++) if (p[i] < 0x80 || p[i] > 0xBF) return 0;
    return k;
}

static inline int cj_hex(char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* the rest of a JSON string from p (after its opening quote): where it ends (after the closing quote),
 * or NULL (not JSON, or a \u escape of a surrogate); *plain: 0 when it holds escapes or non-ASCII */
static const char *cj_string(const char *p, const char *e, int *plain) {
    *plain = 1;
    for (;;) {
        p = json_ascii_end(p, e);
        if (p >= e) return NULL;
        unsigned char c = (unsigned char)*p;
        if (c == '"') return p + 1;
        if (c < 0x20) return NULL;
        *plain = 0;
        if (c == '\\') {
            if (e - p < 2) return NULL;
            switch (p[1]) {
            case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
                p += 2;
                continue;
            case 'u': {
                if (e - p < 6) return NULL;
                int v = 0;
                for (int i = 2; i < 6; i++) {
                    int h = cj_hex(p[i]);
                    if (h < 0) return NULL;
                    v = v * 16 + h;
                }
                if (v >= 0xD800 && v <= 0xDFFF) return NULL;
                p += 6;
                continue;
            }
            default: return NULL;
            }
        }
        Py_ssize_t k = cj_utf8((const unsigned char *)p, (const unsigned char *)e);
        if (!k) return NULL;
        p += k;
    }
}

/* a JSON number without exponent at p: its end, or NULL */
static const char *cj_number(const char *p, const char *e) {
    if (p < e && *p == '-') p++;
    if (p >= e || *p < '0' || *p > '9') return NULL;
    if (*p == '0') p++;
    else while (p < e && *p >= '0' && *p <= '9') p++;
    if (p < e && *p == '.') {
        const char *d = ++p;
        while (p < e && *p >= '0' && *p <= '9') p++;
        if (p == d) return NULL;
    }
    if (p < e && (*p == 'e' || *p == 'E')) return NULL;
    return p;
}

/* the literal word w (n bytes) at p: its end, or NULL */
static inline const char *cj_word(const char *p, const char *e, const char *w, Py_ssize_t n) {
    return e - p >= n && memcmp(p, w, n) == 0 ? p + n : NULL;
}

static const char *cj_skip(const char *p, const char *e, int depth);

/* the object or array at p (depth: its nesting), checked: its end, or NULL */
static const char *cj_nested(const char *p, const char *e, int depth) {
    char close = *p == '{' ? '}' : ']';
    int plain;
    p = cj_ws(p + 1, e);
    if (p < e && *p == close) return p + 1;
    for (;;) {
        if (close == '}') {
            if (p >= e || *p != '"' || !(p = cj_string(p + 1, e, &plain))) return NULL;
            p = cj_ws(p, e);
            if (p >= e || *p != ':') return NULL;
            p = cj_ws(p + 1, e);
        }
        if (!(p = cj_skip(p, e, depth))) return NULL;
        p = cj_ws(p, e);
        if (p >= e) return NULL;
        if (*p == close) return p + 1;
        if (*p != ',') return NULL;
        p = cj_ws(p + 1, e);
    }
}

/* the JSON value at p, checked and skipped: its end, or NULL */
static const char *cj_skip(const char *p, const char *e, int depth) {
    int plain;
    if (p >= e) return NULL;
    switch (*p) {
    case '"': return cj_string(p + 1, e, &plain);
    case '{': case '[': return depth < CJ_DEPTH ? cj_nested(p, e, depth + 1) : NULL;
    case 't': return cj_word(p, e, "true", 4);
    case 'f': return cj_word(p, e, "false", 5);
    case 'n': return cj_word(p, e, "null", 4);
    default: return cj_number(p, e);
    }
}

/* the needed key (CJ_*) spelt by k[0:n], or -1 */
static inline int cj_key(const char *k, Py_ssize_t n) {
    if (n < 4 || n > 14 || (k[0] != 'm' && k[0] != 's' && k[0] != 'd' && k[0] != 'p' && k[0] != 'l' && k[0] != 'f'))
        return -1;                                              /* no needed key has that length or start */
    for (int i = 0; i < NCJ; i++)
        if (CJ_KEY_LEN[i] == n && CJ_KEYS[i][0] == k[0] && memcmp(CJ_KEYS[i], k, n) == 0) return i;
    return -1;
}

/* the block p[0:e], a JSON object, read: the values of the keys in mask (bits by CJ_*) into f. 0, or
 * 1 when Python must read it */
static int cj_object(const char *p, const char *e, unsigned mask, CJFields *f) {
    unsigned seen = 0;
    int plain;
    for (int i = 0; i < NCJ; i++) { f->s[i] = NULL; f->n[i] = 0; }
    p = cj_ws(p, e);
    if (p >= e || *p != '{') return 1;
    p = cj_ws(p + 1, e);
    if (p < e && *p == '}') return cj_ws(p + 1, e) != e;
    for (;;) {
        if (p >= e || *p != '"') return 1;
        const char *k = p + 1, *q = cj_string(k, e, &plain);
        if (!q) return 1;
        Py_ssize_t kn = q - 1 - k;
        if (!plain && memchr(k, '\\', kn)) return 1;           /* an escaped key may spell a needed one */
        int i = plain ? cj_key(k, kn) : -1;
        p = cj_ws(q, e);
        if (p >= e || *p != ':') return 1;
        p = cj_ws(p + 1, e);
        if (i >= 0 && (mask >> i & 1)) {
            if (seen >> i & 1) return 1;                       /* twice: the dict keeps the last one */
            seen |= 1u << i;
            if (p < e && *p == '"') {
                const char *v = p + 1;
                if (!(q = cj_string(v, e, &plain)) || !plain) return 1;
                f->s[i] = v; f->n[i] = q - 1 - v;
                p = q;
            } else if (!(p = cj_word(p, e, "null", 4))) return 1;
        } else if (!(p = cj_skip(p, e, 1))) return 1;
        p = cj_ws(p, e);
        if (p >= e) return 1;
        if (*p == '}') return cj_ws(p + 1, e) != e;
        if (*p != ',') return 1;
        p = cj_ws(p + 1, e);
    }
}

/* the value of the first of keys i and j that is present and not null (NULL: neither) */
static inline const char *cj_first(const CJFields *f, int i, int j, Py_ssize_t *n) {
    int k = f->s[i] ? i : j;
    *n = f->n[k];
    return f->s[k];
}

/* the value of the first of keys i, j and k that is present and not null (NULL: none) */
static inline const char *cj_first3(const CJFields *f, int i, int j, int k, Py_ssize_t *n) {
    return f->s[i] || f->s[j] ? cj_first(f, i, j, n) : cj_first(f, k, k, n);
}
