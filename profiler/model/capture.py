"""A capture: one index line or archive record, as every input format's reader gives it.

Readers (profiler.formats) yield captures as plain tuples in this order, or a skip reason (a
str) for a line that is not one; the map side (profiler.job.mapside) and the compiled parser
read them by position. ``Capture`` names the positions.
"""

from collections import namedtuple

#: urlkey: the SURT (str); timestamp: 14 digits (str); mime, status: normalised (str);
#: digest: upper-case, without its 'algo:' prefix, '-' when unknown (str); length: stored bytes
#: (int, 0 to 2^64 - 1); revisit: whether the record is a revisit (bool); lang: the primary
#: language, ISO 639-3 or 'unk' (str, profiler.model.language)
Capture = namedtuple("Capture", "urlkey timestamp mime status digest length revisit lang")
URLKEY, TIMESTAMP, MIME, STATUS, DIGEST, LENGTH, REVISIT, LANG = range(len(Capture._fields))
