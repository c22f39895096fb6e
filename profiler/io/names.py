"""Paths as text: what messages and a profile's !meta say a file is called."""

import os


def display_name(path):
    """A path as valid UTF-8 text (bytes that are not UTF-8 as \\xNN), for messages and !meta."""
    if isinstance(path, str):
        try:
            path.encode("utf-8")
            return path
        except UnicodeEncodeError:
            return os.fsencode(path).decode("utf-8", "backslashreplace")
    return str(path)
