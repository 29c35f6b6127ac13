(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("pingce-data").textContent);
  var N = D.n, metrics = D.metrics, reasons = D.reasons;
  var fieldNames = Object.keys(D.fields);
  var contextNames = Object.keys(D.context || {});
  var measures = D.measures || {};
  var KNOWN = ["n", "field_chars", "value_chars", "stats_columns", "unit", "higher", "measures",
    "ids", "lines", "metrics", "values", "fields", "context", "misses", "slices", "reasons", "frequent",
    "stats", "model", "judge", "audit", "total", "rest"];
  // any other per-record data the page holds (a column, or an object of columns): shown whole
  // in the detail view under its own name
  var extras = Object.keys(D).filter(function (k) { return KNOWN.indexOf(k) < 0; });
  var TURN_NAMES = ["turn", "turn_id", "turn_index", "round"];
  var turnField = fieldNames.filter(function (f) {
    return TURN_NAMES.indexOf(f.split(".").pop().toLowerCase()) >= 0;
  })[0];
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
  // records people checked (pingce audit): their marks, null for the others
  var audit = D.audit || {};
  var verified = audit.verified || null;
  function checked(i) { return verified !== null && verified[i] === true; }
  var $ = function (id) { return document.getElementById(id); };
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function add(parent, child) { parent.appendChild(child); return child; }
  function arrow(name) {
    var h = (D.higher || [])[metrics.indexOf(name)];
    if (h !== true && h !== false) return null;
    var s = el("span", "better", h ? "\u2191" : "\u2193");
    s.title = (h ? "higher" : "lower") + " is better";
    return s;
  }
  function label(name) { var a = arrow(name); return a ? name + " " + a.textContent : name; }
  function measure(name) {
    var m = measures[name];
    return typeof m === "string" ? D.fields[m] : m;
  }
  var metricSelect = $("f-metric");
  metrics.forEach(function (name) {
    var o = add(metricSelect, el("option", "", label(name)));
    o.value = name;
  });
  var list = $("reasons");
  D.frequent.forEach(function (k) {
    var o = el("option");
    o.value = reasons[k];
    list.appendChild(o);
  });
  var cols = Array.prototype.map.call(
    document.querySelectorAll("table.records thead th[data-col]"),
    function (th) { return th.dataset.col; });

  var state = { page: 0, size: 50, rows: null, sort: "", dir: 1, open: {} };
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
    ["messages", "answer", "error"].forEach(function (k) {  // --model: what was asked, answered
      var v = D.model && D.model[k] ? D.model[k][i] : null;
      if (v !== null && v !== undefined) parts.push(whole(v));
    });
    return parts.join("\u0001").toLowerCase();
  }

  // --- sorting --------------------------------------------------------------------------------
  var sortSelect = $("s-by");
  function option(parent, value, text) {
    var o = add(parent, el("option", "", text));
    o.value = value;
  }
  option(sortSelect, "", "record order");
  option(sortSelect, "line", "line");
  option(sortSelect, "id", "id");
  Object.keys(measures).forEach(function (m) { option(sortSelect, "m:" + m, m); });
  var valued = metrics.filter(function (m) { return D.values[m]; });
  [["metrics", valued, "v:", label], ["fields", fieldNames, "f:", String]].forEach(function (g) {
    if (!g[1].length) return;
    var group = add(sortSelect, el("optgroup"));
    group.label = g[0];
    g[1].forEach(function (name) { option(group, g[2] + name, g[3](name)); });
  });
  option(sortSelect, "misses", "metrics missed");
  var keys = {};
  function sortKeys(key) {
    if (keys[key]) return keys[key];
    var raw;
    if (key === "line") raw = D.lines;
    else if (key === "id") raw = D.ids;
    else if (key === "misses") {
      raw = new Int32Array(N);
      metrics.forEach(function (m) { for (var i = 0; i < N; i++) if (miss[m][i] >= 0) raw[i]++; });
    } else if (key.slice(0, 2) === "m:") raw = measure(key.slice(2));
    else if (key.slice(0, 2) === "v:") raw = D.values[key.slice(2)];
    else if (key === "context") raw = D.context[contextNames[0]];  // by the first context field
    else raw = D.fields[key.slice(2)];
    var num = new Float64Array(N), str = new Array(N), kind = new Uint8Array(N);
    for (var i = 0; i < N; i++) {
      var v = raw ? raw[i] : null;
      if (v === null || v === undefined || (typeof v === "number" && isNaN(v))) kind[i] = 2;
      else if (typeof v === "number" || typeof v === "boolean") num[i] = Number(v);
      else { kind[i] = 1; str[i] = whole(v); }
    }
    keys[key] = { num: num, str: str, kind: kind };
    return keys[key];
  }
  var collator = new Intl.Collator(undefined, { numeric: true });
  function sortRows(rows) {
    if (!state.sort) return rows;
    var k = sortKeys(state.sort), dir = state.dir;
    var out = Array.prototype.slice.call(rows);
    out.sort(function (a, b) {
      var ka = k.kind[a], kb = k.kind[b];
      if (ka !== kb) return ka === 2 ? 1 : kb === 2 ? -1 : dir * (ka - kb); // nulls last
      if (ka === 2) return a - b;
      var c = ka === 0 ? k.num[a] - k.num[b] : collator.compare(k.str[a], k.str[b]);
      return c ? dir * c : a - b; // ties keep the records' order
    });
    return Int32Array.from(out);
  }
  function columnKey(col) {
    var now = state.sort;
    if (col === "fields") return now.slice(0, 2) === "f:" ? now : "f:" + fieldNames[0];
    if (col === "values") {
      if (metricSelect.value && D.values[metricSelect.value]) return "v:" + metricSelect.value;
      return now.slice(0, 2) === "v:" ? now : "v:" + valued[0];
    }
    return col;
  }
  function columnOf(key) {
    var kind = key.slice(0, 2);
    return kind === "f:" ? "fields" : kind === "v:" ? "values" : key;
  }
  function sortBy(key, dir) {
    state.sort = key;
    state.dir = dir;
    sortSelect.value = key;
    $("s-dir").textContent = dir > 0 ? "ascending" : "descending";
    document.querySelectorAll("table.records thead th[data-col]").forEach(function (th) {
      var on = key && th.dataset.col === columnOf(key);
      th.setAttribute("aria-sort", on ? (dir > 0 ? "ascending" : "descending") : "none");
      th.querySelector(".arrow").textContent = on ? (dir > 0 ? " \u25b2" : " \u25bc") : "";
    });
    state.rows = sortRows(state.filtered);
    render();
  }

  // --- filtering ------------------------------------------------------------------------------
  function filter() {
    var metric = metricSelect.value;
    var missesOnly = $("f-misses").checked;
    var verifiedOnly = $("f-verified") ? $("f-verified").checked : false;
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
      if (verifiedOnly && !checked(i)) continue;
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
    state.filtered = out.subarray(0, n);
    state.rows = sortRows(state.filtered);
    state.page = 0;
    render();
  }

  // --- the table's cells ----------------------------------------------------------------------
  function unitOf(i) {
    if (!D.unit) return null;
    var u = D.fields[D.unit][i];
    return u === null || u === undefined ? null : whole(u);
  }
  function fieldsCell(i) {
    var td = el("td", "fields");
    fieldNames.forEach(function (f) {
      var s = add(td, el("span", "kv"));
      s.appendChild(el("span", "k", f + " "));
      s.appendChild(el("span", "v", fmt(D.fields[f][i])));
    });
    return td;
  }
  function shownMetrics() {
    var metric = metricSelect.value;
    var names = metric ? [metric] : metrics.slice();
    var sorted = state.sort.slice(0, 2) === "v:" ? state.sort.slice(2) : null;
    if (sorted && names.indexOf(sorted) > 0) {
      names.splice(names.indexOf(sorted), 1);
      names.unshift(sorted);
    }
    return { names: names, sorted: sorted };
  }
  function valueCells(i, shownNow) {
    var vtd = el("td", "values"), mtd = el("td", "misses");
    var groups = [], byReason = {};
    shownNow.names.forEach(function (m) {
      var col = D.values[m], c = miss[m][i];
      if (col) {
        var s = add(vtd, el("span", m === shownNow.sorted ? "kv sorted" : "kv"));
        s.appendChild(el("span", "k", m + " "));
        s.appendChild(el("span", c >= 0 ? "v low" : "v", fmt(col[i])));
      }
      if (c >= 0) {
        if (byReason[c] === undefined) { byReason[c] = groups.length; groups.push([c, []]); }
        groups[byReason[c]][1].push(m);
      }
    });
    groups.forEach(function (g) {
      var d = add(mtd, el("div", "reason"));
      d.appendChild(el("span", "k", g[1].join(", ") + ": "));
      d.appendChild(el("span", "why", reasons[g[0]]));
    });
    return { values: vtd, misses: mtd, missed: groups.length > 0 };
  }
  function extraCell(col, i) {
    var td = el("td", "extra");
    (extraEntries(i, [col])[0] || [col, []])[1].forEach(function (e) {
      if (e[1] === null || e[1] === undefined) return;
      var s = add(td, el("span", "kv"));
      s.appendChild(el("span", "k", e[0] + " "));
      s.appendChild(el("span", "v", fmt(e[1])));
    });
    return td;
  }
  function recordRow(i, shownNow) {
    var tr = el("tr", "rec");
    tr.dataset.index = String(i);
    tr.tabIndex = 0;
    tr.setAttribute("aria-expanded", state.open[i] ? "true" : "false");
    var vm = valueCells(i, shownNow);
    cols.forEach(function (col) {
      if (col === "line") tr.appendChild(el("td", "num", String(D.lines[i])));
      else if (col === "id") tr.appendChild(idCell(i));
      else if (col === "context") tr.appendChild(contextCell(i));
      else if (col === "fields") tr.appendChild(fieldsCell(i));
      else if (col === "values") tr.appendChild(vm.values);
      else if (col === "misses") tr.appendChild(vm.misses);
      else if (col.slice(0, 2) === "m:") {
        var m = measure(col.slice(2));
        tr.appendChild(el("td", "num", m && m[i] !== null ? fmt(m[i]) : ""));
      } else tr.appendChild(extraCell(col, i));
    });
    if (vm.missed) tr.classList.add("miss");
    if (checked(i)) tr.classList.add("verified");
    return tr;
  }
  function idCell(i) {
    var td = el("td", "id", D.ids[i] === null ? "" : D.ids[i]);
    if (checked(i)) {
      var mark = add(td, el("span", "checked", "\u2713 people"));
      mark.title = "checked by people (pingce audit): their labels are in the record's view";
    }
    return td;
  }

  // --- the detail view of a record ------------------------------------------------------------
  function isCut(v) {
    return typeof v === "string" && v.length === D.value_chars && v.slice(-1) === "\u2026";
  }
  function isMessages(v) {
    return Array.isArray(v) && v.length > 0 && v.every(function (m) {
      return m && typeof m === "object" && typeof m.role === "string";
    });
  }
  function isCompletion(v) {
    return v && typeof v === "object" && !Array.isArray(v) && Array.isArray(v.choices);
  }
  function text(content) {
    if (typeof content === "string") return content;
    if (Array.isArray(content)) {
      return content.map(function (p) {
        return p && typeof p.text === "string" ? p.text : JSON.stringify(p, null, 2);
      }).join("\n");
    }
    return content === null || content === undefined ? "" : JSON.stringify(content, null, 2);
  }
  function pretty(v) {
    var flat = JSON.stringify(v);
    var nested = /[[{]/.test(flat.slice(1)); // an object or array inside
    return el("pre", "json", flat.length <= 80 && !nested ? flat : JSON.stringify(v, null, 2));
  }
  function toolCalls(calls) {
    var box = el("div", "calls");
    calls.forEach(function (call) {
      var f = call && call.function ? call.function : call;
      var args = f && f.arguments;
      if (typeof args === "string") {
        try { args = JSON.parse(args); } catch (e) { /* shown as the model wrote it */ }
      }
      var d = add(box, el("div", "call"));
      d.appendChild(el("code", "fn", (f && f.name) || "?"));
      d.appendChild(typeof args === "string" ? el("pre", "text", args) : pretty(args));
    });
    return box;
  }
  function transcript(messages) {
    var box = el("div", "transcript");
    messages.forEach(function (m) {
      var turn = add(box, el("div", "msg role-" + String(m.role).replace(/[^a-z_]/gi, "")));
      turn.appendChild(el("div", "role", m.role + (m.name ? " (" + m.name + ")" : "")));
      if (m.content !== null && m.content !== undefined) {
        turn.appendChild(el("pre", "text", text(m.content)));
      }
      if (Array.isArray(m.tool_calls)) turn.appendChild(toolCalls(m.tool_calls));
    });
    return box;
  }
  function completion(v) {
    var box = el("div", "answer");
    v.choices.forEach(function (choice) {
      var msg = choice && choice.message;
      if (msg) box.appendChild(transcript([msg]));
    });
    var facts = [];
    if (v.model) facts.push("model " + v.model);
    var u = v.usage;
    if (u && typeof u === "object") {
      ["prompt_tokens", "completion_tokens", "total_tokens"].forEach(function (k) {
        if (typeof u[k] === "number") facts.push(k.replace("_", " ") + " " + u[k]);
      });
    }
    if (facts.length) box.appendChild(el("div", "facts", facts.join(" \u00b7 ")));
    var raw = add(box, el("details"));
    raw.appendChild(el("summary", "", "the whole answer (JSON)"));
    raw.appendChild(pretty(v));
    return box;
  }
  function valueView(v) {
    if (v === null || v === undefined) return el("span", "null", "null");
    if (isMessages(v)) return transcript(v);
    if (isCompletion(v)) return completion(v);
    if (typeof v === "object") return pretty(v);
    if (typeof v !== "string") return el("code", "", String(v));
    if (v.length <= D.field_chars && v.indexOf("\n") < 0) return el("span", "str", v);
    var box = el("div");
    box.appendChild(el("pre", "text", v));
    if (isCut(v)) {
      box.appendChild(el("div", "hint", "cut at " + D.value_chars.toLocaleString("en") +
        " characters in this page: the data file has it whole"));
    }
    return box;
  }
  function modelCall(i) {
    // --model: what was sent to the model under test and what it answered, with the measures
    var M = D.model;
    if (!M || !M.messages) return null;
    var at = function (k) { var c = M[k]; return c ? c[i] : null; };
    var sec = el("section", "part model");
    sec.appendChild(el("h4", "", "model call"));
    var sent = at("messages");
    if (isMessages(sent)) {
      sec.appendChild(el("div", "k", "messages sent"));
      sec.appendChild(transcript(sent));
    }
    var tools = at("tools");
    if (Array.isArray(tools) && tools.length) {
      sec.appendChild(el("div", "facts", "tools sent: " + tools.map(String).join(", ")));
    }
    var answer = at("answer");
    sec.appendChild(el("div", "k", "answer"));
    if (isCompletion(answer)) sec.appendChild(completion(answer));
    else if (answer !== null && answer !== undefined) sec.appendChild(valueView(answer));
    var error = at("error");
    if (error !== null && error !== undefined) sec.appendChild(el("div", "why", "failed: " + error));
    var facts = [];
    var latency = at("latency_sec");
    if (typeof latency === "number") facts.push("latency " + fmt(latency) + " s");
    ["prompt_tokens", "completion_tokens"].forEach(function (k) {
      var t = at(k);
      if (typeof t === "number") facts.push(k.replace("_", " ") + " " + t);
    });
    var cost = at("cost");
    facts.push(typeof cost === "number" ? "cost " + fmt(cost) : "cost unknown");
    if (at("cached") === true) facts.push("answered from the cache");
    var line = at("predictions_line");
    if (typeof line === "number") facts.push("predictions.jsonl line " + line);
    sec.appendChild(el("div", "facts call-facts", facts.join(" \u00b7 ")));
    return sec;
  }
  function judged(i) {
    // --similarity judge: what the LLM judge was asked about this record's pairs, and answered
    var asked = D.judge && D.judge.pairs ? D.judge.pairs[i] : null;
    if (!Array.isArray(asked) || !asked.length) return null;
    var sec = el("section", "part judge");
    sec.appendChild(el("h4", "", "judge"));
    asked.forEach(function (p) {
      var box = add(sec, el("div", "judged"));
      var talk = [{role: "x", content: p.a}, {role: "y", content: p.b}];
      if (typeof p.answer === "string") talk.push({role: "judge", content: p.answer});
      box.appendChild(transcript(talk));
      var facts = ["score " + (typeof p.score === "number" ? fmt(p.score) : "none (failed)")];
      if (typeof p.latency_sec === "number") facts.push("latency " + fmt(p.latency_sec) + " s");
      ["prompt_tokens", "completion_tokens"].forEach(function (k) {
        if (typeof p[k] === "number") facts.push(k.replace("_", " ") + " " + p[k]);
      });
      if (typeof p.cost === "number") facts.push("cost " + fmt(p.cost));
      if (p.cached === true) facts.push("answered from the cache");
      box.appendChild(el("div", "facts judge-facts", facts.join(" \u00b7 ")));
    });
    return sec;
  }
  function graded(i) {
    // judged metrics: each judge's grade of this record, with its answer and reasoning
    var grades = D.judge && D.judge.grades ? D.judge.grades[i] : null;
    if (!Array.isArray(grades) || !grades.length) return null;
    var sec = el("section", "part grades");
    sec.appendChild(el("h4", "", "grades"));
    grades.forEach(function (g) {
      var box = add(sec, el("div", "judged"));
      var who = [g.judge, g.task].concat(g.order ? [g.order] : []);
      box.appendChild(el("div", "facts grade-who", who.join(" \u00b7 ")));
      if (typeof g.answer === "string") {
        box.appendChild(transcript([{role: "judge", content: g.answer}]));
      }
      var facts = [];
      if (typeof g.score === "number") {
        facts.push("grade " + fmt(g.score) + (typeof g.label === "string" ? " (" + g.label + ")" : ""));
      }
      if (typeof g.weighted_score === "number") facts.push("G-Eval " + fmt(g.weighted_score));
      if (g.weighted === false) facts.push("stated score: no usable logprobs");
      if (typeof g.failure === "string") facts.push("no grade: " + g.failure);
      if (typeof g.latency_sec === "number") facts.push("latency " + fmt(g.latency_sec) + " s");
      if (g.cached === true) facts.push("answered from the cache");
      box.appendChild(el("div", "facts grade-facts", facts.join(" \u00b7 ")));
      if (typeof g.reasoning === "string") box.appendChild(el("div", "grade-reasoning", g.reasoning));
    });
    return sec;
  }
  function people(i) {
    // pingce audit: the people's labels of this record beside the judge's
    if (!checked(i)) return null;
    var sec = el("section", "part people");
    var h = audit.stratum ? audit.stratum[i] : null;
    sec.appendChild(el("h4", "", "checked by people" +
      (typeof h === "number" ? " (stratum " + h + " of the audit's draw)" : "")));
    var table = add(sec, el("table", "small audit-labels"));
    var head = add(add(table, el("thead")), el("tr"));
    var body = add(table, el("tbody"));
    var ps = audit.pairs ? audit.pairs[i] : null;
    var gs = audit.grades ? audit.grades[i] : null;
    (Array.isArray(ps) ? ["a", "b", "judge", "people"] : ["task", "judge", "people"])
      .forEach(function (t) { head.appendChild(el("th", "", t)); });
    function row(cells, differ) {
      var tr = add(body, el("tr", differ ? "differ" : ""));
      cells.forEach(function (c, k) {
        tr.appendChild(el("td", k >= cells.length - 2 ? "num" : "", c));
      });
    }
    function score(v) { return typeof v === "number" ? fmt(v) : "none"; }
    if (Array.isArray(ps)) {
      ps.forEach(function (p) { row([p.a, p.b, score(p.judge), score(p.human)], false); });
    }
    if (gs && typeof gs === "object") {
      Object.keys(gs).forEach(function (t) {
        var g = gs[t];
        var cells = [t, score(g.judge), score(g.human)];
        if (Array.isArray(ps)) cells = [t, ""].concat(cells.slice(1));
        row(cells, g.judge !== g.human);
      });
    }
    return sec;
  }
  function pairs(title, entries) {
    var sec = el("section", "part");
    sec.appendChild(el("h4", "", title));
    var dl = add(sec, el("dl"));
    entries.forEach(function (e) {
      dl.appendChild(el("dt", "", e[0]));
      add(dl, el("dd")).appendChild(valueView(e[1]));
    });
    return sec;
  }
  function valuesTable(i, cls) {
    var table = el("table", "small " + (cls || "rvalues"));
    var body = add(table, el("tbody"));
    metrics.forEach(function (m) {
      var col = D.values[m], c = miss[m][i];
      if (!col && c < 0) return;
      var tr = add(body, el("tr", c >= 0 ? "miss" : ""));
      var th = add(tr, el("th", "", m));
      th.scope = "row";
      var a = arrow(m);
      if (a) { th.appendChild(document.createTextNode(" ")); th.appendChild(a); }
      tr.appendChild(el("td", c >= 0 ? "num v low" : "num v", col ? fmt(col[i]) : ""));
      tr.appendChild(el("td", "why", c >= 0 ? reasons[c] : ""));
    });
    return table;
  }
  // --- what the record added to each statistic (the engine's per-record rows) ----------------
  function statCells(s, i) {
    // [column, value, the same for every record] in column order
    var cells = [];
    if (s.nonzero) {
      var p = s.nonzero[i] || [];
      for (var k = 0; k < p.length; k += 2) cells.push([p[k], p[k + 1], false]);
    } else {
      (s.shown || []).forEach(function (c, k) { cells.push([c, s.data[k][i], false]); });
    }
    Object.keys(s.same || {}).forEach(function (c) {
      cells.push([parseInt(c, 10), s.same[c], true]);
    });
    if (s.width > D.stats_columns) {  // a wide block: the record's non-zero columns only
      cells = cells.filter(function (c) { return c[1] !== 0; });
    }
    return cells.sort(function (a, b) { return a[0] - b[0]; });
  }
  function statBlock(s, i) {
    var box = el("div", "stat");
    var name = function (c) { return s.columns ? s.columns[c] : "column " + (c + 1); };
    box.appendChild(el("div", "feeds",
      "feeds " + (s.metrics.length ? s.metrics.join(", ") : "no metric")));
    if (s.outside && s.outside.indexOf(i) >= 0) {
      box.appendChild(el("div", "hint", "this record is outside this statistic: it adds nothing"));
      return box;
    }
    if (s.codes) {
      box.appendChild(el("div", "cell", "cell " + name(s.codes[i]) + " \u00b7 1 (the other " +
        (s.width - 1) + " cells 0)"));
      return box;
    }
    var row = add(box, el("div", "statrow"));  // a column a box: its name over its number
    statCells(s, i).forEach(function (c) {
      var cell = add(row, el("div", c[2] ? "col same" : "col"));
      cell.appendChild(el("div", "h", name(c[0])));
      cell.appendChild(el("div", "v", fmt(c[1])));
      if (c[2]) cell.title = "the same for every record";
    });
    if (s.width > D.stats_columns) {
      box.appendChild(el("div", "hint", "its non-zero columns of " + s.width +
        " (the others 0)" + (s.cut ? "; at most " + D.stats_columns + " a record kept in " +
        "this page: stats.npz has them all" : "")));
    }
    return box;
  }
  function statRows(i) {
    var stats = D.stats || [];
    if (!stats.length) return null;
    var sec = el("section", "part stats");
    sec.appendChild(el("h4", "", "statistic rows"));
    sec.appendChild(el("div", "hint", "what this record added to each statistic the metrics " +
      "are computed from (summed over the records, then finalised); grey: the same for every " +
      "record"));
    stats.forEach(function (s) { sec.appendChild(statBlock(s, i)); });
    return sec;
  }

  var units = null;
  function unitMembers(u) {
    if (units === null) {
      units = {};
      for (var j = 0; j < N; j++) {
        var key = unitOf(j);
        if (key !== null) (units[key] = units[key] || []).push(j);
      }
      Object.keys(units).forEach(function (key) {
        var t = turnField ? D.fields[turnField] : null;
        units[key].sort(function (a, b) {
          var ta = t && typeof t[a] === "number" ? t[a] : null;
          var tb = t && typeof t[b] === "number" ? t[b] : null;
          if (ta !== null && tb !== null && ta !== tb) return ta - tb;
          return D.lines[a] - D.lines[b] || a - b;
        });
      });
    }
    return units[u] || [];
  }
  function dialogue(i) {
    var u = unitOf(i);
    if (u === null) return null;
    var members = unitMembers(u);
    var sec = el("section", "part dialogue");
    sec.appendChild(el("h4", "", D.unit + " " + u + ": " + members.length +
      (members.length === 1 ? " record" : " records") + ", turn by turn"));
    var box = add(sec, el("div", "turns"));
    members.forEach(function (j, k) {
      var turn = add(box, el("div", j === i ? "turn current" : "turn"));
      turn.dataset.index = String(j);
      var t = turnField ? D.fields[turnField][j] : null;
      turn.appendChild(el("div", "thead", "turn " + (t === null || t === undefined ? k + 1 : fmt(t)) +
        " \u00b7 line " + D.lines[j] + (D.ids[j] !== null ? " \u00b7 id " + D.ids[j] : "") +
        (j === i ? " (this record)" : "")));
      var said = add(turn, el("div", "said"));
      fieldNames.forEach(function (f) {
        var v = D.fields[f][j];
        if (f === D.unit || f === turnField || v === null || v === undefined) return;
        var s = add(said, el("div", "kv"));
        s.appendChild(el("span", "k", f + " "));
        s.appendChild(el("span", "v", typeof v === "object" ? JSON.stringify(v) : String(v)));
      });
      turn.appendChild(valuesTable(j, "tvalues"));
    });
    return sec;
  }
  function extraEntries(i, names) {
    var out = [];
    (names || extras).forEach(function (k) {
      var data = D[k];
      if (Array.isArray(data) && data.length === N) { out.push([k, [[k, data[i]]]]); return; }
      if (!data || typeof data !== "object" || Array.isArray(data)) return;
      var entries = [];
      Object.keys(data).forEach(function (name) {
        var col = data[name];
        if (Array.isArray(col) && col.length === N) entries.push([name, col[i]]);
      });
      if (entries.length) out.push([k, entries]);
    });
    return out;
  }
  function detail(i) {
    var box = el("div", "record");
    var head = add(box, el("div", "rhead"));
    head.appendChild(el("strong", "", "line " + D.lines[i] +
      (D.ids[i] !== null ? " \u00b7 id " + D.ids[i] : "")));
    var close = add(head, el("button", "close", "close"));
    close.type = "button";
    close.dataset.close = String(i);
    var grid = add(box, el("div", "rgrid"));
    var left = add(grid, el("div"));
    var right = add(grid, el("div"));
    var ms = Object.keys(measures).map(function (m) {
      var c = measure(m);
      return [m, c ? c[i] : null];
    }).filter(function (e) { return e[1] !== null && e[1] !== undefined; });
    if (contextNames.length) {
      left.appendChild(pairs("context", contextNames.map(function (f) {
        return [f, D.context[f][i]];
      })));
    }
    var checkedBy = people(i);
    if (checkedBy) left.appendChild(checkedBy);
    var call = modelCall(i);
    if (call) left.appendChild(call);
    var judge = judged(i);
    if (judge) left.appendChild(judge);
    var grades = graded(i);
    if (grades) left.appendChild(grades);
    extraEntries(i).forEach(function (e) { left.appendChild(pairs(e[0], e[1])); });
    left.appendChild(pairs("fields", fieldNames.map(function (f) { return [f, D.fields[f][i]]; })));
    var vs = add(right, el("section", "part"));
    vs.appendChild(el("h4", "", "values and reasons"));
    vs.appendChild(valuesTable(i));
    var fed = statRows(i);
    if (fed) right.appendChild(fed);
    if (ms.length) right.appendChild(pairs("measured", ms));
    var talk = dialogue(i);
    if (talk) box.appendChild(talk);
    return box;
  }
  function detailRow(i) {
    var tr = el("tr", "detail");
    tr.dataset.of = String(i);
    var td = add(tr, el("td"));
    td.colSpan = cols.length;
    td.appendChild(detail(i));
    return tr;
  }

  // --- a page of records ----------------------------------------------------------------------
  function render() {
    var body = $("r-body");
    var rows = state.rows, size = state.size;
    var pages = Math.max(1, Math.ceil(rows.length / size));
    if (state.page >= pages) state.page = pages - 1;
    var start = state.page * size, stop = Math.min(rows.length, start + size);
    var shownNow = shownMetrics();
    var frag = document.createDocumentFragment();
    for (var p = start; p < stop; p++) {
      var i = rows[p];
      frag.appendChild(recordRow(i, shownNow));
      if (state.open[i]) frag.appendChild(detailRow(i));
    }
    if (!rows.length) {
      var none = el("tr"), td = el("td", "empty", "No record matches these filters.");
      td.colSpan = cols.length;
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
  function toggle(tr) {
    var i = parseInt(tr.dataset.index, 10);
    var next = tr.nextElementSibling;
    if (state.open[i]) {
      delete state.open[i];
      if (next && next.classList.contains("detail")) next.remove();
      tr.setAttribute("aria-expanded", "false");
    } else {
      state.open[i] = true;
      tr.after(detailRow(i));
      tr.setAttribute("aria-expanded", "true");
    }
  }
  var body = $("r-body");
  body.addEventListener("click", function (e) {
    var closer = e.target.closest("button.close");
    if (closer) {
      var row = body.querySelector('tr.rec[data-index="' + closer.dataset.close + '"]');
      if (row) { toggle(row); row.focus(); }
      return;
    }
    var tr = e.target.closest("tr.rec");
    if (!tr || String(window.getSelection() || "")) return; // selecting text opens nothing
    toggle(tr);
  });
  body.addEventListener("keydown", function (e) {
    var tr = e.target.closest ? e.target.closest("tr.rec") : null;
    if (tr && e.target === tr && (e.key === "Enter" || e.key === " ")) {
      e.preventDefault();
      toggle(tr);
    } else if (e.key === "Escape" && e.target.closest) {
      var open = e.target.closest("tr.detail");
      var row = open ? open.previousElementSibling : tr;
      if (row && row.classList.contains("rec") && state.open[row.dataset.index]) {
        toggle(row);
        row.focus();
      }
    }
  });
  document.querySelectorAll("table.records thead th[data-col] button.sort").forEach(function (b) {
    b.addEventListener("click", function () {
      var key = columnKey(b.parentNode.dataset.col);
      sortBy(key, key === state.sort ? -state.dir : 1);
    });
  });
  sortSelect.addEventListener("change", function () { sortBy(sortSelect.value, state.dir); });
  $("s-dir").addEventListener("click", function () { sortBy(state.sort, -state.dir); });
  var timer = null;
  function later() { clearTimeout(timer); timer = setTimeout(filter, 150); }
  ["f-metric", "f-misses", "f-verified", "f-slice"].forEach(function (id) {
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
