"use strict";
(function () {
  var data = JSON.parse(document.getElementById("todeval-items").textContent);
  var items = data.items;
  var answers = {};
  var pos = 0;
  var picked = [];
  var KEYS = "1234567890abcdefghijklmnopqrstuvwxyz";

  function $(id) { return document.getElementById(id); }
  function node(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined) { e.textContent = text; }
    return e;
  }
  function choices(item) {
    var out = item.candidates.map(function (c) { return { id: c.id, text: c.text }; });
    if (item.cant_tell) { out.push({ id: "cant-tell", text: "can't tell" }); }
    return out;
  }
  function answeredCount() {
    return items.filter(function (it) { return answers[it.id]; }).length;
  }
  function status(text) { $("status").textContent = text; }

  function render() {
    if (document.activeElement && document.activeElement.blur) { document.activeElement.blur(); }
    var done = answeredCount();
    $("progress").textContent = done + " / " + items.length + " answered";
    $("bar").value = done;
    $("bar").max = items.length;
    if (pos >= items.length) {
      $("item").hidden = true;
      $("done").hidden = false;
      $("done").textContent = done === items.length
        ? "All " + items.length + " items answered. Thank you! Your answers are saved."
        : (items.length - done) + " item(s) still unanswered: press Backspace to go back.";
      return;
    }
    $("item").hidden = false;
    $("done").hidden = true;
    var item = items[pos];
    picked = (answers[item.id] || []).slice();
    $("position").textContent = "Item " + (pos + 1) + " of " + items.length;
    $("question").textContent = item.question;
    var ctx = $("context");
    ctx.replaceChildren();
    item.fields.forEach(function (f) {
      var row = node("div", "field");
      row.appendChild(node("span", "name", f.name + ": "));
      row.appendChild(node("span", "value", f.value));
      ctx.appendChild(row);
    });
    item.turns.forEach(function (t) {
      var row = node("div", t.focus ? "turn focus" : "turn");
      row.appendChild(node("span", "speaker", t.speaker + ": "));
      row.appendChild(node("span", "text", t.text));
      ctx.appendChild(row);
    });
    var list = $("choices");
    list.replaceChildren();
    choices(item).forEach(function (c, i) {
      var b = node("button", "choice");
      b.type = "button";
      b.dataset.id = c.id;
      b.appendChild(node("kbd", null, KEYS.charAt(i)));
      b.appendChild(node("span", null, " " + c.text));
      b.addEventListener("click", function () { toggle(c.id); });
      list.appendChild(b);
    });
    $("hint").textContent = item.multiple
      ? "Choose every one that applies (keys toggle), then Enter."
      : "Choose one, then Enter.";
    paint();
    var ctxEnd = ctx.lastElementChild;
    if (ctxEnd && ctxEnd.scrollIntoView) { ctxEnd.scrollIntoView({ block: "nearest" }); }
  }
  function paint() {
    Array.prototype.forEach.call(document.querySelectorAll("#choices .choice"), function (b) {
      var on = picked.indexOf(b.dataset.id) >= 0;
      b.classList.toggle("on", on);
      b.setAttribute("aria-pressed", on ? "true" : "false");
    });
  }
  function toggle(id) {
    var item = items[pos];
    var i = picked.indexOf(id);
    if (!item.multiple || id === "cant-tell") {
      picked = i >= 0 ? [] : [id];
    } else {
      picked = picked.filter(function (x) { return x !== "cant-tell"; });
      if (i >= 0) { picked.splice(i, 1); } else { picked.push(id); }
    }
    paint();
    if (picked.length) { save(item.id, picked.slice()); }
  }
  // Saves go one after another: sent at once, two quick answers (keys 1 then 2) could reach
  // the threaded server in the other order and the older one would be kept.
  var saving = Promise.resolve();
  function save(itemId, choice) {
    saving = saving.then(function () { return send(itemId, choice); });
    return saving;
  }
  function send(itemId, choice) {
    status("saving…");
    return fetch("api/answer", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ item: itemId, choice: choice })
    }).then(function (r) {
      if (!r.ok) { return r.json().then(function (e) { throw new Error(e.error); }); }
      answers[itemId] = choice;
      status("saved");
      $("progress").textContent = answeredCount() + " / " + items.length + " answered";
      $("bar").value = answeredCount();
    }).catch(function (e) { status("not saved: " + e.message); });
  }
  function next() {
    if (pos >= items.length) { return; }
    if (!picked.length) { status("choose an answer first"); return; }
    pos += 1;
    render();
  }
  function prev() {
    if (pos > 0) { pos -= 1; render(); }
  }
  document.addEventListener("keydown", function (ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) { return; }
    if (ev.key === "Enter") { ev.preventDefault(); next(); return; }
    if (ev.key === "Backspace") { ev.preventDefault(); prev(); return; }
    if (pos >= items.length) { return; }
    var i = KEYS.indexOf(ev.key.toLowerCase());
    var cs = choices(items[pos]);
    if (ev.key.length === 1 && i >= 0 && i < cs.length) { ev.preventDefault(); toggle(cs[i].id); }
  });
  $("next").addEventListener("click", next);
  $("prev").addEventListener("click", prev);
  fetch("api/answers").then(function (r) { return r.json(); }).then(function (saved) {
    answers = saved.answers || {};
    pos = 0;
    while (pos < items.length && answers[items[pos].id]) { pos += 1; }
    document.body.dataset.ready = "1";
    render();
  });
})();
