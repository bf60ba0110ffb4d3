"""The worker processes of ``arena serve --workers N``: start, watch, restart.

Each worker is ``python -m arena.cli.serve_worker``: a whole arena server (trio referee,
gRPC thread) for the matches the front gives it. It reads its settings as one JSON line
on stdin (secrets never appear on a command line) and keeps stdin open as its lifeline;
it writes JSON lines on stdout: ``{"ready": ...}`` once it listens, then one
``{"match": ...}`` per change of a match it hosts (:class:`~.ledger.Ledger` keeps them).

A worker dies with the front: it asks Linux (``PR_SET_PDEATHSIG``) for a SIGKILL when
the front goes, however it goes (SIGKILL included), and it also exits when its stdin ends.
A worker that dies on its own is started again at once on the same port, resuming its
running matches from their records (as ``arena serve`` does after a restart); its bots
reconnect to the same address.

The competition's lobby, when the front runs one, gives a worker orders over the same
stdin pipe (:meth:`WorkerPool.order`: create an event match, seat a restored one) and
hears about every match on the same reports (:attr:`WorkerPool.listeners`).
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import itertools
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import structlog
import trio

from arena.errors import ArenaError
from arena.server.archive import record_path
from arena.server.workers.ledger import Ledger

log = structlog.get_logger()
PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int) -> None:
    """In a worker: ask the kernel to SIGKILL this process when the thread that started
    it (the front's main thread) ends, however it ends; exit now if it already has."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the stdin lifeline still holds
        pass
    if os.getppid() != parent:  # the front died before prctl: nobody will say so
        os._exit(1)


@dataclasses.dataclass
class Worker:
    """What the front knows of one worker."""

    index: int
    control: str  # the Unix socket the front calls it on (plaintext, mode 0700 folder)
    address: str = ""  # host:port its bots dial (what Create returns as seat_address)
    http: str = ""  # its own web pages, with --http
    ready: bool = False
    pid: int = 0
    restarts: int = 0
    lived: bool = False  # its latest process came to listen
    expected: set[str] = dataclasses.field(default_factory=set)  # ids it should resume
    remote: bool = False  # joined from elsewhere (arena serve --join): control = address
    credentials: Any = None  # grpc.ChannelCredentials to call a remote worker with TLS


class WorkerPool:
    """Runs ``count`` workers; ``settings`` is the JSON every worker reads (plus its
    own listen address, control socket and records to resume)."""

    def __init__(
        self,
        count: int,
        settings: dict[str, Any],
        ledger: Ledger,
        listen_host: str,
        advertise_host: str,
        sockets: Path,
    ) -> None:
        self.settings = settings
        self.ledger = ledger
        self.listen_host = listen_host
        self.advertise_host = advertise_host
        self.records = Path(settings["records"])
        self.workers = [Worker(i, f"unix:{sockets / f'worker-{i}.sock'}") for i in range(count)]
        self.stopping = False
        self._processes: dict[int, subprocess.Popen[bytes]] = {}
        # told every match report, (worker index, news): the lobby's outcomes
        self.listeners: list[Callable[[int, dict[str, Any]], None]] = []
        self._refs = itertools.count(1)
        self._orders: dict[int, tuple[int, trio.Event, dict[str, Any]]] = {}
        self._writers: dict[int, Callable[[bytes], None]] = {}  # a worker's order channel

    def adopt(self, send: Callable[[bytes], None], credentials: Any = None) -> Worker:
        """A worker that joined from another host (:mod:`.join`): not ready until its
        ``ready`` report; ``send`` writes one line of orders to it."""
        worker = Worker(len(self.workers), "", remote=True, credentials=credentials)
        self.workers.append(worker)
        self.ledger.add_worker()
        self._writers[worker.index] = send
        return worker

    def heard(self, index: int, news: dict[str, Any]) -> None:
        """A remote worker's report line (a bad one is logged: it must not stop the front;
        one about another worker's match is ignored: it must not take its routing)."""
        try:
            owner = self.ledger.where(news["match"]) if "match" in news else None
            if owner is not None and owner != index:
                raise ValueError("another worker's match")
            self._news(self.workers[index], news, None)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError):
            log.warning("worker_bad_report", worker=index, news=str(news)[:200])

    def lost(self, index: int) -> None:
        """A remote worker's stream ended (it stopped, died, or was cut off): its live
        matches are lost (their records are on its host), its orders fail."""
        worker = self.workers[index]
        if not worker.remote or worker.control == "gone":
            return
        worker.ready = False
        worker.control = "gone"
        self._writers.pop(index, None)
        self._fail_orders(index)
        lost = self.ledger.worker_lost(index)
        for match_id in lost:
            self._forget(index, match_id)
        print(f"arena serve: worker {index} ({worker.address or 'not ready'}) left; "
              f"{len(lost)} live match(es) lost with it", file=sys.stderr, flush=True)  # fmt: skip
        log.warning("worker_left", worker=index, address=worker.address, lost=len(lost))

    def _fail_orders(self, index: int) -> None:
        for index_, answered, answer in list(self._orders.values()):
            if index_ == index:  # orders it will never answer
                answer["error"] = "it died"
                answered.set()

    async def order(self, index: int, order: dict[str, Any], timeout: float = 30) -> dict[str, Any]:
        """Give worker ``index`` an order (one JSON line on its stdin); its answer.

        Raises:
            ArenaError: the worker is not ready, died, refused or did not answer.
        """
        write = self._writers.get(index)
        if write is None or not self.workers[index].ready:
            raise ArenaError(f"worker {index} is restarting")
        ref = next(self._refs)
        answered = trio.Event()
        answer: dict[str, Any] = {}
        self._orders[ref] = (index, answered, answer)
        try:
            write(json.dumps({**order, "ref": ref}).encode() + b"\n")
            with trio.move_on_after(timeout):
                await answered.wait()
        except OSError:
            pass  # its pipe is closed: it died
        finally:
            self._orders.pop(ref, None)
        if not answered.is_set():
            raise ArenaError(f"worker {index} did not answer (it died or is stuck)")
        if "error" in answer:
            raise ArenaError(f"worker {index}: {answer['error']}")
        return answer

    def _forget(self, index: int, match_id: str) -> None:
        """A match that never started is gone with its worker (no record to resume)."""
        self.ledger.report(index, match_id, "forgotten", [])
        for listener in self.listeners:
            listener(index, {"match": match_id, "state": "forgotten"})

    @property
    def ready(self) -> list[bool]:
        return [w.ready for w in self.workers]

    async def supervise(
        self, index: int, resume: list[str], task_status: trio.TaskStatus[None]
    ) -> None:
        """Run worker ``index`` until the pool stops, restarting it after a crash;
        ``started`` once it first listens.

        Raises:
            ArenaError: its first start failed (the server cannot start).
        """
        worker = self.workers[index]
        port = 0
        started = False
        while not self.stopping:
            worker.lived = False
            code = await self._run_once(worker, port, resume, task_status if not started else None)
            started = started or worker.address != ""
            worker.ready = False
            self._fail_orders(index)
            if self.stopping:
                return
            if not started:
                raise ArenaError(f"worker {index} did not start (exit status {code})")
            # the same port, so its bots come back where they were; if that failed
            # (another process took it), any port: botkit asks the front again
            port = int(worker.address.rsplit(":", 1)[1]) if worker.lived else 0
            worker.restarts += 1
            resume = []
            for match_id in self.ledger.worker_lost(index):
                path = record_path(self.records, match_id)
                if path is None:  # created but not started: nothing to resume from
                    self._forget(index, match_id)
                else:
                    resume.append(str(path))
            worker.expected = {Path(p).stem for p in resume}
            print(
                f"arena serve: worker {index} (pid {worker.pid}) died ({signal_name(code)}); "
                f"restarting it, resuming {len(resume)} match(es)",
                file=sys.stderr,
                flush=True,
            )
            log.warning("worker_died", worker=index, status=code, resuming=len(resume))
            await trio.sleep(min(5.0, 0.2 * worker.restarts))

    async def _run_once(
        self,
        worker: Worker,
        port: int,
        resume: list[str],
        task_status: trio.TaskStatus[None] | None,
    ) -> int:
        """One life of a worker process; its exit status."""
        settings = dict(
            self.settings,
            parent=os.getpid(),
            index=worker.index,
            listen=f"{self.listen_host}:{port}",
            control=worker.control,
            resume=resume,
        )
        # Started from this (the main) thread: PR_SET_PDEATHSIG fires when the thread
        # that started the child ends, and trio's open_process starts it from a worker
        # thread that ends when idle.
        process = subprocess.Popen(
            [sys.executable, "-m", "arena.cli.serve_worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            start_new_session=True,  # a terminal's Ctrl-C is the front's to pass on
        )
        worker.pid = process.pid
        self._processes[worker.index] = process
        assert process.stdin is not None and process.stdout is not None
        stdin = process.stdin

        def write(data: bytes) -> None:
            stdin.write(data)
            stdin.flush()

        self._writers[worker.index] = write
        try:
            process.stdin.write(json.dumps(settings).encode() + b"\n")
            process.stdin.flush()
        except OSError:
            pass  # it died at once: its status says why
        reports = trio.lowlevel.FdStream(os.dup(process.stdout.fileno()))
        process.stdout.close()
        buffer = b""
        async with reports:
            async for chunk in reports:
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    self._news(worker, json.loads(line), task_status)
                    if worker.ready:
                        task_status = None
        code = await trio.to_thread.run_sync(process.wait)
        self._processes.pop(worker.index, None)
        self._writers.pop(worker.index, None)
        with contextlib.suppress(OSError):
            process.stdin.close()
        return code

    def _news(
        self, worker: Worker, news: dict[str, Any], task_status: trio.TaskStatus[None] | None
    ) -> None:
        if "answer" in news:
            waiting = self._orders.get(news["answer"])
            if waiting is not None and waiting[0] == worker.index:
                waiting[2].update(news)
                waiting[1].set()
        elif "match" in news:
            self.ledger.report(worker.index, news["match"], news["state"], news.get("tokens", []))
            for listener in self.listeners:
                listener(worker.index, news)
        elif "ready" in news:
            for match_id in worker.expected - set(news.get("matches", [])):
                self._forget(worker.index, match_id)  # not resumed
            worker.expected = set()
            worker.lived = True
            host, port = news["ready"].rsplit(":", 1)
            worker.address = f"{host if worker.remote else self.advertise_host}:{port}"
            if worker.remote:  # the front calls it where its bots do
                worker.control = worker.address
            worker.http = news.get("http", "")
            worker.ready = True
            where = "joined from another host" if worker.remote else f"pid {worker.pid}"
            print(
                f"arena serve: worker {worker.index} on {worker.address} ({where})",
                file=sys.stderr,
                flush=True,
            )
            log.info("worker_ready", worker=worker.index, address=worker.address, pid=worker.pid)
            if task_status is not None:
                task_status.started()

    async def stop(self, timeout: float = 15.0) -> None:
        """Stop every worker as Ctrl-C stops ``arena serve`` (their running matches
        are cancelled and recorded as such); SIGKILL after ``timeout`` seconds."""
        self.stopping = True
        for process in list(self._processes.values()):
            if process.returncode is None:
                process.terminate()
        with trio.move_on_after(timeout):
            for process in list(self._processes.values()):
                await trio.to_thread.run_sync(process.wait, abandon_on_cancel=True)
        for process in list(self._processes.values()):
            if process.returncode is None:
                process.kill()


def signal_name(code: int) -> str:
    """``-9`` → ``SIGKILL``; a positive status as it is."""
    return signal.Signals(-code).name if code < 0 else str(code)


__all__ = ["Worker", "WorkerPool"]
