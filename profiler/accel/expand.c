/* ------------------------------------------------------------------ Expander */

typedef struct {   /* one resolved tuple of the current URI-R: a value per criterion */
    const char *v[MAXC]; Py_ssize_t vn[MAXC];
    int64_t count, bytes, dash;
    TS first, last;
    Py_ssize_t dig_head;      /* linked list of (digest id, max_len) in the dg arrays */
    Py_ssize_t tid;           /* its id in tidmap */
    Rec rec;
} Tup;

typedef struct {   /* one merged cell: a value per criterion, digest, revisit */
    const char *v[MAXC], *d; Py_ssize_t vn[MAXC], dn; int rev;
    int64_t count, bytes, maxlen; TS first, last;
} Cell;

typedef struct {   /* SURT levels: combination set and key of each (is_host: the host level) */
    int n, cap;
    int *set, *is_host; Py_ssize_t *off, *len; Buf keys;
} Levels;

typedef struct { int64_t n, total, largest; } KeyAcc;   /* a shared digest under one key */

/* the records of one level key (root, a TLD, a domain) over consecutive hosts, added to the table
 * when the key changes: sfx (a pair id: suffix and set) -> multi-tuple URI-Rs' exact records, tup
 * (tuple id * nsets + set) -> single-tuple URI-Rs' records rolled up by tuple (expanded then) */
typedef struct { Buf key; int used; IdRecs sfx, tup; } LevelAcc;

typedef struct {
    PyObject_HEAD
    int nsets;
    Crit crit;                 /* the policy's criteria */
    int *ncombos;              /* per set */
    uint8_t (**combos)[MAXC];  /* per set: ncombos[i] combinations of level codes, one per criterion */
    int set_of[NLEVELS];       /* the combination set of each SURT level (LV_*) */
    PyObject *registered;      /* host -> its registered domain's labels or None (keys.registered_labels), or NULL: by count */
    Map regmap; int *reg_labels; Py_ssize_t reg_cap;   /* hosts asked, and their answers */
    int host_depth, path_depth, exact_urls;
    Py_ssize_t limit;
    RecMap table;              /* profile key -> record (flushed at limit) */
    IdRecs host_tuples;        /* tuple id -> single-tuple URI-Rs' records of the open host */
    IdRecs host_suffix;        /* pair id (suffix and set) -> multi-tuple URI-Rs' exact records */
    LevelAcc *acc; int nacc;   /* per position of the open host's levels above the host */
    int have_group, host_none;
    Buf host;
    Levels grp;                /* root, TLD, domain and host levels of the open host */
    Levels own;                /* path and URL levels of the current URI-R */
    /* scratch of one URI-R */
    Map cellmap; Cell *cells; Py_ssize_t ccap;
    StampIndex tupix; Tup *tups; Py_ssize_t tcap;   /* tuple id -> the URI-R's tuple */
    Map digmap; int64_t *dmax; uint64_t *dstamp; Py_ssize_t dcap; uint64_t stamp;
    Py_ssize_t *dhead, dhcap;  /* per digest id: its latest entry (chained by dg_dnext) */
    /* entries (tuple, digest, max_len): chained per tuple (dg_next) and per digest (dg_dnext) */
    Py_ssize_t *dg_did, *dg_next, *dg_t, *dg_dnext; int64_t *dg_ml; Py_ssize_t dgn, dgcap;
    Map origmap; Py_ssize_t *orig_cell; Py_ssize_t ocap;
    /* suffixes by id: tidmap (tuple key -> id), sfxmap (suffix -> id), pairmap ((suffix id, set) ->
     * pair id: the ids of host_suffix and the accumulators, dense, so that their indices stay small),
     * pair_sid and pair_set (a pair's suffix id and set), memo[tid * ctot + cofs[set] + combination]
     * (pair id or -1, rows for memo_rows tuples); forgotten between hosts when large */
    Map tidmap, sfxmap, pairmap; int32_t *memo; Py_ssize_t memo_cap, memo_rows, id_limit; int ctot, *cofs;
    int32_t *pair_sid, *pair_set; Py_ssize_t pair_cap;
    StampIndex pj;             /* projection groups of one set: suffix id -> group */
    Py_ssize_t *pj_head, *pj_last, *pj_pid, pjcap, npg; Py_ssize_t *pe_t, *pe_next, pecap, pen;
    uint64_t *pj_mask; Py_ssize_t pjmcap;       /* a group's tuples as bits (URI-Rs of <= 64 tuples) */
    struct MaskRec *mrec; uint32_t mrec_gen; int mrec_n;   /* the URI-R's group records by bits */
    Py_ssize_t *dr_start, drcap; Py_ssize_t *de_t, *de_d, decap;   /* digest records' entries */
    /* step 2 (correct()): one shared digest's profile keys, see profiler.job.digests */
    Levels clev;               /* levels of the URI-R being added */
    Map cmine; int64_t *cmine_ml; Py_ssize_t cmine_cap;         /* key -> the URI-R's largest length */
    Map ckey; KeyAcc *ck; Py_ssize_t ck_cap;                    /* key -> URI-Rs, sum, largest */
    Buf kb, sb;
    /* raw mode: digest record lines held back, written in byte order a run (1 MiB, or limit lines)
     * at a time: the sort between steps 1 and 2 takes half the time over sorted runs */
    Buf drun; Py_ssize_t *drun_off, drun_cap, ndrun;
    PyObject *out;             /* list of output pairs of the current call */
    int raw_mode; Buf raw;     /* or: output lines of the current call (add_raw, close_raw) */
    Filter shared;             /* digests of two or more map records (profiler.runtime.digestfilter), if known */
    long long held_back;       /* digest records not written: the filter has their digest in one record */
} Expander;

/* one output record prefix+k with JSON value js: a (key, value) pair of bytes appended to x->out,
 * or in raw mode the line "key<TAB>value\n" appended to x->raw */
static int emit(Expander *x, const char *prefix, Py_ssize_t pn, const char *k, Py_ssize_t kn,
                const char *js, Py_ssize_t jn) {
    if (x->raw_mode) {
        Buf *b = &x->raw;
        if (buf_reserve(b, pn + kn + jn + 2) < 0) return -1;
        memcpy(b->p + b->n, prefix, pn); b->n += pn;
        memcpy(b->p + b->n, k, kn); b->n += kn;
        b->p[b->n++] = '\t';
        memcpy(b->p + b->n, js, jn); b->n += jn;
        b->p[b->n++] = '\n';
        return 0;
    }
    PyObject *key = PyBytes_FromStringAndSize(NULL, pn + kn);
    if (!key) return -1;
    memcpy(PyBytes_AS_STRING(key), prefix, pn);
    memcpy(PyBytes_AS_STRING(key) + pn, k, kn);
    PyObject *value = PyBytes_FromStringAndSize(js, jn);
    if (!value) { Py_DECREF(key); return -1; }
    PyObject *pair = PyTuple_Pack(2, key, value);
    Py_DECREF(key); Py_DECREF(value);
    if (!pair) return -1;
    int r = PyList_Append(x->out, pair);
    Py_DECREF(pair);
    return r;
}

static int json_str(Buf *b, const char *s, Py_ssize_t n);
static int json_int(Buf *b, int64_t v);

/* a record as the JSON text orjson gives its list, in x->sb */
static int rec_json(Buf *b, const Rec *r);
static int rec_to_json(Expander *x, const Rec *r) {
    x->sb.n = 0;
    return rec_json(&x->sb, r);
}

/* a stats record as the JSON text orjson gives its list, appended to b */
static int rec_json(Buf *b, const Rec *r) {
    if (buf_putc(b, '[') < 0 || json_int(b, r->total) < 0 || buf_putc(b, ',') < 0 || json_int(b, r->min) < 0
        || buf_putc(b, ',') < 0 || json_int(b, r->max) < 0 || buf_putc(b, ',') < 0 || json_int(b, r->urir) < 0
        || buf_putc(b, ',') < 0 || json_int(b, r->bytes) < 0 || buf_putc(b, ',') < 0
        || json_int(b, r->digests) < 0 || buf_putc(b, ',') < 0 || json_int(b, r->dedup) < 0
        || buf_putc(b, ',') < 0 || json_ts(b, &r->first) < 0 || buf_putc(b, ',') < 0
        || json_ts(b, &r->last) < 0 || buf_putc(b, ']') < 0) return -1;
    return 0;
}

static int sort_lines_from(Buf *b, Py_ssize_t from);

/* the table's key records, and an empty table; as lines they are in byte order (one sorted run
 * of the output, which the local runner merges instead of sorting: profiler.runtime.presorted) */
static int flush_table(Expander *x) {
    Map *m = &x->table.m;
    Py_ssize_t before = x->raw.n;
    for (Py_ssize_t i = 0; i < m->n; i++)
        if (rec_to_json(x, &x->table.recs[i]) < 0
            || emit(x, "K ", 2, map_key(m, i), m->ents[i].len, x->sb.p, x->sb.n) < 0) return -1;
    map_clear(m);
    return x->raw_mode ? sort_lines_from(&x->raw, before) : 0;
}

/* table[key + ' ' + suffix] += r for every distinct suffix of the tuple of values v in set idx */
static int expand_tuple(Expander *x, const char *key, Py_ssize_t kn, const char *const *v, const Py_ssize_t *vn,
                        int idx, const Rec *r) {
    Buf *b = &x->kb;
    int nc = x->ncombos[idx];
    Py_ssize_t starts[MAXCOMBOS], lens[MAXCOMBOS];
    int seen = 0;
    for (int c = 0; c < nc; c++) {
        b->n = 0;
        if (buf_put(b, key, kn) < 0 || buf_putc(b, ' ') < 0) return -1;
        if (put_suffix(b, &x->crit, v, vn, x->combos[idx][c]) < 0) return -1;
        /* dedupe: two combinations may give one suffix ('unk', a mime without '/') */
        Py_ssize_t sl = b->n - kn - 1;
        int dup = 0;
        for (int j = 0; j < seen && !dup; j++)
            dup = lens[j] == sl && memcmp(x->sb.p + starts[j], b->p + kn + 1, sl) == 0;
        if (dup) continue;
        if (seen < MAXCOMBOS) {
            if (seen == 0) x->sb.n = 0;
            starts[seen] = x->sb.n; lens[seen] = sl;
            if (buf_put(&x->sb, b->p + kn + 1, sl) < 0) return -1;
            seen++;
        }
        if (recmap_add(&x->table, b->p, b->n, r) < 0) return -1;
    }
    return 0;
}

/* table[key + ' ' + suffix sid] += r */
static int add_keyed(Expander *x, const char *key, Py_ssize_t kn, uint32_t sid, const Rec *r) {
    Buf *b = &x->kb;
    b->n = 0;
    return (buf_put(b, key, kn) < 0 || buf_putc(b, ' ') < 0
            || buf_put(b, map_key(&x->sfxmap, sid), x->sfxmap.ents[sid].len) < 0
            || recmap_add(&x->table, b->p, b->n, r) < 0) ? -1 : 0;
}

/* table[key + ' ' + suffix] += r for every distinct suffix of tuple tid in set idx */
static int expand_tid(Expander *x, const char *key, Py_ssize_t kn, int64_t tid, int idx, const Rec *r) {
    const char *v[MAXC];
    Py_ssize_t vn[MAXC];
    get_values(map_key(&x->tidmap, tid), x->crit.k, v, vn);
    return expand_tuple(x, key, kn, v, vn, idx, r);
}

/* the accumulated records of one level key into the table */
static int acc_flush(Expander *x, LevelAcc *a) {
    const char *key = a->key.p;
    Py_ssize_t kn = a->key.n;
    for (Py_ssize_t i = 0; i < a->sfx.n; i++)
        if (add_keyed(x, key, kn, (uint32_t)x->pair_sid[a->sfx.ids[i]], &a->sfx.recs[i]) < 0) return -1;
    idrecs_clear(&a->sfx);
    for (Py_ssize_t i = 0; i < a->tup.n; i++) {
        int64_t id = a->tup.ids[i];
        if (expand_tid(x, key, kn, id / x->nsets, (int)(id % x->nsets), &a->tup.recs[i]) < 0) return -1;
    }
    idrecs_clear(&a->tup);
    return 0;
}

static int acc_flush_all(Expander *x) {
    for (int g = 0; g < x->nacc; g++)
        if (acc_flush(x, &x->acc[g]) < 0) return -1;
    return 0;
}

/* the accumulator of position g, holding level key (key, kn): a different key's records are
 * added to the table first */
static LevelAcc *acc_for(Expander *x, int g, const char *key, Py_ssize_t kn) {
    if (g >= x->nacc) {
        if (resize((void **)&x->acc, g + 1, sizeof(LevelAcc)) < 0) return NULL;
        for (int i = x->nacc; i <= g; i++) {
            LevelAcc *a = &x->acc[i];
            memset(a, 0, sizeof *a);
            x->nacc = i + 1;
        }
    }
    LevelAcc *a = &x->acc[g];
    if (a->used && a->key.n == kn && memcmp(a->key.p, key, kn) == 0) return a;
    if (acc_flush(x, a) < 0) return NULL;
    a->key.n = 0;
    if (buf_put(&a->key, key, kn) < 0) return NULL;
    a->used = 1;
    return a;
}

/* the finished host's records -> its host key (expanded), TLD/domain/root accumulators */
static int close_group(Expander *x) {
    if (!x->have_group) return 0;
    x->have_group = 0;
    IdRecs *hs = &x->host_suffix, *ht = &x->host_tuples;
    int ns = x->nsets;
    for (int g = 0; g < x->grp.n; g++) {
        const char *key = x->grp.keys.p + x->grp.off[g];
        Py_ssize_t kn = x->grp.len[g];
        int idx = x->grp.set[g];
        if (x->grp.is_host[g]) {
            for (Py_ssize_t i = 0; i < hs->n; i++)
                if (x->pair_set[hs->ids[i]] == idx
                    && add_keyed(x, key, kn, (uint32_t)x->pair_sid[hs->ids[i]], &hs->recs[i]) < 0)
                    return -1;
            if (x->ncombos[idx] == 0) continue;
            for (Py_ssize_t i = 0; i < ht->n; i++)
                if (expand_tid(x, key, kn, ht->ids[i], idx, &ht->recs[i]) < 0) return -1;
            continue;
        }
        LevelAcc *a = acc_for(x, g, key, kn);
        if (!a) return -1;
        for (Py_ssize_t i = 0; i < hs->n; i++)
            if (x->pair_set[hs->ids[i]] == idx && idrecs_add(&a->sfx, hs->ids[i], &hs->recs[i]) < 0) return -1;
        if (x->ncombos[idx] > 0)
            for (Py_ssize_t i = 0; i < ht->n; i++)
                if (idrecs_add(&a->tup, ht->ids[i] * ns + idx, &ht->recs[i]) < 0) return -1;
        if (a->sfx.n + a->tup.n >= x->limit && acc_flush(x, a) < 0) return -1;
    }
    idrecs_clear(hs);
    idrecs_clear(ht);
    if (x->sfxmap.n > x->id_limit || x->tidmap.n > x->id_limit || x->pairmap.n > x->id_limit) {
        /* bounded: ids start again */
        if (acc_flush_all(x) < 0) return -1;
        map_clear(&x->sfxmap);
        map_clear(&x->pairmap);
        map_clear(&x->tidmap);
        x->memo_rows = 0;
    }
    return 0;
}

static void levels_free(Levels *L) {
    PyMem_Free(L->set); PyMem_Free(L->is_host); PyMem_Free(L->off); PyMem_Free(L->len); buf_free(&L->keys);
    memset(L, 0, sizeof *L);
}

/* append the level a + b (a key in two parts) of combination set idx */
static int levels_add(Levels *L, int idx, int is_host, const char *a, Py_ssize_t an, const char *b, Py_ssize_t bn) {
    if (L->n == L->cap) {
        int cap = L->cap ? L->cap * 2 : 8;
        if (resize((void **)&L->set, cap, sizeof(int)) < 0 || resize((void **)&L->is_host, cap, sizeof(int)) < 0
            || resize((void **)&L->off, cap, sizeof(Py_ssize_t)) < 0
            || resize((void **)&L->len, cap, sizeof(Py_ssize_t)) < 0) return -1;
        L->cap = cap;
    }
    int g = L->n++;
    L->set[g] = idx;
    L->is_host[g] = is_host;
    L->off[g] = L->keys.n;
    if (buf_put(&L->keys, a, an) < 0 || buf_put(&L->keys, b, bn) < 0) return -1;
    L->len[g] = an + bn;
    return 0;
}

/* the labels of a host's registered domain (keys.registered_labels): -1 when the policy counts
 * labels or the host has none, -2 on an error; Python is asked once per host (REG_HOSTS at a time) */
#define REG_HOSTS 65536
static int host_registered(Expander *x, const char *host, Py_ssize_t hn) {
    if (!x->registered) return -1;
    Py_ssize_t known = map_find(&x->regmap, host, hn);
    if (known >= 0) return x->reg_labels[known];
    PyObject *text = PyUnicode_DecodeUTF8(host, hn, "surrogateescape");
    if (!text) return -2;
    PyObject *r = PyObject_CallOneArg(x->registered, text);
    Py_DECREF(text);
    if (!r) return -2;
    long v = r == Py_None ? -1 : PyLong_AsLong(r);
    Py_DECREF(r);
    if (v == -1 && PyErr_Occurred()) return -2;
    if (v < -1 || v > INT_MAX) v = -1;
    if (x->regmap.n >= REG_HOSTS) map_clear(&x->regmap);
    int added;
    Py_ssize_t i = map_find_or_add(&x->regmap, host, hn, &added);
    if (i < 0 || grow((void **)&x->reg_labels, &x->reg_cap, i + 1, sizeof(int)) < 0) return -2;
    x->reg_labels[i] = (int)v;
    return (int)v;
}

/* whether a host of these labels gets its full-host key (keys.has_host_line) */
static inline int has_host_line(const Expander *x, Py_ssize_t labels, int registered) {
    return registered > 0 || labels <= x->host_depth;
}

/* keys.group_levels(host), appended to L: root, the host-label wildcards (keys.label_level), host */
static int group_level_keys(Expander *x, Levels *L, const char *host, Py_ssize_t hn, int none) {
    if (levels_add(L, x->set_of[LV_ROOT], 0, "*", 1, "", 0) < 0) return -1;
    if (none) return 0;
    Py_ssize_t labels = 1;
    for (Py_ssize_t i = 0; i < hn; i++) labels += host[i] == ',';
    int reg = host_registered(x, host, hn);
    if (reg == -2) return -1;
    Py_ssize_t upto = reg > 0 ? labels - 1 : x->registered ? (labels - 1 < 1 ? labels - 1 : 1)
                      : (labels - 1 < x->host_depth ? labels - 1 : x->host_depth);
    Py_ssize_t k = 0;
    for (Py_ssize_t i = 0; i < hn && k < upto; i++) {
        if (host[i] == ',') {
            k++;
            int lv = k == 1 ? LV_TLD : reg < 0 ? LV_DOMAIN : k < reg ? LV_SUFFIX : k == reg ? LV_DOMAIN : LV_SUBDOMAIN;
            if (levels_add(L, x->set_of[lv], 0, host, i, ",*", 2) < 0) return -1;
        }
    }
    if (has_host_line(x, labels, reg) && levels_add(L, x->set_of[LV_HOST], 1, host, hn, ")/*", 3) < 0) return -1;
    return 0;
}

/* keys.exact_key(urlkey), appended to L: a trailing '*' is written '%2A', and a urlkey ending in
 * '%2A' (or '%252A', ...) gets one more '25' after that '%', so that no two urlkeys share a key */
static int exact_level_key(Expander *x, Levels *L, const char *u, Py_ssize_t un) {
    if (un > 0 && u[un - 1] == '*') return levels_add(L, x->set_of[LV_URL], 0, u, un - 1, "%2A", 3);
    if (un >= 3 && u[un - 1] == 'A' && u[un - 2] == '2') {
        Py_ssize_t i = un - 2;          /* u[i:] is "2A", then "252A", ... while it is preceded by "25" */
        while (i >= 3 && u[i - 1] == '5' && u[i - 2] == '2') i -= 2;
        if (i >= 1 && u[i - 1] == '%') {
            if (levels_add(L, x->set_of[LV_URL], 0, u, i, "25", 2) < 0 || buf_put(&L->keys, u + i, un - i) < 0)
                return -1;
            L->len[L->n - 1] += un - i;
            return 0;
        }
    }
    return levels_add(L, x->set_of[LV_URL], 0, u, un, "", 0);
}

/* keys.own_levels(urlkey), appended to L: path directories (under a host with a full-host key) and
 * the exact URL; hn: length of the host part, none: no ')' */
static int own_level_keys(Expander *x, Levels *L, const char *u, Py_ssize_t un, Py_ssize_t hn, int none) {
    if (!none && x->path_depth) {
        Py_ssize_t labels = 1;
        for (Py_ssize_t i = 0; i < hn; i++) labels += u[i] == ',';
        int reg = host_registered(x, u, hn);
        if (reg == -2) return -1;
        if (has_host_line(x, labels, reg)) {
            const char *path = u + hn + 1;
            Py_ssize_t pl = un - hn - 1;
            const char *q = memchr(path, '?', pl);
            if (q) pl = q - path;
            const char *h = memchr(path, '#', pl);
            if (h) pl = h - path;
            if (pl > 0 && path[0] == '/') {
                int depth = 0;
                for (Py_ssize_t i = 1; i < pl && depth < x->path_depth; i++) {
                    if (path[i] != '/') continue;
                    depth++;
                    if (levels_add(L, x->set_of[LV_PATH], 0, u, hn + 1 + i + 1, "*", 1) < 0) return -1;
                }
            }
        }
    }
    if (!x->exact_urls) return 0;
    return exact_level_key(x, L, u, un);
}

/* the levels of urlkey u, all of them (keys.surt_levels) or only its own, in L */
static int urlkey_levels(Expander *x, Levels *L, const char *u, Py_ssize_t un, int all) {
    const char *paren = memchr(u, ')', un);
    Py_ssize_t hn = paren ? paren - u : 0;
    L->n = 0; L->keys.n = 0;
    if (all && group_level_keys(x, L, u, hn, paren == NULL) < 0) return -1;
    return own_level_keys(x, L, u, un, hn, paren == NULL);
}

static int open_group(Expander *x, const char *host, Py_ssize_t hn, int none) {
    x->grp.n = 0; x->grp.keys.n = 0;
    x->host.n = 0;
    if (!none && buf_put(&x->host, host, hn) < 0) return -1;
    x->host_none = none;
    x->have_group = 1;
    return group_level_keys(x, &x->grp, host, hn, none);
}

/* record of one URI-R over the tuples of projection group g (project() takes a group of one tuple's
 * record as it is) */
static void group_record(Expander *x, Py_ssize_t g, Rec *out) {
    int64_t count = 0, bytes = 0, dash = 0, ndig = 0, dsum = 0;
    TS first = TS_FIRST, last = TS_LAST;
    uint64_t stamp = ++x->stamp;
    for (Py_ssize_t e = x->pj_head[g]; e >= 0; e = x->pe_next[e]) {
        Tup *t = &x->tups[x->pe_t[e]];
        count += t->count; bytes += t->bytes; dash += t->dash;
        if (ts_cmp(&t->first, &first) < 0) first = t->first;
        if (ts_cmp(&t->last, &last) > 0) last = t->last;
        for (Py_ssize_t d = t->dig_head; d >= 0; d = x->dg_next[d]) {
            Py_ssize_t did = x->dg_did[d];
            int64_t ml = x->dg_ml[d];
            if (x->dstamp[did] != stamp) { x->dstamp[did] = stamp; x->dmax[did] = ml; ndig++; dsum += ml; }
            else if (ml > x->dmax[did]) { dsum += ml - x->dmax[did]; x->dmax[did] = ml; }
        }
    }
    out->total = out->min = out->max = count; out->urir = 1; out->bytes = bytes;
    out->digests = ndig; out->dedup = dsum + dash; out->first = first; out->last = last;
}

/* Records of a URI-R's groups of several tuples by their tuples' bits: one set of tuples is the
 * group of many suffixes (every combination of 'any' or the year, for tuples of one year), and its
 * record is worked out once (on the synthetic 1M index 2.4M groups had 176,000 sets of tuples).
 * Emptied for each URI-R by a new generation; when full, records are worked out each time. */
#define MREC_SLOTS 256
struct MaskRec { uint64_t mask; uint32_t gen; Rec rec; };

static const Rec *mask_record(Expander *x, Py_ssize_t g, Rec *scratch) {
    uint64_t mask = x->pj_mask[g];
    if (!x->mrec) {
        if (!(x->mrec = PyMem_Calloc(MREC_SLOTS, sizeof(struct MaskRec)))) { group_record(x, g, scratch); return scratch; }
    }
    unsigned i = (unsigned)((mask * 0x9E3779B97F4A7C15ULL) >> 56) & (MREC_SLOTS - 1);
    for (int probes = 0; probes < MREC_SLOTS; probes++, i = (i + 1) & (MREC_SLOTS - 1)) {
        struct MaskRec *m = &x->mrec[i];
        if (m->gen == x->mrec_gen && m->mask == mask) return &m->rec;
        if (m->gen != x->mrec_gen) {
            if (x->mrec_n >= MREC_SLOTS / 2) break;
            x->mrec_n++;
            m->gen = x->mrec_gen; m->mask = mask;
            group_record(x, g, &m->rec);
            return &m->rec;
        }
    }
    group_record(x, g, scratch);
    return scratch;
}

/* a new URI-R: no group records yet */
static void mask_records_next(Expander *x) {
    x->mrec_n = 0;
    if (++x->mrec_gen == 0) {
        if (x->mrec) memset(x->mrec, 0, MREC_SLOTS * sizeof(struct MaskRec));
        x->mrec_gen = 1;
    }
}

/* the pair id of the suffix of tuple tp under combination c of set idx, and that set (memoised per
 * tuple) */
static Py_ssize_t pair_id(Expander *x, const Tup *tp, int idx, int c) {
    int32_t *slot = &x->memo[tp->tid * x->ctot + x->cofs[idx] + c];
    if (*slot >= 0) return *slot;
    Buf *b = &x->sb;
    b->n = 0;
    if (put_suffix(b, &x->crit, tp->v, tp->vn, x->combos[idx][c]) < 0) return -1;
    int added;
    Py_ssize_t sid = map_find_or_add(&x->sfxmap, b->p, b->n, &added);
    if (sid < 0) return -1;
    if (sid > INT32_MAX) { PyErr_SetString(PyExc_OverflowError, "too many suffixes"); return -1; }
    int32_t key[2] = {(int32_t)sid, idx};
    Py_ssize_t pid = map_find_or_add(&x->pairmap, (const char *)key, sizeof key, &added);
    if (pid < 0) return -1;
    if (pid > INT32_MAX) { PyErr_SetString(PyExc_OverflowError, "too many suffixes"); return -1; }
    if (added) {
        Py_ssize_t cap = x->pair_cap;
        if (grow2((void **)&x->pair_sid, sizeof(int32_t), (void **)&x->pair_set, sizeof(int32_t), &cap, pid + 1) < 0)
            return -1;
        x->pair_cap = cap;
        x->pair_sid[pid] = (int32_t)sid; x->pair_set[pid] = idx;
    }
    *slot = (int32_t)pid;
    return pid;
}

/* the URI-R's exact record of each suffix of set idx; added to table under key, or to
 * host_suffix (key NULL) */
static int project(Expander *x, Py_ssize_t ntup, int idx, const char *key, Py_ssize_t kn) {
    int nc = x->ncombos[idx];
    if (nc == 0) return 0;
    stamp_next(&x->pj);
    x->npg = 0;
    x->pen = 0;
    /* at most one group and one entry for each (tuple, combination): room for them all at once */
    Py_ssize_t most = ntup * nc, cap = x->pjcap;
    if (grow2((void **)&x->pj_head, sizeof(Py_ssize_t), (void **)&x->pj_last, sizeof(Py_ssize_t), &cap, most) < 0
        || grow((void **)&x->pj_pid, &x->pjcap, most, sizeof(Py_ssize_t)) < 0
        || grow((void **)&x->pj_mask, &x->pjmcap, most, sizeof(uint64_t)) < 0
        || grow2((void **)&x->pe_t, sizeof(Py_ssize_t), (void **)&x->pe_next, sizeof(Py_ssize_t), &x->pecap, most) < 0)
        return -1;
    Py_ssize_t *head = x->pj_head, *last = x->pj_last, *gpid = x->pj_pid, *pe_t = x->pe_t, *pe_next = x->pe_next;
    uint64_t *gmask = x->pj_mask;
    for (Py_ssize_t t = 0; t < ntup; t++) {
        Tup *tp = &x->tups[t];
        uint64_t bit = t < 64 ? (uint64_t)1 << t : 0;
        for (int c = 0; c < nc; c++) {
            Py_ssize_t pid = pair_id(x, tp, idx, c);
            if (pid < 0) return -1;
            Py_ssize_t g = stamp_get(&x->pj, pid);
            if (g < 0) {
                g = x->npg++;
                if (stamp_set(&x->pj, pid, g) < 0) return -1;
                head[g] = -1; last[g] = -1; gpid[g] = pid; gmask[g] = 0;
            } else if (pe_t[last[g]] == t) {
                continue;     /* the tuple is in the group already */
            }
            Py_ssize_t e = x->pen++;
            pe_t[e] = t; pe_next[e] = -1;
            if (last[g] < 0) head[g] = e; else pe_next[last[g]] = e;
            last[g] = e;
            gmask[g] |= bit;
        }
    }
    for (Py_ssize_t g = 0; g < x->npg; g++) {
        Rec scratch;
        const Rec *r = &scratch;
        Py_ssize_t e = x->pj_head[g];
        if (x->pe_next[e] < 0) r = &x->tups[x->pe_t[e]].rec;
        else if (ntup <= 64) r = mask_record(x, g, &scratch);
        else group_record(x, g, &scratch);
        Py_ssize_t pid = x->pj_pid[g];
        if (key) {
            if (add_keyed(x, key, kn, (uint32_t)x->pair_sid[pid], r) < 0) return -1;
        } else if (idrecs_add(&x->host_suffix, pid, r) < 0) return -1;
    }
    return 0;
}

#define DRUN_BYTES (1 << 20)
/* suffix and tuple ids held before they start again (the arrays indexed by them stay small) */
#define ID_LIMIT 32768

/* one cell of the current URI-R, merged with an equal (values, digest, revisit) one */
static int add_cell(Expander *x, const Cell *v) {
    Buf *b = &x->sb;
    b->n = 0;
    if (put_values(b, x->crit.k, v->v, v->vn) < 0 || buf_put_u32(b, (uint32_t)v->dn) < 0
        || buf_put(b, v->d, v->dn) < 0 || buf_putc(b, (char)v->rev) < 0) return -1;
    int added;
    Py_ssize_t i = map_find_or_add(&x->cellmap, b->p, b->n, &added);
    if (i < 0) return -1;
    if (added) {
        if (grow((void **)&x->cells, &x->ccap, i + 1, sizeof(Cell)) < 0) return -1;
        x->cells[i] = *v;
    } else {
        Cell *o = &x->cells[i];
        o->count += v->count; o->bytes += v->bytes;
        if (v->maxlen > o->maxlen) o->maxlen = v->maxlen;
        if (ts_cmp(&v->first, &o->first) < 0) o->first = v->first;
        if (ts_cmp(&v->last, &o->last) > 0) o->last = v->last;
    }
    return 0;
}

/* the cells of cell lists (Python objects: [[values..., digest, revisit, count, bytes, max_len, first,
 * last], ...], or of one capture [values..., digest, revisit, count, bytes, timestamp]; profiler.job.cells)
 * into the current URI-R */
static int add_cell_lists(Expander *x, PyObject *lists) {
    int k = x->crit.k;
    Py_ssize_t nl = PyList_GET_SIZE(lists);
    for (Py_ssize_t li = 0; li < nl; li++) {
        PyObject *cl = PyList_GET_ITEM(lists, li);
        if (!PyList_Check(cl)) { PyErr_SetString(PyExc_TypeError, "cell list expected"); return -1; }
        for (Py_ssize_t ci = 0; ci < PyList_GET_SIZE(cl); ci++) {
            PyObject *c = PyList_GET_ITEM(cl, ci);
            Py_ssize_t items = PyList_Check(c) ? PyList_GET_SIZE(c) : 0;
            int full = items == k + 7;
            if (!full && items != k + 5) {
                PyErr_Format(PyExc_TypeError, "cell of %d or %d items expected", k + 5, k + 7); return -1;
            }
            Cell v;
            const char *f, *l; Py_ssize_t fn, ln;
            for (int i = 0; i < k; i++)
                if (!(v.v[i] = utf8(PyList_GET_ITEM(c, i), &v.vn[i]))) return -1;
            if (!(v.d = utf8(PyList_GET_ITEM(c, k), &v.dn))
                || !(f = utf8(PyList_GET_ITEM(c, full ? k + 5 : k + 4), &fn))
                || !(l = utf8(PyList_GET_ITEM(c, full ? k + 6 : k + 4), &ln)))
                return -1;
            int rev = PyObject_IsTrue(PyList_GET_ITEM(c, k + 1));
            if (rev < 0) return -1;
            v.rev = rev;
            if (get_i64(PyList_GET_ITEM(c, k + 2), &v.count) < 0 || get_i64(PyList_GET_ITEM(c, k + 3), &v.bytes) < 0
                || get_i64(PyList_GET_ITEM(c, full ? k + 4 : k + 3), &v.maxlen) < 0) return -1;
            if (ts_set(&v.first, f, fn) < 0 || ts_set(&v.last, l, ln) < 0) return -1;
            if (add_cell(x, &v) < 0) return -1;
        }
    }
    return 0;
}

/* the cells of one cell list in JSON text (a reduce input line's value) into the current URI-R.
 * 0 added, 1 not in the map side's plain form (Python reads it), -1 error */
static int add_cell_json(Expander *x, const char *p, const char *end) {
    if (json_char(&p, end, '[')) return 1;
    if (p < end && *p == ']') return p + 1 == end ? 0 : 1;
    for (;;) {
        Cell v;
        const char *f, *l; Py_ssize_t fn, ln;
        int64_t rev;
        if (json_char(&p, end, '[')) return 1;
        for (int i = 0; i < x->crit.k; i++)
            if (json_plain_str(&p, end, &v.v[i], &v.vn[i]) || json_char(&p, end, ',')) return 1;
        if (json_plain_str(&p, end, &v.d, &v.dn) || json_char(&p, end, ',')
            || json_plain_int(&p, end, &rev) || (rev != 0 && rev != 1) || json_char(&p, end, ',')
            || json_plain_int(&p, end, &v.count) || json_char(&p, end, ',')
            || json_plain_int(&p, end, &v.bytes) || json_char(&p, end, ',')) return 1;
        if (p < end && *p == '"') {   /* one capture: [.., count, bytes, timestamp]: largest = bytes, last = first */
            v.maxlen = v.bytes;
            if (json_plain_str(&p, end, &f, &fn) || json_char(&p, end, ']') || !ts_ok(f, fn)) return 1;
            l = f; ln = fn;
        } else if (json_plain_int(&p, end, &v.maxlen) || json_char(&p, end, ',')
                   || json_plain_str(&p, end, &f, &fn) || json_char(&p, end, ',')
                   || json_plain_str(&p, end, &l, &ln) || json_char(&p, end, ']')
                   || !ts_ok(f, fn) || !ts_ok(l, ln)) return 1;
        v.rev = (int)rev;
        v.first = ts_of(f, fn); v.last = ts_of(l, ln);
        if (add_cell(x, &v) < 0) return -1;
        if (p < end && *p == ',') { p++; continue; }
        if (json_char(&p, end, ']')) return 1;
        return p == end ? 0 : 1;
    }
}

/* the current URI-R's merged cells -> resolved tuples (its number) */
static Py_ssize_t collect(Expander *x) {
    Py_ssize_t nc = x->cellmap.n;
    /* originals: per digest, the earliest non-revisit cell by (first, the values revisits take) */
    Map *om = &x->origmap;
    map_clear(om);
    for (Py_ssize_t i = 0; i < nc; i++) {
        Cell *c = &x->cells[i];
        if (c->rev || (c->dn == 1 && c->d[0] == '-')) continue;
        int added;
        Py_ssize_t j = map_find_or_add(om, c->d, c->dn, &added);
        if (j < 0) return -1;
        if (grow((void **)&x->orig_cell, &x->ocap, j + 1, sizeof(Py_ssize_t)) < 0) return -1;
        if (added) { x->orig_cell[j] = i; continue; }
        Cell *k = &x->cells[x->orig_cell[j]];
        int r = ts_cmp(&c->first, &k->first);
        for (int v = 0; r == 0 && v < x->crit.k; v++)
            if (x->crit.resolved[v]) r = bytes_cmp(c->v[v], c->vn[v], k->v[v], k->vn[v]);
        if (r < 0) x->orig_cell[j] = i;
    }
    Map *dm = &x->digmap;
    Py_ssize_t nt = 0;
    stamp_next(&x->tupix);
    map_clear(dm);
    x->dgn = 0;
    for (Py_ssize_t i = 0; i < nc; i++) {
        Cell *c = &x->cells[i];
        const char *v[MAXC];
        Py_ssize_t vn[MAXC];
        int k = x->crit.k;
        memcpy(v, c->v, sizeof v); memcpy(vn, c->vn, sizeof vn);
        if (c->rev) {
            /* lookup only: origmap holds exactly the digests with an original */
            Py_ssize_t j = (c->dn == 1 && c->d[0] == '-') ? -1 : map_find(om, c->d, c->dn);
            Cell *o = j >= 0 ? &x->cells[x->orig_cell[j]] : NULL;
            for (int q = 0; q < k; q++) {
                if (!x->crit.resolved[q]) continue;
                if (o) { v[q] = o->v[q]; vn[q] = o->vn[q]; }
                else { v[q] = x->crit.revisit[q].p ? x->crit.revisit[q].p : ""; vn[q] = x->crit.revisit[q].n; }
            }
        }
        Buf *b = &x->sb;
        b->n = 0;
        if (put_values(b, k, v, vn) < 0) return -1;
        int added;
        Py_ssize_t tid = map_find_or_add(&x->tidmap, b->p, b->n, &added);
        if (tid < 0) return -1;
        if (tid >= x->memo_rows) {   /* a new row of memoised suffix ids */
            if (grow((void **)&x->memo, &x->memo_cap, (tid + 1) * x->ctot, sizeof(int32_t)) < 0) return -1;
            memset(x->memo + x->memo_rows * x->ctot, 0xff, (tid + 1 - x->memo_rows) * x->ctot * sizeof(int32_t));
            x->memo_rows = tid + 1;
        }
        Py_ssize_t t = stamp_get(&x->tupix, tid);
        if (t < 0) {
            t = nt++;
            if (grow((void **)&x->tups, &x->tcap, t + 1, sizeof(Tup)) < 0 || stamp_set(&x->tupix, tid, t) < 0)
                return -1;
            Tup *tp = &x->tups[t];
            tp->tid = tid;
            memcpy(tp->v, v, sizeof v); memcpy(tp->vn, vn, sizeof vn);
            tp->count = tp->bytes = tp->dash = 0;
            tp->first = TS_FIRST; tp->last = TS_LAST;
            tp->dig_head = -1;
        }
        Tup *tp = &x->tups[t];
        tp->count += c->count; tp->bytes += c->bytes;
        if (ts_cmp(&c->first, &tp->first) < 0) tp->first = c->first;
        if (ts_cmp(&c->last, &tp->last) > 0) tp->last = c->last;
        if (c->dn == 1 && c->d[0] == '-') { tp->dash += c->bytes; continue; }
        Py_ssize_t did = map_find_or_add(dm, c->d, c->dn, &added);
        if (did < 0) return -1;
        if (added) {
            if (grow2((void **)&x->dmax, sizeof(int64_t), (void **)&x->dstamp, sizeof(uint64_t),
                      &x->dcap, did + 1) < 0
                || grow((void **)&x->dhead, &x->dhcap, did + 1, sizeof(Py_ssize_t)) < 0) return -1;
            x->dstamp[did] = 0;
            x->dhead[did] = -1;
        }
        Py_ssize_t d;
        for (d = x->dhead[did]; d >= 0 && x->dg_t[d] != t; d = x->dg_dnext[d]) ;
        if (d >= 0) {
            if (c->maxlen > x->dg_ml[d]) x->dg_ml[d] = c->maxlen;
            continue;
        }
        if (x->dgn == x->dgcap) {
            Py_ssize_t cap = x->dgcap ? x->dgcap * 2 : 64;
            if (resize((void **)&x->dg_did, cap, sizeof(Py_ssize_t)) < 0
                || resize((void **)&x->dg_next, cap, sizeof(Py_ssize_t)) < 0
                || resize((void **)&x->dg_t, cap, sizeof(Py_ssize_t)) < 0
                || resize((void **)&x->dg_dnext, cap, sizeof(Py_ssize_t)) < 0
                || resize((void **)&x->dg_ml, cap, sizeof(int64_t)) < 0) return -1;
            x->dgcap = cap;
        }
        d = x->dgn++;
        x->dg_did[d] = did; x->dg_ml[d] = c->maxlen; x->dg_next[d] = tp->dig_head; tp->dig_head = d;
        x->dg_t[d] = t; x->dg_dnext[d] = x->dhead[did]; x->dhead[did] = d;
    }
    for (Py_ssize_t t = 0; t < nt; t++) {
        Tup *tp = &x->tups[t];
        int64_t nd = 0, sum = 0;
        for (Py_ssize_t d = tp->dig_head; d >= 0; d = x->dg_next[d]) { nd++; sum += x->dg_ml[d]; }
        Rec *r = &tp->rec;
        r->total = r->min = r->max = tp->count; r->urir = 1; r->bytes = tp->bytes;
        r->digests = nd; r->dedup = sum + tp->dash; r->first = tp->first; r->last = tp->last;
    }
    return nt;
}

/* one record per digest of the URI-R: D digest -> JSON [urlkey, [[values..., max_len], ...]]
 * (its entries in tuple order) */
static int digest_records(Expander *x, const char *u, Py_ssize_t un, Py_ssize_t nt) {
    Map *dm = &x->digmap;
    Py_ssize_t nd = dm->n;
    if (nd == 0) return 0;
    /* entries by digest id: a counting sort of the tuples' digest chains */
    if (grow((void **)&x->dr_start, &x->drcap, nd + 1, sizeof(Py_ssize_t)) < 0
        || grow2((void **)&x->de_t, sizeof(Py_ssize_t), (void **)&x->de_d, sizeof(Py_ssize_t), &x->decap, x->dgn) < 0)
        return -1;
    Py_ssize_t *start = x->dr_start;
    memset(start, 0, (nd + 1) * sizeof(Py_ssize_t));
    for (Py_ssize_t t = 0; t < nt; t++)
        for (Py_ssize_t d = x->tups[t].dig_head; d >= 0; d = x->dg_next[d]) start[x->dg_did[d] + 1]++;
    for (Py_ssize_t did = 0; did < nd; did++) start[did + 1] += start[did];
    for (Py_ssize_t t = 0; t < nt; t++)
        for (Py_ssize_t d = x->tups[t].dig_head; d >= 0; d = x->dg_next[d]) {
            Py_ssize_t at = start[x->dg_did[d]]++;
            x->de_t[at] = t; x->de_d[at] = d;
        }
    Buf *b = &x->sb;
    Py_ssize_t at = 0;
    for (Py_ssize_t did = 0; did < nd; did++) {
        if (!filter_shared(&x->shared, dm->ents[did].h)) {   /* no other URI-R has it: step 2 needs nothing */
            x->held_back++;
            at = start[did];
            continue;
        }
        b->n = 0;
        if (buf_putc(b, '[') < 0 || json_str(b, u, un) < 0 || buf_put(b, ",[", 2) < 0) return -1;
        for (Py_ssize_t e = at; e < start[did]; e++) {
            Tup *tp = &x->tups[x->de_t[e]];
            if ((e > at && buf_putc(b, ',') < 0) || buf_putc(b, '[') < 0) return -1;
            for (int q = 0; q < x->crit.k; q++)
                if (json_str(b, tp->v[q], tp->vn[q]) < 0 || buf_putc(b, ',') < 0) return -1;
            if (json_int(b, x->dg_ml[x->de_d[e]]) < 0 || buf_putc(b, ']') < 0) return -1;
        }
        at = start[did];
        if (buf_put(b, "]]", 2) < 0) return -1;
        if (!x->raw_mode) {
            if (emit(x, "D ", 2, map_key(dm, did), dm->ents[did].len, b->p, b->n) < 0) return -1;
            continue;
        }
        if (grow((void **)&x->drun_off, &x->drun_cap, x->ndrun + 1, sizeof(Py_ssize_t)) < 0) return -1;
        x->drun_off[x->ndrun++] = x->drun.n;
        if (buf_put(&x->drun, "D ", 2) < 0 || buf_put(&x->drun, map_key(dm, did), dm->ents[did].len) < 0
            || buf_putc(&x->drun, '\t') < 0 || buf_put(&x->drun, b->p, b->n) < 0 || buf_putc(&x->drun, '\n') < 0)
            return -1;
    }
    return 0;
}

/* the held-back digest record lines, in byte order (as `LC_ALL=C sort` compares lines), to the
 * output */
static int drun_flush(Expander *x) {
    Py_ssize_t n = x->ndrun;
    if (n == 0) return 0;
    LineRef *refs = PyMem_Malloc(n * sizeof(LineRef));
    if (!refs) { PyErr_NoMemory(); return -1; }
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t start = x->drun_off[i], end = (i + 1 < n ? x->drun_off[i + 1] : x->drun.n) - 1;
        lineref_set(&refs[i], x->drun.p + start, end - start);
    }
    if (sort_linerefs(refs, n) < 0) { PyMem_Free(refs); return -1; }
    int rc = buf_reserve(&x->raw, x->drun.n);
    for (Py_ssize_t i = 0; i < n && rc == 0; i++) {
        memcpy(x->raw.p + x->raw.n, refs[i].p, refs[i].n);
        x->raw.n += refs[i].n;
        x->raw.p[x->raw.n++] = '\n';
    }
    PyMem_Free(refs);
    x->ndrun = 0; x->drun.n = 0;
    return rc;
}

/* URI-R u, whose cells are added: its key and digest records */
static int uri_r(Expander *x, const char *u, Py_ssize_t un) {
    const char *paren = memchr(u, ')', un);
    Py_ssize_t hn = paren ? paren - u : 0;
    int none = paren == NULL;
    if (!x->have_group || none != x->host_none || (!none && (hn != x->host.n || memcmp(u, x->host.p, hn) != 0))) {
        /* before collect(): closing a host may forget the tuple ids */
        if (close_group(x) < 0 || open_group(x, u, hn, none) < 0) return -1;
    }
    Py_ssize_t nt = collect(x);
    if (nt < 0) return -1;
    mask_records_next(x);
    if (nt == 1) {
        if (idrecs_add(&x->host_tuples, x->tups[0].tid, &x->tups[0].rec) < 0) return -1;
    } else if (nt > 1) {
        uint64_t done = 0;   /* sets already projected (set indices < 64) */
        for (int g = 0; g < x->grp.n; g++) {
            int idx = x->grp.set[g];
            if (idx < 64 && (done >> idx) & 1) continue;
            if (idx < 64) done |= 1ULL << idx;
            if (project(x, nt, idx, NULL, 0) < 0) return -1;
        }
    }
    /* own levels: path directories and the exact URL */
    Levels *own = &x->own;
    if (urlkey_levels(x, own, u, un, 0) < 0) return -1;
    for (int l = 0; l < own->n; l++)
        if (project(x, nt, own->set[l], own->keys.p + own->off[l], own->len[l]) < 0) return -1;
    if (digest_records(x, u, un, nt) < 0) return -1;
    if ((x->drun.n >= DRUN_BYTES || x->ndrun >= x->limit) && drun_flush(x) < 0) return -1;
    if (x->table.m.n >= x->limit) return flush_table(x);
    return 0;
}

/* The records of one call, in either sink: a list of (key, value) pairs, or in raw mode the
 * bytes of their key<TAB>value lines. step(x, arg) writes them; it returns -1 on an error. */
static PyObject *run_sink(Expander *x, int raw, int (*step)(Expander *, void *), void *arg) {
    x->raw_mode = raw;
    if (!raw && !(x->out = PyList_New(0))) return NULL;
    int r = step(x, arg);
    x->raw_mode = 0;
    if (raw) {
        PyObject *out = r < 0 ? NULL : PyBytes_FromStringAndSize(x->raw.p ? x->raw.p : "", x->raw.n);
        x->raw.n = 0;
        if (x->raw.cap > (8 << 20)) buf_free(&x->raw);    /* a large flush: give the memory back */
        return out;
    }
    PyObject *out = x->out;
    x->out = NULL;
    if (r < 0) { Py_DECREF(out); return NULL; }
    return out;
}

/* arg: (urlkey, cell lists) */
static int add_step(Expander *x, void *arg) {
    PyObject *args = arg;
    PyObject *urlkey, *values;
    if (!PyArg_ParseTuple(args, "UO", &urlkey, &values)) return -1;
    Py_ssize_t un;
    const char *u = utf8(urlkey, &un);
    if (!u) return -1;
    PyObject *lists = PySequence_List(values);     /* keeps the cells alive while their UTF-8 is used */
    if (!lists) return -1;
    map_clear(&x->cellmap);
    int r = add_cell_lists(x, lists);
    if (r == 0) r = uri_r(x, u, un);
    Py_DECREF(lists);
    return r;
}

/* step 1: a URI-R's run of lines in the map side's plain JSON through the expander (its records
 * go to x->raw); any other run (!meta, not plain) is Python's */
static int feed_run(void *ctx, const char *buf, Py_ssize_t pos, Py_ssize_t end, Py_ssize_t kn, Py_ssize_t nlines,
                    int tab, Buf *out) {
    Expander *x = ctx;
    const char *line = buf + pos;
    if (!tab || (kn == 5 && memcmp(line, "!meta", 5) == 0)) return 1;
    for (Py_ssize_t k = 0; k < kn; k++)
        if ((unsigned char)line[k] >= 0x80) return 1;
    map_clear(&x->cellmap);
    for (Py_ssize_t at = pos; at < end; ) {
        const char *q = memchr(buf + at, '\n', end - at);
        Py_ssize_t e = q ? q - buf : end;
        int r = add_cell_json(x, buf + at + kn + 1, buf + e);
        if (r != 0) return r;
        at = e + 1;
    }
    return uri_r(x, line, kn) < 0 ? -1 : 0;
}

static int feed_step(Expander *x, void *arg) { return scan_runs(arg, feed_run, x, &x->raw); }

static PyObject *Expander_feed(Expander *x, PyObject *args) {
    Py_buffer view;
    Feed fd;
    if (parse_feed(args, &view, &fd) < 0) return NULL;
    PyObject *lines = run_sink(x, 1, feed_step, &fd);
    PyBuffer_Release(&view);
    if (!lines) return NULL;
    PyObject *out = Py_BuildValue("(innN)", fd.state, fd.pos, fd.end, lines);
    return out;
}

static int close_step(Expander *x, void *unused) {
    if (x->ndrun > 0) {   /* held back in raw mode: as lines, or as pairs */
        if (x->raw_mode) { if (drun_flush(x) < 0) return -1; }
        else {
            int raw_lines = x->raw_mode;
            x->raw_mode = 1;
            Py_ssize_t before = x->raw.n;
            int r = drun_flush(x);
            x->raw_mode = raw_lines;
            if (r < 0) return -1;
            for (Py_ssize_t at = before; at < x->raw.n; ) {      /* lines -> (key, value) pairs */
                const char *line = x->raw.p + at, *nl = memchr(line, '\n', x->raw.n - at);
                const char *tab = memchr(line, '\t', nl - line);
                if (emit(x, "", 0, line, tab - line, tab + 1, nl - tab - 1) < 0) return -1;
                at = nl - x->raw.p + 1;
            }
            x->raw.n = before;
        }
    }
    if (close_group(x) < 0 || acc_flush_all(x) < 0) return -1;
    return flush_table(x);
}

/* step 2 (profiler.job.digests.corrections): one URI-R of a digest that several URI-Rs hold. The
 * largest length of each profile key its entries [[values..., max_len], ...] reach is
 * added to the digest's (URI-Rs, sum of lengths, largest) of that key. */
/* one entry (values v, largest length ml) of the URI-R whose levels are in x->clev: the largest
 * length of each profile key it reaches, in x->cmine */
static int correct_entry(Expander *x, const char *const *v, const Py_ssize_t *vn, int64_t ml) {
    Levels *L = &x->clev;
    Map *mm = &x->cmine;
    for (int l = 0; l < L->n; l++) {
        int idx = L->set[l];
        for (int c = 0; c < x->ncombos[idx]; c++) {
            Buf *b = &x->kb;
            b->n = 0;
            if (buf_put(b, L->keys.p + L->off[l], L->len[l]) < 0 || buf_putc(b, ' ') < 0
                || put_suffix(b, &x->crit, v, vn, x->combos[idx][c]) < 0) return -1;
            int added;
            Py_ssize_t k = map_find_or_add(mm, b->p, b->n, &added);
            if (k < 0 || grow((void **)&x->cmine_ml, &x->cmine_cap, k + 1, sizeof(int64_t)) < 0) return -1;
            if (added || ml > x->cmine_ml[k]) x->cmine_ml[k] = ml;
        }
    }
    return 0;
}

/* the URI-R's largest lengths (x->cmine) added to the digest's keys (x->ckey) */
static int correct_commit(Expander *x) {
    Map *mm = &x->cmine;
    for (Py_ssize_t i = 0; i < mm->n; i++) {
        int added;
        Py_ssize_t k = map_find_or_add(&x->ckey, map_key(mm, i), mm->ents[i].len, &added);
        if (k < 0 || grow((void **)&x->ck, &x->ck_cap, k + 1, sizeof(KeyAcc)) < 0) return -1;
        int64_t ml = x->cmine_ml[i];
        KeyAcc *a = &x->ck[k];
        if (added) { a->n = 1; a->total = a->largest = ml; continue; }
        a->n++; a->total += ml;
        if (ml > a->largest) a->largest = ml;
    }
    return 0;
}

static int correct_uri_r(Expander *x, PyObject *urlkey, PyObject *entries) {
    Py_ssize_t un;
    const char *u = utf8(urlkey, &un);
    if (!u) return -1;
    if (urlkey_levels(x, &x->clev, u, un, 1) < 0) return -1;
    map_clear(&x->cmine);
    Py_ssize_t ne = PyList_GET_SIZE(entries);
    for (Py_ssize_t i = 0; i < ne; i++) {
        PyObject *e = PyList_GET_ITEM(entries, i);
        int k = x->crit.k;
        if (!PyList_Check(e) || PyList_GET_SIZE(e) != k + 1) {
            PyErr_SetString(PyExc_ValueError, "a digest entry is [values..., max_len]");
            return -1;
        }
        const char *v[MAXC];
        Py_ssize_t vn[MAXC];
        for (int q = 0; q < k; q++)
            if (!(v[q] = utf8(PyList_GET_ITEM(e, q), &vn[q]))) return -1;
        int64_t ml;
        if (get_i64(PyList_GET_ITEM(e, k), &ml) < 0) return -1;
        if (correct_entry(x, v, vn, ml) < 0) return -1;
    }
    return correct_commit(x);
}

/* a digest record's value [urlkey, [[values..., max_len], ...]] in the plain JSON step 1 writes
 * (digest_records): 0 read (with apply, its URI-R's entries go to x->cmine, then x->ckey), 1 not in
 * that form (a marker, escapes, text past ASCII: Python's), -1 error */
static int digest_value(Expander *x, const char *p, const char *end, int apply) {
    const char *u;
    Py_ssize_t un;
    if (json_char(&p, end, '[') || json_plain_str(&p, end, &u, &un) || json_char(&p, end, ',')
        || json_char(&p, end, '[')) return 1;
    if (apply) {
        if (urlkey_levels(x, &x->clev, u, un, 1) < 0) return -1;
        map_clear(&x->cmine);
    }
    for (;;) {
        const char *v[MAXC];
        Py_ssize_t vn[MAXC];
        int64_t ml;
        if (json_char(&p, end, '[')) return 1;
        for (int q = 0; q < x->crit.k; q++)
            if (json_plain_str(&p, end, &v[q], &vn[q]) || json_char(&p, end, ',')) return 1;
        if (json_plain_int(&p, end, &ml) || json_char(&p, end, ']')) return 1;
        if (apply && correct_entry(x, v, vn, ml) < 0) return -1;
        if (p < end && *p == ',') { p++; continue; }
        break;
    }
    if (json_char(&p, end, ']') || json_char(&p, end, ']') || p != end) return 1;
    return apply ? (correct_commit(x) < 0 ? -1 : 0) : 0;
}

static int skim_run(void *unused, const char *buf, Py_ssize_t pos, Py_ssize_t end, Py_ssize_t kn, Py_ssize_t nlines,
                    int tab, Buf *out);
static int end_digest_step(Expander *x, void *unused);

/* step 2 over sorted lines (profiler.job.steps.digest_step): skim's runs, and the runs of a digest
 * several URI-Rs hold read here into its corrections (the table), as digest_lines reads them with
 * correct() and end_digest_raw(); a run with a record not in plain form, a marker (a salted digest's
 * group), or one touching limit keys or more (Python spills it) is Python's, whole */
static int digest_run(void *ctx, const char *buf, Py_ssize_t pos, Py_ssize_t end, Py_ssize_t kn, Py_ssize_t nlines,
                      int tab, Buf *out) {
    Expander *x = ctx;
    if (nlines < 2 || !tab || !(kn >= 2 && buf[pos] == 'D' && buf[pos + 1] == ' '))
        return skim_run(NULL, buf, pos, end, kn, nlines, tab, out);
    for (int apply = 0; apply < 2; apply++) {       /* every record plain before any is counted */
        for (Py_ssize_t at = pos; at < end; ) {
            const char *nl = memchr(buf + at, '\n', end - at);
            Py_ssize_t le = nl ? nl - buf : end;
            int r = digest_value(x, buf + at + kn + 1, buf + le, apply);
            if (r != 0) { map_clear(&x->ckey); return r; }
            if (apply && x->ckey.n >= x->limit) { map_clear(&x->ckey); return 1; }
            at = le + 1;
        }
    }
    return end_digest_step(x, NULL);
}

static int skim_digests_step(Expander *x, void *arg) { return scan_runs(arg, digest_run, x, &x->raw); }

/* skim_digests(buf, pos, final) -> (state, pos, end, lines): as skim(), with the corrections of the
 * digests several URI-Rs hold in the table (their K lines when it fills up; the rest at close_raw) */
static PyObject *Expander_skim_digests(Expander *x, PyObject *args) {
    Py_buffer view;
    Feed fd;
    if (parse_feed(args, &view, &fd) < 0) return NULL;
    PyObject *lines = run_sink(x, 1, skim_digests_step, &fd);
    PyBuffer_Release(&view);
    if (!lines) return NULL;
    return Py_BuildValue("(innN)", fd.state, fd.pos, fd.end, lines);
}

/* correct(urlkey, entries) -> the number of profile keys the digest touches so far */
static PyObject *Expander_correct(Expander *x, PyObject *args) {
    PyObject *urlkey, *entries;
    if (!PyArg_ParseTuple(args, "UO!", &urlkey, &PyList_Type, &entries)) return NULL;
    if (correct_uri_r(x, urlkey, entries) < 0) return NULL;
    return PyLong_FromSsize_t(x->ckey.n);
}

/* the digest's keys so far, {key: [URI-Rs, sum of lengths, largest]} (to spill), forgotten here */
static PyObject *Expander_take_digest_keys(Expander *x, PyObject *noargs) {
    PyObject *out = PyDict_New();
    if (!out) return NULL;
    Map *m = &x->ckey;
    for (Py_ssize_t i = 0; i < m->n; i++) {
        KeyAcc *a = &x->ck[i];
        PyObject *k = PyUnicode_DecodeUTF8(map_key(m, i), m->ents[i].len, NULL);
        PyObject *v = k ? Py_BuildValue("[LLL]", (long long)a->n, (long long)a->total, (long long)a->largest) : NULL;
        if (!v || PyDict_SetItem(out, k, v) < 0) { Py_XDECREF(k); Py_XDECREF(v); Py_DECREF(out); return NULL; }
        Py_DECREF(k); Py_DECREF(v);
    }
    map_clear(m);
    return out;
}

/* the digest's corrections (a key held by n > 1 of its URI-Rs: -(n-1) digests, -(sum - largest)
 * dedup bytes) into the table, which is flushed when full */
static int end_digest_step(Expander *x, void *unused) {
    Map *m = &x->ckey;
    Rec r = {0, (int64_t)1 << 62, 0, 0, 0, 0, 0, {UINT64_MAX}, {0}};   /* stats.correction */
    for (Py_ssize_t i = 0; i < m->n; i++) {
        KeyAcc *a = &x->ck[i];
        if (a->n < 2) continue;
        r.digests = -(a->n - 1);
        r.dedup = -(a->total - a->largest);
        if (recmap_add(&x->table, map_key(m, i), m->ents[i].len, &r) < 0) return -1;
    }
    map_clear(m);
    if (x->table.m.n >= x->limit) return flush_table(x);
    return 0;
}

static PyObject *Expander_end_digest_raw(Expander *x, PyObject *noargs) { return run_sink(x, 1, end_digest_step, NULL); }

static PyObject *Expander_add(Expander *x, PyObject *args) { return run_sink(x, 0, add_step, args); }
static PyObject *Expander_add_raw(Expander *x, PyObject *args) { return run_sink(x, 1, add_step, args); }
static PyObject *Expander_close(Expander *x, PyObject *noargs) { return run_sink(x, 0, close_step, NULL); }
static PyObject *Expander_close_raw(Expander *x, PyObject *noargs) { return run_sink(x, 1, close_step, NULL); }

static void Expander_dealloc(Expander *x) {
    for (int i = 0; i < x->nsets; i++) PyMem_Free(x->combos ? x->combos[i] : NULL);
    PyMem_Free(x->combos); PyMem_Free(x->ncombos);
    crit_free(&x->crit);
    Py_CLEAR(x->registered); map_free(&x->regmap); PyMem_Free(x->reg_labels);
    recmap_free(&x->table); idrecs_free(&x->host_tuples); idrecs_free(&x->host_suffix);
    for (int g = 0; g < x->nacc; g++) {
        idrecs_free(&x->acc[g].sfx); idrecs_free(&x->acc[g].tup); buf_free(&x->acc[g].key);
    }
    PyMem_Free(x->acc); x->acc = NULL; x->nacc = 0;
    buf_free(&x->host); levels_free(&x->grp); levels_free(&x->own); levels_free(&x->clev);
    map_free(&x->cmine); PyMem_Free(x->cmine_ml); map_free(&x->ckey); PyMem_Free(x->ck);
    map_free(&x->cellmap); PyMem_Free(x->cells);
    stamp_free(&x->tupix); PyMem_Free(x->tups);
    map_free(&x->digmap); PyMem_Free(x->dmax); PyMem_Free(x->dstamp);
    PyMem_Free(x->dhead);
    PyMem_Free(x->dg_did); PyMem_Free(x->dg_next); PyMem_Free(x->dg_t); PyMem_Free(x->dg_dnext); PyMem_Free(x->dg_ml);
    map_free(&x->origmap); PyMem_Free(x->orig_cell);
    map_free(&x->tidmap); map_free(&x->sfxmap); map_free(&x->pairmap); PyMem_Free(x->memo); PyMem_Free(x->cofs);
    PyMem_Free(x->pair_sid); PyMem_Free(x->pair_set);
    stamp_free(&x->pj); PyMem_Free(x->pj_pid);
    PyMem_Free(x->pj_head); PyMem_Free(x->pj_last); PyMem_Free(x->pj_mask); PyMem_Free(x->mrec);
    PyMem_Free(x->pe_t); PyMem_Free(x->pe_next);
    PyMem_Free(x->dr_start); PyMem_Free(x->de_t); PyMem_Free(x->de_d);
    buf_free(&x->kb); buf_free(&x->sb); buf_free(&x->raw); buf_free(&x->drun); PyMem_Free(x->drun_off);
    filter_release(&x->shared);
    Py_XDECREF(x->out);
    Py_TYPE(x)->tp_free((PyObject *)x);
}

/* Expander(combo_sets, set_of, host_depth, path_depth, exact_urls, limit, criteria, registered)
 * combo_sets: [[level codes, one per criterion), ...], ...]; set_of: NLEVELS set indices (LV_*);
 * criteria: as crit_parse takes them; registered: keys.registered_labels of the policy, or None */
static int Expander_init(Expander *x, PyObject *args, PyObject *kw) {
    PyObject *sets, *set_of, *spec, *registered = Py_None;
    int hd, pd, ex;
    Py_ssize_t limit;
    if (!PyArg_ParseTuple(args, "OOiipnO|O", &sets, &set_of, &hd, &pd, &ex, &limit, &spec, &registered)) return -1;
    if (registered != Py_None && !PyCallable_Check(registered)) {
        PyErr_SetString(PyExc_TypeError, "registered must be callable or None"); return -1;
    }
    if (x->combos) { PyErr_SetString(PyExc_RuntimeError, "Expander initialised twice"); return -1; }
    if (crit_parse(&x->crit, spec) < 0) return -1;
    int k = x->crit.k;
    PyObject *s = PySequence_Fast(sets, "combo_sets must be a sequence");
    if (!s) return -1;
    int n = (int)PySequence_Fast_GET_SIZE(s);
    if (n > 255) { Py_DECREF(s); PyErr_SetString(PyExc_ValueError, "too many combination sets"); return -1; }
    x->nsets = n;
    x->ncombos = PyMem_Calloc(n ? n : 1, sizeof(int));
    x->combos = PyMem_Calloc(n ? n : 1, sizeof(*x->combos));
    if (!x->ncombos || !x->combos) { Py_DECREF(s); PyErr_NoMemory(); return -1; }
    for (int i = 0; i < n; i++) {
        PyObject *cs = PySequence_Fast(PySequence_Fast_GET_ITEM(s, i), "a combination set must be a sequence");
        if (!cs) { Py_DECREF(s); return -1; }
        int nc = (int)PySequence_Fast_GET_SIZE(cs);
        if (nc > MAXCOMBOS) { Py_DECREF(cs); Py_DECREF(s); PyErr_SetString(PyExc_ValueError, "too many combinations"); return -1; }
        x->combos[i] = PyMem_Calloc(nc ? nc : 1, MAXC);
        if (!x->combos[i]) { Py_DECREF(cs); Py_DECREF(s); PyErr_NoMemory(); return -1; }
        x->ncombos[i] = nc;
        for (int c = 0; c < nc; c++) {
            PyObject *codes = PySequence_Fast(PySequence_Fast_GET_ITEM(cs, c), "a combination must be a sequence");
            if (!codes) { Py_DECREF(cs); Py_DECREF(s); return -1; }
            int bad = PySequence_Fast_GET_SIZE(codes) != k;
            for (int q = 0; q < k && !bad; q++) {
                long code = PyLong_AsLong(PySequence_Fast_GET_ITEM(codes, q));
                if (code == -1 && PyErr_Occurred()) { Py_DECREF(codes); Py_DECREF(cs); Py_DECREF(s); return -1; }
                bad = code < 0 || code > x->crit.nlev[q];
                x->combos[i][c][q] = (uint8_t)code;
            }
            Py_DECREF(codes);
            if (bad) {
                Py_DECREF(cs); Py_DECREF(s); PyErr_SetString(PyExc_ValueError, "level code out of range"); return -1;
            }
        }
        Py_DECREF(cs);
    }
    Py_DECREF(s);
    PyObject *so = PySequence_Fast(set_of, "set_of must be a sequence");
    if (!so) return -1;
    if (PySequence_Fast_GET_SIZE(so) != NLEVELS) { Py_DECREF(so); PyErr_SetString(PyExc_ValueError, "one set per SURT level"); return -1; }
    for (int i = 0; i < NLEVELS; i++) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(so, i));
        if (v == -1 && PyErr_Occurred()) { Py_DECREF(so); return -1; }
        x->set_of[i] = (int)v;
    }
    Py_DECREF(so);
    if (registered != Py_None) { Py_INCREF(registered); x->registered = registered; }
    for (int i = 0; i < NLEVELS; i++)
        if (x->set_of[i] < 0 || x->set_of[i] >= n) { PyErr_SetString(PyExc_ValueError, "bad set index"); return -1; }
    x->host_depth = hd; x->path_depth = pd; x->exact_urls = ex;
    x->limit = limit < 1 ? 1 : limit;
    x->id_limit = x->limit < ID_LIMIT ? x->limit : ID_LIMIT;
    if (!(x->cofs = PyMem_Calloc(n ? n : 1, sizeof(int)))) { PyErr_NoMemory(); return -1; }
    x->ctot = 0;
    for (int i = 0; i < n; i++) { x->cofs[i] = x->ctot; x->ctot += x->ncombos[i]; }
    if (x->ctot == 0) x->ctot = 1;
    if (recmap_init(&x->table) < 0
        || map_init(&x->cellmap) < 0
        || map_init(&x->digmap) < 0 || map_init(&x->origmap) < 0 || map_init(&x->tidmap) < 0
        || map_init(&x->sfxmap) < 0 || map_init(&x->pairmap) < 0
        || map_init(&x->cmine) < 0 || map_init(&x->ckey) < 0 || map_init(&x->regmap) < 0) return -1;
    return 0;
}

static PyObject *Expander_set_shared_digests(Expander *x, PyObject *bitmap) {
    if (filter_take(&x->shared, bitmap, 1) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *Expander_get_held_back(Expander *x, void *closure) { return PyLong_FromLongLong(x->held_back); }

static PyGetSetDef Expander_getset[] = {
    {"digests_held_back", (getter)Expander_get_held_back, NULL,
     "digest records not written: the shared-digest bitmap has their digest in one map record only", NULL},
    {NULL}
};

static PyMethodDef Expander_methods[] = {
    {"add", (PyCFunction)Expander_add, METH_VARARGS, "add(urlkey, cell_lists) -> [(key, value), ...]"},
    {"set_shared_digests", (PyCFunction)Expander_set_shared_digests, METH_O,
     "set_shared_digests(bitmap or None): write digest records only for digests the bitmap holds"},
    {"close", (PyCFunction)Expander_close, METH_NOARGS, "close() -> [(key, value), ...]"},
    {"add_raw", (PyCFunction)Expander_add_raw, METH_VARARGS,
     "add_raw(urlkey, cell_lists) -> bytes: the same records as add(), as key<TAB>value lines"},
    {"close_raw", (PyCFunction)Expander_close_raw, METH_NOARGS, "close_raw() -> bytes: close()'s records as lines"},
    {"feed", (PyCFunction)Expander_feed, METH_VARARGS,
     "feed(buf, pos, final) -> (state, pos, end, lines): add_raw() over sorted reduce input lines"},
    {"skim_digests", (PyCFunction)Expander_skim_digests, METH_VARARGS,
     "skim_digests(buf, pos, final) -> (state, pos, end, lines): step 2's runs, shared digests' corrections to the table"},
    {"correct", (PyCFunction)Expander_correct, METH_VARARGS,
     "correct(urlkey, entries) -> int: add one URI-R of a shared digest (step 2); the digest's keys so far"},
    {"take_digest_keys", (PyCFunction)Expander_take_digest_keys, METH_NOARGS,
     "take_digest_keys() -> {key: [URI-Rs, sum of lengths, largest]}: the digest's keys so far (to spill)"},
    {"end_digest_raw", (PyCFunction)Expander_end_digest_raw, METH_NOARGS,
     "end_digest_raw() -> bytes: the digest's corrections into the table; K lines when it fills up"},
    {NULL}
};

static PyTypeObject ExpanderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "profiler.accel._apfast.Expander",
    .tp_basicsize = sizeof(Expander),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Expander_init,
    .tp_dealloc = (destructor)Expander_dealloc,
    .tp_methods = Expander_methods,
    .tp_getset = Expander_getset,
    .tp_doc = "Step-1 reducer: URI-R cells -> key and digest records (see profiler.job.expand.Expander); "
              "step 2: corrections of shared digests (see profiler.job.digests).",
};


