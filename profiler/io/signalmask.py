"""SIGINT, SIGTERM and SIGHUP held back while C extensions load.

KeyboardInterrupt (or profiler.errors.Terminated) raised in the middle of an extension module's
initialisation leaves it half made: the import failed with a SystemError or an ImportError, the
process crashed (SIGSEGV) or aborted while finalizing. Blocked for the block, a signal that came
meanwhile is delivered when it ends, where Python code handles it as at any other moment. The
mask is the calling thread's (threads an extension starts in the block inherit it): a signal sent
to the process reaches a thread that does not block it, if there is one.
"""

import contextlib
import signal
import threading

HELD = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}


@contextlib.contextmanager
def held():
    """The block run with HELD blocked (in the main thread; elsewhere signals are not delivered)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, HELD)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
