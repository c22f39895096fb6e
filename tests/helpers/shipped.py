"""Source of an import hook for wrapper pythons: `profiler` only from a shipped .zip on sys.path."""

ONLY_SHIPPED = '''
class OnlyShipped:
    def find_spec(self, name, path=None, target=None):
        if name.startswith("profiler."):
            # submodules only from the package's own (zipped) path: not through an editable
            # install's finder, which maps them to the source tree (its compiled modules too)
            spec = importlib.machinery.PathFinder.find_spec(name, path)
            if spec is None:
                raise ModuleNotFoundError("No module named " + repr(name) + " (not shipped)", name=name)
            return spec
        if name != "profiler":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, [p for p in sys.path if p.endswith(".zip")])
        if spec is None:
            raise ModuleNotFoundError("No module named 'profiler' (not shipped)", name=name)
        return spec
'''
