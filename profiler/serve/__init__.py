"""The routing service: many archives' MementoMaps or profiles, answered over HTTP.

``archives``: the archives served, each with the version it serves and its problem;
``versions``: one version of a file, checked whole before it is served; ``reader``: a file read
through its descriptor (never memory-mapped); ``answers``: the JSON answers and the routing
score; ``web``: the HTTP layer (ASGI for uvicorn, WSGI for a threaded server), with bounded
requests; ``protocol`` and ``limits``: what a client may hold; ``server``: starting it.
"""
