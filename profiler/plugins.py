"""Plugins: modules that add to the registries (a criterion and its capture field, an input
format) for every process of a run.

``ARCHIVE_PROFILER_PLUGINS`` (contract.PLUGINS_ENV) names modules, comma-separated. ``load()``
imports each once per process and calls its ``register()``, which adds what it brings with
profiler.model.capture.add_field, profiler.model.criteria.register,
profiler.formats.registry.register, profiler.formats.registry.warc_header (a field a WARC
header gives), profiler.formats.registry.http_header (one an HTTP response header gives) and
profiler.formats.registry.index_field (one a CDXJ line's JSON field gives). The console script loads them before it builds its options
(profiler.cli.main), a task before it reads the job's policy (profiler.runtime.task, the job
script, the Spark program), so the client and every task see the same criteria and formats: the
client passes the variable on to its tasks (profiler.run.profile). A plugin module must be
importable where tasks run: the inline and local runners' tasks have the client's import path;
Spark's workers and a cluster's nodes need it installed.
"""

import importlib
import os

from profiler import contract
from profiler.errors import UserError

_loaded = []


def names(environ=os.environ):
    """The plugin modules the environment names, in order."""
    return [n.strip() for n in environ.get(contract.PLUGINS_ENV, "").split(",") if n.strip()]


def load(environ=os.environ):
    """Import the plugins the environment names and register them, each once per process; a
    UserError when one cannot be imported or registered."""
    for name in names(environ):
        if name in _loaded:
            continue
        try:
            module = importlib.import_module(name)
            register = getattr(module, "register")
            _loaded.append(name)
            register()
        except UserError:
            raise
        except Exception as e:
            raise UserError("plugin %s (%s): %s: %s" % (name, contract.PLUGINS_ENV, type(e).__name__, e))
    return list(_loaded)
