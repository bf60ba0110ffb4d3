"""Competitions: registered bots, the lobby that seats them, events and standings.

State lives in a database (:mod:`arena.competition.store`: SQLite in the records folder
by default, PostgreSQL on request; :mod:`arena.competition.database`). This layer uses
:mod:`arena.server` to host matches, never the other way round: the server only gains
the ``Lobby`` and ``Competition`` services, a scheduler task and (with ``--http``) the
standings pages when it is given a competition (docs/competition.md).
"""
