"""The optional extras (setup.cfg's serve, report, spark, detect, fastwarc) and how to install
one into this installation: every "needs the X extra" message says the same command."""

from profiler.errors import UserError


#: the distribution name (setup.cfg), whose extras (serve, report, ...) hold the optional packages
DISTRIBUTION = "archive-profiler"


def missing(what, extra, packages):
    """The UserError of a feature (what) whose optional packages (the extra's) are not installed,
    with the pip command that installs them into this installation."""
    return UserError("%s needs the %s extra (%s): %s" % (what, extra, packages, install_command(extra)))


def install_command(extra):
    """The pip command that adds an extra to this installation: from the checkout, sdist or wheel
    it was installed from (pip records it, PEP 610; -e for an editable install), else from the
    checkout it runs in, else the command to run in a checkout (the package is not on a package
    index)."""
    import shlex
    source, editable = _installed_from()
    if source is None:
        source, editable = _checkout(), False
    if source is None:
        return "in an archive-profiler checkout, pip install '.[%s]'" % extra
    if "://" in source:                                 # a VCS or remote URL
        return "pip install %s" % shlex.quote("%s[%s] @ %s" % (DISTRIBUTION, extra, source))
    return "pip install %s%s" % ("-e " if editable else "", shlex.quote("%s[%s]" % (source, extra)))


def _installed_from():
    """(the local folder or file, or the URL, this distribution was installed from, whether it is
    an editable install); (None, False) for the package index, or when not installed."""
    import json
    import os
    from importlib import metadata
    from urllib.parse import unquote, urlsplit
    info = None
    for dist in metadata.distributions(name=DISTRIBUTION):   # a checkout's egg-info may come first
        try:
            info = json.loads(dist.read_text("direct_url.json") or "null")
        except (ValueError, OSError):
            continue
        if info is not None:
            break
    if not isinstance(info, dict) or not isinstance(info.get("url"), str):
        return None, False
    url = info["url"]
    editable = isinstance(info.get("dir_info"), dict) and info["dir_info"].get("editable") is True
    if isinstance(info.get("vcs_info"), dict):
        return "%s+%s" % (info["vcs_info"].get("vcs", "git"), url), False
    if url.startswith("file://"):
        path = unquote(urlsplit(url).path)
        return (path, editable) if os.path.exists(path) else (None, False)
    return url, False


def _checkout():
    """The source checkout this package is imported from (its setup.cfg beside it), or None."""
    import os
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return root if os.path.isfile(os.path.join(root, "setup.cfg")) else None
