// The archive explorer's page: reads the question from the URL, asks /api/answer, draws the
// answer. Every text goes into the page through textContent or setAttribute, never as HTML.
"use strict";

const FEATURES = {
  "urim.total": ["Captures", "URI-Ms: every capture"],
  "urir": ["Unique URLs", "URI-Rs: distinct URLs"],
  "bytes": ["Bytes", "stored record lengths, summed"],
  "dedup_bytes": ["Bytes after dedup", "each distinct payload once, at its largest length"],
  "avg_size": ["Average size", "bytes after deduplication per unique URL"],
  "digests": ["Distinct payloads", "distinct payload digests"],
  "urim.min": ["Fewest captures of one URL", ""],
  "urim.max": ["Most captures of one URL", ""],
  "first": ["First capture", ""],
  "last": ["Last capture", ""],
};
const COLUMNS = ["urim.total", "urir", "bytes", "dedup_bytes", "avg_size", "digests", "first", "last"];
const CARDS = ["urim.total", "urir", "bytes", "dedup_bytes", "avg_size", "digests", "urim.min", "urim.max", "first", "last"];
const OWN = ["profile", "surt", "from", "to", "sort", "limit", "levels"];
const TITLES = {datetime: "By time", mime: "By MIME type", status: "By HTTP status",
                lang: "By language", size: "By size class", collection: "By collection", depth: "By crawl depth"};
const SVG = "http://www.w3.org/2000/svg";
let profiles = null;
let pending = 0;

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "text") node.textContent = value; else node.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}

function svg(tag, attrs) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (name === "text") node.textContent = value; else node.setAttribute(name, value);
  }
  return node;
}

function params() { return new URLSearchParams(location.search); }

function hrefWith(changes) {
  const p = params();
  for (const [name, value] of Object.entries(changes)) {
    if (value === null || value === undefined || value === "" || value === "-") p.delete(name); else p.set(name, value);
  }
  const text = p.toString();
  return text ? "?" + text : location.pathname;
}

function go(href) {
  history.pushState(null, "", href);
  load();
}

function link(text, href, attrs) {
  const a = el("a", Object.assign({href: href, text: text}, attrs || {}));
  a.addEventListener("click", (event) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    go(href);
  });
  return a;
}

// ------------------------------------------------------------------ numbers

const GROUP = new Intl.NumberFormat("en-US");
const DECIMALS = new Intl.NumberFormat("en-US", {minimumFractionDigits: 2, maximumFractionDigits: 2});

function number(value, decimals) {
  if (value === null || value === undefined) return "-";
  if (decimals) return DECIMALS.format(value);
  return GROUP.format(value);
}

function bytesText(value) {
  if (value === null || value === undefined) return "";
  const units = ["B", "kB", "MB", "GB", "TB", "PB"];
  let v = value, i = 0;
  while (v >= 1000 && i < units.length - 1) { v /= 1000; i++; }
  return (i ? v.toFixed(v < 10 ? 2 : 1) : String(Math.round(v))) + " " + units[i];
}

function timeText(ts) {
  if (!ts) return "-";
  return ts.slice(0, 4) + "-" + ts.slice(4, 6) + "-" + ts.slice(6, 8) + " " + ts.slice(8, 10) + ":" + ts.slice(10, 12) + ":" + ts.slice(12, 14);
}

function periodText(p) {
  if (p.includes(":")) return p.split(":").map(periodText).join(" to ");
  let out = p.slice(0, 4);
  if (p.length >= 6) out += "-" + p.slice(4, 6);
  if (p.length >= 8) out += "-" + p.slice(6, 8);
  if (p.length >= 10) out += " " + p.slice(8, 10) + "h";
  return out;
}

function featureText(name, value) {
  if (name === "first" || name === "last") return timeText(value);
  return number(value, name === "avg_size");
}

function dayText(ts) {
  return ts ? ts.slice(0, 4) + "-" + ts.slice(4, 6) + "-" + ts.slice(6, 8) : "-";
}

function valueCell(name, row) {
  const value = row.features[name];
  const bound = row.bounds[name];
  const td = el("td", {class: "n", "data-feature": name, "data-value": value === null ? "" : String(value)});
  const decimals = name === "avg_size";
  if (bound) {
    td.classList.add("bounded");
    td.setAttribute("title", "between " + number(bound[0], decimals) + " and " + (bound[1] === null ? "no known ceiling" : number(bound[1], decimals)));
    td.append(el("span", {class: "lowhigh", text: number(bound[0], decimals) + "–" + (bound[1] === null ? "?" : number(bound[1], decimals))}));
  } else if (value === null) {
    td.classList.add("missing");
    td.textContent = "–";
    td.setAttribute("title", "not in this profile's line");
  } else if (name === "first" || name === "last") {
    td.textContent = dayText(value);
    td.setAttribute("title", timeText(value));
  } else {
    td.textContent = featureText(name, value);
  }
  return td;
}

// ------------------------------------------------------------------ loading

async function load() {
  const ticket = ++pending;
  const status = document.getElementById("status");
  status.textContent = "Asking…";
  status.className = "status";
  try {
    if (profiles === null) {
      const r = await fetch("/api/profiles");
      profiles = (await r.json()).profiles;
      drawPicker();
    }
    const p = params();
    const r = await fetch("/api/answer?" + p.toString());
    const body = await r.json();
    if (ticket !== pending) return;
    if (!r.ok) {
      status.textContent = body.error || ("error " + r.status);
      status.className = "status error";
      document.getElementById("answer").hidden = true;
      document.getElementById("breakdowns").replaceChildren();
      return;
    }
    draw(body);
    status.textContent = "";
  } catch (e) {
    if (ticket !== pending) return;
    status.textContent = "The explorer cannot be reached (" + e.message + ")";
    status.className = "status error";
  }
}

function drawPicker() {
  const picker = document.getElementById("picker");
  if (profiles.length < 2) return;
  document.getElementById("picker-label").hidden = false;
  const chosen = params().get("profile") || profiles[0].name;
  picker.replaceChildren(...profiles.map((p) => el("option", {value: p.name, text: p.name, selected: p.name === chosen})));
  picker.addEventListener("change", () => go("?" + new URLSearchParams({profile: picker.value}).toString()));
}

// ------------------------------------------------------------------ the answer

function draw(a) {
  const q = a.question;
  document.title = "Archive explorer: " + a.key;
  document.getElementById("archive").textContent = a.profile;
  drawQuestion(a);
  document.getElementById("answer").hidden = false;
  document.getElementById("key").textContent = a.key;
  const json = document.getElementById("json");
  json.setAttribute("href", "/api/answer" + location.search);
  document.getElementById("timing").textContent = a.milliseconds + " ms";
  const note = document.getElementById("note");
  note.hidden = !a.note;
  note.textContent = a.note || "";
  note.className = "note " + (a.status || "");
  drawCards(a);
  const parts = a.breakdowns.map((b) => drawBreakdown(b, a, q));
  document.getElementById("breakdowns").replaceChildren(...parts);
}

function drawQuestion(a) {
  const q = a.question;
  const crumbs = document.getElementById("crumbs");
  const path = (a.path || []).concat([{key: q.surt, label: a.surt_label || q.surt}]);
  crumbs.replaceChildren(el("span", {class: "crumbs-title", text: "Where"}));
  path.forEach((step, i) => {
    if (i) crumbs.append(el("span", {class: "sep", text: "›"}));
    if (i === path.length - 1) crumbs.append(el("strong", {title: step.key, text: step.label}));
    else crumbs.append(link(step.label, hrefWith({surt: step.key === "*" ? null : step.key}), {title: step.key}));
  });
  const chips = document.getElementById("chips");
  chips.replaceChildren();
  for (const [name, value] of Object.entries(q)) {
    if (OWN.includes(name) || value === "-" || value === null) continue;
    chips.append(chip(name + ": " + (name === "datetime" ? periodText(value) : value), {[name]: null, levels: null}));
  }
  if (q.from || q.to) {
    chips.append(chip("time: " + (q.from ? periodText(q.from) : "the start") + " to " + (q.to ? periodText(q.to) : "the end"),
                      {from: null, to: null}));
  }
  if (!chips.childElementCount) chips.append(el("span", {class: "quiet-text", text: anyOfEvery(q) + ": click a row below to narrow the question."}));
  document.getElementById("from").value = q.from || "";
  document.getElementById("to").value = q.to || "";
}

// "Any time, any type, any status" and any value of each other key field of the profile (its
// criteria come from the registry: a plugin's too)
const ANY_WORDS = {datetime: "time", mime: "type"};
function anyOfEvery(q) {
  const text = Object.keys(q).filter(name => !OWN.includes(name)).map(name => "any " + (ANY_WORDS[name] || name)).join(", ");
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function chip(text, changes) {
  const span = el("span", {class: "chip"}, el("span", {text: text}));
  span.append(link("×", hrefWith(changes), {class: "chip-x", title: "remove", "aria-label": "remove " + text}));
  return span;
}

function drawCards(a) {
  const cards = document.getElementById("cards");
  cards.replaceChildren();
  if (!a.features) return;
  for (const name of CARDS) {
    const value = a.features[name];
    const bound = a.bounds[name];
    const card = el("div", {class: "card" + (bound ? " bounded" : ""), id: "card-" + name.replace(".", "-"), "data-feature": name,
                            "data-value": value === null ? "" : String(value)});
    card.append(el("div", {class: "card-name", text: FEATURES[name][0], title: FEATURES[name][1]}));
    if (bound) {
      const decimals = name === "avg_size";
      card.append(el("div", {class: "card-value", text: number(bound[0], decimals) + " – " + (bound[1] === null ? "?" : number(bound[1], decimals))}));
      card.append(el("div", {class: "card-sub"}, el("span", {class: "badge bound", text: "bounds"}), " lies between"));
    } else if (a.missing && a.missing.includes(name)) {
      // another producer's profile: its line does not have this feature
      card.classList.add("missing");
      card.append(el("div", {class: "card-value", text: "–"}));
      card.append(el("div", {class: "card-sub"}, el("span", {class: "badge missing", text: "missing"}), " not in this profile's line"));
    } else {
      card.append(el("div", {class: "card-value", text: featureText(name, value)}));
      const sub = el("div", {class: "card-sub"}, el("span", {class: "badge exact", text: "exact"}));
      if ((name.includes("bytes") || name === "avg_size") && value !== null) sub.append(" " + bytesText(value));
      card.append(sub);
    }
    cards.append(card);
  }
}

// ------------------------------------------------------------------ breakdowns

function refinement(b, row) {
  if (b.field === "surt") return {surt: row.value, levels: null};
  if (b.field === "datetime") {
    if (row.value.includes(":")) {
      const [from, to] = row.value.split(":");
      return {from: from, to: to, datetime: null, levels: null};
    }
    return {datetime: row.value, from: null, to: null, levels: null};
  }
  return {[b.field]: row.value, levels: levelsWithout(b.field)};
}

function levelsWithout(field) {
  const kept = (params().get("levels") || "").split(",").filter((x) => x && !x.startsWith(field + ":"));
  return kept.join(",") || null;
}

function drawBreakdown(b, a, q) {
  const section = el("section", {class: "breakdown", id: "by-" + b.field, "data-field": b.field});
  const title = b.field === "surt" ? "Inside " + (a.surt_label || q.surt) : (TITLES[b.field] || "By " + b.field);
  const head = el("div", {class: "breakdown-head"}, el("h2", {text: title}));
  if (b.levels.length > 1) {
    const tabs = el("div", {class: "levels", role: "group", "aria-label": "level"});
    for (const level of b.levels) {
      const kept = levelsWithout(b.field);
      const value = (kept ? kept + "," : "") + b.field + ":" + level;
      const tab = link(level, hrefWith({levels: value}), {class: "level" + (level === b.level ? " current" : "")});
      if (level === b.level) tab.setAttribute("aria-current", "true");
      tabs.append(tab);
    }
    head.append(tabs);
  } else if (b.level && b.field !== "surt") {
    head.append(el("span", {class: "level-one", text: b.level}));
  }
  section.append(head);
  if (b.note) section.append(el("p", {class: "note", text: b.note}));
  if (!b.rows.length) {
    if (!b.note) section.append(el("p", {class: "quiet-text", text: "Nothing to break down here."}));
    return section;
  }
  const sort = q.sort;
  section.append(chart(b, sort));
  section.append(table(b, sort));
  const shown = b.rows.length;
  if (b.total > shown) {
    const more = el("p", {class: "quiet-text", text: "The " + shown + " largest by " + FEATURES[b.sort || sort][0].toLowerCase() + " of " + number(b.total) + ". "});
    if (q.limit < 100) more.append(link("Show 100", hrefWith({limit: "100"})));
    section.append(more);
  }
  return section;
}

function table(b, sort) {
  const t = el("table", {class: "rows", id: "table-" + b.field});
  const head = el("tr");
  head.append(el("th", {scope: "col", text: b.field === "surt" ? "SURT" : b.field === "datetime" ? (b.level || "period") : (b.level || b.field)}));
  for (const name of COLUMNS) {
    const th = el("th", {scope: "col", class: "n" + (name === sort ? " sorted" : ""), title: FEATURES[name][1]});
    if (name === "first" || name === "last") th.textContent = FEATURES[name][0];
    else th.append(link(FEATURES[name][0] + (name === sort ? " ▼" : ""), hrefWith({sort: name === "urim.total" ? null : name})));
    head.append(th);
  }
  t.append(el("thead", {}, head));
  const body = el("tbody");
  for (const row of b.rows) {
    const tr = el("tr", {"data-value": row.value, "data-key": row.key});
    const shown = b.field === "datetime" ? periodText(row.value) : row.label;
    const th = el("th", {scope: "row"}, link(shown, hrefWith(refinement(b, row)), {title: row.key}));
    if (b.field === "surt" && row.label !== row.value) th.append(el("span", {class: "surt", text: row.value}));
    tr.append(th);
    for (const name of COLUMNS) tr.append(valueCell(name, row));
    body.append(tr);
  }
  t.append(body);
  return el("div", {class: "table-wrap"}, t);
}

function chart(b, sort) {
  const rows = b.rows.filter((r) => typeof r.features[sort] === "number");
  const wrap = el("figure", {class: "chart", "aria-hidden": "true"});
  if (!rows.length) return wrap;
  const width = 900;
  const value = (r) => (r.bounds[sort] && r.bounds[sort][1] !== null ? r.bounds[sort][1] : r.features[sort]);
  const top = Math.max(...rows.map(value), 1);
  if (b.order === "time") {
    const height = 140, left = 8, bottom = 22, w = (width - left * 2) / rows.length;
    const s = svg("svg", {viewBox: "0 0 " + width + " " + height, class: "columns", role: "img"});
    rows.forEach((r, i) => {
      const h = (r.features[sort] / top) * (height - bottom - 8);
      const x = left + i * w;
      const bar = svg("rect", {x: x + w * 0.12, y: height - bottom - h, width: Math.max(w * 0.76, 1), height: Math.max(h, 0.5), class: "bar"});
      bar.append(svg("title", {text: periodText(r.value) + ": " + number(r.features[sort])}));
      s.append(bar);
      whisker(s, r, sort, top, (v) => height - bottom - (v / top) * (height - bottom - 8), x + w / 2, true);
      const every = Math.ceil(rows.length / 14);
      if (i % every === 0) s.append(svg("text", {x: x + w / 2, y: height - 6, class: "axis", "text-anchor": "middle", text: periodText(r.value).slice(0, rows.length > 30 ? 7 : 10)}));
    });
    wrap.append(s);
    return wrap;
  }
  const shown = rows.slice(0, 15);
  const rowHeight = 22, labelWidth = 250, height = shown.length * rowHeight + 6;
  const s = svg("svg", {viewBox: "0 0 " + width + " " + height, class: "bars", role: "img"});
  shown.forEach((r, i) => {
    const y = 3 + i * rowHeight;
    const w = (r.features[sort] / top) * (width - labelWidth - 120);
    const label = b.field === "datetime" ? periodText(r.value) : r.label;
    s.append(svg("text", {x: labelWidth - 8, y: y + 15, class: "label", "text-anchor": "end", text: label.length > 34 ? label.slice(0, 33) + "…" : label}));
    const bar = svg("rect", {x: labelWidth, y: y + 3, width: Math.max(w, 1), height: rowHeight - 7, class: "bar"});
    bar.append(svg("title", {text: label + ": " + number(r.features[sort])}));
    s.append(bar);
    whisker(s, r, sort, top, (v) => labelWidth + (v / top) * (width - labelWidth - 120), y + rowHeight / 2 - 0.5, false);
    const shownValue = sort.includes("bytes") || sort === "avg_size" ? bytesText(r.features[sort]) : number(r.features[sort]);
    s.append(svg("text", {x: labelWidth + Math.max(w, 1) + 6, y: y + 15, class: "value", text: (r.bounds[sort] ? "≈ " : "") + shownValue}));
  });
  wrap.append(s);
  return wrap;
}

function whisker(s, r, sort, top, scale, at, vertical) {
  const bound = r.bounds[sort];
  if (!bound || bound[1] === null) return;
  const a = scale(bound[0]), z = scale(bound[1]);
  const line = vertical ? svg("line", {x1: at, x2: at, y1: a, y2: z, class: "whisker"})
                        : svg("line", {x1: a, x2: z, y1: at, y2: at, class: "whisker"});
  s.append(line);
}

// A host name or URL as the SURT key of its host or deepest directory ("cnn.com" ->
// "com,cnn)/*", "www.cnn.com/world/asia/x.html" -> "com,cnn)/world/asia/*"); a SURT as it is.
function surtOf(text) {
  text = text.trim();
  if (!text || text === "*" || /[,)]/.test(text) || text.endsWith("*")) return text;
  let rest = text.replace(/^[a-z][a-z0-9+.-]*:\/\//i, "");
  const slash = rest.search(/[/?#]/);
  const host = (slash < 0 ? rest : rest.slice(0, slash)).toLowerCase().replace(/^www\d*\./, "").replace(/:(80|443)$/, "");
  const path = slash < 0 ? "/" : rest.slice(slash).replace(/[?#].*$/, "");
  const name = host.replace(/:\d+$/, ""), port = host.slice(name.length);
  const surt = name.split(".").reverse().join(",") + port + ")";
  const dir = path.slice(0, path.lastIndexOf("/") + 1);
  return surt + (dir || "/") + "*";
}

// ------------------------------------------------------------------ start

document.getElementById("range").addEventListener("submit", (event) => {
  event.preventDefault();
  const from = document.getElementById("from").value.trim();
  const to = document.getElementById("to").value.trim();
  go(hrefWith({from: from, to: to, datetime: null, levels: levelsWithout("datetime")}));
});
document.getElementById("range-clear").addEventListener("click", () => go(hrefWith({from: null, to: null})));
document.getElementById("goto").addEventListener("submit", (event) => {
  event.preventDefault();
  const surt = surtOf(document.getElementById("goto-text").value);
  if (surt) go(hrefWith({surt: surt === "*" ? null : surt, levels: null}));
});
window.addEventListener("popstate", load);
load();
