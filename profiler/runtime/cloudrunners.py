"""mrjob's EMR and Dataproc runners (aliases 'emr', 'dataproc'), with the package's source archive
named by the package's version.

The confs' bootstraps install the package on every node from its source archive,
``dist/archive_profiler-{version}.tar.gz#``: ``{version}`` is this package's version
(``profiler.__version__``), filled in here, so that a version bump never ships the archive of an
older one. A bootstrap naming an archive of another version (a conf copied before the bump), or an
archive that is not there, is refused before any cluster starts (one line, exit status 2): mrjob
would upload the old one, or fail at upload with a traceback.
"""

import os
import re

from mrjob.dataproc import DataprocJobRunner
from mrjob.emr import EMRJobRunner
from mrjob.parse import is_uri

import profiler
from profiler.errors import UserError

#: where a bootstrap command says the version
VERSION_MARK = "{version}"
#: a source archive of the package in a bootstrap command, uploaded by mrjob (the '#' after it)
SOURCE_ARCHIVE = re.compile(r"(\S*archive[_-]profiler-([^/\s#]*)\.tar\.gz)#")
#: how to make the archive (in a checkout of the package)
BUILD = "python setup.py -q sdist -d dist"


def bootstrap_commands(commands, version=None):
    """commands with VERSION_MARK replaced by version; UserError for a source archive of the
    package of another version, or one not found on this machine (a URI is not checked).
    version: the package's (profiler.__version__) unless given."""
    version = profiler.__version__ if version is None else version
    found = []
    for command in commands:
        command = command.replace(VERSION_MARK, version)
        for match in SOURCE_ARCHIVE.finditer(command):
            path, archive_version = match.groups()
            if archive_version != version:
                raise UserError("the bootstrap installs %s, of version %s, and this is version %s: name it "
                                "archive_profiler-%s.tar.gz (the mrjob config's bootstrap)"
                                % (path, archive_version, version, VERSION_MARK))
            if not is_uri(path) and not os.path.isfile(os.path.expanduser(path)):
                raise UserError("the bootstrap installs %s, which is not there: make it with %s "
                                "(from a checkout of version %s), then copy it there" % (path, BUILD, version))
        found.append(command)
    return found


class SourceArchiveBootstrap:
    """The bootstrap's source archive named by the package's version (bootstrap_commands)."""

    def _parse_bootstrap(self):
        self._opts["bootstrap"] = bootstrap_commands(self._opts["bootstrap"] or [])
        return super()._parse_bootstrap()


class EMRRunner(SourceArchiveBootstrap, EMRJobRunner):
    alias = "emr"


class DataprocRunner(SourceArchiveBootstrap, DataprocJobRunner):
    alias = "dataproc"
