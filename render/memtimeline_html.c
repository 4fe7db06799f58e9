/*
 * render/memtimeline_html.c - the memory timeline as one self-contained HTML
 * page: an interactive inline-SVG chart drawn by an inline script from an
 * inline JSON copy of the (already downsampled) series, the table of the
 * largest live allocations at the peak, and torch's PNG embedded as base64.
 * Nothing is loaded from the network: no external scripts, styles or fonts.
 *
 * Every string from the trace (title, device, op names, rules) is UTF-8
 * cleaned, then HTML-escaped in markup or written as a JSON string with <, >
 * and & as \u escapes inside the <script type="application/json"> block.
 */
#include "common/compat.h"
#include "report/out.h"
#include "render/render_internal.h"
#include "report/json.h"

#include <errno.h>
#include <unistd.h>
#include <inttypes.h>

static const char *const css[] = {
    ":root { color-scheme: light; }\n",
    "* { box-sizing: border-box; }\n",
    "body { margin: 0; padding: 24px 32px 40px; background: #f4f5f7; color: #1a1a1a;\n",
    "  font: 14px/1.45 system-ui, -apple-system, \"Segoe UI\", Roboto, \"DejaVu Sans\", Arial, sans-serif; }\n",
    "header h1 { margin: 0 0 4px; font-size: 22px; font-weight: 600; word-break: break-word; }\n",
    "header .meta { margin: 0 0 18px; color: #555; word-break: break-word; }\n",
    ".card { background: #fff; border: 1px solid #dcdfe4; border-radius: 8px; padding: 16px 20px 18px; margin: 0 0 20px;\n",
    "  box-shadow: 0 1px 2px rgba(0,0,0,.04); }\n",
    ".card h2 { margin: 0; font-size: 16px; font-weight: 600; }\n",
    ".toolbar { display: flex; flex-wrap: wrap; align-items: baseline; gap: 8px 16px; margin-bottom: 10px; }\n",
    ".toolbar .hint { color: #666; font-size: 12.5px; flex: 1; }\n",
    ".toolbar #tt-range { color: #333; font-variant-numeric: tabular-nums; font-size: 12.5px; }\n",
    "button { font: inherit; font-size: 13px; padding: 4px 12px; border: 1px solid #b8bcc4; border-radius: 5px;\n",
    "  background: #fafbfc; cursor: pointer; }\n",
    "button:hover { background: #eef0f3; }\n",
    ".chart { position: relative; width: 100%; min-height: 520px; user-select: none; }\n",
    ".chart svg { display: block; font-size: 12px; }\n",
    ".chart .grid line { stroke: #e8e8e8; stroke-width: 1; }\n",
    ".chart .frame { fill: none; stroke: #333; stroke-width: 1; }\n",
    ".chart .labels text { fill: #333; font-variant-numeric: tabular-nums; }\n",
    ".chart .axis { fill: #1a1a1a; font-size: 13.5px; }\n",
    ".chart .empty { fill: #888; font-size: 20px; font-style: italic; }\n",
    ".chart .allocated { fill: none; stroke: #111; stroke-width: 1.8; stroke-linejoin: round; }\n",
    ".chart .reserved { fill: none; stroke: #555; stroke-width: 1.8; stroke-dasharray: 8 5; stroke-linejoin: round; }\n",
    ".chart .peak { fill: #fff; stroke: #c00000; stroke-width: 2.2; }\n",
    ".chart .peakline { stroke: #111; stroke-width: 1.2; stroke-dasharray: 2 3; }\n",
    ".chart .guide { stroke: #222; stroke-width: 1; stroke-dasharray: 3 3; pointer-events: none; }\n",
    ".chart .sel { fill: rgba(65,105,225,.15); stroke: #4169e1; stroke-width: 1; pointer-events: none; }\n",
    ".tip { position: absolute; pointer-events: none; background: rgba(255,255,255,.97); border: 1px solid #bbb;\n",
    "  border-radius: 6px; padding: 8px 10px; box-shadow: 0 2px 8px rgba(0,0,0,.15); font-size: 12.5px; min-width: 210px; }\n",
    ".tip .th { font-weight: 600; margin: 2px 0 3px; }\n",
    ".tip table { border-collapse: collapse; width: 100%; }\n",
    ".tip td { padding: 0 2px; white-space: nowrap; }\n",
    ".tip td + td { text-align: right; padding-left: 14px; font-variant-numeric: tabular-nums; }\n",
    ".tip tr.zero { color: #999; }\n",
    ".tip tr.sum td { border-top: 1px solid #ddd; font-weight: 600; }\n",
    "i { display: inline-block; width: 14px; height: 11px; margin-right: 6px; vertical-align: -1px; opacity: .7; }\n",
    "i.la { height: 0; border-top: 2px solid #111; opacity: 1; vertical-align: 3px; }\n",
    "i.lr { height: 0; border-top: 2px dashed #555; opacity: 1; vertical-align: 3px; }\n",
    "i.pk { width: 10px; height: 10px; border: 2px solid #c00000; border-radius: 50%; opacity: 1; }\n",
    ".legend { display: flex; flex-wrap: wrap; gap: 4px 18px; margin-top: 8px; font-size: 13px; }\n",
    "#tt-status[data-state=\"error\"] { color: #b00020; font-weight: 600; }\n",
    "table.top { border-collapse: collapse; width: 100%; margin-top: 10px; font-size: 13px; }\n",
    "table.top th, table.top td { padding: 5px 10px; border-bottom: 1px solid #e6e8eb; text-align: left; vertical-align: top; }\n",
    "table.top th { background: #f7f8fa; font-weight: 600; white-space: nowrap; }\n",
    "table.top td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }\n",
    "table.top td.addr { font-family: ui-monospace, \"DejaVu Sans Mono\", Menlo, Consolas, monospace; white-space: nowrap; }\n",
    "table.top td.op { word-break: break-all; }\n",
    "table.top tbody tr:hover { background: #f5f8ff; }\n",
    "p.note { color: #555; margin: 8px 0 0; }\n",
    ".static img { display: block; max-width: 100%; height: auto; margin-top: 10px; border: 1px solid #e6e8eb; }\n",
    "footer { color: #888; font-size: 12px; }\n",
};

static const char *const chart_js[] = {
    "(function () {\n",
    "  \"use strict\";\n",
    "  var status = document.getElementById(\"tt-status\");\n",
    "  function fail(e) {\n",
    "    status.setAttribute(\"data-state\", \"error\");\n",
    "    status.hidden = false;\n",
    "    status.textContent = \"The interactive chart could not be drawn: \" + e;\n",
    "    if (window.console) console.error(e);\n",
    "  }\n",
    "  try {\n",
    "    var D = JSON.parse(document.getElementById(\"tt-data\").textContent);\n",
    "    var GIB = D.div, U = D.unit; /* one binary unit, picked by the data */\n",
    "    var box = document.getElementById(\"tt-chart\");\n",
    "    var svg = document.getElementById(\"tt-svg\");\n",
    "    var tip = document.getElementById(\"tt-tip\");\n",
    "    var n = D.t.length, na = D.at.length, ns = D.names.length;\n",
    "    var H = 520, M = { l: 72, r: 18, t: 14, b: 46 };\n",
    "    var W = 900;\n",
    "    var tms = new Array(n), cum = [], i, s;\n",
    "    for (s = 0; s <= ns; s++) cum.push(new Float64Array(n));\n",
    "    for (i = 0; i < n; i++) {\n",
    "      tms[i] = D.t[i] / 1000;\n",
    "      var acc = D.before ? Math.max(0, D.before[i]) / GIB : 0;\n",
    "      cum[0][i] = acc;\n",
    "      for (s = 0; s < ns; s++) {\n",
    "        var v = D.s[i][s];\n",
    "        acc += v > 0 ? v / GIB : 0;\n",
    "        cum[s + 1][i] = acc;\n",
    "      }\n",
    "    }\n",
    "    var ams = new Array(na);\n",
    "    for (i = 0; i < na; i++) ams[i] = D.at[i] / 1000;\n",
    "    var t0 = 0, t1 = 0, any = false;\n",
    "    function span(a) {\n",
    "      for (var k = 0; k < a.length; k++) {\n",
    "        if (!any || a[k] < t0) t0 = a[k];\n",
    "        if (!any || a[k] > t1) t1 = a[k];\n",
    "        any = true;\n",
    "      }\n",
    "    }\n",
    "    span(tms); span(ams);\n",
    "    if (t0 > 0) t0 = 0;\n",
    "    if (!(t1 > t0)) t1 = t0 + 1;\n",
    "    var full = [t0, t1], view = [t0, t1];\n",
    "\n",
    "    function esc(x) {\n",
    "      return String(x).replace(/[&<>\"']/g, function (c) {\n",
    "        return { \"&\": \"&amp;\", \"<\": \"&lt;\", \">\": \"&gt;\", '\"': \"&quot;\", \"'\": \"&#39;\" }[c];\n",
    "      });\n",
    "    }\n",
    "    function niceStep(spanv, target) {\n",
    "      if (!(spanv > 0) || !isFinite(spanv)) return 1;\n",
    "      var raw = spanv / target, mag = Math.pow(10, Math.floor(Math.log10(raw))), f = raw / mag;\n",
    "      return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;\n",
    "    }\n",
    "    function fmt(v, step) {\n",
    "      if (Math.abs(v) < step * 1e-6) v = 0;\n",
    "      if (Math.abs(v) >= 1e9 || (step < 1e-6 && v !== 0)) return v.toPrecision(4);\n",
    "      var dec = step < 1 ? Math.ceil(-Math.log10(step) - 1e-9) : 0;\n",
    "      return v.toFixed(dec);\n",
    "    }\n",
    "    function fmtU(b) {\n",
    "      var m = b / GIB;\n",
    "      return (GIB === 1 ? m.toFixed(0) : Math.abs(m) >= 100 ? m.toFixed(1) : m.toFixed(2)) + \" \" + U;\n",
    "    }\n",
    "    /* first index with a[k] >= x */\n",
    "    function lower(a, x) {\n",
    "      var lo = 0, hi = a.length;\n",
    "      while (lo < hi) { var mid = (lo + hi) >> 1; if (a[mid] < x) lo = mid + 1; else hi = mid; }\n",
    "      return lo;\n",
    "    }\n",
    "    function nearest(a, x) {\n",
    "      if (!a.length) return -1;\n",
    "      var k = lower(a, x);\n",
    "      if (k >= a.length) return a.length - 1;\n",
    "      if (k > 0 && x - a[k - 1] <= a[k] - x) return k - 1;\n",
    "      return k;\n",
    "    }\n",
    "    var ymax = 1, ymin = 0, sx, sy;\n",
    "    function X(t) { return M.l + (t - view[0]) / (view[1] - view[0]) * (W - M.l - M.r); }\n",
    "    function T(px) { return view[0] + (px - M.l) / (W - M.l - M.r) * (view[1] - view[0]); }\n",
    "    function Y(g) { var f = (g - ymin) / (ymax - ymin); if (f > 2) f = 2; if (f < -0.02) f = -0.02; return H - M.b - f * (H - M.t - M.b); }\n",
    "    function visible(a) {\n",
    "      var lo = lower(a, view[0]) - 1, hi = lower(a, view[1]) + 1;\n",
    "      return [Math.max(0, lo), Math.min(a.length, hi)];\n",
    "    }\n",
    "    function num(x) { return x.toFixed(1); }\n",
    "\n",
    "    function draw() {\n",
    "      W = Math.max(480, box.clientWidth || 900);\n",
    "      svg.setAttribute(\"viewBox\", \"0 0 \" + W + \" \" + H);\n",
    "      svg.setAttribute(\"width\", W);\n",
    "      svg.setAttribute(\"height\", H);\n",
    "      var vr = visible(tms), ar = visible(ams), k, m = 0, lo = Infinity;\n",
    "      for (k = vr[0]; k < vr[1]; k++) { if (cum[ns][k] > m) m = cum[ns][k]; if (cum[ns][k] < lo) lo = cum[ns][k]; }\n",
    "      for (k = ar[0]; k < ar[1]; k++) {\n",
    "        m = Math.max(m, D.alloc[k] / GIB, D.res[k] / GIB);\n",
    "        lo = Math.min(lo, D.alloc[k] / GIB);\n",
    "      }\n",
    "      ymax = m > 0 ? m * 1.05 : 1;\n",
    "      /* most of the memory live throughout: the axis starts near the\n",
    "       * least of it (the axis title says so), or every change is flat */\n",
    "      ymin = 0;\n",
    "      if (isFinite(lo) && lo > 0.5 * m) {\n",
    "        var l0 = lo - 0.1 * (ymax - lo), st = niceStep(ymax - l0, 7);\n",
    "        ymin = Math.max(0, Math.floor(l0 / st) * st);\n",
    "        ymax = m + 0.05 * (m - ymin);\n",
    "      }\n",
    "      sy = niceStep(ymax - ymin, 7);\n",
    "      if (GIB === 1 && sy < 1) sy = 1; /* whole bytes */\n",
    "      sx = niceStep(view[1] - view[0], Math.max(4, Math.floor((W - M.l - M.r) / 110)));\n",
    "      var out = [], pw = W - M.l - M.r, ph = H - M.t - M.b;\n",
    "      out.push('<defs><clipPath id=\"tt-clip\"><rect x=\"' + M.l + '\" y=\"' + M.t + '\" width=\"' + pw + '\" height=\"' + ph + '\"/></clipPath></defs>');\n",
    "      /* grid and ticks */\n",
    "      var g = [], lab = [];\n",
    "      for (k = Math.ceil(view[0] / sx - 1e-9); k * sx <= view[1] + sx * 1e-9; k++) {\n",
    "        var x = X(k * sx);\n",
    "        g.push('<line x1=\"' + num(x) + '\" x2=\"' + num(x) + '\" y1=\"' + M.t + '\" y2=\"' + (H - M.b) + '\"/>');\n",
    "        lab.push('<text x=\"' + num(x) + '\" y=\"' + (H - M.b + 18) + '\" text-anchor=\"middle\">' + fmt(k * sx, sx) + '</text>');\n",
    "      }\n",
    "      for (k = Math.ceil(ymin / sy - 1e-9); k * sy <= ymax * (1 + 1e-9); k++) {\n",
    "        var y = Y(k * sy);\n",
    "        if (k * sy > ymin) g.push('<line x1=\"' + M.l + '\" x2=\"' + (W - M.r) + '\" y1=\"' + num(y) + '\" y2=\"' + num(y) + '\"/>');\n",
    "        lab.push('<text x=\"' + (M.l - 8) + '\" y=\"' + num(y + 4) + '\" text-anchor=\"end\">' + fmt(k * sy, sy) + '</text>');\n",
    "      }\n",
    "      out.push('<g class=\"grid\">' + g.join(\"\") + '</g>');\n",
    "      /* stacked areas */\n",
    "      out.push('<g clip-path=\"url(#tt-clip)\">');\n",
    "      if (vr[1] - vr[0] === 1) {\n",
    "        k = vr[0];\n",
    "        for (s = 0; s < ns; s++) {\n",
    "          if (cum[s + 1][k] <= cum[s][k]) continue;\n",
    "          out.push('<rect x=\"' + M.l + '\" width=\"' + pw + '\" y=\"' + num(Y(cum[s + 1][k])) + '\" height=\"' + num(Y(cum[s][k]) - Y(cum[s + 1][k])) + '\" fill=\"' + D.colors[s] + '\" fill-opacity=\"0.7\"/>');\n",
    "        }\n",
    "      } else if (vr[1] - vr[0] > 1) {\n",
    "        /* steps: a value holds until the next point */\n",
    "        function band(lo, hi, fill, op) {\n",
    "          var p = [];\n",
    "          for (k = vr[0]; k < vr[1]; k++) {\n",
    "            if (k > vr[0]) p.push(num(X(tms[k])) + \",\" + num(Y(hi[k - 1])));\n",
    "            p.push(num(X(tms[k])) + \",\" + num(Y(hi[k])));\n",
    "          }\n",
    "          for (k = vr[1] - 1; k >= vr[0]; k--) {\n",
    "            p.push(num(X(tms[k])) + \",\" + num(Y(lo ? lo[k] : 0)));\n",
    "            if (k > vr[0]) p.push(num(X(tms[k])) + \",\" + num(Y(lo ? lo[k - 1] : 0)));\n",
    "          }\n",
    "          out.push('<path class=\"area\" d=\"M' + p.join(\"L\") + 'Z\" fill=\"' + fill + '\" fill-opacity=\"' + op + '\"/>');\n",
    "        }\n",
    "        if (D.before) band(null, cum[0], \"#d3d3d3\", 1);\n",
    "        for (s = 0; s < ns; s++) {\n",
    "          var nz = false;\n",
    "          for (k = vr[0]; k < vr[1] && !nz; k++) nz = cum[s + 1][k] > cum[s][k];\n",
    "          if (!nz) continue;\n",
    "          band(cum[s], cum[s + 1], D.colors[s], 0.7);\n",
    "        }\n",
    "      }\n",
    "      /* allocator curves */\n",
    "      function line(vals, cls) {\n",
    "        if (ar[1] - ar[0] < 1) return;\n",
    "        var q = [];\n",
    "        if (ar[1] - ar[0] === 1) {\n",
    "          q.push(M.l + \",\" + num(Y(vals[ar[0]] / GIB)), (W - M.r) + \",\" + num(Y(vals[ar[0]] / GIB)));\n",
    "        } else {\n",
    "          for (k = ar[0]; k < ar[1]; k++) {\n",
    "            if (k > ar[0]) q.push(num(X(ams[k])) + \",\" + num(Y(Math.max(0, vals[k - 1]) / GIB)));\n",
    "            q.push(num(X(ams[k])) + \",\" + num(Y(Math.max(0, vals[k]) / GIB)));\n",
    "          }\n",
    "        }\n",
    "        out.push('<path class=\"' + cls + '\" d=\"M' + q.join(\"L\") + '\"/>');\n",
    "      }\n",
    "      line(D.res, \"reserved\");\n",
    "      line(D.alloc, \"allocated\");\n",
    "      if (D.peak.allocated > 0 && (n || na)) {\n",
    "        var pt = D.peak.t / 1000;\n",
    "        if (pt >= view[0] && pt <= view[1]) {\n",
    "          var px = X(pt), py = Y(D.peak.allocated / GIB);\n",
    "          out.push('<line class=\"peakline\" x1=\"' + num(px) + '\" x2=\"' + num(px) + '\" y1=\"' + num(py) + '\" y2=\"' + (H - M.b) + '\"/>');\n",
    "          out.push('<circle class=\"peak\" cx=\"' + num(px) + '\" cy=\"' + num(py) + '\" r=\"5\"><title>peak ' + fmtU(D.peak.allocated) + ' at ' + pt.toFixed(3) + ' ms</title></circle>');\n",
    "        }\n",
    "      }\n",
    "      out.push('</g>');\n",
    "      out.push('<rect class=\"frame\" x=\"' + M.l + '\" y=\"' + M.t + '\" width=\"' + pw + '\" height=\"' + ph + '\"/>');\n",
    "      out.push('<g class=\"labels\">' + lab.join(\"\") + '</g>');\n",
    "      out.push('<text class=\"axis\" x=\"' + (M.l + pw / 2) + '\" y=\"' + (H - 8) + '\" text-anchor=\"middle\">Time (ms)</text>');\n",
    "      out.push('<text class=\"axis\" transform=\"translate(18,' + (M.t + ph / 2) + ') rotate(-90)\" text-anchor=\"middle\">Memory (' + U + ')' + (ymin > 0 ? ', axis starts at ' + fmt(ymin, sy) : '') + '</text>');\n",
    "      if (!n && !na) out.push('<text class=\"empty\" x=\"' + (M.l + pw / 2) + '\" y=\"' + (M.t + ph / 2) + '\" text-anchor=\"middle\">no memory events</text>');\n",
    "      out.push('<line id=\"tt-guide\" class=\"guide\" y1=\"' + M.t + '\" y2=\"' + (H - M.b) + '\" visibility=\"hidden\"/>');\n",
    "      out.push('<rect id=\"tt-sel\" class=\"sel\" y=\"' + M.t + '\" height=\"' + ph + '\" width=\"0\" visibility=\"hidden\"/>');\n",
    "      out.push('<rect id=\"tt-hit\" x=\"' + M.l + '\" y=\"' + M.t + '\" width=\"' + pw + '\" height=\"' + ph + '\" fill=\"transparent\"/>');\n",
    "      svg.innerHTML = out.join(\"\");\n",
    "      document.getElementById(\"tt-range\").textContent =\n",
    "        view[0] === full[0] && view[1] === full[1] ? \"full range\" :\n",
    "        view[0].toFixed(3) + \" \\u2013 \" + view[1].toFixed(3) + \" ms\";\n",
    "    }\n",
    "\n",
    "    function showTip(ev) {\n",
    "      var r = svg.getBoundingClientRect(), px = ev.clientX - r.left, py = ev.clientY - r.top;\n",
    "      var guide = document.getElementById(\"tt-guide\");\n",
    "      if (px < M.l || px > W - M.r || py < M.t || py > H - M.b || (!n && !na)) { hideTip(); return; }\n",
    "      var t = T(px), k = nearest(tms, t), a = nearest(ams, t), rows = [], gx;\n",
    "      if (k >= 0 && (a < 0 || Math.abs(tms[k] - t) <= Math.abs(ams[a] - t))) gx = X(tms[k]);\n",
    "      else gx = X(ams[a]);\n",
    "      guide.setAttribute(\"x1\", num(gx)); guide.setAttribute(\"x2\", num(gx));\n",
    "      guide.setAttribute(\"visibility\", \"visible\");\n",
    "      if (k >= 0) {\n",
    "        rows.push('<div class=\"th\">' + tms[k].toFixed(3) + ' ms</div><table>');\n",
    "        var tot = 0;\n",
    "        for (s = ns - 1; s >= 0; s--) {\n",
    "          var b = D.s[k][s];\n",
    "          tot += b;\n",
    "          rows.push('<tr' + (b ? '' : ' class=\"zero\"') + '><td><i style=\"background:' + D.colors[s] + '\"></i>' + esc(D.names[s]) + '</td><td>' + fmtU(b) + '</td></tr>');\n",
    "        }\n",
    "        if (D.before && D.before[k] > 0) {\n",
    "          tot += D.before[k];\n",
    "          rows.push('<tr><td><i style=\"background:#d3d3d3\"></i>live before the trace</td><td>' + fmtU(D.before[k]) + '</td></tr>');\n",
    "        }\n",
    "        if (ns > 1 || D.before) rows.push('<tr class=\"sum\"><td>Total</td><td>' + fmtU(tot) + '</td></tr>');\n",
    "        rows.push('</table>');\n",
    "      }\n",
    "      if (a >= 0) {\n",
    "        rows.push('<div class=\"th\">allocator at ' + ams[a].toFixed(3) + ' ms</div><table>');\n",
    "        rows.push('<tr><td><i class=\"la\"></i>Allocated</td><td>' + fmtU(D.alloc[a]) + '</td></tr>');\n",
    "        rows.push('<tr><td><i class=\"lr\"></i>Reserved</td><td>' + fmtU(D.res[a]) + '</td></tr></table>');\n",
    "      }\n",
    "      tip.innerHTML = rows.join(\"\");\n",
    "      tip.hidden = false;\n",
    "      var bw = box.clientWidth, tw = tip.offsetWidth, th = tip.offsetHeight;\n",
    "      var lx = px + 16 + tw > bw ? px - 16 - tw : px + 16;\n",
    "      var ly = Math.min(Math.max(4, py - th / 2), H - th - 4);\n",
    "      tip.style.left = Math.max(0, lx) + \"px\";\n",
    "      tip.style.top = ly + \"px\";\n",
    "    }\n",
    "    function hideTip() {\n",
    "      tip.hidden = true;\n",
    "      var guide = document.getElementById(\"tt-guide\");\n",
    "      if (guide) guide.setAttribute(\"visibility\", \"hidden\");\n",
    "    }\n",
    "    function setView(a, b) {\n",
    "      var fs = full[1] - full[0], minSpan = Math.max(fs * 1e-6, 1e-6);\n",
    "      if (b - a < minSpan) { var c = (a + b) / 2; a = c - minSpan / 2; b = c + minSpan / 2; }\n",
    "      if (b - a >= fs) { a = full[0]; b = full[1]; }\n",
    "      if (a < full[0]) { b += full[0] - a; a = full[0]; }\n",
    "      if (b > full[1]) { a -= b - full[1]; b = full[1]; }\n",
    "      view = [Math.max(a, full[0]), Math.min(b, full[1])];\n",
    "      draw();\n",
    "    }\n",
    "    var drag = null;\n",
    "    svg.addEventListener(\"wheel\", function (ev) {\n",
    "      var r = svg.getBoundingClientRect(), px = ev.clientX - r.left;\n",
    "      if (px < M.l || px > W - M.r) return;\n",
    "      ev.preventDefault();\n",
    "      var f = Math.exp(Math.max(-1, Math.min(1, ev.deltaY * 0.002)));\n",
    "      var c = T(px);\n",
    "      setView(c - (c - view[0]) * f, c + (view[1] - c) * f);\n",
    "      showTip(ev);\n",
    "    }, { passive: false });\n",
    "    svg.addEventListener(\"mousedown\", function (ev) {\n",
    "      var r = svg.getBoundingClientRect(), px = ev.clientX - r.left;\n",
    "      if (ev.button !== 0 || px < M.l || px > W - M.r) return;\n",
    "      ev.preventDefault();\n",
    "      drag = { x: px };\n",
    "    });\n",
    "    window.addEventListener(\"mousemove\", function (ev) {\n",
    "      if (!drag) return;\n",
    "      var r = svg.getBoundingClientRect();\n",
    "      var px = Math.max(M.l, Math.min(W - M.r, ev.clientX - r.left));\n",
    "      var sel = document.getElementById(\"tt-sel\");\n",
    "      sel.setAttribute(\"x\", num(Math.min(px, drag.x)));\n",
    "      sel.setAttribute(\"width\", num(Math.abs(px - drag.x)));\n",
    "      sel.setAttribute(\"visibility\", \"visible\");\n",
    "      drag.to = px;\n",
    "    });\n",
    "    window.addEventListener(\"mouseup\", function () {\n",
    "      if (!drag) return;\n",
    "      var d = drag;\n",
    "      drag = null;\n",
    "      document.getElementById(\"tt-sel\").setAttribute(\"visibility\", \"hidden\");\n",
    "      if (d.to !== undefined && Math.abs(d.to - d.x) > 4) setView(T(Math.min(d.x, d.to)), T(Math.max(d.x, d.to)));\n",
    "    });\n",
    "    svg.addEventListener(\"mousemove\", function (ev) { if (!drag) showTip(ev); });\n",
    "    svg.addEventListener(\"mouseleave\", hideTip);\n",
    "    svg.addEventListener(\"dblclick\", function () { setView(full[0], full[1]); });\n",
    "    document.getElementById(\"tt-reset\").addEventListener(\"click\", function () { setView(full[0], full[1]); });\n",
    "    window.addEventListener(\"resize\", draw);\n",
    "\n",
    "    var leg = [];\n",
    "    for (s = 0; s < ns; s++) leg.push('<span><i style=\"background:' + D.colors[s] + '\"></i>' + esc(D.names[s]) + '</span>');\n",
    "    if (D.before) leg.push('<span><i style=\"background:#d3d3d3\"></i>live before the trace</span>');\n",
    "    if (na) leg.push('<span><i class=\"la\"></i>Total Allocated</span><span><i class=\"lr\"></i>Total Reserved</span>');\n",
    "    if (D.peak.allocated > 0 && (n || na)) leg.push('<span><i class=\"pk\"></i>Peak allocated</span>');\n",
    "    document.getElementById(\"tt-legend\").innerHTML = leg.join(\"\");\n",
    "    draw();\n",
    "    status.setAttribute(\"data-state\", \"ok\");\n",
    "    status.textContent = \"drawn: \" + n + \" points, \" + na + \" allocator points\";\n",
    "  } catch (e) {\n",
    "    fail(e);\n",
    "  }\n",
    "})();\n",
};

/* ---- escaping ---- */

/* A JSON string that is also safe inside a <script> element. */
/* a trace's string for the page's data: invalid UTF-8 replaced, escaped
 * for a <script> by the writer (TT_JW_SCRIPT) */
static void jw_text(tt_jw *w, const char *s)
{
    tt_buf clean = TT_BUF_INIT;
    if (tt__utf8_clean(&clean, s, "\xef\xbf\xbd"))
        w->b->oom = 1;
    else
        tt_jw_strn(w, clean.buf, clean.len);
    tt_buf_release(&clean);
}

static void jw_ints(tt_jw *w, const char *key, const int64_t *v, size_t n)
{
    size_t i;
    tt_jw_nl(w, 0);
    tt_jw_karr(w, key);
    for (i = 0; i < n; i++)
        tt_jw_int(w, v[i]);
    tt_jw_end(w);
}

static void add_base64(tt_buf *b, const unsigned char *d, size_t len)
{
    static const char tab[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t i;
    char q[4];
    if (tt_buf_grow(b, len / 3 * 4 + 4))
        return;
    for (i = 0; i + 2 < len; i += 3) {
        uint32_t v = (uint32_t)d[i] << 16 | (uint32_t)d[i + 1] << 8 | d[i + 2];
        q[0] = tab[v >> 18];
        q[1] = tab[(v >> 12) & 63];
        q[2] = tab[(v >> 6) & 63];
        q[3] = tab[v & 63];
        tt_buf_add(b, q, 4);
    }
    if (i < len) {
        uint32_t v = (uint32_t)d[i] << 16 | (i + 1 < len ? (uint32_t)d[i + 1] << 8 : 0);
        q[0] = tab[v >> 18];
        q[1] = tab[(v >> 12) & 63];
        q[2] = i + 1 < len ? tab[(v >> 6) & 63] : '=';
        q[3] = '=';
        tt_buf_add(b, q, 4);
    }
}

/* ---- the page ---- */

/* the chart's data, JSON in a <script> */
static void add_data(tt_buf *b, const tt_memtl *tl)
{
    size_t i;
    int c, ns = tl->categories ? TT_CAT_COUNT : 1;
    const char *unit;
    double div = tt__unit_for(tt__memtl_max_bytes(tl), &unit);
    tt_jw w;
    tt_jw_init(&w, b, TT_JW_COMPACT | TT_JW_SCRIPT);
    tt_jw_obj(&w);
    tt_jw_kstr(&w, "unit", unit);
    tt_jw_knum(&w, "div", div, 0);
    tt_jw_karr(&w, "names");
    for (c = 0; c < ns; c++)
        jw_text(&w, ns == 1 ? "Total" : tt_category_name(c));
    tt_jw_end(&w);
    tt_jw_karr(&w, "colors");
    for (c = 0; c < ns; c++)
        tt_jw_str(&w, tt__category_hex(ns == 1 ? TT_CAT_UNKNOWN : c));
    tt_jw_end(&w);
    jw_ints(&w, "t", tl->t_us, tl->n);
    tt_jw_nl(&w, 0);
    tt_jw_karr(&w, "s");
    for (i = 0; i < tl->n; i++) {
        const int64_t *row = tl->sizes + i * 9;
        if (i)
            tt_jw_nl(&w, 0);
        tt_jw_arr(&w);
        if (ns == 1) {
            double tot = 0.0;
            for (c = 1; c < 9; c++)
                tot += (double)row[c];
            tt_jw_num(&w, tot, 0);
        } else {
            for (c = 1; c < 9; c++)
                tt_jw_int(&w, row[c]);
        }
        tt_jw_end(&w);
    }
    tt_jw_end(&w);
    if (tl->before) /* the memory live before the trace, per point */
        jw_ints(&w, "before", tl->before, tl->n);
    jw_ints(&w, "at", tl->alloc_t_us, tl->n_alloc);
    jw_ints(&w, "alloc", tl->allocated, tl->n_alloc);
    jw_ints(&w, "res", tl->reserved, tl->n_alloc);
    tt_jw_nl(&w, 0);
    tt_jw_kobj(&w, "peak");
    tt_jw_kint(&w, "t", tl->peak_t_us);
    tt_jw_kint(&w, "allocated", tl->peak_allocated);
    tt_jw_kint(&w, "reserved", tl->peak_reserved);
    tt_jw_key(&w, "op");
    jw_text(&w, tl->peak_op);
    tt_jw_key(&w, "step");
    jw_text(&w, tl->peak_step);
    tt_jw_end(&w);
    tt_jw_end(&w);
    if (tt_jw_finish(&w))
        b->oom = 1; /* out of memory: the page is not written */
}

static void add_top_table(tt_buf *b, const tt_memtl *tl)
{
    size_t i;
    double sum = 0.0, div;
    const char *unit;
    tt_buf_addstr(b, "<section class=\"card\">\n<h2>Largest live allocations at the peak</h2>\n");
    if (!tl->n_top) {
        tt_buf_addstr(b, "<p class=\"note\">No live allocations recorded at the peak.</p>\n</section>\n");
        return;
    }
    for (i = 0; i < tl->n_top; i++)
        sum += (double)tl->top[i].bytes;
    div = tt__unit_for(tt__memtl_max_bytes(tl), &unit); /* the chart's unit */
    tt_buf_addf(b, "<p class=\"note\">%zu allocation%s holding %.2f %s", tl->n_top,
                tl->n_top == 1 ? "" : "s", sum / div, unit);
    if (tl->peak_allocated > 0)
        tt_buf_addf(b, " of the %.2f %s allocated at the peak (%.1f%%)",
                    (double)tl->peak_allocated / div, unit,
                    100.0 * sum / (double)tl->peak_allocated);
    tt_buf_addf(b, ".</p>\n<table class=\"top\">\n<thead><tr><th>#</th><th>Address</th>"
                   "<th>Size (%s)</th><th>Allocated at (ms)</th><th>Op</th>"
                   "<th>Category</th><th>Rule</th></tr></thead>\n<tbody>\n", unit);
    for (i = 0; i < tl->n_top; i++) {
        const tt_memtl_alloc *a = &tl->top[i];
        char addr[32] = "\xe2\x80\x94"; /* no Addr in the trace: a dash */
        if (a->addr >= 0)
            snprintf(addr, sizeof(addr), "0x%" PRIx64, (uint64_t)a->addr);
        tt_buf_addf(b, "<tr><td class=\"num\">%zu</td><td class=\"addr\">%s"
                       "</td><td class=\"num\">%.2f</td><td class=\"num\">%.3f</td><td class=\"op\">",
                    i + 1, addr, (double)a->bytes / div, (double)a->t_us / 1000.0);
        tt__add_html(b, a->op && *a->op ? a->op : "\xe2\x80\x94");
        tt_buf_addf(b, "</td><td><i style=\"background:%s\"></i>", tt__category_hex(a->category));
        tt__add_html(b, tt_category_name(a->category));
        tt_buf_addstr(b, "</td><td>");
        tt__add_html(b, a->rule ? a->rule : "");
        tt_buf_addstr(b, "</td></tr>\n");
    }
    tt_buf_addstr(b, "</tbody>\n</table>\n</section>\n");
}

static void build_page(tt_buf *b, const tt_memtl *tl, const unsigned char *png, size_t png_len)
{
    const char *title = tl->title && *tl->title ? tt__base_name(tl->title) : "Memory timeline";
    tt_buf peak = TT_BUF_INIT;
    size_t i;

    tt_buf_addstr(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                     "<title>GPU Memory Timeline \xe2\x80\x94 ");
    tt__add_html(b, title);
    tt_buf_addstr(b, "</title>\n<style>\n");
    for (i = 0; i < TT_ARRAY_SIZE(css); i++)
        tt_buf_addstr(b, css[i]);
    tt_buf_addstr(b, "</style>\n</head>\n<body>\n<header>\n<h1>");
    tt__add_html(b, title);
    tt_buf_addstr(b, "</h1>\n<p class=\"meta\">");
    if (tl->device && *tl->device) {
        tt__add_html(b, tl->device);
        tt_buf_addstr(b, " \xc2\xb7 ");
    }
    tt__peak_line(&peak, tl, "\xef\xbf\xbd");
    if (peak.oom)
        b->oom = 1;
    tt__add_html(b, peak.buf);
    tt_buf_release(&peak);
    tt_buf_addstr(b, "</p>\n</header>\n"
                     "<section class=\"card\">\n<div class=\"toolbar\"><h2>Interactive timeline</h2>"
                     "<span class=\"hint\">Hover for values \xc2\xb7 mouse wheel or drag to zoom the "
                     "time axis \xc2\xb7 double-click or Reset to zoom out</span>"
                     "<span id=\"tt-range\">full range</span>"
                     "<button id=\"tt-reset\" type=\"button\">Reset zoom</button></div>\n"
                     "<div id=\"tt-chart\" class=\"chart\"><svg id=\"tt-svg\" role=\"img\" "
                     "aria-label=\"memory timeline\"></svg>"
                     "<div id=\"tt-tip\" class=\"tip\" hidden></div></div>\n"
                     "<div id=\"tt-legend\" class=\"legend\"></div>\n"
                     "<p id=\"tt-status\" data-state=\"loading\" hidden></p>\n"
                     "<noscript><p class=\"note\">The interactive chart needs JavaScript; "
                     "the static image is below.</p></noscript>\n</section>\n");
    add_top_table(b, tl);
    tt_buf_addstr(b, "<section class=\"card static\">\n<h2>Static image</h2>\n"
                     "<img alt=\"memory timeline\" width=\"1600\" height=\"960\" "
                     "src=\"data:image/png;base64,");
    add_base64(b, png, png_len);
    tt_buf_addstr(b, "\">\n</section>\n<footer>tracetool " TT_VERSION "</footer>\n"
                     "<script type=\"application/json\" id=\"tt-data\">");
    add_data(b, tl);
    tt_buf_addstr(b, "</script>\n<script>\n");
    for (i = 0; i < TT_ARRAY_SIZE(chart_js); i++)
        tt_buf_addstr(b, chart_js[i]);
    tt_buf_addstr(b, "</script>\n</body>\n</html>\n");
}

int tt_render_html(const tt_memtl *tl, const char *path)
{
    unsigned char *png = NULL;
    size_t png_len = 0;
    tt_buf page = TT_BUF_INIT;
    int rc;

    if (!path || !*path)
        return tt_error_set(TT_EINVALID, "no output file given");
    rc = tt_render_png_mem(tl, &png, &png_len);
    if (rc)
        return rc;
    build_page(&page, tl, png, png_len);
    free(png);
    if (page.oom) {
        tt_buf_release(&page);
        return tt_error_set(TT_ENOMEM, "building the HTML page: out of memory");
    }
    /* whole or not at all: a failure leaves the previous page as it was */
    rc = tt__write_file_atomic(path, page.buf, page.len);
    tt_buf_release(&page);
    return rc;
}
