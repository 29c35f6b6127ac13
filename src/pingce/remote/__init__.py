"""The remote-model layer: what every client of a model server shares (the LLM judge, the
embeddings and rerank endpoints, the model under test).

- :mod:`.endpoint`: the base URL and key (:class:`~.endpoint.Endpoint`);
- :mod:`.http`: one aiohttp session, the workers, and :class:`~.http.RetryPolicy` (429 with
  Retry-After, 5xx, timeouts; a dead endpoint stops the run);
- :mod:`.usage`: what the calls did and cost (:class:`~.usage.BackendStats`, tokens, prices);
- :mod:`.cache`: the keyed answer cache (rows by hash key in one SQLite file, written as the
  answers arrive).

Nothing here knows what an answer means: the similarity backends read scores from it
(:mod:`pingce.similarity`), the model under test keeps it whole (:mod:`pingce.predict`).
"""
