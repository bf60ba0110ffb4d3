"""The bubblewrap command line of one sandboxed bot, and whether bubblewrap works here.

The sandbox's root is an empty tmpfs, remounted read-only once built, that holds only:
the system folders (``/usr``, ``/etc``, ``/bin``, ``/lib*``, read-only); the bot's
program with its prefix (a venv and the Python it was made from, a Node install) and the
bot's own folder, read-only and at the same paths as outside, so that the command line
works unchanged (with a venv, the folders its editable installs point at); the paths
given with ``--sandbox-ro``; a private ``/proc`` and ``/dev``;
a private ``/tmp`` of bounded size; and the referee's Unix socket. The match's records
folder (the live record, every seat's log) is covered by an empty read-only tmpfs should
it lie inside anything bound. New network (no interface but a down-and-isolated
loopback), PID, IPC and UTS namespaces; the sandbox dies with the launcher.

When the referee runs as root (CI), the kernel would not apply ``RLIMIT_NPROC`` to the
bot, so the bot runs as an unused uid (``setpriv``): its files must then be readable by
others (they usually are: mode 644/755).
"""

from __future__ import annotations

import functools
import os
import re
import secrets
import shutil
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from arena.batch.sandbox.limits import SandboxLimits

SOCKET = "/run/arena/arena.sock"  # the referee, as the bot sees it: ARENA_SERVER=unix:...
SYSTEM = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
NAMESPACES = (
    "--unshare-ipc",
    "--unshare-pid",
    "--unshare-net",
    "--unshare-uts",
    "--unshare-cgroup-try",
    "--die-with-parent",
    "--new-session",
)
INSTALL = "install the Debian/Ubuntu package bubblewrap (apt-get install bubblewrap)"


class SandboxUnavailable(RuntimeError):
    """bubblewrap is missing, or cannot create namespaces on this machine."""


@functools.cache
def unavailable() -> str | None:
    """Why the sandbox cannot run here (one line), or ``None`` when it can: bwrap,
    prlimit (and setpriv as root) are installed and bwrap can build a sandbox."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return f"--sandbox needs bubblewrap, which is not installed: {INSTALL}"
    for tool in ("prlimit", *(("setpriv",) if os.geteuid() == 0 else ())):
        if shutil.which(tool) is None:
            return f"--sandbox needs {tool} (the util-linux package), which is not installed"
    probe = [bwrap, *NAMESPACES, "--ro-bind", "/", "/", "--", "true"]
    try:
        done = subprocess.run(probe, capture_output=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"--sandbox: bubblewrap failed to run: {exc}"
    if done.returncode != 0:
        why = done.stderr.decode(errors="replace").strip().splitlines()
        last = why[-1] if why else f"exit status {done.returncode}"
        return (
            f"--sandbox: bubblewrap cannot create a sandbox here ({last}); "
            "user namespaces may be off: see docs/sandbox.md"
        )
    return None


def require() -> None:
    """Raises :class:`SandboxUnavailable` (with the one-line reason) unless usable."""
    reason = unavailable()
    if reason is not None:
        raise SandboxUnavailable(reason)


def bwrap_argv(
    words: Sequence[str],
    socket: str,
    limits: SandboxLimits,
    cwd: Path,
    path: str,
    hidden: Iterable[Path] = (),
) -> list[str]:
    """The full command line: ``bwrap [mounts] -- [setpriv] prlimit [limits] -- words``.

    ``socket`` is the referee's Unix socket on the host (bound at :data:`SOCKET`),
    ``path`` the ``PATH`` used to find the program, ``hidden`` folders the bot must not
    see (records, logs) even if they lie inside a folder it may read.
    """
    root = os.geteuid() == 0
    binds = _merge([*bot_paths(words, cwd, path), *(Path(p) for p in limits.read_only)])
    args = [shutil.which("bwrap") or "bwrap", *NAMESPACES, "--hostname", "arena-bot"]
    for top in SYSTEM:
        if os.path.islink(top):  # merged /usr: /bin -> usr/bin
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    args += ["--proc", "/proc", "--dev", "/dev"]
    args += ["--perms", "1777", "--size", str(limits.tmp_bytes), "--tmpfs", "/tmp"]
    made: set[str] = set()
    for host in binds:
        args += _parents(host, made)
        args += ["--ro-bind", str(host), str(host)]
    for folder in hidden:
        folder = folder.absolute()
        if any(folder.is_relative_to(b) for b in binds) and folder.is_dir():
            args += ["--tmpfs", str(folder), "--remount-ro", str(folder)]
    args += _parents(Path(SOCKET), made)
    args += ["--bind", socket, SOCKET]
    if cwd != Path("/") and not any(cwd.is_relative_to(b) for b in (*binds, *map(Path, SYSTEM))):
        args += [*_parents(cwd, made), "--perms", "0755", "--dir", str(cwd)]
    args += ["--chdir", str(cwd), "--remount-ro", "/"]
    inner = [shutil.which("prlimit") or "prlimit", *limits.prlimit_args(), "--"]
    if root:  # RLIMIT_NPROC does not bind root: become an unused uid first
        uid = str(free_uid())
        args += ["--cap-add", "CAP_SETUID,CAP_SETGID"]
        setpriv = shutil.which("setpriv") or "setpriv"
        inner = [setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                 "--no-new-privs", *inner]  # fmt: skip
    return [*args, "--", *inner, *words]


def free_uid() -> int:
    """A uid no account uses, for one sandbox (so that ``RLIMIT_NPROC`` counts its
    processes alone), among those this user namespace maps: a rootless container's
    root may map only 65,536 uids."""
    try:
        lines = Path("/proc/self/uid_map").read_text().splitlines()
        ranges = [(int(w[0]), int(w[2])) for w in (line.split() for line in lines) if w]
    except (OSError, ValueError, IndexError):
        ranges = [(0, 2**32 - 1)]
    for low, high in ((100_000, 1_000_000), (10_000, 65_534), (1_000, 65_534)):
        for inside, count in ranges:
            a, b = max(low, inside), min(high, inside + count)
            if b - a > 100:
                return a + secrets.randbelow(b - a)
    return 65_534  # nobody: shared with others, but never root


def sandbox_env(env: Mapping[str, str], server: str, token: str, seat: int) -> dict[str, str]:
    """The bot's whole environment: nothing of the referee's but ``PATH`` and the locale
    (no credentials leak in), ``HOME`` and ``TMPDIR`` in the private ``/tmp``."""
    kept = {k: v for k, v in env.items() if k in ("PATH", "LANG", "LC_ALL", "TZ", "TERM")}
    kept.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    return {**kept, "HOME": "/tmp", "TMPDIR": "/tmp", "ARENA_SERVER": server,
            "ARENA_TOKEN": token, "ARENA_SEAT": str(seat)}  # fmt: skip


def bot_paths(words: Sequence[str], cwd: Path, path: str) -> list[Path]:
    """The host folders the command needs to read: the program's prefix (for a venv's
    ``python`` the venv and the Python it was made from) and the bot's own folder (that
    of the first argument naming an existing file, e.g. ``bot.py`` or ``bot.js``); for a
    launcher's ``... -- CMD`` (the Botzone bridge), those of CMD as well."""
    if not words:
        return []
    out: list[Path] = []
    if "--" in words[1:]:  # a launcher (the Botzone bridge): the command after -- too
        cut = words.index("--", 1)
        out += bot_paths(words[cut + 1 :], cwd, path)
        words = words[:cut]
    program = words[0]
    found = (str(cwd / program) if "/" in program else shutil.which(program, path=path)) or ""
    if found and os.path.exists(found):
        exe = Path(os.path.abspath(found))
        for candidate in (exe, exe.resolve()):
            if not _system(candidate):
                out.append(_prefix(candidate))
        for venv in (exe.parent.parent, exe.resolve().parent.parent):
            home = _venv_home(venv)
            if home is not None:
                out += [venv, *_editable(venv)]
                if not _system(home):
                    out.append(_prefix(home / "python"))
    for word in words[1:]:
        if word.startswith("-") or "=" in word:
            continue
        file = cwd / word
        if file.is_file():
            out.append(file.parent.absolute())
            break
    return out


def _venv_home(folder: Path) -> Path | None:
    try:
        text = (folder / "pyvenv.cfg").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "home" and value.strip():
            return Path(value.strip()).resolve()
    return None


def _editable(venv: Path) -> list[Path]:
    """What a venv's packages installed in editable mode (``pip install -e``) point at:
    the folders in its ``.pth`` files and in setuptools' ``__editable__`` finders."""
    out: list[Path] = []
    for site in venv.glob("lib/python*/site-packages"):
        for file in site.glob("*.pth"):
            for line in _read(file).splitlines():
                if line.startswith("/") and os.path.isdir(line.strip()):
                    out.append(Path(line.strip()))
        for finder in site.glob("__editable__*finder.py"):
            mapping = re.search(r"^MAPPING[^=]*=\s*(\{.*?\})", _read(finder), re.M | re.S)
            if mapping is not None:
                out += [Path(v) for v in re.findall(r":\s*'([^']+)'", mapping.group(1))]
    return out


def _read(file: Path) -> str:
    try:
        return file.read_text(errors="replace")
    except OSError:
        return ""


def _system(p: Path) -> bool:
    return any(p.is_relative_to(top) for top in SYSTEM)


def _prefix(exe: Path) -> Path:
    """An installation's folder: ``/opt/node`` for ``/opt/node/bin/node``."""
    folder = exe.parent
    return folder.parent if folder.name in ("bin", "sbin", "shims") else folder


def _merge(paths: Iterable[Path]) -> list[Path]:
    """Absolute, existing, without those inside another, parents first."""
    keep: list[Path] = []
    for p in sorted({Path(os.path.abspath(p)) for p in paths if os.path.exists(p)}):
        if p == Path("/") or _system(p):
            continue
        if not any(p.is_relative_to(k) for k in keep):
            keep.append(p)
    return keep


def _parents(p: Path, made: set[str]) -> list[str]:
    """``--dir`` for each missing parent of ``p`` in the sandbox (mode 755: bwrap's own
    would be 700, closed to the bot's uid)."""
    args: list[str] = []
    for parent in reversed(p.parents):
        name = str(parent)
        if name == "/" or name in made or _system(parent):
            continue
        made.add(name)
        args += ["--perms", "0755", "--dir", name]
    return args
