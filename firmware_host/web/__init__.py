"""The web view: the live table in any browser on the table's network (docs/web.md).

A frontend (service/frontend.py) like the terminal's, attached by the composition root
(cli/run.py). Its server (aiohttp) runs its own asyncio loop in a thread of its own; the table's
thread only hands it snapshots (views/live.py). Read-only: nothing a browser sends changes the table.
"""
