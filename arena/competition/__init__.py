"""Competitions: registered bots, the lobby that seats them, events and standings.

State lives in a database (:mod:`arena.competition.store`, SQLite in the records folder
by default). This layer uses :mod:`arena.server` to host matches, never the other way
round: the server only gains a ``Lobby`` service and a scheduler task when it is given a
competition (docs/competition.md).
"""
