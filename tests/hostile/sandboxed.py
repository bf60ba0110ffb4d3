"""A bot that attacks its sandbox on its 3rd request, then (if still alive) plays on.

    python tests/hostile/sandboxed.py MODE [ARGS...]

MODE is one of: ``spy PATH...`` (try to read each path, or list it if a folder),
``tcp PORT`` (connect to 127.0.0.1:PORT, and only there), ``fork N`` (start N sleeping
children), ``memory`` (allocate until stopped), ``cpu`` (spin), ``print MB`` (write MB
megabytes to stdout), ``segv`` (die of a segmentation fault), ``spread N`` (N children
spin the CPU while the bot waits for them: each alone under the per-process limit for a
while, together over the sandbox's), ``hang`` (start threads until one is refused, then
hang without a word, as gRPC's thread pool may when refused a thread), ``refused``
(the same, but then it says so as gRPC does and gives a few threads back before it
hangs: a hung runtime's threads come and go, so it sits under its limit, not at it).
What it saw goes to stdout as one line ``SANDBOX {json}`` (the seat log; the sandbox
hides the test's report file), before the attack for the attacks that kill it.
"""

import json
import os
import signal
import socket
import sys
import threading
import time

import grpc
from hostile_kit import SERVER, Stream, answer, hello, play

from arena.v1 import arena_pb2 as pb

mode, args = sys.argv[1], sys.argv[2:]
asked = 0


def tell(**fields: object) -> None:
    print("SANDBOX " + json.dumps(fields), flush=True)


def write(path: str, megabytes: int) -> str:
    try:
        with open(path, "wb") as f:
            for _ in range(megabytes):
                f.write(b"\0" * 1024 * 1024)
        return "ok"
    except OSError as exc:
        return os.strerror(exc.errno or 0)


def open_many(n: int) -> int:
    """How many more files it could open (of ``n`` tried)."""
    opened = []
    try:
        for _ in range(n):
            opened.append(os.open("/dev/null", os.O_RDONLY))
    except OSError:
        pass
    for fd in opened:
        os.close(fd)
    return len(opened)


def spy() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    tell(files=open_many(2000))
    tell(own_folder=write(os.path.join(here, "mine"), 1), tmp=write("/tmp/small", 1),
         tmp_fill=write("/tmp/big", 64), pid=os.getpid(), uid=os.getuid(),
         processes=sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
         hostname=socket.gethostname(), home=os.environ.get("HOME"))  # fmt: skip
    for path in args:
        try:
            if os.path.isdir(path):
                tell(path=path, listing=sorted(os.listdir(path)))
                continue
            with open(path, "rb") as f:
                tell(path=path, read=len(f.read()))
        except OSError as exc:
            tell(path=path, error=type(exc).__name__)


def tcp() -> None:
    try:
        with socket.create_connection(("127.0.0.1", int(args[0])), timeout=2):
            tell(tcp="connected")
    except OSError as exc:
        tell(tcp=type(exc).__name__)


def fork() -> None:
    tell(fork=int(args[0]))
    for _ in range(int(args[0])):
        if os.fork() == 0:
            time.sleep(30)
            os._exit(0)
    tell(forked=int(args[0]))


def memory() -> None:
    tell(memory="allocating")
    hog = []
    try:
        while True:
            hog.append(bytearray(16 * 1024 * 1024))
    except MemoryError:
        # die of it, but with the memory given back first: unwinding closes the gRPC
        # channel, and gRPC refused a thread there (no room for its stack) may abort or
        # hang instead, as luck has it; the bot would then not die of MemoryError
        hog.clear()
        raise


def cpu() -> None:
    tell(cpu="spinning")
    while True:
        pass


def flood() -> None:
    tell(output=int(args[0]))
    line = b"x" * 1023 + b"\n"
    for _ in range(int(args[0]) * 1024):
        sys.stdout.buffer.write(line)
    sys.stdout.flush()
    tell(printed=int(args[0]))


def spread() -> None:
    tell(spread=int(args[0]))
    for _ in range(int(args[0])):
        if os.fork() == 0:
            while True:
                pass
    os.wait()  # forever: the match goes on (timeouts) until the sandbox is stopped


def hang() -> None:
    tell(hang="threads")
    threading.stack_size(256 * 1024)  # the process limit, not the memory one, is hit
    started = 0
    try:
        while True:
            threading.Thread(target=time.sleep, args=(600,), daemon=True).start()
            started += 1
    except RuntimeError:  # "can't start new thread": swallowed, never printed
        pass
    tell(threads=started)
    time.sleep(600)


def refused() -> None:
    tell(refused="threads")
    threading.stack_size(256 * 1024)
    give_back = threading.Event()
    started = 0
    try:
        while True:
            wait = give_back.wait if started < 4 else time.sleep
            threading.Thread(target=wait, args=(600,), daemon=True).start()
            started += 1
    except RuntimeError:
        print("thd.cc:157] pthread_create failed: Resource temporarily unavailable", flush=True)
    give_back.set()  # four threads end: a few tasks under the limit from now on
    tell(threads=started)
    time.sleep(600)


def segv() -> None:
    tell(segv="now")
    os.kill(os.getpid(), signal.SIGSEGV)


ATTACKS = {
    "spy": spy,
    "tcp": tcp,
    "fork": fork,
    "memory": memory,
    "cpu": cpu,
    "print": flood,
    "segv": segv,
    "spread": spread,
    "hang": hang,
    "refused": refused,
}


def on_request(request: pb.Request) -> list[pb.BotMessage]:
    global asked
    asked += 1
    if asked == 3:
        ATTACKS[mode]()
    return [answer(request)]


with grpc.insecure_channel(SERVER) as channel:
    play(Stream(channel, hello(name=f"sandboxed-{mode}")), on_request)
