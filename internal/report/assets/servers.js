// phptune servers report: draws the comparison's charts from the JSON
// embedded in the page (#phptune-data).
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("phptune-data").textContent);
  var charts = [];
  var labels = data.labels || [];

  function init(id) {
    var el = document.getElementById("chart-" + id);
    if (!el || labels.length === 0) { return null; }
    var c = echarts.init(el, null, { renderer: "canvas" });
    charts.push(c);
    return c;
  }
  function base(extra) {
    var o = {
      animation: false,
      tooltip: { trigger: "axis", confine: true, extraCssText: "max-width: min(360px, 80vw); white-space: normal; overflow-wrap: anywhere;" },
      legend: { type: "scroll", top: 0 },
      grid: { left: 56, right: 24, top: 40, bottom: 96 },
      xAxis: { type: "category", data: labels, axisLabel: { rotate: 30, interval: 0 } }
    };
    for (var k in extra) { o[k] = extra[k]; }
    return o;
  }
  // errorBars draws a vertical interval with caps at each [index, lo, hi].
  function errorBars(name, color, rows) {
    return {
      name: name, type: "custom", silent: true, z: 3, clip: true, itemStyle: { color: color },
      encode: { x: 0, y: [1, 2] },
      data: rows.map(function (r, i) { return [i, r[1], r[2]]; }).filter(function (r) { return r[2] > 0; }),
      renderItem: function (params, api) {
        var lo = api.coord([api.value(0), api.value(1)]), hi = api.coord([api.value(0), api.value(2)]);
        var w = 6, st = { stroke: color, lineWidth: 1.4 };
        return { type: "group", children: [
          { type: "line", shape: { x1: lo[0], y1: lo[1], x2: hi[0], y2: hi[1] }, style: st },
          { type: "line", shape: { x1: lo[0] - w, y1: lo[1], x2: lo[0] + w, y2: lo[1] }, style: st },
          { type: "line", shape: { x1: hi[0] - w, y1: hi[1], x2: hi[0] + w, y2: hi[1] }, style: st }
        ] };
      }
    };
  }

  // An interval of two rounds can be far wider than the values: the axis
  // follows the values and the bars are cut at its top.
  function top(rows) {
    var m = 0;
    rows.forEach(function (r) { m = Math.max(m, r[0]); });
    return m > 0 ? Math.ceil(m * 1.6) : null;
  }
  var rps = init("rps");
  if (rps) {
    rps.setOption(base({
      yAxis: [{ type: "value", name: "rps", max: top(data.rps) }, { type: "value", name: "p99 ms", max: top(data.p99) }],
      series: [
        { name: "throughput rps", type: "bar", data: data.rps.map(function (r, i) {
          return { value: r[0], itemStyle: { color: labels[i] === data.best ? "#2e9e4f" : "#5470c6" } };
        }) },
        errorBars("throughput 95% CI", "#222", data.rps),
        { name: "p99 ms", type: "scatter", yAxisIndex: 1, symbol: "diamond", symbolSize: 10, itemStyle: { color: "#ee6666" }, data: data.p99.map(function (r) { return r[0]; }) }
      ]
    }));
  }
  var cpu = init("cpu");
  if (cpu) {
    cpu.setOption(base({
      yAxis: { type: "value", name: "ms per request" },
      series: [
        { name: "web server", type: "bar", stack: "cpu", data: data.cpu_web },
        { name: "PHP", type: "bar", stack: "cpu", data: data.cpu_php },
        { name: "database", type: "bar", stack: "cpu", data: data.cpu_db }
      ]
    }));
  }
  var pss = init("pss");
  if (pss) {
    pss.setOption(base({
      yAxis: [{ type: "value", name: "MiB per worker" }, { type: "value", name: "MiB in all" }],
      series: [
        { name: "PSS per PHP worker (p50)", type: "bar", data: data.pss_worker_mib },
        { name: "PSS of the stack (peak)", type: "bar", yAxisIndex: 1, data: data.pss_total_mib }
      ]
    }));
  }
  var wk = init("workers");
  if (wk) {
    var most = 0;
    (data.worker_cpu || []).forEach(function (w) { most = Math.max(most, (w || []).length); });
    var ranks = [];
    for (var i = 1; i <= most; i++) { ranks.push(String(i)); }
    wk.setOption(base({
      xAxis: { type: "category", name: "worker, busiest first", nameLocation: "middle", nameGap: 28, data: ranks },
      grid: { left: 56, right: 24, top: 40, bottom: 48 },
      yAxis: { type: "value", name: "% of a core" },
      series: labels.map(function (l, j) { return { name: l, type: "bar", data: (data.worker_cpu || [])[j] || [] }; })
    }));
  }
  window.addEventListener("resize", function () { charts.forEach(function (c) { c.resize(); }); });
  document.body.setAttribute("data-charts-drawn", String(charts.length));
})();
