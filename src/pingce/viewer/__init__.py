"""``pingce view``: the run store served on this machine, read-only, as server-rendered pages.

Five routes, nothing else (any other path is a 404, any method but GET and HEAD a 501):

- ``/``: the stored runs, newest first, filtered by suite (and by a part of the name): name,
  suite, created, records, the first metrics with their intervals (and, where ``pingce audit``
  recorded an audit by people in its folder, a link to it); two radio buttons per run pick the
  two runs to compare;
- ``/run/NAME``: the run's report.html from its output folder, with a bar linking back; when the
  folder is gone, holds no report, or now holds another run's outputs (a later run written over
  the same ``--out``), a page saying so and showing what the store kept (every metric with its
  interval, over all records and each slice);
- ``/compare?a=NAME&b=NAME``: two runs side by side from their stored values and intervals (both
  intervals drawn on one axis), and where they came from (data hash, commit, signature);
- ``/paired?a=NAME&b=NAME``: ``pingce compare A B`` of the two runs (:func:`pingce.compare_runs`:
  their records paired from stats.npz, nothing evaluated again) as comparison.html;
- ``/trend?suite=S&metric=M[&slice=K]``: one metric of a suite across its runs in time order, each
  run a point with its interval bar (:func:`pingce.report.charts.trend`), and the same as a
  table.

Safety: the server binds to 127.0.0.1 unless told otherwise and answers only requests whose
``Host`` is a loopback name (no DNS rebinding) when it does; names in URLs are looked up in the
store and never used as paths (the only file served is ``report.html`` of a folder the store
recorded); every name, suite, metric, slice and value is escaped with :func:`html.escape`; the
pages carry a Content-Security-Policy (as a header and in the page) that allows no script and no
network; forms are plain GET forms.

A package of its own above report/: it reads the run store and run folders and calls the engine
through the public API, and draws with report/'s renderers (:mod:`pingce.report.page`,
:mod:`pingce.report.charts`, :mod:`pingce.report.comparison_html`), which never call back.

:class:`Viewer` (``pages.py``) answers a request target with a :class:`Response` without any
socket (the pages are plain functions of the store); :func:`make_server` (``server.py``) puts it
behind a
:class:`~http.server.ThreadingHTTPServer`, :func:`serve` runs that until interrupted.
"""

from .pages import REPORT_CSP, Response, Viewer, run_href
from .server import ViewerServer, make_server, serve

__all__ = ["REPORT_CSP", "Response", "Viewer", "ViewerServer", "make_server", "run_href", "serve"]
