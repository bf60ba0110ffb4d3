"""The HTTP side of ``arena serve --http``: match pages, replays, metrics (docs/operations.md).

It reads the same public event stream as ``Matches.Watch`` and never redacts on its own.
"""
