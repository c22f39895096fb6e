/* JSON as the map side writes it (no spaces): a string without escapes and of ASCII only, or an
 * integer of at most 18 digits. 0 read (*at moves past it), 1 anything else */

/* the first byte of p[0:e] that a plain string run stops at ('"', '\\', a control byte, a byte past
 * ASCII), or e; 16 bytes a step (SSE2) */
static inline const char *json_ascii_end(const char *p, const char *e) {
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'), space = _mm_set1_epi8(0x20);
    for (; e - p >= 16; p += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)p);
        __m128i m = _mm_or_si128(_mm_cmplt_epi8(v, space),     /* signed: control bytes and 0x80-0xff */
                                 _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)));
        int mask = _mm_movemask_epi8(m);
        if (mask) return p + __builtin_ctz(mask);
    }
#endif
    while (p < e && (unsigned char)*p >= 0x20 && (unsigned char)*p < 0x80 && *p != '"' && *p != '\\') p++;
    return p;
}

static int json_plain_str(const char **at, const char *end, const char **s, Py_ssize_t *n) {
    const char *p = *at;
    if (p >= end || *p != '"') return 1;
    const char *q = json_ascii_end(++p, end);
    if (q >= end || *q != '"') return 1;
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
    /* 8 bytes a step (a word's bytes below 0x20, or equal to '"' or '\\': exact as to whether any is) */
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    for (; j + 8 <= n; j += 8) {
        uint64_t v, q, b;
        memcpy(&v, s + j, 8);
        q = v ^ (ones * '"'); b = v ^ (ones * '\\');
        if ((((v - ones * 0x20) & ~v) | ((q - ones) & ~q) | ((b - ones) & ~b)) & highs) break;
    }
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

/* a TS as its JSON string (digits, "" or "~": nothing to escape) */
static int json_ts(Buf *b, const TS *t) {
    char s[TSDIGITS + 1];
    Py_ssize_t n = ts_str(t, s);
    if (buf_reserve(b, n + 2) < 0) return -1;
    b->p[b->n++] = '"';
    memcpy(b->p + b->n, s, n); b->n += n;
    b->p[b->n++] = '"';
    return 0;
}

static int json_int(Buf *b, int64_t v) {
    char t[24];
    int n = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do { t[sizeof t - 1 - n++] = (char)('0' + u % 10); u /= 10; } while (u);
    if (v < 0) t[sizeof t - 1 - n++] = '-';
    return buf_put(b, t + sizeof t - n, n);
}

