"""What a nightly run owns, and so may remove: nothing else is ever deleted.

- The output folder's ``.NAME.owner`` marker names the state folder of the config that
  publishes NAME there; a second config with the same output folder and name is refused
  instead of pruning the first one's versions.
- Scratch files live in a work folder the run creates (``STATE_DIR/.work-XXXXXXXX``) and marks
  with ``WORK_MARKER``; only marked work folders are removed.
- The URI-R and digest sets are recorded in ``sets-ledger.json`` as they are placed; only set
  files the ledger lists are removed.
"""

import os
import re
import shutil
import tempfile

import orjson

from profiler.errors import UserError
from profiler.files.output import write_bytes_atomic

WORK_PREFIX = ".work-"
WORK_MARKER = ".archive-profiler-nightly-work"
LEDGER = "sets-ledger.json"
SET_NAME = re.compile(r"^(urirs|digests)-\d{8}T\d{6}Z(?:_\d+)?\.gz$")


def owner_marker(output_dir, name):
    return os.path.join(output_dir, ".%s.owner" % name)


def claim_output(output_dir, name, state_dir):
    """Write or check the owner marker: UserError when another config publishes NAME here."""
    marker = owner_marker(output_dir, name)
    me = os.path.realpath(state_dir)
    try:
        with open(marker, "rb") as f:
            owner = orjson.loads(f.read()).get("state_dir")
    except FileNotFoundError:
        write_bytes_atomic(marker, orjson.dumps({"state_dir": me}) + b"\n")
        return
    except (OSError, ValueError, AttributeError):
        raise UserError("%s is not an owner marker this tool wrote: move it away if no other "
                        "nightly config publishes %r in %s" % (marker, name, output_dir))
    if owner != me:
        raise UserError("%s/%s-*.cdxj belongs to the nightly config whose state folder is %s (see %s); "
                        "give this config another name or output_dir" % (output_dir, name, owner, marker))


def make_work_folder(state_dir):
    """A fresh, marked scratch folder in the state folder."""
    folder = tempfile.mkdtemp(prefix=WORK_PREFIX, dir=state_dir)
    with open(os.path.join(folder, WORK_MARKER), "wb"):
        pass
    return folder


def is_work_folder(path):
    return (os.path.basename(path).startswith(WORK_PREFIX) and not os.path.islink(path)
            and os.path.isdir(path) and os.path.isfile(os.path.join(path, WORK_MARKER)))


def remove_work_folders(state_dir):
    """Remove the marked work folders earlier runs left. Returns their names."""
    removed = []
    for entry in sorted(os.listdir(state_dir)):
        path = os.path.join(state_dir, entry)
        if is_work_folder(path):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(entry)
    return removed


def remove_work_folder(folder):
    if is_work_folder(folder):
        shutil.rmtree(folder, ignore_errors=True)


class SetsLedger:
    """The set files this tool placed in the sets folder."""

    def __init__(self, state_dir, sets_dir):
        self.path = os.path.join(state_dir, LEDGER)
        self.sets_dir = sets_dir

    def names(self):
        try:
            with open(self.path, "rb") as f:
                names = orjson.loads(f.read())
        except FileNotFoundError:
            return set()
        except (OSError, ValueError) as e:
            raise UserError("%s is unreadable (%s): move it away (set files it listed are then kept)"
                            % (self.path, e))
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise UserError("%s: expected a list of file names" % self.path)
        return set(names)

    def _write(self, names):
        write_bytes_atomic(self.path, orjson.dumps(sorted(names)) + b"\n")

    def record(self, name):
        """Call before the set file is placed, so that a kill in between leaves it removable."""
        self._write(self.names() | {name})

    def adopt(self, names):
        """Add set files the committed state names (they are this tool's)."""
        known = self.names()
        if not known.issuperset(names):
            self._write(known | set(names))

    def prune(self, keep):
        """Remove listed set files not in keep (never anything the ledger does not list)."""
        names, removed = self.names(), []
        for name in sorted(names - set(keep)):
            path = os.path.join(self.sets_dir, name)
            if SET_NAME.match(name) and os.path.isfile(path) and not os.path.islink(path):
                os.unlink(path)
                removed.append(name)
            if not os.path.lexists(path):
                names.discard(name)
        self._write(names)
        return removed


def not_own_files(files, output_dir, name, state_dir):
    """(files, dropped): the inputs that are not this config's outputs (NAME-* and .NAME* in the
    output folder) nor anything under its state folder."""
    out = os.path.realpath(output_dir)
    state = os.path.realpath(state_dir) + os.sep
    kept, dropped = [], []
    for path in files:
        if "://" in path:
            kept.append(path)
            continue
        real = os.path.realpath(path)
        folder, base = os.path.split(real)
        own = real.startswith(state) or (folder == out and base.startswith((name + "-", "." + name)))
        (dropped if own else kept).append(path)
    return kept, dropped
