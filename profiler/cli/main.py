"""The `archive-profiler` console script: one argparse subcommand per module of profiler.cli.commands."""

import argparse
import copy
import importlib
import logging
import os
import sys

from profiler import __version__, plugins
from profiler.cli import PROG, stdio
from profiler.io import signalmask
from profiler.cli.commands import SUBCOMMANDS
from profiler.errors import HungUp, RunError, Terminated, UserError, printable


#: the commands whose -o is a profile or map (searched in place, so never compressed)
PROFILES_WRITTEN = ("profile", "ukvs", "merge", "compact")


#: the commands that take an option per criterion of the registry (profiler.cli.arguments.add_criteria_options)
CRITERIA_COMMANDS = ("query", "lookup", "overlap")


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line with a hint (not the usage block)."""

    def error(self, message):
        message = " ".join(message.split())
        hint = self._option_hint(message) or self._plugin_hint(message)
        self.exit(2, "%s: error: %s%s (try '%s --help')\n" % (self.prog, printable(message), hint, self.prog))

    def _option_hint(self, message):
        """'; languages: --policy lang ...' for an option a newcomer guesses for another command's
        or another name (COMMAND_GUESSES)."""
        if not message.startswith("unrecognized arguments:"):
            return ""
        guesses = COMMAND_GUESSES.get(self.prog.rsplit(" ", 1)[-1], {})
        for w in message.split()[2:]:
            if w.split("=", 1)[0] in guesses:
                return "; " + guesses[w.split("=", 1)[0]]
        return ""

    def _plugin_hint(self, message):
        """'; a plugin's criterion? ...' for an option or --group value that could name a criterion
        the registry does not hold now: its plugin is not loaded (profiler.plugins)."""
        from profiler import contract
        from profiler.model import criteria
        if self.prog.rsplit(" ", 1)[-1] not in CRITERIA_COMMANDS:
            return ""
        names = []
        if message.startswith("unrecognized arguments:"):
            names = [w[2:].split("=", 1)[0].replace("-", "_") for w in message.split()[2:] if w.startswith("--")]
        elif message.startswith("argument --group: invalid choice:"):
            names = [message.split("'")[1]] if message.count("'") >= 2 else []
        for n in names:
            if n in GUESSES:
                return "; %s" % GUESSES[n][message.startswith("argument --group")]
        if any(criteria.NAME.match(n) and n not in criteria.NAMES and n not in criteria.RESERVED for n in names):
            return "; a plugin's criterion? name its module in %s" % contract.PLUGINS_ENV
        return ""


_PERIOD = ("a year or month is --datetime (--datetime 2013, --datetime 2013-05)",
           "by year: --group datetime (or --series year)")
_SURT = ("a host, domain or URL is query's --surt in its SURT form (--surt 'com,cnn)/*' is the host "
         "cnn.com, 'com,cnn,*' its subdomains); lookup takes the URL after the file",
         "by host: --group surt --level host (or domain, tld)")

_LANG = "languages: --policy lang (with --detect-language for HTML that declares none)"
_CORES = "processes: -r local --cores N"
_HOST = "the address to listen on: --host (e.g. --host 0.0.0.0)"
#: per command, an option a newcomer guesses and what to give instead
COMMAND_GUESSES = {
    "profile": {"--lang": _LANG, "--language": _LANG, "--languages": _LANG, "--jobs": _CORES, "-j": _CORES,
                "--workers": _CORES, "--processes": _CORES, "--threads": _CORES},
    "serve": {"--bind": _HOST, "--listen": _HOST, "--address": _HOST},
    "explore": {"--bind": _HOST, "--listen": _HOST, "--address": _HOST},
}

#: what a newcomer's guessed option (or --group value) names: (its option's hint, its --group hint)
GUESSES = dict(
    [(n, _PERIOD) for n in ("year", "month", "day", "period", "time", "timestamp")]
    + [(n, _SURT) for n in ("host", "domain", "site", "tld", "url", "uri", "urlkey", "prefix")]
    + [(n, ("the MIME type is --mime", "--group mime")) for n in ("mimetype", "type", "content_type")]
    + [(n, ("the HTTP status is --status", "--group status")) for n in ("statuscode", "code")]
    + [(n, ("the language is --lang (an ISO 639-3 code)", "--group lang")) for n in ("language", "languages")])


def _commands(names=SUBCOMMANDS):
    return [importlib.import_module("profiler.cli.commands." + name) for name in names]


def build_parser(argv=None):
    """The parser of every subcommand; of only the one argv names first, when it names one (the
    command modules and what they import are a good part of a run's start)."""
    parser = _Parser(prog=PROG, description="Exact archive profiles (CDXJ) and "
                                     "MementoMaps of web archive holdings, and the tools to use them.")
    parser.add_argument("--version", action="version", version="%s %s" % (PROG, __version__))
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    parser.subcommands = sub.choices
    names = [argv[0]] if argv and argv[0] in SUBCOMMANDS else SUBCOMMANDS
    for module in _commands(names):
        p = sub.add_parser(module.NAME, help=_text(module.HELP),
                           description=_text(getattr(module, "DESCRIPTION", module.HELP)))
        module.add_arguments(p)
        p.add_argument("-q", "--quiet", action="store_true", help="only errors")
        p.add_argument("-v", "--verbose", action="store_true", help="also debug output")
        p.set_defaults(module=module)
    return parser


def parse(parser, argv):
    """The arguments of argv: a subcommand's options may come before, between or after its
    positionals (argparse's intermixed parsing; the top-level parser only knows the command)."""
    if argv and argv[0] in SUBCOMMANDS:
        sub = parser.subcommands[argv[0]]
        _refuse_single_dash_output(sub, argv[1:])
        args = sub.parse_intermixed_args(argv[1:])
        args.command = argv[0]
        return args
    return parser.parse_args(argv)


def _refuse_single_dash_output(parser, argv):
    """A usage error for '-out FILE' or '-output FILE' (one dash): argparse reads it as '-o ut'
    or '-o utput', writes a file named 'ut' and takes FILE for an input."""
    if "-o" not in parser._option_string_actions:
        return
    for token in argv:
        if token.startswith("-ou"):
            parser.error("%s is read as -o %s: write -o FILE or --output FILE" % (token[:40], token[2:40]))


def _text(text):
    """A help text, or a function giving it (one that reads a registry when the parser is built)."""
    return text() if callable(text) else text


def split_extra(argv):
    """(arguments, arguments after '--'): the ones after '--' are passed on unchanged."""
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1:]
    return argv, []


def main(argv=None):
    stdio.hold_closed_streams()           # before any file is opened: none takes fd 0, 1 or 2
    if "_ARGCOMPLETE" in os.environ:      # a shell asks for completions (profiler.cli.commands.completion)
        import argcomplete
        argcomplete.autocomplete(build_parser())
    argv, extra = split_extra(list(sys.argv[1:] if argv is None else argv))
    refused = stdio.refuse_stderr_named(argv + extra, PROG)
    if refused:
        return refused
    previous = _raise_on_sigterm()
    args = None
    try:
        with signalmask.held():           # Ctrl-C while extensions load: delivered once they have
            plugins.load()                # before the options: a plugin's criterion has its own
            parser = build_parser(argv)
        args = parse(parser, argv)
        if not args.command:
            parser.print_help()
            return 2
        if extra and not getattr(args.module, "TAKES_EXTRA", False):
            parser.error("%s takes no arguments after '--'" % args.command)
        args.extra = extra
        from profiler.cli.arguments import not_utf8
        bad = not_utf8(args)
        if bad:
            parser.subcommands[args.command].error("argument %s: not UTF-8: %r" % (bad[0], bad[1][:40]))
        if args.command in PROFILES_WRITTEN:
            from profiler.files.outfiles import refuse_compressed_name
            refuse_compressed_name(getattr(args, "output", None))
        _logging(args)
        return args.module.run(args) or 0
    except UserError as e:
        print("%s: error: %s" % (PROG, printable(str(e))), file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:
        print("%s: %s (%s)" % (PROG, "hung up" if isinstance(e, HungUp) else "terminated" if isinstance(e, Terminated)
                               else "interrupted", _outputs_after_error(args)), file=sys.stderr)
        return 129 if isinstance(e, HungUp) else 143 if isinstance(e, Terminated) else 130
    except BrokenPipeError:
        # e.g. `archive-profiler query ... | head`: not an error
        sys.stderr.close()
        return 0
    except MemoryError:
        print("%s: error: out of memory (%s)" % (PROG, _outputs_after_error(args)), file=sys.stderr)
        return 1
    except (RunError, OSError) as e:
        print("%s: error: %s (%s)" % (PROG, printable(str(e)), _outputs_after_error(args)), file=sys.stderr)
        return 1
    except Exception as e:
        if not _raised_by_import(e):
            raise
        print("%s: error: %s" % (PROG, printable(_not_loaded(e))), file=sys.stderr)
        return 2
    finally:
        _restore_sigterm(previous)


def _raised_by_import(e):
    """Whether e came from a module that does not load (a broken or missing dependency, a bad
    module on PYTHONPATH): an ImportError, or any exception raised while a module was imported."""
    import traceback
    return isinstance(e, ImportError) or any(f.name == "<module>" for f in traceback.extract_tb(e.__traceback__))


def _not_loaded(e):
    """One line for an exception raised while a module was imported: what, and where from."""
    import traceback
    frames = traceback.extract_tb(e.__traceback__)
    where = e.filename if isinstance(e, SyntaxError) and e.filename else \
        next((f.filename for f in reversed(frames) if not f.filename.startswith("<")), None)
    what = "%s: %s" % (type(e).__name__, (e.msg if isinstance(e, SyntaxError) else str(e) or " ").splitlines()[0])
    return "cannot start: a module does not load (%s%s); reinstall archive-profiler's dependencies, or " \
           "check PYTHONPATH" % (what.rstrip(": "), ", in %s" % where if where else "")


#: commands whose answer is written to standard output (the others write files, or nothing)
ANSWER_ON_STDOUT = frozenset(("diff", "overlap", "lookup", "query", "validate", "completion"))


def _outputs_after_error(args):
    """What a command stopped by an error leaves behind: its output files are written atomically,
    so they are unchanged; an answer on standard output may have been cut short."""
    if args is not None and (getattr(args, "command", None) in ANSWER_ON_STDOUT
                             or getattr(args, "output", None) == "-"):
        return "the answer on standard output may be incomplete"
    return "the previous output, if any, is unchanged"


def _raise_on_sigterm():
    """SIGTERM raises Terminated in the main thread, and SIGHUP HungUp unless it is ignored
    (nohup): a run then cleans up as on Ctrl-C. The handlers they replace."""
    import signal
    import threading
    if threading.current_thread() is not threading.main_thread():
        return None

    def handler(signum, frame):
        raise Terminated()

    def hangup(signum, frame):
        raise HungUp()
    previous = {signal.SIGTERM: signal.signal(signal.SIGTERM, handler)}
    if signal.getsignal(signal.SIGHUP) == signal.SIG_DFL:
        previous[signal.SIGHUP] = signal.signal(signal.SIGHUP, hangup)
    return previous


def _restore_sigterm(previous):
    if previous is not None:
        import signal
        for signum, was in previous.items():
            signal.signal(signum, was)


def console_main():
    """The `archive-profiler` console script: main() with a cheaper start (profiler.runtime.startup)
    and a cheaper end (_cheaper_exit)."""
    from profiler.runtime import startup
    startup.use_stdlib_distutils()
    code = main()
    _cheaper_exit()
    sys.exit(code)


def _cheaper_exit():
    """Leave the objects that live to the end out of the collector's passes at the interpreter's
    exit: they are freed as their references go, but not traversed once more for cycles (a good
    part of a short run's exit). Outputs are closed by then, atexit handlers and finalizers of
    freed objects still run."""
    import gc
    gc.freeze()


def _logging(args):
    level = logging.ERROR if args.quiet else logging.DEBUG if args.verbose else logging.INFO
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_PrintableFormatter("%(name)s: %(message)s", tracebacks=args.verbose))
    for name in ("archive-profiler", "mrjob"):
        logger = logging.getLogger(name)
        logger.handlers[:] = [handler]
        logger.setLevel(level)
        logger.propagate = False
    # mrjob's own lines (config search, temp folders, steps, counters) only with -v, its warnings
    # and errors always; its step lines still reach the progress bar (profiler.job.progress)
    mrjob_handler = logging.StreamHandler(sys.stderr)
    mrjob_handler.setFormatter(handler.formatter)
    mrjob_handler.setLevel(level if args.verbose else max(level, logging.WARNING))
    logging.getLogger("mrjob").handlers[:] = [mrjob_handler]
    conf = logging.getLogger("mrjob.conf")
    conf.filters[:] = [] if args.verbose else [_NoConfigNotes()]
    for name in ("mrjob.inline", "mrjob.local"):
        logging.getLogger(name).filters[:] = [] if args.verbose else [_NoReadingFromNote()]


class _PrintableFormatter(logging.Formatter):
    """Log lines with their control characters escaped: the file names they quote stay on one
    line and send the terminal nothing to obey. Without -v a record's traceback is left out
    (mrjob logs one when it cannot remove its temp folder, e.g. out of descriptors): its
    message is the line."""

    def __init__(self, fmt, tracebacks=False):
        super().__init__(fmt)
        self.tracebacks = tracebacks

    def format(self, record):
        if not self.tracebacks and (record.exc_info or record.exc_text or record.stack_info):
            record = copy.copy(record)
            record.exc_info = record.exc_text = record.stack_info = None
        return "\n".join(printable(line) for line in super().format(record).split("\n"))


class _NoReadingFromNote(logging.Filter):
    """mrjob's "Error while reading from TASK-INPUT:" lines of a failed task: the error line that
    follows names the cause; the task's input file in mrjob's temp folder, gone by then, says
    nothing (see -v)."""

    def filter(self, record):
        return not record.getMessage().strip().startswith("Error while reading from")


class _NoConfigNotes(logging.Filter):
    """mrjob's "No configs found/specified" notes: the bundled defaults are meant (see -v)."""

    def filter(self, record):
        return not record.getMessage().startswith("No configs")
