"""TLS for ``arena serve`` and its clients: PEM files in, gRPC credentials out.

The server presents ``--tls-cert``/``--tls-key``; with ``--tls-client-ca`` it also
requires every client (bot or organiser) to present a certificate signed by that CA
(mutual TLS). Clients trust the server's certificate through ``--tls-ca`` (or the
system's roots when none is given), and present their own with ``--tls-cert``/
``--tls-key`` when the server asks for one. docs/security.md shows the whole setup.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import grpc

from arena.errors import ArenaError


def read_pem(path: str | Path, what: str) -> bytes:
    """The bytes of a PEM file. Raises :class:`ArenaError` naming the file and its use."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ArenaError(f"cannot read the {what} {path}: {exc.strerror or exc}") from None
    if b"-----BEGIN " not in data:
        raise ArenaError(f"the {what} {path} is not a PEM file")
    return data


@dataclasses.dataclass(frozen=True)
class ServerTls:
    """The server's certificate chain and key, and the CA of client certificates (mTLS)."""

    cert: bytes
    key: bytes
    client_ca: bytes | None = None

    @classmethod
    def from_files(cls, cert: str, key: str, client_ca: str | None = None) -> ServerTls:
        return cls(
            read_pem(cert, "TLS certificate"),
            read_pem(key, "TLS key"),
            read_pem(client_ca, "client CA certificate") if client_ca else None,
        )

    def credentials(self) -> grpc.ServerCredentials:
        return grpc.ssl_server_credentials(
            [(self.key, self.cert)],
            root_certificates=self.client_ca,
            require_client_auth=self.client_ca is not None,
        )


def channel_credentials(
    ca: str | None = None, cert: str | None = None, key: str | None = None
) -> grpc.ChannelCredentials:
    """A client's TLS credentials: trust ``ca`` (default: the system's roots) and, for
    mutual TLS, present ``cert``/``key``. Raises :class:`ArenaError` for a bad file."""
    if (cert is None) != (key is None):
        raise ArenaError("a client certificate needs both --tls-cert and --tls-key")
    return grpc.ssl_channel_credentials(
        root_certificates=read_pem(ca, "CA certificate") if ca else None,
        private_key=read_pem(key, "TLS key") if key else None,
        certificate_chain=read_pem(cert, "TLS certificate") if cert else None,
    )
