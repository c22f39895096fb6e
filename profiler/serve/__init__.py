"""The routing service: many archives' MementoMaps or profiles, answered over HTTP.

``archives``: the archives served and their lookups (memory-mapped, reloaded when a published
version moves); ``answers``: the JSON answers and the routing score; ``web``: the HTTP layer
(ASGI for uvicorn, WSGI for a threaded server), with bounded requests; ``server``: starting it.
"""
