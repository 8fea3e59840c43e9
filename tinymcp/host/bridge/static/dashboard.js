// The bridge's dashboard page: polls the bridge's /dashboard/data (never MCP, never the board)
// and draws each board: its tools, readings, alerts, and a live plot of each history (uPlot).
// Everything a board says is put in the page as text, never as markup.
"use strict";

(function () {
  const POLL_MS = 2000;
  const TOKEN_KEY = "tinymcp-bridge-token";
  const UNITS = { Cel: "\u00b0C", "%": "%", hPa: "hPa", V: "V", "1": "" };
  const token = takeToken();
  const sections = new Map();   // board key -> {root, parts}
  const plots = new Map();      // board key + uri -> {figure, plot}
  let polls = 0;

  function takeToken() {
    // A token given once as ?token= on the page URL is kept for this tab and taken out of
    // the address bar (and so out of history and screenshots).
    const params = new URLSearchParams(location.search);
    const given = params.get("token");
    if (given === null) {
      return sessionStorage.getItem(TOKEN_KEY);
    }
    sessionStorage.setItem(TOKEN_KEY, given);
    params.delete("token");
    const rest = params.toString();
    history.replaceState(null, "", location.pathname + (rest ? "?" + rest : ""));
    return given;
  }

  function el(tag, text, className) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (className) node.className = className;
    return node;
  }

  function row(cells, header) {
    const tr = el("tr");
    for (const cell of cells) tr.append(el(header ? "th" : "td", cell));
    return tr;
  }

  function each(list, draw) {
    // draw(item) for every item of a list a board sent: one that cannot be drawn (null, a
    // number where an object belongs) is left out, never the page.
    if (!Array.isArray(list)) return;
    for (const item of list) {
      try {
        draw(item);
      } catch (e) {
        console.warn("left out a value the page cannot show:", e.message);
      }
    }
  }

  function unit(code) {
    return Object.prototype.hasOwnProperty.call(UNITS, code) ? UNITS[code] : code || "";
  }

  function num(value) {
    if (typeof value !== "number") return String(value);
    return Number.isInteger(value) ? String(value) : String(Number(value.toPrecision(4)));
  }

  function seconds(s) {
    if (s < 90) return s.toFixed(s < 10 ? 1 : 0) + " s";
    if (s < 5400) return Math.round(s / 60) + " min";
    return (s / 3600).toFixed(1) + " h";
  }

  function status(text, failed) {
    const node = document.getElementById("status");
    node.textContent = text;
    node.className = failed ? "failed" : "";
  }

  async function poll() {
    try {
      if (document.visibilityState === "hidden") return;   // no board reads for a hidden tab
      const headers = token ? { Authorization: "Bearer " + token } : {};
      const response = await fetch("dashboard/data", { headers: headers, cache: "no-store" });
      if (response.status === 401) {
        sessionStorage.removeItem(TOKEN_KEY);
        status("This bridge needs its token: open this page as /?token=TOKEN, with the token "
               + "the bridge was started with (--token or $TINYMCP_BRIDGE_TOKEN).", true);
        return;
      }
      if (!response.ok) {
        status("The bridge answered " + response.status + "; trying again.", true);
        return;
      }
      render(await response.json());
      polls += 1;
      document.body.dataset.updates = String(polls);
      status("Updated " + new Date().toLocaleTimeString() + " \u00b7 every "
             + POLL_MS / 1000 + " s from the bridge's own session with each board.");
    } catch (e) {
      status("The bridge is not answering (" + e.message + "); trying again.", true);
    } finally {
      setTimeout(poll, POLL_MS);   // the next poll only after this one: one in flight
    }
  }

  function render(data) {
    const hint = document.getElementById("charts-hint");
    hint.hidden = data.charts;
    hint.textContent = data.charts ? "" : data.charts_hint;
    const keys = new Set();
    each(data.boards.map(function (board, i) { return [board, i]; }), function (pair) {
      const board = pair[0];
      const key = (board && board.label) || String(pair[1]);
      keys.add(key);
      drawBoard(key, board, data);
    });
    drawEvents(data.events || []);
    for (const [key, section] of sections) {
      if (!keys.has(key)) {
        section.root.remove();
        sections.delete(key);
        forgetPlots(key, new Set());
      }
    }
  }

  function drawEvents(events) {
    // What wait_for_event hands the hosts, newest first.
    const table = document.getElementById("event-list");
    table.replaceChildren(row(["when", "board", "kind", "what"], true));
    each(events, function (e) {
      let what = e.uri || "";
      if (e.kind === "alert") {
        what = e.quantity + " " + num(e.value) + " " + unit(e.unit)
               + (e.crossed ? " crossed " + e.crossed + " " + num(e.level) : "");
      }
      const when = new Date(e.at * 1000).toLocaleTimeString();
      table.append(row([when, e.board || "", e.kind, what]));
    });
    if (!events.length) table.append(row(["none yet (alerts, list changes, boards coming "
                                           + "and going)", "", "", ""]));
  }

  function forgetPlots(key, keep) {
    // Plots of a board that left, or of histories it no longer lists.
    for (const [id, entry] of plots) {
      if (id.startsWith(key + " ") && !keep.has(id)) {
        if (entry.plot) entry.plot.destroy();
        entry.figure.remove();
        plots.delete(id);
      }
    }
  }

  function section(key) {
    let found = sections.get(key);
    if (found) return found;
    const root = el("section", null, "board");
    root.dataset.board = key;
    const parts = {
      heading: el("h2"), instructions: el("p", null, "instructions"),
      error: el("p", null, "error"), pending: el("div", null, "pending"),
      readings: el("table", null, "readings"),
      alerts: el("table", null, "alerts"), tools: el("table", null, "tools"),
      plots: el("div", null, "plots"),
    };
    const grid = el("div", null, "grid");
    for (const [title, table] of [["Readings", parts.readings], ["Alerts", parts.alerts],
                                  ["Tools", parts.tools]]) {
      const box = el("div");
      box.append(el("h3", title), table);
      grid.append(box);
    }
    root.append(parts.heading, parts.instructions, parts.error, parts.pending, grid,
                el("h3", "History"),
                parts.plots);
    document.getElementById("boards").append(root);
    found = { root: root, parts: parts };
    sections.set(key, found);
    return found;
  }

  function drawBoard(key, board, data) {
    const parts = section(key).parts;
    parts.heading.replaceChildren(el("span", board.title || board.name || "board"));
    if (board.label) parts.heading.append(el("span", board.label, "label"));
    parts.heading.append(el("span", [board.name, board.version].filter(Boolean).join(" "),
                            "name"),
                         el("span", board.state, "state " + board.state));
    parts.instructions.textContent = board.instructions || "";
    parts.error.textContent = board.error || "";
    parts.error.hidden = !board.error;
    drawPending(parts.pending, Array.isArray(board.pending) ? board.pending : []);

    parts.readings.replaceChildren(row(["reading", "value", "age"], true));
    each(board.readings, function (r) {
      const values = Object.keys(r.units).filter(function (k) { return k in r; })
        .map(function (k) {
          return k + " " + num(r[k]) + (unit(r.units[k]) ? " " + unit(r.units[k]) : "");
        });
      const age = (r.age_ms || 0) / 1000 + Math.max(0, data.now - r.read_at);
      parts.readings.append(row([r.title || r.uri, values.join(", "), seconds(age)]));
    });

    const alerts = board.alerts && Array.isArray(board.alerts.alerts) ? board.alerts.alerts : [];
    parts.alerts.replaceChildren(row(["quantity", "when", "state", "crossings"], true));
    each(alerts, function (a) {
      const level = "above" in a ? "above " + num(a.above) : "below " + num(a.below);
      const when = level + " " + unit(a.unit)
        + (a.hysteresis ? ", hysteresis " + num(a.hysteresis) : "");
      parts.alerts.append(row([a.quantity, when, a.state, a.crossings]));
    });
    if (!alerts.length) parts.alerts.append(row(["none set (tool set_alert)", "", "", ""]));

    parts.tools.replaceChildren(row(["tool", "title", "kind"], true));
    each(board.tools, function (t) {
      parts.tools.append(row([t.name, t.title || "",
                              t.read_only ? "read-only" : "changes the board"]));
    });

    const drawn = new Set();
    each(board.histories, function (h) {
      drawHistory(key, parts.plots, h, data.charts);
      drawn.add(key + " " + h.uri);
    });
    forgetPlots(key, drawn);
  }

  function drawPending(box, pending) {
    // What the bridge withholds from hosts: changed since the user accepted this board (pins).
    box.replaceChildren();
    box.hidden = !pending.length;
    if (!pending.length) return;
    box.append(el("h3", "Withheld from hosts: changed since you accepted this board"));
    const list = el("ul");
    for (const p of pending) {
      if (!p || typeof p !== "object") continue;
      const fields = Array.isArray(p.fields) && p.fields.length
        ? " (" + p.fields.map(String).join(", ") + ")" : "";
      const item = el("li", [p.kind, p.name, p.change].filter(Boolean).join(" ") + fields);
      if (p.diff) item.append(el("code", p.diff));
      list.append(item);
    }
    const accept = pending.find(function (p) { return p && p.accept; });
    box.append(list, el("p", accept ? "Check the change, then accept it: " + accept.accept
                                      + " (with the same board options)" : ""));
  }

  function drawHistory(key, box, h, charts) {
    const id = key + " " + h.uri;
    let entry = plots.get(id);
    if (!entry) {
      entry = { figure: el("figure", null, "plot"), plot: null };
      entry.figure.dataset.uri = h.uri;
      box.append(entry.figure);
      plots.set(id, entry);
    }
    // Board times are ms since its sampler started: placed on the bridge's clock by the time
    // the bridge read them (now_ms on the board was read_at on the bridge).
    const samples = h.samples.filter(function (s) {
      return Array.isArray(s) && typeof s[0] === "number" && typeof s[1] === "number";
    });
    const xs = samples.map(function (s) { return h.read_at - (h.now_ms - s[0]) / 1000; });
    const ys = samples.map(function (s) { return s[1]; });
    entry.figure.dataset.samples = String(samples.length);
    const label = h.quantity + (unit(h.unit) ? " (" + unit(h.unit) + ")" : "");
    if (!charts || typeof window.uPlot !== "function") {
      const span = xs.length > 1 ? xs[xs.length - 1] - xs[0] : 0;
      entry.figure.textContent = label + ": " + samples.length
        + (samples.length === 1 ? " sample" : " samples") + " over "
        + seconds(span) + (ys.length ? ", latest " + num(ys[ys.length - 1]) : "");
      return;
    }
    if (!entry.plot) {
      entry.plot = new window.uPlot({
        title: label, width: plotWidth(entry.figure), height: 220,
        scales: { x: { time: true }, y: { range: yRange } },
        series: [{}, { label: h.quantity, stroke: "#1f77b4", width: 2,
                       fill: "rgba(31, 119, 180, 0.08)", points: { show: false } }],
        axes: [{}, { label: unit(h.unit), size: 60 }],
      }, [xs, ys], entry.figure);
    } else {
      entry.plot.setData([xs, ys]);
    }
  }

  function yRange(u, min, max) {
    // A tenth of the span above and below, and never a span so thin that noise fills the plot.
    const pad = Math.max((max - min) * 0.1, Math.abs(max + min) * 5e-5, 1e-3);
    return [min - pad, max + pad];
  }

  function plotWidth(figure) {
    // Two plots side by side on a wide page, one on a narrow one.
    const room = figure.parentElement.clientWidth;
    return Math.max(280, room >= 900 ? Math.min(640, (room - 32) / 2) : room - 16);
  }

  window.addEventListener("resize", function () {
    for (const entry of plots.values()) {
      if (entry.plot) entry.plot.setSize({ width: plotWidth(entry.figure), height: 220 });
    }
  });

  poll();
})();
