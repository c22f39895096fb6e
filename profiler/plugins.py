"""Plugins: modules that add to the registries (a criterion and its capture field, an input
format) for every process of a run.

``ARCHIVE_PROFILER_PLUGINS`` (contract.PLUGINS_ENV) names modules, comma-separated. ``load()``
imports each once per process and calls its ``register()``, which adds what it brings with
profiler.model.capture.add_field, profiler.model.criteria.register and
profiler.formats.registry.register. The console script loads them before it builds its options
(profiler.cli.main), a task before it reads the job's policy (profiler.runtime.task, the job
script, the Spark program), so the client and every task see the same criteria and formats: a
task is another process, started from the client's environment by the inline, local and Spark
(local master) runners. A plugin module must be importable where tasks run (the client's import
path on this machine; on a cluster, installed on the nodes, with the variable passed on).
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
