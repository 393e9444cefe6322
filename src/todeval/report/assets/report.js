// todeval report: transcript browser, clickable tables and figures, live refresh.
// Data comes from <script type="application/json" id="todeval-data"> and is untrusted text:
// it is only ever inserted with createElement / textContent / setAttribute (never as HTML).
(function () {
  "use strict";

  var DATA = JSON.parse(document.getElementById("todeval-data").textContent);
  var RUNS = new Map(DATA.runs.map(function (r) { return [r.key, r]; }));
  var EPS = DATA.episodes;
  var BY_KEY = new Map();
  EPS.forEach(function (e, i) { e._i = i; e._key = e.run + "/" + e.id; BY_KEY.set(e._key, e); });
  var KEYS = ["run", "outcome", "fc", "group", "label", "q", "ep"];
  var OUTCOMES = ["success", "failure", "aborted", "system_error", "user_simulator_error", "infrastructure_error"];
  var PAGE = 400;

  // ---- DOM helpers (text only) ----------------------------------------------------------
  function h(tag, attrs) {
    var el = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (k) {
        var v = attrs[k];
        if (v === null || v === undefined || v === false) return;
        if (/^on/i.test(k)) return;
        if (k === "class") { el.className = String(v); return; }
        if (k === "href" && String(v).charAt(0) !== "#") return;
        el.setAttribute(k, v === true ? "" : String(v));
      });
    }
    for (var i = 2; i < arguments.length; i++) add(el, arguments[i]);
    return el;
  }
  function add(el, kid) {
    if (kid === null || kid === undefined || kid === false) return;
    if (Array.isArray(kid)) { kid.forEach(function (k) { add(el, k); }); return; }
    el.appendChild(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  function text(v) {
    if (v === null || v === undefined) return "";
    return typeof v === "string" ? v : JSON.stringify(v);
  }
  function num(v) {
    if (typeof v !== "number") return text(v);
    return Number.isInteger(v) ? String(v) : v.toFixed(3).replace(/0+$/, "").replace(/\.$/, "");
  }
  function highlight(str, q) {
    str = text(str);
    if (!q) return [str];
    var out = [], lower = str.toLowerCase(), needle = q.toLowerCase(), at = 0, hit;
    while ((hit = lower.indexOf(needle, at)) !== -1) {
      if (hit > at) out.push(str.slice(at, hit));
      out.push(h("mark", null, str.slice(hit, hit + needle.length)));
      at = hit + needle.length;
    }
    if (at < str.length) out.push(str.slice(at));
    return out;
  }

  // ---- state in the URL fragment -----------------------------------------------------------
  function readState() {
    var p = new URLSearchParams(location.hash.slice(1));
    var known = KEYS.some(function (k) { return p.has(k); });
    var s = {};
    KEYS.forEach(function (k) { s[k] = p.get(k) || ""; });
    if (s.label.indexOf("failure_class:") === 0) { s.fc = s.label.slice(14); s.label = ""; }
    return known ? s : null;
  }
  function hashOf(s) {
    var p = new URLSearchParams();
    KEYS.forEach(function (k) { if (s[k]) p.set(k, s[k]); });
    return "#" + p.toString();
  }
  function epLink(e) { return hashOf({ ep: e._key }); }

  // ---- search --------------------------------------------------------------------------------
  function leaves(v, out) {
    if (v === null || v === undefined) return out;
    if (typeof v === "object") {
      Object.keys(v).forEach(function (k) { out.push(k); leaves(v[k], out); });
    } else {
      out.push(String(v));
    }
    return out;
  }
  function hay(e) {
    if (e._hay === undefined) {
      var parts = [e.run, e.id, e.task, e.group, e.outcome, e.reason];
      leaves(e.labels, parts);
      e.events.forEach(function (ev) { parts.push(ev.kind); leaves(ev.data, parts); });
      e._hay = parts.join("\n").toLowerCase();
    }
    return e._hay;
  }
  function matches(e, s) {
    if (s.run && e.run !== s.run) return false;
    if (s.outcome && e.outcome !== s.outcome) return false;
    if (s.fc && (e.labels.failure_class || "") !== s.fc) return false;
    if (s.group && e.group !== s.group) return false;
    if (s.label) {
      var i = s.label.indexOf(":");
      if ((e.labels[s.label.slice(0, i)] || "") !== s.label.slice(i + 1)) return false;
    }
    if (s.q && hay(e).indexOf(s.q.toLowerCase()) === -1) return false;
    return true;
  }

  // ---- filter controls -----------------------------------------------------------------------
  var $ = function (id) { return document.getElementById(id); };
  var listEl = $("ep-list"), detailEl = $("ep-detail");
  if (!listEl) { ready(); return; }
  var state = { run: "", outcome: "", fc: "", group: "", label: "", q: "", ep: "" };
  var shown = PAGE, lastFilter = null;

  function counts(fn) {
    var m = new Map();
    EPS.forEach(function (e) { var k = fn(e); m.set(k, (m.get(k) || 0) + 1); });
    return m;
  }
  function fillSelect(sel, allLabel, entries) {
    sel.replaceChildren(h("option", { value: "" }, allLabel));
    entries.forEach(function (en) { sel.appendChild(h("option", { value: en[0] }, en[1])); });
  }
  function setup() {
    var runCounts = counts(function (e) { return e.run; });
    fillSelect($("f-run"), "all runs", DATA.runs.map(function (r) {
      return [r.key, r.key + " — " + r.system + " / " + r.user + " (" + (runCounts.get(r.key) || 0) + ")"];
    }));
    var oc = counts(function (e) { return e.outcome; });
    var outcomes = OUTCOMES.filter(function (o) { return oc.has(o); })
      .concat(Array.from(oc.keys()).filter(function (o) { return OUTCOMES.indexOf(o) < 0; }));
    fillSelect($("f-outcome"), "any outcome", outcomes.map(function (o) { return [o, o + " (" + oc.get(o) + ")"]; }));
    var fc = counts(function (e) { return e.labels.failure_class || ""; });
    fc.delete("");
    fillSelect($("f-class"), "any class", Array.from(fc.keys()).sort().map(function (c) { return [c, c + " (" + fc.get(c) + ")"]; }));
    var gr = counts(function (e) { return e.group; });
    fillSelect($("f-group"), "any group", Array.from(gr.keys()).sort().map(function (g) { return [g, (g || "(none)") + " (" + gr.get(g) + ")"]; }));
    [["f-run", "run"], ["f-outcome", "outcome"], ["f-class", "fc"], ["f-group", "group"]].forEach(function (pair) {
      $(pair[0]).addEventListener("change", function (ev) { state[pair[1]] = ev.target.value; commit(false); });
    });
    var timer = null;
    $("f-q").addEventListener("input", function (ev) {
      clearTimeout(timer);
      timer = setTimeout(function () { state.q = ev.target.value.trim(); commit(false); }, 180);
    });
    $("f-clear").addEventListener("click", function () {
      state = { run: "", outcome: "", fc: "", group: "", label: "", q: "", ep: state.ep };
      commit(false);
    });
    $("f-label").addEventListener("click", function () { state.label = ""; commit(false); });
  }
  function syncControls() {
    $("f-run").value = state.run; $("f-outcome").value = state.outcome;
    $("f-class").value = state.fc; $("f-group").value = state.group;
    if (document.activeElement !== $("f-q")) $("f-q").value = state.q;
    var chip = $("f-label");
    chip.hidden = !state.label;
    chip.textContent = state.label ? state.label.replace(":", " = ") + "  ×" : "";
    chip.title = "remove this filter";
  }
  function commit(push) {
    var hash = hashOf(state);
    if (push) history.pushState(null, "", hash); else history.replaceState(null, "", hash);
    render();
  }

  // ---- list ------------------------------------------------------------------------------------
  function filterKey(s) { return [s.run, s.outcome, s.fc, s.group, s.label, s.q].join("\u0001"); }
  function renderList() {
    var key = filterKey(state);
    if (key !== lastFilter) shown = PAGE;
    lastFilter = key;
    var list = EPS.filter(function (e) { return matches(e, state); });
    listEl.replaceChildren();
    list.slice(0, shown).forEach(function (e) {
      var fc = e.labels.failure_class;
      var row = h("div", { class: "ep-row" + (e._key === state.ep ? " sel" : ""), role: "option", "data-ep": e._key, tabindex: "0" },
        h("span", { class: "id" }, e.id),
        h("span", { class: "oc " + e.outcome }, e.outcome),
        h("span", { class: "sub" }, [e.run, e.group || "–", fc || "", e.turns + " turns"].filter(Boolean).join(" · ")));
      row.addEventListener("click", function () { select(e); });
      row.addEventListener("keydown", function (ev) { if (ev.key === "Enter") select(e); });
      listEl.appendChild(row);
    });
    if (list.length > shown) {
      var more = h("button", { type: "button" }, "show " + Math.min(PAGE, list.length - shown) + " more");
      more.addEventListener("click", function () { shown += PAGE; renderList(); });
      listEl.appendChild(h("div", { class: "ep-more" }, more));
    }
    if (!list.length) listEl.appendChild(h("p", { class: "ep-more placeholder" }, "No episode matches."));
    $("f-count").textContent = list.length + " of " + EPS.length + " episodes";
  }
  function markSelected() {
    Array.prototype.forEach.call(listEl.querySelectorAll(".ep-row"), function (row) {
      var sel = row.getAttribute("data-ep") === state.ep;
      row.classList.toggle("sel", sel);
      if (sel) {
        var top = row.offsetTop;
        if (top < listEl.scrollTop || top > listEl.scrollTop + listEl.clientHeight - row.offsetHeight) {
          listEl.scrollTop = Math.max(0, top - 40);
        }
      }
    });
  }
  function select(e) {
    state.ep = e._key;
    commit(true);
  }

  // ---- one transcript ------------------------------------------------------------------------
  function kvs(obj) {
    var dl = h("dl", { class: "kvs" });
    Object.keys(obj || {}).forEach(function (k) {
      dl.appendChild(h("dt", null, k));
      dl.appendChild(h("dd", null, num(obj[k])));
    });
    return dl;
  }
  function box(title) {
    var b = h("div", { class: "box" }, h("h4", null, title));
    for (var i = 1; i < arguments.length; i++) add(b, arguments[i]);
    return b;
  }
  function args(v) {
    if (!v || typeof v !== "object" || Array.isArray(v)) return JSON.stringify(v);
    return Object.keys(v).map(function (k) {
      return k + ": " + JSON.stringify(v[k]);
    }).join(", ");
  }
  function pre(v) { return h("pre", null, typeof v === "string" ? v : JSON.stringify(v, null, 1)); }
  function lbl(t) { return h("span", { class: "lbl" }, t); }
  function rowsTable(rows) {
    if (!Array.isArray(rows) || !rows.length) return null;
    var cols = [];
    rows.forEach(function (r) { Object.keys(r || {}).forEach(function (k) { if (cols.indexOf(k) < 0) cols.push(k); }); });
    return h("table", { class: "rows" },
      h("thead", null, h("tr", null, cols.map(function (c) { return h("th", null, c); }))),
      h("tbody", null, rows.map(function (r) {
        return h("tr", null, cols.map(function (c) { return h("td", null, highlight(text((r || {})[c]), state.q)); }));
      })));
  }
  function goalBoxes(goal) {
    return Object.keys(goal || {}).map(function (d) {
      var g = goal[d] || {};
      var parts = [];
      ["info", "fail_info", "book", "fail_book", "reqt", "req"].forEach(function (k) {
        var v = g[k];
        if (v && (Array.isArray(v) ? v.length : Object.keys(v).length)) {
          parts.push(h("h4", null, k.replace("_", " ")));
          parts.push(Array.isArray(v) ? h("p", null, v.join(", ")) : kvs(v));
        }
      });
      return box("Goal · " + d, parts);
    });
  }
  function bookingBoxes(details) {
    var bookings = details.bookings || {}, scores = details.domain_scores || {};
    var domains = Array.from(new Set(Object.keys(bookings).concat(Object.keys(scores))));
    return domains.map(function (d) {
      var b = bookings[d], sc = scores[d] || {};
      var parts = [];
      if (b) {
        parts.push(h("p", null, "reference ", h("b", null, text(b.reference))));
        if (b.info && Object.keys(b.info).length) { parts.push(h("h4", null, "booked row")); parts.push(kvs(b.info)); }
        if (b.book && Object.keys(b.book).length) { parts.push(h("h4", null, "booking slots")); parts.push(kvs(b.book)); }
        if (b.reqt && Object.keys(b.reqt).length) { parts.push(h("h4", null, "attributes passed on")); parts.push(kvs(b.reqt)); }
      } else {
        parts.push(h("p", { class: "bad" }, "not booked"));
      }
      if (Object.keys(sc).length) {
        var flags = ["inform", "booked", "attributes"].filter(function (k) { return k in sc; }).map(function (k) {
          return h("span", { class: sc[k] ? "ok" : "bad" }, (sc[k] ? "✓ " : "✗ ") + k + "  ");
        });
        parts.push(h("p", null, flags));
        if (Array.isArray(sc.mismatches) && sc.mismatches.length) {
          parts.push(h("h4", null, "mismatches"));
          parts.push(h("ul", null, sc.mismatches.map(function (m) { return h("li", null, text(m)); })));
        }
      }
      return box("Booking · " + d, parts);
    });
  }
  function toolName(ev) {
    var d = ev.data || {};
    if (d.tool) return text(d.tool);
    if (ev.kind === "db_query") return "retrievefrom" + text(d.domain) + "db";
    if (ev.kind === "booking_request") return "validate" + text(d.domain) + "booking";
    return ev.kind;
  }
  function eventNode(ev) {
    var d = ev.data || {}, q = state.q, t = "t = " + num(ev.t) + " s · " + ev.actor;
    switch (ev.kind) {
      case "user_message":
        return h("div", { class: "msg user", title: t }, h("span", { class: "who" }, "User"), highlight(d.text, q));
      case "system_message":
        return h("div", { class: "msg system", title: t }, h("span", { class: "who" }, "System"), highlight(d.text, q));
      case "db_query":
      case "booking_request":
        return h("div", { class: "ev call", title: t }, lbl("tool call"), h("code", null, toolName(ev)),
          h("pre", null, highlight(args(d.arguments || {}), q)));
      case "db_result":
        return h("div", { class: "ev result", title: t }, lbl("DB result"),
          highlight(text(d.message), q), " (total " + text(d.total) + ", " + ((d.rows || []).length) + " shown)",
          rowsTable(d.rows));
      case "booking_result":
        return h("div", { class: "ev " + (d.ok ? "booking-ok" : "booking-bad"), title: t },
          lbl(d.ok ? "booking confirmed" : "booking rejected"),
          d.reference ? h("b", null, text(d.reference) + " ") : null, highlight(text(d.message), q));
      case "violation":
        return h("div", { class: "ev violation", title: t }, lbl("format violation"), highlight(text(d.reason), q),
          h("pre", null, highlight(text(d.raw), q)));
      case "episode_end":
        return h("div", { class: "ev end", title: t }, lbl("end"), text(d.outcome) + " — ", highlight(text(d.reason), q));
      default:
        return h("div", { class: "ev", title: t }, lbl(ev.kind + " · " + ev.actor), h("pre", null, highlight(JSON.stringify(d, null, 1), q)));
    }
  }
  function renderDetail() {
    var e = BY_KEY.get(state.ep);
    detailEl.replaceChildren();
    if (!e) {
      detailEl.appendChild(h("p", { class: "placeholder" }, state.ep ? "Episode " + state.ep + " is not in this report." : "Select an episode from the list."));
      return;
    }
    var run = RUNS.get(e.run) || {};
    var labels = Object.keys(e.labels).map(function (k) { return [k + " ", h("b", null, e.labels[k]), " · "]; });
    detailEl.appendChild(h("div", { class: "ep-head", id: "episode-" + e._i },
      h("h3", null, e.id),
      h("div", { class: "facts" },
        h("span", { class: "oc " + e.outcome }, e.outcome), " ",
        "run ", h("b", null, e.run), " · ", text(run.system), " vs ", text(run.user),
        " · group ", h("b", null, e.group || "–"), " · ", e.turns + " turns · ",
        num(e.duration_s) + " s · trial " + e.trial + " · seed " + e.seed + " · ",
        h("a", { href: epLink(e) }, "link to this episode")),
      h("p", { class: "facts" }, labels, "ended: ", highlight(e.reason, state.q))));
    var d = e.details || {};
    var boxes = h("div", { class: "boxes" });
    var metrics = kvs(e.metrics);
    metrics.className = "kvs two";
    boxes.appendChild(box("Metrics", metrics));
    goalBoxes(d.goal).forEach(function (b) { boxes.appendChild(b); });
    if (d.bookings || d.domain_scores) bookingBoxes(d).forEach(function (b) { boxes.appendChild(b); });
    if (Array.isArray(d.violations) && d.violations.length) {
      boxes.appendChild(box("Violations", h("ul", null, d.violations.map(function (v) {
        return h("li", null, "turn " + text(v.turn) + ": " + text(v.reason), pre(text(v.raw)));
      }))));
    }
    var known = ["goal", "bookings", "domain_scores", "violations"];
    Object.keys(d).filter(function (k) { return known.indexOf(k) < 0; }).forEach(function (k) {
      boxes.appendChild(box(k, pre(d[k])));
    });
    Object.keys(e.usage || {}).forEach(function (role) {
      var u = e.usage[role];
      boxes.appendChild(box("Usage · " + role, kvs({
        calls: u.calls, cached: u.cached_calls, prompt_tokens: u.prompt_tokens,
        completion_tokens: u.completion_tokens, cost_usd: u.cost_usd, latency_s: u.latency_s
      })));
    });
    detailEl.appendChild(boxes);
    var tr = h("div", { class: "transcript" });
    var turn = null;
    e.events.forEach(function (ev) {
      if (ev.turn !== turn) { turn = ev.turn; tr.appendChild(h("div", { class: "turn" }, "Turn " + turn)); }
      tr.appendChild(eventNode(ev));
    });
    detailEl.appendChild(tr);
    detailEl.scrollTop = 0;
  }

  function render() {
    syncControls();
    if (filterKey(state) !== lastFilter) renderList();
    markSelected();
    renderDetail();
  }

  // ---- routing: links, clickable rows and marks ----------------------------------------------
  function route(scroll) {
    var s = readState();
    if (!s) return; // a plain section anchor (#leaderboard): keep the browser as it is
    state = s;
    render();
    if (scroll) $("transcripts").scrollIntoView({ block: "start", behavior: "instant" });
  }
  document.addEventListener("click", function (ev) {
    var target = ev.target instanceof Element ? ev.target : null;
    if (!target || target.closest("a")) return;
    var el = target.closest("[data-href]");
    if (el) location.hash = el.getAttribute("data-href");
  });
  document.addEventListener("keydown", function (ev) {
    var el = ev.target instanceof Element ? ev.target.closest("[data-href]") : null;
    if (el && ev.key === "Enter") location.hash = el.getAttribute("data-href");
  });
  window.addEventListener("hashchange", function () { route(true); });
  window.addEventListener("popstate", function () { route(false); });

  // ---- live refresh (todeval view) -------------------------------------------------------------
  function poll() {
    fetch("version.json", { cache: "no-store" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (j) {
        if (j && j.version && j.version !== DATA.version) { location.reload(); return; }
        var badge = $("live");
        if (badge) badge.textContent = "live · checked " + new Date().toLocaleTimeString();
        setTimeout(poll, DATA.poll_ms);
      })
      .catch(function () { setTimeout(poll, DATA.poll_ms * 3); });
  }

  // printing (a paper appendix): show every manifest
  window.addEventListener("beforeprint", function () {
    Array.prototype.forEach.call(document.querySelectorAll("details"), function (d) { d.open = true; });
  });

  function ready() {
    if (window.performance && performance.mark) performance.mark("todeval-ready");
    document.documentElement.setAttribute("data-ready", "1");
  }

  setup();
  var nav = performance.getEntriesByType ? performance.getEntriesByType("navigation")[0] : null;
  var initial = readState();
  if (initial) state = initial;
  render();
  if (initial && !(nav && nav.type === "reload")) {
    $("transcripts").scrollIntoView({ block: "start", behavior: "instant" });
  }
  if (DATA.live) setTimeout(poll, DATA.poll_ms);
  ready();
})();
