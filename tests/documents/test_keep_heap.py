"""The heap of a process that makes one run (``fabric_lsp.documents.analyzers.keep_heap``), in a
fresh interpreter each: every such process (``for_one_run``: the CLI's, its workers, the
server's workers) calls it as it makes its analyzers."""

from __future__ import annotations

import subprocess
import sys

import pytest

_TRIMMED = """
import ctypes, sys
libc = ctypes.CDLL(None)
libc.sbrk.restype = ctypes.c_void_p
if sys.argv[1] == "keep":
    from fabric_lsp.documents.analyzers import keep_heap
    keep_heap()
blocks = [bytearray(2000) for _ in range(20000)]  # 40 MB through malloc (not Python's small-object allocator)
top = libc.sbrk(0)
del blocks
print(libc.sbrk(0) == top)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's heap: Linux only")
@pytest.mark.parametrize(("how", "kept"), [("keep", "True"), ("default", "False")])
def test_a_kept_heap_is_not_given_back_after_a_burst_of_frees(how, kept):
    """``keep_heap`` (``for_one_run`` calls it): glibc no longer gives the top
    of the heap back after frees — by default it does (the second case), and the next burst of
    allocations faults the same pages in again."""
    out = subprocess.run([sys.executable, "-c", _TRIMMED, how], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == kept


def test_off_linux_the_heap_is_left_alone(monkeypatch):
    """Elsewhere there is no glibc to ask (``ctypes.CDLL(None)`` raises on Windows): nothing is
    loaded, nothing raises — a spawned worker makes its analyzers as before."""
    import ctypes

    from fabric_lsp.documents.analyzers import keep_heap

    def refused(*args, **kwargs):
        raise AssertionError("no C library is loaded off Linux")

    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setattr(ctypes, "CDLL", refused)
    keep_heap()
