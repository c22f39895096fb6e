/* Compiled kernels of the profile job (optional; profiler/job/kernels.py picks them or the Python ones).
 *
 * One extension built from this file, which includes its parts, one concern each:
 *
 *   common.h     byte buffers, hash maps, timestamps, stats records (profiler.model.stats)
 *   json.h       the JSON the steps write and read
 *   lines.h      sorted key<TAB>value lines: runs of one key, sorting held-back lines
 *   criteria.c   a policy's criteria: level projections, key suffixes (profiler.model.criteria)
 *   filter.c     the digest filter between map and step 1 (profiler.runtime.digestfilter)
 *   cdxj.c       the JSON blocks of CDXJ lines, read as orjson reads them (profiler.formats.cdxj)
 *   aggregate.c  map side: CDX and CDXJ line parsers and per-URI-R aggregator (profiler.job.mapside)
 *   expand.c     step 1 and step 2's corrections (profiler.job.expand, profiler.job.digests)
 *   steps.c      steps 2 and 3 over sorted lines, the profile's lines (profiler.job.steps)
 *   runtime.c    legend scan, presorted merges, allocator (profiler.runtime)
 *   shuffle.c    buckets and sorts of raw lines for the Spark runner (profiler.runtime.sparksteps)
 *
 * The kernels take any criteria made of the projections in PROJECTIONS, within the bounds
 * MAX_CRITERIA, MAX_LEVELS, MAX_COMBINATIONS and MAX_PREFIX (criteria.c); profiler.job.kernels runs
 * the Python ones for any other policy. The map side parses the line formats in LINE_FORMATS,
 * for criteria whose values come from the sources in SOURCES.
 * Every string is handled as the UTF-8 bytes of the Python str; the operations used
 * (prefixes, find of ASCII bytes, comparisons) give the same results on code points and bytes.
 */
#include "common.h"
#include "json.h"
#include "lines.h"
#include "criteria.c"
#include "filter.c"
#include "cdxj.c"
#include "aggregate.c"
#include "expand.c"
#include "steps.c"
#include "runtime.c"
#include "shuffle.c"

/* ------------------------------------------------------------------ module */

static PyMethodDef module_methods[] = {
    {"skim", skim, METH_VARARGS,
     "skim(buf, pos, final) -> (state, pos, end, lines): step 2's key and lone digest records over sorted lines"},
    {"ordered_lines", ordered_lines, METH_VARARGS,
     "ordered_lines(data, previous) -> (text, lines, last key) or None: profile lines of ordered keys"},
    {"legend_starts", legend_starts, METH_VARARGS,
     "legend_starts(buf, end, base) -> [offset, ...]: the legend lines of buf[:end], at base + offset"},
    {"profile_lines", profile_lines, METH_VARARGS,
     "profile_lines(buf, pos, final) -> (state, pos, end, lines): step 3's key records over sorted lines"},
#ifndef _WIN32
    {"sorted_runs", sorted_runs, METH_VARARGS,
     "sorted_runs(fd, bufsize, max_runs) -> [length, ...] of the runs of sorted lines from fd's position, or None"},
#endif
    {"digest_filter_add", digest_filter_add, METH_VARARGS,
     "digest_filter_add(filter, digests): one map record's digests into a map task's filter (bytearray)"},
    {"digest_filter_merge", digest_filter_merge, METH_VARARGS,
     "digest_filter_merge(one, two, its_one, its_two) -> bits set in two: a map task's bitmaps into the merged ones"},
    {"digest_filter_has", digest_filter_has, METH_VARARGS,
     "digest_filter_has(bitmap, digest) -> bool: one bitmap of a digest filter holds the digest"},
    {"bucket_lines", bucket_lines, METH_VARARGS,
     "bucket_lines(data, parts) -> [bytes] * parts: lines by zlib.crc32(key) % parts, in their order"},
    {"sort_lines", sort_lines, METH_O,
     "sort_lines([bytes, ...]) -> bytes: the buffers' lines in byte order"},
    {"tune_allocator", tune_allocator, METH_VARARGS,
     "tune_allocator(mmap_threshold, trim_threshold) -> True, or False where malloc is not glibc's"},
    {NULL}
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_apfast", "Compiled hot path of archive-profiler (optional).", -1, module_methods,
};

PyMODINIT_FUNC PyInit__apfast(void) {
    crc_init();
    if (PyType_Ready(&ExpanderType) < 0 || PyType_Ready(&AggregatorType) < 0) return NULL;
#ifndef _WIN32
    if (PyType_Ready(&LineMergerType) < 0) return NULL;
#endif
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Py_INCREF(&ExpanderType);
    if (PyModule_AddObject(m, "Expander", (PyObject *)&ExpanderType) < 0) { Py_DECREF(m); return NULL; }
    Py_INCREF(&AggregatorType);
    if (PyModule_AddObject(m, "Aggregator", (PyObject *)&AggregatorType) < 0) { Py_DECREF(m); return NULL; }
#ifndef _WIN32
    Py_INCREF(&LineMergerType);
    if (PyModule_AddObject(m, "LineMerger", (PyObject *)&LineMergerType) < 0) { Py_DECREF(m); return NULL; }
#endif
    PyObject *projections = names_tuple(PROJECTION_NAMES, 4), *sources = names_tuple(SOURCE_NAMES, NSOURCES);
    if (!projections || PyModule_AddObject(m, "PROJECTIONS", projections) < 0
        || !sources || PyModule_AddObject(m, "SOURCES", sources) < 0) {
        Py_XDECREF(projections); Py_XDECREF(sources); Py_DECREF(m); return NULL;
    }
    PyObject *formats = names_tuple(LINE_FORMATS, 2);
    if (!formats || PyModule_AddObject(m, "LINE_FORMATS", formats) < 0) { Py_XDECREF(formats); Py_DECREF(m); return NULL; }
    if (PyModule_AddIntConstant(m, "MAX_CRITERIA", MAXC) < 0 || PyModule_AddIntConstant(m, "MAX_LEVELS", MAXL) < 0
        || PyModule_AddIntConstant(m, "MAX_COMBINATIONS", MAXCOMBOS) < 0
        || PyModule_AddIntConstant(m, "MAX_PREFIX", MAXPREFIX) < 0) { Py_DECREF(m); return NULL; }
    return m;
}

