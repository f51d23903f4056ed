// kubectl dc dashboard: swaps in the parts of the page that the server
// pushes (server-sent events), follows the deployer's log, and asks before
// an action. No polling: every change comes from the server's watches.
'use strict';
(function () {
  const main = document.getElementById('main');
  const live = document.getElementById('live');
  const result = document.getElementById('result');
  const dialog = document.getElementById('confirm');
  const tokenMeta = document.querySelector('meta[name="dc-token"]');
  const token = tokenMeta ? tokenMeta.content : '';
  let logSource = null;
  let logURL = null;

  // followLog opens the log stream of the rollout the live part names, and
  // only when it changed: a new rollout gets its own log.
  function followLog() {
    const pre = document.getElementById('log');
    const end = document.getElementById('log-end');
    if (!pre || !live) return;
    const root = live.querySelector('[data-log-url]');
    const url = root ? root.dataset.logUrl : '';
    if (url === logURL) return;
    if (logSource) logSource.close();
    logURL = url;
    logSource = null;
    pre.textContent = '';
    end.textContent = url ? '' : 'No rollout yet.';
    if (!url) return;
    const source = new EventSource(url);
    logSource = source;
    // A reconnect replays the log from its start.
    source.onopen = function () { pre.textContent = ''; end.textContent = ''; };
    source.addEventListener('line', function (e) { pre.append(e.data + '\n'); });
    source.addEventListener('end', function (e) { end.textContent = e.data; source.close(); });
  }

  // The live part is replaced as a whole; the focused control keeps the
  // focus, and the choices made in its forms (a revision to roll back to or
  // to compare) are kept, when they are still there.
  function replaceLive(html) {
    const focused = document.activeElement ? document.activeElement.id : '';
    const chosen = {};
    live.querySelectorAll('select[id], input[id]:not([type=hidden])').forEach(function (el) { chosen[el.id] = el.value; });
    live.innerHTML = html;
    Object.keys(chosen).forEach(function (id) {
      const el = document.getElementById(id);
      if (el && (el.tagName !== 'SELECT' || el.querySelector('option[value="' + CSS.escape(chosen[id]) + '"]'))) el.value = chosen[id];
    });
    if (focused) {
      const again = document.getElementById(focused);
      if (again) again.focus();
    }
  }
  if (main && main.dataset.stream && live) {
    const updates = new EventSource(main.dataset.stream);
    updates.addEventListener('update', function (e) {
      replaceLive(e.data);
      followLog();
    });
  }
  followLog();

  // Actions: the form asks first, in a dialog, then posts with the page's
  // token and shows the API server's answer.
  let pending = null;
  document.addEventListener('submit', function (e) {
    const form = e.target;
    if (!form.classList || !form.classList.contains('action')) return;
    e.preventDefault();
    const data = new FormData(form);
    data.set('token', token);
    let question = form.dataset.confirm || 'Run this action?';
    if (data.get('revision')) question = question.replace('the chosen revision', 'revision ' + data.get('revision'));
    pending = { url: form.getAttribute('action'), body: new URLSearchParams(data) };
    document.getElementById('confirm-text').textContent = question;
    dialog.returnValue = '';
    dialog.showModal();
    document.getElementById('confirm-no').focus();
  });
  dialog.addEventListener('close', function () {
    const request = pending;
    pending = null;
    if (dialog.returnValue !== 'ok' || !request) return;
    result.className = 'working';
    result.textContent = 'Working…';
    fetch(request.url, { method: 'POST', body: request.body, credentials: 'same-origin' })
      .then(function (resp) { return resp.json(); })
      .then(function (res) {
        result.className = res.ok ? 'ok' : (res.forbidden ? 'forbidden' : 'error');
        result.textContent = res.message || (res.ok ? 'Done.' : 'Failed.');
      })
      .catch(function (err) {
        result.className = 'error';
        result.textContent = 'The dashboard did not answer: ' + err;
      });
  });
})();
