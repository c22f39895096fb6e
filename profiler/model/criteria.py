"""The criteria of a profile key, in key order: one registry (spec section 2).

A profile key is ``surt`` then one field per criterion of its policy (``!keys``). A criterion
says which capture field holds its value, the levels a policy may enable besides ``any``
(written ``-``) and how each level projects a value into a key field, what a revisit takes
when its original is not found, and what a written field may look like. Policies, key
suffixes, the job's steps, queries, validation and the compiled kernels all read it from
here; the SURT levels (root, TLD, domain, host, path, URL) are in profiler.model.keys.

``CRITERIA`` is the registry; what derives from it (``NAMES``, ``BY_NAME``, ``FIELD_PATTERNS``)
is computed from it when read, so code that reads ``criteria.CRITERIA`` when it runs sees an
optional criterion a plugin adds with ``register`` (profiler.plugins), or a test puts there.

Each level's projection is one of a few kinds (``PROJECTIONS``), so the compiled kernels can
expand any criterion made of them without knowing it by name.
"""

import functools
import re
from collections import namedtuple
from dataclasses import dataclass
from typing import Callable, Optional, Tuple

from profiler import contract
from profiler.model import capture, normalise
from profiler.model.normalise import REVISIT_MIME, UNKNOWN

ANY = "any"
#: a key field at level any
ANY_FIELD = "-"

#: how a level turns a value into a key field: the value itself, its first n characters, a media
#: type's top-level type ('text/html' -> 'text/*'), a status code's class ('200' -> '2xx'), a media
#: type's content class ('image/png' -> 'image': MIME_CLASSES)
IDENTITY, PREFIX, CATEGORY, CLASS, MIME_CLASS = "identity", "prefix", "category", "class", "mime_class"
PROJECTIONS = (IDENTITY, PREFIX, CATEGORY, CLASS, MIME_CLASS)

#: FacetRedux's content classes of media types (spec section 2): exact types, then type prefixes
#: ('image/' is every image type); every other known type is 'other', 'unk' stays 'unk'
MIME_CLASS_TYPES = {
    "html": ("text/html", "application/xhtml+xml"),
    "media": ("application/x-shockwave-flash", "application/vnd.apple.mpegurl", "application/dash+xml"),
    "document": ("application/pdf", "application/msword", "application/rtf", "application/epub+zip",
                 "text/plain", "text/csv"),
    "code": ("text/css", "text/javascript", "application/javascript", "application/x-javascript",
             "application/json", "application/ld+json", "text/xml", "application/xml", "application/rss+xml",
             "application/atom+xml", "application/wasm", "application/font-woff"),
}
MIME_CLASS_PREFIXES = (
    ("image/", "image"), ("audio/", "media"), ("video/", "media"), ("application/vnd.ms-", "document"),
    ("application/vnd.openxmlformats-officedocument.", "document"),
    ("application/vnd.oasis.opendocument.", "document"), ("font/", "code"),
)
#: the content classes, and 'unk'
MIME_CLASSES = ("html", "image", "media", "document", "code", "other")
_CLASS_OF_TYPE = {t: name for name, types in MIME_CLASS_TYPES.items() for t in types}


def mime_class(mime):
    """A normalised media type's content class ('image/png' -> 'image', 'unk' -> 'unk')."""
    if mime == UNKNOWN:
        return UNKNOWN
    found = _CLASS_OF_TYPE.get(mime)
    if found is not None:
        return found
    for prefix, name in MIME_CLASS_PREFIXES:
        if mime.startswith(prefix):
            return name
    return "other"


def project(value, kind, n=0):
    """A value's key field under one projection kind (n: the length of a prefix)."""
    if kind == IDENTITY:
        return value
    if kind == PREFIX:
        return value[:n]
    if kind == CATEGORY:
        i = value.find("/")
        return value[:i] + "/*" if i > 0 else value
    if kind == CLASS:
        if not value:
            return value
        return value[0] + "xx" if value[0] in "12345" and value != UNKNOWN else UNKNOWN
    if kind == MIME_CLASS:
        return mime_class(value) if value else value
    raise ValueError("unknown projection %r" % (kind,))


@dataclass(frozen=True)
class Level:
    """One level of a criterion: its name in policies and how it projects a value."""
    name: str
    kind: str
    n: int = 0                 # PREFIX: the number of characters kept

    def field(self, value):
        return project(value, self.kind, self.n)

    def refines(self, coarser):
        """Whether this level's field determines the coarser level's, by the coarser level's
        projection of it: a longer prefix, or the value itself (IDENTITY)."""
        if self.kind == IDENTITY or self == coarser:
            return True
        return self.kind == PREFIX and coarser.kind == PREFIX and self.n >= coarser.n

    @property
    def reprojects(self):
        """Whether the level projects its own fields to themselves ('text/*' is its own category;
        'html' is not its own content class: a media type 'html' is 'other')."""
        return self.kind != MIME_CLASS


@dataclass(frozen=True)
class Criterion:
    """One key field besides the SURT."""
    name: str
    source: str                            # the Capture field holding the value
    levels: Tuple[Level, ...]              # besides 'any', in the order policies list them
    default_levels: Tuple[str, ...]        # what a policy that names none enables
    levels_of: Callable[[str], Tuple[str, ...]]   # a written field (not '-') -> the levels it may be at
    samples: Tuple[str, ...]               # a field at each level, in the order of levels
    pattern: str                           # what a field may look like (validate), as a regex
    describe: str                          # the same, for a person
    revisit: Optional[str] = None          # a revisit's value when its original is not found;
                                           # None: a revisit keeps its own value (its time)
    optional: bool = False                 # in the key only when the policy uses it
    example: str = ""                      # what a person gives for it, for options' help ('': describe)
    asked: Optional[Callable[[str], str]] = None   # a value a person gives -> its field (ValueError
                                           # when it is none); None: the field as given
    derive: Optional[Callable[[object], str]] = None   # the source field's value -> the criterion's
                                           # value (a str); None: the source field's value itself

    @property
    def origin(self):
        """Where the map side finds the value: the source field, or 'field:derivation' (the
        compiled map side's SOURCES name the ones it finds)."""
        return self.source if self.derive is None else "%s:%s" % (self.source, self.derive.__name__)

    def value_of(self, capture):
        """The criterion's value of a capture (profiler.model.capture.Capture)."""
        value = getattr(capture, self.source)
        return value if self.derive is None else self.derive(value)

    @property
    def level_names(self):
        return tuple(level.name for level in self.levels)

    def level(self, name):
        for level in self.levels:
            if level.name == name:
                return level
        raise KeyError(name)

    @property
    def coarse_to_fine(self):
        """The levels from the coarsest to the finest (PREFIX by length; a CATEGORY, CLASS or
        MIME_CLASS is coarser than the IDENTITY it projects). Which determine which: ``nesting``."""
        rank = {CATEGORY: 0, CLASS: 0, MIME_CLASS: 0, IDENTITY: 1 << 30}
        return tuple(sorted(self.levels, key=lambda lv: lv.n if lv.kind == PREFIX else rank[lv.kind]))

    @property
    def nesting(self):
        """Per pair of positions of ``chain`` (any, then coarse_to_fine): whether the field of the
        first determines the field of the second (any: always; a longer prefix a shorter one,
        the value itself every level; 'text/*' and 'html' do not determine each other)."""
        order = (None,) + self.coarse_to_fine
        return tuple(tuple(j == 0 or (i > 0 and order[i].refines(order[j])) for j in range(len(order)))
                     for i in range(len(order)))

    @property
    def reprojects(self):
        """Per position of ``chain``: whether that level's fields project to themselves
        (Level.reprojects)."""
        return (True,) + tuple(level.reprojects for level in self.coarse_to_fine)

    @property
    def bits(self):
        """{level: bit}: 1 for any, then 2, 4, ... from the coarsest level to the finest (a virtual
        tuple's mask of the levels whose combinations it stands for; profiler.job.expand)."""
        out = {ANY: 1}
        for i, level in enumerate(self.coarse_to_fine):
            out[level.name] = 2 << i
        return out

    def chain(self, value):
        """The value's fields from the coarsest level to the finest, after '' for any."""
        return ("",) + tuple(level.field(value) for level in self.coarse_to_fine)

    @property
    def resolved(self):
        """Whether a revisit takes this value from the capture it resolves to."""
        return self.revisit is not None

    def field(self, value, level):
        """The key field of a normalised value at a level ('-' at any)."""
        return ANY_FIELD if level == ANY else self.level(level).field(value)

    def field_levels(self, field):
        """The levels a written key field may be at (a field that fits several: all of them)."""
        return (ANY,) if field == ANY_FIELD else self.levels_of(field)

    def coarser_fields(self, field):
        """The field and the fields of coarser levels that count every capture it counts, '-'
        last: each level's projection of it that every level the field may be at determines
        ('201305' -> '2013'; 'text/html' -> 'text/*', 'html'; '200' -> '2xx')."""
        if field == ANY_FIELD:
            return [field]
        at = [self.level(name) for name in self.field_levels(field) if name in self.level_names]
        out = [field]
        for level in self.coarse_to_fine:
            if at and all(a.refines(level) for a in at):
                coarser = level.field(field)
                if coarser not in out:
                    out.append(coarser)
        return out + [ANY_FIELD]

    def code(self, level):
        """The compiled kernels' number of a level: 0 any, then the levels in order."""
        return 0 if level == ANY else self.level_names.index(level) + 1

    def query(self, text):
        """The key field of a value a person gives (an option, a query parameter): '-' as it is,
        otherwise ``asked``'s answer (the text itself without one); a ValueError when it names no
        value of the criterion or its field does not match ``pattern``, so a value no key can
        have is refused rather than answered as not held."""
        text = text.strip()
        if text == ANY_FIELD:
            return text
        field = text if self.asked is None else self.asked(text)
        if not _field_pattern(self).match(field.encode("utf-8", "surrogateescape")) or \
                (self not in BUILT_IN and not plain_field(field)):
            raise ValueError("not a %s value (%s): %r" % (self.name, self.describe, text[:40]))
        return field


def _datetime_levels(field):
    return {4: ("year",), 6: ("month",), 8: ("day",), 10: ("hour",)}.get(len(field), ())


def _mime_levels(field):
    """A content class's name is a line of the class level only: no media type or category is
    written so (profiler.model.normalise.mime makes a bare 'html' 'unk'), and a class line does not
    count the captures a type line of that name would."""
    if field.endswith("/*"):
        return ("category",)
    if "/" in field:
        return ("type",)
    if field == UNKNOWN:
        return ("type", "category", "class")
    return ("class",) if field in MIME_CLASSES else ("type", "category")


def _status_levels(field):
    return ("class", "code") if field == UNKNOWN else ("class",) if field.endswith("xx") else ("code",)


def _language(text):
    """A language a person gives ('ar', 'ar-EG', 'ara', 'unk') -> its ISO 639-3 code as profiles
    write it (profiler.model.language); a ValueError for what names no language."""
    from profiler.model.language import normalise_language
    code = normalise_language(text)
    if code == UNKNOWN and text.lower() != UNKNOWN:
        raise ValueError("not a language (an ISO 639 code or language tag such as ara, ar or ar-EG, "
                         "or unk): %r" % text[:40])
    return code


#: the ISO 8601 (W3C) form of a period: 2013-05, 2013-05-12, 2013-05-12T08
_DASHED_PERIOD = re.compile(r"([0-9]{4})-([0-9]{2})(?:-([0-9]{2})(?:T([0-9]{2}))?)?")


def period(text):
    """A datetime period a person gives, in the key's digits or in its ISO 8601 form ('2013-05',
    '2013-05-12', '2013-05-12T08') -> the key's digits ('201305'); a ValueError for other text,
    and for digits of no date of the calendar ('201613'), which no key can have and which would
    otherwise be answered as not held."""
    dashed = _DASHED_PERIOD.fullmatch(text.strip())
    digits = "".join(part for part in dashed.groups() if part) if dashed else text
    if not (digits.isascii() and digits.isdigit() and len(digits) in (4, 6, 8, 10)):
        raise ValueError("not a datetime value (YYYY, YYYYMM, YYYYMMDD or YYYYMMDDHH, or 2013-05, "
                         "2013-05-12, 2013-05-12T08): %r" % text[:40])
    if normalise.timestamp(digits.encode("ascii")) is None:
        raise ValueError("not a date of the calendar (a month, day or hour out of range): %r" % text[:40])
    return digits


DATETIME = Criterion(
    "datetime", "timestamp",
    (Level("year", PREFIX, 4), Level("month", PREFIX, 6), Level("day", PREFIX, 8), Level("hour", PREFIX, 10)),
    ("year",), _datetime_levels, ("2013", "201301", "20130115", "2013011512"),
    r"-|[0-9]{4}|[0-9]{6}|[0-9]{8}|[0-9]{10}", "'-', YYYY, YYYYMM, YYYYMMDD or YYYYMMDDHH",
    example="YYYY, YYYYMM, YYYYMMDD or YYYYMMDDHH, or 2013-05, 2013-05-12", asked=period)
def _mime(text):
    """A media type, category or class a person gives in the case profiles write them, without
    parameters ('Text/HTML; charset=UTF-8' -> 'text/html', 'HTML' -> 'html'), as the readers
    normalise a capture's."""
    words = text.split(";", 1)[0].split(None, 1)
    return words[0].lower() if words else text


MIME = Criterion(
    "mime", "mime", (Level("type", IDENTITY), Level("category", CATEGORY), Level("class", MIME_CLASS)), ("type",),
    _mime_levels, ("text/html", "text/*", "html"),
    r"[^ \t\n]+", "a media type without blanks", revisit=REVISIT_MIME,
    example="e.g. text/html, text/* or a class: %s" % ", ".join(MIME_CLASSES), asked=_mime)
STATUS = Criterion(
    "status", "status", (Level("class", CLASS), Level("code", IDENTITY)), ("class",),
    _status_levels, ("2xx", "200"),
    r"-|[1-5]xx|[0-9]{3}|unk", "'-', 'Nxx', a 3-digit code or 'unk'", revisit=UNKNOWN, example="e.g. 2xx or 404")

LANG = Criterion(
    "lang", "lang", (Level("code", IDENTITY),), ("code",),
    lambda field: ("code",), ("ara",),
    r"-|[a-z]{3}", "'-', an ISO 639-3 code or 'unk'", revisit=UNKNOWN, optional=True,
    example="a language, ISO 639-3 (ara) or a tag (ar-EG), or unk", asked=_language)



def _size(text):
    """A size class a person gives ('1k-10k', '1K-10K'), as profiles write it; a ValueError otherwise."""
    field = text.lower()
    if field not in normalise.SIZE_CLASSES:
        raise ValueError("not a size class (%s): %r" % (", ".join(normalise.SIZE_CLASSES), text[:40]))
    return field


def _depth(text):
    """A depth a person gives ('3', '10+', '12', 'unk'), as profiles write it; a ValueError otherwise."""
    if text.isdigit() and text.isascii():
        return normalise.depth_class(int(text))
    if text.lower() in ("10+", UNKNOWN):
        return text.lower()
    raise ValueError("not a depth (0 to 9, 10+ or unk): %r" % text[:40])


def _collection(text):
    """A collection a person gives: 'unk' (no collection, as profiles write it) and its key field as
    profiles write it (``crawl%202013``, ``%75nk`` for a collection named unk) are taken as they
    are, any other text is a name, percent-encoded (normalise.collection: ``crawl 2013``,
    ``100%``); a ValueError for an empty one."""
    if text == UNKNOWN or (text and normalise.collection(normalise.collection_name(text)) == text):
        return text
    field = normalise.collection(text.encode("utf-8", "surrogateescape"))
    if field is None:
        raise ValueError("not a collection: %r" % text[:40])
    return field


SIZE = Criterion(
    "size", "length", (Level("class", IDENTITY),), ("class",),
    lambda field: ("class",), ("1k-10k",),
    "-|" + "|".join(re.escape(c) for c in normalise.SIZE_CLASSES), "'-' or a size class (%s)"
    % ", ".join(normalise.SIZE_CLASSES), optional=True, example="a size class: %s" % ", ".join(normalise.SIZE_CLASSES),
    asked=_size, derive=normalise.size_class)
COLLECTION = Criterion(
    "collection", "collection", (Level("id", IDENTITY),), ("id",),
    lambda field: ("id",), ("crawl-2013",),
    r"[^ \t\n]+", "a collection without blanks (percent-encoded), or 'unk'", optional=True,
    example="a collection (its percent-encoded name) or unk", asked=_collection)
DEPTH = Criterion(
    "depth", "depth", (Level("hops", IDENTITY),), ("hops",),
    lambda field: ("hops",), ("2",),
    r"-|[0-9]|10\+|unk", "'-', 0 to 9, '10+' or 'unk'", optional=True,
    example="hops from the seed: 0 to 9, 10+ or unk", asked=_depth)

#: the criteria, in key order
CRITERIA = (DATETIME, MIME, STATUS, LANG, SIZE, COLLECTION, DEPTH)
#: the criteria of the package (their values come from its normalisers; a plugin's are checked: is_field)
BUILT_IN = CRITERIA
#: the longest value of a plugin's criterion (characters): a longer one is a counted skip
MAX_FIELD = 256
#: the criteria every profile key has
CORE = tuple(c for c in CRITERIA if not c.optional)

for _c in CRITERIA:
    assert _c.source in capture.Capture._fields, _c


def derived(compute):
    """A function giving compute(criteria) for the criteria registered now, computed again only
    when they change: what a module derives from the registry, read when it is used."""
    cache = {}

    def get():
        if cache.get("of") is not CRITERIA:
            cache.update(of=CRITERIA, value=compute(CRITERIA))
        return cache["value"]
    return get


def _field_pattern(c):
    return re.compile((r"\A(?:%s)\Z" % c.pattern).encode("ascii"))


_DERIVED = {
    "NAMES": derived(lambda chosen: tuple(c.name for c in chosen)),               # in key order
    "BY_NAME": derived(lambda chosen: {c.name: c for c in chosen}),
    "FIELD_PATTERNS": derived(lambda chosen: {c.name: _field_pattern(c) for c in chosen}),   # for bytes
}


def __getattr__(name):
    """NAMES, BY_NAME and FIELD_PATTERNS of the criteria registered now (_DERIVED)."""
    if name not in _DERIVED:
        raise AttributeError("module %r has no attribute %r" % (__name__, name))
    return _DERIVED[name]()


#: what a criterion's name looks like: it names a command-line option (--NAME), a query parameter
#: of serve and explore, a JSON member and a key field of !keys
NAME = re.compile(r"[a-z][a-z0-9_]{0,31}\Z")
#: the names a criterion may not have: the SURT's, and the names the commands that take one option
#: or parameter per criterion give their own options (query, lookup, overlap: with '-' as '_'),
#: query parameters (explore, serve) and answer members (serve), beside the criteria's
#: (tests/model/test_criterion_names.py holds the commands to it)
RESERVED = frozenset((
    "surt", "h", "help", "q", "quiet", "v", "verbose", "version",
    "a", "b", "breakdowns", "by", "feature", "file", "from", "group", "level", "lines", "profile", "range_from",
    "range_to", "series", "skip_bad_lines", "to", "top", "under", "uri",
    "sort", "limit", "levels",
    "url", "urlkey", "archives", "archive", "answer", "key", "frequency", "urim", "urir", "listed", "date",
    "score", "error", "errors", "asked", "left_out", "share_5xx", "language",
))


def register(criterion):
    """Add an optional criterion at the end of the key order (a plugin's: profiler.plugins). Its
    name must be new, match NAME and not be RESERVED, its source a capture field
    (profiler.model.capture.add_field), its levels of known projections, its pattern one that
    takes no blank; a ValueError otherwise."""
    global CRITERIA
    if not criterion.optional:
        raise ValueError("criterion %s: only optional criteria are added (a core one changes every profile)"
                         % criterion.name)
    name = criterion.name
    if not isinstance(name, str) or not NAME.match(name):
        raise ValueError("criterion %r: not a name (a lower-case ASCII letter, then at most 31 of a-z, 0-9, _)"
                         % (name if not isinstance(name, str) else name[:40],))
    if name in (c.name for c in CRITERIA) or name in RESERVED:
        raise ValueError("criterion %r: not a new name (%s)" % (
            name, "one the commands use for their own options, parameters or answers: criteria.RESERVED"
            if name in RESERVED else "a criterion has it"))
    if criterion.source not in capture.Capture._fields:
        raise ValueError("criterion %s: no capture field %r" % (criterion.name, criterion.source))
    if not criterion.levels or any(level.kind not in PROJECTIONS or level.name == ANY for level in criterion.levels):
        raise ValueError("criterion %s: levels of the projections %s" % (criterion.name, ", ".join(PROJECTIONS)))
    names = [level.name for level in criterion.levels]
    if any(not isinstance(n, str) or not NAME.match(n) for n in names) or len(set(names)) != len(names):
        raise ValueError("criterion %s: its levels need distinct names like a criterion's (a-z, then a-z, 0-9, _): "
                         "a policy, explore's levels=%s:LEVEL and the report name them" % (name, name))
    if any(level.kind == PREFIX and (level.n.__class__ is not int or level.n < 1) for level in criterion.levels):
        raise ValueError("criterion %s: a prefix level keeps 1 character or more" % name)
    if not criterion.default_levels or any(n not in names for n in criterion.default_levels):
        raise ValueError("criterion %s: its default levels %r are not among its levels (%s)"
                         % (name, criterion.default_levels, ", ".join(names)))
    _field_pattern(criterion)
    if criterion.revisit is not None and not is_field(criterion, criterion.revisit):
        raise ValueError("criterion %s: its revisit value %r is not a field of its pattern" % (name, criterion.revisit))
    CRITERIA = CRITERIA + (criterion,)
    return criterion


def plain_field(value):
    """Whether a value can stand as a key field, whatever its criterion: a str of 1 to MAX_FIELD
    characters, not '-' (any), without white space, control characters or invalid UTF-8, not
    starting '{'."""
    if value.__class__ is not str or not value or len(value) > MAX_FIELD or value == ANY_FIELD:
        return False
    return normalise.key_field(value.encode("utf-8", "surrogateescape")) == value and not value.startswith("{")


def is_field(c, value):
    """Whether a value of a plugin's criterion can be written as its key field: a plain_field
    whose field at each of its levels matches its pattern, and no field of which is one another
    level writes for other captures (shares_a_key), and whose field at each level is one its
    ``levels_of`` places at that level (a line that readers take for no key of its policy: '/x'
    at a CATEGORY level whose levels_of says a '/' is the other level's; '-', any, of a PREFIX of
    '-x'). The map side counts a capture of another value as a skip
    (profiler.job.cells.CellKeys.bad_value)."""
    if not plain_field(value):
        return False
    pattern = _field_pattern(c)
    for level in c.levels:
        field = level.field(value)
        if not field or not pattern.match(field.encode("utf-8", "surrogateescape")) or \
                level.name not in c.field_levels(field):
            return False
    return len(c.levels) < 2 or not shares_a_key(c.levels, value)


#: what the values a level writes one field for are (preimage): that one value; the values that
#: start with a text; those whose first character is not 1-5 (CLASS's 'unk'); a mime class's types
_ONE, _STARTING, _NOT_1_TO_5, _OF_CLASS = 0, 1, 2, 3


def _preimage(level, field):
    """The values whose field at a level is this field, as (what, text) (None: no value has it)."""
    kind = level.kind
    if kind == IDENTITY:
        return _ONE, field
    if kind == PREFIX:
        return (_ONE, field) if len(field) < level.n else (_STARTING, field) if len(field) == level.n else None
    if kind == CATEGORY:
        i = field.find("/")
        if i <= 0:
            return _ONE, field
        return (_STARTING, field[:i + 1]) if field == field[:i] + "/*" else None
    if kind == CLASS:
        if field == UNKNOWN:
            return _NOT_1_TO_5, ""
        return (_STARTING, field[0]) if len(field) == 3 and field[0] in "12345" and field[1:] == "xx" else None
    if field == UNKNOWN:                                # MIME_CLASS
        return _ONE, field
    return (_OF_CLASS, field) if field in MIME_CLASSES else None


def _breadth(found):
    """An order of preimages by how many values they may hold: one value, then a longer start, ..."""
    what, text = found
    return (what, -len(text)) if what == _STARTING else (what, 0)


@functools.lru_cache(maxsize=1 << 14)
def shares_a_key(levels, value):
    """Whether a value's field at one level is also a field another level writes for other values,
    so that one key would count two sets of captures (criterion levels as a tuple): 'text/*' of
    an IDENTITY level beside a CATEGORY ('text/*' counts every text/...), '2xx' beside a CLASS,
    'ab' beside a PREFIX of 2 ('ab' counts 'abc' too), 'html' beside a MIME_CLASS. Of the two, the
    value whose field counts fewer values is refused, so the other keeps the key. 'unk' may be
    both a value and CLASS's class of what is not 1xx-5xx, as a status's is (docs/policies.md:
    one key text, two levels)."""
    for a in levels:
        field = a.field(value)
        mine = _preimage(a, field)
        for b in levels:
            if b is a:
                continue
            theirs = _preimage(b, field)
            if theirs is None or theirs == mine or (mine == (_ONE, UNKNOWN) and theirs[0] == _NOT_1_TO_5):
                continue
            if _breadth(mine) <= _breadth(theirs):
                return True
    return False


def not_registered(names):
    """What a message adds for names that are no criterion registered in this process ('' when
    each is one): a criterion a plugin adds exists only where its module is named in
    ARCHIVE_PROFILER_PLUGINS, so a policy or profile of it is refused elsewhere."""
    unknown = [n for n in names if isinstance(n, str) and n != "surt" and n not in _DERIVED["BY_NAME"]()]
    if not unknown:
        return ""
    return "; %s: no such criterion here (a plugin's? name its module in %s)" % (
        ", ".join(unknown)[:80], contract.PLUGINS_ENV)


def of_levels(names):
    """The criteria of the keys of a policy whose ``levels`` names these criteria: every core
    one, and the optional ones it names, in key order."""
    return tuple(c for c in CRITERIA if not c.optional or c.name in names)


def of_keys(fields):
    """The criteria of a profile's !keys (['surt', 'datetime', ...]) in the file's order, or None
    when they are not 'surt' then every core criterion and some optional ones, each once. Writers
    use the registry's order; readers find each field by its name (spec section 2), so another
    order is read too."""
    fields = list(fields)
    by_name = _DERIVED["BY_NAME"]()
    if not fields or fields[0] != "surt" or not all(f in by_name for f in fields[1:]):
        return None
    chosen = tuple(by_name[f] for f in fields[1:])
    if len(set(chosen)) != len(chosen) or not all(c in chosen for c in CORE):
        return None
    return chosen


class KeyLayout:
    """How the keys of one profile split into fields: 'surt' and its criteria (its !keys)."""

    def __init__(self, chosen=CORE):
        self.criteria = tuple(chosen)
        self.names = tuple(c.name for c in self.criteria)
        self.fields = ("surt",) + self.names
        self.Key = namedtuple("Key", self.fields)
        self.patterns = {c.name: _field_pattern(c) for c in self.criteria}

    def split(self, key):
        """A key (str or bytes) -> Key, or None when it has not one field per key field."""
        fields = key.split(b" " if isinstance(key, bytes) else " ")
        return self.Key(*fields) if len(fields) == len(self.fields) else None

    def __eq__(self, other):
        return isinstance(other, KeyLayout) and self.names == other.names

    def __hash__(self):
        return hash(self.names)


#: the layout of a profile with the core criteria only
CORE_LAYOUT = KeyLayout(CORE)
#: a profile key split into its fields, by name (core criteria)
Key = CORE_LAYOUT.Key


def split_key(key, layout=CORE_LAYOUT):
    """A key (str or bytes) -> Key, or None when it has not one field per key field."""
    return layout.split(key)


def others_any(key, name=None):
    """Whether every criterion's field of a Key but the named one is '-' (any)."""
    return all(field in ("-", b"-") for c, field in zip(key._fields[1:], key[1:]) if c != name)


def suffix(chosen, values, combo):
    """The key suffix ('datetime mime status ...') of a capture's values (one per criterion of
    chosen) at a combination of levels (one per criterion)."""
    return " ".join(c.field(v, level) for c, v, level in zip(chosen, values, combo))
