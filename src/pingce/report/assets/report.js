(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("pingce-data").textContent);
  var N = D.n, metrics = D.metrics, reasons = D.reasons;
  var fieldNames = Object.keys(D.fields);
  var contextNames = Object.keys(D.context || {});
  var miss = {};
  var anyMiss = new Uint8Array(N);
  metrics.forEach(function (name) {
    var codes = new Int32Array(N).fill(-1);
    var m = D.misses[name];
    if (m) {
      for (var k = 0; k < m[0].length; k++) { codes[m[0][k]] = m[1][k]; anyMiss[m[0][k]] = 1; }
    }
    miss[name] = codes;
  });
  var $ = function (id) { return document.getElementById(id); };
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  var metricSelect = $("f-metric");
  metrics.forEach(function (name) { metricSelect.appendChild(el("option", "", name)); });
  var list = $("reasons");
  D.frequent.forEach(function (k) {
    var o = el("option");
    o.value = reasons[k];
    list.appendChild(o);
  });

  var state = { page: 0, size: 50, rows: null };
  var haystack = null;
  function whole(v) { return typeof v === "object" ? JSON.stringify(v) : String(v); }
  function shown(v) {
    var t = whole(v);
    return t.length > D.field_chars ? t.slice(0, D.field_chars - 1) + "\u2026" : t;
  }
  function fmt(v) {
    if (v === null || v === undefined) return "null";
    if (typeof v === "number") return String(Math.round(v * 1e4) / 1e4);
    return shown(v);
  }
  function contextCell(i) {
    // a record's context fields, each whole: a long one folded, its summary the first characters
    var td = el("td", "context");
    contextNames.forEach(function (f) {
      var v = D.context[f][i];
      if (v === null || v === undefined) return;
      var t = whole(v), s = el("div", "kv");
      s.appendChild(el("span", "k", f + " "));
      if (t.length > D.field_chars) {
        var d = el("details"), sum = el("summary", "v", shown(v));
        d.appendChild(sum);
        d.appendChild(el("div", "whole", t));
        d.addEventListener("toggle", function () {  // open: the whole text alone
          sum.textContent = d.open ? t.length.toLocaleString("en") + " characters" : shown(v);
        });
        s.appendChild(d);
      } else {
        s.appendChild(el("span", "v", t));
      }
      td.appendChild(s);
    });
    return td;
  }
  function searchText(i) {
    var parts = [D.ids[i] === null ? "" : D.ids[i], String(D.lines[i])];
    fieldNames.forEach(function (f) {
      var v = D.fields[f][i];
      if (v !== null) parts.push(whole(v));
    });
    contextNames.forEach(function (f) {
      var v = D.context[f][i];
      if (v !== null) parts.push(whole(v));
    });
    metrics.forEach(function (m) { var c = miss[m][i]; if (c >= 0) parts.push(reasons[c]); });
    return parts.join("\u0001").toLowerCase();
  }
  function filter() {
    var metric = metricSelect.value;
    var missesOnly = $("f-misses").checked;
    var reason = $("f-reason").value.trim().toLowerCase();
    var query = $("f-search").value.trim().toLowerCase();
    var sliceSel = $("f-slice") ? $("f-slice").value : "";
    var sliceCodes = null, sliceCode = -1;
    if (sliceSel) {
      var at = sliceSel.split(":");
      sliceCodes = D.slices[parseInt(at[0], 10)] || new Int32Array(0);
      sliceCode = parseInt(at[1], 10);
    }
    var names = metric ? [metric] : metrics;
    var reasonHit = null;
    if (reason) {
      reasonHit = new Uint8Array(reasons.length);
      for (var r = 0; r < reasons.length; r++) {
        if (reasons[r].toLowerCase().indexOf(reason) >= 0) reasonHit[r] = 1;
      }
    }
    if (query && haystack === null) {
      haystack = new Array(N);
      for (var h = 0; h < N; h++) haystack[h] = searchText(h);
    }
    var out = new Int32Array(N), n = 0;
    for (var i = 0; i < N; i++) {
      if (sliceCodes && sliceCodes[i] !== sliceCode) continue;
      if (missesOnly || reasonHit) {
        var ok = false;
        for (var j = 0; j < names.length && !ok; j++) {
          var c = miss[names[j]][i];
          if (c >= 0 && (!reasonHit || reasonHit[c])) ok = true;
        }
        if (!ok) continue;
      }
      if (query && haystack[i].indexOf(query) < 0) continue;
      out[n++] = i;
    }
    state.rows = out.subarray(0, n);
    state.page = 0;
    render();
  }
  function render() {
    var body = $("r-body");
    var rows = state.rows, size = state.size;
    var pages = Math.max(1, Math.ceil(rows.length / size));
    if (state.page >= pages) state.page = pages - 1;
    var start = state.page * size, stop = Math.min(rows.length, start + size);
    var metric = metricSelect.value;
    var names = metric ? [metric] : metrics;
    var frag = document.createDocumentFragment();
    for (var p = start; p < stop; p++) {
      var i = rows[p];
      var tr = el("tr");
      tr.dataset.index = String(i);
      tr.appendChild(el("td", "num", String(D.lines[i])));
      tr.appendChild(el("td", "id", D.ids[i] === null ? "" : D.ids[i]));
      if (contextNames.length) tr.appendChild(contextCell(i));
      var ftd = el("td", "fields");
      fieldNames.forEach(function (f) {
        var s = el("span", "kv");
        s.appendChild(el("span", "k", f + " "));
        s.appendChild(el("span", "v", fmt(D.fields[f][i])));
        ftd.appendChild(s);
      });
      tr.appendChild(ftd);
      var vtd = el("td", "values"), mtd = el("td", "misses");
      var groups = [], byReason = {};
      names.forEach(function (m) {
        var col = D.values[m], c = miss[m][i];
        if (col) {
          var s = el("span", "kv");
          s.appendChild(el("span", "k", m + " "));
          s.appendChild(el("span", c >= 0 ? "v low" : "v", fmt(col[i])));
          vtd.appendChild(s);
        }
        if (c >= 0) {
          if (byReason[c] === undefined) { byReason[c] = groups.length; groups.push([c, []]); }
          groups[byReason[c]][1].push(m);
        }
      });
      groups.forEach(function (g) {
        var d = el("div", "reason");
        d.appendChild(el("span", "k", g[1].join(", ") + ": "));
        d.appendChild(el("span", "why", reasons[g[0]]));
        mtd.appendChild(d);
      });
      if (groups.length) tr.className = "miss";
      tr.appendChild(vtd);
      tr.appendChild(mtd);
      frag.appendChild(tr);
    }
    if (!rows.length) {
      var none = el("tr"), td = el("td", "empty", "No record matches these filters.");
      td.colSpan = contextNames.length ? 6 : 5;
      none.appendChild(td);
      frag.appendChild(none);
    }
    body.replaceChildren(frag);
    var count = function (x) { return x.toLocaleString("en"); };
    var of = rows.length < N ? " (filtered from " + count(N) + ")" : "";
    $("p-info").textContent = rows.length
      ? "records " + count(start + 1) + "–" + count(stop) + " of " + count(rows.length) + of +
        " · page " + (state.page + 1) + " of " + pages
      : "0 of " + count(N) + " records";
    $("p-prev").disabled = $("p-first").disabled = state.page === 0;
    $("p-next").disabled = $("p-last").disabled = state.page >= pages - 1;
  }
  var timer = null;
  function later() { clearTimeout(timer); timer = setTimeout(filter, 150); }
  ["f-metric", "f-misses", "f-slice"].forEach(function (id) {
    if ($(id)) $(id).addEventListener("change", filter);
  });
  ["f-reason", "f-search"].forEach(function (id) {
    $(id).addEventListener("input", later);
    $(id).addEventListener("change", function () { clearTimeout(timer); filter(); });
  });
  $("p-size").addEventListener("change", function () {
    state.size = parseInt(this.value, 10);
    state.page = 0;
    render();
  });
  $("p-first").addEventListener("click", function () { state.page = 0; render(); });
  $("p-prev").addEventListener("click", function () {
    state.page = Math.max(0, state.page - 1);
    render();
  });
  $("p-next").addEventListener("click", function () { state.page += 1; render(); });
  $("p-last").addEventListener("click", function () { state.page = 1e9; render(); });
  filter();
  document.documentElement.dataset.ready = "1";
})();
