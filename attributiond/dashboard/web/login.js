// The login link from `attrib-show --dashboard` carries its MUNGE credential in the
// fragment (/login#cred=...): a browser never sends a fragment to a server, so the
// credential is in no access log, proxy log or Referer. This script takes it out of the
// address bar, posts it once in a JSON body, and goes to the dashboard.
'use strict';

(async () => {
  const cred = new URLSearchParams(location.hash.slice(1)).get('cred');
  if (!cred) return;
  history.replaceState(null, '', location.pathname);
  const reason = document.getElementById('login-reason');
  reason.textContent = 'Logging in…';
  try {
    const response = await fetch('/login', {
      method: 'POST',
      headers: {'Content-Type': 'application/json'},
      body: JSON.stringify({cred}),
      credentials: 'same-origin',
    });
    if (response.ok) {
      location.replace('/');
      return;
    }
    const body = await response.json().catch(() => ({}));
    reason.textContent = 'That login link was not accepted: ' + (body.message || 'HTTP ' + response.status) + '.';
  } catch (error) {
    reason.textContent = 'The login could not reach the dashboard: ' + error + '.';
  }
})();
