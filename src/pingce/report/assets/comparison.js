// comparison.html: filter the records shown side by side by their status on a metric.
// Each record (article.pair) carries data-st, one status code per metric judged record by record
// (f fixed, b broken, w both wrong, r both right, - not judged), in the order of the metric
// filter's options. The script reads only those codes and the filters: never a record's text.
(function () {
  "use strict";
  const controls = document.getElementById("sbs-controls");
  if (!controls) return;
  const status = document.getElementById("sbs-status");
  const metric = document.getElementById("sbs-metric");
  const info = document.getElementById("sbs-info");
  const none = document.getElementById("sbs-none");
  const pairs = Array.from(document.querySelectorAll("article.pair"));
  function matches(codes, wanted, at) {
    if (!wanted) return true;
    if (at === "") {
      for (const c of codes) if (wanted.indexOf(c) >= 0) return true;
      return false;
    }
    const c = codes.charAt(Number(at));
    return c !== "" && wanted.indexOf(c) >= 0;
  }
  function apply() {
    let shown = 0;
    for (const pair of pairs) {
      const ok = matches(pair.dataset.st || "", status.value, metric.value);
      pair.hidden = !ok;
      if (ok) shown++;
    }
    info.textContent = shown + " of " + pairs.length + " records shown";
    none.hidden = shown > 0;
  }
  status.addEventListener("change", apply);
  metric.addEventListener("change", apply);
  controls.hidden = false;
  apply();
})();
