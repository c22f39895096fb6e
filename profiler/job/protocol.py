"""mrjob protocols that keep keys as raw bytes (sort keys are never JSON-encoded).

A line is ``key<TAB>value``: the key is written byte for byte, the value as JSON (profiler.jsonnum: integers of any size).
"""

from profiler import jsonnum


class RawKeyJsonValueProtocol:
    """Between steps: raw bytes key, JSON value; a bytes value is JSON already (written as is)."""

    def read(self, line):
        key, _, value = line.partition(b"\t")
        return key, jsonnum.loads(value)

    def write(self, key, value):
        return key + b"\t" + (value if value.__class__ is bytes else jsonnum.dumps(value))


class RawLineProtocol:
    """Final output: key and value are bytes already (``profile-key<TAB>{json}``)."""

    def read(self, line):
        key, _, value = line.partition(b"\t")
        return key, value

    def write(self, key, value):
        return key + b"\t" + value
