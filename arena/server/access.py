"""Who may call what: roles, credentials and the one interceptor that checks every RPC.

docs/security.md is the specification. A caller's role comes from one place,
:meth:`Access.role_of`, which reads the standard ``authorization: Bearer <token>``
metadata: the organiser's token, a spectator's token, a seat token (which is good only for
``Arena.Play``/``Arena.Check``, where the token travels in the message itself), or none
(anonymous). :data:`REQUIRED` says which roles each RPC admits, and
:class:`AccessInterceptor` refuses everything else before a servicer runs. Servicers that
answer differently by role (``Watch``'s delay, ``FetchRecord``'s redaction) ask
:meth:`Access.role_of` again; they never decide on their own who someone is.

Tokens are compared in constant time (:func:`hmac.compare_digest`). A seat token is
recognised through the host's :class:`~arena.server.host.TokenBook` (a lookup by its
SHA-256), only to say clearly that it is the wrong kind of credential.
"""

from __future__ import annotations

import dataclasses
import enum
import hmac
import os
import secrets
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import grpc
import structlog

from arena.errors import ArenaError
from arena.server.spectate import SpectatorDelay


class Role(enum.Enum):
    ORGANISER = "organiser"  # creates, cancels, lists, fetches full records
    SPECTATOR = "spectator"  # public events only (delayed), finished records
    SEAT = "seat"  # one seat of one match: Arena.Play and Arena.Check only
    ANONYMOUS = "anonymous"  # health checking and reflection only


log = structlog.get_logger()
ANYONE = frozenset(Role)
WATCHERS = frozenset({Role.ORGANISER, Role.SPECTATOR})
ORGANISER_ONLY = frozenset({Role.ORGANISER})

#: Every RPC of the server and the roles it admits. A method missing here is refused
#: (default deny): a new RPC must be added with its role before anyone can call it.
#: ``Arena.Play``/``Arena.Check`` are open at this gate because their seat token is in the
#: request message; the servicer checks it (UNAUTHENTICATED for an unknown token).
REQUIRED: dict[str, frozenset[Role]] = {
    "/arena.v1.Arena/Play": ANYONE,
    "/arena.v1.Arena/Check": ANYONE,
    "/arena.v1.Matches/Create": ORGANISER_ONLY,
    "/arena.v1.Matches/Cancel": ORGANISER_ONLY,
    "/arena.v1.Matches/List": WATCHERS,
    "/arena.v1.Matches/Get": WATCHERS,
    "/arena.v1.Matches/Watch": WATCHERS,
    "/arena.v1.Matches/FetchRecord": WATCHERS,
    "/arena.v1.Lobby/Join": ANYONE,  # the bot key is in the request; the lobby checks it
    "/arena.v1.Competition/Standings": WATCHERS,
    "/arena.v1.Competition/AddBot": ORGANISER_ONLY,
    "/arena.v1.Competition/ListBots": ORGANISER_ONLY,
    "/arena.v1.Competition/SetBotDisabled": ORGANISER_ONLY,
    "/arena.v1.Competition/RotateBotKey": ORGANISER_ONLY,
    "/arena.v1.Competition/CreateEvent": ORGANISER_ONLY,
    "/arena.v1.Competition/ListEvents": WATCHERS,
    "/arena.v1.Competition/FinishEvent": ORGANISER_ONLY,
    "/arena.v1.Workers/Join": ORGANISER_ONLY,  # a worker on another host (docs/workers.md)
    "/grpc.health.v1.Health/Check": ANYONE,
    "/grpc.health.v1.Health/Watch": ANYONE,
    "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo": ANYONE,
}

BEARER = "bearer "


class Refusal(Exception):
    """Why a call is refused: a gRPC status code and a message that says what to do."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclasses.dataclass(frozen=True)
class Access:
    """The server's credentials and rules of access.

    ``open``: no credential needed — an anonymous caller is treated as the organiser
    (a trusted LAN or CI; ``arena serve --open`` logs a warning). ``is_seat_token`` tells
    a seat token from a stranger's (set by :func:`arena.server.app.open_arena_server`).
    """

    organiser_tokens: tuple[str, ...] = ()
    spectator_tokens: tuple[str, ...] = ()
    open: bool = False
    spectator_delay: SpectatorDelay = dataclasses.field(default_factory=SpectatorDelay)
    is_seat_token: Callable[[str], bool] = dataclasses.field(default=lambda _token: False)

    @classmethod
    def internal(cls) -> Access:
        """A server embedded in one process (``arena match``, ``arena batch``, tests): a
        fresh organiser token that only this process knows, so its bot subprocesses,
        which hold seat tokens only, can neither cancel a match nor read a record."""
        return cls(organiser_tokens=(new_token(),))

    @property
    def organiser_token(self) -> str:
        """The first organiser token ("" when there is none: an open server)."""
        return self.organiser_tokens[0] if self.organiser_tokens else ""

    def role_of(self, metadata: Iterable[Any] | None) -> Role:
        """The caller's role from its ``authorization`` metadata.

        Raises:
            Refusal: UNAUTHENTICATED for malformed metadata or a token this server does not
                know (a wrong organiser token is never silently downgraded to anonymous).
        """
        credential = None
        for key, value in metadata or ():
            if key == "authorization":
                credential = value if isinstance(value, str) else value.decode("latin-1")
                break
        if credential is None:
            return Role.ORGANISER if self.open else Role.ANONYMOUS
        if credential[: len(BEARER)].lower() != BEARER or not credential[len(BEARER) :].strip():
            raise Refusal(
                grpc.StatusCode.UNAUTHENTICATED,
                "the authorization metadata must read 'Bearer <token>'",
            )
        token = credential[len(BEARER) :].strip()
        if _known(token, self.organiser_tokens):
            return Role.ORGANISER
        if _known(token, self.spectator_tokens):
            return Role.SPECTATOR
        if self.is_seat_token(token):
            return Role.SEAT
        raise Refusal(
            grpc.StatusCode.UNAUTHENTICATED,
            "unknown token: it is not this server's organiser token, a spectator token or "
            "a seat token",
        )

    def check(self, method: str, metadata: Iterable[Any] | None) -> Role:
        """The caller's role, if :data:`REQUIRED` admits it to ``method`` (for a method
        open to anyone, the metadata is not read and the answer is ANONYMOUS).

        Raises:
            Refusal: UNAUTHENTICATED (no or a bad credential) or PERMISSION_DENIED (a
                credential of the wrong role), each saying which role the RPC needs.
        """
        allowed = REQUIRED.get(method, frozenset())
        if not allowed:
            raise Refusal(grpc.StatusCode.PERMISSION_DENIED, f"{_short(method)} is not open")
        if allowed == ANYONE:  # no metadata to judge: a stale header must not stop a bot
            return Role.ANONYMOUS
        role = self.role_of(metadata)
        if role in allowed:
            return role
        need = " or ".join(sorted(r.value for r in allowed))
        what = _short(method)
        if role is Role.ANONYMOUS:
            raise Refusal(
                grpc.StatusCode.UNAUTHENTICATED,
                f"{what} needs the {need} role: send the metadata 'authorization: Bearer "
                "<token>' (arena serve says where it keeps the organiser token)",
            )
        if role is Role.SEAT:
            raise Refusal(
                grpc.StatusCode.PERMISSION_DENIED,
                f"a seat token is good only for Arena.Play and Arena.Check, not {what} "
                f"(which needs the {need} role)",
            )
        raise Refusal(
            grpc.StatusCode.PERMISSION_DENIED,
            f"{what} needs the {need} role; this token is a {role.value}'s",
        )


def _known(token: str, tokens: tuple[str, ...]) -> bool:
    """Constant-time membership: every token is compared, each in constant time."""
    found = False
    for candidate in tokens:
        found |= hmac.compare_digest(token.encode(), candidate.encode())
    return found


def _short(method: str) -> str:
    """``/arena.v1.Matches/Cancel`` → ``Matches.Cancel``."""
    service, _, name = method.strip("/").partition("/")
    return f"{service.rsplit('.', 1)[-1]}.{name}"


if TYPE_CHECKING:  # generic in the stubs only
    Handler = grpc.RpcMethodHandler[Any, Any]
    Interceptor = grpc.aio.ServerInterceptor[Any, Any]
else:
    Handler = grpc.RpcMethodHandler
    Interceptor = grpc.aio.ServerInterceptor
Continuation = Callable[[grpc.HandlerCallDetails], Awaitable[Handler | None]]


class AccessInterceptor(Interceptor):
    """The one gate: every RPC is checked against :data:`REQUIRED` before it runs."""

    def __init__(self, access: Access) -> None:
        self.access = access

    async def intercept_service(
        self, continuation: Continuation, handler_call_details: grpc.HandlerCallDetails
    ) -> Handler:
        handler = await continuation(handler_call_details)
        if handler is None:  # no such method: gRPC answers UNIMPLEMENTED
            return None  # type: ignore[return-value]  # the stubs forget None
        method = handler_call_details.method
        try:
            self.access.check(method, handler_call_details.invocation_metadata)
        except Refusal as refusal:
            return _refusing(handler, refusal, method)
        return handler


def _refusing(handler: Handler, refusal: Refusal, method: str) -> Handler:
    """A handler of the same shape as ``handler`` that ends the call with ``refusal``
    (and logs it, with the caller's address, for the operator)."""

    async def refuse(_request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        log.info("access_refused", method=method, code=refusal.code.name, peer=context.peer())
        await context.abort(refusal.code, refusal.message)

    options = {
        "request_deserializer": handler.request_deserializer,
        "response_serializer": handler.response_serializer,
    }
    if handler.request_streaming and handler.response_streaming:
        return grpc.stream_stream_rpc_method_handler(refuse, **options)
    if handler.request_streaming:
        return grpc.stream_unary_rpc_method_handler(refuse, **options)
    if handler.response_streaming:
        return grpc.unary_stream_rpc_method_handler(refuse, **options)
    return grpc.unary_unary_rpc_method_handler(refuse, **options)


# -- token files ------------------------------------------------------------------------


def new_token() -> str:
    """A fresh random token: 256 bits, URL-safe text (fits in metadata and on a shell line)."""
    return secrets.token_urlsafe(32)


def default_token_file() -> Path:
    """Where ``arena serve`` keeps its organiser token and ``arena matches`` looks for it:
    ``$XDG_CONFIG_HOME/arena/organiser.token`` (``~/.config/arena/organiser.token``)."""
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "arena" / "organiser.token"


def read_token_file(path: Path) -> str:
    """The token in ``path`` (its first non-empty line).

    Raises:
        ArenaError: the file cannot be read or holds no token.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ArenaError(f"cannot read the token file {path}: {exc.strerror or exc}") from None
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    raise ArenaError(f"the token file {path} is empty")


def load_or_create_token(path: Path) -> tuple[str, bool]:
    """The token in ``path``, or a new one written there (mode 0600, its folder 0700 if
    new). Returns ``(token, created)``.

    Raises:
        ArenaError: the file exists but cannot be read or is empty, or cannot be created.
    """
    if path.exists():
        return read_token_file(path), False
    token = new_token()
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        raise ArenaError(f"cannot create the token file {path}: {exc.strerror or exc}") from None
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(token + "\n")
    return token, True


def loose_permissions(path: Path) -> bool:
    """True if others than the owner may read ``path`` (worth a warning for a secret)."""
    try:
        return bool(path.stat().st_mode & 0o077)
    except OSError:
        return False
