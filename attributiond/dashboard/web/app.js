// The attrib dashboard: plain DOM code over the daemon's read-only JSON API (/api/...).
// Every text from the archive goes in with textContent, never as HTML: log lines are
// written by jobs and nodes, not by us. The page loads nothing from anywhere else
// (the server's Content-Security-Policy is default-src 'self').
'use strict';

const DOMAINS = ['GPU_HARDWARE', 'GPU_DRIVER', 'NVLINK_FABRIC', 'NETWORK', 'HOST_HARDWARE', 'HOST_OS', 'STORAGE',
  'APPLICATION', 'SCHEDULER', 'CONFIGURATION', 'AMBIGUOUS', 'UNATTRIBUTED', 'NONE'];
const STATES = ['COMPLETED', 'FAILED', 'TIMEOUT', 'CANCELLED', 'NODE_FAIL', 'OUT_OF_MEMORY', 'PREEMPTED', 'BOOT_FAIL',
  'DEADLINE', 'UNKNOWN'];
// One colour per domain, shared by the chart, its legend and the badges (style.css).
const COLORS = {
  GPU_HARDWARE: '#c0392b', GPU_DRIVER: '#e67e22', NVLINK_FABRIC: '#8e44ad', NETWORK: '#2980b9',
  HOST_HARDWARE: '#7f4f24', HOST_OS: '#16a085', STORAGE: '#2c3e50', APPLICATION: '#27ae60', SCHEDULER: '#7f8c8d',
  CONFIGURATION: '#d4ac0d', AMBIGUOUS: '#e84393', UNATTRIBUTED: '#95a5a6', NONE: '#bdc3c7',
};

let session = null;

// el('td', {className: 'x'}, 'text', child, ...): a DOM element; strings become text nodes.
function el(tag, props, ...children) {
  const node = document.createElement(tag);
  Object.assign(node, props || {});
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined) continue;
    node.append(typeof child === 'string' || typeof child === 'number' ? String(child) : child);
  }
  return node;
}

function svg(tag, attrs) {
  const node = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  return node;
}

function time(us) {
  if (us === null || us === undefined) return '';
  return new Date(us / 1000).toISOString().replace('T', ' ').slice(0, 19);
}

function badge(domain) {
  return el('span', {className: 'badge d-' + domain}, domain);
}

function showError(message) {
  const box = document.getElementById('error');
  box.textContent = message;
  box.hidden = !message;
}

async function api(path) {
  const response = await fetch(path, {credentials: 'same-origin', headers: {Accept: 'application/json'}});
  const body = await response.json().catch(() => ({message: response.statusText}));
  if (response.status === 401) {
    location.reload();  // the server answers / with how to log in
    throw new Error(body.message);
  }
  if (!response.ok) throw Object.assign(new Error(body.message || response.statusText), {status: response.status});
  return body;
}

function jobLink(cluster, jobId) {
  return '#/job/' + encodeURIComponent(cluster) + '/' + encodeURIComponent(jobId);
}

// ---- the list: filters, verdicts, counts, offenders -------------------------------------

function filterParams() {
  const form = document.getElementById('filters');
  const params = new URLSearchParams();
  for (const name of ['domain', 'node', 'user', 'state']) {
    const value = form.elements[name].value.trim();
    if (value) params.set(name, value);
  }
  const range = form.elements.range.value;
  if (range) params.set('since', String(Math.floor(Date.now() / 1000) - Number(range)));
  return params;
}

function renderVerdicts(body) {
  const tbody = document.querySelector('#verdicts tbody');
  tbody.replaceChildren();
  for (const v of body.verdicts) {
    const nodes = v.affected_nodes.length ? v.affected_nodes : v.nodes;
    tbody.append(el('tr', {className: 'verdict-row'},
      el('td', {}, time(v.time_us)),
      el('td', {}, el('a', {href: jobLink(v.cluster, v.job_id), className: 'job-link'}, v.job_id),
        // Another scheduler's job, judged through the attribution API (docs/api.md).
        v.scheduler && v.scheduler !== 'slurm' ? el('span', {className: 'cluster'}, ` ${v.scheduler}`) : null),
      el('td', {}, v.user || (v.uid ? String(v.uid) : '')),
      el('td', {}, v.state),
      el('td', {className: 'domain'}, badge(v.domain)),
      el('td', {className: 'rule'}, v.rule || ''),
      el('td', {}, nodes.join(', ')),
      el('td', {}, v.action)));
  }
  if (!body.verdicts.length) tbody.append(el('tr', {}, el('td', {colSpan: 8, className: 'empty'}, 'No verdicts match.')));
  const n = body.verdicts.length;
  document.getElementById('verdict-count').textContent =
    `${n}${body.truncated ? '+' : ''} job${n === 1 && !body.truncated ? '' : 's'}${body.truncated ? ' (newest shown)' : ''}`;
}

function renderCounts(body) {
  const chart = document.getElementById('counts-chart');
  const totals = {};
  let peak = 1;
  for (const b of body.buckets) {
    let sum = 0;
    for (const [domain, n] of Object.entries(b.domains)) {
      totals[domain] = (totals[domain] || 0) + n;
      sum += n;
    }
    peak = Math.max(peak, sum);
  }
  const width = 560, height = 140, n = Math.max(body.buckets.length, 1);
  const bar = width / n;
  const root = svg('svg', {viewBox: `0 0 ${width} ${height + 16}`, role: 'img', 'aria-label': 'jobs per domain'});
  body.buckets.forEach((b, i) => {
    let y = height;
    for (const domain of DOMAINS) {
      const count = b.domains[domain];
      if (!count) continue;
      const h = (count / peak) * (height - 4);
      y -= h;
      const rect = svg('rect', {x: i * bar + 1, y, width: Math.max(bar - 2, 1), height: h, fill: COLORS[domain]});
      rect.append(svg('title'));
      rect.firstChild.textContent = `${time(b.start_us).slice(0, body.bucket_s >= 86400 ? 10 : 16)}: ${count} ${domain}`;
      root.append(rect);
    }
  });
  root.append(svg('line', {x1: 0, y1: height, x2: width, y2: height, stroke: '#888'}));
  if (body.buckets.length) {
    const first = svg('text', {x: 0, y: height + 13, 'font-size': 11, fill: '#555'});
    first.textContent = time(body.buckets[0].start_us).slice(0, 10);
    const last = svg('text', {x: width, y: height + 13, 'font-size': 11, fill: '#555', 'text-anchor': 'end'});
    last.textContent = time(body.buckets[body.buckets.length - 1].start_us).slice(0, 10);
    root.append(first, last);
  }
  chart.replaceChildren(root);
  const table = document.getElementById('counts-totals');
  table.replaceChildren();
  for (const domain of DOMAINS.filter((d) => totals[d])) {
    table.append(el('tr', {className: 'total-row'},
      el('td', {}, el('span', {className: 'swatch d-' + domain}), badge(domain)),
      el('td', {className: 'num'}, String(totals[domain]))));
  }
  if (!Object.keys(totals).length) table.append(el('tr', {}, el('td', {className: 'empty'}, 'No jobs in this range.')));
}

function renderOffenders(body) {
  const box = document.getElementById('offenders');
  const p = body.policy;
  const rows = body.offenders.map((o) => el('tr', {className: 'offender-row'},
    el('td', {}, el('a', {href: '#', className: 'node-filter', onclick: (e) => { e.preventDefault(); filterNode(o.node); }}, o.node)),
    el('td', {}, (o.gpu || 'whole node') + (o.basis === 'app_class_xid' ? ' (app-class Xids, several users)' : '') +
      (o.advisory ? ', advisory: no hardware evidence, not acted on' : '')),
    el('td', {className: 'num'}, String(o.verdicts)),
    el('td', {}, time(o.last_us)),
    el('td', {}, o.job_ids.join(', '))));
  box.replaceChildren(
    el('p', {className: 'policy'},
      `${p.threshold}+ trusted ${p.domains.join('/')} verdicts within ${Math.round(p.window_s / 86400)} days`),
    rows.length
      ? el('table', {className: 'offenders'},
        el('thead', {}, el('tr', {}, el('th', {}, 'Node'), el('th', {}, 'GPU'), el('th', {}, 'Verdicts'),
          el('th', {}, 'Last'), el('th', {}, 'Jobs'))),
        el('tbody', {}, rows))
      : el('p', {className: 'empty'}, 'No repeat offenders.'),
    body.systemic.map((s) => el('p', {className: 'systemic'},
      `Systemic event ${time(s.from_us)} to ${time(s.to_us)}: ${s.nodes} nodes (${s.domain}); not counted against nodes.`)));
}

// What no rule explains in UNATTRIBUTED and low-confidence jobs, as attrib-rules mine
// --save last found it: templates best first, each with a real line and its jobs.
function renderUnexplained(body) {
  const box = document.getElementById('unexplained');
  if (!body.templates.length) {
    box.replaceChildren(el('p', {className: 'empty'},
      'Nothing mined yet: run attrib-rules mine --save on the head (docs/admin-guide.md, "Rules from what nothing explains").'));
    return;
  }
  const rows = body.templates.map((t) => el('tr', {className: 'template-row'},
    el('td', {className: 'num'}, String(t.rank)),
    el('td', {}, el('code', {}, t.template), el('div', {className: 'example'}, 'e.g. ', t.example)),
    el('td', {className: 'num'}, String(t.attempts)),
    el('td', {className: 'num'}, String(t.nodes)),
    el('td', {className: 'num'}, String(t.successful_attempts)),
    el('td', {}, t.attempt_ids.slice(0, 10).map((id, i) => {
      const jobId = id.split(' run ')[0];
      return [i ? ', ' : '', el('a', {href: jobLink(body.cluster, jobId)}, jobId)];
    }), t.attempt_ids.length > 10 ? ` and ${t.attempt_ids.length - 10} more` : '')));
  box.replaceChildren(
    el('p', {className: 'policy'}, `Mined ${time(body.mined_us)} UTC by attrib-rules mine --save`),
    el('table', {className: 'unexplained'},
      el('thead', {}, el('tr', {}, el('th', {}, '#'), el('th', {}, 'Template'), el('th', {}, 'Jobs'),
        el('th', {}, 'Nodes'), el('th', {}, 'Also in successes'), el('th', {}, 'Job ids'))),
      el('tbody', {}, rows)));
}

function filterNode(node) {
  document.getElementById('f-node').value = node;
  loadList();
}

async function loadList() {
  showError('');
  const params = filterParams();
  const bucket = document.getElementById('f-bucket').value;
  const countParams = new URLSearchParams(params);
  countParams.set('bucket', bucket);
  if (!countParams.has('since')) countParams.set('since', String(Math.floor(Date.now() / 1000) - 30 * 86400));
  try {
    const [verdicts, counts] = await Promise.all([api('/api/verdicts?' + params), api('/api/counts?' + countParams)]);
    renderVerdicts(verdicts);
    renderCounts(counts);
  } catch (e) {
    showError('Cannot load verdicts: ' + e.message);
  }
  const panel = document.getElementById('offenders-panel');
  panel.hidden = !session.admin;  // the fleet's reputation is for administrators
  document.getElementById('unexplained-panel').hidden = !session.admin;  // lines of every user's jobs
  if (session.admin) {
    try {
      renderOffenders(await api('/api/offenders'));
    } catch (e) {
      document.getElementById('offenders').textContent = 'Cannot load offenders: ' + e.message;
    }
    try {
      renderUnexplained(await api('/api/unexplained'));
    } catch (e) {
      document.getElementById('unexplained').textContent = 'Cannot load unexplained messages: ' + e.message;
    }
  }
}

// ---- one job: the evidence chain and the coverage matrix --------------------------------

function eventCells(e) {
  return [
    el('td', {}, e.id),
    el('td', {}, e.kind),
    el('td', {}, e.node),
    el('td', {}, e.source),
    el('td', {}, e.time ? e.time.replace('T', ' ').replace('Z', '') : 'untimed'),
    el('td', {className: 'line'}, el('code', {}, e.line)),
  ];
}

function eventTable(className, extraHeads, rows) {
  return el('table', {className: 'events ' + className},
    el('thead', {}, el('tr', {}, ['Event', 'Kind', 'Node', 'Source', 'Time (UTC)', 'Line', ...extraHeads].map((h) => el('th', {}, h)))),
    el('tbody', {}, rows));
}

function coverageMatrix(verdict) {
  const nodes = [...new Set([...(verdict.nodes || []), ...verdict.coverage.map((c) => c.node)])].sort();
  const sources = [...new Set(verdict.coverage.map((c) => c.source))].sort();
  const cell = {};
  for (const c of verdict.coverage) cell[c.node + '\u0000' + c.source] = c;
  return el('table', {className: 'coverage', id: 'coverage'},
    el('thead', {}, el('tr', {}, el('th', {}, 'Node \\ source'), sources.map((s) => el('th', {}, s)))),
    el('tbody', {}, nodes.map((node) => el('tr', {},
      el('th', {}, node),
      sources.map((source) => {
        const c = cell[node + '\u0000' + source];
        if (!c) return el('td', {className: 'cov cov-none'}, '—');
        return el('td', {className: 'cov cov-' + c.status, title: c.detail || ''},
          el('div', {className: 'cov-status'}, c.status), el('div', {className: 'cov-counts'}, `${c.lines} lines, ${c.events} events`));
      })))));
}

function renderJob(body) {
  const v = body.verdict;
  const job = body.job;
  const parts = [
    el('h2', {id: 'job-title'}, `Job ${job.job_id} `, el('span', {className: 'cluster'}, `on ${job.cluster}`),
      v.scheduler ? el('span', {className: 'cluster'}, ` (run by ${v.scheduler})`) : null),
    el('dl', {className: 'facts'},
      el('dt', {}, 'Domain'), el('dd', {id: 'job-domain'}, badge(v.domain)),
      el('dt', {}, 'State'), el('dd', {}, `${v.terminal_state} (exit ${v.exit_code}${v.signal ? ', signal ' + v.signal : ''})`),
      el('dt', {}, 'User'), el('dd', {}, job.user || String(job.uid)),
      el('dt', {}, 'Ended'), el('dd', {}, time(job.time_us) + ' UTC'),
      el('dt', {}, 'Nodes'), el('dd', {}, (v.nodes || []).join(', ')),
      el('dt', {}, 'Action'), el('dd', {id: 'job-action'}, v.recommended_action),
      // Absent in verdicts archived before confidence existed.
      el('dt', {}, 'Confidence'), el('dd', {id: 'job-confidence'}, v.confidence || 'not recorded'),
      el('dt', {}, 'Slurm comment'), el('dd', {}, el('code', {}, v.comment))),
    el('h3', {}, 'Evidence chain'),
  ];
  if (v.root_cause) {
    const e = v.root_cause.event;
    parts.push(el('section', {className: 'root-cause', id: 'root-cause'},
      el('h4', {}, 'Root cause: ', el('span', {className: 'rule-id'}, v.root_cause.rule)),
      el('p', {className: 'summary'}, v.root_cause.summary),
      el('p', {className: 'where'}, `${e.kind} on ${e.node} (${e.source}${e.trusted ? ', trusted' : ''}) at ${e.time || 'unknown time'}`),
      el('pre', {className: 'line'}, e.line)));
  } else {
    parts.push(el('section', {className: 'root-cause none', id: 'root-cause'},
      el('h4', {}, v.domain === 'NONE' ? 'No failure: nothing to attribute.' :
        v.domain === 'AMBIGUOUS' ? 'Ambiguous: more than one cause fits.' : 'No rule found a root cause.'),
      v.candidates.length ? el('ul', {}, v.candidates.map((c) =>
        el('li', {}, badge(c.domain), ' ', el('span', {className: 'rule-id'}, c.rule), ': ', c.summary))) : null));
  }
  // A verdict lists at most 1,000 of each; the rest are counted (docs/verdict-reference.md).
  const notListed = (n) => (n ? `, ${n} more not listed` : '');
  parts.push(el('h4', {}, `Symptoms explained by the root cause (${v.symptoms.length}${notListed(v.symptoms_omitted)})`));
  parts.push(v.symptoms.length
    ? eventTable('symptoms', ['Explained by', 'Count'], v.symptoms.map((s) => el('tr', {className: 'symptom-row'},
      eventCells(s.event), el('td', {className: 'rule-id explained-by'}, s.explained_by), el('td', {className: 'num'}, String(s.count)))))
    : el('p', {className: 'empty'}, 'None.'));
  if (v.unexplained.length) {
    parts.push(el('h4', {}, `Unexplained events (${v.unexplained.length}${notListed(v.unexplained_omitted)})`));
    parts.push(eventTable('unexplained', ['Count'], v.unexplained.map((e) => el('tr', {},
      eventCells(e), el('td', {className: 'num'}, String(e.count))))));
  }
  if ((v.missing_sources || []).length) {
    parts.push(el('h4', {}, 'Missing sources that could change this verdict'));
    parts.push(el('ul', {className: 'missing'}, v.missing_sources.map((m) => el('li', {}, m.note))));
  }
  parts.push(el('h3', {}, 'Coverage (node × source)'));
  parts.push(coverageMatrix(v));
  parts.push(el('p', {className: 'ruleset'}, `Rule pack ${v.ruleset.version} (${v.ruleset.hash.slice(0, 19)}…)`));
  document.getElementById('job').replaceChildren(...parts);
}

async function showJob(cluster, jobId) {
  document.getElementById('list-view').hidden = true;
  document.getElementById('job-view').hidden = false;
  const box = document.getElementById('job');
  box.replaceChildren(el('p', {}, 'Loading…'));
  showError('');
  try {
    renderJob(await api('/api/jobs/' + encodeURIComponent(cluster) + '/' + encodeURIComponent(jobId)));
  } catch (e) {
    box.replaceChildren();
    showError(e.status === 403 ? `Job ${jobId} is not yours: you may see only your own jobs.`
      : e.status === 404 ? `No verdict for job ${jobId}.` : 'Cannot load the job: ' + e.message);
  }
}

// ---- routing and start -------------------------------------------------------------------

function route() {
  const match = location.hash.match(/^#\/job\/([^/]+)\/([^/]+)$/);
  if (match) return showJob(decodeURIComponent(match[1]), decodeURIComponent(match[2]));
  document.getElementById('list-view').hidden = false;
  document.getElementById('job-view').hidden = true;
  return loadList();
}

async function start() {
  const domain = document.getElementById('f-domain');
  for (const d of DOMAINS) domain.append(el('option', {value: d}, d));
  const state = document.getElementById('f-state');
  for (const s of STATES) state.append(el('option', {value: s}, s));
  try {
    session = await api('/api/session');
  } catch (e) {
    showError('Cannot reach the dashboard API: ' + e.message);
    return;
  }
  const who = document.getElementById('who');
  if (session.auth === 'none') {
    who.append(el('span', {className: 'warn'}, 'authentication off (auth.mode none): every visitor is an admin'));
  } else {
    who.append(`${session.user} (uid ${session.uid})${session.admin ? ', admin: all jobs' : ': your jobs only'} · `,
      el('a', {href: '/logout'}, 'log out'));
  }
  const form = document.getElementById('filters');
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    if (location.hash.startsWith('#/job/')) location.hash = '#/';  // route() loads the list
    else loadList();
  });
  form.addEventListener('reset', () => setTimeout(loadList, 0));
  document.getElementById('f-bucket').addEventListener('change', loadList);
  window.addEventListener('hashchange', route);
  route();
}

document.addEventListener('DOMContentLoaded', start);
