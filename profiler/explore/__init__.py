"""The explorer: a web page and a JSON API for exploring profiles question by question
(`archive-profiler explore`, docs/explore.md).

``questions``: a URL's question, checked; ``answers``: its features and its breakdowns by every
key field; ``tree``: SURT keys as a tree; ``index``: the start-up pass (block keys, the large
SURT nodes' children); ``web``: the HTTP handler and the profiles served; ``server``: the
bounded standard-library server; ``static/``: the page, its script and its style.
"""
