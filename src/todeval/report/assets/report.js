// todeval report: transcript browser, clickable tables and figures, live refresh.
// Data comes from <script type="application/json" id="todeval-data"> and is untrusted text:
// it is only ever inserted with createElement / textContent / setAttribute (never as HTML).
// Transcripts are drawn from each benchmark's profile (DATA.profiles: event views, detail
// layouts, labels, roles, group noun); this script knows no benchmark. Episodes come from one
// data source: embedded in the page (a static report) or fetched from /api/* (todeval view).
(function () {
  "use strict";

  var DATA = JSON.parse(document.getElementById("todeval-data").textContent);
  var RUNS = new Map(DATA.runs.map(function (r) { return [r.key, r]; }));
  var PROFILES = DATA.profiles || {};
  var EMPTY_PROFILE = { benchmark: "", title: "", group_noun: "group", roles: [], subject: null,
    failure: null, labels: [], events: {}, details: [] };
  // ep: the episode on its own page (its stable link); sel: the episode open beside the list
  var KEYS = ["run", "outcome", "fc", "group", "label", "q", "sel", "ep"];
  var FILTERS = ["run", "outcome", "fc", "group", "label", "q"];
  var OUTCOMES = ["success", "failure", "aborted", "system_error", "user_simulator_error", "infrastructure_error"];
  var STYLES = ["message", "call", "result", "good", "bad", "alert", "end", "note"];
  var PAGE = 200;
  var API = DATA.mode === "api";

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
  function isObj(v) { return v !== null && typeof v === "object" && !Array.isArray(v); }
  function empty(v) {
    if (v === null || v === undefined || v === "") return true;
    if (Array.isArray(v)) return v.length === 0;
    return isObj(v) && Object.keys(v).length === 0;
  }
  function highlight(str, terms) {
    str = text(str);
    if (!terms || !terms.length) return [str];
    var out = [], lower = str.toLowerCase(), at = 0;
    for (;;) {
      var best = -1, len = 0;
      for (var i = 0; i < terms.length; i++) {
        var hit = lower.indexOf(terms[i], at);
        if (hit !== -1 && (best === -1 || hit < best || (hit === best && terms[i].length > len))) {
          best = hit; len = terms[i].length;
        }
      }
      if (best === -1) break;
      if (best > at) out.push(str.slice(at, best));
      out.push(h("mark", null, str.slice(best, best + len)));
      at = best + len;
    }
    if (at < str.length) out.push(str.slice(at));
    return out;
  }
  function cap(s) { s = text(s); return s.charAt(0).toUpperCase() + s.slice(1); }
  function safeColour(c) { return typeof c === "string" && /^(#[0-9a-f]{3,8}|[a-z]{3,20})$/i.test(c) ? c : null; }

  // ---- profiles ------------------------------------------------------------------------------
  function profileOf(runKey) {
    var r = RUNS.get(runKey);
    return (r && PROFILES[r.benchmark]) || EMPTY_PROFILE;
  }
  var FAIL_LABELS = new Set();
  Object.keys(PROFILES).forEach(function (b) { if (PROFILES[b].failure) FAIL_LABELS.add(PROFILES[b].failure); });
  function failOf(e) {
    var p = profileOf(e.run);
    return p.failure ? ((e.labels || {})[p.failure] || "") : "";
  }
  function labelSpec(p, name) {
    return (p.labels || []).filter(function (s) { return s.name === name; })[0] || null;
  }
  function labelValue(spec, value) {
    if (!spec) return null;
    return (spec.values || []).filter(function (v) {
      return v.prefix ? String(value).indexOf(v.value) === 0 : v.value === value;
    })[0] || null;
  }
  function valueTitle(p, name, value) {
    var v = labelValue(labelSpec(p, name), value);
    return v && v.title ? v.title : value;
  }
  function failTitle(value) {
    // the failure label's title of this value in any profile present (they rarely differ)
    var names = Object.keys(PROFILES);
    for (var i = 0; i < names.length; i++) {
      var p = PROFILES[names[i]];
      if (p.failure) {
        var v = labelValue(labelSpec(p, p.failure), value);
        if (v && v.title) return v.title;
      }
    }
    return value;
  }
  function swatch(p, name, value) {
    var v = labelValue(labelSpec(p, name), value);
    var colour = v ? safeColour(v.colour) : null;
    if (!colour) return null;
    var s = h("span", { class: "swatch", "aria-hidden": "true" });
    s.style.backgroundColor = colour;
    return s;
  }
  function runDescription(r) {
    if (!r || !r.roles || !r.roles.length) return "";
    return r.roles.map(function (x) { return x.title + ": " + x.label; }).join(" · ");
  }
  function unique(values) { return Array.from(new Set(values)); }
  function failureName() {
    var titles = unique(Object.keys(PROFILES).map(function (b) {
      var p = PROFILES[b], spec = p.failure ? labelSpec(p, p.failure) : null;
      return spec ? (spec.title || "Failure class") : null;
    }).filter(Boolean));
    return titles.length === 1 ? titles[0] : "Failure class";
  }
  function groupName() {
    var nouns = unique(Object.keys(PROFILES).map(function (b) { return PROFILES[b].group_noun || "group"; }));
    return nouns.length === 1 ? cap(nouns[0]) : "Group";
  }

  // ---- state in the URL fragment -----------------------------------------------------------
  function readState() {
    var p = new URLSearchParams(location.hash.slice(1));
    var known = KEYS.some(function (k) { return p.has(k); });
    var s = {};
    KEYS.forEach(function (k) { s[k] = p.get(k) || ""; });
    var i = s.label.indexOf(":");
    if (i > 0 && FAIL_LABELS.has(s.label.slice(0, i))) { s.fc = s.label.slice(i + 1); s.label = ""; }
    return known ? s : null;
  }
  function hashOf(s) {
    var p = new URLSearchParams();
    KEYS.forEach(function (k) { if (s[k]) p.set(k, s[k]); });
    return "#" + p.toString();
  }
  function keyOf(e) { return e.run + "/" + e.id; }
  function filtersOf(s) {
    var out = {};
    FILTERS.forEach(function (k) { out[k] = s[k] || ""; });
    return out;
  }
  function failed(e) { return e.outcome !== "success"; }
  function searchTerms(q) {
    if (!q) return [];
    if (!API) return [q.toLowerCase()];
    return (q.toLowerCase().match(/[\p{L}\p{N}]+/gu) || []);
  }

  // ---- data sources: embedded episodes, or the view server's API ---------------------------
  function leaves(v, out) {
    if (v === null || v === undefined) return out;
    if (typeof v === "object") {
      Object.keys(v).forEach(function (k) { out.push(k); leaves(v[k], out); });
    } else {
      out.push(String(v));
    }
    return out;
  }
  // a big report's episodes come gzipped and base64-encoded (DATA.episodes_gz): inflated once,
  // by the browser's DecompressionStream, then parsed like the plain ones
  function embeddedEpisodes() {
    var plain = DATA.episodes || [];
    var gz = DATA.episodes_gz;
    if (typeof gz !== "string" || !gz) return Promise.resolve(plain);
    return Promise.resolve().then(function () {
      var bin = atob(gz), bytes = new Uint8Array(bin.length);
      for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
      var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
      return new Response(stream).text();
    }).then(function (t) {
      var more = JSON.parse(t);
      return Array.isArray(more) ? plain.concat(more) : plain;
    }).catch(function (err) {
      var box = $("transcripts");
      if (box) add(box, h("p", { "class": "note" }, "The transcripts could not be unpacked in this " +
        "browser (" + text(err && err.message) + "); a browser with DecompressionStream can show them."));
      return plain;
    });
  }
  function embeddedSource() {
    var eps = [];
    var byKey = new Map();
    var loaded = embeddedEpisodes().then(function (list) {
      eps = list;
      eps.forEach(function (e) { byKey.set(keyOf(e), e); });
    });
    function hay(e) {
      if (e._hay === undefined) {
        var parts = [e.run, e.id, e.task, e.group, e.outcome, e.reason];
        leaves(e.labels, parts);
        e.events.forEach(function (ev) {  // of a model call only the reply (prompts repeat)
          parts.push(ev.kind);
          if (ev.type === "model_call") { if (ev.data && ev.data.reply) parts.push(ev.data.reply); }
          else leaves(ev.data, parts);
        });
        e._hay = parts.join("\n").toLowerCase();
      }
      return e._hay;
    }
    function matches(e, s) {
      if (s.run && e.run !== s.run) return false;
      if (s.outcome && e.outcome !== s.outcome) return false;
      if (s.fc && failOf(e) !== s.fc) return false;
      if (s.group && e.group !== s.group) return false;
      if (s.label) {
        var i = s.label.indexOf(":");
        if ((e.labels[s.label.slice(0, i)] || "") !== s.label.slice(i + 1)) return false;
      }
      if (s.q && hay(e).indexOf(s.q.toLowerCase()) === -1) return false;
      return true;
    }
    function counts(fn) {
      var m = {};
      eps.forEach(function (e) { var k = fn(e); m[k] = (m[k] || 0) + 1; });
      return m;
    }
    return {
      facets: function () {
        return loaded.then(function () {
          var fc = counts(failOf);
          delete fc[""];
          return {
            total: eps.length, run: counts(function (e) { return e.run; }),
            outcome: counts(function (e) { return e.outcome; }), fc: fc,
            group: counts(function (e) { return e.group; })
          };
        });
      },
      list: function (s, offset, limit) {
        return loaded.then(function () {
          var all = eps.filter(function (e) { return matches(e, s); });
          all = all.filter(failed).concat(all.filter(function (e) { return !failed(e); }));
          return { total: all.length, offset: offset, rows: all.slice(offset, offset + limit) };
        });
      },
      episode: function (key) { return loaded.then(function () { return byKey.get(key) || null; }); },
      // the failures before and after `key` under the filters, in the runs' and files' order
      neighbours: function (s, key) {
        return loaded.then(function () {
          var at = byKey.get(key), pos = at ? eps.indexOf(at) : -1, prev = null, next = null;
          if (pos < 0) return { prev: null, next: null };
          for (var i = pos - 1; i >= 0 && !prev; i--) if (failed(eps[i]) && matches(eps[i], s)) prev = keyOf(eps[i]);
          for (var j = pos + 1; j < eps.length && !next; j++) if (failed(eps[j]) && matches(eps[j], s)) next = keyOf(eps[j]);
          return { prev: prev, next: next };
        });
      }
    };
  }
  function apiSource() {
    var cache = new Map();
    function get(path, params) {
      var qs = new URLSearchParams();
      Object.keys(params || {}).forEach(function (k) {
        var v = params[k];
        if (v !== "" && v !== null && v !== undefined) qs.set(k, String(v));
      });
      var url = path + (qs.toString() ? "?" + qs.toString() : "");
      return fetch(url, { cache: "no-store", headers: { Accept: "application/json" } }).then(function (r) {
        if (r.status === 404) return null;
        if (!r.ok) throw new Error(url + ": HTTP " + r.status);
        return r.json();
      });
    }
    return {
      facets: function () { return get("api/facets"); },
      // `after`: the previous page's `next` (the server continues after its last row)
      list: function (s, offset, limit, after) {
        return get("api/episodes", { run: s.run, outcome: s.outcome, fc: s.fc, group: s.group,
          label: s.label, q: s.q, offset: offset, limit: limit, after: after || "" });
      },
      episode: function (key) {
        if (cache.has(key)) return Promise.resolve(cache.get(key));
        var i = key.indexOf("/");
        if (i < 0) return Promise.resolve(null);
        return get("api/episode", { run: key.slice(0, i), id: key.slice(i + 1) }).then(function (e) {
          if (e) {
            if (cache.size > 50) cache.delete(cache.keys().next().value);
            cache.set(key, e);
          }
          return e;
        });
      },
      neighbours: function (s, key) {
        var i = key.indexOf("/");
        if (i < 0) return Promise.resolve({ prev: null, next: null });
        return get("api/neighbours", { at_run: key.slice(0, i), at_id: key.slice(i + 1), run: s.run,
          outcome: s.outcome, fc: s.fc, group: s.group, label: s.label, q: s.q })
          .then(function (r) { return r || { prev: null, next: null }; });
      }
    };
  }
  var source = API ? apiSource() : embeddedSource();

  // ---- filter controls -----------------------------------------------------------------------
  var $ = function (id) { return document.getElementById(id); };
  var listEl = $("ep-list"), detailEl = $("ep-detail");
  if (!listEl) { ready(); return; }
  var state = { run: "", outcome: "", fc: "", group: "", label: "", q: "", sel: "", ep: "" };
  var FACETS = { total: 0, run: {}, outcome: {}, fc: {}, group: {} };
  var lastFilter = null, shownRows = 0, listNext = "", listSeq = 0, detailSeq = 0;

  function fillSelect(sel, allLabel, entries) {
    sel.replaceChildren(h("option", { value: "" }, allLabel));
    entries.forEach(function (en) { sel.appendChild(h("option", { value: en[0] }, en[1])); });
  }
  function sortedKeys(m) { return Object.keys(m || {}).sort(); }
  function setupFacets(f) {
    FACETS = f || FACETS;
    var rc = FACETS.run || {};
    fillSelect($("f-run"), "all runs", DATA.runs.map(function (r) {
      var n = rc[r.key] || 0;
      var shown = !API && r.n_shown < r.n_episodes ? n + " of " + r.n_episodes + " shown" : String(n);
      var desc = runDescription(r);
      return [r.key, r.key + (desc ? " — " + desc : "") + " (" + shown + ")"];
    }));
    var oc = FACETS.outcome || {};
    var outcomes = OUTCOMES.filter(function (o) { return o in oc; })
      .concat(Object.keys(oc).filter(function (o) { return OUTCOMES.indexOf(o) < 0; }));
    fillSelect($("f-outcome"), "any outcome", outcomes.map(function (o) { return [o, o + " (" + oc[o] + ")"]; }));
    var fc = FACETS.fc || {};
    fillSelect($("f-class"), "any", sortedKeys(fc).map(function (c) {
      var t = failTitle(c);
      return [c, (t !== c ? t + " [" + c + "]" : c) + " (" + fc[c] + ")"];
    }));
    var gr = FACETS.group || {};
    fillSelect($("f-group"), "any", sortedKeys(gr).map(function (g) { return [g, (g || "(none)") + " (" + gr[g] + ")"]; }));
    $("f-class-name").textContent = failureName();
    $("f-group-name").textContent = groupName();
  }
  function setupControls() {
    [["f-run", "run"], ["f-outcome", "outcome"], ["f-class", "fc"], ["f-group", "group"]].forEach(function (pair) {
      $(pair[0]).addEventListener("change", function (ev) { state[pair[1]] = ev.target.value; commit(false); });
    });
    var timer = null;
    $("f-q").addEventListener("input", function (ev) {
      clearTimeout(timer);
      timer = setTimeout(function () { state.q = ev.target.value.trim(); commit(false); }, 180);
    });
    $("f-clear").addEventListener("click", function () {
      state = { run: "", outcome: "", fc: "", group: "", label: "", q: "", sel: state.sel, ep: state.ep };
      commit(false);
    });
    $("f-label").addEventListener("click", function () { state.label = ""; commit(false); });
  }
  function setSelect(sel, value) {
    if (value && !Array.prototype.some.call(sel.options, function (o) { return o.value === value; })) {
      sel.appendChild(h("option", { value: value }, value + " (0)"));
    }
    sel.value = value;
  }
  function syncControls() {
    setSelect($("f-run"), state.run); setSelect($("f-outcome"), state.outcome);
    setSelect($("f-class"), state.fc); setSelect($("f-group"), state.group);
    if (document.activeElement !== $("f-q")) $("f-q").value = state.q;
    var chip = $("f-label");
    chip.hidden = !state.label;
    chip.textContent = state.label ? state.label.replace(":", " = ") + "  ×" : "";
    chip.title = "remove this filter";
  }
  function commit(push) {
    var hash = hashOf(state);
    if (push) history.pushState(null, "", hash); else history.replaceState(null, "", hash);
    return render();
  }

  // ---- list ------------------------------------------------------------------------------------
  function filterKey(s) { return [s.run, s.outcome, s.fc, s.group, s.label, s.q].join("\u0001"); }
  function rowNode(e) {
    var key = keyOf(e), p = profileOf(e.run), fc = failOf(e);
    var row = h("div", { class: "ep-row" + (key === shownKey() ? " sel" : ""), role: "option", "data-ep": key, tabindex: "0" },
      h("span", { class: "id" }, e.id),
      h("span", { class: "oc " + (OUTCOMES.indexOf(e.outcome) >= 0 ? e.outcome : "other") }, e.outcome),
      h("span", { class: "sub" }, fc ? swatch(p, p.failure, fc) : null,
        [e.run, e.group || "–", fc ? valueTitle(p, p.failure, fc) : "", e.turns + " turns"].filter(Boolean).join(" · ")));
    row.addEventListener("click", function () { select(key); });
    row.addEventListener("keydown", function (ev) { if (ev.key === "Enter") select(key); });
    return row;
  }
  function listMessage(msg) {
    listEl.replaceChildren(h("p", { class: "ep-more placeholder" }, msg));
  }
  function renderList(append) {
    var seq = ++listSeq;
    var offset = append ? shownRows : 0;
    var s = Object.assign({}, state);
    return source.list(s, offset, PAGE, append ? listNext : "").then(function (res) {
      if (seq !== listSeq || !res) return;
      listNext = res.next || "";
      if (!append) { listEl.replaceChildren(); listEl.scrollTop = 0; }
      var more = listEl.querySelector(".ep-more");
      if (more) more.remove();
      res.rows.forEach(function (e) { listEl.appendChild(rowNode(e)); });
      shownRows = offset + res.rows.length;
      if (res.total > shownRows) {
        var btn = h("button", { type: "button" }, "show " + Math.min(PAGE, res.total - shownRows) + " more");
        btn.addEventListener("click", function () { renderList(true); });
        listEl.appendChild(h("div", { class: "ep-more" }, btn));
      }
      if (!res.total) listEl.appendChild(h("p", { class: "ep-more placeholder" }, "No episode matches."));
      $("f-count").textContent = res.total + " of " + FACETS.total + " episodes";
      markSelected(false);
      document.documentElement.setAttribute("data-list", String(seq));
    }).catch(function (err) {
      if (seq === listSeq) listMessage("Could not load the episode list (" + err.message + ").");
    });
  }
  function markSelected(scroll) {
    Array.prototype.forEach.call(listEl.querySelectorAll(".ep-row"), function (row) {
      var sel = row.getAttribute("data-ep") === shownKey();
      row.classList.toggle("sel", sel);
      if (sel && scroll !== false) {
        var top = row.offsetTop;
        if (top < listEl.scrollTop || top > listEl.scrollTop + listEl.clientHeight - row.offsetHeight) {
          listEl.scrollTop = Math.max(0, top - 40);
        }
      }
    });
  }
  function shownKey() { return state.ep || state.sel; }
  function select(key) {
    state.sel = key;
    state.ep = "";
    commit(true);
  }
  // the episode page's and the pane's links: to a key, in the same place (page or pane)
  function go(key) {
    if (!key) return;
    if (state.ep) state.ep = key; else state.sel = key;
    commit(true);
  }

  // ---- one transcript: details boxes from DetailViews, events from EventViews -----------------
  function kvs(obj, terms) {
    var dl = h("dl", { class: "kvs" });
    Object.keys(obj || {}).forEach(function (k) {
      dl.appendChild(h("dt", null, k));
      dl.appendChild(h("dd", null, highlight(num(obj[k]), terms)));
    });
    return dl;
  }
  function box(title) {
    var b = h("div", { class: "box" }, h("h4", null, title));
    for (var i = 1; i < arguments.length; i++) add(b, arguments[i]);
    return b;
  }
  function argsText(v) {
    if (!isObj(v)) return JSON.stringify(v);
    return Object.keys(v).map(function (k) { return k + ": " + JSON.stringify(v[k]); }).join(", ");
  }
  function pre(v, terms) { return h("pre", null, highlight(typeof v === "string" ? v : JSON.stringify(v, null, 1), terms)); }
  function lbl(t) { return h("span", { class: "lbl" }, t); }
  function fill(tpl, d) {
    return String(tpl).replace(/\{([^{}]+)\}/g, function (_, k) { return text(d[k]); });
  }
  function rowsTable(rows, terms) {
    if (!Array.isArray(rows) || !rows.length) return null;
    var cols = [];
    rows.forEach(function (r) { Object.keys(isObj(r) ? r : {}).forEach(function (k) { if (cols.indexOf(k) < 0) cols.push(k); }); });
    if (!cols.length) return h("p", null, rows.map(text).join(", "));
    return h("table", { class: "rows" },
      h("thead", null, h("tr", null, cols.map(function (c) { return h("th", null, c); }))),
      h("tbody", null, rows.map(function (r) {
        return h("tr", null, cols.map(function (c) { return h("td", null, highlight(text((r || {})[c]), terms)); }));
      })));
  }
  function scalarList(v) { return v.every(function (x) { return !isObj(x) && !Array.isArray(x); }); }
  // the fields of one entry (an object): titled per DetailView.fields ("" hides a field)
  function fieldsBlock(dv, obj, terms) {
    if (!isObj(obj)) return Array.isArray(obj) ? listBlock(dv, obj, terms) : h("p", null, highlight(text(obj), terms));
    var titles = dv.fields || {};
    var keys = Object.keys(titles).filter(function (k) { return k in obj; })
      .concat(Object.keys(obj).filter(function (k) { return !(k in titles); }));
    var flags = [], scalars = {}, parts = [];
    keys.forEach(function (k) {
      var v = obj[k], title = k in titles ? titles[k] : k;
      if (title === "" || empty(v)) return;
      if ((dv.pre || []).indexOf(k) >= 0) { parts.push(h("h4", null, title), pre(text(v), terms)); return; }
      if (typeof v === "boolean") {
        flags.push(h("span", { class: v ? "ok" : "bad" }, (v ? "✓ " : "✗ ") + title), "  ");
      } else if (isObj(v)) {
        parts.push(h("h4", null, title), kvs(v, terms));
      } else if (Array.isArray(v)) {
        parts.push(h("h4", null, title), scalarList(v) ? h("p", null, highlight(v.map(text).join(", "), terms)) : rowsTable(v, terms));
      } else {
        scalars[title] = v;
      }
    });
    return [Object.keys(scalars).length ? kvs(scalars, terms) : null, flags.length ? h("p", null, flags) : null, parts];
  }
  function listBlock(dv, items, terms) {
    if (scalarList(items)) return h("p", null, highlight(items.map(text).join(", "), terms));
    return h("ul", null, items.map(function (it) {
      if (!isObj(it)) return h("li", null, highlight(text(it), terms));
      var pres = (dv.pre || []).filter(function (k) { return !empty(it[k]); });
      var line = dv.item ? fill(dv.item, it) : Object.keys(it).filter(function (k) {
        return pres.indexOf(k) < 0 && !isObj(it[k]) && !Array.isArray(it[k]);
      }).map(function (k) { return k + ": " + text(it[k]); }).join(" · ");
      return h("li", null, highlight(line, terms), pres.map(function (k) { return pre(text(it[k]), terms); }));
    }));
  }
  function detailBoxes(dv, v, terms) {
    var title = dv.title || dv.key;
    switch (dv.layout) {
      case "sections":
        if (!isObj(v)) break;
        return Object.keys(v).filter(function (k) { return !empty(v[k]); }).map(function (k) {
          return box(title + " · " + k, fieldsBlock(dv, v[k], terms));
        });
      case "kv":
        if (!isObj(v)) break;
        return [box(title, fieldsBlock(dv, v, terms))];
      case "list":
        if (!Array.isArray(v)) break;
        return [box(title, listBlock(dv, v, terms))];
      case "rows":
        if (!Array.isArray(v)) break;
        return [box(title, rowsTable(v, terms))];
    }
    return [box(title, pre(v, terms))];
  }
  // ---- the episode debugger: header, navigation, score, review, details, timeline -----------
  function at(ev) { return "+" + (typeof ev.t === "number" ? ev.t.toFixed(2) : "?") + " s"; }
  function gutter(ev) { return h("span", { class: "t", "aria-hidden": "true" }, at(ev)); }
  function latency(v) {
    if (typeof v !== "number") return "latency ?";
    return v >= 1 ? v.toFixed(2) + " s" : (v * 1000).toFixed(v >= 0.01 ? 0 : 2) + " ms";
  }
  function clip(str, n) { str = text(str); return str.length > n ? str.slice(0, n - 1) + "…" : str; }
  // a model call: collapsed in its turn; opened, the messages sent and the raw reply
  function callNode(ev, d, terms) {
    var tokens = (d.prompt_tokens || 0) + " + " + (d.completion_tokens || 0) + " tokens" +
      (d.estimated ? " (estimated)" : "") + (d.tokens_unknown ? " (unknown)" : "");
    var facts = [d.model || "model", tokens, latency(d.latency_s)];
    if (d.cached) facts.push("cached");
    if (d.cost_usd) facts.push("$" + (d.cost_usd < 0.01 ? d.cost_usd.toPrecision(2) : d.cost_usd.toFixed(4)));
    var node = h("details", { class: "ev call model-call", "data-kind": ev.kind, "data-type": "model_call",
      title: "t = " + num(ev.t) + " s" },
      h("summary", null, gutter(ev), lbl("model call"), h("code", null, d.role || ev.actor), " · " + facts.join(" · ")));
    if (!Array.isArray(d.messages)) {
      add(node, h("p", { class: "muted" }, "Messages and reply not recorded (the run used --no-record-calls)."));
      return node;
    }
    add(node, h("p", { class: "muted" }, d.messages.length + " message(s) sent"));
    d.messages.forEach(function (m) {
      var body = [];
      if (!empty(m.content)) body.push(pre(text(m.content), terms));
      (m.tool_calls || []).forEach(function (c) { body.push(pre(c.name + " " + c.arguments, terms)); });
      add(node, h("div", { class: "call-msg" }, h("span", { class: "who" }, m.role + (m.name ? " · " + m.name : "")), body));
    });
    var reply = [];
    if (!empty(d.reply)) reply.push(pre(text(d.reply), terms));
    (d.tool_calls || []).forEach(function (c) { reply.push(pre(c.name + " " + c.arguments, terms)); });
    if (!reply.length) reply.push(h("p", { class: "muted" }, "(empty reply)"));
    add(node, h("div", { class: "call-msg reply" },
      h("span", { class: "who" }, "reply" + (d.finish_reason && d.finish_reason !== "stop" ? " · " + d.finish_reason : "")), reply));
    return node;
  }
  // an event: a message as a bubble; anything with more to show (arguments, rows, raw text)
  // as a line that opens in place
  function eventNode(ev, p, terms) {
    var d = isObj(ev.data) ? ev.data : {}, t = "t = " + num(ev.t) + " s · " + ev.actor;
    if (ev.type === "model_call") return callNode(ev, d, terms);
    var view = Object.prototype.hasOwnProperty.call(p.events || {}, ev.kind) ? p.events[ev.kind] : null;
    if (!view) {
      return h("details", { class: "ev note unknown", title: t, "data-kind": ev.kind },
        h("summary", null, gutter(ev), lbl(ev.kind + " · " + ev.actor), clip(JSON.stringify(d), 100)),
        pre(JSON.stringify(d, null, 1), terms));
    }
    var style = STYLES.indexOf(view.style) >= 0 ? view.style : "note", title = view.title;
    if (view.flag) {
      var ok = !!d[view.flag];
      style = ok ? "good" : "bad";
      if (!ok && view.flag_false_title) title = view.flag_false_title;
    }
    if (style === "message") {
      var side = ev.actor === p.subject ? " right" : "";
      return h("div", { class: "msg" + side, title: t, "data-kind": ev.kind, "data-actor": ev.actor },
        h("span", { class: "t", "aria-hidden": "true" }, at(ev)), h("span", { class: "who" }, title),
        view.text ? highlight(text(d[view.text]), terms) : pre(d, terms));
    }
    var line = [gutter(ev), lbl(title)];
    if (view.code) line.push(h("code", null, highlight(fill(view.code, d), terms)), " ");
    var bold = view.bold && !empty(d[view.bold]) ? text(d[view.bold]) : "";
    var main = view.text && !empty(d[view.text]) ? text(d[view.text]) : "";
    if (bold) line.push(h("b", null, highlight(bold, terms)));
    if (bold && main) line.push(" — ");
    if (main) line.push(highlight(main, terms));
    if (view.suffix) line.push(fill(view.suffix, d));
    var body = [];
    var rows = view.rows ? d[view.rows] : null;
    if (Array.isArray(rows)) { line.push(" · " + rows.length + " shown"); body.push(h("div", { class: "xscroll" }, rowsTable(rows, terms))); }
    if (view.args && d[view.args] !== undefined) {
      line.push(h("span", { class: "args" }, " " + clip(argsText(d[view.args]), 90)));
      body.push(h("pre", null, highlight(argsText(d[view.args]), terms)));
    }
    if (view.pre && !empty(d[view.pre])) body.push(pre(text(d[view.pre]), terms));
    if (!body.length) return h("div", { class: "ev " + style, title: t, "data-kind": ev.kind }, line);
    return h("details", { class: "ev " + style, title: t, "data-kind": ev.kind }, h("summary", null, line), body);
  }
  function mark(passed) {
    if (passed === true) return h("span", { class: "ok" }, "✓");
    if (passed === false) return h("span", { class: "bad" }, "✗");
    return h("span", { class: "muted" }, "–");
  }
  // the score: the metrics (the run's primary first), then how it was computed -- the
  // benchmark's explanation (DATA from its registered explainer), else what the record holds
  function scoreBox(e, p, run) {
    var names = Object.keys(e.metrics || {}), primary = run.primary || "";
    names.sort(function (a, b) { return (b === primary) - (a === primary); });
    var metrics = h("dl", { class: "kvs metrics" });
    names.forEach(function (k) {
      metrics.appendChild(h("div", { class: "kv" + (k === primary ? " primary" : "") }, h("dt", null, k), h("dd", null, num(e.metrics[k]))));
    });
    var x = isObj(e.explanation) ? e.explanation : null;
    var how = [];
    if (x) {
      how.push(h("p", { class: "summary" }, text(x.summary)));
      (x.groups || []).forEach(function (g) {
        // each check: [name, passed, expected, actual, note?] (todeval.report.explain)
        var checks = (Array.isArray(g.checks) ? g.checks : []).filter(Array.isArray).map(function (c) {
          return { name: c[0], passed: c[1], expected: c[2], actual: c[3], note: c[4] };
        });
        var n = checks.filter(function (c) { return c.passed === true; }).length;
        how.push(h("div", { class: "score-group" },
          h("h4", null, mark(g.passed), " " + text(g.title) + " · " + n + " of " + checks.length + " matched",
            g.note ? h("span", { class: "muted" }, " · " + text(g.note)) : null),
          checks.length ? h("table", { class: "checks" },
            h("thead", null, h("tr", null, h("th", null, ""), h("th", null, "check"), h("th", null, "wanted"), h("th", null, "got"))),
            h("tbody", null, checks.map(function (c) {
              return h("tr", { class: c.passed === false ? "miss" : c.passed === true ? "hit" : "" },
                h("td", null, mark(c.passed)), h("td", null, h("code", null, text(c.name))),
                h("td", null, text(c.expected)),
                h("td", null, text(c.actual), c.note ? h("div", { class: "muted" }, text(c.note)) : null));
            }))) : null));
      });
    } else {
      how.push(h("p", { class: "muted summary" }, (p.title || run.benchmark || "This benchmark") +
        " registers no score explanation: the record's metrics are above and its details below."));
    }
    return h("div", { class: "box score", id: "ep-score" }, h("h4", null, "Score"), metrics, how);
  }
  // the review: the verdict, each fault with its turn (a link that shows the turn) and evidence
  function reviewBox(e) {
    var r = isObj(e.review) ? e.review : null;
    if (!r) return null;
    var faults = Array.isArray(r.faults) ? r.faults : [];
    return h("div", { class: "box review", id: "ep-review" },
      h("h4", null, "Review"),
      h("p", null, "Verdict: ", h("b", { class: "verdict v-" + text(r.verdict).replace(/[^a-z]/g, "") }, text(r.verdict)),
        faults.length ? "" : h("span", { class: "muted" }, " · no fault found")),
      faults.length ? h("ul", { class: "faults" }, faults.map(function (f) {
        return h("li", null, h("b", null, text(f.side)), " · " + text(f.kind) + " · ",
          h("a", { href: "#", class: "turn-link", "data-turn": String(f.turn) }, "turn " + f.turn),
          f.evidence ? h("q", null, text(f.evidence)) : null);
      })) : null);
  }
  function showTurn(n) {
    var el = detailEl.querySelector('.turn-block[data-turn="' + String(n).replace(/[^0-9-]/g, "") + '"]');
    if (!el) return;
    el.scrollIntoView({ block: "start", behavior: "instant" });
    el.classList.remove("flash"); void el.offsetWidth; el.classList.add("flash");
  }
  function navBar(e, key) {
    var page = !!state.ep;
    var bar = h("div", { class: "ep-nav", id: "ep-nav" });
    if (page) {
      var back = filtersOf(state); back.sel = key;
      bar.appendChild(h("a", { href: hashOf(back), class: "back", id: "ep-back", title: "Esc" }, "← all episodes"));
    }
    var prev = h("button", { type: "button", id: "ep-prev", disabled: true, title: "p", "aria-keyshortcuts": "p" }, "‹ previous failure");
    var next = h("button", { type: "button", id: "ep-next", disabled: true, title: "n", "aria-keyshortcuts": "n" }, "next failure ›");
    var where = h("span", { class: "muted", id: "ep-where" });
    bar.appendChild(prev); bar.appendChild(next); bar.appendChild(where);
    var own = filtersOf(state); own.ep = key;
    bar.appendChild(page
      ? h("a", { href: hashOf({ ep: key }), class: "link", title: "the episode's stable link" }, "link to this episode")
      : h("a", { href: hashOf(own), class: "link", id: "ep-open" }, "open on its own page ⤢"));
    var seq = detailSeq;
    source.neighbours(filtersOf(state), key).then(function (n) {
      if (seq !== detailSeq || !n) return;
      NEIGHBOURS = n;
      [[prev, n.prev], [next, n.next]].forEach(function (pair) {
        pair[0].disabled = !pair[1];
        if (pair[1]) { pair[0].setAttribute("data-key", pair[1]); pair[0].addEventListener("click", function () { go(pair[1]); }); }
      });
      where.textContent = n.prev || n.next ? "" : "no other failure under these filters";
      document.documentElement.setAttribute("data-neighbours", key);
    }, function () { where.textContent = "(could not load the neighbouring failures)"; });
    return bar;
  }
  var NEIGHBOURS = { prev: null, next: null };
  function timeline(e, p, terms) {
    var faults = isObj(e.review) && Array.isArray(e.review.faults) ? e.review.faults : [];
    var byTurn = {};
    faults.forEach(function (f) { (byTurn[f.turn] = byTurn[f.turn] || []).push(f); });
    var tr = h("div", { class: "transcript", id: "ep-timeline" });
    var toggle = h("button", { type: "button", id: "ep-expand" }, "expand all");
    toggle.addEventListener("click", function () {
      var open = toggle.textContent === "expand all";
      Array.prototype.forEach.call(tr.querySelectorAll("details"), function (d) { d.open = open; });
      toggle.textContent = open ? "collapse all" : "expand all";
    });
    tr.appendChild(h("div", { class: "tl-head" }, h("h4", null, "Timeline · " + (e.events || []).length + " events"), toggle));
    var block = null, turn = null;
    (e.events || []).forEach(function (ev) {
      if (block === null || ev.turn !== turn) {
        turn = ev.turn;
        var here = byTurn[turn] || [];
        block = h("div", { class: "turn-block" + (here.length ? " evidence" : ""), "data-turn": String(turn) },
          h("div", { class: "turn" }, "Turn " + turn, here.map(function (f) {
            return h("span", { class: "fault" }, "review: " + text(f.kind) + " (" + text(f.side) + ")");
          })));
        tr.appendChild(block);
      }
      var node = eventNode(ev, p, terms);
      (byTurn[turn] || []).forEach(function (f) {
        if (f.evidence && node.textContent.indexOf(String(f.evidence).slice(0, 80)) >= 0) node.classList.add("evidence-ev");
      });
      block.appendChild(node);
    });
    return tr;
  }
  function drawDetail(e, key, terms) {
    detailEl.replaceChildren();
    if (!e) {
      var msg = "Select an episode from the list.";
      if (key) {
        var r = RUNS.get(key.split("/")[0]);
        msg = "Episode " + key + " is not in this report" + (r && !API && r.n_shown < r.n_episodes
          ? " (its run shows " + r.n_shown + " of " + r.n_episodes + " transcripts, failures first)." : ".");
        if (state.ep) {
          var back = filtersOf(state);
          detailEl.appendChild(h("div", { class: "ep-nav" }, h("a", { href: hashOf(back), class: "back", id: "ep-back" }, "← all episodes")));
        }
      }
      detailEl.appendChild(h("p", { class: "placeholder" }, msg));
      return;
    }
    var run = RUNS.get(e.run) || {}, p = profileOf(e.run);
    var labels = Object.keys(e.labels || {}).map(function (k) {
      var spec = labelSpec(p, k);
      return [(spec && spec.title) || k, " ", swatch(p, k, e.labels[k]), h("b", null, highlight(valueTitle(p, k, e.labels[k]), terms)), " · "];
    });
    var desc = runDescription(run);
    detailEl.appendChild(navBar(e, key));
    detailEl.appendChild(h("div", { class: "ep-head" },
      h("h3", null, e.id),
      h("div", { class: "facts" },
        h("span", { class: "oc " + (OUTCOMES.indexOf(e.outcome) >= 0 ? e.outcome : "other") }, e.outcome), " ",
        "run ", h("b", null, e.run), desc ? " · " + desc : "",
        " · " + (p.group_noun || "group") + " ", h("b", null, e.group || "–"), " · ", e.turns + " turns · ",
        num(e.duration_s) + " s · trial " + e.trial + " · seed " + e.seed),
      h("p", { class: "facts" }, labels, "ended: ", highlight(e.reason, terms))));
    var d = isObj(e.details) ? e.details : {};
    var top = h("div", { class: "boxes top" }, scoreBox(e, p, run), reviewBox(e));
    detailEl.appendChild(top);
    var boxes = h("div", { class: "boxes" });
    var known = new Set();
    (p.details || []).forEach(function (dv) {
      known.add(dv.key);
      if (!empty(d[dv.key])) add(boxes, detailBoxes(dv, d[dv.key], terms));
    });
    Object.keys(d).filter(function (k) { return !known.has(k); }).forEach(function (k) {
      boxes.appendChild(box(k, pre(d[k], terms)));
    });
    Object.keys(e.usage || {}).forEach(function (role) {
      var u = e.usage[role] || {};
      var role_ = (p.roles || []).filter(function (x) { return x.name === role; })[0];
      boxes.appendChild(box("Usage · " + (role_ ? role_.title : role), kvs({
        calls: u.calls, cached: u.cached_calls, prompt_tokens: u.prompt_tokens,
        completion_tokens: u.completion_tokens, cost_usd: u.cost_usd, latency_s: u.latency_s
      })));
    });
    detailEl.appendChild(boxes);
    detailEl.appendChild(timeline(e, p, terms));
    detailEl.scrollTop = 0;
  }
  detailEl.addEventListener("click", function (ev) {
    var link = ev.target instanceof Element ? ev.target.closest("a.turn-link") : null;
    if (!link) return;
    ev.preventDefault();
    showTurn(link.getAttribute("data-turn"));
  });
  function renderDetail() {
    var seq = ++detailSeq, key = shownKey(), terms = searchTerms(state.q);
    var page = !!state.ep;
    document.documentElement.classList.toggle("ep-page", page);
    document.title = page ? key + " · " + DATA.title : DATA.title;
    NEIGHBOURS = { prev: null, next: null };
    if (!key) { drawDetail(null, "", terms); return Promise.resolve(); }
    return source.episode(key).then(function (e) {
      if (seq !== detailSeq) return;
      drawDetail(e, key, terms);
      if (page) window.scrollTo(0, 0);
      if (window.performance && performance.mark) performance.mark("todeval-episode");
      document.documentElement.setAttribute("data-episode", key);
    }).catch(function (err) {
      if (seq !== detailSeq) return;
      detailEl.replaceChildren(h("p", { class: "placeholder" }, "Could not load " + key + " (" + err.message + ")."));
    });
  }

  function render() {
    syncControls();
    var jobs = [];
    var key = filterKey(state);
    if (key !== lastFilter) { lastFilter = key; jobs.push(renderList(false)); } else markSelected();
    jobs.push(renderDetail());
    return Promise.all(jobs);
  }

  // ---- routing: links, clickable rows and marks ----------------------------------------------
  function route(scroll) {
    var s = readState();
    if (!s) return; // a plain section anchor (#leaderboard): keep the browser as it is
    state = s;
    render();
    if (scroll && !state.ep) $("transcripts").scrollIntoView({ block: "start", behavior: "instant" });
  }
  document.addEventListener("click", function (ev) {
    var target = ev.target instanceof Element ? ev.target : null;
    if (!target || target.closest("a")) return;
    var el = target.closest("[data-href]");
    if (el) location.hash = el.getAttribute("data-href");
  });
  document.addEventListener("keydown", function (ev) {
    var el = ev.target instanceof Element ? ev.target.closest("[data-href]") : null;
    if (el && ev.key === "Enter") { location.hash = el.getAttribute("data-href"); return; }
    var typing = ev.target instanceof Element && ev.target.closest("input, select, textarea");
    if (typing || ev.ctrlKey || ev.metaKey || ev.altKey || !shownKey()) return;
    if (ev.key === "n" && NEIGHBOURS.next) go(NEIGHBOURS.next);
    else if (ev.key === "p" && NEIGHBOURS.prev) go(NEIGHBOURS.prev);
    else if (ev.key === "Escape" && state.ep) { var b = $("ep-back"); if (b) location.hash = b.getAttribute("href"); }
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

  setupControls();
  var nav = performance.getEntriesByType ? performance.getEntriesByType("navigation")[0] : null;
  var initial = readState();
  if (initial) state = initial;
  source.facets().then(function (f) { setupFacets(f); }, function () { setupFacets(null); })
    .then(render)
    .then(function () {
      if (initial && !initial.ep && !(nav && nav.type === "reload")) {
        $("transcripts").scrollIntoView({ block: "start", behavior: "instant" });
      }
      if (DATA.live) setTimeout(poll, DATA.poll_ms);
      ready();
    });
})();
