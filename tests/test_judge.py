"""The judge-subject split (kit/wire.py, kit/judge.py, kit/subject.py, kit/audit.py), unit by unit.

Fast: each subject here is a plain `python -m kit.subject` (no sandbox, nothing heavy imported),
so `make test-fast` covers the glue that every grading goes through.
"""

from __future__ import annotations

import math
import os
import struct
from contextlib import closing

import numpy as np
import pytest
import torch

from kit import source_ch13lib, wire
from kit.judge import Lost, Raised, Subject

# ---------------------------------------------------------------- the wire


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        0,
        -1,
        2**70,
        1.5,
        "text ✔",
        b"\x00\xff",
        [1, [2, "x"]],
        (1, (2, 3)),
        {1, 2},
        {"a": 1, "$b": 2},
        {1: "one", (2, 3): "tuple key"},
        [math.inf, -math.inf],
    ],
)
def test_plain_data_round_trips_exactly(value):
    back = wire.decode(wire.encode(value)[wire.HEADER.size :])
    assert back == value and type(back) is type(value)


def test_nan_round_trips():
    assert math.isnan(wire.decode(wire.encode(float("nan"))[8:]))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int8", "uint8", "bool", "complex64"])
def test_arrays_round_trip_with_dtype_and_shape(dtype):
    a = (np.arange(12).reshape(3, 4) % 2).astype(dtype)
    back = wire.decode(wire.encode(a)[8:])
    assert back.dtype == a.dtype and back.shape == a.shape and (back == a).all()
    scalar = wire.decode(wire.encode(a[1, 1])[8:])
    assert scalar == a[1, 1] and scalar.shape == ()


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bfloat16, torch.float16])
def test_tensors_round_trip_as_tensors(dtype):
    t = torch.arange(6, dtype=torch.float32).reshape(2, 3).to(dtype)
    back = wire.decode(wire.encode(t)[8:])
    assert isinstance(back, torch.Tensor) and back.dtype == t.dtype and torch.equal(back, t)


class LyingInt(int):
    def __eq__(self, other):
        return True


class LyingFloat(float):
    __module__ = "builtins"


class Obj:
    pass


@pytest.mark.parametrize(
    "value", [LyingInt(3), LyingFloat(1.0), Obj(), [1, Obj()], {"k": LyingInt(1)}, type("D", (dict,), {})(), lambda: 0]
)
def test_the_encoder_refuses_anything_but_exact_plain_types(value):
    with pytest.raises(wire.WireError, match="cannot be sent"):
        wire.encode(value)


def test_nesting_is_bounded():
    deep: list = []
    for _ in range(200):
        deep = [deep]
    with pytest.raises(wire.WireError, match="nested too deeply"):
        wire.encode(deep)


@pytest.mark.parametrize(
    "body",
    [
        b'{"$dc": "ch13lib.collective_cases:Case", "fields": {}}',  # objects only travel to the subject
        b'{"$evil": 1}',
        b'{"$nd": {"dtype": "float32", "shape": [4], "data": "AAAA"}}',  # bytes do not match the shape
        b'{"$nd": {"dtype": "object", "shape": [1], "data": "AAAAAAAAAAA="}}',
        b'{"$bytes": "not base64!"}',
        b"\xff\xfe garbage",
        b'{"a": ' * 5000,
    ],
)
def test_the_judge_refuses_malformed_frames(body):
    with pytest.raises(wire.WireError):
        wire.decode(body, from_subject=True)


def test_a_frame_over_the_limit_is_refused_before_it_is_read(tmp_path):
    import os

    r, w = os.pipe()
    os.write(w, struct.pack(">Q", wire.MAX_FRAME + 1))
    with pytest.raises(wire.WireError, match="over the limit"):
        wire.read_frame(r)
    os.close(r)
    os.close(w)


# ---------------------------------------------------------------- the subject


def subject(source: str, budget_s: float = 20.0, harness=()) -> Subject:
    return Subject("unit", source, harness=list(harness), budget_s=budget_s, sandbox=False)


def test_values_calls_and_exceptions_come_back_as_plain_data():
    with closing(
        subject(
            "X = [1, (2, 3)]\nY = object()\ndef f(a, b=1):\n    return {'sum': a + b}\n"
            "def boom():\n    raise ValueError('no')\n"
        )
    ) as s:
        info = s.request("get", None, ["X", "Y", "Z", "f"]).value
        assert info["X"]["value"] == [1, (2, 3)] and "value" not in info["Y"] and "unsendable" in info["Y"]
        assert info["Z"] == {"defined": False} and info["f"]["callable"] is True
        assert s.request("call", "f", [2], {"b": 3}).value == {"sum": 5}
        with pytest.raises(Raised) as e:
            s.request("call", "boom")
        assert e.value.is_a("ValueError") and e.value.message == "no" and "line 6" in e.value.traceback
        assert s.starts == 1  # one process served them all


def test_the_device_reaches_the_tests_through_the_answer(monkeypatch):
    """``answer.gpu`` is its subject's (Grader.run(gpu=...), ``python -m graders --gpu``), whatever the
    environment says; no grader reads CH13_DEVICE, so importing one fixes no device and one process
    may grade either."""
    import glob
    import os

    from graders.api import Answer
    from kit import ROOT

    monkeypatch.setenv("CH13_DEVICE", "gpu")
    for gpu in (False, True):
        s = Subject("unit", "", harness=[], budget_s=5.0, sandbox=False, gpu=gpu)  # never started
        try:
            answer = Answer("unit", "", s)
            assert (answer.gpu, answer.device) == (gpu, "gpu" if gpu else "cpu")
        finally:
            s.close()
    for path in glob.glob(os.path.join(ROOT, "graders", "*.py")):
        with open(path, encoding="utf-8") as f:
            assert "CH13_DEVICE" not in f.read(), f"{path} reads the device from the environment"


def test_a_value_that_lies_about_its_type_is_refused_in_the_subject():
    with closing(
        subject("class Liar(int):\n    def __eq__(self, o):\n        return True\ndef f():\n    return Liar(1)\n")
    ) as s:
        with pytest.raises(Raised) as e:
            s.request("call", "f")
        assert e.value.type == "WireError" and "cannot be sent" in e.value.message


def test_an_exception_whose_str_raises_still_makes_a_message():
    with closing(
        subject(
            "class Weird(Exception):\n    def __str__(self):\n        raise RuntimeError('ha')\n"
            "def f():\n    raise Weird()\n"
        )
    ) as s:
        with pytest.raises(Raised) as e:
            s.request("call", "f")
        assert e.value.type == "Weird" and "whose str() failed" in e.value.message


def test_a_subject_that_dies_costs_one_request_and_the_next_gets_a_fresh_one():
    with closing(subject("import os\ncalls = []\ndef die():\n    os._exit(3)\ndef ok():\n    return 1\n")) as s:
        with pytest.raises(Lost, match="exited"):
            s.request("call", "die")
        assert s.request("call", "ok").value == 1 and s.starts == 2


def test_a_cell_that_hangs_as_it_loads_costs_every_request_at_once():
    with closing(subject("while True:\n    pass\n", budget_s=1.0)) as s:
        with pytest.raises(Lost, match="never finished") as first:
            s.request("call", "f")
        assert "before any test" in str(first.value)
        with pytest.raises(Lost, match="never finished"):
            s.request("call", "f")
        assert s.starts == 1


def test_a_busy_request_stops_at_the_budget_in_cpu_seconds():
    with closing(subject("def spin():\n    while True:\n        pass\n", budget_s=1.0)) as s:
        with pytest.raises(Lost, match="never finished"):
            s.request("call", "spin")


def test_frames_the_cell_writes_itself_are_noticed():
    forge = (
        "import os, struct, json\n"
        "def f():\n"
        "    body = json.dumps({'id': 1, 'nonce': 'x', 'ok': 99}).encode()\n"
        "    for fd in range(3, 1024):\n"
        "        try:\n"
        "            os.write(fd, struct.pack('>Q', len(body)) + body)\n"
        "        except OSError:\n"
        "            pass\n"
        "    return 0\n"
    )
    with closing(subject(forge)) as s:
        with pytest.raises(Lost, match="did not write|not plain data"):
            s.request("call", "f")


def test_sealed_frames_open_only_with_their_key():
    import os

    key, other = os.urandom(wire.KEY_SIZE), os.urandom(wire.KEY_SIZE)
    frame = wire.seal(key, wire.encode({"id": 1, "ok": [1, 2.5, "x"]}))
    payload = frame[wire.HEADER.size :]
    assert struct.unpack(">Q", frame[: wire.HEADER.size])[0] == len(payload)
    assert wire.decode(wire.unseal(key, payload)) == {"id": 1, "ok": [1, 2.5, "x"]}
    assert wire.unseal(other, payload) is None
    changed = payload.replace(b"2.5", b"9.5")
    assert wire.unseal(key, changed) is None
    assert wire.unseal(key, b"short") is None
    r, w = os.pipe()
    try:
        wire.write_frame(w, {"op": "call"}, key=key)
        assert wire.read_frame(r, from_subject=False, key=key) == {"op": "call"}
        wire.write_frame(w, {"op": "call"})  # unsealed
        with pytest.raises(wire.Unsealed):
            wire.read_frame(r, from_subject=False, key=key)
    finally:
        os.close(r)
        os.close(w)


_TAKE_OVER = """
import fcntl, json, os, stat, struct, threading

def right(p, n):
    return 1 / ((1 - p) + p / n)

def amdahl_speedup(p, n):
    return -1.0

def _read(fd, n):
    data = b""
    while len(data) < n:
        chunk = os.read(fd, n - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data

def _pipes():
    fifos = [fd for fd in range(3, 1024) if _is_fifo(fd)]
    readers = [fd for fd in fifos if fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_RDONLY]
    return readers, [fd for fd in fifos if fd not in readers]

def _is_fifo(fd):
    try:
        return stat.S_ISFIFO(os.fstat(fd).st_mode)
    except OSError:
        return False

def _steal(src, outs):  # answer every request ourselves, with its real id and nonce
    while True:
        (n,) = struct.unpack(">Q", _read(src, 8))
        payload = _read(src, n)
        try:
            req = json.loads(payload)
        except ValueError:
            req = json.loads(payload[:-32])
        body = json.dumps({"id": req["id"], "nonce": req["nonce"], "ok": right(*req["args"])}).encode()
        for o in outs:
            os.write(o, struct.pack(">Q", len(body)) + body)

def _relay(src, dst):  # hand the loop each request with the function changed, its seal kept
    while True:
        (n,) = struct.unpack(">Q", _read(src, 8))
        payload = _read(src, n)
        body, seal = payload[:-32], payload[-32:]
        body = body.replace(b'"amdahl_speedup"', b'"right"')
        os.write(dst, struct.pack(">Q", len(body) + 32) + body + seal)

readers, writers = _pipes()
for fd in readers:
    mine = os.dup(fd)
    r, w = os.pipe()
    os.dup2(r, fd, inheritable=False)
    if MODE == "steal":
        threading.Thread(target=_steal, args=(mine, writers), daemon=True).start()
    else:
        threading.Thread(target=_relay, args=(mine, w), daemon=True).start()
"""


@pytest.mark.parametrize("mode", ["steal", "relay"])
def test_a_cell_that_takes_over_the_pipes_can_neither_answer_nor_change_a_question(mode):
    """The cell shares the subject's descriptors: it can read the requests (their nonces are no
    secret from it) and put a pipe of its own where the loop reads. Before the frames were sealed,
    both of these scored a wrong amdahl_speedup as right."""
    with closing(subject(f"MODE = {mode!r}\n" + _TAKE_OVER)) as s:
        with pytest.raises(Lost, match="did not write"):
            s.request("call", "amdahl_speedup", [0.5, 2])


def test_too_much_data_costs_the_request():
    with closing(subject("def f():\n    return b'x' * (70 * 2**20)\n")) as s:
        with pytest.raises(Lost, match="over the limit"):
            s.request("call", "f")


# ---------------------------------------------------------------- the guard in the subject


@pytest.mark.parametrize(
    "attack,event",
    [
        ("import sys\nsys._getframe(1)", "sys._getframe"),
        ("import traceback\nlist(traceback.walk_stack(None))", "sys._getframe"),
        ("import inspect\ninspect.stack()", "sys._getframe"),
        ("import sys\nsys._current_frames()", "sys._current_frames"),
        ("import gc\ngc.get_objects()", "gc"),
        ("import sys\nsys.settrace(lambda *a: None)", "sys.settrace"),
        (
            "import threading\nthreading.settrace(lambda *a: None)\nthreading.Thread(target=len, args=((),)).start()",
            "sys.settrace",
        ),
        ("try:\n    1/0\nexcept Exception as e:\n    e.__traceback__.tb_frame", "tb_frame"),
        ("import json\njson.dumps.__code__ = (lambda *a, **k: '').__code__", "__code__"),
        ("exec('x = 1')", "compile"),
        ("import hypothesis", "import hypothesis"),
        ("import ctypes", "import ctypes"),
        ("import subprocess\nsubprocess.run(['true'])", "subprocess.Popen"),
        # routes around the cell-frame check: a cell that renames itself, and trampolines with no cell frame
        ("global __name__\n__name__ = 'ch13lib.answer'\nimport gc\ngc.get_objects()", "gc"),
        (
            "import threading\nt = threading.Thread(target=exec, args=('import ctypes',))\nt.start(); t.join()",
            "compile",
        ),
        (
            "import sys, concurrent.futures as cf\n"
            "with cf.ThreadPoolExecutor(1) as pool:\n"
            "    pool.submit(sys._getframe, 0).result()",
            "sys._getframe",
        ),
        ("import _thread, time\n_thread.start_new_thread(exec, ('x = 1', {}))\ntime.sleep(0.3)", "compile"),
        # file locks: one lock table for the machine, a channel between ranks and jobs
        (
            "import fcntl, os\nfcntl.lockf(os.open(os.__file__, os.O_RDONLY), fcntl.LOCK_SH | fcntl.LOCK_NB)",
            "fcntl.lockf",
        ),
        ("import fcntl, os\nfcntl.flock(os.open(os.__file__, os.O_RDONLY), fcntl.LOCK_SH)", "fcntl.flock"),
        (
            "import fcntl, os, struct\n"
            "fcntl.fcntl(os.open(os.__file__, os.O_RDONLY), 37, struct.pack('hhqqi', 0, 0, 7, 1, 0) + bytes(4))",
            "fcntl.fcntl",
        ),
        # a pipe's size: a uid's pipes share one budget, which one rank fills and another reads
        ("import fcntl, os\nfcntl.fcntl(os.pipe()[0], 1031, 1 << 20)", "fcntl.fcntl"),
    ],
)
def test_the_audit_hook_refuses_what_no_exercise_needs(attack, event):
    source = "def f():\n" + "".join(f"    {line}\n" for line in attack.splitlines()) + "    return 1\n"
    with closing(subject(source)) as s:
        try:  # refused in the cell's own thread (it raises) or in a thread it started (it is reported)
            reply = s.request("call", "f")
        except Raised as e:
            reply = e.reply
        assert event in " ".join(reply.refused), reply


def test_the_tamper_report_compares_what_harness_functions_run():
    """``f.__code__ = ...`` keeps the function object: the report compares code, defaults, kw-defaults
    (the audit hook refuses that assignment from the cell; this is the line behind it)."""
    import importlib

    from kit import source_ch13lib
    from kit.subject import snapshot, tampered

    source_ch13lib()
    sched = importlib.import_module("ch13lib.sched")

    snap = snapshot(["ch13lib.sched"])
    code = sched.plain_value.__code__
    try:
        sched.plain_value.__code__ = (lambda x, depth=0: x).__code__
        assert "ch13lib.sched.plain_value.__code__" in tampered(snap)
    finally:
        sched.plain_value.__code__ = code
    assert tampered(snap) == []


def test_the_cell_cannot_install_a_signal_handler():
    """A handler gets the interrupted frame with no audit event: only library code may install one."""
    with closing(subject("import signal\ndef f():\n    signal.signal(signal.SIGUSR1, lambda *a: None)\n")) as s:
        with pytest.raises(Raised) as e:
            s.request("call", "f")
        assert e.value.is_a("PermissionError") and "signal.signal" in e.value.message


@pytest.mark.parametrize(
    "source,name",
    [
        # a class that claims to be the library's is judged by where its methods were written
        (
            "import threading\nclass T:\n    __module__ = 'threading'\n    def start(self): pass\nthreading.Thread = T",
            "threading.Thread",
        ),
    ],
)
def test_the_tamper_report_sees_through_disguises(source, name):
    with closing(
        subject(
            "def f():\n" + "".join(f"    {line}\n" for line in source.splitlines()) + "    return 1\n",
            harness=("ch13lib.sched",),
        )
    ) as s:
        try:
            reply = s.request("call", "f")
        except Raised as e:
            reply = e.reply
        assert any(name in t for t in reply.tampered), reply


HONEST = '''
import collections, dataclasses, fcntl, logging, os, threading, warnings

Point = collections.namedtuple("Point", "x y")

@dataclasses.dataclass
class Box:
    size: int = 0

class Counter:
    def __init__(self):
        self._lock = threading.Lock()
        setattr(self, "_" + "count", 0)
    def __repr__(self):
        return f"Counter({vars(self)['_count']})"

def f():
    fcntl.fcntl(1, fcntl.F_GETFL)  # fcntl without a lock: not refused
    warnings.warn("a warning of the student's own")
    logging.getLogger("student").warning("a log line")
    c = Counter()
    t = threading.Thread(target=lambda: None)
    t.start(); t.join()
    return [repr(c), Point(1, 2).x, dataclasses.asdict(Box(3))]
'''


def test_honest_idioms_raise_no_event_the_hook_refuses():
    with closing(subject(HONEST)) as s:
        reply = s.request("call", "f")
        assert reply.value == ["Counter(0)", 1, {"size": 3}] and not reply.refused and not reply.tampered


def test_replacing_a_library_function_is_reported_and_the_next_request_gets_a_fresh_subject():
    with closing(
        subject(
            "import math\ndef f():\n    math.isclose = lambda *a, **k: True\n    return 1\n"
            "def g():\n    return math.isclose(1, 2)\n"
        )
    ) as s:
        reply = s.request("call", "f")
        assert reply.tampered == ["math.isclose"]
        s.new_test()
        assert s.request("call", "g").value is False and s.starts == 2


def test_a_refusal_answers_the_rest_of_its_test_at_once_and_the_next_test_starts_fresh():
    """Hypothesis shrinks a failing property: each of its examples would restart a sandbox only
    to be refused again (an amdahl cell refused inside a thread took 120 s). The refusal is the
    test's verdict; the next test gets a subject the cell has not touched."""
    s = subject(
        "import threading\ndef f():\n    t = threading.Thread(target=exec, args=('x = 1',))\n"
        "    t.start(); t.join()\n    return 1\ndef g():\n    return 2\n"
    )
    sibling = s.sibling()
    try:
        first = s.request("call", "f")
        assert "compile" in " ".join(first.refused) and s.proc is None and s.starts == 1
        for _ in range(50):  # every later request of the test, on any subject of the group
            again = s.request("call", "g")
            assert again.refused == first.refused and again.value is None
        assert sibling.request("call", "g").refused == first.refused
        assert s.starts == 1 and s.proc is None and sibling.starts == 0
        s.new_test()
        reply = s.request("call", "g")
        assert reply.value == 2 and not reply.refused and s.starts == 2
    finally:
        s.close()


def test_a_subject_that_sends_part_of_a_frame_and_stops_is_hung_not_waited_for():
    with closing(
        subject(
            "import os, struct, time\n"
            "def f():\n"
            "    for fd in range(3, 1024):\n"
            "        try:\n"
            "            os.write(fd, struct.pack('>Q', 100) + b'{')\n"
            "        except OSError:\n"
            "            pass\n"
            "    time.sleep(3600)\n",
            budget_s=1.0,
        )
    ) as s:
        with pytest.raises(Lost):
            s.request("call", "f")


# ---------------------------------------------------------------- conversations and siblings
_COLLECTIVES = ["kit.harnesses.collective_cases", "kit.harnesses.collective_launch", "ch13lib.procgroup"]
source_ch13lib()  # the judge's own copy of ch13lib, for its Case


def test_a_conversation_relays_each_call_and_ends_with_the_final_reply():
    """A talking harness (a generator in the subject) sends each batch of calls; the judge answers
    each; the harness's return value is the final Reply (kit.harnesses.collective_cases.rank_sim)."""
    from ch13lib.collective_cases import Case

    s = Subject(
        "all_reduce",
        "def ring_all_reduce(t, comm):\n    comm.send(t, 1)\n    comm.all_reduce(t)\n    t += 1\n",
        harness=_COLLECTIVES,
        budget_s=30.0,
        sandbox=False,
    )
    try:
        talk = s.converse("kit.harnesses.collective_cases:rank_sim", [Case(2, (3,), "float32", 1), 0], {})
        batch = next(talk)
        assert [c["call"] for c in batch] == ["send", "all_reduce"]  # the send rode with the call that waits
        assert batch[0]["peer"] == 1 and batch[0]["t"]["shape"] == [3] and "line 2" in batch[0]["where"]
        with pytest.raises(StopIteration) as end:
            talk.send([{}, {"data": torch.full((3,), 5.0)}])
        assert torch.equal(end.value.value.value["output"], torch.full((3,), 6.0))
        with pytest.raises(Lost, match="without a value"):  # a plain request gets no conversation
            s.request("run", "kit.harnesses.collective_cases:rank_sim", [Case(2, (3,), "float32", 1), 0])
    finally:
        s.close()


def test_a_conversation_step_that_never_comes_is_stalled_not_waited_for():
    from ch13lib.collective_cases import Case
    from kit.judge import Stalled

    s = Subject(
        "all_reduce",
        "def ring_all_reduce(t, comm):\n    while True:\n        pass\n",
        harness=_COLLECTIVES,
        budget_s=60.0,
        sandbox=False,
    )
    try:
        talk = s.converse("kit.harnesses.collective_cases:rank_sim", [Case(2, (3,), "float32", 1), 0], {}, step_s=1.5)
        with pytest.raises(Stalled):
            next(talk)
        assert s.budget_s > 50  # the step's guard, not the cell's budget
    finally:
        s.close()


def test_siblings_run_apart_and_stopping_one_restarts_them_all():
    s = subject("import os\ndef pid():\n    return os.getpid()\n")
    sib = s.sibling()
    try:
        assert sib.token == s.token and s.group == [s, sib]
        first, other = s.request("call", "pid").value, sib.request("call", "pid").value
        assert first != other  # two processes: nothing in memory is shared
        s.stop()  # one job: both are gone, and both start again when next asked
        assert s.proc is None and sib.proc is None
        assert sib.request("call", "pid").value not in (first, other)
        sib.budget_s = 0  # one cell, one budget: spent by a sibling, spent for all
        with pytest.raises(Lost, match="never finished"):
            s.request("call", "pid")
    finally:
        s.close()
    assert not os.path.exists(sib.work)


def test_an_exception_is_asked_for_its_builtin_classes_not_its_name():
    """A class of the cell's can take any name: the judge asks which built-in classes an exception
    is an instance of (kit.subject.builtin_kinds, by its real MRO), so a RuntimeError named
    ValueError is no ValueError and a subclass of the real ValueError is one."""
    import builtins

    from kit.subject import builtin_kinds, raised

    class ValueError(RuntimeError):  # noqa: A001 - the cell's impostor
        pass

    class InvalidInput(builtins.ValueError):
        pass

    impostor, honest = Raised(raised(ValueError("no"), None)), Raised(raised(InvalidInput("no"), None))
    assert impostor.type == "ValueError" and not impostor.is_a("ValueError") and impostor.is_a("RuntimeError")
    assert honest.is_a("ValueError") and honest.is_a("Exception")
    assert builtin_kinds(KeyError) == ["KeyError", "LookupError", "Exception", "BaseException", "object"]
    assert not Raised({"type": "ValueError", "message": "no builtins said"}).is_a("ValueError")
