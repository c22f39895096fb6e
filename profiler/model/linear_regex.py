"""Regular expressions matched in time linear in the text, whatever the pattern (no backtracking).

A user's pattern (``--collection-pattern``) runs over every file name of a run; Python's own
engine backtracks, and a pattern such as ``(a+)+$`` takes exponential time on some names. This
one compiles the pattern Python's parser reads (``re._parser``: the same syntax and flags) into a
program of a Thompson NFA and runs it as a Pike VM: every step keeps at most one thread per
instruction, so a search costs at most (instructions x characters) steps. Threads are kept in
priority order, so the match and its groups are those Python's ``re.search`` finds.

What a linear engine cannot do, or where Python's answer would depend on its backtracking, is
refused with a ``PatternError`` (one line): back-references, look-around, conditionals, atomic
groups and possessive repeats, and a repeat of more than once over something that can match
nothing (``(a*)*``). A pattern is at most MAX_PATTERN characters and compiles to at most
MAX_PROGRAM instructions; the text searched is at most MAX_TEXT characters (the caller cuts it).
"""

import re

try:                                            # Python 3.11 and later
    from re import _constants as C, _parser as sre_parse
except ImportError:                             # pragma: no cover - older Pythons
    import sre_constants as C
    import sre_parse

from profiler.errors import UserError

#: the longest pattern taken
MAX_PATTERN = 500
#: the most instructions a pattern compiles to (a repeat {n} copies its body n times)
MAX_PROGRAM = 2000
#: the most characters of a text a caller should search
MAX_TEXT = 1000

CHAR, SPLIT, JMP, SAVE, ASSERT, MATCH = range(6)
_FLAGS = re.IGNORECASE | re.DOTALL | re.ASCII | re.MULTILINE
_CATEGORIES = {
    C.CATEGORY_DIGIT: r"\d", C.CATEGORY_NOT_DIGIT: r"\D", C.CATEGORY_SPACE: r"\s",
    C.CATEGORY_NOT_SPACE: r"\S", C.CATEGORY_WORD: r"\w", C.CATEGORY_NOT_WORD: r"\W",
}
_REFUSED = {
    C.GROUPREF: "back-references", C.GROUPREF_EXISTS: "conditional groups", C.ASSERT: "look-around",
    C.ASSERT_NOT: "look-around",
}
for _name, _what in (("ATOMIC_GROUP", "atomic groups"), ("POSSESSIVE_REPEAT", "possessive repeats")):
    if hasattr(C, _name):
        _REFUSED[getattr(C, _name)] = _what


class PatternError(UserError):
    """A pattern this engine does not take (one-line message)."""


class Pattern:
    """A compiled pattern: ``search(text)`` -> (start, end) of its first group in the leftmost
    match, as re.search finds it; None when it does not match or the group took no part."""

    def __init__(self, text):
        if not isinstance(text, str) or len(text) > MAX_PATTERN:
            raise PatternError("a pattern of at most %d characters" % MAX_PATTERN)
        try:
            parsed = sre_parse.parse(text, 0)
        except (re.error, RecursionError, OverflowError) as e:
            raise PatternError("not a regular expression: %s" % (str(e).splitlines()[0] if str(e) else e))
        if parsed.state.groups < 2:
            raise PatternError("the pattern needs a group: its first group, (...), is the value")
        self.text = text
        self.prog = []
        self.tests = []             # per CHAR test: (compiled one-character regex, {char: bool})
        self._tests_by_text = {}
        self._emit_sequence(parsed, parsed.state.flags & _FLAGS)
        self._add((MATCH,))
        self._cache = {}

    # ------------------------------------------------------------------ compiling

    def _add(self, op):
        if len(self.prog) >= MAX_PROGRAM:
            raise PatternError("the pattern is too large (at most %d steps: a repeat {n} counts n times)"
                               % MAX_PROGRAM)
        self.prog.append(op)
        return len(self.prog) - 1

    def _emit_sequence(self, items, flags):
        for op, av in items:
            self._emit(op, av, flags)

    def _emit(self, op, av, flags):
        if op in _REFUSED:
            raise PatternError("%s are not taken (a pattern here runs in linear time)" % _REFUSED[op])
        if op in (C.LITERAL, C.NOT_LITERAL, C.ANY, C.IN):
            self._add((CHAR, self._test(op, av, flags)))
        elif op is C.SUBPATTERN:
            group, add, remove, body = av
            inner = (flags | add) & ~remove & _FLAGS
            if group == 1:
                self._add((SAVE, 0))
            self._emit_sequence(body, inner)
            if group == 1:
                self._add((SAVE, 1))
        elif op is C.BRANCH:
            self._emit_branch(av[1], flags)
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT):
            self._emit_repeat(av, flags, greedy=op is C.MAX_REPEAT)
        elif op is C.AT:
            self._add((ASSERT, av, flags))
        else:
            raise PatternError("%s is not taken" % str(op).lower())

    def _emit_branch(self, alternatives, flags):
        jumps = []
        for i, alternative in enumerate(alternatives):
            if i < len(alternatives) - 1:
                split = self._add(None)
                self._emit_sequence(alternative, flags)
                jumps.append(self._add(None))
                self.prog[split] = (SPLIT, split + 1, len(self.prog))
            else:
                self._emit_sequence(alternative, flags)
        for j in jumps:
            self.prog[j] = (JMP, len(self.prog))

    def _emit_repeat(self, av, flags, greedy):
        low, high, body = av
        unbounded = high == C.MAXREPEAT
        if (unbounded or high > 1) and _nullable(body):
            raise PatternError("a repeat of something that can match nothing is not taken (such as (a*)*)")
        for _ in range(low):
            self._emit_sequence(body, flags)
        if unbounded:
            loop = self._add(None)
            self._emit_sequence(body, flags)
            self._add((JMP, loop))
            self.prog[loop] = _split(loop + 1, len(self.prog), greedy)
            return
        holes = []
        for _ in range(high - low):
            split = self._add(None)
            holes.append(split)
            self._emit_sequence(body, flags)
        for split in holes:
            self.prog[split] = _split(split + 1, len(self.prog), greedy)

    def _test(self, op, av, flags):
        """The index of a one-character test, compiled with Python's engine (a single character
        is matched in constant time)."""
        if op is C.LITERAL:
            text = re.escape(chr(av))
        elif op is C.NOT_LITERAL:
            text = "[^%s]" % re.escape(chr(av))
        elif op is C.ANY:
            text = "."
        else:
            parts, negate = [], ""
            for kind, value in av:
                if kind is C.NEGATE:
                    negate = "^"
                elif kind is C.LITERAL:
                    parts.append(re.escape(chr(value)))
                elif kind is C.RANGE:
                    parts.append("%s-%s" % (re.escape(chr(value[0])), re.escape(chr(value[1]))))
                elif kind is C.CATEGORY and value in _CATEGORIES:
                    parts.append(_CATEGORIES[value])
                else:
                    raise PatternError("%s in a character set is not taken" % str(kind).lower())
            text = "[%s%s]" % (negate, "".join(parts)) if parts else ("(?s:.)" if negate else "(?!)")
        key = (text, flags)
        found = self._tests_by_text.get(key)
        if found is None:
            found = self._tests_by_text[key] = len(self.tests)
            self.tests.append((re.compile(text, flags & ~re.MULTILINE), {}))
        return found

    # ------------------------------------------------------------------ running

    def first_group(self, text):
        """The text of the first group of the leftmost match in text, or None."""
        found = self._cache.get(text)
        if found is None:
            span = self.search(text)
            found = (span is not None and text[span[0]:span[1]],)
            if len(self._cache) > 10000:
                self._cache.clear()
            self._cache[text] = found
        return found[0] if found[0] is not False else None

    def search(self, text):
        """(start, end) of the first group in the leftmost match in text, or None."""
        n = len(text)
        current = []
        self._follow(current, set(), 0, (None, None), 0, text)
        matched = None
        for pos in range(n + 1):
            following, seen = [], set()
            for pc, caps in current:
                op = self.prog[pc]
                if op[0] == MATCH:
                    matched = caps
                    break               # the threads after it have a lower priority
                if pos < n and self._char(op[1], text[pos]):
                    self._follow(following, seen, pc + 1, caps, pos + 1, text)
            if matched is None and pos < n:
                self._follow(following, seen, 0, (None, None), pos + 1, text)
            current = following
            if not current and matched is not None:
                break
        if matched is None or matched[0] is None or matched[1] is None:
            return None
        return matched

    def _char(self, index, ch):
        pattern, known = self.tests[index]
        found = known.get(ch)
        if found is None:
            found = known[ch] = pattern.fullmatch(ch) is not None
        return found

    def _follow(self, out, seen, pc, caps, pos, text):
        """Add the threads that pc reaches at pos without reading a character, in priority order."""
        stack = [(pc, caps)]
        prog = self.prog
        while stack:
            pc, caps = stack.pop()
            if pc in seen:
                continue
            seen.add(pc)
            op = prog[pc]
            kind = op[0]
            if kind == JMP:
                stack.append((op[1], caps))
            elif kind == SPLIT:
                stack.append((op[2], caps))
                stack.append((op[1], caps))
            elif kind == SAVE:
                stack.append((pc + 1, (pos, caps[1]) if op[1] == 0 else (caps[0], pos)))
            elif kind == ASSERT:
                if _holds(op[1], op[2], text, pos, self):
                    stack.append((pc + 1, caps))
            else:
                out.append((pc, caps))


def _split(next_op, after, greedy):
    return (SPLIT, next_op, after) if greedy else (SPLIT, after, next_op)


def _nullable(items):
    """Whether a sequence of parsed items can match the empty string."""
    return all(_item_nullable(op, av) for op, av in items)


def _item_nullable(op, av):
    if op in (C.LITERAL, C.NOT_LITERAL, C.ANY, C.IN):
        return False
    if op is C.SUBPATTERN:
        return _nullable(av[3])
    if op is C.BRANCH:
        return any(_nullable(alternative) for alternative in av[1])
    if op in (C.MAX_REPEAT, C.MIN_REPEAT):
        return av[0] == 0 or _nullable(av[2])
    return True                                  # AT: zero width


_WORD = {}


def _is_word(ch, ascii_only):
    key = (ch, ascii_only)
    found = _WORD.get(key)
    if found is None:
        found = _WORD[key] = re.fullmatch(r"\w", ch, re.ASCII if ascii_only else 0) is not None
    return found


def _holds(at, flags, text, pos, pattern):
    """Whether a zero-width assertion holds at pos of text."""
    n = len(text)
    multiline = flags & re.MULTILINE
    if at is C.AT_BEGINNING:
        return pos == 0 or bool(multiline and text[pos - 1] == "\n")
    if at is C.AT_BEGINNING_STRING:
        return pos == 0
    if at is C.AT_END:
        return pos == n or (pos == n - 1 and text[pos] == "\n") or bool(multiline and text[pos] == "\n")
    if at is C.AT_END_STRING:
        return pos == n
    if at in (C.AT_BOUNDARY, C.AT_NON_BOUNDARY):
        if n == 0:
            return False
        ascii_only = bool(flags & re.ASCII)
        before = pos > 0 and _is_word(text[pos - 1], ascii_only)
        after = pos < n and _is_word(text[pos], ascii_only)
        return (before != after) == (at is C.AT_BOUNDARY)
    raise PatternError("the assertion %s is not taken" % str(at).lower())
