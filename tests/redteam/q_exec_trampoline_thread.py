# redteam: runs exec(SRC) as a thread's target: the exec event's caller is Thread.run and SRC's frames are <string>, so nothing looked like the cell's
# kind: cell
# target: amdahl
# score: amdahl=0
# message: amdahl: compile
# why: found by the second red team (full control of the subject): code compiled from a string is now the student's, threading is a trampoline the hook looks through, and a C target with no frame below is refused
import threading

_run = getattr(print.__self__, "ex" + "ec")  # builtins.exec; flagged only ("computed attribute name")
_SRC = """
import ctypes, sys, gc
out['ctypes'] = ctypes.sizeof(ctypes.c_void_p)
out['getframe'] = sys._getframe().f_code.co_filename
out['gc_objects'] = len(gc.get_objects())
out['frames'] = sorted({f.f_code.co_name for f in sys._current_frames().values()})
main = [f for f in sys._current_frames().values()]
names = []
for f in main:
    while f is not None:
        if 'answers_fd' in f.f_locals:
            names = sorted(f.f_locals)
        f = f.f_back
out['subject_main_locals'] = names
"""


def amdahl_speedup(p, n):
    out = {}
    g = {"__name__": "ch13lib.x", "out": out}
    t = threading.Thread(target=_run, args=(_SRC, g))
    t.start()
    t.join()
    raise ValueError(repr(out) + " / " + repr(g.get("__exc")))
