"""archive-profiler: exact archive profiles (CDXJ) and MementoMaps from web archive indexes."""

__version__ = "0.1.0"
GENERATOR = "archive-profiler/" + __version__
